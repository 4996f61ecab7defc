/* onnx_graph_inputs.c — see onnx_graph_inputs.h. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <kiln/util.h>

#include "onnx_error.h"
#include "onnx_graph_inputs.h"
#include "onnx_model.h"
#include "onnx_value_table.h"

static const kiln_tensor *known_input(const onnx_importer *im, const char *onnx_name)
{
    for (uint32_t i = 0; i < im->options->known_input_count; i++)
        if (strcmp(im->options->known_input_names[i], onnx_name) == 0)
            return im->options->known_inputs[i];
    return NULL;
}

static const kiln_onnx_dim *declared_dim(onnx_importer *im, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; i < im->options->dim_count; i++)
        if (strcmp(im->options->dims[i].name, name) == 0) {
            *index = i;
            return &im->options->dims[i];
        }
    return NULL;
}

/* Declare the kiln dim of options->dims[index] in the builder, once. */
static kiln_status declare_dim(onnx_importer *im, uint32_t index, kiln_error *err)
{
    if (im->dim_declared[index])
        return KILN_OK;
    const kiln_onnx_dim *bound = &im->options->dims[index];
    char identifier[256];
    onnx_make_identifier(bound->name, identifier, sizeof identifier);
    kiln_status status = kiln_builder_add_dim(im->builder, identifier, bound->min, bound->max, err);
    /* multiple_of 0 or 1: any size of the range. */
    if (status == KILN_OK && bound->multiple_of > 1)
        status = kiln_builder_set_dim_multiple_of(im->builder, identifier, bound->multiple_of, err);
    if (status == KILN_OK)
        im->dim_declared[index] = true;
    return status;
}

/*
 * Whether `param` is a size expression over declared dims ("s27 + 1",
 * "2*batch", "(seq//2)": what torch.onnx writes for a derived dim): only
 * names of declared dims, integers, spaces, parentheses and + - * // %, with
 * at least one operator. When it is, the kiln text of it ("//" is kiln's
 * floor division "/") is written to `out` and each dim it names is declared;
 * the builder's own parser then checks its syntax and that it stays
 * non-negative over the domain.
 */
static bool expression_of_declared_dims(onnx_importer *im, const char *param, char *out, size_t size,
                                        kiln_status *status, kiln_error *err)
{
    bool has_operator = false;
    size_t used = 0;
    *status = KILN_OK;
    for (const char *p = param; *p;) {
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            char name[256];
            size_t length = (size_t)(p - start);
            if (length >= sizeof name)
                return false;
            memcpy(name, start, length);
            name[length] = '\0';
            uint32_t index;
            if (!declared_dim(im, name, &index))
                return false;
            char identifier[256];
            onnx_make_identifier(name, identifier, sizeof identifier);
            size_t need = strlen(identifier);
            if (size - used <= need)
                return false;
            memcpy(out + used, identifier, need);
            used += need;
            continue;
        }
        if (!isdigit((unsigned char)*p) && !strchr(" ()+-*/%", *p))
            return false;
        if (strchr("+-*/%", *p))
            has_operator = true;
        if (size - used <= 1)
            return false;
        out[used++] = *p;
        p += (p[0] == '/' && p[1] == '/') ? 2 : 1;
    }
    out[used] = '\0';
    if (!has_operator)
        return false;
    /* Only now declare: a text that turns out not to be an expression declares nothing. */
    for (const char *p = param; *p;) {
        if (!isalpha((unsigned char)*p) && *p != '_') {
            p++;
            continue;
        }
        const char *start = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        char name[256];
        memcpy(name, start, (size_t)(p - start));
        name[p - start] = '\0';
        uint32_t index;
        if (declared_dim(im, name, &index) && (*status = declare_dim(im, index, err)) != KILN_OK)
            return true;
    }
    return true;
}

