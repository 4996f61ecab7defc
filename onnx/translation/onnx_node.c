/*
 * onnx_node.c — the node services of onnx_node.h, over the importer's
 * value table: what a mapping asks of its node, answered from entries.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_entry_value.h"
#include "onnx_error.h"
#include "onnx_node.h"
#include "onnx_value_table.h"

static const char *node_input_name(const onnx_node *node, uint32_t index)
{
    return index < node->proto->n_input ? node->proto->input[index] : "";
}

bool onnx_node_has_input(const onnx_node *node, uint32_t index)
{
    return node_input_name(node, index)[0] != '\0';
}

bool onnx_node_output_read(const onnx_node *node, uint32_t index)
{
    const onnx_name_table *read = node->importer->read_names;
    return index < node->proto->n_output && node->proto->output[index][0] &&
           (!read || onnx_names_find(read, node->proto->output[index], NULL));
}

kiln_status onnx_node_unsupported(onnx_node *node, const char *fmt, ...)
{
    char reason[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    kiln_status status = onnx_report_line(node->importer, node->err, "%s: %s", node->label, reason);
    if (status != KILN_OK)
        return status;
    return onnx_fail(node->err, KILN_ERR_UNSUPPORTED_OP, "%s: %s", node->label, reason);
}

kiln_status onnx_node_input(onnx_node *node, uint32_t index, kiln_value *out)
{
    const char *name = node_input_name(node, index);
    if (!name[0])
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: input %u is missing", node->label, index);
    onnx_entry *e = onnx_entry_find(node->importer, name);
    if (!e)
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: input %u ('%s') is not produced by an earlier node",
                         node->label, index, name);
    return onnx_entry_value(node->importer, e, out, node->err);
}

bool onnx_node_is_constant(const onnx_node *node, uint32_t index)
{
    const char *name = node_input_name(node, index);
    onnx_entry *e = name[0] ? onnx_entry_find(node->importer, name) : NULL;
    return e && e->constant;
}

kiln_status onnx_node_constant(onnx_node *node, uint32_t index, const kiln_tensor **out)
{
    const char *name = node_input_name(node, index);
    onnx_entry *e = name[0] ? onnx_entry_find(node->importer, name) : NULL;
    if (e && e->kind == ENTRY_SYMBOLIC) {
        char text[512] = "";
        for (uint32_t i = 0; i < e->symbolic_count; i++)
            onnx_append_text(text, sizeof text, "%s%s", i ? ", " : "", e->symbolic[i]);
        return onnx_node_unsupported(node, "input %u ('%s') is [%s], computed from symbolic sizes: %s does not "
                                           "take symbolic sizes there",
                                     index, name, text, node->proto->op_type);
    }
    if (!e || !e->constant)
        return onnx_node_unsupported(node, "input %u ('%s') must be a constant (an initializer or a Constant "
                                           "node): it is computed at run time",
                                     index, name);
    *out = e->constant;
    return KILN_OK;
}

kiln_status onnx_node_constant_ints(onnx_node *node, uint32_t index, int64_t *values, uint32_t max,
                                    uint32_t *count)
{
    const kiln_tensor *t;
    kiln_status status = onnx_node_constant(node, index, &t);
    if (status != KILN_OK)
        return status;
    uint64_t n = kiln_tensor_element_count(t);
    kiln_dtype dtype = kiln_tensor_dtype(t);
    if (dtype != KILN_I64 && dtype != KILN_I32)
        return onnx_node_unsupported(node, "input %u ('%s') must hold i32 or i64 integers, not %s", index,
                                     node_input_name(node, index), kiln_dtype_name(dtype));
    if (n > max)
        return onnx_node_unsupported(node, "input %u ('%s') holds %llu values, more than the %u kiln takes", index,
                                     node_input_name(node, index), (unsigned long long)n, max);
    for (uint64_t i = 0; i < n; i++)
        values[i] = dtype == KILN_I64 ? ((const int64_t *)kiln_tensor_const_data(t))[i]
                                      : ((const int32_t *)kiln_tensor_const_data(t))[i];
    *count = (uint32_t)n;
    return KILN_OK;
}

const Onnx__AttributeProto *onnx_node_attribute(const onnx_node *node, const char *name)
{
    for (size_t i = 0; i < node->proto->n_attribute; i++)
        if (node->proto->attribute[i]->name && strcmp(node->proto->attribute[i]->name, name) == 0)
            return node->proto->attribute[i];
    return NULL;
}

int64_t onnx_node_int(const onnx_node *node, const char *name, int64_t fallback)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    return a ? a->i : fallback;
}

double onnx_node_float(const onnx_node *node, const char *name, double fallback)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    return a ? (double)a->f : fallback;
}

const char *onnx_node_string(const onnx_node *node, const char *name, const char *fallback, char *buffer,
                             size_t size)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    if (!a || !a->has_s)
        return fallback;
    size_t n = a->s.len < size - 1 ? a->s.len : size - 1;
    if (n)
        memcpy(buffer, a->s.data, n);
    buffer[n] = '\0';
    return buffer;
}

kiln_status onnx_node_type(onnx_node *node, kiln_value value, kiln_dtype *dtype, uint32_t *rank,
                           int64_t sizes[KILN_MAX_RANK])
{
    return kiln_builder_value_type(node->importer->builder, value, dtype, rank, sizes, node->err);
}

bool onnx_node_is_symbolic(const onnx_node *node, uint32_t index)
{
    const char *name = node_input_name(node, index);
    onnx_entry *e = name[0] ? onnx_entry_find(node->importer, name) : NULL;
    return e && e->kind == ENTRY_SYMBOLIC;
}

kiln_status onnx_node_symbolic_sizes(onnx_node *node, uint32_t index, const char **texts, uint32_t max,
                                     uint32_t *count)
{
    const char *name = node_input_name(node, index);
    onnx_entry *e = name[0] ? onnx_entry_find(node->importer, name) : NULL;
    if (!e || e->kind != ENTRY_SYMBOLIC)
        return onnx_fail(node->err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is not symbolic", node->label, index);
    if (e->symbolic_rank > 1 || e->symbolic_count > max)
        return onnx_node_unsupported(node, "input %u ('%s') must hold at most %u sizes in one axis", index, name,
                                     max);
    for (uint32_t i = 0; i < e->symbolic_count; i++)
        texts[i] = e->symbolic[i];
    *count = e->symbolic_count;
    return KILN_OK;
}

kiln_status onnx_node_axis_text(onnx_node *node, kiln_value value, uint32_t axis, char *buffer, size_t size)
{
    return kiln_builder_value_axis_text(node->importer->builder, value, axis, buffer, size, NULL, node->err);
}

kiln_status onnx_node_canonical_size(onnx_node *node, const char *expression, char *buffer, size_t size)
{
    size_t length;
    kiln_status status =
        kiln_builder_canonical_size(node->importer->builder, expression, buffer, size, &length, node->err);
    if (status == KILN_OK && length >= size)
        status = onnx_fail(node->err, KILN_ERR_LIMIT, "%s: the size %s is too long", node->label, expression);
    return status;
}

bool onnx_node_find_sizes(onnx_node *node, const char *a, const char *b, kiln_value *value, uint32_t *rank,
                          uint32_t *axis_a, uint32_t *axis_b)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const onnx_entry *e = &im->entries[i];
        kiln_dtype dtype;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, rank, NULL, NULL) != KILN_OK)
            continue;
        bool found_a = false, found_b = false;
        for (uint32_t x = 0; x < *rank; x++) {
            if (kiln_builder_value_axis_text(im->builder, e->value, x, text, sizeof text, NULL, NULL) != KILN_OK)
                break;
            if (!found_a && strcmp(text, a) == 0) {
                found_a = true;
                *axis_a = x;
            } else if (!found_b && strcmp(text, b) == 0) {
                found_b = true;
                *axis_b = x;
            }
        }
        if (found_a && found_b) {
            *value = e->value;
            return true;
        }
    }
    return false;
}

bool onnx_node_find_size(onnx_node *node, const char *a, kiln_value *value, uint32_t *rank, uint32_t *axis)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const onnx_entry *e = &im->entries[i];
        kiln_dtype dtype;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, rank, NULL, NULL) != KILN_OK)
            continue;
        for (uint32_t x = 0; x < *rank; x++) {
            if (kiln_builder_value_axis_text(im->builder, e->value, x, text, sizeof text, NULL, NULL) != KILN_OK)
                break;
            if (strcmp(text, a) == 0) {
                *axis = x;
                *value = e->value;
                return true;
            }
        }
    }
    return false;
}

bool onnx_node_size_max(onnx_node *node, const char *text, int64_t *max)
{
    onnx_importer *im = node->importer;
    char *end;
    long long constant = strtoll(text, &end, 10);
    if (end != text && !*end) {
        *max = constant;
        return true;
    }
    for (uint32_t d = 0; d < im->options->dim_count; d++) {
        char identifier[256];
        onnx_make_identifier(im->options->dims[d].name, identifier, sizeof identifier);
        if (im->dim_declared[d] && strcmp(identifier, text) == 0) {
            *max = im->options->dims[d].max;
            return true;
        }
    }
    return false;
}

bool onnx_node_find_shape(onnx_node *node, const char *const *texts, uint32_t count, kiln_value *value)
{
    onnx_importer *im = node->importer;
    for (uint32_t i = 0; i < im->entry_count; i++) {
        const onnx_entry *e = &im->entries[i];
        kiln_dtype dtype;
        uint32_t rank, a = 0;
        char text[SIZE_TEXT_MAX];
        if (!e->has_value || kiln_builder_value_type(im->builder, e->value, &dtype, &rank, NULL, NULL) != KILN_OK ||
            rank != count)
            continue;
        while (a < rank && kiln_builder_value_axis_text(im->builder, e->value, a, text, sizeof text, NULL, NULL) ==
                               KILN_OK &&
               strcmp(text, texts[a]) == 0)
            a++;
        if (a == rank) {
            *value = e->value;
            return true;
        }
    }
    return false;
}

kiln_status onnx_node_emit(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                           uint32_t attribute_count, const kiln_attribute *attributes, kiln_value *out)
{
    kiln_error kiln_err;
    kiln_status status = kiln_builder_add_op_with_attributes(node->importer->builder, op, input_count, inputs,
                                                             attribute_count, attributes, out, &kiln_err);
    if (status == KILN_ERR_OUT_OF_MEMORY)
        return onnx_fail(node->err, status, "%s", kiln_err.message);
    if (status != KILN_OK)
        return onnx_node_unsupported(node, "kiln refuses %s: %s", op, kiln_err.message);
    /* Every kiln node an ONNX node maps to carries the ONNX node's name
     * (spec/onnx-import.md §2, "Node names"). A name kiln cannot store
     * (longer than 1024 bytes, not UTF-8 text) is left out: it is
     * metadata, and the import does not fail for it. */
    const char *name = node->proto->name;
    if (name && name[0] && out) {
        status = kiln_builder_set_node_name(node->importer->builder, *out, name, &kiln_err);
        if (status == KILN_ERR_OUT_OF_MEMORY)
            return onnx_fail(node->err, status, "%s", kiln_err.message);
    }
    return KILN_OK;
}

