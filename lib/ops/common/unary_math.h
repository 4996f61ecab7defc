/*
 * unary_math.h — the scalar formulas of the unary elementwise family
 * (spec/ops/unary.md), one function per op, all in double.
 *
 * Both float dtypes use these: f64 directly, f32 by widening the element
 * to double (exact), evaluating here and rounding the result once to f32.
 * That makes f32 results depend on the double libm only below f32
 * precision, so they agree across platforms in all but rare double-rounding
 * cases, and a formula's intermediate steps cannot overflow f32.
 *
 * Conventions every function keeps:
 *  - a NaN argument gives a NaN (tests below are written so that NaN falls
 *    through to an arithmetic expression of x, or is checked explicitly);
 *  - infinite arguments give the formula's limit, not the NaN a naive
 *    `inf * 0` would (silu, gelu, hard_swish, softsign at -inf / inf);
 *  - a zero attribute times an infinite x counts as 0 (`scale`).
 * Attribute values reaching these functions are already validated (finite,
 * celu alpha != 0, shrink lambd >= 0).
 */
#ifndef KILN_LIB_OPS_UNARY_MATH_H
#define KILN_LIB_OPS_UNARY_MATH_H

#include <math.h>
#include <stdbool.h>

/* C11 has no M_PI; these are the correctly rounded doubles. */
#define UNARY_SQRT1_2 0.70710678118654752440   /* 1/sqrt(2) */
#define UNARY_SQRT_2_OVER_PI 0.79788456080286535588 /* sqrt(2/pi) */

/* a * x, except that a zero attribute gives 0 even for an infinite x. */
static inline double unary_scale(double a, double x)
{
    return a == 0.0 ? 0.0 : a * x;
}

/* sign(x): -1, +1, or x itself for ±0 and NaN (so sign(-0.0) = -0.0). */
static inline double unary_sign(double x)
{
    return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x;
}

/* 1/sqrt(x); both zeros give +inf (IEEE 754 rSqrt), negatives NaN. */
static inline double unary_rsqrt(double x)
{
    return x == 0.0 ? HUGE_VAL : 1.0 / sqrt(x);
}

static inline double unary_reciprocal(double x)
{
    return 1.0 / x;
}

/* Never forms exp(|x|): 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below (NaN takes
 * the second branch and stays NaN). */
