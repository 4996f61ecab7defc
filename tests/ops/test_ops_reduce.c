/*
 * test_ops_reduce.c — the reduce family (reduce_*, argmax, argmin, softmax,
 * log_softmax, hardmax) against an independent reference written here, over
 * every dtype each op takes, ranks 0..4, every axis subset (positive,
 * negative and the all-axes default), keepdims 0 and 1, extents 0..3 and
 * IEEE specials; end to end through the public builder and a session with
 * non-default attributes; and the refusals of the shape rules.
 *
 * The reference does not walk strides: it enumerates every output flat
 * index, recovers the kept multi-index by div/mod, then enumerates the
 * reduced index set the same way and rebuilds each input flat index by
 * Horner's rule. log_sum_exp is computed naively in long double (the
 * inputs it is compared on are small), softmax as 1 / sum_k exp(x_k - x_j),
 * log_softmax as -log of that sum, and argmax/argmin by finding the
 * extreme value first, then the first (or last) index holding it.
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

#include "borrowed_attribute.h"
#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

/* --------------------------------------------------------------- dtypes */

static const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};
static const kiln_dtype all_dtypes[] = {
    KILN_F32, KILN_F64, KILN_I8, KILN_I16, KILN_I32, KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64,
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static unsigned element_width(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_I8: case KILN_U8: return 1;
    case KILN_I16: case KILN_U16: return 2;
    case KILN_F32: case KILN_I32: case KILN_U32: return 4;
    default: return 8;
    }
}

static bool is_float(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64;
}

static bool is_signed(kiln_dtype dtype)
{
    return dtype == KILN_I8 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
}

