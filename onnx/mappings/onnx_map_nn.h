/*
 * onnx_map_nn.h — ONNX's neural-network ops: reductions and softmax,
 * Gemm, normalizations, LRN, pooling, convolution windows, TopK, the
 * recurrent layers, Resize, GridSample, MaxUnpool; rows of the table in
 * onnx_op_table.c.
 */
#ifndef KILN_ONNX_ONNX_MAP_NN_H
#define KILN_ONNX_ONNX_MAP_NN_H

#include "onnx_node.h"

/** ReduceX: axes as an attribute, or (ReduceSum from opset 13) as input 1. */
kiln_status onnx_map_reduce(onnx_node *node, const char *kiln_op);

/** Softmax, LogSoftmax, Hardmax (before opset 13 on the input flattened to 2-D at `axis`). */
kiln_status onnx_map_softmax(onnx_node *node, const char *kiln_op);

/** Gemm: kiln's gemm with the same attributes. */
kiln_status onnx_map_gemm(onnx_node *node, const char *kiln_op);

/** BatchNormalization in inference. */
kiln_status onnx_map_batch_norm(onnx_node *node, const char *kiln_op);

/** LayerNormalization (opset 17). */
kiln_status onnx_map_layer_norm(onnx_node *node, const char *kiln_op);

/** GroupNormalization-18 (scale and bias per group): group_norm with them repeated per channel. */
kiln_status onnx_map_group_norm_18(onnx_node *node, const char *kiln_op);

/** LRN as a composition of kiln ops. */
kiln_status onnx_map_lrn(onnx_node *node, const char *kiln_op);

/** GlobalAveragePool, GlobalMaxPool. */
kiln_status onnx_map_global_pool(onnx_node *node, const char *kiln_op);

/** TopK: k from the attribute (opset < 10) or a constant input. */
kiln_status onnx_map_topk(onnx_node *node, const char *kiln_op);

/** RNN, GRU, LSTM. */
kiln_status onnx_map_recurrent(onnx_node *node, const char *kiln_op);

/** Conv, ConvTranspose, MaxPool, AveragePool, LpPool. */
kiln_status onnx_map_window(onnx_node *node, const char *kiln_op);

/** Resize (opset 10+) and Upsample (opset 9). */
kiln_status onnx_map_resize(onnx_node *node, const char *kiln_op);

/** GridSample (opset 16+). */
kiln_status onnx_map_grid_sample(onnx_node *node, const char *kiln_op);

/** Col2Im (opset 18): gather of the taps inside the image, scatter_elements adding them. */
kiln_status onnx_map_col2im(onnx_node *node, const char *kiln_op);

/** MaxUnpool (opset 9+). */
kiln_status onnx_map_max_unpool(onnx_node *node, const char *kiln_op);

#endif
