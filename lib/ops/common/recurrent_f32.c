/*
 * recurrent_f32.c — packed panels, their products with vectors, and the
 * gate activations in f32, for the recurrent fast path (recurrent_f32.h).
 *
 * Why a hand-written product rather than oneDNN: each step of a layer
 * multiplies one small matrix (R, G·H x H) by the previous state, a few
 * tens of thousands of multiply-adds; a oneDNN call per step costs
 * microseconds of dispatch and allocates its argument maps, where this
 * loop over R packed once runs the step in about 1 µs for G·H = 512,
 * H = 128 (AVX-512). The input projection of every step is the same
 * product taken row by row, the matrix block in cache (kiln_panels_gemm).
 */
#include "recurrent_f32.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_COPIES 1
#endif

size_t kiln_panel_rows(size_t rows)
{
    return (rows + KILN_PANEL_ROWS - 1) / KILN_PANEL_ROWS * KILN_PANEL_ROWS;
}

void kiln_pack_panels(const float *m, size_t rows, size_t k, float *packed)
{
    size_t panels = kiln_panel_rows(rows) / KILN_PANEL_ROWS;
    for (size_t p = 0; p < panels; p++) {
        float *panel = packed + p * KILN_PANEL_ROWS * k;
        for (size_t l = 0; l < KILN_PANEL_ROWS; l++) {
            size_t r = p * KILN_PANEL_ROWS + l;
            for (size_t j = 0; j < k; j++)
                panel[j * KILN_PANEL_ROWS + l] = r < rows ? m[r * k + j] : 0.0f;
        }
    }
}

/* ------------------------------------------------------------ products */

/* Plain C: 16 sums per panel in order of k (the compiler vectorizes the 16). */
static void gemv_baseline(const float *packed, size_t panels, size_t k, const float *a, const float *init, float *y)
{
    for (size_t p = 0; p < panels; p++) {
        const float *panel = packed + p * KILN_PANEL_ROWS * k;
        float sum[KILN_PANEL_ROWS];
        memcpy(sum, init + p * KILN_PANEL_ROWS, sizeof sum);
        for (size_t j = 0; j < k; j++)
            for (size_t l = 0; l < KILN_PANEL_ROWS; l++)
                sum[l] += a[j] * panel[j * KILN_PANEL_ROWS + l];
        memcpy(y + p * KILN_PANEL_ROWS, sum, sizeof sum);
    }
}

#ifdef HAVE_X86_COPIES
/*
 * Four panels at once: four independent chains of fused multiply-adds
 * (one alone waits on the FMA latency at every k), 64 rows per pass over
 * the vector.
 */
__attribute__((target("avx512f"))) static void gemv_avx512(const float *packed, size_t panels, size_t k,
                                                          const float *a, const float *init, float *y)
{
    const size_t step = KILN_PANEL_ROWS * k;
    size_t p = 0;
    for (; p + 4 <= panels; p += 4) {
        const float *m = packed + p * step;
        __m512 s0 = _mm512_loadu_ps(init + p * 16), s1 = _mm512_loadu_ps(init + p * 16 + 16);
        __m512 s2 = _mm512_loadu_ps(init + p * 16 + 32), s3 = _mm512_loadu_ps(init + p * 16 + 48);
        for (size_t j = 0; j < k; j++) {
            __m512 v = _mm512_set1_ps(a[j]);
            s0 = _mm512_fmadd_ps(v, _mm512_loadu_ps(m + j * 16), s0);
            s1 = _mm512_fmadd_ps(v, _mm512_loadu_ps(m + step + j * 16), s1);
            s2 = _mm512_fmadd_ps(v, _mm512_loadu_ps(m + 2 * step + j * 16), s2);
            s3 = _mm512_fmadd_ps(v, _mm512_loadu_ps(m + 3 * step + j * 16), s3);
        }
        _mm512_storeu_ps(y + p * 16, s0);
        _mm512_storeu_ps(y + p * 16 + 16, s1);
        _mm512_storeu_ps(y + p * 16 + 32, s2);
        _mm512_storeu_ps(y + p * 16 + 48, s3);
    }
    for (; p < panels; p++) {
        const float *m = packed + p * step;
        __m512 s = _mm512_loadu_ps(init + p * 16);
        for (size_t j = 0; j < k; j++)
            s = _mm512_fmadd_ps(_mm512_set1_ps(a[j]), _mm512_loadu_ps(m + j * 16), s);
        _mm512_storeu_ps(y + p * 16, s);
    }
}

