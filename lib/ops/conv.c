/*
 * conv.c — convolution (conv, conv_transpose), 1d to 3d: shape rules
 * and portable reference kernels. Semantics, attributes and numerics:
 * spec/ops/conv.md; the window geometry is shared with pooling (window.c).
 *
 * Shape rules prove the channel relations (input channels equal weight
 * channels times group, channels divisible by group, bias size) and that
 * every window fits (window.c) over the whole declared domain, or refuse
 * naming the sizes and a counterexample. Kernels re-check what they rely
 * on and never trust a caller. Each output element is a sum in double over
 * its input channels and kernel taps, rounded once to the output dtype;
 * the innermost loop walks a kernel row, contiguous in the weight and, for
 * dilation 1, in the input. conv_transpose gathers too, visiting only the
 * taps that reach each output (one arithmetic progression per axis).
 * Kernels allocate nothing. f32 conv and conv_transpose run through oneDNN
 * when the session has it (onednn.h); the kernels here handle what it
 * declines. f16 and bf16 are computed by the f32 kernel here, never by
 * oneDNN, and rounded once (half_compute.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "conv_folded.h"
#include "error.h"
#include "half_compute.h"
#include "onednn.h"
#include "op_registry.h"
#include "size_claim.h"
#include "window.h"

/* ----------------------------------------------------------- attributes */