kiln_status onnx_node_constant_tensor(onnx_node *node, const char *name, const kiln_tensor *tensor, kiln_value *out)
{
    onnx_importer *im = node->importer;
    const char *kiln_name;
    kiln_error kiln_err;
    kiln_status status = onnx_unique_kiln_name(im, &im->kiln_names, name, &kiln_name, node->err);
    if (status != KILN_OK)
        return status;
    status = kiln_builder_add_weight(im->builder, kiln_name, KILN_WEIGHT_CONSTANT, kiln_tensor_dtype(tensor),
                                     kiln_tensor_rank(tensor), kiln_tensor_shape(tensor),
                                     kiln_tensor_const_data(tensor), out, &kiln_err);
    if (status == KILN_ERR_OUT_OF_MEMORY)
        return onnx_fail(node->err, status, "%s", kiln_err.message);
    if (status != KILN_OK)
        return onnx_node_unsupported(node, "constant '%s': %s", kiln_name, kiln_err.message);
    return KILN_OK;
}

kiln_status onnx_node_scalar(onnx_node *node, kiln_dtype dtype, double value, kiln_value *out)
{
    kiln_error kiln_err;
    kiln_status status = kiln_builder_add_scalar(node->importer->builder, dtype, value, out, &kiln_err);
    if (status != KILN_OK)
        return onnx_node_unsupported(node, "constant %g as %s: %s", value, kiln_dtype_name(dtype), kiln_err.message);
    return KILN_OK;
}

