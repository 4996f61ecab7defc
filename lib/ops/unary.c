/*
 * unary.c — the unary elementwise family: one input, output of the
 * same shape (spec/ops/unary.md).
 *
 * Every op is described once, by a unary_op: its attributes, how to read
 * and validate them, whether it yields bool, and one loop per input dtype
 * it accepts. The accepted dtypes are exactly the dtypes with a loop, so
 * the shape rule, the kernel and the refusal messages cannot disagree.
 * The formulas live in unary_math.h; this file holds the plumbing:
 * attribute validation (shared by the shape rule and the kernel), the
 * loops, and the registry table.
 *
 * Float ops evaluate in double (f32 elements are widened exactly and the
 * result rounded once; the double-to-float conversion follows IEEE 754,
 * Annex F, overflowing to inf). An op that takes f32 also takes f16 and
 * bf16, computed by its f32 loop and rounded once more to the storage type
 * (half_compute.h). Integer and bool ops stay in their type
 * and never overflow a signed type (abs(MIN) is MIN by an explicit test,
 * not by wrapping arithmetic).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "op_registry.h"
#include "unary_math.h"
#include "parallel.h"
#include "vector_math.h"

/* ------------------------------------------------------- attribute values */

/* The attribute values one node runs with, converted for its dtype. */
typedef struct unary_params {
    double alpha, beta, gamma;             /* activations' coefficients */
    double bias, lambd;                    /* shrink */
    bool tanh_form;                        /* gelu approximate = "tanh" */
    bool detect_negative, detect_positive; /* isinf */
    /* clip bounds, in the field matching the dtype */
    double float_lo, float_hi;
    int64_t signed_lo, signed_hi;
    uint64_t unsigned_lo, unsigned_hi;
} unary_params;

/*
 * Read and validate a node's attributes for input dtype `dtype`. `label`
 * names the node in messages ("node 3 (clip)", or the op name when a
 * kernel is called directly).
 */
typedef kiln_status (*unary_params_reader)(const char *label, kiln_dtype dtype, const kiln_node_attribute *attributes,
                                           uint32_t count, unary_params *p, kiln_error *err);

/* A FLOAT attribute that must be finite (coefficients: NaN or inf would
 * make every output NaN or depend on 0 * inf). */
static kiln_status finite_float(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                                const char *name, double fallback, double *out, kiln_error *err)
{
    *out = kiln_attribute_float(attributes, count, name, fallback);
    if (!isfinite(*out))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' must be finite, got %g", label, name,
                         *out);
    return KILN_OK;
}

static kiln_status read_hard_sigmoid(const char *label, kiln_dtype dtype, const kiln_node_attribute *a,
                                     uint32_t n, unary_params *p, kiln_error *err)
{
    (void)dtype;
    KILN_TRY(finite_float(label, a, n, "alpha", 0.2, &p->alpha, err));
    return finite_float(label, a, n, "beta", 0.5, &p->beta, err);
}

static kiln_status read_leaky_relu(const char *label, kiln_dtype dtype, const kiln_node_attribute *a,
                                   uint32_t n, unary_params *p, kiln_error *err)
{
    (void)dtype;
    return finite_float(label, a, n, "alpha", 0.01, &p->alpha, err);
}

/* elu and thresholded_relu: alpha, default 1. */
static kiln_status read_alpha_one(const char *label, kiln_dtype dtype, const kiln_node_attribute *a,
                                  uint32_t n, unary_params *p, kiln_error *err)
{
    (void)dtype;
    return finite_float(label, a, n, "alpha", 1.0, &p->alpha, err);
}

static kiln_status read_selu(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                             unary_params *p, kiln_error *err)
{
    (void)dtype;
    KILN_TRY(finite_float(label, a, n, "alpha", 1.67326319217681884765625, &p->alpha, err));
    return finite_float(label, a, n, "gamma", 1.05070102214813232421875, &p->gamma, err);
}

static kiln_status read_celu(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                             unary_params *p, kiln_error *err)
{
    (void)dtype;
    KILN_TRY(finite_float(label, a, n, "alpha", 1.0, &p->alpha, err));
    if (p->alpha == 0.0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'alpha' must not be 0 (celu divides by it)",
                         label);
    return KILN_OK;
}

