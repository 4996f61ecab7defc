/*
 * grid_sample.c — grid_sample (sampling an image at the normalised
 * positions a grid gives: nearest, bilinear or bicubic, with zeros, border
 * or reflection padding): shape rule and portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/grid_sample.md.
 * The kernel places each grid point once (its taps and weights on both
 * axes) and then reads every channel with those taps, so the placement is
 * paid N*H_out*W_out times, not N*C*H_out*W_out. It allocates nothing: a
 * session run must not. f16 and bf16 are computed by the f32 kernel and
 * rounded once (half_compute.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "dtype.h"
#include "op_registry.h"
#include "real_access.h"
#include "size_claim.h"

typedef enum sample_mode { SAMPLE_BILINEAR, SAMPLE_NEAREST, SAMPLE_BICUBIC } sample_mode;
typedef enum padding_mode { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION } padding_mode;

static const char *const mode_names[] = {"bilinear", "nearest", "bicubic"};
static const char *const padding_names[] = {"zeros", "border", "reflection"};

/* The cubic convolution coefficient of bicubic mode (fixed by the op, as in ONNX GridSample-16). */
#define GRID_SAMPLE_CUBIC_A (-0.75)

/*
 * How far outside the input a coordinate may lie and still have a tap
 * inside it (bicubic reaches 2 elements beyond floor(x)). A coordinate
 * farther out reads only padding zeros, and is never converted to an
 * integer: an infinite or huge coordinate cannot overflow anything.
 */
#define GRID_SAMPLE_REACH 3.0

/* A node's grid_sample attributes, validated. */
typedef struct sample_options {
    sample_mode mode;
    padding_mode padding;
    bool align_corners;
} sample_options;

static const kiln_attribute_spec grid_sample_attributes[] = {
    {"align_corners", KILN_ATTRIBUTE_INT},
    {"mode", KILN_ATTRIBUTE_STRING},
    {"padding_mode", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

/* The index of STRING attribute `name` among `names` (`fallback` when absent), or a refusal naming it. */
static kiln_status choose(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                          const char *name, const char *const *names, int fallback, int *out, kiln_error *err)
{
    const kiln_node_attribute *attr = kiln_attribute_find(attributes, count, name);
    *out = fallback;
    if (!attr)
        return KILN_OK;
    for (int i = 0; i < 3; i++)
        if (strcmp(attr->s, names[i]) == 0) {
            *out = i;
            return KILN_OK;
        }
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' is \"%s\"; expected %s, %s or %s", label,
                     name, attr->s, names[0], names[1], names[2]);
}

static kiln_status read_options(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                                sample_options *o, kiln_error *err)
{
    int mode, padding;
    KILN_TRY(choose(label, attributes, count, "mode", mode_names, SAMPLE_BILINEAR, &mode, err));
    KILN_TRY(choose(label, attributes, count, "padding_mode", padding_names, PAD_ZEROS, &padding, err));
    int64_t align = kiln_attribute_int(attributes, count, "align_corners", 0);
    if (align != 0 && align != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'align_corners' is %lld; expected 0 or 1",
                         label, (long long)align);
    o->mode = (sample_mode)mode;
    o->padding = (padding_mode)padding;
    o->align_corners = align == 1;
    return KILN_OK;
}

/* ------------------------------------------------------------ shape rule */

static bool samples(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || kiln_dtype_is_half(dtype);
}

/* Prove `claim` about x's or grid's sizes; `what` says it in words. */
static kiln_status prove(const kiln_shape_context *ctx, kiln_size_claim_kind kind, uint32_t a, uint32_t b, int64_t k,
                         const char *what, const char *advice, kiln_error *err)
{
    kiln_size_claim claim = {kind, a, b, k};
    return kiln_prove_size_claim(ctx, &claim, what, advice, err);
}

static kiln_status infer_grid_sample(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                     uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0], *grid = inputs[1];
    (void)input_count;
    sample_options o;
    KILN_TRY(read_options(ctx->node_label, ctx->attributes, ctx->attribute_count, &o, err));
    if (!samples(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has dtype %s; grid_sample needs f32, f64, f16 or bf16",
                         ctx->node_label, kiln_dtype_name(x->dtype));
    KILN_TRY(kiln_require_same_dtype(ctx, x, grid, err));
    if (x->shape.rank != 4)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x must have rank 4 [N, C, H, W], got rank %u",
                         ctx->node_label, x->shape.rank);
    if (grid->shape.rank != 4)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: grid must have rank 4 [N, H_out, W_out, 2], got rank %u", ctx->node_label,
                         grid->shape.rank);
    char a[128], b[128], what[320];
    kiln_format_size(ctx, grid->shape.axes[0], a, sizeof a);
    kiln_format_size(ctx, x->shape.axes[0], b, sizeof b);
    snprintf(what, sizeof what, "grid axis 0 size %s equals x axis 0 size %s (one grid per image)", a, b);
    KILN_TRY(prove(ctx, KILN_CLAIM_EQUAL, grid->shape.axes[0], x->shape.axes[0], 0, what,
                   "Use the same dim (or the same constant) for both batch sizes", err));
    uint32_t two;
    KILN_TRY(kiln_expr_const(ctx->pool, 2, &two, err));
    kiln_format_size(ctx, grid->shape.axes[3], a, sizeof a);
    snprintf(what, sizeof what, "grid axis 3 size %s equals 2 (an (x, y) pair per point)", a);
    KILN_TRY(prove(ctx, KILN_CLAIM_EQUAL, grid->shape.axes[3], two, 0, what, "Declare grid's last axis as 2", err));
    /* Border and reflection padding read an element of the image wherever the grid points; an empty image has none. */
    for (uint32_t axis = 2; axis < 4; axis++) {
        kiln_format_size(ctx, x->shape.axes[axis], a, sizeof a);
        snprintf(what, sizeof what, "x axis %u size %s is >= 1 (the image must not be empty)", axis, a);
        char advice[96];
        snprintf(advice, sizeof advice, "Declare the dims so that x axis %u is never empty", axis);
        KILN_TRY(prove(ctx, KILN_CLAIM_AT_LEAST, x->shape.axes[axis], 0, 1, what, advice, err));
    }
    out->dtype = x->dtype;
    out->shape.rank = 4;
    out->shape.axes[0] = x->shape.axes[0];
    out->shape.axes[1] = x->shape.axes[1];
    out->shape.axes[2] = grid->shape.axes[1];
    out->shape.axes[3] = grid->shape.axes[2];
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

