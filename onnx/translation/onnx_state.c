/* onnx_state.c — see onnx_state.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_entry_value.h"
#include "onnx_error.h"
#include "onnx_model.h"
#include "onnx_node.h"
#include "onnx_state.h"
#include "onnx_value_table.h"

static const Onnx__ValueInfoProto *graph_value(const Onnx__ValueInfoProto *const *values, size_t count,
                                               const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (values[i]->name && strcmp(values[i]->name, name) == 0)
            return values[i];
    return NULL;
}

/* The graph's input or output names, for a message that says which exist. */
static void list_values(const Onnx__ValueInfoProto *const *values, size_t count, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < count && i < 12; i++)
        onnx_append_text(out, size, "%s'%s'", i ? ", " : "", values[i]->name ? values[i]->name : "");
    if (count > 12)
        onnx_append_text(out, size, ", and %zu more", count - 12);
}

kiln_status onnx_states_prepare(onnx_importer *im, kiln_error *err)
{
    const kiln_onnx_options *o = im->options;
    const Onnx__GraphProto *g = im->model->graph;
    if (!o->state_count)
        return KILN_OK;
    if (!o->states)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_options.states is NULL with state_count %u",
                         o->state_count);
    if (o->state_capacity < 1)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "a cache imported as state needs its capacity in rows (kiln_onnx_options.state_capacity, "
                         "--state-capacity N): the context length the caches hold, e.g. 2048");
    if (!(im->states = calloc(o->state_count, sizeof *im->states)))
        return onnx_no_memory(err);
    char names[1024];
    for (uint32_t i = 0; i < o->state_count; i++) {
        const kiln_onnx_state *option = &o->states[i];
        onnx_state *st = &im->states[i];
        st->option = option;
        if (!option->output || !option->output[0])
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state %u names no output: give the graph output that "
                             "holds the cache after the step (present.0.key)", i);
        if (!graph_value((const Onnx__ValueInfoProto *const *)g->output, g->n_output, option->output)) {
            list_values((const Onnx__ValueInfoProto *const *)g->output, g->n_output, names, sizeof names);
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state output '%s' is not a graph output; the model's "
                             "outputs are %s", option->output, names);
        }
        if (option->input && !graph_value((const Onnx__ValueInfoProto *const *)g->input, g->n_input, option->input)) {
            list_values((const Onnx__ValueInfoProto *const *)g->input, g->n_input, names, sizeof names);
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state input '%s' is not a graph input; the model's "
                             "inputs are %s", option->input, names);
        }
        onnx_make_identifier(option->name && option->name[0] ? option->name : option->output, st->name,
                             sizeof st->name);
        onnx_make_identifier(o->state_length_dim && o->state_length_dim[0] ? o->state_length_dim : "past",
                             st->length_dim, sizeof st->length_dim);
        for (uint32_t j = 0; j < i; j++) {
            const onnx_state *other = &im->states[j];
            if (strcmp(other->option->output, option->output) == 0 ||
                (option->input && other->option->input && strcmp(other->option->input, option->input) == 0) ||
                strcmp(other->name, st->name) == 0)
                return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "states %u and %u share an input, output or name "
                                 "('%s'): each cache is one state", j, i, st->name);
        }
    }
    return KILN_OK;
}

/* The declared dim (options->dims) a dim_param names, or NULL. */
static const kiln_onnx_dim *option_dim(const onnx_importer *im, const char *param)
{
    for (uint32_t d = 0; d < im->options->dim_count; d++)
        if (strcmp(im->options->dims[d].name, param) == 0)
            return &im->options->dims[d];
    return NULL;
}

static bool normalize_axis(int64_t axis, uint32_t rank, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return false;
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return true;
}

