/*
 * norm.c — normalization ops (batch_norm, layer_norm, group_norm,
 * instance_norm, lp_norm, mean_variance_norm): shape rules and portable
 * reference kernels. Semantics, attributes and numerics: spec/ops/norm.md.
 *
 * Shape rules prove every size precondition (parameter sizes equal to the
 * channel axis, divisibility of the channels by the groups, non-empty
 * normalized extents) over the whole declared domain, or refuse naming the
 * sizes and a counterexample. Kernels re-check what they rely on, so they
 * never trust a caller. Statistics are computed in double, two-pass (mean,
 * then the mean of squared deviations), and each output element is rounded
 * once to the output dtype. Kernels allocate nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "broadcast.h"
#include "error.h"
#include "half_compute.h"
#include "odometer.h"
#include "op_registry.h"
#include "real_access.h"
#include "parallel.h"
#include "size_claim.h"

#define DEFAULT_EPSILON 1e-5
/* Fixed by ONNX MeanVarianceNormalization; not an attribute. */
#define MVN_EPSILON 1e-9

/* ----------------------------------------------------------- attributes */

static const kiln_attribute_spec epsilon_attributes[] = {
    {"epsilon", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

static const kiln_attribute_spec layer_norm_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"epsilon", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

static const kiln_attribute_spec group_norm_attributes[] = {
    {"epsilon", KILN_ATTRIBUTE_FLOAT},
    {"num_groups", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec lp_norm_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"p", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec mvn_attributes[] = {
    {"axes", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/* epsilon: finite and >= 0, or false with the reason in `why`. */
static bool resolve_epsilon(const kiln_node_attribute *attributes, uint32_t count, double *eps, char *why,
                            size_t size)
{
    double e = kiln_attribute_float(attributes, count, "epsilon", DEFAULT_EPSILON);
    if (!isfinite(e) || e < 0) {
        snprintf(why, size, "epsilon must be finite and >= 0, got %g", e);
        return false;
    }
    *eps = e;
    return true;
}

/* A single axis normalised into 0..rank-1, or false with the reason. */
static bool resolve_axis(const kiln_node_attribute *attributes, uint32_t count, uint32_t rank, uint32_t *axis,
                         char *why, size_t size)
{
    int64_t a = kiln_attribute_int(attributes, count, "axis", -1);
    if (rank == 0 || a < -(int64_t)rank || a >= (int64_t)rank) {
        snprintf(why, size, "axis %lld is out of range for rank %u (valid: %lld..%lld)", (long long)a, rank,
                 -(long long)rank, (long long)rank - 1);
        return false;
    }
    *axis = (uint32_t)(a < 0 ? a + (int64_t)rank : a);
    return true;
}

/* num_groups: required, >= 1. */
static bool resolve_groups(const kiln_node_attribute *attributes, uint32_t count, int64_t *groups, char *why,
                           size_t size)
{
    if (!kiln_attribute_find(attributes, count, "num_groups")) {
        snprintf(why, size, "num_groups is required");
        return false;
    }
    int64_t g = kiln_attribute_int(attributes, count, "num_groups", 0);
    if (g < 1) {
        snprintf(why, size, "num_groups must be >= 1, got %lld", (long long)g);
        return false;
    }
    *groups = g;
    return true;
}

/* p: 1 or 2 (default 2). */
static bool resolve_p(const kiln_node_attribute *attributes, uint32_t count, int64_t *p, char *why, size_t size)
{
    int64_t v = kiln_attribute_int(attributes, count, "p", 2);
    if (v != 1 && v != 2) {
        snprintf(why, size, "p must be 1 or 2, got %lld", (long long)v);
        return false;
    }
    *p = v;
    return true;
}

/* mean_variance_norm axes (default [0, 2, 3]): non-empty, in range, unique. */
static bool resolve_mvn_axes(const kiln_node_attribute *attributes, uint32_t count, uint32_t rank,
                             bool reduced[KILN_MAX_RANK], char *why, size_t size)
{
    static const int64_t default_axes[] = {0, 2, 3};
    const kiln_node_attribute *axes = kiln_attribute_find(attributes, count, "axes");
    const int64_t *list = default_axes;
    uint32_t n = 3;
    if (axes && axes->type == KILN_ATTRIBUTE_INTS) {
        list = axes->ints;
        n = axes->count;
    }
    memset(reduced, 0, KILN_MAX_RANK * sizeof reduced[0]);
    if (n == 0) {
        snprintf(why, size, "axes must not be empty");
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        int64_t a = list[i];
        if (a < -(int64_t)rank || a >= (int64_t)rank) {
            snprintf(why, size, "axes[%u] = %lld is out of range for rank %u (valid: %lld..%lld)%s", i,
                     (long long)a, rank, -(long long)rank, (long long)rank - 1,
                     axes ? "" : " (default axes [0, 2, 3] need rank >= 4)");
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

/* ----------------------------------------------------------- the proofs */

/* What a refusal suggests; the domain is never narrowed silently. */
static const char equal_advice[] = "Use the same dim (or the same constant) for both sizes";
static const char divisible_advice[] = "Declare the dim with a multiple_of that num_groups divides";
static const char nonempty_advice[] = "Declare the dims so that the axis is at least 1";

/* Parameter `name` (input `index`) is rank 1 with the size of x's channel axis `channels`. */
static kiln_status prove_per_channel(const kiln_shape_context *ctx, const char *name, uint32_t index,
                                     const kiln_value_type *param, uint32_t channels, kiln_error *err)
{
    if (param->shape.rank != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s (input %u) must have rank 1, got rank %u",
                         ctx->node_label, name, index, param->shape.rank);
    char size[128], c[128], what[400];
    kiln_format_size(ctx, param->shape.axes[0], size, sizeof size);
    kiln_format_size(ctx, channels, c, sizeof c);
    snprintf(what, sizeof what, "%s (input %u) size %s equals x axis 1 size %s", name, index, size, c);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, param->shape.axes[0], channels, 0};
    return kiln_prove_size_claim(ctx, &claim, what, equal_advice, err);
}

/* ---------------------------------------------------------- shape rules */

/* Every input the same float dtype; x rank at least `min_rank`. */
static kiln_status check_operands(const kiln_shape_context *ctx, const char *op, const kiln_value_type *const *inputs,
                                  uint32_t input_count, uint32_t min_rank, kiln_error *err)
{
    if (!kiln_dtype_is_floating(inputs[0]->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s does not support dtype %s (it takes f32, f64, f16 or bf16)",
                         ctx->node_label, op, kiln_dtype_name(inputs[0]->dtype));
    for (uint32_t i = 1; i < input_count; i++)
        KILN_TRY(kiln_require_same_dtype(ctx, inputs[0], inputs[i], err));
    if (inputs[0]->shape.rank < min_rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s needs x of rank >= %u, got rank %u", ctx->node_label,
                         op, min_rank, inputs[0]->shape.rank);
    return KILN_OK;
}

static kiln_status refuse_attribute(const kiln_shape_context *ctx, const char *why, kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
}

static kiln_status infer_batch_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    static const char *const names[] = {"x", "scale", "bias", "mean", "var"};
    KILN_TRY(check_operands(ctx, "batch_norm", inputs, input_count, 2, err));
    double eps;
    char why[160];
    if (!resolve_epsilon(ctx->attributes, ctx->attribute_count, &eps, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    for (uint32_t i = 1; i < 5 && i < input_count; i++)
        KILN_TRY(prove_per_channel(ctx, names[i], i, inputs[i], inputs[0]->shape.axes[1], err));
    *out = *inputs[0];
    return KILN_OK;
}

static kiln_status infer_layer_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    static const char *const names[] = {"x", "scale", "bias"};
    KILN_TRY(check_operands(ctx, "layer_norm", inputs, input_count, 1, err));
    const kiln_value_type *x = inputs[0];
    double eps;
    uint32_t axis;
    char why[160];
    if (!resolve_axis(ctx->attributes, ctx->attribute_count, x->shape.rank, &axis, why, sizeof why) ||
        !resolve_epsilon(ctx->attributes, ctx->attribute_count, &eps, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    kiln_shape normalized = {x->shape.rank - axis, {0}};
    for (uint32_t a = axis; a < x->shape.rank; a++)
        normalized.axes[a - axis] = x->shape.axes[a];
    for (uint32_t i = 1; i < input_count && i < 3; i++) {
        const kiln_shape *p = &inputs[i]->shape;
        kiln_shape result;
        bool fits = p->rank <= normalized.rank;
        if (fits) {
            kiln_status status = kiln_broadcast_shapes(ctx, p, &normalized, &result, err);
            if (status != KILN_OK) {
                /* Say which operand it was; "output axis k" counts from x axis `axis`. */
                if (status != KILN_ERR_INVALID_PROGRAM || !err)
                    return status;
                char detail[KILN_ERROR_MESSAGE_SIZE];
                size_t skip = strlen(ctx->node_label);
                const char *rest = err->message;
                if (strncmp(rest, ctx->node_label, skip) == 0 && rest[skip] == ':')
                    rest += skip + 1 + (rest[skip + 1] == ' ');
                snprintf(detail, sizeof detail, "%s", rest);
                return kiln_fail(err, status, "%s: %s (input %u) against x.shape[%u:]: %s", ctx->node_label,
                                 names[i], i, axis, detail);
            }
            fits = result.rank == normalized.rank;
            for (uint32_t a = 0; fits && a < result.rank; a++)
                fits = result.axes[a] == normalized.axes[a];
        }
        if (!fits)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: %s (input %u) of rank %u does not broadcast to x.shape[%u:] (rank %u) without "
                             "growing it",
                             ctx->node_label, names[i], i, p->rank, axis, normalized.rank);
    }
    for (uint32_t a = axis; a < x->shape.rank; a++) {
        char size[128], what[300];
        kiln_format_size(ctx, x->shape.axes[a], size, sizeof size);
        snprintf(what, sizeof what, "normalized axis %u (%s) is at least 1", a, size);
        kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, x->shape.axes[a], 0, 1};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, nonempty_advice, err));
    }
    *out = *x;
    return KILN_OK;
}

static kiln_status infer_group_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operands(ctx, "group_norm", inputs, input_count, 3, err));
    double eps;
    int64_t groups;
    char why[160];
    if (!resolve_epsilon(ctx->attributes, ctx->attribute_count, &eps, why, sizeof why) ||
        !resolve_groups(ctx->attributes, ctx->attribute_count, &groups, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    uint32_t channels = inputs[0]->shape.axes[1];
    char c[128], what[300];
    kiln_format_size(ctx, channels, c, sizeof c);
    snprintf(what, sizeof what, "x axis 1 size %s is divisible by num_groups %lld", c, (long long)groups);
    kiln_size_claim claim = {KILN_CLAIM_MULTIPLE_OF, channels, 0, groups};
    KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, divisible_advice, err));
    KILN_TRY(prove_per_channel(ctx, "scale", 1, inputs[1], channels, err));
    KILN_TRY(prove_per_channel(ctx, "bias", 2, inputs[2], channels, err));
    *out = *inputs[0];
    return KILN_OK;
}

static kiln_status infer_instance_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                       uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operands(ctx, "instance_norm", inputs, input_count, 3, err));
    double eps;
    char why[160];
    if (!resolve_epsilon(ctx->attributes, ctx->attribute_count, &eps, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    KILN_TRY(prove_per_channel(ctx, "scale", 1, inputs[1], inputs[0]->shape.axes[1], err));
    KILN_TRY(prove_per_channel(ctx, "bias", 2, inputs[2], inputs[0]->shape.axes[1], err));
    *out = *inputs[0];
    return KILN_OK;
}

static kiln_status infer_lp_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operands(ctx, "lp_norm", inputs, input_count, 1, err));
    uint32_t axis;
    int64_t p;
    char why[160];
    if (!resolve_axis(ctx->attributes, ctx->attribute_count, inputs[0]->shape.rank, &axis, why, sizeof why) ||
        !resolve_p(ctx->attributes, ctx->attribute_count, &p, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    *out = *inputs[0];
    return KILN_OK;
}

static kiln_status infer_mean_variance_norm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                            uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operands(ctx, "mean_variance_norm", inputs, input_count, 0, err));
    bool reduced[KILN_MAX_RANK];
    char why[200];
    if (!resolve_mvn_axes(ctx->attributes, ctx->attribute_count, inputs[0]->shape.rank, reduced, why, sizeof why))
        return refuse_attribute(ctx, why, err);
    *out = *inputs[0];
    return KILN_OK;
}

/* -------------------------------------------------------------- kernels */

/* Mean and population variance of `count` >= 1 contiguous elements, two-pass in double. */
static void contiguous_moments(kiln_dtype dtype, const void *data, uint64_t base, uint64_t count, double *mean,
                               double *var)
{
    double sum = 0.0;
    for (uint64_t k = 0; k < count; k++)
        sum += kiln_load_real(dtype, data, base + k);
    double m = sum / (double)count;
    double squares = 0.0;
    for (uint64_t k = 0; k < count; k++) {
        double d = kiln_load_real(dtype, data, base + k) - m;
        squares += d * d;
    }
    *mean = m;
    *var = squares / (double)count;
}

/* Inputs all float of x's dtype, output of x's dtype and shape. */
static kiln_status check_call(const char *op, const kiln_kernel_call *call, uint32_t min_rank, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0];
    const kiln_tensor *out = call->output;
    if (!kiln_dtype_is_floating(x->dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op, kiln_dtype_name(x->dtype));
    for (uint32_t i = 1; i < call->input_count; i++)
        if (call->inputs[i]->dtype != x->dtype)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is %s, x is %s", op, i,
                             kiln_dtype_name(call->inputs[i]->dtype), kiln_dtype_name(x->dtype));
    if (x->rank < min_rank || x->rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: x has rank %u, needs %u..%u", op, x->rank, min_rank,
                         (unsigned)KILN_MAX_RANK);
    bool same = out->dtype == x->dtype && out->rank == x->rank;
    for (uint32_t a = 0; same && a < x->rank; a++)
        same = out->shape[a] == x->shape[a];
    if (!same)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output must have the dtype and shape of x", op);
    return KILN_OK;
}

/* Inputs first..last-1 are rank 1 of size `channels`. */
static kiln_status check_per_channel(const char *op, const kiln_kernel_call *call, uint32_t first, uint32_t last,
                                     int64_t channels, kiln_error *err)
{
    for (uint32_t i = first; i < last && i < call->input_count; i++) {
        const kiln_tensor *t = call->inputs[i];
        if (t->rank != 1 || t->shape[0] != channels)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u must be rank 1 of size %lld", op, i,
                             (long long)channels);
    }
    return KILN_OK;
}

/* Product of x's extents from axis `from` on. */
static uint64_t extent_from(const kiln_tensor *x, uint32_t from)
{
    uint64_t n = 1;
    for (uint32_t a = from; a < x->rank; a++)
        n *= (uint64_t)x->shape[a];
    return n;
}

/*
 * batch_norm's loops, one per dtype T: x is [N, C, spatial] row-major, or
 * channels-last (layout.h: [N, spatial, C] in memory), and y the same.
 * Every element is `scale * (v - mean) / sqrt(var + eps) + bias` in double
 * in that order, the op's formula, whatever the layout; the parameters of
 * a block of channels are read once per image.
 */
enum { NORM_CHANNEL_BLOCK = 64 };

#define DEFINE_BATCH_NORM(T, SUFFIX)                                                                          \
    static void batch_norm_##SUFFIX(const kiln_kernel_call *call, double eps, bool channels_last)            \
    {                                                                                                         \
        const kiln_tensor *x = call->inputs[0];                                                               \
        const T *scale = call->inputs[1]->data, *bias = call->inputs[2]->data;                                \
        const T *mean = call->inputs[3]->data, *var = call->inputs[4]->data;                                  \
        const T *in = x->data;                                                                                \
        T *out = call->output->data;                                                                          \
        uint64_t channels = (uint64_t)x->shape[1], spatial = extent_from(x, 2);                               \
        uint64_t images = (uint64_t)x->shape[0];                                                              \
        double g[NORM_CHANNEL_BLOCK], m[NORM_CHANNEL_BLOCK], d[NORM_CHANNEL_BLOCK], b[NORM_CHANNEL_BLOCK];    \
        for (uint64_t n = 0; n < images; n++)                                                                 \
            for (uint64_t c0 = 0; c0 < channels; c0 += NORM_CHANNEL_BLOCK) {                                  \
                uint64_t width = channels - c0 < NORM_CHANNEL_BLOCK ? channels - c0 : NORM_CHANNEL_BLOCK;     \
                for (uint64_t k = 0; k < width; k++) {                                                        \
                    g[k] = (double)scale[c0 + k], m[k] = (double)mean[c0 + k];                                \
                    d[k] = sqrt((double)var[c0 + k] + eps), b[k] = (double)bias[c0 + k];                      \
                }                                                                                             \
                if (channels_last) {                                                                          \
                    for (uint64_t p = 0; p < spatial; p++) {                                                  \
                        uint64_t at = (n * spatial + p) * channels + c0;                                      \
                        KILN_SIMD for (uint64_t k = 0; k < width; k++) out[at + k] =                          \
                            (T)(g[k] * ((double)in[at + k] - m[k]) / d[k] + b[k]);                            \
                    }                                                                                         \
                    continue;                                                                                 \
                }                                                                                             \
                for (uint64_t k = 0; k < width; k++) {                                                        \
                    uint64_t at = (n * channels + c0 + k) * spatial;                                          \
                    KILN_SIMD for (uint64_t p = 0; p < spatial; p++) out[at + p] =                            \
                        (T)(g[k] * ((double)in[at + p] - m[k]) / d[k] + b[k]);                                \
                }                                                                                             \
            }                                                                                                 \
    }

DEFINE_BATCH_NORM(float, f32)
DEFINE_BATCH_NORM(double, f64)

/*
 * The f32 fast path of batch_norm (`vector-math`): each element is
 * `(v - mean) * s + bias` in double with s = scale / sqrt(var + eps) per
 * channel, one multiply where the reference divides. Both round a double
 * within a few units of 2^-52 of the exact value to f32, so a result is
 * the reference's or, where that value lies within those units of a
 * rounding boundary of f32, its neighbour: within 1 ulp. Rows (a channel's
 * plane, or a channels-last pixel's channels) split over the session's
 * threads as a costly unary op's elements (kiln_parallel_min_costly_elements). Measured on DenseNet-121 (62 batch_norms on
 * 12x12 to 48x48 planes), one thread: 1.12 ms a run on the reference
 * loops (a double division an element).
 *
 * A relu after the batch_norm (fusion.h: its only reader) may be applied
 * to each f32 result before it is stored, `y < 0 ? 0 : y` as the relu
 * kernel computes it (NaN and -0.0 pass), saving the relu's pass over
 * memory: DenseNet's 65 pre-activation relus.
 */
typedef struct batch_norm_job {
    const float *in, *scale, *bias, *mean, *var;
    float *out;
    double eps;
    uint64_t channels, spatial; /* rows of `spatial` elements (plain) or of `channels` (channels-last) */
    bool channels_last;
    bool relu; /* apply the fused relu (above) */
} batch_norm_job;

/* One normalized element, rounded to f32, with the fused relu when asked. */
static inline __attribute__((always_inline)) float normalized(float v, double m, double s, double b, bool relu)
{
    float y = (float)(((double)v - m) * s + b);
    return relu && y < 0.0f ? 0.0f : y;
}

/* Rows [begin, end) of the job, with or without the relu (a constant at each call, so both loops vectorize). */
static inline __attribute__((always_inline)) void batch_norm_rows(const batch_norm_job *job, uint64_t begin,
                                                                  uint64_t end, bool relu)
{
    uint64_t C = job->channels, S = job->spatial;
    if (!job->channels_last) {
        for (uint64_t r = begin; r < end; r++) {
            uint64_t c = r % C;
            double s = (double)job->scale[c] / sqrt((double)job->var[c] + job->eps);
            double m = (double)job->mean[c], b = (double)job->bias[c];
            const float *in = job->in + r * S;
            float *out = job->out + r * S;
            KILN_SIMD for (uint64_t p = 0; p < S; p++) out[p] = normalized(in[p], m, s, b, relu);
        }
        return;
    }
    double s[NORM_CHANNEL_BLOCK], m[NORM_CHANNEL_BLOCK], b[NORM_CHANNEL_BLOCK];
    for (uint64_t c0 = 0; c0 < C; c0 += NORM_CHANNEL_BLOCK) {
        uint64_t width = C - c0 < NORM_CHANNEL_BLOCK ? C - c0 : NORM_CHANNEL_BLOCK;
        for (uint64_t k = 0; k < width; k++) {
            s[k] = (double)job->scale[c0 + k] / sqrt((double)job->var[c0 + k] + job->eps);
            m[k] = (double)job->mean[c0 + k], b[k] = (double)job->bias[c0 + k];
        }
        for (uint64_t r = begin; r < end; r++) {
            const float *in = job->in + r * C + c0;
            float *out = job->out + r * C + c0;
            KILN_SIMD for (uint64_t k = 0; k < width; k++) out[k] = normalized(in[k], m[k], s[k], b[k], relu);
        }
    }
}

KILN_VECTOR_CLONES static void batch_norm_rows_f32(const void *vjob, uint64_t begin, uint64_t end)
{
    const batch_norm_job *job = vjob;
    if (job->relu)
        batch_norm_rows(job, begin, end, true);
    else
        batch_norm_rows(job, begin, end, false);
}

/*
 * Whether this call takes the relu offered after it (kernel_context.h):
 * a relu, into a result of the layout this one has.
 */
static bool takes_relu(const kiln_kernel_call *call, bool channels_last)
{
    const kiln_fusion_offer *offer = call->context->fusion;
    return offer && offer->activation.kind == KILN_ACTIVATION_RELU &&
           (!channels_last || offer->output_may_be_channels_last);
}

static void batch_norm_fast_f32(const kiln_kernel_call *call, double eps, bool channels_last)
{
    const kiln_tensor *x = call->inputs[0];
    uint64_t channels = (uint64_t)x->shape[1], spatial = extent_from(x, 2), images = (uint64_t)x->shape[0];
    bool relu = takes_relu(call, channels_last);
    float *out = relu ? call->context->fusion->output->data : call->output->data;
    batch_norm_job job = {x->data, call->inputs[1]->data, call->inputs[2]->data, call->inputs[3]->data,
                          call->inputs[4]->data, out, eps, channels, spatial, channels_last, relu};
    uint64_t rows = channels_last ? images * spatial : images * channels;
    uint64_t row = channels_last ? channels : spatial;
    uint64_t min_rows = row ? (kiln_parallel_min_costly_elements() + row - 1) / row : 1;
    kiln_parallel_chunks_from(rows, kiln_call_threads(call), min_rows, batch_norm_rows_f32, &job);
    if (relu)
        call->context->fusion->applied = true;
    call->context->path = KILN_PATH_VECTOR;
}

/* batch_norm's operands and epsilon checked; *eps set. */
static kiln_status check_batch_norm(const kiln_kernel_call *call, double *eps, kiln_error *err)
{
    char why[160];
    KILN_TRY(check_call("batch_norm", call, 2, err));
    if (call->input_count != 5)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "batch_norm: takes 5 inputs");
    if (!resolve_epsilon(call->attributes, call->attribute_count, eps, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "batch_norm: %s", why);
    return check_per_channel("batch_norm", call, 1, 5, call->inputs[0]->shape[1], err);
}

static kiln_status run_batch_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_batch_norm, err);
    const kiln_tensor *x = call->inputs[0];
    double eps;
    KILN_TRY(check_batch_norm(call, &eps, err));
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    /* A channels-last x (layout.h) gives a channels-last result: the session knows. */
    bool channels_last = call->context && (call->context->channels_last_operands & 1u);
    if (x->dtype == KILN_F32)
        batch_norm_f32(call, eps, channels_last);
    else
        batch_norm_f64(call, eps, channels_last);
    return KILN_OK;
}

