#!/bin/sh
# install_tree.sh — kiln as a user installs it (issue #19 point 11): the
# build is installed into a scratch DESTDIR; a program outside the tree
# (out_of_tree/scale.c) is compiled against the installed kiln.pc and
# <kiln/kiln.h> and run against the installed libkiln.so, once through
# LD_LIBRARY_PATH and once through an rpath; the installed kiln command
# runs; and the installed Python package imports and runs the artifact the
# program wrote.
#
# Usage: install_tree.sh MESON BUILD_ROOT SOURCE_ROOT CC PREFIX LIBDIR PYTHON SANITIZE
#
# PREFIX, LIBDIR and PYTHON are the meson options prefix, libdir and
# python; SANITIZE is b_sanitize ("none" or e.g. "address,undefined": the
# installed library is instrumented, so the program is too, and the
# interpreter preloads the sanitizer runtime named by $KILN_PYTHON_PRELOAD,
# without leak detection, as tests/python does). The installed _paths.py names the final prefix,
# so the Python package is pointed at the DESTDIR's libraries with
# KILN_LIBRARY_DIR, which python/kiln/_lib.py honours.
set -eu
meson=$1
build=$2
source_root=$3
cc=$4
prefix=$5
libdir=$6
python=$7
sanitize=$8
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest

step() { echo "== $*"; }

step "DESTDIR=$dest meson install -C $build --no-rebuild"
DESTDIR=$dest "$meson" install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log" >&2
    exit 1
}
for file in "$dest$prefix/include/kiln/kiln.h" "$dest$libdir/pkgconfig/kiln.pc" "$dest$libdir/libkiln.so" \
            "$dest$prefix/bin/kiln" "$dest$prefix/share/man/man1/kiln.1"; do
    [ -e "$file" ] || { echo "not installed: ${file#"$dest"}" >&2; exit 1; }
done

# kiln.pc names the final prefix; PKG_CONFIG_SYSROOT_DIR puts the DESTDIR
# in front of its -I and -L paths.
step "pkg-config --cflags --libs kiln (PKG_CONFIG_PATH=$libdir/pkgconfig)"
flags=$(PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs kiln)
echo "$flags"
case $flags in *"-I$dest$prefix/include"*"-L$dest$libdir"*) ;; *)
    echo "pkg-config's flags do not name the installed tree $dest$prefix" >&2
    exit 1 ;;
esac
sanitize_flags=
[ "$sanitize" = none ] || sanitize_flags="-fsanitize=$sanitize"

step "cc out_of_tree/scale.c \$(pkg-config ...) && LD_LIBRARY_PATH=$libdir ./scale"
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -Wall -Wextra -Werror $sanitize_flags "$source_root/tests/api/out_of_tree/scale.c" \
    -o "$tmp/scale" $flags
LD_LIBRARY_PATH="$dest$libdir" "$tmp/scale" "$tmp/scale.kiln" > "$tmp/out.txt"
cat "$tmp/out.txt"
grep -q '^first row \[3.0, 3.0\]' "$tmp/out.txt"

step "the same with an rpath (-Wl,-rpath,$libdir), no LD_LIBRARY_PATH"
# shellcheck disable=SC2086
"$cc" -std=c11 $sanitize_flags "$source_root/tests/api/out_of_tree/scale.c" -o "$tmp/scale-rpath" $flags \
    -Wl,-rpath,"$dest$libdir"
env -u LD_LIBRARY_PATH "$tmp/scale-rpath" "$tmp/scale-rpath.kiln" | grep '^first row \[3.0, 3.0\]'
# It loaded the installed library, not one of the build tree's.
env -u LD_LIBRARY_PATH ldd "$tmp/scale-rpath" | grep -q "libkiln.so.* => $dest$libdir/" || {
    env -u LD_LIBRARY_PATH ldd "$tmp/scale-rpath" >&2
    exit 1
}

step "$prefix/bin/kiln inspect scale.kiln"
env -u LD_LIBRARY_PATH "$dest$prefix/bin/kiln" --version
env -u LD_LIBRARY_PATH "$dest$prefix/bin/kiln" inspect --quiet "$tmp/scale.kiln"

# The package goes to PREFIX/lib/pythonX.Y/dist-packages when meson found
# the interpreter of option `python` (python/kiln/meson.build).
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || version=
site=$dest$prefix/lib/python$version/dist-packages
if [ -z "$version" ] || [ ! -d "$site/kiln" ]; then
    echo "== no Python package installed (no $python): not imported"
    exit 0
fi
step "PYTHONPATH=${site#"$dest"} $python -c 'import kiln' (KILN_LIBRARY_DIR=$libdir)"
if [ -n "${KILN_PYTHON_PRELOAD:-}" ]; then
    LD_PRELOAD=$KILN_PYTHON_PRELOAD
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
    export LD_PRELOAD ASAN_OPTIONS
fi
PYTHONPATH="$site" KILN_LIBRARY_DIR="$dest$libdir" PYTHONDONTWRITEBYTECODE=1 "$python" -c '
import sys, numpy, kiln
site, artifact = sys.argv[1:]
assert kiln.__file__.startswith(site), "imported %s, not the installed package" % kiln.__file__
out = kiln.load(artifact).run(x=numpy.ones((2, 2)))
print("python: first row", out["y"][0].tolist())
assert out["y"][0].tolist() == [3.0, 3.0]
' "$site" "$tmp/scale.kiln"
