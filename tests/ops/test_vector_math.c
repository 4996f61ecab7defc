/*
 * test_vector_math.c — the vectorized f32 exp, erf, gelu, the activations
 * (sigmoid, silu, tanh, gelu's tanh form, hard_swish, hard_sigmoid, elu,
 * selu) and softmax on any axis (lib/ops/common/vector_math.h) against the
 * reference kernels and against oracles written here in long double.
 *
 * The bound (spec/opset.md, "Fast paths"): every result within 1 ulp of
 * the reference kernel's, and special values exactly the reference's.
 * Each function is swept over about a million f32 bit patterns spread over
 * the whole line (every sign, exponent and many mantissas, subnormals and
 * NaN payloads included) plus a list of edges; the sweep also counts the
 * results that differ from the reference at all, which must stay rare (the
 * polynomials are accurate to ~1e-13, so a difference needs a reference
 * value within that of a rounding boundary).
 *
 * The reference is the registry's kernel called without a session (which
 * runs the portable loops); the oracles round expl / erfl of the argument
 * once to f32 and must also be within 1 ulp. A session's call with fast
 * paths allowed must give the vectorized results, and one asking for
 * reference kernels the reference's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "attribute.h"
#include "kernel_context.h"
#include "op_registry.h"
#include "tensor.h"
#include "vector_math.h"

/* ------------------------------------------------------------ helpers */

/* f32 values in an order where adjacent representable values differ by 1. */
static int64_t ordinal(float value)
{
    int32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits < 0 ? (int64_t)INT32_MIN - bits : bits;
}

/* Distance in ulps; NaN against NaN is 0, NaN against a number is huge. */
static int64_t ulps_apart(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0 : INT64_MAX;
    int64_t d = ordinal(a) - ordinal(b);
    return d < 0 ? -d : d;
}

static float from_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The bit patterns of the sweep: a stride prime to 2^32, so every exponent
 * and sign is visited with varied mantissas, then the edges. */
enum { SWEEP_STRIDE = 4099, SWEEP_COUNT = (int)(UINT32_C(0xFFFFFFFF) / SWEEP_STRIDE) + 1 };

static const float edges[] = {
    0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f,
    /* exp: overflow and underflow thresholds, the subnormal range, the clamp */
    88.72283f, 88.72284f, 88.7f, 89.0f, -87.33654f, -87.4f, -103.27893f, -103.97208f, -103.98f, -104.0f, -150.0f,
    -150.5f, 100.0f, 100.5f, 0x1.62e42ep-1f, -0x1.62e42ep-1f, 0x1p-30f, -0x1p-30f,
    /* erf: the piece boundary at 1, the clamp at 4, where f32 erf becomes 1 */
    0.99999994f, 1.00000012f, -0.99999994f, -1.00000012f, 3.8f, 3.83f, 3.9f, 3.99999976f, 4.0f, 4.00000048f,
    -3.9f, -4.0f, 1e-20f, -1e-20f, 0.5f, 2.0f, -2.5f};

/* An f32 tensor of n elements (freed by the caller). */
static kiln_tensor *new_vector(uint64_t n)
{
    kiln_tensor *t;
    kiln_error err;
    int64_t shape[1] = {(int64_t)n};
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, shape, &t, &err), KILN_OK);
    return t;
}

/* Run the registry's `op` on one input with `count` attributes (sorted by
 * name); `context` NULL runs the reference loops. */
static void run_op_with(const char *op, const kiln_node_attribute *attributes, uint32_t count,
                        const kiln_tensor *in, kiln_tensor *out, kiln_kernel_context *context)
{
    const kiln_op_def *def = kiln_op_find(op);
    assert_non_null(def);
    const kiln_tensor *inputs[1] = {in};
    memset(out->data, 0x7F, out->byte_size); /* a skipped element shows */
    kiln_node_state state = {NULL, NULL};
    if (context)
        context->state = &state;
    kiln_kernel_call call = {inputs, 1, out, attributes, count, context};
    kiln_error err;
    assert_int_equal(def->run(&call, &err), KILN_OK);
    if (state.release)
        state.release(state.data);
}

/* Run the registry's `op` with its default attributes. */
static void run_op(const char *op, const kiln_tensor *in, kiln_tensor *out, kiln_kernel_context *context)
{
    run_op_with(op, NULL, 0, in, out, context);
}

/* A session's context with fast paths allowed, one thread. */
static kiln_kernel_context fast_context(void)
{
    kiln_kernel_context context;
    memset(&context, 0, sizeof context);
    context.threads = 1;
    return context;
}

typedef long double (*oracle_fn)(long double);

/*
 * Sweep `op` over the bit patterns and edges: the vectorized loop against
 * the reference kernel (within 1 ulp, NaN for NaN, specials exact) and the
 * long double oracle (within 1 ulp). @return how many results differ from
 * the reference at all.
 */