/* The f32 fast path (above); anything it does not take, the reference kernel runs or refuses. */
static kiln_status fast_batch_norm(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    (void)err;
    *ran = false;
    double eps;
    kiln_error ignored;
    if (!call->context || call->context->reference_only || call->input_count < 1 ||
        call->inputs[0]->dtype != KILN_F32 || call->output->dtype != KILN_F32 ||
        check_batch_norm(call, &eps, &ignored) != KILN_OK || call->inputs[0]->element_count == 0)
        return KILN_OK;
    batch_norm_fast_f32(call, eps, call->context->channels_last_operands & 1u);
    *ran = true;
    return KILN_OK;
}

/* Element strides of a layer_norm parameter over the normalized axes, 0 where it broadcasts. */
static bool parameter_strides(const kiln_tensor *p, const kiln_tensor *x, uint32_t axis, int64_t *strides)
{
    uint32_t nr = x->rank - axis;
    if (p->rank > nr)
        return false;
    int64_t s = 1;
    for (uint32_t j = nr; j-- > 0;) {
        int64_t extent = x->shape[axis + j];
        if (j < nr - p->rank) {
            strides[j] = 0;
            continue;
        }
        int64_t pe = p->shape[j - (nr - p->rank)];
        if (pe != extent && pe != 1)
            return false;
        strides[j] = pe == 1 ? 0 : s;
        s *= pe;
    }
    return true;
}

