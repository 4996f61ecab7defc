/*
 * test_ops_conv.c — the conv family (conv, conv_transpose) against an
 * independent reference written here: 1d, 2d and 3d, batch > 1, strides,
 * explicit and automatic pads, dilations, groups (depthwise included),
 * with and without bias, f32 and f64, edge sizes (kernel as large as the
 * padded input, extents of 1), NaN and inf; the shape rule on symbolic
 * dims and end to end through the builder and a session at several points
 * of the domain; and the static refusals (channels, groups, windows that
 * do not fit somewhere in the domain, attributes).
 *
 * The reference computes its own output sizes and SAME pads from the
 * ONNX formulas, walks every output element by a flat index it unflattens
 * by div/mod, and sums every (input channel, kernel tap) pair in long
 * double, testing each input position against the bounds. conv_transpose
 * is computed the other way round from the kernel: every input element is
 * scattered through every tap into a long double accumulator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/text.h>

#include "attribute.h"
#include "error.h"
#include "op_registry.h"
#include "shape_expr.h"
#include "tensor.h"

#include "op_test_support.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};

/* ------------------------------------------------------------ the cases */

typedef struct conv_case {
    bool transpose;
    uint32_t spatial;
    int64_t batch, channels, out_channels, group;
    int64_t in[3], kernel[3], strides[3], dilations[3], pads[6], output_padding[3];
    const char *auto_pad; /* NULL: no attribute */
    bool bias;
    int64_t output_shape[3]; /* conv_transpose; 0: no attribute */
} conv_case;

static int64_t ref_floor_div(int64_t a, int64_t b)
{
    return (a - ((a % b) + b) % b) / b;
}

/* Output extent and begin pad of spatial axis `a`, from the ONNX formulas. */
static int64_t ref_extent(const conv_case *c, uint32_t a, int64_t in, int64_t *pad_begin)
{
    int64_t s = c->strides[a], dk = (c->kernel[a] - 1) * c->dilations[a] + 1;
    bool same = c->auto_pad && strncmp(c->auto_pad, "SAME", 4) == 0;
    bool valid = c->auto_pad && strcmp(c->auto_pad, "VALID") == 0;
    int64_t pb = valid ? 0 : c->pads[a], pe = valid ? 0 : c->pads[c->spatial + a];
    int64_t out, total = 0;
    if (c->transpose && c->output_shape[0]) {
        /* Pads follow from the requested size; floor halves, odd unit at the end only for SAME_UPPER. */
        out = c->output_shape[a];
        total = s * (in - 1) + c->output_padding[a] + dk - out;
        int64_t half = ref_floor_div(total, 2);
        *pad_begin = c->auto_pad && strcmp(c->auto_pad, "SAME_UPPER") == 0 ? half : total - half;
        return out;
    }
    if (c->transpose) {
        out = same ? in * s : s * (in - 1) + c->output_padding[a] + dk - pb - pe;
        if (same)
            total = s * (in - 1) + c->output_padding[a] + dk - out;
    } else {
        out = same ? ref_floor_div(in + s - 1, s) : ref_floor_div(in + pb + pe - dk, s) + 1;
        if (same) {
            total = (out - 1) * s + dk - in;
            total = total < 0 ? 0 : total;
        }
    }
    if (same)
        pb = strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
    *pad_begin = pb;
    return out;
}

static void unflatten(uint64_t flat, uint32_t rank, const int64_t *shape, int64_t *index)
{
    for (uint32_t a = rank; a-- > 0;) {
        index[a] = (int64_t)(flat % (uint64_t)shape[a]);
        flat /= (uint64_t)shape[a];
    }
}

static uint64_t flatten(uint32_t rank, const int64_t *shape, const int64_t *index)
{
    uint64_t flat = 0;
    for (uint32_t a = 0; a < rank; a++)
        flat = flat * (uint64_t)shape[a] + (uint64_t)index[a];
    return flat;
}

static void reference(const conv_case *c, const kiln_tensor *x, const kiln_tensor *w, const kiln_tensor *b,
                      kiln_tensor *y)
{
    uint32_t n = c->spatial, rank = n + 2;
    int64_t pad[3], ktaps = 1;
    for (uint32_t a = 0; a < n; a++) {
        ref_extent(c, a, x->shape[a + 2], &pad[a]);
        ktaps *= c->kernel[a];
    }
    int64_t in_per_group = c->channels / c->group, out_per_group = c->out_channels / c->group;
    if (!c->transpose) {
        for (uint64_t f = 0; f < y->element_count; f++) {
            int64_t oi[KILN_MAX_RANK], xi[KILN_MAX_RANK], wi[KILN_MAX_RANK], k[3];
            unflatten(f, rank, y->shape, oi);
            long double sum = b ? ots_load(b, (uint64_t)oi[1]) : 0.0L;
            int64_t group = oi[1] / out_per_group;
            for (int64_t ci = 0; ci < in_per_group; ci++)
                for (int64_t t = 0; t < ktaps; t++) {
                    unflatten((uint64_t)t, n, c->kernel, k);
                    bool inside = true;
                    xi[0] = oi[0];
                    xi[1] = group * in_per_group + ci;
                    wi[0] = oi[1];
                    wi[1] = ci;
                    for (uint32_t a = 0; a < n; a++) {
                        xi[a + 2] = oi[a + 2] * c->strides[a] - pad[a] + k[a] * c->dilations[a];
                        wi[a + 2] = k[a];
                        inside = inside && xi[a + 2] >= 0 && xi[a + 2] < x->shape[a + 2];
                    }
                    if (inside)
                        sum += (long double)ots_load(x, flatten(rank, x->shape, xi)) *
                               ots_load(w, flatten(rank, w->shape, wi));
                }
            ots_store(y, f, sum);
        }
        return;
    }
    long double *acc = calloc(y->element_count ? y->element_count : 1, sizeof *acc);
    assert_non_null(acc);
    for (uint64_t f = 0; f < y->element_count; f++) {
        int64_t oi[KILN_MAX_RANK];
        unflatten(f, rank, y->shape, oi);
        acc[f] = b ? ots_load(b, (uint64_t)oi[1]) : 0.0L;
    }
    for (uint64_t f = 0; f < x->element_count; f++) {
        int64_t xi[KILN_MAX_RANK], oi[KILN_MAX_RANK], wi[KILN_MAX_RANK], k[3];
        unflatten(f, rank, x->shape, xi);
        int64_t group = xi[1] / in_per_group;
        for (int64_t mo = 0; mo < out_per_group; mo++)
            for (int64_t t = 0; t < ktaps; t++) {
                unflatten((uint64_t)t, n, c->kernel, k);
                bool inside = true;
                oi[0] = xi[0];
                oi[1] = group * out_per_group + mo;
                wi[0] = xi[1];
                wi[1] = mo;
                for (uint32_t a = 0; a < n; a++) {
                    oi[a + 2] = xi[a + 2] * c->strides[a] - pad[a] + k[a] * c->dilations[a];
                    wi[a + 2] = k[a];
                    inside = inside && oi[a + 2] >= 0 && oi[a + 2] < y->shape[a + 2];
                }
                if (inside)
                    acc[flatten(rank, y->shape, oi)] +=
                        (long double)ots_load(x, f) * ots_load(w, flatten(rank, w->shape, wi));
            }
    }
    for (uint64_t f = 0; f < y->element_count; f++)
        ots_store(y, f, acc[f]);
    free(acc);
}