static uint64_t sweep(const char *op, void (*vector)(const float *, float *, uint64_t), oracle_fn oracle)
{
    uint64_t n = (uint64_t)SWEEP_COUNT + sizeof edges / sizeof edges[0];
    kiln_tensor *in = new_vector(n), *reference = new_vector(n), *fast = new_vector(n);
    float *x = in->data;
    for (uint64_t i = 0; i < (uint64_t)SWEEP_COUNT; i++)
        x[i] = from_bits((uint32_t)(i * SWEEP_STRIDE));
    memcpy(x + SWEEP_COUNT, edges, sizeof edges);
    run_op(op, in, reference, NULL);
    vector(x, fast->data, n);
    const float *want = reference->data, *got = fast->data;
    uint64_t differing = 0;
    for (uint64_t i = 0; i < n; i++) {
        long double exact = oracle((long double)x[i]);
        float rounded = (float)exact;
        if (ulps_apart(got[i], want[i]) > 1 || ulps_apart(got[i], rounded) > 1)
            fail_msg("%s(%a): vectorized %a, reference %a, long double %a", op, (double)x[i], (double)got[i],
                     (double)want[i], (double)rounded);
        /* Specials are the reference's exactly. */
        if (isinf(want[i]) || want[i] == 0.0f || fabsf(want[i]) == 1.0f || isnan(x[i]))
            if (!(isnan(want[i]) ? isnan(got[i]) : memcmp(&got[i], &want[i], sizeof got[i]) == 0))
                fail_msg("%s(%a): vectorized %a, reference %a exactly", op, (double)x[i], (double)got[i],
                         (double)want[i]);
        differing += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    }
    kiln_tensor_free(in);
    kiln_tensor_free(reference);
    kiln_tensor_free(fast);
    return differing;
}

/* ---------------------------------------------------------------- tests */

static void exp_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t differing = sweep("exp", kiln_vector_exp_f32, expl);
    /* Measured over all 2^32 f32 values: 2 differ, by 1 ulp. */
    assert_true(differing <= 10);
}

static void erf_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t differing = sweep("erf", kiln_vector_erf_f32, erfl);
    /* Measured over all 2^32 f32 values: 534 differ, by 1 ulp. */
    assert_true(differing <= 10);
}

/* gelu in long double, erf form: 0.5 x erfc(-x / sqrt 2); gelu(-inf) = -0. */
static long double gelu_oracle(long double x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    return 0.5L * x * erfcl(-x / sqrtl(2.0L));
}

static void gelu_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t differing = sweep("gelu", kiln_vector_gelu_f32, gelu_oracle);
    /* The bit-pattern sweep visits few values where gelu is neither x nor 0
     * nor computed by the reference (below -3.5): so also every f32 of
     * [-4, 8) whose bits are a multiple of 7 apart, about 1.3 million. */
    float lo = -4.0f;
    uint32_t lo_bits, hi_bits;
    memcpy(&lo_bits, &lo, sizeof lo_bits);
    float hi = 8.0f;
    memcpy(&hi_bits, &hi, sizeof hi_bits);
    uint64_t n = 0;
    float *x = malloc(sizeof *x * 3000000), *got = malloc(sizeof *got * 3000000);
    assert_non_null(x);
    assert_non_null(got);
    /* Negative values: the bits fall from -4 towards -0; positive ones rise from +0 to 8. */
    for (uint32_t b = lo_bits; b >= 0x80000000u && n < 3000000; b -= 7)
        x[n++] = from_bits(b);
    for (uint32_t b = 0; b < hi_bits && n < 3000000; b += 7)
        x[n++] = from_bits(b);
    kiln_tensor *in = new_vector(n), *reference = new_vector(n);
    memcpy(in->data, x, n * sizeof *x);
    run_op("gelu", in, reference, NULL);
    kiln_vector_gelu_f32(x, got, n);
    const float *want = reference->data;
    for (uint64_t i = 0; i < n; i++) {
        float exact = (float)gelu_oracle((long double)x[i]);
        if (ulps_apart(got[i], want[i]) > 1 || ulps_apart(got[i], exact) > 1)
            fail_msg("gelu(%a): vectorized %a, reference %a, long double %a", (double)x[i], (double)got[i],
                     (double)want[i], (double)exact);
        differing += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
        /* Below -3.5 the reference's own value. */
        if (x[i] < -3.5f && memcmp(&got[i], &want[i], sizeof got[i]) != 0)
            fail_msg("gelu(%a): vectorized %a, not the reference's %a", (double)x[i], (double)got[i],
                     (double)want[i]);
    }
    print_message("gelu: %llu of %llu results differ from the reference (each by 1 ulp)\n",
                  (unsigned long long)differing, (unsigned long long)(n + SWEEP_COUNT));
    /* Measured: 4265 of 4047809 (0.11%): the polynomial's error, amplified
     * by the cancellation below 0, moves more results across a rounding
     * boundary than erf's. */
    assert_true(differing * 500 <= n);
    kiln_tensor_free(in);
    kiln_tensor_free(reference);
    free(x);
    free(got);
}

/* ------------------------------------------------------ activations */