/*
 * layer_norm of f32 rows whose scale and bias (NULL: none) hold one value
 * per element of a row: the same double operations in the same order as
 * the general loop (contiguous_moments, then each element), so the same
 * bits, without its per-element dtype switches and broadcast odometer
 * (measured 7% of an encoder layer's run). The sums stay in order; only
 * the per-element loop, whose iterations are independent, is vectorized.
 * Rows split over the session's threads from the costly elementwise ops'
 * threshold (each row's bits are the same on any thread): a 512-token
 * prefill's nine layer_norms of [512, 256] took 2.35 ms of its 30.7 on
 * two threads, all on one.
 */
typedef struct layer_norm_job {
    const float *x, *scale, *bias;
    float *y;
    uint64_t inner;
    double eps;
} layer_norm_job;

/* Rows [begin, end) of a layer_norm_job. */
static void layer_norm_rows_f32(const void *job_pointer, uint64_t begin, uint64_t end)
{
    const layer_norm_job *job = job_pointer;
    const float *x = job->x, *scale = job->scale, *bias = job->bias;
    float *y = job->y;
    uint64_t inner = job->inner;
    double eps = job->eps;
    for (uint64_t o = begin; o < end; o++) {
        const float *row = x + o * inner;
        float *out = y + o * inner;
        double sum = 0.0;
        for (uint64_t k = 0; k < inner; k++)
            sum += row[k];
        double mean = sum / (double)inner;
        double squares = 0.0;
        for (uint64_t k = 0; k < inner; k++) {
            double d = row[k] - mean;
            squares += d * d;
        }
        double inv = 1.0 / sqrt(squares / (double)inner + eps);
        if (bias) {
            KILN_SIMD for (uint64_t k = 0; k < inner; k++)
                out[k] = (float)((row[k] - mean) * inv * scale[k] + bias[k]);
        } else {
            KILN_SIMD for (uint64_t k = 0; k < inner; k++)
                out[k] = (float)((row[k] - mean) * inv * scale[k]);
        }
    }
}

