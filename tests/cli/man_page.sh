#!/bin/sh
# man_page.sh — the man page documents every verb of the verb table.
#
# Usage: man_page.sh KILN_BINARY MAN_PAGE
# The verbs are read from `kiln --help`, which prints the verb table, so a
# verb added to tools/kiln.c without a ".SS VERB" section here fails.
set -eu
kiln=$1
page=$2
verbs=$("$kiln" --help | sed -n '/^verbs:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$verbs" ] || { echo "no verbs found in 'kiln --help'" >&2; exit 1; }
missing=0
for verb in $verbs; do
    if ! grep -qx "\.SS $verb" "$page"; then
        echo "man page $page has no section '.SS $verb'" >&2
        missing=1
    fi
done
# The page itself must format without warnings where groff is installed.
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || true
    if [ -n "$warnings" ]; then
        echo "groff warnings for $page:" >&2
        echo "$warnings" >&2
        missing=1
    fi
fi
exit $missing
