/*
 * onnx_ops.c — the table of ONNX ops kiln can express, and how.
 *
 * Most ONNX ops are a kiln op under another name whose attributes carry
 * over unchanged (map_rename). Others take operands ONNX passes as tensors
 * but kiln as attributes — shapes, axes, pads, repeats — which must be
 * constant at import (onnx_node_constant_ints); others again are
 * decompositions (PRelu, Mish, opset < 13 Softmax, Clip with computed
 * bounds, Split; the losses and quantization, in onnx_map_loss.c and
 * onnx_map_quantize.c).
 * Semantics follow the ONNX operator documentation of the opset versions
 * listed in each row.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_error.h"
#include "onnx_map_loss.h"
#include "onnx_map_quantize.h"
#include "onnx_model.h"
#include "onnx_ops.h"

/* ------------------------------------------------------- attribute lists */

#define ATTR_MAX 16
#define ATTR_INT_POOL 128
#define ATTR_FLOAT_POOL 64
#define ATTR_TEXT_MAX 64

/* Attributes for one kiln op, with storage for their values. */
typedef struct attr_list {
    kiln_attribute items[ATTR_MAX];
    uint32_t count;
    int64_t ints[ATTR_INT_POOL];
    uint32_t ints_used;
    double floats[ATTR_FLOAT_POOL];
    uint32_t floats_used;
    char text[4][ATTR_TEXT_MAX];
    uint32_t text_used;
} attr_list;

static kiln_attribute *attr_next(attr_list *list, const char *name, kiln_attribute_type type)
{
    if (list->count == ATTR_MAX)
        return NULL;
    kiln_attribute *a = &list->items[list->count++];
    *a = (kiln_attribute){.name = name, .type = type};
    return a;
}

static void attr_int(attr_list *list, const char *name, int64_t value)
{
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_INT);
    if (a)
        a->i = value;
}

static void attr_float(attr_list *list, const char *name, double value)
{
    kiln_attribute *a = attr_next(list, name, KILN_ATTRIBUTE_FLOAT);
    if (a)
        a->f = value;
}

/* @return false if the pool is full (the caller reports it). */
static bool attr_ints(attr_list *list, const char *name, const int64_t *values, uint32_t count)
{
    if (count > ATTR_INT_POOL - list->ints_used)
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

static bool attr_floats(attr_list *list, const char *name, const float *values, uint32_t count)
{
    if (count > ATTR_FLOAT_POOL - list->floats_used)
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

static bool attr_string(attr_list *list, const char *name, const char *text, size_t length)
{
    if (list->text_used == 4 || length >= ATTR_TEXT_MAX)
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
static kiln_status copy_attributes(onnx_node *node, attr_list *list, const char *const *skip)
{
    for (size_t i = 0; i < node->proto->n_attribute; i++) {
        const Onnx__AttributeProto *a = node->proto->attribute[i];
        if (!a->name || name_in(a->name, skip))
            continue;
        if (a->ref_attr_name && a->ref_attr_name[0])
            return onnx_node_unsupported(node, "attribute '%s' refers to a function attribute", a->name);
        bool ok = true;
        switch (attribute_type(a)) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: attr_int(list, a->name, a->i); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: attr_float(list, a->name, a->f); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
            ok = attr_string(list, a->name, (const char *)a->s.data, a->s.len);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
            ok = a->n_ints <= UINT32_MAX && attr_ints(list, a->name, a->ints, (uint32_t)a->n_ints);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
            ok = a->n_floats <= UINT32_MAX && attr_floats(list, a->name, a->floats, (uint32_t)a->n_floats);
            break;
        default:
            return onnx_node_unsupported(node, "attribute '%s' has a type (%d) kiln attributes cannot hold", a->name,
                                         attribute_type(a));
        }
        if (!ok || list->count == ATTR_MAX)
            return onnx_node_unsupported(node, "attribute '%s' is too large for kiln", a->name);
    }
    return KILN_OK;
}

/* ---------------------------------------------------------- small pieces */

static kiln_status node_inputs(onnx_node *node, uint32_t first, uint32_t count, kiln_value *values)
{
    for (uint32_t i = 0; i < count; i++) {
        kiln_status status = onnx_node_input(node, first + i, &values[i]);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/* The number of inputs, without trailing omitted ones. */
static uint32_t present_inputs(const onnx_node *node)
{
    uint32_t n = (uint32_t)node->proto->n_input;
    while (n > 0 && !onnx_node_has_input(node, n - 1))
        n--;
    return n;
}

/* Outputs after the first that a node may declare but that kiln has no value for. */
static kiln_status refuse_extra_outputs(onnx_node *node, uint32_t kept)
{
    for (size_t o = kept; o < node->proto->n_output; o++)
        if (node->proto->output[o][0])
            return onnx_node_unsupported(node, "output %zu ('%s') is not supported (only the first %u)", o,
                                         node->proto->output[o], kept);
    return KILN_OK;
}

static kiln_status emit_output(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                               const attr_list *list)
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
static kiln_status constant_scalar(onnx_node *node, uint32_t index, double *out)
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
static kiln_status ints_attribute_or_input(onnx_node *node, const char *name, int64_t input_from, uint32_t index,
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
    *present = onnx_node_has_input(node, index);
    if (!*present)
        return KILN_OK;
    return onnx_node_constant_ints(node, index, values, max, count);
}

/* Cast `*value` to `dtype` unless it has it already. */
static kiln_status cast_to(onnx_node *node, kiln_value *value, kiln_dtype dtype)
{
    kiln_dtype have;
    uint32_t rank;
    kiln_status status = onnx_node_type(node, *value, &have, &rank, NULL);
    if (status != KILN_OK || have == dtype)
        return status;
    attr_list list = {0};
    const char *name = kiln_dtype_name(dtype);
    attr_string(&list, "to", name, strlen(name));
    return onnx_node_emit(node, "cast", 1, value, list.count, list.items, value);
}

/* ---------------------------------------------------------------- mappings */

/* Same inputs, same attributes, another name. */
static kiln_status map_rename(onnx_node *node, const char *kiln_op)
{
    /* Opsets 1..5 let a node name inputs it may overwrite in place: a hint with no effect on the result. */
    static const char *const skip[] = {"consumed_inputs", NULL};
    kiln_value inputs[64];
    uint32_t count = present_inputs(node);
    attr_list list = {0};
    kiln_status status = node_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = copy_attributes(node, &list, skip);
    if (status == KILN_OK)
        status = refuse_extra_outputs(node, 1);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, count, inputs, &list);
    return status;
}

/*
 * Identity, and Dropout in inference: a copy, and its optional mask output
 * all true (nothing is dropped), for inputs of constant shape. Dropout in
 * training mode with a ratio of exactly 0 is the same (it keeps every
 * element and scales by 1 / (1 - 0)); any other ratio draws random numbers.
 */
static kiln_status map_identity(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    bool dropout = strcmp(node->proto->op_type, "Dropout") == 0;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && dropout) {
        double training = 0, ratio = 0.5;
        if (onnx_node_has_input(node, 2))
            status = constant_scalar(node, 2, &training);
        if (status == KILN_OK && training != 0 && onnx_node_has_input(node, 1))
            status = constant_scalar(node, 1, &ratio);
        if (status == KILN_OK && training != 0 && ratio != 0)
            status = onnx_node_unsupported(node, "training_mode is set with ratio %g: dropping elements at random is "
                                                 "not supported (kiln runs inference)",
                                           ratio);
    }
    if (status == KILN_OK)
        status = refuse_extra_outputs(node, dropout ? 2 : 1);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 1, &x, NULL);
    if (status != KILN_OK || !dropout || node->proto->n_output < 2 || !node->proto->output[1][0])
        return status;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_value truth, mask;
    status = onnx_node_type(node, x, &dtype, &rank, sizes);
    for (uint32_t a = 0; status == KILN_OK && a < rank; a++)
        if (sizes[a] < 0)
            return onnx_node_unsupported(node, "the mask output of an input with symbolic axis %u", a);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, KILN_BOOL, 1.0, &truth);
    attr_list list = {0};
    attr_ints(&list, "shape", sizes, rank);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "expand", 1, &truth, list.count, list.items, &mask);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 1, mask);
    return status;
}

static kiln_status map_constant(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    if (node->proto->n_attribute != 1)
        return onnx_node_unsupported(node, "a Constant takes exactly one value attribute, it has %zu",
                                     node->proto->n_attribute);
    const Onnx__AttributeProto *a = node->proto->attribute[0];
    kiln_tensor *t = NULL;
    kiln_error tensor_err;
    kiln_status status = KILN_OK;
    const char *name = a->name ? a->name : "";
    if (strcmp(name, "value") == 0 && a->t) {
        status = onnx_tensor_to_kiln(a->t, NULL, NULL, &t, &tensor_err);
        if (status != KILN_OK)
            return onnx_node_unsupported(node, "%s", tensor_err.message);
    } else if (strcmp(name, "value_float") == 0 || strcmp(name, "value_int") == 0) {
        bool is_float = name[6] == 'f';
        status = kiln_tensor_new(is_float ? KILN_F32 : KILN_I64, 0, NULL, &t, node->err);
        if (status == KILN_OK && is_float)
            *(float *)kiln_tensor_data(t) = a->f;
        else if (status == KILN_OK)
            *(int64_t *)kiln_tensor_data(t) = a->i;
    } else if (strcmp(name, "value_floats") == 0 || strcmp(name, "value_ints") == 0) {
        bool is_float = name[6] == 'f';
        int64_t n = (int64_t)(is_float ? a->n_floats : a->n_ints);
        status = kiln_tensor_new(is_float ? KILN_F32 : KILN_I64, 1, &n, &t, node->err);
        if (status == KILN_OK && n && is_float)
            memcpy(kiln_tensor_data(t), a->floats, (size_t)n * sizeof(float));
        else if (status == KILN_OK && n)
            memcpy(kiln_tensor_data(t), a->ints, (size_t)n * sizeof(int64_t));
    } else
        return onnx_node_unsupported(node, "Constant attribute '%s' is not supported (strings and sparse tensors)",
                                     name);
    if (status != KILN_OK)
        return status;
    return onnx_node_set_constant_output(node, 0, t);
}

/* Shape: folded to a constant when every size is known, else shape_of (and a slice for start/end). */
static kiln_status map_shape(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status != KILN_OK)
        return status;
    int64_t start = onnx_node_int(node, "start", 0), end = onnx_node_int(node, "end", rank);
    start = start < 0 ? start + rank : start;
    end = end < 0 ? end + rank : end;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    int64_t count = end > start ? end - start : 0;
    bool all_known = true;
    for (int64_t a = start; a < end; a++)
        all_known = all_known && sizes[a] >= 0;
    if (all_known) {
        kiln_tensor *t;
        status = kiln_tensor_new(KILN_I64, 1, &count, &t, node->err);
        if (status != KILN_OK)
            return status;
        for (int64_t a = 0; a < count; a++)
            ((int64_t *)kiln_tensor_data(t))[a] = sizes[start + a];
        return onnx_node_set_constant_output(node, 0, t);
    }
    kiln_value shape;
    status = onnx_node_emit(node, kiln_op, 1, &x, 0, NULL, &shape);
    if (status == KILN_OK && (start != 0 || end != rank)) {
        attr_list list = {0};
        int64_t zero = 0;
        attr_ints(&list, "starts", &start, 1);
        attr_ints(&list, "ends", &end, 1);
        attr_ints(&list, "axes", &zero, 1);
        status = onnx_node_emit(node, "slice", 1, &shape, list.count, list.items, &shape);
    }
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, shape);
    return status;
}

