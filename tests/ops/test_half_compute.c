/*
 * test_half_compute.c — f16 and bf16 computed in f32 (spec/opset.md, "Half
 * precision"): for a representative set of ops of every family that takes
 * them, the half result must be, bit for bit, round_once(the op on f32
 * copies of the inputs), NaN for NaN; `cast` to f16/bf16 must round once
 * from the exact value; and a program of half values must run end to end
 * through a session (scratch kept and grown per node) and set required
 * feature bit 0.
 *
 * The oracle does not use lib/core/half.c: a half pattern's value is rebuilt
 * from its fields with ldexp, and rounding to a half type is a binary
 * search over the (monotonic) non-negative patterns, deciding between the
 * two neighbours by comparing with their midpoint, which is exact in double.
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
#include "tensor.h"

#include "borrowed_attribute.h"
#include "prng.h"
#include "tensor_fixture.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const kiln_dtype half_dtypes[] = {KILN_F16, KILN_BF16};

/* ------------------------------------------------------------ the oracle */

/* The value of a half pattern, from its fields (NaN: a NaN of the pattern's sign). */
static double half_value(kiln_dtype dtype, uint16_t bits)
{
    int exponent_bits = dtype == KILN_F16 ? 5 : 8, fraction_bits = dtype == KILN_F16 ? 10 : 7;
    int bias = (1 << (exponent_bits - 1)) - 1;
    unsigned exponent = (bits >> fraction_bits) & ((1u << exponent_bits) - 1);
    unsigned fraction = bits & ((1u << fraction_bits) - 1);
    double sign = (bits & 0x8000u) ? -1.0 : 1.0;
    if (exponent == (1u << exponent_bits) - 1)
        return fraction ? copysign(NAN, sign) : sign * INFINITY;
    if (exponent == 0)
        return sign * ldexp((double)fraction, 1 - bias - fraction_bits);
    return sign * ldexp((double)(fraction | (1u << fraction_bits)), (int)exponent - bias - fraction_bits);
}

static bool half_is_nan(kiln_dtype dtype, uint16_t bits)
{
    return isnan(half_value(dtype, bits));
}

/* The largest finite pattern: below it, patterns of one sign grow with their value. */
static uint16_t largest_finite(kiln_dtype dtype)
{
    return dtype == KILN_F16 ? 0x7bff : 0x7f7f;
}

/* `value` rounded to nearest, ties to even, to the half type; NaN gives 0x7fff (compared as "any NaN"). */
static uint16_t nearest_half(kiln_dtype dtype, double value)
{
    if (isnan(value))
        return 0x7fff;
    uint16_t sign = signbit(value) ? 0x8000 : 0;
    double magnitude = fabs(value);
    uint16_t lo = 0, hi = largest_finite(dtype);
    if (magnitude >= half_value(dtype, hi)) {
        /* Past the largest finite value by half an ulp or more (ties go up, to the even infinity). */
        double ulp = half_value(dtype, hi) - half_value(dtype, hi - 1);
        return (uint16_t)(sign | (magnitude >= half_value(dtype, hi) + ulp / 2 ? hi + 1 : hi));
    }
    /* Largest pattern whose value is <= magnitude. */
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (half_value(dtype, mid) <= magnitude)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    double below = half_value(dtype, lo), above = half_value(dtype, lo + 1);
    double midpoint = below / 2 + above / 2; /* exact: both are small-significand doubles */
    bool up = magnitude > midpoint || (magnitude == midpoint && (lo & 1)); /* ties to the even pattern */
    uint16_t pick = up ? (uint16_t)(lo + 1) : lo;
    return (uint16_t)(sign | pick);
}

/* --------------------------------------------------------------- tensors */

/*
 * Half patterns: mostly moderate values (-8..8 in steps of 1/64, so sums
 * and products stay meaningful), some whole random patterns (any
 * magnitude, subnormals, infinities, NaNs of both signs), and a few chosen
 * specials (±0, ±inf, NaN, the largest finite value).
 */
static void fill_half(kiln_tensor *t, prng *rng)
{
    uint16_t *bits = t->data;
    uint16_t max = largest_finite(t->dtype), inf = (uint16_t)(max + 1);
    const uint16_t specials[] = {0x0000, 0x8000, inf, (uint16_t)(inf | 0x8000), (uint16_t)(inf | 1), max,
                                 (uint16_t)(max | 0x8000)};
    for (uint64_t i = 0; i < t->element_count; i++) {
        uint64_t pick = prng_next(rng) % 16;
        if (pick == 0)
            bits[i] = (uint16_t)prng_next(rng);
        else if (pick == 1)
            bits[i] = specials[prng_next(rng) % COUNT(specials)];
        else
            bits[i] = nearest_half(t->dtype, ((double)(prng_next(rng) % 1025) - 512.0) / 64.0);
    }
}

/* The f32 copy of a half tensor, widened by the oracle; other tensors are copied. */
static kiln_tensor *widened(const kiln_tensor *t)
{
    bool half = t->dtype == KILN_F16 || t->dtype == KILN_BF16;
    kiln_tensor *w = new_tensor(half ? KILN_F32 : t->dtype, t->rank, t->shape);
    for (uint64_t i = 0; i < t->element_count; i++) {
        uint16_t h = half ? ((const uint16_t *)t->data)[i] : 0;
        if (half && half_is_nan(t->dtype, h)) {
            /* A NaN keeps its sign and payload bits, quiet bit included: the f32 op sees the same NaN. */
            uint32_t sign = (uint32_t)(h & 0x8000u) << 16, payload = (uint32_t)(h & 0x3ffu) << 13;
            uint32_t nan = t->dtype == KILN_BF16 ? (uint32_t)h << 16 : sign | 0x7f800000u | payload;
            memcpy((float *)w->data + i, &nan, sizeof nan);
        } else if (half)
            ((float *)w->data)[i] = (float)half_value(t->dtype, h);
        else
            memcpy((uint8_t *)w->data + i * kiln_dtype_size(t->dtype),
                   (const uint8_t *)t->data + i * kiln_dtype_size(t->dtype), kiln_dtype_size(t->dtype));
    }
    return w;
}

/* ----------------------------------------------------------- attributes */

typedef struct attribute_value {
    const char *name;
    kiln_attribute_type type;
    double f;
    int64_t i;
    int64_t ints[6];
    uint32_t count;
    const char *s;
} attribute_value;

#define ATTR_F(NAME, V) {NAME, KILN_ATTRIBUTE_FLOAT, V, 0, {0}, 0, NULL}
#define ATTR_I(NAME, V) {NAME, KILN_ATTRIBUTE_INT, 0, V, {0}, 0, NULL}
#define ATTR_AXES(A) {"axes", KILN_ATTRIBUTE_INTS, 0, 0, {A}, 1, NULL}
#define ATTR_INTS(NAME, COUNT, ...) {NAME, KILN_ATTRIBUTE_INTS, 0, 0, {__VA_ARGS__}, COUNT, NULL}
#define ATTR_S(NAME, V) {NAME, KILN_ATTRIBUTE_STRING, 0, 0, {0}, 0, V}

/* ------------------------------------------------------- the comparison */

static kiln_status run_op(const char *name, const kiln_tensor *const *inputs, uint32_t count, kiln_tensor *out,
                          const attribute_value *attributes, uint32_t attribute_count, kiln_error *err)
{
    const kiln_op_def *def = kiln_op_find(name);
    assert_non_null(def);
    kiln_node_attribute nodes[4];
    assert_true(attribute_count <= COUNT(nodes));
    for (uint32_t a = 0; a < attribute_count; a++)
        nodes[a] = borrowed_attribute((kiln_attribute){.name = attributes[a].name, .type = attributes[a].type,
                                                       .f = attributes[a].f, .i = attributes[a].i,
                                                       .s = attributes[a].s, .ints = attributes[a].ints,
                                                       .count = attributes[a].count});
    kiln_kernel_call call = {inputs, count, out, nodes, attribute_count, NULL};
    return def->run(&call, err);
}

