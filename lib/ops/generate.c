/*
 * generate.c — ops that make a tensor from attributes rather than
 * from their inputs' values (eye_like, constant_of_shape, range): shape
 * rules and portable reference kernels.
 *
 * Semantics, preconditions and numerics are in spec/ops/generate.md. A
 * graph node's output shape is a shape expression over the declared dims,
 * never data-dependent, so every size these ops produce comes from an
 * attribute (constant_of_shape's shape, range's start/limit/delta) or from
 * an input's shape (eye_like), never from an input's values. Kernels
 * allocate nothing: a session run must not.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "op_registry.h"
#include "real_access.h"

/* Integer values carried in a FLOAT attribute are exact up to 2^53; beyond that they are refused. */
#define EXACT_INTEGER_LIMIT 9007199254740992.0
/* The longest range: keeps the element count far from int64 limits and the arena planner's. */
#define RANGE_MAX_LENGTH INT32_MAX

/* ------------------------------------------------------ shared helpers */

static bool is_float(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64;
}

/* [lo, hi) of an integer dtype, as doubles (powers of two, exact). */
static void integer_range(kiln_dtype dtype, double *lo, double *hi)
{
    int bits = (int)kiln_dtype_size(dtype) * 8;
    bool is_signed = dtype == KILN_I8 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
    *lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0;
    *hi = is_signed ? ldexp(1.0, bits - 1) : ldexp(1.0, bits);
}

/*
 * Whether `value` is exactly an element of `dtype`: for floats any value
 * (f32: rounded, but not beyond its largest finite value); for bool 0 or
 * 1; for integers a whole number in range and within +-2^53.
 */
static bool value_fits(kiln_dtype dtype, double value)
{
    if (dtype == KILN_F64)
        return true;
    if (dtype == KILN_F32)
        return !isfinite(value) || fabs(value) <= FLT_MAX;
    if (dtype == KILN_F16) /* 65504 and 0x1.fep127: the largest finite f16 and bf16 */
        return !isfinite(value) || fabs(value) <= 65504.0;
    if (dtype == KILN_BF16)
        return !isfinite(value) || fabs(value) <= 0x1.fep127;
    if (dtype == KILN_BOOL)
        return value == 0.0 || value == 1.0;
    double lo, hi;
    integer_range(dtype, &lo, &hi);
    return value == trunc(value) && value >= lo && value < hi && fabs(value) <= EXACT_INTEGER_LIMIT;
}

/*
 * The dtype named by STRING attribute 'dtype' (`fallback` when the node
 * does not have it), which `allowed` must accept. @return false if the
 * name is not a dtype or not allowed.
 */
static bool dtype_attribute(const kiln_node_attribute *attributes, uint32_t count, kiln_dtype fallback,
                            bool (*allowed)(kiln_dtype), kiln_dtype *out)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "dtype");
    *out = fallback;
    if (a && kiln_dtype_from_name(a->s, out) != KILN_OK)
        return false;
    return kiln_dtype_is_supported(*out) && allowed(*out);
}

static kiln_status refuse_dtype(const kiln_shape_context *ctx, const char *accepted, kiln_error *err)
{
    const kiln_node_attribute *a = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "dtype");
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'dtype' is \"%s\"; expected %s", ctx->node_label,
                     a ? a->s : "", accepted);
}

static kiln_status mismatch(const char *op, kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: operands do not match the op's shape rule", op);
}

static bool any_supported(kiln_dtype dtype)
{
    return kiln_dtype_is_supported(dtype);
}

/* -------------------------------------------------------------- eye_like */

