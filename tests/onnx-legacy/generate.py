#!/usr/bin/python3
"""Write ONNX test cases at default-domain opsets below 7 (issue #17 pattern 7),
and Upsample-7, whose scales are an attribute.

Not run by CI: it needs numpy, torch and onnx (Debian 12: python3-numpy,
python3-torch, python3-onnx). Each case is one node of an op at an opset
where ONNX defines an older version of it, in the backend-test layout kiln
onnx-test reads:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_0/input_K.pb, output_K.pb

Expected outputs follow each old version's definition (onnx/defs *_old.cc
and docs/Changelog.md), computed with numpy (torch.nn.functional for
convolution, pooling and LRN). Cases whose construct kiln cannot express
(training-mode BatchNormalization and Dropout, PRelu's pre-7 slope,
Upsample-1) are written too: the count over the whole set says how many
import, and tests/onnx/onnx_legacy.sh checks the exact summary.

    python3 tests/onnx-legacy/generate.py tests/onnx-legacy
"""
import argparse
import os
import shutil

import numpy as np
import onnx
import onnx.helper as h
import onnx.numpy_helper
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20261202)
CASES = []


def case(name, opset, op, inputs, outputs, attributes=None, initializers=()):
    """inputs: list of (name, array); outputs: list of (name, array). Initializers are (name, array)."""
    CASES.append((name, opset, op, inputs, outputs, attributes or {}, initializers))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def write(out_dir, name, opset, op, inputs, outputs, attributes, initializers):
    node_inputs = [n for n, _ in inputs] + [n for n, _ in initializers]
    node = h.make_node(op, node_inputs, [n for n, _ in outputs], **attributes)
    graph_inputs = [h.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
                    for n, a in inputs]
    graph_outputs = [h.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
                     for n, a in outputs]
    inits = [onnx.numpy_helper.from_array(a, n) for n, a in initializers]
    graph = h.make_graph([node], name, graph_inputs, graph_outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=3)
    case_dir = os.path.join(out_dir, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        t = onnx.numpy_helper.from_array(np.array(a, order="C"), n)
        open(os.path.join(case_dir, "test_data_set_0", "input_%d.pb" % k), "wb").write(t.SerializeToString())
    for k, (n, a) in enumerate(outputs):
        t = onnx.numpy_helper.from_array(np.array(a, order="C"), n)
        open(os.path.join(case_dir, "test_data_set_0", "output_%d.pb" % k), "wb").write(t.SerializeToString())


def legacy_align(a, b, broadcast, axis):
    """B aligned to A as the pre-7 broadcast attribute says (axis: B's first axis sits at axis of A)."""
    if not broadcast:
        return b
    if axis is None:
        return b
    return b.reshape(b.shape + (1,) * (a.ndim - axis - b.ndim))


def elementwise():
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
    for opset in (1, 6):
        for op, fn in ops.items():
            a, b = f32(2, 3, 4, 5), f32(3, 4)
            b_div = np.abs(b) + 0.5
            bb = b_div if op == "Div" else b
            attrs = {"broadcast": 1, "axis": 1}
            if opset == 1:
                attrs["consumed_inputs"] = [0, 0]
            case("%s_bcast_axis_opset%d" % (op.lower(), opset), opset, op, [("a", a), ("b", bb)],
                 [("y", fn(a, legacy_align(a, bb, 1, 1)).astype(np.float32))], attrs)
        a, b = f32(2, 3, 4, 5), f32(5)
        case("add_bcast_suffix_opset%d" % opset, opset, "Add", [("a", a), ("b", b)], [("y", a + b)], {"broadcast": 1})
        a, b = f32(3, 4), f32(3, 4)
        case("mul_same_shape_opset%d" % opset, opset, "Mul", [("a", a), ("b", b)], [("y", a * b)])
        a, b = f32(2, 3), np.array(2.5, dtype=np.float32)
        case("sub_bcast_scalar_opset%d" % opset, opset, "Sub", [("a", a), ("b", b)], [("y", a - b)], {"broadcast": 1})
        a, b = f32(2, 3), f32(2)
        case("div_bcast_axis0_opset%d" % opset, opset, "Div", [("a", a), ("b", np.abs(b) + 1)],
             [("y", a / (np.abs(b) + 1)[:, None])], {"broadcast": 1, "axis": 0})
    a, b = np.abs(f32(2, 3, 4)) + 0.5, f32(3)
    case("pow_bcast_axis_opset1", 1, "Pow", [("x", a), ("y", b)], [("z", np.power(a, b[:, None]).astype(np.float32))],
         {"broadcast": 1, "axis": 1})
    for op, fn in {"Equal": np.equal, "Less": np.less, "Greater": np.greater}.items():
        a = rng.integers(-2, 3, (2, 3, 4)).astype(np.int32)
        b = rng.integers(-2, 3, (3,)).astype(np.int32)
        case("%s_bcast_axis_opset1" % op.lower(), 1, op, [("a", a), ("b", b)], [("y", fn(a, b[:, None]))],
             {"broadcast": 1, "axis": 1})
    for op, fn in {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}.items():
        a = rng.integers(0, 2, (2, 3, 4)).astype(bool)
        b = rng.integers(0, 2, (4,)).astype(bool)
        case("%s_bcast_suffix_opset1" % op.lower(), 1, op, [("a", a), ("b", b)], [("y", fn(a, b))], {"broadcast": 1})
    for op, fn in {"Sum": lambda *x: sum(x), "Max": lambda *x: np.maximum.reduce(x), "Min": lambda *x: np.minimum.reduce(x),
                   "Mean": lambda *x: sum(x) / len(x)}.items():
        xs = [f32(2, 3) for _ in range(3)]
        case("%s_opset1" % op.lower(), 1, op, [("x%d" % i, x) for i, x in enumerate(xs)],
             [("y", fn(*xs).astype(np.float32))], {"consumed_inputs": [0, 0, 0]})
        case("%s_opset6" % op.lower(), 6, op, [("x%d" % i, x) for i, x in enumerate(xs)],
             [("y", fn(*xs).astype(np.float32))])
    x = f32(3, 4)
    case("clip_opset1", 1, "Clip", [("x", x)], [("y", np.clip(x, -0.5, 0.5))],
         {"min": -0.5, "max": 0.5, "consumed_inputs": [0]})
    case("clip_opset6", 6, "Clip", [("x", x)], [("y", np.clip(x, -0.5, 0.5))], {"min": -0.5, "max": 0.5})
    x, slope = f32(2, 3, 4), np.array([0.1, 0.2, 0.3], dtype=np.float32)
    case("prelu_opset6", 6, "PRelu", [("x", x), ("slope", slope)],
         [("y", np.where(x < 0, x * slope[:, None], x).astype(np.float32))])


def nn():
    x = f32(1, 2, 5, 5)
    w = f32(3, 2, 3, 3)
    b = f32(3)
    y = F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=1).numpy()
    case("conv_opset1", 1, "Conv", [("x", x), ("w", w), ("b", b)], [("y", y)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    wt = f32(2, 3, 2, 2)
    y = F.conv_transpose2d(torch.tensor(x), torch.tensor(wt), stride=2).numpy()
    case("conv_transpose_opset1", 1, "ConvTranspose", [("x", x), ("w", wt)], [("y", y)],
         {"kernel_shape": [2, 2], "strides": [2, 2]})
    y = F.max_pool2d(torch.tensor(x), 2, 1).numpy()
    case("max_pool_opset1", 1, "MaxPool", [("x", x)], [("y", y)], {"kernel_shape": [2, 2]})
    y = F.avg_pool2d(torch.tensor(x), 3, 2, padding=1, count_include_pad=False).numpy()
    case("average_pool_opset1", 1, "AveragePool", [("x", x)], [("y", y)],
         {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    y = F.local_response_norm(torch.tensor(x), 3, alpha=1e-2, beta=0.75, k=1.0).numpy()
    case("lrn_opset1", 1, "LRN", [("x", x)], [("y", y)], {"size": 3, "alpha": 1e-2, "beta": 0.75, "bias": 1.0})
    case("global_average_pool_opset1", 1, "GlobalAveragePool", [("x", x)], [("y", x.mean((2, 3), keepdims=True))])
    case("global_lp_pool_opset1", 1, "GlobalLpPool", [("x", x)],
         [("y", np.sqrt((x * x).sum((2, 3), keepdims=True)).astype(np.float32))], {"p": 2.0})
    y = F.lp_pool2d(torch.tensor(x), 2.0, 2).numpy()
    case("lp_pool_opset1", 1, "LpPool", [("x", x)], [("y", y)], {"kernel_shape": [2, 2], "strides": [2, 2], "p": 2.0})
    a, b, c = f32(3, 4), f32(4, 5), f32(5)
    case("gemm_bcast_opset6", 6, "Gemm", [("a", a), ("b", b), ("c", c)],
         [("y", (0.5 * a @ b + 2.0 * c).astype(np.float32))], {"alpha": 0.5, "beta": 2.0, "broadcast": 1})
    c2 = f32(3, 5)
    case("gemm_opset1", 1, "Gemm", [("a", a.T.copy()), ("b", b), ("c", c2)], [("y", (a @ b + c2).astype(np.float32))],
         {"transA": 1})
    case("matmul_opset1", 1, "MatMul", [("a", a), ("b", b)], [("y", a @ b)])
    x = f32(2, 3, 4, 5)
    scale, bias, mean, var = f32(3), f32(3), f32(3), np.abs(f32(3)) + 0.5
    y = ((x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5) * scale[:, None, None]
         + bias[:, None, None]).astype(np.float32)
    operands = [("x", x), ("scale", scale), ("bias", bias), ("mean", mean), ("var", var)]
    case("batch_norm_test_opset6", 6, "BatchNormalization", operands, [("y", y)], {"is_test": 1})
    case("batch_norm_test_opset1", 1, "BatchNormalization", operands, [("y", y)],
         {"is_test": 1, "consumed_inputs": [0, 0, 0, 1, 1]})
    case("batch_norm_training_opset6", 6, "BatchNormalization", operands, [("y", y)])
    x = f32(3, 4)
    case("dropout_test_opset6", 6, "Dropout", [("x", x)], [("y", x)], {"is_test": 1, "ratio": 0.3})
    case("dropout_test_opset1", 1, "Dropout", [("x", x)], [("y", x)], {"is_test": 1})
    case("dropout_training_opset6", 6, "Dropout", [("x", x)], [("y", x)])
    x = f32(1, 1, 2, 2)
    case("upsample_opset1", 1, "Upsample", [("x", x)], [("y", x.repeat(2, 2).repeat(2, 3))],
         {"height_scale": 2.0, "width_scale": 2.0})
    x = f32(1, 1, 2, 3)
    case("upsample_scales_opset7", 7, "Upsample", [("x", x)], [("y", x.repeat(2, 2).repeat(3, 3))],
         {"scales": [1.0, 1.0, 2.0, 3.0], "mode": "nearest"})


def softmax(x, axis, fn):
    shape = x.shape
    flat = x.reshape(int(np.prod(shape[:axis])), -1)
    if fn == "hardmax":
        out = np.zeros_like(flat)
        out[np.arange(flat.shape[0]), flat.argmax(1)] = 1
    else:
        e = np.exp(flat - flat.max(1, keepdims=True))
        out = e / e.sum(1, keepdims=True)
        if fn == "log":
            out = np.log(out)
    return out.reshape(shape).astype(np.float32)


def layout():
    x = f32(2, 3, 4)
    case("softmax_opset1", 1, "Softmax", [("x", x)], [("y", softmax(x, 1, "soft"))])
    case("log_softmax_opset1", 1, "LogSoftmax", [("x", x)], [("y", softmax(x, 2, "log"))], {"axis": 2})
    case("hardmax_opset1", 1, "Hardmax", [("x", x)], [("y", softmax(x, 1, "hardmax"))])
    case("transpose_opset1", 1, "Transpose", [("x", x)], [("y", x.transpose(2, 0, 1))], {"perm": [2, 0, 1]})
    case("flatten_opset1", 1, "Flatten", [("x", x)], [("y", x.reshape(2, 12))])
    case("reduce_sum_opset1", 1, "ReduceSum", [("x", x)], [("y", x.sum(1, keepdims=True))], {"axes": [1]})
    case("reduce_mean_opset1", 1, "ReduceMean", [("x", x)], [("y", x.mean((0, 2)))], {"axes": [0, 2], "keepdims": 0})
    case("reduce_max_opset1", 1, "ReduceMax", [("x", x)], [("y", x.max(keepdims=True))])
    case("argmax_opset1", 1, "ArgMax", [("x", x)], [("y", x.argmax(1)[:, None, :].astype(np.int64))], {"axis": 1})
    case("argmin_opset1", 1, "ArgMin", [("x", x)], [("y", x.argmin(2).astype(np.int64))], {"axis": 2, "keepdims": 0})
    idx = np.array([[0, 2], [1, 1]], dtype=np.int64)
    case("gather_opset1", 1, "Gather", [("x", x), ("i", idx)], [("y", np.take(x, idx, 1))], {"axis": 1})
    x1 = f32(2, 1, 4)
    case("squeeze_opset1", 1, "Squeeze", [("x", x1)], [("y", x1.reshape(2, 4))], {"axes": [1]})
    case("unsqueeze_opset1", 1, "Unsqueeze", [("x", x)], [("y", x.reshape(2, 1, 3, 4))], {"axes": [1]})
    case("shape_opset1", 1, "Shape", [("x", x)], [("y", np.array(x.shape, dtype=np.int64))])
    case("size_opset1", 1, "Size", [("x", x)], [("y", np.array(x.size, dtype=np.int64))])
    case("slice_opset1", 1, "Slice", [("x", x)], [("y", x[:, 1:3, 0:-1])], {"starts": [1, 0], "ends": [3, -1], "axes": [1, 2]})
    x4 = f32(1, 8, 2, 3)
    d2s = x4.reshape(1, 2, 2, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 6)
    case("depth_to_space_opset1", 1, "DepthToSpace", [("x", x4)], [("y", d2s)], {"blocksize": 2})
    x5 = f32(1, 2, 4, 6)
    s2d = x5.reshape(1, 2, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3)
    case("space_to_depth_opset1", 1, "SpaceToDepth", [("x", x5)], [("y", s2d)], {"blocksize": 2})
    norm = (x / np.sqrt((x * x).sum(-1, keepdims=True))).astype(np.float32)
    case("lp_normalization_opset1", 1, "LpNormalization", [("x", x)], [("y", norm)])
    a, b = f32(2, 3), f32(2, 2)
    case("concat_default_axis_opset1", 1, "Concat", [("a", a), ("b", b)], [("y", np.concatenate([a, b], 1))])
    c = f32(1, 3)
    case("concat_axis0_opset4", 4, "Concat", [("a", a), ("c", c)], [("y", np.concatenate([a, c], 0))], {"axis": 0})
    case("reshape_attribute_opset1", 1, "Reshape", [("x", x)], [("y", x.reshape(4, 6))],
         {"shape": [4, -1], "consumed_inputs": [0]})
    case("reshape_input_opset5", 5, "Reshape", [("x", x)], [("y", x.reshape(6, 4))],
         initializers=[("shape", np.array([6, 0 * 0 - 1], dtype=np.int64))])
    x2 = f32(2, 3)
    case("pad_paddings_opset1", 1, "Pad", [("x", x2)], [("y", np.pad(x2, ((0, 1), (2, 0)), constant_values=1.5))],
         {"paddings": [0, 2, 1, 0], "value": 1.5})
    case("pad_reflect_opset2", 2, "Pad", [("x", x2)], [("y", np.pad(x2, ((1, 1), (2, 1)), mode="reflect"))],
         {"pads": [1, 2, 1, 1], "mode": "reflect"})
    x6 = f32(2, 6)
    case("split_input_opset1", 1, "Split", [("x", x6)], [("y0", x6[:, :2]), ("y1", x6[:, 2:])], {"axis": 1},
         initializers=[("split", np.array([2, 4], dtype=np.int64))])
    case("split_attribute_opset2", 2, "Split", [("x", x6)], [("y0", x6[:, :1]), ("y1", x6[:, 1:])],
         {"axis": 1, "split": [1, 5]})
    case("split_equal_opset1", 1, "Split", [("x", x6)], [("y0", x6[:, :3]), ("y1", x6[:, 3:])], {"axis": 1})
    case("tile_opset1", 1, "Tile", [("x", x2)], [("y", np.tile(x2, (1, 3)))],
         initializers=[("tiles", np.array(3, dtype=np.int64)), ("axis", np.array(1, dtype=np.int64))])
    case("tile_opset6", 6, "Tile", [("x", x2)], [("y", np.tile(x2, (2, 1)))],
         initializers=[("repeats", np.array([2, 1], dtype=np.int64))])
    case("cast_string_to_opset1", 1, "Cast", [("x", x2)], [("y", x2.astype(np.float64))], {"to": "DOUBLE"})
    case("cast_opset6", 6, "Cast", [("x", x2 * 10)], [("y", (x2 * 10).astype(np.int32))], {"to": onnx.TensorProto.INT32})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    args = parser.parse_args()
    elementwise()
    nn()
    layout()
    for c in CASES:
        write(args.out_dir, *c)
    print("%d cases" % len(CASES))


if __name__ == "__main__":
    main()
