/*
 * reduce.c — reductions (reduce_*), argmax/argmin and the softmax-like
 * ops (softmax, log_softmax, hardmax): shape rules and portable reference
 * kernels. Semantics, attributes and numerics: spec/ops/reduce.md.
 *
 * Kernels never transpose: a reduction splits the input axes into the kept
 * ones and the reduced ones and walks both index spaces with strided
 * odometers, so any rank up to KILN_MAX_RANK and any axis subset take the
 * same path. Floats accumulate in double and round once on store; f16 and
 * bf16 run the f32 kernel on widened copies and round once more.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "odometer.h"
#include "op_registry.h"
#include "parallel.h"
#include "real_access.h"
#include "size_claim.h"
#include "vector_math.h"

/* ------------------------------------------------------------ the ops */

typedef enum reduce_kind {
    REDUCE_SUM,
    REDUCE_MEAN,
    REDUCE_MAX,
    REDUCE_MIN,
    REDUCE_PROD,
    REDUCE_L1,
    REDUCE_L2,
    REDUCE_SUM_SQUARE,
    REDUCE_LOG_SUM,
    REDUCE_LOG_SUM_EXP,
} reduce_kind;

typedef enum axis_kind { AXIS_ARGMAX, AXIS_ARGMIN, AXIS_SOFTMAX, AXIS_LOG_SOFTMAX, AXIS_HARDMAX } axis_kind;

static const char *const reduce_names[] = {
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_l1", "reduce_l2", "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp",
};

static const char *const axis_names[] = {"argmax", "argmin", "softmax", "log_softmax", "hardmax"};

/* Integer dtypes are accepted by the reductions whose integer meaning is
 * exact (wrapping sum and product, max, min); the others are float-only. */
static bool reduce_takes_integers(reduce_kind kind)
{
    return kind == REDUCE_SUM || kind == REDUCE_PROD || kind == REDUCE_MAX || kind == REDUCE_MIN;
}

/* max and min have no identity, so an empty reduced axis must be refused. */
static bool reduce_needs_elements(reduce_kind kind)
{
    return kind == REDUCE_MAX || kind == REDUCE_MIN;
}

/* ----------------------------------------------------------- attributes */