static inline double unary_sigmoid(double x)
{
    if (x >= 0.0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/*
 * x * sigmoid(x); silu(-inf) is the limit -0.0. Below -708, e^x is
 * subnormal and has lost bits, so x e^x (1 + e^x is 1 there) is formed as
 * -e^(x + log(-x)) instead, rounded once.
 */
static inline double unary_silu(double x)
{
    if (isinf(x))
        return x > 0.0 ? x : -0.0;
    if (x < -708.0)
        return -exp(x + log(-x));
    return x * unary_sigmoid(x);
}

/* Clamp to [0, 1], NaN kept. */
static inline double unary_clamp01(double t)
{
    return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
}

/* max(0, min(1, alpha*x + beta)), with alpha*x + beta rounded once (fma):
 * near the lower knee the sum cancels, and a rounded product would leave
 * a large relative error in the small result. */
static inline double unary_hard_sigmoid(double x, double alpha, double beta)
{
    if (alpha == 0.0) /* beta, even for an infinite x; NaN still propagates */
        return isnan(x) ? x : unary_clamp01(beta);
    return unary_clamp01(fma(alpha, x, beta));
}

/* x * max(0, min(1, x/6 + 1/2)) evaluated as x * clamp((x + 3) / 6): x + 3
 * is exact near the knee at -3 where x/6 + 1/2 would cancel. The -inf
 * limit is -0.0. */
static inline double unary_hard_swish(double x)
{
    if (x == -HUGE_VAL)
        return -0.0;
    return x * unary_clamp01((x + 3.0) / 6.0);
}

/* relu keeps every x that is not below zero: relu(-0.0) = -0.0, NaN stays. */
static inline double unary_relu(double x)
{
    return x < 0.0 ? 0.0 : x;
}

static inline double unary_leaky_relu(double x, double alpha)
{
    return x < 0.0 ? unary_scale(alpha, x) : x;
}

/* alpha * (e^x - 1) below zero, via expm1 for accuracy near 0. */
static inline double unary_elu(double x, double alpha)
{
    return x < 0.0 ? alpha * expm1(x) : x;
}

/* gamma * (alpha * (e^x - 1)) for x <= 0, gamma * x above. */
static inline double unary_selu(double x, double alpha, double gamma)
{
    return x <= 0.0 ? gamma * (alpha * expm1(x)) : unary_scale(gamma, x);
}

/* max(0, x) + min(0, alpha * (e^(x/alpha) - 1)), alpha != 0. */
static inline double unary_celu(double x, double alpha)
{
    if (isnan(x))
        return x;
    double positive = x > 0.0 ? x : 0.0;
    double negative = alpha * expm1(x / alpha);
    return positive + (negative < 0.0 ? negative : 0.0);
}

/*
 * gelu, erf form: 0.5 x (1 + erf(x/sqrt 2)) written as 0.5 x erfc(-x/sqrt 2),
 * which has no cancellation for negative x. gelu(-inf) is the limit -0.0.
 */
static inline double unary_gelu_erf(double x)
{
    if (isinf(x))
        return x > 0.0 ? x : -0.0;
    return 0.5 * x * erfc(-x * UNARY_SQRT1_2);
}

/*
 * gelu, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), using
 * 1 + tanh(u) = 2 sigmoid(2u) so negative x cancel nothing: x sigmoid(2u).
 * x^3 may overflow to inf for |x| > ~1e102; sigmoid then saturates.
 */
static inline double unary_gelu_tanh(double x)
{
    if (isinf(x))
        return x > 0.0 ? x : -0.0;
    double u = UNARY_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
    return x * unary_sigmoid(2.0 * u);
}

/* log(1 + e^x) without overflow: x + log1p(e^-x) above 0, log1p(e^x) below. */
static inline double unary_softplus(double x)
{
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/*
 * mish: x tanh(softplus(x)). tanh(log(1 + e^x)) is ((1 + e^x)^2 - 1) /
 * ((1 + e^x)^2 + 1) = n / (n + 2) with n = e^x (e^x + 2), which forms no
 * softplus and cancels nothing: every term is positive. Below about -20
 * n / (n + 2) rounds to n / 2, and x n / 2 (n ~ 2 e^x) to x e^x, which for
 * x < -708 loses bits as silu's does, so it is formed as -e^(x + log(-x)).
 * Above 20, n + 2 is n in double and the result is x; inf gives inf, -inf
 * the limit -0.0.
 */
static inline double unary_mish(double x)
{
    if (isinf(x))
        return x > 0.0 ? x : -0.0;
    if (x > 20.0)
        return x;
    if (x < -708.0)
        return -exp(x + log(-x));
    double e = exp(x);
    double n = e * (e + 2.0);
    return x * (n / (n + 2.0));
}

/* x / (1 + |x|); ±inf give ±1. */
static inline double unary_softsign(double x)
{
    if (isinf(x))
        return x > 0.0 ? 1.0 : -1.0;
    return x / (1.0 + fabs(x));
}

/* x + bias below -lambd, x - bias above lambd, else 0 (lambd >= 0). */
static inline double unary_shrink(double x, double bias, double lambd)
{
    if (isnan(x))
        return x;
    return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;
}

/* x above alpha, else 0; NaN stays. */
static inline double unary_thresholded_relu(double x, double alpha)
{
    return x > alpha || isnan(x) ? x : 0.0;
}

/*
 * Round half to even, independent of the floating-point environment's
 * rounding mode: x - floor(x) is exact, and the result keeps x's sign so
 * round(-0.3) = -0.0. Infinities and NaN come back unchanged.
 */
static inline double unary_round_half_even(double x)
{
    double r = floor(x);
    double fraction = x - r;
    if (fraction > 0.5 || (fraction == 0.5 && fmod(r, 2.0) != 0.0))
        r += 1.0;
    return copysign(r, x);
}

/* Clamp with NaN kept (neither comparison holds for NaN). */
static inline double unary_clip(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

#endif
