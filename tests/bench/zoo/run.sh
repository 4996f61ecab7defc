#!/bin/sh
# run.sh — the model zoo against ONNX Runtime (issue #18 point 1): about 20
# real models (torchvision classification, segmentation and video; a
# transformer encoder block, a GPT block, LSTM, GRU, a 1-D audio CNN, a
# UNet), each exported by PyTorch (models.py), imported by kiln, checked
# against PyTorch's output, then timed in kiln and in ONNX Runtime (the
# Python package from PyPI, tests/bench/ort/ort_bench.py).
# A harness run by hand, NOT by CI: it needs torch, onnx and onnxruntime
# (and torchvision for 14 of the models, skipped with a note without it),
# takes minutes, and its numbers mean something only on a quiet machine.
#
# Setup, once: scripts/install-deps (the checkout's .venv, from
# requirements.txt), and a build of kiln (scripts/example, or any build of
# build/tools/kiln). The interpreter is $KILN_PYTHON, by default
# .venv/bin/python of the checkout; it runs models.py, the error check and
# ort_bench.py.
#
# Usage: tests/bench/zoo/run.sh [--kiln PATH] [--threads "1 2"] [--runs N] [--warmup N]
#                               [--rounds N] [--budget-ms MS] [--models DIR] [--dynamo] [MODEL...]
#
# For each model: `kiln import-onnx` with its dims (a refusal is reported
# with the first line of the reason); `kiln run` on the test input, compared
# with PyTorch's output (max abs error; WRONG when it exceeds 1e-3 of the
# largest |expected|); then `kiln bench --json --input` and
# tests/bench/ort/ort_bench.py (on the same .npy input; intra-op threads N,
# inter-op threads 1, sequential execution) at each thread count,
# alternating for --rounds rounds (default 9), each side reporting the
# median of its rounds' medians (as tests/bench/ort/compare.sh does). Each
# round runs --runs timed runs (default 60), fewer for a slow model: at
# most --budget-ms of timed runs a round (default 600), at least 5. Many
# short rounds rather than a few long ones: the virtual machines this runs
# on have slow phases of seconds, which three rounds a side could not
# outvote (tests/bench/zoo/RESULTS.md). The last line is the geometric mean
# of kiln / ORT over the models that import and match. --models DIR reuses
# an export of models.py; otherwise the models go to a temporary directory,
# exported by the TorchScript exporter at opset 14, or with --dynamo by
# torch.export at opset 18 (models.py says why the first is the default).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kiln=""
threads="1 2"
runs=60
warmup=5
rounds=9
budget=600
models=""
dynamo=""
while [ $# -gt 0 ]; do
    case $1 in
    --kiln) kiln=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --budget-ms) budget=$2; shift 2 ;;
    --models) models=$(cd "$2" && pwd); shift 2 ;;
    --dynamo) dynamo=--dynamo; shift ;;
    -*)
        echo "usage: $0 [--kiln PATH] [--threads \"1 2\"] [--runs N] [--warmup N] [--rounds N] [--budget-ms MS] [--models DIR] [--dynamo] [MODEL...]" >&2
        exit 2
        ;;
    *) break ;;
    esac
done
if [ -z "$kiln" ]; then
    for candidate in "$root/build/tools/kiln" "$root/build-test/tools/kiln"; do
        if [ -x "$candidate" ]; then kiln=$candidate; break; fi
    done
fi
if [ -z "$kiln" ] || [ ! -x "$kiln" ]; then
    echo "run.sh: no kiln binary (build it, or pass --kiln PATH)" >&2
    exit 2
fi
python=${KILN_PYTHON:-$root/.venv/bin/python}
ort_bench=$root/tests/bench/ort/ort_bench.py
"$python" -c 'import onnxruntime, numpy' 2>/dev/null ||
    { echo "run.sh: $python cannot import onnxruntime and numpy (scripts/install-deps makes .venv; or set KILN_PYTHON)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$models" ]; then
    models=$work/models
    # shellcheck disable=SC2086 # $dynamo is empty or one flag
    "$python" -W ignore "$here/models.py" $dynamo "$models" "$@"
fi

median() { sed -n 's/.*"median_ms": *\([0-9.eE+-]*\).*/\1/p'; }
median_of() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "kiln: $("$kiln" version | head -n 1); $("$kiln" version --json | sed -n 's/.*"features": *\(\[[^]]*\]\).*/features \1/p')"
echo "onnxruntime: $("$python" "$ort_bench" --version) (Python, $("$python" -c 'import sys; print(sys.version.split()[0])'))"
echo "up to $runs timed runs (at most ${budget} ms of them) after $warmup warm-up, median of $rounds alternating rounds' medians, in ms; ratio = kiln / ORT"
echo "load average at the start: $(cut -d ' ' -f 1-3 /proc/loadavg); OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset: spinning waits; --threads N fixes the thread count)}"
printf '%-44s %7s %10s %10s %7s\n' model threads kiln ORT ratio
: >"$work/ratios"
: >"$work/problems"

