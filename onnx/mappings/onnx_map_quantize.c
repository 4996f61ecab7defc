/*
 * onnx_map_quantize.c — QuantizeLinear, DequantizeLinear and
 * DynamicQuantizeLinear as compositions of kiln ops, exact to the ONNX
 * operator documentation (opsets 10, 11 and 13):
 *
 *   QuantizeLinear:   y = cast(clip(round(x / scale) + zero_point, qmin, qmax))
 *                     x / scale in f32 (one rounding, as ONNX), round ties
 *                     to even; the sum is exact below 2^24 and saturates
 *                     above it either way; the clipped value is an integer,
 *                     so the cast to u8 or i8 is exact.
 *   DequantizeLinear: y = (f32(x) - f32(zero_point)) * scale
 *   DynamicQuantizeLinear: ONNX's own definition, step by step:
 *                     lo = min(reduce_min(x), 0), hi = max(reduce_max(x), 0),
 *                     scale = (hi - lo) / 255,
 *                     zero_point = cast<u8>(round(clip(0 - lo / scale, 0, 255))),
 *                     then QuantizeLinear(x, scale, zero_point).
 *   MatMulInteger, ConvInteger: matmul / conv in f64 of (x - zero_point)
 *                     widened to f64, cast to i32. Each product is at most
 *                     255 * 255 in magnitude and every partial sum of K of
 *                     them is an integer below 2^53, so the double sum is
 *                     exact; K (the inner size, or the taps per output of a
 *                     conv) must be constant and at most 33025, so that
 *                     the sum also fits i32 and never needs ONNX's int32
 *                     wrap-around: the cast back is exact.
 *
 * Per-axis (opset 13: a 1-D scale of the size of axis `axis`) reshapes the
 * scale and zero point to [size, 1, ...] so that they broadcast along that
 * axis. A NaN to quantize fails the run (kiln's cast refuses it; ONNX
 * leaves the result undefined).
 */
#include <string.h>

#include "onnx_mapping.h"

static kiln_status emit_op(onnx_node *node, const char *op, uint32_t count, const kiln_value *inputs,
                           uint32_t attribute_count, const kiln_attribute *attributes, kiln_value *out)
{
    return onnx_node_emit(node, op, count, inputs, attribute_count, attributes, out);
}

static kiln_status emit_binary(onnx_node *node, const char *op, kiln_value a, kiln_value b, kiln_value *out)
{
    kiln_value pair[2] = {a, b};
    return emit_op(node, op, 2, pair, 0, NULL, out);
}

static kiln_status emit_cast(onnx_node *node, kiln_value x, kiln_dtype to, kiln_value *out)
{
    kiln_attribute a = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = kiln_dtype_name(to)};
    return emit_op(node, "cast", 1, &x, 1, &a, out);
}

static kiln_status emit_clip(onnx_node *node, kiln_value x, double lo, double hi, kiln_value *out)
{
    kiln_attribute bounds[2] = {{.name = "min", .type = KILN_ATTRIBUTE_FLOAT, .f = lo},
                                {.name = "max", .type = KILN_ATTRIBUTE_FLOAT, .f = hi}};
    return emit_op(node, "clip", 1, &x, 2, bounds, out);
}

/* Refuse attributes other than `axis` (later opsets add some that change the result, such as block_size). */
static kiln_status only_axis_attribute(onnx_node *node)
{
    for (size_t i = 0; i < node->proto->n_attribute; i++) {
        const char *name = node->proto->attribute[i]->name ? node->proto->attribute[i]->name : "";
        if (strcmp(name, "axis") != 0)
            return onnx_node_unsupported(node, "attribute '%s' is not supported", name);
    }
    return KILN_OK;
}

/*
 * Make the scale or zero point `*value` broadcast against x: a scalar (or
 * one value, before opset 13) as it is, a 1-D tensor (opset 13) along
 * axis `axis` of x, reshaped to [size, 1, ...].
 */
