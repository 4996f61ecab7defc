/*
 * vector_math.c — vectorizable f32 exp, erf, gelu and softmax (vector_math.h).
 *
 * Each function of one element is straight-line double arithmetic: both
 * sides of a branch are computed and one is selected, and it is always
 * inlined (a call per element would keep the loop scalar), so the element
 * loops vectorize. They are compiled three times, for the baseline x86-64 (SSE2, two
 * doubles a vector), AVX2 (four) and AVX-512F (eight), and the widest copy
 * the CPU has runs. The copies compute the same IEEE operations in the same
 * order (C11 mode leaves floating-point contraction off), so their results
 * are identical.
 *
 * The polynomial coefficients are Chebyshev interpolants fitted for kiln
 * (interpolation at the Chebyshev points of the first kind, in double,
 * checked against the double libm on 20001 points of each interval; erf's
 * then converted exactly to powers of t and rounded to double):
 *  - exp: e^r on |r| <= ln2/2 by its Taylor series to degree 11
 *    (truncation error below 6e-15 relative) after r = d - k ln2;
 *  - erf on |x| <= 4: x P(x^2), P of degree 23 in x^2 (relative error
 *    6.2e-14); beyond 4, erf(4) = 1 - 1.5e-8 already rounds to 1 in f32,
 *    so |x| is clamped to 4.
 *  - gelu (erf form) from that erf: 0.5 x (1 + erf(x / sqrt 2)) in
 *    double, for x >= GELU_VECTOR_MIN only (see there).
 */
/*
 * The clamps and selects below are comparisons, which may raise IEEE
 * exception flags; under GCC's default -ftrapping-math that keeps the
 * element loops from being vectorized. kiln never reads the exception
 * flags, and no computed value changes without the assumption.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "unary_math.h"
#include "parallel.h"
#include "vector_math.h"

/* ------------------------------------------------------------------ exp */

#define LOG2_E 0x1.71547652b82fep+0
/* ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 significant bits: k * LN2_HI is
 * exact for every |k| < 2^21, so d - k * LN2_HI cancels without error. */
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
/* 1.5 * 2^52: adding it rounds a double below 2^51 to an integer held in
 * the low bits of the sum (round to nearest even, like nearbyint). */
#define ROUNDING_SHIFTER 0x1.8p52

/*
 * e^d for a double d (any value: NaN stays NaN). d is clamped to
 * [-150, 100] first: every f32 result is already 0 below -150 and inf
 * above 100, and inside the clamp 2^k stays a normal double.
 */
static inline __attribute__((always_inline)) double vector_exp(double d)
{
    /* Written so that a NaN d passes both tests unchanged. */
    double c = d < -150.0 ? -150.0 : d;
    c = c > 100.0 ? 100.0 : c;
    double shifted = c * LOG2_E + ROUNDING_SHIFTER;
    double k = shifted - ROUNDING_SHIFTER;
    double r = (c - k * LN2_HI) - k * LN2_LO;
    /* The low 12 bits of `shifted` hold k mod 4096; k + 1023 in [1, 2046]
     * shifted into the exponent field is 2^k. */
    uint64_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    /* Taylor series of e^r, Horner form, coefficients 1/n! rounded. */
    double p = 0x1.ae64567f544e4p-26; /* 1/11! */
    p = p * r + 0x1.27e4fb7789f5cp-22; /* 1/10! */
    p = p * r + 0x1.71de3a556c734p-19; /* 1/9! */
    p = p * r + 0x1.a01a01a01a01ap-16; /* 1/8! */
    p = p * r + 0x1.a01a01a01a01ap-13; /* 1/7! */
    p = p * r + 0x1.6c16c16c16c17p-10; /* 1/6! */
    p = p * r + 0x1.1111111111111p-7; /* 1/5! */
    p = p * r + 0x1.5555555555555p-5; /* 1/4! */
    p = p * r + 0x1.5555555555555p-3; /* 1/3! */
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* A NaN d went through every step above, so the result is NaN. */
    return p * scale;
}

/*
 * a * b + c, fused into one rounding when `fused` (a compile-time constant
 * at every use: the copies built for FMA pass 1, the baseline copy 0, so
 * the baseline never calls libm's software fma).
 */
#define MULADD(fused, a, b, c) ((fused) ? fma((a), (b), (c)) : (a) * (b) + (c))

