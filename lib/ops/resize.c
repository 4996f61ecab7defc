/*
 * resize.c — resize (nearest, n-linear and n-cubic interpolation over
 * any axes) and resize_to (the same, its sizes a shape text over the
 * dims): shape rules and portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/resize.md. The
 * target is static, like reshape's: `scales` (one ratio per axis) or
 * `sizes` (one size per axis) are attributes. A scale is taken as the
 * exact ratio p/q it spells, so a symbolic axis resizes to the expression
 * floor(in*p/q) and the source coordinate of every output element is
 * computed exactly, as a fraction; only an interpolation weight is rounded.
 * The kernel allocates nothing: a session run must not. nearest copies
 * elements bit for bit, f16 and bf16 included; linear and cubic compute
 * f16 and bf16 by the f32 kernel and round once (half_compute.h), with f32
 * copies kept outside the arena.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "checked_math.h"
#include "error.h"
#include "half_compute.h"
#include "linear_rows.h"
#include "dtype.h"
#include "odometer.h"
#include "op_registry.h"
#include "parallel.h"
#include "real_access.h"
#include "shape_attribute.h"
#include "size_claim.h"

/*
 * Scales are read as p/q with q at most this. Every scale written as a
 * short decimal or fraction (0.5, 1.5, 0.3, 2/3 rounded to a double) is
 * such a ratio; a scale that is not is refused rather than guessed.
 */
#define RESIZE_MAX_SCALE_DENOMINATOR 4096
/* The largest numerator: keeps in*p within int64 for any realistic axis. */
#define RESIZE_MAX_SCALE_NUMERATOR (1 << 20)

typedef enum resize_mode { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC } resize_mode;

typedef enum coordinate_mode {
    COORDINATES_HALF_PIXEL,
    COORDINATES_PYTORCH_HALF_PIXEL,
    COORDINATES_ALIGN_CORNERS,
    COORDINATES_ASYMMETRIC,
} coordinate_mode;

typedef enum nearest_rounding {
    ROUND_PREFER_FLOOR,
    ROUND_PREFER_CEIL,
    ROUND_FLOOR,
    ROUND_CEIL,
} nearest_rounding;

static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const coordinate_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
static const char *const rounding_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* Names the op's vocabulary has elsewhere but this version does not implement. */
static const char *const unsupported_modes[] = {NULL};
static const char *const unsupported_coordinates[] = {"tf_crop_and_resize", "half_pixel_symmetric",
                                                      "tf_half_pixel_for_nn", NULL};

/* A node's resize attributes, validated. */
typedef struct resize_options {
    resize_mode mode;
    coordinate_mode coordinates;
    nearest_rounding rounding;
    const kiln_node_attribute *scales; /* FLOATS, or NULL */
    const kiln_node_attribute *sizes;  /* INTS, or NULL (and for resize_to, whose sizes are a shape text) */
    double cubic_coeff_a;              /* cubic only */
    bool exclude_outside;              /* cubic only */
} resize_options;