static kiln_status run_layer_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_layer_norm, err);
    const kiln_tensor *x = call->inputs[0];
    uint32_t axis;
    double eps;
    char why[160];
    KILN_TRY(check_call("layer_norm", call, 1, err));
    if (call->input_count < 2 || call->input_count > 3)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "layer_norm: takes 2 or 3 inputs");
    if (!resolve_axis(call->attributes, call->attribute_count, x->rank, &axis, why, sizeof why) ||
        !resolve_epsilon(call->attributes, call->attribute_count, &eps, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "layer_norm: %s", why);
    int64_t scale_stride[KILN_MAX_RANK] = {0}, bias_stride[KILN_MAX_RANK] = {0};
    bool has_bias = call->input_count == 3;
    if (!parameter_strides(call->inputs[1], x, axis, scale_stride) ||
        (has_bias && !parameter_strides(call->inputs[2], x, axis, bias_stride)))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "layer_norm: scale and bias must broadcast to x.shape[%u:]",
                         axis);
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    uint32_t nr = x->rank - axis;
    const int64_t *shape = x->shape + axis;
    uint64_t inner = extent_from(x, axis);
    if (inner == 0)
        return KILN_OK; /* refused statically; nothing to compute */
    uint64_t outer = x->element_count / inner;
    kiln_dtype dt = x->dtype;
    if (dt == KILN_F32 && call->inputs[1]->element_count == inner &&
        (!has_bias || call->inputs[2]->element_count == inner)) {
        layer_norm_job job = {x->data, call->inputs[1]->data, has_bias ? call->inputs[2]->data : NULL,
                              call->output->data, inner, eps};
        uint32_t threads = x->element_count >= kiln_parallel_min_costly_elements() ? kiln_call_threads(call) : 1;
        kiln_parallel_chunks_from(outer, threads, 0, layer_norm_rows_f32, &job);
        return KILN_OK;
    }
    const int64_t *parameter_strides_of[2] = {scale_stride, bias_stride};
    for (uint64_t o = 0; o < outer; o++) {
        uint64_t base = o * inner;
        double mean, var;
        contiguous_moments(dt, x->data, base, inner, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        int64_t index[KILN_MAX_RANK] = {0};
        int64_t at[2] = {0, 0}; /* scale, bias */
        for (uint64_t k = 0; k < inner; k++) {
            double y = (kiln_load_real(dt, x->data, base + k) - mean) * inv *
                       kiln_load_real(dt, call->inputs[1]->data, (uint64_t)at[0]);
            if (has_bias)
                y += kiln_load_real(dt, call->inputs[2]->data, (uint64_t)at[1]);
            kiln_store_real(dt, call->output->data, base + k, y);
            kiln_odometer_next_offsets(index, nr, shape, 2, parameter_strides_of, at);
        }
    }
    return KILN_OK;
}