/* ------------------------------------------------------------ comparing */

static void assert_tensors_match(const kiln_tensor *actual, const kiln_tensor *expected, const char *what)
{
    ots_assert_close(actual, expected, what, 4e-6, 1e-12);
}

/* The case's attributes, sorted by name; defaults are spelled out on odd `variant`s only. */
static void case_attributes(conv_case *c, int variant, attribute_set *set)
{
    uint32_t n = c->spatial;
    set->count = 0;
    bool spell = variant % 2 == 1;
    if (c->auto_pad)
        add_string(set, "auto_pad", c->auto_pad);
    add_ints(set, "dilations", c->dilations, n);
    if (spell || c->group != 1)
        add_int(set, "group", c->group);
    if (spell)
        add_ints(set, "kernel_shape", c->kernel, n);
    if (c->transpose)
        add_ints(set, "output_padding", c->output_padding, n);
    if (c->output_shape[0])
        add_ints(set, "output_shape", c->output_shape, n);
    else if (!c->auto_pad || strcmp(c->auto_pad, "NOTSET") == 0)
        add_ints(set, "pads", c->pads, 2 * n);
    add_ints(set, "strides", c->strides, n);
}

static kiln_status run_kernel(const char *name, const kiln_tensor *const *in, uint32_t count, kiln_tensor *out,
                              const attribute_set *set, kiln_error *err)
{
    return call_kernel(name, count, in, out, set->count, set->items, err);
}

/* The shape rule on constant extents must give `expected`. */
static void check_shape_rule(const char *name, const kiln_tensor *const *in, uint32_t count, const attribute_set *set,
                             const kiln_tensor *expected)
{
    const kiln_op_def *op = kiln_op_find(name);
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_error err;
    kiln_value_type types[3];
    const kiln_value_type *pointers[3];
    for (uint32_t i = 0; i < count; i++) {
        types[i].dtype = in[i]->dtype;
        types[i].shape.rank = in[i]->rank;
        for (uint32_t a = 0; a < in[i]->rank; a++)
            assert_int_equal(kiln_expr_const(&pool, in[i]->shape[a], &types[i].shape.axes[a], &err), KILN_OK);
        pointers[i] = &types[i];
    }
    kiln_shape_context ctx = {&pool, NULL, 0, "node 0 (test)", set->items, set->count, NULL, 0, NULL, NULL, 0, NULL, 0};
    kiln_value_type out;
    kiln_status status = op->infer(&ctx, pointers, count, &out, &err);
    if (status != KILN_OK)
        print_error("%s: %s\n", name, err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(out.dtype, expected->dtype);
    assert_int_equal(out.shape.rank, expected->rank);
    for (uint32_t a = 0; a < expected->rank; a++)
        if (!kiln_expr_is_const(&pool, out.shape.axes[a], expected->shape[a])) {
            print_error("%s: output axis %u is not %lld\n", name, a, (long long)expected->shape[a]);
            fail();
        }
    kiln_expr_pool_release(&pool);
}

/* Shape rule, kernel and reference on one case, every dtype, both attribute spellings. */
static void check_case(conv_case *c, prng *rng, bool specials)
{
    const char *name = c->transpose ? "conv_transpose" : "conv";
    uint32_t rank = c->spatial + 2;
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        kiln_dtype dt = float_dtypes[d];
        int64_t xs[KILN_MAX_RANK] = {c->batch, c->channels}, ws[KILN_MAX_RANK], ys[KILN_MAX_RANK] = {c->batch,
                                                                                                    c->out_channels};
        ws[0] = c->transpose ? c->channels : c->out_channels;
        ws[1] = c->transpose ? c->out_channels / c->group : c->channels / c->group;
        for (uint32_t a = 0; a < c->spatial; a++) {
            int64_t pad;
            xs[a + 2] = c->in[a];
            ws[a + 2] = c->kernel[a];
            ys[a + 2] = ref_extent(c, a, c->in[a], &pad);
        }
        kiln_tensor *x = new_tensor(dt, rank, xs), *w = new_tensor(dt, rank, ws);
        kiln_tensor *b = c->bias ? new_tensor(dt, 1, &c->out_channels) : NULL;
        kiln_tensor *y = new_tensor(dt, rank, ys), *expected = new_tensor(dt, rank, ys);
        ots_fill(x, rng, specials ? 40 : 0);
        ots_fill(w, rng, 0);
        if (b)
            ots_fill(b, rng, 0);
        const kiln_tensor *in[3] = {x, w, b};
        uint32_t count = b ? 3 : 2;
        reference(c, x, w, b, expected);
        for (int variant = 0; variant < 2; variant++) {
            attribute_set set;
            case_attributes(c, variant, &set);
            check_shape_rule(name, in, count, &set, expected);
            kiln_error err;
            kiln_status status = run_kernel(name, in, count, y, &set, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", name, err.message);
            assert_int_equal(status, KILN_OK);
            assert_tensors_match(y, expected, name);
        }
        kiln_tensor_free(x);
        kiln_tensor_free(w);
        kiln_tensor_free(b);
        kiln_tensor_free(y);
        kiln_tensor_free(expected);
    }
}

/* ------------------------------------------------------- differential */

#define ONES {1, 1, 1}
#define NO_PADS {0, 0, 0, 0, 0, 0}

static void conv_differential(void **state)
{
    (void)state;
    prng rng = {41};
    conv_case cases[] = {
        /* 1d: plain, strided and padded, dilated, grouped. */
        {false, 1, 2, 3, 4, 1, {9}, {3}, ONES, ONES, NO_PADS, {0}, NULL, true, {0}},
        {false, 1, 1, 2, 2, 1, {10}, {4}, {3}, ONES, {2, 1}, {0}, NULL, false, {0}},
        {false, 1, 2, 4, 6, 2, {11}, {3}, {2}, {2}, {1, 2}, {0}, NULL, true, {0}},
        /* 2d: the common 3x3 pad 1 stride 2, asymmetric pads, dilation, depthwise, 1x1. */
        {false, 2, 2, 3, 4, 1, {7, 8}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 1}, {0}, NULL, true, {0}},
        {false, 2, 1, 2, 3, 1, {6, 5}, {2, 3}, {1, 2}, {2, 1}, {0, 2, 1, 0}, {0}, NULL, false, {0}},
        {false, 2, 2, 4, 4, 4, {5, 6}, {3, 3}, ONES, ONES, {1, 1, 1, 1}, {0}, NULL, true, {0}},
        {false, 2, 2, 4, 8, 4, {5, 5}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 1, 1}, {0}, NULL, false, {0}},
        {false, 2, 3, 5, 2, 1, {4, 3}, {1, 1}, ONES, ONES, NO_PADS, {0}, NULL, true, {0}},
        /* Edges: kernel as large as the padded input (one output), extents of 1. */
        {false, 2, 1, 2, 3, 1, {3, 4}, {5, 4}, ONES, ONES, {1, 0, 1, 0}, {0}, NULL, true, {0}},
        {false, 2, 1, 1, 1, 1, {1, 1}, {1, 1}, ONES, ONES, NO_PADS, {0}, NULL, false, {0}},
        {false, 1, 1, 1, 1, 1, {1}, {3}, ONES, ONES, {1, 1}, {0}, NULL, true, {0}},
        /* A stride longer than the kernel skips input; pads wider than the kernel see only bias. */
        {false, 1, 1, 2, 2, 1, {9}, {2}, {3}, ONES, {3, 3}, {0}, NULL, true, {0}},
        /* auto_pad. */
        {false, 2, 1, 2, 3, 1, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, {0}, "SAME_UPPER", true, {0}},
        {false, 2, 1, 2, 3, 1, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, {0}, "SAME_LOWER", true, {0}},
        {false, 2, 1, 2, 3, 1, {5, 8}, {2, 4}, {3, 1}, {2, 1}, NO_PADS, {0}, "SAME_LOWER", false, {0}},
        {false, 2, 1, 2, 3, 1, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, {0}, "VALID", true, {0}},
        {false, 2, 1, 2, 3, 1, {7, 6}, {3, 2}, {2, 1}, ONES, {1, 0, 1, 0}, {0}, "NOTSET", true, {0}},
        /* 3d. */
        {false, 3, 2, 2, 3, 1, {4, 5, 6}, {2, 3, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, {0}, NULL, true, {0}},
        {false, 3, 1, 3, 3, 3, {3, 3, 4}, {3, 1, 2}, ONES, ONES, {1, 0, 0, 1, 0, 1}, {0}, NULL, false, {0}},
    };
    for (size_t i = 0; i < COUNT(cases); i++)
        check_case(&cases[i], &rng, false);
    /* NaN and inf propagate through the sums. */
    check_case(&cases[3], &rng, true);
    check_case(&cases[17], &rng, true);
}