/* The sweep of an activation: the bit patterns and edges, then this many
 * random values in [-20, 20), where the activations bend, and as many in
 * [-1, 1) scaled by 2^-k for k up to 40, where they are near linear. */
enum { ACTIVATION_RANDOM = 1000000 };

/* A random f32 in [-scale, scale), declared here for the sweeps. */
static float random_float(float scale);

/*
 * Sweep activation `op` (its default attributes) as `sweep` does, over the
 * bit patterns, the edges and the random values above: within 1 ulp of the
 * reference kernel and of the long double oracle, specials (0, ±1, ±inf,
 * NaN arguments) exactly the reference's. @return how many results differ
 * from the reference at all; *count gets how many were compared.
 */
static uint64_t sweep_activation(const char *op, void (*vector)(const float *, float *, uint64_t), oracle_fn oracle,
                                 uint64_t *count)
{
    uint64_t n = (uint64_t)SWEEP_COUNT + sizeof edges / sizeof edges[0] + 2 * ACTIVATION_RANDOM;
    kiln_tensor *in = new_vector(n), *reference = new_vector(n), *fast = new_vector(n);
    float *x = in->data;
    uint64_t at = 0;
    for (; at < (uint64_t)SWEEP_COUNT; at++)
        x[at] = from_bits((uint32_t)(at * SWEEP_STRIDE));
    memcpy(x + at, edges, sizeof edges);
    at += sizeof edges / sizeof edges[0];
    for (int i = 0; i < ACTIVATION_RANDOM; i++)
        x[at++] = random_float(20.0f);
    for (int i = 0; i < ACTIVATION_RANDOM; i++)
        x[at++] = ldexpf(random_float(1.0f), -(i % 41));
    run_op(op, in, reference, NULL);
    vector(x, fast->data, n);
    const float *want = reference->data, *got = fast->data;
    uint64_t differing = 0;
    for (uint64_t i = 0; i < n; i++) {
        float rounded = (float)oracle((long double)x[i]);
        if (ulps_apart(got[i], want[i]) > 1 || ulps_apart(got[i], rounded) > 1)
            fail_msg("%s(%a): vectorized %a, reference %a, long double %a", op, (double)x[i], (double)got[i],
                     (double)want[i], (double)rounded);
        if (isinf(want[i]) || want[i] == 0.0f || fabsf(want[i]) == 1.0f || isnan(x[i]) || isinf(x[i]))
            if (!(isnan(want[i]) ? isnan(got[i]) : memcmp(&got[i], &want[i], sizeof got[i]) == 0))
                fail_msg("%s(%a): vectorized %a, reference %a exactly", op, (double)x[i], (double)got[i],
                         (double)want[i]);
        /* Two NaNs are the same result whatever their bits: a vector loop may pass a signalling NaN
         * through where the reference's double arithmetic quiets it. */
        differing += !(isnan(got[i]) && isnan(want[i])) && memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    }
    print_message("%s: %llu of %llu results differ from the reference (each by 1 ulp)\n", op,
                  (unsigned long long)differing, (unsigned long long)n);
    kiln_tensor_free(in);
    kiln_tensor_free(reference);
    kiln_tensor_free(fast);
    *count = n;
    return differing;
}

static long double sigmoid_oracle(long double x)
{
    return x >= 0 ? 1.0L / (1.0L + expl(-x)) : expl(x) / (1.0L + expl(x));
}

static long double silu_oracle(long double x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    return x * sigmoid_oracle(x);
}

static long double gelu_tanh_oracle(long double x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    /* 1 + tanh(u) = 2 sigmoid(2u), which does not cancel for negative x. */
    return x * sigmoid_oracle(2.0L * (0.79788456080286535588L * (x + 0.044715L * x * x * x)));
}

static long double hard_swish_oracle(long double x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    long double t = (x + 3.0L) / 6.0L;
    return x * (t < 0 ? 0.0L : t > 1 ? 1.0L : t);
}

/* hard_sigmoid's defaults: alpha 0.2 and beta 0.5 (as doubles). */
static long double hard_sigmoid_oracle(long double x)
{
    long double t = (long double)0.2 * x + 0.5L;
    return t < 0 ? 0.0L : t > 1 ? 1.0L : t;
}

static long double elu_oracle(long double x)
{
    return x < 0 ? expm1l(x) : x;
}

/* selu's defaults, as the reference reads them. */
#define SELU_ALPHA 1.67326319217681884765625
#define SELU_GAMMA 1.05070102214813232421875

static long double selu_oracle(long double x)
{
    return x <= 0 ? (long double)SELU_GAMMA * ((long double)SELU_ALPHA * expm1l(x)) : (long double)SELU_GAMMA * x;
}

/* The parameterized loops at the ops' default attributes. */
static void hard_sigmoid_defaults(const float *in, float *out, uint64_t n)
{
    kiln_vector_hard_sigmoid_f32(in, out, n, 0.2, 0.5);
}

