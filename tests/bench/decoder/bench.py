#!/usr/bin/env python3
"""Per-token decode latency and prefill time of decoder.py's GPT-style decoder (4 layers, d 256,
4 heads, vocab 1024, context 2048): kiln (the artifact of kiln.export_methods, each layer's cache
a state that decode extends in place) against ONNX Runtime running the same ONNX graph kiln
imported with the cache passed in and out, interleaved round by round, medians; at past 16, 512
and 2000 and a 512-token prompt, on 1 and 2 threads.

    .venv/bin/python tests/bench/decoder/bench.py [--rounds N] [--runs N] [--json OUT]

Run from a checkout whose build/python holds the kiln package (scripts/example builds it), e.g.
PYTHONPATH=build/python. Numbers mean something only on a quiet machine.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder as model  # noqa: E402

import kiln  # noqa: E402
from kiln._torch_export import from_module_or_program  # noqa: E402


def onnx_of(program, args, dynamic_shapes, output_names):
    """The ONNX graph kiln.export imports for `program` (the same torch.export and translation)."""
    return from_module_or_program(program, args, None, dynamic_shapes, False, output_names).model


def time_calls(call, runs, prepare=None):
    times = []
    for _ in range(runs):
        if prepare:
            prepare()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--runs", type=int, default=20, help="timed calls per round and side (default 20)")
    parser.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    parser.add_argument("--json", help="write the table as JSON here too")
    args = parser.parse_args()
    import onnxruntime

    decoder = model.Decoder()
    decoder.eval()
    artifact = model.export_methods(kiln, decoder)
    program = artifact.load()
    names, present = model.cache_names(), model.cache_names("present_")
    from torch.export import Dim
    past_dim, seq_dim = Dim("past", min=1, max=model.CONTEXT - 1), Dim("seq", min=1, max=512)
    ids = torch.randint(0, model.VOCAB, (1, 8))
    caches = [torch.randn(1, model.HEADS, 8, model.HEAD) for _ in names]
    decode_onnx = onnx_of(model.Decode(decoder), (ids[:, :1], torch.tensor([8]), *caches),
                          {"ids": None, "position": None, **{n: {2: past_dim} for n in names}}, ["logits"] + present)
    prefill_onnx = onnx_of(model.Prefill(decoder), (ids,), {"ids": {1: seq_dim}}, ["logits"] + present)

    rng = numpy.random.default_rng(0)
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        ort_decode = onnxruntime.InferenceSession(decode_onnx, options, providers=["CPUExecutionProvider"])
        ort_prefill = onnxruntime.InferenceSession(prefill_onnx, options, providers=["CPUExecutionProvider"])
        state = program.new_state()
        kiln_decode = program.decode.session(threads=threads, thread_policy="fixed", state=state)
        kiln_prefill = program.session(threads=threads, thread_policy="fixed", state=state)
        cases = [("decode", past) for past in (16, 512, 2000)] + [("prefill", 512)]
        for kind, size in cases:
            if kind == "decode":
                # The same cache on both sides: a prompt prefilled (at most 512 tokens, prefill's
                # bound; rows past it zeros), its keys and values passed to ONNX Runtime and kept in
                # kiln's state, whose length is put back to `size` before each timed token.
                prompt = {"ids": rng.integers(0, model.VOCAB, (1, min(size, 512)), dtype=numpy.int64)}
                state.reset()
                kiln_prefill.run(**prompt)
                for p in present:
                    state.set_length(p, size)
                feeds = {"ids": numpy.array([[7]], dtype=numpy.int64), "position": numpy.array([size], numpy.int64)}
                feeds.update({n: state.read(p) for n, p in zip(names, present)})
                step = {"ids": feeds["ids"], "position": feeds["position"]}
                kiln_call, ort_call = (lambda f=step: kiln_decode.run(**f)), (lambda f=feeds: ort_decode.run(None, f))
                prepare = (lambda n=size: [state.set_length(p, n) for p in present])
            else:
                feeds = {"ids": rng.integers(0, model.VOCAB, (1, size), dtype=numpy.int64)}
                kiln_call, ort_call = (lambda f=feeds: kiln_prefill.run(**f)), (lambda f=feeds: ort_prefill.run(None, f))
                prepare = state.reset
            # Same answers first: the comparison is of two runs of one program.
            prepare()
            got, want = list(kiln_call().values()), ort_call()
            error = max(float(numpy.abs(g - w).max()) for g, w in zip(got, want))
            for _ in range(3):
                prepare()
                kiln_call()
                ort_call()
            kiln_times, ort_times = [], []
            for _ in range(args.rounds):
                kiln_times.append(time_calls(kiln_call, args.runs, prepare))
                ort_times.append(time_calls(ort_call, args.runs))
            k, o = statistics.median(kiln_times), statistics.median(ort_times)
            rows.append({"threads": threads, "case": kind, "size": size, "kiln_ms": k * 1e3, "ort_ms": o * 1e3,
                         "ratio": k / o, "max_abs_diff": error})
            print("%d thread%s  %-7s %4d  kiln %8.3f ms  ort %8.3f ms  ratio %.2f  |diff| %.1e" % (
                threads, "" if threads == 1 else "s", kind, size, k * 1e3, o * 1e3, k / o, error), flush=True)
        kiln_decode.close()
        kiln_prefill.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"onnxruntime": onnxruntime.__version__, "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
