/*
 * elementwise.h — building blocks for elementwise kernels: the dtype lists
 * (X-macros giving code, C type, the type arithmetic happens in, suffix)
 * and a broadcasting binary loop generator.
 */
#ifndef KILN_LIB_ELEMENTWISE_H
#define KILN_LIB_ELEMENTWISE_H

#include "broadcast.h"

/*
 * Define `static void NAME(const kiln_broadcast_plan *p, const void *a,
 * const void *b, void *out)` computing out = EXPR for every element, where
 * EXPR reads `x` (from a) and `y` (from b), both of type T.
 */
#define DEFINE_BINARY_LOOP(NAME, T, U, EXPR)                                                     \
    static void NAME(const kiln_broadcast_plan *p, const void *va, const void *vb, void *vo)          \
    {                                                                                            \
        const T *a = va;                                                                         \
        const T *b = vb;                                                                         \
        T *o = vo;                                                                               \
        int64_t index[KILN_MAX_RANK] = {0};                                                      \
        int64_t ia = 0, ib = 0;                                                                  \
        int64_t sa = p->rank ? p->stride_a[p->rank - 1] : 0;                                     \
        int64_t sb = p->rank ? p->stride_b[p->rank - 1] : 0;                                     \
        for (uint64_t row = 0; row < p->rows; row++) {                                           \
            T *orow = o + row * (uint64_t)p->inner;                                              \
            for (int64_t k = 0; k < p->inner; k++) {                                             \
                T x = a[ia + k * sa];                                                            \
                T y = b[ib + k * sb];                                                            \
                orow[k] = (EXPR);                                                                \
            }                                                                                    \
            if (p->rank > 1)                                                                     \
                kiln_broadcast_next_row(p, index, &ia, &ib);                                                 \
        }                                                                                        \
    }

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
