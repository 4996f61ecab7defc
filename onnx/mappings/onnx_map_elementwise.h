/*
 * onnx_map_elementwise.h — elementwise ONNX ops: renames with copied attributes
 * and the decompositions (Clip with computed bounds, PRelu, Mish, Pow,
 * BitShift, Cast, CastLike); rows of the table in onnx_op_table.c.
 */
#ifndef KILN_ONNX_ONNX_MAP_ELEMENTWISE_H
#define KILN_ONNX_ONNX_MAP_ELEMENTWISE_H

#include "onnx_node.h"

/** Same inputs, same attributes, another name (`kiln_op`): most ONNX ops. */
kiln_status onnx_map_rename(onnx_node *node, const char *kiln_op);

/**
 * Add, Sub, Mul, Div, Pow, Equal, Less, Greater, And, Or, Xor. From opset 7
 * NumPy broadcasting (Pow: onnx_map_pow); before it, the `broadcast` and
 * `axis` attributes: B of A's shape, or (broadcast = 1) B aligned with A at
 * `axis` or at A's last axes, the result always of A's shape.
 */
kiln_status onnx_map_binary(onnx_node *node, const char *kiln_op);

/** Cast: attribute `to` as a kiln dtype name (before opset 6, the name of an ONNX element type). */
kiln_status onnx_map_cast(onnx_node *node, const char *kiln_op);

/** Clip: bounds from attributes (opset < 11) or constant inputs; computed bounds become max/min. */
kiln_status onnx_map_clip(onnx_node *node, const char *kiln_op);

/** BitShift: direction as kiln's attribute. */
kiln_status onnx_map_bitshift(onnx_node *node, const char *kiln_op);

/** Pow: the exponent cast to the base's dtype. */
kiln_status onnx_map_pow(onnx_node *node, const char *kiln_op);

/** CastLike: a cast to the second operand's dtype. */
kiln_status onnx_map_cast_like(onnx_node *node, const char *kiln_op);

/** PRelu: where(x < 0, slope * x, x). */
kiln_status onnx_map_prelu(onnx_node *node, const char *kiln_op);

/** Mish: x * tanh(softplus(x)). */
kiln_status onnx_map_mish(onnx_node *node, const char *kiln_op);

#endif