static const kiln_attribute_spec resize_attributes[] = {
    {"coordinate_transformation_mode", KILN_ATTRIBUTE_STRING},
    {"cubic_coeff_a", KILN_ATTRIBUTE_FLOAT},
    {"exclude_outside", KILN_ATTRIBUTE_INT},
    {"mode", KILN_ATTRIBUTE_STRING},
    {"nearest_mode", KILN_ATTRIBUTE_STRING},
    {"scales", KILN_ATTRIBUTE_FLOATS},
    {"sizes", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/* resize_to: resize's attributes, the target a shape text over the dims. */
static const kiln_attribute_spec resize_to_attributes[] = {
    {"coordinate_transformation_mode", KILN_ATTRIBUTE_STRING},
    {"cubic_coeff_a", KILN_ATTRIBUTE_FLOAT},
    {"exclude_outside", KILN_ATTRIBUTE_INT},
    {"mode", KILN_ATTRIBUTE_STRING},
    {"nearest_mode", KILN_ATTRIBUTE_STRING},
    {"sizes", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

/* "a, b or c" for a refusal listing the accepted names. */
static void format_choices(const char *const *names, size_t count, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%s", i == 0 ? "" : i + 1 == count ? " or " : ", ",
                                 names[i]);
}

/*
 * The index of STRING attribute `name` among `names` (`fallback` when the
 * node does not have it), or a refusal naming the attribute, its value and
 * the accepted values.
 */
static kiln_status choose(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                          const char *name, const char *const *names, size_t name_count,
                          const char *const *unsupported, int fallback, int *out, kiln_error *err)
{
    const kiln_node_attribute *attr = kiln_attribute_find(attributes, count, name);
    *out = fallback;
    if (!attr)
        return KILN_OK;
    for (size_t i = 0; i < name_count; i++)
        if (strcmp(attr->s, names[i]) == 0) {
            *out = (int)i;
            return KILN_OK;
        }
    char choices[160];
    format_choices(names, name_count, choices, sizeof choices);
    for (size_t i = 0; unsupported[i]; i++)
        if (strcmp(attr->s, unsupported[i]) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: attribute '%s' is \"%s\", which resize version 1 does not implement; use %s", label,
                             name, attr->s, choices);
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' is \"%s\"; expected %s", label, name, attr->s,
                     choices);
}

static kiln_status read_options(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                                bool text_target, resize_options *o, kiln_error *err)
{
    static const char *const none[] = {NULL};
    int mode, coordinates, rounding;
    KILN_TRY(choose(label, attributes, count, "mode", mode_names, 3, unsupported_modes, RESIZE_NEAREST, &mode, err));
    KILN_TRY(choose(label, attributes, count, "coordinate_transformation_mode", coordinate_names, 4,
                    unsupported_coordinates, COORDINATES_HALF_PIXEL, &coordinates, err));
    KILN_TRY(choose(label, attributes, count, "nearest_mode", rounding_names, 4, none, ROUND_PREFER_FLOOR, &rounding,
                    err));
    o->mode = (resize_mode)mode;
    o->coordinates = (coordinate_mode)coordinates;
    o->rounding = (nearest_rounding)rounding;
    /* Refused rather than ignored: a parameter that cannot matter is a mistake in the program. */
    static const char *const cubic_only[] = {"cubic_coeff_a", "exclude_outside"};
    for (size_t i = 0; i < 2 && o->mode != RESIZE_CUBIC; i++)
        if (kiln_attribute_find(attributes, count, cubic_only[i]))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: attribute '%s' applies only to mode \"cubic\", and the mode is \"%s\"", label,
                             cubic_only[i], mode_names[mode]);
    o->cubic_coeff_a = kiln_attribute_float(attributes, count, "cubic_coeff_a", -0.75);
    if (!isfinite(o->cubic_coeff_a))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'cubic_coeff_a' is %g, not a finite number",
                         label, o->cubic_coeff_a);
    int64_t exclude = kiln_attribute_int(attributes, count, "exclude_outside", 0);
    if (exclude != 0 && exclude != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'exclude_outside' is %lld; expected 0 or 1",
                         label, (long long)exclude);
    o->exclude_outside = exclude == 1;
    if (o->mode != RESIZE_NEAREST && kiln_attribute_find(attributes, count, "nearest_mode"))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attribute 'nearest_mode' applies only to mode \"nearest\", and the mode is \"%s\"",
                         label, mode_names[mode]);
    if (text_target) { /* resize_to: its "sizes" is parsed by the shape rule */
        o->scales = o->sizes = NULL;
        if (!kiln_attribute_find(attributes, count, "sizes"))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'sizes' is required", label);
        return KILN_OK;
    }
    o->scales = kiln_attribute_find(attributes, count, "scales");
    o->sizes = kiln_attribute_find(attributes, count, "sizes");
    if (!o->scales && !o->sizes)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'scales' or 'sizes' is required", label);
    if (o->scales && o->sizes)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: give attribute 'scales' or 'sizes', not both", label);
    return KILN_OK;
}

/*
 * The ratio p/q (q <= RESIZE_MAX_SCALE_DENOMINATOR, smallest q) whose
 * correctly rounded quotient is exactly `scale`. Division is correctly
 * rounded in IEEE 754, so `n / d == scale` is an exact test.
 */
static bool scale_as_ratio(double scale, int64_t *p, int64_t *q)
{
    if (!(scale > 0) || scale > RESIZE_MAX_SCALE_NUMERATOR)
        return false;
    for (int64_t d = 1; d <= RESIZE_MAX_SCALE_DENOMINATOR; d++) {
        double n = nearbyint(scale * (double)d);
        if (n >= 1 && n <= RESIZE_MAX_SCALE_NUMERATOR && n / (double)d == scale) {
            *p = (int64_t)n;
            *q = d;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------ shape rule */

/* floor(in * p / q) as an expression: constants fold, p == q keeps `in`. */
static kiln_status scaled_size(const kiln_shape_context *ctx, uint32_t in, int64_t p, int64_t q, uint32_t *out,
                               kiln_error *err)
{
    const kiln_expr *e = &ctx->pool->items[in];
    if (p == q) {
        *out = in;
        return KILN_OK;
    }
    if (e->kind == KILN_EXPR_CONST) {
        int64_t product;
        if (__builtin_mul_overflow(e->constant, p, &product))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return kiln_expr_const(ctx->pool, product / q, out, err); /* both non-negative: / is floor */
    }
    uint32_t scaled = in, constant;
    if (p != 1) {
        KILN_TRY(kiln_expr_const(ctx->pool, p, &constant, err));
        kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = constant, .rhs = in};
        KILN_TRY(kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, &scaled, err));
    }
    if (q == 1) {
        *out = scaled;
        return KILN_OK;
    }
    KILN_TRY(kiln_expr_const(ctx->pool, q, &constant, err));
    kiln_expr div = {.kind = KILN_EXPR_FLOORDIV, .lhs = scaled, .rhs = constant};
    return kiln_expr_intern(ctx->pool, &div, ctx->dim_count, out, err);
}

/* The dtypes modes linear and cubic take; f16 and bf16 are computed in f32 and rounded once (half_compute.h). */
static bool interpolates(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || kiln_dtype_is_half(dtype);
}

/* Every output element needs a source element to interpolate from: input axis `axis` (size `in`) is never empty. */
static kiln_status prove_source(const kiln_shape_context *ctx, uint32_t axis, uint32_t in, const char *target_text,
                                kiln_error *err)
{
    char size_text[128], what[320], advice[200];
    kiln_format_size(ctx, in, size_text, sizeof size_text);
    snprintf(what, sizeof what, "input axis %u size %s is >= 1 (sizes[%u] = %s needs a source element)", axis,
             size_text, axis, target_text);
    snprintf(advice, sizeof advice, "Declare the dims so that axis %u is never empty", axis);
    kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, in, 0, 1};
    return kiln_prove_size_claim(ctx, &claim, what, advice, err);
}