static kiln_status map_cast(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype to;
    kiln_error dtype_err;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status != KILN_OK)
        return status;
    if (onnx_dtype_to_kiln((int32_t)onnx_node_int(node, "to", 0), &to, &dtype_err) != KILN_OK)
        return onnx_node_unsupported(node, "attribute 'to': %s", dtype_err.message);
    attr_list list = {0};
    const char *name = kiln_dtype_name(to);
    attr_string(&list, "to", name, strlen(name));
    return emit_output(node, kiln_op, 1, &x, &list);
}

/* ONNX ops whose shape-like operand (input 1, or an attribute before `input_from`) is a kiln INTS attribute. */
static kiln_status map_shape_operand(onnx_node *node, const char *kiln_op, const char *onnx_attribute,
                                     const char *kiln_attribute, int64_t input_from, bool required)
{
    kiln_value x;
    int64_t values[16];
    uint32_t count = 0;
    bool present = false;
    attr_list list = {0};
    static const char *const skip[] = {"axes", "shape", "allowzero", NULL};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = ints_attribute_or_input(node, onnx_attribute, input_from, 1, values, 16, &count, &present);
    if (status == KILN_OK && required && !present)
        status = onnx_node_unsupported(node, "the %s operand is missing", onnx_attribute);
    if (status == KILN_OK && present && !attr_ints(&list, kiln_attribute, values, count))
        status = onnx_node_unsupported(node, "too many %s", onnx_attribute);
    if (status == KILN_OK)
        status = copy_attributes(node, &list, skip);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

/* ------------------------------------------------- symbolic shape targets */

#define SIZE_TEXT 128

/* @return true and the value if size text `text` is an integer constant. */
static bool size_constant(const char *text, int64_t *value)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end)
        return false;
    *value = v;
    return true;
}

/*
 * Slice x to size 1 on every axis but `keep_a` and `keep_b`, and make it
 * i64 ones of shape [size(keep_a), size(keep_b)]: the frame of the row
 * indices split_axis gathers with. Casting to bool and or-ing with its own
 * negation gives true for every element, NaN included.
 */
static kiln_status ones_like_axes(onnx_node *node, kiln_value x, uint32_t rank, uint32_t keep_a, uint32_t keep_b,
                                  kiln_value *out)
{
    int64_t others[KILN_MAX_RANK], zeros[KILN_MAX_RANK], ones[KILN_MAX_RANK];
    uint32_t n = 0;
    for (uint32_t a = 0; a < rank; a++)
        if (a != keep_a && a != keep_b) {
            others[n] = a;
            zeros[n] = 0;
            ones[n++] = 1;
        }
    kiln_value t = x, truth, falsity, pair[2];
    kiln_status status = KILN_OK;
    if (n) {
        attr_list slice = {0};
        attr_ints(&slice, "starts", zeros, n);
        attr_ints(&slice, "ends", ones, n);
        attr_ints(&slice, "axes", others, n);
        status = onnx_node_emit(node, "slice", 1, &x, slice.count, slice.items, &t);
    }
    if (status == KILN_OK)
        status = cast_to(node, &t, KILN_BOOL);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "not", 1, &t, 0, NULL, &falsity);
    pair[0] = t;
    pair[1] = falsity;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "or", 2, pair, 0, NULL, &truth);
    if (status == KILN_OK)
        status = cast_to(node, &truth, KILN_I64);
    if (status == KILN_OK && n) {
        attr_list squeeze = {0};
        attr_ints(&squeeze, "axes", others, n);
        status = onnx_node_emit(node, "squeeze", 1, &truth, squeeze.count, squeeze.items, &truth);
    }
    if (status == KILN_OK && keep_a > keep_b) {
        attr_list transpose = {0};
        attr_ints(&transpose, "perm", (const int64_t[]){1, 0}, 2);
        status = onnx_node_emit(node, "transpose", 1, &truth, transpose.count, transpose.items, &truth);
    }
    *out = truth;
    return status;
}

/*
 * Split axis `axis` of x, of size A*B, into the two symbolic sizes A and B
 * (`first`, `second`): kiln's reshape cannot, as its target has at most
 * one inferred size, so rows are gathered instead. Row a*B + b of the axis
 * becomes [a, b]: the indices come from ones of shape [A, B] taken from
 * `witness` (a value with axes of sizes A and B), as exclusive cumulative
 * sums (a and b) and a row sum (B).
 */
static kiln_status split_axis(onnx_node *node, kiln_value x, int64_t axis, kiln_value witness, uint32_t witness_rank,
                              uint32_t axis_a, uint32_t axis_b, kiln_value *out)
{
    kiln_value ones, rows, cols, width, scaled, index, pair[2];
    kiln_status status = ones_like_axes(node, witness, witness_rank, axis_a, axis_b, &ones);
    attr_list down = {0}, across = {0}, sum = {0}, gather = {0};
    attr_int(&down, "axis", 0);
    attr_int(&down, "exclusive", 1);
    attr_int(&across, "axis", 1);
    attr_int(&across, "exclusive", 1);
    attr_ints(&sum, "axes", (const int64_t[]){1}, 1);
    attr_int(&sum, "keepdims", 1);
    attr_int(&gather, "axis", axis);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, down.count, down.items, &rows);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, across.count, across.items, &cols);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "reduce_sum", 1, &ones, sum.count, sum.items, &width);
    pair[0] = rows;
    pair[1] = width;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &scaled);
    pair[0] = scaled;
    pair[1] = cols;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &index);
    pair[0] = x;
    pair[1] = index;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "gather", 2, pair, gather.count, gather.items, out);
    return status;
}

/*
 * The one way split_axis applies to reshaping x (sizes `axis`, rank
 * `rank`) to `target` (rank + 1 sizes): every size matches x's but for one
 * axis k whose size is the product of target[k] and target[k+1].
 * @return the axis k, or -1.
 */
static int64_t split_position(onnx_node *node, const char *const *target, uint32_t count,
                              char axis[][SIZE_TEXT], uint32_t rank)
{
    if (count != rank + 1)
        return -1;
    for (uint32_t k = 0; k < rank; k++) {
        bool same = true;
        for (uint32_t i = 0; i < rank && same; i++)
            if (i != k)
                same = strcmp(target[i < k ? i : i + 1], axis[i]) == 0;
        char product[3 * SIZE_TEXT], canonical[SIZE_TEXT];
        snprintf(product, sizeof product, "(%s)*(%s)", target[k], target[k + 1]);
        if (same && onnx_node_canonical_size(node, product, canonical, sizeof canonical) == KILN_OK &&
            strcmp(canonical, axis[k]) == 0)
            return k;
    }
    return -1;
}

/*
 * Reshape to a symbolic target (spec/onnx-import.md §3): each size is a
 * constant, the input's size at the same position (kiln's 0: copy) or, for
 * at most one, inferred (-1) and then checked against the target. A target
 * that splits one axis into two symbolic sizes is split_axis.
 */
static kiln_status map_symbolic_reshape(onnx_node *node, const char *kiln_op)
{
    kiln_value x, y;
    kiln_dtype dtype;
    uint32_t rank, count;
    const char *target[KILN_MAX_RANK + 1];
    char axis[KILN_MAX_RANK][SIZE_TEXT], got[SIZE_TEXT], listed[512] = "", target_text[512] = "";
    int64_t shape[KILN_MAX_RANK + 1];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_symbolic_sizes(node, 1, target, KILN_MAX_RANK + 1, &count);
    for (uint32_t a = 0; status == KILN_OK && a < rank; a++)
        status = onnx_node_axis_text(node, x, a, axis[a], SIZE_TEXT);
    if (status != KILN_OK)
        return status;
    uint32_t unresolved = 0, minus_ones = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t used = strlen(target_text);
        snprintf(target_text + used, sizeof target_text - used, "%s%s", i ? ", " : "", target[i]);
        if (size_constant(target[i], &shape[i])) {
            minus_ones += shape[i] == -1;
            continue;
        }
        if (i < rank && strcmp(target[i], axis[i]) == 0) {
            shape[i] = 0;
            continue;
        }
        shape[i] = -1;
        unresolved++;
        used = strlen(listed);
        snprintf(listed + used, sizeof listed - used, "%s%s (axis %u)", used ? ", " : "", target[i], i);
    }
    if (unresolved + minus_ones > 1 && unresolved > 0) {
        int64_t k = split_position(node, target, count, axis, rank);
        kiln_value witness;
        uint32_t witness_rank, axis_a, axis_b;
        if (k >= 0 && onnx_node_find_sizes(node, target[k], target[k + 1], &witness, &witness_rank, &axis_a,
                                           &axis_b)) {
            status = split_axis(node, x, k, witness, witness_rank, axis_a, axis_b, &y);
            for (uint32_t i = 0; status == KILN_OK && i < count; i++) {
                status = onnx_node_axis_text(node, y, i, got, sizeof got);
                if (status == KILN_OK && strcmp(got, target[i]) != 0)
                    return onnx_node_unsupported(node, "splitting axis %lld gives %s at axis %u, not the target's %s",
                                                 (long long)k, got, i, target[i]);
            }
            return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
        }
        return onnx_node_unsupported(node, "the target shape [%s] needs %u inferred sizes: %s%s; kiln's reshape "
                                           "infers at most one (-1), the others must be constants or the input's "
                                           "size at the same position, and they do not split one input axis",
                                     target_text, unresolved + minus_ones, listed,
                                     minus_ones ? " and a -1" : "");
    }
    if (count > KILN_MAX_RANK)
        return onnx_node_unsupported(node, "the target shape [%s] has more than %d sizes", target_text,
                                     KILN_MAX_RANK);
    attr_list list = {0};
    attr_ints(&list, "shape", shape, count);
    status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &y);
    if (status == KILN_OK && unresolved == 1) {
        for (uint32_t i = 0; i < count; i++)
            if (shape[i] == -1 && !size_constant(target[i], &shape[i])) {
                status = onnx_node_axis_text(node, y, i, got, sizeof got);
                if (status == KILN_OK && strcmp(got, target[i]) != 0)
                    return onnx_node_unsupported(node, "the target shape [%s]: kiln infers %s for axis %u, not %s",
                                                 target_text, got, i, target[i]);
            }
    }
    return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
}

/*
 * Expand to a symbolic target: a target size equal to x's size on the
 * aligned axis (right-aligned, as ONNX broadcasts) keeps that axis, which
 * kiln's expand writes as 1; another symbolic size is reported.
 */
static kiln_status map_symbolic_expand(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, count;
    const char *target[KILN_MAX_RANK];
    int64_t shape[KILN_MAX_RANK];
    char size[SIZE_TEXT];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_symbolic_sizes(node, 1, target, KILN_MAX_RANK, &count);
    if (status != KILN_OK)
        return status;
    for (uint32_t i = 0; i < count; i++) {
        if (size_constant(target[i], &shape[i]))
            continue;
        int64_t aligned = (int64_t)i - (int64_t)count + (int64_t)rank;
        if (aligned >= 0 && (status = onnx_node_axis_text(node, x, (uint32_t)aligned, size, sizeof size)) != KILN_OK)
            return status;
        if (aligned < 0 || strcmp(size, target[i]) != 0)
            return onnx_node_unsupported(node, "the target size %s (axis %u) is symbolic and not the input's: kiln's "
                                               "expand takes constant sizes",
                                         target[i], i);
        shape[i] = 1;
    }
    attr_list list = {0};
    attr_ints(&list, "shape", shape, count);
    return emit_output(node, kiln_op, 1, &x, &list);
}

static kiln_status tensor_scalar(onnx_node *node, const kiln_tensor *t, const char *what, double *value);

