/* onnx_map_common.c — the helpers the mappings share (declared in onnx_mapping.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_mapping.h"
#include "onnx_model.h"

static kiln_attribute *attr_next(onnx_attrs *list, const char *name, kiln_attribute_type type)
{
    if (list->count == ONNX_ATTRS_MAX)
        return NULL;
    kiln_attribute *a = &list->items[list->count++];
    *a = (kiln_attribute){.name = name, .type = type};
    return a;
}

void onnx_attrs_int(onnx_attrs *list, const char *name, int64_t value)
{
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_INT);
    if (a)
        a->i = value;
}

void onnx_attrs_float(onnx_attrs *list, const char *name, double value)
{
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_FLOAT);
    if (a)
        a->f = value;
}

/* @return false if the pool is full (the caller reports it). */
bool onnx_attrs_ints(onnx_attrs *list, const char *name, const int64_t *values, uint32_t count)
{
    if (count > ONNX_ATTRS_INT_POOL - list->ints_used)
        return false;
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_INTS);
    if (!a)
        return false;
    int64_t *copy = &list->ints[list->ints_used];
    if (count)
        memcpy(copy, values, count * sizeof *values);
    list->ints_used += count;
    a->ints = copy;
    a->count = count;
    return true;
}

bool onnx_attrs_floats(onnx_attrs *list, const char *name, const float *values, uint32_t count)
{
    if (count > ONNX_ATTRS_FLOAT_POOL - list->floats_used)
        return false;
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_FLOATS);
    if (!a)
        return false;
    double *copy = &list->floats[list->floats_used];
    for (uint32_t i = 0; i < count; i++)
        copy[i] = values[i];
    list->floats_used += count;
    a->floats = copy;
    a->count = count;
    return true;
}

bool onnx_attrs_doubles(onnx_attrs *list, const char *name, const double *values, uint32_t count)
{
    if (count > ONNX_ATTRS_FLOAT_POOL - list->floats_used)
        return false;
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_FLOATS);
    if (!a)
        return false;
    double *copy = &list->floats[list->floats_used];
    if (count)
        memcpy(copy, values, count * sizeof *values);
    list->floats_used += count;
    a->floats = copy;
    a->count = count;
    return true;
}

bool onnx_attrs_string(onnx_attrs *list, const char *name, const char *text, size_t length)
{
    if (list->text_used == 4 || length >= ONNX_ATTRS_TEXT_MAX)
        return false;
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_STRING);
    if (!a)
        return false;
    char *copy = list->text[list->text_used++];
    if (length) /* an empty attribute string may have no bytes at all */
        memcpy(copy, text, length);
    copy[length] = '\0';
    a->s = copy;
    return true;
}

static bool name_in(const char *name, const char *const *names)
{
    for (; names && *names; names++)
        if (strcmp(name, *names) == 0)
            return true;
    return false;
}

/* The attribute's type, inferred from its fields when an old writer left `type` unset. */
static int attribute_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return a->type;
    if (a->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
}

/*
 * Copy every attribute of the node but those in `skip` (NULL-terminated)
 * to `list` under the same name: kiln's ops take ONNX's attribute names
 * where they mean the same thing, and kiln refuses (by name) any it does
 * not take.
 */
kiln_status onnx_attrs_copy(onnx_node *node, onnx_attrs *list, const char *const *skip)
{
    for (size_t i = 0; i < node->proto->n_attribute; i++) {
        const Onnx__AttributeProto *a = node->proto->attribute[i];
        if (!a->name || name_in(a->name, skip))
            continue;
        /* Opsets 1..6 let a node name inputs it may overwrite in place: a hint with no effect on the result. */
        if (node->opset < 7 && strcmp(a->name, "consumed_inputs") == 0)
            continue;
        /* LpPool-1 and GlobalLpPool-1 take p as a FLOAT (an INT from opset 2): a whole p is the same norm. */
        if (node->opset < 2 && strcmp(a->name, "p") == 0 && attribute_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
            if (!(a->f >= 1 && a->f <= 2147483647.0f && a->f == floorf(a->f)))
                return onnx_node_unsupported(node, "attribute 'p' is %g: kiln's p is a whole number", a->f);
            onnx_attrs_int(list, "p", (int64_t)a->f);
            continue;
        }
        if (a->ref_attr_name && a->ref_attr_name[0])
            return onnx_node_unsupported(node, "attribute '%s' refers to a function attribute", a->name);
        bool ok = true;
        switch (attribute_type(a)) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: onnx_attrs_int(list, a->name, a->i); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: onnx_attrs_float(list, a->name, a->f); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
            ok = onnx_attrs_string(list, a->name, (const char *)a->s.data, a->s.len);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
            ok = a->n_ints <= UINT32_MAX && onnx_attrs_ints(list, a->name, a->ints, (uint32_t)a->n_ints);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
            ok = a->n_floats <= UINT32_MAX && onnx_attrs_floats(list, a->name, a->floats, (uint32_t)a->n_floats);
            break;
        default:
            return onnx_node_unsupported(node, "attribute '%s' has a type (%d) kiln attributes cannot hold", a->name,
                                         attribute_type(a));
        }
        if (!ok || list->count == ONNX_ATTRS_MAX)
            return onnx_node_unsupported(node, "attribute '%s' is too large for kiln", a->name);
    }
    return KILN_OK;
}