static void elu_defaults(const float *in, float *out, uint64_t n)
{
    kiln_vector_elu_f32(in, out, n, 1.0);
}

static void selu_defaults(const float *in, float *out, uint64_t n)
{
    kiln_vector_selu_f32(in, out, n, SELU_ALPHA, SELU_GAMMA);
}

/*
 * The activations' bound. Differences need a value within ~1e-14 of a
 * rounding boundary of f32, so they stay rare: over all 2^32 f32
 * arguments (spec/opset.md, "Tolerance of the vectorized math") a few
 * dozen at most. The random values here sit on dyadic grids, and near 0
 * sigmoid(x) = 1/2 + x/4 - x^3/48 puts many of them within 2^-53 of a tie
 * between two f32 values, where either side is within 1 ulp (measured:
 * 2047 of the 3 million, all there). hard_swish and hard_sigmoid compute
 * the reference's own operations and never differ.
 */
static void sigmoid_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t n, differing = sweep_activation("sigmoid", kiln_vector_sigmoid_f32, sigmoid_oracle, &n);
    assert_true(differing * 1000 <= n);
}

static void silu_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t n, differing = sweep_activation("silu", kiln_vector_silu_f32, silu_oracle, &n);
    assert_true(differing * 1000 <= n);
}

static void tanh_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t n, differing = sweep_activation("tanh", kiln_vector_tanh_f32, tanhl, &n);
    assert_true(differing * 10000 <= n);
}

static void gelu_tanh_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    /* The registry's gelu with approximate = "tanh". */
    uint64_t n = (uint64_t)2 * ACTIVATION_RANDOM + sizeof edges / sizeof edges[0];
    kiln_tensor *in = new_vector(n), *reference = new_vector(n), *fast = new_vector(n);
    float *x = in->data;
    memcpy(x, edges, sizeof edges);
    for (uint64_t i = sizeof edges / sizeof edges[0]; i < n; i++)
        x[i] = i % 2 ? random_float(20.0f) : ldexpf(random_float(1.0f), -(int)(i % 41));
    kiln_node_attribute tanh_form = {.name = "approximate", .type = KILN_ATTRIBUTE_STRING, .s = "tanh"};
    run_op_with("gelu", &tanh_form, 1, in, reference, NULL);
    kiln_kernel_context context = fast_context();
    run_op_with("gelu", &tanh_form, 1, in, fast, &context);
    assert_int_equal(context.path, KILN_PATH_VECTOR);
    const float *want = reference->data, *got = fast->data;
    uint64_t differing = 0;
    for (uint64_t i = 0; i < n; i++) {
        float rounded = (float)gelu_tanh_oracle((long double)x[i]);
        if (ulps_apart(got[i], want[i]) > 1 || ulps_apart(got[i], rounded) > 1)
            fail_msg("gelu tanh(%a): vectorized %a, reference %a, long double %a", (double)x[i], (double)got[i],
                     (double)want[i], (double)rounded);
        if ((isinf(want[i]) || want[i] == 0.0f || isnan(x[i])) &&
            !(isnan(want[i]) ? isnan(got[i]) : memcmp(&got[i], &want[i], sizeof got[i]) == 0))
            fail_msg("gelu tanh(%a): vectorized %a, reference %a exactly", (double)x[i], (double)got[i],
                     (double)want[i]);
        differing += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
    }
    print_message("gelu tanh: %llu of %llu results differ from the reference (each by 1 ulp)\n",
                  (unsigned long long)differing, (unsigned long long)n);
    assert_true(differing * 1000 <= n);
    kiln_tensor_free(in);
    kiln_tensor_free(reference);
    kiln_tensor_free(fast);
}

static void hard_swish_is_the_reference(void **state)
{
    (void)state;
    uint64_t n;
    assert_int_equal(sweep_activation("hard_swish", kiln_vector_hard_swish_f32, hard_swish_oracle, &n), 0);
}

static void hard_sigmoid_is_the_reference(void **state)
{
    (void)state;
    uint64_t n;
    assert_int_equal(sweep_activation("hard_sigmoid", hard_sigmoid_defaults, hard_sigmoid_oracle, &n), 0);
}

static void elu_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t n, differing = sweep_activation("elu", elu_defaults, elu_oracle, &n);
    assert_true(differing * 10000 <= n);
}

static void selu_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    uint64_t n, differing = sweep_activation("selu", selu_defaults, selu_oracle, &n);
    assert_true(differing * 10000 <= n);
}

/*
 * The coefficients reach the loops: hard_sigmoid with MobileNetV3's
 * alpha = 1/6 and with alpha = 0 (beta for every x but NaN), elu and selu
 * with other alphas and gammas (gamma 0: selu is 0 above 0, even at inf),
 * each through a session's call against the reference kernel.
 */