/*
 * ConstantOfShape: attribute `value` (a one-element tensor; f32 0 when
 * absent) over the shape operand. A constant shape is kiln's
 * constant_of_shape. A symbolic one takes its sizes from a translated
 * value that has exactly those sizes (ConstantOfShape(Shape(x)) has x's):
 * where(true of that shape, value, value), true being cast(v, bool) or its
 * negation, so no element of v (NaN included) can change the result.
 */
static kiln_status map_constant_of_shape(onnx_node *node, const char *kiln_op)
{
    double value = 0;
    kiln_dtype dtype = KILN_F32;
    const Onnx__AttributeProto *a = onnx_node_attribute(node, "value");
    if (a) {
        kiln_tensor *t = NULL;
        kiln_error tensor_err;
        if (!a->t)
            return onnx_node_unsupported(node, "attribute 'value' is not a tensor");
        if (onnx_tensor_to_kiln(a->t, NULL, NULL, &t, &tensor_err) != KILN_OK)
            return onnx_node_unsupported(node, "attribute 'value': %s", tensor_err.message);
        dtype = kiln_tensor_dtype(t);
        kiln_status status = tensor_scalar(node, t, "attribute 'value'", &value);
        kiln_tensor_free(t);
        if (status != KILN_OK)
            return status;
    }
    attr_list list = {0};
    if (!onnx_node_is_symbolic(node, 0)) {
        int64_t shape[KILN_MAX_RANK];
        uint32_t count;
        kiln_status status = onnx_node_constant_ints(node, 0, shape, KILN_MAX_RANK, &count);
        if (status != KILN_OK)
            return status;
        const char *name = kiln_dtype_name(dtype);
        attr_ints(&list, "shape", shape, count);
        attr_float(&list, "value", value);
        attr_string(&list, "dtype", name, strlen(name));
        return emit_output(node, kiln_op, 0, NULL, &list);
    }
    const char *target[KILN_MAX_RANK];
    uint32_t count;
    kiln_value like, truth, falsity, filler, pair[2];
    kiln_status status = onnx_node_symbolic_sizes(node, 0, target, KILN_MAX_RANK, &count);
    if (status != KILN_OK)
        return status;
    if (!onnx_node_find_shape(node, target, count, &like)) {
        char text[512] = "";
        for (uint32_t i = 0; i < count; i++) {
            size_t used = strlen(text);
            snprintf(text + used, sizeof text - used, "%s%s", i ? ", " : "", target[i]);
        }
        return onnx_node_unsupported(node, "the symbolic shape [%s] is the shape of no value translated so far: "
                                           "kiln's constant_of_shape takes constant sizes",
                                     text);
    }
    status = cast_to(node, &like, KILN_BOOL);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "not", 1, &like, 0, NULL, &falsity);
    pair[0] = like;
    pair[1] = falsity;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "or", 2, pair, 0, NULL, &truth);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, value, &filler);
    kiln_value triple[3] = {truth, filler, filler};
    if (status == KILN_OK)
        status = emit_output(node, "where", 3, triple, NULL);
    return status;
}

static kiln_status map_reshape(onnx_node *node, const char *kiln_op)
{
    if (onnx_node_is_symbolic(node, 1))
        return map_symbolic_reshape(node, kiln_op);
    if (onnx_node_int(node, "allowzero", 0) != 0) {
        int64_t values[16];
        uint32_t count;
        kiln_status status = onnx_node_constant_ints(node, 1, values, 16, &count);
        if (status != KILN_OK)
            return status;
        for (uint32_t i = 0; i < count; i++)
            if (values[i] == 0)
                return onnx_node_unsupported(node, "allowzero = 1 with a 0 in the shape (an empty axis) is not supported");
    }
    return map_shape_operand(node, kiln_op, "shape", "shape", 5, true);
}

static kiln_status map_expand(onnx_node *node, const char *kiln_op)
{
    if (onnx_node_is_symbolic(node, 1))
        return map_symbolic_expand(node, kiln_op);
    return map_shape_operand(node, kiln_op, "shape", "shape", 8, true);
}

static kiln_status map_tile(onnx_node *node, const char *kiln_op)
{
    return map_shape_operand(node, kiln_op, "repeats", "repeats", 6, true);
}

static kiln_status map_unsqueeze(onnx_node *node, const char *kiln_op)
{
    return map_shape_operand(node, kiln_op, "axes", "axes", 13, true);
}