static kiln_status read_gelu(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                             unary_params *p, kiln_error *err)
{
    (void)dtype;
    const kiln_node_attribute *approximate = kiln_attribute_find(a, n, "approximate");
    const char *form = !approximate ? "none" : approximate->s ? approximate->s : "";
    if (strcmp(form, "none") != 0 && strcmp(form, "tanh") != 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"", label, form);
    p->tanh_form = strcmp(form, "tanh") == 0;
    return KILN_OK;
}

static kiln_status read_shrink(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                               unary_params *p, kiln_error *err)
{
    (void)dtype;
    KILN_TRY(finite_float(label, a, n, "bias", 0.0, &p->bias, err));
    KILN_TRY(finite_float(label, a, n, "lambd", 0.5, &p->lambd, err));
    if (p->lambd < 0.0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'lambd' must be >= 0, got %g", label,
                         p->lambd);
    return KILN_OK;
}

static kiln_status read_isinf(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                              unary_params *p, kiln_error *err)
{
    (void)dtype;
    static const char *const names[] = {"detect_negative", "detect_positive"};
    bool *flags[] = {&p->detect_negative, &p->detect_positive};
    for (int i = 0; i < 2; i++) {
        int64_t value = kiln_attribute_int(a, n, names[i], 1);
        if (value != 0 && value != 1)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' must be 0 or 1, got %lld", label,
                             names[i], (long long)value);
        *flags[i] = value == 1;
    }
    return KILN_OK;
}

/* Width in bits and signedness of an integer dtype. */
static unsigned integer_bits(kiln_dtype dtype, bool *is_signed)
{
    *is_signed = dtype == KILN_I8 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
    return (unsigned)kiln_dtype_size(dtype) * 8;
}

/*
 * One clip bound for an integer dtype: an infinite bound is no bound (the
 * dtype's extreme); a finite one is rounded toward the inside of [min, max]
 * (min up, max down) and must then be representable in the dtype.
 */
static kiln_status integer_bound(const char *label, const char *name, double bound, bool is_lower, kiln_dtype dtype,
                                 int64_t *as_signed, uint64_t *as_unsigned, kiln_error *err)
{
    bool is_signed;
    unsigned bits = integer_bits(dtype, &is_signed);
    if (isinf(bound) && (bound < 0.0) == is_lower) {
        /* No bound: the dtype's extreme, computed in integers (2^63 - 1 is no double). */
        int64_t signed_max = (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
        if (is_signed)
            *as_signed = is_lower ? -signed_max - 1 : signed_max;
        else
            *as_unsigned = is_lower ? 0 : bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        return KILN_OK;
    }
    /* Powers of two are exact doubles, so the range test is exact too. */
    double lowest = is_signed ? -ldexp(1.0, (int)bits - 1) : 0.0;
    double past_highest = ldexp(1.0, is_signed ? (int)bits - 1 : (int)bits);
    double rounded = is_lower ? ceil(bound) : floor(bound);
    if (!(rounded >= lowest && rounded < past_highest))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' = %g does not fit dtype %s", label, name,
                         bound, kiln_dtype_name(dtype));
    if (is_signed)
        *as_signed = (int64_t)rounded;
    else
        *as_unsigned = (uint64_t)rounded;
    return KILN_OK;
}

static kiln_status read_clip(const char *label, kiln_dtype dtype, const kiln_node_attribute *a, uint32_t n,
                             unary_params *p, kiln_error *err)
{
    double lo = kiln_attribute_float(a, n, "min", -HUGE_VAL);
    double hi = kiln_attribute_float(a, n, "max", HUGE_VAL);
    if (isnan(lo) || isnan(hi))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' is NaN", label, isnan(lo) ? "min" : "max");
    if (lo > hi)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'min' (%g) is greater than 'max' (%g)", label,
                         lo, hi);
    if (dtype == KILN_F32 || dtype == KILN_F64) {
        /* f32: a finite bound must lie within the finite f32 range, then
         * rounds to nearest (monotonic, so min <= max still holds). */
        for (int i = 0; i < 2; i++) {
            double bound = i ? hi : lo;
            if (dtype == KILN_F32 && isfinite(bound) && fabs(bound) > (double)FLT_MAX)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' = %g does not fit dtype f32",
                                 label, i ? "max" : "min", bound);
        }
        p->float_lo = dtype == KILN_F32 ? (double)(float)lo : lo;
        p->float_hi = dtype == KILN_F32 ? (double)(float)hi : hi;
        return KILN_OK;
    }
    KILN_TRY(integer_bound(label, "min", lo, true, dtype, &p->signed_lo, &p->unsigned_lo, err));
    KILN_TRY(integer_bound(label, "max", hi, false, dtype, &p->signed_hi, &p->unsigned_hi, err));
    bool is_signed;
    integer_bits(dtype, &is_signed);
    if (is_signed ? p->signed_lo > p->signed_hi : p->unsigned_lo > p->unsigned_hi)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: no %s value lies between 'min' (%g) and 'max' (%g)",
                         label, kiln_dtype_name(dtype), lo, hi);
    return KILN_OK;
}