/* The checks resize and resize_to share: the options and x's dtype. */
static kiln_status check_resize(const kiln_shape_context *ctx, const kiln_value_type *x, bool text_target,
                                resize_options *o, kiln_error *err)
{
    KILN_TRY(read_options(ctx->node_label, ctx->attributes, ctx->attribute_count, text_target, o, err));
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    if (o->mode != RESIZE_NEAREST && !interpolates(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: mode \"%s\" needs f32, f64, f16 or bf16; x has dtype %s",
                         ctx->node_label, mode_names[o->mode], kiln_dtype_name(x->dtype));
    return KILN_OK;
}

/* resize_to: the output shape is the sizes text, each size >= 1, and no input axis is empty. */
static kiln_status infer_resize_to(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                   uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    resize_options o;
    KILN_TRY(check_resize(ctx, x, true, &o, err));
    kiln_shape target;
    KILN_TRY(kiln_shape_attribute(ctx, "sizes", 1, &target, err));
    if (target.rank != x->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: 'sizes' has %u entries; it needs one per axis (rank %u)",
                         ctx->node_label, target.rank, x->shape.rank);
    out->dtype = x->dtype;
    out->shape = target;
    for (uint32_t i = 0; i < x->shape.rank; i++) {
        char target_text[128];
        kiln_format_size(ctx, target.axes[i], target_text, sizeof target_text);
        KILN_TRY(prove_source(ctx, i, x->shape.axes[i], target_text, err));
    }
    return KILN_OK;
}

static kiln_status infer_resize(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    resize_options o;
    KILN_TRY(check_resize(ctx, x, false, &o, err));
    const kiln_node_attribute *target = o.scales ? o.scales : o.sizes;
    const char *target_name = o.scales ? "scales" : "sizes";
    if (target->count != x->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: '%s' has %u entries; it needs one per axis (rank %u)",
                         ctx->node_label, target_name, target->count, x->shape.rank);
    out->dtype = x->dtype;
    out->shape.rank = x->shape.rank;
    for (uint32_t i = 0; i < x->shape.rank; i++) {
        uint32_t in = x->shape.axes[i];
        if (o.scales) {
            int64_t p, q;
            if (!scale_as_ratio(o.scales->floats[i], &p, &q))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: scales[%u] = %.17g is not a positive ratio p/q with p <= %d and q <= %d, "
                                 "so the output size floor(in*p/q) cannot be written exactly",
                                 ctx->node_label, i, o.scales->floats[i], RESIZE_MAX_SCALE_NUMERATOR,
                                 RESIZE_MAX_SCALE_DENOMINATOR);
            KILN_TRY(scaled_size(ctx, in, p, q, &out->shape.axes[i], err));
            continue; /* an empty axis resizes to an empty axis: nothing to prove */
        }
        if (o.sizes->ints[i] < 1)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: sizes[%u] = %lld is not a positive size",
                             ctx->node_label, i, (long long)o.sizes->ints[i]);
        KILN_TRY(kiln_expr_const(ctx->pool, o.sizes->ints[i], &out->shape.axes[i], err));
        char target_text[32];
        snprintf(target_text, sizeof target_text, "%lld", (long long)o.sizes->ints[i]);
        KILN_TRY(prove_source(ctx, i, in, target_text, err));
    }
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

/*
 * The input positions one output coordinate reads along one axis, and
 * their weights: 1 tap for nearest (and wherever the coordinate is exact),
 * 2 for linear, 4 for cubic. A tap of weight 0 is left out, so an element
 * that does not contribute is never read (no 0 * NaN).
 */
typedef struct axis_taps {
    uint32_t count;
    int64_t index[4];
    double weight[4];
} axis_taps;

static void add_tap(axis_taps *t, int64_t index, double weight)
{
    if (weight != 0.0) {
        t->index[t->count] = index;
        t->weight[t->count] = weight;
        t->count++;
    }
}

static int64_t clamp_index(int64_t i, int64_t in)
{
    return i < 0 ? 0 : i > in - 1 ? in - 1 : i;
}

/*
 * Cubic convolution weights of the neighbours floor-1 .. floor+2 of a
 * coordinate whose fraction is t (0 < t < 1), with coefficient a:
 * W(d) = (a+2)|d|^3 - (a+3)|d|^2 + 1 for |d| <= 1,
 *        a|d|^3 - 5a|d|^2 + 8a|d| - 4a for 1 < |d| < 2.
 */
