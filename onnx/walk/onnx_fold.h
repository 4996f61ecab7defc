/*
 * onnx_fold.h — constant folding: a node whose every input is a stored
 * constant is evaluated with kiln itself at import, so the shape
 * arithmetic of exported models (Shape, Gather, Concat, Unsqueeze, ...)
 * feeding a Reshape or an Expand folds into that op's attribute.
 */
#ifndef KILN_ONNX_FOLD_H
#define KILN_ONNX_FOLD_H

#include "onnx_importer.h"
#include "onnx_mapping.h"

/**
 * Evaluate node `proto` (mapped by `mapping`) when every input is a small
 * stored constant (an initializer, a Constant node's value or an earlier
 * folded result; never a graph input, even one whose value the caller
 * knows): it is translated into a scratch program whose weights are its
 * inputs, sealed, loaded and run, and its outputs become constants.
 * @return true if the node was folded; false to translate it as usual.
 */
bool onnx_fold_constant_node(onnx_importer *im, const Onnx__NodeProto *proto, const onnx_op_mapping *mapping,
                             int64_t opset, const char *label);

#endif