/*
 * vector_exp with its reduction and Horner steps fused when `fused`: half
 * the floating-point operations, measured 30% faster for sigmoid (AVX-512,
 * 262144 values: 242 to 170 us), and no less accurate (each step rounds
 * once instead of twice). Used by the activations only (exp, erf, gelu
 * and softmax keep vector_exp and its measured bits). Their results on a
 * CPU without FMA, which runs the baseline copy unfused, may therefore
 * differ in the last bit from an FMA CPU's in rare cases; both are within
 * 1 ulp of the reference (spec/opset.md).
 */
static inline __attribute__((always_inline)) double vector_exp_fusable(double d, bool fused)
{
    double c = d < -150.0 ? -150.0 : d;
    c = c > 100.0 ? 100.0 : c;
    double shifted = MULADD(fused, c, LOG2_E, ROUNDING_SHIFTER);
    double k = shifted - ROUNDING_SHIFTER;
    double r = MULADD(fused, -k, LN2_LO, MULADD(fused, -k, LN2_HI, c));
    uint64_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    double p = 0x1.ae64567f544e4p-26; /* 1/11! */
    p = MULADD(fused, p, r, 0x1.27e4fb7789f5cp-22); /* 1/10! */
    p = MULADD(fused, p, r, 0x1.71de3a556c734p-19); /* 1/9! */
    p = MULADD(fused, p, r, 0x1.a01a01a01a01ap-16); /* 1/8! */
    p = MULADD(fused, p, r, 0x1.a01a01a01a01ap-13); /* 1/7! */
    p = MULADD(fused, p, r, 0x1.6c16c16c16c17p-10); /* 1/6! */
    p = MULADD(fused, p, r, 0x1.1111111111111p-7); /* 1/5! */
    p = MULADD(fused, p, r, 0x1.5555555555555p-5); /* 1/4! */
    p = MULADD(fused, p, r, 0x1.5555555555555p-3); /* 1/3! */
    p = MULADD(fused, p, r, 0.5);
    p = MULADD(fused, p, r, 1.0);
    p = MULADD(fused, p, r, 1.0);
    return p * scale;
}

/* ------------------------------------------------------------------ erf */

/*
 * erf(x) / x as a polynomial of degree 23 in t = x^2 / 8 - 1 (x^2 in
 * [0, 16], |x| <= 4), in powers of t: converted exactly from the
 * Chebyshev interpolant (all coefficients below 0.36 in magnitude, so the
 * power form loses nothing measurable: 6.2e-14 relative on 80000 points
 * either way).
 */
static const double erf_coefficients[24] = {
    0x1.6a040781a4870p-2, -0x1.69a0ccda3df87p-3, 0x1.0dabaf063ec9fp-3, -0x1.b92e95c1a476dp-4,
    0x1.717efc6831e99p-4, -0x1.3215d8b35d11fp-4, 0x1.ea97f3a3f28cdp-5, -0x1.76e8653851cedp-5,
    0x1.0ed51571456c5p-5, -0x1.7034ed86f6264p-6, 0x1.d637283d9d101p-7, -0x1.1a02ca9f97993p-7,
    0x1.3e06cbba9b6c8p-8, -0x1.51e66c86c3566p-9, 0x1.535f9b7b5a22ep-10, -0x1.41ac61941cb43p-11,
    0x1.1dacd05c4b4a2p-12, -0x1.e9cfbc2c48684p-14, 0x1.abcef30c614fbp-15, -0x1.467ce33567eccp-16,
    0x1.46903f2eee916p-18, -0x1.f191e7342e34bp-20, 0x1.9975fb9a4e23ap-20, -0x1.fecf86cd50e57p-22,
};

/*
 * sum_k c[k] t^k as four independent Horner chains in t^4 (the terms
 * k = 0, 1, 2, 3 mod 4) combined at the end: a quarter of the dependent
 * steps of one chain, and the dependent steps are what bounds the speed of
 * these loops. Written out (no inner loop) so that the element loops
 * vectorize.
 */
static inline __attribute__((always_inline)) double erf_polynomial(double t)
{
    double t2 = t * t, t4 = t2 * t2;
    double c0 = erf_coefficients[20];
    double c1 = erf_coefficients[21];
    double c2 = erf_coefficients[22];
    double c3 = erf_coefficients[23];
    c0 = c0 * t4 + erf_coefficients[16];
    c1 = c1 * t4 + erf_coefficients[17];
    c2 = c2 * t4 + erf_coefficients[18];
    c3 = c3 * t4 + erf_coefficients[19];
    c0 = c0 * t4 + erf_coefficients[12];
    c1 = c1 * t4 + erf_coefficients[13];
    c2 = c2 * t4 + erf_coefficients[14];
    c3 = c3 * t4 + erf_coefficients[15];
    c0 = c0 * t4 + erf_coefficients[8];
    c1 = c1 * t4 + erf_coefficients[9];
    c2 = c2 * t4 + erf_coefficients[10];
    c3 = c3 * t4 + erf_coefficients[11];
    c0 = c0 * t4 + erf_coefficients[4];
    c1 = c1 * t4 + erf_coefficients[5];
    c2 = c2 * t4 + erf_coefficients[6];
    c3 = c3 * t4 + erf_coefficients[7];
    c0 = c0 * t4 + erf_coefficients[0];
    c1 = c1 * t4 + erf_coefficients[1];
    c2 = c2 * t4 + erf_coefficients[2];
    c3 = c3 * t4 + erf_coefficients[3];
    return (c0 + t * c1) + t2 * (c2 + t * c3);
}

