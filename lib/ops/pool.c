/*
 * pool.c — pooling (max_pool, avg_pool, lp_pool, global_max_pool,
 * global_avg_pool, global_lp_pool): shape rules and portable reference
 * kernels. Semantics,
 * attributes and numerics: spec/ops/pool.md; the window geometry is shared
 * with convolution (window.c).
 *
 * Shape rules prove that every window fits (window.c) and that globally
 * pooled axes are non-empty over the whole declared domain, or refuse
 * naming the sizes and a counterexample. Kernels re-check what they rely
 * on. Sums (of values, or of |v|^p) are taken in double and each output
 * element is rounded once to the output dtype; a NaN in a max window gives
 * NaN. Kernels allocate nothing. f32 max_pool and avg_pool run through
 * oneDNN when the session has it (onednn.h); the kernels here handle what
 * it declines. f16 and bf16 are computed by the f32 kernels here, never by
 * oneDNN, and rounded once (half_compute.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "onednn.h"
#include "op_registry.h"
#include "real_access.h"
#include "size_claim.h"
#include "window.h"

/* ----------------------------------------------------------- attributes */

static const kiln_attribute_spec max_pool_attributes[] = {
    {"auto_pad", KILN_ATTRIBUTE_STRING}, {"ceil_mode", KILN_ATTRIBUTE_INT}, {"dilations", KILN_ATTRIBUTE_INTS},
    {"kernel_shape", KILN_ATTRIBUTE_INTS}, {"pads", KILN_ATTRIBUTE_INTS},   {"strides", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

static const kiln_attribute_spec lp_pool_attributes[] = {
    {"auto_pad", KILN_ATTRIBUTE_STRING},   {"ceil_mode", KILN_ATTRIBUTE_INT}, {"dilations", KILN_ATTRIBUTE_INTS},
    {"kernel_shape", KILN_ATTRIBUTE_INTS}, {"p", KILN_ATTRIBUTE_INT},         {"pads", KILN_ATTRIBUTE_INTS},
    {"strides", KILN_ATTRIBUTE_INTS},      {NULL, 0},
};

static const kiln_attribute_spec global_lp_pool_attributes[] = {
    {"p", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec avg_pool_attributes[] = {
    {"auto_pad", KILN_ATTRIBUTE_STRING},       {"ceil_mode", KILN_ATTRIBUTE_INT},
    {"count_include_pad", KILN_ATTRIBUTE_INT}, {"dilations", KILN_ATTRIBUTE_INTS},
    {"kernel_shape", KILN_ATTRIBUTE_INTS},     {"pads", KILN_ATTRIBUTE_INTS},
    {"strides", KILN_ATTRIBUTE_INTS},          {NULL, 0},
};

/* count_include_pad: 0 or 1 (default 0). */
static bool resolve_count_include_pad(const kiln_node_attribute *attributes, uint32_t count, bool *include,
                                      char *why, size_t size)
{
    int64_t v = kiln_attribute_int(attributes, count, "count_include_pad", 0);
    if (v != 0 && v != 1) {
        snprintf(why, size, "count_include_pad must be 0 or 1, got %lld", (long long)v);
        return false;
    }
    *include = v == 1;
    return true;
}

/* p: the norm's order, 1..KILN_WINDOW_MAX_ATTRIBUTE (default 2). */
static bool resolve_p(const kiln_node_attribute *attributes, uint32_t count, int64_t *p, char *why, size_t size)
{
    int64_t v = kiln_attribute_int(attributes, count, "p", 2);
    if (v < 1 || v > KILN_WINDOW_MAX_ATTRIBUTE) {
        snprintf(why, size, "p must be in 1..%lld, got %lld", (long long)KILN_WINDOW_MAX_ATTRIBUTE, (long long)v);
        return false;
    }
    *p = v;
    return true;
}

typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

/* What each output element is made of: the op's attributes beyond the window. */
typedef struct pool_reduction {
    pool_kind kind;
    bool include_pad; /* avg_pool */
    int64_t p;        /* lp_pool, global_lp_pool */
} pool_reduction;

static bool resolve_reduction(const kiln_node_attribute *attributes, uint32_t count, pool_kind kind,
                              pool_reduction *r, char *why, size_t size)
{
    r->kind = kind;
    return resolve_count_include_pad(attributes, count, &r->include_pad, why, size) &&
           resolve_p(attributes, count, &r->p, why, size);
}

/* ---------------------------------------------------------- shape rules */

static kiln_status check_operand(const kiln_shape_context *ctx, const char *op, const kiln_value_type *x,
                                 uint32_t max_rank, kiln_error *err)
{
    if (!kiln_dtype_is_floating(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s does not support dtype %s (it takes f32, f64, f16 or bf16)", ctx->node_label, op,
                         kiln_dtype_name(x->dtype));
    if (x->shape.rank < 3 || x->shape.rank > max_rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s needs x of rank 3..%u ([N, C, spatial...]), got rank %u", ctx->node_label, op,
                         max_rank, x->shape.rank);
    return KILN_OK;
}

static kiln_status infer_window_pool(const kiln_shape_context *ctx, const char *op, pool_kind kind,
                                     const kiln_value_type *const *inputs, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    KILN_TRY(check_operand(ctx, op, x, 2 + KILN_WINDOW_MAX_SPATIAL, err));
    kiln_window w;
    memset(&w, 0, sizeof w);
    w.kind = KILN_WINDOW_POOL;
    w.spatial = x->shape.rank - 2;
    char why[200];
    pool_reduction r;
    if (!kiln_window_resolve(ctx->attributes, ctx->attribute_count, &w, why, sizeof why) ||
        !resolve_reduction(ctx->attributes, ctx->attribute_count, kind, &r, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    *out = *x;
    for (uint32_t a = 0; a < w.spatial; a++)
        KILN_TRY(kiln_window_infer_size(ctx, &w, a, x->shape.axes[a + 2], &out->shape.axes[a + 2], err));
    return KILN_OK;
}

static kiln_status infer_max_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_window_pool(ctx, "max_pool", POOL_MAX, inputs, out, err);
}

static kiln_status infer_avg_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_window_pool(ctx, "avg_pool", POOL_AVG, inputs, out, err);
}

static kiln_status infer_lp_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_window_pool(ctx, "lp_pool", POOL_LP, inputs, out, err);
}

/* [N, C, spatial...] -> [N, C, 1, ...], each pooled axis proven non-empty. */
static kiln_status infer_global(const kiln_shape_context *ctx, const char *op, const kiln_value_type *x,
                                kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operand(ctx, op, x, KILN_MAX_RANK, err));
    pool_reduction r;
    char why[200];
    if (!resolve_reduction(ctx->attributes, ctx->attribute_count, POOL_LP, &r, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    *out = *x;
    for (uint32_t a = 2; a < x->shape.rank; a++) {
        char size[128], what[300];
        kiln_format_size(ctx, x->shape.axes[a], size, sizeof size);
        snprintf(what, sizeof what, "pooled x axis %u size %s is at least 1", a, size);
        kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, x->shape.axes[a], 0, 1};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Declare the dims so that the axis is at least 1", err));
        KILN_TRY(kiln_expr_const(ctx->pool, 1, &out->shape.axes[a], err));
    }
    return KILN_OK;
}

static kiln_status infer_global_max_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                         uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_global(ctx, "global_max_pool", inputs[0], out, err);
}

static kiln_status infer_global_avg_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                         uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_global(ctx, "global_avg_pool", inputs[0], out, err);
}

static kiln_status infer_global_lp_pool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                        uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_global(ctx, "global_lp_pool", inputs[0], out, err);
}

/* -------------------------------------------------------------- kernels */

/* A call's geometry with the spatial axes lifted to three (see conv.c). */
typedef struct pool_geometry {
    int64_t planes; /* N * C */
    kiln_window_geometry lifted;
    int64_t in_plane, out_plane;
    pool_reduction reduction;
    const void *x;
    void *y;
} pool_geometry;

/*
 * Operand count and dtypes: one input of a float dtype, the output of its
 * dtype. Checked before a half call is widened, so a call never mixes half
 * and f32 tensors in one f32 run.
 */
static kiln_status check_dtypes(const char *op, const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count != 1)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: takes 1 input, got %u", op, call->input_count);
    const kiln_tensor *x = call->inputs[0];
    if (!kiln_dtype_is_floating(x->dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op, kiln_dtype_name(x->dtype));
    if (call->output->dtype != x->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: the output must have the dtype of x (%s), got %s", op,
                         kiln_dtype_name(x->dtype), kiln_dtype_name(call->output->dtype));
    return KILN_OK;
}

/* The geometry of a call whose operand count and dtypes check_dtypes accepted, as f32 or f64. */
static kiln_status prepare_call(const char *op, const kiln_kernel_call *call, pool_kind kind, pool_geometry *g,
                                kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *y = call->output;
    if (x->rank < 3 || x->rank > 2 + KILN_WINDOW_MAX_SPATIAL || y->rank != x->rank ||
        y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%s: x must be [N, C, spatial...] of rank 3..5 and the output [N, C, ...]", op);
    kiln_window w;
    memset(&w, 0, sizeof w);
    w.kind = KILN_WINDOW_POOL;
    w.spatial = x->rank - 2;
    char why[200];
    if (!kiln_window_resolve(call->attributes, call->attribute_count, &w, why, sizeof why) ||
        !resolve_reduction(call->attributes, call->attribute_count, kind, &g->reduction, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op, why);
    KILN_TRY(kiln_window_geometry_of(&w, op, x, y, &g->lifted, err));
    /*
     * A non-empty output bounds N * C and its own plane; an input plane
     * whose product overflows has an empty axis and is never read.
     */
    g->planes = y->element_count == 0 ? 0 : x->shape[0] * x->shape[1];
    g->out_plane = g->planes == 0 ? 0 : g->lifted.out[0] * g->lifted.out[1] * g->lifted.out[2];
    if (__builtin_mul_overflow(g->lifted.in[0], g->lifted.in[1], &g->in_plane) ||
        __builtin_mul_overflow(g->in_plane, g->lifted.in[2], &g->in_plane))
        g->in_plane = 0;
    g->x = x->data;
    g->y = y->data;
    return KILN_OK;
}

/* Folding one tap value into a pooled value, and finishing it. */
typedef struct pool_accumulator {
    double value; /* running max, sum, or sum of |v|^p */
    bool nan;     /* max: a NaN tap was seen */
} pool_accumulator;

static void accumulate(pool_accumulator *acc, const pool_reduction *r, double v)
{
    switch (r->kind) {
    case POOL_MAX:
        if (isnan(v))
            acc->nan = true;
        else if (v > acc->value)
            acc->value = v;
        break;
    case POOL_AVG: acc->value += v; break;
    default: acc->value += r->p == 1 ? fabs(v) : r->p == 2 ? v * v : pow(fabs(v), (double)r->p); break;
    }
}

/* The pooled value of a window whose average divides by `divisor`. */
static double finish(const pool_accumulator *acc, const pool_reduction *r, double divisor)
{
    switch (r->kind) {
    case POOL_MAX: return acc->nan ? NAN : acc->value;
    case POOL_AVG: return divisor != 0.0 ? acc->value / divisor : NAN;
    default: return r->p == 1 ? acc->value : r->p == 2 ? sqrt(acc->value) : pow(acc->value, 1.0 / (double)r->p);
    }
}

/*
 * Each output element pools the taps of its window that land in the input;
 * taps are clipped per axis up front. max: NaN if any tap is NaN, -inf for
 * a window that sees no input. avg: the sum over the taps in the input,
 * divided by their count, or with count_include_pad by the count of taps in
 * the padded input ([-pad_begin, in + pad_end) on every axis). lp: the
 * p-norm of the taps in the input.
 */
#define DEFINE_POOL(T, SUFFIX)                                                                                      \
    static void pool_##SUFFIX(const pool_geometry *g)                                                               \
    {                                                                                                               \
        const kiln_window_geometry *geo = &g->lifted;                                                               \
        const T *x = g->x;                                                                                          \
        T *y = g->y;                                                                                                \
        const pool_reduction *r = &g->reduction;                                                                    \
        for (int64_t p = 0; p < g->planes; p++) {                                                                   \
            const T *plane = x + p * g->in_plane;                                                                   \
            T *target = y + p * g->out_plane;                                                                       \
            for (int64_t od = 0; od < geo->out[0]; od++) {                                                          \
                int64_t sd = od * geo->stride[0] - geo->pad[0], d0, d1, pd0, pd1;                                   \
                kiln_window_taps(sd, geo->dilation[0], geo->kernel[0], geo->in[0], &d0, &d1);                       \
                kiln_window_taps(sd + geo->pad[0], geo->dilation[0], geo->kernel[0], geo->padded[0], &pd0, &pd1);   \
                for (int64_t oh = 0; oh < geo->out[1]; oh++) {                                                      \
                    int64_t sh = oh * geo->stride[1] - geo->pad[1], h0, h1, ph0, ph1;                               \
                    kiln_window_taps(sh, geo->dilation[1], geo->kernel[1], geo->in[1], &h0, &h1);                   \
                    kiln_window_taps(sh + geo->pad[1], geo->dilation[1], geo->kernel[1], geo->padded[1], &ph0, &ph1); \
                    for (int64_t ow = 0; ow < geo->out[2]; ow++) {                                                  \
                        int64_t sw = ow * geo->stride[2] - geo->pad[2], w0, w1, pw0, pw1;                           \
                        kiln_window_taps(sw, geo->dilation[2], geo->kernel[2], geo->in[2], &w0, &w1);               \
                        kiln_window_taps(sw + geo->pad[2], geo->dilation[2], geo->kernel[2], geo->padded[2], &pw0,  \
                                         &pw1);                                                                     \
                        pool_accumulator acc = {r->kind == POOL_MAX ? -INFINITY : 0.0, false};                      \
                        for (int64_t kd = d0; kd < d1; kd++)                                                        \
                            for (int64_t kh = h0; kh < h1; kh++) {                                                  \
                                int64_t id = sd + kd * geo->dilation[0], ih = sh + kh * geo->dilation[1];           \
                                const T *row = plane + (id * geo->in[1] + ih) * geo->in[2];                         \
                                for (int64_t kw = w0; kw < w1; kw++)                                                \
                                    accumulate(&acc, r, (double)row[sw + kw * geo->dilation[2]]);                   \
                            }                                                                                       \
                        /* In double: hostile kernel and pad extents can make the padded count pass 2^63. */        \
                        double divisor = r->include_pad                                                             \
                                             ? (double)(pd1 - pd0) * (double)(ph1 - ph0) * (double)(pw1 - pw0)      \
                                             : (double)(d1 - d0) * (double)(h1 - h0) * (double)(w1 - w0);           \
                        target[(od * geo->out[1] + oh) * geo->out[2] + ow] = (T)finish(&acc, r, divisor);           \
                    }                                                                                               \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
    }

DEFINE_POOL(float, f32)
DEFINE_POOL(double, f64)

static kiln_status run_window_pool(const char *op, const kiln_kernel_call *call, pool_kind kind, kiln_error *err)
{
    pool_geometry g;
    KILN_TRY(prepare_call(op, call, kind, &g, err));
    if (call->output->element_count == 0)
        return KILN_OK;
    if (call->output->dtype == KILN_F32)
        pool_f32(&g);
    else
        pool_f64(&g);
    return KILN_OK;
}

/*
 * oneDNN's pooling for f32 max and avg pools the reference kernel accepts
 * (spec/opset.md, "Fast paths"); anything else is declined, and the
 * reference kernel reports what is wrong with it.
 */
static kiln_status fast_window_pool(const char *op, const kiln_kernel_call *call, pool_kind kind, bool *ran,
                                    kiln_error *err)
{
    *ran = false;
    pool_geometry g;
    if (call->output->dtype != KILN_F32 || check_dtypes(op, call, NULL) != KILN_OK ||
        prepare_call(op, call, kind, &g, NULL) != KILN_OK || call->output->element_count == 0)
        return KILN_OK;
    kiln_onednn_pool_kind fast = kind == POOL_MAX                ? KILN_ONEDNN_POOL_MAX
                                 : g.reduction.include_pad ? KILN_ONEDNN_POOL_AVG_INCLUDE_PAD
                                                           : KILN_ONEDNN_POOL_AVG_EXCLUDE_PAD;
    return kiln_onednn_pool(call, &g.lifted.window, fast, ran, err);
}

static kiln_status fast_max_pool(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_window_pool("max_pool", call, POOL_MAX, ran, err);
}

static kiln_status fast_avg_pool(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_window_pool("avg_pool", call, POOL_AVG, ran, err);
}

static kiln_status run_max_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("max_pool", call, err));
    KILN_HALF_IN_F32(call, run_max_pool, err);
    return run_window_pool("max_pool", call, POOL_MAX, err);
}

static kiln_status run_avg_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("avg_pool", call, err));
    KILN_HALF_IN_F32(call, run_avg_pool, err);
    return run_window_pool("avg_pool", call, POOL_AVG, err);
}

static kiln_status run_lp_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("lp_pool", call, err));
    KILN_HALF_IN_F32(call, run_lp_pool, err);
    return run_window_pool("lp_pool", call, POOL_LP, err);
}

