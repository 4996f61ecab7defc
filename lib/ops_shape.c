/*
 * ops_shape.c — shape and layout ops (identity, cast, squeeze, unsqueeze,
 * reshape, concat, expand, tile, pad, shape_of, size_of): shape rules and
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
#include "broadcast.h"
#include "domain_search.h"
#include "format/error.h"
#include "op_registry.h"
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

/*
 * The dims used by expressions `ids`, into `involved`; their ranges are
 * described in `text`. @return false if there are more than KILN_DOMAIN_MAX_INVOLVED.
 */
static bool collect_dims(const kiln_shape_context *ctx, const uint32_t *ids, uint32_t id_count, uint32_t *involved,
                         uint32_t *involved_count, char *text, size_t size)
{
    size_t used = 0;
    *involved_count = 0;
    if (size)
        text[0] = '\0';
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        bool uses = false;
        for (uint32_t i = 0; i < id_count && !uses; i++)
            uses = kiln_expr_uses_dim(ctx->pool, ids[i], d);
        if (!uses)
            continue;
        if (*involved_count == KILN_DOMAIN_MAX_INVOLVED)
            return false;
        involved[(*involved_count)++] = d;
        if (used < size)
            used += (size_t)snprintf(text + used, size - used, "%s%s in %lld..%lld", used ? ", " : "",
                                     ctx->dims[d].name, (long long)ctx->dims[d].min, (long long)ctx->dims[d].max);
    }
    return true;
}

/* Points of the domain spanned by the involved dims (saturating above the enumeration limit). */
static uint64_t domain_points(const kiln_shape_context *ctx, const uint32_t *involved, uint32_t involved_count)
{
    uint64_t points = 1;
    for (uint32_t i = 0; i < involved_count; i++) {
        const kiln_dim_decl *d = &ctx->dims[involved[i]];
        uint64_t n = (uint64_t)((kiln_dim_last(d) - kiln_dim_first(d)) / d->multiple_of) + 1;
        if (n > KILN_DOMAIN_ENUMERATION_LIMIT || points * n > KILN_DOMAIN_ENUMERATION_LIMIT)
            return KILN_DOMAIN_ENUMERATION_LIMIT + 1;
        points *= n;
    }
    return points;
}

/* What a search of the domain came to. Only EXAMPLE_NONE after an
 * exhaustive search is a proof; EXAMPLE_NOT_SEARCHED (out of memory) never is. */
typedef enum example_result { EXAMPLE_NONE, EXAMPLE_FOUND, EXAMPLE_NOT_SEARCHED } example_result;

/*
 * Search the involved dims for a point where `holds` fails; when found,
 * write "d1=v1, d2=v2" into `example`.
 */
static example_result find_example(const kiln_shape_context *ctx, const uint32_t *involved, uint32_t involved_count,
                                   kiln_domain_predicate holds, void *context, char *example, size_t size)
{
    int64_t *values = malloc((ctx->dim_count + 1) * sizeof *values);
    bool *bound = malloc((ctx->dim_count + 1) * sizeof *bound);
    example_result found = values && bound ? EXAMPLE_NONE : EXAMPLE_NOT_SEARCHED;
    if (found == EXAMPLE_NONE &&
        kiln_domain_find_counterexample(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count, holds,
                                        context, values, bound)) {
        size_t used = 0;
        example[0] = '\0';
        for (uint32_t i = 0; i < involved_count && used < size; i++)
            used += (size_t)snprintf(example + used, size - used, "%s%s=%lld", i ? ", " : "",
                                     ctx->dims[involved[i]].name, (long long)values[involved[i]]);
        found = EXAMPLE_FOUND;
    }
    free(values);
    free(bound);
    return found;
}

typedef struct size_pair {
    uint32_t a, b;
} size_pair;