/* ------------------------------------------------------------------ loops */

/* out[i] = f(in[i]) for n elements; `in` and `out` may be the same buffer. */
typedef void (*unary_loop)(const void *in, void *out, uint64_t n, const unary_params *p);

/* NAME_f32 and NAME_f64 computing EXPR of `double x`, rounded once for f32. */
#define FLOAT_LOOPS(NAME, EXPR)                                                                \
    KILN_VECTOR_CLONES static void NAME##_f32(const void *vin, void *vout, uint64_t n, const unary_params *p) \
    {                                                                                          \
        const float *in = vin;                                                                 \
        float *out = vout;                                                                     \
        (void)p;                                                                               \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                           \
            double x = in[i];                                                                  \
            out[i] = (float)(EXPR);                                                            \
        }                                                                                      \
    }                                                                                          \
    KILN_VECTOR_CLONES static void NAME##_f64(const void *vin, void *vout, uint64_t n, const unary_params *p) \
    {                                                                                          \
        const double *in = vin;                                                                \
        double *out = vout;                                                                    \
        (void)p;                                                                               \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                           \
            double x = in[i];                                                                  \
            out[i] = (EXPR);                                                                   \
        }                                                                                      \
    }

/* NAME_f32 and NAME_f64 writing the bool (one byte, 0 or 1) EXPR of `double x`. */
#define PREDICATE_LOOPS(NAME, EXPR)                                                            \
    KILN_VECTOR_CLONES static void NAME##_f32(const void *vin, void *vout, uint64_t n, const unary_params *p) \
    {                                                                                          \
        const float *in = vin;                                                                 \
        uint8_t *out = vout;                                                                   \
        (void)p;                                                                               \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                           \
            double x = in[i];                                                                  \
            out[i] = (uint8_t)(EXPR);                                                          \
        }                                                                                      \
    }                                                                                          \
    KILN_VECTOR_CLONES static void NAME##_f64(const void *vin, void *vout, uint64_t n, const unary_params *p) \
    {                                                                                          \
        const double *in = vin;                                                                \
        uint8_t *out = vout;                                                                   \
        (void)p;                                                                               \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                           \
            double x = in[i];                                                                  \
            out[i] = (uint8_t)(EXPR);                                                          \
        }                                                                                      \
    }

/* NAME_SUFFIX computing EXPR of `T x` in T. */
#define INTEGER_LOOP(NAME, T, SUFFIX, EXPR)                                                    \
    KILN_VECTOR_CLONES static void NAME##_##SUFFIX(const void *vin, void *vout, uint64_t n, const unary_params *p) \
    {                                                                                          \
        const T *in = vin;                                                                     \
        T *out = vout;                                                                         \
        (void)p;                                                                               \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                           \
            T x = in[i];                                                                       \
            out[i] = (T)(EXPR);                                                                \
        }                                                                                      \
    }

/* The integer dtypes by signedness: code, C type, minimum (signed), suffix. */
#define SIGNED_DTYPES(X)                 \
    X(KILN_I8, int8_t, INT8_MIN, i8)     \
    X(KILN_I16, int16_t, INT16_MIN, i16) \
    X(KILN_I32, int32_t, INT32_MIN, i32) \
    X(KILN_I64, int64_t, INT64_MIN, i64)
#define UNSIGNED_DTYPES(X)      \
    X(KILN_U8, uint8_t, 0, u8)   \
    X(KILN_U16, uint16_t, 0, u16) \
    X(KILN_U32, uint32_t, 0, u32) \
    X(KILN_U64, uint64_t, 0, u64)

/* abs(MIN) is MIN: the only value whose negation does not fit. */
#define SIGNED_LOOPS(CODE, T, MIN, SUFFIX)                                           \
    INTEGER_LOOP(abs, T, SUFFIX, x < 0 ? (x == (MIN) ? x : -x) : x)                  \
    INTEGER_LOOP(sign, T, SUFFIX, (x > 0) - (x < 0))                                 \
    INTEGER_LOOP(relu, T, SUFFIX, x > 0 ? x : 0)                                     \
    INTEGER_LOOP(clip, T, SUFFIX,                                                    \
                 x < (T)p->signed_lo ? (T)p->signed_lo : x > (T)p->signed_hi ? (T)p->signed_hi : x)
