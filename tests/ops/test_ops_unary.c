/*
 * test_ops_unary.c — the unary elementwise family (spec/ops/unary.md)
 * against an independent reference.
 *
 * The reference is written here in long double (80-bit on x86-64, more
 * than double elsewhere or equal to it), with the textbook form of each
 * formula wherever long double keeps it accurate, and the libm's own
 * rounding-mode-driven nearbyintl for round-half-even. Results are rounded
 * once to the dtype and compared:
 *  - exactly, bit for bit (so -0.0 is told from 0.0; any NaN matches any
 *    NaN) for the ops whose result is exact (the cases marked `exact`,
 *    which spec/ops/unary.md's "Testing" names: spec_names_the_exact_ops)
 *    and every integer op;
 *  - otherwise within |got - want| <= rtol |want| + atol: rtol 1e-6 for f32
 *    (about 8 ulp; the library evaluates f32 in double and rounds once, so
 *    it is in fact within 1 ulp) and 1e-13 for f64 (about 450 ulp; libm
 *    functions are within 1-2 ulp), atol a few smallest subnormals. gelu's
 *    far negative tail is ill-conditioned (the rounding of x/sqrt 2 or of
 *    x^3 is amplified by the slope of erfc / exp): there f64 allows
 *    rtol (1 + x^2) relative error, spec/ops/unary.md says so.
 * Inputs cover 0, -0.0, ±1, halves, large, tiny, subnormal, ±inf, NaN and
 * pseudorandom values over a wide exponent range; integer ops cover MIN,
 * MAX and their neighbours for every integer dtype. Every op also runs end
 * to end through the public builder, the encoder, the loader and a
 * session, with non-default attributes where it has any; and refusals
 * (dtype, attribute value, unknown attribute) are checked by message.
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

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "family_check.h"
#include "prng.h"
#include "seed_program.h"
#include "tensor_fixture.h"

typedef long double real;

/* ------------------------------------------------------------ attributes */

#define MAX_ATTRIBUTES 2

typedef struct attribute_set {
    uint32_t count;
    kiln_attribute items[MAX_ATTRIBUTES];
} attribute_set;

#define FLOAT_ATTRIBUTE(NAME, VALUE) {.name = (NAME), .type = KILN_ATTRIBUTE_FLOAT, .f = (VALUE)}
#define INT_ATTRIBUTE(NAME, VALUE) {.name = (NAME), .type = KILN_ATTRIBUTE_INT, .i = (VALUE)}
#define STRING_ATTRIBUTE(NAME, VALUE) {.name = (NAME), .type = KILN_ATTRIBUTE_STRING, .s = (VALUE)}

static const kiln_attribute *find_attribute(const attribute_set *a, const char *name)
{
    for (uint32_t i = 0; i < a->count; i++)
        if (strcmp(a->items[i].name, name) == 0)
            return &a->items[i];
    return NULL;
}

/* The test's own defaults (ONNX's), not the library's. */
static real float_attribute(const attribute_set *a, const char *name, real fallback)
{
    const kiln_attribute *found = find_attribute(a, name);
    return found ? (real)found->f : fallback;
}

static int64_t int_attribute(const attribute_set *a, const char *name, int64_t fallback)
{
    const kiln_attribute *found = find_attribute(a, name);
    return found ? found->i : fallback;
}

/* The node-attribute form a kernel call takes. */
static void to_node_attributes(const attribute_set *a, kiln_node_attribute *out)
{
    memset(out, 0, MAX_ATTRIBUTES * sizeof *out);
    for (uint32_t i = 0; i < a->count; i++)
        out[i] = borrowed_attribute(a->items[i]);
}

/* ------------------------------------------------------ reference formulas */

static const real sqrt2 = 1.41421356237309504880168872420969808L;
static const real sqrt_2_over_pi = 0.79788456080286535587989211986876373L;

static real ref_abs(real x, const attribute_set *a) { (void)a; return fabsl(x); }
static real ref_sign(real x, const attribute_set *a)
{
    (void)a;
    return isnan(x) || x == 0 ? x : copysignl(1.0L, x);
}
static real ref_exp(real x, const attribute_set *a) { (void)a; return expl(x); }
static real ref_log(real x, const attribute_set *a) { (void)a; return logl(x); }
static real ref_sqrt(real x, const attribute_set *a) { (void)a; return sqrtl(x); }
static real ref_rsqrt(real x, const attribute_set *a) { (void)a; return x == 0 ? INFINITY : 1.0L / sqrtl(x); }
static real ref_reciprocal(real x, const attribute_set *a) { (void)a; return 1.0L / x; }
static real ref_sin(real x, const attribute_set *a) { (void)a; return sinl(x); }
static real ref_cos(real x, const attribute_set *a) { (void)a; return cosl(x); }
static real ref_tan(real x, const attribute_set *a) { (void)a; return tanl(x); }
static real ref_asin(real x, const attribute_set *a) { (void)a; return asinl(x); }
static real ref_acos(real x, const attribute_set *a) { (void)a; return acosl(x); }
static real ref_atan(real x, const attribute_set *a) { (void)a; return atanl(x); }
static real ref_sinh(real x, const attribute_set *a) { (void)a; return sinhl(x); }
static real ref_cosh(real x, const attribute_set *a) { (void)a; return coshl(x); }
static real ref_asinh(real x, const attribute_set *a) { (void)a; return asinhl(x); }
static real ref_acosh(real x, const attribute_set *a) { (void)a; return acoshl(x); }
static real ref_atanh(real x, const attribute_set *a) { (void)a; return atanhl(x); }
static real ref_tanh(real x, const attribute_set *a) { (void)a; return tanhl(x); }
static real ref_erf(real x, const attribute_set *a) { (void)a; return erfl(x); }
static real ref_floor(real x, const attribute_set *a) { (void)a; return floorl(x); }
static real ref_ceil(real x, const attribute_set *a) { (void)a; return ceill(x); }
/* The default rounding mode is to nearest, ties to even. */
static real ref_round(real x, const attribute_set *a) { (void)a; return nearbyintl(x); }

static real ref_sigmoid(real x, const attribute_set *a)
{
    (void)a;
    return 1.0L / (1.0L + expl(-x));
}

static real clamp01(real t)
{
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

static real ref_hard_sigmoid(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 0.2L), beta = float_attribute(a, "beta", 0.5L);
    if (isnan(x))
        return x;
    return clamp01((alpha == 0 ? 0 : alpha * x) + beta);
}

static real ref_hard_swish(real x, const attribute_set *a)
{
    (void)a;
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    return x * clamp01(x / 6 + 0.5L);
}

static real ref_relu(real x, const attribute_set *a)
{
    (void)a;
    return signbit(x) && x != 0 && !isnan(x) ? 0.0L : x;
}