/* One op case: inputs given by shape; input 0 may be a bool condition (where). */
typedef struct op_case {
    const char *op;
    uint32_t input_count;
    uint32_t ranks[5];
    int64_t shapes[5][4];
    uint32_t out_rank;
    int64_t out_shape[4];
    bool bool_condition; /* input 0 is bool (where) */
    bool bool_result;    /* comparisons, isnan */
    uint32_t attribute_count;
    attribute_value attributes[4];
} op_case;

static const op_case cases[] = {
    /* the arithmetic family, with broadcasting */
    {"add", 2, {2, 1}, {{3, 5}, {5}}, 2, {3, 5}, false, false, 0, {{0}}},
    {"sub", 2, {2, 2}, {{3, 5}, {3, 1}}, 2, {3, 5}, false, false, 0, {{0}}},
    {"mul", 2, {2, 2}, {{4, 6}, {4, 6}}, 2, {4, 6}, false, false, 0, {{0}}},
    {"div", 2, {2, 2}, {{4, 6}, {4, 6}}, 2, {4, 6}, false, false, 0, {{0}}},
    {"neg", 1, {2}, {{4, 6}}, 2, {4, 6}, false, false, 0, {{0}}},
    /* unary */
    {"exp", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"log", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"sqrt", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"tanh", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"sigmoid", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"gelu", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"mish", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"relu", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"abs", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"round", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"reciprocal", 1, {1}, {{64}}, 1, {64}, false, false, 0, {{0}}},
    {"leaky_relu", 1, {1}, {{64}}, 1, {64}, false, false, 1, {ATTR_F("alpha", 0.1)}},
    {"clip", 1, {1}, {{64}}, 1, {64}, false, false, 2, {ATTR_F("max", 2.3), ATTR_F("min", -1.7)}},
    {"isnan", 1, {1}, {{64}}, 1, {64}, false, true, 0, {{0}}},
    /* binary, comparison, ternary, variadic */
    {"pow", 2, {1, 1}, {{64}, {64}}, 1, {64}, false, false, 0, {{0}}},
    {"mod", 2, {1, 1}, {{64}, {64}}, 1, {64}, false, false, 1, {ATTR_I("fmod", 1)}},
    {"lt", 2, {1, 1}, {{64}, {64}}, 1, {64}, false, true, 0, {{0}}},
    {"eq", 2, {1, 1}, {{64}, {1}}, 1, {64}, false, true, 0, {{0}}},
    {"where", 3, {1, 1, 1}, {{64}, {64}, {64}}, 1, {64}, true, false, 0, {{0}}},
    {"max", 3, {1, 1, 1}, {{64}, {64}, {1}}, 1, {64}, false, false, 0, {{0}}},
    {"min", 2, {1, 1}, {{64}, {64}}, 1, {64}, false, false, 0, {{0}}},
    {"sum", 3, {1, 1, 1}, {{64}, {64}, {64}}, 1, {64}, false, false, 0, {{0}}},
    {"mean", 2, {1, 1}, {{64}, {64}}, 1, {64}, false, false, 0, {{0}}},
    /* matrix products */
    {"matmul", 2, {2, 2}, {{3, 7}, {7, 5}}, 2, {3, 5}, false, false, 0, {{0}}},
    {"matmul", 2, {3, 2}, {{2, 3, 4}, {4, 2}}, 3, {2, 3, 2}, false, false, 0, {{0}}},
    {"gemm", 3, {2, 2, 1}, {{7, 3}, {7, 5}, {5}}, 2, {3, 5}, false, false, 3,
     {ATTR_F("alpha", 0.5), ATTR_F("beta", 2.0), ATTR_I("transA", 1)}},
    /* reductions and the softmax family */
    {"reduce_sum", 1, {2}, {{6, 9}}, 1, {6}, false, false, 2, {ATTR_AXES(1), ATTR_I("keepdims", 0)}},
    {"reduce_mean", 1, {2}, {{6, 9}}, 2, {1, 9}, false, false, 1, {ATTR_AXES(0)}},
    {"reduce_max", 1, {2}, {{6, 9}}, 2, {6, 1}, false, false, 1, {ATTR_AXES(-1)}},
    {"reduce_prod", 1, {2}, {{6, 3}}, 2, {6, 1}, false, false, 1, {ATTR_AXES(1)}},
    {"reduce_l2", 1, {2}, {{6, 9}}, 2, {6, 1}, false, false, 1, {ATTR_AXES(1)}},
    {"reduce_log_sum_exp", 1, {2}, {{6, 9}}, 2, {6, 1}, false, false, 1, {ATTR_AXES(1)}},
    {"argmax", 1, {2}, {{6, 9}}, 2, {1, 9}, false, false, 0, {{0}}},
    {"argmin", 1, {2}, {{6, 9}}, 1, {6}, false, false, 2, {ATTR_I("axis", 1), ATTR_I("keepdims", 0)}},
    {"softmax", 1, {2}, {{6, 9}}, 2, {6, 9}, false, false, 0, {{0}}},
    {"log_softmax", 1, {2}, {{6, 9}}, 2, {6, 9}, false, false, 1, {ATTR_I("axis", 0)}},
    {"hardmax", 1, {2}, {{6, 9}}, 2, {6, 9}, false, false, 0, {{0}}},
    /* normalizations */
    {"layer_norm", 3, {2, 1, 1}, {{4, 8}, {8}, {8}}, 2, {4, 8}, false, false, 1, {ATTR_F("epsilon", 1e-5)}},
    {"batch_norm", 5, {3, 1, 1, 1, 1}, {{2, 3, 4}, {3}, {3}, {3}, {3}}, 3, {2, 3, 4}, false, false, 0, {{0}}},
    {"instance_norm", 3, {3, 1, 1}, {{2, 3, 4}, {3}, {3}}, 3, {2, 3, 4}, false, false, 0, {{0}}},
    {"group_norm", 3, {3, 1, 1}, {{2, 4, 3}, {4}, {4}}, 3, {2, 4, 3}, false, false, 1, {ATTR_I("num_groups", 2)}},
    {"lp_norm", 1, {2}, {{4, 8}}, 2, {4, 8}, false, false, 1, {ATTR_I("p", 2)}},
    {"mean_variance_norm", 1, {3}, {{2, 3, 4}}, 3, {2, 3, 4}, false, false, 1, {ATTR_AXES(-1)}},
    /* running sums */
    {"cumsum", 1, {2}, {{5, 7}}, 2, {5, 7}, false, false, 1, {ATTR_I("axis", 1)}},
    {"cumsum", 1, {2}, {{5, 7}}, 2, {5, 7}, false, false, 2, {ATTR_I("exclusive", 1), ATTR_I("reverse", 1)}},
    /* convolution: groups, pads, strides, dilations, with and without a bias */
    {"conv", 3, {3, 3, 1}, {{2, 4, 9}, {6, 2, 3}, {6}}, 3, {2, 6, 5}, false, false, 3,
     {ATTR_I("group", 2), ATTR_INTS("pads", 2, 1, 1), ATTR_INTS("strides", 1, 2)}},
    {"conv", 3, {4, 4, 1}, {{1, 3, 6, 5}, {4, 3, 3, 2}, {4}}, 4, {1, 4, 2, 4}, false, false, 1,
     {ATTR_INTS("dilations", 2, 2, 1)}},
    {"conv", 2, {3, 3}, {{1, 3, 7}, {2, 3, 3}}, 3, {1, 2, 5}, false, false, 0, {{0}}},
    {"conv_transpose", 3, {3, 3, 1}, {{1, 4, 5}, {4, 3, 3}, {3}}, 3, {1, 3, 9}, false, false, 2,
     {ATTR_INTS("pads", 2, 1, 1), ATTR_INTS("strides", 1, 2)}},
    {"conv_transpose", 2, {4, 4}, {{1, 4, 3, 3}, {4, 1, 2, 2}}, 4, {1, 2, 4, 4}, false, false, 1,
     {ATTR_I("group", 2)}},
    /* pooling: windows with pads and strides, and whole planes */
    {"max_pool", 1, {3}, {{2, 3, 10}}, 3, {2, 3, 5}, false, false, 3,
     {ATTR_INTS("kernel_shape", 1, 3), ATTR_INTS("pads", 2, 1, 1), ATTR_INTS("strides", 1, 2)}},
    {"max_pool", 1, {4}, {{1, 2, 5, 5}}, 4, {1, 2, 4, 4}, false, false, 1, {ATTR_INTS("kernel_shape", 2, 2, 2)}},
    {"avg_pool", 1, {3}, {{2, 3, 8}}, 3, {2, 3, 8}, false, false, 3,
     {ATTR_INTS("kernel_shape", 1, 3), ATTR_INTS("pads", 2, 1, 1), ATTR_I("count_include_pad", 1)}},
    {"avg_pool", 1, {4}, {{1, 2, 5, 6}}, 4, {1, 2, 3, 3}, false, false, 3,
     {ATTR_INTS("kernel_shape", 2, 3, 2), ATTR_INTS("pads", 4, 1, 0, 1, 0), ATTR_INTS("strides", 2, 2, 2)}},
    {"lp_pool", 1, {3}, {{1, 3, 7}}, 3, {1, 3, 5}, false, false, 1, {ATTR_INTS("kernel_shape", 1, 3)}},
    {"lp_pool", 1, {3}, {{1, 3, 7}}, 3, {1, 3, 6}, false, false, 2, {ATTR_INTS("kernel_shape", 1, 2), ATTR_I("p", 3)}},
    {"global_max_pool", 1, {3}, {{2, 3, 11}}, 3, {2, 3, 1}, false, false, 0, {{0}}},
    {"global_avg_pool", 1, {4}, {{2, 3, 4, 5}}, 4, {2, 3, 1, 1}, false, false, 0, {{0}}},
    {"global_lp_pool", 1, {3}, {{2, 3, 7}}, 3, {2, 3, 1}, false, false, 1, {ATTR_I("p", 1)}},
    /* resize by interpolation (nearest moves patterns: below) */
    {"resize", 1, {4}, {{1, 2, 4, 5}}, 4, {1, 2, 7, 3}, false, false, 2,
     {ATTR_S("mode", "linear"), ATTR_INTS("sizes", 4, 1, 2, 7, 3)}},
    {"resize", 1, {2}, {{2, 9}}, 2, {2, 13}, false, false, 3,
     {ATTR_S("mode", "cubic"), ATTR_S("coordinate_transformation_mode", "align_corners"),
      ATTR_INTS("sizes", 2, 2, 13)}},
    /* einsum: a product, a batched product with a transpose, a trace, a dot */
    {"einsum", 2, {2, 2}, {{3, 7}, {7, 5}}, 2, {3, 5}, false, false, 1, {ATTR_S("equation", "ij,jk->ik")}},
    {"einsum", 2, {3, 3}, {{2, 3, 4}, {2, 5, 4}}, 3, {2, 3, 5}, false, false, 1,
     {ATTR_S("equation", "bij,bkj->bik")}},
    {"einsum", 1, {2}, {{5, 5}}, 0, {0}, false, false, 1, {ATTR_S("equation", "ii->")}},
    {"einsum", 2, {1, 1}, {{9}, {9}}, 0, {0}, false, false, 1, {ATTR_S("equation", "i,i->")}},
};