static kiln_status align_to_axis(onnx_node *node, const char *what, uint32_t x_rank, kiln_value *value)
{
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_status status = onnx_node_type(node, *value, &dtype, &rank, sizes);
    if (status != KILN_OK || rank == 0)
        return status;
    if (rank > 1)
        return onnx_node_unsupported(node, "%s has rank %u: it must be a scalar or 1-D", what, rank);
    if (node->opset < 13) {
        if (sizes[0] != 1 || x_rank == 0)
            return onnx_node_unsupported(node, "%s has shape [%lld]: before opset 13 it must be a scalar", what,
                                         (long long)sizes[0]);
        return KILN_OK;
    }
    int64_t axis = onnx_node_int(node, "axis", 1);
    int64_t a = axis < 0 ? axis + (int64_t)x_rank : axis;
    if (a < 0 || a >= (int64_t)x_rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for an input of rank %u", (long long)axis,
                                     x_rank);
    if (sizes[0] < 0)
        return onnx_node_unsupported(node, "%s has a symbolic size: per-axis quantization needs a constant one", what);
    int64_t shape[KILN_MAX_RANK];
    uint32_t count = 0;
    shape[count++] = sizes[0];
    for (int64_t k = a + 1; k < (int64_t)x_rank; k++)
        shape[count++] = 1;
    kiln_attribute target = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape, .count = count};
    return emit_op(node, "reshape", 1, value, 1, &target, value);
}