static void cubic_weights(double t, double a, double *w)
{
    double d[4] = {1 + t, t, 1 - t, 2 - t};
    for (int i = 0; i < 4; i++)
        w[i] = d[i] <= 1 ? ((a + 2) * d[i] - (a + 3)) * d[i] * d[i] + 1 : ((a * d[i] - 5 * a) * d[i] + 8 * a) * d[i] - 4 * a;
}

/* floor(n / d) for d > 0. */
static int64_t floor_div(int64_t n, int64_t d)
{
    int64_t quotient = n / d;
    return (n % d != 0 && n < 0) ? quotient - 1 : quotient;
}

/*
 * The taps of output coordinate `x` on an axis of `in` elements resized to
 * `out`, with scale p/q: the source coordinate is computed as the exact
 * fraction numerator/denominator, then rounded (nearest) or split into
 * neighbours and weights (linear, cubic).
 */
static kiln_status taps_of(const resize_options *o, int64_t x, int64_t in, int64_t out, int64_t p, int64_t q,
                           axis_taps *t, kiln_error *err)
{
    int64_t numerator = 0, denominator = 1;
    bool overflow = false;
    switch (o->coordinates) {
    case COORDINATES_PYTORCH_HALF_PIXEL:
        if (out == 1)
            break; /* x_original = 0 */
        /* fall through */
    case COORDINATES_HALF_PIXEL: /* (x + 1/2) * q/p - 1/2 = ((2x + 1)q - p) / 2p */
        overflow = __builtin_mul_overflow(2 * x + 1, q, &numerator) ||
                   __builtin_sub_overflow(numerator, p, &numerator) || __builtin_mul_overflow(2, p, &denominator);
        break;
    case COORDINATES_ALIGN_CORNERS: /* x * (in - 1) / (out - 1) */
        if (out == 1)
            break;
        overflow = __builtin_mul_overflow(x, in - 1, &numerator);
        denominator = out - 1;
        break;
    case COORDINATES_ASYMMETRIC: /* x * q/p */
        overflow = __builtin_mul_overflow(x, q, &numerator);
        denominator = p;
        break;
    }
    if (overflow)
        return kiln_fail(err, KILN_ERR_RUNTIME, "resize: an axis of %lld resized to %lld is too large to place exactly",
                         (long long)in, (long long)out);
    int64_t whole = floor_div(numerator, denominator);
    int64_t remainder = numerator - whole * denominator; /* 0 <= remainder < denominator */
    t->count = 0;
    if (o->mode == RESIZE_NEAREST) {
        bool up = false;
        switch (o->rounding) {
        case ROUND_PREFER_FLOOR: up = remainder > denominator - remainder; break;
        case ROUND_PREFER_CEIL: up = remainder > 0 && remainder >= denominator - remainder; break;
        case ROUND_FLOOR: up = false; break;
        case ROUND_CEIL: up = remainder > 0; break;
        }
        add_tap(t, clamp_index(whole + (up ? 1 : 0), in), 1.0);
    } else if (o->mode == RESIZE_LINEAR) {
        /* The coordinate is clamped to the axis, so the edge element is repeated outside it. */
        if (whole < 0) {
            add_tap(t, 0, 1.0);
        } else if (whole >= in - 1) {
            add_tap(t, in - 1, 1.0);
        } else {
            double w = (double)remainder / (double)denominator;
            add_tap(t, whole, 1.0 - w);
            add_tap(t, whole + 1, w);
        }
    } else if (remainder == 0) {
        add_tap(t, clamp_index(whole, in), 1.0); /* the cubic kernel is 1 at 0 and 0 at other integers */
    } else {
        double w[4], total = 0.0;
        cubic_weights((double)remainder / (double)denominator, o->cubic_coeff_a, w);
        for (int i = 0; i < 4; i++) {
            int64_t at = whole - 1 + i;
            if (o->exclude_outside && (at < 0 || at >= in))
                w[i] = 0.0;
            total += w[i];
        }
        bool renormalise = o->exclude_outside && total != 0.0; /* some neighbour is always inside */
        for (int i = 0; i < 4; i++)
            add_tap(t, clamp_index(whole - 1 + i, in), renormalise ? w[i] / total : w[i]);
    }
    return KILN_OK;
}

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "resize: operands do not match the op's shape rule");
}

static kiln_status run_resize(const kiln_kernel_call *call, kiln_error *err);
static kiln_status run_resize_to(const kiln_kernel_call *call, kiln_error *err);