/*
 * erf(x) for a double widened from f32 (so x * x is exact): x P(x^2) on
 * |x| <= 4, and beyond, where erf(4) = 1 - 1.5e-8 already rounds to 1 in
 * f32, the value at ±4. x * P keeps the sign of zero and the relative
 * accuracy of tiny x; NaN passes the clamp and stays NaN.
 */
static inline __attribute__((always_inline)) double vector_erf(double x)
{
    double magnitude = fabs(x);
    double clamped = magnitude > 4.0 ? 4.0 : magnitude;
    return copysign(clamped * erf_polynomial(clamped * clamped * 0.125 - 1.0), x);
}

/*
 * gelu's vectorized range. For x < 0, 1 + erf(x / sqrt 2) cancels: the
 * erf polynomial's absolute error (under 6.2e-14) grows relative to the
 * result by 1 / erfc(|x| / sqrt 2), which at x = -3.5 is 2.2e3, so the
 * sum keeps a relative error under 1.4e-10, far below half an f32 ulp.
 * Below -3.5, and for NaN, the reference's erfc formula runs.
 */
#define GELU_VECTOR_MIN -3.5

static inline __attribute__((always_inline)) double vector_gelu(double x)
{
    return 0.5 * x * (1.0 + vector_erf(x * UNARY_SQRT1_2));
}

/* ------------------------------------------------------- exp-based ones */

/* ln 2 / 2, the bound of expm1's polynomial. */
#define EXPM1_POLYNOMIAL_MAX 0x1.62e42fefa39efp-2

/*
 * e^d - 1 for a double d (NaN stays NaN). On |d| <= ln2/2, where e^d - 1
 * would cancel, d q(d) with q the Taylor series of (e^d - 1) / d to degree
 * 12 (truncation below 1.2e-17 relative; d q(d) keeps the sign of zero
 * and tiny d exactly); elsewhere e^d - 1, which cancels by at most a
 * factor 2.5 there (relative error below 1.5e-14). d is clamped by
 * vector_exp: below -150 the result is -1, as expm1's f32 value is.
 */
static inline __attribute__((always_inline)) double vector_expm1(double d, bool fused)
{
    double q = 0x1.6124613a86d09p-33; /* 1/13! */
    q = MULADD(fused, q, d, 0x1.1eed8eff8d898p-29); /* 1/12! */
    q = MULADD(fused, q, d, 0x1.ae64567f544e4p-26); /* 1/11! */
    q = MULADD(fused, q, d, 0x1.27e4fb7789f5cp-22); /* 1/10! */
    q = MULADD(fused, q, d, 0x1.71de3a556c734p-19); /* 1/9! */
    q = MULADD(fused, q, d, 0x1.a01a01a01a01ap-16); /* 1/8! */
    q = MULADD(fused, q, d, 0x1.a01a01a01a01ap-13); /* 1/7! */
    q = MULADD(fused, q, d, 0x1.6c16c16c16c17p-10); /* 1/6! */
    q = MULADD(fused, q, d, 0x1.1111111111111p-7); /* 1/5! */
    q = MULADD(fused, q, d, 0x1.5555555555555p-5); /* 1/4! */
    q = MULADD(fused, q, d, 0x1.5555555555555p-3); /* 1/3! */
    q = MULADD(fused, q, d, 0.5);
    q = MULADD(fused, q, d, 1.0);
    double near_zero = d * q;
    double far = vector_exp_fusable(d, fused) - 1.0;
    return fabs(d) <= EXPM1_POLYNOMIAL_MAX ? near_zero : far;
}

/*
 * sigmoid(x) = 1 / (1 + e^-|x|) for x >= 0, e^-|x| / (1 + e^-|x|) below,
 * the reference's two branches (neither forms e^|x|), with one division.
 * x = +inf gives 1 and -inf 0 (e^-|x| is clamped to e^-150, which f32
 * results do not see); NaN takes the second branch and stays NaN.
 */
