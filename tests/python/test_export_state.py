"""Caches imported as state (spec/python-export.md "Caches as state", spec/onnx-import.md §7): the
tiny decoder of test_export_methods sealed with its keys and values as kiln states that prefill
starts and decode extends in place — decode takes the token alone, a greedy loop matches eager
PyTorch passing the cache, the context bound is a declared relation that refuses the step that
would overflow, and bad state options are refused naming what is wrong. Then the same from the
command line: `kiln import-onnx --state` over a hand-made ONNX decode step, and its refusals."""
import pytest

from conftest import numpy, torch
from test_export_methods import D, Decode, Prefill, TinyDecoder

import kiln

Dim = pytest.importorskip("torch.export").Dim
onnx = pytest.importorskip("onnx")

CONTEXT = 12


def export_with_state(decoder, context=CONTEXT, prefill_evidence="corners", **decode_options):
    seq, past = Dim("seq", min=1, max=8), Dim("past", min=1, max=context - 1)
    ids = torch.tensor([[3, 1, 4, 1]])
    cache = torch.zeros(1, 4, D)
    decode = {"program": Decode(decoder), "args": (ids[:, :1], cache, cache),
              "dynamic_shapes": {"ids": None, "past_k": {1: past}, "past_v": {1: past}},
              "output_names": ["logits", "k", "v"], "state": {"k": "past_k", "v": "past_v"}}
    decode.update(decode_options)
    return kiln.export_methods({
        "prefill": {"program": Prefill(decoder), "args": (ids,), "dynamic_shapes": {"ids": {1: seq}},
                    "output_names": ["logits", "k", "v"], "state": {"k": None, "v": None},
                    "evidence": prefill_evidence},
        "decode": decode,
    }, name="tiny", context=context)


@pytest.fixture(scope="module")
def sealed():
    decoder = TinyDecoder()
    artifact = export_with_state(decoder)
    return decoder, artifact, artifact.load()


def test_the_caches_are_states_not_inputs(sealed):
    _, artifact, program = sealed
    assert program.state_names == ["k", "v"]
    assert [i.name for i in program.decode.inputs] == ["ids"]
    assert [o.name for o in program.decode.outputs] == ["logits"]
    assert [o.name for o in program.outputs] == ["logits"]
    described = program.inspect()
    states = {s["name"]: s for s in described["states"]}
    assert states["k"]["shape"] == [1, CONTEXT, D] and states["k"]["axis"] == 1
    assert states["k"]["length_dim"] == "past"
    assert described["relations"] == ["seq + past <= %d" % CONTEXT]
    assert program.decode.inspect()["relations"] == ["past + 1 <= %d" % CONTEXT]
    # q @ k^T and the probabilities @ v both read the cached rows: einsums, which read them where the
    # state keeps them (spec/onnx-import.md §4), not matmuls over a packed copy.
    ops = {op["name"]: op["nodes"] for op in program.decode.inspect()["ops"]}
    assert ops["einsum"] == 2 and ops["state_append"] == 2
    # Prefill's evidence replays from an empty state; decode's starts from the example's cache, which
    # the case gives as state:k and state:v (spec/format.md §7.8.3).
    cases = {(case["method"], case["name"]): case for case in artifact.evidence}
    assert {("prefill", "example"), ("decode", "example")} <= set(cases)
    for case in cases.values():
        assert case["sealed"] and all(r["passed"] for r in case["results"]), case
    for method in (program, program.decode):
        replayed = method.replay_evidence()
        assert replayed and all(r["passed"] for _, results in replayed for r in results)


