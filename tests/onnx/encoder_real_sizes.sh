#!/bin/sh
# encoder_real_sizes.sh — a real encoder block at real sizes (spec/contract.md
# section 9): PyTorch's nn.TransformerEncoderLayer(256, 4, 1024)
# (tests/onnx-torch/encoder256) imported with batch 1..64 and sequence length
# 1..2048, whose arena at that upper bound (8.1 GiB) is over the default
# session limit (4 GiB). The artifact must still import, inspect, draw,
# disassemble and diff; a session over the whole domain must be refused
# with the bytes and narrowings that fit; narrowed sessions must run, and
# refuse sizes outside their bound; each PyTorch data set must match.
# Exit 77 (skipped) when this kiln has no ONNX importer.
#
# Usage: encoder_real_sizes.sh KILN_BINARY CASE_DIR
set -u
kiln=$1
case_dir=$2
if ! "$kiln" onnx-test --help >/dev/null 2>&1; then
    echo "kiln was built without the ONNX importer; skipping"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() {
    echo "FAIL: $*"
    status=1
}
# expect FILE TEXT: FILE holds TEXT (a fixed string).
expect() {
    grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; sed 's/^/  | /' "$1"; }
}
# A .npy file of float32 zeros of shape (D0, D1, D2).
npy_zeros() {
    dict="{'descr': '<f4', 'fortran_order': False, 'shape': ($2, $3, $4), }"
    length=$((${#dict} + 1))
    pad=$(((64 - (10 + length) % 64) % 64))
    header=$((length + pad))
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o $((header % 256)))\\$(printf %03o $((header / 256)))"
        printf '%s' "$dict"
        printf "%${pad}s\n" ""
        head -c $(($2 * $3 * $4 * 4)) /dev/zero
    } >"$1"
}

enc=$work/enc.kiln
"$kiln" import-onnx "$case_dir/model.onnx" -o "$enc" --dim batch=1..64 --dim seq=1..2048 \
    >"$work/import.out" 2>"$work/import.err" || fail "import-onnx exited $?"
expect "$work/import.out" "arena at the upper bound (batch=64, seq=2048): 8.1 GiB"
expect "$work/import.err" "warning: a session over the whole domain will not fit the default arena limit"

"$kiln" inspect "$enc" >"$work/inspect.txt" || fail "inspect exited $?"
expect "$work/inspect.txt" "upper bound    batch=64, seq=2048"
expect "$work/inspect.txt" "arena          8724152320 bytes (8.1 GiB)"
expect "$work/inspect.txt" "seq=2048: 8.1 GiB"
expect "$work/inspect.txt" "~seq^2.0"
expect "$work/inspect.txt" "~batch^1.0"
"$kiln" inspect --json "$enc" >"$work/inspect.json" || fail "inspect --json exited $?"
expect "$work/inspect.json" '"fits_default_limit": false'
"$kiln" dot "$enc" >"$work/enc.dot" || fail "dot exited $?"
expect "$work/enc.dot" "digraph"
"$kiln" disasm "$enc" -o "$work/text" >/dev/null || fail "disasm exited $?"
"$kiln" asm "$work/text/torch_jit.ktxt" -o "$work/again.kiln" >/dev/null 2>&1 || fail "asm of the disassembly exited $?"
cmp -s "$enc" "$work/again.kiln" || fail "disasm then asm does not rebuild the artifact byte for byte"
"$kiln" import-onnx "$case_dir/model.onnx" -o "$work/short.kiln" --dim batch=1..64 --dim seq=1..512 \
    >/dev/null 2>&1 || fail "import-onnx of seq 1..512 exited $?"
"$kiln" diff "$enc" "$work/short.kiln" >"$work/diff.txt"
[ $? -eq 1 ] || fail "diff of a narrowed seq is not breaking"
expect "$work/diff.txt" "1..2048 -> 1..512"

# A session over the whole domain: refused, with the bytes and narrowings that fit.
npy_zeros "$work/x.npy" 2 5 256
"$kiln" run "$enc" --input x="$work/x.npy" >"$work/run.out" 2>"$work/run.err"
[ $? -eq 1 ] || fail "run without narrowing did not exit 1"
expect "$work/run.err" "the arena at batch=64, seq=2048 needs 8.1 GiB (8724152320 bytes), over the limit of 4.0 GiB; with batch=1..31 it needs 3.9 GiB; or with seq=1..1400 it needs"
# Narrowed as the issue asks: runs, in an arena under the limit.
"$kiln" run "$enc" --dim seq=1..512 --dim batch=1..8 --input x="$work/x.npy" >"$work/run.out" 2>"$work/run.err" ||
    fail "narrowed run exited $?: $(cat "$work/run.err")"
expect "$work/run.out" "y: f32 (2, 5, 256)"
"$kiln" bench "$enc" --dim seq=1..512 --dim batch=1..8 --runs 1 --warmup 0 --json >"$work/bench.json" ||
    fail "narrowed bench exited $?"
expect "$work/bench.json" '"dims": {"batch": 8, "seq": 512}'
# Outside the session's bound, inside the artifact's: refused, naming both.
npy_zeros "$work/long.npy" 1 600 256
"$kiln" run "$enc" --dim seq=1..512 --input x="$work/long.npy" >/dev/null 2>"$work/run.err"
[ $? -eq 1 ] || fail "a 600-long sequence ran in a session bounded at 512"
expect "$work/run.err" "input 'x' axis 1 (seq): 600 is outside this session's 1..512 (the artifact allows 1..2048"
"$kiln" probe "$enc" --dim batch=1..2 --dim seq=1..8 >"$work/probe.out" || fail "narrowed probe exited $?"
expect "$work/probe.out" "0 failed"
# Every PyTorch data set, each in a session narrowed to its sizes.
"$kiln" onnx-test "$case_dir" --dim batch=1..64 --dim seq=1..2048 >"$work/onnx-test.out" 2>&1 ||
    fail "onnx-test exited $?"
expect "$work/onnx-test.out" "1 passed, 0 failed, 0 skipped"
[ $status -eq 0 ] && echo "encoder at real sizes: all checks hold"
exit $status
