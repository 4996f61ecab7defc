#!/bin/sh
# pip_install.sh — kiln as a Python user installs it: `pip install .`
# (pyproject.toml, meson-python, meson option `wheel`) into a fresh venv,
# then, from a directory outside the source tree and with no
# LD_LIBRARY_PATH, PYTHONPATH or KILN_* variable, the seed example
# (examples/scale.py) exports, saves, loads and runs through the installed
# package; `kiln` (the console script) and `python -m kiln` run the
# packaged command on the artifact it saved, with its exit statuses; and
# the package, its libraries and its command are the venv's own.
#
# Usage: pip_install.sh SOURCE_ROOT PYTHON VERSION
#
# PYTHON makes the venv (the meson option `python`; a venv's interpreter
# makes a venv of its base interpreter). VERSION is meson.build's project
# version, which the wheel's must be. torch is installed first, pinned
# (torch==2.13.0 is the CPU build on this machine's disk: resolving the
# `torch` extra alone may fetch a multi-GB CUDA build), then the package
# with its `torch` extra, both constrained by requirements.txt. The source
# tree may hold build directories (build/, build-test/, ...): meson-python
# builds in a directory of its own and must leave none behind. Needs PyPI
# (or the machine's pip index) for the build tools and onnx/onnxscript;
# about 2 minutes on 2 idle cores.
set -eu
source_root=$(cd "$1" && pwd)
python=$2
version=$3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-pip-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/v

step() { echo "== $*"; }
fail() { echo "pip_install: $*" >&2; exit 1; }
started=$(date +%s)
elapsed() { echo "   ($(($(date +%s) - started)) s so far)"; }

# Nothing may point the installed package at another kiln.
unset LD_LIBRARY_PATH LD_PRELOAD PYTHONPATH PYTHONHOME VIRTUAL_ENV KILN_BINARY KILN_LIBRARY_DIR

if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "$python cannot make a venv with pip (Debian: apt-get install python3-venv): skipped"
    exit 77
fi

mesonpy_dirs() { find "$source_root" -maxdepth 1 -name '.mesonpy-*' | sort; }
before=$(mesonpy_dirs)

step "$python -m venv v"
"$python" -m venv "$venv"
pip() { "$venv/bin/pip" install -q --disable-pip-version-check "$@"; }

step "v/bin/pip install -c requirements.txt torch==2.13.0"
pip -c "$source_root/requirements.txt" torch==2.13.0
elapsed

step "v/bin/pip install -c requirements.txt '$source_root[torch]'"
pip -c "$source_root/requirements.txt" "$source_root[torch]"
elapsed
[ "$(mesonpy_dirs)" = "$before" ] || fail "meson-python left a build directory in $source_root: $(mesonpy_dirs)"

# Everything below runs outside the source tree, so that nothing there
# (build/python, python/) can stand in for the installed package.
cd "$tmp"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
native=$site/kiln/_native

step "v/bin/python examples/scale.py scale.kiln"
"$venv/bin/python" "$source_root/examples/scale.py" "$tmp/scale.kiln" > "$tmp/scale.txt"
cat "$tmp/scale.txt"
expect_line() {  # expect_line N TEXT: line N of scale.txt is TEXT
    line=$(sed -n "$1p" "$tmp/scale.txt")
    [ "$line" = "$2" ] || fail "examples/scale.py line $1: expected '$2', got '$line'"
}
expect_line 1 'shape (3, 2)'
expect_line 2 'first row [3.0, 3.0]'
sed -n 3p "$tmp/scale.txt" | grep -q "input 'x' axis 0 (batch): 5 is outside 2\.\.4" ||
    fail "examples/scale.py line 3: expected the refusal of batch 5 ('... 5 is outside 2..4')"
[ -s "$tmp/scale.kiln" ] || fail "examples/scale.py did not save $tmp/scale.kiln"

