/*
 * real_access.h — reading and writing one element of a real-valued
 * tensor as a double, for the reference kernels that compute in double
 * whatever they store (norm, pool, reduce, grid_sample, resize, einsum,
 * recurrent, gather, generate).
 *
 * The pair for f32/f64 is inline because it sits in those kernels' inner
 * loops; f16 and bf16 never reach it (KILN_HALF_IN_F32 widens them first).
 */
#ifndef KILN_LIB_REAL_ACCESS_H
#define KILN_LIB_REAL_ACCESS_H

#include <stdint.h>

#include "dtype.h"
#include "tensor.h"

/* Element `i` of f32 or f64 `data` (any other dtype is read as f64), widened to double exactly. */
static inline double kiln_load_real(kiln_dtype dtype, const void *data, uint64_t i)
{
    return dtype == KILN_F32 ? (double)((const float *)data)[i] : ((const double *)data)[i];
}

/* Store `value` as element `i` of f32 (rounded once, to nearest) or f64 (as is) `data`. */
static inline void kiln_store_real(kiln_dtype dtype, void *data, uint64_t i, double value)
{
    if (dtype == KILN_F32)
        ((float *)data)[i] = (float)value;
    else
        ((double *)data)[i] = value;
}

/* The same for element `i` of tensor `t`, for kernels that hold tensors rather than buffers. */
static inline double kiln_tensor_load_real(const kiln_tensor *t, uint64_t i)
{
    return kiln_load_real(t->dtype, t->data, i);
}

static inline void kiln_tensor_store_real(kiln_tensor *t, uint64_t i, double value)
{
    kiln_store_real(t->dtype, t->data, i, value);
}

/*
 * Store `value` converted to any element type: floats by rounding (f16
 * and bf16 to nearest even), integers by C's truncating conversion, bool
 * as value != 0. The value must fit the type (the callers prove it:
 * one_hot's on/off values, eye's 1, range's terms); other dtypes store
 * nothing.
 */
void kiln_store_converted(kiln_dtype dtype, void *data, uint64_t i, double value);

#endif
