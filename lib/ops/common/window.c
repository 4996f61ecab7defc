/* window.c — sliding-window geometry for conv and pool (see window.h). */
#include "window.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "size_claim.h"

/* ----------------------------------------------------------- attributes */

/*
 * An INTS attribute of exactly `length` values in min..KILN_WINDOW_MAX_ATTRIBUTE,
 * or `fallback` in every slot when the node does not have it.
 */
static bool read_list(const kiln_node_attribute *attributes, uint32_t count, const char *name, uint32_t length,
                      const char *what_length, int64_t fallback, int64_t min, int64_t *values, char *why, size_t size)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, name);
    if (!a || a->type != KILN_ATTRIBUTE_INTS) {
        for (uint32_t i = 0; i < length; i++)
            values[i] = fallback;
        return true;
    }
    if (a->count != length) {
        snprintf(why, size, "%s has %u values, expected %u (%s)", name, a->count, length, what_length);
        return false;
    }
    for (uint32_t i = 0; i < length; i++) {
        if (a->ints[i] < min || a->ints[i] > KILN_WINDOW_MAX_ATTRIBUTE) {
            snprintf(why, size, "%s[%u] = %lld is outside %lld..%lld", name, i, (long long)a->ints[i],
                     (long long)min, (long long)KILN_WINDOW_MAX_ATTRIBUTE);
            return false;
        }
        values[i] = a->ints[i];
    }
    return true;
}

static bool read_auto_pad(const kiln_node_attribute *attributes, uint32_t count, kiln_auto_pad *mode, char *why,
                          size_t size)
{
    static const char *const names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "auto_pad");
    *mode = KILN_AUTO_PAD_NOTSET;
    if (!a || a->type != KILN_ATTRIBUTE_STRING)
        return true;
    for (int m = 0; m < 4; m++)
        if (strcmp(a->s, names[m]) == 0) {
            *mode = (kiln_auto_pad)m;
            return true;
        }
    snprintf(why, size, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '%.40s'", a->s);
    return false;
}