#define UNSIGNED_LOOPS(CODE, T, MIN, SUFFIX)                                         \
    INTEGER_LOOP(abs, T, SUFFIX, x)                                                  \
    INTEGER_LOOP(sign, T, SUFFIX, x != 0)                                            \
    INTEGER_LOOP(relu, T, SUFFIX, x)                                                 \
    INTEGER_LOOP(clip, T, SUFFIX,                                                    \
                 x < (T)p->unsigned_lo ? (T)p->unsigned_lo : x > (T)p->unsigned_hi ? (T)p->unsigned_hi : x)
SIGNED_DTYPES(SIGNED_LOOPS)
UNSIGNED_DTYPES(UNSIGNED_LOOPS)

/* bool: any non-zero byte is true; the result is 0 or 1. */
INTEGER_LOOP(logical_not, uint8_t, bool, x == 0)

FLOAT_LOOPS(abs, fabs(x))
FLOAT_LOOPS(sign, unary_sign(x))
FLOAT_LOOPS(exp, exp(x))
FLOAT_LOOPS(log, log(x))
FLOAT_LOOPS(sqrt, sqrt(x))
FLOAT_LOOPS(rsqrt, unary_rsqrt(x))
FLOAT_LOOPS(reciprocal, unary_reciprocal(x))
FLOAT_LOOPS(sin, sin(x))
FLOAT_LOOPS(cos, cos(x))
FLOAT_LOOPS(tan, tan(x))
FLOAT_LOOPS(asin, asin(x))
FLOAT_LOOPS(acos, acos(x))
FLOAT_LOOPS(atan, atan(x))
FLOAT_LOOPS(sinh, sinh(x))
FLOAT_LOOPS(cosh, cosh(x))
FLOAT_LOOPS(asinh, asinh(x))
FLOAT_LOOPS(acosh, acosh(x))
FLOAT_LOOPS(atanh, atanh(x))
FLOAT_LOOPS(tanh, tanh(x))
FLOAT_LOOPS(sigmoid, unary_sigmoid(x))
FLOAT_LOOPS(hard_sigmoid, unary_hard_sigmoid(x, p->alpha, p->beta))
FLOAT_LOOPS(hard_swish, unary_hard_swish(x))
FLOAT_LOOPS(relu, unary_relu(x))
FLOAT_LOOPS(leaky_relu, unary_leaky_relu(x, p->alpha))
FLOAT_LOOPS(elu, unary_elu(x, p->alpha))
FLOAT_LOOPS(selu, unary_selu(x, p->alpha, p->gamma))
FLOAT_LOOPS(celu, unary_celu(x, p->alpha))
FLOAT_LOOPS(gelu, p->tanh_form ? unary_gelu_tanh(x) : unary_gelu_erf(x))
FLOAT_LOOPS(silu, unary_silu(x))
FLOAT_LOOPS(softplus, unary_softplus(x))
FLOAT_LOOPS(mish, unary_mish(x))
FLOAT_LOOPS(softsign, unary_softsign(x))
FLOAT_LOOPS(shrink, unary_shrink(x, p->bias, p->lambd))
FLOAT_LOOPS(thresholded_relu, unary_thresholded_relu(x, p->alpha))
FLOAT_LOOPS(erf, erf(x))
FLOAT_LOOPS(floor, floor(x))
FLOAT_LOOPS(ceil, ceil(x))
FLOAT_LOOPS(round, unary_round_half_even(x))

/*
 * clip in f32 arithmetic, which the compiler vectorizes (the double
 * formula of FLOAT_LOOPS it left scalar, and the clips of a MobileNetV2
 * took a third of its run). Same results: no f32 lies strictly between a
 * bound and its nearest f32, and for f32 the bounds are f32 already.
 */
KILN_VECTOR_CLONES static void clip_f32(const void *vin, void *vout, uint64_t n, const unary_params *p)
{
    const float *in = vin;
    float *out = vout;
    float lo = (float)p->float_lo, hi = (float)p->float_hi;
    KILN_SIMD for (uint64_t i = 0; i < n; i++) {
        float raised = in[i] < lo ? lo : in[i]; /* NaN compares false and passes through */
        out[i] = raised > hi ? hi : raised;
    }
}