static void coefficients_are_the_reference_ones(void **state)
{
    (void)state;
    enum { N = 20000 };
    kiln_tensor *in = new_vector(N), *reference = new_vector(N), *fast = new_vector(N);
    float *x = in->data;
    static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -3.0f, 3.0f, FLT_MAX, -FLT_MAX};
    memcpy(x, specials, sizeof specials);
    for (int i = (int)(sizeof specials / sizeof specials[0]); i < N; i++)
        x[i] = random_float(12.0f);
    struct {
        const char *op;
        kiln_node_attribute attributes[2];
        uint32_t count;
    } cases[] = {
        {"hard_sigmoid", {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 1.0 / 6.0}}, 1},
        {"hard_sigmoid",
         {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.0},
          {.name = "beta", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.25}},
         2},
        {"hard_sigmoid",
         {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = -0.7},
          {.name = "beta", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.1}},
         2},
        {"elu", {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.3}}, 1},
        {"elu", {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = -2.5}}, 1},
        {"selu",
         {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 2.0},
          {.name = "gamma", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.0}},
         2},
        {"selu",
         {{.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = -1.5},
          {.name = "gamma", .type = KILN_ATTRIBUTE_FLOAT, .f = 3.0}},
         2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        run_op_with(cases[c].op, cases[c].attributes, cases[c].count, in, reference, NULL);
        kiln_kernel_context context = fast_context();
        run_op_with(cases[c].op, cases[c].attributes, cases[c].count, in, fast, &context);
        assert_int_equal(context.path, KILN_PATH_VECTOR);
        const float *want = reference->data, *got = fast->data;
        for (int i = 0; i < N; i++) {
            bool exact = strcmp(cases[c].op, "hard_sigmoid") == 0 || isinf(want[i]) || want[i] == 0.0f ||
                         isnan(x[i]) || isinf(x[i]);
            bool same = isnan(want[i]) ? isnan(got[i]) : memcmp(&got[i], &want[i], sizeof got[i]) == 0;
            if (exact ? !same : ulps_apart(got[i], want[i]) > 1)
                fail_msg("%s case %zu (%a): vectorized %a, reference %a", cases[c].op, c, (double)x[i],
                         (double)got[i], (double)want[i]);
        }
    }
    kiln_tensor_free(in);
    kiln_tensor_free(reference);
    kiln_tensor_free(fast);
}

static void specials_are_the_reference_values(void **state)
{
    (void)state;
    const float in[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 89.0f, -104.0f, 0x1p-149f};
    float exp_out[9], erf_out[9];
    kiln_vector_exp_f32(in, exp_out, 9);
    kiln_vector_erf_f32(in, erf_out, 9);
    assert_true(isnan(exp_out[0]) && isnan(exp_out[1]) && isnan(erf_out[0]) && isnan(erf_out[1]));
    assert_true(exp_out[2] == INFINITY && exp_out[3] == 0.0f && !signbit(exp_out[3]));
    assert_true(exp_out[4] == 1.0f && exp_out[5] == 1.0f && exp_out[6] == INFINITY && exp_out[7] == 0.0f);
    assert_true(exp_out[8] == 1.0f);
    assert_true(erf_out[2] == 1.0f && erf_out[3] == -1.0f);
    /* erf keeps the sign of zero. */
    assert_true(erf_out[4] == 0.0f && !signbit(erf_out[4]) && erf_out[5] == 0.0f && signbit(erf_out[5]));
    /* erf(2^-149) = 2/sqrt(pi) * 2^-149 rounds to 2^-149 (a subnormal, not 0). */
    assert_true(erf_out[8] == 0x1p-149f);
}

/* softmax of one slice in long double, the same shift rule as the op. */
static void oracle_softmax(const float *x, float *out, uint64_t n)
{
    long double shift = x[0];
    for (uint64_t k = 1; k < n; k++)
        if (!isnan(shift) && (isnan(x[k]) || x[k] > shift))
            shift = x[k];
    long double sum = 0.0L;
    for (uint64_t k = 0; k < n; k++)
        sum += expl((long double)x[k] - shift);
    for (uint64_t k = 0; k < n; k++)
        out[k] = (float)(expl((long double)x[k] - shift) / sum);
}

/* A random f32 in [-scale, scale). */
static uint64_t random_state = 0x9E3779B97F4A7C15u;
static float random_float(float scale)
{
    random_state ^= random_state >> 12;
    random_state ^= random_state << 25;
    random_state ^= random_state >> 27;
    uint64_t r = random_state * 2685821657736338717u;
    return scale * (float)((double)(r >> 40) / (double)(1u << 23) - 1.0);
}