static real ref_leaky_relu(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 0.01L);
    return x >= 0 || isnan(x) ? x : alpha * x;
}

static real ref_elu(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 1.0L);
    return x >= 0 || isnan(x) ? x : alpha * expm1l(x);
}

static real ref_selu(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 1.67326319217681884765625L);
    real gamma = float_attribute(a, "gamma", 1.05070102214813232421875L);
    return x > 0 ? gamma * x : gamma * alpha * expm1l(x);
}

static real ref_celu(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 1.0L);
    if (isnan(x))
        return x;
    return fmaxl(0, x) + fminl(0, alpha * expm1l(x / alpha));
}

static real ref_gelu(real x, const attribute_set *a)
{
    const kiln_attribute *approximate = find_attribute(a, "approximate");
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    if (approximate && strcmp(approximate->s, "tanh") == 0) {
        /* 0.5 x (1 + tanh u) = x / (1 + e^(-2u)) */
        real u = sqrt_2_over_pi * (x + 0.044715L * x * x * x);
        return x / (1.0L + expl(-2 * u));
    }
    return 0.5L * x * erfcl(-x / sqrt2);
}

static real ref_silu(real x, const attribute_set *a)
{
    (void)a;
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    return x / (1.0L + expl(-x));
}

static real ref_softplus(real x, const attribute_set *a)
{
    (void)a;
    /* log(1 + e^x) = x + log(1 + e^-x), whichever exponent is negative */
    return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x));
}

/* The textbook form, in long double: x tanh(log(1 + e^x)); its limit -0.0 at -inf. */
static real ref_mish(real x, const attribute_set *a)
{
    (void)a;
    if (isinf(x))
        return x > 0 ? x : -0.0L;
    return x * tanhl(log1pl(expl(x)));
}

static real ref_softsign(real x, const attribute_set *a)
{
    (void)a;
    if (isinf(x))
        return copysignl(1.0L, x);
    return x / (1.0L + fabsl(x));
}

static real ref_shrink(real x, const attribute_set *a)
{
    real bias = float_attribute(a, "bias", 0.0L), lambd = float_attribute(a, "lambd", 0.5L);
    if (isnan(x))
        return x;
    if (x < -lambd)
        return x + bias;
    if (x > lambd)
        return x - bias;
    return 0;
}

static real ref_thresholded_relu(real x, const attribute_set *a)
{
    real alpha = float_attribute(a, "alpha", 1.0L);
    return isnan(x) || x > alpha ? x : 0;
}

/* Bounds as the spec rounds them: to the nearest f32 for f32. */
static real clip_bound(const attribute_set *a, const char *name, real fallback, kiln_dtype dtype)
{
    real bound = float_attribute(a, name, fallback);
    return dtype == KILN_F32 ? (real)(float)bound : bound;
}

static kiln_dtype reference_dtype; /* the dtype clip's reference rounds its bounds to */

static real ref_clip(real x, const attribute_set *a)
{
    real lo = clip_bound(a, "min", -INFINITY, reference_dtype), hi = clip_bound(a, "max", INFINITY, reference_dtype);
    if (isnan(x))
        return x;
    return fminl(hi, fmaxl(lo, x));
}

/* --------------------------------------------------------------- the cases */

typedef enum dtype_class {
    FLOAT_ONLY,        /* f32, f64 */
    FLOAT_AND_INTEGER, /* also every integer dtype */
    BOOL_ONLY,         /* not */
    FLOAT_TO_BOOL,     /* isnan, isinf */
} dtype_class;

typedef real (*reference_fn)(real x, const attribute_set *a);

typedef struct unary_case {
    const char *op;
    dtype_class dtypes;
    reference_fn reference; /* NULL for the bool-valued ops */
    bool exact;             /* compare bit for bit */
    bool steep_tail;        /* f64 tolerance grows like x^2 (gelu) */
    attribute_set attributes;
} unary_case;

#define NO_ATTRIBUTES {0, {{0}}}
#define ATTRIBUTES1(A) {1, {A}}
#define ATTRIBUTES2(A, B) {2, {A, B}}

/* Every op once with its defaults and, where it has attributes, again
 * with non-default values. */