static const kiln_attribute_spec conv_attributes[] = {
    {"auto_pad", KILN_ATTRIBUTE_STRING}, {"dilations", KILN_ATTRIBUTE_INTS}, {"group", KILN_ATTRIBUTE_INT},
    {"kernel_shape", KILN_ATTRIBUTE_INTS}, {"pads", KILN_ATTRIBUTE_INTS},     {"strides", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

static const kiln_attribute_spec conv_transpose_attributes[] = {
    {"auto_pad", KILN_ATTRIBUTE_STRING},     {"dilations", KILN_ATTRIBUTE_INTS}, {"group", KILN_ATTRIBUTE_INT},
    {"kernel_shape", KILN_ATTRIBUTE_INTS},   {"output_padding", KILN_ATTRIBUTE_INTS},
    {"output_shape", KILN_ATTRIBUTE_INTS},   {"pads", KILN_ATTRIBUTE_INTS},
    {"strides", KILN_ATTRIBUTE_INTS},        {NULL, 0},
};

/* group: >= 1 (default 1). */
static bool resolve_group(const kiln_node_attribute *attributes, uint32_t count, int64_t *group, char *why,
                          size_t size)
{
    int64_t g = kiln_attribute_int(attributes, count, "group", 1);
    if (g < 1 || g > KILN_WINDOW_MAX_ATTRIBUTE) {
        snprintf(why, size, "group must be in 1..%lld, got %lld", (long long)KILN_WINDOW_MAX_ATTRIBUTE, (long long)g);
        return false;
    }
    *group = g;
    return true;
}

/* ---------------------------------------------------------- shape rules */

static const char equal_advice[] = "Use the same dim (or the same constant) for both sizes";
static const char divisible_advice[] = "Declare the dim with a multiple_of that group divides";
static const char constant_divisible_advice[] = "Use a group that divides the channel count";

static kiln_status prove_equal(const kiln_shape_context *ctx, uint32_t a, uint32_t b, const char *what,
                               kiln_error *err)
{
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, a, b, 0};
    return kiln_prove_size_claim(ctx, &claim, what, equal_advice, err);
}

static kiln_status prove_divisible(const kiln_shape_context *ctx, const char *name, uint32_t axis, uint32_t size,
                                   int64_t group, kiln_error *err)
{
    char text[128], what[300];
    kiln_format_size(ctx, size, text, sizeof text);
    snprintf(what, sizeof what, "%s axis %u size %s is divisible by group %lld", name, axis, text, (long long)group);
    kiln_size_claim claim = {KILN_CLAIM_MULTIPLE_OF, size, 0, group};
    bool constant = ctx->pool->items[size].kind == KILN_EXPR_CONST;
    return kiln_prove_size_claim(ctx, &claim, what, constant ? constant_divisible_advice : divisible_advice, err);
}

/* size * group as an expression (constants fold). */
static kiln_status times_group(const kiln_shape_context *ctx, uint32_t size, int64_t group, uint32_t *out,
                               kiln_error *err)
{
    const kiln_expr *e = &ctx->pool->items[size];
    if (group == 1) {
        *out = size;
        return KILN_OK;
    }
    if (e->kind == KILN_EXPR_CONST) {
        int64_t v;
        if (__builtin_mul_overflow(e->constant, group, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: weight size times group overflows", ctx->node_label);
        return kiln_expr_const(ctx->pool, v, out, err);
    }
    uint32_t g;
    KILN_TRY(kiln_expr_const(ctx->pool, group, &g, err));
    kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = g, .rhs = size};
    return kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, out, err);
}

/*
 * Dtypes, ranks, the constant kernel extents of the weight and the window
 * attributes, shared by conv and conv_transpose.
 */
static kiln_status check_operands(const kiln_shape_context *ctx, const char *op, kiln_window_kind kind,
                                  const kiln_value_type *const *inputs, uint32_t input_count, kiln_window *w,
                                  int64_t *group, kiln_error *err)
{
    const kiln_value_type *x = inputs[0], *weight = inputs[1];
    if (!kiln_dtype_is_floating(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s does not support dtype %s (it takes f32, f64, f16 or bf16)", ctx->node_label, op,
                         kiln_dtype_name(x->dtype));
    for (uint32_t i = 1; i < input_count; i++)
        KILN_TRY(kiln_require_same_dtype(ctx, x, inputs[i], err));
    if (x->shape.rank < 3 || x->shape.rank > 2 + KILN_WINDOW_MAX_SPATIAL)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s needs x of rank 3, 4 or 5 ([N, C, spatial...] with 1 to 3 spatial axes), got rank %u",
                         ctx->node_label, op, x->shape.rank);
    if (weight->shape.rank != x->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: weight (input 1) must have the rank of x (%u), got rank %u", ctx->node_label,
                         x->shape.rank, weight->shape.rank);
    if (input_count == 3 && inputs[2]->shape.rank != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: bias (input 2) must have rank 1, got rank %u",
                         ctx->node_label, inputs[2]->shape.rank);
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->spatial = x->shape.rank - 2;
    for (uint32_t a = 0; a < w->spatial; a++) {
        const kiln_expr *e = &ctx->pool->items[weight->shape.axes[a + 2]];
        if (e->kind != KILN_EXPR_CONST) {
            char text[128];
            kiln_format_size(ctx, weight->shape.axes[a + 2], text, sizeof text);
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: weight (input 1) axis %u size %s must be a constant (kernel extents are static)",
                             ctx->node_label, a + 2, text);
        }
        w->kernel[a] = e->constant;
    }
    char why[200];
    if (!kiln_window_resolve(ctx->attributes, ctx->attribute_count, w, why, sizeof why) ||
        !resolve_group(ctx->attributes, ctx->attribute_count, group, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    return KILN_OK;
}

/* Bias size equals the output channels. */
static kiln_status prove_bias(const kiln_shape_context *ctx, const kiln_value_type *bias, uint32_t channels,
                              kiln_error *err)
{
    char b[128], m[128], what[400];
    kiln_format_size(ctx, bias->shape.axes[0], b, sizeof b);
    kiln_format_size(ctx, channels, m, sizeof m);
    snprintf(what, sizeof what, "bias (input 2) size %s equals the output channels %s", b, m);
    return prove_equal(ctx, bias->shape.axes[0], channels, what, err);
}

static kiln_status infer_spatial(const kiln_shape_context *ctx, const kiln_window *w, const kiln_value_type *x,
                                 kiln_value_type *out, kiln_error *err)
{
    for (uint32_t a = 0; a < w->spatial; a++)
        KILN_TRY(kiln_window_infer_size(ctx, w, a, x->shape.axes[a + 2], &out->shape.axes[a + 2], err));
    return KILN_OK;
}

static kiln_status infer_conv(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                              uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    kiln_window w;
    int64_t group;
    KILN_TRY(check_operands(ctx, "conv", KILN_WINDOW_CONV, inputs, input_count, &w, &group, err));
    const kiln_value_type *x = inputs[0], *weight = inputs[1];
    uint32_t channels = x->shape.axes[1];
    KILN_TRY(prove_divisible(ctx, "x", 1, channels, group, err));
    uint32_t expected;
    KILN_TRY(times_group(ctx, weight->shape.axes[1], group, &expected, err));
    char c[128], wc[128], what[400];
    kiln_format_size(ctx, channels, c, sizeof c);
    kiln_format_size(ctx, weight->shape.axes[1], wc, sizeof wc);
    snprintf(what, sizeof what, "x axis 1 size %s equals weight axis 1 size %s times group %lld", c, wc,
             (long long)group);
    KILN_TRY(prove_equal(ctx, channels, expected, what, err));
    KILN_TRY(prove_divisible(ctx, "weight", 0, weight->shape.axes[0], group, err));
    if (input_count == 3)
        KILN_TRY(prove_bias(ctx, inputs[2], weight->shape.axes[0], err));
    *out = *x;
    out->shape.axes[1] = weight->shape.axes[0];
    return infer_spatial(ctx, &w, x, out, err);
}

static kiln_status infer_conv_transpose(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                        uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    kiln_window w;
    int64_t group;
    KILN_TRY(check_operands(ctx, "conv_transpose", KILN_WINDOW_CONV_TRANSPOSE, inputs, input_count, &w, &group, err));
    const kiln_value_type *x = inputs[0], *weight = inputs[1];
    uint32_t channels = x->shape.axes[1];
    KILN_TRY(prove_divisible(ctx, "x", 1, channels, group, err));
    char c[128], wc[128], what[400];
    kiln_format_size(ctx, channels, c, sizeof c);
    kiln_format_size(ctx, weight->shape.axes[0], wc, sizeof wc);
    snprintf(what, sizeof what, "x axis 1 size %s equals weight axis 0 size %s", c, wc);
    KILN_TRY(prove_equal(ctx, channels, weight->shape.axes[0], what, err));
    uint32_t out_channels;
    KILN_TRY(times_group(ctx, weight->shape.axes[1], group, &out_channels, err));
    if (input_count == 3)
        KILN_TRY(prove_bias(ctx, inputs[2], out_channels, err));
    *out = *x;
    out->shape.axes[1] = out_channels;
    return infer_spatial(ctx, &w, x, out, err);
}

/* -------------------------------------------------------------- kernels */

/*
 * A call's geometry with the spatial axes lifted to three: missing leading
 * axes have extent 1, kernel 1, stride 1, dilation 1 and no pads, so one
 * loop nest serves 1d, 2d and 3d.
 */
typedef struct conv_geometry {
    int64_t batch, in_channels, out_channels, group;
    int64_t in_per_group, out_per_group;
    kiln_window_geometry lifted;
    int64_t in_plane, taps; /* elements of one input channel, one kernel */
    const void *x, *weight, *bias;
    void *y;
} conv_geometry;

/*
 * Operand count and dtypes: x a float dtype, every other operand and the
 * output of x's dtype. Checked before a half call is widened, so f16 and
 * f32 operands are never mixed into one f32 call.
 */
static kiln_status check_dtypes(const char *op, const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count < 2 || call->input_count > 3)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: takes 2 or 3 inputs, got %u", op, call->input_count);
    const kiln_tensor *x = call->inputs[0];
    if (!kiln_dtype_is_floating(x->dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op, kiln_dtype_name(x->dtype));
    for (uint32_t i = 1; i < call->input_count; i++)
        if (call->inputs[i]->dtype != x->dtype)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is %s, x is %s", op, i,
                             kiln_dtype_name(call->inputs[i]->dtype), kiln_dtype_name(x->dtype));
    if (call->output->dtype != x->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output must have the dtype of x", op);
    return KILN_OK;
}

/* The geometry of a call whose operand count and dtypes check_dtypes accepted, as f32 or f64. */
static kiln_status prepare_call(const char *op, const kiln_kernel_call *call, kiln_window_kind kind,
                                conv_geometry *g, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1], *y = call->output;
    if (x->rank < 3 || x->rank > 2 + KILN_WINDOW_MAX_SPATIAL || weight->rank != x->rank || y->rank != x->rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: x, weight and output need the same rank in 3..5", op);
    kiln_window w;
    memset(&w, 0, sizeof w);
    w.kind = kind;
    w.spatial = x->rank - 2;
    for (uint32_t a = 0; a < w.spatial; a++)
        w.kernel[a] = weight->shape[a + 2];
    char why[200];
    if (!kiln_window_resolve(call->attributes, call->attribute_count, &w, why, sizeof why) ||
        !resolve_group(call->attributes, call->attribute_count, &g->group, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op, why);
    g->batch = x->shape[0];
    g->in_channels = x->shape[1];
    if (g->in_channels % g->group != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %lld input channels are not divisible by group %lld", op,
                         (long long)g->in_channels, (long long)g->group);
    g->in_per_group = g->in_channels / g->group;
    if (kind == KILN_WINDOW_CONV) {
        g->out_channels = weight->shape[0];
        if (weight->shape[1] != g->in_per_group || g->out_channels % g->group != 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "%s: weight [%lld, %lld, ...] does not fit %lld input channels in %lld groups", op,
                             (long long)weight->shape[0], (long long)weight->shape[1], (long long)g->in_channels,
                             (long long)g->group);
        g->out_per_group = g->out_channels / g->group;
    } else {
        if (weight->shape[0] != g->in_channels ||
            __builtin_mul_overflow(weight->shape[1], g->group, &g->out_channels))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "%s: weight axis 0 (%lld) must equal the input channels (%lld)", op,
                             (long long)weight->shape[0], (long long)g->in_channels);
        g->out_per_group = weight->shape[1];
    }
    if (call->input_count == 3 &&
        (call->inputs[2]->rank != 1 || call->inputs[2]->shape[0] != g->out_channels))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: bias must be rank 1 of size %lld", op,
                         (long long)g->out_channels);
    if (y->shape[0] != g->batch || y->shape[1] != g->out_channels)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output must be [%lld, %lld, ...]", op,
                         (long long)g->batch, (long long)g->out_channels);
    KILN_TRY(kiln_window_geometry_of(&w, op, x, y, &g->lifted, err));
    /*
     * An empty x or weight may have huge extents whose product overflows;
     * it is never read (its channel or batch count is 0), so 0 will do.
     */
    if (__builtin_mul_overflow(g->lifted.in[0], g->lifted.in[1], &g->in_plane) ||
        __builtin_mul_overflow(g->in_plane, g->lifted.in[2], &g->in_plane))
        g->in_plane = 0;
    if (__builtin_mul_overflow(g->lifted.kernel[0], g->lifted.kernel[1], &g->taps) ||
        __builtin_mul_overflow(g->taps, g->lifted.kernel[2], &g->taps))
        g->taps = 0;
    g->x = x->data;
    g->weight = weight->data;
    g->bias = call->input_count == 3 ? call->inputs[2]->data : NULL;
    g->y = y->data;
    return KILN_OK;
}