static void softmax_is_within_one_ulp_of_the_reference(void **state)
{
    (void)state;
    /* Slices of many lengths (odd tails of the 4-way sums), value ranges
     * from tiny to beyond exp's range, and slices with specials. */
    static const uint64_t extents[] = {1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 100, 1000};
    static const float scales[] = {1e-6f, 1.0f, 10.0f, 100.0f, 1e4f, 1e30f};
    for (size_t e = 0; e < sizeof extents / sizeof extents[0]; e++) {
        for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
            for (int special = 0; special < 6; special++) {
                uint64_t rows = 3, n = extents[e];
                int64_t shape[2] = {(int64_t)rows, (int64_t)n};
                kiln_tensor *in, *reference, *fast;
                kiln_error err;
                assert_int_equal(kiln_tensor_new(KILN_F32, 2, shape, &in, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 2, shape, &reference, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 2, shape, &fast, &err), KILN_OK);
                float *x = in->data;
                for (uint64_t i = 0; i < rows * n; i++)
                    x[i] = random_float(scales[s]);
                /* Row 1 holds a special in the middle of the slice. */
                static const float specials[] = {0.0f, NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX};
                if (special)
                    x[n + n / 2] = specials[special];
                /* A NaN first (the reference's shift) in row 2: all NaN too. */
                if (special == 1)
                    x[2 * n] = NAN;
                kiln_kernel_context context = fast_context();
                run_op("softmax", in, reference, NULL);
                run_op("softmax", in, fast, &context);
                const float *want = reference->data, *got = fast->data;
                float exact[1000];
                for (uint64_t r = 0; r < rows; r++) {
                    oracle_softmax(x + r * n, exact, n);
                    for (uint64_t k = 0; k < n; k++) {
                        uint64_t i = r * n + k;
                        if (ulps_apart(got[i], want[i]) > 1 || ulps_apart(got[i], exact[k]) > 1)
                            fail_msg("softmax [%llu x %llu] scale %g special %d at %llu: vectorized %a, reference "
                                     "%a, long double %a",
                                     (unsigned long long)rows, (unsigned long long)n, (double)scales[s], special,
                                     (unsigned long long)i, (double)got[i], (double)want[i], (double)exact[k]);
                    }
                }
                kiln_tensor_free(in);
                kiln_tensor_free(reference);
                kiln_tensor_free(fast);
            }
        }
    }
}

/*
 * softmax along an axis that is not the last: [outer, extent, inner] with
 * axis 1 (and axis 0 of [extent, inner]), inner widths around the 256
 * slices computed at once, specials in some slices; within 1 ulp of the
 * reference and of the long double oracle, on one thread and on two (the
 * same bits: each slice is computed whole by one thread).
 */
static void softmax_on_inner_axes_is_within_one_ulp(void **state)
{
    (void)state;
    static const uint64_t inners[] = {2, 3, 17, 255, 256, 257, 600};
    static const uint64_t extents[] = {1, 2, 5, 33};
    static const float scales[] = {1.0f, 30.0f, 1e4f};
    for (size_t w = 0; w < sizeof inners / sizeof inners[0]; w++)
        for (size_t e = 0; e < sizeof extents / sizeof extents[0]; e++)
            for (size_t sc = 0; sc < sizeof scales / sizeof scales[0]; sc++) {
                uint64_t outer = 3, extent = extents[e], inner = inners[w];
                int64_t shape[3] = {(int64_t)outer, (int64_t)extent, (int64_t)inner};
                kiln_tensor *in, *reference, *fast;
                kiln_error err;
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &in, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &reference, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &fast, &err), KILN_OK);
                float *x = in->data;
                for (uint64_t i = 0; i < in->element_count; i++)
                    x[i] = random_float(scales[sc]);
                /* Slice (o = 1, i = inner / 2) gets a special at k = extent / 2; others keep theirs. */
                static const float specials[] = {NAN, INFINITY, -INFINITY, FLT_MAX};
                x[1 * extent * inner + (extent / 2) * inner + inner / 2] = specials[(w + e + sc) % 4];
                x[inner - 1] = -INFINITY; /* a masked entry in slice (0, inner - 1) */
                kiln_node_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
                run_op_with("softmax", &axis, 1, in, reference, NULL);
                kiln_kernel_context context = fast_context();
                run_op_with("softmax", &axis, 1, in, fast, &context);
                assert_int_equal(context.path, KILN_PATH_VECTOR);
                const float *want = reference->data, *got = fast->data;
                float column[33], exact[33];
                for (uint64_t o = 0; o < outer; o++)
                    for (uint64_t i = 0; i < inner; i++) {
                        for (uint64_t k = 0; k < extent; k++)
                            column[k] = x[(o * extent + k) * inner + i];
                        oracle_softmax(column, exact, extent);
                        for (uint64_t k = 0; k < extent; k++) {
                            uint64_t at = (o * extent + k) * inner + i;
                            if (ulps_apart(got[at], want[at]) > 1 || ulps_apart(got[at], exact[k]) > 1)
                                fail_msg("softmax [%llu, %llu, %llu] axis 1 at (%llu, %llu, %llu): vectorized %a, "
                                         "reference %a, long double %a",
                                         (unsigned long long)outer, (unsigned long long)extent,
                                         (unsigned long long)inner, (unsigned long long)o, (unsigned long long)k,
                                         (unsigned long long)i, (double)got[at], (double)want[at], (double)exact[k]);
                            if ((want[at] == 0.0f || isnan(want[at])) &&
                                !(isnan(want[at]) ? isnan(got[at]) : got[at] == 0.0f))
                                fail_msg("softmax axis 1 at %llu: vectorized %a, reference %a exactly",
                                         (unsigned long long)at, (double)got[at], (double)want[at]);
                        }
                    }
                /* In place gives the same bits. */
                kiln_tensor *alias = reference;
                memcpy(alias->data, x, in->byte_size);
                const kiln_tensor *alias_input[1] = {alias};
                kiln_kernel_call in_place = {alias_input, 1, alias, &axis, 1, &context};
                assert_int_equal(kiln_op_find("softmax")->run(&in_place, &err), KILN_OK);
                assert_memory_equal(alias->data, fast->data, fast->byte_size);
                kiln_tensor_free(in);
                kiln_tensor_free(reference);
                kiln_tensor_free(fast);
            }
}

