/* onnx_entry_value.c — see onnx_entry_value.h. */
#include <string.h>

#include "onnx_entry_value.h"
#include "onnx_error.h"
#include "onnx_graph_inputs.h"
#include "onnx_value_table.h"

/* Make a constant entry usable as a value: a weight named after it. */
static kiln_status create_weight(onnx_importer *im, onnx_entry *e, kiln_error *err)
{
    const kiln_tensor *t = e->constant;
    const char *kiln_name;
    kiln_status status = onnx_unique_kiln_name(im, &im->kiln_names, e->onnx_name[0] ? e->onnx_name : "constant",
                                          &kiln_name, err);
    if (status != KILN_OK)
        return status;
    kiln_weight_kind kind = e->from_initializer ? KILN_WEIGHT_PARAMETER : KILN_WEIGHT_CONSTANT;
    status = kiln_builder_add_weight(im->builder, kiln_name, kind, kiln_tensor_dtype(t), kiln_tensor_rank(t),
                                     kiln_tensor_shape(t), kiln_tensor_const_data(t), &e->value, err);
    /* A name the builder gave a scalar constant already: try the next suffix. */
    for (uint32_t attempt = 0; status == KILN_ERR_INVALID_ARGUMENT && strstr(err->message, "already") && attempt < 8;
         attempt++) {
        status = onnx_unique_kiln_name(im, &im->kiln_names, kiln_name, &kiln_name, err);
        if (status == KILN_OK)
            status = kiln_builder_add_weight(im->builder, kiln_name, kind, kiln_tensor_dtype(t), kiln_tensor_rank(t),
                                             kiln_tensor_shape(t), kiln_tensor_const_data(t), &e->value, err);
    }
    if (status == KILN_OK)
        e->has_value = true;
    return status;
}

/* The value of cache-input entry `e` (e->state != 0, onnx_state.h): the rows its state holds. */
static kiln_status read_state(onnx_importer *im, onnx_entry *e, kiln_error *err)
{
    const onnx_state *st = &im->states[e->state - 1];
    kiln_attribute attribute = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = st->name};
    kiln_status status = kiln_builder_add_op_with_attributes(im->builder, "state_read", 0, NULL, 1, &attribute,
                                                             &e->value, err);
    e->has_value = status == KILN_OK;
    return status;
}

kiln_status onnx_entry_value(onnx_importer *im, onnx_entry *e, kiln_value *out, kiln_error *err)
{
    if (!e->has_value) {
        /* A translation adds entries, which may move the table: find `e` again by its index. */
        uint32_t index = (uint32_t)(e - im->entries);
        kiln_status status;
        if (e->kind == ENTRY_INPUT && e->state)
            status = read_state(im, e, err);
        else if (e->kind == ENTRY_INPUT)
            status = onnx_input_declare(im, e, err);
        else if (e->kind == ENTRY_SYMBOLIC)
            status = im->translate_symbolic ? im->translate_symbolic(im, index, err)
                                            : onnx_fail(err, KILN_ERR_INVALID_PROGRAM, "symbolic value '%s' cannot "
                                                        "be translated here", e->onnx_name);
        else
            status = create_weight(im, e, err);
        if (status != KILN_OK)
            return status;
        e = &im->entries[index];
    }
    *out = e->value;
    return KILN_OK;
}
