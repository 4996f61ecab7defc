#!/bin/sh
# Rewrite every expected output listed in commands.txt by running the
# command, from tests/golden, with the given kiln binary. Run it only after
# reading the difference the failing test showed and deciding the new
# output is right. (These are what today's CLI prints for the golden
# artifacts; tests/golden/expected keeps what an earlier CLI printed and is,
# like the artifacts there, never rewritten.)
#
# Usage: tests/cli/expected/regenerate.sh build/tools/kiln
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 KILN_BINARY" >&2
    exit 2
fi
kiln=$(realpath "$1")
expected=$(cd "$(dirname "$0")" && pwd)
cd "$expected/../../golden"
grep -v '^#' "$expected/commands.txt" | while IFS='	' read -r file status args; do
    [ -n "$file" ] || continue
    # The exit status is checked by the test, not here: diff exits 1 when
    # something is breaking, and that output is wanted too.
    env -u NO_COLOR sh -c "\"\$0\" $args" "$kiln" > "$expected/$file" || true
    echo "wrote tests/cli/expected/$file"
done