static bool sizes_equal(const kiln_expr_pool *pool, const int64_t *values, const bool *bound, void *context)
{
    const size_pair *pair = context;
    int64_t va, vb;
    if (kiln_expr_eval(pool, pair->a, values, bound, &va, NULL) != KILN_OK ||
        kiln_expr_eval(pool, pair->b, values, bound, &vb, NULL) != KILN_OK)
        return false;
    return va == vb;
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

/* The constant c * e, folded: c*(k*s) = (c*k)*s, constants multiply, 1*e = e, 0*e = 0. */
static kiln_status scale_expr(const kiln_shape_context *ctx, uint32_t e, int64_t c, uint32_t *out, kiln_error *err)
{
    const kiln_expr *x = &ctx->pool->items[e];
    if (c == 1) {
        *out = e;
        return KILN_OK;
    }
    int64_t k = 1;
    uint32_t s = e;
    if (x->kind == KILN_EXPR_CONST) {
        int64_t v;
        if (__builtin_mul_overflow(x->constant, c, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return kiln_expr_const(ctx->pool, v, out, err);
    }
    if (c == 0)
        return kiln_expr_const(ctx->pool, 0, out, err);
    if (x->kind == KILN_EXPR_MUL && ctx->pool->items[x->lhs].kind == KILN_EXPR_CONST) {
        k = ctx->pool->items[x->lhs].constant;
        s = x->rhs;
    }
    int64_t factor;
    if (__builtin_mul_overflow(k, c, &factor))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
    if (factor == 1) {
        *out = s;
        return KILN_OK;
    }
    uint32_t cid;
    KILN_TRY(kiln_expr_const(ctx->pool, factor, &cid, err));
    kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = cid, .rhs = s};
    return kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, out, err);
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
        stride *= t->shape[i];
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
                         "%s: 'to' is \"%s\", not a supported dtype (f32, f64, i8, i16, i32, i64, u8, u16, u32, "
                         "u64, bool)",
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
    case KILN_F64: return CLASS_FLOAT;
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

static kiln_status run_cast(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    kiln_dtype to;
    if (!cast_target(call->attributes, call->attribute_count, &to) || to != out->dtype ||
        !kiln_dtype_is_supported(in->dtype) || in->element_count != out->element_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "cast: operands do not match the op's shape rule");
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
            if (to == KILN_F32) {
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
    return copy_bytes("unsqueeze", call, err);
}

/* --------------------------------------------------------------- reshape */

static const kiln_attribute_spec reshape_attributes[] = {
    {"shape", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/*
 * The product of axes [from, to) of `shape` skipping those in `skip` (may
 * be NULL), kept small like flatten's: constants fold into one constant c,
 * the other factors multiply in axis order into s; the result is c*s.
 */
static kiln_status axis_product(const kiln_shape_context *ctx, const kiln_shape *shape, const bool *skip,
                                uint32_t *out, kiln_error *err)
{
    int64_t constant = 1;
    uint32_t symbolic = 0;
    bool have_symbolic = false;
    for (uint32_t i = 0; i < shape->rank; i++) {
        if (skip && skip[i])
            continue;
        uint32_t factor = shape->axes[i];
        const kiln_expr *f = &ctx->pool->items[factor];
        if (f->kind == KILN_EXPR_CONST) {
            if (__builtin_mul_overflow(constant, f->constant, &constant))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the element count overflows",
                                 ctx->node_label);
            continue;
        }
        if (!have_symbolic) {
            symbolic = factor;
            have_symbolic = true;
            continue;
        }
        kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = symbolic, .rhs = factor};
        KILN_TRY(kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, &symbolic, err));
    }
    if (!have_symbolic)
        return kiln_expr_const(ctx->pool, constant, out, err);
    return scale_expr(ctx, symbolic, constant, out, err);
}

/*
 * A product as a multiset: its constant factor and its other factors
 * (MUL nodes are opened), sorted by expression id. Two products with the
 * same signature are equal everywhere.
 */
typedef struct product_signature {
    int64_t constant;
    uint32_t atoms[64];
    uint32_t count;
    bool ok; /* false: too many factors or overflow (no structural claim) */
} product_signature;

static void add_factors(const kiln_expr_pool *pool, uint32_t id, product_signature *sig, int depth)
{
    const kiln_expr *x = &pool->items[id];
    if (x->kind == KILN_EXPR_CONST) {
        if (__builtin_mul_overflow(sig->constant, x->constant, &sig->constant))
            sig->ok = false;
        return;
    }
    if (x->kind == KILN_EXPR_MUL && depth < KILN_EXPR_MAX_DEPTH) {
        add_factors(pool, x->lhs, sig, depth + 1);
        add_factors(pool, x->rhs, sig, depth + 1);
        return;
    }
    if (sig->count == sizeof sig->atoms / sizeof sig->atoms[0]) {
        sig->ok = false;
        return;
    }
    uint32_t i = sig->count++;
    while (i > 0 && sig->atoms[i - 1] > id) {
        sig->atoms[i] = sig->atoms[i - 1];
        i--;
    }
    sig->atoms[i] = id;
}

static void signature_of(const kiln_expr_pool *pool, const kiln_shape *shape, product_signature *sig)
{
    sig->constant = 1;
    sig->count = 0;
    sig->ok = true;
    for (uint32_t i = 0; i < shape->rank; i++)
        add_factors(pool, shape->axes[i], sig, 0);
}

static bool same_signature(const product_signature *a, const product_signature *b)
{
    if (!a->ok || !b->ok || a->count != b->count)
        return false;
    if (a->constant == 0 && b->constant == 0)
        return true;
    return a->constant == b->constant && memcmp(a->atoms, b->atoms, a->count * sizeof a->atoms[0]) == 0;
}

typedef struct count_pair {
    const kiln_shape *in;
    const kiln_shape *out;
} count_pair;

static bool element_count(const kiln_expr_pool *pool, const kiln_shape *shape, const int64_t *values,
                          const bool *bound, int64_t *count)
{
    *count = 1;
    for (uint32_t i = 0; i < shape->rank; i++) {
        int64_t v;
        if (kiln_expr_eval(pool, shape->axes[i], values, bound, &v, NULL) != KILN_OK ||
            __builtin_mul_overflow(*count, v, count))
            return false;
    }
    return true;
}

static bool counts_equal(const kiln_expr_pool *pool, const int64_t *values, const bool *bound, void *context)
{
    const count_pair *pair = context;
    int64_t a, b;
    return element_count(pool, pair->in, values, bound, &a) && element_count(pool, pair->out, values, bound, &b) &&
           a == b;
}

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
        KILN_TRY(axis_product(ctx, &x->shape, copied, &rest, err));
        const kiln_expr *r = &ctx->pool->items[rest];
        uint32_t axis;
        if (constant == 1) {
            axis = rest;
        } else if (r->kind == KILN_EXPR_CONST && r->constant % constant == 0) {
            KILN_TRY(kiln_expr_const(ctx->pool, r->constant / constant, &axis, err));
        } else if (r->kind == KILN_EXPR_MUL && is_const(ctx, r->lhs) &&
                   ctx->pool->items[r->lhs].constant % constant == 0) {
            KILN_TRY(scale_expr(ctx, r->rhs, ctx->pool->items[r->lhs].constant / constant, &axis, err));
        } else {
            uint32_t divisor;
            KILN_TRY(kiln_expr_const(ctx->pool, constant, &divisor, err));
            kiln_expr div = {.kind = KILN_EXPR_FLOORDIV, .lhs = rest, .rhs = divisor};
            KILN_TRY(kiln_expr_intern(ctx->pool, &div, ctx->dim_count, &axis, err));
        }
        out->shape.axes[inferred] = axis;
    }

    /* Precondition: equal element counts over the whole declared domain. */
    product_signature in_sig, out_sig;
    signature_of(ctx->pool, &x->shape, &in_sig);
    signature_of(ctx->pool, &out->shape, &out_sig);
    if (same_signature(&in_sig, &out_sig))
        return KILN_OK;
    uint32_t ids[KILN_MAX_RANK * 2], involved[KILN_DOMAIN_MAX_INVOLVED], involved_count;
    for (uint32_t i = 0; i < x->shape.rank; i++)
        ids[i] = x->shape.axes[i];
    for (uint32_t i = 0; i < out->shape.rank; i++)
        ids[x->shape.rank + i] = out->shape.axes[i];
    char dims_text[256], example[256], in_text[128], out_text[128];
    uint32_t in_count, out_count;
    KILN_TRY(axis_product(ctx, &x->shape, NULL, &in_count, err));
    KILN_TRY(axis_product(ctx, &out->shape, NULL, &out_count, err));
    kiln_format_size(ctx, in_count, in_text, sizeof in_text);
    kiln_format_size(ctx, out_count, out_text, sizeof out_text);
    bool listed = collect_dims(ctx, ids, x->shape.rank + out->shape.rank, involved, &involved_count, dims_text,
                               sizeof dims_text);
    if (!listed || domain_points(ctx, involved, involved_count) > KILN_DOMAIN_ENUMERATION_LIMIT)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: cannot prove that reshape [%s] keeps the element count: the domain (dims: %s) is too "
                         "large to enumerate and the counts %s (input) and %s (output) are not structurally the "
                         "same expression",
                         ctx->node_label, text, dims_text, in_text, out_text);
    count_pair pair = {&x->shape, &out->shape};
    example_result search = find_example(ctx, involved, involved_count, counts_equal, &pair, example, sizeof example);
    if (search == EXAMPLE_NOT_SEARCHED)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory while checking the element count",
                         ctx->node_label);
    if (search == EXAMPLE_FOUND)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: reshape [%s] does not keep the element count over the declared domain: input %s, "
                         "output %s (dims: %s); counterexample: %s",
                         ctx->node_label, text, in_text, out_text, dims_text[0] ? dims_text : "none",
                         example[0] ? example : "every point");
    return KILN_OK;
}

