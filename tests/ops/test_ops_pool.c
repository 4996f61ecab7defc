/*
 * test_ops_pool.c — the pool family (max_pool, avg_pool, global_max_pool,
 * global_avg_pool) against an independent reference written here: 1d, 2d
 * and 3d, batch > 1, strides, explicit and automatic pads, dilations,
 * ceil_mode, count_include_pad, f32 and f64, edge sizes (kernel as large as
 * the padded input, extents of 1), NaN and inf; the shape rule on symbolic
 * dims and end to end through the builder and a session at several points
 * of the domain; and the static refusals.
 *
 * The reference computes output sizes its own way: in ceil_mode it rounds
 * the window count up and then drops the last window when it would start
 * at or after the end of input + begin pad (the rule of spec/ops/pool.md,
 * stated as a correction rather than the closed form the library uses).
 * It walks every output element by a flat index it unflattens by div/mod
 * and every kernel tap by another, testing each position against the
 * bounds, and sums in long double.
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

typedef struct pool_case {
    bool max;
    uint32_t spatial;
    int64_t batch, channels;
    int64_t in[3], kernel[3], strides[3], dilations[3], pads[6];
    const char *auto_pad; /* NULL: no attribute */
    int ceil_mode, count_include_pad;
    int p; /* lp_pool when >= 1 */
} pool_case;

