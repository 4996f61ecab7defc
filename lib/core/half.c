/* half.c — f16 and bf16 to and from f32 on bit patterns (see half.h). */
#include "half.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/* memcpy, not a union or a pointer cast: the one type pun C defines everywhere. */
static uint32_t f32_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float f32_from_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* m / 2^shift rounded to nearest, ties to even; 1 <= shift <= 31. */
static uint32_t shift_right_rounding_even(uint32_t m, unsigned shift)
{
    uint32_t quotient = m >> shift;
    uint32_t remainder = m & ((UINT32_C(1) << shift) - 1);
    uint32_t half = UINT32_C(1) << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1)))
        quotient++;
    return quotient;
}

float kiln_f16_to_f32(uint16_t bits)
{
    uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
    uint32_t exponent = (bits >> 10) & 0x1fu;
    uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1f) /* infinity, or NaN with its payload moved to the top of the f32 payload */
        return f32_from_bits(sign | UINT32_C(0x7f800000) | (mantissa << 13));
    if (exponent != 0) /* normal: rebias 15 -> 127 */
        return f32_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
    if (mantissa == 0)
        return f32_from_bits(sign);
    /*
     * Subnormal: mantissa * 2^-24, a normal f32. With the top set bit of the
     * mantissa at position p, the value is 1.f * 2^(p - 24), so the biased
     * exponent is p + 103 and the fraction is the bits below p.
     */
    unsigned top = 9;
    while (!(mantissa & (UINT32_C(1) << top)))
        top--;
    uint32_t fraction = (mantissa << (10 - top)) & 0x3ffu;
    return f32_from_bits(sign | ((top + 103) << 23) | (fraction << 13));
}

uint16_t kiln_f32_to_f16(float value)
{
    uint32_t bits = f32_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t magnitude = bits & UINT32_C(0x7fffffff);
    if (magnitude > UINT32_C(0x7f800000)) /* NaN: keep the top payload bits, set the quiet bit */
        return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    /* 0x477ff000 is 65520, halfway between 65504 (odd mantissa) and 65536: ties go up, to infinity. */
    if (magnitude >= UINT32_C(0x477ff000))
        return (uint16_t)(sign | 0x7c00u);
    if (magnitude >= UINT32_C(0x38800000)) {
        /*
         * Normal f16 (2^-14 and up): rebias 127 -> 15 and drop 13 fraction
         * bits; a carry out of the fraction bumps the exponent, as it should.
         */
        uint32_t unrounded = (((magnitude >> 23) - 112) << 23) | (magnitude & UINT32_C(0x7fffff));
        return (uint16_t)(sign | shift_right_rounding_even(unrounded, 13));
    }
    /* 2^-25 is halfway between 0 and the smallest subnormal 2^-24: ties go to the even one, zero. */
    if (magnitude <= UINT32_C(0x33000000))
        return sign;
    /*
     * Subnormal f16: the result is round(value / 2^-24). value is 1.f * 2^(e - 127)
     * = significand * 2^(e - 150), so the quotient is significand / 2^(126 - e),
     * with 126 - e between 14 and 24 here. Rounding up from the largest
     * subnormal gives 0x400, the smallest normal, which is right.
     */
    uint32_t exponent = magnitude >> 23;
    uint32_t significand = (magnitude & UINT32_C(0x7fffff)) | UINT32_C(0x800000);
    return (uint16_t)(sign | shift_right_rounding_even(significand, 126 - exponent));
}

float kiln_bf16_to_f32(uint16_t bits)
{
    return f32_from_bits((uint32_t)bits << 16);
}

uint16_t kiln_f32_to_bf16(float value)
{
    uint32_t bits = f32_bits(value);
    if ((bits & UINT32_C(0x7fffffff)) > UINT32_C(0x7f800000)) /* NaN: keep it one whatever the payload */
        return (uint16_t)((bits >> 16) | 0x40u);
    /* Dropping 16 bits, ties to even; a carry into the exponent, up to infinity, is the right result. */
    uint32_t lowest_kept = (bits >> 16) & 1u;
    return (uint16_t)((bits + UINT32_C(0x7fff) + lowest_kept) >> 16);
}

void kiln_f16_to_f32_array(const uint16_t *from, float *to, size_t count)
{
    for (size_t i = 0; i < count; i++)
        to[i] = kiln_f16_to_f32(from[i]);
}

void kiln_f32_to_f16_array(const float *from, uint16_t *to, size_t count)
{
    for (size_t i = 0; i < count; i++)
        to[i] = kiln_f32_to_f16(from[i]);
}

void kiln_bf16_to_f32_array(const uint16_t *from, float *to, size_t count)
{
    for (size_t i = 0; i < count; i++)
        to[i] = kiln_bf16_to_f32(from[i]);
}

void kiln_f32_to_bf16_array(const float *from, uint16_t *to, size_t count)
{
    for (size_t i = 0; i < count; i++)
        to[i] = kiln_f32_to_bf16(from[i]);
}

/*
 * Round to odd: the f32 nearer zero of the two around `value`, with its
 * lowest bit set when `value` is not an f32. Rounding that f32 to a format
 * at least two bits narrower (f16: 11 bits, bf16: 8, against f32's 24, on a
 * grid that is finer everywhere, subnormals included) gives the same result
 * as rounding `value` directly: the odd bit stands for "something was
 * dropped" and can never make a tie. Only the default conversion's choice
 * between the two neighbours is used, so any IEEE rounding mode gives the
 * same answer.
 */
static float round_to_odd(float nearby, bool exact, bool beyond)
{
    if (exact)
        return nearby;
    float truncated = beyond ? nextafterf(nearby, 0.0f) : nearby;
    return f32_from_bits(f32_bits(truncated) | 1u);
}

float kiln_f64_to_f32_odd(double value)
{
    if (isnan(value) || isinf(value))
        return (float)value;
    /* Past the f32 range the neighbour nearer zero is FLT_MAX, whose last
     * bit is already odd; converting such a value would be undefined. */
    if (fabs(value) > FLT_MAX)
        return value < 0 ? -FLT_MAX : FLT_MAX;
    float nearby = (float)value;
    return round_to_odd(nearby, (double)nearby == value, fabs((double)nearby) > fabs(value));
}

float kiln_u64_to_f32_odd(uint64_t magnitude)
{
    if (magnitude < (UINT64_C(1) << 24))
        return (float)magnitude;
    int shift = 0;
    while (magnitude >> shift >= (UINT64_C(1) << 24))
        shift++;
    uint64_t kept = magnitude >> shift;
    if (magnitude & ((UINT64_C(1) << shift) - 1))
        kept |= 1;
    return ldexpf((float)kept, shift); /* 24 significant bits: exact */
}

uint16_t kiln_f64_to_f16(double value)
{
    return kiln_f32_to_f16(kiln_f64_to_f32_odd(value));
}

uint16_t kiln_f64_to_bf16(double value)
{
    return kiln_f32_to_bf16(kiln_f64_to_f32_odd(value));
}