static void conv_transpose_differential(void **state)
{
    (void)state;
    prng rng = {43};
    conv_case cases[] = {
        /* 2d: stride 2 upsampling, pads, output_padding, dilation, groups. */
        {true, 2, 2, 3, 4, 1, {3, 4}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 1}, {1, 1}, NULL, true, {0}},
        {true, 2, 1, 2, 3, 1, {4, 3}, {2, 3}, {1, 2}, {2, 1}, {0, 1, 1, 0}, {1, 0}, NULL, false, {0}},
        {true, 2, 2, 4, 6, 2, {3, 3}, {3, 2}, {3, 2}, ONES, {1, 0, 0, 1}, {2, 1}, NULL, true, {0}},
        {true, 2, 1, 4, 4, 4, {4, 4}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 1}, {0, 0}, NULL, true, {0}},
        {true, 2, 1, 1, 1, 1, {1, 1}, {1, 1}, ONES, ONES, NO_PADS, {0}, NULL, false, {0}},
        /* A stride longer than the kernel leaves rows only bias reaches. */
        {true, 2, 1, 2, 2, 1, {3, 2}, {2, 1}, {3, 3}, ONES, NO_PADS, {2, 0}, NULL, true, {0}},
        /* auto_pad. */
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 3}, {2, 2}, ONES, NO_PADS, {1, 0}, "SAME_UPPER", true, {0}},
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 4}, {2, 2}, ONES, NO_PADS, {0, 0}, "SAME_LOWER", true, {0}},
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 3}, {2, 1}, ONES, NO_PADS, {0, 0}, "VALID", false, {0}},
        /* 1d and 3d. */
        {true, 1, 2, 2, 2, 1, {5}, {4}, {3}, {2}, {2, 1}, {1}, NULL, true, {0}},
        {true, 3, 1, 2, 2, 2, {2, 3, 2}, {2, 2, 3}, {2, 1, 2}, ONES, {0, 1, 1, 1, 0, 0}, {1, 0, 1}, NULL, true, {0}},
        /* Stride and dilation sharing a factor, or not: the taps reaching an output form a progression. */
        {true, 1, 1, 2, 2, 1, {5}, {4}, {3}, {2}, {1, 2}, {1}, NULL, true, {0}},
        {true, 1, 2, 1, 2, 1, {6}, {5}, {4}, {6}, {3, 0}, {3}, NULL, true, {0}},
        {true, 2, 1, 2, 2, 2, {4, 3}, {3, 3}, {2, 2}, {2, 2}, {1, 0, 2, 1}, {1, 1}, NULL, false, {0}},
        {true, 1, 1, 1, 1, 1, {5}, {3}, {3}, {2}, NO_PADS, {0}, NULL, true, {20}},
        /* output_shape: smaller than the full extent (crops), equal, larger (grows with bias only). */
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 3}, {2, 2}, ONES, NO_PADS, {1, 0}, NULL, true, {5, 9}},
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 3}, {2, 2}, ONES, NO_PADS, {0, 1}, "SAME_UPPER", true, {6, 8}},
        {true, 2, 1, 2, 3, 1, {3, 4}, {3, 2}, {2, 3}, ONES, NO_PADS, {0, 0}, "SAME_LOWER", false, {10, 13}},
        {true, 1, 2, 2, 2, 1, {4}, {3}, {2}, {2}, NO_PADS, {1}, NULL, true, {14}},
    };
    for (size_t i = 0; i < COUNT(cases); i++)
        check_case(&cases[i], &rng, false);
    check_case(&cases[0], &rng, true);
}

/* A bigger case, so that a kernel mixing up loop strides cannot hide behind small extents. */
static void larger_shapes_match(void **state)
{
    (void)state;
    prng rng = {47};
    conv_case big = {false, 2, 2, 6, 8, 2, {17, 13}, {3, 5}, {2, 1}, {1, 2}, {1, 2, 0, 3}, {0}, NULL, true, {0}};
    check_case(&big, &rng, false);
    conv_case big_t = {true, 2, 2, 6, 4, 2, {7, 6}, {4, 3}, {2, 3}, ONES, {1, 0, 2, 1}, {1, 2}, NULL, true, {0}};
    check_case(&big_t, &rng, false);
}

/*
 * Examples published with the ONNX Conv and ConvTranspose operators: known
 * answers that do not depend on the reference above.
 */