static int64_t ref_ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Output extent and the pads in effect on spatial axis `a`. */
static int64_t ref_extent(const pool_case *c, uint32_t a, int64_t in, int64_t *pad_begin, int64_t *pad_end)
{
    int64_t s = c->strides[a], dk = (c->kernel[a] - 1) * c->dilations[a] + 1;
    bool same = c->auto_pad && strncmp(c->auto_pad, "SAME", 4) == 0;
    bool valid = c->auto_pad && strcmp(c->auto_pad, "VALID") == 0;
    int64_t pb = valid ? 0 : c->pads[a], pe = valid ? 0 : c->pads[c->spatial + a];
    int64_t out;
    if (same) {
        out = ref_ceil_div(in, s);
        int64_t total = (out - 1) * s + dk - in;
        total = total < 0 ? 0 : total;
        pb = strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        pe = total - pb;
    } else if (c->ceil_mode) {
        out = ref_ceil_div(in + pb + pe - dk, s) + 1;
        if ((out - 1) * s >= in + pb)
            out--;
    } else {
        out = (in + pb + pe - dk) / s + 1;
    }
    *pad_begin = pb;
    *pad_end = pe;
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

static void reference(const pool_case *c, const kiln_tensor *x, kiln_tensor *y)
{
    uint32_t n = c->spatial, rank = n + 2;
    int64_t pb[3], pe[3], taps = 1;
    for (uint32_t a = 0; a < n; a++) {
        ref_extent(c, a, x->shape[a + 2], &pb[a], &pe[a]);
        taps *= c->kernel[a];
    }
    for (uint64_t f = 0; f < y->element_count; f++) {
        int64_t oi[KILN_MAX_RANK], xi[KILN_MAX_RANK], k[3];
        unflatten(f, rank, y->shape, oi);
        long double sum = 0, best = -INFINITY, norm = 0;
        int64_t inside_count = 0, padded_count = 0;
        bool nan = false;
        for (int64_t t = 0; t < taps; t++) {
            unflatten((uint64_t)t, n, c->kernel, k);
            bool inside = true, in_padded = true;
            xi[0] = oi[0];
            xi[1] = oi[1];
            for (uint32_t a = 0; a < n; a++) {
                int64_t p = oi[a + 2] * c->strides[a] - pb[a] + k[a] * c->dilations[a];
                xi[a + 2] = p;
                inside = inside && p >= 0 && p < x->shape[a + 2];
                in_padded = in_padded && p >= -pb[a] && p < x->shape[a + 2] + pe[a];
            }
            padded_count += in_padded;
            if (!inside)
                continue;
            inside_count++;
            long double v = ots_load(x, flatten(rank, x->shape, xi));
            sum += v;
            norm += powl(fabsl(v), c->p);
            if (isnan(v))
                nan = true;
            else if (v > best)
                best = v;
        }
        if (c->p)
            ots_store(y, f, powl(norm, 1.0L / c->p));
        else if (c->max)
            ots_store(y, f, nan ? NAN : best);
        else {
            int64_t divisor = c->count_include_pad ? padded_count : inside_count;
            ots_store(y, f, divisor ? sum / divisor : NAN);
        }
    }
}

/* ------------------------------------------------------------ comparing */

static void assert_tensors_match(const kiln_tensor *actual, const kiln_tensor *expected, const char *what)
{
    ots_assert_close(actual, expected, what, 4e-7, 1e-14);
}

/* The case's attributes, sorted by name; defaults are spelled out on odd `variant`s only. */
static void case_attributes(pool_case *c, int variant, attribute_set *set)
{
    uint32_t n = c->spatial;
    bool spell = variant % 2 == 1;
    set->count = 0;
    if (c->auto_pad)
        add_string(set, "auto_pad", c->auto_pad);
    if (spell || c->ceil_mode)
        add_int(set, "ceil_mode", c->ceil_mode);
    if (!c->max && (spell || c->count_include_pad))
        add_int(set, "count_include_pad", c->count_include_pad);
    add_ints(set, "dilations", c->dilations, n);
    add_ints(set, "kernel_shape", c->kernel, n);
    if (c->p && (spell || c->p != 2))
        add_int(set, "p", c->p);
    if (!c->auto_pad || strcmp(c->auto_pad, "NOTSET") == 0)
        add_ints(set, "pads", c->pads, 2 * n);
    add_ints(set, "strides", c->strides, n);
}

static kiln_status run_kernel(const char *name, const kiln_tensor *x, kiln_tensor *out, const attribute_set *set,
                              kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    assert_non_null(op);
    /* Poison the output: a kernel that skips an element must not pass on a zeroed buffer. */
    memset(out->data, 0x7F, out->byte_size);
    const kiln_tensor *in[1] = {x};
    kiln_kernel_call call = {in, 1, out, set->items, set->count, NULL};
    return op->run(&call, err);
}

/* The shape rule on constant extents must give `expected`. */
static void check_shape_rule(const char *name, const kiln_tensor *x, const attribute_set *set,
                             const kiln_tensor *expected)
{
    const kiln_op_def *op = kiln_op_find(name);
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_error err;
    kiln_value_type type = {.dtype = x->dtype, .shape = {.rank = x->rank}};
    for (uint32_t a = 0; a < x->rank; a++)
        assert_int_equal(kiln_expr_const(&pool, x->shape[a], &type.shape.axes[a], &err), KILN_OK);
    const kiln_value_type *in[1] = {&type};
    kiln_shape_context ctx = {&pool, NULL, 0, "node 0 (test)", set->items, set->count, NULL, 0, NULL, NULL, 0, NULL, 0};
    kiln_value_type out;
    kiln_status status = op->infer(&ctx, in, 1, &out, &err);
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

static void check_case(pool_case *c, prng *rng, bool specials)
{
    const char *name = c->p ? "lp_pool" : c->max ? "max_pool" : "avg_pool";
    uint32_t rank = c->spatial + 2;
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        kiln_dtype dt = float_dtypes[d];
        int64_t xs[KILN_MAX_RANK] = {c->batch, c->channels}, ys[KILN_MAX_RANK] = {c->batch, c->channels};
        for (uint32_t a = 0; a < c->spatial; a++) {
            int64_t pb, pe;
            xs[a + 2] = c->in[a];
            ys[a + 2] = ref_extent(c, a, c->in[a], &pb, &pe);
        }
        kiln_tensor *x = new_tensor(dt, rank, xs), *y = new_tensor(dt, rank, ys), *expected = new_tensor(dt, rank, ys);
        ots_fill(x, rng, specials ? 20 : 0);
        reference(c, x, expected);
        for (int variant = 0; variant < 2; variant++) {
            attribute_set set;
            case_attributes(c, variant, &set);
            check_shape_rule(name, x, &set, expected);
            kiln_error err;
            kiln_status status = run_kernel(name, x, y, &set, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", name, err.message);
            assert_int_equal(status, KILN_OK);
            assert_tensors_match(y, expected, name);
        }
        kiln_tensor_free(x);
        kiln_tensor_free(y);
        kiln_tensor_free(expected);
    }
}

/* ------------------------------------------------------- differential */

#define ONES {1, 1, 1}
#define NO_PADS {0, 0, 0, 0, 0, 0}

/* Cases for both ops: `max` is set per run. */
static pool_case window_cases[] = {
    /* 1d. */
    {false, 1, 2, 3, {9}, {3}, ONES, ONES, NO_PADS, NULL, 0, 0, 0},
    {false, 1, 1, 2, {10}, {3}, {2}, ONES, {1, 1}, NULL, 0, 0, 0},
    {false, 1, 1, 2, {10}, {2}, {3}, {2}, {1, 0}, NULL, 1, 0, 0},
    /* 2d: 3x3 s2 p1 (the usual), 2x2 s2, asymmetric pads, dilation. */
    {false, 2, 2, 3, {7, 8}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 1}, NULL, 0, 0, 0},
    {false, 2, 2, 3, {7, 8}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 1}, NULL, 1, 0, 0},
    {false, 2, 1, 2, {6, 7}, {2, 2}, {2, 2}, ONES, NO_PADS, NULL, 1, 0, 0},
    {false, 2, 1, 2, {6, 5}, {2, 3}, {1, 2}, {2, 1}, {0, 2, 1, 0}, NULL, 0, 0, 0},
    {false, 2, 1, 1, {9, 8}, {3, 2}, {3, 3}, {2, 2}, {2, 1, 1, 1}, NULL, 1, 0, 0},
    /* ceil_mode where the rounded-up window would start in the end pad and is dropped. */
    {false, 1, 1, 1, {6}, {2}, {3}, ONES, NO_PADS, NULL, 1, 0, 0},
    {false, 1, 1, 1, {5}, {3}, {3}, ONES, {1, 1}, NULL, 1, 0, 0},
    {false, 1, 1, 1, {8}, {2}, {4}, ONES, {0, 1}, NULL, 1, 0, 0},
    /* Edges: kernel as large as the padded input, extents of 1. */
    {false, 2, 1, 2, {3, 4}, {5, 4}, ONES, ONES, {1, 0, 1, 0}, NULL, 0, 0, 0},
    {false, 2, 1, 1, {1, 1}, {1, 1}, ONES, ONES, NO_PADS, NULL, 0, 0, 0},
    {false, 1, 1, 1, {1}, {2}, ONES, ONES, {1, 0}, NULL, 1, 0, 0},
    /* auto_pad. */
    {false, 2, 1, 2, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, "SAME_UPPER", 0, 0, 0},
    {false, 2, 1, 2, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, "SAME_LOWER", 0, 0, 0},
    {false, 2, 1, 2, {5, 8}, {2, 4}, {3, 1}, {2, 1}, NO_PADS, "SAME_UPPER", 0, 0, 0},
    {false, 2, 1, 2, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, "VALID", 0, 0, 0},
    {false, 2, 1, 2, {7, 6}, {3, 2}, {2, 2}, ONES, NO_PADS, "VALID", 1, 0, 0},
    /* 3d. */
    {false, 3, 2, 2, {4, 5, 6}, {2, 3, 3}, {1, 2, 2}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, NULL, 0, 0, 0},
    {false, 3, 1, 2, {5, 4, 5}, {3, 2, 2}, {2, 2, 2}, ONES, {1, 0, 0, 1, 1, 1}, NULL, 1, 0, 0},
};

