#!/bin/sh
# version_places.sh — every place kiln's version is written says
# meson.build's project() version (issue 27 point 1): <kiln/version.h>
# (KILN_VERSION_MAJOR/MINOR/PATCH, KILN_VERSION_STRING, KILN_VERSION_NUMBER),
# what the library answers (kiln_version(), kiln_version_number()), the man
# page's title line, and `kiln --version`. meson refuses to configure when
# the header's macros differ (include/kiln/meson.build); this checks the
# rest, and the header's arithmetic.
#
# Usage: version_places.sh VERSION SOURCE_ROOT CC KILN_BINARY LIBKILN_DIR
set -eu
version=$1
root=$2
cc=$3
kiln=$4
libdir=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-version-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "version_places: $*" >&2; exit 1; }

major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
patch=${rest#*.}
number=$((major * 10000 + minor * 100 + patch))

cat > "$tmp/version.c" <<C
#include <stdio.h>
#include <string.h>
#include <kiln/kiln.h>
#if KILN_VERSION_NUMBER != $number
#error "KILN_VERSION_NUMBER is not $number"
#endif
int main(void)
{
    printf("%s %s %u %d\n", KILN_VERSION_STRING, kiln_version(), kiln_version_number(), KILN_VERSION_NUMBER);
    return 0;
}
C
"$cc" -std=c11 -Wall -Wextra -Werror -I"$root/include" "$tmp/version.c" -o "$tmp/version" \
    -L"$libdir" -lkiln -Wl,-rpath,"$libdir" || fail "<kiln/version.h> does not give KILN_VERSION_NUMBER $number"
said=$("$tmp/version")
[ "$said" = "$version $version $number $number" ] ||
    fail "header and library say '$said', meson.build '$version $version $number $number'"

grep -q "^\.TH KILN 1 \"[^\"]*\" \"kiln $version\"" "$root/tools/kiln.1" ||
    fail "tools/kiln.1's .TH line does not say \"kiln $version\": $(grep '^\.TH' "$root/tools/kiln.1")"

cli=$("$kiln" --version)
case $cli in *"$version"*) ;; *) fail "kiln --version says '$cli', not $version" ;; esac
echo "version $version ($number) in version.h, libkiln, kiln.1 and kiln --version"
