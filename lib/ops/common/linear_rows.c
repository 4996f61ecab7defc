/* linear_rows.c — one output row of 2-D linear interpolation, block by block (linear_rows.h). */
#include "linear_rows.h"

#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Columns [from, n) of the block. */
static void linear_sums_from(const kiln_linear_block *b, int64_t from, int64_t n)
{
    for (int64_t x = from; x < n; x++) {
        double sum = 0.0;
        sum += b->wy0 * b->wx0[x] * (double)b->top->first[x];
        if (b->wx1[x] != 0.0)
            sum += b->wy0 * b->wx1[x] * (double)b->top->second[x];
        if (b->wy1 != 0.0) {
            sum += b->wy1 * b->wx0[x] * (double)b->bottom->first[x];
            if (b->wx1[x] != 0.0)
                sum += b->wy1 * b->wx1[x] * (double)b->bottom->second[x];
        }
        b->out[x] = (float)sum;
    }
}

static void linear_sums_scalar(const kiln_linear_block *b, int64_t n)
{
    linear_sums_from(b, 0, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_LINEAR_COPIES 1
/*
 * The same sums eight columns at a time: the same products and adds in
 * the same order (no fused multiply-add), a second tap of weight 0 masked
 * out of the sum rather than added as 0 (0 * inf would be NaN, and
 * -0 + 0 is +0), so the results are the scalar loop's bit for bit.
 */
__attribute__((target("avx512f"))) static void linear_sums_avx512(const kiln_linear_block *b, int64_t n)
{
    const __m512d zero = _mm512_setzero_pd(), wy0 = _mm512_set1_pd(b->wy0), wy1 = _mm512_set1_pd(b->wy1);
    const bool two_rows = b->wy1 != 0.0;
    int64_t x = 0;
    for (; x + 8 <= n; x += 8) {
        __m512d w0 = _mm512_loadu_pd(b->wx0 + x), w1 = _mm512_loadu_pd(b->wx1 + x);
        __mmask8 second = _mm512_cmp_pd_mask(w1, zero, _CMP_NEQ_OQ);
        __m512d sum = _mm512_add_pd(zero, _mm512_mul_pd(_mm512_mul_pd(wy0, w0),
                                                        _mm512_cvtps_pd(_mm256_loadu_ps(b->top->first + x))));
        sum = _mm512_mask_add_pd(sum, second, sum,
                                 _mm512_mul_pd(_mm512_mul_pd(wy0, w1), _mm512_cvtps_pd(_mm256_loadu_ps(b->top->second + x))));
        if (two_rows) {
            sum = _mm512_add_pd(sum, _mm512_mul_pd(_mm512_mul_pd(wy1, w0), _mm512_cvtps_pd(_mm256_loadu_ps(b->bottom->first + x))));
            sum = _mm512_mask_add_pd(
                sum, second, sum, _mm512_mul_pd(_mm512_mul_pd(wy1, w1), _mm512_cvtps_pd(_mm256_loadu_ps(b->bottom->second + x))));
        }
        _mm256_storeu_ps(b->out + x, _mm512_cvtpd_ps(sum));
    }
    linear_sums_from(b, x, n);
}

/* AVX2: four columns at a time, the same operations. */
__attribute__((target("avx2"))) static void linear_sums_avx2(const kiln_linear_block *b, int64_t n)
{
    const __m256d zero = _mm256_setzero_pd(), wy0 = _mm256_set1_pd(b->wy0), wy1 = _mm256_set1_pd(b->wy1);
    const bool two_rows = b->wy1 != 0.0;
    int64_t x = 0;
    for (; x + 4 <= n; x += 4) {
        __m256d w0 = _mm256_loadu_pd(b->wx0 + x), w1 = _mm256_loadu_pd(b->wx1 + x);
        __m256d second = _mm256_cmp_pd(w1, zero, _CMP_NEQ_OQ);
        __m256d sum = _mm256_add_pd(zero, _mm256_mul_pd(_mm256_mul_pd(wy0, w0), _mm256_cvtps_pd(_mm_loadu_ps(b->top->first + x))));
        __m256d with = _mm256_add_pd(sum, _mm256_mul_pd(_mm256_mul_pd(wy0, w1), _mm256_cvtps_pd(_mm_loadu_ps(b->top->second + x))));
        sum = _mm256_blendv_pd(sum, with, second);
        if (two_rows) {
            sum = _mm256_add_pd(sum, _mm256_mul_pd(_mm256_mul_pd(wy1, w0), _mm256_cvtps_pd(_mm_loadu_ps(b->bottom->first + x))));
            with = _mm256_add_pd(sum, _mm256_mul_pd(_mm256_mul_pd(wy1, w1), _mm256_cvtps_pd(_mm_loadu_ps(b->bottom->second + x))));
            sum = _mm256_blendv_pd(sum, with, second);
        }
        _mm_storeu_ps(b->out + x, _mm256_cvtpd_ps(sum));
    }
    linear_sums_from(b, x, n);
}
#endif

static unsigned width_limit = 512;

void kiln_linear_rows_limit_width(unsigned bits)
{
    width_limit = bits;
}

void kiln_linear_sums(const kiln_linear_block *b, int64_t n)
{
#ifdef HAVE_LINEAR_COPIES
    if (width_limit >= 512 && __builtin_cpu_supports("avx512f")) {
        linear_sums_avx512(b, n);
        return;
    }
    if (width_limit >= 256 && __builtin_cpu_supports("avx2")) {
        linear_sums_avx2(b, n);
        return;
    }
#endif
    linear_sums_scalar(b, n);
}

void kiln_linear_block_reset(kiln_linear_block *b)
{
    b->slots[0].row = b->slots[1].row = NULL;
}

const kiln_gathered_row *kiln_linear_gather(kiln_linear_block *b, const kiln_gathered_row *keep, const float *row,
                                            const int64_t *x0, const int64_t *x1, int64_t begin, int64_t end)
{
    for (int i = 0; i < 2; i++)
        if (b->slots[i].row == row && b->slots[i].begin == begin && b->slots[i].end == end)
            return &b->slots[i];
    kiln_gathered_row *g = &b->slots[0] == keep ? &b->slots[1] : &b->slots[0];
    for (int64_t x = 0; x < end - begin; x++) {
        g->first[x] = row[x0[begin + x]];
        g->second[x] = row[x1[begin + x]];
    }
    g->row = row, g->begin = begin, g->end = end;
    return g;
}