static const unary_case cases[] = {
    {"abs", FLOAT_AND_INTEGER, ref_abs, true, false, NO_ATTRIBUTES},
    {"sign", FLOAT_AND_INTEGER, ref_sign, true, false, NO_ATTRIBUTES},
    {"exp", FLOAT_ONLY, ref_exp, false, false, NO_ATTRIBUTES},
    {"log", FLOAT_ONLY, ref_log, false, false, NO_ATTRIBUTES},
    {"sqrt", FLOAT_ONLY, ref_sqrt, false, false, NO_ATTRIBUTES},
    {"rsqrt", FLOAT_ONLY, ref_rsqrt, false, false, NO_ATTRIBUTES},
    {"reciprocal", FLOAT_ONLY, ref_reciprocal, false, false, NO_ATTRIBUTES},
    {"sin", FLOAT_ONLY, ref_sin, false, false, NO_ATTRIBUTES},
    {"cos", FLOAT_ONLY, ref_cos, false, false, NO_ATTRIBUTES},
    {"tan", FLOAT_ONLY, ref_tan, false, false, NO_ATTRIBUTES},
    {"asin", FLOAT_ONLY, ref_asin, false, false, NO_ATTRIBUTES},
    {"acos", FLOAT_ONLY, ref_acos, false, false, NO_ATTRIBUTES},
    {"atan", FLOAT_ONLY, ref_atan, false, false, NO_ATTRIBUTES},
    {"sinh", FLOAT_ONLY, ref_sinh, false, false, NO_ATTRIBUTES},
    {"cosh", FLOAT_ONLY, ref_cosh, false, false, NO_ATTRIBUTES},
    {"asinh", FLOAT_ONLY, ref_asinh, false, false, NO_ATTRIBUTES},
    {"acosh", FLOAT_ONLY, ref_acosh, false, false, NO_ATTRIBUTES},
    {"atanh", FLOAT_ONLY, ref_atanh, false, false, NO_ATTRIBUTES},
    {"tanh", FLOAT_ONLY, ref_tanh, false, false, NO_ATTRIBUTES},
    {"sigmoid", FLOAT_ONLY, ref_sigmoid, false, false, NO_ATTRIBUTES},
    {"hard_sigmoid", FLOAT_ONLY, ref_hard_sigmoid, false, false, NO_ATTRIBUTES},
    {"hard_sigmoid", FLOAT_ONLY, ref_hard_sigmoid, false, false,
     ATTRIBUTES2(FLOAT_ATTRIBUTE("alpha", 0.3), FLOAT_ATTRIBUTE("beta", 0.25))},
    {"hard_sigmoid", FLOAT_ONLY, ref_hard_sigmoid, false, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 0.0))},
    {"hard_swish", FLOAT_ONLY, ref_hard_swish, false, false, NO_ATTRIBUTES},
    {"relu", FLOAT_AND_INTEGER, ref_relu, true, false, NO_ATTRIBUTES},
    {"leaky_relu", FLOAT_ONLY, ref_leaky_relu, false, false, NO_ATTRIBUTES},
    {"leaky_relu", FLOAT_ONLY, ref_leaky_relu, false, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 0.2))},
    {"elu", FLOAT_ONLY, ref_elu, false, false, NO_ATTRIBUTES},
    {"elu", FLOAT_ONLY, ref_elu, false, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 0.5))},
    {"selu", FLOAT_ONLY, ref_selu, false, false, NO_ATTRIBUTES},
    {"selu", FLOAT_ONLY, ref_selu, false, false,
     ATTRIBUTES2(FLOAT_ATTRIBUTE("alpha", 2.0), FLOAT_ATTRIBUTE("gamma", 0.75))},
    {"celu", FLOAT_ONLY, ref_celu, false, false, NO_ATTRIBUTES},
    {"celu", FLOAT_ONLY, ref_celu, false, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 2.5))},
    {"celu", FLOAT_ONLY, ref_celu, false, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", -0.5))},
    {"gelu", FLOAT_ONLY, ref_gelu, false, true, NO_ATTRIBUTES},
    {"gelu", FLOAT_ONLY, ref_gelu, false, true, ATTRIBUTES1(STRING_ATTRIBUTE("approximate", "none"))},
    {"gelu", FLOAT_ONLY, ref_gelu, false, true, ATTRIBUTES1(STRING_ATTRIBUTE("approximate", "tanh"))},
    {"silu", FLOAT_ONLY, ref_silu, false, false, NO_ATTRIBUTES},
    {"softplus", FLOAT_ONLY, ref_softplus, false, false, NO_ATTRIBUTES},
    {"mish", FLOAT_ONLY, ref_mish, false, false, NO_ATTRIBUTES},
    {"softsign", FLOAT_ONLY, ref_softsign, false, false, NO_ATTRIBUTES},
    {"shrink", FLOAT_ONLY, ref_shrink, false, false, NO_ATTRIBUTES},
    {"shrink", FLOAT_ONLY, ref_shrink, false, false,
     ATTRIBUTES2(FLOAT_ATTRIBUTE("bias", 1.5), FLOAT_ATTRIBUTE("lambd", 2.0))},
    {"thresholded_relu", FLOAT_ONLY, ref_thresholded_relu, true, false, NO_ATTRIBUTES},
    {"thresholded_relu", FLOAT_ONLY, ref_thresholded_relu, true, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", -0.5))},
    {"erf", FLOAT_ONLY, ref_erf, false, false, NO_ATTRIBUTES},
    {"floor", FLOAT_ONLY, ref_floor, true, false, NO_ATTRIBUTES},
    {"ceil", FLOAT_ONLY, ref_ceil, true, false, NO_ATTRIBUTES},
    {"round", FLOAT_ONLY, ref_round, true, false, NO_ATTRIBUTES},
    {"clip", FLOAT_AND_INTEGER, ref_clip, true, false, NO_ATTRIBUTES},
    {"clip", FLOAT_AND_INTEGER, ref_clip, true, false,
     ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 100.75), FLOAT_ATTRIBUTE("min", 0.1))},
    {"clip", FLOAT_AND_INTEGER, ref_clip, true, false, ATTRIBUTES1(FLOAT_ATTRIBUTE("max", 2.5))},
    {"clip", FLOAT_AND_INTEGER, ref_clip, true, false,
     ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 3.0), FLOAT_ATTRIBUTE("min", 3.0))},
    {"not", BOOL_ONLY, NULL, true, false, NO_ATTRIBUTES},
    {"isnan", FLOAT_TO_BOOL, NULL, true, false, NO_ATTRIBUTES},
    {"isinf", FLOAT_TO_BOOL, NULL, true, false, NO_ATTRIBUTES},
    {"isinf", FLOAT_TO_BOOL, NULL, true, false, ATTRIBUTES1(INT_ATTRIBUTE("detect_negative", 0))},
    {"isinf", FLOAT_TO_BOOL, NULL, true, false, ATTRIBUTES1(INT_ATTRIBUTE("detect_positive", 0))},
    {"isinf", FLOAT_TO_BOOL, NULL, true, false,
     ATTRIBUTES2(INT_ATTRIBUTE("detect_negative", 0), INT_ATTRIBUTE("detect_positive", 0))},
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

static const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};
static const kiln_dtype integer_dtypes[] = {KILN_I8, KILN_I16, KILN_I32, KILN_I64,
                                            KILN_U8, KILN_U16, KILN_U32, KILN_U64};

/* ---------------------------------------------------------------- inputs */

#define MAX_VALUES 1024

/* Special values, then pseudorandom ones over a wide exponent range. */
static size_t float_inputs(double *values)
{
    static const double specials[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999999999999994, -0.49999999999999994,
        2.0, -2.0, 3.0, -3.0, 2.9999, -2.9999, 6.0, -6.0, 0.1, -0.1, 0.99, -0.99, 1.01, -1.01, 10.0, -10.0, 20.0,
        -20.0, 37.0, -37.0, 40.0, -40.0, 88.0, -88.0, 89.0, -89.0, 100.0, -100.0, 709.0, -709.0, 710.0, -710.0,
        745.0, -745.0, 1e3, -1e3, 1e10, -1e10, 1e30, -1e30, 1e38, -1e38, 4503599627370495.5, -4503599627370496.5,
        1e100, -1e100, 1e200, -1e200, DBL_MAX, -DBL_MAX, FLT_MAX, -FLT_MAX, 1e-7, -1e-7, 1e-30, -1e-30, FLT_MIN,
        -FLT_MIN, 1e-40, -1e-40, FLT_TRUE_MIN, -FLT_TRUE_MIN, DBL_MIN, -DBL_MIN, 1e-310, -1e-310, DBL_TRUE_MIN,
        -DBL_TRUE_MIN, HUGE_VAL, -HUGE_VAL, NAN, -NAN, -37.6, -37.8, -38.2, -38.6, -705.0, -708.5, -709.5, -720.0,
        -740.0, -744.0, -744.5, 11356.0, -11356.0, 12000.0, -12000.0,
    };
    size_t count = sizeof specials / sizeof specials[0];
    memcpy(values, specials, sizeof specials);
    prng rng = {0x9e3779b97f4a7c15u};
    for (int k = -20; k <= 20; k++)
        values[count++] = k / 4.0;
    while (count < MAX_VALUES) {
        uint64_t r = prng_next(&rng);
        double mantissa = 1.0 + (double)(r >> 12) / 4503599627370496.0; /* [1, 2) */
        int exponent;
        switch (r % 4) {
        case 0: exponent = (int)(prng_next(&rng) % 8) - 4; break;      /* around 1 */
        case 1: exponent = (int)(prng_next(&rng) % 80) - 40; break;    /* f32-sized */
        case 2: exponent = (int)(prng_next(&rng) % 2100) - 1075; break; /* all of f64 */
        default: exponent = (int)(prng_next(&rng) % 12) - 2; break;    /* activations' knees */
        }
        double value = ldexp(mantissa, exponent);
        values[count++] = (r >> 1) & 1 ? -value : value;
    }
    return count;
}