static double load_float(kiln_dtype dtype, const void *data, uint64_t i)
{
    const unsigned char *p = (const unsigned char *)data + i * element_width(dtype);
    if (dtype == KILN_F32) {
        float v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void store_float(kiln_dtype dtype, void *data, uint64_t i, double value)
{
    unsigned char *p = (unsigned char *)data + i * element_width(dtype);
    if (dtype == KILN_F32) {
        float v = (float)value;
        memcpy(p, &v, sizeof v);
    } else {
        memcpy(p, &value, sizeof value);
    }
}

/* An integer element as 64 bits: sign-extended for signed dtypes. */
static uint64_t load_bits(kiln_dtype dtype, const void *data, uint64_t i)
{
    const unsigned char *p = (const unsigned char *)data + i * element_width(dtype);
    switch (dtype) {
    case KILN_I8: { int8_t v; memcpy(&v, p, 1); return (uint64_t)(int64_t)v; }
    case KILN_I16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
    case KILN_I32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
    case KILN_U8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case KILN_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case KILN_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Store the low bits (little-endian hosts: the first bytes of the word). */
static void store_bits(kiln_dtype dtype, void *data, uint64_t i, uint64_t bits)
{
    unsigned char *p = (unsigned char *)data + i * element_width(dtype);
    switch (element_width(dtype)) {
    case 1: { uint8_t v = (uint8_t)bits; memcpy(p, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: memcpy(p, &bits, 8); break;
    }
}

/* a < b in the dtype's own order (integers only). */
static bool integer_less(kiln_dtype dtype, uint64_t a, uint64_t b)
{
    return is_signed(dtype) ? (int64_t)a < (int64_t)b : a < b;
}

/*
 * Fill with random values: floats in -4..4 in steps of 1/8 (so ties occur)
 * with, when `specials`, about one element in six NaN, +inf or -inf;
 * integers with random bits (so sums and products wrap).
 */
static void fill_random(kiln_tensor *t, prng *rng, bool specials)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        if (is_float(t->dtype)) {
            double v = ((double)prng_below(rng, 65) - 32.0) / 8.0;
            if (specials) {
                uint64_t pick = prng_below(rng, 18);
                v = pick == 0 ? NAN : pick == 1 ? INFINITY : pick == 2 ? -INFINITY : v;
            }
            store_float(t->dtype, t->data, i, v);
        } else {
            store_bits(t->dtype, t->data, i, prng_next(rng));
        }
    }
}

/* ---------------------------------------------------------------- ops */

typedef enum ref_op {
    REF_SUM, REF_MEAN, REF_MAX, REF_MIN, REF_PROD, REF_L1, REF_L2, REF_SUM_SQUARE, REF_LOG_SUM,
    REF_LOG_SUM_EXP,
} ref_op;

typedef struct reduce_case {
    const char *name;
    ref_op op;
    bool integers;
} reduce_case;

static const reduce_case reduce_cases[] = {
    {"reduce_sum", REF_SUM, true},         {"reduce_mean", REF_MEAN, false},
    {"reduce_max", REF_MAX, true},         {"reduce_min", REF_MIN, true},
    {"reduce_prod", REF_PROD, true},       {"reduce_l1", REF_L1, false},
    {"reduce_l2", REF_L2, false},          {"reduce_sum_square", REF_SUM_SQUARE, false},
    {"reduce_log_sum", REF_LOG_SUM, false}, {"reduce_log_sum_exp", REF_LOG_SUM_EXP, false},
};

/* ------------------------------------------------------------ reference */

/* Kept and reduced axes of `shape` as index lists. */
typedef struct axis_sets {
    uint32_t kept[KILN_MAX_RANK], kept_count;
    uint32_t reduced[KILN_MAX_RANK], reduced_count;
    uint64_t out_count, reduced_elements;
} axis_sets;

static axis_sets split_axes(uint32_t rank, const int64_t *shape, const bool *reduced)
{
    axis_sets s;
    memset(&s, 0, sizeof s);
    s.out_count = 1;
    s.reduced_elements = 1;
    for (uint32_t a = 0; a < rank; a++) {
        if (reduced[a]) {
            s.reduced[s.reduced_count++] = a;
            s.reduced_elements *= (uint64_t)shape[a];
        } else {
            s.kept[s.kept_count++] = a;
            s.out_count *= (uint64_t)shape[a];
        }
    }
    return s;
}

/* Spread flat index `flat` over the listed axes of `shape` (last fastest). */
static void unflatten(uint64_t flat, const uint32_t *axes, uint32_t count, const int64_t *shape, int64_t *index)
{
    for (uint32_t i = count; i-- > 0;) {
        uint64_t extent = (uint64_t)shape[axes[i]];
        index[axes[i]] = (int64_t)(flat % extent);
        flat /= extent;
    }
}

static uint64_t flatten(uint32_t rank, const int64_t *shape, const int64_t *index)
{
    uint64_t flat = 0;
    for (uint32_t a = 0; a < rank; a++)
        flat = flat * (uint64_t)shape[a] + (uint64_t)index[a];
    return flat;
}

/* expected[q] for every output q, from the reduced set of input elements. */
static void reference_reduce(ref_op op, const kiln_tensor *in, const bool *reduced, kiln_tensor *expected)
{
    axis_sets s = split_axes(in->rank, in->shape, reduced);
    kiln_dtype dt = in->dtype;
    double *values = malloc((s.reduced_elements + 1) * sizeof *values);
    uint64_t *bits = malloc((s.reduced_elements + 1) * sizeof *bits);
    assert_non_null(values);
    assert_non_null(bits);
    for (uint64_t q = 0; q < s.out_count; q++) {
        int64_t index[KILN_MAX_RANK] = {0};
        unflatten(q, s.kept, s.kept_count, in->shape, index);
        uint64_t n = s.reduced_elements;
        for (uint64_t t = 0; t < n; t++) {
            unflatten(t, s.reduced, s.reduced_count, in->shape, index);
            uint64_t flat = flatten(in->rank, in->shape, index);
            if (is_float(dt))
                values[t] = load_float(dt, in->data, flat);
            else
                bits[t] = load_bits(dt, in->data, flat);
        }
        if (!is_float(dt)) {
            uint64_t acc = op == REF_PROD ? 1 : 0;
            for (uint64_t t = 0; t < n; t++) {
                if (op == REF_SUM)
                    acc += bits[t];
                else if (op == REF_PROD)
                    acc *= bits[t];
                else if (t == 0 || (op == REF_MAX ? integer_less(dt, acc, bits[t]) : integer_less(dt, bits[t], acc)))
                    acc = bits[t];
            }
            store_bits(dt, expected->data, q, acc);
            continue;
        }
        double result = 0.0;
        bool any_nan = false;
        for (uint64_t t = 0; t < n; t++)
            any_nan |= isnan(values[t]);
        switch (op) {
        case REF_SUM: case REF_MEAN: case REF_LOG_SUM: {
            double sum = 0.0;
            for (uint64_t t = 0; t < n; t++)
                sum += values[t];
            result = op == REF_SUM ? sum : op == REF_MEAN ? (n ? sum / (double)n : NAN) : log(sum);
            break;
        }
        case REF_PROD:
            result = 1.0;
            for (uint64_t t = 0; t < n; t++)
                result *= values[t];
            break;
        case REF_L1: case REF_L2: case REF_SUM_SQUARE: {
            double sum = 0.0;
            for (uint64_t t = 0; t < n; t++)
                sum += op == REF_L1 ? fabs(values[t]) : values[t] * values[t];
            result = op == REF_L2 ? sqrt(sum) : sum;
            break;
        }
        case REF_MAX: case REF_MIN:
            result = values[0];
            for (uint64_t t = 1; t < n; t++)
                result = op == REF_MAX ? fmax(result, values[t]) : fmin(result, values[t]);
            if (any_nan)
                result = NAN;
            break;
        case REF_LOG_SUM_EXP: {
            long double sum = 0.0L;
            for (uint64_t t = 0; t < n; t++)
                sum += expl((long double)values[t]);
            result = (double)logl(sum);
            break;
        }
        }
        store_float(dt, expected->data, q, result);
    }
    free(values);
    free(bits);
}

/* Flat input index of element k along `axis` of output slot (outer o, inner i). */
static uint64_t slice_index(const kiln_tensor *in, uint32_t axis, uint64_t q, int64_t k)
{
    /* q enumerates the input positions with the axis removed. */
    uint32_t others[KILN_MAX_RANK], count = 0;
    for (uint32_t a = 0; a < in->rank; a++)
        if (a != axis)
            others[count++] = a;
    int64_t index[KILN_MAX_RANK] = {0};
    unflatten(q, others, count, in->shape, index);
    index[axis] = k;
    return flatten(in->rank, in->shape, index);
}

static uint64_t slice_count(const kiln_tensor *in, uint32_t axis)
{
    uint64_t count = 1;
    for (uint32_t a = 0; a < in->rank; a++)
        if (a != axis)
            count *= (uint64_t)in->shape[a];
    return count;
}

/* The extreme value first, then the first (or last) index holding it; a NaN is the extreme. */
static int64_t reference_arg(const kiln_tensor *in, uint32_t axis, uint64_t q, bool max, bool last)
{
    int64_t n = in->shape[axis];
    kiln_dtype dt = in->dtype;
    int64_t found = -1;
    if (is_float(dt)) {
        bool any_nan = false;
        double extreme = max ? -INFINITY : INFINITY;
        for (int64_t k = 0; k < n; k++) {
            double v = load_float(dt, in->data, slice_index(in, axis, q, k));
            any_nan |= isnan(v);
            if (!isnan(v))
                extreme = max ? fmax(extreme, v) : fmin(extreme, v);
        }
        for (int64_t k = 0; k < n; k++) {
            double v = load_float(dt, in->data, slice_index(in, axis, q, k));
            bool hit = any_nan ? isnan(v) : v == extreme;
            if (hit && (found < 0 || last))
                found = k;
        }
        return found;
    }
    uint64_t extreme = load_bits(dt, in->data, slice_index(in, axis, q, 0));
    for (int64_t k = 1; k < n; k++) {
        uint64_t v = load_bits(dt, in->data, slice_index(in, axis, q, k));
        if (max ? integer_less(dt, extreme, v) : integer_less(dt, v, extreme))
            extreme = v;
    }
    for (int64_t k = 0; k < n; k++)
        if (load_bits(dt, in->data, slice_index(in, axis, q, k)) == extreme && (found < 0 || last))
            found = k;
    return found;
}

typedef enum axis_ref { REF_ARGMAX, REF_ARGMIN, REF_SOFTMAX, REF_LOG_SOFTMAX, REF_HARDMAX } axis_ref;

static void reference_axis_op(axis_ref op, const kiln_tensor *in, uint32_t axis, bool last, kiln_tensor *expected)
{
    uint64_t slices = slice_count(in, axis);
    int64_t n = in->shape[axis];
    for (uint64_t q = 0; q < slices; q++) {
        if (op == REF_ARGMAX || op == REF_ARGMIN) {
            ((int64_t *)expected->data)[q] = reference_arg(in, axis, q, op == REF_ARGMAX, last);
            continue;
        }
        int64_t winner = op == REF_HARDMAX && n > 0 ? reference_arg(in, axis, q, true, false) : -1;
        for (int64_t j = 0; j < n; j++) {
            uint64_t at = slice_index(in, axis, q, j);
            double xj = load_float(in->dtype, in->data, at);
            double result;
            if (op == REF_HARDMAX) {
                result = j == winner ? 1.0 : 0.0;
            } else {
                long double sum = 0.0L;
                for (int64_t k = 0; k < n; k++)
                    sum += expl((long double)load_float(in->dtype, in->data, slice_index(in, axis, q, k)) -
                                (long double)xj);
                result = op == REF_SOFTMAX ? (double)(1.0L / sum) : (double)-logl(sum);
            }
            store_float(in->dtype, expected->data, at, result);
        }
    }
}

/* ------------------------------------------------------------ comparing */

static bool close_enough(kiln_dtype dtype, double actual, double expected)
{
    if (isnan(expected) || isnan(actual))
        return isnan(expected) && isnan(actual);
    if (isinf(expected) || isinf(actual))
        return actual == expected;
    double tolerance = dtype == KILN_F32 ? 2e-6 : 1e-12;
    return fabs(actual - expected) <= tolerance * fmax(1.0, fabs(expected));
}

static void assert_tensors_match(const kiln_tensor *actual, const kiln_tensor *expected, const char *what)
{
    assert_int_equal(actual->dtype, expected->dtype);
    assert_int_equal(actual->element_count, expected->element_count);
    for (uint64_t i = 0; i < expected->element_count; i++) {
        bool ok;
        if (is_float(expected->dtype))
            ok = close_enough(expected->dtype, load_float(actual->dtype, actual->data, i),
                              load_float(expected->dtype, expected->data, i));
        else
            ok = load_bits(actual->dtype, actual->data, i) == load_bits(expected->dtype, expected->data, i);
        if (!ok) {
            if (is_float(expected->dtype))
                print_error("%s: element %llu: got %.17g, expected %.17g\n", what, (unsigned long long)i,
                            load_float(actual->dtype, actual->data, i), load_float(expected->dtype, expected->data, i));
            else
                print_error("%s: element %llu: got %llu, expected %llu\n", what, (unsigned long long)i,
                            (unsigned long long)load_bits(actual->dtype, actual->data, i),
                            (unsigned long long)load_bits(expected->dtype, expected->data, i));
            fail();
        }
    }
}

/* ----------------------------------------------------- calling the ops */

static kiln_node_attribute int_attribute(const char *name, int64_t value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INT, .i = value});
}

static kiln_node_attribute ints_attribute(const char *name, int64_t *values, uint32_t count)
{
    return borrowed_attribute(
        (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INTS, .ints = values, .count = count});
}

static kiln_status run_op(const char *name, const kiln_tensor *in, kiln_tensor *out,
                          const kiln_node_attribute *attributes, uint32_t count, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    assert_non_null(op);
    const kiln_tensor *inputs[1] = {in};
    /* Poison the output: a kernel that skips an element must not pass on a zeroed buffer. */
    memset(out->data, 0x7F, out->byte_size);
    kiln_kernel_call call = {inputs, 1, out, attributes, count, NULL};
    return op->run(&call, err);
}

/*
 * Run the op's shape rule on constant extents and check the result against
 * `expected_shape` (or return the refusal).
 */
static kiln_status check_shape_rule(const char *name, const kiln_tensor *in, const kiln_node_attribute *attributes,
                                    uint32_t count, kiln_dtype expected_dtype, uint32_t expected_rank,
                                    const int64_t *expected_shape, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_value_type type = {in->dtype, {in->rank, {0}}};
    for (uint32_t a = 0; a < in->rank; a++)
        assert_int_equal(kiln_expr_const(&pool, in->shape[a], &type.shape.axes[a], err), KILN_OK);
    kiln_shape_context ctx = {&pool, NULL, 0, "node 0 (test)", attributes, count, NULL, 0, NULL, NULL, 0, NULL, 0};
    const kiln_value_type *inputs[1] = {&type};
    kiln_value_type out;
    kiln_status status = op->infer(&ctx, inputs, 1, &out, err);
    if (status == KILN_OK) {
        assert_int_equal(out.dtype, expected_dtype);
        assert_int_equal(out.shape.rank, expected_rank);
        for (uint32_t a = 0; a < expected_rank; a++)
            assert_true(kiln_expr_is_const(&pool, out.shape.axes[a], expected_shape[a]));
    }
    kiln_expr_pool_release(&pool);
    return status;
}

/* ---------------------------------------------------- differential tests */

/* One reduction: shape rule, kernel and reference agree. */
static void check_reduce(const reduce_case *c, const kiln_tensor *in, bool use_axes, const bool *reduced_mask,
                         bool negative, bool keepdims)
{
    int64_t axes[KILN_MAX_RANK];
    uint32_t axis_count = 0;
    bool reduced[KILN_MAX_RANK] = {false};
    for (uint32_t a = 0; a < in->rank; a++) {
        reduced[a] = use_axes ? reduced_mask[a] : true;
        if (use_axes && reduced_mask[a])
            axes[axis_count++] = negative ? (int64_t)a - (int64_t)in->rank : (int64_t)a;
    }
    /* An empty axes list means every axis, like no list at all. */
    if (axis_count == 0)
        for (uint32_t a = 0; a < in->rank; a++)
            reduced[a] = true;
    /* Listed in reverse when negative: the order of axes does not matter. */
    if (negative)
        for (uint32_t i = 0; i < axis_count / 2; i++) {
            int64_t t = axes[i];
            axes[i] = axes[axis_count - 1 - i];
            axes[axis_count - 1 - i] = t;
        }
    kiln_node_attribute attributes[2];
    uint32_t count = 0;
    if (use_axes)
        attributes[count++] = ints_attribute("axes", axes, axis_count);
    /* keepdims 1 is also the default: leave it out half the time. */
    if (!keepdims || negative)
        attributes[count++] = int_attribute("keepdims", keepdims);
    int64_t out_shape[KILN_MAX_RANK];
    uint32_t out_rank = 0;
    for (uint32_t a = 0; a < in->rank; a++)
        if (!reduced[a] || keepdims)
            out_shape[out_rank++] = reduced[a] ? 1 : in->shape[a];
    kiln_error err;
    char what[160];
    snprintf(what, sizeof what, "%s %s rank %u keepdims %d", c->name, kiln_dtype_name(in->dtype), in->rank, keepdims);
    bool empty_reduction = false;
    for (uint32_t a = 0; a < in->rank; a++)
        empty_reduction |= reduced[a] && in->shape[a] == 0;
    kiln_status shape_status =
        check_shape_rule(c->name, in, attributes, count, in->dtype, out_rank, out_shape, &err);
    if ((c->op == REF_MAX || c->op == REF_MIN) && empty_reduction) {
        assert_int_equal(shape_status, KILN_ERR_INVALID_PROGRAM);
        return;
    }
    if (shape_status != KILN_OK)
        print_error("%s: %s\n", what, err.message);
    assert_int_equal(shape_status, KILN_OK);
    kiln_tensor *out = new_tensor(in->dtype, out_rank, out_shape);
    kiln_tensor *expected = new_tensor(in->dtype, out_rank, out_shape);
    assert_int_equal(run_op(c->name, in, out, attributes, count, &err), KILN_OK);
    reference_reduce(c->op, in, reduced, expected);
    assert_tensors_match(out, expected, what);
    kiln_tensor_free(out);
    kiln_tensor_free(expected);
}

/* A random shape of rank `rank` with extents in 1..3, or 0..3 when `allow_zero`. */
static void random_shape(prng *rng, uint32_t rank, bool allow_zero, int64_t *shape)
{
    for (uint32_t a = 0; a < rank; a++)
        shape[a] = (int64_t)prng_below(rng, allow_zero ? 4 : 3) + (allow_zero ? 0 : 1);
}

static void reductions_match_reference(void **state)
{
    (void)state;
    prng rng = {0x9e3779b97f4a7c15u};
    for (size_t c = 0; c < COUNT(reduce_cases); c++) {
        const reduce_case *rc = &reduce_cases[c];
        for (size_t d = 0; d < COUNT(all_dtypes); d++) {
            kiln_dtype dt = all_dtypes[d];
            if (!is_float(dt) && !rc->integers)
                continue;
            for (uint32_t rank = 0; rank <= 4; rank++) {
                for (int trial = 0; trial < 3; trial++) {
                    int64_t shape[KILN_MAX_RANK];
                    random_shape(&rng, rank, trial == 2, shape);
                    kiln_tensor *in = new_tensor(dt, rank, shape);
                    /* log_sum_exp's naive reference needs finite inputs
                     * only to stay exact; specials are checked too. */
                    fill_random(in, &rng, trial == 1);
                    for (uint32_t mask = 0; mask < (1u << rank); mask++) {
                        bool reduced[KILN_MAX_RANK] = {false};
                        for (uint32_t a = 0; a < rank; a++)
                            reduced[a] = (mask >> a) & 1u;
                        for (int keepdims = 0; keepdims <= 1; keepdims++) {
                            check_reduce(rc, in, true, reduced, false, keepdims);
                            check_reduce(rc, in, true, reduced, true, keepdims);
                        }
                    }
                    for (int keepdims = 0; keepdims <= 1; keepdims++)
                        check_reduce(rc, in, false, NULL, false, keepdims);
                    kiln_tensor_free(in);
                }
            }
        }
    }
}

/* Ranks 5..8 take the same path; one pass per op at rank 8 with extents 1..2. */
static void reductions_handle_rank_8(void **state)
{
    (void)state;
    prng rng = {12345};
    int64_t shape[8] = {2, 1, 2, 2, 1, 2, 2, 2};
    for (size_t c = 0; c < COUNT(reduce_cases); c++) {
        kiln_tensor *in = new_tensor(KILN_F64, 8, shape);
        fill_random(in, &rng, false);
        bool reduced[8] = {true, false, true, false, false, true, false, true};
        check_reduce(&reduce_cases[c], in, true, reduced, true, false);
        check_reduce(&reduce_cases[c], in, true, reduced, false, true);
        kiln_tensor_free(in);
    }
}

static const char *const axis_op_names[] = {"argmax", "argmin", "softmax", "log_softmax", "hardmax"};

static void check_axis_op(axis_ref op, const kiln_tensor *in, int64_t axis_attr, bool keepdims, bool last)
{
    const char *name = axis_op_names[op];
    bool arg = op == REF_ARGMAX || op == REF_ARGMIN;
    uint32_t axis = (uint32_t)(axis_attr < 0 ? axis_attr + (int64_t)in->rank : axis_attr);
    kiln_node_attribute attributes[3];
    uint32_t count = 0;
    attributes[count++] = int_attribute("axis", axis_attr);
    if (arg) {
        attributes[count++] = int_attribute("keepdims", keepdims);
        attributes[count++] = int_attribute("select_last_index", last);
    }
    int64_t out_shape[KILN_MAX_RANK];
    uint32_t out_rank = 0;
    for (uint32_t a = 0; a < in->rank; a++)
        if (!arg || a != axis || keepdims)
            out_shape[out_rank++] = arg && a == axis ? 1 : in->shape[a];
    kiln_dtype out_dtype = arg ? KILN_I64 : in->dtype;
    kiln_error err;
    char what[160];
    snprintf(what, sizeof what, "%s %s rank %u axis %lld keepdims %d last %d", name, kiln_dtype_name(in->dtype),
             in->rank, (long long)axis_attr, keepdims, last);
    kiln_status status = check_shape_rule(name, in, attributes, count, out_dtype, out_rank, out_shape, &err);
    if (arg && in->shape[axis] == 0) {
        assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
        return;
    }
    if (status != KILN_OK)
        print_error("%s: %s\n", what, err.message);
    assert_int_equal(status, KILN_OK);
    kiln_tensor *out = new_tensor(out_dtype, out_rank, out_shape);
    kiln_tensor *expected = new_tensor(out_dtype, out_rank, out_shape);
    assert_int_equal(run_op(name, in, out, attributes, count, &err), KILN_OK);
    reference_axis_op(op, in, axis, last, expected);
    assert_tensors_match(out, expected, what);
    kiln_tensor_free(out);
    kiln_tensor_free(expected);
}

static void axis_ops_match_reference(void **state)
{
    (void)state;
    prng rng = {0x51ed270b1c2a3f45u};
    for (int op = REF_ARGMAX; op <= REF_HARDMAX; op++) {
        bool arg = op == REF_ARGMAX || op == REF_ARGMIN;
        for (size_t d = 0; d < COUNT(all_dtypes); d++) {
            kiln_dtype dt = all_dtypes[d];
            if (!is_float(dt) && !arg)
                continue;
            for (uint32_t rank = 1; rank <= 4; rank++) {
                for (int trial = 0; trial < 4; trial++) {
                    int64_t shape[KILN_MAX_RANK];
                    random_shape(&rng, rank, trial == 3, shape);
                    kiln_tensor *in = new_tensor(dt, rank, shape);
                    /* The softmax reference is exact only on finite
                     * inputs and NaN; infinities have known answers below. */
                    fill_random(in, &rng, arg && trial == 1);
                    if (!arg && trial == 1 && in->element_count)
                        store_float(dt, in->data, prng_below(&rng, in->element_count), NAN);
                    for (int64_t axis = -(int64_t)rank; axis < (int64_t)rank; axis++)
                        for (int keepdims = 0; keepdims <= 1; keepdims++)
                            for (int last = 0; last <= 1; last++)
                                if (arg || (keepdims == 1 && last == 0))
                                    check_axis_op((axis_ref)op, in, axis, keepdims, last);
                    kiln_tensor_free(in);
                }
            }
        }
    }
}

/* ------------------------------------------------------- known answers */

static double run_float(const char *name, kiln_dtype dtype, uint32_t n, const double *values,
                        const kiln_node_attribute *attributes, uint32_t count, double *out_values)
{
    int64_t shape[1] = {n};
    int64_t one[1] = {1};
    kiln_tensor *in = new_tensor(dtype, 1, shape);
    for (uint32_t i = 0; i < n; i++)
        store_float(dtype, in->data, i, values[i]);
    bool same_shape = strcmp(name, "softmax") == 0 || strcmp(name, "log_softmax") == 0 ||
                      strcmp(name, "hardmax") == 0;
    kiln_tensor *out = new_tensor(dtype, 1, same_shape ? shape : one);
    kiln_error err;
    assert_int_equal(run_op(name, in, out, attributes, count, &err), KILN_OK);
    double first = out->element_count ? load_float(dtype, out->data, 0) : 0.0;
    for (uint64_t i = 0; out_values && i < out->element_count; i++)
        out_values[i] = load_float(dtype, out->data, i);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
    return first;
}

static void empty_reductions_have_defined_values(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double expected;
    } cases[] = {
        {"reduce_sum", 0.0}, {"reduce_prod", 1.0}, {"reduce_l1", 0.0}, {"reduce_l2", 0.0},
        {"reduce_sum_square", 0.0}, {"reduce_log_sum_exp", -INFINITY}, {"reduce_log_sum", -INFINITY},
        {"reduce_mean", NAN},
    };
    for (size_t d = 0; d < COUNT(float_dtypes); d++)
        for (size_t i = 0; i < COUNT(cases); i++) {
            double v = run_float(cases[i].name, float_dtypes[d], 0, NULL, NULL, 0, NULL);
            if (isnan(cases[i].expected))
                assert_true(isnan(v));
            else
                assert_true(v == cases[i].expected);
        }
    /* Integer sums and products of nothing. */
    int64_t zero[1] = {0}, one[1] = {1};
    kiln_tensor *in = new_tensor(KILN_I32, 1, zero);
    kiln_tensor *out = new_tensor(KILN_I32, 1, one);
    kiln_error err;
    assert_int_equal(run_op("reduce_prod", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int32_t *)out->data)[0], 1);
    assert_int_equal(run_op("reduce_sum", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int32_t *)out->data)[0], 0);
    /* max has no identity: a direct call on an empty axis fails cleanly. */
    assert_int_equal(run_op("reduce_max", in, out, NULL, 0, &err), KILN_ERR_RUNTIME);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

