#!/usr/bin/python3
"""The per-call overhead of the Python binding against the C API's own
per-run cost, on the seed example (y = 2x + 1, x: float64[3, 2]), measured
in one process tree, interleaved over rounds (these machines are noisy).

    PYTHONPATH=build/python /usr/bin/python3 tests/python/bench_overhead.py build/tests/bench_call_overhead

Prints per round the microseconds per call of program.run (a dict of new
arrays), session.run and the C loop (rewrap, set input, run, copy the output
out), then the medians and the binding's overhead over C. Not a test: a
benchmark (the target, under 20 µs per call, is for this machine's numbers).
"""
import statistics
import subprocess
import sys
import time

import numpy
import torch

import kiln

ROUNDS = 7
CALLS = 20000


class Scale(torch.nn.Module):
    def forward(self, x):
        return 2 * x + 1


def per_call(function, calls):
    for _ in range(calls // 10):
        function()
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e6


def main(c_bench):
    artifact = kiln.export(Scale(), (torch.ones(2, 2, dtype=torch.float64),),
                           dynamic_shapes={"x": {0: kiln.Dim("batch", min=2, max=4)}}, evidence=None)
    program = artifact.load()
    session = program.session()
    x = numpy.ones((3, 2))
    rows = []
    for round_index in range(ROUNDS):
        c = float(subprocess.run([c_bench, str(CALLS * 10)], capture_output=True, text=True, check=True)
                  .stdout.split()[-1])
        run = per_call(lambda: program.run(x=x), CALLS)
        direct = per_call(lambda: session.run(x=x), CALLS)
        rows.append((run, direct, c))
        print("round %d: program.run %.2f us, session.run %.2f us, C API %.3f us" % (round_index, run, direct, c))
    run, direct, c = (statistics.median(column) for column in zip(*rows))
    print("median: program.run %.2f us/call, session.run %.2f us/call, C API %.3f us/run; "
          "binding overhead %.2f us/call (program.run - C)" % (run, direct, c, run - c))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