/* Compare a half (or bool) result with the f32 one rounded once by the oracle. */
static void expect_rounded_once(const char *op, const kiln_tensor *half_out, const kiln_tensor *f32_out)
{
    for (uint64_t i = 0; i < half_out->element_count; i++) {
        if (half_out->dtype == KILN_I64) {
            int64_t got = ((const int64_t *)half_out->data)[i], want = ((const int64_t *)f32_out->data)[i];
            if (got != want)
                fail_msg("%s: index %llu is %lld, the f32 op gives %lld", op, (unsigned long long)i, (long long)got,
                         (long long)want);
            continue;
        }
        if (half_out->dtype == KILN_BOOL) {
            uint8_t got = ((const uint8_t *)half_out->data)[i], want = ((const uint8_t *)f32_out->data)[i];
            if (got != want)
                fail_msg("%s: element %llu is %u, the f32 op gives %u", op, (unsigned long long)i, got, want);
            continue;
        }
        uint16_t got = ((const uint16_t *)half_out->data)[i];
        float f = ((const float *)f32_out->data)[i];
        uint16_t want = nearest_half(half_out->dtype, f);
        bool same = isnan(f) ? half_is_nan(half_out->dtype, got) : got == want;
        if (!same)
            fail_msg("%s %s: element %llu is 0x%04x, round_once(f32 %.9g) is 0x%04x", op,
                     kiln_dtype_name(half_out->dtype), (unsigned long long)i, got, (double)f, want);
    }
}

static void every_case_rounds_once(void **state)
{
    (void)state;
    prng rng = {0x243f6a8885a308d3u};
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        for (size_t c = 0; c < COUNT(cases); c++) {
            const op_case *k = &cases[c];
            kiln_tensor *half_in[5] = {NULL}, *f32_in[5] = {NULL};
            for (uint32_t i = 0; i < k->input_count; i++) {
                bool condition = k->bool_condition && i == 0;
                half_in[i] = new_tensor(condition ? KILN_BOOL : half_dtypes[d], k->ranks[i], k->shapes[i]);
                if (condition)
                    for (uint64_t e = 0; e < half_in[i]->element_count; e++)
                        ((uint8_t *)half_in[i]->data)[e] = (uint8_t)(prng_next(&rng) % 2);
                else
                    fill_half(half_in[i], &rng);
                f32_in[i] = widened(half_in[i]);
            }
            bool index_result = strncmp(k->op, "arg", 3) == 0; /* argmax, argmin: i64 */
            kiln_dtype other = k->bool_result ? KILN_BOOL : index_result ? KILN_I64 : KILN_DTYPE_INVALID;
            kiln_tensor *half_out = new_tensor(other ? other : half_dtypes[d], k->out_rank, k->out_shape);
            kiln_tensor *f32_out = new_tensor(other ? other : KILN_F32, k->out_rank, k->out_shape);
            kiln_error err;
            kiln_status status = run_op(k->op, (const kiln_tensor *const *)f32_in, k->input_count, f32_out,
                                        k->attributes, k->attribute_count, &err);
            if (status != KILN_OK)
                fail_msg("%s on f32: %s", k->op, err.message);
            status = run_op(k->op, (const kiln_tensor *const *)half_in, k->input_count, half_out, k->attributes,
                            k->attribute_count, &err);
            if (status != KILN_OK)
                fail_msg("%s on %s: %s", k->op, kiln_dtype_name(half_dtypes[d]), err.message);
            expect_rounded_once(k->op, half_out, f32_out);
            for (uint32_t i = 0; i < k->input_count; i++) {
                kiln_tensor_free(half_in[i]);
                kiln_tensor_free(f32_in[i]);
            }
            kiln_tensor_free(half_out);
            kiln_tensor_free(f32_out);
        }
    }
}

/*
 * Ops that move elements: on f16 and bf16 they give exactly the bytes they
 * give on u16 holding the same patterns (NaN payloads and -0 included);
 * u16 is tested against its own references in the family tests.
 */
typedef struct move_case {
    const char *op;
    uint32_t rank;
    int64_t shape[3];
    uint32_t index_count; /* > 0: a second input, i64 indices [index_count] */
    int64_t indices[4];
    uint32_t out_rank;
    int64_t out_shape[3];
    uint32_t attribute_count;
    attribute_value attributes[4];
} move_case;