/* ------------------------------------------------------------- tensors */

static kiln_tensor *new_vector(kiln_dtype dtype, size_t count)
{
    int64_t extent = (int64_t)count;
    return new_tensor(dtype, 1, &extent);
}

/* A float vector from doubles (rounded to f32 for f32; overflow gives inf). */
static kiln_tensor *float_vector(kiln_dtype dtype, const double *values, size_t count)
{
    kiln_tensor *t = new_vector(dtype, count);
    for (size_t i = 0; i < count; i++) {
        if (dtype == KILN_F32)
            ((float *)kiln_tensor_data(t))[i] = (float)values[i];
        else
            ((double *)kiln_tensor_data(t))[i] = values[i];
    }
    return t;
}

static double float_at(const kiln_tensor *t, size_t i)
{
    return t->dtype == KILN_F32 ? (double)((const float *)t->data)[i] : ((const double *)t->data)[i];
}

/* Run the registry's kernel for `op` directly. */
static kiln_status call_kernel(const char *op, const kiln_tensor *in, kiln_tensor *out, const attribute_set *a,
                               kiln_error *err)
{
    const kiln_op_def *def = kiln_op_find(op);
    assert_non_null(def);
    kiln_node_attribute attributes[MAX_ATTRIBUTES];
    to_node_attributes(a, attributes);
    const kiln_tensor *inputs[1] = {in};
    /* Poison the output: a kernel that skips an element must not pass on a zeroed buffer. */
    memset(out->data, 0x7F, out->byte_size);
    kiln_kernel_call call = {inputs, 1, out, attributes, a->count, NULL};
    return def->run(&call, err);
}

/* Build `y = op(x)` with x: dtype [n], encode, load, run on `in`; the
 * output is copied into a fresh tensor. */
static kiln_tensor *run_end_to_end(const char *op, const kiln_tensor *in, const attribute_set *a)
{
    kiln_error err;
    kiln_builder *b = NULL;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("unary", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 0, 4096, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", in->dtype, "[n]", &x, &err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, 1, &x, a->count, a->items, &y, &err);
    if (status != KILN_OK)
        fail_msg("%s on %s: %s", op, kiln_dtype_name(in->dtype), err.message);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
    free(bytes);
    if (status != KILN_OK)
        fail_msg("%s: load: %s", op, err.message);
    kiln_session *session = NULL;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", in, &err), KILN_OK);
    status = kiln_session_run(session, &err);
    if (status != KILN_OK)
        fail_msg("%s: run: %s", op, err.message);
    const kiln_tensor *result = kiln_session_output(session, 0);
    kiln_tensor *copy = new_vector(result->dtype, (size_t)result->element_count);
    assert_int_equal(copy->byte_size, result->byte_size);
    if (result->byte_size)
        memcpy(copy->data, result->data, result->byte_size);
    kiln_session_free(session);
    kiln_program_free(program);
    return copy;
}

/* ----------------------------------------------------------- comparison */

/* Bitwise equality, except that any NaN matches any NaN. */
static bool same_float(double got, double want, kiln_dtype dtype)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (dtype == KILN_F32) {
        float g = (float)got, w = (float)want;
        return memcmp(&g, &w, sizeof g) == 0;
    }
    return memcmp(&got, &want, sizeof got) == 0;
}

static bool close_float(const unary_case *c, kiln_dtype dtype, double x, double got, double want)
{
    if (c->exact)
        return same_float(got, want, dtype);
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    double rtol = dtype == KILN_F32 ? 1e-6 : 1e-13;
    double atol = dtype == KILN_F32 ? 2.0 * FLT_TRUE_MIN : 4.0 * DBL_TRUE_MIN;
    if (c->steep_tail && dtype == KILN_F64) {
        rtol *= 1.0 + fmin(x * x, 1e4); /* results are 0 beyond |x| ~ 40 */
        atol = 64.0 * DBL_TRUE_MIN;      /* a subnormal erfc, times |x| / 2 */
    }
    return fabs(got - want) <= rtol * fabs(want) + atol;
}

/* The reference result for element x of `dtype`, rounded to the dtype. */
static double float_reference(const unary_case *c, kiln_dtype dtype, double x)
{
    reference_dtype = dtype;
    real r = c->reference((real)x, &c->attributes);
    return dtype == KILN_F32 ? (double)(float)r : (double)r;
}

static void check_float_output(const unary_case *c, const char *path, const kiln_tensor *in, const kiln_tensor *out)
{
    assert_int_equal(out->dtype, in->dtype);
    assert_int_equal(out->element_count, in->element_count);
    for (size_t i = 0; i < in->element_count; i++) {
        double x = float_at(in, i), got = float_at(out, i), want = float_reference(c, in->dtype, x);
        if (!close_float(c, in->dtype, x, got, want))
            fail_msg("%s %s (%s, %u attributes): x = %a (%g): got %a (%.17g), want %a (%.17g)", path, c->op,
                     kiln_dtype_name(in->dtype), c->attributes.count, x, x, got, got, want, want);
    }
}

/* ---------------------------------------------------------- integer ops */

typedef struct integer_range {
    bool is_signed;
    int64_t min;  /* signed */
    int64_t max;
    uint64_t umax; /* unsigned */
} integer_range;

static integer_range range_of(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_I8: return (integer_range){true, INT8_MIN, INT8_MAX, 0};
    case KILN_I16: return (integer_range){true, INT16_MIN, INT16_MAX, 0};
    case KILN_I32: return (integer_range){true, INT32_MIN, INT32_MAX, 0};
    case KILN_I64: return (integer_range){true, INT64_MIN, INT64_MAX, 0};
    case KILN_U8: return (integer_range){false, 0, 0, UINT8_MAX};
    case KILN_U16: return (integer_range){false, 0, 0, UINT16_MAX};
    case KILN_U32: return (integer_range){false, 0, 0, UINT32_MAX};
    default: return (integer_range){false, 0, 0, UINT64_MAX};
    }
}

