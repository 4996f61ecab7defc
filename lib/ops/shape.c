/*
 * shape.c — shape and layout ops (identity, cast, squeeze, unsqueeze,
 * reshape, concat, expand, expand_to, tile, pad, shape_of, size_of): shape rules and
 * portable reference kernels.
 *
 * Semantics, preconditions and numerics are in spec/ops/shape.md. Kernels
 * move elements as bytes of the element size (cast converts); they favour
 * obviously-correct loops over speed and allocate nothing.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "axis_product.h"
#include "broadcast.h"
#include "error.h"
#include "half.h"
#include "odometer.h"
#include "op_registry.h"
#include "parallel.h"
#include "shape_attribute.h"
#include "size_claim.h"

/* ------------------------------------------------------ shared helpers */

static bool is_const(const kiln_shape_context *ctx, uint32_t id)
{
    return ctx->pool->items[id].kind == KILN_EXPR_CONST;
}

static kiln_status require_supported(const kiln_shape_context *ctx, kiln_dtype dtype, kiln_error *err)
{
    if (!kiln_dtype_is_supported(dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(dtype));
    return KILN_OK;
}

/* Normalise `axis` (negative counts from the end) into 0..rank-1. */
static bool normalize_axis(int64_t axis, uint32_t rank, uint32_t *out)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return false;
    *out = (uint32_t)(axis < 0 ? axis + (int64_t)rank : axis);
    return true;
}

/* The node's attribute `name`, or a refusal naming it: the op has no default for it. */
static kiln_status require_attribute(const kiln_shape_context *ctx, const char *name,
                                     const kiln_node_attribute **out, kiln_error *err)
{
    *out = kiln_attribute_find(ctx->attributes, ctx->attribute_count, name);
    if (!*out)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' is required", ctx->node_label, name);
    return KILN_OK;
}

/* Format an INTS attribute as "a, b, c". */
static void format_ints(const kiln_node_attribute *attr, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t i = 0; attr && i < attr->count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? ", " : "", (long long)attr->ints[i]);
}

/* e + c, folded: constants add, (s + k) + c = s + (k + c), e + 0 = e. */
static kiln_status offset_expr(const kiln_shape_context *ctx, uint32_t e, int64_t c, uint32_t *out, kiln_error *err)
{
    const kiln_expr *x = &ctx->pool->items[e];
    if (c == 0) {
        *out = e;
        return KILN_OK;
    }
    int64_t k = 0;
    uint32_t s = e;
    if (x->kind == KILN_EXPR_CONST) {
        int64_t v;
        if (__builtin_add_overflow(x->constant, c, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return kiln_expr_const(ctx->pool, v, out, err);
    }
    if (x->kind == KILN_EXPR_ADD && ctx->pool->items[x->rhs].kind == KILN_EXPR_CONST) {
        k = ctx->pool->items[x->rhs].constant;
        s = x->lhs;
    }
    int64_t total;
    if (__builtin_add_overflow(k, c, &total))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
    if (total == 0) {
        *out = s;
        return KILN_OK;
    }
    uint32_t cid;
    KILN_TRY(kiln_expr_const(ctx->pool, total, &cid, err));
    kiln_expr add = {.kind = KILN_EXPR_ADD, .lhs = s, .rhs = cid};
    return kiln_expr_intern(ctx->pool, &add, ctx->dim_count, out, err);
}

/* Copy the input's bytes unchanged (identity, squeeze, unsqueeze, reshape). */
static kiln_status copy_bytes(const char *op, const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    if (in->byte_size != out->byte_size || in->dtype != out->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output size %zu differs from input size %zu", op,
                         out->byte_size, in->byte_size);
    if (out->byte_size && out->data != in->data)
        memmove(out->data, in->data, out->byte_size);
    return KILN_OK;
}

/* Row-major element strides of a tensor. */
static void strides_of(const kiln_tensor *t, int64_t *strides)
{
    int64_t stride = 1;
    for (uint32_t i = t->rank; i-- > 0;) {
        strides[i] = stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, t->shape[i], &stride))
            stride = 0;
    }
}

/* -------------------------------------------------------------- identity */

static kiln_status infer_identity(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    KILN_TRY(require_supported(ctx, inputs[0]->dtype, err));
    *out = *inputs[0];
    return KILN_OK;
}

static kiln_status run_identity(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    return copy_bytes("identity", call, err);
}

/* ------------------------------------------------------------------ cast */

static const kiln_attribute_spec cast_attributes[] = {
    {"to", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

static bool cast_target(const kiln_node_attribute *attributes, uint32_t count, kiln_dtype *to)
{
    const kiln_node_attribute *attr = kiln_attribute_find(attributes, count, "to");
    return attr && attr->s && kiln_dtype_from_name(attr->s, to) == KILN_OK && kiln_dtype_is_supported(*to);
}

static kiln_status infer_cast(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                              uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    KILN_TRY(require_supported(ctx, inputs[0]->dtype, err));
    const kiln_node_attribute *attr = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "to");
    if (!attr || !attr->s)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'to' (a dtype name) is required",
                         ctx->node_label);
    kiln_dtype to;
    if (!cast_target(ctx->attributes, ctx->attribute_count, &to))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: 'to' is \"%s\", not a supported dtype (f32, f64, f16, bf16, i8, i16, i32, i64, u8, "
                         "u16, u32, u64, bool)",
                         ctx->node_label, attr->s);
    out->dtype = to;
    out->shape = inputs[0]->shape;
    return KILN_OK;
}

typedef enum cast_class { CLASS_FLOAT, CLASS_SIGNED, CLASS_UNSIGNED, CLASS_BOOL } cast_class;

static cast_class class_of(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_F32:
    case KILN_F64:
    case KILN_F16:
    case KILN_BF16: return CLASS_FLOAT;
    case KILN_I8:
    case KILN_I16:
    case KILN_I32:
    case KILN_I64: return CLASS_SIGNED;
    case KILN_BOOL: return CLASS_BOOL;
    default: return CLASS_UNSIGNED;
    }
}

/* One element read in its class: a double, or the integer's 64-bit value (bool: 0/1). */
typedef struct scalar {
    double f;
    int64_t i;
    uint64_t u;
} scalar;