static kiln_status output_entry(onnx_node *node, uint32_t index, onnx_entry **out)
{
    if (index >= node->proto->n_output || !node->proto->output[index][0])
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: output %u is missing", node->label, index);
    const char *name = node->proto->output[index];
    if (onnx_entry_find(node->importer, name))
        return onnx_fail(node->err, KILN_ERR_MALFORMED, "%s: output '%s' is already defined", node->label, name);
    return onnx_entry_new(node->importer, name, ENTRY_VALUE, out, node->err);
}

kiln_status onnx_node_set_output(onnx_node *node, uint32_t index, kiln_value value)
{
    onnx_entry *e = NULL;
    kiln_status status = KILN_OK;
    /* A symbolic value translated because something uses it as data (onnx_symbolic_translate). */
    if (index < node->proto->n_output && node->proto->output[index][0])
        e = onnx_entry_find(node->importer, node->proto->output[index]);
    if (!e || e->kind != ENTRY_SYMBOLIC || e->has_value)
        status = output_entry(node, index, &e);
    if (status != KILN_OK)
        return status;
    e->has_value = true;
    e->value = value;
    return KILN_OK;
}

kiln_status onnx_node_set_constant_output(onnx_node *node, uint32_t index, kiln_tensor *tensor)
{
    onnx_entry *e;
    kiln_status status = output_entry(node, index, &e);
    if (status != KILN_OK) {
        kiln_tensor_free(tensor);
        return status;
    }
    e->kind = ENTRY_CONSTANT;
    e->constant = e->owned_constant = tensor;
    return KILN_OK;
}

/* "node 3 'name' (Relu)" */
void onnx_node_label(const Onnx__NodeProto *proto, size_t index, char *label, size_t size)
{
    snprintf(label, size, "node %zu%s%s%s (%s)", index, proto->name && proto->name[0] ? " '" : "",
             proto->name ? proto->name : "", proto->name && proto->name[0] ? "'" : "", proto->op_type);
}

bool onnx_node_is_state_rows(const onnx_node *node, kiln_value value)
{
    const onnx_importer *im = node->importer;
    for (uint32_t s = 0; im->states && s < im->options->state_count; s++)
        if (im->states[s].appended && im->states[s].appended_value == value)
            return true;
    return false;
}

const Onnx__NodeProto *onnx_node_producer(const onnx_node *node, const char *name)
{
    const onnx_importer *im = node->importer;
    uint32_t at;
    if (!im->producers.keys || !onnx_names_find(&im->producers, name, &at))
        return NULL;
    return im->model->graph->node[at];
}