/* A global pool's operands: x [N, C, spatial...] with non-empty spatial axes, the output [N, C, 1, ...]. */
static kiln_status check_global(const char *op, const kiln_kernel_call *call, pool_kind kind, pool_reduction *r,
                                kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *y = call->output;
    bool fits = x->rank >= 3 && y->rank == x->rank && y->shape[0] == x->shape[0] && y->shape[1] == x->shape[1];
    for (uint32_t a = 2; fits && a < x->rank; a++)
        fits = y->shape[a] == 1 && x->shape[a] >= 1;
    if (!fits)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%s: x must be [N, C, spatial...] with non-empty spatial axes and the output [N, C, 1, ...]",
                         op);
    char why[200];
    if (!resolve_reduction(call->attributes, call->attribute_count, kind, r, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op, why);
    return KILN_OK;
}

/* Each [n, c] plane of x (dtypes checked by check_dtypes) reduced to one element: its max (NaN wins), mean, p-norm. */
static kiln_status run_global(const char *op, const kiln_kernel_call *call, pool_kind kind, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *y = call->output;
    pool_reduction r;
    KILN_TRY(check_global(op, call, kind, &r, err));
    uint64_t planes = y->element_count;
    if (planes == 0)
        return KILN_OK;
    uint64_t plane = x->element_count / planes;
    for (uint64_t p = 0; p < planes; p++) {
        pool_accumulator acc = {kind == POOL_MAX ? -INFINITY : 0.0, false};
        for (uint64_t i = p * plane; i < (p + 1) * plane; i++)
            accumulate(&acc, &r, kiln_load_real(x->dtype, x->data, i));
        kiln_store_real(y->dtype, y->data, p, finish(&acc, &r, (double)plane));
    }
    return KILN_OK;
}