/*
 * Normalize x as outer slices of `count` contiguous elements; element k of
 * slice o takes channel ((o % slices_per_batch) * channels_per_slice + k / spatial).
 */
static void normalize_channel_slices(const kiln_kernel_call *call, double eps, uint64_t slices_per_batch,
                                     uint64_t channels_per_slice, uint64_t spatial)
{
    const kiln_tensor *x = call->inputs[0];
    kiln_dtype dt = x->dtype;
    uint64_t count = channels_per_slice * spatial;
    if (count == 0)
        return;
    uint64_t outer = x->element_count / count;
    for (uint64_t o = 0; o < outer; o++) {
        uint64_t base = o * count;
        double mean, var;
        contiguous_moments(dt, x->data, base, count, &mean, &var);
        double inv = 1.0 / sqrt(var + eps);
        uint64_t first_channel = (o % slices_per_batch) * channels_per_slice;
        for (uint64_t k = 0; k < count; k++) {
            uint64_t c = first_channel + k / spatial;
            double y = (kiln_load_real(dt, x->data, base + k) - mean) * inv *
                           kiln_load_real(dt, call->inputs[1]->data, c) +
                       kiln_load_real(dt, call->inputs[2]->data, c);
            kiln_store_real(dt, call->output->data, base + k, y);
        }
    }
}