/*
 * The input positions one grid coordinate reads along one axis, and their
 * weights: 1 tap for nearest, 2 for bilinear, 4 for bicubic. A tap of
 * weight 0, or one in zeros padding (it reads 0), is left out, so an
 * element that does not contribute is never read (no 0 * NaN). `undefined`:
 * the coordinate has no position (NaN; infinite under reflection) and the
 * output is NaN.
 */
typedef struct axis_taps {
    uint32_t count;
    bool undefined;
    int64_t index[4];
    double weight[4];
} axis_taps;

/* The pixel coordinate of normalised coordinate g on an axis of `size` elements. */
static double unnormalise(double g, int64_t size, bool align_corners)
{
    return align_corners ? (g + 1.0) / 2.0 * (double)(size - 1) : ((g + 1.0) * (double)size - 1.0) / 2.0;
}

/*
 * Reflect x into [low, high] about its ends, as often as it takes: the
 * reflection has period 2*(high - low), so fmod (exact) finds the place in
 * one period. An axis whose range is a point (align_corners with size 1)
 * reflects everything onto it.
 */
static double reflect(double x, double low, double high)
{
    double span = high - low;
    if (span <= 0.0)
        return low;
    double m = fmod(fabs(x - low), 2.0 * span);
    return low + (m <= span ? m : 2.0 * span - m);
}

/*
 * Where index i of a tap reads under border or reflection padding; the
 * integer form of `reflect` about -0.5 and size - 0.5 (align_corners 0) or
 * 0 and size - 1 (align_corners 1).
 */
static int64_t padded_index(int64_t i, int64_t size, padding_mode padding, bool align_corners)
{
    if (padding == PAD_BORDER || size == 1)
        return i < 0 ? 0 : i > size - 1 ? size - 1 : i;
    int64_t period = align_corners ? 2 * (size - 1) : 2 * size;
    int64_t m = i % period;
    if (m < 0)
        m += period;
    if (align_corners)
        return m <= size - 1 ? m : period - m;
    return m < size ? m : period - 1 - m;
}

static void add_tap(axis_taps *t, const sample_options *o, int64_t index, int64_t size, double weight)
{
    if (weight == 0.0)
        return;
    if (index < 0 || index >= size) {
        if (o->padding == PAD_ZEROS)
            return; /* reads 0 */
        index = padded_index(index, size, o->padding, o->align_corners);
    }
    t->index[t->count] = index;
    t->weight[t->count] = weight;
    t->count++;
}

/* The cubic convolution weights of the neighbours floor-1 .. floor+2 at fraction t (0 <= t < 1). */
static void cubic_weights(double t, double *w)
{
    const double a = GRID_SAMPLE_CUBIC_A;
    double d[4] = {1 + t, t, 1 - t, 2 - t};
    for (int i = 0; i < 4; i++)
        w[i] = d[i] <= 1 ? ((a + 2) * d[i] - (a + 3)) * d[i] * d[i] + 1
                         : ((a * d[i] - 5 * a) * d[i] + 8 * a) * d[i] - 4 * a;
}