static const kiln_attribute_spec eye_like_attributes[] = {
    {"dtype", KILN_ATTRIBUTE_STRING},
    {"k", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_eye_like(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    if (x->shape.rank != 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has rank %u; eye_like needs rank 2", ctx->node_label,
                         x->shape.rank);
    if (!dtype_attribute(ctx->attributes, ctx->attribute_count, x->dtype, any_supported, &out->dtype))
        return refuse_dtype(ctx, "a supported dtype (f32, f64, f16, bf16, i8..i64, u8..u64, bool)", err);
    out->shape = x->shape;
    return KILN_OK;
}

static kiln_status run_eye_like(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    kiln_dtype dtype;
    if (!dtype_attribute(call->attributes, call->attribute_count, in->dtype, any_supported, &dtype) ||
        dtype != out->dtype || in->rank != 2 || out->rank != 2 || in->shape[0] != out->shape[0] ||
        in->shape[1] != out->shape[1])
        return mismatch("eye_like", err);
    int64_t k = kiln_attribute_int(call->attributes, call->attribute_count, "k", 0);
    int64_t rows = out->shape[0], columns = out->shape[1];
    if (out->byte_size)
        memset(out->data, 0, out->byte_size); /* all-zero bytes are 0 in every dtype */
    /* Row i has its one at column i + k; only rows with that column in range. */
    if (k >= columns || k <= -rows)
        return KILN_OK;
    int64_t first = k < 0 ? -k : 0;
    for (int64_t i = first; i < rows && i + k < columns; i++)
        kiln_store_converted(out->dtype, out->data, (uint64_t)(i * columns + i + k), 1.0);
    return KILN_OK;
}

/* ----------------------------------------------------- constant_of_shape */

static const kiln_attribute_spec constant_of_shape_attributes[] = {
    {"dtype", KILN_ATTRIBUTE_STRING},
    {"shape", KILN_ATTRIBUTE_INTS},
    {"value", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

/* Format an INTS attribute as "a, b, c". */
static void format_ints(const kiln_node_attribute *attr, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t i = 0; i < attr->count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? ", " : "", (long long)attr->ints[i]);
}

static kiln_status infer_constant_of_shape(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                           uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)inputs;
    (void)input_count;
    const kiln_node_attribute *shape = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "shape");
    if (!shape)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'shape' is required", ctx->node_label);
    char text[160];
    format_ints(shape, text, sizeof text);
    if (shape->count > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s] has more than %d axes", ctx->node_label,
                         text, KILN_MAX_RANK);
    if (!dtype_attribute(ctx->attributes, ctx->attribute_count, KILN_F32, any_supported, &out->dtype))
        return refuse_dtype(ctx, "a supported dtype (f32, f64, f16, bf16, i8..i64, u8..u64, bool)", err);
    double value = kiln_attribute_float(ctx->attributes, ctx->attribute_count, "value", 0.0);
    if (!value_fits(out->dtype, value))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: value %.17g is not a value of dtype %s",
                         ctx->node_label, value, kiln_dtype_name(out->dtype));
    out->shape.rank = shape->count;
    for (uint32_t i = 0; i < shape->count; i++) {
        if (shape->ints[i] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: shape [%s]: %lld is not a size", ctx->node_label,
                             text, (long long)shape->ints[i]);
        KILN_TRY(kiln_expr_const(ctx->pool, shape->ints[i], &out->shape.axes[i], err));
    }
    return KILN_OK;
}

static kiln_status run_constant_of_shape(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_tensor *out = call->output;
    const kiln_node_attribute *shape = kiln_attribute_find(call->attributes, call->attribute_count, "shape");
    kiln_dtype dtype;
    double value = kiln_attribute_float(call->attributes, call->attribute_count, "value", 0.0);
    if (!shape || shape->count != out->rank ||
        !dtype_attribute(call->attributes, call->attribute_count, KILN_F32, any_supported, &dtype) ||
        dtype != out->dtype || !value_fits(dtype, value))
        return mismatch("constant_of_shape", err);
    for (uint32_t i = 0; i < out->rank; i++)
        if (shape->ints[i] != out->shape[i])
            return mismatch("constant_of_shape", err);
    for (uint64_t e = 0; e < out->element_count; e++)
        kiln_store_converted(dtype, out->data, e, value);
    return KILN_OK;
}

/* ----------------------------------------------------------------- range */