static kiln_status run_reshape(const kiln_kernel_call *call, kiln_error *err)
{
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
            char left[128], right[128], dims_text[256], example[256];
            kiln_format_size(ctx, a, left, sizeof left);
            kiln_format_size(ctx, b, right, sizeof right);
            uint32_t ids[2] = {a, b}, involved[KILN_DOMAIN_MAX_INVOLVED], involved_count;
            size_pair pair = {a, b};
            if (collect_dims(ctx, ids, 2, involved, &involved_count, dims_text, sizeof dims_text) &&
                find_example(ctx, involved, involved_count, sizes_equal, &pair, example, sizeof example) ==
                    EXAMPLE_FOUND)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: axis %u differs between input 0 (%s) and input %u (%s); counterexample: %s",
                                 ctx->node_label, j, left, k, right, example[0] ? example : "every point");
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: axis %u: cannot prove input 0 (%s) and input %u (%s) equal over the declared "
                             "domain; they are different expressions. Use the same dim",
                             ctx->node_label, j, left, k, right);
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

static kiln_status run_concat(const kiln_kernel_call *call, kiln_error *err)
{
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
    size_t width = kiln_dtype_size(out->dtype);
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
        for (uint32_t axis = out->rank; axis-- > 0;) {
            index[axis]++;
            offset += strides[axis];
            if (index[axis] < out->shape[axis])
                break;
            offset -= strides[axis] * index[axis];
            index[axis] = 0;
        }
    }
}

