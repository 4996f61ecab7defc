/*
 * test_ops_norm.c — the norm family (batch_norm, layer_norm, group_norm,
 * instance_norm, lp_norm, mean_variance_norm) against an independent
 * reference written here, over f32 and f64, several ranks, shapes and
 * attribute values, zero variance and IEEE specials; end to end through the
 * public builder and a session with a symbolic batch dim; and the static
 * refusals of the shape rules (sizes, divisibility, dtypes, attributes).
 *
 * The reference does not split the input into slices: for every element it
 * scans the whole tensor for the elements that share its slice key (the
 * batch/group/instance index, or the kept multi-index), and computes the
 * mean and the population variance two-pass in long double. Parameters are
 * indexed by recovering the element's multi-index by div/mod.
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

#include "attribute.h"
#include "error.h"
#include "op_registry.h"
#include "shape_expr.h"
#include "tensor.h"

#include "family_check.h"
#include "borrowed_attribute.h"
#include "kernel_call.h"
#include "prng.h"
#include "tensor_fixture.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};

static double load(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_F32 ? (double)((const float *)t->data)[i] : ((const double *)t->data)[i];
}

static void store(kiln_tensor *t, uint64_t i, long double v)
{
    if (t->dtype == KILN_F32)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = (double)v;
}

/*
 * Values in lo..lo+8 in steps of 1/8; with `specials`, about one element in
 * six is NaN, +inf or -inf.
 */
static void fill(kiln_tensor *t, prng *rng, double lo, bool specials)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        double v = lo + (double)(prng_next(rng) % 65) / 8.0;
        if (specials) {
            uint64_t pick = prng_next(rng) % 18;
            v = pick == 0 ? NAN : pick == 1 ? INFINITY : pick == 2 ? -INFINITY : v;
        }
        store(t, i, v);
    }
}

static kiln_tensor *new_vector(kiln_dtype dtype, int64_t n)
{
    return new_tensor(dtype, 1, &n);
}

/* ------------------------------------------------------------ reference */

typedef enum ref_op { REF_BATCH, REF_LAYER, REF_GROUP, REF_INSTANCE, REF_LP, REF_MVN } ref_op;

typedef struct ref_params {
    long double eps;
    uint32_t axis;     /* layer_norm, lp_norm: normalised (non-negative) */
    int64_t p;         /* lp_norm */
    int64_t groups;    /* group_norm */
    bool reduced[KILN_MAX_RANK]; /* mean_variance_norm */
} ref_params;

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

static uint64_t product_from(const kiln_tensor *x, uint32_t from)
{
    uint64_t n = 1;
    for (uint32_t a = from; a < x->rank; a++)
        n *= (uint64_t)x->shape[a];
    return n;
}

/* Which slice element `i` belongs to. */
static uint64_t slice_key(ref_op op, const kiln_tensor *x, const ref_params *rp, uint64_t i)
{
    int64_t index[KILN_MAX_RANK];
    switch (op) {
    case REF_LAYER:
        return i / product_from(x, rp->axis);
    case REF_GROUP:
        return i / ((uint64_t)(x->shape[1] / rp->groups) * product_from(x, 2));
    case REF_INSTANCE:
        return i / product_from(x, 2);
    case REF_LP:
        unflatten(i, x->rank, x->shape, index);
        index[rp->axis] = 0;
        return flatten(x->rank, x->shape, index);
    default:
        unflatten(i, x->rank, x->shape, index);
        for (uint32_t a = 0; a < x->rank; a++)
            if (rp->reduced[a])
                index[a] = 0;
        return flatten(x->rank, x->shape, index);
    }
}

/* Element of layer_norm parameter `p` that element `i` of x uses (NumPy broadcasting). */
static uint64_t layer_param_index(const kiln_tensor *x, const kiln_tensor *p, uint32_t axis, uint64_t i)
{
    int64_t index[KILN_MAX_RANK], pindex[KILN_MAX_RANK];
    unflatten(i, x->rank, x->shape, index);
    uint32_t offset = x->rank - p->rank;
    assert_true(offset >= axis);
    for (uint32_t q = 0; q < p->rank; q++)
        pindex[q] = p->shape[q] == 1 ? 0 : index[offset + q];
    return flatten(p->rank, p->shape, pindex);
}

static void reference(ref_op op, const kiln_tensor *const *in, uint32_t count, const ref_params *rp,
                      kiln_tensor *expected)
{
    const kiln_tensor *x = in[0];
    uint64_t spatial = x->rank >= 2 ? product_from(x, 2) : 1;
    for (uint64_t i = 0; i < x->element_count; i++) {
        long double v = load(x, i), y;
        uint64_t c = x->rank >= 2 ? (i / spatial) % (uint64_t)x->shape[1] : 0;
        if (op == REF_BATCH) {
            y = (long double)load(in[1], c) * (v - load(in[3], c)) / sqrtl(load(in[4], c) + rp->eps) +
                load(in[2], c);
            store(expected, i, y);
            continue;
        }
        uint64_t key = slice_key(op, x, rp, i);
        long double sum = 0, n = 0;
        for (uint64_t j = 0; j < x->element_count; j++)
            if (slice_key(op, x, rp, j) == key) {
                long double w = load(x, j);
                sum += op == REF_LP ? (rp->p == 1 ? fabsl(w) : w * w) : w;
                n += 1;
            }
        if (op == REF_LP) {
            long double norm = rp->p == 1 ? sum : sqrtl(sum);
            store(expected, i, norm == 0 ? 0.0L : v / norm);
            continue;
        }
        long double mean = sum / n, squares = 0;
        for (uint64_t j = 0; j < x->element_count; j++)
            if (slice_key(op, x, rp, j) == key) {
                long double d = load(x, j) - mean;
                squares += d * d;
            }
        long double var = squares / n;
        if (op == REF_MVN) {
            store(expected, i, (v - mean) / sqrtl(var + 1e-9L));
            continue;
        }
        y = (v - mean) / sqrtl(var + rp->eps);
        if (op == REF_LAYER) {
            y *= load(in[1], layer_param_index(x, in[1], rp->axis, i));
            if (count == 3)
                y += load(in[2], layer_param_index(x, in[2], rp->axis, i));
        } else {
            y = y * load(in[1], c) + load(in[2], c);
        }
        store(expected, i, y);
    }
}

/* ------------------------------------------------------------ comparing */

static bool close_enough(kiln_dtype dtype, double got, double want)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    double tol = dtype == KILN_F32 ? 4e-6 : 1e-12;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

