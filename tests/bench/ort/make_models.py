#!/usr/bin/env python3
"""make_models.py — write the ONNX models of the ONNX Runtime comparison.

Usage: PYTHON make_models.py OUT_DIR   (compare.sh runs it with $KILN_PYTHON)

Writes, with onnx.helper (opset 17), the models that
tests/bench/ort/compare.sh times in kiln and in ONNX Runtime; the same
networks as tests/bench/bench_fast.c:

  mlp.onnx        x [batch, 784]: Gemm 784-512, gelu, Gemm 512-512, gelu,
                  Gemm 512-10, Softmax (gelu written with Erf, as exporters
                  do before opset 20)
  encoder.onnx    x [batch, 64, 256]: one transformer encoder layer, d = 256,
                  4 heads, ff = 1024, post LayerNormalization, Erf gelu
  cnn.onnx        x [batch, 3, 32, 32]: Conv 3x3 16, Relu, MaxPool 2x2,
                  Conv 3x3 32, Relu, GlobalAveragePool, Flatten, Gemm 32-10
  matmul1024.onnx a, b [1024, 1024]: MatMul

Weights are random (fixed seed); only latency is compared.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
rng = np.random.default_rng(20261129)


class Graph:
    """Nodes and initializers of one model, with fresh value names."""

    def __init__(self):
        self.nodes, self.initializers, self.count = [], [], 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def weight(self, prefix, shape, scale):
        name = self.name(prefix)
        values = (rng.uniform(-1.0, 1.0, size=shape) * scale).astype(np.float32)
        self.initializers.append(numpy_helper.from_array(values, name))
        return name

    def constant(self, prefix, values, dtype=np.float32):
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, **attributes):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attributes))
        return out

    def gelu(self, x):
        # 0.5 * x * (1 + erf(x / sqrt(2)))
        scaled = self.op("Div", [x, self.constant("sqrt2", math.sqrt(2.0))])
        shifted = self.op("Add", [self.op("Erf", [scaled]), self.constant("one", 1.0)])
        return self.op("Mul", [self.op("Mul", [x, shifted]), self.constant("half", 0.5)])

    def dense(self, x, n_in, n_out):
        w = self.weight("w", (n_in, n_out), 1.0 / math.sqrt(n_in))
        b = self.weight("b", (n_out,), 0.1)
        return self.op("Gemm", [x, w, b])

    def linear(self, x, n_in, n_out):
        w = self.weight("w", (n_in, n_out), 1.0 / math.sqrt(n_in))
        b = self.weight("b", (n_out,), 0.1)
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def save(self, path, name, inputs, output, output_shape):
        graph = helper.make_graph(
            self.nodes, name, inputs,
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, output_shape)],
            self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="kiln tests/bench/ort")
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, path)


def mlp(path):
    g = Graph()
    y = g.gelu(g.dense("x", 784, 512))
    y = g.gelu(g.dense(y, 512, 512))
    y = g.op("Softmax", [g.dense(y, 512, 10)], axis=-1)
    g.save(path, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 784])], y,
           ["batch", 10])


def encoder(path, d=256, heads=4, ff=1024, sequence=64):
    g = Graph()
    head = d // heads
    split = g.constant("split", [0, 0, heads, head], np.int64)

    def projected(perm):
        return g.op("Transpose", [g.op("Reshape", [g.linear("x", d, d), split])], perm=perm)

    q, k, v = projected([0, 2, 1, 3]), projected([0, 2, 3, 1]), projected([0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]), g.constant("scale", 1.0 / math.sqrt(head))])
    y = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    y = g.op("Reshape", [g.op("Transpose", [y], perm=[0, 2, 1, 3]), g.constant("merge", [0, 0, d], np.int64)])

    def add_and_norm(residual, x):
        scale, bias = g.weight("gamma", (d,), 1.0), g.weight("beta", (d,), 0.1)
        return g.op("LayerNormalization", [g.op("Add", [residual, x]), scale, bias], axis=-1, epsilon=1e-5)

    attended = add_and_norm("x", g.linear(y, d, d))
    y = add_and_norm(attended, g.linear(g.gelu(g.linear(attended, d, ff)), ff, d))
    g.save(path, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", sequence, d])], y,
           ["batch", sequence, d])


def cnn(path):
    g = Graph()

    def conv3x3_relu(x, n_in, n_out):
        w = g.weight("w", (n_out, n_in, 3, 3), 1.0 / math.sqrt(9 * n_in))
        b = g.weight("b", (n_out,), 0.1)
        return g.op("Relu", [g.op("Conv", [x, w, b], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])

    y = conv3x3_relu("x", 3, 16)
    y = g.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = conv3x3_relu(y, 16, 32)
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    y = g.dense(y, 32, 10)
    g.save(path, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])], y,
           ["batch", 10])


def matmul(path, n=1024):
    g = Graph()
    y = g.op("MatMul", ["a", "b"])
    g.save(path, "matmul", [helper.make_tensor_value_info(name, TensorProto.FLOAT, [n, n]) for name in "ab"], y,
           [n, n])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("mlp", mlp), ("encoder", encoder), ("cnn", cnn), ("matmul1024", matmul)):
        make(os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