static void onnx_examples(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 1, 7, 5}, ws[4] = {1, 1, 3, 3}, ys[4] = {1, 1, 4, 3}, ys_tight[4] = {1, 1, 3, 2};
    kiln_tensor *x = new_tensor(KILN_F32, 4, xs), *w = new_tensor(KILN_F32, 4, ws);
    kiln_tensor *y = new_tensor(KILN_F32, 4, ys), *y_tight = new_tensor(KILN_F32, 4, ys_tight);
    for (uint64_t i = 0; i < x->element_count; i++)
        ots_store(x, i, (double)i);
    for (uint64_t i = 0; i < w->element_count; i++)
        ots_store(w, i, 1.0);
    const kiln_tensor *in[2] = {x, w};
    int64_t strides[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    attribute_set padded = {.count = 0}, tight = {.count = 0};
    add_ints(&padded, "pads", pads, 4);
    add_ints(&padded, "strides", strides, 2);
    add_ints(&tight, "strides", strides, 2);
    kiln_error err;
    /* conv_with_strides_padding and conv_with_strides_no_padding. */
    static const double padded_y[12] = {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124};
    static const double tight_y[6] = {54, 72, 144, 162, 234, 252};
    assert_int_equal(run_kernel("conv", in, 2, y, &padded, &err), KILN_OK);
    for (uint64_t i = 0; i < 12; i++)
        assert_true(ots_load(y, i) == padded_y[i]);
    assert_int_equal(run_kernel("conv", in, 2, y_tight, &tight, &err), KILN_OK);
    for (uint64_t i = 0; i < 6; i++)
        assert_true(ots_load(y_tight, i) == tight_y[i]);
    /* convtranspose_pads: x 3x3 of 0..8, weight [1, 2, 3, 3] of ones, strides [3, 2], pads [1, 2, 1, 2]. */
    int64_t txs[4] = {1, 1, 3, 3}, tws[4] = {1, 2, 3, 3}, tys[4] = {1, 2, 7, 3};
    kiln_tensor *tx = new_tensor(KILN_F32, 4, txs), *tw = new_tensor(KILN_F32, 4, tws);
    kiln_tensor *ty = new_tensor(KILN_F32, 4, tys);
    for (uint64_t i = 0; i < tx->element_count; i++)
        ots_store(tx, i, (double)i);
    for (uint64_t i = 0; i < tw->element_count; i++)
        ots_store(tw, i, 1.0);
    int64_t tstrides[2] = {3, 2}, tpads[4] = {1, 2, 1, 2};
    attribute_set tset = {.count = 0};
    add_ints(&tset, "pads", tpads, 4);
    add_ints(&tset, "strides", tstrides, 2);
    const kiln_tensor *tin[2] = {tx, tw};
    check_shape_rule("conv_transpose", tin, 2, &tset, ty);
    assert_int_equal(run_kernel("conv_transpose", tin, 2, ty, &tset, &err), KILN_OK);
    static const double channel[21] = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
    for (uint64_t i = 0; i < 42; i++)
        assert_true(ots_load(ty, i) == channel[i % 21]);
    /* convtranspose_output_shape: the same with output_shape [10, 8] instead of pads: one more row and column. */
    int64_t big_ys[4] = {1, 2, 10, 8}, out_shape[2] = {10, 8};
    kiln_tensor *big = new_tensor(KILN_F32, 4, big_ys);
    attribute_set shaped = {.count = 0};
    add_ints(&shaped, "output_shape", out_shape, 2);
    add_ints(&shaped, "strides", tstrides, 2);
    check_shape_rule("conv_transpose", tin, 2, &shaped, big);
    assert_int_equal(run_kernel("conv_transpose", tin, 2, big, &shaped, &err), KILN_OK);
    static const double rows[3][8] = {
        {0, 0, 1, 1, 3, 2, 2, 0}, {3, 3, 7, 4, 9, 5, 5, 0}, {6, 6, 13, 7, 15, 8, 8, 0}};
    for (uint64_t i = 0; i < 160; i++) {
        uint64_t r = (i / 8) % 10, col = i % 8;
        assert_true(ots_load(big, i) == (r == 9 ? 0.0 : rows[r / 3][col]));
    }
    kiln_tensor_free(big);
    kiln_tensor_free(x);
    kiln_tensor_free(w);
    kiln_tensor_free(y);
    kiln_tensor_free(y_tight);
    kiln_tensor_free(tx);
    kiln_tensor_free(tw);
    kiln_tensor_free(ty);
}

/* ------------------------------------------------- symbolic shape rule */

/* The shape rule over dims h, w; the output axes rendered as text. */
static kiln_status infer_symbolic(const char *op, const char *const *x_axes, const int64_t *w_shape,
                                  uint32_t rank, const kiln_dim_decl *dims, uint32_t dim_count,
                                  const attribute_set *set, kiln_expr_pool *pool, kiln_value_type *out,
                                  kiln_error *err)
{
    kiln_value_type x = {.dtype = KILN_F32}, w = {.dtype = KILN_F32};
    x.shape.rank = w.shape.rank = rank;
    for (uint32_t a = 0; a < rank; a++) {
        uint32_t d;
        for (d = 0; d < dim_count; d++)
            if (strcmp(dims[d].name, x_axes[a]) == 0)
                break;
        if (d < dim_count)
            assert_int_equal(kiln_expr_dim(pool, d, dim_count, &x.shape.axes[a], err), KILN_OK);
        else
            assert_int_equal(kiln_expr_const(pool, atoll(x_axes[a]), &x.shape.axes[a], err), KILN_OK);
        assert_int_equal(kiln_expr_const(pool, w_shape[a], &w.shape.axes[a], err), KILN_OK);
    }
    const kiln_value_type *in[2] = {&x, &w};
    char label[64];
    snprintf(label, sizeof label, "node 0 (%s)", op);
    kiln_shape_context ctx = {pool, dims, dim_count, label, set->items, set->count, NULL, 0, NULL, NULL, 0, NULL, 0};
    return kiln_op_find(op)->infer(&ctx, in, 2, out, err);
}

static void format_axis(const kiln_expr_pool *pool, uint32_t id, char *text, size_t size)
{
    static const char *const names[] = {"n", "h", "w"};
    kiln_expr_format(pool, id, names, text, size);
}

