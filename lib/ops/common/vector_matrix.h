/*
 * vector_matrix.h — one row times a matrix, f32: y = a B, the shape of
 * every projection of a decode step (one token: M = 1).
 *
 * Such a product reads each element of B once and does one multiply-add
 * with it, so it runs at the speed B streams from memory. oneDNN's matmul
 * primitives, built for M > 1, streamed a decoder's weights at about 25
 * GB/s here (its brgemm kernel over weights reordered into blocks, 41 us
 * for a 256 x 1024 weight); rows of B walked in order, four at a time into
 * the whole of y, about 30 GB/s (tests/bench/decoder, one thread).
 *
 * The sum of each element is y[n] = ((0 + a0 b0n + a1 b1n + a2 b2n + a3
 * b3n) + a4 b4n ...) in f32, four rows per step left to right: within
 * the bound spec/opset.md gives a fast path's product, and the same bits
 * on every CPU (no contraction into FMAs; KILN_VECTOR_CLONES). Columns
 * split over the threads, each a contiguous run of y.
 */
#ifndef KILN_LIB_VECTOR_MATRIX_H
#define KILN_LIB_VECTOR_MATRIX_H

#include <stdbool.h>
#include <stdint.h>

/* y[n] = sum over i < k of a[i] * b[i * n + j], for j < n; b row-major [k, n]; on up to `threads` threads. */
void kiln_vector_matrix_f32(const float *a, const float *b, float *y, int64_t k, int64_t n, uint32_t threads);

/*
 * A batch of one-row products read through element strides: an einsum's
 * product with M = 1 (ops/einsum.c), such as a decode step's attention,
 * q k^T and the probabilities times the values, one row per head, over
 * the cache where the state keeps it. Being kiln's own loops, a product
 * over a cache one row longer each token builds nothing (a oneDNN
 * primitive is made per shape). Two forms: b's rows contiguous (b_n = 1:
 * four rows at a time into y, as above) or b's columns and a contiguous
 * (b_k = a_k = 1: dot products summed in 16 lanes, then the lanes in
 * order, the same bits on any CPU). Batch items split over the threads.
 */
typedef struct kiln_vector_products {
    uint32_t batch_rank;
    int64_t batch[12];                                /* the batch axes' extents */
    int64_t a_batch[12], b_batch[12], y_batch[12];    /* their strides (0: broadcast) */
    int64_t k, n;
    int64_t a_k, b_k, b_n, y_n;                       /* strides along k and n */
} kiln_vector_products;

/**
 * y[item][j * y_n] = sum over i < k of a[item][i * a_k] * b[item][i * b_k + j * b_n].
 * @return false, computing nothing, when neither form fits the strides.
 */
bool kiln_vector_products_f32(const kiln_vector_products *p, const float *a, const float *b, float *y,
                              uint32_t threads);

#endif
