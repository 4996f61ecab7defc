"""MatMul over a Transpose that swaps the last two axes (a tied output projection x @ E^T,
attention's q @ k^T) is imported as an einsum reading the operand in place (onnx/mappings/
onnx_map_matmul.c, spec/onnx-import.md §4): the results equal NumPy's, the transpose never runs
(kiln bench --profile lists it under no path), and the MatMuls the rewrite does not cover (another
permutation, batch axes that broadcast) stay matmuls and are just as right."""
import json

import pytest

from conftest import numpy

import kiln

onnx = pytest.importorskip("onnx")


def model(a_shape, w_shape, perm):
    from onnx import TensorProto, helper
    transpose = helper.make_node("Transpose", ["w"], ["wt"], **({"perm": perm} if perm is not None else {}))
    graph = helper.make_graph(
        [transpose, helper.make_node("MatMul", ["a", "wt"], ["y"])], "mm",
        [helper.make_tensor_value_info("a", TensorProto.DOUBLE, a_shape),
         helper.make_tensor_value_info("w", TensorProto.DOUBLE, w_shape)],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


CASES = [
    # (A, W, perm, the op kiln runs)
    ([2, 3, 4], [5, 4], None, "einsum"),            # weight-like: x @ E^T
    ([3, 4], [5, 4], [1, 0], "einsum"),
    ([1, 2, 3, 4], [1, 2, 6, 4], [0, 1, 3, 2], "einsum"),  # q @ k^T
    ([1, 2, 3, 4], [2, 1, 4, 6], [1, 0, 2, 3], "matmul"),  # not a swap of the last two
    ([2, 1, 3, 4], [1, 2, 6, 4], [0, 1, 3, 2], "matmul"),  # batch axes that broadcast
]


@pytest.mark.parametrize("a_shape, w_shape, perm, op", CASES)
def test_matmul_over_a_transpose(tmp_path, run_kiln, a_shape, w_shape, perm, op):
    path = tmp_path / "mm.onnx"
    onnx.save(model(a_shape, w_shape, perm), str(path))
    out = tmp_path / "mm.kiln"
    done = run_kiln("import-onnx", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    rng = numpy.random.default_rng(0)
    a, w = rng.standard_normal(a_shape), rng.standard_normal(w_shape)
    order = perm if perm is not None else list(reversed(range(len(w_shape))))
    (y,) = kiln.load(out)(a, w)
    numpy.testing.assert_allclose(y, a @ numpy.transpose(w, order), rtol=1e-12, atol=1e-12)
    ops = {entry["name"] for entry in kiln.load(out).inspect()["ops"]}
    assert op in ops and ({"einsum", "matmul"} - {op}).isdisjoint(ops)
    if op == "einsum":
        # The transpose is dead: a profiled run never runs it.
        done = run_kiln("bench", str(out), "--runs", "2", "--warmup", "0", "--profile", "--json")
        assert done.returncode == 0, done.stderr
        profile = json.loads(done.stdout)["profile"]
        assert [node["op"] for node in profile["nodes"]] == ["einsum"] and profile["nodes_not_run"] == 1