static const move_case moves[] = {
    {"reshape", 2, {4, 6}, 0, {0}, 3, {2, 3, 4}, 1, {ATTR_INTS("shape", 3, 2, 3, 4)}},
    {"transpose", 3, {2, 3, 4}, 0, {0}, 3, {4, 2, 3}, 1, {ATTR_INTS("perm", 3, 2, 0, 1)}},
    {"flatten", 3, {2, 3, 4}, 0, {0}, 2, {2, 12}, 1, {ATTR_I("axis", 1)}},
    {"unsqueeze", 2, {3, 4}, 0, {0}, 3, {3, 1, 4}, 1, {ATTR_INTS("axes", 1, 1)}},
    {"slice", 2, {5, 6}, 0, {0}, 2, {2, 6}, 3,
     {ATTR_INTS("axes", 1, 0), ATTR_INTS("ends", 1, 3), ATTR_INTS("starts", 1, 1)}},
    {"gather", 2, {5, 3}, 4, {4, 0, -1, 2}, 2, {4, 3}, 1, {ATTR_I("axis", 0)}},
    {"pad", 2, {3, 4}, 0, {0}, 2, {4, 7}, 1, {ATTR_INTS("pads", 4, 1, 2, 0, 1)}},
    {"tile", 2, {3, 4}, 0, {0}, 2, {6, 4}, 1, {ATTR_INTS("repeats", 2, 2, 1)}},
    {"expand", 2, {1, 4}, 0, {0}, 2, {3, 4}, 1, {ATTR_INTS("shape", 2, 3, 4)}},
    {"trilu", 2, {4, 4}, 0, {0}, 2, {4, 4}, 0, {{0}}},
    {"identity", 2, {4, 4}, 0, {0}, 2, {4, 4}, 0, {{0}}},
    {"squeeze", 3, {3, 1, 4}, 0, {0}, 2, {3, 4}, 1, {ATTR_INTS("axes", 1, 1)}},
    {"concat", 2, {2, 3}, 0, {0}, 2, {2, 6}, 1, {ATTR_I("axis", 1)}}, /* the data twice */
    /* resize nearest copies each element it picks, bit for bit */
    {"resize", 2, {3, 4}, 0, {0}, 2, {5, 7}, 2, {ATTR_S("mode", "nearest"), ATTR_INTS("sizes", 2, 5, 7)}},
    {"resize", 3, {1, 4, 6}, 0, {0}, 3, {1, 2, 9}, 3,
     {ATTR_S("mode", "nearest"), ATTR_S("nearest_mode", "ceil"), ATTR_INTS("sizes", 3, 1, 2, 9)}},
};

static void data_movement_moves_half_patterns(void **state)
{
    (void)state;
    prng rng = {0x082efa98ec4e6c89u};
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        for (size_t c = 0; c < COUNT(moves); c++) {
            const move_case *k = &moves[c];
            kiln_tensor *half_in = new_tensor(half_dtypes[d], k->rank, k->shape);
            kiln_tensor *u16_in = new_tensor(KILN_U16, k->rank, k->shape);
            for (uint64_t e = 0; e < half_in->element_count; e++)
                ((uint16_t *)half_in->data)[e] = (uint16_t)prng_next(&rng);
            memcpy(u16_in->data, half_in->data, half_in->byte_size);
            int64_t index_shape[1] = {k->index_count};
            kiln_tensor *indices = k->index_count ? new_tensor(KILN_I64, 1, index_shape) : NULL;
            if (indices)
                memcpy(indices->data, k->indices, k->index_count * sizeof(int64_t));
            kiln_tensor *half_out = new_tensor(half_dtypes[d], k->out_rank, k->out_shape);
            kiln_tensor *u16_out = new_tensor(KILN_U16, k->out_rank, k->out_shape);
            kiln_error err;
            bool twice = strcmp(k->op, "concat") == 0;
            uint32_t count = indices || twice ? 2 : 1;
            if (run_op(k->op, (const kiln_tensor *const[]){u16_in, twice ? u16_in : indices}, count, u16_out,
                       k->attributes, k->attribute_count, &err) != KILN_OK)
                fail_msg("%s on u16: %s", k->op, err.message);
            if (run_op(k->op, (const kiln_tensor *const[]){half_in, twice ? half_in : indices}, count, half_out,
                       k->attributes, k->attribute_count, &err) != KILN_OK)
                fail_msg("%s on %s: %s", k->op, kiln_dtype_name(half_dtypes[d]), err.message);
            if (memcmp(half_out->data, u16_out->data, half_out->byte_size) != 0)
                fail_msg("%s moves %s patterns differently from u16", k->op, kiln_dtype_name(half_dtypes[d]));
            kiln_tensor_free(half_in);
            kiln_tensor_free(u16_in);
            kiln_tensor_free(indices);
            kiln_tensor_free(half_out);
            kiln_tensor_free(u16_out);
        }
        /* pad's constant is rounded once to the half type. */
        int64_t in_shape[1] = {2}, out_shape[1] = {4};
        kiln_tensor *in = new_tensor(half_dtypes[d], 1, in_shape), *out = new_tensor(half_dtypes[d], 1, out_shape);
        attribute_value pad[2] = {ATTR_INTS("pads", 2, 1, 1), ATTR_F("value", 0.1)};
        kiln_error err;
        assert_int_equal(run_op("pad", (const kiln_tensor *const[]){in}, 1, out, pad, 2, &err), KILN_OK);
        assert_int_equal(((uint16_t *)out->data)[0], nearest_half(half_dtypes[d], 0.1));
        assert_int_equal(((uint16_t *)out->data)[3], nearest_half(half_dtypes[d], 0.1));
        kiln_tensor_free(in);
        kiln_tensor_free(out);
    }
}

/*
 * The scratch: kept in the node's state slot and grown when a run needs
 * more; freed per call when there is no slot (ASan's leak check watches).
 */
static void scratch_lives_in_the_node_slot(void **state)
{
    (void)state;
    kiln_node_state slot = {NULL, NULL};
    kiln_kernel_context with_slot = {.threads = 1, .state = &slot}, without_slot = {.threads = 1};
    const kiln_op_def *add = kiln_op_find("add");
    const int64_t sizes[] = {4, 64, 8};
    for (size_t r = 0; r < COUNT(sizes); r++) {
        for (int use_slot = 0; use_slot < 2; use_slot++) {
            kiln_tensor *a = new_tensor(KILN_F16, 1, &sizes[r]), *out = new_tensor(KILN_F16, 1, &sizes[r]);
            for (int64_t i = 0; i < sizes[r]; i++)
                ((uint16_t *)a->data)[i] = nearest_half(KILN_F16, (double)i);
            kiln_kernel_call call = {(const kiln_tensor *const[]){a, a}, 2, out, NULL, 0,
                                     use_slot ? &with_slot : &without_slot};
            kiln_error err;
            assert_int_equal(add->run(&call, &err), KILN_OK);
            for (int64_t i = 0; i < sizes[r]; i++)
                assert_int_equal(((uint16_t *)out->data)[i], nearest_half(KILN_F16, 2.0 * (double)i));
            kiln_tensor_free(a);
            kiln_tensor_free(out);
        }
        assert_non_null(slot.data);
        assert_non_null(slot.release);
    }
    slot.release(slot.data);
}

/* Overflow: 60000 + 60000 is inf in f16 (not in f32); bf16 keeps it finite. */
static void overflow_becomes_infinity(void **state)
{
    (void)state;
    int64_t shape[1] = {2};
    kiln_tensor *a = new_tensor(KILN_F16, 1, shape), *out = new_tensor(KILN_F16, 1, shape);
    ((uint16_t *)a->data)[0] = nearest_half(KILN_F16, 60000.0);
    ((uint16_t *)a->data)[1] = nearest_half(KILN_F16, -60000.0);
    kiln_error err;
    assert_int_equal(run_op("add", (const kiln_tensor *const[]){a, a}, 2, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)out->data)[0], 0x7c00);
    assert_int_equal(((uint16_t *)out->data)[1], 0xfc00);
    /* 65504 + 15 = 65519 is below 65520 (65504 plus half an ulp): back to 65504; 65504 + 16 is the tie, to inf. */
    kiln_tensor *b = new_tensor(KILN_F16, 1, shape);
    ((uint16_t *)a->data)[0] = 0x7bff;
    ((uint16_t *)b->data)[0] = nearest_half(KILN_F16, 15.0);
    ((uint16_t *)a->data)[1] = 0x7bff;
    ((uint16_t *)b->data)[1] = nearest_half(KILN_F16, 16.0);
    assert_int_equal(run_op("add", (const kiln_tensor *const[]){a, b}, 2, out, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)out->data)[0], 0x7bff);
    assert_int_equal(((uint16_t *)out->data)[1], 0x7c00);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);
}

