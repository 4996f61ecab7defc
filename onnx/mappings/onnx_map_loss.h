/*
 * onnx_map_loss.h — ONNX's loss ops as compositions of kiln ops (see
 * onnx_map_loss.c); rows of the table in onnx_op_table.c.
 */
#ifndef KILN_ONNX_MAP_LOSS_H
#define KILN_ONNX_MAP_LOSS_H

#include "onnx_node.h"

/** NegativeLogLikelihoodLoss (opsets 12, 13): gather, weights, ignore_index, reduction. */
kiln_status onnx_map_nll_loss(onnx_node *node, const char *kiln_op);

/** SoftmaxCrossEntropyLoss (opsets 12, 13): log_softmax over axis 1, then as NegativeLogLikelihoodLoss. */
kiln_status onnx_map_softmax_cross_entropy(onnx_node *node, const char *kiln_op);

#endif