static const kiln_attribute_spec reduce_attributes[] = {
    {"axes", KILN_ATTRIBUTE_INTS},
    {"keepdims", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec arg_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"keepdims", KILN_ATTRIBUTE_INT},
    {"select_last_index", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec softmax_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

/*
 * The reduced axes of a rank-`rank` input: `axes` (negative counts from the
 * end), or every axis when absent or empty. Writes the reason into `why`
 * and returns false for an out-of-range or repeated axis. Shared by shape
 * rules and kernels, so a kernel never trusts attributes it did not check.
 */
static bool resolve_axes(const kiln_node_attribute *attributes, uint32_t count, uint32_t rank,
                         bool reduced[KILN_MAX_RANK], char *why, size_t size)
{
    const kiln_node_attribute *axes = kiln_attribute_find(attributes, count, "axes");
    memset(reduced, 0, KILN_MAX_RANK * sizeof reduced[0]);
    if (!axes || axes->type != KILN_ATTRIBUTE_INTS || axes->count == 0) {
        for (uint32_t a = 0; a < rank && a < KILN_MAX_RANK; a++)
            reduced[a] = true;
        return true;
    }
    for (uint32_t i = 0; i < axes->count; i++) {
        int64_t a = axes->ints[i];
        if (a < -(int64_t)rank || a >= (int64_t)rank) {
            snprintf(why, size, "axes[%u] = %lld is out of range for rank %u (valid: %lld..%lld)", i,
                     (long long)a, rank, -(long long)rank, (long long)rank - 1);
            return false;
        }
        uint32_t axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
        if (reduced[axis]) {
            snprintf(why, size, "axes[%u] = %lld repeats axis %u", i, (long long)a, axis);
            return false;
        }
        reduced[axis] = true;
    }
    return true;
}

/* A 0/1 flag attribute, or false with the reason in `why`. */
static bool resolve_flag(const kiln_node_attribute *attributes, uint32_t count, const char *name,
                         int64_t fallback, bool *value, char *why, size_t size)
{
    int64_t v = kiln_attribute_int(attributes, count, name, fallback);
    if (v != 0 && v != 1) {
        snprintf(why, size, "%s must be 0 or 1, got %lld", name, (long long)v);
        return false;
    }
    *value = v == 1;
    return true;
}

/* A single-axis attribute normalised into 0..rank-1, or false with the reason. */
static bool resolve_axis(const kiln_node_attribute *attributes, uint32_t count, int64_t fallback,
                         uint32_t rank, uint32_t *axis, char *why, size_t size)
{
    int64_t a = kiln_attribute_int(attributes, count, "axis", fallback);
    if (a < -(int64_t)rank || a >= (int64_t)rank) {
        if (rank == 0)
            snprintf(why, size, "axis %lld is out of range: the input has rank 0 (no axes)", (long long)a);
        else
            snprintf(why, size, "axis %lld is out of range for rank %u (valid: %lld..%lld)", (long long)a, rank,
                     -(long long)rank, (long long)rank - 1);
        return false;
    }
    *axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
    return true;
}

/* ---------------------------------------------------------- shape rules */

/*
 * Prove that input axis `axis` (expression `expr`) is at least 1 over the
 * whole declared domain, or refuse, giving a domain point where it is 0
 * when one is found: `op` has no value for an empty axis.
 */
static kiln_status prove_nonempty_axis(const kiln_shape_context *ctx, const char *op, uint32_t axis, uint32_t expr,
                                       kiln_error *err)
{
    char text[128], what[160], advice[160];
    kiln_format_size(ctx, expr, text, sizeof text);
    snprintf(what, sizeof what, "input axis %u (%s) is at least 1", axis, text);
    snprintf(advice, sizeof advice, "%s has no value for an empty axis; declare the dims so that the axis is at least 1",
             op);
    kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, expr, 0, 1};
    return kiln_prove_size_claim(ctx, &claim, what, advice, err);
}

static kiln_status infer_reduce(reduce_kind kind, const kiln_shape_context *ctx, const kiln_value_type *in,
                                kiln_value_type *out, kiln_error *err)
{
    const char *op = reduce_names[kind];
    if (!kiln_dtype_is_floating(in->dtype) && !(reduce_takes_integers(kind) && kiln_dtype_is_integer(in->dtype)))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s does not support dtype %s (it takes %s)",
                         ctx->node_label, op, kiln_dtype_name(in->dtype),
                         reduce_takes_integers(kind) ? "a float dtype (f32, f64, f16, bf16) or an integer dtype"
                                                     : "a float dtype (f32, f64, f16, bf16)");
    bool reduced[KILN_MAX_RANK];
    bool keepdims;
    char why[160];
    if (!resolve_axes(ctx->attributes, ctx->attribute_count, in->shape.rank, reduced, why, sizeof why) ||
        !resolve_flag(ctx->attributes, ctx->attribute_count, "keepdims", 1, &keepdims, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    uint32_t one;
    KILN_TRY(kiln_expr_const(ctx->pool, 1, &one, err));
    out->dtype = in->dtype;
    out->shape.rank = 0;
    for (uint32_t a = 0; a < in->shape.rank; a++) {
        if (!reduced[a])
            out->shape.axes[out->shape.rank++] = in->shape.axes[a];
        else {
            if (reduce_needs_elements(kind))
                KILN_TRY(prove_nonempty_axis(ctx, op, a, in->shape.axes[a], err));
            if (keepdims)
                out->shape.axes[out->shape.rank++] = one;
        }
    }
    return KILN_OK;
}

static kiln_status infer_axis_op(axis_kind kind, const kiln_shape_context *ctx, const kiln_value_type *in,
                                 kiln_value_type *out, kiln_error *err)
{
    const char *op = axis_names[kind];
    bool arg = kind == AXIS_ARGMAX || kind == AXIS_ARGMIN;
    if (!kiln_dtype_is_floating(in->dtype) && !(arg && kiln_dtype_is_integer(in->dtype)))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s does not support dtype %s (it takes %s)",
                         ctx->node_label, op, kiln_dtype_name(in->dtype),
                         arg ? "a float dtype (f32, f64, f16, bf16) or an integer dtype"
                             : "a float dtype (f32, f64, f16, bf16)");
    uint32_t axis;
    bool keepdims = true, last = false;
    char why[160];
    if (!resolve_axis(ctx->attributes, ctx->attribute_count, arg ? 0 : -1, in->shape.rank, &axis, why, sizeof why) ||
        (arg && !resolve_flag(ctx->attributes, ctx->attribute_count, "keepdims", 1, &keepdims, why, sizeof why)) ||
        (arg && !resolve_flag(ctx->attributes, ctx->attribute_count, "select_last_index", 0, &last, why,
                              sizeof why)))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    if (!arg) {
        *out = *in;
        return KILN_OK;
    }
    KILN_TRY(prove_nonempty_axis(ctx, op, axis, in->shape.axes[axis], err));
    uint32_t one;
    KILN_TRY(kiln_expr_const(ctx->pool, 1, &one, err));
    out->dtype = KILN_I64;
    out->shape.rank = 0;
    for (uint32_t a = 0; a < in->shape.rank; a++) {
        if (a != axis)
            out->shape.axes[out->shape.rank++] = in->shape.axes[a];
        else if (keepdims)
            out->shape.axes[out->shape.rank++] = one;
    }
    return KILN_OK;
}

/* ----------------------------------------------------- index iteration */

/* The kept and the reduced axes of one reduction, with the input strides. */
typedef struct reduce_plan {
    uint32_t kept_rank, reduced_rank;
    int64_t kept_shape[KILN_MAX_RANK], kept_stride[KILN_MAX_RANK];
    int64_t reduced_shape[KILN_MAX_RANK], reduced_stride[KILN_MAX_RANK];
    uint64_t out_count;     /* product of the kept extents */
    uint64_t reduced_count; /* product of the reduced extents */
} reduce_plan;

/*
 * Merge neighbouring axes that are one run in memory (a global pool's H
 * and W): the walk visits the same elements in the same order, with fewer
 * odometer steps, and a single reduced axis takes a plain strided loop.
 */
static void coalesce(uint32_t *rank, int64_t *shape, int64_t *stride)
{
    uint32_t kept = 0;
    for (uint32_t a = 0; a < *rank; a++) {
        if (kept > 0 && stride[kept - 1] == stride[a] * shape[a]) {
            shape[kept - 1] *= shape[a];
            stride[kept - 1] = stride[a];
            continue;
        }
        shape[kept] = shape[a];
        stride[kept++] = stride[a];
    }
    *rank = kept;
}

static void reduce_plan_init(const kiln_tensor *in, const bool *reduced, reduce_plan *p)
{
    memset(p, 0, sizeof *p);
    p->out_count = 1;
    p->reduced_count = 1;
    if (in->element_count == 0) {
        /* Counts only: every sum is empty, so no stride is ever used, and
         * those of (0, 2^63-1, 2^63-1) overflow. */
        for (uint32_t a = 0; a < in->rank; a++)
            *(reduced[a] ? &p->reduced_count : &p->out_count) *= (uint64_t)in->shape[a];
        return;
    }
    int64_t stride[KILN_MAX_RANK];
    int64_t s = 1;
    for (uint32_t a = in->rank; a-- > 0;) {
        stride[a] = s;
        s *= in->shape[a];
    }
    for (uint32_t a = 0; a < in->rank; a++) {
        if (reduced[a]) {
            p->reduced_shape[p->reduced_rank] = in->shape[a];
            p->reduced_stride[p->reduced_rank++] = stride[a];
            p->reduced_count *= (uint64_t)in->shape[a];
        } else {
            p->kept_shape[p->kept_rank] = in->shape[a];
            p->kept_stride[p->kept_rank++] = stride[a];
            p->out_count *= (uint64_t)in->shape[a];
        }
    }
    coalesce(&p->reduced_rank, p->reduced_shape, p->reduced_stride);
    coalesce(&p->kept_rank, p->kept_shape, p->kept_stride);
}

/* A multi-index over some axes and the input offset it addresses. */
typedef struct odometer {
    int64_t index[KILN_MAX_RANK];
    int64_t offset;
} odometer;

/* ---------------------------------------------------- reduce kernels */

/* Max (or min) of one slice, NaN winning; ties keep the first element. */
static double float_extreme(kiln_dtype dtype, const void *in, const reduce_plan *p, int64_t base, bool max)
{
    odometer r = {{0}, 0};
    double best = 0.0;
    for (uint64_t k = 0; k < p->reduced_count; k++) {
        double x = kiln_load_real(dtype, in, base + r.offset);
        if (k == 0 || (!isnan(best) && (isnan(x) || (max ? x > best : x < best))))
            best = x;
        kiln_odometer_next_offset(r.index, p->reduced_rank, p->reduced_shape, p->reduced_stride, &r.offset);
    }
    return best;
}

/* One output element of a float reduction, in double. */
static double float_slice(reduce_kind kind, kiln_dtype dtype, const void *in, const reduce_plan *p, int64_t base)
{
    if (kind == REDUCE_MAX || kind == REDUCE_MIN)
        return float_extreme(dtype, in, p, base, kind == REDUCE_MAX);
    /* log_sum_exp subtracts the max first so exp never overflows; an
     * infinite or NaN max (or an empty slice, whose max is -inf) is the
     * answer itself. */
    double shift = 0.0;
    if (kind == REDUCE_LOG_SUM_EXP) {
        shift = p->reduced_count ? float_extreme(dtype, in, p, base, true) : -INFINITY;
        if (!isfinite(shift))
            return shift;
    }
    double acc = kind == REDUCE_PROD ? 1.0 : 0.0;
    if ((kind == REDUCE_SUM || kind == REDUCE_MEAN) && p->reduced_rank == 1 && dtype == KILN_F32) {
        /* One strided run (coalesced): the same additions, in the same order, without the odometer. */
        const float *x = (const float *)in + base;
        int64_t step = p->reduced_stride[0];
        for (uint64_t k = 0; k < p->reduced_count; k++)
            acc += (double)x[(int64_t)k * step];
        return kind == REDUCE_MEAN ? (p->reduced_count ? acc / (double)p->reduced_count : NAN) : acc;
    }
    odometer r = {{0}, 0};
    for (uint64_t k = 0; k < p->reduced_count; k++) {
        double x = kiln_load_real(dtype, in, base + r.offset);
        switch (kind) {
        case REDUCE_PROD: acc *= x; break;
        case REDUCE_L1: acc += fabs(x); break;
        case REDUCE_L2:
        case REDUCE_SUM_SQUARE: acc += x * x; break;
        case REDUCE_LOG_SUM_EXP: acc += exp(x - shift); break;
        default: acc += x; break; /* sum, mean, log_sum */
        }
        kiln_odometer_next_offset(r.index, p->reduced_rank, p->reduced_shape, p->reduced_stride, &r.offset);
    }
    switch (kind) {
    case REDUCE_MEAN: return p->reduced_count ? acc / (double)p->reduced_count : NAN;
    case REDUCE_L2: return sqrt(acc);
    case REDUCE_LOG_SUM: return log(acc);
    case REDUCE_LOG_SUM_EXP: return shift + log(acc);
    default: return acc;
    }
}

static void reduce_float(reduce_kind kind, const kiln_tensor *in, const reduce_plan *p, kiln_tensor *out)
{
    odometer o = {{0}, 0};
    for (uint64_t i = 0; i < p->out_count; i++) {
        kiln_store_real(out->dtype, out->data, i, float_slice(kind, in->dtype, in->data, p, o.offset));
        kiln_odometer_next_offset(o.index, p->kept_rank, p->kept_shape, p->kept_stride, &o.offset);
    }
}

/* Integer sum and product wrap modulo 2^bits: they are computed modulo
 * 2^64 in uint64_t (defined behaviour) and truncated on store. */
#define DEFINE_INTEGER_REDUCE(T, SUFFIX)                                                           \
    static void reduce_##SUFFIX(reduce_kind kind, const T *in, const reduce_plan *p, T *out)      \
    {                                                                                          \
        odometer o = {{0}, 0};                                                                 \
        for (uint64_t i = 0; i < p->out_count; i++) {                                          \
            odometer r = {{0}, 0};                                                             \
            uint64_t acc = kind == REDUCE_PROD ? 1u : 0u;                                      \
            T best = 0;                                                                        \
            for (uint64_t k = 0; k < p->reduced_count; k++) {                                  \
                T x = in[o.offset + r.offset];                                                 \
                if (kind == REDUCE_SUM)                                                        \
                    acc += (uint64_t)x;                                                        \
                else if (kind == REDUCE_PROD)                                                  \
                    acc *= (uint64_t)x;                                                        \
                else if (k == 0 || (kind == REDUCE_MAX ? x > best : x < best))                 \
                    best = x;                                                                  \
                kiln_odometer_next_offset(r.index, p->reduced_rank, p->reduced_shape, p->reduced_stride, \
                                          &r.offset);                                          \
            }                                                                                  \
            out[i] = (kind == REDUCE_SUM || kind == REDUCE_PROD) ? (T)acc : best;              \
            kiln_odometer_next_offset(o.index, p->kept_rank, p->kept_shape, p->kept_stride, &o.offset); \
        }                                                                                      \
    }
DEFINE_INTEGER_REDUCE(int8_t, i8)
DEFINE_INTEGER_REDUCE(int16_t, i16)
DEFINE_INTEGER_REDUCE(int32_t, i32)
DEFINE_INTEGER_REDUCE(int64_t, i64)
DEFINE_INTEGER_REDUCE(uint8_t, u8)
DEFINE_INTEGER_REDUCE(uint16_t, u16)
DEFINE_INTEGER_REDUCE(uint32_t, u32)
DEFINE_INTEGER_REDUCE(uint64_t, u64)

/* The output shape a kernel expects, from the input and the attributes. */
static kiln_status check_output(const char *op, const kiln_tensor *out, kiln_dtype dtype, uint64_t count,
                                kiln_error *err)
{
    if (out->dtype != dtype || out->element_count != count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output is %s with %llu elements, expected %s with %llu",
                         op, kiln_dtype_name(out->dtype), (unsigned long long)out->element_count,
                         kiln_dtype_name(dtype), (unsigned long long)count);
    return KILN_OK;
}

/*
 * f32 sums (or means) of slices of `extent` contiguous elements, slice i
 * at in + i * extent: the reduced axes are the trailing ones. For
 * kiln_parallel_chunks over the input's elements: a chunk runs the slices
 * that begin inside it.
 */
typedef struct sum_job {
    const float *in;
    float *out;
    uint64_t extent;
    bool mean;
} sum_job;

/*
 * Why: the reference adds a slice in order, one dependent double add per
 * element (its latency, ~4 cycles, bounds it); a squeeze-excite block's
 * mean over H x W is a pass over a large tensor. Measured (kiln bench,
 * one thread, interleaved medians): reduce_mean of [1, 96, 56, 56] over
 * axes 2 and 3, 183 us by the reference, 16 us so.
 */
static void sum_chunk(const void *vjob, uint64_t begin, uint64_t end)
{
    const sum_job *job = vjob;
    for (uint64_t i = (begin + job->extent - 1) / job->extent; i * job->extent < end; i++) {
        double sum = kiln_vector_sum_f32(job->in + i * job->extent, job->extent);
        job->out[i] = (float)(job->mean ? sum / (double)job->extent : sum);
    }
}

static kiln_status run_reduce(reduce_kind kind, const kiln_kernel_call *call, kiln_error *err)
{
    const char *op = reduce_names[kind];
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    bool reduced[KILN_MAX_RANK];
    char why[160];
    if (in->rank > KILN_MAX_RANK ||
        !resolve_axes(call->attributes, call->attribute_count, in->rank, reduced, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op,
                         in->rank > KILN_MAX_RANK ? "rank above KILN_MAX_RANK" : why);
    reduce_plan p;
    reduce_plan_init(in, reduced, &p);
    KILN_TRY(check_output(op, out, in->dtype, p.out_count, err));
    if (reduce_needs_elements(kind) && p.reduced_count == 0 && p.out_count > 0)
        return kiln_fail(err, KILN_ERR_RUNTIME, "%s: empty reduction has no value", op);
    /* Fast path (spec/opset.md, "Fast paths": vector-math): f32 sum and
     * mean over trailing axes, each slice one contiguous run. */
    if ((kind == REDUCE_SUM || kind == REDUCE_MEAN) && in->dtype == KILN_F32 && p.reduced_rank == 1 &&
        p.reduced_stride[0] == 1 && p.reduced_count > 0 && p.out_count > 0 && call->context &&
        !call->context->reference_only) {
        sum_job job = {in->data, out->data, p.reduced_count, kind == REDUCE_MEAN};
        kiln_parallel_chunks(in->element_count, kiln_call_threads(call), sum_chunk, &job);
        call->context->path = KILN_PATH_VECTOR;
        return KILN_OK;
    }
    if (kiln_dtype_is_floating(in->dtype)) {
        reduce_float(kind, in, &p, out);
        return KILN_OK;
    }
    if (!reduce_takes_integers(kind))
        goto unsupported;
    switch (in->dtype) {
#define INTEGER_CASE(CODE, T, SUFFIX)                       \
    case CODE:                                              \
        reduce_##SUFFIX(kind, in->data, &p, out->data);     \
        return KILN_OK;
        INTEGER_CASE(KILN_I8, int8_t, i8)
        INTEGER_CASE(KILN_I16, int16_t, i16)
        INTEGER_CASE(KILN_I32, int32_t, i32)
        INTEGER_CASE(KILN_I64, int64_t, i64)
        INTEGER_CASE(KILN_U8, uint8_t, u8)
        INTEGER_CASE(KILN_U16, uint16_t, u16)
        INTEGER_CASE(KILN_U32, uint32_t, u32)
        INTEGER_CASE(KILN_U64, uint64_t, u64)
#undef INTEGER_CASE
    default:
        break;
    }
unsupported:
    return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op, kiln_dtype_name(in->dtype));
}

/* ------------------------------------------- single-axis op kernels */

/* The input as outer x extent x inner around one axis (C order). */
typedef struct axis_split {
    uint64_t outer, extent, inner;
} axis_split;

static axis_split split_at(const kiln_tensor *in, uint32_t axis)
{
    axis_split s = {1, (uint64_t)in->shape[axis], 1};
    for (uint32_t a = 0; a < axis; a++)
        s.outer *= (uint64_t)in->shape[a];
    for (uint32_t a = axis + 1; a < in->rank; a++)
        s.inner *= (uint64_t)in->shape[a];
    return s;
}

/*
 * The winner of argmax (max) or argmin along one slice of `n` elements
 * `stride` apart: a NaN beats every number (the first NaN, or the last
 * with `last`); equal values keep the first index, or the last with `last`.
 */
#define DEFINE_ARG(T, SUFFIX, ISNAN)                                                           \
    static uint64_t arg_##SUFFIX(const T *x, uint64_t n, uint64_t stride, bool max, bool last) \
    {                                                                                      \
        uint64_t best = 0;                                                                 \
        for (uint64_t k = 1; k < n; k++) {                                                 \
            T b = x[best * stride], v = x[k * stride];                                     \
            if (ISNAN(b)) {                                                                \
                if (last && ISNAN(v))                                                      \
                    best = k;                                                              \
            } else if (ISNAN(v) || (max ? v > b : v < b) || (last && v == b)) {             \
                best = k;                                                                  \
            }                                                                              \
        }                                                                                  \
        return best;                                                                       \
    }
#define NEVER_NAN(x) ((void)(x), false)
DEFINE_ARG(float, f32, isnan)
DEFINE_ARG(double, f64, isnan)
DEFINE_ARG(int8_t, i8, NEVER_NAN)
DEFINE_ARG(int16_t, i16, NEVER_NAN)
DEFINE_ARG(int32_t, i32, NEVER_NAN)
DEFINE_ARG(int64_t, i64, NEVER_NAN)
DEFINE_ARG(uint8_t, u8, NEVER_NAN)
DEFINE_ARG(uint16_t, u16, NEVER_NAN)
DEFINE_ARG(uint32_t, u32, NEVER_NAN)
DEFINE_ARG(uint64_t, u64, NEVER_NAN)

/* Index of the winning element of slice (outer o, inner i), or false for an unknown dtype. */
static bool arg_slice(kiln_dtype dtype, const void *data, axis_split s, uint64_t o, uint64_t i, bool max,
                      bool last, uint64_t *best)
{
    uint64_t base = o * s.extent * s.inner + i;
    switch (dtype) {
#define ARG_CASE(CODE, T, SUFFIX)                                                      \
    case CODE:                                                                         \
        *best = arg_##SUFFIX((const T *)data + base, s.extent, s.inner, max, last);    \
        return true;
        ARG_CASE(KILN_F32, float, f32)
        ARG_CASE(KILN_F64, double, f64)
        ARG_CASE(KILN_I8, int8_t, i8)
        ARG_CASE(KILN_I16, int16_t, i16)
        ARG_CASE(KILN_I32, int32_t, i32)
        ARG_CASE(KILN_I64, int64_t, i64)
        ARG_CASE(KILN_U8, uint8_t, u8)
        ARG_CASE(KILN_U16, uint16_t, u16)
        ARG_CASE(KILN_U32, uint32_t, u32)
        ARG_CASE(KILN_U64, uint64_t, u64)
#undef ARG_CASE
    default:
        return false;
    }
}

/* The vectorized f32 softmax of the blocks of the outer axes that begin in one chunk of elements. */
typedef struct softmax_job {
    const float *in;
    float *out;
    axis_split s;
} softmax_job;

/*
 * Block o (extent x inner elements) begins at element o * extent * inner:
 * the chunk [begin, end) of kiln_parallel_chunks runs the blocks that begin
 * inside it, so each block runs once, on one thread.
 */
static void softmax_chunk(const void *vjob, uint64_t begin, uint64_t end)
{
    const softmax_job *job = vjob;
    uint64_t block = job->s.extent * job->s.inner;
    for (uint64_t o = (begin + block - 1) / block; o < job->s.outer && o * block < end; o++) {
        if (job->s.inner == 1)
            kiln_vector_softmax_f32(job->in + o * block, job->out + o * block, job->s.extent);
        else
            kiln_vector_softmax_columns_f32(job->in + o * block, job->out + o * block, job->s.extent,
                                            job->s.inner);
    }
}

static kiln_status run_axis_op(axis_kind kind, const kiln_kernel_call *call, kiln_error *err)
{
    const char *op = axis_names[kind];
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    bool arg = kind == AXIS_ARGMAX || kind == AXIS_ARGMIN;
    uint32_t axis;
    bool last = false, keepdims = true;
    char why[160];
    if (in->rank > KILN_MAX_RANK ||
        !resolve_axis(call->attributes, call->attribute_count, arg ? 0 : -1, in->rank, &axis, why, sizeof why) ||
        (arg && !resolve_flag(call->attributes, call->attribute_count, "keepdims", 1, &keepdims, why, sizeof why)) ||
        (arg && !resolve_flag(call->attributes, call->attribute_count, "select_last_index", 0, &last, why,
                              sizeof why)))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op,
                         in->rank > KILN_MAX_RANK ? "rank above KILN_MAX_RANK" : why);
    if (!kiln_dtype_is_floating(in->dtype) && !(arg && kiln_dtype_is_integer(in->dtype)))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op,
                         kiln_dtype_name(in->dtype));
    axis_split s = split_at(in, axis);
    if (arg) {
        KILN_TRY(check_output(op, out, KILN_I64, s.outer * s.inner, err));
        if (out->element_count == 0)
            return KILN_OK;
        if (s.extent == 0)
            return kiln_fail(err, KILN_ERR_RUNTIME, "%s: empty axis %u has no element to select", op, axis);
        int64_t *indices = out->data;
        for (uint64_t o = 0; o < s.outer; o++)
            for (uint64_t i = 0; i < s.inner; i++) {
                uint64_t best = 0;
                (void)arg_slice(in->dtype, in->data, s, o, i, kind == AXIS_ARGMAX, last, &best);
                indices[o * s.inner + i] = (int64_t)best;
            }
        return KILN_OK;
    }
    KILN_TRY(check_output(op, out, in->dtype, in->element_count, err));
    /* No elements, no work: the slices below are counted by the other axes,
     * which an empty input may still make huge ((0, 2^63-1) along axis 0). */
    if (in->element_count == 0)
        return KILN_OK;
    /* Fast path (spec/opset.md, "Fast paths": vector-math): f32 softmax
     * on any axis, within 1 ulp of the loops below. */
    if (kind == AXIS_SOFTMAX && in->dtype == KILN_F32 && s.extent > 0 && call->context &&
        !call->context->reference_only) {
        softmax_job job = {in->data, out->data, s};
        kiln_parallel_chunks(in->element_count, kiln_call_threads(call), softmax_chunk, &job);
        call->context->path = KILN_PATH_VECTOR;
        return KILN_OK;
    }
    for (uint64_t o = 0; o < s.outer; o++) {
        for (uint64_t i = 0; i < s.inner; i++) {
            uint64_t base = o * s.extent * s.inner + i;
            if (s.extent == 0)
                continue;
            if (kind == AXIS_HARDMAX) {
                uint64_t best = 0;
                (void)arg_slice(in->dtype, in->data, s, o, i, true, false, &best);
                for (uint64_t k = 0; k < s.extent; k++)
                    kiln_store_real(out->dtype, out->data, base + k * s.inner, k == best ? 1.0 : 0.0);
                continue;
            }
            /* Stable: shift by the slice max so exp never overflows; a NaN
             * max (any NaN in the slice) makes every output NaN. */
            double shift = kiln_load_real(in->dtype, in->data, (int64_t)base);
            for (uint64_t k = 1; k < s.extent; k++) {
                double x = kiln_load_real(in->dtype, in->data, (int64_t)(base + k * s.inner));
                if (!isnan(shift) && (isnan(x) || x > shift))
                    shift = x;
            }
            double sum = 0.0;
            for (uint64_t k = 0; k < s.extent; k++)
                sum += exp(kiln_load_real(in->dtype, in->data, (int64_t)(base + k * s.inner)) - shift);
            double log_sum = log(sum);
            for (uint64_t k = 0; k < s.extent; k++) {
                double x = kiln_load_real(in->dtype, in->data, (int64_t)(base + k * s.inner)) - shift;
                kiln_store_real(out->dtype, out->data, base + k * s.inner,
                           kind == AXIS_SOFTMAX ? exp(x) / sum : x - log_sum);
            }
        }
    }
    return KILN_OK;
}

