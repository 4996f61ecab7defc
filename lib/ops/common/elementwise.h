/*
 * elementwise.h — building blocks for elementwise kernels: the dtype lists
 * (X-macros giving code, C type, the type arithmetic happens in, suffix)
 * and a broadcasting binary loop generator.
 */
#ifndef KILN_LIB_ELEMENTWISE_H
#define KILN_LIB_ELEMENTWISE_H

#include "broadcast.h"
#include "parallel.h"

/*
 * Define `static void NAME(const kiln_broadcast_plan *p, const void *a,
 * const void *b, void *out, uint64_t begin, uint64_t end)` computing
 * out = EXPR for the output elements [begin, end) (flat, row-major), where
 * EXPR reads `x` (from a) and `y` (from b), both of type T. A range may
 * start and end inside a row, so any split of the output can be run on
 * several threads (parallel.h).
 *
 * The last axis of an operand has element stride 1 or, broadcast, 0; the
 * inner loop is written once per combination so that each is a plain
 * counted loop over contiguous memory, which gcc vectorizes (KILN_SIMD).
 */
#define DEFINE_BINARY_LOOP(NAME, T, U, EXPR)                                                           \
    static void NAME(const kiln_broadcast_plan *p, const void *va, const void *vb, void *vo, uint64_t begin, \
                     uint64_t end)                                                                     \
    {                                                                                                  \
        const T *a = va;                                                                               \
        const T *b = vb;                                                                               \
        T *o = vo;                                                                                     \
        uint64_t inner = (uint64_t)p->inner, row = begin / inner;                                      \
        int64_t index[KILN_MAX_RANK], ia, ib;                                                          \
        kiln_broadcast_row_start(p, row, index, &ia, &ib);                                             \
        bool a_steps = p->rank && p->stride_a[p->rank - 1] != 0;                                       \
        bool b_steps = p->rank && p->stride_b[p->rank - 1] != 0;                                       \
        uint64_t from = begin % inner, done = begin;                                                   \
        while (done < end) {                                                                           \
            uint64_t to = end - done < inner - from ? from + (end - done) : inner;                     \
            T *orow = o + row * inner;                                                                 \
            const T *arow = a + ia, *brow = b + ib;                                                    \
            if (a_steps && b_steps) {                                                                  \
                KILN_SIMD for (uint64_t k = from; k < to; k++) {                                       \
                    T x = arow[k], y = brow[k];                                                        \
                    orow[k] = (EXPR);                                                                  \
                }                                                                                      \
            } else if (a_steps) {                                                                      \
                T y = brow[0];                                                                         \
                KILN_SIMD for (uint64_t k = from; k < to; k++) {                                       \
                    T x = arow[k];                                                                     \
                    orow[k] = (EXPR);                                                                  \
                }                                                                                      \
            } else if (b_steps) {                                                                      \
                T x = arow[0];                                                                         \
                KILN_SIMD for (uint64_t k = from; k < to; k++) {                                       \
                    T y = brow[k];                                                                     \
                    orow[k] = (EXPR);                                                                  \
                }                                                                                      \
            } else {                                                                                   \
                T x = arow[0], y = brow[0];                                                            \
                KILN_SIMD for (uint64_t k = from; k < to; k++)                                         \
                    orow[k] = (EXPR);                                                                  \
            }                                                                                          \
            done += to - from;                                                                         \
            from = 0;                                                                                  \
            row++;                                                                                     \
            if (done < end && p->rank > 1)                                                             \
                kiln_broadcast_next_row(p, index, &ia, &ib);                                           \
        }                                                                                              \
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