static scalar load_element(kiln_dtype dtype, const void *data, uint64_t e)
{
    scalar s = {0, 0, 0};
    switch (dtype) {
    case KILN_F32: s.f = ((const float *)data)[e]; break;
    case KILN_F64: s.f = ((const double *)data)[e]; break;
    case KILN_F16: s.f = kiln_f16_to_f32(((const uint16_t *)data)[e]); break;
    case KILN_BF16: s.f = kiln_bf16_to_f32(((const uint16_t *)data)[e]); break;
    case KILN_I8: s.i = ((const int8_t *)data)[e]; break;
    case KILN_I16: s.i = ((const int16_t *)data)[e]; break;
    case KILN_I32: s.i = ((const int32_t *)data)[e]; break;
    case KILN_I64: s.i = ((const int64_t *)data)[e]; break;
    case KILN_U8: s.u = ((const uint8_t *)data)[e]; break;
    case KILN_U16: s.u = ((const uint16_t *)data)[e]; break;
    case KILN_U32: s.u = ((const uint32_t *)data)[e]; break;
    case KILN_U64: s.u = ((const uint64_t *)data)[e]; break;
    case KILN_BOOL: s.u = ((const uint8_t *)data)[e] != 0; break;
    default: break;
    }
    if (class_of(dtype) == CLASS_SIGNED)
        s.u = (uint64_t)s.i;
    return s;
}

/* double -> float, rounding to nearest; beyond FLT_MAX rounds to FLT_MAX or overflows to infinity. */
static float to_f32(double v)
{
    if (isfinite(v) && fabs(v) > FLT_MAX) {
        float big = fabs(v) >= 0x1.ffffffp127 ? INFINITY : FLT_MAX;
        return v < 0 ? -big : big;
    }
    return (float)v;
}

/* Range of an integer dtype as [lo, hi_exclusive) in doubles (powers of two, exact). */
static void integer_range(kiln_dtype dtype, double *lo, double *hi)
{
    int bits = (int)kiln_dtype_size(dtype) * 8;
    if (class_of(dtype) == CLASS_SIGNED) {
        *lo = -ldexp(1.0, bits - 1);
        *hi = ldexp(1.0, bits - 1);
    } else {
        *lo = 0.0;
        *hi = ldexp(1.0, bits);
    }
}

/* Store the 64-bit pattern `bits` truncated to the integer dtype (two's complement wrap). */
static void store_integer(kiln_dtype dtype, void *data, uint64_t e, uint64_t bits)
{
    switch (dtype) {
    case KILN_I8: ((int8_t *)data)[e] = (int8_t)(uint8_t)bits; break;
    case KILN_I16: ((int16_t *)data)[e] = (int16_t)(uint16_t)bits; break;
    case KILN_I32: ((int32_t *)data)[e] = (int32_t)(uint32_t)bits; break;
    case KILN_I64: ((int64_t *)data)[e] = (int64_t)bits; break;
    case KILN_U8: ((uint8_t *)data)[e] = (uint8_t)bits; break;
    case KILN_U16: ((uint16_t *)data)[e] = (uint16_t)bits; break;
    case KILN_U32: ((uint32_t *)data)[e] = (uint32_t)bits; break;
    case KILN_U64: ((uint64_t *)data)[e] = bits; break;
    default: break;
    }
}

/*
 * The conversions exported models run most (index arithmetic between f32,
 * i64 and i32; masks to and from bool) as typed loops: the general loop
 * below reads and writes each element through a switch on the dtypes,
 * about 8 ns an element, and T5's relative position buckets cast 4096
 * elements a dozen times a run. Each gives the general loop's values; a
 * float it cannot convert (NaN, out of range) returns false, and the
 * general loop runs to name the element.
 */
typedef bool (*cast_loop)(const void *in, void *out, uint64_t n);

#define CAST_FLOAT_TO_INT(NAME, S, D, LO, HI)                      \
    static bool NAME(const void *vin, void *vout, uint64_t n)      \
    {                                                              \
        const S *in = vin;                                         \
        D *out = vout;                                             \
        for (uint64_t e = 0; e < n; e++) {                         \
            double t = trunc((double)in[e]);                       \
            if (!(t >= (LO) && t < (HI)))                          \
                return false;                                      \
            out[e] = (D)t;                                         \
        }                                                          \
        return true;                                               \
    }
#define CAST_CONVERT(NAME, S, D, EXPR)                             \
    static bool NAME(const void *vin, void *vout, uint64_t n)      \
    {                                                              \
        const S *in = vin;                                         \
        D *out = vout;                                             \
        for (uint64_t e = 0; e < n; e++) {                         \
            S x = in[e];                                           \
            out[e] = (EXPR);                                       \
        }                                                          \
        return true;                                               \
    }

CAST_FLOAT_TO_INT(cast_f32_i64, float, int64_t, -0x1p63, 0x1p63)
CAST_FLOAT_TO_INT(cast_f32_i32, float, int32_t, -0x1p31, 0x1p31)
CAST_FLOAT_TO_INT(cast_f64_i64, double, int64_t, -0x1p63, 0x1p63)
CAST_CONVERT(cast_i64_f32, int64_t, float, (float)x)
CAST_CONVERT(cast_i32_f32, int32_t, float, (float)x)
CAST_CONVERT(cast_i64_f64, int64_t, double, (double)x)
CAST_CONVERT(cast_i32_i64, int32_t, int64_t, (int64_t)x)
CAST_CONVERT(cast_i64_i32, int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)x) /* wraps, as store_integer */
CAST_CONVERT(cast_bool_f32, uint8_t, float, x != 0 ? 1.0f : 0.0f)
CAST_CONVERT(cast_bool_i64, uint8_t, int64_t, x != 0)
CAST_CONVERT(cast_bool_i32, uint8_t, int32_t, x != 0)
CAST_CONVERT(cast_i64_bool, int64_t, uint8_t, x != 0)
CAST_CONVERT(cast_i32_bool, int32_t, uint8_t, x != 0)
CAST_CONVERT(cast_f32_bool, float, uint8_t, x != 0.0f)