static kiln_status map_squeeze(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    int64_t axes[KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = ints_attribute_or_input(node, "axes", 13, 1, axes, KILN_MAX_RANK, &count, &present);
    if (status != KILN_OK)
        return status;
    if (!present) {
        /* Every axis of size 1: only known when the sizes are constants. */
        kiln_dtype dtype;
        uint32_t rank;
        int64_t sizes[KILN_MAX_RANK];
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
        if (status != KILN_OK)
            return status;
        for (uint32_t a = 0; a < rank; a++) {
            if (sizes[a] < 0)
                return onnx_node_unsupported(node, "squeeze without axes of a symbolic axis %u", a);
            if (sizes[a] == 1)
                axes[count++] = a;
        }
    }
    attr_list list = {0};
    attr_ints(&list, "axes", axes, count);
    return emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * The i64 vector start, start + 1, ..., of the symbolic length `length`:
 * ones along an axis of that size in a value already translated (the
 * frame ones_like_axes makes), their exclusive cumulative sum, plus
 * `start`. `what` names the operand in a report.
 */
static kiln_status arange_of_size(onnx_node *node, const char *length, int64_t start, const char *what,
                                  kiln_value *out)
{
    kiln_value witness, ones, pair[2];
    uint32_t rank, axis;
    if (!onnx_node_find_size(node, length, &witness, &rank, &axis))
        return onnx_node_unsupported(node, "%s needs %s indices, and no value translated so far has an axis of that "
                                           "size",
                                     what, length);
    attr_list count = {0};
    attr_int(&count, "axis", 0);
    attr_int(&count, "exclusive", 1);
    kiln_status status = ones_like_axes(node, witness, rank, axis, axis, &ones);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, count.count, count.items, out);
    if (status == KILN_OK && start != 0) {
        pair[0] = *out;
        status = onnx_node_scalar(node, KILN_I64, (double)start, &pair[1]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "add", 2, pair, 0, NULL, out);
    }
    return status;
}

/* The size text of `end - start` (start a constant). */
static kiln_status length_text(onnx_node *node, const char *end, int64_t start, char *buffer, size_t size)
{
    if (start == 0) {
        snprintf(buffer, size, "%s", end);
        return KILN_OK;
    }
    char expression[2 * SIZE_TEXT];
    snprintf(expression, sizeof expression, "(%s) - %lld", end, (long long)start);
    return onnx_node_canonical_size(node, expression, buffer, size);
}

/* Slice operand `index` (starts or ends) as size texts, symbolic or constant. */
static kiln_status slice_bound_texts(onnx_node *node, uint32_t index, const char **texts,
                                     char storage[][SIZE_TEXT], uint32_t *count)
{
    if (onnx_node_is_symbolic(node, index))
        return onnx_node_symbolic_sizes(node, index, texts, KILN_MAX_RANK, count);
    int64_t values[KILN_MAX_RANK];
    kiln_status status = onnx_node_constant_ints(node, index, values, KILN_MAX_RANK, count);
    for (uint32_t i = 0; status == KILN_OK && i < *count; i++) {
        snprintf(storage[i], SIZE_TEXT, "%lld", (long long)values[i]);
        texts[i] = storage[i];
    }
    return status;
}

/*
 * Slice (opset 10+) whose starts or ends are symbolic (spec/onnx-import.md
 * §3.1). Per sliced axis: constant bounds stay a kiln slice; a symbolic
 * end equal to the axis's own size is "to the end"; on an axis of
 * constant size N, a constant start s >= 0 with a symbolic end E that is
 * a declared dim (or a constant) at most N everywhere is a gather of the
 * rows s..E-1 (the PyTorch `table[:, :x.size(1)]` of positional tables),
 * with indices from a value of size E - s. Anything else is reported.
 */
static kiln_status map_symbolic_slice(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, start_count = 0, end_count = 0, axis_count = 0, step_count = 0;
    const char *starts[KILN_MAX_RANK], *ends[KILN_MAX_RANK];
    char start_storage[KILN_MAX_RANK][SIZE_TEXT], end_storage[KILN_MAX_RANK][SIZE_TEXT];
    int64_t axes[KILN_MAX_RANK], steps[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = slice_bound_texts(node, 1, starts, start_storage, &start_count);
    if (status == KILN_OK)
        status = slice_bound_texts(node, 2, ends, end_storage, &end_count);
    if (status == KILN_OK && onnx_node_has_input(node, 3))
        status = onnx_node_constant_ints(node, 3, axes, KILN_MAX_RANK, &axis_count);
    if (status == KILN_OK && onnx_node_has_input(node, 4))
        status = onnx_node_constant_ints(node, 4, steps, KILN_MAX_RANK, &step_count);
    if (status != KILN_OK)
        return status;
    if (end_count != start_count || (onnx_node_has_input(node, 3) && axis_count != start_count) ||
        (onnx_node_has_input(node, 4) && step_count != start_count))
        return onnx_node_unsupported(node, "starts, ends, axes and steps have different lengths");
    int64_t fixed_starts[KILN_MAX_RANK], fixed_ends[KILN_MAX_RANK], fixed_axes[KILN_MAX_RANK],
        fixed_steps[KILN_MAX_RANK];
    uint32_t fixed = 0, gathered = 0, gather_axes[KILN_MAX_RANK];
    int64_t gather_starts[KILN_MAX_RANK];
    const char *gather_ends[KILN_MAX_RANK];
    for (uint32_t i = 0; i < start_count; i++) {
        int64_t a = onnx_node_has_input(node, 3) ? axes[i] : (int64_t)i;
        int64_t step = onnx_node_has_input(node, 4) ? steps[i] : 1, start, end, size;
        if (a < -(int64_t)rank || a >= (int64_t)rank)
            return onnx_node_unsupported(node, "axis %lld is outside the input's rank %u", (long long)a, rank);
        uint32_t axis = (uint32_t)(a < 0 ? a + rank : a);
        char size_text[SIZE_TEXT];
        status = onnx_node_axis_text(node, x, axis, size_text, sizeof size_text);
        if (status != KILN_OK)
            return status;
        bool constant_start = size_constant(starts[i], &start), constant_end = size_constant(ends[i], &end);
        if (constant_start && !constant_end && strcmp(ends[i], size_text) == 0) {
            constant_end = true; /* the axis's own size: to the end */
            end = INT64_MAX;
        }
        if (constant_start && constant_end) {
            fixed_starts[fixed] = start;
            fixed_ends[fixed] = end;
            fixed_axes[fixed] = axis;
            fixed_steps[fixed++] = step;
            continue;
        }
        if (step != 1)
            return onnx_node_unsupported(node, "axis %u has a symbolic start or end and step %lld; only step 1 "
                                               "takes symbolic bounds",
                                         axis, (long long)step);
        int64_t largest;
        if (!constant_start || start < 0 || constant_end || !size_constant(size_text, &size))
            return onnx_node_unsupported(node, "the slice %s..%s of axis %u (size %s) is not supported: a symbolic "
                                               "end must be the axis's own size, or, on an axis of constant size, "
                                               "a declared dim after a constant start >= 0",
                                         starts[i], ends[i], axis, size_text);
        if (!onnx_node_size_max(node, ends[i], &largest))
            return onnx_node_unsupported(node, "the end %s of axis %u is an expression whose largest value the "
                                               "importer does not know; ONNX clamps an end past the axis size "
                                               "(%lld), kiln's gather would not",
                                         ends[i], axis, (long long)size);
        if (largest > size)
            return onnx_node_unsupported(node, "the end %s of axis %u may be %lld, past the axis size %lld, where "
                                               "ONNX clamps it; kiln's gather would not",
                                         ends[i], axis, (long long)largest, (long long)size);
        gather_axes[gathered] = axis;
        gather_starts[gathered] = start;
        gather_ends[gathered++] = ends[i];
    }
    kiln_value y = x;
    if (fixed) {
        attr_list list = {0};
        attr_ints(&list, "starts", fixed_starts, fixed);
        attr_ints(&list, "ends", fixed_ends, fixed);
        attr_ints(&list, "axes", fixed_axes, fixed);
        attr_ints(&list, "steps", fixed_steps, fixed);
        status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &y);
    }
    for (uint32_t g = 0; status == KILN_OK && g < gathered; g++) {
        char length[SIZE_TEXT], what[64];
        kiln_value pair[2];
        snprintf(what, sizeof what, "the slice of axis %u", gather_axes[g]);
        status = length_text(node, gather_ends[g], gather_starts[g], length, sizeof length);
        if (status == KILN_OK)
            status = arange_of_size(node, length, gather_starts[g], what, &pair[1]);
        attr_list gather = {0};
        attr_int(&gather, "axis", gather_axes[g]);
        pair[0] = y;
        if (status == KILN_OK)
            status = onnx_node_emit(node, "gather", 2, pair, gather.count, gather.items, &y);
    }
    return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
}

static kiln_status map_slice(onnx_node *node, const char *kiln_op)
{
    static const char *const names[] = {"starts", "ends", "axes", "steps"};
    if (node->opset >= 10 && (onnx_node_is_symbolic(node, 1) || onnx_node_is_symbolic(node, 2)))
        return map_symbolic_slice(node, kiln_op);
    kiln_value x;
    attr_list list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    for (uint32_t k = 0; status == KILN_OK && k < 4; k++) {
        int64_t values[KILN_MAX_RANK];
        uint32_t count = 0;
        bool present = false;
        status = ints_attribute_or_input(node, names[k], 10, k + 1, values, KILN_MAX_RANK, &count, &present);
        if (status == KILN_OK && present)
            attr_ints(&list, names[k], values, count);
    }
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

static kiln_status map_pad(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    int64_t pads[2 * KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    attr_list list = {0};
    char mode_text[32];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = ints_attribute_or_input(node, "pads", 11, 1, pads, 2 * KILN_MAX_RANK, &count, &present);
    if (status != KILN_OK)
        return status;
    if (!present)
        return onnx_node_unsupported(node, "the pads operand is missing");
    attr_ints(&list, "pads", pads, count);
    const char *mode = onnx_node_string(node, "mode", "constant", mode_text, sizeof mode_text);
    attr_string(&list, "mode", mode, strlen(mode));
    double value = node->opset < 11 ? onnx_node_float(node, "value", 0.0) : 0.0;
    if (node->opset >= 11 && onnx_node_has_input(node, 2))
        status = constant_scalar(node, 2, &value);
    if (status == KILN_OK && onnx_node_has_input(node, 3))
        status = onnx_node_unsupported(node, "the axes operand is not supported");
    attr_float(&list, "value", value);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

/* ReduceX: axes as an attribute, or (ReduceSum from opset 13) as input 1 with noop_with_empty_axes. */
static kiln_status map_reduce(onnx_node *node, const char *kiln_op)
{
    bool axes_as_input = strcmp(node->proto->op_type, "ReduceSum") == 0 && node->opset >= 13;
    kiln_value x;
    int64_t axes[KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    attr_list list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = ints_attribute_or_input(node, "axes", axes_as_input ? 13 : INT64_MAX, 1, axes, KILN_MAX_RANK,
                                         &count, &present);
    if (status != KILN_OK)
        return status;
    if ((!present || count == 0) && onnx_node_int(node, "noop_with_empty_axes", 0) != 0)
        return emit_output(node, "identity", 1, &x, NULL);
    if (present && count)
        attr_ints(&list, "axes", axes, count);
    attr_int(&list, "keepdims", onnx_node_int(node, "keepdims", 1));
    return emit_output(node, kiln_op, 1, &x, &list);
}

/* Softmax, LogSoftmax, Hardmax. Before opset 13 they act on the input flattened to 2-D at `axis`. */
static kiln_status map_softmax(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    attr_list list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status != KILN_OK)
        return status;
    if (node->opset >= 13) {
        attr_int(&list, "axis", onnx_node_int(node, "axis", -1));
        return emit_output(node, kiln_op, 1, &x, &list);
    }
    int64_t axis = onnx_node_int(node, "axis", 1);
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    if (normalized == (int64_t)rank - 1) {
        /* Flattening at the last axis leaves that axis alone: the same as acting on it. */
        attr_int(&list, "axis", -1);
        return emit_output(node, kiln_op, 1, &x, &list);
    }
    for (uint32_t a = 0; a < rank; a++)
        if (sizes[a] < 0)
            return onnx_node_unsupported(node, "opset %lld %s over flattened axes %lld.. of a symbolic shape",
                                         (long long)node->opset, node->proto->op_type, (long long)normalized);
    kiln_value flat, y;
    attr_int(&list, "axis", normalized);
    status = onnx_node_emit(node, "flatten", 1, &x, list.count, list.items, &flat);
    list.items[0].i = -1;
    if (status == KILN_OK)
        status = onnx_node_emit(node, kiln_op, 1, &flat, list.count, list.items, &y);
    attr_list back = {0};
    attr_ints(&back, "shape", sizes, rank);
    if (status == KILN_OK)
        status = emit_output(node, "reshape", 1, &y, &back);
    return status;
}

static kiln_status map_clip(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status != KILN_OK)
        return status;
    attr_list list = {0};
    if (node->opset < 11) {
        attr_float(&list, "min", onnx_node_float(node, "min", -INFINITY));
        attr_float(&list, "max", onnx_node_float(node, "max", INFINITY));
        return emit_output(node, kiln_op, 1, &x, &list);
    }
    /* Constant bounds become clip's attributes; computed ones (or min > max, where ONNX gives max) max/min ops. */
    double bounds[3] = {0, -INFINITY, INFINITY};
    bool constant = true;
    for (uint32_t k = 1; k <= 2 && status == KILN_OK; k++) {
        if (!onnx_node_has_input(node, k))
            continue;
        if (onnx_node_is_constant(node, k))
            status = constant_scalar(node, k, &bounds[k]);
        else
            constant = false;
    }
    if (status != KILN_OK)
        return status;
    if (constant && !(bounds[1] > bounds[2])) {
        attr_float(&list, "min", bounds[1]);
        attr_float(&list, "max", bounds[2]);
        return emit_output(node, kiln_op, 1, &x, &list);
    }
    kiln_value y = x;
    static const char *const ops[] = {NULL, "max", "min"};
    for (uint32_t k = 1; k <= 2; k++) {
        if (!onnx_node_has_input(node, k))
            continue;
        kiln_value operands[2] = {y, 0};
        status = onnx_node_input(node, k, &operands[1]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, ops[k], 2, operands, 0, NULL, &y);
        if (status != KILN_OK)
            return status;
    }
    return onnx_node_set_output(node, 0, y);
}

static kiln_status map_gemm(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"broadcast", NULL};
    kiln_value inputs[3];
    uint32_t count = present_inputs(node);
    attr_list list = {0};
    kiln_status status = count < 2 || count > 3 ? onnx_node_unsupported(node, "Gemm takes 2 or 3 inputs, not %u", count)
                                                : node_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = copy_attributes(node, &list, skip);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, count, inputs, &list);
    return status;
}

static kiln_status map_batch_norm(onnx_node *node, const char *kiln_op)
{
    if (onnx_node_int(node, "training_mode", 0) != 0 || onnx_node_int(node, "is_test", 1) == 0)
        return onnx_node_unsupported(node, "training mode: kiln runs inference only");
    if (onnx_node_int(node, "spatial", 1) != 1)
        return onnx_node_unsupported(node, "spatial = 0 is not supported");
    kiln_value inputs[5];
    attr_list list = {0};
    kiln_status status = refuse_extra_outputs(node, 1);
    if (status == KILN_OK)
        status = node_inputs(node, 0, 5, inputs);
    attr_float(&list, "epsilon", onnx_node_float(node, "epsilon", 1e-5));
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 5, inputs, &list);
    return status;
}

/*
 * LayerNormalization (opset 17). Its optional outputs Mean and InvStdDev
 * are the statistics over axes axis..rank-1, kept as size-1 axes:
 * reduce_mean(x) and rsqrt(reduce_mean((x - mean)^2) + epsilon).
 */
static kiln_status map_layer_norm(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"stash_type", NULL};
    kiln_value inputs[3];
    uint32_t count = present_inputs(node);
    attr_list list = {0};
    kiln_status status = refuse_extra_outputs(node, 3);
    if (status == KILN_OK)
        status = node_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = copy_attributes(node, &list, skip);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, count, inputs, &list);
    bool wants_mean = node->proto->n_output > 1 && node->proto->output[1][0];
    bool wants_inv = node->proto->n_output > 2 && node->proto->output[2][0];
    if (status != KILN_OK || (!wants_mean && !wants_inv))
        return status;
    kiln_dtype dtype;
    uint32_t rank;
    status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    int64_t axis = onnx_node_int(node, "axis", -1);
    int64_t first = axis < 0 ? axis + rank : axis;
    if (first < 0 || first >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    int64_t axes[KILN_MAX_RANK];
    for (int64_t a = first; a < (int64_t)rank; a++)
        axes[a - first] = a;
    attr_list reduce = {0};
    attr_ints(&reduce, "axes", axes, (uint32_t)(rank - first));
    attr_int(&reduce, "keepdims", 1);
    kiln_value mean, centered, squared, variance, epsilon, shifted, inv;
    status = onnx_node_emit(node, "reduce_mean", 1, inputs, reduce.count, reduce.items, &mean);
    if (status == KILN_OK && wants_mean)
        status = onnx_node_set_output(node, 1, mean);
    if (status != KILN_OK || !wants_inv)
        return status;
    kiln_value pair[2] = {inputs[0], mean};
    status = onnx_node_emit(node, "sub", 2, pair, 0, NULL, &centered);
    pair[0] = pair[1] = centered;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &squared);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "reduce_mean", 1, &squared, reduce.count, reduce.items, &variance);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "epsilon", 1e-5), &epsilon);
    pair[0] = variance;
    pair[1] = epsilon;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &shifted);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "rsqrt", 1, &shifted, 0, NULL, &inv);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 2, inv);
    return status;
}

/* CumSum and Trilu: an integer operand (axis, k) that kiln takes as an attribute. */
static kiln_status map_scalar_operand(onnx_node *node, const char *kiln_op, const char *name)
{
    kiln_value x;
    attr_list list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && onnx_node_has_input(node, 1)) {
        double value;
        status = constant_scalar(node, 1, &value);
        if (status == KILN_OK)
            attr_int(&list, name, (int64_t)value);
    }
    if (status == KILN_OK)
        status = copy_attributes(node, &list, NULL);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

static kiln_status map_cumsum(onnx_node *node, const char *kiln_op)
{
    return map_scalar_operand(node, kiln_op, "axis");
}

static kiln_status map_trilu(onnx_node *node, const char *kiln_op)
{
    return map_scalar_operand(node, kiln_op, "k");
}