static void assert_tensors_match(const kiln_tensor *actual, const kiln_tensor *expected, const char *what)
{
    assert_int_equal(actual->dtype, expected->dtype);
    assert_int_equal(actual->element_count, expected->element_count);
    for (uint64_t i = 0; i < expected->element_count; i++)
        if (!close_enough(expected->dtype, load(actual, i), load(expected, i))) {
            print_error("%s (%s): element %llu: got %.17g, expected %.17g\n", what, kiln_dtype_name(expected->dtype),
                        (unsigned long long)i, load(actual, i), load(expected, i));
            fail();
        }
}

/* ----------------------------------------------------- calling the ops */

static kiln_node_attribute int_attribute(const char *name, int64_t value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INT, .i = value});
}

static kiln_node_attribute float_attribute(const char *name, double value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_FLOAT, .f = value});
}

static kiln_node_attribute ints_attribute(const char *name, int64_t *values, uint32_t count)
{
    return borrowed_attribute(
        (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INTS, .ints = values, .count = count});
}

/* Run the op's shape rule on constant extents; it must accept and give x's type. */
static void check_shape_rule(const char *name, const kiln_tensor *const *in, uint32_t count,
                             const kiln_node_attribute *attributes, uint32_t attribute_count)
{
    const kiln_op_def *op = kiln_op_find(name);
    assert_non_null(op);
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_error err;
    kiln_value_type types[5];
    const kiln_value_type *pointers[5];
    for (uint32_t i = 0; i < count; i++) {
        types[i].dtype = in[i]->dtype;
        types[i].shape.rank = in[i]->rank;
        for (uint32_t a = 0; a < in[i]->rank; a++)
            assert_int_equal(kiln_expr_const(&pool, in[i]->shape[a], &types[i].shape.axes[a], &err), KILN_OK);
        pointers[i] = &types[i];
    }
    kiln_shape_context ctx = {&pool, NULL, 0, "node 0 (test)", attributes, attribute_count, NULL, 0, NULL, NULL, 0, NULL, 0};
    kiln_value_type out;
    kiln_status status = op->infer(&ctx, pointers, count, &out, &err);
    if (status != KILN_OK)
        print_error("%s: %s\n", name, err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(out.dtype, in[0]->dtype);
    assert_int_equal(out.shape.rank, in[0]->rank);
    for (uint32_t a = 0; a < in[0]->rank; a++)
        assert_true(kiln_expr_is_const(&pool, out.shape.axes[a], in[0]->shape[a]));
    kiln_expr_pool_release(&pool);
}

static kiln_status run_kernel(const char *name, const kiln_tensor *const *in, uint32_t count, kiln_tensor *out,
                              const kiln_node_attribute *attributes, uint32_t attribute_count, kiln_error *err)
{
    return call_kernel(name, count, in, out, attribute_count, attributes, err);
}

/* Shape rule, kernel and reference on one case; compare. */
static void check_case(const char *name, ref_op op, const kiln_tensor *const *in, uint32_t count,
                       const kiln_node_attribute *attributes, uint32_t attribute_count, const ref_params *rp)
{
    check_shape_rule(name, in, count, attributes, attribute_count);
    kiln_tensor *out = new_tensor(in[0]->dtype, in[0]->rank, in[0]->shape);
    kiln_tensor *expected = new_tensor(in[0]->dtype, in[0]->rank, in[0]->shape);
    kiln_error err;
    kiln_status status = run_kernel(name, in, count, out, attributes, attribute_count, &err);
    if (status != KILN_OK)
        print_error("%s: %s\n", name, err.message);
    assert_int_equal(status, KILN_OK);
    reference(op, in, count, rp, expected);
    assert_tensors_match(out, expected, name);
    kiln_tensor_free(out);
    kiln_tensor_free(expected);
}

/* ------------------------------------------------------- differential */

typedef struct shape_case {
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
} shape_case;

static void batch_norm_matches_reference(bool specials)
{
    static const shape_case shapes[] = {{2, {2, 3}}, {3, {2, 3, 4}}, {4, {1, 2, 2, 3}}, {3, {3, 1, 5}}, {3, {0, 2, 2}}};
    static const double epsilons[] = {1e-5, 0.25};
    prng rng = {11};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (size_t s = 0; s < COUNT(shapes); s++)
            for (size_t e = 0; e < COUNT(epsilons); e++) {
                kiln_dtype dt = float_dtypes[d];
                int64_t c = shapes[s].shape[1];
                kiln_tensor *in[5] = {new_tensor(dt, shapes[s].rank, shapes[s].shape), new_vector(dt, c),
                                      new_vector(dt, c), new_vector(dt, c), new_vector(dt, c)};
                fill(in[0], &rng, -4, specials);
                fill(in[1], &rng, -4, false);
                fill(in[2], &rng, -4, false);
                fill(in[3], &rng, -4, false);
                fill(in[4], &rng, 0, false); /* variances 0..8, zero included */
                store(in[4], 0, 0.0L);
                kiln_node_attribute attributes[1] = {float_attribute("epsilon", epsilons[e])};
                ref_params rp = {.eps = epsilons[e]};
                /* The default epsilon when the attribute is absent. */
                check_case("batch_norm", REF_BATCH, (const kiln_tensor *const *)in, 5, attributes, e == 0 ? 0 : 1,
                           &rp);
                for (int i = 0; i < 5; i++)
                    kiln_tensor_free(in[i]);
            }
}

static void batch_norm_differential(void **state)
{
    (void)state;
    batch_norm_matches_reference(false);
    batch_norm_matches_reference(true);
}

/* layer_norm: every axis, parameters full, broadcast (1s and lower rank), bias or not. */
static void layer_norm_matches_reference(bool specials)
{
    static const shape_case shapes[] = {{1, {5}}, {2, {3, 4}}, {3, {2, 3, 4}}, {4, {2, 1, 3, 2}}};
    prng rng = {23};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (size_t s = 0; s < COUNT(shapes); s++) {
            uint32_t rank = shapes[s].rank;
            for (uint32_t axis = 0; axis < rank; axis++)
                for (int variant = 0; variant < 4; variant++) {
                    kiln_dtype dt = float_dtypes[d];
                    uint32_t nr = rank - axis;
                    /* variant 0: full shape; 1: leading axis dropped; 2: last axis 1; 3: full, no bias. */
                    int64_t pshape[KILN_MAX_RANK];
                    uint32_t prank = nr;
                    memcpy(pshape, shapes[s].shape + axis, nr * sizeof pshape[0]);
                    if (variant == 1 && nr > 1) {
                        prank = nr - 1;
                        memmove(pshape, pshape + 1, prank * sizeof pshape[0]);
                    } else if (variant == 2) {
                        pshape[nr - 1] = 1;
                    }
                    kiln_tensor *in[3] = {new_tensor(dt, rank, shapes[s].shape), new_tensor(dt, prank, pshape),
                                          new_tensor(dt, prank, pshape)};
                    fill(in[0], &rng, -4, specials);
                    fill(in[1], &rng, -4, false);
                    fill(in[2], &rng, -4, false);
                    /* Spell the axis negatively every other time. */
                    int64_t axis_attr = variant % 2 ? (int64_t)axis - (int64_t)rank : (int64_t)axis;
                    double eps = variant == 2 ? 0.5 : 1e-5;
                    kiln_node_attribute attributes[2] = {int_attribute("axis", axis_attr),
                                                         float_attribute("epsilon", eps)};
                    ref_params rp = {.eps = eps, .axis = axis};
                    check_case("layer_norm", REF_LAYER, (const kiln_tensor *const *)in, variant == 3 ? 2 : 3,
                               attributes, 2, &rp);
                    for (int i = 0; i < 3; i++)
                        kiln_tensor_free(in[i]);
                }
        }
    /* Defaults: axis -1, epsilon 1e-5. */
    int64_t shape[2] = {3, 4};
    kiln_tensor *in[3] = {new_tensor(KILN_F64, 2, shape), new_vector(KILN_F64, 4), new_vector(KILN_F64, 4)};
    fill(in[0], &rng, -4, specials);
    fill(in[1], &rng, -4, false);
    fill(in[2], &rng, -4, false);
    ref_params rp = {.eps = 1e-5L, .axis = 1};
    check_case("layer_norm", REF_LAYER, (const kiln_tensor *const *)in, 3, NULL, 0, &rp);
    for (int i = 0; i < 3; i++)
        kiln_tensor_free(in[i]);
}

static void layer_norm_differential(void **state)
{
    (void)state;
    layer_norm_matches_reference(false);
    layer_norm_matches_reference(true);
}

/*
 * f32 layer_norm with one scale and bias value per element of a slice runs
 * a loop of its own (norm.c, layer_norm_rows_f32) that must give the
 * general loop's bits: the same slice normalized with a broadcast [1, 64]
 * scale and bias (the general loop) and with the same values repeated to
 * [3, 64] (the row loop) must agree bit for bit, specials included.
 */
static void layer_norm_row_loop_is_the_general_loop(void **state)
{
    (void)state;
    prng rng = {41};
    int64_t x_shape[3] = {5, 3, 64}, row_shape[2] = {1, 64}, full_shape[2] = {3, 64};
    for (int specials = 0; specials < 2; specials++) {
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            kiln_tensor *x = new_tensor(KILN_F32, 3, x_shape), *out_general = new_tensor(KILN_F32, 3, x_shape);
            kiln_tensor *out_rows = new_tensor(KILN_F32, 3, x_shape);
            kiln_tensor *scale_row = new_tensor(KILN_F32, 2, row_shape), *bias_row = new_tensor(KILN_F32, 2, row_shape);
            kiln_tensor *scale_full = new_tensor(KILN_F32, 2, full_shape);
            kiln_tensor *bias_full = new_tensor(KILN_F32, 2, full_shape);
            float *xv = x->data;
            for (uint64_t i = 0; i < x->element_count; i++) {
                /* Full-precision values of varied magnitude, so sums really round. */
                uint64_t r = prng_next(&rng);
                xv[i] = (float)ldexp((double)(r >> 40) / (double)(1u << 24) - 0.5, (int)(r % 9) - 4);
                if (specials && r % 23 == 0)
                    xv[i] = r % 3 == 0 ? NAN : r % 3 == 1 ? INFINITY : -INFINITY;
            }
            fill(scale_row, &rng, -4, false);
            fill(bias_row, &rng, -4, false);
            for (uint64_t i = 0; i < scale_full->element_count; i++) {
                ((float *)scale_full->data)[i] = ((const float *)scale_row->data)[i % 64];
                ((float *)bias_full->data)[i] = ((const float *)bias_row->data)[i % 64];
            }
            kiln_node_attribute attributes[2] = {int_attribute("axis", 1), float_attribute("epsilon", 1e-5)};
            const kiln_tensor *general[3] = {x, scale_row, bias_row}, *rows[3] = {x, scale_full, bias_full};
            kiln_error err;
            uint32_t count = with_bias ? 3 : 2;
            assert_int_equal(run_kernel("layer_norm", general, count, out_general, attributes, 2, &err), KILN_OK);
            assert_int_equal(run_kernel("layer_norm", rows, count, out_rows, attributes, 2, &err), KILN_OK);
            /* Bit for bit, but for a NaN's sign: C leaves it to the compiler (clang's vector code gives
             * x86's default NaN, 0xffc00000, where gcc's keeps the operand's). */
            const float *by_rows = out_rows->data, *by_general = out_general->data;
            for (uint64_t i = 0; i < out_general->element_count; i++)
                if (!(isnan(by_rows[i]) ? isnan(by_general[i])
                                        : memcmp(&by_rows[i], &by_general[i], sizeof by_rows[i]) == 0))
                    fail_msg("layer_norm element %llu: row loop %a, general loop %a", (unsigned long long)i,
                             (double)by_rows[i], (double)by_general[i]);
            kiln_tensor *all[] = {x, out_general, out_rows, scale_row, bias_row, scale_full, bias_full};
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                kiln_tensor_free(all[i]);
        }
    }
}