/* AVX2: a panel is two 8-lane registers; two panels (four chains) at once. */
__attribute__((target("avx2,fma"))) static void gemv_avx2(const float *packed, size_t panels, size_t k,
                                                         const float *a, const float *init, float *y)
{
    const size_t step = KILN_PANEL_ROWS * k;
    size_t p = 0;
    for (; p + 2 <= panels; p += 2) {
        const float *m = packed + p * step;
        __m256 s0 = _mm256_loadu_ps(init + p * 16), s1 = _mm256_loadu_ps(init + p * 16 + 8);
        __m256 s2 = _mm256_loadu_ps(init + p * 16 + 16), s3 = _mm256_loadu_ps(init + p * 16 + 24);
        for (size_t j = 0; j < k; j++) {
            __m256 v = _mm256_set1_ps(a[j]);
            s0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + j * 16), s0);
            s1 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + j * 16 + 8), s1);
            s2 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + step + j * 16), s2);
            s3 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + step + j * 16 + 8), s3);
        }
        _mm256_storeu_ps(y + p * 16, s0);
        _mm256_storeu_ps(y + p * 16 + 8, s1);
        _mm256_storeu_ps(y + p * 16 + 16, s2);
        _mm256_storeu_ps(y + p * 16 + 24, s3);
    }
    for (; p < panels; p++) {
        const float *m = packed + p * step;
        __m256 s0 = _mm256_loadu_ps(init + p * 16), s1 = _mm256_loadu_ps(init + p * 16 + 8);
        for (size_t j = 0; j < k; j++) {
            __m256 v = _mm256_set1_ps(a[j]);
            s0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + j * 16), s0);
            s1 = _mm256_fmadd_ps(v, _mm256_loadu_ps(m + j * 16 + 8), s1);
        }
        _mm256_storeu_ps(y + p * 16, s0);
        _mm256_storeu_ps(y + p * 16 + 8, s1);
    }
}
#endif

static unsigned width_limit = 512;

void kiln_recurrent_f32_limit_width(unsigned bits)
{
    width_limit = bits;
}