/* Elements are held as int64 (signed) or uint64 (unsigned) bit patterns. */
static uint64_t load_integer(const kiln_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data + i * kiln_dtype_size(t->dtype);
    switch (t->dtype) {
    case KILN_I8: { int8_t v; memcpy(&v, p, 1); return (uint64_t)(int64_t)v; }
    case KILN_I16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
    case KILN_I32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
    case KILN_U8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case KILN_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case KILN_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void store_integer(kiln_tensor *t, size_t i, uint64_t bits)
{
    unsigned char *p = (unsigned char *)t->data + i * kiln_dtype_size(t->dtype);
    size_t width = kiln_dtype_size(t->dtype);
    /* little-endian hosts only, like the format; low bytes first */
    for (size_t k = 0; k < width; k++)
        p[k] = (unsigned char)(bits >> (8 * k));
}

/* Extremes, their neighbours, small values and pseudorandom ones. */
static size_t integer_inputs(kiln_dtype dtype, kiln_tensor **out)
{
    integer_range r = range_of(dtype);
    uint64_t values[256];
    size_t count = 0;
    if (r.is_signed) {
        int64_t fixed[] = {0, 1, -1, 2, -2, 3, -3, 100, -100, r.min, r.min + 1, r.max, r.max - 1};
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
            values[count++] = (uint64_t)fixed[k];
    } else {
        uint64_t fixed[] = {0, 1, 2, 3, 100, 101, r.umax, r.umax - 1};
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
            values[count++] = fixed[k];
    }
    prng rng = {0x2545f4914f6cdd1du};
    unsigned bits = 8 * (unsigned)kiln_dtype_size(dtype);
    while (count < 256) {
        uint64_t v = prng_next(&rng);
        if (bits < 64)
            v &= ((uint64_t)1 << bits) - 1;
        if (r.is_signed && bits < 64 && (v >> (bits - 1)))
            v |= ~(uint64_t)0 << bits; /* sign-extend */
        values[count++] = v;
    }
    kiln_tensor *t = new_vector(dtype, count);
    for (size_t i = 0; i < count; i++)
        store_integer(t, i, values[i]);
    *out = t;
    return count;
}

/* The test's own rounding of clip bounds for integers (spec/ops/unary.md):
 * min rounds up, max down; infinite means the dtype's extreme. */
static void integer_clip_bounds(const attribute_set *a, kiln_dtype dtype, uint64_t *lo, uint64_t *hi)
{
    integer_range r = range_of(dtype);
    real min = float_attribute(a, "min", -INFINITY), max = float_attribute(a, "max", INFINITY);
    if (r.is_signed) {
        *lo = (uint64_t)(isinf(min) ? r.min : (int64_t)ceill(min));
        *hi = (uint64_t)(isinf(max) ? r.max : (int64_t)floorl(max));
    } else {
        *lo = isinf(min) ? 0 : (uint64_t)ceill(min);
        *hi = isinf(max) ? r.umax : (uint64_t)floorl(max);
    }
}

static uint64_t integer_reference(const unary_case *c, kiln_dtype dtype, uint64_t bits)
{
    integer_range r = range_of(dtype);
    if (r.is_signed) {
        int64_t x = (int64_t)bits;
        if (strcmp(c->op, "abs") == 0)
            return x == r.min ? bits : (uint64_t)(x < 0 ? -x : x);
        if (strcmp(c->op, "sign") == 0)
            return (uint64_t)(int64_t)(x == 0 ? 0 : x < 0 ? -1 : 1);
        if (strcmp(c->op, "relu") == 0)
            return x < 0 ? 0 : bits;
        uint64_t lo, hi;
        integer_clip_bounds(&c->attributes, dtype, &lo, &hi);
        return x < (int64_t)lo ? lo : x > (int64_t)hi ? hi : bits;
    }
    if (strcmp(c->op, "abs") == 0 || strcmp(c->op, "relu") == 0)
        return bits;
    if (strcmp(c->op, "sign") == 0)
        return bits != 0;
    uint64_t lo, hi;
    integer_clip_bounds(&c->attributes, dtype, &lo, &hi);
    return bits < lo ? lo : bits > hi ? hi : bits;
}

static void check_integer_output(const unary_case *c, const char *path, const kiln_tensor *in, const kiln_tensor *out)
{
    assert_int_equal(out->dtype, in->dtype);
    assert_int_equal(out->element_count, in->element_count);
    for (size_t i = 0; i < in->element_count; i++) {
        uint64_t x = load_integer(in, i), got = load_integer(out, i), want = integer_reference(c, in->dtype, x);
        if (got != want)
            fail_msg("%s %s (%s, %u attributes): x = %lld: got %lld, want %lld", path, c->op,
                     kiln_dtype_name(in->dtype), c->attributes.count, (long long)x, (long long)got, (long long)want);
    }
}

/* ---------------------------------------------------------- bool results */

static uint8_t predicate_reference(const unary_case *c, double x)
{
    if (strcmp(c->op, "isnan") == 0)
        return isnan(x) ? 1 : 0;
    bool negative = int_attribute(&c->attributes, "detect_negative", 1) != 0;
    bool positive = int_attribute(&c->attributes, "detect_positive", 1) != 0;
    return (x == -INFINITY && negative) || (x == INFINITY && positive);
}

static void check_predicate_output(const unary_case *c, const char *path, const kiln_tensor *in,
                                   const kiln_tensor *out)
{
    assert_int_equal(out->dtype, KILN_BOOL);
    assert_int_equal(out->element_count, in->element_count);
    for (size_t i = 0; i < in->element_count; i++) {
        double x = float_at(in, i);
        uint8_t got = ((const uint8_t *)out->data)[i];
        if (got != predicate_reference(c, x))
            fail_msg("%s %s (%s): x = %g: got %u", path, c->op, kiln_dtype_name(in->dtype), x, got);
    }
}

static const uint8_t bool_inputs[] = {0, 1, 1, 0, 2, 255, 0};

static void check_not_output(const kiln_tensor *out)
{
    assert_int_equal(out->dtype, KILN_BOOL);
    assert_int_equal(out->element_count, sizeof bool_inputs);
    for (size_t i = 0; i < sizeof bool_inputs; i++)
        assert_int_equal(((const uint8_t *)out->data)[i], bool_inputs[i] == 0 ? 1 : 0);
}

/* ------------------------------------------------------------------ tests */

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_family_registered(&kiln_ops_unary, NULL, 0);
}

/* Whether the unary family's table has a record called `name`. */
static bool in_family(const char *name)
{
    for (uint32_t i = 0; i < kiln_ops_unary.count; i++)
        if (strcmp(kiln_ops_unary.ops[i].name, name) == 0)
            return true;
    return false;
}

/* Every op of the family's table (the records are the list: no names are
 * kept here) is version 1 with one input and has a differential case
 * below, and every case is of an op of the family. */
static void family_is_complete(void **state)
{
    (void)state;
    assert_true(kiln_ops_unary.count > 0);
    for (uint32_t i = 0; i < kiln_ops_unary.count; i++) {
        const char *name = kiln_ops_unary.ops[i].name;
        const kiln_op_def *def = kiln_op_find_version(name, 1);
        if (!def)
            fail_msg("op %s version 1 is not registered", name);
        assert_int_equal(def->inputs.min, 1);
        assert_int_equal(def->inputs.max, 1);
        bool has_case = false;
        for (size_t k = 0; k < CASE_COUNT; k++)
            has_case = has_case || strcmp(cases[k].op, name) == 0;
        if (!has_case)
            fail_msg("op %s has no test case", name);
    }
    for (size_t k = 0; k < CASE_COUNT; k++)
        if (!in_family(cases[k].op))
            fail_msg("case of op %s, which is not in the unary family", cases[k].op);
}

/* Each case on every dtype it supports, through the kernel directly. */
static void kernels_match_reference(void **state)
{
    (void)state;
    double values[MAX_VALUES];
    size_t value_count = float_inputs(values);
    for (size_t k = 0; k < CASE_COUNT; k++) {
        const unary_case *c = &cases[k];
        kiln_error err;
        if (c->dtypes == BOOL_ONLY) {
            kiln_tensor *in = new_vector(KILN_BOOL, sizeof bool_inputs), *out = new_vector(KILN_BOOL, sizeof bool_inputs);
            memcpy(in->data, bool_inputs, sizeof bool_inputs);
            assert_int_equal(call_kernel(c->op, in, out, &c->attributes, &err), KILN_OK);
            check_not_output(out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
            continue;
        }
        for (size_t d = 0; d < 2; d++) {
            kiln_tensor *in = float_vector(float_dtypes[d], values, value_count);
            kiln_tensor *out = new_vector(c->dtypes == FLOAT_TO_BOOL ? KILN_BOOL : float_dtypes[d], value_count);
            kiln_status status = call_kernel(c->op, in, out, &c->attributes, &err);
            if (status != KILN_OK)
                fail_msg("%s: %s", c->op, err.message);
            if (c->dtypes == FLOAT_TO_BOOL)
                check_predicate_output(c, "kernel", in, out);
            else
                check_float_output(c, "kernel", in, out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
        if (c->dtypes != FLOAT_AND_INTEGER)
            continue;
        for (size_t d = 0; d < sizeof integer_dtypes / sizeof integer_dtypes[0]; d++) {
            kiln_tensor *in;
            size_t count = integer_inputs(integer_dtypes[d], &in);
            kiln_tensor *out = new_vector(integer_dtypes[d], count);
            kiln_status status = call_kernel(c->op, in, out, &c->attributes, &err);
            if (status != KILN_OK)
                fail_msg("%s on %s: %s", c->op, kiln_dtype_name(integer_dtypes[d]), err.message);
            check_integer_output(c, "kernel", in, out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
    }
}

/* Each case on every dtype it supports, built, encoded, loaded and run:
 * the attributes survive the artifact and reach the kernel. */
static void programs_match_reference(void **state)
{
    (void)state;
    double values[MAX_VALUES];
    size_t value_count = float_inputs(values);
    for (size_t k = 0; k < CASE_COUNT; k++) {
        const unary_case *c = &cases[k];
        if (c->dtypes == BOOL_ONLY) {
            kiln_tensor *in = new_vector(KILN_BOOL, sizeof bool_inputs);
            memcpy(in->data, bool_inputs, sizeof bool_inputs);
            kiln_tensor *out = run_end_to_end(c->op, in, &c->attributes);
            check_not_output(out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
            continue;
        }
        for (size_t d = 0; d < 2; d++) {
            kiln_tensor *in = float_vector(float_dtypes[d], values, value_count);
            kiln_tensor *out = run_end_to_end(c->op, in, &c->attributes);
            if (c->dtypes == FLOAT_TO_BOOL)
                check_predicate_output(c, "program", in, out);
            else
                check_float_output(c, "program", in, out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
        if (c->dtypes != FLOAT_AND_INTEGER)
            continue;
        for (size_t d = 0; d < sizeof integer_dtypes / sizeof integer_dtypes[0]; d++) {
            kiln_tensor *in;
            integer_inputs(integer_dtypes[d], &in);
            kiln_tensor *out = run_end_to_end(c->op, in, &c->attributes);
            check_integer_output(c, "program", in, out);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
    }
}

/* Known answers pinning the spec's edge choices (and the reference). */
static void edge_values(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        double x, want;
    } known[] = {
        {"sign", -0.0, -0.0},       {"relu", -0.0, -0.0},       {"abs", -0.0, 0.0},
        {"rsqrt", -0.0, HUGE_VAL},  {"rsqrt", 0.0, HUGE_VAL},   {"reciprocal", -0.0, -HUGE_VAL},
        {"sqrt", -0.0, -0.0},       {"log", 0.0, -HUGE_VAL},    {"round", 0.5, 0.0},
        {"round", 1.5, 2.0},        {"round", 2.5, 2.0},        {"round", -2.5, -2.0},
        {"round", -0.3, -0.0},      {"ceil", -0.5, -0.0},       {"floor", -0.5, -1.0},
        {"silu", -HUGE_VAL, -0.0},  {"gelu", -HUGE_VAL, -0.0},  {"hard_swish", -HUGE_VAL, -0.0},
        {"softsign", HUGE_VAL, 1.0}, {"softplus", -HUGE_VAL, 0.0}, {"softplus", 1e300, 1e300},
        {"mish", -HUGE_VAL, -0.0},  {"mish", HUGE_VAL, HUGE_VAL}, {"mish", -0.0, -0.0},
        {"mish", 1e300, 1e300},     {"mish", -1e300, -0.0},     {"mish", 0.0, 0.0},
        {"sigmoid", -HUGE_VAL, 0.0}, {"sigmoid", 0.0, 0.5},      {"hard_sigmoid", -HUGE_VAL, 0.0},
        {"hard_swish", 3.0, 3.0},   {"hard_swish", -3.0, -0.0}, {"elu", -HUGE_VAL, -1.0},
        {"shrink", 0.5, 0.0},       {"shrink", -0.75, -0.75},   {"thresholded_relu", 1.0, 0.0},
        {"atanh", 1.0, HUGE_VAL},   {"acosh", 1.0, 0.0},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        for (size_t d = 0; d < 2; d++) {
            kiln_tensor *in = float_vector(float_dtypes[d], &known[k].x, 1), *out = new_vector(float_dtypes[d], 1);
            static const attribute_set none = NO_ATTRIBUTES;
            assert_int_equal(call_kernel(known[k].op, in, out, &none, NULL), KILN_OK);
            double got = float_at(out, 0);
            if (!same_float(got, known[k].want, float_dtypes[d]))
                fail_msg("%s(%g) on %s: got %g, want %g", known[k].op, known[k].x,
                         kiln_dtype_name(float_dtypes[d]), got, known[k].want);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
    }
    /* abs of the most negative value wraps to itself. */
    kiln_tensor *in = new_vector(KILN_I32, 1), *out = new_vector(KILN_I32, 1);
    ((int32_t *)in->data)[0] = INT32_MIN;
    static const attribute_set none = NO_ATTRIBUTES;
    assert_int_equal(call_kernel("abs", in, out, &none, NULL), KILN_OK);
    assert_int_equal(((int32_t *)out->data)[0], INT32_MIN);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

/* Try to add `op` on an input of `dtype` with `a`; @return the status and
 * leave the message in err. */
static kiln_status try_build(const char *op, kiln_dtype dtype, const attribute_set *a, kiln_error *err)
{
    kiln_builder *b = NULL;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("refused", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, "[4]", &x, err), KILN_OK);
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, 1, &x, a->count, a->items, &y, err);
    kiln_builder_free(b);
    return status;
}

static void assert_refused(const char *op, kiln_dtype dtype, const attribute_set *a, const char *const *needles)
{
    kiln_error err;
    memset(&err, 0, sizeof err);
    kiln_status status = try_build(op, dtype, a, &err);
    if (status != KILN_ERR_INVALID_PROGRAM)
        fail_msg("%s on %s: expected a refusal, got status %d (%s)", op, kiln_dtype_name(dtype), (int)status,
                 err.message);
    for (const char *const *n = needles; *n; n++)
        if (!strstr(err.message, *n))
            fail_msg("%s: message \"%s\" does not mention \"%s\"", op, err.message, *n);
}

/* Every op refuses a dtype it does not take, naming node, op and dtype. */
static void wrong_dtypes_are_refused(void **state)
{
    (void)state;
    static const attribute_set none = NO_ATTRIBUTES;
    for (size_t k = 0; k < CASE_COUNT; k++) {
        const unary_case *c = &cases[k];
        kiln_dtype wrong[3];
        size_t count = 0;
        switch (c->dtypes) {
        case FLOAT_ONLY: wrong[count++] = KILN_I32; wrong[count++] = KILN_BOOL; wrong[count++] = KILN_U8; break;
        case FLOAT_AND_INTEGER: wrong[count++] = KILN_BOOL; break;
        case BOOL_ONLY: wrong[count++] = KILN_F32; wrong[count++] = KILN_I8; break;
        case FLOAT_TO_BOOL: wrong[count++] = KILN_I64; wrong[count++] = KILN_BOOL; break;
        }
        for (size_t i = 0; i < count; i++) {
            const char *needles[] = {"node 0", c->op, kiln_dtype_name(wrong[i]), NULL};
            assert_refused(c->op, wrong[i], &none, needles);
        }
    }
    /* float-only rounding ops refuse integers too */
    const char *needles[] = {"round", "i16", NULL};
    assert_refused("round", KILN_I16, &none, needles);
}

/* Attribute values outside what the op defines are refused when built. */
static void bad_attribute_values_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        kiln_dtype dtype;
        attribute_set attributes;
        const char *needle;
    } bad[] = {
        {"gelu", KILN_F32, ATTRIBUTES1(STRING_ATTRIBUTE("approximate", "exact")), "approximate"},
        {"gelu", KILN_F64, ATTRIBUTES1(STRING_ATTRIBUTE("approximate", "")), "approximate"},
        {"clip", KILN_F32, ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 1.0), FLOAT_ATTRIBUTE("min", 2.0)), "greater"},
        {"clip", KILN_I32, ATTRIBUTES2(FLOAT_ATTRIBUTE("max", -1.0), FLOAT_ATTRIBUTE("min", 0.0)), "greater"},
        {"clip", KILN_F64, ATTRIBUTES1(FLOAT_ATTRIBUTE("min", NAN)), "NaN"},
        {"clip", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("max", 1e39)), "does not fit"},
        {"clip", KILN_U8, ATTRIBUTES1(FLOAT_ATTRIBUTE("min", -1.0)), "does not fit"},
        {"clip", KILN_I8, ATTRIBUTES1(FLOAT_ATTRIBUTE("max", 128.0)), "does not fit"},
        {"clip", KILN_U64, ATTRIBUTES1(FLOAT_ATTRIBUTE("max", 18446744073709551616.0)), "does not fit"},
        {"clip", KILN_I64, ATTRIBUTES1(FLOAT_ATTRIBUTE("min", -9223372036854777856.0)), "does not fit"},
        {"clip", KILN_I32, ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 0.7), FLOAT_ATTRIBUTE("min", 0.3)), "no i32 value"},
        {"clip", KILN_I16, ATTRIBUTES1(FLOAT_ATTRIBUTE("min", HUGE_VAL)), "does not fit"},
        {"celu", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 0.0)), "alpha"},
        {"shrink", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("lambd", -1.0)), "lambd"},
        {"isinf", KILN_F32, ATTRIBUTES1(INT_ATTRIBUTE("detect_negative", 2)), "detect_negative"},
        {"isinf", KILN_F64, ATTRIBUTES1(INT_ATTRIBUTE("detect_positive", -1)), "detect_positive"},
        {"leaky_relu", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", NAN)), "alpha"},
        {"elu", KILN_F64, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", HUGE_VAL)), "alpha"},
        {"selu", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("gamma", -HUGE_VAL)), "gamma"},
        {"hard_sigmoid", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("beta", NAN)), "beta"},
        {"thresholded_relu", KILN_F32, ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", NAN)), "alpha"},
        {"shrink", KILN_F64, ATTRIBUTES1(FLOAT_ATTRIBUTE("bias", HUGE_VAL)), "bias"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *needles[] = {"node 0", bad[k].needle, NULL};
        assert_refused(bad[k].op, bad[k].dtype, &bad[k].attributes, needles);
        /* The kernel validates the same way when called directly. */
        kiln_dtype out_dtype = strcmp(bad[k].op, "isinf") == 0 ? KILN_BOOL : bad[k].dtype;
        kiln_tensor *in = new_vector(bad[k].dtype, 1), *out = new_vector(out_dtype, 1);
        memset(in->data, 0, in->byte_size);
        kiln_error err;
        assert_int_equal(call_kernel(bad[k].op, in, out, &bad[k].attributes, &err), KILN_ERR_INVALID_PROGRAM);
        kiln_tensor_free(in);
        kiln_tensor_free(out);
    }
    /* Bounds that do fit after rounding toward the range are accepted. */
    kiln_error err;
    static const attribute_set fits = ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 127.9), FLOAT_ATTRIBUTE("min", -128.5));
    assert_int_equal(try_build("clip", KILN_I8, &fits, &err), KILN_OK);
    static const attribute_set u64_fits = ATTRIBUTES2(FLOAT_ATTRIBUTE("max", 18446744073709549568.0),
                                                      FLOAT_ATTRIBUTE("min", -0.5));
    assert_int_equal(try_build("clip", KILN_U64, &u64_fits, &err), KILN_OK);
    static const attribute_set infinite = ATTRIBUTES2(FLOAT_ATTRIBUTE("max", HUGE_VAL), FLOAT_ATTRIBUTE("min", -HUGE_VAL));
    assert_int_equal(try_build("clip", KILN_F32, &infinite, &err), KILN_OK);
}