static kiln_status map_one_hot(onnx_node *node, const char *kiln_op)
{
    kiln_value indices;
    double depth;
    const kiln_tensor *values;
    kiln_dtype index_dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &indices);
    if (status == KILN_OK)
        status = onnx_node_type(node, indices, &index_dtype, &rank, NULL);
    /* ONNX takes indices of any numeric type (cast to integers); kiln takes i32 or i64. */
    if (status == KILN_OK && index_dtype != KILN_I32 && index_dtype != KILN_I64)
        status = cast_to(node, &indices, KILN_I64);
    if (status == KILN_OK)
        status = constant_scalar(node, 1, &depth);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 2, &values);
    if (status != KILN_OK)
        return status;
    kiln_dtype dtype = kiln_tensor_dtype(values);
    if (kiln_tensor_element_count(values) != 2 || (dtype != KILN_F32 && dtype != KILN_F64 && dtype != KILN_I64 &&
                                                   dtype != KILN_I32))
        return onnx_node_unsupported(node, "values must be two f32, f64, i32 or i64 values");
    double off, on;
    const void *p = kiln_tensor_const_data(values);
    switch (dtype) {
    case KILN_F32: off = ((const float *)p)[0], on = ((const float *)p)[1]; break;
    case KILN_F64: off = ((const double *)p)[0], on = ((const double *)p)[1]; break;
    case KILN_I32: off = ((const int32_t *)p)[0], on = ((const int32_t *)p)[1]; break;
    default: off = (double)((const int64_t *)p)[0], on = (double)((const int64_t *)p)[1]; break;
    }
    attr_list list = {0};
    attr_int(&list, "depth", (int64_t)depth);
    attr_int(&list, "axis", onnx_node_int(node, "axis", -1));
    attr_float(&list, "on_value", on);
    attr_float(&list, "off_value", off);
    const char *name = kiln_dtype_name(dtype);
    attr_string(&list, "dtype", name, strlen(name));
    return emit_output(node, kiln_op, 1, &indices, &list);
}

/* BitShift: ONNX spells the direction "LEFT" / "RIGHT", kiln "left" / "right". */
static kiln_status map_bitshift(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    char text[16];
    kiln_status status = node_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    const char *direction = onnx_node_string(node, "direction", "", text, sizeof text);
    const char *kiln_direction = strcmp(direction, "LEFT") == 0 ? "left" : strcmp(direction, "RIGHT") == 0 ? "right" : NULL;
    if (!kiln_direction)
        return onnx_node_unsupported(node, "attribute 'direction' is \"%s\", not \"LEFT\" or \"RIGHT\"", direction);
    attr_list list = {0};
    attr_string(&list, "direction", kiln_direction, strlen(kiln_direction));
    return emit_output(node, kiln_op, 2, inputs, &list);
}

/* Pow: ONNX lets the exponent have another dtype; kiln does not promote, so it is cast to the base's. */
static kiln_status map_pow(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = node_inputs(node, 0, 2, inputs);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status == KILN_OK && (dtype == KILN_F32 || dtype == KILN_F64))
        status = cast_to(node, &inputs[1], dtype);
    if (status == KILN_OK)
        status = emit_output(node, kiln_op, 2, inputs, NULL);
    return status;
}

/* CastLike: a cast to the dtype of input 1. */
static kiln_status map_cast_like(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value inputs[2];
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = node_inputs(node, 0, 2, inputs);
    if (status == KILN_OK)
        status = onnx_node_type(node, inputs[1], &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = cast_to(node, &inputs[0], dtype);
    if (status == KILN_OK)
        status = emit_output(node, "identity", 1, inputs, NULL);
    return status;
}

/* PRelu: where(x < 0, slope * x, x). */
static kiln_status map_prelu(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, slope, zero, negative, scaled;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = node_inputs(node, 0, 1, &x);
    if (status == KILN_OK)
        status = onnx_node_input(node, 1, &slope);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, 0.0, &zero);
    kiln_value pair[2] = {x, zero};
    if (status == KILN_OK)
        status = onnx_node_emit(node, "lt", 2, pair, 0, NULL, &negative);
    pair[1] = slope;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &scaled);
    kiln_value triple[3] = {negative, scaled, x};
    if (status == KILN_OK)
        status = emit_output(node, "where", 3, triple, NULL);
    return status;
}

/* Mish: x * tanh(softplus(x)). */
static kiln_status map_mish(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, soft, squashed;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "softplus", 1, &x, 0, NULL, &soft);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "tanh", 1, &soft, 0, NULL, &squashed);
    kiln_value pair[2] = {x, squashed};
    if (status == KILN_OK)
        status = emit_output(node, "mul", 2, pair, NULL);
    return status;
}

/*
 * LRN: y = x / (bias + alpha / size * square_sum)^beta, where square_sum
 * sums x^2 over the channels c - floor((size-1)/2) .. c + ceil((size-1)/2)
 * that exist. The window sum is lp_pool with p = 1 (a sum of absolute
 * values, exact for squares) on the squares with a unit axis in front of
 * the channels, so that they become the first pooled axis, zero-padded.
 */
static kiln_status map_lrn(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, squares, stacked, sums;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    int64_t size = onnx_node_int(node, "size", 0);
    if (!onnx_node_attribute(node, "size") || size < 1 || size > (INT64_C(1) << 24))
        return onnx_node_unsupported(node, "attribute 'size' must be given, in 1..16777216, got %lld",
                                     (long long)size);
    if (rank < 2 || rank > 4)
        return onnx_node_unsupported(node, "input of rank %u: LRN is mapped for ranks 2..4", rank);
    int64_t channel_axis = 1, kernel[3] = {size, 1, 1}, pads[6] = {0};
    uint32_t pooled = rank - 1; /* the channels and the axes after them */
    pads[0] = (size - 1) / 2;
    pads[pooled] = size / 2; /* ceil((size - 1) / 2) */
    kiln_value pair[2] = {x, x};
    status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &squares);
    attr_list unsqueeze = {0}, pool = {0};
    attr_ints(&unsqueeze, "axes", &channel_axis, 1);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "unsqueeze", 1, &squares, unsqueeze.count, unsqueeze.items, &stacked);
    attr_ints(&pool, "kernel_shape", kernel, pooled);
    attr_ints(&pool, "pads", pads, 2 * pooled);
    attr_int(&pool, "p", 1);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "lp_pool", 1, &stacked, pool.count, pool.items, &sums);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "squeeze", 1, &sums, unsqueeze.count, unsqueeze.items, &sums);
    kiln_value scale, bias, beta, base;
    double alpha = onnx_node_float(node, "alpha", 1e-4);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, alpha / (double)size, &scale);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "bias", 1.0), &bias);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "beta", 0.75), &beta);
    pair[0] = sums, pair[1] = scale;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &base);
    pair[0] = bias, pair[1] = base;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &base);
    pair[0] = base, pair[1] = beta;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "pow", 2, pair, 0, NULL, &base);
    pair[0] = x, pair[1] = base;
    if (status == KILN_OK)
        status = emit_output(node, "div", 2, pair, NULL);
    return status;
}

/*
 * GlobalAveragePool / GlobalMaxPool: kiln's global pools (one window per
 * [n, c] plane, with the oneDNN fast path); rank < 3 has no plane.
 */