static kiln_status run_expand(const kiln_kernel_call *call, kiln_error *err)
{
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
        KILN_TRY(scale_expr(ctx, x->shape.axes[i], attr->ints[i], &out->shape.axes[i], err));
    }
    return KILN_OK;
}

static kiln_status run_tile(const kiln_kernel_call *call, kiln_error *err)
{
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

typedef struct size_above {
    uint32_t size;
    int64_t need; /* holds when size > need */
} size_above;

static bool size_is_above(const kiln_expr_pool *pool, const int64_t *values, const bool *bound, void *context)
{
    const size_above *c = context;
    int64_t v;
    return kiln_expr_eval(pool, c->size, values, bound, &v, NULL) == KILN_OK && v > c->need;
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

    kiln_interval *ranges = malloc((ctx->dim_count + 1) * sizeof *ranges);
    if (!ranges)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->node_label);
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        ranges[d].lo = kiln_dim_first(&ctx->dims[d]);
        ranges[d].hi = kiln_dim_last(&ctx->dims[d]);
    }
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
            kiln_interval b;
            if (!kiln_expr_bounds(ctx->pool, size, ranges, &b) || b.lo <= need) {
                char size_text[128], dims_text[256], example[256] = "";
                kiln_format_size(ctx, size, size_text, sizeof size_text);
                uint32_t involved[KILN_DOMAIN_MAX_INVOLVED], involved_count;
                size_above cond = {size, need};
                bool found = collect_dims(ctx, &size, 1, involved, &involved_count, dims_text, sizeof dims_text) &&
                             find_example(ctx, involved, involved_count, size_is_above, &cond, example,
                                          sizeof example) == EXAMPLE_FOUND;
                status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                   "%s: %s padding of axis %u (pads %lld, %lld) needs its size %s to be provably > "
                                   "%lld over the declared domain%s%s",
                                   ctx->node_label, mode == PAD_REFLECT ? "reflect" : "edge", i, (long long)begin,
                                   (long long)end, size_text, (long long)need,
                                   found ? "; counterexample: " : "", found ? (example[0] ? example : "always") : "");
                break;
            }
        }
        status = offset_expr(ctx, size, total, &out->shape.axes[i], err);
    }
    free(ranges);
    return status;
}