static void channel_norm_matches_reference(bool group, bool specials)
{
    static const shape_case shapes[] = {{3, {2, 4, 3}}, {4, {1, 6, 2, 2}}, {3, {2, 12, 1}}, {5, {1, 4, 2, 1, 2}},
                                        {3, {2, 4, 0}}};
    static const int64_t groups[] = {1, 2, 4, 3, 6, 12};
    prng rng = {group ? 31u : 37u};
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (size_t s = 0; s < COUNT(shapes); s++)
            for (size_t g = 0; g < (group ? COUNT(groups) : 1); g++) {
                kiln_dtype dt = float_dtypes[d];
                int64_t c = shapes[s].shape[1];
                if (group && c % groups[g] != 0)
                    continue;
                kiln_tensor *in[3] = {new_tensor(dt, shapes[s].rank, shapes[s].shape), new_vector(dt, c),
                                      new_vector(dt, c)};
                fill(in[0], &rng, -4, specials);
                fill(in[1], &rng, -4, false);
                fill(in[2], &rng, -4, false);
                double eps = s % 2 ? 1e-3 : 1e-5;
                kiln_node_attribute attributes[2] = {float_attribute("epsilon", eps),
                                                     int_attribute("num_groups", group ? groups[g] : 0)};
                ref_params rp = {.eps = eps, .groups = group ? groups[g] : 0};
                check_case(group ? "group_norm" : "instance_norm", group ? REF_GROUP : REF_INSTANCE,
                           (const kiln_tensor *const *)in, 3, attributes, group ? 2 : 1, &rp);
                for (int i = 0; i < 3; i++)
                    kiln_tensor_free(in[i]);
            }
}

