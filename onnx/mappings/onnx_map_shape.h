/*
 * onnx_map_shape.h — ONNX ops on shapes and layout whose shape-like operands
 * (shapes, axes, pads, repeats) kiln takes as attributes: Identity,
 * Dropout, Constant, Shape, Reshape, Expand, Tile, Squeeze, Unsqueeze,
 * Slice, Pad, Split, ConstantOfShape, ScatterElements, ScatterND,
 * CenterCropPad; rows of the table in onnx_op_table.c.
 * Symbolic operands go to onnx_map_symbolic.h.
 */
#ifndef KILN_ONNX_ONNX_MAP_SHAPE_H
#define KILN_ONNX_ONNX_MAP_SHAPE_H

#include "onnx_node.h"

/** Identity, and Dropout in inference (its optional mask all true). */
kiln_status onnx_map_identity(onnx_node *node, const char *kiln_op);

/** Constant: its value attribute becomes a constant output (no op). */
kiln_status onnx_map_constant(onnx_node *node, const char *kiln_op);

/** Shape: folded to a constant when every size is known, else shape_of (and a slice for start/end). */
kiln_status onnx_map_shape(onnx_node *node, const char *kiln_op);

/** ConstantOfShape: a constant or symbolic shape filled with attribute `value`. */
kiln_status onnx_map_constant_of_shape(onnx_node *node, const char *kiln_op);

/** Reshape: a constant target as kiln's attribute, a symbolic one through onnx_map_symbolic_reshape. */
kiln_status onnx_map_reshape(onnx_node *node, const char *kiln_op);

/** Expand: a constant target as kiln's attribute, a symbolic one through onnx_map_symbolic_expand. */
kiln_status onnx_map_expand(onnx_node *node, const char *kiln_op);

/** Tile: constant repeats as kiln's attribute. */
kiln_status onnx_map_tile(onnx_node *node, const char *kiln_op);

/** Concat; before opset 4 `axis` defaults to 1. */
kiln_status onnx_map_concat(onnx_node *node, const char *kiln_op);

/** Unsqueeze: axes from the attribute (opset < 13) or a constant input. */
kiln_status onnx_map_unsqueeze(onnx_node *node, const char *kiln_op);

/** Squeeze: axes from the attribute (opset < 13) or a constant input; none: every axis of size 1. */
kiln_status onnx_map_squeeze(onnx_node *node, const char *kiln_op);

/** Slice: constant bounds as kiln's attributes, symbolic ones through onnx_map_symbolic_slice. */
kiln_status onnx_map_slice(onnx_node *node, const char *kiln_op);

/** Pad: constant pads and value as kiln's attributes. */
kiln_status onnx_map_pad(onnx_node *node, const char *kiln_op);

/** Split: one kiln slice per output. */
kiln_status onnx_map_split(onnx_node *node, const char *kiln_op);

/** ScatterElements, ScatterND: the reductions each version defines. */
kiln_status onnx_map_scatter(onnx_node *node, const char *kiln_op);

/** CenterCropPad (opset 18): a slice and a pad of constant sizes. */
kiln_status onnx_map_center_crop_pad(onnx_node *node, const char *kiln_op);

#endif