bool kiln_window_resolve(const kiln_node_attribute *attributes, uint32_t count, kiln_window *w, char *why,
                         size_t size)
{
    uint32_t n = w->spatial;
    int64_t kernel[KILN_WINDOW_MAX_SPATIAL], pads[2 * KILN_WINDOW_MAX_SPATIAL];
    bool pools = w->kind == KILN_WINDOW_POOL;
    if (pools && !kiln_attribute_find(attributes, count, "kernel_shape")) {
        snprintf(why, size, "kernel_shape is required");
        return false;
    }
    if (!read_list(attributes, count, "kernel_shape", n, "one per spatial axis", 0, 1, kernel, why, size) ||
        !read_list(attributes, count, "strides", n, "one per spatial axis", 1, 1, w->strides, why, size) ||
        !read_list(attributes, count, "dilations", n, "one per spatial axis", 1, 1, w->dilations, why, size) ||
        !read_list(attributes, count, "pads", 2 * n, "begin then end per spatial axis", 0, 0, pads, why, size) ||
        !read_list(attributes, count, "output_padding", n, "one per spatial axis", 0, 0, w->output_padding, why,
                   size) ||
        !read_list(attributes, count, "output_shape", n, "one per spatial axis", 0, 1, w->output_shape, why, size) ||
        !read_auto_pad(attributes, count, &w->auto_pad, why, size))
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (pools)
            w->kernel[i] = kernel[i];
        else if (kernel[i] != 0 && kernel[i] != w->kernel[i]) {
            snprintf(why, size, "kernel_shape[%u] = %lld differs from the weight's kernel extent %lld", i,
                     (long long)kernel[i], (long long)w->kernel[i]);
            return false;
        }
        if (w->kernel[i] < 1 || w->kernel[i] > KILN_WINDOW_MAX_ATTRIBUTE) {
            snprintf(why, size, "kernel extent %lld on spatial axis %u is outside 1..%lld", (long long)w->kernel[i],
                     i, (long long)KILN_WINDOW_MAX_ATTRIBUTE);
            return false;
        }
        w->pads_begin[i] = pads[i];
        w->pads_end[i] = pads[n + i];
    }
    if (w->auto_pad != KILN_AUTO_PAD_NOTSET)
        for (uint32_t i = 0; i < 2 * n; i++)
            if (pads[i] != 0) {
                snprintf(why, size, "pads cannot be given with auto_pad %s",
                         w->auto_pad == KILN_AUTO_PAD_VALID ? "VALID" : "SAME_UPPER/SAME_LOWER");
                return false;
            }
    /* output_shape replaces the pads: they are derived from it (spec/ops/conv.md). */
    bool explicit_output = w->output_shape[0] != 0;
    if (explicit_output && w->auto_pad == KILN_AUTO_PAD_VALID) {
        snprintf(why, size, "output_shape cannot be given with auto_pad VALID");
        return false;
    }
    for (uint32_t i = 0; explicit_output && i < 2 * n; i++)
        if (pads[i] != 0) {
            snprintf(why, size, "pads cannot be given with output_shape");
            return false;
        }
    int64_t ceil_mode = kiln_attribute_int(attributes, count, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1) {
        snprintf(why, size, "ceil_mode must be 0 or 1, got %lld", (long long)ceil_mode);
        return false;
    }
    w->ceil_mode = ceil_mode == 1;
    for (uint32_t i = 0; i < n; i++) {
        int64_t dilated = kiln_window_dilated_kernel(w, i);
        /* A pool pad as wide as the window only adds windows that see no input. */
        if (pools && (w->pads_begin[i] >= dilated || w->pads_end[i] >= dilated)) {
            snprintf(why, size, "pads on spatial axis %u (%lld, %lld) must be smaller than the dilated kernel %lld", i,
                     (long long)w->pads_begin[i], (long long)w->pads_end[i], (long long)dilated);
            return false;
        }
        /* Larger output_padding would add output rows no input element reaches. */
        if (w->output_padding[i] >= w->strides[i] && w->output_padding[i] >= w->dilations[i]) {
            snprintf(why, size, "output_padding[%u] = %lld must be smaller than the stride %lld or the dilation %lld",
                     i, (long long)w->output_padding[i], (long long)w->strides[i], (long long)w->dilations[i]);
            return false;
        }
        if (w->kind == KILN_WINDOW_CONV_TRANSPOSE && !explicit_output &&
            (w->auto_pad == KILN_AUTO_PAD_SAME_UPPER || w->auto_pad == KILN_AUTO_PAD_SAME_LOWER) &&
            w->output_padding[i] + dilated < w->strides[i]) {
            snprintf(why, size,
                     "auto_pad SAME needs output_padding + dilated kernel >= stride on spatial axis %u "
                     "(%lld + %lld < %lld)",
                     i, (long long)w->output_padding[i], (long long)dilated, (long long)w->strides[i]);
            return false;
        }
    }
    return true;
}

int64_t kiln_window_dilated_kernel(const kiln_window *w, uint32_t axis)
{
    return (w->kernel[axis] - 1) * w->dilations[axis] + 1;
}

/* ---------------------------------------------------- concrete extents */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * Derived pads: `total` split with the odd unit at the end (SAME_UPPER) or
 * at the beginning (any other mode). Floor division, so that a negative
 * total (a conv_transpose output_shape larger than the full extent) grows
 * the end first, as a positive one crops the beginning first.
 */
static void split_same(kiln_auto_pad mode, int64_t total, int64_t *pad_begin, int64_t *pad_end)
{
    int64_t half = floor_div(total, 2);
    *pad_begin = mode == KILN_AUTO_PAD_SAME_UPPER ? half : total - half;
    *pad_end = total - *pad_begin;
}

static bool is_same(kiln_auto_pad mode)
{
    return mode == KILN_AUTO_PAD_SAME_UPPER || mode == KILN_AUTO_PAD_SAME_LOWER;
}