def test_greedy_decoding_over_the_state_matches_eager(sealed):
    decoder, _, program = sealed
    state = program.new_state()
    prefill, decode = program.session(state=state), program.decode.session(state=state)
    ids = numpy.array([[5, 9, 2]], dtype=numpy.int64)
    logits = prefill.run(ids=ids)["logits"]
    with torch.no_grad():
        want, want_k, want_v = Prefill(decoder)(torch.from_numpy(ids))
    numpy.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)
    tokens, eager_tokens = [], []
    token, eager_token = int(logits[0, -1].argmax()), int(want[0, -1].argmax())
    for step in range(CONTEXT - 3):
        tokens.append(token)
        eager_tokens.append(eager_token)
        logits = decode.run(ids=numpy.array([[token]], dtype=numpy.int64))["logits"]
        with torch.no_grad():
            want, want_k, want_v = Decode(decoder)(torch.tensor([[eager_token]]), want_k, want_v)
        numpy.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)
        assert state.length("k") == state.length("v") == 3 + step + 1
        token, eager_token = int(logits[0, -1].argmax()), int(want[0, -1].argmax())
    assert tokens == eager_tokens
    # The state holds exactly the cache eager PyTorch passed along.
    numpy.testing.assert_allclose(state.read("k"), want_k.numpy(), rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(state.read("v"), want_v.numpy(), rtol=1e-5, atol=1e-5)
    # Full: the next step is refused naming the dim and the bound, and changes nothing.
    with pytest.raises(kiln.ContractError, match=r"past.*%d|%d.*past" % (CONTEXT - 1, CONTEXT - 1)):
        decode.run(ids=numpy.array([[token]], dtype=numpy.int64))
    assert state.length("k") == CONTEXT
    # A prefill is for an empty state: reset starts a new sequence.
    with pytest.raises(kiln.ContractError, match="past"):
        prefill.run(ids=ids)
    state.reset()
    numpy.testing.assert_array_equal(prefill.run(ids=ids)["logits"], program.prefill(ids)[0])


def test_a_prompt_longer_than_the_context_is_refused():
    decoder = TinyDecoder()
    program = export_with_state(decoder, context=6, prefill_evidence="example").load()
    with pytest.raises(kiln.ContractError, match=r"relation seq \+ past <= 6 does not hold: seq = 7, past = 0"):
        program.prefill(numpy.arange(7, dtype=numpy.int64)[None] % 8)


def test_bad_state_options_are_refused():
    decoder = TinyDecoder()
    with pytest.raises(kiln.ArgumentError, match="names output 'keys', which is not one"):
        export_with_state(decoder, state={"keys": "past_k"})
    with pytest.raises(kiln.ArgumentError, match="names input 'cache', which is not one"):
        export_with_state(decoder, state={"k": "cache"})
    with pytest.raises(kiln.ArgumentError, match="must be a dict"):
        export_with_state(decoder, state=["k"])
    seq = Dim("seq", min=1, max=8)
    with pytest.raises(kiln.ArgumentError, match="needs context=N"):
        kiln.export_methods({"prefill": {"program": Prefill(decoder), "args": (torch.tensor([[1, 2]]),),
                                         "dynamic_shapes": {"ids": {1: seq}}, "output_names": ["logits", "k", "v"],
                                         "state": {"k": None}}})


# ---------------------------------------------------------------- the command line

def decode_step_model(reverse=False, batch="1"):
    """One decode step by hand: t [batch, 1, 2] doubled and appended to the cache past [batch, past, 2]
    along axis 1 (reverse: put before it); out = the sum of every row."""
    from onnx import TensorProto, helper
    batch_dim = int(batch) if batch.isdigit() else batch
    nodes = [helper.make_node("Add", ["t", "t"], ["doubled"]),
             helper.make_node("Concat", ["doubled", "past"] if reverse else ["past", "doubled"], ["present"], axis=1),
             helper.make_node("ReduceSum", ["present", "axes"], ["out"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "step",
        [helper.make_tensor_value_info("t", TensorProto.DOUBLE, [batch_dim, 1, 2]),
         helper.make_tensor_value_info("past", TensorProto.DOUBLE, [batch_dim, "past", 2])],
        [helper.make_tensor_value_info("out", TensorProto.DOUBLE, None),
         helper.make_tensor_value_info("present", TensorProto.DOUBLE, None)],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def test_import_onnx_state_extends_the_cache_in_place(tmp_path, run_kiln):
    model = tmp_path / "step.onnx"
    onnx.save(decode_step_model(), str(model))
    out = tmp_path / "step.kiln"
    done = run_kiln("import-onnx", str(model), "-o", str(out), "--dim", "past=0..3", "--state", "past=present",
                    "--state-capacity", "4")
    assert done.returncode == 0, done.stderr
    assert "1 input, 1 output" in done.stdout
    program = kiln.load(out)
    assert [i.name for i in program.inputs] == ["t"] and program.state_names == ["present"]
    rows = [numpy.array([[[i, 10 * i]]], dtype=numpy.float64) for i in range(1, 5)]
    for n, row in enumerate(rows, 1):
        (total,) = program(row)
        numpy.testing.assert_array_equal(total, [[2 * sum(range(1, n + 1)), 20 * sum(range(1, n + 1))]])
    numpy.testing.assert_array_equal(program.state.read("present"), 2 * numpy.concatenate(rows, axis=1))
    with pytest.raises(kiln.ContractError, match="past"):
        program(rows[0])
    shown = run_kiln("inspect", str(out))
    assert "past + 1 <= 4" in shown.stdout and "present" in shown.stdout


@pytest.mark.parametrize("args, model_options, message", [
    (["--state", "past=gone", "--state-capacity", "4"], {}, "state output 'gone' is not a graph output; the "
                                                             "model's outputs are 'out', 'present'"),
    (["--state", "cache=present", "--state-capacity", "4"], {}, "state input 'cache' is not a graph input"),
    (["--state", "past=present"], {}, "needs its capacity in rows"),
    (["--state-capacity", "4"], {}, "give --state too"),
    (["--state", "past=present", "--state-capacity", "0"], {}, "--state-capacity takes a whole number"),
    (["--state", "=present", "--state-capacity", "4"], {}, "--state takes INPUT=OUTPUT or OUTPUT"),
    (["--state", "past=present", "--state-capacity", "4"], {"reverse": True},
     "output 'present' is not input 'past' extended by one Concat along axis 1"),
    (["--state", "past=present", "--state-capacity", "4", "--dim", "batch=1..2"], {"batch": "batch"},
     "input 'past' axis 0 \\(batch\\) must be a fixed size"),
    (["--state", "t=present", "--state-capacity", "4"], {},
     "input 't' axis 1, the axis the cache grows along, must be a size --dim declares"),
])
def test_import_onnx_state_refusals(tmp_path, run_kiln, args, model_options, message):
    import re
    model = tmp_path / "step.onnx"
    onnx.save(decode_step_model(**model_options), str(model))
    done = run_kiln("import-onnx", str(model), "-o", str(tmp_path / "x.kiln"), "--dim", "past=0..3", *args)
    assert done.returncode != 0
    assert re.search(message, done.stderr), done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.kiln").exists()