/* y = cast(clip(round(x / scale) + zero_point)) for f32 x; zero_point 0 of dtype u8 when `has_zero_point` is false. */
static kiln_status quantize(onnx_node *node, kiln_value x, kiln_value scale, bool has_zero_point,
                            kiln_value zero_point, kiln_value *out)
{
    kiln_dtype x_dtype, scale_dtype, zero_dtype = KILN_U8;
    uint32_t x_rank, rank;
    kiln_status status = onnx_node_type(node, x, &x_dtype, &x_rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, scale, &scale_dtype, &rank, NULL);
    if (status == KILN_OK && has_zero_point)
        status = onnx_node_type(node, zero_point, &zero_dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    if (x_dtype != KILN_F32 || scale_dtype != KILN_F32)
        return onnx_node_unsupported(node, "x of dtype %s and scale of dtype %s: only f32 x and scale are mapped",
                                     kiln_dtype_name(x_dtype), kiln_dtype_name(scale_dtype));
    if (zero_dtype != KILN_U8 && zero_dtype != KILN_I8)
        return onnx_node_unsupported(node, "zero point of dtype %s: only u8 and i8 are mapped",
                                     kiln_dtype_name(zero_dtype));
    double qmin = zero_dtype == KILN_U8 ? 0 : -128, qmax = zero_dtype == KILN_U8 ? 255 : 127;
    kiln_value y;
    status = align_to_axis(node, "the scale", x_rank, &scale);
    if (status == KILN_OK)
        status = emit_binary(node, "div", x, scale, &y);
    if (status == KILN_OK)
        status = emit_op(node, "round", 1, &y, 0, NULL, &y);
    if (status == KILN_OK && has_zero_point) {
        kiln_value shift;
        status = align_to_axis(node, "the zero point", x_rank, &zero_point);
        if (status == KILN_OK)
            status = emit_cast(node, zero_point, KILN_F32, &shift);
        if (status == KILN_OK)
            status = emit_binary(node, "add", y, shift, &y);
    }
    if (status == KILN_OK)
        status = emit_clip(node, y, qmin, qmax, &y);
    if (status == KILN_OK)
        status = emit_cast(node, y, zero_dtype, out);
    return status;
}

kiln_status onnx_map_quantize_linear(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, scale, zero_point = 0, y;
    bool has_zero_point = onnx_node_has_input(node, 2);
    kiln_status status = only_axis_attribute(node);
    if (status == KILN_OK)
        status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_input(node, 1, &scale);
    if (status == KILN_OK && has_zero_point)
        status = onnx_node_input(node, 2, &zero_point);
    if (status == KILN_OK)
        status = quantize(node, x, scale, has_zero_point, zero_point, &y);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    return status;
}

kiln_status onnx_map_dequantize_linear(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, scale, zero_point, y;
    kiln_dtype x_dtype, scale_dtype;
    uint32_t x_rank, rank;
    kiln_status status = only_axis_attribute(node);
    if (status == KILN_OK)
        status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_input(node, 1, &scale);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &x_dtype, &x_rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, scale, &scale_dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    if ((x_dtype != KILN_U8 && x_dtype != KILN_I8 && x_dtype != KILN_I32) || scale_dtype != KILN_F32)
        return onnx_node_unsupported(node, "x of dtype %s and scale of dtype %s: only u8, i8 or i32 x and f32 scale "
                                           "are mapped",
                                     kiln_dtype_name(x_dtype), kiln_dtype_name(scale_dtype));
    status = emit_cast(node, x, KILN_F32, &y);
    if (status == KILN_OK && onnx_node_has_input(node, 2)) {
        kiln_value shift;
        status = onnx_node_input(node, 2, &zero_point);
        if (status == KILN_OK)
            status = align_to_axis(node, "the zero point", x_rank, &zero_point);
        if (status == KILN_OK)
            status = emit_cast(node, zero_point, KILN_F32, &shift);
        if (status == KILN_OK)
            status = emit_binary(node, "sub", y, shift, &y);
    }
    if (status == KILN_OK)
        status = align_to_axis(node, "the scale", x_rank, &scale);
    if (status == KILN_OK)
        status = emit_binary(node, "mul", y, scale, &y);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    return status;
}

kiln_status onnx_map_dynamic_quantize_linear(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, zero, top, lo, hi, range, scale, scaled, start, zero_point, y;
    kiln_attribute flat = {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 0};
    kiln_status status = node->proto->n_attribute ? onnx_node_unsupported(node, "attributes are not supported")
                                                  : onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, KILN_F32, 0.0, &zero);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, KILN_F32, 255.0, &top);
    if (status == KILN_OK)
        status = emit_op(node, "reduce_min", 1, &x, 1, &flat, &lo);
    if (status == KILN_OK)
        status = emit_binary(node, "min", lo, zero, &lo);
    if (status == KILN_OK)
        status = emit_op(node, "reduce_max", 1, &x, 1, &flat, &hi);
    if (status == KILN_OK)
        status = emit_binary(node, "max", hi, zero, &hi);
    if (status == KILN_OK)
        status = emit_binary(node, "sub", hi, lo, &range);
    if (status == KILN_OK)
        status = emit_binary(node, "div", range, top, &scale);
    if (status == KILN_OK)
        status = emit_binary(node, "div", lo, scale, &scaled);
    if (status == KILN_OK)
        status = emit_binary(node, "sub", zero, scaled, &start);
    if (status == KILN_OK)
        status = emit_clip(node, start, 0.0, 255.0, &start);
    if (status == KILN_OK)
        status = emit_op(node, "round", 1, &start, 0, NULL, &start);
    if (status == KILN_OK)
        status = emit_cast(node, start, KILN_U8, &zero_point);
    if (status == KILN_OK)
        status = quantize(node, x, scale, true, zero_point, &y);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    if (status == KILN_OK && node->proto->n_output > 1 && node->proto->output[1][0])
        status = onnx_node_set_output(node, 1, scale);
    if (status == KILN_OK && node->proto->n_output > 2 && node->proto->output[2][0])
        status = onnx_node_set_output(node, 2, zero_point);
    return status;
}

/* ---------------------------------------------------- integer products */

/* The most terms a sum of 8-bit products may have and stay below 2^31: 33025 * 255 * 255 < 2^31. */
#define INTEGER_PRODUCT_MAX_TERMS 33025

/*
 * f64(input) - f64(zero point), the zero point (input `zero_index`, if
 * present) reshaped by `shape` when it is 1-D with more than one value
 * and `shape` is not NULL.
 */