/* Unknown attributes and wrong attribute types are refused, by name. */
static void unknown_attributes_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        attribute_set attributes;
        const char *needle;
    } bad[] = {
        {"relu", ATTRIBUTES1(FLOAT_ATTRIBUTE("alpha", 0.1)), "'alpha'"},
        {"exp", ATTRIBUTES1(INT_ATTRIBUTE("base", 2)), "'base'"},
        {"hard_sigmoid", ATTRIBUTES1(FLOAT_ATTRIBUTE("gamma", 1.0)), "'gamma'"},
        {"clip", ATTRIBUTES1(FLOAT_ATTRIBUTE("minimum", 0.0)), "'minimum'"},
        {"gelu", ATTRIBUTES1(INT_ATTRIBUTE("approximate", 1)), "'approximate'"},
        {"isinf", ATTRIBUTES1(FLOAT_ATTRIBUTE("detect_negative", 1.0)), "'detect_negative'"},
        /* An INT for a FLOAT attribute is converted by the builder; a string is not. */
        {"leaky_relu", ATTRIBUTES1(STRING_ATTRIBUTE("alpha", "1")), "'alpha'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *needles[] = {bad[k].needle, NULL};
        assert_refused(bad[k].op, KILN_F32, &bad[k].attributes, needles);
    }
}

