#!/bin/sh
# compare.sh — kiln against ONNX Runtime (CPU) on the same ONNX models, at
# the same thread counts (issue #6: kiln at most 1.0x ORT's latency).
# A harness run by hand, not by CI: it needs the Python environment's
# onnxruntime (PyPI) and onnx, and its numbers mean something only on a
# quiet machine.
#
# Setup, once: scripts/install-deps (the checkout's .venv, from
# requirements.txt: onnxruntime, onnx, numpy), and a build of kiln. The
# interpreter is $KILN_PYTHON, by default .venv/bin/python of the checkout.
#
# Usage: tests/bench/ort/compare.sh [--kiln PATH] [--threads "1 2"] [--runs N] [--warmup N]
#                                   [--rounds N] [--exports DIR...]
#
# For each model of make_models.py: `kiln import-onnx` it (a model whose
# ops the importer does not map yet is reported as pending), time it with
# `kiln bench --json` and with ort_bench.py (the same runs and warm-up;
# intra-op threads = N, inter-op threads = 1, sequential execution), and
# print both medians and the ratio
# kiln / ORT. The two alternate for --rounds rounds (default 3) and each
# side reports the median of its rounds' medians, so that a change in the
# machine's load during the run weighs on both. Models and artifacts go to
# a temporary directory.
#
# --exports DIR times the PyTorch exports of tests/onnx-torch/export.py
# instead (issue #8): each DIR holds case directories (mlp, cnn, encoder,
# and with --large resnet18, mobilenet_v2; tests/onnx-torch itself holds
# the first three), imported with the dims a user would declare.
#
# Threads on a busy machine: kiln's threads are OpenMP's (libgomp), whose
# idle threads spin before they sleep; when other processes hold the cores
# a spinning thread waits for a descheduled one at every parallel region,
# and 2-thread runs measured here 10-20x slower than 1-thread ones
# (ORT's own pool did not). A session's default thread policy runs on fewer
# threads while other processes hold cores; this script passes --threads N,
# which fixes the count as ORT's is fixed, so run it on a quiet machine, or
# with OMP_WAIT_POLICY=passive, read by libgomp when it starts
# (spec/opset.md, "Threads"); the header line shows the environment's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kiln=""
threads="1 2"
runs=100
warmup=10
rounds=3
exports=""
while [ $# -gt 0 ]; do
    case $1 in
    --kiln) kiln=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --exports) exports="$exports $(cd "$2" && pwd)"; shift 2 ;;
    *)
        echo "usage: $0 [--kiln PATH] [--threads \"1 2\"] [--runs N] [--warmup N] [--rounds N] [--exports DIR]..." >&2
        exit 2
        ;;
    esac
done
if [ -z "$kiln" ]; then
    for candidate in "$root/build/tools/kiln" "$root/build-test/tools/kiln"; do
        if [ -x "$candidate" ]; then kiln=$candidate; break; fi
    done
fi
if [ -z "$kiln" ] || [ ! -x "$kiln" ]; then
    echo "compare.sh: no kiln binary (build it, or pass --kiln PATH)" >&2
    exit 2
fi
python=${KILN_PYTHON:-$root/.venv/bin/python}
"$python" -c 'import onnxruntime, onnx' 2>/dev/null ||
    { echo "compare.sh: $python cannot import onnxruntime and onnx (scripts/install-deps makes .venv; or set KILN_PYTHON)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$exports" ]; then
    "$python" "$here/make_models.py" "$work"
else
    for dir in $exports; do
        for case in "$dir"/*/; do
            [ -f "$case/model.onnx" ] && cp "$case/model.onnx" "$work/$(basename "$case").onnx"
        done
    done
fi

median() { sed -n 's/.*"median_ms": *\([0-9.eE+-]*\).*/\1/p'; }
# The median of the numbers on stdin, one a line.
median_of() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "kiln: $("$kiln" version | head -n 1); $("$kiln" version --json | sed -n 's/.*"features": *\(\[[^]]*\]\).*/features \1/p')"
echo "onnxruntime: $("$python" "$here/ort_bench.py" --version) (Python, $("$python" -c 'import sys; print(sys.version.split()[0])'))"
echo "$runs timed runs after $warmup warm-up, median of $rounds alternating rounds' medians, in ms;" \
    "ratio = kiln / ORT (issue #6 wants <= 1.00)"