bool kiln_window_extent(const kiln_window *w, uint32_t axis, int64_t in, int64_t *out, int64_t *pad_begin,
                        int64_t *pad_end)
{
    int64_t s = w->strides[axis], dilated = kiln_window_dilated_kernel(w, axis);
    int64_t pb = w->pads_begin[axis], pe = w->pads_end[axis];
    if (in < 0)
        return false;
    if (w->kind == KILN_WINDOW_CONV_TRANSPOSE) {
        int64_t grown;
        if (__builtin_mul_overflow(in, s, &grown))
            return false;
        if (w->output_shape[axis] != 0) {
            /* total = s * (in - 1) + output_padding + dilated - output_shape, any sign. */
            int64_t total;
            if (__builtin_add_overflow(grown, w->output_padding[axis] + dilated - s - w->output_shape[axis], &total))
                return false;
            split_same(w->auto_pad, total, pad_begin, pad_end);
            *out = w->output_shape[axis];
            return true;
        }
        if (is_same(w->auto_pad)) {
            split_same(w->auto_pad, w->output_padding[axis] + dilated - s, pad_begin, pad_end);
            *out = grown;
            return grown >= 1;
        }
        /* s * (in - 1) + output_padding + dilated - pads; every term is below 2^50 but `grown`. */
        int64_t rest = w->output_padding[axis] + dilated - s - pb - pe;
        if (__builtin_add_overflow(grown, rest, out))
            return false;
        *pad_begin = pb;
        *pad_end = pe;
        return *out >= 1;
    }
    if (is_same(w->auto_pad)) {
        if (in < 1)
            return false;
        *out = in / s + (in % s != 0);
        int64_t total = ((*out - 1) * s - in) + dilated; /* (out - 1) * s < in: no overflow */
        split_same(w->auto_pad, total > 0 ? total : 0, pad_begin, pad_end);
        return true;
    }
    int64_t padded;
    if (__builtin_add_overflow(in, pb + pe, &padded) || padded < dilated)
        return false;
    *pad_begin = pb;
    *pad_end = pe;
    if (w->kind == KILN_WINDOW_POOL && w->ceil_mode) {
        /* The last window starts inside the input or the begin pad (spec/ops/pool.md). */
        int64_t slack = s + pe - dilated;
        *out = floor_div(in + pb - 1 + (slack < 0 ? slack : 0), s) + 1;
    } else {
        *out = (padded - dilated) / s + 1;
    }
    return true;
}

void kiln_window_taps(int64_t start, int64_t dilation, int64_t kernel, int64_t extent, int64_t *first,
                      int64_t *last)
{
    /* Smallest j with start + j*d >= 0; one past the largest with start + j*d <= extent - 1. */
    int64_t lo = start >= 0 ? 0 : floor_div(-start + dilation - 1, dilation);
    int64_t hi = extent - 1 - start < 0 ? 0 : floor_div(extent - 1 - start, dilation) + 1;
    if (hi > kernel)
        hi = kernel;
    if (lo > hi)
        lo = hi;
    *first = lo;
    *last = hi;
}

/* ------------------------------------------------------- shape rule */

static kiln_status make_const(const kiln_shape_context *ctx, int64_t value, uint32_t *id, kiln_error *err)
{
    return kiln_expr_const(ctx->pool, value, id, err);
}