static cast_loop typed_cast_loop(kiln_dtype from, kiln_dtype to)
{
    static const struct {
        kiln_dtype from, to;
        cast_loop loop;
    } loops[] = {
        {KILN_F32, KILN_I64, cast_f32_i64},   {KILN_F32, KILN_I32, cast_f32_i32},   {KILN_F64, KILN_I64, cast_f64_i64},
        {KILN_I64, KILN_F32, cast_i64_f32},   {KILN_I32, KILN_F32, cast_i32_f32},   {KILN_I64, KILN_F64, cast_i64_f64},
        {KILN_I32, KILN_I64, cast_i32_i64},   {KILN_I64, KILN_I32, cast_i64_i32},   {KILN_BOOL, KILN_F32, cast_bool_f32},
        {KILN_BOOL, KILN_I64, cast_bool_i64}, {KILN_BOOL, KILN_I32, cast_bool_i32}, {KILN_I64, KILN_BOOL, cast_i64_bool},
        {KILN_I32, KILN_BOOL, cast_i32_bool}, {KILN_F32, KILN_BOOL, cast_f32_bool},
    };
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
        if (loops[i].from == from && loops[i].to == to)
            return loops[i].loop;
    return NULL;
}

static kiln_status run_cast(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    kiln_dtype to;
    if (!cast_target(call->attributes, call->attribute_count, &to) || to != out->dtype ||
        !kiln_dtype_is_supported(in->dtype) || in->element_count != out->element_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "cast: operands do not match the op's shape rule");
    cast_loop typed = typed_cast_loop(in->dtype, to);
    if (typed && typed(in->data, out->data, in->element_count))
        return KILN_OK;
    cast_class from_class = class_of(in->dtype), to_class = class_of(to);
    double lo = 0, hi = 0;
    if (to_class == CLASS_SIGNED || to_class == CLASS_UNSIGNED)
        integer_range(to, &lo, &hi);
    for (uint64_t e = 0; e < in->element_count; e++) {
        scalar s = load_element(in->dtype, in->data, e);
        switch (to_class) {
        case CLASS_FLOAT: {
            double v = from_class == CLASS_FLOAT    ? s.f
                       : from_class == CLASS_SIGNED ? (double)s.i
                                                    : (double)s.u;
            if (to == KILN_F16 || to == KILN_BF16) {
                /* One rounding from the exact value: to odd in f32 first (half.h). */
                float odd = from_class == CLASS_FLOAT ? kiln_f64_to_f32_odd(s.f)
                            : from_class == CLASS_SIGNED && s.i < 0 ? -kiln_u64_to_f32_odd(0 - s.u)
                                                                    : kiln_u64_to_f32_odd(s.u);
                ((uint16_t *)out->data)[e] = to == KILN_F16 ? kiln_f32_to_f16(odd) : kiln_f32_to_bf16(odd);
            } else if (to == KILN_F32) {
                /* Integers convert straight to float (one rounding), not through double. */
                float f = from_class == CLASS_FLOAT    ? to_f32(s.f)
                          : from_class == CLASS_SIGNED ? (float)s.i
                                                       : (float)s.u;
                ((float *)out->data)[e] = f;
            } else {
                ((double *)out->data)[e] = v;
            }
            break;
        }
        case CLASS_BOOL:
            ((uint8_t *)out->data)[e] = from_class == CLASS_FLOAT ? (s.f != 0.0) : (s.u != 0);
            break;
        case CLASS_SIGNED:
        case CLASS_UNSIGNED:
            if (from_class == CLASS_FLOAT) {
                double t = trunc(s.f);
                if (isnan(s.f) || !(t >= lo && t < hi))
                    return kiln_fail(err, KILN_ERR_RUNTIME,
                                     "cast: element %llu (%.17g) cannot be converted to %s (NaN or out of range)",
                                     (unsigned long long)e, s.f, kiln_dtype_name(to));
                uint64_t bits = to_class == CLASS_SIGNED ? (uint64_t)(int64_t)t : (uint64_t)t;
                store_integer(to, out->data, e, bits);
            } else {
                store_integer(to, out->data, e, s.u);
            }
            break;
        }
    }
    return KILN_OK;
}

/* --------------------------------------------------------------- squeeze */

static const kiln_attribute_spec axes_attributes[] = {
    {"axes", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/*
 * The node's axes attribute normalised for `rank` into a mask.
 * @return false (with a message) when absent, out of range or repeated.
 */
static kiln_status axes_mask(const kiln_shape_context *ctx, uint32_t rank, bool *mask, uint32_t *count,
                             kiln_error *err)
{
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "axes", &attr, err));
    char text[160];
    format_ints(attr, text, sizeof text);
    memset(mask, 0, KILN_MAX_RANK * sizeof *mask);
    for (uint32_t i = 0; i < attr->count; i++) {
        uint32_t axis;
        if (!normalize_axis(attr->ints[i], rank, &axis) || mask[axis])
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: axes [%s]: axis %lld is outside %d..%d or repeated (rank %u)", ctx->node_label,
                             text, (long long)attr->ints[i], -(int)rank, (int)rank - 1, rank);
        mask[axis] = true;
    }
    *count = attr->count;
    return KILN_OK;
}

static kiln_status infer_squeeze(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    bool mask[KILN_MAX_RANK];
    uint32_t count;
    KILN_TRY(axes_mask(ctx, x->shape.rank, mask, &count, err));
    out->dtype = x->dtype;
    out->shape.rank = 0;
    for (uint32_t i = 0; i < x->shape.rank; i++) {
        uint32_t size = x->shape.axes[i];
        if (!mask[i]) {
            out->shape.axes[out->shape.rank++] = size;
            continue;
        }
        if (kiln_expr_is_const(ctx->pool, size, 1))
            continue;
        char text[128];
        kiln_format_size(ctx, size, text, sizeof text);
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: cannot squeeze axis %u: its size %s is not provably 1 (only the constant 1 is)",
                         ctx->node_label, i, text);
    }
    return KILN_OK;
}

static kiln_status run_squeeze(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    return copy_bytes("squeeze", call, err);
}

/* ------------------------------------------------------------- unsqueeze */

