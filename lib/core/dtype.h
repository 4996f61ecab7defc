/*
 * dtype.h — classes of element types, shared by shape rules and kernels
 * (names, sizes and support are public: kiln/kiln.h).
 */
#ifndef KILN_LIB_DTYPE_H
#define KILN_LIB_DTYPE_H

#include <stdbool.h>

#include <kiln/kiln.h>

/* f32, f64, f16 or bf16. */
bool kiln_dtype_is_floating(kiln_dtype dtype);
/* A signed or unsigned integer type (bool is not one). */
bool kiln_dtype_is_integer(kiln_dtype dtype);
/* Floating or integer: a type that holds numbers to compute with. */
bool kiln_dtype_is_arithmetic(kiln_dtype dtype);
/* The half-precision storage types, f16 and bf16 (computed in f32: ops/common/half_compute.h). */
bool kiln_dtype_is_half(kiln_dtype dtype);

#endif