/* Whether a user who typed `typed` plausibly meant `name`: a few edits
 * apart (a third of the longer name, at least 2), or one begins the other
 * (`sequence` for `seq`, `batch_size` for `batch`). */
static bool plausibly_meant(const char *typed, const char *name)
{
    size_t lt = strlen(typed), ln = strlen(name), longer = lt > ln ? lt : ln;
    size_t allowed = longer / 3 > 2 ? longer / 3 : 2;
    size_t shorter = lt < ln ? lt : ln;
    bool prefix = shorter >= 2 && strncasecmp(typed, name, shorter) == 0;
    return prefix || kiln_name_distance(typed, name) <= allowed;
}

/*
 * Append `typed`, a --dim name no input size has, to `out`, with the
 * model's closest size name when one is plausibly what was meant ("sequence
 * (did you mean seq?)"). Sizes --dim already declares are not suggested.
 */
static void append_unused_dim(onnx_importer *im, const char *typed, char *out, size_t size)
{
    const Onnx__GraphProto *g = im->model->graph;
    const char *best = NULL;
    size_t best_distance = SIZE_MAX;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *info = g->input[i];
        if (!info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !info->type->tensor_type->shape)
            continue;
        const Onnx__TensorShapeProto *shape = info->type->tensor_type->shape;
        for (size_t a = 0; a < shape->n_dim; a++) {
            const char *param = shape->dim[a]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                    ? shape->dim[a]->dim_param
                                    : NULL;
            uint32_t declared;
            if (!param || !param[0] || declared_dim(im, param, &declared) || !plausibly_meant(typed, param))
                continue;
            size_t distance = kiln_name_distance(typed, param);
            if (distance < best_distance)
                best = param, best_distance = distance;
        }
    }
    onnx_append_text(out, size, "%s%s", out[0] ? ", " : "", typed);
    if (best)
        onnx_append_text(out, size, " (did you mean %s?)", best);
}

/*
 * The kiln shape text of graph input `info` ("[batch, 3]"), or the reasons
 * it cannot have one appended to `undeclared` (one per axis).
 */