kiln_status onnx_map_inputs(onnx_node *node, uint32_t first, uint32_t count, kiln_value *values)
{
    for (uint32_t i = 0; i < count; i++) {
        kiln_status status = onnx_node_input(node, first + i, &values[i]);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/* The number of inputs, without trailing omitted ones. */
uint32_t onnx_map_present_inputs(const onnx_node *node)
{
    uint32_t n = (uint32_t)node->proto->n_input;
    while (n > 0 && !onnx_node_has_input(node, n - 1))
        n--;
    return n;
}

/* Outputs after the first that a node may declare but that kiln has no value for: refused only when read. */
kiln_status onnx_map_refuse_extra_outputs(onnx_node *node, uint32_t kept)
{
    for (size_t o = kept; o < node->proto->n_output; o++)
        if (onnx_node_output_read(node, (uint32_t)o))
            return onnx_node_unsupported(node, "output %zu ('%s') is not supported (only the first %u)", o,
                                         node->proto->output[o], kept);
    return KILN_OK;
}

kiln_status onnx_map_emit_output(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                               const onnx_attrs *list)
{
    kiln_value out;
    kiln_status status = onnx_node_emit(node, op, input_count, inputs, list ? list->count : 0,
                                        list ? list->items : NULL, &out);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, out);
    return status;
}

/* The first element of `t` as a double. @return false for a dtype without numbers. */
static bool first_element(const kiln_tensor *t, double *out)
{
    const void *p = kiln_tensor_const_data(t);
    switch (kiln_tensor_dtype(t)) {
    case KILN_F32: *out = *(const float *)p; break;
    case KILN_F64: *out = *(const double *)p; break;
    case KILN_I8: *out = *(const int8_t *)p; break;
    case KILN_I16: *out = *(const int16_t *)p; break;
    case KILN_I32: *out = *(const int32_t *)p; break;
    case KILN_I64: *out = (double)*(const int64_t *)p; break;
    case KILN_U8: *out = *(const uint8_t *)p; break;
    case KILN_U16: *out = *(const uint16_t *)p; break;
    case KILN_U32: *out = *(const uint32_t *)p; break;
    case KILN_U64: *out = (double)*(const uint64_t *)p; break;
    case KILN_BOOL: *out = *(const uint8_t *)p != 0; break;
    default: return false;
    }
    return true;
}

/* A constant scalar operand (any numeric dtype, one element) as a double. */
kiln_status onnx_map_constant_scalar(onnx_node *node, uint32_t index, double *out)
{
    const kiln_tensor *t;
    kiln_status status = onnx_node_constant(node, index, &t);
    if (status != KILN_OK)
        return status;
    if (kiln_tensor_element_count(t) != 1)
        return onnx_node_unsupported(node, "input %u must hold one value, it holds %llu", index,
                                     (unsigned long long)kiln_tensor_element_count(t));
    if (!first_element(t, out))
        return onnx_node_unsupported(node, "input %u has dtype %s", index, kiln_dtype_name(kiln_tensor_dtype(t)));
    return KILN_OK;
}

/* Integer list from attribute `name` (opset < `input_from`) or from constant input `index` (later opsets). */
kiln_status onnx_map_ints_operand(onnx_node *node, const char *name, int64_t input_from, uint32_t index,
                                           int64_t *values, uint32_t max, uint32_t *count, bool *present)
{
    *count = 0;
    if (node->opset < input_from) {
        const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
        *present = a != NULL;
        if (!a)
            return KILN_OK;
        if (a->n_ints > max)
            return onnx_node_unsupported(node, "attribute '%s' has %zu values, more than the %u kiln takes", name,
                                         a->n_ints, max);
        if (a->n_ints)
            memcpy(values, a->ints, a->n_ints * sizeof *values);
        *count = (uint32_t)a->n_ints;
        return KILN_OK;
    }
    /* The attribute form is gone at this version: taking it would compute the older version's meaning. */
    if (onnx_node_attribute(node, name))
        return onnx_node_unsupported(node, "attribute '%s' is not part of %s at opset %lld: from opset %lld it is input %u",
                                     name, node->proto->op_type, (long long)node->opset, (long long)input_from, index);
    *present = onnx_node_has_input(node, index);
    if (!*present)
        return KILN_OK;
    return onnx_node_constant_ints(node, index, values, max, count);
}

/* Cast `*value` to `dtype` unless it has it already. */
kiln_status onnx_map_cast_to(onnx_node *node, kiln_value *value, kiln_dtype dtype)
{
    kiln_dtype have;
    uint32_t rank;
    kiln_status status = onnx_node_type(node, *value, &have, &rank, NULL);
    if (status != KILN_OK || have == dtype)
        return status;
    onnx_attrs list = {0};
    const char *name = kiln_dtype_name(dtype);
    onnx_attrs_string(&list, "to", name, strlen(name));
    return onnx_node_emit(node, "cast", 1, value, list.count, list.items, value);
}

/* The kiln dtype of ONNX attribute `name` (an element type code), or `fallback` when absent. */
kiln_status onnx_map_dtype_attribute(onnx_node *node, const char *name, kiln_dtype fallback, kiln_dtype *out)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    kiln_error dtype_err;
    *out = fallback;
    if (a && onnx_dtype_to_kiln((int32_t)a->i, out, &dtype_err) != KILN_OK)
        return onnx_node_unsupported(node, "attribute '%s': %s", name, dtype_err.message);
    return KILN_OK;
}

