#!/bin/sh
# Build every libFuzzer target with clang (ASan+UBSan, checksums off) and run
# each for SECONDS (default 60), starting from the committed corpus.
# Crashes are written to tests/fuzz/crashers/; new coverage to a scratch
# corpus under build-fuzz/ (merge it into corpus/ by hand when worthwhile).
#
# Usage: tests/fuzz/run.sh [SECONDS [TARGET...]]   (targets: container program run text onnx;
# onnx needs protoc-c and libprotobuf-c)
#
# FUZZ_SEED=N fixes libFuzzer's random seed: the run then mutates the same
# inputs in the same order on every machine, a slower one doing a prefix of
# a faster one's work. CI sets it, so that its verdict can be reproduced
# (and checked beforehand, by a longer run with the same seed); exploratory
# runs leave it unset and get a new seed each time.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-container program run text onnx}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/build-fuzz"
mkdir -p "$out"
command -v clang >/dev/null || { echo "run.sh: clang is required" >&2; exit 2; }
status=0
# Every object is compiled once, both cores busy, and each target links the
# ones it needs (compiling the library once per target, serially, had taken
# longer than the fuzzing itself). Fuzzing runs the reference kernels:
# onednn_none.c, not the oneDNN files (lib/ops/onednn/onednn_entry.c,
# onednn_matmul.c, onednn_window.c).
library=$(find "$root/format" "$root/lib" -name '*.c' | grep -v -e '/onednn_entry\.c$' -e '/onednn_matmul\.c$' \
    -e '/onednn_window\.c$' | sort)
importer=""
case " $targets " in
*" onnx "*)
    if command -v protoc-c >/dev/null; then
        # The importer, with its protobuf-c code generated here.
        protoc-c --proto_path="$root/onnx" --c_out="$out" "$root/onnx/onnx.proto"
        importer="$(find "$root/onnx" -name '*.c' | sort) $out/onnx.pb-c.c"
    fi
    ;;
esac
includes="-I$root -I$root/include $(find "$root/lib" "$root/onnx" -mindepth 1 -type d | sort | sed 's/^/-I/' | tr '\n' ' ') -I$out"
flags="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -D_POSIX_C_SOURCE=200809L"
objects="$out/objects"
mkdir -p "$objects"
# object_of SOURCE: its object's path, the source's path below the root with / as __.
object_of() {
    echo "$objects/$(echo "${1#"$root"/}" | sed 's|/|__|g').o"
}
export FUZZ_FLAGS="$flags -fsanitize=fuzzer-no-link $includes" FUZZ_ROOT="$root" FUZZ_OBJECTS="$objects"
# shellcheck disable=SC2016 # expanded by the inner shell, once per source
printf '%s\n' $library $importer | xargs -P "$(nproc)" -I{} sh -c '
    object="$FUZZ_OBJECTS/$(echo "{}" | sed "s|^$FUZZ_ROOT/||; s|/|__|g").o"
    clang $FUZZ_FLAGS -c "{}" -o "$object"' || { echo "run.sh: compiling failed" >&2; exit 2; }
library_objects=$(for f in $library; do object_of "$f"; done)
importer_objects=$(for f in $importer; do object_of "$f"; done)
for target in $targets; do
    extra=""
    max_len=""
    linked=$library_objects
    if [ "$target" = onnx ]; then
        [ -n "$importer" ] || { echo "run.sh: protoc-c is required for onnx" >&2; status=1; continue; }
        # libFuzzer caps inputs at 4096 bytes by default (or at the largest
        # seed); nesting that once crashed protobuf-c's unpack took 3000
        # If levels, 113 KB (tests/fuzz/crashers/onnx-nested-if-3000), so
        # ONNX inputs may grow to 200 KB.
        max_len="-max_len=200000"
        linked="$linked $importer_objects"
        extra="-lprotobuf-c"
    fi
    binary="$out/fuzz_$target"
    # shellcheck disable=SC2086
    clang $flags -fsanitize=fuzzer $includes $linked "$root/tests/fuzz/fuzz_$target.c" $extra -lz -lsodium -lm \
        -o "$binary"
    corpus="$out/corpus_$target"
    mkdir -p "$corpus"
    cp "$root"/tests/fuzz/corpus/* "$corpus"/
    echo "== fuzz_$target for ${seconds}s"
    # shellcheck disable=SC2086 # the seed and length options are empty or one word
    if ! "$binary" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 ${FUZZ_SEED:+-seed=$FUZZ_SEED} $max_len \
        -artifact_prefix="$root/tests/fuzz/crashers/${target}-" "$corpus" 2>"$out/fuzz_$target.log"; then
        echo "fuzz_$target found a crash; see $out/fuzz_$target.log and tests/fuzz/crashers/" >&2
        status=1
    fi
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$out/fuzz_$target.log" || true
done
exit $status