static void clip_f64(const void *vin, void *vout, uint64_t n, const unary_params *p)
{
    const double *in = vin;
    double *out = vout;
    KILN_SIMD for (uint64_t i = 0; i < n; i++)
        out[i] = unary_clip(in[i], p->float_lo, p->float_hi);
}
PREDICATE_LOOPS(isnan, isnan(x))
PREDICATE_LOOPS(isinf, (x == HUGE_VAL && p->detect_positive) || (x == -HUGE_VAL && p->detect_negative))

/*
 * Fast paths (spec/opset.md, "Fast paths": vector-math): f32 exp, erf,
 * gelu, sigmoid, silu, tanh, hard_swish, hard_sigmoid, elu and selu
 * through the vectorized loops of vector_math.h, within 1 ulp of the
 * reference loops above, which stay the oracle.
 */
static void exp_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_exp_f32(in, out, n);
}

static void erf_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_erf_f32(in, out, n);
}

/* gelu, both forms. */
static void gelu_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    if (p->tanh_form)
        kiln_vector_gelu_tanh_f32(in, out, n);
    else
        kiln_vector_gelu_f32(in, out, n);
}

/* The activations (vector_math.h): measured 8-50x faster than the
 * reference loops, whose every element calls libm's exp, tanh or expm1. */
static void sigmoid_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_sigmoid_f32(in, out, n);
}

static void silu_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_silu_f32(in, out, n);
}

static void tanh_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_tanh_f32(in, out, n);
}

static void hard_swish_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    (void)p;
    kiln_vector_hard_swish_f32(in, out, n);
}

static void hard_sigmoid_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    kiln_vector_hard_sigmoid_f32(in, out, n, p->alpha, p->beta);
}

static void elu_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    kiln_vector_elu_f32(in, out, n, p->alpha);
}

static void selu_vector_f32(const void *in, void *out, uint64_t n, const unary_params *p)
{
    kiln_vector_selu_f32(in, out, n, p->alpha, p->gamma);
}

/* Each reference f32 loop that has a fast path, and that path. */
static const struct {
    unary_loop reference, vector;
} vector_loops[] = {
    {exp_f32, exp_vector_f32},         {erf_f32, erf_vector_f32},
    {gelu_f32, gelu_vector_f32},       {sigmoid_f32, sigmoid_vector_f32},
    {silu_f32, silu_vector_f32},       {tanh_f32, tanh_vector_f32},
    {hard_swish_f32, hard_swish_vector_f32}, {hard_sigmoid_f32, hard_sigmoid_vector_f32},
    {elu_f32, elu_vector_f32},         {selu_f32, selu_vector_f32},
};

/* The loop a call runs: the fast path of `reference` when it has one and
 * the call's session allows fast paths (the context then says so for
 * profiles), else `reference`. */
static unary_loop loop_to_run(unary_loop reference, const kiln_kernel_call *call)
{
    if (!call->context || call->context->reference_only)
        return reference;
    for (size_t i = 0; i < sizeof vector_loops / sizeof vector_loops[0]; i++)
        if (vector_loops[i].reference == reference) {
            call->context->path = KILN_PATH_VECTOR;
            return vector_loops[i].vector;
        }
    return reference;
}

/* ---------------------------------------------------------------- the ops */

/*
 * What an element costs, which decides from how many elements a loop
 * splits over threads. CHEAP: a few instructions an element (comparisons,
 * selections, rounding), which keep the general threshold of
 * kiln_parallel_chunks. COSTLY: tens of instructions an element (exp,
 * tanh, sigmoid, erf, the libm ones), which split from
 * kiln_parallel_min_costly_elements.
 */
typedef enum unary_cost { CHEAP, COSTLY } unary_cost;

typedef struct unary_op {
    const char *name;
    unary_cost cost;
    unary_params_reader read_params; /* NULL: the op takes no attributes */
    bool bool_result;                /* output dtype bool, else the input's */
    unary_loop loops[KILN_BOOL + 1]; /* by input dtype; NULL: not accepted */
} unary_op;