static void max_pool_differential(void **state)
{
    (void)state;
    prng rng = {61};
    for (size_t i = 0; i < COUNT(window_cases); i++) {
        pool_case c = window_cases[i];
        c.max = true;
        check_case(&c, &rng, false);
        /* NaN wins its window; inf and -inf take part like any value. */
        check_case(&c, &rng, true);
    }
}

static void avg_pool_differential(void **state)
{
    (void)state;
    prng rng = {67};
    for (size_t i = 0; i < COUNT(window_cases); i++)
        for (int include = 0; include < 2; include++) {
            pool_case c = window_cases[i];
            c.max = false;
            c.count_include_pad = include;
            check_case(&c, &rng, false);
        }
    pool_case c = window_cases[3];
    check_case(&c, &rng, true);
}

static void lp_pool_differential(void **state)
{
    (void)state;
    prng rng = {83};
    for (size_t i = 0; i < COUNT(window_cases); i++)
        for (int p = 1; p <= 3; p++) {
            pool_case c = window_cases[i];
            c.p = p;
            check_case(&c, &rng, false);
        }
    pool_case c = window_cases[3];
    c.p = 2;
    check_case(&c, &rng, true);
}

/* A window whose taps all fall in the padding (dilation jumps over the input): -inf for max, 0/0 for avg, 0 for lp. */
static void windows_that_see_no_input(void **state)
{
    (void)state;
    prng rng = {71};
    pool_case c = {true, 1, 1, 1, {1}, {2}, ONES, {3}, {1, 2}, NULL, 0, 0, 0};
    check_case(&c, &rng, false);
    c.max = false;
    check_case(&c, &rng, false);
    c.count_include_pad = 1;
    check_case(&c, &rng, false);
    c.count_include_pad = 0;
    c.p = 2;
    check_case(&c, &rng, false);
}