/* e + c; a constant e folds. */
static kiln_status offset(const kiln_shape_context *ctx, uint32_t e, int64_t c, uint32_t *out, kiln_error *err)
{
    const kiln_expr *x = &ctx->pool->items[e];
    if (c == 0) {
        *out = e;
        return KILN_OK;
    }
    if (x->kind == KILN_EXPR_CONST) {
        int64_t v;
        if (__builtin_add_overflow(x->constant, c, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return make_const(ctx, v, out, err);
    }
    /* (s + k) + c = s + (k + c), so that pads and kernel fold into one constant. */
    if ((x->kind == KILN_EXPR_ADD || x->kind == KILN_EXPR_SUB) && ctx->pool->items[x->rhs].kind == KILN_EXPR_CONST) {
        int64_t k = ctx->pool->items[x->rhs].constant;
        if (x->kind == KILN_EXPR_SUB)
            k = -k;
        if (__builtin_add_overflow(k, c, &c))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        e = x->lhs;
        if (c == 0) {
            *out = e;
            return KILN_OK;
        }
    }
    /* e - k reads better than e + -k in messages; |c| < 2^62 here (attributes are bounded). */
    uint32_t cid;
    KILN_TRY(make_const(ctx, c < 0 ? -c : c, &cid, err));
    kiln_expr add = {.kind = c < 0 ? KILN_EXPR_SUB : KILN_EXPR_ADD, .lhs = e, .rhs = cid};
    return kiln_expr_intern(ctx->pool, &add, ctx->dim_count, out, err);
}

/* e * c or e / c (floor) for c >= 1; a constant e folds, c == 1 keeps e. */
static kiln_status scale(const kiln_shape_context *ctx, kiln_expr_kind kind, uint32_t e, int64_t c, uint32_t *out,
                         kiln_error *err)
{
    const kiln_expr *x = &ctx->pool->items[e];
    if (c == 1) {
        *out = e;
        return KILN_OK;
    }
    if (x->kind == KILN_EXPR_CONST) {
        int64_t v = x->constant;
        if (kind == KILN_EXPR_FLOORDIV)
            v = floor_div(v, c);
        else if (__builtin_mul_overflow(v, c, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return make_const(ctx, v, out, err);
    }
    uint32_t cid;
    KILN_TRY(make_const(ctx, c, &cid, err));
    kiln_expr node = {.kind = (uint8_t)kind, .lhs = kind == KILN_EXPR_MUL ? cid : e,
                      .rhs = kind == KILN_EXPR_MUL ? e : cid};
    return kiln_expr_intern(ctx->pool, &node, ctx->dim_count, out, err);
}

static kiln_status prove_at_least(const kiln_shape_context *ctx, uint32_t e, int64_t k, const char *what,
                                  const char *advice, kiln_error *err)
{
    kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, e, 0, k};
    return kiln_prove_size_claim(ctx, &claim, what, advice, err);
}

kiln_status kiln_window_infer_size(const kiln_shape_context *ctx, const kiln_window *w, uint32_t axis, uint32_t in,
                                   uint32_t *out, kiln_error *err)
{
    int64_t s = w->strides[axis], dilated = kiln_window_dilated_kernel(w, axis);
    int64_t pb = w->pads_begin[axis], pe = w->pads_end[axis];
    uint32_t x_axis = axis + 2;
    char size[128], what[400], advice[200];
    kiln_format_size(ctx, in, size, sizeof size);

    if (w->kind == KILN_WINDOW_CONV_TRANSPOSE && w->output_shape[axis] != 0)
        return make_const(ctx, w->output_shape[axis], out, err); /* >= 1 by its range; pads follow */
    if (w->kind == KILN_WINDOW_CONV_TRANSPOSE) {
        uint32_t grown;
        KILN_TRY(scale(ctx, KILN_EXPR_MUL, in, s, &grown, err));
        if (is_same(w->auto_pad))
            *out = grown;
        else
            KILN_TRY(offset(ctx, grown, w->output_padding[axis] + dilated - s - pb - pe, out, err));
        char out_size[128];
        kiln_format_size(ctx, *out, out_size, sizeof out_size);
        snprintf(what, sizeof what, "output axis %u size %s (from x axis %u size %s) is at least 1", x_axis,
                 out_size, x_axis, size);
        snprintf(advice, sizeof advice, "Declare the dims so that the output is not empty, or reduce the pads");
        return prove_at_least(ctx, *out, 1, what, advice, err);
    }
    if (is_same(w->auto_pad)) {
        snprintf(what, sizeof what, "x axis %u size %s is at least 1 (auto_pad SAME)", x_axis, size);
        KILN_TRY(prove_at_least(ctx, in, 1, what, "Declare the dims so that the axis is at least 1", err));
        uint32_t rounded;
        KILN_TRY(offset(ctx, in, s - 1, &rounded, err));
        return scale(ctx, KILN_EXPR_FLOORDIV, rounded, s, out, err);
    }
    uint32_t padded;
    KILN_TRY(offset(ctx, in, pb + pe, &padded, err));
    char padded_size[128];
    kiln_format_size(ctx, padded, padded_size, sizeof padded_size);
    snprintf(what, sizeof what,
             "x axis %u size %s padded by %lld+%lld covers the dilated kernel %lld (%s >= %lld)", x_axis, size,
             (long long)pb, (long long)pe, (long long)dilated, padded_size, (long long)dilated);
    if (ctx->pool->items[in].kind == KILN_EXPR_CONST)
        snprintf(advice, sizeof advice, "Pad x axis %u by at least %lld in all, or shrink the kernel or the dilation",
                 x_axis, (long long)(dilated - ctx->pool->items[in].constant));
    else
        snprintf(advice, sizeof advice,
                 "Declare the dims so that x axis %u is at least %lld, or pad or shrink the kernel", x_axis,
                 (long long)(dilated - pb - pe));
    KILN_TRY(prove_at_least(ctx, padded, dilated, what, advice, err));
    uint32_t numerator, quotient;
    if (w->kind == KILN_WINDOW_POOL && w->ceil_mode) {
        int64_t slack = s + pe - dilated;
        KILN_TRY(offset(ctx, in, pb - 1 + (slack < 0 ? slack : 0), &numerator, err));
    } else {
        KILN_TRY(offset(ctx, padded, -dilated, &numerator, err));
    }
    KILN_TRY(scale(ctx, KILN_EXPR_FLOORDIV, numerator, s, &quotient, err));
    return offset(ctx, quotient, 1, out, err);
}

kiln_status kiln_window_geometry_of(const kiln_window *w, const char *op, const kiln_tensor *x, const kiln_tensor *y,
                                    kiln_window_geometry *g, kiln_error *err)
{
    uint32_t lift = KILN_WINDOW_MAX_SPATIAL - w->spatial;
    for (uint32_t a = 0; a < KILN_WINDOW_MAX_SPATIAL; a++) {
        g->in[a] = g->out[a] = g->kernel[a] = g->stride[a] = g->dilation[a] = g->padded[a] = 1;
        g->pad[a] = 0;
    }
    for (uint32_t a = 0; a < w->spatial; a++) {
        int64_t extent, pad_begin, pad_end;
        if (!kiln_window_extent(w, a, x->shape[a + 2], &extent, &pad_begin, &pad_end))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "%s: the window does not fit x axis %u of size %lld (kernel %lld, dilation %lld)", op,
                             a + 2, (long long)x->shape[a + 2], (long long)w->kernel[a], (long long)w->dilations[a]);
        if (y->shape[a + 2] != extent)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output axis %u must have size %lld, got %lld", op,
                             a + 2, (long long)extent, (long long)y->shape[a + 2]);
        g->in[lift + a] = x->shape[a + 2];
        g->out[lift + a] = extent;
        g->kernel[lift + a] = w->kernel[a];
        g->stride[lift + a] = w->strides[a];
        g->dilation[lift + a] = w->dilations[a];
        g->pad[lift + a] = pad_begin;
        g->padded[lift + a] = x->shape[a + 2] + pad_begin + pad_end; /* fits: the extent check added them */
        g->window.kernel[a] = w->kernel[a];
        g->window.strides[a] = w->strides[a];
        g->window.dilations[a] = w->dilations[a];
        g->window.pad_begin[a] = pad_begin;
        g->window.pad_end[a] = pad_end;
    }
    g->window.spatial = w->spatial;
    return KILN_OK;
}