#define FLOATS(NAME) {[KILN_F32] = NAME##_f32, [KILN_F64] = NAME##_f64}
#define FLOATS_AND_INTEGERS(NAME)                                                             \
    {[KILN_F32] = NAME##_f32, [KILN_F64] = NAME##_f64, [KILN_I8] = NAME##_i8,                 \
     [KILN_I16] = NAME##_i16, [KILN_I32] = NAME##_i32, [KILN_I64] = NAME##_i64,               \
     [KILN_U8] = NAME##_u8,   [KILN_U16] = NAME##_u16, [KILN_U32] = NAME##_u32,               \
     [KILN_U64] = NAME##_u64}

/* X(id, registry name, traits, cost, attribute specs, params reader, bool result, loops) */
/*
 * What planning knows of each op (op_registry.h, kiln_op_traits). Ops that
 * loop over memory in order take channels-last operands as they come; relu,
 * leaky_relu and clip also bound their result's magnitude and may be
 * applied by the conv before them, as may silu and hard_swish.
 */
#define TRAITS_NONE {0}
#define TRAITS_IN_ORDER {.layout = KILN_LAYOUT_ELEMENTWISE}
#define TRAITS_RELU                                                                                         \
    {.layout = KILN_LAYOUT_ELEMENTWISE, .magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND,                   \
     .activation = KILN_ACTIVATION_RELU}
#define TRAITS_LEAKY_RELU                                                                                   \
    {.layout = KILN_LAYOUT_ELEMENTWISE, .magnitude = KILN_MAGNITUDE_SLOPE_ALPHA,                          \
     .activation = KILN_ACTIVATION_LEAKY_RELU}
#define TRAITS_CLIP                                                                                         \
    {.layout = KILN_LAYOUT_ELEMENTWISE, .magnitude = KILN_MAGNITUDE_CLIPPED, .activation = KILN_ACTIVATION_CLIP}
#define TRAITS_SILU {.layout = KILN_LAYOUT_ELEMENTWISE, .activation = KILN_ACTIVATION_SILU}
#define TRAITS_HARD_SWISH {.layout = KILN_LAYOUT_ELEMENTWISE, .activation = KILN_ACTIVATION_HARD_SWISH}

#define UNARY_OPS(X)                                                                                                 \
    X(abs, "abs", TRAITS_IN_ORDER, CHEAP, NULL, NULL, false, FLOATS_AND_INTEGERS(abs))                               \
    X(sign, "sign", TRAITS_NONE, CHEAP, NULL, NULL, false, FLOATS_AND_INTEGERS(sign))                                \
    X(exp, "exp", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(exp))                                           \
    X(log, "log", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(log))                                               \
    X(sqrt, "sqrt", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(sqrt))                                        \
    X(rsqrt, "rsqrt", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(rsqrt))                                         \
    X(reciprocal, "reciprocal", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(reciprocal))                          \
    X(sin, "sin", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(sin))                                               \
    X(cos, "cos", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(cos))                                               \
    X(tan, "tan", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(tan))                                               \
    X(asin, "asin", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(asin))                                            \
    X(acos, "acos", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(acos))                                            \
    X(atan, "atan", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(atan))                                            \
    X(sinh, "sinh", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(sinh))                                            \
    X(cosh, "cosh", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(cosh))                                            \
    X(asinh, "asinh", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(asinh))                                         \
    X(acosh, "acosh", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(acosh))                                         \
    X(atanh, "atanh", TRAITS_NONE, COSTLY, NULL, NULL, false, FLOATS(atanh))                                         \
    X(tanh, "tanh", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(tanh))                                        \
    X(sigmoid, "sigmoid", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(sigmoid))                               \
    X(hard_sigmoid, "hard_sigmoid", TRAITS_IN_ORDER, CHEAP, alpha_beta, read_hard_sigmoid, false, FLOATS(hard_sigmoid)) \
    X(hard_swish, "hard_swish", TRAITS_HARD_SWISH, CHEAP, NULL, NULL, false, FLOATS(hard_swish))                     \
    X(relu, "relu", TRAITS_RELU, CHEAP, NULL, NULL, false, FLOATS_AND_INTEGERS(relu))                                \
    X(leaky_relu, "leaky_relu", TRAITS_LEAKY_RELU, CHEAP, alpha_only, read_leaky_relu, false, FLOATS(leaky_relu))    \
    X(elu, "elu", TRAITS_IN_ORDER, COSTLY, alpha_only, read_alpha_one, false, FLOATS(elu))                           \
    X(selu, "selu", TRAITS_IN_ORDER, COSTLY, alpha_gamma, read_selu, false, FLOATS(selu))                            \
    X(celu, "celu", TRAITS_IN_ORDER, COSTLY, alpha_only, read_celu, false, FLOATS(celu))                             \
    X(gelu, "gelu", TRAITS_IN_ORDER, COSTLY, approximate_only, read_gelu, false, FLOATS(gelu))                       \
    X(silu, "silu", TRAITS_SILU, COSTLY, NULL, NULL, false, FLOATS(silu))                                            \
    X(softplus, "softplus", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(softplus))                            \
    X(mish, "mish", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(mish))                                        \
    X(softsign, "softsign", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(softsign))                            \
    X(shrink, "shrink", TRAITS_NONE, CHEAP, bias_lambd, read_shrink, false, FLOATS(shrink))                          \
    X(thresholded_relu, "thresholded_relu", TRAITS_NONE, CHEAP, alpha_only, read_alpha_one, false, FLOATS(thresholded_relu)) \
    X(erf, "erf", TRAITS_IN_ORDER, COSTLY, NULL, NULL, false, FLOATS(erf))                                           \
    X(floor, "floor", TRAITS_NONE, CHEAP, NULL, NULL, false, FLOATS(floor))                                          \
    X(ceil, "ceil", TRAITS_NONE, CHEAP, NULL, NULL, false, FLOATS(ceil))                                             \
    X(round, "round", TRAITS_NONE, CHEAP, NULL, NULL, false, FLOATS(round))                                          \
    X(clip, "clip", TRAITS_CLIP, CHEAP, min_max, read_clip, false, FLOATS_AND_INTEGERS(clip))                        \
    X(logical_not, "not", TRAITS_NONE, CHEAP, NULL, NULL, false, {[KILN_BOOL] = logical_not_bool})                   \
    X(isnan, "isnan", TRAITS_NONE, CHEAP, NULL, NULL, true, FLOATS(isnan))                                           \
    X(isinf, "isinf", TRAITS_NONE, CHEAP, detect_flags, read_isinf, true, FLOATS(isinf))

/* The attributes each op accepts (the library checks names and types). */
static const kiln_attribute_spec alpha_only[] = {{"alpha", KILN_ATTRIBUTE_FLOAT}, {NULL, 0}};
static const kiln_attribute_spec alpha_beta[] = {
    {"alpha", KILN_ATTRIBUTE_FLOAT}, {"beta", KILN_ATTRIBUTE_FLOAT}, {NULL, 0}};
static const kiln_attribute_spec alpha_gamma[] = {
    {"alpha", KILN_ATTRIBUTE_FLOAT}, {"gamma", KILN_ATTRIBUTE_FLOAT}, {NULL, 0}};
static const kiln_attribute_spec approximate_only[] = {{"approximate", KILN_ATTRIBUTE_STRING}, {NULL, 0}};
static const kiln_attribute_spec bias_lambd[] = {
    {"bias", KILN_ATTRIBUTE_FLOAT}, {"lambd", KILN_ATTRIBUTE_FLOAT}, {NULL, 0}};
static const kiln_attribute_spec min_max[] = {{"max", KILN_ATTRIBUTE_FLOAT}, {"min", KILN_ATTRIBUTE_FLOAT}, {NULL, 0}};
static const kiln_attribute_spec detect_flags[] = {
    {"detect_negative", KILN_ATTRIBUTE_INT}, {"detect_positive", KILN_ATTRIBUTE_INT}, {NULL, 0}};

#define DEFINE_OP(ID, NAME, TRAITS, COST, SPECS, READER, BOOL_RESULT, LOOPS) \
    static const unary_op op_##ID = {NAME, COST, READER, BOOL_RESULT, LOOPS};
UNARY_OPS(DEFINE_OP)

/* -------------------------------------------------- shape rule and kernel */

static unary_loop loop_for(const unary_op *op, kiln_dtype dtype)
{
    return (unsigned)dtype < sizeof op->loops / sizeof op->loops[0] ? op->loops[dtype] : NULL;
}

static bool is_half(kiln_dtype dtype)
{
    return dtype == KILN_F16 || dtype == KILN_BF16;
}

/* The dtype whose loop and attribute rules serve `dtype`: f16 and bf16 are computed in f32 (half_compute.h). */
static kiln_dtype computed_as(kiln_dtype dtype)
{
    return is_half(dtype) ? KILN_F32 : dtype;
}

/* "f32, f64, i8, ..." — the dtypes `op` accepts, for refusals. */
static void accepted_dtypes(const unary_op *op, char *buffer, size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (unsigned d = 0; d < sizeof op->loops / sizeof op->loops[0]; d++) {
        if (!op->loops[d])
            continue;
        int n = snprintf(buffer + used, size - used, "%s%s%s", used ? ", " : "", kiln_dtype_name((kiln_dtype)d),
                         d == KILN_F32 ? ", f16, bf16" : "");
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}

/* The one shape rule: same shape; dtype accepted; attribute values valid. */
static kiln_status infer_unary(const unary_op *op, const kiln_shape_context *ctx, const kiln_value_type *input,
                               kiln_value_type *out, kiln_error *err)
{
    if (!loop_for(op, computed_as(input->dtype))) {
        char accepted[128];
        accepted_dtypes(op, accepted, sizeof accepted);
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: op '%s' does not take dtype %s (it takes %s)",
                         ctx->node_label, op->name, kiln_dtype_name(input->dtype), accepted);
    }
    if (op->read_params) {
        unary_params params;
        memset(&params, 0, sizeof params);
        KILN_TRY(op->read_params(ctx->node_label, computed_as(input->dtype), ctx->attributes, ctx->attribute_count,
                                 &params, err));
    }
    *out = *input;
    if (op->bool_result)
        out->dtype = KILN_BOOL;
    return KILN_OK;
}

/* One unary loop over a range of elements, for kiln_parallel_chunks. */
typedef struct unary_job {
    unary_loop loop;
    const uint8_t *in;
    uint8_t *out;
    size_t in_width, out_width;
    const unary_params *params;
} unary_job;

static void unary_chunk(const void *vjob, uint64_t begin, uint64_t end)
{
    const unary_job *job = vjob;
    job->loop(job->in + begin * job->in_width, job->out + begin * job->out_width, end - begin, job->params);
}

/* The one kernel: re-reads the attributes (validated again, so a direct
 * call with bad values fails instead of misbehaving) and runs the loop. */
static kiln_status run_unary(const unary_op *op, const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    unary_loop loop = loop_for(op, in->dtype);
    if (!loop || out->dtype != (op->bool_result ? KILN_BOOL : in->dtype))
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel from %s to %s", op->name,
                         kiln_dtype_name(in->dtype), kiln_dtype_name(out->dtype));
    if (out->element_count != in->element_count)
        return kiln_fail(err, KILN_ERR_RUNTIME, "%s: output has %llu elements, input %llu", op->name,
                         (unsigned long long)out->element_count, (unsigned long long)in->element_count);
    unary_params params;
    memset(&params, 0, sizeof params);
    if (op->read_params)
        KILN_TRY(op->read_params(op->name, in->dtype, call->attributes, call->attribute_count, &params, err));
    unary_job job = {loop_to_run(loop, call), in->data, out->data, kiln_dtype_size(in->dtype), kiln_dtype_size(out->dtype), &params};
    if (out->element_count && op->cost == CHEAP)
        kiln_parallel_chunks(out->element_count, kiln_call_threads(call), unary_chunk, &job);
    else if (out->element_count)
        kiln_parallel_chunks_from(out->element_count, kiln_call_threads(call), kiln_parallel_min_costly_elements(),
                                  unary_chunk, &job);
    return KILN_OK;
}