static kiln_status input_shape_text(onnx_importer *im, const Onnx__ValueInfoProto *info, const kiln_tensor *known,
                                    char *shape, size_t size, char *undeclared, size_t undeclared_size,
                                    uint32_t *undeclared_count, kiln_error *err)
{
    const Onnx__TypeProto__Tensor *tensor_type = info->type->tensor_type;
    const Onnx__TensorShapeProto *proto_shape = tensor_type->shape;
    snprintf(shape, size, "[");
    if (!proto_shape) {
        if (!known) {
            onnx_append_text(undeclared, undeclared_size, "%sinput '%s' has no shape", *undeclared_count ? "; " : "",
                        info->name);
            (*undeclared_count)++;
            return KILN_OK;
        }
        for (uint32_t a = 0; a < kiln_tensor_rank(known); a++)
            onnx_append_text(shape, size, "%s%lld", a ? ", " : "", (long long)kiln_tensor_shape(known)[a]);
        onnx_append_text(shape, size, "]");
        return KILN_OK;
    }
    if (proto_shape->n_dim > KILN_MAX_RANK)
        return onnx_fail(err, KILN_ERR_LIMIT, "input '%s' has rank %zu, over kiln's maximum of %d", info->name,
                         proto_shape->n_dim, KILN_MAX_RANK);
    if (known && kiln_tensor_rank(known) != proto_shape->n_dim)
        return onnx_fail(err, KILN_ERR_RANK_MISMATCH, "input '%s' has rank %zu, its given value rank %u", info->name,
                         proto_shape->n_dim, kiln_tensor_rank(known));
    for (size_t a = 0; a < proto_shape->n_dim; a++) {
        const Onnx__TensorShapeProto__Dimension *dim = proto_shape->dim[a];
        const char *separator = a ? ", " : "";
        uint32_t dim_index;
        char expression[512];
        kiln_status expression_status;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return onnx_fail(err, KILN_ERR_MALFORMED, "input '%s' axis %zu has the negative size %lld",
                                 info->name, a, (long long)dim->dim_value);
            if (known && kiln_tensor_shape(known)[a] != dim->dim_value)
                return onnx_fail(err, KILN_ERR_SHAPE_GUARD, "input '%s' axis %zu is %lld, its given value has %lld",
                                 info->name, a, (long long)dim->dim_value, (long long)kiln_tensor_shape(known)[a]);
            onnx_append_text(shape, size, "%s%lld", separator, (long long)dim->dim_value);
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param[0] &&
                   declared_dim(im, dim->dim_param, &dim_index)) {
            char identifier[256];
            onnx_make_identifier(im->options->dims[dim_index].name, identifier, sizeof identifier);
            kiln_status status = declare_dim(im, dim_index, err);
            if (status != KILN_OK)
                return status;
            onnx_append_text(shape, size, "%s%s", separator, identifier);
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   expression_of_declared_dims(im, dim->dim_param, expression, sizeof expression, &expression_status,
                                               err)) {
            /* With a known value too (onnx-test with --dim, spec/onnx-import.md §3.1): the expression is
             * declared as a plain dim is, and the guards check the value against it. */
            if (expression_status != KILN_OK)
                return expression_status;
            onnx_append_text(shape, size, "%s%s", separator, expression);
        } else if (known) {
            onnx_append_text(shape, size, "%s%lld", separator, (long long)kiln_tensor_shape(known)[a]);
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param[0]) {
            onnx_append_text(undeclared, undeclared_size, "%s%s (input '%s' axis %zu)", *undeclared_count ? "; " : "",
                        dim->dim_param, info->name, a);
            (*undeclared_count)++;
        } else {
            onnx_append_text(undeclared, undeclared_size, "%sinput '%s' axis %zu has neither a size nor a name",
                        *undeclared_count ? "; " : "", info->name, a);
            (*undeclared_count)++;
        }
    }
    onnx_append_text(shape, size, "]");
    if (strlen(shape) + 1 >= size)
        return onnx_fail(err, KILN_ERR_LIMIT, "input '%s': its shape text is too long", info->name);
    return KILN_OK;
}

static kiln_status input_dtype(const Onnx__ValueInfoProto *info, kiln_dtype *out, kiln_error *err)
{
    kiln_error dtype_err;
    if (onnx_dtype_to_kiln(info->type->tensor_type->elem_type, out, &dtype_err) != KILN_OK)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "input '%s': %s", info->name, dtype_err.message);
    return KILN_OK;
}

/* Declare the kiln input for graph-input entry `e`. */
kiln_status onnx_input_declare(onnx_importer *im, onnx_entry *e, kiln_error *err)
{
    char shape[1024], undeclared[1024] = "";
    uint32_t undeclared_count = 0;
    kiln_dtype dtype;
    kiln_status status = input_dtype(e->info, &dtype, err);
    if (status != KILN_OK)
        return status;
    if (e->constant && kiln_tensor_dtype(e->constant) != dtype)
        return onnx_fail(err, KILN_ERR_DTYPE_MISMATCH, "input '%s' is %s, its given value %s", e->onnx_name,
                         kiln_dtype_name(dtype), kiln_dtype_name(kiln_tensor_dtype(e->constant)));
    status = input_shape_text(im, e->info, e->constant, shape, sizeof shape, undeclared, sizeof undeclared,
                              &undeclared_count, err);
    if (status != KILN_OK)
        return status;
    if (undeclared_count)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "input '%s': %s", e->onnx_name, undeclared);
    const char *kiln_name;
    status = onnx_unique_kiln_name(im, &im->kiln_names, e->onnx_name, &kiln_name, err);
    if (status != KILN_OK)
        return status;
    status = kiln_builder_add_input(im->builder, kiln_name, dtype, shape, &e->value, err);
    if (status != KILN_OK)
        return status;
    e->has_value = true;
    return onnx_result_add_input(im->result, e->onnx_name, kiln_name, err);
}

