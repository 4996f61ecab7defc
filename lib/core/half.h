/*
 * half.h — the two 16-bit float storage types, f16 (IEEE 754 binary16) and
 * bf16 (the top half of a binary32), and their exact conversions to and
 * from f32. kiln stores these types but computes in f32: an op widens its
 * inputs, computes, and narrows its result once (spec/opset.md).
 *
 * The conversions work on bit patterns with integer arithmetic only, so they
 * are the same on every host whatever its floating-point environment
 * (rounding mode, flush-to-zero) or compiler support for _Float16.
 */
#ifndef KILN_LIB_HALF_H
#define KILN_LIB_HALF_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

/* kiln_f16_to_f32 and kiln_bf16_to_f32 are public (<kiln/kiln.h>): tools decode half values too. */

/*
 * Narrow an f32 to the nearest f16, ties to even (IEEE 754 default
 * rounding): magnitudes from 65520 up (65504 plus half an ulp) become
 * infinity, tiny values become f16 subnormals or a zero of the same sign.
 * A NaN stays a NaN of the same sign: its top payload bits are kept and the
 * quiet bit is set, so a payload that would truncate to zero still is a NaN.
 */
uint16_t kiln_f32_to_f16(float value);


/*
 * Narrow an f32 to the nearest bf16, ties to even: values past the largest
 * finite bf16 plus half an ulp become infinity; a NaN stays a NaN of the
 * same sign, top payload bits kept and the quiet bit set.
 */
uint16_t kiln_f32_to_bf16(float value);

/* Widen `count` f16 patterns from `from` into `to`. */
void kiln_f16_to_f32_array(const uint16_t *from, float *to, size_t count);

/* Narrow `count` f32 values from `from` into f16 patterns at `to`. */
void kiln_f32_to_f16_array(const float *from, uint16_t *to, size_t count);

/* Widen `count` bf16 patterns from `from` into `to`. */
void kiln_bf16_to_f32_array(const uint16_t *from, float *to, size_t count);

/* Narrow `count` f32 values from `from` into bf16 patterns at `to`. */
void kiln_f32_to_bf16_array(const float *from, uint16_t *to, size_t count);

/*
 * An f64 rounded to odd in f32: the f32 nearer zero of its two neighbours,
 * lowest bit set unless the value is an f32 (NaN and infinities kept). It
 * exists to be narrowed once more: narrowing it to f16 or bf16 gives the
 * value correctly rounded from f64, which narrowing a nearest f32 would not
 * always (double rounding).
 */
float kiln_f64_to_f32_odd(double value);

/* An integer magnitude rounded to odd in f32, for the same use. */
float kiln_u64_to_f32_odd(uint64_t magnitude);

/* Narrow an f64 to the nearest f16 / bf16, ties to even, rounding once. */
uint16_t kiln_f64_to_f16(double value);
uint16_t kiln_f64_to_bf16(double value);

#endif