static kiln_status infer_unsqueeze(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                   uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "axes", &attr, err));
    if ((uint64_t)x->shape.rank + attr->count > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the output rank %llu exceeds %d", ctx->node_label,
                         (unsigned long long)x->shape.rank + attr->count, KILN_MAX_RANK);
    uint32_t rank = x->shape.rank + attr->count, count;
    bool mask[KILN_MAX_RANK];
    KILN_TRY(axes_mask(ctx, rank, mask, &count, err));
    uint32_t one;
    KILN_TRY(kiln_expr_const(ctx->pool, 1, &one, err));
    out->dtype = x->dtype;
    out->shape.rank = rank;
    for (uint32_t i = 0, j = 0; i < rank; i++)
        out->shape.axes[i] = mask[i] ? one : x->shape.axes[j++];
    return KILN_OK;
}

static kiln_status run_unsqueeze(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    return copy_bytes("unsqueeze", call, err);
}

/* --------------------------------------------------------------- reshape */

static const kiln_attribute_spec reshape_attributes[] = {
    {"shape", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

static kiln_status infer_reshape(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "shape", &attr, err));
    char text[160];
    format_ints(attr, text, sizeof text);
    if (attr->count > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s] has more than %d axes", ctx->node_label,
                         text, KILN_MAX_RANK);
    bool copied[KILN_MAX_RANK] = {false};
    int64_t constant = 1;
    int inferred = -1;
    for (uint32_t i = 0; i < attr->count; i++) {
        int64_t v = attr->ints[i];
        if (v == 0) {
            if (i >= x->shape.rank)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: shape [%s]: 0 at position %u copies an input axis, but the input has rank %u",
                                 ctx->node_label, text, i, x->shape.rank);
            copied[i] = true;
        } else if (v == -1) {
            if (inferred >= 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s] has more than one -1",
                                 ctx->node_label, text);
            inferred = (int)i;
        } else if (v < -1) {
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s]: %lld is not a size, 0 or -1",
                             ctx->node_label, text, (long long)v);
        } else if (__builtin_mul_overflow(constant, v, &constant)) {
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s] overflows", ctx->node_label, text);
        }
    }
    out->dtype = x->dtype;
    out->shape.rank = attr->count;
    for (uint32_t i = 0; i < attr->count; i++) {
        int64_t v = attr->ints[i];
        if (v == 0)
            out->shape.axes[i] = x->shape.axes[i];
        else if (v > 0)
            KILN_TRY(kiln_expr_const(ctx->pool, v, &out->shape.axes[i], err));
    }
    if (inferred >= 0) {
        uint32_t rest;
        KILN_TRY(kiln_axis_product(ctx, &x->shape, 0, x->shape.rank, copied, "element count", &rest, err));
        const kiln_expr *r = &ctx->pool->items[rest];
        uint32_t axis;
        if (constant == 1) {
            axis = rest;
        } else if (r->kind == KILN_EXPR_CONST && r->constant % constant == 0) {
            KILN_TRY(kiln_expr_const(ctx->pool, r->constant / constant, &axis, err));
        } else if (r->kind == KILN_EXPR_MUL && is_const(ctx, r->lhs) &&
                   ctx->pool->items[r->lhs].constant % constant == 0) {
            KILN_TRY(kiln_expr_scale(ctx, r->rhs, ctx->pool->items[r->lhs].constant / constant, &axis, err));
        } else {
            uint32_t divisor;
            KILN_TRY(kiln_expr_const(ctx->pool, constant, &divisor, err));
            kiln_expr div = {.kind = KILN_EXPR_FLOORDIV, .lhs = rest, .rhs = divisor};
            KILN_TRY(kiln_expr_intern(ctx->pool, &div, ctx->dim_count, &axis, err));
        }
        out->shape.axes[inferred] = axis;
    }

    /* Precondition: equal element counts over the whole declared domain
     * (equal products have equal canonical polynomials). */
    char what[640], in_text[160], out_text[160];
    uint32_t in_count, out_count;
    KILN_TRY(kiln_axis_product(ctx, &x->shape, 0, x->shape.rank, NULL, "element count", &in_count, err));
    KILN_TRY(kiln_axis_product(ctx, &out->shape, 0, out->shape.rank, NULL, "element count", &out_count, err));
    kiln_format_size(ctx, in_count, in_text, sizeof in_text);
    kiln_format_size(ctx, out_count, out_text, sizeof out_text);
    snprintf(what, sizeof what, "reshape [%s] keeps the element count (input %s, output %s)", text, in_text,
             out_text);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, in_count, out_count, 0};
    return kiln_prove_size_claim(ctx, &claim, what, NULL, err);
}

static kiln_status run_reshape(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    return copy_bytes("reshape", call, err);
}

/* ---------------------------------------------------------------- concat */

static const kiln_attribute_spec concat_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_concat(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *first = inputs[0];
    KILN_TRY(require_supported(ctx, first->dtype, err));
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "axis", &attr, err));
    uint32_t rank = first->shape.rank, axis;
    if (!normalize_axis(attr->i, rank, &axis))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: axis %lld is outside %d..%d for rank %u",
                         ctx->node_label, (long long)attr->i, -(int)rank, (int)rank - 1, rank);
    for (uint32_t k = 1; k < input_count; k++) {
        KILN_TRY(kiln_require_same_dtype(ctx, first, inputs[k], err));
        if (inputs[k]->shape.rank != rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: input %u has rank %u, input 0 has rank %u",
                             ctx->node_label, k, inputs[k]->shape.rank, rank);
        for (uint32_t j = 0; j < rank; j++) {
            uint32_t a = first->shape.axes[j], b = inputs[k]->shape.axes[j];
            if (j == axis || a == b)
                continue;
            char left[128], right[128], what[400];
            kiln_format_size(ctx, a, left, sizeof left);
            kiln_format_size(ctx, b, right, sizeof right);
            snprintf(what, sizeof what, "axis %u of input 0 (%s) equals axis %u of input %u (%s)", j, left, j, k,
                     right);
            kiln_size_claim claim = {KILN_CLAIM_EQUAL, a, b, 0};
            KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Use the same dim", err));
        }
    }
    /* The sum along the axis: symbolic parts in input order, constants folded into one. */
    int64_t constant = 0;
    uint32_t symbolic = 0;
    bool have_symbolic = false;
    for (uint32_t k = 0; k < input_count; k++) {
        uint32_t size = inputs[k]->shape.axes[axis];
        const kiln_expr *x = &ctx->pool->items[size];
        if (x->kind == KILN_EXPR_CONST) {
            if (__builtin_add_overflow(constant, x->constant, &constant))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the output size overflows", ctx->node_label);
            continue;
        }
        if (x->kind == KILN_EXPR_ADD && is_const(ctx, x->rhs)) {
            if (__builtin_add_overflow(constant, ctx->pool->items[x->rhs].constant, &constant))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the output size overflows", ctx->node_label);
            size = x->lhs;
        }
        if (!have_symbolic) {
            symbolic = size;
            have_symbolic = true;
            continue;
        }
        kiln_expr add = {.kind = KILN_EXPR_ADD, .lhs = symbolic, .rhs = size};
        KILN_TRY(kiln_expr_intern(ctx->pool, &add, ctx->dim_count, &symbolic, err));
    }
    *out = *first;
    if (!have_symbolic)
        return kiln_expr_const(ctx->pool, constant, &out->shape.axes[axis], err);
    return offset_expr(ctx, symbolic, constant, &out->shape.axes[axis], err);
}

