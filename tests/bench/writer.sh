#!/bin/sh
# Writer benchmark (issue 19, point 7): kiln asm of a text program with one
# large f32 weight read from a .npy file, against cp and dd (with fsync) of
# the artifact it writes, then kiln verify and kiln run of that artifact:
# wall time, throughput (weight MB per second) and peak RSS against the
# weight size. The commands run interleaved, round after round, so a
# machine that slows down mid-way slows every command alike; the medians
# are reported. With a second kiln binary (BASELINE), its asm, verify and
# run are interleaved with the current ones: a before/after in one run.
#
# Not part of the test suite (it writes a few GiB); run by hand:
#   tests/bench/writer.sh [BUILD_DIR] [WEIGHT_MIB] [ROUNDS] [BASELINE_KILN]
# Needs /usr/bin/time (GNU time) for the peak RSS. Results: writer-RESULTS.md.
set -eu
build=${1:-build}
mib=${2:-128}
rounds=${3:-5}
baseline=${4:-}
kiln="$build/tools/kiln"
[ -x "$kiln" ] || { echo "writer.sh: no kiln binary at $kiln (build first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "writer.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln-writer-bench-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

# The weight is f32[4096, mib*64] (mib MiB) of random bytes: some are
# NaNs, which asm, verify and run do not mind, and nothing in the path can
# take a shortcut on them.
columns=$((mib * 64))
# A .npy 1.0 file: its 10-byte preamble, the header padded with spaces to
# 118 bytes (the data starts at 128), then $2 random bytes.
npy() {
    header="{'descr': '<f4', 'fortran_order': False, 'shape': $1, }"
    printf '\223NUMPY\001\000\166\000%s' "$header"
    printf "%$((118 - ${#header} - 1))s\n" ''
    head -c "$2" /dev/urandom
}
npy "(4096, $columns)" $((mib * 1048576)) >"$dir/w.npy"
npy "(2, 4096)" 32768 >"$dir/x.npy"
cat >"$dir/big.ktxt" <<EOF
kiln 1.0
program "big"
dim batch in 1..4
input x: f32[batch, 4096]
weight w: f32[4096, $columns] = file "w.npy"
%y = matmul(x, w)
output y = %y
EOF

# One measured command: appends "NAME SECONDS PEAK_KIB USER SYS" to $dir/times.
measure() {
    name=$1
    shift
    /usr/bin/time -f "$name %e %M %U %S" -a -o "$dir/times" "$@" >/dev/null 2>"$dir/stderr" ||
        { echo "writer.sh: $name failed:" >&2; cat "$dir/stderr" >&2; exit 1; }
}

"$kiln" asm "$dir/big.ktxt" -o "$dir/warm.kiln" >/dev/null # warm the page cache
for round in $(seq "$rounds"); do
    measure "asm" "$kiln" asm "$dir/big.ktxt" -o "$dir/big.kiln"
    [ -z "$baseline" ] || measure "asm(baseline)" "$baseline" asm "$dir/big.ktxt" -o "$dir/base.kiln"
    measure "cp" cp "$dir/big.kiln" "$dir/copy.kiln"
    measure "dd+fsync" dd if="$dir/big.kiln" of="$dir/dd.kiln" bs=1M conv=fsync status=none
    measure "verify" "$kiln" verify "$dir/big.kiln"
    [ -z "$baseline" ] || measure "verify(baseline)" "$baseline" verify "$dir/big.kiln"
    measure "run" "$kiln" run "$dir/big.kiln" --input x="$dir/x.npy"
    [ -z "$baseline" ] || measure "run(baseline)" "$baseline" run "$dir/big.kiln" --input x="$dir/x.npy"
    rm -f "$dir/copy.kiln" "$dir/dd.kiln"
done
[ -z "$baseline" ] || cmp -s "$dir/big.kiln" "$dir/base.kiln" || echo "writer.sh: the baseline wrote other bytes" >&2

artifact=$(wc -c <"$dir/big.kiln")
echo "weight $mib MiB; artifact $artifact bytes; $rounds rounds, medians (min..max)"
printf '%-17s %8s %16s %8s %8s %10s %9s\n' command seconds "min..max" "cpu s" "MB/s" "peak MiB" "x weight"
for name in asm "asm(baseline)" cp dd+fsync verify "verify(baseline)" run "run(baseline)"; do
    grep -q "^$name " "$dir/times" 2>/dev/null || continue
    awk -v name="$name" -v mib="$mib" 'BEGIN { n = 0 }
        $1 == name { t[n] = $2; m[n] = $3; c[n] = $4 + $5; n++ }
        END {
            for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) {
                if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
                if (m[j] < m[i]) { x = m[i]; m[i] = m[j]; m[j] = x }
                if (c[j] < c[i]) { x = c[i]; c[i] = c[j]; c[j] = x }
            }
            med = n % 2 ? t[int(n / 2)] : (t[n / 2 - 1] + t[n / 2]) / 2
            peak = (n % 2 ? m[int(n / 2)] : (m[n / 2 - 1] + m[n / 2]) / 2) / 1024
            cpu = n % 2 ? c[int(n / 2)] : (c[n / 2 - 1] + c[n / 2]) / 2
            printf "%-17s %8.3f %7.3f..%-7.3f %8.3f %8.0f %10.1f %9.2f\n", name, med, t[0], t[n - 1], cpu,
                   (med > 0 ? mib * 1.048576 / med : 0), peak, peak / mib
        }' "$dir/times"
done
