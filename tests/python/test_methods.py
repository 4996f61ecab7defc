"""Artifacts with several methods (format 1.3) from Python: program.methods, program.method,
program.NAME as a Program of its own (its signature, evidence, sessions), and kiln.inspect of a
method equal to `kiln inspect --method NAME --json`."""
import json
import os

import numpy as np
import pytest

import kiln
from conftest import SOURCE_ROOT

METHODS = os.path.join(SOURCE_ROOT, "tests", "golden-1.3", "methods.kiln")
W = np.array([[1, -1], [2, 0.5]], dtype=np.float32)
B = np.array([0.5, -0.5], dtype=np.float32)


def test_methods_are_programs_over_one_artifact():
    program = kiln.load(METHODS)
    assert list(program.methods) == ["prefill", "decode"]
    assert program.method == "prefill"
    assert program.methods["prefill"] is program
    decode = program.decode
    assert decode is program.methods["decode"]
    assert decode.method == "decode" and decode.methods is program.methods
    assert decode.name == program.name == "methods"
    assert [i.name for i in program.inputs] == ["x"] and [i.name for i in decode.inputs] == ["t"]
    assert [d.name for d in program.dims] == ["seq"] and decode.dims == []
    assert program.evidence == [] and decode.evidence == ["step"]
    assert "method 'decode'" in repr(decode)


def test_each_method_runs_its_own_graph():
    program = kiln.load(METHODS)
    x = np.array([[1, 2], [3, -1], [0, 1]], dtype=np.float32)
    (y,) = program.prefill(x)
    np.testing.assert_array_equal(y, x @ W + B)
    t = np.array([[2, -1]], dtype=np.float32)
    (z,) = program.decode(t)
    np.testing.assert_array_equal(z, np.maximum(t @ W, 0))
    assert list(program.decode.run(t=t)) == ["z"]
    # A method's contract is its own: decode takes one row only.
    with pytest.raises(kiln.ContractError, match="t"):
        program.decode(np.ones((2, 2), dtype=np.float32))
    with pytest.raises(kiln.ContractError, match="seq"):
        program.prefill(np.ones((9, 2), dtype=np.float32))


def test_a_method_outlives_the_program_it_came_from():
    decode = kiln.load(METHODS).decode
    (z,) = decode(np.array([[1, 1]], dtype=np.float32))
    np.testing.assert_array_equal(z, [[3, 0]])
    results = decode.replay_evidence()
    assert [case for case, _ in results] == ["step"]


def test_an_unknown_method_names_the_methods():
    program = kiln.load(METHODS)
    with pytest.raises(AttributeError, match="its methods: prefill, decode"):
        program.forward
    with pytest.raises(kiln.ArgumentError, match="did you mean 'decode'"):
        kiln.inspect(METHODS, method="decod")


def test_inspect_of_a_method_is_the_commands(run_kiln):
    done = run_kiln("inspect", "--json", "--method", "decode", METHODS)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    python = kiln.inspect(METHODS, method="decode")
    assert python == cli
    assert python["method"] == "decode" and python["methods"] == ["prefill", "decode"]
    assert [i["name"] for i in python["inputs"]] == ["t"]
    assert kiln.load(METHODS).decode.inspect() == cli
    assert kiln.load(METHODS).inspect()["method"] == "prefill"
