/*
 * onnx_import.h — an ONNX model (onnx_model.h) into a kiln builder.
 *
 * Graph inputs become kiln inputs, initializers become weights (named
 * after them), nodes become kiln ops through the mapping table of
 * onnx_ops.c, graph outputs become outputs in order. Symbolic sizes
 * (dim_param) become kiln dims whose bounds the caller declares. Output
 * shapes come from kiln's own shape rules. Whatever cannot be imported is
 * collected into one report instead of stopping at the first problem.
 */
#ifndef KILN_ONNX_IMPORT_H
#define KILN_ONNX_IMPORT_H

#include <stdint.h>

#include <kiln/kiln.h>

#include "onnx_model.h"

/* A bound the user declared for a dim_param: --dim NAME=MIN..MAX. */
typedef struct onnx_dim_bound {
    const char *name;
    int64_t min, max;
} onnx_dim_bound;

typedef struct onnx_import_options {
    const onnx_dim_bound *dims;
    uint32_t dim_count;
    const char *external_data_dir; /* NULL: external tensor data is refused */
    /*
     * Known values of graph inputs, by ONNX name (onnx-test's data sets):
     * each fixes the sizes of its input's axes that no --dim names, and an
     * input used where kiln needs a constant (a shape, axes, pads) is
     * folded to its value. NULL/0: none.
     */
    uint32_t known_input_count;
    const char *const *known_input_names;
    const kiln_tensor *const *known_inputs;
    const onnx_limits *limits; /* NULL: defaults */
} onnx_import_options;

/* The result of an import. Release with onnx_import_release. */
typedef struct onnx_import {
    kiln_builder *builder;  /* NULL unless the import succeeded */
    char **unsupported;     /* one line per construct that cannot be imported */
    uint32_t unsupported_count;
    uint32_t input_count;   /* graph inputs that became kiln inputs */
    char **input_onnx_names;
    char **input_kiln_names;
} onnx_import;

/**
 * Import `model` as program `program_name`. Metadata records the producer,
 * its version, the IR version and every imported opset.
 * @return KILN_OK; KILN_ERR_UNSUPPORTED_OP when some construct cannot be
 *         imported (every one listed in result->unsupported, the first in
 *         the message); KILN_ERR_INVALID_ARGUMENT for undeclared dims (all
 *         of them listed in the message); or the first other error (a
 *         malformed tensor, a node kiln refuses, ...).
 */
kiln_status onnx_import_model(const Onnx__ModelProto *model, const char *program_name,
                              const onnx_import_options *options, onnx_import *result, kiln_error *err);

/** Free everything `result` holds (not the struct itself). */
void onnx_import_release(onnx_import *result);

#endif