static kiln_status run_group_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_group_norm, err);
    const kiln_tensor *x = call->inputs[0];
    double eps;
    int64_t groups;
    char why[160];
    KILN_TRY(check_call("group_norm", call, 3, err));
    if (call->input_count != 3)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "group_norm: takes 3 inputs");
    if (!resolve_epsilon(call->attributes, call->attribute_count, &eps, why, sizeof why) ||
        !resolve_groups(call->attributes, call->attribute_count, &groups, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "group_norm: %s", why);
    int64_t channels = x->shape[1];
    if (channels % groups != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "group_norm: %lld channels are not divisible by %lld groups",
                         (long long)channels, (long long)groups);
    KILN_TRY(check_per_channel("group_norm", call, 1, 3, channels, err));
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    normalize_channel_slices(call, eps, (uint64_t)groups, (uint64_t)(channels / groups), extent_from(x, 2));
    return KILN_OK;
}

static kiln_status run_instance_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_instance_norm, err);
    const kiln_tensor *x = call->inputs[0];
    double eps;
    char why[160];
    KILN_TRY(check_call("instance_norm", call, 3, err));
    if (call->input_count != 3)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "instance_norm: takes 3 inputs");
    if (!resolve_epsilon(call->attributes, call->attribute_count, &eps, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "instance_norm: %s", why);
    int64_t channels = x->shape[1];
    KILN_TRY(check_per_channel("instance_norm", call, 1, 3, channels, err));
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    if (channels > 0)
        normalize_channel_slices(call, eps, (uint64_t)channels, 1, extent_from(x, 2));
    return KILN_OK;
}