/* The output type: same shape; bool for isnan and isinf. */
static void shape_rule_keeps_shape(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b = NULL;
    kiln_value x, y, z;
    assert_int_equal(kiln_builder_new("shapes", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 3, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "isnan", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "not", 1, &y, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    void *bytes = NULL;
    size_t size = 0;
    if (kiln_builder_encode(b, NULL, &bytes, &size, &err) != KILN_OK)
        fail_msg("encode: %s", err.message);
    kiln_builder_free(b);
    kiln_program *program = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    kiln_session *session = NULL;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    int64_t shape[3] = {2, 3, 2};
    kiln_tensor *in = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &in, &err), KILN_OK);
    float *data = kiln_tensor_data(in);
    for (int i = 0; i < 12; i++)
        data[i] = i % 5 == 0 ? NAN : (float)i;
    assert_int_equal(kiln_session_set_input(session, "x", in, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const kiln_tensor *out = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_dtype(out), KILN_BOOL);
    assert_int_equal(kiln_tensor_rank(out), 3);
    assert_memory_equal(kiln_tensor_shape(out), shape, sizeof shape);
    for (int i = 0; i < 12; i++)
        assert_int_equal(((const uint8_t *)kiln_tensor_const_data(out))[i], i % 5 == 0 ? 0 : 1);
    kiln_tensor_free(in);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* An empty tensor computes nothing and succeeds. */
static void empty_tensors_run(void **state)
{
    (void)state;
    for (size_t k = 0; k < CASE_COUNT; k++) {
        const unary_case *c = &cases[k];
        kiln_dtype dtype = c->dtypes == BOOL_ONLY ? KILN_BOOL : KILN_F64;
        kiln_tensor *in = new_vector(dtype, 0);
        kiln_tensor *out = run_end_to_end(c->op, in, &c->attributes);
        assert_int_equal(out->element_count, 0);
        kiln_tensor_free(in);
        kiln_tensor_free(out);
    }
}

/* ------------------------------------------------ the spec's exact list */

static const char *source_root = ".";

/* Whether `name` is one of the comma-separated words of `list` (spaces around them ignored). */
static bool list_has_word(const char *list, size_t list_length, const char *name)
{
    size_t length = strlen(name);
    for (size_t i = 0; i + length <= list_length; i++) {
        bool starts = i == 0 || list[i - 1] == ' ' || list[i - 1] == ',';
        bool ends = i + length == list_length || list[i + length] == ',' || list[i + length] == ' ';
        if (starts && ends && memcmp(list + i, name, length) == 0)
            return true;
    }
    return false;
}

/* spec/ops/unary.md's "Testing" names the ops compared bit for bit; that
 * list is these cases' `exact` marks, so neither can change alone. */
static void spec_names_the_exact_ops(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/spec/ops/unary.md", source_root);
    size_t size;
    uint8_t *bytes = read_file_bytes(path, &size);
    char *page = malloc(size + 1);
    assert_non_null(page);
    for (size_t i = 0; i < size; i++) /* a line break is a space in the prose */
        page[i] = bytes[i] == '\n' ? ' ' : (char)bytes[i];
    page[size] = '\0';
    free(bytes);
    const char *opening = "exactly for the exact ops, which here are ";
    const char *closing = " and all integer results";
    char *begin = strstr(page, opening);
    if (!begin)
        fail_msg("spec/ops/unary.md no longer says \"%s\": this check must follow it", opening);
    begin += strlen(opening);
    char *end = strstr(begin, closing);
    if (!end)
        fail_msg("spec/ops/unary.md's list of exact ops does not end with \"%s\"", closing);
    size_t listed = 1;
    for (const char *p = begin; p < end; p++)
        listed += *p == ',';
    size_t marked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first &= strcmp(cases[j].op, cases[i].op) != 0;
        if (!cases[i].exact || !first)
            continue;
        marked++;
        if (!list_has_word(begin, (size_t)(end - begin), cases[i].op))
            fail_msg("'%s' is compared bit for bit here but spec/ops/unary.md's \"Testing\" does not list it as exact",
                     cases[i].op);
    }
    if (listed != marked)
        fail_msg("spec/ops/unary.md's \"Testing\" lists %zu exact ops, the cases mark %zu exact", listed, marked);
    /* The check can fail: a name not in the list is not found. */
    assert_false(list_has_word(begin, (size_t)(end - begin), "exp"));
    free(page);
}

int main(int argc, char **argv)
{
    source_root = argc > 1 ? argv[1] : ".";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(family_is_complete),
        cmocka_unit_test(kernels_match_reference),
        cmocka_unit_test(programs_match_reference),
        cmocka_unit_test(edge_values),
        cmocka_unit_test(wrong_dtypes_are_refused),
        cmocka_unit_test(bad_attribute_values_are_refused),
        cmocka_unit_test(unknown_attributes_are_refused),
        cmocka_unit_test(shape_rule_keeps_shape),
        cmocka_unit_test(empty_tensors_run),
        cmocka_unit_test(spec_names_the_exact_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
