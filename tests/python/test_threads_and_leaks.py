"""One Program serves many threads (a session each) with correct results;
the GIL is released while kiln runs; running allocates nothing that stays."""
import ctypes
import os
import threading
import time

import numpy
import pytest
import torch

import kiln
from kiln import _lib
from conftest import MLP, export_mlp

SANITIZED = os.environ.get("KILN_SANITIZED") == "1"


def mlp_reference(module, x):
    """The MLP in float64 NumPy from its own weights: the oracle the threads are checked against."""
    w1, b1 = module.hidden.weight.detach().double().numpy(), module.hidden.bias.detach().double().numpy()
    w2, b2 = module.out.weight.detach().double().numpy(), module.out.bias.detach().double().numpy()
    return numpy.maximum(x.astype(numpy.float64) @ w1.T + b1, 0) @ w2.T + b2


def test_one_program_shared_by_four_threads():
    module, program = MLP(0), export_mlp(0).load()
    runs, threads = 200, 4
    start = threading.Barrier(threads)
    failures, sessions = [], []  # the sessions themselves: kept alive, their ids cannot be reused
    lock = threading.Lock()

    def work(worker):
        rng = numpy.random.default_rng(worker)
        start.wait()
        try:
            for i in range(runs):
                batch = 1 + (worker * 7 + i) % 16  # every thread walks through every size
                x = rng.standard_normal((batch, 8)).astype(numpy.float32)
                y = program.run(x=x)["y"]
                if y.shape != (batch, 4) or not numpy.allclose(y, mlp_reference(module, x), rtol=1e-4, atol=1e-4):
                    raise AssertionError("thread %d run %d (batch %d): wrong result" % (worker, i, batch))
            with lock:
                sessions.append(program._thread_session())
        except BaseException as exc:  # noqa: B902 - reported by the main thread
            with lock:
                failures.append(exc)

    workers = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert failures == []
    assert len({id(session) for session in sessions}) == threads  # a session per thread, none shared


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


@pytest.fixture(scope="module")
def long_run():
    """(session, inputs): a 1024 x 1024 matmul on the reference kernels, one thread: ~0.3 s here."""
    n = kiln.Dim("n", 1, 1024)
    artifact = kiln.export(MatMul(), (torch.ones(4, 4), torch.ones(4, 4)),
                           dynamic_shapes={"a": {0: n, 1: n}, "b": {0: n, 1: n}}, evidence="example")
    session = artifact.load().session(dims={"n": 1024}, threads=1, reference_kernels=True)
    a = numpy.random.default_rng(0).random((1024, 1024), dtype=numpy.float32)
    session.run(a=a, b=a)  # binds the inputs; later runs may call kiln_session_run alone
    return session, a


def ticks_during(run):
    """Run `run` in a thread while this one ticks every millisecond: how many ticks fell in the
    middle half of the run. A thread that holds the GIL through its run leaves none there."""
    window, ticks = {}, []

    def worker():
        window["start"] = time.perf_counter()
        run()
        window["end"] = time.perf_counter()

    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    thread.join()
    quarter = (window["end"] - window["start"]) / 4
    return sum(1 for t in ticks if window["start"] + quarter < t < window["end"] - quarter)


def test_the_gil_is_released_while_running(long_run):
    session, a = long_run
    assert ticks_during(lambda: session.run(a=a, b=a)) > 0


def test_the_tick_count_sees_a_held_gil(long_run):
    # The control: the same run through a PyDLL binding, which keeps the GIL, leaves no tick.
    session, _ = long_run
    holding = ctypes.PyDLL(_lib._library_path("LIBKILN")).kiln_session_run
    holding.argtypes, holding.restype = [ctypes.c_void_p, ctypes.POINTER(_lib.Error)], ctypes.c_int
    error = _lib.Error()
    assert ticks_during(lambda: holding(session._handle, ctypes.byref(error))) == 0
    assert error.code == 0


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build quarantines freed memory, so RSS grows without a leak")
def test_ten_thousand_runs_do_not_grow_memory(scale_path):
    program = kiln.load(scale_path)
    x = numpy.ones((3, 2))
    for _ in range(1000):
        program.run(x=x)
    before = resident_bytes()
    for _ in range(10000):
        y = program.run(x=x)["y"]
    growth = resident_bytes() - before
    assert y.tolist() == [[3.0, 3.0]] * 3
    assert growth < 2 << 20, "RSS grew %s over 10,000 runs" % kiln.format_bytes(growth)


def test_thread_policies():
    """threads is the most a run uses; "fixed" always uses it, "adaptive" (the default) at most it;
    an unknown policy is an ArgumentError."""
    program = export_mlp(0).load()
    x = numpy.ones((2, 8), dtype=numpy.float32)
    fixed = program.session(threads=2, thread_policy="fixed")
    fixed.run(x=x)
    assert fixed.run_threads == fixed.threads
    adaptive = program.session(threads=2)
    adaptive.run(x=x)
    assert 1 <= adaptive.run_threads <= adaptive.threads
    with pytest.raises(kiln.ArgumentError, match="thread_policy"):
        program.session(thread_policy="spin")