static void group_and_instance_norm_differential(void **state)
{
    (void)state;
    for (int specials = 0; specials < 2; specials++) {
        channel_norm_matches_reference(true, specials);
        channel_norm_matches_reference(false, specials);
    }
}

static void lp_norm_differential(void **state)
{
    (void)state;
    static const shape_case shapes[] = {{1, {6}}, {2, {3, 4}}, {3, {2, 3, 4}}, {3, {2, 0, 3}}};
    prng rng = {41};
    for (int specials = 0; specials < 2; specials++)
        for (size_t d = 0; d < COUNT(float_dtypes); d++)
            for (size_t s = 0; s < COUNT(shapes); s++)
                for (uint32_t axis = 0; axis < shapes[s].rank; axis++)
                    for (int64_t p = 1; p <= 2; p++) {
                        kiln_dtype dt = float_dtypes[d];
                        kiln_tensor *x = new_tensor(dt, shapes[s].rank, shapes[s].shape);
                        fill(x, &rng, -4, specials);
                        /* Zero the first slice along the axis: a zero norm gives 0. */
                        for (uint64_t i = 0; i < x->element_count; i++) {
                            int64_t index[KILN_MAX_RANK];
                            unflatten(i, x->rank, x->shape, index);
                            bool first = true;
                            for (uint32_t a = 0; a < x->rank; a++)
                                if (a != axis && index[a] != 0)
                                    first = false;
                            if (first)
                                store(x, i, (i % 2) ? -0.0L : 0.0L);
                        }
                        kiln_node_attribute attributes[2] = {
                            int_attribute("axis", axis % 2 ? (int64_t)axis - (int64_t)shapes[s].rank : axis),
                            int_attribute("p", p)};
                        ref_params rp = {.axis = axis, .p = p};
                        const kiln_tensor *in[1] = {x};
                        bool defaults = p == 2 && axis == shapes[s].rank - 1;
                        check_case("lp_norm", REF_LP, in, 1, attributes, defaults ? 0 : 2, &rp);
                        kiln_tensor_free(x);
                    }
}

static void mean_variance_norm_differential(void **state)
{
    (void)state;
    prng rng = {43};
    int64_t shape4[4] = {2, 3, 2, 3};
    int64_t axes_a[1] = {1}, axes_b[2] = {-1, 0}, axes_c[4] = {0, 1, 2, 3};
    for (int specials = 0; specials < 2; specials++)
        for (size_t d = 0; d < COUNT(float_dtypes); d++) {
            kiln_tensor *x = new_tensor(float_dtypes[d], 4, shape4);
            fill(x, &rng, -4, specials);
            const kiln_tensor *in[1] = {x};
            ref_params rp = {.reduced = {true, false, true, true}};
            check_case("mean_variance_norm", REF_MVN, in, 1, NULL, 0, &rp); /* default [0, 2, 3] */
            kiln_node_attribute a[1] = {ints_attribute("axes", axes_a, 1)};
            ref_params ra = {.reduced = {false, true, false, false}};
            check_case("mean_variance_norm", REF_MVN, in, 1, a, 1, &ra);
            kiln_node_attribute b[1] = {ints_attribute("axes", axes_b, 2)};
            ref_params rb = {.reduced = {true, false, false, true}};
            check_case("mean_variance_norm", REF_MVN, in, 1, b, 1, &rb);
            kiln_node_attribute c[1] = {ints_attribute("axes", axes_c, 4)};
            ref_params rc = {.reduced = {true, true, true, true}};
            check_case("mean_variance_norm", REF_MVN, in, 1, c, 1, &rc);
            kiln_tensor_free(x);
            /* Rank 2 with explicit axes. */
            int64_t shape2[2] = {4, 5};
            x = new_tensor(float_dtypes[d], 2, shape2);
            fill(x, &rng, -4, specials);
            in[0] = x;
            ref_params r2 = {.reduced = {false, true}};
            int64_t last[1] = {1};
            kiln_node_attribute l[1] = {ints_attribute("axes", last, 1)};
            check_case("mean_variance_norm", REF_MVN, in, 1, l, 1, &r2);
            kiln_tensor_free(x);
        }
}

/* ------------------------------------------------------ exact numerics */

