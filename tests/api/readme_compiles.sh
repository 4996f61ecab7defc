#!/bin/sh
# The C code in README.md compiles against the public headers, so the
# README cannot drift from the API. Usage: readme_compiles.sh SOURCE_ROOT CC
set -eu
root=$1
cc=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-readme-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk '/^```c$/ { inside = 1; next } /^```$/ { inside = 0 } inside' "$root/README.md" > "$tmp/readme.c"
[ -s "$tmp/readme.c" ] || { echo "no C block found in README.md" >&2; exit 1; }
# Compiled to an object, not -fsyntax-only: GCC reports an ignored
# warn_unused_result (KILN_NODISCARD) only when it generates code, and a
# user pasting the snippet compiles it verbatim.
"$cc" -std=c11 -Wall -Wextra -Werror -c -o "$tmp/readme.o" \
    -I"$root/include" "$tmp/readme.c"
echo "README.md C code compiles"