/*
 * concat along the channel axis of channels-last operands (layout.h: the
 * session hands them over only when every one is, role CHANNEL_CONCAT):
 * each image position's channels, operand after operand, is the
 * channels-last result. Why: a row-major concat made the session convert
 * every operand back from channels-last, and the convs after it read
 * row-major data, where oneDNN runs a pointwise conv as a GEMM over NCHW
 * (GoogLeNet's, SqueezeNet's and DenseNet's blocks all begin with one).
 * Positions split over the session's threads as a costly op's elements
 * (a copy of scattered rows: DenseNet-121's 62 concats of 6 to 1024
 * channels).
 */
typedef struct concat_job {
    const kiln_kernel_call *call;
    size_t width;               /* bytes per element */
    uint64_t positions;         /* per image */
} concat_job;

/* Result positions [begin, end), counted over every image, from every operand. */
static void concat_positions(const void *vjob, uint64_t begin, uint64_t end)
{
    const concat_job *job = vjob;
    const kiln_kernel_call *call = job->call;
    kiln_tensor *out = call->output;
    uint64_t channels = (uint64_t)out->shape[1], positions = job->positions;
    size_t out_row = (size_t)channels * job->width, offset = 0;
    for (uint32_t k = 0; k < call->input_count; k++) {
        const kiln_tensor *in = call->inputs[k];
        uint64_t c_in = (uint64_t)in->shape[1];
        size_t in_row = (size_t)c_in * job->width;
        const uint8_t *src = in->data;
        uint8_t *dst = (uint8_t *)out->data + offset;
        if (call->context->channels_last_operands >> k & 1u) {
            for (uint64_t r = begin; r < end && in_row; r++)
                memcpy(dst + r * out_row, src + r * in_row, in_row);
        } else {
            /* A row-major operand ([N][C_k][positions]) is transposed into place. */
            const float *from = in->data;
            for (uint64_t r = begin; r < end;) {
                uint64_t n = r / positions, p0 = r % positions;
                uint64_t p1 = end - n * positions < positions ? end - n * positions : positions;
                for (uint64_t c = 0; c < c_in; c++) {
                    const float *plane = from + (n * c_in + c) * positions;
                    float *to = (float *)(dst + n * positions * out_row) + c;
                    for (uint64_t p = p0; p < p1; p++)
                        to[p * channels] = plane[p];
                }
                r = n * positions + p1;
            }
        }
        offset += in_row;
    }
}

static void concat_channels_last(const kiln_kernel_call *call, size_t width)
{
    kiln_tensor *out = call->output;
    uint64_t images = (uint64_t)out->shape[0], channels = (uint64_t)out->shape[1];
    uint64_t positions = out->element_count / (images * channels);
    concat_job job = {call, width, positions};
    uint64_t min_positions = (kiln_parallel_min_costly_elements() + channels - 1) / channels;
    kiln_parallel_chunks_from(images * positions, kiln_call_threads(call), min_positions, concat_positions, &job);
    call->context->wrote_channels_last = true;
}

static kiln_status run_concat(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    kiln_tensor *out = call->output;
    uint32_t rank = out->rank, axis;
    if (rank == 0 ||
        !normalize_axis(kiln_attribute_int(call->attributes, call->attribute_count, "axis", 0), rank, &axis))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "concat: operands do not match the op's shape rule");
    int64_t total = 0;
    for (uint32_t k = 0; k < call->input_count; k++) {
        const kiln_tensor *in = call->inputs[k];
        if (in->rank != rank || in->dtype != out->dtype)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "concat: input %u does not match the output", k);
        for (uint32_t j = 0; j < rank; j++)
            if (j != axis && in->shape[j] != out->shape[j])
                return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "concat: input %u axis %u has size %lld, not %lld",
                                 k, j, (long long)in->shape[j], (long long)out->shape[j]);
        if (__builtin_add_overflow(total, in->shape[axis], &total))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "concat: the inputs' axis %u sizes overflow", axis);
    }
    if (total != out->shape[axis])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "concat: the inputs' axis %u sizes do not add up", axis);
    /* An empty result copies nothing, but its axes before `axis` may still
     * multiply to 2^63 (shape (2^63-1, 0) along axis 1): no loop over them. */
    if (out->element_count == 0)
        return KILN_OK;
    size_t width = kiln_dtype_size(out->dtype);
    if (call->context && call->context->channels_last_operands && axis == 1 && out->dtype == KILN_F32) {
        concat_channels_last(call, width);
        return KILN_OK;
    }
    uint64_t outer = 1;
    size_t inner = width;
    for (uint32_t j = 0; j < axis; j++)
        outer *= (uint64_t)out->shape[j];
    for (uint32_t j = axis + 1; j < rank; j++)
        inner *= (size_t)out->shape[j];
    uint8_t *dst = out->data;
    for (uint64_t o = 0; o < outer; o++)
        for (uint32_t k = 0; k < call->input_count; k++) {
            const kiln_tensor *in = call->inputs[k];
            size_t block = (size_t)in->shape[axis] * inner;
            if (block) {
                memcpy(dst, (const uint8_t *)in->data + o * block, block);
                dst += block;
            }
        }
    return KILN_OK;
}