static kiln_status widen_centered(onnx_node *node, uint32_t index, uint32_t zero_index, const int64_t *shape,
                                  uint32_t shape_rank, kiln_value *out)
{
    kiln_value x, zero_point;
    kiln_dtype dtype, zero_dtype;
    uint32_t rank, zero_rank;
    kiln_status status = onnx_node_input(node, index, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    if (dtype != KILN_U8 && dtype != KILN_I8)
        return onnx_node_unsupported(node, "input %u has dtype %s: only u8 and i8 are mapped", index,
                                     kiln_dtype_name(dtype));
    status = emit_cast(node, x, KILN_F64, out);
    if (status != KILN_OK || !onnx_node_has_input(node, zero_index))
        return status;
    kiln_value shift;
    int64_t zero_sizes[KILN_MAX_RANK];
    status = onnx_node_input(node, zero_index, &zero_point);
    if (status == KILN_OK)
        status = onnx_node_type(node, zero_point, &zero_dtype, &zero_rank, zero_sizes);
    if (status != KILN_OK)
        return status;
    if (zero_dtype != dtype)
        return onnx_node_unsupported(node, "input %u has dtype %s, its zero point %s", index, kiln_dtype_name(dtype),
                                     kiln_dtype_name(zero_dtype));
    /* One value in a 1-D tensor is a per-tensor zero point: it broadcasts as it is. */
    if (zero_rank == 1 && zero_sizes[0] != 1 && shape) {
        kiln_attribute target = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape, .count = shape_rank};
        status = emit_op(node, "reshape", 1, &zero_point, 1, &target, &zero_point);
    }
    if (status == KILN_OK)
        status = emit_cast(node, zero_point, KILN_F64, &shift);
    if (status == KILN_OK)
        status = emit_binary(node, "sub", *out, shift, out);
    return status;
}

/* Refuse a sum of `terms` 8-bit products (-1: symbolic) that may not be exact in i32. */
static kiln_status check_terms(onnx_node *node, const char *what, int64_t terms)
{
    if (terms < 0)
        return onnx_node_unsupported(node, "%s is symbolic: the exactness of the i32 sum needs a constant", what);
    if (terms > INTEGER_PRODUCT_MAX_TERMS)
        return onnx_node_unsupported(node, "%s is %lld: a sum of more than %d products may leave i32", what,
                                     (long long)terms, INTEGER_PRODUCT_MAX_TERMS);
    return KILN_OK;
}

kiln_status onnx_map_matmul_integer(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value a, b, a_raw, y;
    kiln_dtype dtype;
    uint32_t a_rank;
    int64_t a_sizes[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &a_raw);
    if (status == KILN_OK)
        status = onnx_node_type(node, a_raw, &dtype, &a_rank, a_sizes);
    if (status != KILN_OK)
        return status;
    /* A 1-D zero point of A holds one value per row: [M] becomes [M, 1]. */
    int64_t rows[2] = {a_rank >= 2 ? a_sizes[a_rank - 2] : 1, 1};
    if (a_rank >= 2 && rows[0] < 0 && onnx_node_has_input(node, 2))
        return onnx_node_unsupported(node, "A has a symbolic row count: a per-row zero point needs a constant one");
    status = check_terms(node, "the inner size", a_rank ? a_sizes[a_rank - 1] : -1);
    if (status == KILN_OK)
        status = widen_centered(node, 0, 2, a_rank >= 2 ? rows : NULL, 2, &a);
    if (status == KILN_OK)
        status = widen_centered(node, 1, 3, NULL, 0, &b);
    if (status == KILN_OK)
        status = emit_binary(node, "matmul", a, b, &y);
    if (status == KILN_OK)
        status = emit_cast(node, y, KILN_I32, &y);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    return status;
}