static kiln_status run_lp_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_lp_norm, err);
    const kiln_tensor *x = call->inputs[0];
    uint32_t axis;
    int64_t p;
    char why[160];
    KILN_TRY(check_call("lp_norm", call, 1, err));
    if (!resolve_axis(call->attributes, call->attribute_count, x->rank, &axis, why, sizeof why) ||
        !resolve_p(call->attributes, call->attribute_count, &p, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "lp_norm: %s", why);
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    uint64_t extent = (uint64_t)x->shape[axis], inner = extent_from(x, axis + 1);
    if (extent == 0 || inner == 0)
        return KILN_OK;
    uint64_t outer = x->element_count / (extent * inner);
    kiln_dtype dt = x->dtype;
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            uint64_t base = o * extent * inner + i;
            double norm = 0.0;
            for (uint64_t k = 0; k < extent; k++) {
                double v = kiln_load_real(dt, x->data, base + k * inner);
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2)
                norm = sqrt(norm);
            for (uint64_t k = 0; k < extent; k++) {
                double v = kiln_load_real(dt, x->data, base + k * inner);
                /* A zero norm means every element is ±0: the result is 0, not 0/0. */
                kiln_store_real(dt, call->output->data, base + k * inner, norm == 0.0 ? 0.0 : v / norm);
            }
        }
    return KILN_OK;
}