/* A softmax large enough to run on two threads gives the one-thread bits, on the last axis and an inner one. */
static void softmax_threads_give_the_same_bits(void **state)
{
    (void)state;
    int64_t shapes[2][3] = {{70, 64, 64}, {64, 64, 70}};
    for (int axis = 1; axis <= 2; axis++) {
        kiln_tensor *in, *one, *two;
        kiln_error err;
        int64_t *shape = shapes[axis - 1];
        assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &in, &err), KILN_OK);
        assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &one, &err), KILN_OK);
        assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &two, &err), KILN_OK);
        assert_true(in->element_count >= 262144);
        float *x = in->data;
        for (uint64_t i = 0; i < in->element_count; i++)
            x[i] = random_float(8.0f);
        kiln_node_attribute attribute = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = axis};
        kiln_kernel_context context = fast_context();
        run_op_with("softmax", &attribute, 1, in, one, &context);
        context.threads = 2;
        run_op_with("softmax", &attribute, 1, in, two, &context);
        assert_memory_equal(one->data, two->data, one->byte_size);
        kiln_tensor_free(in);
        kiln_tensor_free(one);
        kiln_tensor_free(two);
    }
}

/*
 * reduce_sum and reduce_mean over trailing axes: [outer, a, b] over axes
 * (1, 2) and over axis 2, against the reference within the bound of
 * spec/opset.md (|y - e| <= (K + 2) 2^-23 sum|x|, over K for a mean),
 * with sums that cancel (mixed signs) and specials; two threads give the
 * one-thread bits.
 */
static void reduce_over_trailing_axes_is_within_the_bound(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{3, 1, 1}, {2, 3, 5}, {4, 7, 16}, {5, 17, 33}, {2, 56, 56}, {70, 64, 64}};
    const char *ops[] = {"reduce_sum", "reduce_mean"};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int o = 0; o < 2; o++)
            for (int last_only = 0; last_only < 2; last_only++) {
                kiln_tensor *in, *reference, *fast, *two;
                kiln_error err;
                int64_t out_shape[3] = {shapes[sh][0], last_only ? shapes[sh][1] : 1, 1};
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, shapes[sh], &in, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, out_shape, &reference, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, out_shape, &fast, &err), KILN_OK);
                assert_int_equal(kiln_tensor_new(KILN_F32, 3, out_shape, &two, &err), KILN_OK);
                float *x = in->data;
                for (uint64_t i = 0; i < in->element_count; i++)
                    x[i] = random_float(i % 3 ? 4.0f : 1e4f);
                uint64_t extent = in->element_count / reference->element_count;
                /* Specials in the first slices: NaN, inf, inf and -inf. */
                if (reference->element_count >= 3 && extent >= 2) {
                    x[0] = NAN;
                    x[extent] = INFINITY;
                    x[2 * extent] = INFINITY;
                    x[2 * extent + 1] = -INFINITY;
                }
                int64_t axes_values[2] = {1, 2};
                kiln_node_attribute attributes[2] = {
                    {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = last_only ? axes_values + 1 : axes_values,
                     .count = last_only ? 1 : 2},
                    {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 1}};
                run_op_with(ops[o], attributes, 2, in, reference, NULL);
                kiln_kernel_context context = fast_context();
                run_op_with(ops[o], attributes, 2, in, fast, &context);
                assert_int_equal(context.path, KILN_PATH_VECTOR);
                context.threads = 2;
                run_op_with(ops[o], attributes, 2, in, two, &context);
                assert_memory_equal(fast->data, two->data, fast->byte_size);
                const float *want = reference->data, *got = fast->data;
                for (uint64_t i = 0; i < reference->element_count; i++) {
                    long double magnitude = 0.0L;
                    for (uint64_t k = 0; k < extent; k++)
                        magnitude += fabsl((long double)x[i * extent + k]);
                    if (o == 1)
                        magnitude /= (long double)extent;
                    long double bound = ((long double)extent + 2.0L) * 0x1p-23L * magnitude;
                    bool special = isnan(want[i]) || isinf(want[i]);
                    bool ok = special ? (isnan(want[i]) ? isnan(got[i]) : got[i] == want[i])
                                      : fabsl((long double)got[i] - (long double)want[i]) <= bound;
                    if (!ok)
                        fail_msg("%s [%lld, %lld, %lld] slice %llu: vectorized %a, reference %a, bound %Lg", ops[o],
                                 (long long)shapes[sh][0], (long long)shapes[sh][1], (long long)shapes[sh][2],
                                 (unsigned long long)i, (double)got[i], (double)want[i], bound);
                }
                kiln_tensor_free(in);
                kiln_tensor_free(reference);
                kiln_tensor_free(fast);
                kiln_tensor_free(two);
            }
}

