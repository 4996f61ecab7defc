/*
 * onnx_import.h — an ONNX model (onnx_model.h) into a kiln builder.
 *
 * Graph inputs become kiln inputs, initializers become weights (named
 * after them), nodes become kiln ops through the mapping table of
 * onnx_op_table.c, graph outputs become outputs in order. Symbolic sizes
 * (dim_param) become kiln dims whose bounds the caller declares. Output
 * shapes come from kiln's own shape rules. Whatever cannot be imported is
 * collected into one report instead of stopping at the first problem.
 */
#ifndef KILN_ONNX_IMPORT_H
#define KILN_ONNX_IMPORT_H

#include <stdint.h>

#include <kiln/kiln.h>

#include "onnx_model.h"
#include "onnx_result.h"

/**
 * Import `model` as program `program_name` (options NULL: defaults; its
 * struct_size is not looked at: kiln_onnx_import checks it). *result is
 * filled whether or not the import succeeds; release it with
 * onnx_result_release. Metadata records the producer,
 * its version, the IR version and every imported opset.
 * @return KILN_OK; KILN_ERR_UNSUPPORTED_OP when some construct cannot be
 *         imported (every one listed in result->unsupported, the first in
 *         the message); KILN_ERR_INVALID_ARGUMENT for undeclared dims (all
 *         of them listed in the message); or the first other error (a
 *         malformed tensor, a node kiln refuses, ...).
 */
kiln_status onnx_import_model(const Onnx__ModelProto *model, const char *program_name,
                              const kiln_onnx_options *options, kiln_onnx_result *result, kiln_error *err);

#endif
