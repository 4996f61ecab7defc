/*
 * recurrent_f32.h — the f32 arithmetic of the recurrent layers' fast path
 * (lib/ops/recurrent.c, spec/ops/recurrent.md "Fast path"): matrices packed
 * in panels of 16 rows, a matrix-vector product over packed panels (the
 * per-step h·Rᵀ, and row by row the input projection x·Wᵀ of every
 * step), and the gate activations over arrays.
 *
 * Packed layout: a matrix of `rows` rows of `k` values becomes
 * ceil(rows / 16) panels; panel p holds rows 16p .. 16p+15 as k groups of
 * 16 values (the k-th value of each of its rows side by side), rows past
 * the end zero. So a product reads each panel once, front to back, and
 * keeps 16 sums per panel in one AVX-512 register (two AVX2 ones).
 *
 * Each function runs the widest copy this CPU has (AVX-512F, AVX2 with
 * FMA, or plain C), chosen at every call from the CPU's features.
 */
#ifndef KILN_LIB_RECURRENT_F32_H
#define KILN_LIB_RECURRENT_F32_H

#include <stdbool.h>
#include <stddef.h>

/* Rows per panel; also the padding unit of every per-gate array. */
enum { KILN_PANEL_ROWS = 16 };

/* The activations the recurrent ops take (spec/ops/recurrent.md). */
typedef enum kiln_recurrent_activation {
    KILN_RECURRENT_SIGMOID,
    KILN_RECURRENT_TANH,
    KILN_RECURRENT_RELU,
} kiln_recurrent_activation;

/* @return rows rounded up to a whole number of panels. */
size_t kiln_panel_rows(size_t rows);

/*
 * Pack `rows` rows of `k` f32 values (row r at m + r * k) into panels at
 * `packed`, which holds kiln_panel_rows(rows) * k floats.
 */
void kiln_pack_panels(const float *m, size_t rows, size_t k, float *packed);

/*
 * y[0 .. 16 * panels) = init + P · a for the `panels` panels of k values
 * each at `packed`, a vector a of k values. y may be init. The sums of
 * each row are formed in order of k with fused multiply-adds where the
 * CPU has them.
 */
void kiln_panels_gemv(const float *packed, size_t panels, size_t k, const float *a, const float *init, float *y);

/*
 * The same for `count` vectors: row v of y (at y + v * y_stride) is
 * init + v * init_stride (0: one init for all) + P · (a + v * a_stride).
 * Panels are taken four at a time across every vector, so a block of the
 * matrix stays in cache while the vectors stream past it.
 */
void kiln_panels_gemm(const float *packed, size_t panels, size_t k, const float *a, size_t a_stride, size_t count,
                      const float *init, size_t init_stride, float *y, size_t y_stride);

/*
 * v[i] = f(clamp(v[i], -clip, clip)) for i < n (clip INFINITY: no clamp).
 * sigmoid and tanh are within 2^-22 absolute of the exact function
 * (recurrent_f32.c); relu is exact. NaN stays NaN.
 */
void kiln_recurrent_activate(kiln_recurrent_activation f, float clip, float *v, size_t n);

/*
 * Tests only: run no copy wider than `bits` (512: AVX-512F, 256: AVX2 with
 * FMA, 128: plain C) from now on in this process, so that a test on an
 * AVX-512 machine checks every copy. Not thread-safe; 512 restores the
 * default.
 */
void kiln_recurrent_f32_limit_width(unsigned bits);

#endif