static void global_pools_differential(void **state)
{
    (void)state;
    prng rng = {73};
    static const struct {
        uint32_t rank;
        int64_t shape[KILN_MAX_RANK];
    } shapes[] = {{3, {2, 3, 5}}, {4, {2, 2, 3, 4}}, {5, {1, 3, 2, 3, 2}}, {4, {1, 1, 1, 1}}, {4, {0, 3, 2, 2}},
                  {6, {1, 2, 2, 1, 2, 3}}};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (size_t s = 0; s < COUNT(shapes); s++)
            for (int kind = 0; kind < 3; kind++) /* avg, max, lp with p = 3 */
                for (int specials = 0; specials < 2; specials++) {
                    kiln_dtype dt = float_dtypes[d];
                    uint32_t rank = shapes[s].rank;
                    int64_t ys[KILN_MAX_RANK] = {shapes[s].shape[0], shapes[s].shape[1], 1, 1, 1, 1, 1, 1};
                    kiln_tensor *x = new_tensor(dt, rank, shapes[s].shape), *y = new_tensor(dt, rank, ys);
                    kiln_tensor *expected = new_tensor(dt, rank, ys);
                    ots_fill(x, &rng, specials == 1 ? 20 : 0);
                    /* Reference: each output element scans x for the elements of its [n, c]. */
                    for (uint64_t o = 0; o < expected->element_count; o++) {
                        long double sum = 0, best = -INFINITY, count = 0, cubes = 0;
                        bool nan = false;
                        for (uint64_t i = 0; i < x->element_count; i++) {
                            int64_t index[KILN_MAX_RANK];
                            unflatten(i, rank, x->shape, index);
                            if ((uint64_t)(index[0] * x->shape[1] + index[1]) != o)
                                continue;
                            long double v = ots_load(x, i);
                            sum += v;
                            cubes += fabsl(v) * fabsl(v) * fabsl(v);
                            count += 1;
                            nan = nan || isnan(v);
                            if (v > best)
                                best = v;
                        }
                        ots_store(expected, o, kind == 1 ? (nan ? NAN : best) : kind == 2 ? cbrtl(cubes) : sum / count);
                    }
                    static const char *const names[3] = {"global_avg_pool", "global_max_pool", "global_lp_pool"};
                    const char *name = names[kind];
                    attribute_set set = {.count = 0};
                    if (kind == 2)
                        add_int(&set, "p", 3);
                    check_shape_rule(name, x, &set, expected);
                    kiln_error err;
                    assert_int_equal(run_kernel(name, x, y, &set, &err), KILN_OK);
                    assert_tensors_match(y, expected, name);
                    kiln_tensor_free(x);
                    kiln_tensor_free(y);
                    kiln_tensor_free(expected);
                }
}

/*
 * Examples published with the ONNX MaxPool and AveragePool operators: known
 * answers that do not depend on the reference above.
 */
static void onnx_examples(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 1, 4, 4}, x5s[4] = {1, 1, 5, 5}, ys[4] = {1, 1, 2, 2}, y3s[4] = {1, 1, 3, 3};
    kiln_tensor *x = new_tensor(KILN_F32, 4, xs), *x5 = new_tensor(KILN_F32, 4, x5s);
    kiln_tensor *y = new_tensor(KILN_F32, 4, ys), *y3 = new_tensor(KILN_F32, 4, y3s);
    for (uint64_t i = 0; i < x->element_count; i++)
        ots_store(x, i, (double)(i + 1));
    for (uint64_t i = 0; i < x5->element_count; i++)
        ots_store(x5, i, (double)(i + 1));
    int64_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, d2[2] = {2, 2};
    kiln_error err;
    /* maxpool_2d_ceil and averagepool_2d_ceil: 4x4 of 1..16, kernel 3, stride 2, ceil_mode. */
    attribute_set ceil = {.count = 0};
    add_int(&ceil, "ceil_mode", 1);
    add_ints(&ceil, "kernel_shape", k3, 2);
    add_ints(&ceil, "strides", s2, 2);
    check_shape_rule("max_pool", x, &ceil, y);
    static const double max_ceil[4] = {11, 12, 15, 16}, avg_ceil[4] = {6, 7.5, 12, 13.5};
    assert_int_equal(run_kernel("max_pool", x, y, &ceil, &err), KILN_OK);
    for (uint64_t i = 0; i < 4; i++)
        assert_true(ots_load(y, i) == max_ceil[i]);
    assert_int_equal(run_kernel("avg_pool", x, y, &ceil, &err), KILN_OK);
    for (uint64_t i = 0; i < 4; i++)
        assert_true(ots_load(y, i) == avg_ceil[i]);
    /* maxpool_2d_dilations: kernel 2, dilation 2. */
    attribute_set dilated = {.count = 0};
    add_ints(&dilated, "dilations", d2, 2);
    add_ints(&dilated, "kernel_shape", k2, 2);
    assert_int_equal(run_kernel("max_pool", x, y, &dilated, &err), KILN_OK);
    for (uint64_t i = 0; i < 4; i++)
        assert_true(ots_load(y, i) == max_ceil[i]);
    /* maxpool_2d_same_upper: 5x5 of 1..25, kernel 3, stride 2. */
    attribute_set same = {.count = 0};
    add_string(&same, "auto_pad", "SAME_UPPER");
    add_ints(&same, "kernel_shape", k3, 2);
    add_ints(&same, "strides", s2, 2);
    check_shape_rule("max_pool", x5, &same, y3);
    assert_int_equal(run_kernel("max_pool", x5, y3, &same, &err), KILN_OK);
    static const double max_same[9] = {7, 9, 10, 17, 19, 20, 22, 24, 25};
    for (uint64_t i = 0; i < 9; i++)
        assert_true(ots_load(y3, i) == max_same[i]);
    kiln_tensor_free(x);
    kiln_tensor_free(x5);
    kiln_tensor_free(y);
    kiln_tensor_free(y3);
}