static const kiln_attribute_spec range_attributes[] = {
    {"delta", KILN_ATTRIBUTE_FLOAT},
    {"dtype", KILN_ATTRIBUTE_STRING},
    {"limit", KILN_ATTRIBUTE_FLOAT},
    {"start", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

static bool range_dtype(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
}

typedef struct range_spec {
    kiln_dtype dtype;
    double start, limit, delta;
    int64_t length;
} range_spec;

/*
 * Read and check a range's attributes; `label` names the node. The length
 * is max(ceil((limit - start) / delta), 0): in int64 for integer dtypes,
 * in double for floats.
 */
static kiln_status read_range(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                              range_spec *r, kiln_error *err)
{
    static const char *const names[] = {"start", "limit", "delta"};
    double *values[] = {&r->start, &r->limit, &r->delta};
    if (!dtype_attribute(attributes, count, KILN_F32, range_dtype, &r->dtype)) {
        const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "dtype");
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'dtype' is \"%s\"; expected f32, f64, i16, "
                         "i32 or i64", label, a ? a->s : "");
    }
    for (size_t i = 0; i < 3; i++) {
        const kiln_node_attribute *a = kiln_attribute_find(attributes, count, names[i]);
        if (!a)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' is required", label, names[i]);
        *values[i] = a->f;
        if (!isfinite(a->f) || !value_fits(r->dtype, a->f))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s %.17g is not a finite value of dtype %s", label,
                             names[i], a->f, kiln_dtype_name(r->dtype));
    }
    if (r->delta == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: delta is 0", label);
    if (is_float(r->dtype)) {
        double steps = ceil((r->limit - r->start) / r->delta);
        if (!(steps <= RANGE_MAX_LENGTH)) /* also catches an overflow to infinity */
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: range from %.17g to %.17g by %.17g has more than %d elements", label, r->start,
                             r->limit, r->delta, RANGE_MAX_LENGTH);
        r->length = steps > 0 ? (int64_t)steps : 0;
        return KILN_OK;
    }
    /* Whole numbers within +-2^53: the difference and the division are exact in int64. */
    int64_t start = (int64_t)r->start, limit = (int64_t)r->limit, delta = (int64_t)r->delta;
    int64_t span = limit - start;
    int64_t steps = span / delta + ((span % delta != 0 && (span < 0) == (delta < 0)) ? 1 : 0);
    if (steps > RANGE_MAX_LENGTH)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: range from %lld to %lld by %lld has more than %d elements",
                         label, (long long)start, (long long)limit, (long long)delta, RANGE_MAX_LENGTH);
    r->length = steps > 0 ? steps : 0;
    return KILN_OK;
}

static kiln_status infer_range(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                               uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)inputs;
    (void)input_count;
    range_spec r;
    KILN_TRY(read_range(ctx->node_label, ctx->attributes, ctx->attribute_count, &r, err));
    out->dtype = r.dtype;
    out->shape.rank = 1;
    return kiln_expr_const(ctx->pool, r.length, &out->shape.axes[0], err);
}

static kiln_status run_range(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_tensor *out = call->output;
    range_spec r;
    if (read_range("range", call->attributes, call->attribute_count, &r, err) != KILN_OK || r.dtype != out->dtype ||
        out->rank != 1 || out->shape[0] != r.length)
        return mismatch("range", err);
    for (int64_t i = 0; i < r.length; i++) {
        if (is_float(r.dtype))
            kiln_store_converted(r.dtype, out->data, (uint64_t)i, r.start + (double)i * r.delta);
        else /* exact: every element lies between start and limit */
            kiln_store_converted(r.dtype, out->data, (uint64_t)i, (double)((int64_t)r.start + i * (int64_t)r.delta));
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def generate_ops[] = {
    {.name = "eye_like", .versions = {1, 1}, .inputs = {1, 1}, .attributes = eye_like_attributes,
     .infer = infer_eye_like, .run = run_eye_like},
    {.name = "constant_of_shape", .versions = {1, 1}, .inputs = {0, 0}, .attributes = constant_of_shape_attributes,
     .infer = infer_constant_of_shape, .run = run_constant_of_shape},
    {.name = "range", .versions = {1, 1}, .inputs = {0, 0}, .attributes = range_attributes,
     .infer = infer_range, .run = run_range},
};

const kiln_op_family kiln_ops_generate = KILN_OP_FAMILY(generate_ops, "spec/ops/generate.md");