/*
 * conv: y[n, m, o] = bias[m] + sum over the group's input channels c and
 * the taps k that land in the input of x[n, c, o*stride - pad + k*dilation]
 * * weight[m, c - group start, k]. Taps are clipped per axis up front, so
 * the inner loop has no bounds test.
 */
#define DEFINE_CONV(T, SUFFIX)                                                                                    \
    static void conv_##SUFFIX(const conv_geometry *g)                                                             \
    {                                                                                                             \
        const kiln_window_geometry *geo = &g->lifted;                                                             \
        const T *x = g->x, *weight = g->weight, *bias = g->bias;                                                  \
        T *y = g->y;                                                                                              \
        int64_t in_plane = g->in_plane, taps = g->taps;                                                           \
        for (int64_t n = 0; n < g->batch; n++)                                                                    \
            for (int64_t m = 0; m < g->out_channels; m++) {                                                       \
                int64_t first_channel = (m / g->out_per_group) * g->in_per_group;                                 \
                for (int64_t od = 0; od < geo->out[0]; od++) {                                                    \
                    int64_t sd = od * geo->stride[0] - geo->pad[0], d0, d1;                                       \
                    kiln_window_taps(sd, geo->dilation[0], geo->kernel[0], geo->in[0], &d0, &d1);                 \
                    for (int64_t oh = 0; oh < geo->out[1]; oh++) {                                                \
                        int64_t sh = oh * geo->stride[1] - geo->pad[1], h0, h1;                                   \
                        kiln_window_taps(sh, geo->dilation[1], geo->kernel[1], geo->in[1], &h0, &h1);             \
                        for (int64_t ow = 0; ow < geo->out[2]; ow++) {                                            \
                            int64_t sw = ow * geo->stride[2] - geo->pad[2], w0, w1;                               \
                            kiln_window_taps(sw, geo->dilation[2], geo->kernel[2], geo->in[2], &w0, &w1);         \
                            double sum = bias ? (double)bias[m] : 0.0;                                            \
                            for (int64_t c = 0; c < g->in_per_group; c++) {                                       \
                                const T *plane = x + (n * g->in_channels + first_channel + c) * in_plane;         \
                                const T *filter = weight + (m * g->in_per_group + c) * taps;                      \
                                for (int64_t kd = d0; kd < d1; kd++)                                              \
                                    for (int64_t kh = h0; kh < h1; kh++) {                                        \
                                        int64_t id = sd + kd * geo->dilation[0], ih = sh + kh * geo->dilation[1]; \
                                        const T *row = plane + (id * geo->in[1] + ih) * geo->in[2];               \
                                        const T *taps_row = filter + (kd * geo->kernel[1] + kh) * geo->kernel[2]; \
                                        for (int64_t kw = w0; kw < w1; kw++)                                      \
                                            sum += (double)row[sw + kw * geo->dilation[2]] * (double)taps_row[kw]; \
                                    }                                                                             \
                            }                                                                                     \
                            int64_t out_index = (n * g->out_channels + m) * geo->out[0] + od;                     \
                            y[(out_index * geo->out[1] + oh) * geo->out[2] + ow] = (T)sum;                        \
                        }                                                                                         \
                    }                                                                                             \
                }                                                                                                 \
            }                                                                                                     \
    }