/* resize (text_target false) and resize_to, whose sizes are the output's shape at run time. */
static kiln_status run_resize_by(const kiln_kernel_call *call, bool text_target, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    resize_options o;
    if (read_options("resize", call->attributes, call->attribute_count, text_target, &o, err) != KILN_OK)
        return mismatch(err);
    const kiln_node_attribute *target = o.scales ? o.scales : o.sizes;
    if (in->dtype != out->dtype || in->rank != out->rank || (target && target->count != in->rank) ||
        (o.mode != RESIZE_NEAREST && !interpolates(in->dtype)))
        return mismatch(err);
    /* nearest moves half patterns as they are; interpolation computes them in f32. */
    if (o.mode != RESIZE_NEAREST)
        KILN_HALF_IN_F32(call, text_target ? run_resize_to : run_resize, err);
    int64_t p[KILN_MAX_RANK], q[KILN_MAX_RANK], strides[KILN_MAX_RANK], stride = 1;
    for (uint32_t i = in->rank; i-- > 0;) {
        if (o.scales) {
            int64_t product;
            if (!scale_as_ratio(o.scales->floats[i], &p[i], &q[i]) ||
                __builtin_mul_overflow(in->shape[i], p[i], &product) || out->shape[i] != product / q[i])
                return mismatch(err);
        } else {
            if (o.sizes && out->shape[i] != o.sizes->ints[i])
                return mismatch(err);
            p[i] = out->shape[i];
            q[i] = in->shape[i];
        }
        strides[i] = stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, in->shape[i], &stride))
            stride = 0;
    }
    if (out->element_count == 0)
        return KILN_OK;
    for (uint32_t i = 0; i < in->rank; i++)
        if (in->shape[i] == 0) /* proven impossible when the output is not empty; checked all the same */
            return mismatch(err);

    size_t width = kiln_dtype_size(in->dtype);
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint64_t e = 0; e < out->element_count; e++) {
        axis_taps taps[KILN_MAX_RANK];
        for (uint32_t i = 0; i < in->rank; i++)
            KILN_TRY(taps_of(&o, index[i], in->shape[i], out->shape[i], p[i], q[i], &taps[i], err));
        if (o.mode == RESIZE_NEAREST) {
            int64_t offset = 0;
            for (uint32_t i = 0; i < in->rank; i++)
                offset += taps[i].index[0] * strides[i];
            memcpy((uint8_t *)out->data + e * width, (const uint8_t *)in->data + (size_t)offset * width, width);
        } else {
            /* Every combination of one tap per axis, weighted by the product of the
             * taps' weights; an odometer over the taps, last axis fastest. */
            uint32_t tap[KILN_MAX_RANK] = {0};
            double sum = 0.0;
            for (bool more = true; more;) {
                double weight = 1.0;
                int64_t offset = 0;
                for (uint32_t i = 0; i < in->rank; i++) {
                    weight *= taps[i].weight[tap[i]];
                    offset += taps[i].index[tap[i]] * strides[i];
                }
                sum += weight * kiln_tensor_load_real(in, offset);
                more = false;
                for (uint32_t i = in->rank; i-- > 0;) {
                    if (++tap[i] < taps[i].count) {
                        more = true;
                        break;
                    }
                    tap[i] = 0;
                }
            }
            kiln_tensor_store_real(out, e, sum);
        }
        kiln_odometer_next(index, out->rank, out->shape);
    }
    return KILN_OK;
}

static kiln_status run_resize(const kiln_kernel_call *call, kiln_error *err)
{
    return run_resize_by(call, false, err);
}

static kiln_status run_resize_to(const kiln_kernel_call *call, kiln_error *err)
{
    return run_resize_by(call, true, err);
}

/* ------------------------------------------------------------- fast path */

/*
 * The fast path (spec/ops/resize.md, "Fast path"): nearest (any dtype) and
 * linear (f32) over the last two axes, every earlier axis kept as it is
 * (scale exactly 1: N x C planes of an NCHW tensor). The reference kernel
 * above finds the taps of every axis again for every output element, with
 * 64-bit divisions, and walks an odometer over them: a 1x64x32x32 -> 64x64
 * bilinear resize took 15 ms on one thread (min of 50 runs), 10-18x ONNX
 * Runtime's time. Here the taps of each output row and column are found
 * once per shape, by the same taps_of, and kept in the node's state; each
 * output row then reads its input rows through the column table (nearest:
 * a copy; linear: linear_rows.h), 0.23 ms for that resize, and output rows are
 * split over the session's threads (kiln_parallel_chunks). The sum is the
 * reference's: the same products (the row weight times the column weight,
 * then times the element) added in double in the same order from 0, a tap
 * of weight 0 left out, rounded once: the results are the reference's bit
 * for bit.
 */

/* The taps of one axis of the table: index and weight of up to two neighbours (a second of weight 0 when one). */
typedef struct resize_axis_table {
    int64_t *first, *second;
    double *first_weight, *second_weight;
} resize_axis_table;

/* The node's tables, for one (input, output) size of the last two axes. */
typedef struct resize_tables {
    int64_t in_h, in_w, out_h, out_w; /* the sizes the tables were built for; out_w 0: none yet */
    resize_axis_table rows, columns;
    void *block;
    size_t capacity; /* output rows + columns the block holds */
} resize_tables;

static void release_tables(void *data)
{
    resize_tables *tables = data;
    if (tables)
        free(tables->block);
    free(tables);
}

