/*
 * onnx_node.h — the services a mapping uses to translate one ONNX node
 * (implemented by the importer in onnx_node.c). A mapping sees the node
 * through these calls only: its operands as kiln values, operands that must
 * be constant (shapes, axes, pads) folded from initializers and Constant
 * nodes, symbolic operands as size texts, its attributes, and the static
 * type of any value. A construct kiln cannot express is reported with
 * onnx_node_unsupported, which names it and lets the import go on so that
 * one report lists every such construct.
 *
 * This header is what keeps the mappings (onnx/mappings/) and the importer
 * apart: it is the one header of translation/ the mappings include, never
 * the importer's own (onnx/README.md; tests/check_layers.py checks it).
 */
#ifndef KILN_ONNX_NODE_H
#define KILN_ONNX_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include "onnx.pb-c.h"

typedef struct onnx_importer onnx_importer;

/* One ONNX node being translated. */
typedef struct onnx_node {
    onnx_importer *importer;
    const Onnx__NodeProto *proto;
    int64_t opset;     /* the model's default-domain opset version */
    const char *label; /* "node 3 'name' (Relu)", for messages */
    kiln_error *err;
} onnx_node;

/** @return true if input `index` is present (ONNX marks omitted optional inputs with ""). */
bool onnx_node_has_input(const onnx_node *node, uint32_t index);

/**
 * @return true if output `index` is read: named, and an input of some node
 * or a graph output. An inference program needs no result nothing reads
 * (Dropout's mask, TopK's indices, an LSTM's last cell), so a mapping
 * emits only the outputs this says are read.
 */
bool onnx_node_output_read(const onnx_node *node, uint32_t index);

/** Input `index` as a kiln value (initializers and constants become weights on first use). */
kiln_status onnx_node_input(onnx_node *node, uint32_t index, kiln_value *out);

/**
 * Input `index` as a constant tensor: an initializer, a Constant node's
 * value, or a graph input whose value the caller fixed (onnx-test).
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_OP (reported) when it is computed at run time.
 */
kiln_status onnx_node_constant(onnx_node *node, uint32_t index, const kiln_tensor **out);

/** @return true if input `index` is present and constant (onnx_node_constant would succeed). */
bool onnx_node_is_constant(const onnx_node *node, uint32_t index);

/**
 * Input `index` as constant integers (i32 or i64 tensor, at most `max` of
 * them, any rank: flattened). Reported as unsupported otherwise.
 */
kiln_status onnx_node_constant_ints(onnx_node *node, uint32_t index, int64_t *values, uint32_t max,
                                    uint32_t *count);

/** The attribute `name`, or NULL. */
const Onnx__AttributeProto *onnx_node_attribute(const onnx_node *node, const char *name);

/** Attribute `name` as an integer; `fallback` when absent. */
int64_t onnx_node_int(const onnx_node *node, const char *name, int64_t fallback);

/** Attribute `name` as a float; `fallback` when absent. */
double onnx_node_float(const onnx_node *node, const char *name, double fallback);

/** Attribute `name` as a NUL-terminated string in `buffer` (truncated to fit); `fallback` when absent. */
const char *onnx_node_string(const onnx_node *node, const char *name, const char *fallback, char *buffer,
                             size_t size);

/** The static dtype, rank and constant sizes (-1: symbolic) of `value`. */
/* The graph node that computes the value named `name`, or NULL (a graph input, an initializer, unknown). */
const Onnx__NodeProto *onnx_node_producer(const onnx_node *node, const char *name);

kiln_status onnx_node_type(onnx_node *node, kiln_value value, kiln_dtype *dtype, uint32_t *rank,
                           int64_t sizes[KILN_MAX_RANK]);

/**
 * @return true if `value` is the rows a state holds after its append
 * (onnx_state.h): in a session a view of the state's storage, which ops
 * that read strided operands (einsum) take without a copy.
 */
bool onnx_node_is_state_rows(const onnx_node *node, kiln_value value);

/**
 * @return true if input `index` holds sizes computed from symbolic dims
 * (Shape of a value with a dim-sized axis and arithmetic on it: symbolic
 * folding, spec/onnx-import.md §3). Such an input is not a constant.
 */
bool onnx_node_is_symbolic(const onnx_node *node, uint32_t index);

/**
 * The elements of symbolic input `index` (rank 0 or 1, at most `max`) as
 * canonical size texts ("batch", "4*batch", "32"), valid while the import
 * lasts. Equal sizes have equal texts.
 */
kiln_status onnx_node_symbolic_sizes(onnx_node *node, uint32_t index, const char **texts, uint32_t max,
                                     uint32_t *count);

/** The canonical size text of axis `axis` of `value`, comparable with onnx_node_symbolic_sizes' texts. */
kiln_status onnx_node_axis_text(onnx_node *node, kiln_value value, uint32_t axis, char *buffer, size_t size);

/** The canonical text of size expression `expression` over the import's dims ("(seq)*(batch)" -> "batch*seq"). */
kiln_status onnx_node_canonical_size(onnx_node *node, const char *expression, char *buffer, size_t size);

/**
 * Find a translated value with an axis of size text `a` and another of
 * size text `b`. @return true and the value, its rank and the two axes.
 */
bool onnx_node_find_sizes(onnx_node *node, const char *a, const char *b, kiln_value *value, uint32_t *rank,
                          uint32_t *axis_a, uint32_t *axis_b);

/** Find a translated value with an axis of size text `a`. @return true and the value, its rank and the axis. */
bool onnx_node_find_size(onnx_node *node, const char *a, kiln_value *value, uint32_t *rank, uint32_t *axis);

/**
 * The largest value size text `text` takes over the declared domain, when
 * the importer knows it: a constant, or a declared dim by itself.
 * @return false for any other expression.
 */
bool onnx_node_size_max(onnx_node *node, const char *text, int64_t *max);

/** Find a translated value whose sizes are exactly the size texts `texts` (`count` axes). */
bool onnx_node_find_shape(onnx_node *node, const char *const *texts, uint32_t count, kiln_value *value);

/** Emit kiln op `op`; a refusal names the ONNX node. */
kiln_status onnx_node_emit(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                           uint32_t attribute_count, const kiln_attribute *attributes, kiln_value *out);

/**
 * A stored constant (a weight of kind constant) holding a copy of
 * `tensor`, named `name` or, when that is taken, with a suffix: index
 * tensors a mapping computes at import (Col2Im's positions).
 */
kiln_status onnx_node_constant_tensor(onnx_node *node, const char *name, const kiln_tensor *tensor, kiln_value *out);

/** A rank-0 constant of `dtype` holding `value`. */
kiln_status onnx_node_scalar(onnx_node *node, kiln_dtype dtype, double value, kiln_value *out);

/** Bind output `index` of the node to `value`. */
kiln_status onnx_node_set_output(onnx_node *node, uint32_t index, kiln_value value);

/** Bind output `index` to a constant tensor (ownership passes to the importer). */
kiln_status onnx_node_set_constant_output(onnx_node *node, uint32_t index, kiln_tensor *tensor);

/**
 * Record that the node cannot be imported, and why (printf format).
 * @return KILN_ERR_UNSUPPORTED_OP.
 */
kiln_status onnx_node_unsupported(onnx_node *node, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** "node 3 'name' (Relu)": how messages name node `index` of the graph. */
void onnx_node_label(const Onnx__NodeProto *proto, size_t index, char *label, size_t size);

#endif