static void log_sum_exp_and_softmax_are_stable(void **state)
{
    (void)state;
    double big[3] = {1000.0, 1000.0, 999.0};
    double expect = 1000.0 + log(2.0 + exp(-1.0));
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        double v = run_float("reduce_log_sum_exp", float_dtypes[d], 3, big, NULL, 0, NULL);
        assert_true(close_enough(float_dtypes[d], v, expect));
        double small[3] = {-1000.0, -1000.0, -1001.0};
        v = run_float("reduce_log_sum_exp", float_dtypes[d], 3, small, NULL, 0, NULL);
        assert_true(close_enough(float_dtypes[d], v, -1000.0 + log(2.0 + exp(-1.0))));
        double out[3];
        run_float("softmax", float_dtypes[d], 3, big, NULL, 0, out);
        double denominator = 2.0 + exp(-1.0);
        assert_true(close_enough(float_dtypes[d], out[0], 1.0 / denominator));
        assert_true(close_enough(float_dtypes[d], out[2], exp(-1.0) / denominator));
        run_float("log_softmax", float_dtypes[d], 3, big, NULL, 0, out);
        assert_true(close_enough(float_dtypes[d], out[0], -log(denominator)));
        assert_true(close_enough(float_dtypes[d], out[2], -1.0 - log(denominator)));
        /* Masked entries: -inf gives probability 0 and log-probability -inf. */
        double masked[3] = {0.0, -INFINITY, 0.0};
        run_float("softmax", float_dtypes[d], 3, masked, NULL, 0, out);
        assert_true(out[0] == 0.5 && out[1] == 0.0 && out[2] == 0.5);
        run_float("log_softmax", float_dtypes[d], 3, masked, NULL, 0, out);
        assert_true(isinf(out[1]) && out[1] < 0);
        /* A slice holding +inf, or only -inf, has no defined distribution: NaN. */
        double plus_inf[2] = {INFINITY, 1.0};
        run_float("softmax", float_dtypes[d], 2, plus_inf, NULL, 0, out);
        assert_true(isnan(out[0]) && isnan(out[1]));
        double all_minus[2] = {-INFINITY, -INFINITY};
        run_float("softmax", float_dtypes[d], 2, all_minus, NULL, 0, out);
        assert_true(isnan(out[0]) && isnan(out[1]));
        /* log_sum_exp with infinities. */
        assert_true(run_float("reduce_log_sum_exp", float_dtypes[d], 2, plus_inf, NULL, 0, NULL) == INFINITY);
        assert_true(run_float("reduce_log_sum_exp", float_dtypes[d], 2, all_minus, NULL, 0, NULL) == -INFINITY);
        /* hardmax: the first max; a NaN wins. */
        double ties[4] = {1.0, 3.0, 3.0, 2.0};
        double hot[4];
        run_float("hardmax", float_dtypes[d], 4, ties, NULL, 0, hot);
        assert_true(hot[0] == 0.0 && hot[1] == 1.0 && hot[2] == 0.0 && hot[3] == 0.0);
        double with_nan[3] = {1.0, NAN, 5.0};
        run_float("hardmax", float_dtypes[d], 3, with_nan, NULL, 0, hot);
        assert_true(hot[0] == 0.0 && hot[1] == 1.0 && hot[2] == 0.0);
    }
}