static kiln_status declare_from_input(onnx_importer *im, onnx_state *st, kiln_error *err)
{
    const char *input = st->option->input;
    const Onnx__ValueInfoProto *info = onnx_entry_find(im, input)->info;
    if (!info || !info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !info->type->tensor_type->shape)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': input '%s' is not a tensor with a shape",
                         st->name, input);
    kiln_dtype dtype;
    kiln_error dtype_err;
    if (onnx_dtype_to_kiln(info->type->tensor_type->elem_type, &dtype, &dtype_err) != KILN_OK)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "state '%s': input '%s': %s", st->name, input,
                         dtype_err.message);
    const Onnx__TensorShapeProto *shape = info->type->tensor_type->shape;
    uint32_t rank = (uint32_t)shape->n_dim;
    if (rank < 1 || rank > KILN_MAX_RANK || !normalize_axis(im->options->state_axis, rank, &st->axis))
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': input '%s' has rank %u, which has no axis %d "
                         "(kiln_onnx_options.state_axis, --state-axis)", st->name, input, rank,
                         im->options->state_axis);
    int64_t sizes[KILN_MAX_RANK];
    for (uint32_t a = 0; a < rank; a++) {
        const Onnx__TensorShapeProto__Dimension *dim = shape->dim[a];
        const char *param = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dim->dim_param
                                                                                                   : NULL;
        const kiln_onnx_dim *declared = param ? option_dim(im, param) : NULL;
        if ((int32_t)a == st->axis) {
            if (!declared)
                return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': input '%s' axis %u, the axis the cache "
                                 "grows along, must be a size --dim declares (its length: --dim %s=0..%lld), not %s",
                                 st->name, input, a, param && param[0] ? param : "past",
                                 (long long)im->options->state_capacity - 1, param && param[0] ? param : "a number");
            onnx_make_identifier(declared->name, st->length_dim, sizeof st->length_dim);
            sizes[a] = im->options->state_capacity;
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0) {
            sizes[a] = dim->dim_value;
        } else if (declared && declared->min == declared->max) {
            sizes[a] = declared->min;
        } else {
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': input '%s' axis %u (%s) must be a fixed "
                             "size: a state's shape is fixed but for its length (declare --dim %s=N..N)",
                             st->name, input, a, param && param[0] ? param : "no size", param && param[0] ? param : "NAME");
        }
    }
    kiln_status status = kiln_builder_add_state(im->builder, st->name, dtype, rank, sizes, (uint32_t)st->axis,
                                                st->length_dim, err);
    st->declared = status == KILN_OK;
    return status;
}