/* ------------------------------------------------- symbolic shape rule */

/* max_pool on [n, 3, h, w]: the output sizes are floor-div expressions that evaluate right everywhere. */
static void symbolic_output_sizes(void **state)
{
    (void)state;
    kiln_dim_decl dims[3] = {{"n", 1, 4, 1}, {"h", 8, 40, 1}, {"w", 5, 40, 1}};
    static const char *const names[] = {"n", "h", "w"};
    int64_t kernel[2] = {3, 2}, strides[2] = {2, 3}, pads[4] = {1, 0, 1, 1}, dilations[2] = {1, 2};
    static const char *const modes[] = {NULL, "SAME_LOWER", "VALID"};
    for (size_t m = 0; m < COUNT(modes); m++)
        for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++) {
            pool_case c = {true, 2, 1, 3, {0, 0}, {3, 2}, {2, 3}, {1, 2}, {1, 0, 1, 1}, modes[m], ceil_mode, 0, 0};
            attribute_set set = {.count = 0};
            if (modes[m])
                add_string(&set, "auto_pad", modes[m]);
            add_int(&set, "ceil_mode", ceil_mode);
            add_ints(&set, "dilations", dilations, 2);
            add_ints(&set, "kernel_shape", kernel, 2);
            if (!modes[m])
                add_ints(&set, "pads", pads, 4);
            add_ints(&set, "strides", strides, 2);
            kiln_expr_pool pool;
            kiln_expr_pool_init(&pool);
            kiln_error err;
            kiln_value_type x = {.dtype = KILN_F32, .shape = {.rank = 4}}, out;
            assert_int_equal(kiln_expr_dim(&pool, 0, 3, &x.shape.axes[0], &err), KILN_OK);
            assert_int_equal(kiln_expr_const(&pool, 3, &x.shape.axes[1], &err), KILN_OK);
            assert_int_equal(kiln_expr_dim(&pool, 1, 3, &x.shape.axes[2], &err), KILN_OK);
            assert_int_equal(kiln_expr_dim(&pool, 2, 3, &x.shape.axes[3], &err), KILN_OK);
            const kiln_value_type *in[1] = {&x};
            kiln_shape_context ctx = {&pool, dims, 3, "node 0 (max_pool)", set.items, set.count, NULL, 0, NULL, NULL, 0, NULL, 0};
            kiln_status status = kiln_op_find("max_pool")->infer(&ctx, in, 1, &out, &err);
            if (status != KILN_OK)
                print_error("%s\n", err.message);
            assert_int_equal(status, KILN_OK);
            for (int64_t h = 8; h <= 40; h++)
                for (int64_t w = 5; w <= 40; w++) {
                    int64_t values[3] = {1, h, w}, got, pb, pe;
                    bool bound[3] = {true, true, true};
                    assert_int_equal(kiln_expr_eval(&pool, out.shape.axes[2], values, bound, &got, &err), KILN_OK);
                    assert_int_equal(got, ref_extent(&c, 0, h, &pb, &pe));
                    assert_int_equal(kiln_expr_eval(&pool, out.shape.axes[3], values, bound, &got, &err), KILN_OK);
                    assert_int_equal(got, ref_extent(&c, 1, w, &pb, &pe));
                }
            if (!modes[m]) {
                char text[128];
                kiln_expr_format(&pool, out.shape.axes[2], names, text, sizeof text);
                /* floor: (h + 2 - 3) / 2 + 1; ceil: slack 2 + 1 - 3 = 0, so (h + 1 - 1) / 2 + 1. */
                assert_string_equal(text, ceil_mode ? "h / 2 + 1" : "(h - 1) / 2 + 1");
            }
            kiln_expr_pool_release(&pool);
        }
}

/* ---------------------------------------------------------- end to end */

typedef struct program_run {
    kiln_program *program;
    kiln_session *session;
} program_run;

