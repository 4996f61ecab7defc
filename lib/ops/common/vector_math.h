/*
 * vector_math.h — the vectorizable f32 fast paths of exp, erf, gelu, the
 * sigmoid and tanh families of activations, and softmax
 * (spec/opset.md, "Fast paths": `vector-math`).
 *
 * Why: the reference kernels evaluate every f32 element in double through
 * libm (unary_math.h), one call per element, which no compiler turns
 * into SIMD code; in a transformer layer exp and erf then take more time
 * than some of its matrix products. These loops evaluate the same
 * functions with polynomials in double, straight-line code that the
 * compiler vectorizes, and round once to f32 like the reference.
 *
 * Accuracy: each polynomial's relative error is below 1e-13 (exp below
 * 1e-14), far below half an f32 ulp (2^-24, about 6e-8), so a result is
 * the reference's f32 value or one of its two neighbours: at most 1 ulp
 * from the reference kernel, and bit-identical to it for almost every
 * input (tests/ops/test_vector_math.c counts both). Special values are the
 * reference's exactly: NaN gives NaN, exp(-inf) = 0, exp(inf) = inf,
 * erf(±inf) = ±1, erf(±0) = ±0, overflow to inf and underflow to
 * subnormals and 0 as the reference's double-to-f32 rounding gives them.
 *
 * The loops use the same operations in the same order on every CPU (no
 * fused multiply-add, no reassociation; an AVX2 copy only runs more lanes
 * at once), so their results do not depend on the machine.
 */
#ifndef KILN_LIB_VECTOR_MATH_H
#define KILN_LIB_VECTOR_MATH_H

#include <stdint.h>

/* out[i] = exp(in[i]) for i < n, within 1 ulp of (float)exp((double)in[i]). */
void kiln_vector_exp_f32(const float *in, float *out, uint64_t n);

/* out[i] = erf(in[i]) for i < n, within 1 ulp of (float)erf((double)in[i]). */
void kiln_vector_erf_f32(const float *in, float *out, uint64_t n);

/*
 * out[i] = gelu(in[i]) (erf form) for i < n, within 1 ulp of the reference
 * kernel's 0.5 x erfc(-x / sqrt 2); for x < -3.5 and NaN exactly it.
 */
void kiln_vector_gelu_f32(const float *in, float *out, uint64_t n);

/*
 * The activations below: out[i] = f(in[i]) for i < n, each within 1 ulp of
 * its reference kernel (unary_math.h, evaluated in double and rounded once
 * to f32), special values exactly the reference's. sigmoid, silu, tanh,
 * gelu's tanh form, elu and selu evaluate e^x by the exp polynomial above
 * (and e^x - 1 near 0 by its own Taylor series); hard_swish and
 * hard_sigmoid are the reference's own operations as selects, so they are
 * its values bit for bit. Coefficients are already validated (finite).
 */
void kiln_vector_sigmoid_f32(const float *in, float *out, uint64_t n);
void kiln_vector_silu_f32(const float *in, float *out, uint64_t n);
void kiln_vector_tanh_f32(const float *in, float *out, uint64_t n);
void kiln_vector_gelu_tanh_f32(const float *in, float *out, uint64_t n);
void kiln_vector_hard_swish_f32(const float *in, float *out, uint64_t n);
void kiln_vector_hard_sigmoid_f32(const float *in, float *out, uint64_t n, double alpha, double beta);
void kiln_vector_elu_f32(const float *in, float *out, uint64_t n, double alpha);
void kiln_vector_selu_f32(const float *in, float *out, uint64_t n, double alpha, double gamma);

/*
 * Softmax of one contiguous slice of `extent` >= 1 elements, as the
 * reference computes it (shift by the slice maximum, NaN if the slice holds
 * a NaN, sum in double, exp(x - max) / sum rounded once): each result is
 * within 1 ulp of the reference's. `in` and `out` may be the same buffer.
 */
void kiln_vector_softmax_f32(const float *in, float *out, uint64_t extent);

/*
 * Softmax along an axis that is not the innermost: `inner` slices of
 * `extent` >= 1 elements each, element k of slice i at in[k * inner + i]
 * (one block of the outer axes). Each slice as the reference computes it
 * (its shift and NaN rule, its sum in double in the order of k,
 * exp(x - shift) / sum rounded once), so each result is within 1 ulp of
 * the reference's; the slices are computed side by side in SIMD lanes.
 * `in` and `out` may be the same buffer.
 */
void kiln_vector_softmax_columns_f32(const float *in, float *out, uint64_t extent, uint64_t inner);

/*
 * The sum of in[0..n) in double, in 16 partial sums side by side (SIMD
 * lanes) added in a fixed order: the same bits on every CPU, not the bits
 * of an in-order sum. Each partial sum has the in-order sum's error bound
 * (n * 2^-53 * sum |x|, far below f32's), so a mean or sum rounded to f32
 * from it meets the bound of spec/opset.md's reduce_sum and reduce_mean
 * row; NaN and infinities propagate as in any order.
 */
double kiln_vector_sum_f32(const float *in, uint64_t n);

#endif
