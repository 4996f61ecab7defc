/*
 * elementwise.h — building blocks for elementwise kernels: the dtype lists
 * (X-macros giving code, C type, the type arithmetic happens in, suffix)
 * and a vectorizable row kernel for two operands, run by the one
 * broadcasting walk (binary_walk.h) that every elementwise op with more
 * than one operand uses.
 */
#ifndef KILN_LIB_ELEMENTWISE_H
#define KILN_LIB_ELEMENTWISE_H

#include "binary_walk.h"
#include "parallel.h"

/*
 * Define a row kernel (kiln_row_kernel, binary_walk.h) `NAME` computing
 * out[k] = EXPR for a row of n elements, where EXPR reads `x` (operand 0)
 * and `y` (operand 1), both of type T, and `NAME_chunk`, the walk with
 * that row compiled in (DEFINE_WALK_CHUNK_2).
 *
 * Operands are contiguous, so along a row each one steps by 1 or,
 * broadcast, by 0. The loop is written once per combination so that each
 * is a plain counted loop over contiguous memory, which gcc vectorizes
 * (KILN_SIMD); binary.c's rows index by `k * step` and are not.
 */
#define DEFINE_UNIT_STEP_ROW(NAME, T, EXPR)                                                            \
    KILN_VECTOR_CLONES static void NAME(const void *const *bases, const int64_t *offsets, const int64_t *steps, \
                     uint32_t count, void *out, int64_t n)                                             \
    {                                                                                                  \
        const T *a = (const T *)bases[0] + offsets[0];                                                 \
        const T *b = (const T *)bases[1] + offsets[1];                                                 \
        T *o = out;                                                                                    \
        (void)count;                                                                                   \
        if (steps[0] && steps[1]) {                                                                    \
            KILN_SIMD for (int64_t k = 0; k < n; k++) {                                                \
                T x = a[k], y = b[k];                                                                  \
                o[k] = (EXPR);                                                                         \
            }                                                                                          \
        } else if (steps[0]) {                                                                         \
            T y = b[0];                                                                                \
            KILN_SIMD for (int64_t k = 0; k < n; k++) {                                                \
                T x = a[k];                                                                            \
                o[k] = (EXPR);                                                                         \
            }                                                                                          \
        } else if (steps[1]) {                                                                         \
            T x = a[0];                                                                                \
            KILN_SIMD for (int64_t k = 0; k < n; k++) {                                                \
                T y = b[k];                                                                            \
                o[k] = (EXPR);                                                                         \
            }                                                                                          \
        } else {                                                                                       \
            T x = a[0], y = b[0];                                                                      \
            KILN_SIMD for (int64_t k = 0; k < n; k++)                                                  \
                o[k] = (EXPR);                                                                         \
        }                                                                                              \
    }                                                                                                  \
    DEFINE_WALK_CHUNK_2(NAME##_chunk, NAME)

/* U is the type arithmetic happens in: the float itself, or an unsigned
 * type at least as wide as int so that wrap-around is defined behaviour. */
#define FLOAT_DTYPES(X)                      \
    X(KILN_F32, float, float, f32)           \
    X(KILN_F64, double, double, f64)
#define INTEGER_DTYPES(X)                    \
    X(KILN_I8, int8_t, uint32_t, i8)         \
    X(KILN_I16, int16_t, uint32_t, i16)      \
    X(KILN_I32, int32_t, uint32_t, i32)      \
    X(KILN_I64, int64_t, uint64_t, i64)      \
    X(KILN_U8, uint8_t, uint32_t, u8)        \
    X(KILN_U16, uint16_t, uint32_t, u16)     \
    X(KILN_U32, uint32_t, uint32_t, u32)     \
    X(KILN_U64, uint64_t, uint64_t, u64)
#define ARITHMETIC_DTYPES(X) FLOAT_DTYPES(X) INTEGER_DTYPES(X)


#endif