DEFINE_CONV(float, f32)
DEFINE_CONV(double, f64)

static int64_t floor_mod(int64_t a, int64_t m)
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* x in 0..m-1 with a*x = 1 (mod m), for a and m >= 1 coprime (extended Euclid). */
static int64_t inverse_mod(int64_t a, int64_t m)
{
    int64_t r0 = m, r1 = floor_mod(a, m), t0 = 0, t1 = 1;
    while (r1 != 0) {
        int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1;
        r1 = r;
        t0 = t1;
        t1 = t;
    }
    return floor_mod(t0, m);
}

/*
 * The taps of one axis that reach output position o of a transposed
 * convolution: those k in first, first + step, ..., last with
 * o + pad - k*dilation = i*stride for an input position 0 <= i < extent.
 * They form one arithmetic progression (k*dilation = o + pad modulo the
 * stride), so the walk visits no other tap; empty when first > last.
 */
typedef struct tap_walk {
    int64_t origin; /* o + pad: input position i of tap k is (origin - k*dilation) / stride */
    int64_t first, last, step;
} tap_walk;

static tap_walk transpose_taps(const conv_geometry *g, uint32_t a, int64_t o)
{
    int64_t s = g->lifted.stride[a], d = g->lifted.dilation[a], k = g->lifted.kernel[a];
    int64_t common = gcd(s, d);
    tap_walk w = {o + g->lifted.pad[a], 1, 0, s / common};
    if (floor_mod(w.origin, common) != 0)
        return w; /* no tap lands on a multiple of the stride */
    /* k*(d/common) = origin/common (mod step): the smallest such k. */
    int64_t first = w.step == 1 ? 0
                                : floor_mod(floor_mod(w.origin / common, w.step) * inverse_mod(d / common, w.step),
                                            w.step);
    /* i < extent, i.e. k*d > origin - extent*s; an overflowing extent*s bounds nothing. */
    int64_t span, lowest = 0;
    if (!__builtin_mul_overflow(g->lifted.in[a], s, &span) && w.origin - span >= 0)
        lowest = (w.origin - span) / d + 1;
    if (lowest > first)
        first += (lowest - first + w.step - 1) / w.step * w.step;
    /* i >= 0, i.e. k*d <= origin. */
    w.last = w.origin < 0 ? -1 : w.origin / d;
    if (w.last > k - 1)
        w.last = k - 1;
    w.first = first;
    return w;
}