static kiln_status build_program(const char *op, kiln_dtype dtype, const kiln_dim_decl *dims, uint32_t dim_count,
                                 const char *x_shape, uint32_t attribute_count, const kiln_attribute *attributes,
                                 program_run *run, kiln_error *err)
{
    kiln_builder *b;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("pool", &b, err), KILN_OK);
    for (uint32_t d = 0; d < dim_count; d++)
        assert_int_equal(kiln_builder_add_dim(b, dims[d].name, dims[d].min, dims[d].max, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, x_shape, &x, err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, 1, &x, attribute_count, attributes, &y, err);
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

/* max_pool (ceil_mode) and avg_pool (count_include_pad) on x: [n, 2, h, w], run at several points. */
static void ops_run_end_to_end(void **state)
{
    (void)state;
    prng rng = {79};
    kiln_dim_decl dims[3] = {{"n", 1, 3, 1}, {"h", 4, 24, 1}, {"w", 4, 24, 1}};
    int64_t kernel[2] = {3, 3}, strides[2] = {2, 2}, pads[4] = {1, 1, 1, 0};
    static const int64_t points[][3] = {{1, 4, 4}, {2, 9, 13}, {3, 24, 24}, {1, 17, 10}};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (int max = 0; max < 2; max++) {
            kiln_dtype dt = float_dtypes[d];
            kiln_attribute attributes[4] = {
                {.name = max ? "ceil_mode" : "count_include_pad", .type = KILN_ATTRIBUTE_INT, .i = 1},
                {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
                {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
                {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
            };
            pool_case c = {max == 1, 2, 1, 2, {0, 0}, {3, 3}, {2, 2}, ONES, {1, 1, 1, 0}, NULL, max, !max, 0};
            program_run run;
            kiln_error err;
            const char *op = max ? "max_pool" : "avg_pool";
            kiln_status status = build_program(op, dt, dims, 3, "[n, 2, h, w]", 4, attributes, &run, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", op, err.message);
            assert_int_equal(status, KILN_OK);
            for (size_t p = 0; p < COUNT(points); p++) {
                int64_t xs[4] = {points[p][0], 2, points[p][1], points[p][2]}, ys[4] = {points[p][0], 2}, pb, pe;
                ys[2] = ref_extent(&c, 0, xs[2], &pb, &pe);
                ys[3] = ref_extent(&c, 1, xs[3], &pb, &pe);
                kiln_tensor *x = new_tensor(dt, 4, xs), *expected = new_tensor(dt, 4, ys);
                ots_fill(x, &rng, max == 1 ? 20 : 0);
                reference(&c, x, expected);
                assert_int_equal(kiln_session_set_input(run.session, "x", x, &err), KILN_OK);
                status = kiln_session_run(run.session, &err);
                if (status != KILN_OK)
                    print_error("%s: %s\n", op, err.message);
                assert_int_equal(status, KILN_OK);
                assert_tensors_match(kiln_session_output(run.session, 0), expected, op);
                kiln_tensor_free(x);
                kiln_tensor_free(expected);
            }
            kiln_session_free(run.session);
            kiln_program_free(run.program);
        }
}

/*
 * The text format spells the family's attributes (ints lists, a string,
 * ints) through the registry: disassembling a program and assembling the
 * text gives the same artifact bytes.
 */
static void text_round_trip_is_exact(void **state)
{
    (void)state;
    kiln_error err;
    int64_t kernel[2] = {3, 2}, strides[2] = {2, 1}, pads[4] = {1, 0, 1, 1};
    kiln_attribute max_attrs[4] = {
        {.name = "ceil_mode", .type = KILN_ATTRIBUTE_INT, .i = 1},
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    kiln_attribute avg_attrs[3] = {
        {.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "SAME_UPPER"},
        {.name = "count_include_pad", .type = KILN_ATTRIBUTE_INT, .i = 1},
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
    };
    kiln_attribute lp_attrs[1] = {{.name = "p", .type = KILN_ATTRIBUTE_INT, .i = 3}};
    kiln_builder *builder;
    kiln_value x, a, b, c;
    assert_int_equal(kiln_builder_new("pool_text", &builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(builder, "h", 4, 12, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(builder, "x", KILN_F64, "[1, 2, h, 6]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(builder, "max_pool", 1, &x, 4, max_attrs, &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(builder, "avg_pool", 1, &a, 3, avg_attrs, &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(builder, "global_lp_pool", 1, &b, 1, lp_attrs, &c, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(builder, "c", c, &err), KILN_OK);
    static const char *const expected[] = {"ceil_mode=1", "global_lp_pool("};
    ots_assert_text_round_trip(builder, "pool.ktxt", NULL, expected, OTS_COUNT(expected));
}

/* ---------------------------------------------------- static refusals */

static void windows_are_proven_to_fit(void **state)
{
    (void)state;
    kiln_error err;
    kiln_dim_decl dims[2] = {{"n", 1, 4, 1}, {"h", 2, 32, 1}};
    int64_t k3[1] = {3}, k5[1] = {5}, p1[2] = {1, 1}, d2[1] = {2};
    kiln_attribute kernel3[1] = {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k3, .count = 1}};
    /* A 3-wide kernel over h in 2..32: h = 2 does not fit; pads 1+1 make it fit. */
    REFUSED(build_program("max_pool", KILN_F32, dims, 2, "[n, 2, h]", 1, kernel3, NULL, &err), "node 0 (max_pool)",
            "x axis 2 size h padded by 0+0 covers the dilated kernel 3", "dims: h in 2..32", "counterexample: h=2",
            "Declare the dims so that x axis 2 is at least 3");
    kiln_attribute padded[2] = {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k3, .count = 1},
                                {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = p1, .count = 2}};
    assert_int_equal(build_program("avg_pool", KILN_F32, dims, 2, "[n, 2, h]", 2, padded, NULL, &err), KILN_OK);
    /* Dilation 2 makes the kernel 5 wide. */
    kiln_attribute dilated[2] = {{.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = d2, .count = 1},
                                 {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k3, .count = 1}};
    REFUSED(build_program("max_pool", KILN_F32, dims, 2, "[n, 2, h]", 2, dilated, NULL, &err),
            "covers the dilated kernel 5", "counterexample: h=");
    /* Constant extents. */
    kiln_attribute kernel5[1] = {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k5, .count = 1}};
    REFUSED(build_program("avg_pool", KILN_F32, dims, 2, "[n, 2, 4]", 1, kernel5, NULL, &err),
            "it is not true that x axis 2 size 4 padded by 0+0 covers the dilated kernel 5");
    /* Global pools need non-empty spatial axes. */
    kiln_dim_decl empty[2] = {{"n", 1, 4, 1}, {"h", 0, 4, 1}};
    REFUSED(build_program("global_avg_pool", KILN_F32, empty, 2, "[n, 2, h, 3]", 0, NULL, NULL, &err),
            "node 0 (global_avg_pool)", "pooled x axis 2 size h is at least 1", "counterexample: h=0");
    assert_int_equal(build_program("global_max_pool", KILN_F32, dims, 2, "[n, 2, h, 3]", 0, NULL, NULL, &err), KILN_OK);
}

static void attributes_dtypes_and_ranks_are_checked(void **state)
{
    (void)state;
    kiln_error err;
    kiln_dim_decl dims[1] = {{"n", 1, 4, 1}};
    int64_t k2[2] = {2, 2}, k3[3] = {2, 2, 2}, zero[2] = {0, 2}, pads_big[4] = {2, 0, 0, 0}, three[3] = {1, 1, 1};
    struct {
        const char *op;
        kiln_attribute attribute;
        const char *fragment;
    } bad[] = {
        {"max_pool", {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k3, .count = 3},
         "kernel_shape has 3 values, expected 2 (one per spatial axis)"},
        {"avg_pool", {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = zero, .count = 2},
         "kernel_shape[0] = 0 is outside 1.."},
        {"max_pool", {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = three, .count = 3},
         "strides has 3 values, expected 2"},
        {"max_pool", {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads_big, .count = 4},
         "pads on spatial axis 0 (2, 0) must be smaller than the dilated kernel 2"},
        {"max_pool", {.name = "ceil_mode", .type = KILN_ATTRIBUTE_INT, .i = 2}, "ceil_mode must be 0 or 1, got 2"},
        {"avg_pool", {.name = "count_include_pad", .type = KILN_ATTRIBUTE_INT, .i = -1},
         "count_include_pad must be 0 or 1, got -1"},
        {"lp_pool", {.name = "p", .type = KILN_ATTRIBUTE_INT, .i = 0}, "p must be in 1..16777216, got 0"},
        {"avg_pool", {.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = "same_upper"},
         "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got 'same_upper'"},
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        kiln_attribute attributes[2] = {bad[i].attribute,
                                        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k2, .count = 2}};
        /* kernel_shape itself under test: give it once. */
        uint32_t count = strcmp(bad[i].attribute.name, "kernel_shape") == 0 ? 1 : 2;
        if (count == 2 && strcmp(bad[i].attribute.name, "kernel_shape") > 0) {
            attributes[0] = attributes[1];
            attributes[1] = bad[i].attribute;
        }
        const char *fragments[2] = {bad[i].op, bad[i].fragment};
        ots_assert_refused(build_program(bad[i].op, KILN_F32, dims, 1, "[n, 3, 6, 6]", count, attributes, NULL, &err),
                       &err, fragments, 2);
    }
    REFUSED(build_program("max_pool", KILN_F32, dims, 1, "[n, 3, 6, 6]", 0, NULL, NULL, &err), "node 0 (max_pool)",
            "kernel_shape is required");
    kiln_attribute kernel[1] = {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = k2, .count = 2}};
    REFUSED(build_program("max_pool", KILN_I32, dims, 1, "[n, 3, 6, 6]", 1, kernel, NULL, &err),
            "max_pool does not support dtype i32");
    REFUSED(build_program("avg_pool", KILN_F32, dims, 1, "[n, 6]", 1, kernel, NULL, &err), "needs x of rank 3..5");
    REFUSED(build_program("global_max_pool", KILN_F32, dims, 1, "[n, 6]", 0, NULL, NULL, &err),
            "needs x of rank 3..8");
    kiln_attribute p_negative[1] = {{.name = "p", .type = KILN_ATTRIBUTE_INT, .i = -2}};
    REFUSED(build_program("global_lp_pool", KILN_F32, dims, 1, "[n, 6, 2]", 1, p_negative, NULL, &err),
            "node 0 (global_lp_pool)", "p must be in 1..16777216, got -2");
    /* max_pool takes no count_include_pad (the common attribute check). */
    kiln_attribute stray[2] = {{.name = "count_include_pad", .type = KILN_ATTRIBUTE_INT, .i = 1}, kernel[0]};
    assert_int_equal(build_program("max_pool", KILN_F32, dims, 1, "[n, 3, 6, 6]", 2, stray, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
}

/* Kernels called directly re-check shapes and attributes. */
static void kernels_refuse_bad_calls(void **state)
{
    (void)state;
    int64_t xs[4] = {1, 2, 5, 5}, ys[4] = {1, 2, 4, 4}, bad_ys[4] = {1, 2, 3, 4}, gs[4] = {1, 2, 1, 1};
    kiln_tensor *x = new_tensor(KILN_F32, 4, xs), *y = new_tensor(KILN_F32, 4, ys);
    kiln_tensor *bad_y = new_tensor(KILN_F32, 4, bad_ys), *g = new_tensor(KILN_F32, 4, gs);
    kiln_tensor *gd = new_tensor(KILN_F64, 4, gs);
    memset(x->data, 0, x->byte_size);
    kiln_error err;
    int64_t k2[2] = {2, 2}, k6[2] = {6, 2};
    attribute_set ok = {.count = 0}, none = {.count = 0}, big = {.count = 0};
    add_ints(&ok, "kernel_shape", k2, 2);
    add_ints(&big, "kernel_shape", k6, 2);
    assert_int_equal(run_kernel("max_pool", x, y, &ok, &err), KILN_OK);
    assert_int_equal(run_kernel("avg_pool", x, bad_y, &ok, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "output axis 2 must have size 4, got 3"));
    assert_int_equal(run_kernel("max_pool", x, y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("max_pool", x, y, &big, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "the window does not fit x axis 2 of size 5"));
    assert_int_equal(run_kernel("global_avg_pool", x, g, &none, &err), KILN_OK);
    assert_int_equal(run_kernel("global_avg_pool", x, y, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("global_max_pool", x, gd, &none, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    kiln_tensor_free(bad_y);
    kiln_tensor_free(g);
    kiln_tensor_free(gd);
}

/*
 * The largest attributes accepted on a one-element input: 2^24 taps per
 * axis in the padded input make a count_include_pad divisor of 2^72, which
 * must neither overflow (UBSan) nor lose the single input tap.
 */
static void hostile_extents_stay_exact(void **state)
{
    (void)state;
    int64_t one[5] = {1, 1, 1, 1, 1}, big = (int64_t)1 << 24;
    int64_t kernel[3] = {big, big, big}, strides[3] = {big, big, big};
    int64_t pads[6] = {big - 1, big - 1, big - 1, big - 1, big - 1, big - 1};
    kiln_tensor *x = new_tensor(KILN_F64, 5, one), *y = new_tensor(KILN_F64, 5, one);
    ((double *)x->data)[0] = 3.0;
    attribute_set set = {.count = 0};
    add_int(&set, "count_include_pad", 1);
    add_ints(&set, "kernel_shape", kernel, 3);
    add_ints(&set, "pads", pads, 6);
    add_ints(&set, "strides", strides, 3);
    check_shape_rule("avg_pool", x, &set, y);
    kiln_error err;
    assert_int_equal(run_kernel("avg_pool", x, y, &set, &err), KILN_OK);
    assert_true(((double *)y->data)[0] == ldexp(3.0, -72));
    set.items[0] = set.items[3];
    set.count = 3;
    assert_int_equal(run_kernel("max_pool", x, y, &set, &err), KILN_OK);
    assert_true(((double *)y->data)[0] == 3.0);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_int_equal(kiln_ops_pool.count, 6);
    assert_family_registered(&kiln_ops_pool, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(max_pool_differential),
        cmocka_unit_test(avg_pool_differential),
        cmocka_unit_test(lp_pool_differential),
        cmocka_unit_test(windows_that_see_no_input),
        cmocka_unit_test(global_pools_differential),
        cmocka_unit_test(onnx_examples),
        cmocka_unit_test(symbolic_output_sizes),
        cmocka_unit_test(ops_run_end_to_end),
        cmocka_unit_test(text_round_trip_is_exact),
        cmocka_unit_test(windows_are_proven_to_fit),
        cmocka_unit_test(attributes_dtypes_and_ranks_are_checked),
        cmocka_unit_test(kernels_refuse_bad_calls),
        cmocka_unit_test(hostile_extents_stay_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