kiln_status onnx_states_declare(onnx_importer *im, kiln_error *err)
{
    for (uint32_t i = 0; im->states && i < im->options->state_count; i++) {
        onnx_state *st = &im->states[i];
        kiln_status status = KILN_OK;
        if (st->option->input) {
            status = declare_from_input(im, st, err);
        } else {
            /* A method that starts the cache: its length dim is 0 there (declared once for all its states). */
            char canonical[64];
            size_t length;
            kiln_error ignored;
            if (kiln_builder_canonical_size(im->builder, st->length_dim, canonical, sizeof canonical, &length,
                                            &ignored) != KILN_OK)
                status = kiln_builder_add_dim(im->builder, st->length_dim, 0, 0, err);
        }
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/*
 * Append `rows` to state `st`, first declaring the relation that proves
 * it fits (`past + seq <= 2048`; once for states that share it).
 */
static kiln_status append_rows(onnx_importer *im, onnx_state *st, kiln_value rows, kiln_value *out, kiln_error *err)
{
    char rows_text[SIZE_TEXT_MAX];
    size_t length;
    kiln_status status = kiln_builder_value_axis_text(im->builder, rows, (uint32_t)st->axis, rows_text,
                                                      sizeof rows_text, &length, err);
    if (status != KILN_OK)
        return status;
    snprintf(st->relation, sizeof st->relation, "%s + %s <= %lld", st->length_dim, rows_text,
             (long long)im->options->state_capacity);
    bool declared = false;
    for (uint32_t i = 0; i < im->options->state_count; i++) {
        const onnx_state *other = &im->states[i];
        declared = declared || (other != st && other->appended && strcmp(other->relation, st->relation) == 0);
    }
    if (!declared && (status = kiln_builder_add_relation(im->builder, st->relation, err)) != KILN_OK)
        return status;
    kiln_attribute attribute = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = st->name};
    status = kiln_builder_add_op_with_attributes(im->builder, "state_append", 1, &rows, 1, &attribute, out, err);
    if (status == KILN_OK) {
        st->appended = true;
        st->appended_value = *out;
    }
    return status;
}

kiln_status onnx_state_try_append(onnx_importer *im, size_t index, bool *done, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    *done = false;
    if (!im->states || strcmp(proto->op_type, "Concat") != 0 || proto->n_input != 2 || proto->n_output != 1)
        return KILN_OK;
    onnx_entry *past = onnx_entry_find(im, proto->input[0]);
    if (!past || !past->state)
        return KILN_OK;
    onnx_state *st = &im->states[past->state - 1];
    int64_t axis = 0;
    for (size_t a = 0; a < proto->n_attribute; a++)
        if (proto->attribute[a]->name && strcmp(proto->attribute[a]->name, "axis") == 0)
            axis = proto->attribute[a]->i;
    /* A second extension, or one along another axis: left to Concat, and refused at the output. */
    if (st->appended)
        return KILN_OK;
    onnx_entry *added = onnx_entry_find(im, proto->input[1]);
    if (!added || added->kind == ENTRY_BROKEN)
        return KILN_OK;
    kiln_value rows;
    kiln_status status = onnx_entry_value(im, added, &rows, err);
    if (status != KILN_OK)
        return status;
    kiln_dtype dtype;
    uint32_t rank;
    if ((status = kiln_builder_value_type(im->builder, rows, &dtype, &rank, NULL, err)) != KILN_OK)
        return status;
    int32_t concat_axis;
    if (!normalize_axis(axis, rank, &concat_axis) || concat_axis != st->axis)
        return KILN_OK;
    kiln_value appended;
    if ((status = append_rows(im, st, rows, &appended, err)) != KILN_OK)
        return status;
    char label[512];
    onnx_node_label(proto, index, label, sizeof label);
    onnx_node node = {im, proto, im->opset, label, err};
    if ((status = onnx_node_set_output(&node, 0, appended)) == KILN_OK)
        *done = true;
    return status;
}

/* Declare state `st`, which has no input, from the value its output holds, and append that value. */
static kiln_status start_state(onnx_importer *im, onnx_state *st, kiln_value value, kiln_error *err)
{
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_status status = kiln_builder_value_type(im->builder, value, &dtype, &rank, sizes, err);
    if (status != KILN_OK)
        return status;
    if (rank < 1 || !normalize_axis(im->options->state_axis, rank, &st->axis))
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': output '%s' has rank %u, which has no axis %d "
                         "(kiln_onnx_options.state_axis, --state-axis)", st->name, st->option->output, rank,
                         im->options->state_axis);
    for (uint32_t a = 0; a < rank; a++) {
        if ((int32_t)a == st->axis) {
            sizes[a] = im->options->state_capacity;
        } else if (sizes[a] < 0) {
            char text[SIZE_TEXT_MAX];
            size_t length;
            if (kiln_builder_value_axis_text(im->builder, value, a, text, sizeof text, &length, err) != KILN_OK)
                snprintf(text, sizeof text, "not fixed");
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': output '%s' axis %u is %s, not a fixed "
                             "size: a state's shape is fixed but for its length", st->name, st->option->output, a,
                             text);
        }
    }
    if ((status = kiln_builder_add_state(im->builder, st->name, dtype, rank, sizes, (uint32_t)st->axis,
                                         st->length_dim, err)) != KILN_OK)
        return status;
    st->declared = true;
    kiln_value appended;
    return append_rows(im, st, value, &appended, err);
}

kiln_status onnx_state_output(onnx_importer *im, const char *name, bool *is_state, kiln_error *err)
{
    *is_state = false;
    for (uint32_t i = 0; im->states && i < im->options->state_count; i++) {
        onnx_state *st = &im->states[i];
        if (strcmp(st->option->output, name) != 0)
            continue;
        *is_state = true;
        onnx_entry *e = onnx_entry_find(im, name);
        if (e->kind == ENTRY_BROKEN)
            return KILN_OK; /* the report says why already */
        if (!st->option->input) {
            kiln_value value;
            kiln_status status = onnx_entry_value(im, e, &value, err);
            return status == KILN_OK ? start_state(im, st, value, err) : status;
        }
        if (!st->appended || !e->has_value || e->value != st->appended_value)
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "state '%s': output '%s' is not input '%s' extended by "
                             "one Concat along axis %d: kiln imports a cache that each step extends as "
                             "Concat(past, new rows) (spec/onnx-import.md §7)", st->name, name, st->option->input,
                             st->axis);
        return KILN_OK;
    }
    return KILN_OK;
}