/* One window as large as the plane: oneDNN's pooling for f32 max and avg (spec/opset.md, "Fast paths"). */
static kiln_status fast_global(const char *op, const kiln_kernel_call *call, pool_kind kind, bool *ran,
                               kiln_error *err)
{
    *ran = false;
    pool_reduction r;
    const kiln_tensor *x = call->inputs[0];
    if (call->output->dtype != KILN_F32 || check_dtypes(op, call, NULL) != KILN_OK ||
        check_global(op, call, kind, &r, NULL) != KILN_OK || call->output->element_count == 0 || x->rank > 5)
        return KILN_OK;
    kiln_window_axes whole = {.spatial = x->rank - 2};
    for (uint32_t a = 0; a < whole.spatial; a++) {
        whole.kernel[a] = x->shape[2 + a];
        whole.strides[a] = whole.dilations[a] = 1;
    }
    kiln_onednn_pool_kind fast = kind == POOL_MAX ? KILN_ONEDNN_POOL_MAX : KILN_ONEDNN_POOL_AVG_EXCLUDE_PAD;
    return kiln_onednn_pool(call, &whole, fast, ran, err);
}

static kiln_status fast_global_max_pool(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_global("global_max_pool", call, POOL_MAX, ran, err);
}

static kiln_status fast_global_avg_pool(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_global("global_avg_pool", call, POOL_AVG, ran, err);
}