/* In place (the output buffer is the input's), as a memory plan may alias them. */
static void softmax_runs_in_place(void **state)
{
    (void)state;
    float x[37], in_place[37], apart[37];
    for (int i = 0; i < 37; i++)
        x[i] = random_float(20.0f);
    memcpy(in_place, x, sizeof x);
    kiln_vector_softmax_f32(x, apart, 37);
    kiln_vector_softmax_f32(in_place, in_place, 37);
    assert_memory_equal(in_place, apart, sizeof apart);
}

/* Which loop a call runs: the vectorized one when its session allows fast
 * paths, the reference when it asks for reference kernels or has none. */
static void sessions_choose_the_loop(void **state)
{
    (void)state;
    /* Each call must give, bit for bit, the loop it should run. */
    enum { N = 4096 };
    kiln_tensor *in = new_vector(N), *out = new_vector(N);
    float *x = in->data, vector[N], reference[N];
    for (int i = 0; i < N; i++)
        x[i] = random_float(6.0f);
    const char *ops[] = {"exp", "erf", "gelu"};
    void (*loops[])(const float *, float *, uint64_t) = {kiln_vector_exp_f32, kiln_vector_erf_f32,
                                                        kiln_vector_gelu_f32};
    for (int o = 0; o < 3; o++) {
        loops[o](x, vector, N);
        kiln_kernel_context fast = fast_context(), reference_only = fast_context();
        reference_only.reference_only = true;
        run_op(ops[o], in, out, &fast);
        assert_int_equal(fast.path, KILN_PATH_VECTOR);
        assert_memory_equal(out->data, vector, sizeof vector);
        run_op(ops[o], in, out, NULL);
        memcpy(reference, out->data, sizeof reference);
        run_op(ops[o], in, out, &reference_only);
        assert_memory_equal(out->data, reference, sizeof reference);
        for (int i = 0; i < N; i++) {
            double v = x[i];
            float exact = o == 0 ? (float)exp(v) : o == 1 ? (float)erf(v) : (float)(0.5 * v * erfc(-v * 0.70710678118654752440));
            assert_memory_equal(&reference[i], &exact, sizeof exact);
        }
    }
    /* The activations: the session's call runs the vectorized loop and
     * says so; asking for reference kernels runs the reference loop. */
    const char *activations[] = {"sigmoid", "silu", "tanh", "hard_swish", "hard_sigmoid", "elu", "selu"};
    void (*activation_loops[])(const float *, float *, uint64_t) = {
        kiln_vector_sigmoid_f32, kiln_vector_silu_f32, kiln_vector_tanh_f32, kiln_vector_hard_swish_f32,
        hard_sigmoid_defaults,   elu_defaults,         selu_defaults};
    for (int o = 0; o < 7; o++) {
        activation_loops[o](x, vector, N);
        kiln_kernel_context fast = fast_context(), reference_only = fast_context();
        reference_only.reference_only = true;
        run_op(activations[o], in, out, &fast);
        assert_int_equal(fast.path, KILN_PATH_VECTOR);
        assert_memory_equal(out->data, vector, sizeof vector);
        run_op(activations[o], in, out, NULL);
        memcpy(reference, out->data, sizeof reference);
        run_op(activations[o], in, out, &reference_only);
        assert_int_equal(reference_only.path, KILN_PATH_REFERENCE);
        assert_memory_equal(out->data, reference, sizeof reference);
    }
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

/* kiln version lists the fast path (spec/compatibility.md). */
static void features_name_vector_math(void **state)
{
    (void)state;
    bool listed = false;
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        listed = listed || strcmp(*f, "vector-math") == 0;
    assert_true(listed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(erf_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(gelu_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(sigmoid_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(silu_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(tanh_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(gelu_tanh_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(hard_swish_is_the_reference),
        cmocka_unit_test(hard_sigmoid_is_the_reference),
        cmocka_unit_test(elu_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(selu_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(coefficients_are_the_reference_ones),
        cmocka_unit_test(specials_are_the_reference_values),
        cmocka_unit_test(softmax_is_within_one_ulp_of_the_reference),
        cmocka_unit_test(softmax_on_inner_axes_is_within_one_ulp),
        cmocka_unit_test(softmax_threads_give_the_same_bits),
        cmocka_unit_test(softmax_runs_in_place),
        cmocka_unit_test(reduce_over_trailing_axes_is_within_the_bound),
        cmocka_unit_test(sessions_choose_the_loop),
        cmocka_unit_test(features_name_vector_math),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