/* ---------------------------------------------------------------- expand */

static const kiln_attribute_spec expand_attributes[] = {
    {"shape", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

static kiln_status infer_expand(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "shape", &attr, err));
    char text[160];
    format_ints(attr, text, sizeof text);
    if (attr->count > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s] has more than %d axes", ctx->node_label,
                         text, KILN_MAX_RANK);
    kiln_shape target = {.rank = attr->count};
    for (uint32_t i = 0; i < attr->count; i++) {
        if (attr->ints[i] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s]: %lld is not a size", ctx->node_label,
                             text, (long long)attr->ints[i]);
        KILN_TRY(kiln_expr_const(ctx->pool, attr->ints[i], &target.axes[i], err));
    }
    out->dtype = x->dtype;
    return kiln_broadcast_shapes(ctx, &x->shape, &target, &out->shape, err);
}

/* Copy elements of width `width` from `in` walking `out` in order, the input at element strides `strides`. */
static void strided_copy(const kiln_tensor *in, kiln_tensor *out, const int64_t *strides, size_t width)
{
    int64_t index[KILN_MAX_RANK] = {0}, offset = 0;
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (uint64_t e = 0; e < out->element_count; e++) {
        memcpy(dst + e * width, src + (size_t)offset * width, width);
        kiln_odometer_next_offset(index, out->rank, out->shape, strides, &offset);
    }
}

static kiln_status run_expand(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    if (in->dtype != out->dtype || in->rank > out->rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "expand: operands do not match the op's shape rule");
    uint32_t offset = out->rank - in->rank;
    for (uint32_t i = 0; i < in->rank; i++)
        if (in->shape[i] != 1 && in->shape[i] != out->shape[offset + i])
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "expand: input axis %u (%lld) does not broadcast to %lld",
                             i, (long long)in->shape[i], (long long)out->shape[offset + i]);
    int64_t strides[KILN_MAX_RANK];
    kiln_broadcast_strides(in, out, strides);
    strided_copy(in, out, strides, kiln_dtype_size(out->dtype));
    return KILN_OK;
}

/* ------------------------------------------------------------- expand_to */

static const kiln_attribute_spec expand_to_attributes[] = {
    {"shape", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

/*
 * expand with a target written over the declared dims ("[batch, 1, 1]"):
 * the output shape is still an expression over the dims, so the kernel is
 * expand's, which reads only the output's run-time shape.
 */
static kiln_status infer_expand_to(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                   uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    kiln_shape target;
    KILN_TRY(kiln_shape_attribute(ctx, "shape", 0, &target, err));
    out->dtype = x->dtype;
    return kiln_broadcast_shapes(ctx, &x->shape, &target, &out->shape, err);
}

/* ------------------------------------------------------------------ tile */

static const kiln_attribute_spec tile_attributes[] = {
    {"repeats", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

static kiln_status infer_tile(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                              uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "repeats", &attr, err));
    char text[160];
    format_ints(attr, text, sizeof text);
    if (attr->count != x->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: repeats [%s] needs one entry per axis (rank %u)",
                         ctx->node_label, text, x->shape.rank);
    out->dtype = x->dtype;
    out->shape.rank = x->shape.rank;
    for (uint32_t i = 0; i < x->shape.rank; i++) {
        if (attr->ints[i] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: repeats [%s]: %lld is negative", ctx->node_label,
                             text, (long long)attr->ints[i]);
        KILN_TRY(kiln_expr_scale(ctx, x->shape.axes[i], attr->ints[i], &out->shape.axes[i], err));
    }
    return KILN_OK;
}

static kiln_status run_tile(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    const kiln_node_attribute *attr = kiln_attribute_find(call->attributes, call->attribute_count, "repeats");
    if (!attr || attr->count != in->rank || in->rank != out->rank || in->dtype != out->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "tile: operands do not match the op's shape rule");
    for (uint32_t i = 0; i < in->rank; i++) {
        int64_t size;
        if (__builtin_mul_overflow(in->shape[i], attr->ints[i], &size) || out->shape[i] != size)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "tile: output axis %u has the wrong size", i);
    }
    if (out->element_count == 0)
        return KILN_OK;
    int64_t strides[KILN_MAX_RANK], index[KILN_MAX_RANK] = {0}, source[KILN_MAX_RANK] = {0}, offset = 0;
    strides_of(in, strides);
    size_t width = kiln_dtype_size(out->dtype);
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (uint64_t e = 0; e < out->element_count; e++) {
        memcpy(dst + e * width, src + (size_t)offset * width, width);
        for (uint32_t axis = out->rank; axis-- > 0;) {
            index[axis]++;
            source[axis]++;
            offset += strides[axis];
            if (source[axis] == in->shape[axis]) { /* wrap to the next repetition */
                offset -= strides[axis] * source[axis];
                source[axis] = 0;
            }
            if (index[axis] < out->shape[axis])
                break;
            offset -= strides[axis] * source[axis];
            source[axis] = 0;
            index[axis] = 0;
        }
    }
    return KILN_OK;
}

/* ------------------------------------------------------------------- pad */

static const kiln_attribute_spec pad_attributes[] = {
    {"mode", KILN_ATTRIBUTE_STRING},
    {"pads", KILN_ATTRIBUTE_INTS},
    {"value", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE } pad_mode;

static bool pad_mode_of(const kiln_node_attribute *attributes, uint32_t count, pad_mode *mode)
{
    const kiln_node_attribute *attr = kiln_attribute_find(attributes, count, "mode");
    const char *s = attr && attr->s ? attr->s : "constant";
    *mode = strcmp(s, "reflect") == 0 ? PAD_REFLECT : strcmp(s, "edge") == 0 ? PAD_EDGE : PAD_CONSTANT;
    return strcmp(s, "constant") == 0 || *mode != PAD_CONSTANT;
}

/* Whether `value` is exactly representable in `dtype` (floats: finite values round; NaN/inf pass for floats). */
static bool pad_value_fits(kiln_dtype dtype, double value)
{
    cast_class c = class_of(dtype);
    if (c == CLASS_FLOAT)
        return true;
    if (c == CLASS_BOOL)
        return value == 0.0 || value == 1.0;
    double lo, hi;
    integer_range(dtype, &lo, &hi);
    return value == trunc(value) && value >= lo && value < hi;
}

static kiln_status infer_pad(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                             uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x->dtype, err));
    uint32_t rank = x->shape.rank;
    const kiln_node_attribute *attr;
    KILN_TRY(require_attribute(ctx, "pads", &attr, err));
    char text[160];
    format_ints(attr, text, sizeof text);
    if (attr->count != 2 * rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: pads [%s] needs 2*rank = %u entries (begins, then ends)", ctx->node_label, text,
                         2 * rank);
    for (uint32_t i = 0; i < attr->count; i++)
        if (attr->ints[i] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: pads [%s]: %lld is negative", ctx->node_label,
                             text, (long long)attr->ints[i]);
    pad_mode mode;
    if (!pad_mode_of(ctx->attributes, ctx->attribute_count, &mode)) {
        const kiln_node_attribute *m = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "mode");
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: mode \"%s\" is not constant, reflect or edge",
                         ctx->node_label, m && m->s ? m->s : "");
    }
    double value = kiln_attribute_float(ctx->attributes, ctx->attribute_count, "value", 0.0);
    if (mode == PAD_CONSTANT && !pad_value_fits(x->dtype, value))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: value %.17g is not exactly representable in %s",
                         ctx->node_label, value, kiln_dtype_name(x->dtype));

    kiln_status status = KILN_OK;
    out->dtype = x->dtype;
    out->shape.rank = rank;
    for (uint32_t i = 0; i < rank && status == KILN_OK; i++) {
        int64_t begin = attr->ints[i], end = attr->ints[rank + i], total;
        uint32_t size = x->shape.axes[i];
        if (__builtin_add_overflow(begin, end, &total)) {
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: pads [%s] overflow", ctx->node_label, text);
            break;
        }
        if (total > 0 && mode != PAD_CONSTANT) {
            int64_t need = mode == PAD_REFLECT ? (begin > end ? begin : end) : 0;
            if (need == INT64_MAX) {
                status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: pads [%s] overflow", ctx->node_label, text);
                break;
            }
            char size_text[128], what[256];
            kiln_format_size(ctx, size, size_text, sizeof size_text);
            snprintf(what, sizeof what, "%s padding of axis %u (pads %lld, %lld) has its size %s > %lld",
                     mode == PAD_REFLECT ? "reflect" : "edge", i, (long long)begin, (long long)end, size_text,
                     (long long)need);
            kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, size, 0, need + 1};
            status = kiln_prove_size_claim(ctx, &claim, what, NULL, err);
            if (status != KILN_OK)
                break;
        }
        status = offset_expr(ctx, size, total, &out->shape.axes[i], err);
    }
    return status;
}