/* A constant slice has zero variance: the output is exactly the bias (or 0). */
static void zero_variance_gives_bias(void **state)
{
    (void)state;
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        kiln_dtype dt = float_dtypes[d];
        int64_t shape[3] = {2, 2, 3};
        kiln_tensor *x = new_tensor(dt, 3, shape), *out = new_tensor(dt, 3, shape);
        kiln_tensor *scale = new_vector(dt, 2), *bias = new_vector(dt, 2);
        for (uint64_t i = 0; i < x->element_count; i++)
            store(x, i, 0.5L);
        store(scale, 0, 3.0L);
        store(scale, 1, -2.0L);
        store(bias, 0, 0.25L);
        store(bias, 1, -1.5L);
        kiln_error err;
        const kiln_tensor *in[3] = {x, scale, bias};
        kiln_node_attribute groups[1] = {int_attribute("num_groups", 1)};
        static const char *const ops[] = {"instance_norm", "group_norm"};
        for (int o = 0; o < 2; o++) {
            assert_int_equal(run_kernel(ops[o], in, 3, out, groups, o, &err), KILN_OK);
            for (uint64_t i = 0; i < out->element_count; i++)
                assert_true(load(out, i) == load(bias, (i / 3) % 2));
        }
        /* layer_norm over the last axis with a scale/bias per position. */
        kiln_tensor *ls = new_vector(dt, 3), *lb = new_vector(dt, 3);
        for (uint64_t i = 0; i < 3; i++) {
            store(ls, i, 2.0L);
            store(lb, i, (long double)i);
        }
        const kiln_tensor *lin[3] = {x, ls, lb};
        assert_int_equal(run_kernel("layer_norm", lin, 3, out, NULL, 0, &err), KILN_OK);
        for (uint64_t i = 0; i < out->element_count; i++)
            assert_true(load(out, i) == (double)(i % 3));
        const kiln_tensor *xin[1] = {x};
        assert_int_equal(run_kernel("mean_variance_norm", xin, 1, out, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
        int64_t all[1] = {-1};
        kiln_node_attribute last[1] = {ints_attribute("axes", all, 1)};
        assert_int_equal(run_kernel("mean_variance_norm", xin, 1, out, last, 1, &err), KILN_OK);
        for (uint64_t i = 0; i < out->element_count; i++)
            assert_true(load(out, i) == 0.0);
        /* batch_norm with var = 0 and epsilon = 0 divides by zero: IEEE ±inf, or NaN when x == mean. */
        kiln_tensor *zero = new_vector(dt, 2), *one = new_vector(dt, 2);
        for (uint64_t i = 0; i < 2; i++) {
            store(zero, i, 0.0L);
            store(one, i, i == 0 ? 0.5L : 0.0L);
        }
        const kiln_tensor *bin[5] = {x, scale, zero, one, zero};
        kiln_node_attribute eps0[1] = {float_attribute("epsilon", 0.0)};
        assert_int_equal(run_kernel("batch_norm", bin, 5, out, eps0, 1, &err), KILN_OK);
        for (uint64_t i = 0; i < out->element_count; i++) {
            if ((i / 3) % 2 == 0)
                assert_true(isnan(load(out, i)));
            else
                assert_true(load(out, i) == -INFINITY); /* -2 * 0.5 / 0 */
        }
        kiln_tensor_free(zero);
        kiln_tensor_free(one);
        kiln_tensor_free(ls);
        kiln_tensor_free(lb);
        kiln_tensor_free(x);
        kiln_tensor_free(out);
        kiln_tensor_free(scale);
        kiln_tensor_free(bias);
    }
}

/* A NaN or infinity poisons its own slice only; lp_norm maps an all-zero slice to zeros. */
static void specials_stay_in_their_slice(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 3};
    kiln_tensor *x = new_tensor(KILN_F32, 2, shape), *out = new_tensor(KILN_F32, 2, shape);
    kiln_tensor *s = new_vector(KILN_F32, 3), *b = new_vector(KILN_F32, 3);
    float values[6] = {1, NAN, 2, 1, 2, 3};
    memcpy(x->data, values, sizeof values);
    for (uint64_t i = 0; i < 3; i++) {
        store(s, i, 1.0L);
        store(b, i, 0.0L);
    }
    kiln_error err;
    const kiln_tensor *in[3] = {x, s, b};
    assert_int_equal(run_kernel("layer_norm", in, 3, out, NULL, 0, &err), KILN_OK);
    for (uint64_t i = 0; i < 3; i++)
        assert_true(isnan(load(out, i)));
    for (uint64_t i = 3; i < 6; i++)
        assert_true(isfinite(load(out, i)));
    ((float *)x->data)[1] = INFINITY;
    assert_int_equal(run_kernel("layer_norm", in, 3, out, NULL, 0, &err), KILN_OK);
    assert_true(isnan(load(out, 0)) && isnan(load(out, 1)));
    float zeros[6] = {0, -0.0f, 0, 3, 4, 0};
    memcpy(x->data, zeros, sizeof zeros);
    const kiln_tensor *xin[1] = {x};
    assert_int_equal(run_kernel("lp_norm", xin, 1, out, NULL, 0, &err), KILN_OK);
    float want[6] = {0, 0, 0, 0.6f, 0.8f, 0};
    for (uint64_t i = 0; i < 6; i++)
        assert_true(load(out, i) == (double)want[i]);
    kiln_tensor_free(x);
    kiln_tensor_free(out);
    kiln_tensor_free(s);
    kiln_tensor_free(b);
}