/*
 * conv_transpose, as a gather: y[n, m, o] = bias[m] + sum over the group's
 * input channels c and the taps k with o = i*stride - pad + k*dilation for
 * an input position i of x[n, c, i] * weight[c, m - group start, k].
 */
#define DEFINE_CONV_TRANSPOSE(T, SUFFIX)                                                                          \
    static void conv_transpose_##SUFFIX(const conv_geometry *g)                                                   \
    {                                                                                                             \
        const kiln_window_geometry *geo = &g->lifted;                                                             \
        const T *x = g->x, *weight = g->weight, *bias = g->bias;                                                  \
        T *y = g->y;                                                                                              \
        int64_t in_plane = g->in_plane, taps = g->taps;                                                           \
        for (int64_t n = 0; n < g->batch; n++)                                                                    \
            for (int64_t m = 0; m < g->out_channels; m++) {                                                       \
                int64_t group = m / g->out_per_group, within = m % g->out_per_group;                              \
                for (int64_t od = 0; od < geo->out[0]; od++) {                                                    \
                    tap_walk wd = transpose_taps(g, 0, od);                                                       \
                    for (int64_t oh = 0; oh < geo->out[1]; oh++) {                                                \
                        tap_walk wh = transpose_taps(g, 1, oh);                                                   \
                        for (int64_t ow = 0; ow < geo->out[2]; ow++) {                                            \
                            tap_walk ww = transpose_taps(g, 2, ow);                                               \
                            double sum = bias ? (double)bias[m] : 0.0;                                            \
                            for (int64_t ci = 0; ci < g->in_per_group; ci++) {                                    \
                                int64_t c = group * g->in_per_group + ci;                                         \
                                const T *plane = x + (n * g->in_channels + c) * in_plane;                         \
                                const T *filter = weight + (c * g->out_per_group + within) * taps;                \
                                for (int64_t kd = wd.first; kd <= wd.last; kd += wd.step) {                       \
                                    int64_t id = (wd.origin - kd * geo->dilation[0]) / geo->stride[0];            \
                                    for (int64_t kh = wh.first; kh <= wh.last; kh += wh.step) {                   \
                                        int64_t ih = (wh.origin - kh * geo->dilation[1]) / geo->stride[1];        \
                                        const T *row = plane + (id * geo->in[1] + ih) * geo->in[2];               \
                                        const T *taps_row = filter + (kd * geo->kernel[1] + kh) * geo->kernel[2]; \
                                        for (int64_t kw = ww.first; kw <= ww.last; kw += ww.step)                 \
                                            sum += (double)row[(ww.origin - kw * geo->dilation[2]) / geo->stride[2]] * \
                                                   (double)taps_row[kw];                                          \
                                    }                                                                             \
                                }                                                                                 \
                            }                                                                                     \
                            int64_t out_index = (n * g->out_channels + m) * geo->out[0] + od;                     \
                            y[(out_index * geo->out[1] + oh) * geo->out[2] + ow] = (T)sum;                        \
                        }                                                                                         \
                    }                                                                                             \
                }                                                                                                 \
            }                                                                                                     \
    }