/* The output size of a symbolic axis is the floor-div expression and evaluates right at every point. */
static void symbolic_output_sizes(void **state)
{
    (void)state;
    kiln_dim_decl dims[3] = {{"n", 1, 4, 1}, {"h", 8, 32, 1}, {"w", 9, 64, 1}};
    static const char *const x_axes[4] = {"n", "3", "h", "w"};
    static const int64_t w_shapes[2][4] = {{4, 3, 3, 5}, {3, 4, 3, 5}}; /* conv, conv_transpose */
    int64_t strides[2] = {2, 3}, pads[4] = {1, 2, 1, 0}, dilations[2] = {1, 2};
    static const char *const modes[] = {NULL, "SAME_UPPER", "VALID"};
    for (int t = 0; t < 2; t++)
        for (size_t m = 0; m < COUNT(modes); m++) {
            attribute_set set = {.count = 0};
            conv_case c = {t == 1, 2, 1, 3, 4, 1, {0, 0}, {3, 5}, {2, 3}, {1, 2}, {1, 2, 1, 0}, {1, 1}, modes[m],
                           false, {0}};
            if (modes[m])
                add_string(&set, "auto_pad", modes[m]);
            add_ints(&set, "dilations", dilations, 2);
            if (t == 1)
                add_ints(&set, "output_padding", c.output_padding, 2);
            if (!modes[m])
                add_ints(&set, "pads", pads, 4);
            add_ints(&set, "strides", strides, 2);
            const char *op = t ? "conv_transpose" : "conv";
            kiln_expr_pool pool;
            kiln_expr_pool_init(&pool);
            kiln_value_type out;
            kiln_error err;
            kiln_status status = infer_symbolic(op, x_axes, w_shapes[t], 4, dims, 3, &set, &pool, &out, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", op, err.message);
            assert_int_equal(status, KILN_OK);
            assert_int_equal(out.shape.rank, 4);
            assert_true(kiln_expr_is_const(&pool, out.shape.axes[1], 4));
            /* Every point of the domain gives the reference size. */
            for (int64_t h = 8; h <= 32; h++)
                for (int64_t w = 9; w <= 64; w += 5) {
                    int64_t values[3] = {1, h, w}, got, pad;
                    bool bound[3] = {true, true, true};
                    assert_int_equal(kiln_expr_eval(&pool, out.shape.axes[2], values, bound, &got, &err), KILN_OK);
                    assert_int_equal(got, ref_extent(&c, 0, h, &pad));
                    assert_int_equal(kiln_expr_eval(&pool, out.shape.axes[3], values, bound, &got, &err), KILN_OK);
                    assert_int_equal(got, ref_extent(&c, 1, w, &pad));
                }
            if (t == 0 && !modes[m]) {
                /* (h + 1 + 1 - 3) / 2 + 1 and (w + 2 + 0 - 9) / 3 + 1, folded. */
                char text[128];
                format_axis(&pool, out.shape.axes[2], text, sizeof text);
                assert_string_equal(text, "(h - 1) / 2 + 1");
                format_axis(&pool, out.shape.axes[3], text, sizeof text);
                assert_string_equal(text, "(w - 7) / 3 + 1");
            }
            kiln_expr_pool_release(&pool);
        }
}

/* ---------------------------------------------------------- end to end */

typedef struct program_run {
    kiln_program *program;
    kiln_session *session;
} program_run;

/*
 * Build "y = op(x, weight[, bias])" over dims, x an input of `x_shape`,
 * the others weights. @return the builder status of adding the op (on
 * success and with `run`, the program is loaded and given a session).
 */
static kiln_status build_program(const char *op, kiln_dtype dtype, const kiln_dim_decl *dims, uint32_t dim_count,
                                 const char *x_shape, const kiln_tensor *weight, const kiln_tensor *bias,
                                 uint32_t attribute_count, const kiln_attribute *attributes, program_run *run,
                                 kiln_error *err)
{
    kiln_builder *b;
    kiln_value values[3], y;
    assert_int_equal(kiln_builder_new("conv", &b, err), KILN_OK);
    for (uint32_t d = 0; d < dim_count; d++) {
        assert_int_equal(kiln_builder_add_dim(b, dims[d].name, dims[d].min, dims[d].max, err), KILN_OK);
        if (dims[d].multiple_of > 1)
            assert_int_equal(kiln_builder_set_dim_multiple_of(b, dims[d].name, dims[d].multiple_of, err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, x_shape, &values[0], err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "weight", KILN_WEIGHT_PARAMETER, weight->dtype, weight->rank,
                                             weight->shape, weight->data, &values[1], err),
                     KILN_OK);
    if (bias)
        assert_int_equal(kiln_builder_add_weight(b, "bias", KILN_WEIGHT_PARAMETER, bias->dtype, bias->rank,
                                                 bias->shape, bias->data, &values[2], err),
                         KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, op, bias ? 3 : 2, values, attribute_count, attributes, &y, err);
    if (status == KILN_OK && run) {
        assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
        void *bytes;
        size_t size;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, err), KILN_OK);
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &run->program, NULL, err), KILN_OK);
        free(bytes);
        assert_int_equal(kiln_session_new(run->program, NULL, &run->session, err), KILN_OK);
    }
    kiln_builder_free(b);
    return status;
}