/* ------------------------------------------------------------ registry */

#define REDUCE_ENTRY(SUFFIX, KIND)                                                                          \
    static kiln_status infer_##SUFFIX(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,  \
                                      uint32_t input_count, kiln_value_type *out, kiln_error *err)         \
    {                                                                                                      \
        (void)input_count;                                                                                 \
        return infer_reduce(KIND, ctx, inputs[0], out, err);                                               \
    }                                                                                                      \
    static kiln_status run_##SUFFIX(const kiln_kernel_call *call, kiln_error *err)                         \
    {                                                                                                      \
        KILN_HALF_IN_F32(call, run_##SUFFIX, err);                                                         \
        return run_reduce(KIND, call, err);                                                                \
    }
REDUCE_ENTRY(reduce_sum, REDUCE_SUM)
REDUCE_ENTRY(reduce_mean, REDUCE_MEAN)
REDUCE_ENTRY(reduce_max, REDUCE_MAX)
REDUCE_ENTRY(reduce_min, REDUCE_MIN)
REDUCE_ENTRY(reduce_prod, REDUCE_PROD)
REDUCE_ENTRY(reduce_l1, REDUCE_L1)
REDUCE_ENTRY(reduce_l2, REDUCE_L2)
REDUCE_ENTRY(reduce_sum_square, REDUCE_SUM_SQUARE)
REDUCE_ENTRY(reduce_log_sum, REDUCE_LOG_SUM)
REDUCE_ENTRY(reduce_log_sum_exp, REDUCE_LOG_SUM_EXP)

#define AXIS_ENTRY(SUFFIX, KIND)                                                                            \
    static kiln_status infer_##SUFFIX(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,  \
                                      uint32_t input_count, kiln_value_type *out, kiln_error *err)         \
    {                                                                                                      \
        (void)input_count;                                                                                 \
        return infer_axis_op(KIND, ctx, inputs[0], out, err);                                              \
    }                                                                                                      \
    static kiln_status run_##SUFFIX(const kiln_kernel_call *call, kiln_error *err)                         \
    {                                                                                                      \
        KILN_HALF_IN_F32(call, run_##SUFFIX, err);                                                         \
        return run_axis_op(KIND, call, err);                                                               \
    }
AXIS_ENTRY(argmax, AXIS_ARGMAX)
AXIS_ENTRY(argmin, AXIS_ARGMIN)
AXIS_ENTRY(softmax, AXIS_SOFTMAX)
AXIS_ENTRY(log_softmax, AXIS_LOG_SOFTMAX)
AXIS_ENTRY(hardmax, AXIS_HARDMAX)

#define REDUCE_DEF(NAME)                                                                             \
    {.name = #NAME, .versions = {1, 1}, .inputs = {1, 1}, .attributes = reduce_attributes, .infer = infer_##NAME, \
     .run = run_##NAME}
static const kiln_op_def reduce_ops[] = {
    REDUCE_DEF(reduce_sum),
    REDUCE_DEF(reduce_mean),
    REDUCE_DEF(reduce_max),
    REDUCE_DEF(reduce_min),
    REDUCE_DEF(reduce_prod),
    REDUCE_DEF(reduce_l1),
    REDUCE_DEF(reduce_l2),
    REDUCE_DEF(reduce_sum_square),
    REDUCE_DEF(reduce_log_sum),
    REDUCE_DEF(reduce_log_sum_exp),
    {.name = "argmax", .versions = {1, 1}, .inputs = {1, 1}, .attributes = arg_attributes,
     .infer = infer_argmax, .run = run_argmax},
    {.name = "argmin", .versions = {1, 1}, .inputs = {1, 1}, .attributes = arg_attributes,
     .infer = infer_argmin, .run = run_argmin},
    {.name = "softmax", .versions = {1, 1}, .inputs = {1, 1}, .attributes = softmax_attributes,
     .infer = infer_softmax, .run = run_softmax},
    {.name = "log_softmax", .versions = {1, 1}, .inputs = {1, 1}, .attributes = softmax_attributes,
     .infer = infer_log_softmax, .run = run_log_softmax},
    {.name = "hardmax", .versions = {1, 1}, .inputs = {1, 1}, .attributes = softmax_attributes,
     .infer = infer_hardmax, .run = run_hardmax},
};

const kiln_op_family kiln_ops_reduce = KILN_OP_FAMILY(reduce_ops, "spec/ops/reduce.md");