static void integer_sums_and_products_wrap(void **state)
{
    (void)state;
    int64_t shape[1] = {3}, one[1] = {1};
    kiln_tensor *in = new_tensor(KILN_I8, 1, shape);
    kiln_tensor *out = new_tensor(KILN_I8, 1, one);
    int8_t *x = in->data;
    x[0] = 100; x[1] = 100; x[2] = 100;
    kiln_error err;
    assert_int_equal(run_op("reduce_sum", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int8_t *)out->data)[0], 44); /* 300 - 256 */
    assert_int_equal(run_op("reduce_prod", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int8_t *)out->data)[0], 64); /* 10^6 mod 256 */
    x[0] = -128; x[1] = 127; x[2] = 0;
    assert_int_equal(run_op("reduce_max", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int8_t *)out->data)[0], 127);
    assert_int_equal(run_op("reduce_min", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int8_t *)out->data)[0], -128);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

static void argmax_ties_and_nan_are_deterministic(void **state)
{
    (void)state;
    int64_t shape[1] = {5}, one[1] = {1};
    kiln_tensor *in = new_tensor(KILN_F32, 1, shape);
    kiln_tensor *out = new_tensor(KILN_I64, 1, one);
    float *x = in->data;
    kiln_error err;
    float ties[5] = {1, 3, -2, 3, -2};
    memcpy(x, ties, sizeof ties);
    kiln_node_attribute last[2] = {int_attribute("keepdims", 1), int_attribute("select_last_index", 1)};
    assert_int_equal(run_op("argmax", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 1);
    assert_int_equal(run_op("argmax", in, out, last, 2, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 3);
    assert_int_equal(run_op("argmin", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 2);
    assert_int_equal(run_op("argmin", in, out, last, 2, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 4);
    float nans[5] = {1, NAN, 7, NAN, -9};
    memcpy(x, nans, sizeof nans);
    assert_int_equal(run_op("argmax", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 1);
    assert_int_equal(run_op("argmin", in, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 1);
    assert_int_equal(run_op("argmax", in, out, last, 2, &err), KILN_OK);
    assert_int_equal(((int64_t *)out->data)[0], 3);
    /* reduce_max propagates the NaN. */
    kiln_tensor *m = new_tensor(KILN_F32, 1, one);
    assert_int_equal(run_op("reduce_max", in, m, NULL, 0, &err), KILN_OK);
    assert_true(isnan(((float *)m->data)[0]));
    kiln_tensor_free(m);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

/* Kernels check the attributes they are given, whatever the caller did. */
static void kernels_refuse_bad_attributes(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 3}, one[2] = {1, 3};
    kiln_tensor *in = new_tensor(KILN_F32, 2, shape);
    kiln_tensor *out = new_tensor(KILN_F32, 2, one);
    memset(in->data, 0, in->byte_size);
    kiln_error err;
    int64_t bad_axes[2] = {0, -2};
    kiln_node_attribute repeated[1] = {ints_attribute("axes", bad_axes, 2)};
    assert_int_equal(run_op("reduce_sum", in, out, repeated, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "repeats"));
    int64_t far[1] = {2};
    kiln_node_attribute out_of_range[1] = {ints_attribute("axes", far, 1)};
    assert_int_equal(run_op("reduce_sum", in, out, out_of_range, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_node_attribute axis[1] = {int_attribute("axis", 5)};
    assert_int_equal(run_op("softmax", in, in, axis, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    /* The output must have the size the attributes give. */
    int64_t axes0[1] = {1};
    kiln_node_attribute wrong[1] = {ints_attribute("axes", axes0, 1)};
    assert_int_equal(run_op("reduce_sum", in, out, wrong, 1, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

/* ------------------------------------------------------- shape rules */

static kiln_status shape_rule_on(const char *name, kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                 const kiln_node_attribute *attributes, uint32_t count, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_value_type type = {dtype, {rank, {0}}};
    for (uint32_t a = 0; a < rank; a++)
        assert_int_equal(kiln_expr_const(&pool, shape[a], &type.shape.axes[a], err), KILN_OK);
    kiln_shape_context ctx = {&pool, NULL, 0, "node 7 (x)", attributes, count, NULL, 0, NULL, NULL, 0, NULL, 0};
    const kiln_value_type *inputs[1] = {&type};
    kiln_value_type out;
    kiln_status status = op->infer(&ctx, inputs, 1, &out, err);
    kiln_expr_pool_release(&pool);
    return status;
}

static void shape_rules_refuse_bad_attributes_and_dtypes(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 4};
    kiln_error err;
    int64_t repeated[2] = {1, -2};
    kiln_node_attribute a1[1] = {ints_attribute("axes", repeated, 2)};
    assert_int_equal(shape_rule_on("reduce_sum", KILN_F32, 3, shape, a1, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 7 (x)"));
    assert_non_null(strstr(err.message, "repeats axis 1"));
    int64_t far[1] = {-4};
    kiln_node_attribute a2[1] = {ints_attribute("axes", far, 1)};
    assert_int_equal(shape_rule_on("reduce_mean", KILN_F32, 3, shape, a2, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "out of range"));
    kiln_node_attribute keep[1] = {int_attribute("keepdims", 2)};
    assert_int_equal(shape_rule_on("reduce_l2", KILN_F32, 3, shape, keep, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "keepdims"));
    kiln_node_attribute last[1] = {int_attribute("select_last_index", -1)};
    assert_int_equal(shape_rule_on("argmin", KILN_F32, 3, shape, last, 1, &err), KILN_ERR_INVALID_PROGRAM);
    kiln_node_attribute axis[1] = {int_attribute("axis", 3)};
    assert_int_equal(shape_rule_on("softmax", KILN_F32, 3, shape, axis, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "axis 3 is out of range"));
    assert_int_equal(shape_rule_on("argmax", KILN_F32, 0, shape, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(shape_rule_on("softmax", KILN_F32, 0, shape, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
    /* Dtypes. */
    static const char *const float_only[] = {"reduce_mean", "reduce_l1", "reduce_l2", "reduce_sum_square",
                                             "reduce_log_sum", "reduce_log_sum_exp", "softmax", "log_softmax",
                                             "hardmax"};
    for (size_t i = 0; i < COUNT(float_only); i++) {
        assert_int_equal(shape_rule_on(float_only[i], KILN_I32, 3, shape, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
        assert_non_null(strstr(err.message, float_only[i]));
        assert_non_null(strstr(err.message, "i32"));
        assert_int_equal(shape_rule_on(float_only[i], KILN_F64, 3, shape, NULL, 0, &err), KILN_OK);
    }
    static const char *const any_number[] = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax",
                                             "argmin"};
    for (size_t i = 0; i < COUNT(any_number); i++) {
        assert_int_equal(shape_rule_on(any_number[i], KILN_U16, 3, shape, NULL, 0, &err), KILN_OK);
        assert_int_equal(shape_rule_on(any_number[i], KILN_BOOL, 3, shape, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
        /* f16 and bf16 are computed in f32 (test_half_compute.c). */
        assert_int_equal(shape_rule_on(any_number[i], KILN_F16, 3, shape, NULL, 0, &err), KILN_OK);
        assert_int_equal(shape_rule_on(any_number[i], KILN_BF16, 3, shape, NULL, 0, &err), KILN_OK);
    }
    /* A constant empty axis is refused for max/min/arg*, fine for sum. */
    int64_t empty[2] = {3, 0};
    assert_int_equal(shape_rule_on("reduce_min", KILN_F32, 2, empty, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "axis 1"));
    kiln_node_attribute axis1[1] = {int_attribute("axis", 1)};
    assert_int_equal(shape_rule_on("argmax", KILN_F32, 2, empty, axis1, 1, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(shape_rule_on("reduce_sum", KILN_F32, 2, empty, NULL, 0, &err), KILN_OK);
    int64_t kept[1] = {0};
    kiln_node_attribute axes0[1] = {ints_attribute("axes", kept, 1)};
    assert_int_equal(shape_rule_on("reduce_max", KILN_F32, 2, empty, axes0, 1, &err), KILN_OK);
}

/* ------------------------------------------------------- end to end */

typedef struct program_run {
    kiln_program *program;
    kiln_session *session;
} program_run;

/*
 * Build "y = op(x)" with x: dtype[shape_text] over dims n in n_min..4 and
 * m in 1..5. @return the builder status of adding the op (the program is
 * sealed and loaded only on success).
 */
static kiln_status build_program(const char *op, kiln_dtype dtype, const char *shape_text, int64_t n_min,
                                 uint32_t count, const kiln_attribute *attributes, program_run *run, kiln_error *err)
{
    kiln_builder *b;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("reduce", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", n_min, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 1, 5, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, shape_text, &x, err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, 1, &x, count, attributes, &y, err);
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

/* Run the loaded program on `in` and compare with `expected`. */
static void run_and_compare(program_run *run, const kiln_tensor *in, const kiln_tensor *expected, const char *what)
{
    kiln_error err;
    assert_int_equal(kiln_session_set_input(run->session, "x", in, &err), KILN_OK);
    if (kiln_session_run(run->session, &err) != KILN_OK)
        print_error("%s: %s\n", what, err.message);
    const kiln_tensor *y = kiln_session_output(run->session, 0);
    assert_non_null(y);
    assert_int_equal(kiln_tensor_rank(y), expected->rank);
    for (uint32_t a = 0; a < expected->rank; a++)
        assert_int_equal(kiln_tensor_shape(y)[a], expected->shape[a]);
    assert_tensors_match(y, expected, what);
    kiln_session_free(run->session);
    kiln_program_free(run->program);
}

static void reductions_run_end_to_end(void **state)
{
    (void)state;
    prng rng = {777};
    int64_t axes[2] = {-1, 0};
    kiln_attribute attributes[2] = {
        {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = axes, .count = 2},
        {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 0},
    };
    int64_t shape[3] = {3, 2, 4}; /* n = 3, m = 4 */
    int64_t out_shape[1] = {2};
    bool reduced[3] = {true, false, true};
    for (size_t c = 0; c < COUNT(reduce_cases); c++) {
        kiln_dtype dt = reduce_cases[c].integers ? KILN_I16 : KILN_F32;
        for (int pass = 0; pass < 2; pass++, dt = KILN_F64) {
            program_run run;
            kiln_error err;
            assert_int_equal(build_program(reduce_cases[c].name, dt, "[n, 2, m]", 1, 2, attributes, &run, &err),
                             KILN_OK);
            kiln_tensor *in = new_tensor(dt, 3, shape);
            fill_random(in, &rng, false);
            kiln_tensor *expected = new_tensor(dt, 1, out_shape);
            reference_reduce(reduce_cases[c].op, in, reduced, expected);
            run_and_compare(&run, in, expected, reduce_cases[c].name);
            kiln_tensor_free(in);
            kiln_tensor_free(expected);
        }
    }
    /* reduce_sum over a dim whose range includes 0 is fine, and gives 0. */
    program_run run;
    kiln_error err;
    kiln_attribute keep[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = axes + 1, .count = 1}};
    assert_int_equal(build_program("reduce_sum", KILN_F32, "[n, m]", 0, 1, keep, &run, &err), KILN_OK);
    int64_t empty[2] = {0, 3}, one_by_three[2] = {1, 3};
    kiln_tensor *in = new_tensor(KILN_F32, 2, empty);
    kiln_tensor *expected = new_tensor(KILN_F32, 2, one_by_three);
    memset(expected->data, 0, expected->byte_size);
    run_and_compare(&run, in, expected, "reduce_sum over empty n");
    kiln_tensor_free(in);
    kiln_tensor_free(expected);
}

static void axis_ops_run_end_to_end(void **state)
{
    (void)state;
    prng rng = {4242};
    int64_t shape[3] = {2, 3, 4}; /* n = 2, m = 4 */
    for (int op = REF_ARGMAX; op <= REF_HARDMAX; op++) {
        bool arg = op == REF_ARGMAX || op == REF_ARGMIN;
        kiln_attribute attributes[3] = {
            {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = arg ? -2 : 0},
            {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 0},
            {.name = "select_last_index", .type = KILN_ATTRIBUTE_INT, .i = 1},
        };
        program_run run;
        kiln_error err;
        assert_int_equal(build_program(axis_op_names[op], KILN_F64, "[n, 3, m]", 1, arg ? 3 : 1, attributes, &run,
                                       &err),
                         KILN_OK);
        kiln_tensor *in = new_tensor(KILN_F64, 3, shape);
        fill_random(in, &rng, false);
        int64_t arg_shape[2] = {2, 4};
        kiln_tensor *expected = arg ? new_tensor(KILN_I64, 2, arg_shape) : new_tensor(KILN_F64, 3, shape);
        reference_axis_op((axis_ref)op, in, arg ? 1 : 0, true, expected);
        run_and_compare(&run, in, expected, axis_op_names[op]);
        kiln_tensor_free(in);
        kiln_tensor_free(expected);
    }
}

static void builder_refuses_statically(void **state)
{
    (void)state;
    kiln_error err;
    int64_t repeated[2] = {2, -1};
    kiln_attribute rep[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = repeated, .count = 2}};
    assert_int_equal(build_program("reduce_sum", KILN_F32, "[n, 2, m]", 1, 1, rep, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (reduce_sum)"));
    assert_non_null(strstr(err.message, "repeats axis 2"));
    int64_t far[1] = {3};
    kiln_attribute out_of_range[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = far, .count = 1}};
    assert_int_equal(build_program("reduce_prod", KILN_F32, "[n, 2, m]", 1, 1, out_of_range, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (reduce_prod)"));
    assert_non_null(strstr(err.message, "axes[0] = 3 is out of range for rank 3"));
    /* max/min/arg* over a dim that can be 0: refused with a counterexample. */
    static const char *const no_identity[] = {"reduce_max", "reduce_min", "argmax", "argmin"};
    for (size_t i = 0; i < COUNT(no_identity); i++) {
        assert_int_equal(build_program(no_identity[i], KILN_F32, "[n, m]", 0, 0, NULL, NULL, &err),
                         KILN_ERR_INVALID_PROGRAM);
        assert_non_null(strstr(err.message, no_identity[i]));
        assert_non_null(strstr(err.message, "axis 0 (n)"));
        assert_non_null(strstr(err.message, "counterexample: n=0"));
        /* With n >= 1 the same program is accepted. */
        assert_int_equal(build_program(no_identity[i], KILN_F32, "[n, m]", 1, 0, NULL, NULL, &err), KILN_OK);
    }
    /* Reducing only the other axis is fine even when n can be 0. */
    int64_t last_axis[1] = {-1};
    kiln_attribute other[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = last_axis, .count = 1}};
    assert_int_equal(build_program("reduce_max", KILN_F32, "[n, m]", 0, 1, other, NULL, &err), KILN_OK);
    /* Expression axes are proven from interval bounds: n + 1 >= 1 even when n can be 0. */
    assert_int_equal(build_program("reduce_min", KILN_F32, "[n, m, n + 1]", 0, 1, other, NULL, &err), KILN_OK);
    /* Wrong dtypes and attribute types. */
    assert_int_equal(build_program("reduce_mean", KILN_I32, "[n, m]", 1, 0, NULL, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (reduce_mean)"));
    assert_non_null(strstr(err.message, "dtype i32"));
    assert_int_equal(build_program("softmax", KILN_U8, "[n, m]", 1, 0, NULL, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(build_program("argmax", KILN_BOOL, "[n, m]", 1, 0, NULL, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    kiln_attribute axes_as_int[1] = {{.name = "axes", .type = KILN_ATTRIBUTE_INT, .i = 0}};
    assert_int_equal(build_program("reduce_sum", KILN_F32, "[n, m]", 1, 1, axes_as_int, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    kiln_attribute unknown[1] = {{.name = "axes_", .type = KILN_ATTRIBUTE_INT, .i = 0}};
    assert_int_equal(build_program("softmax", KILN_F32, "[n, m]", 1, 1, unknown, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
}

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_int_equal(kiln_ops_reduce.count, 15);
    assert_family_registered(&kiln_ops_reduce, NULL, 0);
    for (size_t i = 0; i < COUNT(reduce_cases); i++)
        assert_non_null(kiln_op_find(reduce_cases[i].name));
    for (size_t i = 0; i < COUNT(axis_op_names); i++)
        assert_non_null(kiln_op_find(axis_op_names[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(reductions_match_reference),
        cmocka_unit_test(reductions_handle_rank_8),
        cmocka_unit_test(axis_ops_match_reference),
        cmocka_unit_test(empty_reductions_have_defined_values),
        cmocka_unit_test(log_sum_exp_and_softmax_are_stable),
        cmocka_unit_test(integer_sums_and_products_wrap),
        cmocka_unit_test(argmax_ties_and_nan_are_deterministic),
        cmocka_unit_test(kernels_refuse_bad_attributes),
        cmocka_unit_test(shape_rules_refuse_bad_attributes_and_dtypes),
        cmocka_unit_test(reductions_run_end_to_end),
        cmocka_unit_test(axis_ops_run_end_to_end),
        cmocka_unit_test(builder_refuses_statically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
