/*
 * onnx_map_quantize.h — ONNX's linear quantization and integer product
 * ops as compositions of kiln ops (see onnx_map_quantize.c); rows of the
 * table in onnx_op_table.c.
 */
#ifndef KILN_ONNX_MAP_QUANTIZE_H
#define KILN_ONNX_MAP_QUANTIZE_H

#include "onnx_node.h"

/** QuantizeLinear (opsets 10, 13): f32 to u8 or i8, per tensor or (13) per axis. */
kiln_status onnx_map_quantize_linear(onnx_node *node, const char *kiln_op);

/** DequantizeLinear (opsets 10, 13): i8, u8 or i32 to f32, per tensor or (13) per axis. */
kiln_status onnx_map_dequantize_linear(onnx_node *node, const char *kiln_op);

/** DynamicQuantizeLinear (opset 11): the scale and zero point from the data's range, then QuantizeLinear. */
kiln_status onnx_map_dynamic_quantize_linear(onnx_node *node, const char *kiln_op);

/** MatMulInteger (opset 10): u8 or i8 operands less their zero points, multiplied exactly, as i32. */
kiln_status onnx_map_matmul_integer(onnx_node *node, const char *kiln_op);

/** ConvInteger (opset 10): u8 or i8 operands less their zero points, convolved exactly, as i32. */
kiln_status onnx_map_conv_integer(onnx_node *node, const char *kiln_op);

#endif