static inline __attribute__((always_inline)) double vector_sigmoid(double x, bool fused)
{
    double e = vector_exp_fusable(-fabs(x), fused);
    double r = 1.0 / (1.0 + e);
    return x >= 0.0 ? r : e * r;
}

/*
 * Below this, x sigmoid(x) and x sigmoid(2u) (gelu's tanh form) round to
 * -0.0 in f32 (|x| e^-150 < 2^-150 for every f32 x), the reference's
 * value there and at -inf, where x times the clamped exponential would not
 * give it.
 */
#define SIGMOID_NEGLIGIBLE -150.0

/* silu(x) = x sigmoid(x); -0.0 below -150 and at -inf, inf at inf. */
static inline __attribute__((always_inline)) double vector_silu(double x, bool fused)
{
    double y = x * vector_sigmoid(x, fused);
    return x < SIGMOID_NEGLIGIBLE ? -0.0 : y;
}

/*
 * tanh(x) = -m / (2 + m) with m = e^(-2|x|) - 1, signed like x: expm1
 * keeps the relative accuracy of small |x| (and tanh(±0) = ±0), and
 * beyond |x| = 75 m is -1 and the result ±1. NaN stays NaN.
 */
static inline __attribute__((always_inline)) double vector_tanh(double x, bool fused)
{
    double m = vector_expm1(-2.0 * fabs(x), fused);
    return copysign(-m / (2.0 + m), x);
}

/* gelu, tanh form, as the reference: x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3). */
static inline __attribute__((always_inline)) double vector_gelu_tanh(double x, bool fused)
{
    double twice_u = 2.0 * (UNARY_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x));
    double y = x * vector_sigmoid(twice_u, fused);
    return twice_u < SIGMOID_NEGLIGIBLE ? -0.0 : y;
}

/* The reference's x * clamp((x + 3) / 6) with the -inf limit -0.0, as a select. */
static inline __attribute__((always_inline)) double vector_hard_swish(double x)
{
    double t = (x + 3.0) / 6.0;
    t = t < 0.0 ? 0.0 : t;
    t = t > 1.0 ? 1.0 : t;
    double y = x * t;
    return x == -HUGE_VAL ? -0.0 : y;
}

/* The reference's elu: alpha (e^x - 1) below zero, x otherwise (NaN too). */
static inline __attribute__((always_inline)) double vector_elu(double x, double alpha, bool fused)
{
    double negative = alpha * vector_expm1(x, fused);
    return x < 0.0 ? negative : x;
}

/* The reference's selu: gamma (alpha (e^x - 1)) for x <= 0, gamma x above
 * (0 for gamma = 0 even at x = inf). */
static inline __attribute__((always_inline)) double vector_selu(double x, double alpha, double gamma, bool fused)
{
    double negative = gamma * (alpha * vector_expm1(x, fused));
    double positive = gamma == 0.0 ? 0.0 : gamma * x;
    return x <= 0.0 ? negative : positive;
}

/* t clamped to [0, 1], NaN kept. */
static inline __attribute__((always_inline)) double vector_clamp01(double t)
{
    t = t < 0.0 ? 0.0 : t;
    return t > 1.0 ? 1.0 : t;
}

/*
 * The reference's hard_sigmoid for alpha != 0: clamp(fma(alpha, x, beta))
 * to [0, 1], NaN kept. fma is one rounding on every machine (an
 * instruction in the AVX2 and AVX-512 copies, built for FMA, and libm's
 * exact fma in the baseline copy), so this is the reference's value bit
 * for bit. (For alpha = 0 the reference gives clamp(beta) for every x but
 * NaN: hard_sigmoid_constant, a loop of its own, since a select between
 * the two keeps GCC from vectorizing the fma.)
 */
static inline __attribute__((always_inline)) double vector_hard_sigmoid(double x, double alpha, double beta)
{
    return vector_clamp01(fma(alpha, x, beta));
}

/* ---------------------------------------------------------------- loops */

/*
 * NAME_loop_SUFFIX: out[i] = (float)EXPR for i < n, EXPR a function of
 * `double x` (the element) and the coefficients `a`, `b` (0 when the
 * function takes none).
 */
#define ELEMENT_LOOP(NAME, SUFFIX, TARGET, EXPR)                                                 \
    TARGET static void NAME##_loop_##SUFFIX(const float *in, float *out, uint64_t n, double a,  \
                                            double b)                                            \
    {                                                                                            \
        (void)a;                                                                                 \
        (void)b;                                                                                 \
        KILN_SIMD for (uint64_t i = 0; i < n; i++) {                                             \
            double x = in[i];                                                                    \
            out[i] = (float)(EXPR);                                                              \
        }                                                                                        \
    }

