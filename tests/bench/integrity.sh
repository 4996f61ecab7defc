#!/bin/sh
# Integrity benchmark: kiln's full verification against b2sum on the same
# generated artifact, in the same run, plus lazy open time and signing
# throughput. Not part of the test suite (it writes ~2 GiB and takes a
# minute); run by hand: tests/bench/integrity.sh [BUILD_DIR] [SIZE_MIB]
set -eu
build=${1:-build}
mib=${2:-1024}
dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln-bench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
artifact="$dir/big.kiln"
out=$("$build/tests/bench_integrity" "$artifact" "$mib")
echo "$out"
# b2sum (BLAKE2b-512 of the whole file): best of 3, file in page cache as for kiln.
best=""
for run in 1 2 3; do
    start=$(date +%s.%N)
    b2sum "$artifact" >/dev/null
    end=$(date +%s.%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }')
    best=$(awk -v t="$t" -v best="$best" 'BEGIN { print (best == "" || t < best) ? t : best }')
done
full=$(echo "$out" | sed -n 's/^open_full_seconds //p')
echo "b2sum_seconds $best"
awk -v b="$best" -v f="$full" 'BEGIN { printf "full_verify_speed_vs_b2sum %.2fx (target >= 0.8)\n", b / f }'