step "the venv's kiln package, libraries and command"
"$venv/bin/python" - "$venv" "$native" "$version" <<'PY'
import importlib.metadata, os, sys
venv, native, version = sys.argv[1:]
import kiln, kiln._paths
def under(path, root):
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)
assert under(kiln.__file__, venv), "imported %s, not the venv's package" % kiln.__file__
for name in ("LIBKILN", "LIBKILN_ONNX", "KILN_BINARY"):
    path = getattr(kiln._paths, name)
    assert os.path.realpath(path) == os.path.realpath(os.path.join(native, os.path.basename(path))), \
        "%s is %s, not in %s" % (name, path, native)
# The libraries this process mapped are the wheel's (not a build tree's or /usr/local's).
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "libkiln" in line}
want = {os.path.realpath(os.path.join(native, name)) for name in ("libkiln.so", "libkiln-onnx.so")}
assert {os.path.realpath(path) for path in mapped} == want, "mapped %s, expected %s" % (sorted(mapped), sorted(want))
assert kiln.__version__ == version, "libkiln says %s, meson.build %s" % (kiln.__version__, version)
installed = importlib.metadata.version("kiln")
assert installed == version, "the wheel is version %s, meson.build %s" % (installed, version)
print("kiln %s from %s" % (installed, os.path.dirname(kiln.__file__)))
PY

# The libraries resolve without LD_LIBRARY_PATH: libkiln-onnx.so finds
# libkiln.so beside it ($ORIGIN), the rest are the system's.
for binary in "$native/libkiln.so" "$native/libkiln-onnx.so" "$native/kiln"; do
    ldd "$binary" > "$tmp/ldd.txt"
    if grep -q 'not found' "$tmp/ldd.txt"; then
        cat "$tmp/ldd.txt" >&2
        fail "ldd ${binary#"$venv/"}: a library is not found"
    fi
done
ldd "$native/libkiln-onnx.so" | grep -q "libkiln.so => $native/libkiln.so " || {
    ldd "$native/libkiln-onnx.so" >&2
    fail "libkiln-onnx.so does not resolve libkiln.so to the one beside it"
}
# A wheel installs nothing for C users (no headers, no kiln.pc, no static library).
leftovers=$(find "$venv" \( -name 'kiln.h' -o -name 'kiln*.pc' -o -name 'libkiln*.a' \) -print)
[ -z "$leftovers" ] || fail "the wheel installed files for C users: $leftovers"

step "v/bin/kiln --version; v/bin/python -m kiln --version"
[ "$("$venv/bin/kiln" --version)" = "kiln $version" ] || fail "v/bin/kiln --version: expected 'kiln $version'"
[ "$("$venv/bin/python" -m kiln --version)" = "kiln $version" ] ||
    fail "v/bin/python -m kiln --version: expected 'kiln $version'"

step "v/bin/python -m kiln inspect scale.kiln"
"$venv/bin/python" -m kiln inspect "$tmp/scale.kiln" > "$tmp/inspect.txt"
cat "$tmp/inspect.txt"
grep -q 'batch' "$tmp/inspect.txt" && grep -q '2\.\.4' "$tmp/inspect.txt" ||
    fail "kiln inspect scale.kiln: expected the dim batch in 2..4"

step "exit statuses pass through (1 a rejected input, 2 a usage error)"
status=0
"$venv/bin/python" -m kiln inspect "$tmp/missing.kiln" >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "python -m kiln inspect of a missing file exited $status, expected 1"
status=0
"$venv/bin/kiln" no-such-verb >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "kiln no-such-verb exited $status, expected 2"
status=0
"$venv/bin/kiln" run "$tmp/scale.kiln" --input x="$source_root/examples/ones_5x2_f64.npy" \
    >/dev/null 2>"$tmp/run.err" || status=$?
[ "$status" -eq 1 ] && grep -q 'outside 2\.\.4' "$tmp/run.err" ||
    fail "kiln run on batch 5 exited $status, expected 1 with 'outside 2..4' on stderr"

echo "pip_install: passed in $(($(date +%s) - started)) s"
