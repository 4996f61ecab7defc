/*
 * onnx_symbolic.h — symbolic folding (spec/onnx-import.md §3).
 *
 * A small integer tensor computed from sizes that are kiln dims (the
 * Shape -> Gather -> Concat -> Reshape arithmetic of exports with dynamic
 * axes) is "symbolic": its elements are kept as canonical size texts
 * ("batch", "4*batch", "32") and folded into the attributes of the ops
 * that take it as a shape. Its node is translated into kiln ops only if
 * something uses it as data.
 */
#ifndef KILN_ONNX_SYMBOLIC_H
#define KILN_ONNX_SYMBOLIC_H

#include "onnx_importer.h"

/**
 * Symbolic folding of node `index`: when it computes a small integer
 * tensor from sizes that are kiln dims (Shape of a value with a symbolic
 * axis, or Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity, Add,
 * Sub, Mul, Div over such tensors and constants), its output becomes a
 * symbolic entry (or a constant when every element turns out constant).
 * @return KILN_OK with *folded set, or an error (out of memory).
 */
kiln_status onnx_symbolic_fold(onnx_importer *im, size_t index, bool *folded, kiln_error *err);

/**
 * Translate the node that computed symbolic entry `entry` (an index into
 * the value table), now that something uses it as data, binding the entry
 * to a kiln value. The importer's translate_symbolic (onnx_importer.h).
 * @return KILN_OK, or the error of a mapping.
 */
kiln_status onnx_symbolic_translate(onnx_importer *im, uint32_t entry, kiln_error *err);

#endif