static kiln_status map_global_pool(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    if (rank < 3)
        return onnx_node_unsupported(node, "input of rank %u: global pooling needs rank >= 3", rank);
    attr_list list = {0};
    return emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * TopK: kiln has one op per result, making the same selection: top_k for
 * the values (output 0), top_k_indices for the positions (output 1); only
 * the outputs the graph uses are emitted. K is an attribute before opset
 * 10, then a constant one-element input.
 */
static kiln_status map_topk(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x;
    int64_t k = onnx_node_int(node, "k", -1);
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && node->opset >= 10) {
        uint32_t count;
        status = onnx_node_constant_ints(node, 1, &k, 1, &count);
        if (status == KILN_OK && count != 1)
            return onnx_node_unsupported(node, "K has %u elements, not one", count);
    }
    if (status != KILN_OK)
        return status;
    attr_list list = {0};
    attr_int(&list, "k", k);
    attr_int(&list, "axis", onnx_node_int(node, "axis", -1));
    attr_int(&list, "largest", onnx_node_int(node, "largest", 1));
    attr_int(&list, "sorted", onnx_node_int(node, "sorted", 1));
    static const char *const ops[2] = {"top_k", "top_k_indices"};
    for (uint32_t o = 0; o < 2 && o < (uint32_t)node->proto->n_output; o++) {
        if (!node->proto->output[o][0])
            continue;
        kiln_value result;
        status = onnx_node_emit(node, ops[o], 1, &x, list.count, list.items, &result);
        if (status == KILN_OK)
            status = onnx_node_set_output(node, o, result);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/*
 * ONNX RNN, GRU and LSTM: one kiln node per output used — Y (`rnn`, `gru`,
 * `lstm`), Y_h (`*_last_hidden`), Y_c (`lstm_last_cell`) — each with the
 * same operands and attributes (spec/ops/recurrent.md). kiln's optional
 * operands are positional without gaps (b, initial_h, initial_c, p), so an
 * absent one before a present one becomes zeros, which is what ONNX means
 * by its absence. sequence_lens is accepted only when it is a constant
 * equal to the (static) sequence length for every batch row.
 */
static kiln_status map_recurrent(onnx_node *node, const char *kiln_op)
{
    const bool lstm = strcmp(kiln_op, "lstm") == 0;
    const uint32_t gates = lstm ? 4 : strcmp(kiln_op, "gru") == 0 ? 3 : 1;
    const uint32_t per_direction = lstm ? 3 : gates == 3 ? 2 : 1;
    kiln_value operands[7];
    kiln_dtype dtype;
    uint32_t x_rank, r_rank;
    int64_t x_sizes[KILN_MAX_RANK], r_sizes[KILN_MAX_RANK];
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; i < 3 && status == KILN_OK; i++)
        status = onnx_node_input(node, i, &operands[i]);
    if (status == KILN_OK)
        status = onnx_node_type(node, operands[0], &dtype, &x_rank, x_sizes);
    if (status == KILN_OK)
        status = onnx_node_type(node, operands[2], &dtype, &r_rank, r_sizes);
    if (status != KILN_OK)
        return status;
    if (x_rank != 3 || r_rank != 3 || r_sizes[0] < 1 || r_sizes[2] < 1)
        return onnx_node_unsupported(node, "X of rank %u and R of rank %u with static sizes are expected", x_rank,
                                     r_rank);
    int64_t layout = onnx_node_int(node, "layout", 0), directions = r_sizes[0];
    int64_t hidden = onnx_node_int(node, "hidden_size", r_sizes[2]);
    int64_t seq = x_sizes[layout == 1 ? 1 : 0], batch = x_sizes[layout == 1 ? 0 : 1];
    if (onnx_node_has_input(node, 4)) {
        int64_t lengths[4096];
        uint32_t count;
        status = onnx_node_constant_ints(node, 4, lengths, 4096, &count);
        if (status != KILN_OK)
            return status;
        if (batch >= 0 && count != (uint64_t)batch)
            return onnx_node_unsupported(node, "sequence_lens has %u entries for a batch of %lld", count,
                                         (long long)batch);
        for (uint32_t i = 0; i < count; i++)
            if (seq < 0 || lengths[i] != seq)
                return onnx_node_unsupported(node, "sequence_lens[%u] = %lld is not the full sequence length %s%lld "
                                                   "(kiln runs every sequence of the batch to the end)",
                                             i, (long long)lengths[i], seq < 0 ? "(symbolic) " : "",
                                             (long long)seq);
    }
    /* The operands after R, from ONNX's input positions; the last present one decides how many. */
    static const uint32_t onnx_index[7] = {0, 1, 2, 3, 5, 6, 7};
    uint32_t count = 3, last = lstm ? 7 : 5;
    for (uint32_t k = 3; k < last; k++)
        if (onnx_node_has_input(node, onnx_index[k]))
            count = k + 1;
    for (uint32_t k = 3; k < count && status == KILN_OK; k++) {
        if (onnx_node_has_input(node, onnx_index[k])) {
            status = onnx_node_input(node, onnx_index[k], &operands[k]);
            continue;
        }
        /* Absent before a present one: zeros of its shape (b, or a state of a static batch). */
        int64_t shape[3] = {directions, 2 * gates * hidden, 0};
        uint32_t rank = 2;
        if (k != 3) {
            if (batch < 0)
                return onnx_node_unsupported(node, "input %u is absent before a present one, and its zeros would "
                                                   "need the symbolic batch size",
                                             onnx_index[k]);
            rank = 3;
            shape[0] = layout == 1 ? batch : directions;
            shape[1] = layout == 1 ? directions : batch;
            shape[2] = hidden;
        }
        attr_list zeros = {0};
        const char *name = kiln_dtype_name(dtype);
        attr_ints(&zeros, "shape", shape, rank);
        attr_string(&zeros, "dtype", name, strlen(name));
        status = onnx_node_emit(node, "constant_of_shape", 0, NULL, zeros.count, zeros.items, &operands[k]);
    }
    if (status != KILN_OK)
        return status;

    attr_list list = {0};
    char text[ATTR_TEXT_MAX] = "", direction[32];
    const Onnx__AttributeProto *activations = onnx_node_attribute(node, "activations");
    for (size_t i = 0; activations && i < activations->n_strings; i++) {
        char name[16];
        size_t length = activations->strings[i].len, used = strlen(text);
        for (size_t c = 0; c < length && c < sizeof name - 1; c++)
            name[c] = (char)tolower(activations->strings[i].data[c]);
        name[length < sizeof name - 1 ? length : sizeof name - 1] = '\0';
        if (length >= sizeof name ||
            (strcmp(name, "sigmoid") != 0 && strcmp(name, "tanh") != 0 && strcmp(name, "relu") != 0))
            return onnx_node_unsupported(node, "activation '%.*s' (kiln's recurrent layers take Sigmoid, Tanh and "
                                               "Relu)",
                                         (int)(length > 32 ? 32 : length), (const char *)activations->strings[i].data);
        if (i >= (size_t)(2 * per_direction))
            return onnx_node_unsupported(node, "%zu activations", activations->n_strings);
        snprintf(text + used, sizeof text - used, "%s%s", i ? "," : "", name);
    }
    if (text[0])
        attr_string(&list, "activations", text, strlen(text));
    if (onnx_node_attribute(node, "clip"))
        attr_float(&list, "clip", onnx_node_float(node, "clip", 0));
    const char *d = onnx_node_string(node, "direction", "forward", direction, sizeof direction);
    attr_string(&list, "direction", d, strlen(d));
    attr_int(&list, "hidden_size", hidden);
    attr_int(&list, "layout", layout);
    if (gates == 3)
        attr_int(&list, "linear_before_reset", onnx_node_int(node, "linear_before_reset", 0));
    if (lstm)
        attr_int(&list, "input_forget", onnx_node_int(node, "input_forget", 0));

    char last_hidden[32], last_cell[32] = "lstm_last_cell";
    snprintf(last_hidden, sizeof last_hidden, "%s_last_hidden", kiln_op);
    const char *ops[3] = {kiln_op, last_hidden, last_cell};
    for (uint32_t o = 0; o < (lstm ? 3u : 2u) && o < (uint32_t)node->proto->n_output; o++) {
        if (!node->proto->output[o][0])
            continue;
        kiln_value result;
        status = onnx_node_emit(node, ops[o], count, operands, list.count, list.items, &result);
        if (status == KILN_OK)
            status = onnx_node_set_output(node, o, result);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/* Split into slices along `axis`: sizes from input 1 (opset 13+), the `split` attribute, or equal parts. */
static kiln_status map_split(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK], split[64];
    uint32_t count = 0, outputs = (uint32_t)node->proto->n_output;
    bool present = false;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status == KILN_OK)
        status = ints_attribute_or_input(node, "split", 13, 1, split, 64, &count, &present);
    if (status != KILN_OK)
        return status;
    int64_t axis = onnx_node_int(node, "axis", 0);
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    if (outputs == 0 || outputs > 64)
        return onnx_node_unsupported(node, "%u outputs", outputs);
    if (!present) {
        if (sizes[a] < 0)
            return onnx_node_unsupported(node, "equal split of the symbolic axis %lld", (long long)a);
        if (sizes[a] % outputs != 0)
            return onnx_node_unsupported(node, "axis %lld of size %lld does not split into %u equal parts",
                                         (long long)a, (long long)sizes[a], outputs);
        for (uint32_t o = 0; o < outputs; o++)
            split[o] = sizes[a] / outputs;
        count = outputs;
    }
    if (count != outputs)
        return onnx_node_unsupported(node, "split has %u sizes for %u outputs", count, outputs);
    int64_t start = 0;
    for (uint32_t o = 0; o < outputs; o++) {
        int64_t end = start + split[o];
        attr_list list = {0};
        attr_ints(&list, "starts", &start, 1);
        attr_ints(&list, "ends", &end, 1);
        attr_ints(&list, "axes", &a, 1);
        kiln_value part;
        status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &part);
        if (status == KILN_OK && node->proto->output[o][0])
            status = onnx_node_set_output(node, o, part);
        if (status != KILN_OK)
            return status;
        start = end;
    }
    return KILN_OK;
}

/*
 * Conv, ConvTranspose and the windowed pools: kiln's ops take ONNX's
 * attribute names. MaxPool's storage_order only orders its Indices output,
 * which kiln does not produce (refused when the model asks for it).
 */
static kiln_status map_window(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"storage_order", NULL};
    kiln_value inputs[3];
    uint32_t count = present_inputs(node);
    attr_list list = {0};
    kiln_status status = count < 1 || count > 3 ? onnx_node_unsupported(node, "%u inputs", count) : KILN_OK;
    if (status == KILN_OK && node->proto->n_output > 1 && node->proto->output[1][0])
        status = onnx_node_unsupported(node, "output 1 ('%s', the indices of the maxima) is not supported",
                                       node->proto->output[1]);
    if (status == KILN_OK)
        status = node_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = copy_attributes(node, &list, skip);
    kiln_dtype dtype = KILN_F32;
    uint32_t rank;
    if (status == KILN_OK && strcmp(kiln_op, "max_pool") == 0)
        status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    /*
     * Integer MaxPool (opset 12: i8, u8): the maximum of values a double
     * holds exactly is exact in double. A window with no input element
     * gives -inf, which the cast back refuses at run time.
     */
    bool widen = dtype == KILN_I8 || dtype == KILN_U8 || dtype == KILN_I16 || dtype == KILN_U16 ||
                 dtype == KILN_I32 || dtype == KILN_U32;
    if (!widen)
        return emit_output(node, kiln_op, count, inputs, &list);
    kiln_value pooled;
    status = cast_to(node, &inputs[0], KILN_F64);
    if (status == KILN_OK)
        status = onnx_node_emit(node, kiln_op, 1, inputs, list.count, list.items, &pooled);
    attr_list back = {0};
    const char *name = kiln_dtype_name(dtype);
    attr_string(&back, "to", name, strlen(name));
    if (status == KILN_OK)
        status = emit_output(node, "cast", 1, &pooled, &back);
    return status;
}

/* The kiln dtype of ONNX attribute `name` (an element type code), or `fallback` when absent. */
static kiln_status dtype_attribute(onnx_node *node, const char *name, kiln_dtype fallback, kiln_dtype *out)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    kiln_error dtype_err;
    *out = fallback;
    if (a && onnx_dtype_to_kiln((int32_t)a->i, out, &dtype_err) != KILN_OK)
        return onnx_node_unsupported(node, "attribute '%s': %s", name, dtype_err.message);
    return KILN_OK;
}

/* EyeLike: eye_like with the ONNX element type code of `dtype` as a kiln dtype name. */
static kiln_status map_eye_like(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    attr_list list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = dtype_attribute(node, "dtype", dtype, &dtype);
    if (status != KILN_OK)
        return status;
    const char *name = kiln_dtype_name(dtype);
    attr_string(&list, "dtype", name, strlen(name));
    attr_int(&list, "k", onnx_node_int(node, "k", 0));
    return emit_output(node, kiln_op, 1, &x, &list);
}

/* The one element of a constant tensor as a double, and its dtype. */
static kiln_status tensor_scalar(onnx_node *node, const kiln_tensor *t, const char *what, double *value)
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

/*
 * Range: its three scalar operands folded into range's attributes. kiln
 * computes the length in double; ONNX in the operands' type, so for f32
 * the f32 length is computed here too and a disagreement is refused.
 */
/*
 * Range with a symbolic limit L, a constant integer start s and delta 1
 * (spec/onnx-import.md §3.1): s, s + 1, ..., L - 1, of the size L - s, taken
 * from a value already translated that has an axis of that size, cast to
 * the range's dtype.
 */
static kiln_status map_symbolic_range(onnx_node *node)
{
    const char *limit[1];
    uint32_t count;
    const kiln_tensor *start_tensor, *delta_tensor;
    double start, delta;
    kiln_status status = onnx_node_symbolic_sizes(node, 1, limit, 1, &count);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 0, &start_tensor);
    if (status == KILN_OK)
        status = tensor_scalar(node, start_tensor, "input 0 (start)", &start);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 2, &delta_tensor);
    if (status == KILN_OK)
        status = tensor_scalar(node, delta_tensor, "input 2 (delta)", &delta);
    if (status != KILN_OK)
        return status;
    if (count != 1 || delta != 1 || start != floor(start) || fabs(start) > 1e15)
        return onnx_node_unsupported(node, "a range with the symbolic limit %s needs an integer start and delta 1 "
                                           "(start %g, delta %g)",
                                     count ? limit[0] : "?", start, delta);
    char length[SIZE_TEXT];
    kiln_value out;
    status = length_text(node, limit[0], (int64_t)start, length, sizeof length);
    if (status == KILN_OK)
        status = arange_of_size(node, length, (int64_t)start, "the range", &out);
    if (status == KILN_OK)
        status = cast_to(node, &out, kiln_tensor_dtype(start_tensor));
    return status == KILN_OK ? onnx_node_set_output(node, 0, out) : status;
}

