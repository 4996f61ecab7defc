/* onnx_result.c — see onnx_result.h. */
#include <stdlib.h>
#include <string.h>

#include "onnx_error.h"
#include "onnx_result.h"

kiln_status onnx_result_add_input(kiln_onnx_result *result, const char *onnx_name, const char *kiln_name,
                                  kiln_error *err)
{
    kiln_onnx_result *r = result;
    char **onnx_names = realloc(r->input_onnx_names, (r->input_count + 1) * sizeof *onnx_names);
    if (onnx_names)
        r->input_onnx_names = onnx_names;
    char **kiln_names = realloc(r->input_kiln_names, (r->input_count + 1) * sizeof *kiln_names);
    if (kiln_names)
        r->input_kiln_names = kiln_names;
    if (!onnx_names || !kiln_names)
        return onnx_no_memory(err);
    r->input_onnx_names[r->input_count] = strdup(onnx_name);
    r->input_kiln_names[r->input_count] = strdup(kiln_name);
    r->input_count++;
    if (!r->input_onnx_names[r->input_count - 1] || !r->input_kiln_names[r->input_count - 1])
        return onnx_no_memory(err);
    return KILN_OK;
}

void onnx_result_release(kiln_onnx_result *result)
{
    kiln_builder_free(result->builder);
    for (uint32_t i = 0; i < result->unsupported_count; i++)
        free(result->unsupported[i]);
    free(result->unsupported);
    for (uint32_t i = 0; i < result->input_count; i++) {
        free(result->input_onnx_names[i]);
        free(result->input_kiln_names[i]);
    }
    free(result->input_onnx_names);
    free(result->input_kiln_names);
    memset(result, 0, sizeof *result);
}