static kiln_status run_global_max_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("global_max_pool", call, err));
    KILN_HALF_IN_F32(call, run_global_max_pool, err);
    return run_global("global_max_pool", call, POOL_MAX, err);
}

static kiln_status run_global_avg_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("global_avg_pool", call, err));
    KILN_HALF_IN_F32(call, run_global_avg_pool, err);
    return run_global("global_avg_pool", call, POOL_AVG, err);
}

static kiln_status run_global_lp_pool(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("global_lp_pool", call, err));
    KILN_HALF_IN_F32(call, run_global_lp_pool, err);
    return run_global("global_lp_pool", call, POOL_LP, err);
}

/* ------------------------------------------------------------ registry */

static const kiln_op_def pool_ops[] = {
    {.name = "max_pool", .versions = {1, 1}, .inputs = {1, 1}, .attributes = max_pool_attributes,
     .infer = infer_max_pool, .run = run_max_pool, .fast = fast_max_pool,
     .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
    {.name = "avg_pool", .versions = {1, 1}, .inputs = {1, 1}, .attributes = avg_pool_attributes,
     .infer = infer_avg_pool, .run = run_avg_pool, .fast = fast_avg_pool,
     .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
    {.name = "global_max_pool", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_global_max_pool,
     .run = run_global_max_pool, .fast = fast_global_max_pool, .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
    {.name = "global_avg_pool", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_global_avg_pool,
     .run = run_global_avg_pool, .fast = fast_global_avg_pool, .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
    {.name = "lp_pool", .versions = {1, 1}, .inputs = {1, 1}, .attributes = lp_pool_attributes,
     .infer = infer_lp_pool, .run = run_lp_pool},
    {.name = "global_lp_pool", .versions = {1, 1}, .inputs = {1, 1}, .attributes = global_lp_pool_attributes,
     .infer = infer_global_lp_pool, .run = run_global_lp_pool},
};

const kiln_op_family kiln_ops_pool = KILN_OP_FAMILY(pool_ops, "spec/ops/pool.md");