/* Lay the two axis tables over the block (out_h rows, out_w columns). */
static void carve_tables(resize_tables *t, size_t out_h)
{
    size_t n = t->capacity;
    int64_t *indices = t->block;
    double *weights = (double *)(indices + 2 * n);
    t->rows = (resize_axis_table){indices, indices + n, weights, weights + n};
    t->columns = (resize_axis_table){indices + out_h, indices + n + out_h, weights + out_h, weights + n + out_h};
}

/* The taps of every output coordinate of one axis into `table`; false if an axis is too large to place. */
static bool fill_axis(const resize_options *o, int64_t in, int64_t out, int64_t p, int64_t q,
                      resize_axis_table *table)
{
    kiln_error ignored;
    for (int64_t x = 0; x < out; x++) {
        axis_taps taps;
        if (taps_of(o, x, in, out, p, q, &taps, &ignored) != KILN_OK)
            return false;
        table->first[x] = taps.index[0];
        table->first_weight[x] = taps.weight[0];
        table->second[x] = taps.count > 1 ? taps.index[1] : taps.index[0];
        table->second_weight[x] = taps.count > 1 ? taps.weight[1] : 0.0;
    }
    return true;
}

/* What one run computes: a plane is in_h x in_w elements read, out_h x out_w written. */
typedef struct resize_job {
    const resize_tables *tables;
    const uint8_t *in;
    uint8_t *out;
    size_t width; /* bytes per element */
    bool linear;
    int64_t in_h, in_w, out_h, out_w;
} resize_job;

/*
 * Output columns [begin, end) of output row `row` (counted over every
 * plane), block by block (linear_rows.h): the same sums as the reference,
 * bit for bit.
 */
static void linear_row(const resize_job *job, kiln_linear_block *b, int64_t row, int64_t begin, int64_t end)
{
    int64_t plane = row / job->out_h, y = row % job->out_h;
    const resize_axis_table *rows = &job->tables->rows, *columns = &job->tables->columns;
    const float *top = (const float *)job->in + (plane * job->in_h + rows->first[y]) * job->in_w;
    const float *bottom = (const float *)job->in + (plane * job->in_h + rows->second[y]) * job->in_w;
    b->wy0 = rows->first_weight[y];
    b->wy1 = rows->second_weight[y];
    for (int64_t at = begin; at < end; at += KILN_LINEAR_BLOCK) {
        int64_t stop = end - at < KILN_LINEAR_BLOCK ? end : at + KILN_LINEAR_BLOCK;
        b->top = kiln_linear_gather(b, NULL, top, columns->first, columns->second, at, stop);
        /* a row of weight 0 is never read (the sums test wy1); its slot need not be filled */
        b->bottom = b->wy1 != 0.0 ? kiln_linear_gather(b, b->top, bottom, columns->first, columns->second, at, stop)
                                  : b->top;
        b->wx0 = columns->first_weight + at;
        b->wx1 = columns->second_weight + at;
        b->out = (float *)job->out + row * job->out_w + at;
        kiln_linear_sums(b, stop - at);
    }
}

#define NEAREST_ROW(TYPE)                                                  \
    do {                                                                   \
        const TYPE *from = (const TYPE *)job->in + source;                 \
        TYPE *to = (TYPE *)job->out + row * job->out_w;                    \
        KILN_SIMD for (int64_t x = begin; x < end; x++) to[x] = from[x0[x]]; \
    } while (0)

static void nearest_row(const resize_job *job, int64_t row, int64_t begin, int64_t end)
{
    int64_t plane = row / job->out_h, y = row % job->out_h;
    int64_t source = (plane * job->in_h + job->tables->rows.first[y]) * job->in_w;
    const int64_t *x0 = job->tables->columns.first;
    switch (job->width) {
    case 1: NEAREST_ROW(uint8_t); break;
    case 2: NEAREST_ROW(uint16_t); break;
    case 4: NEAREST_ROW(uint32_t); break;
    default: NEAREST_ROW(uint64_t); break;
    }
}

/* Output elements [begin, end) in row-major order: the rows they fall in, whole or in part. */
static void resize_chunk(const void *data, uint64_t begin, uint64_t end)
{
    const resize_job *job = data;
    uint64_t w = (uint64_t)job->out_w;
    kiln_linear_block block; /* this chunk's own (the chunks of one run may run on several threads) */
    kiln_linear_block_reset(&block);
    for (uint64_t at = begin; at < end;) {
        uint64_t row = at / w, column = at % w;
        uint64_t stop = end - row * w < w ? end - row * w : w;
        if (job->linear)
            linear_row(job, &block, (int64_t)row, (int64_t)column, (int64_t)stop);
        else
            nearest_row(job, (int64_t)row, (int64_t)column, (int64_t)stop);
        at = row * w + stop;
    }
}