static kiln_status run_mean_variance_norm(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, run_mean_variance_norm, err);
    const kiln_tensor *x = call->inputs[0];
    bool reduced[KILN_MAX_RANK];
    char why[200];
    KILN_TRY(check_call("mean_variance_norm", call, 0, err));
    if (!resolve_mvn_axes(call->attributes, call->attribute_count, x->rank, reduced, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "mean_variance_norm: %s", why);
    if (x->element_count == 0)
        return KILN_OK; /* no work, however large its other axes */
    int64_t stride[KILN_MAX_RANK];
    int64_t s = 1;
    for (uint32_t a = x->rank; a-- > 0;) {
        stride[a] = s;
        s *= x->shape[a];
    }
    uint32_t kept_rank = 0, reduced_rank = 0;
    int64_t kept_shape[KILN_MAX_RANK], kept_stride[KILN_MAX_RANK];
    int64_t red_shape[KILN_MAX_RANK], red_stride[KILN_MAX_RANK];
    uint64_t kept_count = 1, reduced_count = 1;
    for (uint32_t a = 0; a < x->rank; a++) {
        if (reduced[a]) {
            red_shape[reduced_rank] = x->shape[a];
            red_stride[reduced_rank++] = stride[a];
            reduced_count *= (uint64_t)x->shape[a];
        } else {
            kept_shape[kept_rank] = x->shape[a];
            kept_stride[kept_rank++] = stride[a];
            kept_count *= (uint64_t)x->shape[a];
        }
    }
    if (reduced_count == 0 || kept_count == 0)
        return KILN_OK;
    kiln_dtype dt = x->dtype;
    int64_t kept_index[KILN_MAX_RANK] = {0}, kept_offset = 0;
    for (uint64_t o = 0; o < kept_count; o++) {
        int64_t index[KILN_MAX_RANK] = {0}, offset = 0;
        double sum = 0.0;
        for (uint64_t k = 0; k < reduced_count; k++) {
            sum += kiln_load_real(dt, x->data, (uint64_t)(kept_offset + offset));
            kiln_odometer_next_offset(index, reduced_rank, red_shape, red_stride, &offset);
        }
        double mean = sum / (double)reduced_count, squares = 0.0;
        for (uint64_t k = 0; k < reduced_count; k++) {
            double d = kiln_load_real(dt, x->data, (uint64_t)(kept_offset + offset)) - mean;
            squares += d * d;
            kiln_odometer_next_offset(index, reduced_rank, red_shape, red_stride, &offset);
        }
        double inv = 1.0 / sqrt(squares / (double)reduced_count + MVN_EPSILON);
        for (uint64_t k = 0; k < reduced_count; k++) {
            uint64_t at = (uint64_t)(kept_offset + offset);
            kiln_store_real(dt, call->output->data, at, (kiln_load_real(dt, x->data, at) - mean) * inv);
            kiln_odometer_next_offset(index, reduced_rank, red_shape, red_stride, &offset);
        }
        kiln_odometer_next_offset(kept_index, kept_rank, kept_shape, kept_stride, &kept_offset);
    }
    return KILN_OK;
}

/* ------------------------------------------------------------ registry */

static const kiln_op_def norm_ops[] = {
    {.name = "batch_norm", .versions = {1, 1}, .inputs = {5, 5}, .attributes = epsilon_attributes,
     .infer = infer_batch_norm, .run = run_batch_norm, .fast = fast_batch_norm,
     .traits = {.layout = KILN_LAYOUT_CHANNELWISE, .applies_activation = true, .activation_in_place = true}},
    {.name = "layer_norm", .versions = {1, 1}, .inputs = {2, 3}, .attributes = layer_norm_attributes,
     .infer = infer_layer_norm, .run = run_layer_norm},
    {.name = "group_norm", .versions = {1, 1}, .inputs = {3, 3}, .attributes = group_norm_attributes,
     .infer = infer_group_norm, .run = run_group_norm},
    {.name = "instance_norm", .versions = {1, 1}, .inputs = {3, 3}, .attributes = epsilon_attributes,
     .infer = infer_instance_norm, .run = run_instance_norm},
    {.name = "lp_norm", .versions = {1, 1}, .inputs = {1, 1}, .attributes = lp_norm_attributes,
     .infer = infer_lp_norm, .run = run_lp_norm},
    {.name = "mean_variance_norm", .versions = {1, 1}, .inputs = {1, 1}, .attributes = mvn_attributes,
     .infer = infer_mean_variance_norm, .run = run_mean_variance_norm},
};

const kiln_op_family kiln_ops_norm = KILN_OP_FAMILY(norm_ops, "spec/ops/norm.md");