while IFS='|' read -r name dims inputs description; do
    [ -n "$name" ] || continue
    [ -z "${1:-}" ] || echo " $* " | grep -q " $name " || continue
    dir=$models/$name
    # shellcheck disable=SC2086 # the dim list is split on purpose
    if ! "$kiln" import-onnx -q "$dir/model.onnx" -o "$work/$name.kiln" --name "$name" $dims >"$work/$name.import" 2>&1; then
        reason=$(grep -v '^ *$' "$work/$name.import" | head -n 1)
        printf '%-44s import refused: %s\n' "$description" "$reason"
        echo "$name: import refused: $reason" >>"$work/problems"
        continue
    fi
    bind=""
    for input in $inputs; do bind="$bind --input $input=$dir/$input.npy"; done
    # shellcheck disable=SC2086
    if ! "$kiln" run -q "$work/$name.kiln" $bind --output-dir "$work/$name.out" >"$work/$name.run" 2>&1; then
        reason=$(grep -v '^ *$' "$work/$name.run" | head -n 1)
        printf '%-44s run failed: %s\n' "$description" "$reason"
        echo "$name: kiln run failed: $reason" >>"$work/problems"
        continue
    fi
    check=$("$python" -c '
import sys, numpy as np
got, want = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
if got.shape != want.shape:
    print("WRONG shape %s, PyTorch %s" % (got.shape, want.shape)); sys.exit()
err = float(np.max(np.abs(got - want))); scale = float(np.max(np.abs(want)))
rel = err / scale if scale > 0 else err
print("%s max abs error %.3g (%.2g of max |y| %.3g)" % ("WRONG" if not rel <= 1e-3 else "ok", err, rel, scale))
' "$work/$name.out/y.npy" "$dir/expected.npy")
    printf '%-44s %s\n' "$description" "$check"
    case $check in
    WRONG*) echo "$name: $check" >>"$work/problems"; continue ;;
    esac
    # Fewer runs for a slow model: a first estimate from 3 runs.
    # shellcheck disable=SC2086
    one=$("$kiln" bench "$work/$name.kiln" $bind --runs 3 --warmup 1 --json | median)
    n_runs=$(awk -v b="$budget" -v t="$one" -v r="$runs" 'BEGIN { n = int(b / (t > 0 ? t : 1)); if (n > r) n = r; if (n < 5) n = 5; print n }')
    for n in $threads; do
        : >"$work/kiln.times"
        : >"$work/ort.times"
        round=0
        while [ "$round" -lt "$rounds" ]; do
            # shellcheck disable=SC2086
            "$kiln" bench "$work/$name.kiln" $bind --threads "$n" --runs "$n_runs" --warmup "$warmup" --json |
                median >>"$work/kiln.times"
            # shellcheck disable=SC2086
            "$python" "$ort_bench" "$dir/model.onnx" $bind --threads "$n" --runs "$n_runs" --warmup "$warmup" |
                median >>"$work/ort.times"
            round=$((round + 1))
        done
        if [ "$(grep -c . "$work/ort.times")" -ne "$rounds" ]; then
            printf '%-44s %7s ORT failed (ort_bench.py said so above)\n' "  ($n_runs runs)" "$n"
            echo "$name: ORT failed at $n thread(s)" >>"$work/problems"
            continue
        fi
        k=$(median_of <"$work/kiln.times")
        o=$(median_of <"$work/ort.times")
        ratio=$(awk -v k="$k" -v o="$o" 'BEGIN { printf "%.2f", k / o }')
        printf '%-44s %7s %10.3f %10.3f %7s\n' "  ($n_runs runs)" "$n" "$k" "$o" "$ratio"
        echo "$n $k $o" >>"$work/ratios"
    done
done <"$models/manifest.txt"

echo
for n in $threads; do
    awk -v n="$n" '$1 == n { s += log($2 / $3); c++ }
        END { if (c) printf "geometric mean of kiln / ORT at %s thread(s), over %d models that import and match: %.2f\n", n, c, exp(s / c) }' \
        "$work/ratios"
done
if [ -s "$work/problems" ]; then
    echo "not timed:"
    sed 's/^/  /' "$work/problems"
fi
