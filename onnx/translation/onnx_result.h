/*
 * onnx_result.h — what an import hands back (the opaque kiln_onnx_result
 * of <kiln/onnx.h>): the builder, the report of every construct that
 * cannot be imported, and the ONNX and kiln names of the inputs.
 */
#ifndef KILN_ONNX_RESULT_H
#define KILN_ONNX_RESULT_H

#include <stdint.h>

#include <kiln/kiln.h>
#include <kiln/onnx.h>

struct kiln_onnx_result {
    kiln_builder *builder;  /* NULL unless the import succeeded */
    char **unsupported;     /* one line per construct that cannot be imported */
    uint32_t unsupported_count;
    uint32_t input_count;   /* graph inputs that became kiln inputs, in the model's order */
    char **input_onnx_names;
    char **input_kiln_names;
};

/**
 * Record that graph input `onnx_name` became kiln input `kiln_name` (both copied).
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status onnx_result_add_input(kiln_onnx_result *result, const char *onnx_name, const char *kiln_name,
                                  kiln_error *err);

/** Free everything `result` holds (not the struct itself) and zero it. */
void onnx_result_release(kiln_onnx_result *result);

#endif