/* ----------------------------------------------------------------- cast */

static kiln_status run_cast(const kiln_tensor *in, kiln_tensor *out, kiln_error *err)
{
    const kiln_op_def *def = kiln_op_find("cast");
    kiln_node_attribute to = borrowed_attribute(
        (kiln_attribute){.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = kiln_dtype_name(out->dtype)});
    kiln_kernel_call call = {(const kiln_tensor *const[]){in}, 1, out, &to, 1, NULL};
    return def->run(&call, err);
}

/*
 * f64 and 64-bit integers to f16/bf16: one rounding from the exact value.
 * The values include ones just above a midpoint of two half values by less
 * than half an f32 ulp, where rounding to nearest f32 first would land on
 * the midpoint and then round to even, the wrong way.
 */
static void cast_to_half_rounds_once(void **state)
{
    (void)state;
    prng rng = {0x13198a2e03707344u};
    enum { N = 4096 };
    int64_t shape[1] = {N};
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        kiln_dtype to = half_dtypes[d];
        kiln_tensor *f64 = new_tensor(KILN_F64, 1, shape), *i64 = new_tensor(KILN_I64, 1, shape);
        kiln_tensor *u64 = new_tensor(KILN_U64, 1, shape), *out = new_tensor(to, 1, shape);
        double *v = f64->data;
        for (int i = 0; i < N; i++) {
            /* A midpoint between two neighbours of a random finite pattern, nudged by a tiny amount. */
            uint16_t p = (uint16_t)(prng_next(&rng) % largest_finite(to));
            double mid = half_value(to, p) / 2 + half_value(to, (uint16_t)(p + 1)) / 2;
            double nudge = ldexp(mid == 0 ? 1.0 : fabs(mid), -40) * (double)((int)(prng_next(&rng) % 3) - 1);
            v[i] = (i % 2 ? -1 : 1) * (i % 5 == 0 ? ldexp((double)prng_next(&rng), -(int)(prng_next(&rng) % 200))
                                                  : mid + nudge);
            /* Integers above 2^24 with low bits set, and their negations. */
            uint64_t big = prng_next(&rng) >> (prng_next(&rng) % 40);
            ((int64_t *)i64->data)[i] = (int64_t)(big >> 1) * (i % 2 ? -1 : 1);
            ((uint64_t *)u64->data)[i] = big;
        }
        v[0] = NAN;
        v[1] = -INFINITY;
        v[2] = -0.0;
        v[3] = 1e300;
        v[4] = 65519.99999999999;
        v[5] = 65520.0;
        kiln_error err;
        assert_int_equal(run_cast(f64, out, &err), KILN_OK);
        for (int i = 0; i < N; i++) {
            uint16_t got = ((uint16_t *)out->data)[i], want = nearest_half(to, v[i]);
            if (isnan(v[i]) ? !half_is_nan(to, got) : got != want)
                fail_msg("cast f64 %.17g to %s: 0x%04x, want 0x%04x", v[i], kiln_dtype_name(to), got, want);
        }
        assert_int_equal(run_cast(i64, out, &err), KILN_OK);
        for (int i = 0; i < N; i++) {
            /* Below 2^53 the double is the exact value (beyond it: cast_large_integer_to_bf16_rounds_once). */
            int64_t x = ((int64_t *)i64->data)[i];
            if (llabs(x) < (INT64_C(1) << 53) && ((uint16_t *)out->data)[i] != nearest_half(to, (double)x))
                fail_msg("cast i64 %lld to %s: 0x%04x, want 0x%04x", (long long)x, kiln_dtype_name(to),
                         ((uint16_t *)out->data)[i], nearest_half(to, (double)x));
        }
        assert_int_equal(run_cast(u64, out, &err), KILN_OK);
        for (int i = 0; i < N; i++) {
            uint64_t x = ((uint64_t *)u64->data)[i];
            if (x < (UINT64_C(1) << 53) && ((uint16_t *)out->data)[i] != nearest_half(to, (double)x))
                fail_msg("cast u64 %llu to %s: 0x%04x", (unsigned long long)x, kiln_dtype_name(to),
                         ((uint16_t *)out->data)[i]);
        }
        kiln_tensor_free(f64);
        kiln_tensor_free(i64);
        kiln_tensor_free(u64);
        kiln_tensor_free(out);
    }
}

/* Beyond 2^53, a u64 whose value sits just above a bf16 midpoint must round up. */
static void cast_large_integer_to_bf16_rounds_once(void **state)
{
    (void)state;
    int64_t shape[1] = {2};
    kiln_tensor *in = new_tensor(KILN_U64, 1, shape), *out = new_tensor(KILN_BF16, 1, shape);
    /* 2^63 + 2^55 is the midpoint of the bf16 values 2^63 and 2^63 + 2^56; +1 puts it above. */
    ((uint64_t *)in->data)[0] = (UINT64_C(1) << 63) + (UINT64_C(1) << 55) + 1;
    ((uint64_t *)in->data)[1] = (UINT64_C(1) << 63) + (UINT64_C(1) << 55); /* the tie: to even, 2^63 */
    kiln_error err;
    assert_int_equal(run_cast(in, out, &err), KILN_OK);
    assert_int_equal(((uint16_t *)out->data)[0], 0x5f01);
    assert_int_equal(((uint16_t *)out->data)[1], 0x5f00);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

/* Every f16 and bf16 pattern to every dtype: the value of the pattern, converted as that value. */
static void cast_from_half_is_the_value(void **state)
{
    (void)state;
    int64_t shape[1] = {65536};
    const kiln_dtype targets[] = {KILN_F32, KILN_F64, KILN_F16, KILN_BF16, KILN_BOOL, KILN_I64};
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        kiln_tensor *in = new_tensor(half_dtypes[d], 1, shape);
        for (uint32_t p = 0; p < 65536; p++)
            ((uint16_t *)in->data)[p] = (uint16_t)p;
        for (size_t t = 0; t < COUNT(targets); t++) {
            kiln_tensor *out = new_tensor(targets[t], 1, shape);
            kiln_error err;
            kiln_status status = run_cast(in, out, &err);
            if (targets[t] == KILN_I64) {
                /* NaN and infinities cannot become integers: refused, naming the element. */
                assert_int_equal(status, KILN_ERR_RUNTIME);
                assert_non_null(strstr(err.message, "cannot be converted to i64"));
                kiln_tensor_free(out);
                continue;
            }
            assert_int_equal(status, KILN_OK);
            for (uint32_t p = 0; p < 65536; p++) {
                double v = half_value(half_dtypes[d], (uint16_t)p);
                bool ok;
                switch (targets[t]) {
                case KILN_F32: {
                    float f = ((float *)out->data)[p];
                    ok = isnan(v) ? isnan(f) : (double)f == v && !signbit(f) == !signbit(v);
                    break;
                }
                case KILN_F64: {
                    double f = ((double *)out->data)[p];
                    ok = isnan(v) ? isnan(f) : f == v && !signbit(f) == !signbit(v);
                    break;
                }
                case KILN_BOOL: ok = ((uint8_t *)out->data)[p] == (v != 0.0); break;
                default: {
                    uint16_t h = ((uint16_t *)out->data)[p];
                    ok = isnan(v) ? half_is_nan(targets[t], h) : h == nearest_half(targets[t], v);
                }
                }
                if (!ok)
                    fail_msg("cast %s 0x%04x (%.9g) to %s is wrong", kiln_dtype_name(half_dtypes[d]), p, v,
                             kiln_dtype_name(targets[t]));
            }
            kiln_tensor_free(out);
        }
        kiln_tensor_free(in);
    }
}

/* ----------------------------------------------------------- end to end */