/* conv and conv_transpose on x: [n, 3, h, w], h in 8..32, w in 8..16, run at several points. */
static void ops_run_end_to_end(void **state)
{
    (void)state;
    prng rng = {53};
    kiln_dim_decl dims[3] = {{"n", 1, 3, 1}, {"h", 8, 32, 1}, {"w", 8, 16, 1}};
    int64_t strides[2] = {2, 1}, pads[4] = {1, 0, 1, 2}, output_padding[2] = {1, 0};
    kiln_attribute attributes[4] = {{.name = "output_padding", .type = KILN_ATTRIBUTE_INTS, .ints = output_padding,
                                     .count = 2},
                                    {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
                                    {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2}};
    static const int64_t points[][3] = {{1, 8, 8}, {2, 9, 13}, {3, 32, 16}, {1, 17, 11}};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (int t = 0; t < 2; t++) {
            kiln_dtype dt = float_dtypes[d];
            conv_case c = {t == 1, 2, 1, 3, t ? 2 : 4, 1, {0, 0}, {3, 4}, {2, 1}, ONES, {1, 0, 1, 2}, {1, 0},
                           NULL, true, {0}};
            int64_t ws[4] = {t ? 3 : 4, t ? 2 : 3, 3, 4}, bs = c.out_channels;
            kiln_tensor *w = new_tensor(dt, 4, ws), *b = new_tensor(dt, 1, &bs);
            ots_fill(w, &rng, 0);
            ots_fill(b, &rng, 0);
            program_run run;
            kiln_error err;
            const char *op = t ? "conv_transpose" : "conv";
            kiln_status status = build_program(op, dt, dims, 3, "[n, 3, h, w]", w, b, t ? 3 : 2,
                                               t ? attributes : attributes + 1, &run, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", op, err.message);
            assert_int_equal(status, KILN_OK);
            for (size_t p = 0; p < COUNT(points); p++) {
                int64_t xs[4] = {points[p][0], 3, points[p][1], points[p][2]}, ys[4] = {points[p][0], bs}, pad;
                ys[2] = ref_extent(&c, 0, xs[2], &pad);
                ys[3] = ref_extent(&c, 1, xs[3], &pad);
                c.batch = xs[0];
                kiln_tensor *x = new_tensor(dt, 4, xs), *expected = new_tensor(dt, 4, ys);
                ots_fill(x, &rng, 0);
                reference(&c, x, w, b, expected);
                assert_int_equal(kiln_session_set_input(run.session, "x", x, &err), KILN_OK);
                status = kiln_session_run(run.session, &err);
                if (status != KILN_OK)
                    print_error("%s: %s\n", op, err.message);
                assert_int_equal(status, KILN_OK);
                const kiln_tensor *y = kiln_session_output(run.session, 0);
                assert_non_null(y);
                assert_tensors_match(y, expected, op);
                kiln_tensor_free(x);
                kiln_tensor_free(expected);
            }
            /* h = 33 is outside the domain: the guard refuses it. */
            int64_t big[4] = {1, 3, 33, 8};
            kiln_tensor *x = new_tensor(dt, 4, big);
            memset(x->data, 0, x->byte_size);
            if (kiln_session_set_input(run.session, "x", x, &err) == KILN_OK)
                assert_int_not_equal(kiln_session_run(run.session, &err), KILN_OK);
            kiln_tensor_free(x);
            kiln_session_free(run.session);
            kiln_program_free(run.program);
            kiln_tensor_free(w);
            kiln_tensor_free(b);
        }
}

/*
 * The text format spells every attribute the family takes (ints lists, a
 * string, an int) through the registry: disassembling a program and
 * assembling the text gives the same artifact bytes (the weights are
 * small constants, so the text carries them inline).
 */
static void text_round_trip_is_exact(void **state)
{
    (void)state;
    kiln_error err;
    int64_t ws[4] = {2, 1, 2, 2}, two = 2, strides[2] = {2, 1}, dil[2] = {1, 2}, pads[4] = {1, 0, 0, 1};
    int64_t op[2] = {1, 0};
    kiln_tensor *w = new_tensor(KILN_F32, 4, ws), *b = new_tensor(KILN_F32, 1, &two);
    prng rng = {59};
    ots_fill(w, &rng, 0);
    ots_fill(b, &rng, 0);
    kiln_attribute conv_attrs[4] = {
        {.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "SAME_LOWER"},
        {.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = dil, .count = 2},
        {.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 2},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    kiln_attribute transpose_attrs[4] = {
        {.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 2},
        {.name = "output_padding", .type = KILN_ATTRIBUTE_INTS, .ints = op, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    kiln_builder *builder;
    kiln_value x, wv, bv, y, z;
    assert_int_equal(kiln_builder_new("conv_text", &builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(builder, "h", 4, 12, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(builder, "x", KILN_F32, "[1, 2, h, 6]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(builder, "w", KILN_WEIGHT_CONSTANT, KILN_F32, 4, ws, w->data, &wv, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(builder, "b", KILN_WEIGHT_CONSTANT, KILN_F32, 1, &two, b->data, &bv,
                                             &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(builder, "conv", 3, (kiln_value[]){x, wv, bv}, 4,
                                                         conv_attrs, &y, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(builder, "conv_transpose", 2, (kiln_value[]){y, wv}, 4,
                                                         transpose_attrs, &z, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(builder, "z", z, &err), KILN_OK);
    static const char *const expected[] = {"auto_pad=", "output_padding="};
    ots_assert_text_round_trip(builder, "conv.ktxt", NULL, expected, OTS_COUNT(expected));
    kiln_tensor_free(w);
    kiln_tensor_free(b);
}

/* ---------------------------------------------------- static refusals */

static kiln_tensor *zeros(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_tensor(dtype, rank, shape);
    memset(t->data, 0, t->byte_size);
    return t;
}

static void channels_and_groups_are_proven(void **state)
{
    (void)state;
    kiln_error err;
    kiln_dim_decl dims[3] = {{"n", 1, 4, 1}, {"c", 2, 8, 1}, {"e", 2, 8, 2}};
    int64_t ws[4] = {4, 3, 3, 3}, ws_g[4] = {4, 1, 3, 3}, ws_t[4] = {6, 2, 3, 3}, three = 3;
    kiln_tensor *w = zeros(KILN_F32, 4, ws), *wg = zeros(KILN_F32, 4, ws_g), *wt = zeros(KILN_F32, 4, ws_t);
    kiln_tensor *b3 = zeros(KILN_F32, 1, &three);
    /* Channel mismatch: 5 input channels against a weight for 3. */
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, 5, 9, 9]", w, NULL, 0, NULL, NULL, &err),
            "node 0 (conv)", "it is not true that x axis 1 size 5 equals weight axis 1 size 3 times group 1");
    /* Symbolic channels against a constant: a counterexample from the domain. */
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, c, 9, 9]", w, NULL, 0, NULL, NULL, &err),
            "node 0 (conv)", "x axis 1 size c equals weight axis 1 size 3 times group 1", "counterexample: c=");
    /* group 2 does not divide c in 2..8: c=3 shows it; e multiple_of 2 is proven divisible. */
    kiln_attribute g2[1] = {{.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 2}};
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, c, 9, 9]", wg, NULL, 1, g2, NULL, &err), "node 0 (conv)",
            "x axis 1 size c is divisible by group 2", "dims: c in 2..8", "counterexample: c=3",
            "multiple_of that group divides");
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, e, 9, 9]", wg, NULL, 1, g2, NULL, &err),
            "x axis 1 size e equals weight axis 1 size 1 times group 2", "counterexample: e=4");
    /* Constant channels not divisible by the group. */
    kiln_attribute g4[1] = {{.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 4}};
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, 6, 9, 9]", wg, NULL, 1, g4, NULL, &err),
            "it is not true that x axis 1 size 6 is divisible by group 4. Use a group that divides the channel count");
    /* Output channels (weight axis 0 = 4) not divisible by group 3 (input 3 = 1 * 3). */
    kiln_attribute g3[1] = {{.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 3}};
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, 3, 9, 9]", wg, NULL, 1, g3, NULL, &err),
            "weight axis 0 size 4 is divisible by group 3");
    /* Depthwise (group = channels = 4) is accepted. */
    assert_int_equal(build_program("conv", KILN_F32, dims, 3, "[n, 4, 9, 9]", wg, NULL, 1, g4, NULL, &err), KILN_OK);
    /* Bias of the wrong size. */
    REFUSED(build_program("conv", KILN_F32, dims, 3, "[n, 3, 9, 9]", w, b3, 0, NULL, NULL, &err),
            "bias (input 2) size 3 equals the output channels 4");
    /* conv_transpose: x channels equal weight axis 0; bias equals weight axis 1 times group. */
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 3, "[n, 4, 5, 5]", wt, NULL, 0, NULL, NULL, &err),
            "node 0 (conv_transpose)", "x axis 1 size 4 equals weight axis 0 size 6");
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 3, "[n, 6, 5, 5]", wt, b3, 1, g2, NULL, &err),
            "bias (input 2) size 3 equals the output channels 4");
    assert_int_equal(build_program("conv_transpose", KILN_F32, dims, 3, "[n, 6, 5, 5]", wt, NULL, 1, g2, NULL, &err),
                     KILN_OK);
    kiln_tensor_free(w);
    kiln_tensor_free(wg);
    kiln_tensor_free(wt);
    kiln_tensor_free(b3);
}