/* Kernels check what they are given, whatever the caller did. */
static void kernels_refuse_bad_calls(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 4, 3};
    kiln_tensor *x = new_tensor(KILN_F32, 3, shape), *out = new_tensor(KILN_F32, 3, shape);
    kiln_tensor *c4 = new_vector(KILN_F32, 4), *c3 = new_vector(KILN_F32, 3), *d4 = new_vector(KILN_F64, 4);
    memset(x->data, 0, x->byte_size);
    kiln_error err;
    const kiln_tensor *wrong_size[3] = {x, c3, c4};
    assert_int_equal(run_kernel("instance_norm", wrong_size, 3, out, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
    const kiln_tensor *mixed[3] = {x, d4, c4};
    assert_int_equal(run_kernel("instance_norm", mixed, 3, out, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
    const kiln_tensor *ok[3] = {x, c4, c4};
    kiln_node_attribute three[1] = {int_attribute("num_groups", 3)};
    assert_int_equal(run_kernel("group_norm", ok, 3, out, three, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(run_kernel("group_norm", ok, 3, out, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_node_attribute neg[1] = {float_attribute("epsilon", -1.0)};
    assert_int_equal(run_kernel("instance_norm", ok, 3, out, neg, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    const kiln_tensor *xin[1] = {x};
    kiln_node_attribute p3[1] = {int_attribute("p", 3)};
    assert_int_equal(run_kernel("lp_norm", xin, 1, out, p3, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_node_attribute axis3[1] = {int_attribute("axis", 3)};
    assert_int_equal(run_kernel("lp_norm", xin, 1, out, axis3, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    const kiln_tensor *layer_bad[2] = {x, c4};
    assert_int_equal(run_kernel("layer_norm", layer_bad, 2, out, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor *small = new_tensor(KILN_F32, 1, shape);
    assert_int_equal(run_kernel("lp_norm", xin, 1, small, NULL, 0, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(small);
    kiln_tensor_free(x);
    kiln_tensor_free(out);
    kiln_tensor_free(c4);
    kiln_tensor_free(c3);
    kiln_tensor_free(d4);
}

/* ---------------------------------------------------------- end to end */

typedef struct dim_spec {
    const char *name;
    int64_t min, max, multiple_of;
} dim_spec;

/* An operand of the op: an input with a shape text, or a weight (tensor). */
typedef struct operand {
    const char *name;
    const char *shape_text;
    const kiln_tensor *weight;
} operand;

typedef struct program_run {
    kiln_program *program;
    kiln_session *session;
} program_run;

/*
 * Build "y = op(operands...)" over `dims`, with operand 0 an input called
 * "x". @return the builder status of adding the op (on success and with
 * `run`, the program is encoded, loaded and given a session).
 */
static kiln_status build_program(const char *op, kiln_dtype dtype, const dim_spec *dims, uint32_t dim_count,
                                 const operand *operands, uint32_t operand_count, uint32_t attribute_count,
                                 const kiln_attribute *attributes, program_run *run, kiln_error *err)
{
    kiln_builder *b;
    kiln_value values[5], y;
    assert_int_equal(kiln_builder_new("norm", &b, err), KILN_OK);
    for (uint32_t d = 0; d < dim_count; d++) {
        assert_int_equal(kiln_builder_add_dim(b, dims[d].name, dims[d].min, dims[d].max, err), KILN_OK);
        if (dims[d].multiple_of > 1)
            assert_int_equal(kiln_builder_set_dim_multiple_of(b, dims[d].name, dims[d].multiple_of, err), KILN_OK);
    }
    for (uint32_t i = 0; i < operand_count; i++) {
        const operand *o = &operands[i];
        if (o->weight)
            assert_int_equal(kiln_builder_add_weight(b, o->name, KILN_WEIGHT_PARAMETER, o->weight->dtype,
                                                     o->weight->rank, o->weight->shape, o->weight->data, &values[i],
                                                     err),
                             KILN_OK);
        else
            assert_int_equal(kiln_builder_add_input(b, o->name, dtype, o->shape_text, &values[i], err), KILN_OK);
    }
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, op, operand_count, values, attribute_count, attributes, &y, err);
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

static void run_and_compare(program_run *run, const kiln_tensor *x, const kiln_tensor *expected, const char *what)
{
    kiln_error err;
    assert_int_equal(kiln_session_set_input(run->session, "x", x, &err), KILN_OK);
    kiln_status status = kiln_session_run(run->session, &err);
    if (status != KILN_OK)
        print_error("%s: %s\n", what, err.message);
    assert_int_equal(status, KILN_OK);
    const kiln_tensor *y = kiln_session_output(run->session, 0);
    assert_non_null(y);
    assert_tensors_match(y, expected, what);
}

static void close_run(program_run *run)
{
    kiln_session_free(run->session);
    kiln_program_free(run->program);
}

/* Each op on x: [n, 4, 3] with n in 1..4, weights stored, run at n = 1, 2 and 4. */
static void ops_run_end_to_end(void **state)
{
    (void)state;
    prng rng = {97};
    static const dim_spec dims[1] = {{"n", 1, 4, 1}};
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        kiln_dtype dt = float_dtypes[d];
        kiln_tensor *w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = new_vector(dt, 4);
            fill(w[i], &rng, i == 3 ? 0 : -4, false);
        }
        int64_t layer_shape[2] = {4, 3};
        kiln_tensor *lw = new_tensor(dt, 2, layer_shape);
        fill(lw, &rng, -4, false);
        int64_t mvn_axes[2] = {0, 2};
        kiln_attribute bn_attrs[1] = {{.name = "epsilon", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.01}};
        kiln_attribute ln_attrs[2] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
                                      {.name = "epsilon", .type = KILN_ATTRIBUTE_FLOAT, .f = 1e-4}};
        kiln_attribute gn_attrs[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_INT, .i = 2}};
        kiln_attribute lp_attrs[2] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
                                      {.name = "p", .type = KILN_ATTRIBUTE_INT, .i = 1}};
        kiln_attribute mvn_attrs[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = mvn_axes, .count = 2}};
        struct {
            const char *op;
            ref_op ref;
            uint32_t operands;
            bool layer;
            uint32_t attribute_count;
            const kiln_attribute *attributes;
            ref_params rp;
        } cases[] = {
            {"batch_norm", REF_BATCH, 5, false, 1, bn_attrs, {.eps = 0.01}},
            {"layer_norm", REF_LAYER, 3, true, 2, ln_attrs, {.eps = 1e-4, .axis = 1}},
            {"group_norm", REF_GROUP, 3, false, 1, gn_attrs, {.eps = 1e-5, .groups = 2}},
            {"instance_norm", REF_INSTANCE, 3, false, 0, NULL, {.eps = 1e-5}},
            {"lp_norm", REF_LP, 1, false, 2, lp_attrs, {.axis = 1, .p = 1}},
            {"mean_variance_norm", REF_MVN, 1, false, 1, mvn_attrs, {.reduced = {true, false, true}}},
        };
        static const char *const names[5] = {"x", "scale", "bias", "mean", "var"};
        for (size_t c = 0; c < COUNT(cases); c++) {
            operand operands[5];
            const kiln_tensor *in[5];
            for (uint32_t i = 0; i < cases[c].operands; i++) {
                operands[i].name = names[i];
                operands[i].shape_text = "[n, 4, 3]";
                operands[i].weight = i == 0 ? NULL : cases[c].layer ? lw : w[i - 1];
                in[i] = operands[i].weight;
            }
            program_run run;
            kiln_error err;
            kiln_status status = build_program(cases[c].op, dt, dims, 1, operands, cases[c].operands,
                                               cases[c].attribute_count, cases[c].attributes, &run, &err);
            if (status != KILN_OK)
                print_error("%s: %s\n", cases[c].op, err.message);
            assert_int_equal(status, KILN_OK);
            static const int64_t batches[3] = {1, 2, 4};
            for (int k = 0; k < 3; k++) {
                int64_t shape[3] = {batches[k], 4, 3};
                kiln_tensor *x = new_tensor(dt, 3, shape), *expected = new_tensor(dt, 3, shape);
                fill(x, &rng, -4, false);
                in[0] = x;
                reference(cases[c].ref, in, cases[c].operands, &cases[c].rp, expected);
                run_and_compare(&run, x, expected, cases[c].op);
                kiln_tensor_free(x);
                kiln_tensor_free(expected);
            }
            /* The batch dim is guarded: n = 5 is outside 1..4. */
            int64_t big[3] = {5, 4, 3};
            kiln_tensor *x = new_tensor(dt, 3, big);
            memset(x->data, 0, x->byte_size);
            if (kiln_session_set_input(run.session, "x", x, &err) == KILN_OK)
                assert_int_not_equal(kiln_session_run(run.session, &err), KILN_OK);
            kiln_tensor_free(x);
            close_run(&run);
        }
        for (int i = 0; i < 4; i++)
            kiln_tensor_free(w[i]);
        kiln_tensor_free(lw);
    }
}

/* ---------------------------------------------------- static refusals */

static void assert_refused(kiln_status status, const kiln_error *err, const char *const *fragments, size_t count)
{
    assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
    for (size_t i = 0; i < count; i++)
        if (!strstr(err->message, fragments[i])) {
            print_error("missing \"%s\" in: %s\n", fragments[i], err->message);
            fail();
        }
}

#define REFUSED(STATUS, ...)                                                                          \
    do {                                                                                              \
        static const char *const fragments_[] = {__VA_ARGS__};                                        \
        assert_refused((STATUS), &err, fragments_, COUNT(fragments_));                                \
    } while (0)

static void channel_sizes_are_proven(void **state)
{
    (void)state;
    kiln_error err;
    dim_spec cd[3] = {{"n", 1, 4, 1}, {"c", 2, 6, 1}, {"d", 2, 6, 1}};
    /* scale [d] against channels c: refused with a point where they differ. */
    operand bn[5] = {{"x", "[n, c, 3]", NULL}, {"scale", "[d]", NULL}, {"bias", "[c]", NULL},
                     {"mean", "[c]", NULL},    {"var", "[c]", NULL}};
    REFUSED(build_program("batch_norm", KILN_F32, cd, 3, bn, 5, 0, NULL, NULL, &err), "node 0 (batch_norm)",
            "scale (input 1) size d equals x axis 1 size c", "counterexample: c=", "d=");
    /* The same dim everywhere is accepted and runs. */
    bn[1].shape_text = "[c]";
    assert_int_equal(build_program("batch_norm", KILN_F32, cd, 2, bn, 5, 0, NULL, NULL, &err), KILN_OK);
    /* A constant that differs from a constant channel count. */
    int64_t four = 4;
    kiln_tensor *w4 = new_tensor(KILN_F32, 1, &four);
    memset(w4->data, 0, w4->byte_size);
    operand in_norm[3] = {{"x", "[n, 3, 5]", NULL}, {"scale", NULL, w4}, {"bias", "[3]", NULL}};
    REFUSED(build_program("instance_norm", KILN_F32, cd, 1, in_norm, 3, 0, NULL, NULL, &err),
            "node 0 (instance_norm)", "it is not true that scale (input 1) size 4 equals x axis 1 size 3");
    /* A constant equal to a dim pinned to one value is proven. */
    dim_spec pinned[2] = {{"n", 1, 4, 1}, {"c", 4, 4, 1}};
    in_norm[0].shape_text = "[n, c, 5]";
    in_norm[2].shape_text = "[c]";
    assert_int_equal(build_program("instance_norm", KILN_F32, pinned, 2, in_norm, 3, 0, NULL, NULL, &err), KILN_OK);
    /* group_norm scale of a different channel dim. */
    kiln_attribute g2[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_INT, .i = 2}};
    dim_spec even[3] = {{"n", 1, 4, 1}, {"c", 2, 8, 2}, {"d", 2, 8, 2}};
    operand gn[3] = {{"x", "[n, c, 3]", NULL}, {"scale", "[c]", NULL}, {"bias", "[d]", NULL}};
    REFUSED(build_program("group_norm", KILN_F64, even, 3, gn, 3, 1, g2, NULL, &err), "node 0 (group_norm)",
            "bias (input 2) size d equals x axis 1 size c", "counterexample:");
    /* Rank-2 parameter. */
    operand rank2[3] = {{"x", "[n, c, 3]", NULL}, {"scale", "[c, 1]", NULL}, {"bias", "[c]", NULL}};
    REFUSED(build_program("instance_norm", KILN_F32, cd, 2, rank2, 3, 0, NULL, NULL, &err), "must have rank 1");
    /* layer_norm: scale [m] against x.shape[-1:] = [4]. */
    dim_spec nm[2] = {{"n", 1, 4, 1}, {"m", 1, 5, 1}};
    operand ln[2] = {{"x", "[n, 4]", NULL}, {"scale", "[m]", NULL}};
    REFUSED(build_program("layer_norm", KILN_F32, nm, 2, ln, 2, 0, NULL, NULL, &err), "node 0 (layer_norm)",
            "scale (input 1) against x.shape[1:]", "m and 4", "counterexample: m=");
    operand ln_big[2] = {{"x", "[n, 4]", NULL}, {"scale", "[n, 4]", NULL}};
    REFUSED(build_program("layer_norm", KILN_F32, nm, 1, ln_big, 2, 0, NULL, NULL, &err), "does not broadcast");
    /* A normalized axis that can be empty. */
    dim_spec zero[2] = {{"n", 1, 4, 1}, {"m", 0, 5, 1}};
    operand ln_m[2] = {{"x", "[n, m]", NULL}, {"scale", "[1]", NULL}};
    REFUSED(build_program("layer_norm", KILN_F32, zero, 2, ln_m, 2, 0, NULL, NULL, &err),
            "normalized axis 1 (m) is at least 1", "counterexample: m=0");
    assert_int_equal(build_program("layer_norm", KILN_F32, nm, 2, ln_m, 2, 0, NULL, NULL, &err), KILN_OK);
    kiln_tensor_free(w4);
}

static void group_divisibility_is_proven(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute g2[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_INT, .i = 2}};
    kiln_attribute g4[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_INT, .i = 4}};
    operand gn[3] = {{"x", "[n, c, 3]", NULL}, {"scale", "[c]", NULL}, {"bias", "[c]", NULL}};
    dim_spec any[2] = {{"n", 1, 4, 1}, {"c", 2, 8, 1}};
    REFUSED(build_program("group_norm", KILN_F32, any, 2, gn, 3, 1, g2, NULL, &err), "node 0 (group_norm)",
            "x axis 1 size c is divisible by num_groups 2", "counterexample: c=3");
    /* multiple_of 2 proves it for 2 groups, not for 4. */
    dim_spec even[2] = {{"n", 1, 4, 1}, {"c", 2, 8, 2}};
    assert_int_equal(build_program("group_norm", KILN_F32, even, 2, gn, 3, 1, g2, NULL, &err), KILN_OK);
    REFUSED(build_program("group_norm", KILN_F32, even, 2, gn, 3, 1, g4, NULL, &err), "counterexample: c=2");
    /* Constant channels. */
    operand gn6[3] = {{"x", "[n, 6, 3]", NULL}, {"scale", "[6]", NULL}, {"bias", "[6]", NULL}};
    REFUSED(build_program("group_norm", KILN_F32, any, 1, gn6, 3, 1, g4, NULL, &err),
            "it is not true that x axis 1 size 6 is divisible by num_groups 4");
    assert_int_equal(build_program("group_norm", KILN_F32, any, 1, gn6, 3, 1, g2, NULL, &err), KILN_OK);
}

static void dtypes_ranks_and_attributes_are_checked(void **state)
{
    (void)state;
    kiln_error err;
    dim_spec dims[2] = {{"n", 1, 4, 1}, {"c", 1, 4, 1}};
    operand one[1] = {{"x", "[n, c, 3, 3]", NULL}};
    operand three[3] = {{"x", "[n, c, 3]", NULL}, {"scale", "[c]", NULL}, {"bias", "[c]", NULL}};
    /* Integer x. */
    REFUSED(build_program("lp_norm", KILN_I32, dims, 2, one, 1, 0, NULL, NULL, &err), "node 0 (lp_norm)",
            "dtype i32");
    REFUSED(build_program("instance_norm", KILN_I64, dims, 2, three, 3, 0, NULL, NULL, &err), "dtype i64");
    /* Mixed float dtypes: a f64 weight with an f32 x. */
    int64_t two = 2;
    kiln_tensor *w = new_tensor(KILN_F64, 1, &two);
    memset(w->data, 0, w->byte_size);
    operand mixed[3] = {{"x", "[n, 2, 3]", NULL}, {"scale", NULL, w}, {"bias", "[2]", NULL}};
    REFUSED(build_program("instance_norm", KILN_F32, dims, 1, mixed, 3, 0, NULL, NULL, &err), "dtypes differ");
    kiln_tensor_free(w);
    /* Ranks. */
    operand flat[3] = {{"x", "[n, c]", NULL}, {"scale", "[c]", NULL}, {"bias", "[c]", NULL}};
    REFUSED(build_program("group_norm", KILN_F32, dims, 2, flat, 3, 0, NULL, NULL, &err), "rank >= 3");
    operand vec[5] = {{"x", "[n]", NULL}, {"s", "[n]", NULL}, {"b", "[n]", NULL}, {"m", "[n]", NULL},
                      {"v", "[n]", NULL}};
    REFUSED(build_program("batch_norm", KILN_F32, dims, 1, vec, 5, 0, NULL, NULL, &err), "rank >= 2");
    /* Attributes. */
    kiln_attribute neg_eps[1] = {{.name = "epsilon", .type = KILN_ATTRIBUTE_FLOAT, .f = -1e-3}};
    REFUSED(build_program("instance_norm", KILN_F32, dims, 2, three, 3, 1, neg_eps, NULL, &err),
            "epsilon must be finite and >= 0");
    kiln_attribute nan_eps[1] = {{.name = "epsilon", .type = KILN_ATTRIBUTE_FLOAT, .f = NAN}};
    REFUSED(build_program("instance_norm", KILN_F32, dims, 2, three, 3, 1, nan_eps, NULL, &err), "epsilon");
    REFUSED(build_program("group_norm", KILN_F32, dims, 2, three, 3, 0, NULL, NULL, &err), "num_groups is required");
    kiln_attribute g0[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_INT, .i = 0}};
    REFUSED(build_program("group_norm", KILN_F32, dims, 2, three, 3, 1, g0, NULL, &err), "num_groups must be >= 1");
    kiln_attribute p3[1] = {{.name = "p", .type = KILN_ATTRIBUTE_INT, .i = 3}};
    REFUSED(build_program("lp_norm", KILN_F32, dims, 2, one, 1, 1, p3, NULL, &err), "p must be 1 or 2, got 3");
    kiln_attribute axis4[1] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 4}};
    REFUSED(build_program("lp_norm", KILN_F32, dims, 2, one, 1, 1, axis4, NULL, &err),
            "axis 4 is out of range for rank 4");
    operand ln[2] = {{"x", "[n, c]", NULL}, {"scale", "[c]", NULL}};
    kiln_attribute axis_m3[1] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -3}};
    REFUSED(build_program("layer_norm", KILN_F32, dims, 2, ln, 2, 1, axis_m3, NULL, &err), "axis -3 is out of range");
    operand rank3[1] = {{"x", "[n, c, 3]", NULL}};
    REFUSED(build_program("mean_variance_norm", KILN_F32, dims, 2, rank3, 1, 0, NULL, NULL, &err),
            "default axes [0, 2, 3] need rank >= 4");
    int64_t repeated[2] = {1, -2};
    kiln_attribute rep[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = repeated, .count = 2}};
    REFUSED(build_program("mean_variance_norm", KILN_F32, dims, 2, rank3, 1, 1, rep, NULL, &err), "repeats axis 1");
    kiln_attribute empty[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = repeated, .count = 0}};
    REFUSED(build_program("mean_variance_norm", KILN_F32, dims, 2, rank3, 1, 1, empty, NULL, &err),
            "axes must not be empty");
    /* Unknown attribute and wrong attribute type (the common check). */
    kiln_attribute unknown[1] = {{.name = "eps", .type = KILN_ATTRIBUTE_FLOAT, .f = 1e-3}};
    assert_int_equal(build_program("instance_norm", KILN_F32, dims, 2, three, 3, 1, unknown, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    kiln_attribute groups_float[1] = {{.name = "num_groups", .type = KILN_ATTRIBUTE_FLOAT, .f = 1.5}};
    assert_int_equal(build_program("group_norm", KILN_F32, dims, 2, three, 3, 1, groups_float, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    /* Wrong operand counts. */
    assert_int_not_equal(build_program("batch_norm", KILN_F32, dims, 2, three, 3, 0, NULL, NULL, &err), KILN_OK);
}

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_int_equal(kiln_ops_norm.count, 6);
    assert_family_registered(&kiln_ops_norm, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(batch_norm_differential),
        cmocka_unit_test(layer_norm_differential),
        cmocka_unit_test(layer_norm_row_loop_is_the_general_loop),
        cmocka_unit_test(group_and_instance_norm_differential),
        cmocka_unit_test(lp_norm_differential),
        cmocka_unit_test(mean_variance_norm_differential),
        cmocka_unit_test(zero_variance_gives_bias),
        cmocka_unit_test(specials_stay_in_their_slice),
        cmocka_unit_test(kernels_refuse_bad_calls),
        cmocka_unit_test(ops_run_end_to_end),
        cmocka_unit_test(channel_sizes_are_proven),
        cmocka_unit_test(group_divisibility_is_proven),
        cmocka_unit_test(dtypes_ranks_and_attributes_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