/* Store `value` (exactly representable, checked by the shape rule) as one element of `dtype`. */
static void pad_fill(kiln_dtype dtype, double value, uint8_t *bytes)
{
    switch (class_of(dtype)) {
    case CLASS_FLOAT:
        if (dtype == KILN_F16 || dtype == KILN_BF16) {
            uint16_t h = dtype == KILN_F16 ? kiln_f64_to_f16(value) : kiln_f64_to_bf16(value);
            memcpy(bytes, &h, sizeof h);
        } else if (dtype == KILN_F32) {
            float f = to_f32(value);
            memcpy(bytes, &f, sizeof f);
        } else {
            memcpy(bytes, &value, sizeof value);
        }
        break;
    case CLASS_BOOL: bytes[0] = value != 0.0; break;
    case CLASS_SIGNED: store_integer(dtype, bytes, 0, (uint64_t)(int64_t)value); break;
    case CLASS_UNSIGNED: store_integer(dtype, bytes, 0, (uint64_t)value); break;
    }
}

/* `count` elements of `fill` (width bytes each) at `dst`. */
static void fill_elements(uint8_t *dst, uint64_t count, const uint8_t *fill, size_t width)
{
    static const uint8_t zero[8];
    if (memcmp(fill, zero, width) == 0) {
        memset(dst, 0, (size_t)count * width);
        return;
    }
    for (uint64_t i = 0; i < count; i++)
        memcpy(dst + i * width, fill, width);
}

/*
 * Constant padding a row at a time: an output row (the last axis) is the
 * fill value where the outer axes fall in the pads, else the pads' fill
 * around one copied input row. The element-by-element walk spent 5% of
 * DenseNet-121's run on three pads with every pad 0 (PyTorch exports an
 * avg_pool's padding as a separate Pad).
 */
static void pad_constant_rows(const kiln_tensor *in, kiln_tensor *out, const int64_t *begins, const int64_t *ends,
                              const uint8_t *fill, size_t width)
{
    uint32_t rank = in->rank, outer = rank - 1;
    int64_t strides[KILN_MAX_RANK], index[KILN_MAX_RANK] = {0};
    strides_of(in, strides);
    int64_t row = out->shape[outer], in_row = in->shape[outer];
    uint64_t rows = out->element_count / (uint64_t)row;
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    for (uint64_t r = 0; r < rows; r++, dst += (size_t)row * width) {
        int64_t offset = 0;
        bool inside = true;
        for (uint32_t i = 0; i < outer && inside; i++) {
            int64_t s = index[i] - begins[i];
            inside = s >= 0 && s < in->shape[i];
            offset += s * strides[i];
        }
        if (!inside) {
            fill_elements(dst, (uint64_t)row, fill, width);
        } else {
            fill_elements(dst, (uint64_t)begins[outer], fill, width);
            memcpy(dst + (size_t)begins[outer] * width, src + (size_t)offset * width, (size_t)in_row * width);
            fill_elements(dst + (size_t)(begins[outer] + in_row) * width, (uint64_t)ends[outer], fill, width);
        }
        kiln_odometer_next(index, outer, out->shape);
    }
}