kiln_status onnx_map_conv_integer(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    static const char *const names[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
    kiln_value x, w, w_raw, y, x_zero;
    kiln_dtype dtype;
    uint32_t w_rank, x_zero_rank;
    int64_t w_sizes[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 1, &w_raw);
    if (status == KILN_OK)
        status = onnx_node_type(node, w_raw, &dtype, &w_rank, w_sizes);
    if (status == KILN_OK && onnx_node_has_input(node, 2))
        status = onnx_node_input(node, 2, &x_zero);
    if (status == KILN_OK && onnx_node_has_input(node, 2))
        status = onnx_node_type(node, x_zero, &dtype, &x_zero_rank, NULL);
    if (status != KILN_OK)
        return status;
    if (onnx_node_has_input(node, 2) && x_zero_rank != 0)
        return onnx_node_unsupported(node, "the zero point of x has rank %u: it must be a scalar", x_zero_rank);
    /* Terms per output: the weight's input channels times its kernel taps. */
    int64_t terms = w_rank >= 2 ? 1 : -1;
    for (uint32_t k = 1; k < w_rank && terms >= 0; k++) {
        if (w_sizes[k] < 0)
            terms = -1;
        else if (w_sizes[k] > 0 && terms > INTEGER_PRODUCT_MAX_TERMS / w_sizes[k])
            terms = INTEGER_PRODUCT_MAX_TERMS + 1; /* too many already; saturated, so never overflows */
        else
            terms *= w_sizes[k];
    }
    /* A 1-D zero point of the weight holds one value per output channel: [M] becomes [M, 1, ...]. */
    int64_t per_channel[KILN_MAX_RANK];
    for (uint32_t k = 0; k < w_rank; k++)
        per_channel[k] = k == 0 ? w_sizes[0] : 1;
    if (w_rank && w_sizes[0] < 0 && onnx_node_has_input(node, 3))
        return onnx_node_unsupported(node, "the weight has a symbolic output channel count");
    status = check_terms(node, "the number of products per output", terms);
    if (status == KILN_OK)
        status = widen_centered(node, 0, 2, NULL, 0, &x);
    if (status == KILN_OK)
        status = widen_centered(node, 1, 3, per_channel, w_rank, &w);
    if (status != KILN_OK)
        return status;
    kiln_attribute attributes[6];
    uint32_t count = 0;
    for (size_t i = 0; i < node->proto->n_attribute; i++) {
        const Onnx__AttributeProto *a = node->proto->attribute[i];
        size_t n = 0;
        while (n < 6 && strcmp(a->name ? a->name : "", names[n]) != 0)
            n++;
        if (n == 6 || count == 6)
            return onnx_node_unsupported(node, "attribute '%s' is not supported", a->name ? a->name : "");
        attributes[count] = (kiln_attribute){.name = names[n]};
        if (strcmp(names[n], "group") == 0) {
            attributes[count].type = KILN_ATTRIBUTE_INT;
            attributes[count].i = a->i;
        } else if (strcmp(names[n], "auto_pad") == 0) {
            char text[32];
            size_t length = a->s.len < sizeof text - 1 ? a->s.len : sizeof text - 1;
            if (length)
                memcpy(text, a->s.data, length);
            text[length] = '\0';
            attributes[count].type = KILN_ATTRIBUTE_STRING;
            attributes[count].s = strcmp(text, "SAME_UPPER") == 0   ? "SAME_UPPER"
                                  : strcmp(text, "SAME_LOWER") == 0 ? "SAME_LOWER"
                                  : strcmp(text, "VALID") == 0      ? "VALID"
                                  : strcmp(text, "NOTSET") == 0     ? "NOTSET"
                                                                    : NULL;
            if (!attributes[count].s)
                return onnx_node_unsupported(node, "attribute 'auto_pad' is \"%s\"", text);
        } else {
            if (a->n_ints > UINT32_MAX)
                return onnx_node_unsupported(node, "attribute '%s' is too long", names[n]);
            attributes[count].type = KILN_ATTRIBUTE_INTS;
            attributes[count].ints = a->ints;
            attributes[count].count = (uint32_t)a->n_ints;
        }
        count++;
    }
    kiln_value pair[2] = {x, w};
    status = emit_op(node, "conv", 2, pair, count, attributes, &y);
    if (status == KILN_OK)
        status = emit_cast(node, y, KILN_I32, &y);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    return status;
}
