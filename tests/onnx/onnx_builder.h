/*
 * onnx_builder.h — hand-built ONNX models for the importer's tests and the
 * fuzz seeds: protobuf-c messages allocated from one arena, packed into
 * the bytes an ONNX file holds.
 */
#ifndef KILN_TESTS_ONNX_BUILDER_H
#define KILN_TESTS_ONNX_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"

/* Every message made below lives until onnx_arena_release. */
void onnx_arena_release(void);

/*
 * A tensor value description: dims are "3" (a size), "batch" (a
 * dim_param) or "?" (neither); NULL dims: no shape at all.
 */
Onnx__ValueInfoProto *onnx_value(const char *name, int32_t elem_type, size_t rank, const char *const *dims);

Onnx__AttributeProto *onnx_attr_int(const char *name, int64_t value);
Onnx__AttributeProto *onnx_attr_float(const char *name, float value);
Onnx__AttributeProto *onnx_attr_ints(const char *name, size_t count, const int64_t *values);
Onnx__AttributeProto *onnx_attr_string(const char *name, const char *value);

/* A node; inputs and outputs are NULL-terminated lists; attributes too. */
Onnx__NodeProto *onnx_node(const char *op, const char *name, const char *const *inputs,
                           const char *const *outputs, Onnx__AttributeProto *const *attributes);

/* An f32 tensor with its data in raw_data (raw = 1) or float_data. */
Onnx__TensorProto *onnx_tensor_f32(const char *name, size_t rank, const int64_t *dims, const float *data, int raw);

/* An i64 tensor in int64_data. */
Onnx__TensorProto *onnx_tensor_i64(const char *name, size_t rank, const int64_t *dims, const int64_t *data);

/* A model of IR version `ir_version` importing the default domain at `opset`; lists NULL-terminated. */
Onnx__ModelProto *onnx_model(int64_t ir_version, int64_t opset, Onnx__NodeProto *const *nodes,
                             Onnx__ValueInfoProto *const *inputs, Onnx__ValueInfoProto *const *outputs,
                             Onnx__TensorProto *const *initializers);

/*
 * x: f32[batch, 4], s0 = Shape(x), then s_i = Add(s_{i-1}, one) for i = 1..adds
 * (one: an i64 [1] initializer), the graph output s_adds (i64, [batch + adds,
 * 4 + adds]): a chain of symbolic sizes the importer folds node by node and
 * translates back into ops because the output needs them as data. With
 * 10,000 adds (about 330 KB) it once overflowed the stack of the recursive
 * translation (tests/fuzz/crashers/onnx-deep-symbolic-chain, written by
 * gen_onnx_model deep-chain).
 */
Onnx__ModelProto *onnx_deep_symbolic_chain(uint32_t adds);

/*
 * The bytes of a model whose graph is one If node (input c, output y) whose
 * then_branch is a graph holding one such If, `levels` Ifs deep in all: the
 * innermost graph is then 2 + 3 * levels messages deep (model, then graph,
 * node, attribute per level). Written directly, back to front, because
 * protobuf-c's pack recurses once per level just as its unpack does. With
 * 3000 levels (about 114 KB) the unpack overflowed the stack of the importer
 * (tests/fuzz/crashers/onnx-nested-if-3000, written by gen_onnx_model
 * nested-if). Arena memory.
 */
uint8_t *onnx_nested_if_bytes(uint32_t levels, size_t *size);

/* The serialized bytes of `model` (arena memory). */
uint8_t *onnx_pack(const Onnx__ModelProto *model, size_t *size);

#endif