DEFINE_CONV_TRANSPOSE(float, f32)
DEFINE_CONV_TRANSPOSE(double, f64)

/*
 * The oneDNN fast paths (spec/opset.md, "Fast paths"): f32 calls the
 * reference kernel accepts; anything else is declined, and the reference
 * kernel reports what is wrong with it.
 */
static kiln_status fast_window(const char *op, kiln_window_kind kind, const kiln_kernel_call *call, bool *ran,
                               kiln_error *err)
{
    *ran = false;
    conv_geometry g;
    if (call->output->dtype != KILN_F32 || check_dtypes(op, call, NULL) != KILN_OK ||
        prepare_call(op, call, kind, &g, NULL) != KILN_OK || call->output->element_count == 0)
        return KILN_OK;
    if (kind == KILN_WINDOW_CONV && kiln_conv_folds(call, &g.lifted.window, g.group))
        return kiln_conv_folded(call, &g.lifted.window, ran, err);
    if (kind == KILN_WINDOW_CONV)
        return kiln_onednn_conv(call, &g.lifted.window, g.group, ran, err);
    return kiln_onednn_conv_transpose(call, &g.lifted.window, g.group, ran, err);
}

static kiln_status fast_conv(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_window("conv", KILN_WINDOW_CONV, call, ran, err);
}

