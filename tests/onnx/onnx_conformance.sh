#!/bin/sh
# onnx_conformance.sh — kiln onnx-test over the ONNX backend node cases.
#
# Usage: onnx_conformance.sh KILN_BINARY MIN_PASSED CASES_DIR...
# The first CASES_DIR that exists is used (the checkout may be the main tree
# or a worktree one level deeper); the test is skipped (exit 77) when none
# does: the cases are not part of the repository. Fails if any case fails, or if fewer than MIN_PASSED pass
# (a mapping that starts skipping is a regression too). Prints the counts
# and the most frequent skip reasons.
set -u
kiln=$1
min_passed=$2
shift 2
cases=""
for candidate in "$@"; do
    if [ -d "$candidate" ]; then
        cases=$candidate
        break
    fi
done
if [ -z "$cases" ]; then
    echo "no ONNX conformance cases at $*; skipping"
    exit 77
fi
echo "cases: $cases"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$kiln" onnx-test "$cases"/*/ >"$out"
status=$?
grep '^fail ' "$out"
summary=$(tail -n 1 "$out")
echo "$summary"
echo "top skip reasons:"
sed -n 's/^skip [^:]*: //p' "$out" |
    sed -E "s/^node [0-9]+( '[^']*')? \(([A-Za-z]+)\): /\2: /; s/ \(opset [0-9]+\)//; s/^([A-Za-z]+): unsupported op \1/unsupported op \1/" |
    sort | uniq -c | sort -rn | head -n 15
passed=$(echo "$summary" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
if [ "$status" -ne 0 ]; then
    echo "onnx-test exited with status $status" >&2
    exit 1
fi
if [ -z "$passed" ] || [ "$passed" -lt "$min_passed" ]; then
    echo "only ${passed:-?} cases passed, expected at least $min_passed" >&2
    exit 1
fi
