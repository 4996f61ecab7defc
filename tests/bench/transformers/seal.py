#!/usr/bin/env python3
"""Seal the transformers models of export.py with kiln.export, over dynamic batch and sequence.

    PYTHONPATH=build/python .venv/bin/python tests/bench/transformers/seal.py OUT [--models bert,gpt2,...]

For each model of export.py (the same configs, sizes, seed and dynamic_shapes:
named Dims `batch` 1..4 and `seq` 1..64 on input_ids and attention_mask; ViT
and the Whisper encoder `batch` alone; wav2vec 2.0 `batch` and a sample count
10*tens, the derived Dim torch asks for) this calls

    kiln.export(model, (), inputs, dynamic_shapes=..., strict=True, evidence="corners")

with the example at batch 2, sequence 16. A model strict tracing refuses is
exported again with strict=False, and one that fails both ways is tried once
more inside torch.no_grad() (a caller's change, not a narrower domain); each
attempt's error is kept. The artifact goes to OUT/MODEL/model.kiln and
seal.json records the attempts, the dims and input shapes as the artifact
declares them, the max abs error of each evidence case (the example and the
domain's corners, compared with eager by kiln.export) and of one more point
inside the domain, compared here: export.py's second data set, batch 3,
sequence 9 with the first sequence's last 3 positions padded.

The model folder is export.py's own (export.py's export_one runs first and
writes model.onnx, torch.onnx's translation of the same torch.export route,
which ORT runs in bench.py; check.py can run over OUT too), and bench_b1/,
bench_b4/ hold the latency inputs of bench.py (batch 1 and 4, sequence 64;
wav2vec 2.0: 640 samples) as .npy files. Exit 1 if any model failed
kiln.export every way.
"""
import argparse
import json
import logging
import os
import sys
import time
import traceback
import warnings

import numpy as np
import torch

import export  # noqa: E402 - export.py of this folder: the models, their inputs and dims
import kiln

# The points bench.py times: (folder, batch, seq). wav2vec 2.0 takes 40*seq samples (export.py's inputs),
# at most 1600: it runs at seq 16, 640 samples (63 frames).
BENCH_POINTS = [("bench_b1", 1, 64), ("bench_b4", 4, 64)]
BENCH_SEQ = {"wav2vec2": 16}
# The extra point compared here: export.py's second data set (batch, seq, padded positions).
EXTRA_POINT = export.SHAPES[1]


def error_text(exc):
    """The error as kiln.export raised it: type and whole message."""
    return "%s: %s" % (type(exc).__name__, str(exc).strip())


def attempts():
    """(strict, under torch.no_grad()) in the order tried."""
    return [(True, False), (False, False), (True, True)]


def seal(model, inputs, dynamic_shapes):
    """kiln.export the model, strict first; returns (artifact or None, [attempt record])."""
    record = []
    for strict, no_grad in attempts():
        start = time.perf_counter()
        try:
            if no_grad:
                with torch.no_grad():
                    artifact = kiln.export(model, (), inputs, dynamic_shapes=dynamic_shapes, strict=strict,
                                           evidence="corners")
            else:
                artifact = kiln.export(model, (), inputs, dynamic_shapes=dynamic_shapes, strict=strict,
                                       evidence="corners")
        except Exception as exc:  # noqa: BLE001 - every refusal is a finding to record
            record.append({"strict": strict, "no_grad": no_grad, "seconds": time.perf_counter() - start,
                           "error": error_text(exc), "traceback": traceback.format_exc()})
            continue
        record.append({"strict": strict, "no_grad": no_grad, "seconds": time.perf_counter() - start,
                       "error": None})
        return artifact, record
    return None, record


def max_error(got, want):
    return max((float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))) if w.size else 0.0)
               for g, w in zip(got, want))


def extra_point(program, model, make_inputs):
    """kiln and eager at EXTRA_POINT: {"point", "max_abs_error"}."""
    batch, seq, padded = EXTRA_POINT
    torch.manual_seed(1)
    inputs = make_inputs(batch, seq, padded=padded)
    with torch.no_grad():
        want = [t.numpy() for t in export.leaves(model(**inputs))]
    got = list(program.run(**{name: t.numpy() for name, t in inputs.items()}).values())
    if [g.shape for g in got] != [w.shape for w in want]:
        raise RuntimeError("extra point: kiln gives shapes %s, eager %s" % ([g.shape for g in got],
                                                                             [w.shape for w in want]))
    point = {"batch": batch, "seq": seq, "padded": padded} if "input_ids" in inputs else \
        {"batch": batch, "shape": list(next(iter(inputs.values())).shape)}
    return {"point": point, "max_abs_error": max_error(got, want)}