static kiln_status fast_conv_transpose(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_window("conv_transpose", KILN_WINDOW_CONV_TRANSPOSE, call, ran, err);
}

static kiln_status run_conv(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("conv", call, err));
    KILN_HALF_IN_F32(call, run_conv, err);
    conv_geometry g;
    KILN_TRY(prepare_call("conv", call, KILN_WINDOW_CONV, &g, err));
    if (call->output->element_count == 0)
        return KILN_OK;
    if (call->output->dtype == KILN_F32)
        conv_f32(&g);
    else
        conv_f64(&g);
    return KILN_OK;
}

static kiln_status run_conv_transpose(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_TRY(check_dtypes("conv_transpose", call, err));
    KILN_HALF_IN_F32(call, run_conv_transpose, err);
    conv_geometry g;
    KILN_TRY(prepare_call("conv_transpose", call, KILN_WINDOW_CONV_TRANSPOSE, &g, err));
    if (call->output->element_count == 0)
        return KILN_OK;
    if (call->output->dtype == KILN_F32)
        conv_transpose_f32(&g);
    else
        conv_transpose_f64(&g);
    return KILN_OK;
}

/* ------------------------------------------------------------ registry */

static const kiln_op_def conv_ops[] = {
    {.name = "conv", .versions = {1, 1}, .inputs = {2, 3}, .attributes = conv_attributes,
     .infer = infer_conv, .run = run_conv, .fast = fast_conv,
     .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0, .applies_activation = true}},
    {.name = "conv_transpose", .versions = {1, 1}, .inputs = {2, 3}, .attributes = conv_transpose_attributes,
     .infer = infer_conv_transpose, .run = run_conv_transpose,
     .fast = fast_conv_transpose},
};

const kiln_op_family kiln_ops_conv = KILN_OP_FAMILY(conv_ops, "spec/ops/conv.md");