/*
 * Softmax along the last axis keeps this many partial maxima and sums, a
 * whole number of vectors at every width (two of AVX-512's 8 doubles), so
 * the loops over a slice run in SIMD lanes and their results do not depend
 * on the width; the result is scaled by 1 / sum (one division a slice, two
 * roundings in double: far below f32's). Measured (kiln bench, one
 * thread, interleaved medians): a [1, 1000] softmax took 4.97 us with 4
 * partial sums, a scalar maximum and a division per element, 2.00 us so;
 * [64, 64, 64] on the last axis 1.60 ms, 0.58 ms.
 */
#define SOFTMAX_LANES 16

/*
 * A slice of at most this many elements (a multiple of SOFTMAX_LANES)
 * keeps its exponentials (in double, on the stack) between the sum and the
 * scaling, so each is computed once; a longer one computes them again. The
 * same values either way: the scaling multiplies the very e^(x - m) the
 * sum added.
 */
#define SOFTMAX_STORED 1024

/*
 * Softmax along an inner axis works on this many slices at once, their
 * shifts and sums on the stack (running allocates nothing): 2 x 2 KiB,
 * and rows of 256 f32 (1 KiB) read in order.
 */
#define SOFTMAX_COLUMNS 256

/* The loops of one instruction set: SUFFIX names them, TARGET is a GCC
 * target attribute (empty for the baseline), FUSED 1 when it has FMA
 * (the activations' exp fuses its multiply-adds: vector_exp_fusable). */
