/* onnx_fold.c — see onnx_fold.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_fold.h"
#include "onnx_value_table.h"

/* Largest constant computed at import, in elements (each input and each output). */
#define FOLD_MAX_ELEMENTS 4096

static bool constant_is_small(const kiln_tensor *t)
{
    return t && kiln_tensor_element_count(t) <= FOLD_MAX_ELEMENTS;
}

/* A copy of output `index` of a finished run. */
static kiln_tensor *copy_tensor(const kiln_tensor *from)
{
    kiln_tensor *to;
    if (kiln_tensor_new(kiln_tensor_dtype(from), kiln_tensor_rank(from), kiln_tensor_shape(from), &to, NULL) !=
        KILN_OK)
        return NULL;
    if (kiln_tensor_byte_size(from))
        memcpy(kiln_tensor_data(to), kiln_tensor_const_data(from), kiln_tensor_byte_size(from));
    return to;
}

/*
 * Evaluate with kiln itself a node whose every input is a stored constant
 * (an initializer, a Constant node's value or an earlier folded result;
 * never a graph input, even one whose value the caller knows): the node is
 * translated into a scratch program whose weights are its inputs, which is
 * sealed, loaded and run, and its outputs become constants. So the shape
 * arithmetic of exported models (Shape, Gather, Concat, Unsqueeze, ...)
 * feeding a Reshape or an Expand folds into that op's attribute.
 * @return true if the node was folded; false to translate it as usual.
 */
bool onnx_fold_constant_node(onnx_importer *im, const Onnx__NodeProto *proto, const onnx_op_mapping *mapping, int64_t opset,
                      const char *label)
{
    if (proto->n_input == 0 || proto->n_output == 0 || proto->n_output > 16 || strcmp(proto->op_type, "Constant") == 0)
        return false;
    for (size_t i = 0; i < proto->n_input; i++) {
        onnx_entry *e = proto->input[i][0] ? onnx_entry_find(im, proto->input[i]) : NULL;
        if (proto->input[i][0] && (!e || e->kind != ENTRY_CONSTANT || !constant_is_small(e->constant)))
            return false;
    }
    kiln_onnx_options no_options = {0};
    kiln_onnx_result scratch_result = {0};
    onnx_importer sub = {.model = im->model, .options = &no_options, .limits = im->limits, .result = &scratch_result,
                         .read_names = im->read_names};
    kiln_error sub_err;
    kiln_tensor *outputs[16] = {0};
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    void *bytes = NULL;
    size_t size = 0;
    bool folded = false;
    if (!onnx_names_init(&sub.by_onnx_name, proto->n_input + proto->n_output) || !onnx_names_init(&sub.kiln_names, 8) ||
        !(sub.dim_declared = calloc(1, sizeof *sub.dim_declared)) ||
        kiln_builder_new("fold", &sub.builder, NULL) != KILN_OK)
        goto done;
    for (size_t i = 0; i < proto->n_input; i++) {
        onnx_entry *e;
        if (!proto->input[i][0] || onnx_entry_find(&sub, proto->input[i]))
            continue;
        if (onnx_entry_new(&sub, proto->input[i], ENTRY_CONSTANT, &e, NULL) != KILN_OK)
            goto done;
        e->constant = onnx_entry_find(im, proto->input[i])->constant; /* borrowed */
    }
    onnx_node node = {&sub, proto, opset, label, &sub_err};
    if (mapping->map(&node, mapping->kiln_op) != KILN_OK)
        goto done;
    uint32_t run_outputs = 0;
    for (size_t o = 0; o < proto->n_output; o++) {
        onnx_entry *e = proto->output[o][0] ? onnx_entry_find(&sub, proto->output[o]) : NULL;
        if (!e || e->constant)
            continue;
        kiln_dtype dtype;
        uint32_t rank;
        int64_t sizes[KILN_MAX_RANK];
        uint64_t count = 1;
        if (!e->has_value || kiln_builder_value_type(sub.builder, e->value, &dtype, &rank, sizes, NULL) != KILN_OK)
            goto done;
        for (uint32_t a = 0; a < rank; a++) {
            if (sizes[a] < 0 || (sizes[a] > 0 && count > FOLD_MAX_ELEMENTS / (uint64_t)sizes[a]))
                goto done;
            count *= (uint64_t)sizes[a];
        }
        char name[32];
        snprintf(name, sizeof name, "o%zu", o);
        if (count > FOLD_MAX_ELEMENTS || kiln_builder_add_output(sub.builder, name, e->value, NULL) != KILN_OK)
            goto done;
        run_outputs++;
    }
    if (run_outputs) {
        if (kiln_builder_encode(sub.builder, NULL, &bytes, &size, NULL) != KILN_OK ||
            kiln_program_load_memory(bytes, size, NULL, &program, NULL, NULL) != KILN_OK ||
            kiln_session_new(program, NULL, &session, NULL) != KILN_OK || kiln_session_run(session, NULL) != KILN_OK)
            goto done;
    }
    uint32_t next = 0;
    for (size_t o = 0; o < proto->n_output; o++) {
        onnx_entry *e = proto->output[o][0] ? onnx_entry_find(&sub, proto->output[o]) : NULL;
        if (!e)
            continue;
        outputs[o] = copy_tensor(e->constant ? e->constant : kiln_session_output(session, next++));
        if (!outputs[o])
            goto done;
    }
    onnx_node main_node = {im, proto, opset, label, &sub_err};
    folded = true;
    for (size_t o = 0; o < proto->n_output; o++) {
        if (!outputs[o])
            continue;
        kiln_tensor *t = outputs[o];
        outputs[o] = NULL;
        /* On failure (an output defined twice) the node is translated as usual and that reports it. */
        if (onnx_node_set_constant_output(&main_node, (uint32_t)o, t) != KILN_OK)
            folded = false;
    }
done:
    for (size_t o = 0; o < 16; o++)
        kiln_tensor_free(outputs[o]);
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
    for (uint32_t i = 0; i < sub.report_count; i++)
        free(sub.report[i]);
    free(sub.report);
    onnx_importer_release(&sub);
    return folded;
}
