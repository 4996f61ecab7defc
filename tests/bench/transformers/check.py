#!/usr/bin/env python3
"""Import the models export.py wrote with kiln, run them, compare with eager PyTorch.

    python3 tests/bench/transformers/check.py OUT [--kiln build/tools/kiln] [--ort]

Per model folder of OUT: kiln import-onnx model.onnx --dim SYMBOL=MIN..MAX
(the ranges of meta.json), kiln probe (the domain's corners), then kiln
run on each data set (inputs/, inputs_1/) and the largest |kiln - eager|
over every output. --ort also
runs onnxruntime on the same model, which tells an exporter's error from
kiln's. Prints one line per model; exit 1 if any model does not import or
run. Needs numpy (and onnxruntime for --ort).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def kiln_name(name):
    """kiln's name of an ONNX value name: itself when an identifier, else each other character as '_'
    (spec/onnx-import.md section 2; torch's names are identifiers)."""
    import re

    fixed = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return fixed if re.match(r"[A-Za-z_]", fixed) else "_" + fixed


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr).strip()


def check_model(folder, kiln, use_ort):
    meta = json.load(open(os.path.join(folder, "meta.json")))
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.kiln")
        cmd = [kiln, "import-onnx", os.path.join(folder, "model.onnx"), "-o", artifact]
        for symbol, (lo, hi) in meta["dims"].items():
            cmd += ["--dim", f"{symbol}={lo}..{hi}"]
        code, text = run(cmd)
        if code != 0:
            return {"import": False, "why": text}
        code, text = run([kiln, "probe", artifact])
        probe = text.splitlines()[-1] if text else ""
        if code != 0:
            return {"import": True, "why": "kiln probe: " + text}
        errors, ort_errors = [], []
        for k in range(meta.get("data_sets", 1)):
            suffix = "" if k == 0 else f"_{k}"
            inputs = os.path.join(folder, "inputs" + suffix)
            out_dir = os.path.join(tmp, "out" + suffix)
            cmd = [kiln, "run", artifact, "--output-dir", out_dir]
            for name in meta["inputs"]:
                cmd += ["--input", f"{kiln_name(name)}={os.path.join(inputs, name + '.npy')}"]
            code, text = run(cmd)
            if code != 0:
                return {"import": True, "why": "kiln run: " + text}
            worst = 0.0
            for name in meta["outputs"]:
                got = np.load(os.path.join(out_dir, kiln_name(name) + ".npy"))
                want = np.load(os.path.join(folder, "outputs" + suffix, name + ".npy"))
                if got.shape != want.shape:
                    return {"import": True, "why": f"output {name}: shape {got.shape}, eager {want.shape}"}
                worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0)
            errors.append(worst)
            if use_ort:
                import onnxruntime as ort

                session = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
                feeds = {n: np.load(os.path.join(inputs, n + ".npy")) for n in meta["inputs"]}
                got = session.run(meta["outputs"], feeds)
                ort_errors.append(max(float(np.max(np.abs(g - np.load(os.path.join(folder, "outputs" + suffix,
                                                                                   n + ".npy")))))
                                      for g, n in zip(got, meta["outputs"])))
        return {"import": True, "errors": errors, "ort_errors": ort_errors, "probe": probe}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--kiln", default="build/tools/kiln")
    parser.add_argument("--ort", action="store_true", help="also compare onnxruntime with eager")
    args = parser.parse_args()
    bad = 0
    for name in sorted(os.listdir(args.out)):
        folder = os.path.join(args.out, name)
        if not os.path.isfile(os.path.join(folder, "meta.json")):
            continue
        r = check_model(folder, args.kiln, args.ort)
        if "errors" in r:
            line = f"{name}: import ok, max abs error vs eager " + ", ".join(f"{e:.3g}" for e in r["errors"])
            if r["ort_errors"]:
                line += " (onnxruntime " + ", ".join(f"{e:.3g}" for e in r["ort_errors"]) + ")"
            line += "; " + r["probe"]
        else:
            bad += 1
            line = f"{name}: import {'ok' if r['import'] else 'FAILED'}: {r['why']}"
        print(line, flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