#define VECTOR_LOOPS(SUFFIX, TARGET, FUSED)                                                    \
    TARGET static void exp_loop_##SUFFIX(const float *in, float *out, uint64_t n)       \
    {                                                                                   \
        KILN_SIMD for (uint64_t i = 0; i < n; i++)                                      \
            out[i] = (float)vector_exp(in[i]);                                          \
    }                                                                                   \
    TARGET static void erf_loop_##SUFFIX(const float *in, float *out, uint64_t n)       \
    {                                                                                   \
        KILN_SIMD for (uint64_t i = 0; i < n; i++)                                      \
            out[i] = (float)vector_erf(in[i]);                                          \
    }                                                                                   \
    TARGET static void gelu_loop_##SUFFIX(const float *in, float *out, uint64_t n)      \
    {                                                                                   \
        KILN_SIMD for (uint64_t i = 0; i < n; i++)                                      \
            out[i] = (float)vector_gelu(in[i]);                                         \
    }                                                                                   \
    /* the slice's maximum, SOFTMAX_LANES partial maxima (NaN: see softmax_shift) */   \
    TARGET static float slice_max_##SUFFIX(const float *in, uint64_t n)                 \
    {                                                                                   \
        float partial[SOFTMAX_LANES];                                                   \
        for (int j = 0; j < SOFTMAX_LANES; j++)                                         \
            partial[j] = in[0];                                                         \
        uint64_t k = 0;                                                                 \
        for (; k + SOFTMAX_LANES <= n; k += SOFTMAX_LANES) {                            \
            KILN_SIMD for (int j = 0; j < SOFTMAX_LANES; j++) {                         \
                float x = in[k + j];                                                    \
                partial[j] = x > partial[j] ? x : partial[j];                           \
            }                                                                           \
        }                                                                               \
        float m = partial[0];                                                           \
        for (int j = 1; j < SOFTMAX_LANES; j++)                                         \
            m = partial[j] > m ? partial[j] : m;                                        \
        for (; k < n; k++)                                                              \
            m = in[k] > m ? in[k] : m;                                                  \
        return m;                                                                       \
    }                                                                                   \
    /* sum of the slice in double, SOFTMAX_LANES partial sums in a fixed order */       \
    TARGET static double slice_sum_##SUFFIX(const float *in, uint64_t n)                \
    {                                                                                   \
        double partial[SOFTMAX_LANES];                                                  \
        for (int j = 0; j < SOFTMAX_LANES; j++)                                         \
            partial[j] = 0.0;                                                           \
        uint64_t k = 0;                                                                 \
        for (; k + SOFTMAX_LANES <= n; k += SOFTMAX_LANES) {                            \
            KILN_SIMD for (int j = 0; j < SOFTMAX_LANES; j++)                           \
                partial[j] += in[k + j];                                                \
        }                                                                               \
        double sum = 0.0;                                                               \
        for (int j = 0; j < SOFTMAX_LANES; j++)                                         \
            sum += partial[j];                                                          \
        for (; k < n; k++)                                                              \
            sum += in[k];                                                               \
        return sum;                                                                     \
    }                                                                                   \
    TARGET static void scaled_exp_##SUFFIX(const float *in, float *out, uint64_t n,     \
                                           double shift, double sum)                    \
    {                                                                                   \
        double inverse = 1.0 / sum;                                                     \
        KILN_SIMD for (uint64_t k = 0; k < n; k++)                                      \
            out[k] = (float)(vector_exp(in[k] - shift) * inverse);                      \
    }                                                                                   \
    /* e^(in[k] - shift) over the whole blocks of SOFTMAX_LANES of n elements, each     \
     * added to its lane's partial sum and kept in store[k] */                          \
    TARGET static uint64_t exp_lanes_##SUFFIX(const float *in, uint64_t n, double shift, \
                                              double *store, double *partial)           \
    {                                                                                   \
        uint64_t k = 0;                                                                 \
        for (; k + SOFTMAX_LANES <= n; k += SOFTMAX_LANES) {                            \
            KILN_SIMD for (int j = 0; j < SOFTMAX_LANES; j++) {                         \
                double e = vector_exp(in[k + j] - shift);                               \
                store[k + j] = e;                                                       \
                partial[j] += e;                                                        \
            }                                                                           \
        }                                                                               \
        return k;                                                                       \
    }                                                                                   \
    /* sum of e^(in[k] - shift) over the slice, SOFTMAX_LANES partial sums in a fixed   \
     * order; `store` (SOFTMAX_STORED doubles) keeps every term of a slice that fits    \
     * it, and is scratch, a chunk at a time, for a longer one (the same lanes, the     \
     * same order) */                                                                   \
    TARGET static double exp_sum_##SUFFIX(const float *in, uint64_t n, double shift,    \
                                          double *store)                                \
    {                                                                                   \
        double partial[SOFTMAX_LANES];                                                  \
        for (int j = 0; j < SOFTMAX_LANES; j++)                                         \
            partial[j] = 0.0;                                                           \
        bool keep = n <= SOFTMAX_STORED;                                                \
        uint64_t k = 0;                                                                 \
        while (n - k >= SOFTMAX_LANES) {                                                \
            uint64_t chunk = n - k < SOFTMAX_STORED ? n - k : SOFTMAX_STORED;           \
            k += exp_lanes_##SUFFIX(in + k, chunk, shift, store + (keep ? k : 0), partial); \
        }                                                                               \
        double sum = 0.0;                                                               \
        for (int j = 0; j < SOFTMAX_LANES; j++)                                         \
            sum += partial[j];                                                          \
        for (; k < n; k++) {                                                            \
            double e = vector_exp(in[k] - shift);                                       \
            if (keep)                                                                   \
                store[k] = e;                                                           \
            sum += e;                                                                   \
        }                                                                               \
        return sum;                                                                     \
    }                                                                                   \
    TARGET static void scale_stored_##SUFFIX(const double *store, float *out, uint64_t n, \
                                             double sum)                                \
    {                                                                                   \
        double inverse = 1.0 / sum;                                                     \
        KILN_SIMD for (uint64_t k = 0; k < n; k++)                                      \
            out[k] = (float)(store[k] * inverse);                                       \
    }                                                                                   \
    /* softmax of `width` <= SOFTMAX_COLUMNS slices side by side, `inner` apart */     \
    TARGET static void softmax_columns_##SUFFIX(const float *in, float *out, uint64_t extent,  \
                                                uint64_t inner, uint64_t width)         \
    {                                                                                   \
        double shift[SOFTMAX_COLUMNS], sum[SOFTMAX_COLUMNS];                            \
        KILN_SIMD for (uint64_t j = 0; j < width; j++) {                                \
            shift[j] = in[j];                                                           \
            sum[j] = 0.0;                                                               \
        }                                                                               \
        for (uint64_t k = 1; k < extent; k++) {                                         \
            const float *row = in + k * inner;                                          \
            KILN_SIMD for (uint64_t j = 0; j < width; j++) {                            \
                double x = row[j], m = shift[j];                                        \
                shift[j] = m == m && (x != x || x > m) ? x : m;                         \
            }                                                                           \
        }                                                                               \
        for (uint64_t k = 0; k < extent; k++) {                                         \
            const float *row = in + k * inner;                                          \
            KILN_SIMD for (uint64_t j = 0; j < width; j++)                              \
                sum[j] += vector_exp(row[j] - shift[j]);                                \
        }                                                                               \
        for (uint64_t k = 0; k < extent; k++) {                                         \
            const float *row = in + k * inner;                                          \
            float *row_out = out + k * inner;                                           \
            KILN_SIMD for (uint64_t j = 0; j < width; j++)                              \
                row_out[j] = (float)(vector_exp(row[j] - shift[j]) / sum[j]);           \
        }                                                                               \
    }                                                                                   \
    ELEMENT_LOOP(sigmoid, SUFFIX, TARGET, vector_sigmoid(x, FUSED))                     \
    ELEMENT_LOOP(silu, SUFFIX, TARGET, vector_silu(x, FUSED))                           \
    ELEMENT_LOOP(tanh, SUFFIX, TARGET, vector_tanh(x, FUSED))                           \
    ELEMENT_LOOP(gelu_tanh, SUFFIX, TARGET, vector_gelu_tanh(x, FUSED))                 \
    ELEMENT_LOOP(hard_swish, SUFFIX, TARGET, vector_hard_swish(x))                      \
    ELEMENT_LOOP(elu, SUFFIX, TARGET, vector_elu(x, a, FUSED))                          \
    ELEMENT_LOOP(selu, SUFFIX, TARGET, vector_selu(x, a, b, FUSED))                     \
    ELEMENT_LOOP(hard_sigmoid, SUFFIX, TARGET, vector_hard_sigmoid(x, a, b))             \
    ELEMENT_LOOP(hard_sigmoid_constant, SUFFIX, TARGET, x != x ? x : vector_clamp01(b))