kiln_status onnx_graph_inputs_add(onnx_importer *im, kiln_error *err)
{
    const Onnx__GraphProto *g = im->model->graph;
    char undeclared[2048] = "";
    uint32_t undeclared_count = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *info = g->input[i];
        if (!info->name || !info->name[0])
            return onnx_fail(err, KILN_ERR_MALFORMED, "graph input %zu has no name", i);
        onnx_entry *existing = onnx_entry_find(im, info->name);
        if (existing && existing->from_initializer)
            continue; /* IR < 4 lists initializers as inputs too: the stored value is the program's */
        if (existing)
            return onnx_fail(err, KILN_ERR_MALFORMED, "graph input '%s' is declared twice", info->name);
        onnx_entry *e;
        kiln_status status = onnx_entry_new(im, info->name, ENTRY_INPUT, &e, err);
        if (status != KILN_OK)
            return status;
        e->info = info;
        /* A cache imported as state (onnx_state.h) is not declared as an input. */
        for (uint32_t s = 0; im->states && s < im->options->state_count; s++)
            if (im->states[s].option->input && strcmp(im->states[s].option->input, info->name) == 0)
                e->state = s + 1;
        if (!info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            e->kind = ENTRY_BROKEN;
            const char *what = !info->type ? "has no type"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "is a sequence"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE      ? "is a map"
                               : info->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "is an optional"
                                                                                                 : "is not a tensor";
            status = onnx_report_line(im, err, "graph input '%s' %s: only tensors are supported", info->name, what);
            if (status != KILN_OK)
                return status;
            continue;
        }
        kiln_dtype dtype;
        kiln_error dtype_err;
        if (input_dtype(info, &dtype, &dtype_err) != KILN_OK) {
            e->kind = ENTRY_BROKEN;
            status = onnx_report_line(im, err, "%s", dtype_err.message);
            if (status != KILN_OK)
                return status;
            continue;
        }
        const kiln_tensor *known = known_input(im, info->name);
        char shape[1024];
        /* A known value with --dim given: the sizes --dim names are declared here, its others are the value's. */
        if (!known || im->options->dim_count)
            status = input_shape_text(im, info, known, shape, sizeof shape, undeclared, sizeof undeclared,
                                      &undeclared_count, err);
        if (status != KILN_OK)
            return status;
        /* A known value is declared when first used as a value, and folded where a constant is needed. */
        if (known)
            e->constant = known;
    }
    char unused[1024] = "";
    for (uint32_t d = 0; d < im->options->dim_count; d++)
        if (!im->dim_declared[d])
            append_unused_dim(im, im->options->dims[d].name, unused, sizeof unused);
    if (undeclared_count && unused[0])
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%u input size%s need%s a declaration (--dim NAME=MIN..MAX): %s; and --dim names no input "
                         "size of the model: %s", undeclared_count, undeclared_count == 1 ? "" : "s",
                         undeclared_count == 1 ? "s" : "", undeclared, unused);
    if (undeclared_count)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%u input size%s need%s a declaration (--dim NAME=MIN..MAX): %s", undeclared_count,
                         undeclared_count == 1 ? "" : "s", undeclared_count == 1 ? "s" : "", undeclared);
    if (unused[0])
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "--dim names no input size of the model: %s", unused);
    /* Every size is known: declare the inputs in the model's order (a cache imported as state is none). */
    for (size_t i = 0; i < g->n_input; i++) {
        onnx_entry *e = onnx_entry_find(im, g->input[i]->name);
        if (e->kind == ENTRY_INPUT && !e->constant && !e->state) {
            kiln_status status = onnx_input_declare(im, e, err);
            if (status != KILN_OK)
                return status;
        }
    }
    return KILN_OK;
}