static kiln_status run_pad(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    const kiln_node_attribute *attr = kiln_attribute_find(call->attributes, call->attribute_count, "pads");
    pad_mode mode;
    double value = kiln_attribute_float(call->attributes, call->attribute_count, "value", 0.0);
    if (!attr || attr->count != 2 * in->rank || in->rank != out->rank || in->dtype != out->dtype ||
        !pad_mode_of(call->attributes, call->attribute_count, &mode) ||
        (mode == PAD_CONSTANT && !pad_value_fits(in->dtype, value)))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "pad: operands do not match the op's shape rule");
    uint32_t rank = in->rank;
    const int64_t *begins = attr->ints, *ends = attr->ints + rank;
    for (uint32_t i = 0; i < rank; i++) {
        int64_t n = in->shape[i];
        bool padded = begins[i] > 0 || ends[i] > 0;
        int64_t padded_size;
        if (__builtin_add_overflow(n, begins[i], &padded_size) ||
            __builtin_add_overflow(padded_size, ends[i], &padded_size) || out->shape[i] != padded_size ||
            begins[i] < 0 || ends[i] < 0 ||
            (padded && mode == PAD_EDGE && n < 1) ||
            (padded && mode == PAD_REFLECT && (n <= begins[i] || n <= ends[i])))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "pad: axis %u (size %lld) does not fit the pads", i,
                             (long long)n);
    }
    /* Nothing to write; and the strides of an empty input may overflow. */
    if (out->element_count == 0)
        return KILN_OK;
    size_t width = kiln_dtype_size(out->dtype);
    uint8_t fill[8] = {0};
    pad_fill(out->dtype, value, fill);
    int64_t strides[KILN_MAX_RANK], index[KILN_MAX_RANK] = {0};
    strides_of(in, strides);
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    if (mode == PAD_CONSTANT && rank > 0) {
        pad_constant_rows(in, out, begins, ends, fill, width);
        return KILN_OK;
    }
    for (uint64_t e = 0; e < out->element_count; e++) {
        int64_t offset = 0;
        bool inside = true;
        for (uint32_t i = 0; i < rank; i++) {
            int64_t n = in->shape[i], s = index[i] - begins[i];
            if (s < 0 || s >= n) {
                if (mode == PAD_CONSTANT) {
                    inside = false;
                    break;
                }
                if (mode == PAD_EDGE)
                    s = s < 0 ? 0 : n - 1;
                else
                    s = s < 0 ? -s : 2 * (n - 1) - s;
            }
            offset += s * strides[i];
        }
        memcpy(dst + e * width, inside ? src + (size_t)offset * width : fill, width);
        kiln_odometer_next(index, rank, out->shape);
    }
    return KILN_OK;
}

/* ------------------------------------------------------ shape_of, size_of */

static kiln_status infer_shape_of(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    KILN_TRY(require_supported(ctx, inputs[0]->dtype, err));
    out->dtype = KILN_I64;
    out->shape.rank = 1;
    return kiln_expr_const(ctx->pool, inputs[0]->shape.rank, &out->shape.axes[0], err);
}

static kiln_status run_shape_of(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    if (out->dtype != KILN_I64 || out->rank != 1 || out->shape[0] != (int64_t)in->rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "shape_of: operands do not match the op's shape rule");
    if (in->rank)
        memcpy(out->data, in->shape, in->rank * sizeof in->shape[0]);
    return KILN_OK;
}

static kiln_status infer_size_of(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    KILN_TRY(require_supported(ctx, inputs[0]->dtype, err));
    out->dtype = KILN_I64;
    out->shape.rank = 0;
    return KILN_OK;
}

static kiln_status run_size_of(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    kiln_tensor *out = call->output;
    if (out->dtype != KILN_I64 || out->rank != 0 || call->inputs[0]->element_count > INT64_MAX)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "size_of: operands do not match the op's shape rule");
    int64_t count = (int64_t)call->inputs[0]->element_count;
    memcpy(out->data, &count, sizeof count);
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

#define MAX_CONCAT_INPUTS 64

static const kiln_op_def shape_ops[] = {
    {.name = "identity", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_identity, .run = run_identity,
     .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "cast", .versions = {1, 1}, .inputs = {1, 1}, .attributes = cast_attributes,
     .infer = infer_cast, .run = run_cast},
    {.name = "squeeze", .versions = {1, 1}, .inputs = {1, 1}, .attributes = axes_attributes,
     .infer = infer_squeeze, .run = run_squeeze, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "unsqueeze", .versions = {1, 1}, .inputs = {1, 1}, .attributes = axes_attributes,
     .infer = infer_unsqueeze, .run = run_unsqueeze, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "reshape", .versions = {1, 1}, .inputs = {1, 1}, .attributes = reshape_attributes,
     .infer = infer_reshape, .run = run_reshape, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "concat", .versions = {1, 1}, .inputs = {1, MAX_CONCAT_INPUTS}, .attributes = concat_attributes,
     .infer = infer_concat, .run = run_concat,
     .traits = {.layout = KILN_LAYOUT_CHANNEL_CONCAT, .magnitude = KILN_MAGNITUDE_LARGEST_OPERAND}},
    {.name = "expand", .versions = {1, 1}, .inputs = {1, 1}, .attributes = expand_attributes,
     .infer = infer_expand, .run = run_expand},
    {.name = "expand_to", .versions = {1, 1}, .inputs = {1, 1}, .attributes = expand_to_attributes,
     .infer = infer_expand_to, .run = run_expand},
    {.name = "tile", .versions = {1, 1}, .inputs = {1, 1}, .attributes = tile_attributes,
     .infer = infer_tile, .run = run_tile},
    {.name = "pad", .versions = {1, 1}, .inputs = {1, 1}, .attributes = pad_attributes,
     .infer = infer_pad, .run = run_pad},
    {.name = "shape_of", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_shape_of, .run = run_shape_of},
    {.name = "size_of", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_size_of, .run = run_size_of},
};

const kiln_op_family kiln_ops_shape = KILN_OP_FAMILY(shape_ops, "spec/ops/shape.md");