VECTOR_LOOPS(baseline, , 0)
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_COPY 1
/*
 * With FMA too, for hard_sigmoid's fma() and the activations' fused exp:
 * C11 mode keeps GCC from contracting any other a * b + c into one
 * (-ffp-contract=off), so exp, erf, gelu and softmax compute what the
 * baseline copy computes.
 */
VECTOR_LOOPS(avx2, __attribute__((target("avx2,fma"))), 1)
/* GCC keeps 256-bit vectors on AVX-512 unless asked; clang's target attribute takes one feature. */
#if defined(__clang__)
#define AVX512_TARGET __attribute__((target("avx512f,fma")))
#else
#define AVX512_TARGET __attribute__((target("avx512f", "fma", "prefer-vector-width=512")))
#endif
VECTOR_LOOPS(avx512, AVX512_TARGET, 1)
#endif

/* The widest copy this CPU runs: 512 (AVX-512F), 256 (AVX2) or 128 bits
 * (the wider copies also use FMA). */
static int vector_bits(void)
{
#ifdef HAVE_AVX2_COPY
    if (!__builtin_cpu_supports("fma"))
        return 128;
    return __builtin_cpu_supports("avx512f") ? 512 : __builtin_cpu_supports("avx2") ? 256 : 128;
#else
    return 128;
#endif
}

void kiln_vector_exp_f32(const float *in, float *out, uint64_t n)
{
#ifdef HAVE_AVX2_COPY
    int bits = vector_bits();
    if (bits == 512) {
        exp_loop_avx512(in, out, n);
        return;
    }
    if (bits == 256) {
        exp_loop_avx2(in, out, n);
        return;
    }
#endif
    exp_loop_baseline(in, out, n);
}

void kiln_vector_erf_f32(const float *in, float *out, uint64_t n)
{
#ifdef HAVE_AVX2_COPY
    int bits = vector_bits();
    if (bits == 512) {
        erf_loop_avx512(in, out, n);
        return;
    }
    if (bits == 256) {
        erf_loop_avx2(in, out, n);
        return;
    }
#endif
    erf_loop_baseline(in, out, n);
}

void kiln_vector_gelu_f32(const float *in, float *out, uint64_t n)
{
#ifdef HAVE_AVX2_COPY
    int bits = vector_bits();
    if (bits == 512)
        gelu_loop_avx512(in, out, n);
    else if (bits == 256)
        gelu_loop_avx2(in, out, n);
    else
#endif
        gelu_loop_baseline(in, out, n);
    /* Outside the vectorized range (and NaN): the reference's value. */
    for (uint64_t i = 0; i < n; i++)
        if (!(in[i] >= GELU_VECTOR_MIN))
            out[i] = (float)unary_gelu_erf(in[i]);
}

/*
 * The shift is the slice's maximum as `>` finds it, which is not the
 * reference's rule for a slice holding a NaN (the reference shifts by the
 * first NaN): it need not be, since such a slice is all NaN either way:
 * the NaN element's e^(NaN - shift) makes the sum NaN, and every result
 * is divided by it. (A +inf or all -inf slice: inf - inf is NaN, as in
 * the reference.)
 */