/* Registry entry points binding each op to the shared rule and kernel. */
#define DEFINE_ENTRY(ID, NAME, TRAITS, COST, SPECS, READER, BOOL_RESULT, LOOPS)                                          \
    static kiln_status infer_##ID(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,       \
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)               \
    {                                                                                                      \
        (void)input_count;                                                                                 \
        return infer_unary(&op_##ID, ctx, inputs[0], out, err);                                            \
    }                                                                                                      \
    static kiln_status run_##ID(const kiln_kernel_call *call, kiln_error *err)                               \
    {                                                                                                      \
        KILN_HALF_IN_F32(call, run_##ID, err);                                                             \
        return run_unary(&op_##ID, call, err);                                                             \
    }
UNARY_OPS(DEFINE_ENTRY)

#define REGISTRY_ROW(ID, NAME, TRAITS, COST, SPECS, READER, BOOL_RESULT, LOOPS)                                  \
    {.name = NAME, .versions = {1, 1}, .inputs = {1, 1}, .attributes = SPECS, .infer = infer_##ID, .run = run_##ID, \
     .traits = TRAITS},
static const kiln_op_def unary_ops[] = {UNARY_OPS(REGISTRY_ROW)};

const kiln_op_family kiln_ops_unary = KILN_OP_FAMILY(unary_ops, "spec/ops/unary.md");
