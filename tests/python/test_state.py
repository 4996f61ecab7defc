"""State tensors from Python (format 1.3): a cache that prefill fills and decode extends, shared by
the methods' runs on one thread (program.state), kept apart across threads and by kiln.State objects,
refused with the dims named when it is full, and described by kiln.inspect like `kiln inspect --json`."""
import json
import threading

import numpy as np
import pytest

import kiln

CACHE_TEXT = """kiln 1.1
program "cache"
mode inference
method prefill
dim past in 0..0
dim seq in 1..8
input x: f64[1, seq, 2]
state cache: f64[1, 8, 2] grows 1 length past
%0 = state_append(x, state="cache")
%1 = reduce_sum(%0, axes=[1], keepdims=0)
output sums = %1

method decode {
    dim past in 0..7
    dim seq in 1..8
    relation past + seq <= 8
    input t: f64[1, seq, 2]
    %0 = state_append(t, state="cache")
    %1 = reduce_sum(%0, axes=[1], keepdims=0)
    output sums = %1
}
"""


@pytest.fixture
def cache_path(tmp_path, run_kiln):
    text = tmp_path / "cache.ktxt"
    text.write_text(CACHE_TEXT)
    done = run_kiln("asm", str(text), "-o", str(tmp_path / "cache.kiln"))
    assert done.returncode == 0, done.stderr
    return tmp_path / "cache.kiln"


def rows(first, count):
    values = np.arange(first, first + count, dtype=np.float64)
    return np.stack([values, 10 * values], axis=-1)[None]


def test_methods_share_the_threads_state(cache_path):
    program = kiln.load(cache_path)
    assert program.state_names == ["cache"] and program.decode.state_names == ["cache"]
    (sums,) = program.prefill(rows(1, 3))
    np.testing.assert_array_equal(sums, [[6, 60]])
    for n in range(4, 9):
        (sums,) = program.decode(rows(n, 1))
    np.testing.assert_array_equal(sums, [[36, 360]])
    assert program.state is program.decode.state and program.state.length("cache") == 8
    np.testing.assert_array_equal(program.state.read("cache"), rows(1, 8))
    with pytest.raises(kiln.ContractError, match=r"state 'cache' length \(past\): 8 is outside 0\.\.7"):
        program.decode(rows(9, 1))
    program.state.reset()
    program.prefill(rows(1, 7))
    with pytest.raises(kiln.ContractError, match=r"relation past \+ seq <= 8 does not hold: past = 7, seq = 2"):
        program.decode(rows(8, 2))
    assert program.state.length("cache") == 7


def test_a_state_object_joins_sessions(cache_path):
    program = kiln.load(cache_path)
    state = program.new_state()
    prefill, decode = program.session(state=state), program.decode.session(state=state)
    prefill.run(rows(5, 2))
    decode.run(rows(7, 1))
    assert state.length("cache") == 3
    assert program.state.length("cache") == 0  # the thread's own state is another
    with pytest.raises(kiln.ArgumentError, match="kiln.State"):
        program.session(state=object())


def test_threads_keep_separate_caches(cache_path):
    program = kiln.load(cache_path)
    results = {}

    def sequence(first):
        program.state.reset()
        program.prefill(rows(first, 2))
        for n in range(2, 8):
            (sums,) = program.decode(rows(first + n, 1))
        results[first] = sums[0, 0]

    threads = [threading.Thread(target=sequence, args=(100.0 * (i + 1),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {100.0 * (i + 1): 8 * 100.0 * (i + 1) + 28 for i in range(4)}


def test_inspect_describes_states_and_relations(cache_path, run_kiln):
    described = kiln.inspect(cache_path, method="decode")
    done = run_kiln("inspect", str(cache_path), "--method", "decode", "--json")
    assert done.returncode == 0, done.stderr
    assert described == json.loads(done.stdout)
    assert described["states"] == [{"name": "cache", "dtype": "f64", "shape": [1, 8, 2], "axis": 1,
                                    "length_dim": "past"}]
    assert described["relations"] == ["past + seq <= 8"]
    assert described["feature_bits"] == [1]