static kiln_status map_range(onnx_node *node, const char *kiln_op)
{
    static const char *const what[] = {"input 0 (start)", "input 1 (limit)", "input 2 (delta)"};
    if (onnx_node_is_symbolic(node, 1) && !onnx_node_is_symbolic(node, 0) && !onnx_node_is_symbolic(node, 2))
        return map_symbolic_range(node);
    double bounds[3];
    kiln_dtype dtype = KILN_F32;
    kiln_status status = KILN_OK;
    for (uint32_t k = 0; status == KILN_OK && k < 3; k++) {
        const kiln_tensor *t;
        status = onnx_node_constant(node, k, &t);
        if (status == KILN_OK)
            status = tensor_scalar(node, t, what[k], &bounds[k]);
        if (status == KILN_OK && k > 0 && kiln_tensor_dtype(t) != dtype)
            status = onnx_node_unsupported(node, "%s is %s, input 0 is %s", what[k],
                                           kiln_dtype_name(kiln_tensor_dtype(t)), kiln_dtype_name(dtype));
        if (status == KILN_OK && k == 0)
            dtype = kiln_tensor_dtype(t);
    }
    if (status != KILN_OK)
        return status;
    if (dtype == KILN_F32 && bounds[2] != 0 && isfinite(bounds[0]) && isfinite(bounds[1]) && isfinite(bounds[2])) {
        float start = (float)bounds[0], limit = (float)bounds[1], delta = (float)bounds[2];
        double in_f32 = ceilf((limit - start) / delta), in_f64 = ceil((bounds[1] - bounds[0]) / bounds[2]);
        if (fmax(in_f32, 0) != fmax(in_f64, 0))
            return onnx_node_unsupported(node, "the length of an f32 range is %.0f in f32 arithmetic but %.0f "
                                               "exactly; kiln computes it exactly",
                                         fmax(in_f32, 0), fmax(in_f64, 0));
    }
    attr_list list = {0};
    const char *name = kiln_dtype_name(dtype);
    attr_float(&list, "start", bounds[0]);
    attr_float(&list, "limit", bounds[1]);
    attr_float(&list, "delta", bounds[2]);
    attr_string(&list, "dtype", name, strlen(name));
    return emit_output(node, kiln_op, 0, NULL, &list);
}

/*
 * HannWindow, HammingWindow, BlackmanWindow (opset 17): a generalized
 * cosine window a0 - a1 cos(t) + a2 cos(2t), t = 2 pi n / N, n = 0..size-1,
 * N = size (periodic, the default) or size - 1 (symmetric). The size must
 * be constant, so the window is too: it is computed here, in double with
 * ONNX's steps (increment 2 pi / N, then n times it; N = 0 gives NaN as
 * there) and rounded once to the output dtype (f32 or f64).
 */
static kiln_status map_cosine_window(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    static const struct {
        const char *op;
        double a0, a1, a2;
    } windows[] = {{"HannWindow", 0.5, 0.5, 0.0},
                   {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
                   {"BlackmanWindow", 0.42, 0.5, 0.08}};
    size_t w = 0;
    while (w + 1 < sizeof windows / sizeof windows[0] && strcmp(windows[w].op, node->proto->op_type) != 0)
        w++;
    double size;
    kiln_dtype dtype;
    kiln_status status = constant_scalar(node, 0, &size);
    if (status == KILN_OK)
        status = dtype_attribute(node, "output_datatype", KILN_F32, &dtype);
    if (status != KILN_OK)
        return status;
    if (dtype != KILN_F32 && dtype != KILN_F64)
        return onnx_node_unsupported(node, "output_datatype %s: only f32 and f64 windows are mapped",
                                     kiln_dtype_name(dtype));
    if (!(size >= 0 && size <= (double)(1 << 24)) || size != floor(size))
        return onnx_node_unsupported(node, "size %g is not a whole number in 0..16777216", size);
    int64_t length = (int64_t)size;
    double period = onnx_node_int(node, "periodic", 1) ? size : size - 1;
    double increment = 2.0 * 3.14159265358979323846 / period; /* 2 pi rounded once */
    kiln_tensor *t;
    status = kiln_tensor_new(dtype, 1, &length, &t, node->err);
    if (status != KILN_OK)
        return status;
    for (int64_t n = 0; n < length; n++) {
        double angle = (double)n * increment;
        double value = windows[w].a0 - windows[w].a1 * cos(angle) + windows[w].a2 * cos(2.0 * angle);
        if (dtype == KILN_F32)
            ((float *)kiln_tensor_data(t))[n] = (float)value;
        else
            ((double *)kiln_tensor_data(t))[n] = value;
    }
    return onnx_node_set_constant_output(node, 0, t);
}

/*
 * Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (opset 9: X, scales). The scales or sizes operand must be constant and
 * becomes resize's attribute. Opset 10 and Upsample define no coordinate
 * transformation; nearest there is ONNX's asymmetric floor rule. Linear
 * Upsample and Resize-10 are refused rather than guessed.
 */
static kiln_status map_resize(onnx_node *node, const char *kiln_op)
{
    bool legacy = node->opset < 11 || strcmp(node->proto->op_type, "Upsample") == 0;
    char mode_text[32], coordinate_text[32], nearest_text[32];
    const char *mode = onnx_node_string(node, "mode", "nearest", mode_text, sizeof mode_text);
    const char *coordinate = onnx_node_string(node, "coordinate_transformation_mode", "half_pixel",
                                              coordinate_text, sizeof coordinate_text);
    const char *nearest = onnx_node_string(node, "nearest_mode", "round_prefer_floor", nearest_text,
                                           sizeof nearest_text);
    uint32_t scales_index = legacy ? 1 : 2, sizes_index = 3;
    kiln_value x;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status != KILN_OK)
        return status;
    if (legacy) {
        if (strcmp(mode, "nearest") != 0)
            return onnx_node_unsupported(node, "mode \"%s\" at opset %lld: only nearest is supported there", mode,
                                         (long long)node->opset);
        coordinate = "asymmetric";
        nearest = "floor";
    }
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 && strcmp(mode, "cubic") != 0)
        return onnx_node_unsupported(node, "attribute 'mode' is \"%s\", not nearest, linear or cubic", mode);
    if (strcmp(coordinate, "tf_crop_and_resize") == 0)
        return onnx_node_unsupported(node, "coordinate_transformation_mode tf_crop_and_resize (a region of interest) "
                                           "is not supported");
    static const char *const later[] = {"antialias", "axes", "keep_aspect_ratio_policy", NULL};
    for (const char *const *name = later; *name; name++)
        if (onnx_node_attribute(node, *name))
            return onnx_node_unsupported(node, "attribute '%s' is not supported", *name);
    attr_list list = {0};
    /* Opset 11 requires a scales input and lets sizes be empty: the non-empty one is the target. */
    int64_t sizes[KILN_MAX_RANK];
    uint32_t size_count = 0;
    if (!legacy && onnx_node_has_input(node, sizes_index)) {
        status = onnx_node_constant_ints(node, sizes_index, sizes, KILN_MAX_RANK, &size_count);
        if (status != KILN_OK)
            return status;
    }
    if (size_count) {
        if (onnx_node_has_input(node, scales_index)) {
            const kiln_tensor *scales;
            status = onnx_node_constant(node, scales_index, &scales);
            if (status != KILN_OK)
                return status;
            if (kiln_tensor_element_count(scales) != 0)
                return onnx_node_unsupported(node, "both scales and sizes are given");
        }
        attr_ints(&list, "sizes", sizes, size_count);
    } else {
        const kiln_tensor *scales;
        if (!onnx_node_has_input(node, scales_index))
            return onnx_node_unsupported(node, "neither scales nor sizes is given");
        status = onnx_node_constant(node, scales_index, &scales);
        if (status != KILN_OK)
            return status;
        uint64_t count = kiln_tensor_element_count(scales);
        if (kiln_tensor_dtype(scales) != KILN_F32 || count > KILN_MAX_RANK)
            return onnx_node_unsupported(node, "scales must be at most %u f32 values, not %llu of %s", KILN_MAX_RANK,
                                         (unsigned long long)count, kiln_dtype_name(kiln_tensor_dtype(scales)));
        attr_floats(&list, "scales", kiln_tensor_const_data(scales), (uint32_t)count);
    }
    /* Attributes that cannot matter for the mode are dropped: kiln refuses them rather than ignore them. */
    attr_string(&list, "mode", mode, strlen(mode));
    attr_string(&list, "coordinate_transformation_mode", coordinate, strlen(coordinate));
    if (strcmp(mode, "nearest") == 0)
        attr_string(&list, "nearest_mode", nearest, strlen(nearest));
    if (strcmp(mode, "cubic") == 0) {
        attr_float(&list, "cubic_coeff_a", onnx_node_float(node, "cubic_coeff_a", -0.75));
        attr_int(&list, "exclude_outside", onnx_node_int(node, "exclude_outside", 0));
    }
    return emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * GridSample (opset 16: modes bilinear, nearest, bicubic; opset 20 names
 * them linear, nearest, cubic and allows any rank, of which kiln takes the
 * 4-D case). The grid must have x's dtype: kiln does not convert it.
 */
static kiln_status map_grid_sample(onnx_node *node, const char *kiln_op)
{
    char mode_text[32], padding_text[32];
    const char *mode = onnx_node_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear", mode_text,
                                        sizeof mode_text);
    const char *padding = onnx_node_string(node, "padding_mode", "zeros", padding_text, sizeof padding_text);
    if (node->opset >= 20 && strcmp(mode, "linear") == 0)
        mode = "bilinear";
    else if (node->opset >= 20 && strcmp(mode, "cubic") == 0)
        mode = "bicubic";
    else if (node->opset >= 20 && strcmp(mode, "nearest") != 0)
        return onnx_node_unsupported(node, "attribute 'mode' is \"%s\", not linear, nearest or cubic", mode);
    kiln_value inputs[2];
    kiln_status status = node_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    attr_list list = {0};
    attr_int(&list, "align_corners", onnx_node_int(node, "align_corners", 0));
    attr_string(&list, "mode", mode, strlen(mode));
    attr_string(&list, "padding_mode", padding, strlen(padding));
    return emit_output(node, kiln_op, 2, inputs, &list);
}

/*
 * MaxUnpool (opset 9 and 11: X, I, optional output_shape): max_unpool,
 * with the output_shape operand, which must be constant, as its attribute.
 */
static kiln_status map_max_unpool(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    kiln_status status = node_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    static const char *const skip[] = {NULL};
    attr_list list = {0};
    status = copy_attributes(node, &list, skip);
    if (status != KILN_OK)
        return status;
    if (onnx_node_has_input(node, 2)) {
        int64_t shape[KILN_MAX_RANK];
        uint32_t rank = 0;
        status = onnx_node_constant_ints(node, 2, shape, KILN_MAX_RANK, &rank);
        if (status != KILN_OK)
            return status;
        attr_ints(&list, "output_shape", shape, rank);
    }
    return emit_output(node, kiln_op, 2, inputs, &list);
}

/* ------------------------------------------------------------------ table */

/*
 * Opset 7 is where ONNX settled broadcasting, Dropout's and
 * BatchNormalization's test mode and the other semantics every mapping
 * was written against: a row covers opsets 7.. unless it says otherwise.
 * SINCE_1 marks the ops whose every earlier version computes the same
 * thing (the only difference being consumed_inputs, a legacy hint that
 * map_rename drops).
 */
#define ALL 7, 1000
#define SINCE_1 1, 1000