/* One instruction set's softmax of a slice (SUFFIX as VECTOR_LOOPS names it). */
#define SOFTMAX_SLICE(SUFFIX, in, out, extent)                                                   \
    do {                                                                                         \
        double shift = slice_max_##SUFFIX(in, extent), store[SOFTMAX_STORED];                    \
        double sum = exp_sum_##SUFFIX(in, extent, shift, store);                                 \
        if (extent <= SOFTMAX_STORED)                                                            \
            scale_stored_##SUFFIX(store, out, extent, sum);                                      \
        else                                                                                     \
            scaled_exp_##SUFFIX(in, out, extent, shift, sum);                                    \
    } while (0)

void kiln_vector_softmax_f32(const float *in, float *out, uint64_t extent)
{
#ifdef HAVE_AVX2_COPY
    int bits = vector_bits();
    if (bits == 512) {
        SOFTMAX_SLICE(avx512, in, out, extent);
        return;
    }
    if (bits == 256) {
        SOFTMAX_SLICE(avx2, in, out, extent);
        return;
    }
#endif
    SOFTMAX_SLICE(baseline, in, out, extent);
}

/* Run NAME's element loop of the widest copy this CPU runs. */
#ifdef HAVE_AVX2_COPY
#define RUN_ELEMENT_LOOP(NAME, in, out, n, a, b)                 \
    do {                                                         \
        int bits = vector_bits();                                \
        if (bits == 512)                                         \
            NAME##_loop_avx512(in, out, n, a, b);                \
        else if (bits == 256)                                    \
            NAME##_loop_avx2(in, out, n, a, b);                  \
        else                                                     \
            NAME##_loop_baseline(in, out, n, a, b);              \
    } while (0)
#else
#define RUN_ELEMENT_LOOP(NAME, in, out, n, a, b) NAME##_loop_baseline(in, out, n, a, b)
#endif

void kiln_vector_sigmoid_f32(const float *in, float *out, uint64_t n)
{
    RUN_ELEMENT_LOOP(sigmoid, in, out, n, 0.0, 0.0);
}

void kiln_vector_silu_f32(const float *in, float *out, uint64_t n)
{
    RUN_ELEMENT_LOOP(silu, in, out, n, 0.0, 0.0);
}

void kiln_vector_tanh_f32(const float *in, float *out, uint64_t n)
{
    RUN_ELEMENT_LOOP(tanh, in, out, n, 0.0, 0.0);
}

void kiln_vector_gelu_tanh_f32(const float *in, float *out, uint64_t n)
{
    RUN_ELEMENT_LOOP(gelu_tanh, in, out, n, 0.0, 0.0);
}

void kiln_vector_hard_swish_f32(const float *in, float *out, uint64_t n)
{
    RUN_ELEMENT_LOOP(hard_swish, in, out, n, 0.0, 0.0);
}

void kiln_vector_hard_sigmoid_f32(const float *in, float *out, uint64_t n, double alpha, double beta)
{
    if (alpha == 0.0)
        RUN_ELEMENT_LOOP(hard_sigmoid_constant, in, out, n, alpha, beta);
    else
        RUN_ELEMENT_LOOP(hard_sigmoid, in, out, n, alpha, beta);
}

void kiln_vector_elu_f32(const float *in, float *out, uint64_t n, double alpha)
{
    RUN_ELEMENT_LOOP(elu, in, out, n, alpha, 0.0);
}

void kiln_vector_selu_f32(const float *in, float *out, uint64_t n, double alpha, double gamma)
{
    RUN_ELEMENT_LOOP(selu, in, out, n, alpha, gamma);
}

void kiln_vector_softmax_columns_f32(const float *in, float *out, uint64_t extent, uint64_t inner)
{
    int bits = vector_bits();
    for (uint64_t begin = 0; begin < inner; begin += SOFTMAX_COLUMNS) {
        uint64_t width = inner - begin < SOFTMAX_COLUMNS ? inner - begin : SOFTMAX_COLUMNS;
#ifdef HAVE_AVX2_COPY
        if (bits == 512) {
            softmax_columns_avx512(in + begin, out + begin, extent, inner, width);
            continue;
        }
        if (bits == 256) {
            softmax_columns_avx2(in + begin, out + begin, extent, inner, width);
            continue;
        }
#endif
        (void)bits;
        softmax_columns_baseline(in + begin, out + begin, extent, inner, width);
    }
}

double kiln_vector_sum_f32(const float *in, uint64_t n)
{
#ifdef HAVE_AVX2_COPY
    int bits = vector_bits();
    if (bits == 512)
        return slice_sum_avx512(in, n);
    if (bits == 256)
        return slice_sum_avx2(in, n);
#endif
    return slice_sum_baseline(in, n);
}