/*
 * The fast path on a channels-last x of rank 4 (layout.h: [N, H, W, C] in
 * memory), as a conv leaves it, into a channels-last result (a UNet's
 * concat then copies it as it is): every channel of an output pixel has
 * the same taps, so each pixel's C results are one loop over the channels
 * of (up to) four input pixels, which vectorizes, with the reference's
 * sums: from 0, (top, first column), (top, second), (bottom, first),
 * (bottom, second), each (row weight x column weight) x element in
 * double, a tap of weight 0 left out, rounded once. Measured on a small
 * UNet's 1x32x32x32 -> 64x64 half_pixel upsample, one thread: 122 us a run
 * through a conversion to row-major, the row-major path and a concat
 * transposing its result back. A result that must be row-major is not
 * written from here: scattering each pixel's channels a plane apart made
 * LR-ASPP's final upsample (21 channels, 16x16 -> 128x128, a program
 * output) 6x slower than converting the small x and taking the row-major
 * path.
 */
typedef struct resize_pixels_job {
    const resize_tables *tables;
    const float *in;
    float *out;
    bool linear;
    int64_t channels, in_h, in_w, out_h, out_w;
} resize_pixels_job;

/* One output pixel's channels from its taps a, b (top row) and c, d (bottom row); wy1 or wx1 0 leaves taps out. */
static inline __attribute__((always_inline)) void pixel_sums(float *o, int64_t channels, const float *a,
                                                             const float *b, const float *c, const float *d,
                                                             double wy0, double wy1, double wx0, double wx1)
{
    double w00 = wy0 * wx0, w01 = wy0 * wx1, w10 = wy1 * wx0, w11 = wy1 * wx1;
    if (wy1 != 0.0 && wx1 != 0.0) {
        KILN_SIMD for (int64_t k = 0; k < channels; k++) {
            double sum = 0.0;
            sum += w00 * (double)a[k];
            sum += w01 * (double)b[k];
            sum += w10 * (double)c[k];
            sum += w11 * (double)d[k];
            o[k] = (float)sum;
        }
    } else if (wy1 != 0.0) {
        KILN_SIMD for (int64_t k = 0; k < channels; k++) {
            double sum = 0.0;
            sum += w00 * (double)a[k];
            sum += w10 * (double)c[k];
            o[k] = (float)sum;
        }
    } else if (wx1 != 0.0) {
        KILN_SIMD for (int64_t k = 0; k < channels; k++) {
            double sum = 0.0;
            sum += w00 * (double)a[k];
            sum += w01 * (double)b[k];
            o[k] = (float)sum;
        }
    } else {
        KILN_SIMD for (int64_t k = 0; k < channels; k++) {
            double sum = 0.0;
            sum += w00 * (double)a[k];
            o[k] = (float)sum;
        }
    }
}

/* Output pixels [begin, end), counted over every image. */
KILN_VECTOR_CLONES static void resize_pixels(const void *data, uint64_t begin, uint64_t end)
{
    const resize_pixels_job *job = data;
    const resize_axis_table *rows = &job->tables->rows, *columns = &job->tables->columns;
    int64_t C = job->channels, plane = job->out_h * job->out_w;
    for (int64_t at = (int64_t)begin; at < (int64_t)end; at++) {
        int64_t n = at / plane, y = at % plane / job->out_w, x = at % job->out_w;
        const float *image = job->in + n * job->in_h * job->in_w * C;
        const float *a = image + (rows->first[y] * job->in_w + columns->first[x]) * C;
        float *o = job->out + at * C;
        if (!job->linear) {
            /* a copy of the bits, as the row-major path's */
            const uint32_t *from = (const uint32_t *)a;
            uint32_t *to = (uint32_t *)o;
            KILN_SIMD for (int64_t k = 0; k < C; k++) to[k] = from[k];
            continue;
        }
        const float *b = image + (rows->first[y] * job->in_w + columns->second[x]) * C;
        const float *c = image + (rows->second[y] * job->in_w + columns->first[x]) * C;
        const float *d = image + (rows->second[y] * job->in_w + columns->second[x]) * C;
        pixel_sums(o, C, a, b, c, d, rows->first_weight[y], rows->second_weight[y], columns->first_weight[x],
                   columns->second_weight[x]);
    }
}

/* The node's tables for these sizes: kept, or built (the block grown when it must be). */
static kiln_status tables_for(const kiln_kernel_call *call, const resize_options *o, const int64_t *sizes,
                              const int64_t *p, const int64_t *q, resize_tables **out, kiln_error *err)
{
    kiln_node_state *slot = call->context->state;
    resize_tables *t = slot->data;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "resize: out of memory for its tables");
        slot->data = t;
        slot->release = release_tables;
    }
    *out = NULL;
    if (t->out_w != 0 && t->in_h == sizes[0] && t->in_w == sizes[1] && t->out_h == sizes[2] && t->out_w == sizes[3]) {
        *out = t;
        return KILN_OK;
    }
    t->out_w = 0;
    size_t needed, bytes;
    if (!kiln_add_size((size_t)sizes[2], (size_t)sizes[3], &needed) || !kiln_mul_size(needed, 32, &bytes))
        return KILN_OK; /* declined: the reference reports what it must */
    if (t->capacity < needed) {
        void *block = malloc(bytes);
        if (!block)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "resize: out of memory for %zu bytes of tables", bytes);
        free(t->block);
        t->block = block;
        t->capacity = needed;
    }
    carve_tables(t, (size_t)sizes[2]);
    if (!fill_axis(o, sizes[0], sizes[2], p[0], q[0], &t->rows) ||
        !fill_axis(o, sizes[1], sizes[3], p[1], q[1], &t->columns))
        return KILN_OK;
    t->in_h = sizes[0], t->in_w = sizes[1], t->out_h = sizes[2], t->out_w = sizes[3];
    *out = t;
    return KILN_OK;
}

