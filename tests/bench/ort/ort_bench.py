"""ort_bench.py -- time one ONNX model in ONNX Runtime (the Python package
from PyPI, CPU execution provider), the baseline of tests/bench/ort/compare.sh
and tests/bench/zoo/run.sh: `runs` timed runs after `warmup` untimed ones,
each timed around session.run alone, the inputs bound once.

Usage: PYTHON ort_bench.py MODEL.onnx --input NAME=D0,D1,... | NAME=PATH.npy [--input ...]
                           [--threads N] [--runs N] [--warmup N]
       PYTHON ort_bench.py --version

An input given as dims is random, uniform in [-1, 1) from a fixed seed,
of the dtype the model declares (float, double or float16); one given as a
.npy file is that file, so that ORT runs on the very input kiln runs on
(token inputs, int64, work). Session: graph optimisation "all", sequential
execution, intra-op threads N and inter-op threads 1 (sequential execution
runs no inter-op pool, so that count only keeps a pool from being made).
These replace the options of the onnxruntime-node script this replaced
(intraOpNumThreads = interOpNumThreads = N, executionMode "sequential").

Prints one JSON object: {"model", "threads", "runs", "min_ms", "median_ms"}.
Exit 2 on a usage error, 1 when ORT refuses the model or a run fails.
"""
import json
import sys
import time

import numpy
import onnxruntime

RANDOM_DTYPES = {"tensor(float)": numpy.float32, "tensor(double)": numpy.float64, "tensor(float16)": numpy.float16}


def usage(message):
    sys.stderr.write("ort_bench: %s\nusage: ort_bench.py MODEL.onnx --input NAME=D0,D1,...|NAME=PATH.npy "
                     "[--threads N] [--runs N] [--warmup N]\n" % message)
    sys.exit(2)


def count(flag, text, minimum):
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or n < minimum:
        usage("%s must be an integer >= %d, got '%s'" % (flag, minimum, text))
    return n


def parse(argv):
    args = {"model": None, "inputs": [], "threads": 1, "runs": 100, "warmup": 5}
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag in ("--input", "--threads", "--runs", "--warmup"):
            if i + 1 >= len(argv):
                usage("%s needs a value" % flag)
            value = argv[i + 1]
            i += 2
            if flag == "--input":
                name, at, what = value.partition("=")
                if not name or not at or not what:
                    usage("--input wants NAME=D0,D1,... or NAME=PATH.npy, got '%s'" % value)
                args["inputs"].append((name, what))
            else:
                args[flag[2:]] = count(flag, value, 0 if flag == "--warmup" else 1)
        elif flag.startswith("--") or args["model"]:
            usage("unexpected argument '%s'" % flag)
        else:
            args["model"] = flag
            i += 1
    if not args["model"]:
        usage("no model given")
    if not args["inputs"]:
        usage("no --input given")
    return args


def feeds_of(session, inputs):
    declared = {i.name: i.type for i in session.get_inputs()}
    rng = numpy.random.default_rng(20261129)
    feeds = {}
    for name, what in inputs:
        if name not in declared:
            usage("the model has no input '%s' (inputs: %s)" % (name, ", ".join(declared)))
        if what.endswith(".npy"):
            feeds[name] = numpy.load(what)
            continue
        try:
            dims = [int(d) for d in what.split(",")]
        except ValueError:
            dims = [-1]
        if any(d < 0 for d in dims):
            usage("--input wants NAME=D0,D1,... or NAME=PATH.npy, got '%s=%s'" % (name, what))
        if declared[name] not in RANDOM_DTYPES:
            usage("input '%s' is %s: random inputs are float, double or float16 (give a .npy)" % (name, declared[name]))
        feeds[name] = rng.uniform(-1.0, 1.0, size=dims).astype(RANDOM_DTYPES[declared[name]])
    return feeds


def main():
    if sys.argv[1:] == ["--version"]:
        print(onnxruntime.__version__)
        return 0
    args = parse(sys.argv[1:])
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = args["threads"]
    options.inter_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(args["model"], options, providers=["CPUExecutionProvider"])
        feeds = feeds_of(session, args["inputs"])
        for _ in range(args["warmup"]):
            session.run(None, feeds)
        times = []
        for _ in range(args["runs"]):
            start = time.perf_counter_ns()
            session.run(None, feeds)
            times.append((time.perf_counter_ns() - start) / 1e6)
    except Exception as error:  # ORT's own exception types (Fail, InvalidArgument, NotImplemented, ...)
        sys.stderr.write("ort_bench: %s: %s\n" % (args["model"], error))
        return 1
    times.sort()
    middle = len(times) // 2
    median = times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2
    print(json.dumps({"model": args["model"], "threads": args["threads"], "runs": args["runs"],
                      "min_ms": times[0], "median_ms": median}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
