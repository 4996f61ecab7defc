/*
 * onnx_map_symbolic.h — ONNX ops whose shape-like operand is symbolic: sizes
 * computed from kiln dims (symbolic folding, spec/onnx-import.md §3),
 * held as canonical size texts ("batch", "4*batch"). kiln's ops take
 * constant attributes, so each target is met with ops whose result has
 * the named sizes by construction.
 */
#ifndef KILN_ONNX_ONNX_MAP_SYMBOLIC_H
#define KILN_ONNX_ONNX_MAP_SYMBOLIC_H

#include "onnx_node.h"

/** Reshape to a symbolic target (input 1 symbolic). */
kiln_status onnx_map_symbolic_reshape(onnx_node *node, const char *kiln_op);

/** Expand to a symbolic target (input 1 symbolic). */
kiln_status onnx_map_symbolic_expand(onnx_node *node, const char *kiln_op);

/** Slice (opset 10+) whose starts or ends are symbolic. */
kiln_status onnx_map_symbolic_slice(onnx_node *node, const char *kiln_op);

/** Range with a symbolic limit, a constant integer start and delta 1. */
kiln_status onnx_map_symbolic_range(onnx_node *node);

#endif