/* The taps of normalised coordinate g on an axis of `size` (>= 1) elements. */
static void taps_of(const sample_options *o, double g, int64_t size, axis_taps *t)
{
    t->count = 0;
    t->undefined = false;
    double x = unnormalise(g, size, o->align_corners);
    if (o->mode == SAMPLE_NEAREST)
        x = nearbyint(x); /* round half to even (the default rounding mode) */
    double low = o->align_corners ? 0.0 : -0.5, high = o->align_corners ? (double)(size - 1) : (double)size - 0.5;
    if (isnan(x) || (o->padding == PAD_REFLECTION && isinf(x))) {
        t->undefined = true;
        return;
    }
    /* The coordinate itself is padded only when it lies outside [low, high]. */
    if (x < low || x > high) {
        if (o->padding == PAD_BORDER)
            x = x < 0 ? 0.0 : x > (double)(size - 1) ? (double)(size - 1) : x;
        else if (o->padding == PAD_REFLECTION)
            x = reflect(x, low, high);
    }
    if (x < -GRID_SAMPLE_REACH || x > (double)size + GRID_SAMPLE_REACH)
        return; /* zeros padding, every tap outside: the sample is 0 */
    double whole = floor(x), t_fraction = x - whole;
    int64_t i = (int64_t)whole;
    if (o->mode == SAMPLE_NEAREST) {
        add_tap(t, o, i, size, 1.0);
    } else if (o->mode == SAMPLE_BILINEAR) {
        add_tap(t, o, i, size, 1.0 - t_fraction);
        add_tap(t, o, i + 1, size, t_fraction);
    } else {
        double w[4];
        cubic_weights(t_fraction, w);
        for (int k = 0; k < 4; k++)
            add_tap(t, o, i - 1 + k, size, w[k]);
    }
}

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "grid_sample: operands do not match the op's shape rule");
}

static kiln_status run_grid_sample(const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count != 2)
        return mismatch(err);
    const kiln_tensor *x = call->inputs[0], *grid = call->inputs[1];
    kiln_tensor *out = call->output;
    sample_options o;
    if (read_options("grid_sample", call->attributes, call->attribute_count, &o, err) != KILN_OK)
        return mismatch(err);
    if (!samples(x->dtype) || grid->dtype != x->dtype || out->dtype != x->dtype || x->rank != 4 || grid->rank != 4 ||
        out->rank != 4)
        return mismatch(err);
    KILN_HALF_IN_F32(call, run_grid_sample, err);
    int64_t n_count = x->shape[0], channels = x->shape[1], height = x->shape[2], width = x->shape[3];
    int64_t out_h = grid->shape[1], out_w = grid->shape[2];
    if (grid->shape[0] != n_count || grid->shape[3] != 2 || out->shape[0] != n_count || out->shape[1] != channels ||
        out->shape[2] != out_h || out->shape[3] != out_w)
        return mismatch(err);
    if (out->element_count == 0)
        return KILN_OK;
    if (height < 1 || width < 1) /* proven impossible; checked all the same */
        return mismatch(err);

    uint64_t plane = (uint64_t)height * (uint64_t)width, points = (uint64_t)out_h * (uint64_t)out_w;
    for (int64_t n = 0; n < n_count; n++)
        for (uint64_t p = 0; p < points; p++) {
            uint64_t at = (uint64_t)n * points + p;
            axis_taps across, down; /* grid[..., 0] is the x (width) coordinate, grid[..., 1] the y (height) */
            taps_of(&o, kiln_tensor_load_real(grid, 2 * at), width, &across);
            taps_of(&o, kiln_tensor_load_real(grid, 2 * at + 1), height, &down);
            for (int64_t c = 0; c < channels; c++) {
                uint64_t image = ((uint64_t)n * (uint64_t)channels + (uint64_t)c) * plane;
                uint64_t target = ((uint64_t)n * (uint64_t)channels + (uint64_t)c) * points + p;
                if (across.undefined || down.undefined) {
                    kiln_tensor_store_real(out, target, NAN);
                    continue;
                }
                double sum = 0.0;
                for (uint32_t r = 0; r < down.count; r++) {
                    double row = 0.0;
                    uint64_t line = image + (uint64_t)down.index[r] * (uint64_t)width;
                    for (uint32_t k = 0; k < across.count; k++)
                        row += across.weight[k] * kiln_tensor_load_real(x, line + (uint64_t)across.index[k]);
                    sum += down.weight[r] * row;
                }
                kiln_tensor_store_real(out, target, sum);
            }
        }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def grid_sample_ops[] = {
    {.name = "grid_sample", .versions = {1, 1}, .inputs = {2, 2}, .attributes = grid_sample_attributes,
     .infer = infer_grid_sample, .run = run_grid_sample},
};

const kiln_op_family kiln_ops_grid_sample = KILN_OP_FAMILY(grid_sample_ops, "spec/ops/grid_sample.md");