/* The widest copy this CPU runs (and the test limit allows): 512, 256 or 128 bits. */
static unsigned copy_width(void)
{
#ifdef HAVE_X86_COPIES
    if (width_limit >= 512 && __builtin_cpu_supports("avx512f"))
        return 512;
    if (width_limit >= 256 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 256;
#endif
    return 128;
}

typedef void (*gemv_fn)(const float *, size_t, size_t, const float *, const float *, float *);

static gemv_fn widest_gemv(void)
{
#ifdef HAVE_X86_COPIES
    unsigned width = copy_width();
    if (width == 512)
        return gemv_avx512;
    if (width == 256)
        return gemv_avx2;
#endif
    return gemv_baseline;
}

void kiln_panels_gemv(const float *packed, size_t panels, size_t k, const float *a, const float *init, float *y)
{
    widest_gemv()(packed, panels, k, a, init, y);
}

void kiln_panels_gemm(const float *packed, size_t panels, size_t k, const float *a, size_t a_stride, size_t count,
                      const float *init, size_t init_stride, float *y, size_t y_stride)
{
    gemv_fn gemv = widest_gemv();
    for (size_t p = 0; p < panels; p += 4) {
        size_t block = panels - p < 4 ? panels - p : 4;
        for (size_t v = 0; v < count; v++)
            gemv(packed + p * KILN_PANEL_ROWS * k, block, k, a + v * a_stride,
                 init + v * init_stride + p * KILN_PANEL_ROWS, y + v * y_stride + p * KILN_PANEL_ROWS);
    }
}

/* --------------------------------------------------------- activations */

/*
 * e^x in f32, Cephes' expf: x = n ln2 + r with |r| <= ln2/2 (ln2 split in
 * two so n ln2 is exact), e^r by a degree-7 polynomial, times 2^n built in
 * the exponent bits; relative error under 2^-22 on [-87.3, 88]. x is
 * clamped to that range first (e^-87.3 is about FLT_MIN: the activations
 * below only ever add it to 1). NaN gives NaN. n is rounded by adding
 * 1.5 * 2^23 (its low bits then hold n) rather than by floorf, which GCC
 * does not vectorize below SSE4.1 and left this loop scalar.
 */
/*
 * `yes` when `condition`, else `no`, by masking bits. A ternary on floats
 * whose arms are computed left the AVX2 copies of the loops below scalar:
 * GCC turned it into a branch around the arm's arithmetic and would not
 * if-convert floating-point operations that may trap (AVX-512 masks them).
 */
static inline __attribute__((always_inline)) float select_f32(bool condition, float yes, float no)
{
    uint32_t a, b, mask = (uint32_t)0 - (uint32_t)condition;
    memcpy(&a, &yes, sizeof a);
    memcpy(&b, &no, sizeof b);
    a = (a & mask) | (b & ~mask);
    memcpy(&yes, &a, sizeof yes);
    return yes;
}

static inline __attribute__((always_inline)) float expf_f32(float x)
{
    const float shifter = 12582912.0f; /* 1.5 * 2^23 */
    float finite = select_f32(x == x, x, 0.0f);
    finite = select_f32(finite > 88.0f, 88.0f, finite);
    finite = select_f32(finite < -87.3f, -87.3f, finite);
    float shifted = finite * 1.44269504088896341f + shifter;
    uint32_t shifted_bits, shifter_bits;
    memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
    memcpy(&shifter_bits, &shifter, sizeof shifter_bits);
    float n = shifted - shifter;
    float r = finite - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    /* n in -126 .. 127: its bits plus 127 in the exponent field of 2^n */
    uint32_t bits = (shifted_bits - shifter_bits + 127u) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return select_f32(x == x, p * scale, x);
}

static inline __attribute__((always_inline)) float clip_f32(float v, float clip)
{
    return v > clip ? clip : v < -clip ? -clip : v;
}

static inline __attribute__((always_inline)) float sigmoid_f32(float v)
{
    return 1.0f / (1.0f + expf_f32(-v));
}

/*
 * tanh |v| = (1 - e) / (1 + e), e = e^-2|v|, which cancels near 0: there
 * (|v| < 1/8) the odd Taylor series to v^7 instead, whose next term is
 * under 2^-24 |v|.
 */
static inline __attribute__((always_inline)) float tanh_f32(float v)
{
    float a = fabsf(v);
    float e = expf_f32(-2.0f * a);
    float large = (1.0f - e) / (1.0f + e);
    float z = v * v;
    float small = v * (1.0f + z * (-0.333333333f + z * (0.133333333f + z * -0.053968254f)));
    return select_f32(a < 0.125f, small, copysignf(large, v));
}

static inline __attribute__((always_inline)) float relu_f32(float v)
{
    return v > 0 ? v : (v < 0 ? 0.0f : v); /* NaN stays NaN, -0 stays -0, as the reference */
}

#define ACTIVATION_LOOPS(SUFFIX, TARGET)                                                            \
    TARGET static void activate_##SUFFIX(kiln_recurrent_activation f, float clip, float *v, size_t n) \
    {                                                                                               \
        switch (f) {                                                                                \
        case KILN_RECURRENT_SIGMOID:                                                                \
            KILN_SIMD for (size_t i = 0; i < n; i++) v[i] = sigmoid_f32(clip_f32(v[i], clip));      \
            break;                                                                                  \
        case KILN_RECURRENT_TANH:                                                                   \
            KILN_SIMD for (size_t i = 0; i < n; i++) v[i] = tanh_f32(clip_f32(v[i], clip));         \
            break;                                                                                  \
        default:                                                                                    \
            KILN_SIMD for (size_t i = 0; i < n; i++) v[i] = relu_f32(clip_f32(v[i], clip));         \
            break;                                                                                  \
        }                                                                                           \
    }

ACTIVATION_LOOPS(baseline, )
#ifdef HAVE_X86_COPIES
ACTIVATION_LOOPS(avx2, __attribute__((target("avx2,fma"))))
#if defined(__clang__)
ACTIVATION_LOOPS(avx512, __attribute__((target("avx512f"))))
#else
ACTIVATION_LOOPS(avx512, __attribute__((target("avx512f", "prefer-vector-width=512"))))
#endif
#endif

void kiln_recurrent_activate(kiln_recurrent_activation f, float clip, float *v, size_t n)
{
#ifdef HAVE_X86_COPIES
    unsigned width = copy_width();
    if (width == 512) {
        activate_avx512(f, clip, v, n);
        return;
    }
    if (width == 256) {
        activate_avx2(f, clip, v, n);
        return;
    }
#endif
    activate_baseline(f, clip, v, n);
}