static void windows_are_proven_to_fit(void **state)
{
    (void)state;
    kiln_error err;
    kiln_dim_decl dims[3] = {{"n", 1, 4, 1}, {"h", 2, 32, 1}, {"w", 5, 32, 1}};
    int64_t ws[4] = {2, 1, 5, 3};
    kiln_tensor *w = zeros(KILN_F64, 4, ws);
    /* A 5-tall kernel over h in 2..32 without pads: h = 2 does not fit. */
    REFUSED(build_program("conv", KILN_F64, dims, 3, "[n, 1, h, w]", w, NULL, 0, NULL, NULL, &err), "node 0 (conv)",
            "x axis 2 size h padded by 0+0 covers the dilated kernel 5", "dims: h in 2..32", "counterexample: h=",
            "Declare the dims so that x axis 2 is at least 5");
    /* Pads 2+1 make h >= 2 enough; w >= 5 covers 3 with any dilation up to 2. */
    int64_t pads[4] = {2, 0, 1, 0}, dil[2] = {1, 2};
    kiln_attribute padded[2] = {{.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = dil, .count = 2},
                                {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    assert_int_equal(build_program("conv", KILN_F64, dims, 3, "[n, 1, h, w]", w, NULL, 2, padded, NULL, &err), KILN_OK);
    /* Dilation 3 makes the 3-wide kernel 7 wide: w = 5 does not fit. */
    int64_t dil3[2] = {1, 3};
    padded[0].ints = dil3;
    REFUSED(build_program("conv", KILN_F64, dims, 3, "[n, 1, h, w]", w, NULL, 2, padded, NULL, &err),
            "x axis 3 size w padded by 0+0 covers the dilated kernel 7", "counterexample: w=");
    /* Constant extents: it is simply false. */
    REFUSED(build_program("conv", KILN_F64, dims, 3, "[n, 1, 4, 8]", w, NULL, 0, NULL, NULL, &err),
            "it is not true that x axis 2 size 4 padded by 0+0 covers the dilated kernel 5",
            "Pad x axis 2 by at least 1 in all");
    /* SAME needs a non-empty input. */
    kiln_dim_decl empty[2] = {{"n", 1, 4, 1}, {"h", 0, 8, 1}};
    kiln_attribute same[1] = {{.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "SAME_UPPER"}};
    REFUSED(build_program("conv", KILN_F64, empty, 2, "[n, 1, h, 9]", w, NULL, 1, same, NULL, &err),
            "x axis 2 size h is at least 1 (auto_pad SAME)", "counterexample: h=0");
    /* conv_transpose whose pads eat the whole output at h = 1. */
    kiln_dim_decl small[2] = {{"n", 1, 4, 1}, {"h", 1, 8, 1}};
    int64_t wts[4] = {1, 1, 2, 2}, big_pads[4] = {1, 0, 1, 0};
    kiln_tensor *wt = zeros(KILN_F64, 4, wts);
    kiln_attribute crop[1] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = big_pads, .count = 4}};
    REFUSED(build_program("conv_transpose", KILN_F64, small, 2, "[n, 1, h, 4]", wt, NULL, 1, crop, NULL, &err),
            "output axis 2 size h - 1 (from x axis 2 size h) is at least 1", "counterexample: h=1");
    kiln_tensor_free(w);
    kiln_tensor_free(wt);
}