static const onnx_op_mapping mappings[] = {
    /* elementwise arithmetic and math */
    {"Add", ALL, map_rename, "add"},
    {"Sub", ALL, map_rename, "sub"},
    {"Mul", ALL, map_rename, "mul"},
    {"Div", ALL, map_rename, "div"},
    {"Neg", SINCE_1, map_rename, "neg"},
    {"Abs", SINCE_1, map_rename, "abs"},
    {"Sign", ALL, map_rename, "sign"},
    {"Exp", SINCE_1, map_rename, "exp"},
    {"Log", SINCE_1, map_rename, "log"},
    {"Sqrt", SINCE_1, map_rename, "sqrt"},
    {"Reciprocal", SINCE_1, map_rename, "reciprocal"},
    {"Erf", ALL, map_rename, "erf"},
    {"Floor", SINCE_1, map_rename, "floor"},
    {"Ceil", SINCE_1, map_rename, "ceil"},
    {"Round", ALL, map_rename, "round"},
    {"Sin", ALL, map_rename, "sin"},
    {"Cos", ALL, map_rename, "cos"},
    {"Tan", ALL, map_rename, "tan"},
    {"Asin", ALL, map_rename, "asin"},
    {"Acos", ALL, map_rename, "acos"},
    {"Atan", ALL, map_rename, "atan"},
    {"Sinh", ALL, map_rename, "sinh"},
    {"Cosh", ALL, map_rename, "cosh"},
    {"Asinh", ALL, map_rename, "asinh"},
    {"Acosh", ALL, map_rename, "acosh"},
    {"Atanh", ALL, map_rename, "atanh"},
    {"Tanh", SINCE_1, map_rename, "tanh"},
    {"Pow", ALL, map_pow, "pow"},
    {"Mod", ALL, map_rename, "mod"},
    {"BitShift", ALL, map_bitshift, "bitshift"},
    /* activations */
    {"Sigmoid", SINCE_1, map_rename, "sigmoid"},
    {"HardSigmoid", SINCE_1, map_rename, "hard_sigmoid"},
    {"HardSwish", ALL, map_rename, "hard_swish"},
    {"Relu", SINCE_1, map_rename, "relu"},
    {"LeakyRelu", SINCE_1, map_rename, "leaky_relu"},
    {"Elu", SINCE_1, map_rename, "elu"},
    {"Selu", SINCE_1, map_rename, "selu"},
    {"Celu", ALL, map_rename, "celu"},
    {"Softplus", SINCE_1, map_rename, "softplus"},
    {"Softsign", SINCE_1, map_rename, "softsign"},
    {"Shrink", ALL, map_rename, "shrink"},
    {"ThresholdedRelu", ALL, map_rename, "thresholded_relu"},
    {"PRelu", ALL, map_prelu, NULL},
    {"Mish", ALL, map_mish, NULL},
    {"Clip", ALL, map_clip, "clip"},
    /* comparison, logic, selection, variadic */
    {"Equal", ALL, map_rename, "eq"},
    {"Less", ALL, map_rename, "lt"},
    {"LessOrEqual", ALL, map_rename, "le"},
    {"Greater", ALL, map_rename, "gt"},
    {"GreaterOrEqual", ALL, map_rename, "ge"},
    {"And", ALL, map_rename, "and"},
    {"Or", ALL, map_rename, "or"},
    {"Xor", ALL, map_rename, "xor"},
    {"Not", SINCE_1, map_rename, "not"},
    {"IsNaN", ALL, map_rename, "isnan"},
    {"IsInf", ALL, map_rename, "isinf"},
    {"Where", ALL, map_rename, "where"},
    {"Max", ALL, map_rename, "max"},
    {"Min", ALL, map_rename, "min"},
    {"Sum", ALL, map_rename, "sum"},
    {"Mean", ALL, map_rename, "mean"},
    /* reductions and softmax */
    {"ReduceSum", ALL, map_reduce, "reduce_sum"},
    {"ReduceMean", ALL, map_reduce, "reduce_mean"},
    {"ReduceMax", ALL, map_reduce, "reduce_max"},
    {"ReduceMin", ALL, map_reduce, "reduce_min"},
    {"ReduceProd", ALL, map_reduce, "reduce_prod"},
    {"ReduceL1", ALL, map_reduce, "reduce_l1"},
    {"ReduceL2", ALL, map_reduce, "reduce_l2"},
    {"ReduceSumSquare", ALL, map_reduce, "reduce_sum_square"},
    {"ReduceLogSum", ALL, map_reduce, "reduce_log_sum"},
    {"ReduceLogSumExp", ALL, map_reduce, "reduce_log_sum_exp"},
    {"ArgMax", ALL, map_rename, "argmax"},
    {"ArgMin", ALL, map_rename, "argmin"},
    {"Softmax", ALL, map_softmax, "softmax"},
    {"LogSoftmax", ALL, map_softmax, "log_softmax"},
    {"Hardmax", ALL, map_softmax, "hardmax"},
    {"NegativeLogLikelihoodLoss", 12, 1000, onnx_map_nll_loss, NULL},
    {"SoftmaxCrossEntropyLoss", 12, 1000, onnx_map_softmax_cross_entropy, NULL},
    {"GlobalAveragePool", SINCE_1, map_global_pool, "global_avg_pool"},
    {"GlobalMaxPool", SINCE_1, map_global_pool, "global_max_pool"},
    {"GlobalLpPool", ALL, map_rename, "global_lp_pool"},
    /* convolution, pooling, resizing */
    {"Conv", ALL, map_window, "conv"},
    {"ConvTranspose", ALL, map_window, "conv_transpose"},
    {"MaxPool", ALL, map_window, "max_pool"},
    {"AveragePool", ALL, map_window, "avg_pool"},
    {"LpPool", ALL, map_window, "lp_pool"},
    {"MaxUnpool", 9, 1000, map_max_unpool, "max_unpool"},
    {"Resize", 10, 1000, map_resize, "resize"},
    {"Upsample", 9, 9, map_resize, "resize"},
    {"GridSample", 16, 1000, map_grid_sample, "grid_sample"},
    /* matrix products and layout */
    {"MatMul", ALL, map_rename, "matmul"},
    {"Gemm", ALL, map_gemm, "gemm"},
    {"Transpose", ALL, map_rename, "transpose"},
    {"Flatten", ALL, map_rename, "flatten"},
    {"Einsum", ALL, map_rename, "einsum"},
    {"Det", 11, 1000, map_rename, "det"},
    /* shape */
    {"Identity", SINCE_1, map_identity, "identity"},
    {"Dropout", ALL, map_identity, "identity"},
    {"Constant", ALL, map_constant, NULL},
    {"ConstantOfShape", 9, 1000, map_constant_of_shape, "constant_of_shape"},
    {"Cast", ALL, map_cast, "cast"},
    {"CastLike", ALL, map_cast_like, "cast"},
    {"Shape", ALL, map_shape, "shape_of"},
    {"Size", ALL, map_rename, "size_of"},
    {"Reshape", ALL, map_reshape, "reshape"},
    {"Squeeze", ALL, map_squeeze, "squeeze"},
    {"Unsqueeze", ALL, map_unsqueeze, "unsqueeze"},
    {"Concat", ALL, map_rename, "concat"},
    {"Expand", ALL, map_expand, "expand"},
    {"Tile", ALL, map_tile, "tile"},
    {"Pad", ALL, map_pad, "pad"},
    /* generators */
    {"EyeLike", ALL, map_eye_like, "eye_like"},
    {"Range", ALL, map_range, "range"},
    {"HannWindow", 17, 1000, map_cosine_window, NULL},
    {"HammingWindow", 17, 1000, map_cosine_window, NULL},
    {"BlackmanWindow", 17, 1000, map_cosine_window, NULL},
    {"Split", ALL, map_split, "slice"},
    {"TopK", SINCE_1, map_topk, NULL},
    /* recurrent layers */
    {"RNN", ALL, map_recurrent, "rnn"},
    {"GRU", ALL, map_recurrent, "gru"},
    {"LSTM", ALL, map_recurrent, "lstm"},
    /* indexing */
    {"Gather", ALL, map_rename, "gather"},
    {"GatherElements", ALL, map_rename, "gather_elements"},
    {"GatherND", ALL, map_rename, "gather_nd"},
    {"Slice", ALL, map_slice, "slice"},
    {"Scatter", 9, 10, map_rename, "scatter_elements"},
    {"ScatterElements", 11, 1000, map_rename, "scatter_elements"},
    {"ScatterND", 11, 1000, map_rename, "scatter_nd"},
    {"ReverseSequence", 10, 1000, map_rename, "reverse_sequence"},
    {"CumSum", ALL, map_cumsum, "cumsum"},
    {"OneHot", ALL, map_one_hot, "one_hot"},
    {"Trilu", ALL, map_trilu, "trilu"},
    {"DepthToSpace", ALL, map_rename, "depth_to_space"},
    {"SpaceToDepth", ALL, map_rename, "space_to_depth"},
    /* normalization */
    {"BatchNormalization", ALL, map_batch_norm, "batch_norm"},
    {"LayerNormalization", 17, 1000, map_layer_norm, "layer_norm"},
    {"InstanceNormalization", SINCE_1, map_rename, "instance_norm"},
    {"LpNormalization", ALL, map_rename, "lp_norm"},
    {"MeanVarianceNormalization", ALL, map_rename, "mean_variance_norm"},
    {"LRN", ALL, map_lrn, NULL},
    /* quantization */
    {"QuantizeLinear", 10, 1000, onnx_map_quantize_linear, NULL},
    {"DequantizeLinear", 10, 1000, onnx_map_dequantize_linear, NULL},
    {"DynamicQuantizeLinear", 11, 1000, onnx_map_dynamic_quantize_linear, NULL},
    {"MatMulInteger", 10, 1000, onnx_map_matmul_integer, NULL},
    {"ConvInteger", 10, 1000, onnx_map_conv_integer, NULL},
};

/* Why an op kiln lacks cannot be imported, for the classes of ops that never will be one by one. */
static const struct {
    const char *op;
    const char *reason;
} known_gaps[] = {
    {"If", "control flow is not supported"},
    {"Loop", "control flow is not supported"},
    {"Scan", "control flow is not supported"},
    {"SequenceAt", "sequences are not supported"},
    {"SequenceConstruct", "sequences are not supported"},
    {"SequenceEmpty", "sequences are not supported"},
    {"SequenceErase", "sequences are not supported"},
    {"SequenceInsert", "sequences are not supported"},
    {"SequenceLength", "sequences are not supported"},
    {"SequenceMap", "sequences are not supported"},
    {"SplitToSequence", "sequences are not supported"},
    {"ConcatFromSequence", "sequences are not supported"},
    {"Optional", "optional values are not supported"},
    {"OptionalGetElement", "optional values are not supported"},
    {"OptionalHasElement", "optional values are not supported"},
    {"StringNormalizer", "strings are not supported"},
    {"TfIdfVectorizer", "strings are not supported"},
    {"NonZero", "its output shape depends on the data"},
    {"Unique", "its output shape depends on the data"},
    {"Compress", "its output shape depends on the data"},
    {"NonMaxSuppression", "its output shape depends on the data"},
    {"RandomNormal", "random generators are not supported"},
    {"RandomUniform", "random generators are not supported"},
    {"RandomNormalLike", "random generators are not supported"},
    {"RandomUniformLike", "random generators are not supported"},
    {"Multinomial", "random generators are not supported"},
    {"Bernoulli", "random generators are not supported"},
};

const onnx_op_mapping *onnx_find_mapping(const char *onnx_op, int64_t opset, const char **why)
{
    static char reason[256];
    const onnx_op_mapping *other_version = NULL;
    for (size_t i = 0; i < sizeof mappings / sizeof mappings[0]; i++) {
        if (strcmp(mappings[i].onnx_op, onnx_op) != 0)
            continue;
        if (opset >= mappings[i].min_opset && opset <= mappings[i].max_opset)
            return &mappings[i];
        other_version = &mappings[i];
    }
    if (why) {
        const char *gap = NULL;
        for (size_t i = 0; i < sizeof known_gaps / sizeof known_gaps[0]; i++)
            if (strcmp(known_gaps[i].op, onnx_op) == 0)
                gap = known_gaps[i].reason;
        if (other_version)
            snprintf(reason, sizeof reason, "unsupported op %s (opset %lld): mapped for opsets %lld.. only", onnx_op,
                     (long long)opset, (long long)other_version->min_opset);
        else if (gap)
            snprintf(reason, sizeof reason, "unsupported op %s (opset %lld): %s", onnx_op, (long long)opset, gap);
        else
            snprintf(reason, sizeof reason, "unsupported op %s (opset %lld)", onnx_op, (long long)opset);
        *why = reason;
    }
    return NULL;
}
