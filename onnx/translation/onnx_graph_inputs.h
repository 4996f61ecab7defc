/*
 * onnx_graph_inputs.h — the graph's inputs as kiln inputs: their dtypes,
 * their shapes as kiln shape texts over the declared dims ("[batch, 3]"),
 * every size that needs a declaration listed at once, and the values the
 * caller fixed (onnx-test's data sets).
 */
#ifndef KILN_ONNX_GRAPH_INPUTS_H
#define KILN_ONNX_GRAPH_INPUTS_H

#include "onnx_importer.h"

/**
 * Declare the kiln input of graph-input entry `e` and record its ONNX and
 * kiln names in the result. @return KILN_OK, KILN_ERR_INVALID_ARGUMENT
 *         (sizes without a declaration, all listed),
 *         KILN_ERR_UNSUPPORTED_DTYPE, KILN_ERR_DTYPE_MISMATCH,
 *         KILN_ERR_RANK_MISMATCH or KILN_ERR_SHAPE_GUARD (a given value
 *         contradicts the declaration), or the builder's refusal.
 */
kiln_status onnx_input_declare(onnx_importer *im, onnx_entry *e, kiln_error *err);

/**
 * Enter every graph input that is not an initializer into the value table,
 * report the ones that are not tensors, check that every symbolic size has
 * a declared dim (and every declared dim names a size), then declare the
 * inputs without a known value in the model's order.
 * @return KILN_OK or the first error (KILN_ERR_INVALID_ARGUMENT listing every undeclared size).
 */
kiln_status onnx_graph_inputs_add(onnx_importer *im, kiln_error *err);

#endif