echo "load average at the start: $(cut -d ' ' -f 1-3 /proc/loadavg); OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset: spinning waits; --threads N fixes the thread count)}"
printf '%-34s %7s %10s %10s %7s\n' model threads kiln ORT ratio

# name | import-onnx dims | bench dims | ORT inputs | description
while IFS='|' read -r name import_dims bench_dims ort_inputs description; do
    [ -n "$name" ] || continue
    [ -f "$work/$name.onnx" ] || continue
    # shellcheck disable=SC2086 # the dim lists are split on purpose
    if ! "$kiln" import-onnx "$work/$name.onnx" -o "$work/$name.kiln" $import_dims >"$work/$name.import" 2>&1; then
        # The importer lists every construct it cannot express; name the ops.
        ops=$(sed -n 's/.*unsupported op \([A-Za-z]*\).*/\1/p' "$work/$name.import" | sort -u | tr "\n" " " | sed "s/ $//")
        printf '%-34s pending: kiln import-onnx does not map %s\n' "$description" "${ops:-(see its error)}"
        continue
    fi
    for n in $threads; do
        : >"$work/kiln.times"
        : >"$work/kiln.waits"
        : >"$work/ort.times"
        round=0
        while [ "$round" -lt "$rounds" ]; do
            # shellcheck disable=SC2086
            "$kiln" bench "$work/$name.kiln" $bench_dims --threads "$n" --runs "$runs" --warmup "$warmup" --json \
                >"$work/kiln.json"
            median <"$work/kiln.json" >>"$work/kiln.times"
            sed -n 's/.*"waits": *"\([a-z]*\)".*/\1/p' "$work/kiln.json" >>"$work/kiln.waits"
            # shellcheck disable=SC2086
            "$python" "$here/ort_bench.py" "$work/$name.onnx" $ort_inputs --threads "$n" --runs "$runs" \
                --warmup "$warmup" | median >>"$work/ort.times"
            round=$((round + 1))
        done
        if [ "$(grep -c . "$work/ort.times")" -ne "$rounds" ]; then
            printf '%-34s %7s ORT failed (ort_bench.py said so above)\n' "$description" "$n"
            continue
        fi
        k=$(median_of <"$work/kiln.times")
        o=$(median_of <"$work/ort.times")
        ratio=$(awk -v k="$k" -v o="$o" 'BEGIN { printf "%.2f", k / o }')
        # Rounds where kiln found the cores busy and its threads waited passively (spec/opset.md, "Threads").
        passive=$(grep -c passive "$work/kiln.waits" || true)
        note=""
        [ "$passive" -gt 0 ] && note="  (kiln waited passively in $passive of $rounds rounds)"
        printf '%-34s %7s %10.4f %10.4f %7s%s\n' "$description" "$n" "$k" "$o" "$ratio" "$note"
    done
done <<MODELS
$(if [ -z "$exports" ]; then cat <<'BUILT'
mlp|--dim batch=1..64|--dim batch=16|--input x=16,784|MLP 784-512-512-10, batch 16
encoder|--dim batch=1..8|--dim batch=2|--input x=2,64,256|encoder layer d256 h4 ff1024, 2x64
cnn|--dim batch=1..64|--dim batch=16|--input x=16,3,32,32|small CNN, batch 16
matmul1024|||--input a=1024,1024 --input b=1024,1024|matmul 1024^3
BUILT
else cat <<'EXPORTED'
mlp|--dim batch=1..64|--dim batch=8|--input x=8,16|PyTorch MLP 16-32-32-10, batch 8
cnn|--dim batch=1..64|--dim batch=8|--input x=8,3,16,16|PyTorch CNN (BN, pools), batch 8
encoder|--dim batch=1..64 --dim seq=1..128|--dim batch=8 --dim seq=16|--input x=8,16,32|PyTorch encoder d32, 8x16
resnet18|--dim batch=1..64|--dim batch=1|--input x=1,3,224,224|torchvision ResNet-18, batch 1
mobilenet_v2|--dim batch=1..64|--dim batch=1|--input x=1,3,224,224|torchvision MobileNetV2, batch 1
EXPORTED
fi)
MODELS