/* resize (text_target false) and resize_to through the tables; *ran false leaves the call to the reference. */
static kiln_status fast_resize_by(const kiln_kernel_call *call, bool text_target, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!call->context || !call->context->state || call->context->reference_only)
        return KILN_OK;
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    resize_options o;
    if (read_options("resize", call->attributes, call->attribute_count, text_target, &o, err) != KILN_OK)
        return mismatch(err);
    const kiln_node_attribute *target = o.scales ? o.scales : o.sizes;
    bool linear = o.mode == RESIZE_LINEAR;
    if ((o.mode != RESIZE_NEAREST && !(linear && in->dtype == KILN_F32)) || in->dtype != out->dtype ||
        in->rank != out->rank || in->rank == 0 || (target && target->count != in->rank) ||
        out->element_count == 0)
        return KILN_OK;
    size_t width = kiln_dtype_size(in->dtype);
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return KILN_OK;
    /* A channels-last x (layout.h) of rank 3 (whose tables' rows would be
     * its channels) or 5, or into a result that must be row-major: declined,
     * for the session to convert it and ask again. */
    if ((call->context->channels_last_operands & 1u) &&
        (in->rank != 4 || !call->context->result_may_be_channels_last))
        return KILN_OK;
    /* The last two axes (one for rank 1) as [h, w]; every earlier axis exactly kept (p = q). */
    int64_t p[2] = {1, 1}, q[2] = {1, 1}, sizes[4] = {1, 1, 1, 1};
    for (uint32_t i = 0; i < in->rank; i++) {
        int64_t pi, qi;
        if (o.scales) {
            int64_t product;
            if (!scale_as_ratio(o.scales->floats[i], &pi, &qi) ||
                __builtin_mul_overflow(in->shape[i], pi, &product) || out->shape[i] != product / qi)
                return mismatch(err);
        } else {
            if (o.sizes && out->shape[i] != o.sizes->ints[i])
                return mismatch(err);
            pi = out->shape[i];
            qi = in->shape[i];
        }
        if (in->shape[i] == 0)
            return KILN_OK; /* the reference's refusal */
        int32_t axis = (int32_t)i - (int32_t)in->rank + 2; /* 0: h, 1: w, below: a plane axis */
        if (axis < 0) {
            if (pi != qi)
                return KILN_OK;
            continue;
        }
        p[axis] = pi, q[axis] = qi;
        sizes[axis] = in->shape[i], sizes[2 + axis] = out->shape[i];
    }
    resize_tables *tables;
    KILN_TRY(tables_for(call, &o, sizes, p, q, &tables, err));
    if (!tables)
        return KILN_OK;
    /* A linear element costs a gather and four products: it splits over threads as the costly unary ops do. */
    uint64_t min_elements = linear ? kiln_parallel_min_costly_elements() : KILN_PARALLEL_MIN_ELEMENTS;
    if (call->context->channels_last_operands & 1u) {
        int64_t C = in->shape[1];
        resize_pixels_job pixels = {tables, in->data, out->data, linear, C, sizes[0], sizes[1], sizes[2], sizes[3]};
        uint64_t count = (uint64_t)(in->shape[0] * sizes[2] * sizes[3]);
        uint64_t min_pixels = C > 0 ? (min_elements + (uint64_t)C - 1) / (uint64_t)C : min_elements;
        kiln_parallel_chunks_from(count, kiln_call_threads(call), min_pixels, resize_pixels, &pixels);
        call->context->wrote_channels_last = true;
    } else {
        resize_job job = {tables, in->data, out->data, width, linear, sizes[0], sizes[1], sizes[2], sizes[3]};
        kiln_parallel_chunks_from(out->element_count, kiln_call_threads(call), min_elements, resize_chunk, &job);
    }
    call->context->path = KILN_PATH_VECTOR;
    *ran = true;
    return KILN_OK;
}

static kiln_status fast_resize(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_resize_by(call, false, ran, err);
}

static kiln_status fast_resize_to(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    return fast_resize_by(call, true, ran, err);
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def resize_ops[] = {
    {.name = "resize", .versions = {1, 1}, .inputs = {1, 1}, .attributes = resize_attributes,
     .infer = infer_resize, .run = run_resize,
     .fast = fast_resize, .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
    {.name = "resize_to", .versions = {1, 1}, .inputs = {1, 1}, .attributes = resize_to_attributes,
     .infer = infer_resize_to, .run = run_resize_to,
     .fast = fast_resize_to, .traits = {.layout = KILN_LAYOUT_READS_OPERAND_0}},
};

const kiln_op_family kiln_ops_resize = KILN_OP_FAMILY(resize_ops, "spec/ops/resize.md");