static void attributes_dtypes_and_ranks_are_checked(void **state)
{
    (void)state;
    kiln_error err;
    kiln_dim_decl dims[1] = {{"n", 1, 4, 1}};
    int64_t ws[4] = {2, 3, 3, 3}, ws1[3] = {2, 3, 3};
    kiln_tensor *w = zeros(KILN_F32, 4, ws), *w1 = zeros(KILN_F32, 3, ws1), *wi = zeros(KILN_I32, 4, ws);
    int64_t three[3] = {1, 1, 1}, zero[2] = {0, 1}, pads3[3] = {1, 1, 1}, neg[4] = {0, -1, 0, 0}, k4[2] = {4, 3};
    struct {
        kiln_attribute attribute;
        const char *fragment;
    } bad[] = {
        {{.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = three, .count = 3},
         "strides has 3 values, expected 2 (one per spatial axis)"},
        {{.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = zero, .count = 2}, "strides[0] = 0 is outside 1.."},
        {{.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = three, .count = 1},
         "dilations has 1 values, expected 2"},
        {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads3, .count = 3},
         "pads has 3 values, expected 4 (begin then end per spatial axis)"},
        {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = neg, .count = 4}, "pads[1] = -1 is outside 0.."},
        {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k4, .count = 2},
         "kernel_shape[0] = 4 differs from the weight's kernel extent 3"},
        {{.name = "group", .type = KILN_ATTRIBUTE_INT, .i = 0}, "group must be in 1.."},
        {{.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "SAME"},
         "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got 'SAME'"},
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        const char *fragments[2] = {"node 0 (conv)", bad[i].fragment};
        ots_assert_refused(build_program("conv", KILN_F32, dims, 1, "[n, 3, 9, 9]", w, NULL, 1, &bad[i].attribute, NULL,
                                     &err),
                       &err, fragments, 2);
    }
    /* pads with auto_pad. */
    int64_t pads[4] = {1, 1, 1, 1};
    kiln_attribute both[2] = {{.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "VALID"},
                              {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    REFUSED(build_program("conv", KILN_F32, dims, 1, "[n, 3, 9, 9]", w, NULL, 2, both, NULL, &err),
            "pads cannot be given with auto_pad VALID");
    /* output_padding: as large as both stride and dilation. */
    int64_t op1[2] = {1, 0};
    kiln_attribute outpad[1] = {{.name = "output_padding", .type = KILN_ATTRIBUTE_INTS, .ints = op1, .count = 2}};
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 1, outpad, NULL, &err),
            "output_padding[0] = 1 must be smaller than the stride 1 or the dilation 1");
    /* output_shape: one per spatial axis, >= 1, not with pads or VALID. */
    int64_t shape3[3] = {4, 4, 4}, shape0[2] = {0, 4}, shape_ok[2] = {6, 6};
    kiln_attribute shaped[2] = {{.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape3, .count = 3},
                                {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 1, shaped, NULL, &err),
            "node 0 (conv_transpose)", "output_shape has 3 values, expected 2");
    shaped[0].ints = shape0;
    shaped[0].count = 2;
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 1, shaped, NULL, &err),
            "output_shape[0] = 0 is outside 1..");
    shaped[0].ints = shape_ok;
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 2, shaped, NULL, &err),
            "pads cannot be given with output_shape");
    kiln_attribute shaped_valid[2] = {{.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "VALID"}, shaped[0]};
    REFUSED(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 2, shaped_valid, NULL, &err),
            "output_shape cannot be given with auto_pad VALID");
    assert_int_equal(build_program("conv_transpose", KILN_F32, dims, 1, "[n, 2, 4, 4]", w, NULL, 1, shaped, NULL, &err),
                     KILN_OK);
    /* conv takes no output_padding (the common attribute check). */
    assert_int_equal(build_program("conv", KILN_F32, dims, 1, "[n, 3, 9, 9]", w, NULL, 1, outpad, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    /* Dtypes and ranks. */
    REFUSED(build_program("conv", KILN_I32, dims, 1, "[n, 3, 9, 9]", wi, NULL, 0, NULL, NULL, &err),
            "conv does not support dtype i32");
    REFUSED(build_program("conv", KILN_F64, dims, 1, "[n, 3, 9, 9]", w, NULL, 0, NULL, NULL, &err), "dtypes differ");
    REFUSED(build_program("conv", KILN_F32, dims, 1, "[n, 3, 9, 9]", w1, NULL, 0, NULL, NULL, &err),
            "weight (input 1) must have the rank of x (4), got rank 3");
    REFUSED(build_program("conv", KILN_F32, dims, 1, "[n, 3]", w, NULL, 0, NULL, NULL, &err),
            "needs x of rank 3, 4 or 5");
    kiln_tensor_free(w);
    kiln_tensor_free(w1);
    kiln_tensor_free(wi);
}

/* The shape rule refuses a kernel extent that is not a constant. */
static void kernel_extents_must_be_constant(void **state)
{
    (void)state;
    kiln_dim_decl dims[2] = {{"n", 1, 4, 1}, {"k", 1, 3, 1}};
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_error err;
    kiln_value_type x = {.dtype = KILN_F32, .shape = {.rank = 3}}, w = x;
    assert_int_equal(kiln_expr_dim(&pool, 0, 2, &x.shape.axes[0], &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 2, &x.shape.axes[1], &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 9, &x.shape.axes[2], &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 2, &w.shape.axes[0], &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 2, &w.shape.axes[1], &err), KILN_OK);
    assert_int_equal(kiln_expr_dim(&pool, 1, 2, &w.shape.axes[2], &err), KILN_OK);
    const kiln_value_type *in[2] = {&x, &w};
    kiln_shape_context ctx = {&pool, dims, 2, "node 7 (conv)", NULL, 0, NULL, 0, NULL, NULL, 0, NULL, 0};
    kiln_value_type out;
    assert_int_equal(kiln_op_find("conv")->infer(&ctx, in, 2, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 7 (conv): weight (input 1) axis 2 size k must be a constant"));
    kiln_expr_pool_release(&pool);
}

/* Kernels called directly re-check shapes, channels and attributes. */
static void kernels_refuse_bad_calls(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {2, 4, 3, 3}, ys[4] = {1, 2, 3, 3}, bad_ys[4] = {1, 2, 4, 3};
    kiln_tensor *x = zeros(KILN_F32, 4, xs), *w = zeros(KILN_F32, 4, ws), *y = zeros(KILN_F32, 4, ys);
    kiln_tensor *bad_y = zeros(KILN_F32, 4, bad_ys), *xd = zeros(KILN_F64, 4, xs);
    kiln_error err;
    attribute_set none = {.count = 0}, g2 = {.count = 0}, strides = {.count = 0};
    add_int(&g2, "group", 2);
    int64_t three[3] = {1, 1, 1};
    add_ints(&strides, "strides", three, 3);
    const kiln_tensor *ok[2] = {x, w}, *mixed[2] = {xd, w}, *one[1] = {x};
    assert_int_equal(run_kernel("conv", ok, 2, y, &none, &err), KILN_OK);
    assert_int_equal(run_kernel("conv", ok, 2, bad_y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "output axis 2 must have size 3, got 4"));
    assert_int_equal(run_kernel("conv", ok, 2, y, &g2, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("conv", ok, 2, y, &strides, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("conv", mixed, 2, y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("conv", one, 1, y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    /* A window that does not fit the call's extents. */
    int64_t small[4] = {1, 4, 2, 5};
    kiln_tensor *xs2 = zeros(KILN_F32, 4, small);
    const kiln_tensor *tight[2] = {xs2, w};
    assert_int_equal(run_kernel("conv", tight, 2, y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "the window does not fit x axis 2 of size 2"));
    /* conv_transpose: weight axis 0 must be the input channels. */
    int64_t tws[4] = {3, 2, 3, 3};
    kiln_tensor *tw = zeros(KILN_F32, 4, tws);
    const kiln_tensor *tbad[2] = {x, tw};
    int64_t tys[4] = {1, 2, 7, 7};
    kiln_tensor *ty = zeros(KILN_F32, 4, tys);
    assert_int_equal(run_kernel("conv_transpose", tbad, 2, ty, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(x);
    kiln_tensor_free(w);
    kiln_tensor_free(y);
    kiln_tensor_free(bad_y);
    kiln_tensor_free(xd);
    kiln_tensor_free(xs2);
    kiln_tensor_free(tw);
    kiln_tensor_free(ty);
}

/*
 * The largest dilation and pad accepted: a 2-tap kernel 2^24 + 1 wide over
 * a one-element input, whose second tap is the only one in the input.
 */
static void hostile_extents_stay_exact(void **state)
{
    (void)state;
    int64_t one[3] = {1, 1, 1}, ws[3] = {1, 1, 2}, big = (int64_t)1 << 24;
    int64_t dilations[1] = {big}, pads[2] = {big, 0};
    kiln_tensor *x = new_tensor(KILN_F64, 3, one), *w = new_tensor(KILN_F64, 3, ws), *y = new_tensor(KILN_F64, 3, one);
    ((double *)x->data)[0] = 3.0;
    ((double *)w->data)[0] = 100.0;
    ((double *)w->data)[1] = 0.5;
    attribute_set set = {.count = 0};
    add_ints(&set, "dilations", dilations, 1);
    add_ints(&set, "pads", pads, 2);
    const kiln_tensor *in[2] = {x, w};
    check_shape_rule("conv", in, 2, &set, y);
    kiln_error err;
    assert_int_equal(run_kernel("conv", in, 2, y, &set, &err), KILN_OK);
    assert_true(((double *)y->data)[0] == 1.5);
    kiln_tensor_free(x);
    kiln_tensor_free(w);
    kiln_tensor_free(y);
}

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_int_equal(kiln_ops_conv.count, 2);
    assert_family_registered(&kiln_ops_conv, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(conv_differential),
        cmocka_unit_test(conv_transpose_differential),
        cmocka_unit_test(larger_shapes_match),
        cmocka_unit_test(onnx_examples),
        cmocka_unit_test(symbolic_output_sizes),
        cmocka_unit_test(ops_run_end_to_end),
        cmocka_unit_test(text_round_trip_is_exact),
        cmocka_unit_test(channels_and_groups_are_proven),
        cmocka_unit_test(windows_are_proven_to_fit),
        cmocka_unit_test(attributes_dtypes_and_ranks_are_checked),
        cmocka_unit_test(kernel_extents_must_be_constant),
        cmocka_unit_test(kernels_refuse_bad_calls),
        cmocka_unit_test(hostile_extents_stay_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