/*
 * y = relu(matmul(x, w) + b) with x: f16[n, 4], n in 1..8, w: f16[4, 3],
 * b: f16[3], through the builder, the encoder, the loader and a session,
 * at n = 2, 8, then 2 again (the node scratch grows, then is reused). Each
 * op rounds once at its end, so the reference rounds after each op.
 */
static void session_runs_half_program(void **state)
{
    (void)state;
    prng rng = {0xa4093822299f31d0u};
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, w, bias, product, sum, y;
    int64_t w_shape[2] = {4, 3}, b_shape[1] = {3};
    uint16_t w_bits[12], b_bits[3];
    for (int i = 0; i < 12; i++)
        w_bits[i] = nearest_half(KILN_F16, ((double)(prng_next(&rng) % 257) - 128.0) / 16.0);
    for (int i = 0; i < 3; i++)
        b_bits[i] = nearest_half(KILN_F16, ((double)(prng_next(&rng) % 257) - 128.0) / 16.0);
    assert_int_equal(kiln_builder_new("half", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F16, "[n, 4]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F16, 2, w_shape, w_bits, &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F16, 1, b_shape, b_bits, &bias,
                                             &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){product, bias}, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &sum, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_feature_bits(program), 1);
    kiln_session *session = NULL;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    const int64_t batches[] = {2, 8, 2};
    for (size_t r = 0; r < COUNT(batches); r++) {
        int64_t n = batches[r], x_shape[2] = {n, 4};
        kiln_tensor *input = new_tensor(KILN_F16, 2, x_shape);
        fill_half(input, &rng);
        assert_int_equal(kiln_session_set_input(session, "x", input, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        const kiln_tensor *out = kiln_session_output(session, 0);
        assert_int_equal(out->dtype, KILN_F16);
        assert_int_equal(out->shape[0], n);
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < 3; j++) {
                float acc = 0.0f;
                for (int p = 0; p < 4; p++)
                    acc += (float)half_value(KILN_F16, ((uint16_t *)input->data)[i * 4 + p]) *
                           (float)half_value(KILN_F16, w_bits[p * 3 + j]);
                double product_value = half_value(KILN_F16, nearest_half(KILN_F16, acc));
                float added = (float)product_value + (float)half_value(KILN_F16, b_bits[j]);
                double sum_value = half_value(KILN_F16, nearest_half(KILN_F16, added));
                double want = isnan(sum_value) ? sum_value : sum_value > 0 ? sum_value : 0.0;
                uint16_t got = ((const uint16_t *)out->data)[i * 3 + j];
                bool same = isnan(want) ? half_is_nan(KILN_F16, got)
                                        : half_value(KILN_F16, got) == want;
                if (!same)
                    fail_msg("n=%lld y[%lld][%d] is 0x%04x (%g), want %g", (long long)n, (long long)i, j, got,
                             half_value(KILN_F16, got), want);
            }
        kiln_tensor_free(input);
    }
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
}

/* Semantic input checks judge f16/bf16 inputs by their values. */
static void input_checks_read_half_values(void **state)
{
    (void)state;
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        kiln_builder *b = NULL;
        kiln_error err;
        kiln_value x, y;
        assert_int_equal(kiln_builder_new("checked", &b, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(b, "x", half_dtypes[d], "[3]", &x, &err), KILN_OK);
        kiln_input_check check;
        kiln_input_check_default(&check);
        check.finite_only = true;
        check.has_range = true;
        check.min = -2.0;
        check.max = 2.5;
        assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
        void *bytes = NULL;
        size_t size = 0;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
        kiln_builder_free(b);
        kiln_program *program = NULL;
        kiln_session *session = NULL;
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
        assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
        int64_t shape[1] = {3};
        kiln_tensor *input = new_tensor(half_dtypes[d], 1, shape);
        uint16_t *bits = input->data;
        bits[0] = nearest_half(half_dtypes[d], 2.5);
        bits[1] = nearest_half(half_dtypes[d], -2.0);
        bits[2] = nearest_half(half_dtypes[d], 0.25);
        assert_int_equal(kiln_session_set_input(session, "x", input, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        assert_int_equal(((const uint16_t *)kiln_session_output(session, 0)->data)[0],
                         nearest_half(half_dtypes[d], -2.5));
        bits[2] = nearest_half(half_dtypes[d], 2.515625); /* just above 2.5 in both types */
        assert_int_equal(kiln_session_run(session, &err), KILN_ERR_INPUT_CHECK);
        assert_non_null(strstr(err.message, "input 'x' element [2]: 2.515625 is outside the range"));
        bits[2] = (uint16_t)(largest_finite(half_dtypes[d]) + 1); /* +inf */
        assert_int_equal(kiln_session_run(session, &err), KILN_ERR_INPUT_CHECK);
        assert_non_null(strstr(err.message, "inf is not finite"));
        kiln_tensor_free(input);
        kiln_session_free(session);
        kiln_program_free(program);
        free(bytes);
    }
}

/* Evidence compares half outputs by value: a tolerance rule accepts one ulp off, the exact rule does not. */
static void evidence_tolerates_half_outputs(void **state)
{
    (void)state;
    for (size_t d = 0; d < COUNT(half_dtypes); d++) {
        kiln_dtype dtype = half_dtypes[d];
        kiln_builder *b = NULL;
        kiln_error err;
        kiln_value x, y;
        assert_int_equal(kiln_builder_new("evidence", &b, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(b, "x", dtype, "[2]", &x, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
        int64_t shape[1] = {2};
        kiln_tensor *input = new_tensor(dtype, 1, shape), *expected = new_tensor(dtype, 1, shape);
        ((uint16_t *)input->data)[0] = nearest_half(dtype, 1.5);
        ((uint16_t *)input->data)[1] = nearest_half(dtype, -3.0);
        ((uint16_t *)expected->data)[0] = (uint16_t)(nearest_half(dtype, -1.5) + 1); /* one ulp further from 0 */
        ((uint16_t *)expected->data)[1] = nearest_half(dtype, 3.0);
        double ulp = -half_value(dtype, ((uint16_t *)expected->data)[0]) - 1.5;
        const char *input_names[] = {"x"}, *output_names[] = {"y"};
        kiln_compare_rule tolerant = {KILN_COMPARE_TOLERANCE, 0.05, 0, false};
        kiln_compare_rule exact = {KILN_COMPARE_EXACT, 0, 0, false};
        kiln_evidence_case evidence = {.name = "near", .input_count = 1, .input_names = input_names,
                                       .inputs = (const kiln_tensor *const[]){input}, .output_count = 1,
                                       .output_names = output_names,
                                       .expected = (const kiln_tensor *const[]){expected}, .rules = &tolerant};
        assert_int_equal(kiln_builder_add_evidence(b, &evidence, &err), KILN_OK);
        evidence.name = "exact";
        evidence.rules = &exact;
        assert_int_equal(kiln_builder_add_evidence(b, &evidence, &err), KILN_OK);
        void *bytes = NULL;
        size_t size = 0;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
        kiln_builder_free(b);
        kiln_program *program = NULL;
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
        kiln_evidence_result result;
        assert_int_equal(kiln_program_replay_evidence(program, 0, &result, &err), KILN_OK);
        assert_true(result.passed);
        assert_true(result.max_abs_error == ulp);
        assert_int_equal(kiln_program_replay_evidence(program, 1, &result, &err), KILN_OK);
        assert_false(result.passed);
        assert_int_equal(result.mismatches, 1);
        kiln_tensor_free(input);
        kiln_tensor_free(expected);
        kiln_program_free(program);
        free(bytes);
    }
}

/* eye_like and constant_of_shape make half values; a constant beyond the range is refused. */
static void generators_make_half_values(void **state)
{
    (void)state;
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, eye, constant, refused;
    assert_int_equal(kiln_builder_new("generate", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[3, 3]", &x, &err), KILN_OK);
    kiln_attribute bf16 = {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "bf16"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "eye_like", 1, &x, 1, &bf16, &eye, &err), KILN_OK);
    kiln_attribute constant_attributes[3] = {
        {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "f16"},
        {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = (const int64_t[]){2}, .count = 1},
        {.name = "value", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.1},
    };
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "constant_of_shape", 0, NULL, 3, constant_attributes,
                                                         &constant, &err),
                     KILN_OK);
    constant_attributes[2].f = 70000.0;
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "constant_of_shape", 0, NULL, 3, constant_attributes,
                                                         &refused, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "value 70000 is not a value of dtype f16"));
    assert_int_equal(kiln_builder_add_output(b, "eye", eye, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "constant", constant, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    int64_t shape[2] = {3, 3};
    kiln_tensor *input = new_tensor(KILN_F32, 2, shape);
    assert_int_equal(kiln_session_set_input(session, "x", input, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const uint16_t *e = kiln_session_output(session, 0)->data, *c = kiln_session_output(session, 1)->data;
    for (int i = 0; i < 9; i++)
        assert_int_equal(e[i], i % 4 == 0 ? 0x3f80 : 0x0000);
    assert_int_equal(c[0], nearest_half(KILN_F16, 0.1));
    assert_int_equal(c[1], 0x2e66);
    kiln_tensor_free(input);
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
}

/* one_hot writes its on and off values, each rounded once, as f16. */
static void one_hot_writes_half_values(void **state)
{
    (void)state;
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value indices, y;
    assert_int_equal(kiln_builder_new("one_hot", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "i", KILN_I64, "[3]", &indices, &err), KILN_OK);
    kiln_attribute attributes[4] = {
        {.name = "depth", .type = KILN_ATTRIBUTE_INT, .i = 3},
        {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "f16"},
        {.name = "off_value", .type = KILN_ATTRIBUTE_FLOAT, .f = -2.0},
        {.name = "on_value", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.1},
    };
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "one_hot", 1, &indices, 4, attributes, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    int64_t shape[1] = {3};
    kiln_tensor *input = new_tensor(KILN_I64, 1, shape);
    memcpy(input->data, (const int64_t[]){0, 2, -1}, sizeof(int64_t[3]));
    assert_int_equal(kiln_session_set_input(session, "i", input, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const uint16_t *out = kiln_session_output(session, 0)->data;
    const uint16_t on = nearest_half(KILN_F16, 0.1), off = nearest_half(KILN_F16, -2.0);
    const uint16_t want[9] = {on, off, off, off, off, on, off, off, on};
    for (int k = 0; k < 9; k++)
        assert_int_equal(out[k], want[k]);
    kiln_tensor_free(input);
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
}

/* Moderate f16 values only (-2..2 in steps of 1/64), so a chain of ops keeps finite results to compare. */
static void fill_moderate(kiln_tensor *t, prng *rng)
{
    for (uint64_t e = 0; e < t->element_count; e++)
        ((uint16_t *)t->data)[e] = nearest_half(t->dtype, ((double)(prng_next(rng) % 257) - 128.0) / 64.0);
}

/* The builder's copy of a test attribute. */
static kiln_attribute builder_attribute(const attribute_value *a)
{
    return (kiln_attribute){.name = a->name, .type = a->type, .i = a->i, .f = a->f, .s = a->s, .ints = a->ints,
                            .count = a->count};
}

/*
 * conv (a program weight and bias) -> max_pool -> resize linear -> einsum
 * on f16 in a session with the default options (oneDNN when built): each
 * run gives exactly the bytes of the kernels called one by one (each
 * checked against the oracle in every_case_rounds_once), at batch sizes
 * that grow and shrink the nodes' scratch.
 */
static void session_runs_half_window_ops(void **state)
{
    (void)state;
    prng rng = {0xbe5466cf34e90c6cu};
    int64_t w_shape[4] = {3, 2, 3, 3}, b_shape[1] = {3};
    kiln_tensor *weight = new_tensor(KILN_F16, 4, w_shape), *bias = new_tensor(KILN_F16, 1, b_shape);
    fill_moderate(weight, &rng);
    fill_moderate(bias, &rng);
    const attribute_value conv_attributes[1] = {ATTR_INTS("pads", 4, 1, 1, 1, 1)};
    const attribute_value pool_attributes[2] = {ATTR_INTS("kernel_shape", 2, 2, 2), ATTR_INTS("strides", 2, 2, 2)};
    const attribute_value resize_attributes[2] = {ATTR_S("mode", "linear"), ATTR_INTS("sizes", 4, 2, 3, 5, 5)};
    const attribute_value einsum_attributes[1] = {ATTR_S("equation", "nchw->nc")};
    kiln_attribute attributes[2];
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, w, c, conv, pool, resize, sum;
    assert_int_equal(kiln_builder_new("half_windows", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F16, "[n, 2, 6, 6]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F16, 4, w_shape, weight->data, &w,
                                             &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F16, 1, b_shape, bias->data, &c,
                                             &err),
                     KILN_OK);
    attributes[0] = builder_attribute(&conv_attributes[0]);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "conv", 3, (kiln_value[]){x, w, c}, 1, attributes,
                                                         &conv, &err),
                     KILN_OK);
    for (int a = 0; a < 2; a++)
        attributes[a] = builder_attribute(&pool_attributes[a]);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "max_pool", 1, &conv, 2, attributes, &pool, &err),
                     KILN_OK);
    for (int a = 0; a < 2; a++)
        attributes[a] = builder_attribute(&resize_attributes[a]);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "resize", 1, &pool, 2, attributes, &resize, &err),
                     KILN_OK);
    attributes[0] = builder_attribute(&einsum_attributes[0]);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "einsum", 1, &resize, 1, attributes, &sum, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", sum, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_feature_bits(program), 1);
    kiln_session *session = NULL;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    const int64_t batches[] = {1, 4, 2};
    for (size_t r = 0; r < COUNT(batches); r++) {
        int64_t n = batches[r];
        kiln_tensor *input = new_tensor(KILN_F16, 4, (const int64_t[]){n, 2, 6, 6});
        fill_moderate(input, &rng);
        assert_int_equal(kiln_session_set_input(session, "x", input, &err), KILN_OK);
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run at n=%lld: %s", (long long)n, err.message);
        kiln_tensor *conved = new_tensor(KILN_F16, 4, (const int64_t[]){n, 3, 6, 6});
        kiln_tensor *pooled = new_tensor(KILN_F16, 4, (const int64_t[]){n, 3, 3, 3});
        kiln_tensor *resized = new_tensor(KILN_F16, 4, (const int64_t[]){2, 3, 5, 5});
        kiln_tensor *summed = new_tensor(KILN_F16, 2, (const int64_t[]){2, 3});
        assert_int_equal(run_op("conv", (const kiln_tensor *const[]){input, weight, bias}, 3, conved,
                                conv_attributes, 1, &err),
                         KILN_OK);
        assert_int_equal(run_op("max_pool", (const kiln_tensor *const[]){conved}, 1, pooled, pool_attributes, 2,
                                &err),
                         KILN_OK);
        assert_int_equal(run_op("resize", (const kiln_tensor *const[]){pooled}, 1, resized, resize_attributes, 2,
                                &err),
                         KILN_OK);
        assert_int_equal(run_op("einsum", (const kiln_tensor *const[]){resized}, 1, summed, einsum_attributes, 1,
                                &err),
                         KILN_OK);
        const kiln_tensor *out = kiln_session_output(session, 0);
        assert_int_equal(out->dtype, KILN_F16);
        assert_int_equal(out->element_count, 6);
        if (memcmp(out->data, summed->data, summed->byte_size) != 0)
            fail_msg("n=%lld: the session's result differs from the kernels'", (long long)n);
        for (int e = 0; e < 6; e++) /* finite sums of many terms: the chain computed something */
            assert_true(isfinite(half_value(KILN_F16, ((const uint16_t *)out->data)[e])) &&
                        ((const uint16_t *)out->data)[e] != 0);
        kiln_tensor_free(input);
        kiln_tensor_free(conved);
        kiln_tensor_free(pooled);
        kiln_tensor_free(resized);
        kiln_tensor_free(summed);
    }
    kiln_session_free(session);
    kiln_program_free(program);
    free(bytes);
    kiln_tensor_free(weight);
    kiln_tensor_free(bias);
}

/* range does not make half values yet: refused when the program is built, naming the dtype. */
static void range_refuses_half(void **state)
{
    (void)state;
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value y;
    assert_int_equal(kiln_builder_new("refuse", &b, &err), KILN_OK);
    kiln_attribute range[4] = {{.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "f16"},
                               {.name = "start", .type = KILN_ATTRIBUTE_FLOAT, .f = 0},
                               {.name = "limit", .type = KILN_ATTRIBUTE_FLOAT, .f = 4},
                               {.name = "delta", .type = KILN_ATTRIBUTE_FLOAT, .f = 1}};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "range", 0, NULL, 4, range, &y, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "f16"));
    kiln_builder_free(b);
}

/*
 * Convolution, pooling and einsum compute in f32 and round once at the
 * end, so an intermediate beyond the half range does not overflow; only a
 * final result does. The f16 patterns below are exact (60000 = 0x7b53).
 */
static void window_ops_overflow_only_at_the_end(void **state)
{
    (void)state;
    kiln_error err;
    const uint16_t big = nearest_half(KILN_F16, 60000.0), one = nearest_half(KILN_F16, 1.0);
    assert_true(half_value(KILN_F16, big) == 60000.0);
    int64_t x_shape[3] = {1, 1, 3}, w_shape[3] = {1, 1, 3}, y_shape[3] = {1, 1, 1};
    kiln_tensor *x = new_tensor(KILN_F16, 3, x_shape), *w = new_tensor(KILN_F16, 3, w_shape);
    kiln_tensor *y = new_tensor(KILN_F16, 3, y_shape);
    uint16_t *xs = x->data, *ws = w->data;
    /* 60000 + 60000 - 60000: 120000 on the way, 60000 at the end. */
    xs[0] = big, xs[1] = big, xs[2] = (uint16_t)(big | 0x8000);
    ws[0] = one, ws[1] = one, ws[2] = one;
    assert_int_equal(run_op("conv", (const kiln_tensor *const[]){x, w}, 2, y, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], big);
    /* 60000 + 60000: inf of the sign, f16 only. */
    xs[2] = 0;
    assert_int_equal(run_op("conv", (const kiln_tensor *const[]){x, w}, 2, y, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], 0x7c00);
    ws[0] = ws[1] = (uint16_t)(one | 0x8000);
    assert_int_equal(run_op("conv", (const kiln_tensor *const[]){x, w}, 2, y, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], 0xfc00);
    /* The mean of 60000, 60000 and 0 is 40000: the sum passes 65504, the result does not. */
    attribute_value kernel = ATTR_INTS("kernel_shape", 1, 3);
    assert_int_equal(run_op("avg_pool", (const kiln_tensor *const[]){x}, 1, y, &kernel, 1, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], nearest_half(KILN_F16, 40000.0));
    assert_int_equal(run_op("global_avg_pool", (const kiln_tensor *const[]){x}, 1, y, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], nearest_half(KILN_F16, 40000.0));
    /* The 2-norm of (60000, 60000, 0) is 84852.8...: inf in f16, finite in bf16. */
    assert_int_equal(run_op("global_lp_pool", (const kiln_tensor *const[]){x}, 1, y, NULL, 0, &err), KILN_OK);
    assert_int_equal(((uint16_t *)y->data)[0], 0x7c00);
    /* A dot product whose partial sums pass the range and come back. */
    int64_t vector[1] = {3};
    kiln_tensor *dot = new_tensor(KILN_F16, 0, NULL);
    kiln_tensor *a = new_tensor(KILN_F16, 1, vector), *c = new_tensor(KILN_F16, 1, vector);
    memcpy(a->data, xs, sizeof(uint16_t[3]));
    uint16_t *cs = c->data;
    cs[0] = one, cs[1] = one, cs[2] = (uint16_t)(nearest_half(KILN_F16, 2.0) | 0x8000);
    attribute_value equation = ATTR_S("equation", "i,i->");
    assert_int_equal(run_op("einsum", (const kiln_tensor *const[]){a, c}, 2, dot, &equation, 1, &err), KILN_OK);
    assert_int_equal(((uint16_t *)dot->data)[0], 0x7c00); /* 60000 + 60000 + 0 */
    ((uint16_t *)a->data)[2] = big;
    assert_int_equal(run_op("einsum", (const kiln_tensor *const[]){a, c}, 2, dot, &equation, 1, &err), KILN_OK);
    assert_int_equal(((uint16_t *)dot->data)[0], 0); /* 60000 + 60000 - 120000 */
    kiln_tensor_free(a);
    kiln_tensor_free(c);
    kiln_tensor_free(dot);
    /* bf16 reaches far beyond: the same conv stays finite, 120000 rounded once. */
    kiln_tensor *xb = new_tensor(KILN_BF16, 3, x_shape), *wb = new_tensor(KILN_BF16, 3, w_shape);
    kiln_tensor *yb = new_tensor(KILN_BF16, 3, y_shape);
    for (int i = 0; i < 3; i++) {
        ((uint16_t *)xb->data)[i] = nearest_half(KILN_BF16, i < 2 ? 60000.0 : 0.0);
        ((uint16_t *)wb->data)[i] = nearest_half(KILN_BF16, 1.0);
    }
    assert_int_equal(run_op("conv", (const kiln_tensor *const[]){xb, wb}, 2, yb, NULL, 0, &err), KILN_OK);
    double twice = 2.0 * half_value(KILN_BF16, nearest_half(KILN_BF16, 60000.0));
    assert_int_equal(((uint16_t *)yb->data)[0], nearest_half(KILN_BF16, twice));
    kiln_tensor_free(xb);
    kiln_tensor_free(wb);
    kiln_tensor_free(yb);
    kiln_tensor_free(x);
    kiln_tensor_free(w);
    kiln_tensor_free(y);
}

/* The kernel of a window op refuses half operands mixed with f32 ones, before anything is widened. */
static void window_ops_refuse_mixed_dtypes(void **state)
{
    (void)state;
    kiln_error err;
    int64_t x_shape[3] = {1, 1, 4}, w_shape[3] = {1, 1, 2}, y_shape[3] = {1, 1, 3};
    kiln_tensor *x = new_tensor(KILN_F16, 3, x_shape), *w = new_tensor(KILN_F32, 3, w_shape);
    kiln_tensor *y = new_tensor(KILN_F16, 3, y_shape), *y32 = new_tensor(KILN_F32, 3, y_shape);
    assert_int_equal(run_op("conv", (const kiln_tensor *const[]){x, w}, 2, y, NULL, 0, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "conv: input 1 is f32, x is f16"));
    attribute_value kernel = ATTR_INTS("kernel_shape", 1, 2);
    assert_int_equal(run_op("max_pool", (const kiln_tensor *const[]){x}, 1, y32, &kernel, 1, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "max_pool: the output must have the dtype of x (f16), got f32"));
    kiln_tensor_free(x);
    kiln_tensor_free(w);
    kiln_tensor_free(y);
    kiln_tensor_free(y32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_rounds_once),
        cmocka_unit_test(overflow_becomes_infinity),
        cmocka_unit_test(data_movement_moves_half_patterns),
        cmocka_unit_test(scratch_lives_in_the_node_slot),
        cmocka_unit_test(cast_to_half_rounds_once),
        cmocka_unit_test(cast_large_integer_to_bf16_rounds_once),
        cmocka_unit_test(cast_from_half_is_the_value),
        cmocka_unit_test(session_runs_half_program),
        cmocka_unit_test(input_checks_read_half_values),
        cmocka_unit_test(evidence_tolerates_half_outputs),
        cmocka_unit_test(generators_make_half_values),
        cmocka_unit_test(one_hot_writes_half_values),
        cmocka_unit_test(session_runs_half_window_ops),
        cmocka_unit_test(range_refuses_half),
        cmocka_unit_test(window_ops_overflow_only_at_the_end),
        cmocka_unit_test(window_ops_refuse_mixed_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
