#!/usr/bin/env python3
"""Time the models seal.py sealed: kiln against ONNX Runtime, 1 and 2 threads, then print the table.

    .venv/bin/python tests/bench/transformers/bench.py OUT [--kiln build/tools/kiln] [--rounds 5] [--runs 50]

For each model folder of OUT with a sealed artifact (seal.json, model.kiln)
and each latency point seal.py wrote (bench_b1/: batch 1, bench_b4/: batch
4; sequence 64, wav2vec 2.0 640 samples), at 1 and 2 threads: `kiln bench
model.kiln --input ... --threads N --json` (the artifact kiln.export
sealed) and tests/bench/ort/ort_bench.py on model.onnx (export.py's
translation of the same torch.export route: the same ONNX ops and weights
as the one kiln.export imported), each `--runs` timed runs after
`--warmup`, on the same .npy inputs. The two alternate for `--rounds`
rounds (kiln first in even rounds, ORT first in odd ones) and each side's
figure is the median of its rounds' medians, so that a change in the
machine's load weighs on both; the ratio is kiln / ORT. Before timing, kiln
run and ORT run each point's inputs once and the largest difference of
their outputs is printed: they run the same model.

Prints the Markdown table of README.md (model, dims, import, max abs
error vs eager, kiln and ORT ms at batch 1, ratio) and one of the batch-4
latencies, and writes OUT/bench.json. Needs numpy and onnxruntime. The
machine's load matters: the load average at the start and end is printed,
and kiln's thread waits ("spin" or "passive") per round are kept.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_BENCH = os.path.join(HERE, "..", "ort", "ort_bench.py")
THREADS = (1, 2)


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def input_flags(folder):
    flags = []
    for file in sorted(os.listdir(folder)):
        if file.endswith(".npy"):
            flags += ["--input", "%s=%s" % (file[:-4], os.path.join(folder, file))]
    return flags


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd[:2]), p.returncode, (p.stderr or p.stdout).strip()))
    return json.loads(p.stdout)


def same_model(kiln, case, folder):
    """The largest |kiln - ORT| over every output at the inputs of `folder`."""
    import onnxruntime

    meta = json.load(open(os.path.join(case, "meta.json")))
    session = onnxruntime.InferenceSession(os.path.join(case, "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {n: np.load(os.path.join(folder, n + ".npy")) for n in meta["inputs"]}
    ort_outputs = session.run(None, feeds)
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([kiln, "run", os.path.join(case, "model.kiln"), "--output-dir", tmp] + input_flags(folder),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("kiln run: " + (p.stderr or p.stdout).strip())
        seal = json.load(open(os.path.join(case, "seal.json")))
        kiln_outputs = [np.load(os.path.join(tmp, o["name"] + ".npy")) for o in seal["outputs"]]
    return max(float(np.max(np.abs(k.astype(np.float64) - o))) for k, o in zip(kiln_outputs, ort_outputs))


def time_point(kiln, case, folder, threads, rounds, runs, warmup):
    """{"kiln_ms", "ort_ms", "ratio", "kiln_rounds", "ort_rounds", "kiln_waits"} at one point and thread count."""
    flags = input_flags(folder)
    common = ["--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup)]
    kiln_cmd = [kiln, "bench", os.path.join(case, "model.kiln")] + flags + common + ["--json"]
    ort_cmd = [sys.executable, ORT_BENCH, os.path.join(case, "model.onnx")] + flags + common
    kiln_ms, ort_ms, waits = [], [], []
    for r in range(rounds):
        for side in (("kiln", "ort") if r % 2 == 0 else ("ort", "kiln")):
            if side == "kiln":
                result = run_json(kiln_cmd)
                kiln_ms.append(result["median_ms"])
                waits.append(result.get("waits"))
            else:
                ort_ms.append(run_json(ort_cmd)["median_ms"])
    k, o = statistics.median(kiln_ms), statistics.median(ort_ms)
    return {"kiln_ms": k, "ort_ms": o, "ratio": k / o, "kiln_rounds": kiln_ms, "ort_rounds": ort_ms,
            "kiln_waits": waits}


def dims_text(seal):
    text = ", ".join("%s %d..%d" % (d["name"], d["min"], d["max"]) +
                     (" multiple_of %d" % d["multiple_of"] if d["multiple_of"] > 1 else "") for d in seal["dims"])
    derived = [i for i in seal["inputs"] if any(c in i["shape"] for c in "*+-/")]
    if derived:
        text += " (" + ", ".join("%s %s" % (i["name"], i["shape"]) for i in derived) + ")"
    return text


def import_text(seal):
    last = seal["attempts"][-1]
    if "kiln" not in seal:
        return "FAILED: " + "; ".join("strict=%s%s: %s" % (a["strict"], " no_grad" if a["no_grad"] else "",
                                                            a["error"].splitlines()[0]) for a in seal["attempts"])
    how = "ok, strict" if last["strict"] else "ok, non-strict (strict failed)"
    if last["no_grad"]:
        first = seal["attempts"][0]["error"].split(":")[0]
        how = "FAILED as called (%s, strict and non-strict); ok inside torch.no_grad(), %s" % (
            first, "strict" if last["strict"] else "non-strict")
    return how


def error_text(seal):
    if "kiln" not in seal:
        return "-"
    example = [c["max_abs_error"] for c in seal["evidence"] if c["name"] == "example"]
    corners = [c["max_abs_error"] for c in seal["evidence"] if c["name"] != "example" and
               c["max_abs_error"] is not None]
    parts = ["%.1e" % example[0]] if example else []
    if corners:
        parts.append("%.1e" % max(corners))
    parts.append("%.1e" % seal["extra"]["max_abs_error"])
    return " / ".join(parts)


def latency_cells(timing):
    if not timing:
        return ["-", "-", "-"]
    return ["%.3g / %.3g" % tuple(timing[t]["kiln_ms"] for t in THREADS),
            "%.3g / %.3g" % tuple(timing[t]["ort_ms"] for t in THREADS),
            "%.2f / %.2f" % tuple(timing[t]["ratio"] for t in THREADS)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="seal.py's output directory")
    parser.add_argument("--kiln", default="build/tools/kiln")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    version = subprocess.run([args.kiln, "version"], capture_output=True, text=True).stdout.splitlines()[0]
    ort_version = subprocess.run([sys.executable, ORT_BENCH, "--version"], capture_output=True, text=True).stdout
    start_load = load_average()
    print("kiln: %s; onnxruntime %s; %d timed runs after %d warm-up, median of %d alternating rounds' medians; "
          "load average at the start %s; OMP_WAIT_POLICY=%s" % (
              version, ort_version.strip(), args.runs, args.warmup, args.rounds, start_load,
              os.environ.get("OMP_WAIT_POLICY", "(unset)")), flush=True)
    results = {}
    for name in sorted(os.listdir(args.out)):
        case = os.path.join(args.out, name)
        if not os.path.isfile(os.path.join(case, "seal.json")):
            continue
        seal = json.load(open(os.path.join(case, "seal.json")))
        entry = results[name] = {"seal": seal, "points": {}}
        if "kiln" not in seal:
            print("%s: not sealed, not timed" % name, flush=True)
            continue
        for point in seal["bench"]:
            folder = os.path.join(case, point["folder"])
            difference = same_model(args.kiln, case, folder)
            timing = {t: time_point(args.kiln, case, folder, t, args.rounds, args.runs, args.warmup) for t in THREADS}
            entry["points"][point["folder"]] = {"shapes": point["shapes"], "kiln_vs_ort": difference,
                                                "timing": timing}
            print("%s %s %s: kiln %s ms, ORT %s ms, kiln/ORT %s (1 / 2 threads); |kiln - ORT| %.1e; kiln waits %s" % (
                name, point["folder"], point["shapes"], *latency_cells(timing), difference,
                sorted(set(w for t in THREADS for w in timing[t]["kiln_waits"]))), flush=True)
    end_load = load_average()
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump({"kiln": version, "onnxruntime": ort_version.strip(), "rounds": args.rounds, "runs": args.runs,
                   "warmup": args.warmup, "load_start": start_load, "load_end": end_load, "models": results}, f,
                  indent=1)
    print("\nload average at the end %s\n" % end_load)
    print("| model | dims | import | max abs error vs eager | kiln ms (1 thr / 2 thr) | ORT ms (1 / 2) | kiln/ORT |")
    print("|---|---|---|---|---|---|---|")
    for name, entry in results.items():
        seal = entry["seal"]
        timing = entry["points"].get("bench_b1", {}).get("timing")
        dims = dims_text(seal) if "kiln" in seal else "-"
        print("| %s | %s | %s | %s | %s |" % (seal["class"], dims, import_text(seal), error_text(seal),
                                             " | ".join(latency_cells(timing))))
    print("\n| model | batch 4 inputs | kiln ms (1 / 2) | ORT ms (1 / 2) | kiln/ORT | kiln vs ORT outputs |")
    print("|---|---|---|---|---|---|")
    for name, entry in results.items():
        point = entry["points"].get("bench_b4")
        if point:
            shapes = ", ".join("%s %s" % (n, "x".join(map(str, s))) for n, s in point["shapes"].items())
            cells = " | ".join(latency_cells(point["timing"]))
            print("| %s | %s | %s | %.1e |" % (entry["seal"]["class"], shapes, cells, point["kiln_vs_ort"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