/* The one element of a constant tensor as a double, and its dtype. */
kiln_status onnx_map_tensor_scalar(onnx_node *node, const kiln_tensor *t, const char *what, double *value)
{
    if (kiln_tensor_element_count(t) != 1)
        return onnx_node_unsupported(node, "%s must hold one value, it holds %llu", what,
                                     (unsigned long long)kiln_tensor_element_count(t));
    const void *p = kiln_tensor_const_data(t);
    switch (kiln_tensor_dtype(t)) {
    case KILN_F32: *value = *(const float *)p; break;
    case KILN_F64: *value = *(const double *)p; break;
    case KILN_I8: *value = *(const int8_t *)p; break;
    case KILN_I16: *value = *(const int16_t *)p; break;
    case KILN_I32: *value = *(const int32_t *)p; break;
    case KILN_U8: *value = *(const uint8_t *)p; break;
    case KILN_U16: *value = *(const uint16_t *)p; break;
    case KILN_U32: *value = *(const uint32_t *)p; break;
    case KILN_BOOL: *value = *(const uint8_t *)p != 0; break;
    case KILN_I64: {
        int64_t v = *(const int64_t *)p;
        /* kiln's FLOAT attributes hold integers exactly only up to 2^53. */
        if (v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53))
            return onnx_node_unsupported(node, "%s %lld is beyond 2^53 in magnitude", what, (long long)v);
        *value = (double)v;
        break;
    }
    case KILN_U64: {
        uint64_t v = *(const uint64_t *)p;
        if (v > (UINT64_C(1) << 53))
            return onnx_node_unsupported(node, "%s %llu is beyond 2^53", what, (unsigned long long)v);
        *value = (double)v;
        break;
    }
    default:
        return onnx_node_unsupported(node, "%s has dtype %s", what, kiln_dtype_name(kiln_tensor_dtype(t)));
    }
    return KILN_OK;
}

bool onnx_shape_text(const char *const *sizes, uint32_t count, char *text, size_t size)
{
    size_t used = (size_t)snprintf(text, size, "[");
    for (uint32_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%s", i ? ", " : "", sizes[i]);
    if (used < size)
        used += (size_t)snprintf(text + used, size - used, "]");
    return used < size;
}