/* Store `value` (exactly representable, checked by the shape rule) as one element of `dtype`. */
static void pad_fill(kiln_dtype dtype, double value, uint8_t *bytes)
{
    switch (class_of(dtype)) {
    case CLASS_FLOAT:
        if (dtype == KILN_F32) {
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

static kiln_status run_pad(const kiln_kernel_call *call, kiln_error *err)
{
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
        if (out->shape[i] != n + begins[i] + ends[i] || begins[i] < 0 || ends[i] < 0 ||
            (padded && mode == PAD_EDGE && n < 1) ||
            (padded && mode == PAD_REFLECT && (n <= begins[i] || n <= ends[i])))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "pad: axis %u (size %lld) does not fit the pads", i,
                             (long long)n);
    }
    size_t width = kiln_dtype_size(out->dtype);
    uint8_t fill[8] = {0};
    pad_fill(out->dtype, value, fill);
    int64_t strides[KILN_MAX_RANK], index[KILN_MAX_RANK] = {0};
    strides_of(in, strides);
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
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
        for (uint32_t axis = rank; axis-- > 0;) {
            if (++index[axis] < out->shape[axis])
                break;
            index[axis] = 0;
        }
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
    {"identity", NULL, 1, 1, 1, 1, infer_identity, run_identity},
    {"cast", cast_attributes, 1, 1, 1, 1, infer_cast, run_cast},
    {"squeeze", axes_attributes, 1, 1, 1, 1, infer_squeeze, run_squeeze},
    {"unsqueeze", axes_attributes, 1, 1, 1, 1, infer_unsqueeze, run_unsqueeze},
    {"reshape", reshape_attributes, 1, 1, 1, 1, infer_reshape, run_reshape},
    {"concat", concat_attributes, 1, 1, 1, MAX_CONCAT_INPUTS, infer_concat, run_concat},
    {"expand", expand_attributes, 1, 1, 1, 1, infer_expand, run_expand},
    {"tile", tile_attributes, 1, 1, 1, 1, infer_tile, run_tile},
    {"pad", pad_attributes, 1, 1, 1, 1, infer_pad, run_pad},
    {"shape_of", NULL, 1, 1, 1, 1, infer_shape_of, run_shape_of},
    {"size_of", NULL, 1, 1, 1, 1, infer_size_of, run_size_of},
};

const kiln_op_family kiln_ops_shape = {shape_ops, sizeof shape_ops / sizeof shape_ops[0]};
