/*
 * onnx_map_generate.h — ONNX ops that generate values (Range, EyeLike, OneHot,
 * the cosine windows) or take a scalar operand kiln holds as an attribute
 * (CumSum, Trilu); rows of the table in onnx_op_table.c.
 */
#ifndef KILN_ONNX_ONNX_MAP_GENERATE_H
#define KILN_ONNX_ONNX_MAP_GENERATE_H

#include "onnx_node.h"

/** CumSum: the constant axis as kiln's attribute. */
kiln_status onnx_map_cumsum(onnx_node *node, const char *kiln_op);

/** Trilu: the constant k as kiln's attribute. */
kiln_status onnx_map_trilu(onnx_node *node, const char *kiln_op);

/** OneHot: constant depth and values as kiln's attributes. */
kiln_status onnx_map_one_hot(onnx_node *node, const char *kiln_op);

/** EyeLike: eye_like with the ONNX element type code of `dtype` as a kiln dtype name. */
kiln_status onnx_map_eye_like(onnx_node *node, const char *kiln_op);

/** Range: its three scalar operands folded into range's attributes (a symbolic limit: onnx_map_symbolic_range). */
kiln_status onnx_map_range(onnx_node *node, const char *kiln_op);

/** HannWindow, HammingWindow, BlackmanWindow (opset 17). */
kiln_status onnx_map_cosine_window(onnx_node *node, const char *kiln_op);

#endif