def write_bench_inputs(name, case, make_inputs):
    points = []
    for folder, batch, seq in BENCH_POINTS:
        torch.manual_seed(2)
        inputs = make_inputs(batch, BENCH_SEQ.get(name, seq))
        os.makedirs(os.path.join(case, folder), exist_ok=True)
        for input_name, t in inputs.items():
            np.save(os.path.join(case, folder, input_name + ".npy"), t.numpy())
        points.append({"folder": folder, "shapes": {n: list(t.shape) for n, t in inputs.items()}})
    return points


def seal_one(name, out):
    case = export.export_one(name, out)  # model.onnx (ORT's side), meta.json, inputs/, outputs/
    torch.manual_seed(0)  # export_one's seed: the same weights as model.onnx
    model, make_inputs, dynamic_shapes = export.MODELS[name]()
    model.eval()
    inputs = make_inputs(*export.SHAPES[0])
    result = {"model": name, "class": type(model).__name__, "example": list(export.SHAPES[0][:2])}
    artifact, result["attempts"] = seal(model, inputs, dynamic_shapes)
    if artifact is None:
        return result
    path = os.path.join(case, "model.kiln")
    artifact.save(path)
    program = kiln.load(path)
    result["kiln"] = path
    result["dims"] = [{"name": d.name, "min": d.min, "max": d.max, "multiple_of": d.multiple_of}
                      for d in program.dims]
    result["inputs"] = [{"name": i.name, "shape": i.shape} for i in program.inputs]
    result["outputs"] = [{"name": o.name, "shape": o.shape} for o in program.outputs]
    result["evidence"] = [{"name": c["name"], "sealed": c["sealed"], "skipped": c.get("skipped"),
                           "max_abs_error": max(r["max_abs_error"] for r in c["results"]) if c["results"] else None}
                          for c in artifact.evidence]
    result["extra"] = extra_point(program, model, make_inputs)
    result["bench"] = write_bench_inputs(name, case, make_inputs)
    program.close()
    return result


def summary(r):
    """One line: how it sealed, the dims, the errors."""
    tried = r["attempts"]
    if "kiln" not in r:
        return "kiln.export FAILED every way; " + "; ".join(
            "strict=%s%s: %s" % (a["strict"], ", no_grad" if a["no_grad"] else "", " ".join(a["error"].split())[:300])
            for a in tried)
    last = tried[-1]
    how = "strict" if last["strict"] else "non-strict"
    if last["no_grad"]:
        how += " under torch.no_grad()"
    dims = ", ".join("%s %d..%d" % (d["name"], d["min"], d["max"]) for d in r["dims"])
    shapes = ", ".join("%s %s" % (i["name"], i["shape"]) for i in r["inputs"])
    errors = ", ".join("%s %.2g" % (c["name"], c["max_abs_error"]) for c in r["evidence"]
                       if c["max_abs_error"] is not None)
    line = "sealed (%s, %.1f s): dims %s; inputs %s; max abs error vs eager: %s; extra %s %.2g" % (
        how, last["seconds"], dims, shapes, errors, r["extra"]["point"], r["extra"]["max_abs_error"])
    for a in tried[:-1]:
        line += "\n    (strict=%s%s failed: %s)" % (a["strict"], ", no_grad" if a["no_grad"] else "",
                                                    " ".join(a["error"].split())[:300])
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the directory to write one folder per model into (export.py's layout)")
    parser.add_argument("--models", default=",".join(export.MODELS),
                        help="comma-separated, of: " + ", ".join(export.MODELS))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    # export.py's torch.onnx.export warns that torchvision is not installed, once per model.
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    failed = 0
    for name in args.models.split(","):
        r = seal_one(name, args.out)
        with open(os.path.join(args.out, name, "seal.json"), "w") as f:
            json.dump(r, f, indent=1)
        failed += "kiln" not in r
        print("%s: %s" % (name, summary(r)), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
