/* vector_matrix.c — see vector_matrix.h. */
#include "vector_matrix.h"

#include <string.h>

#include "parallel.h"

typedef struct vector_matrix_job {
    const float *a, *b;
    float *y;
    int64_t k, n;
} vector_matrix_job;

/* Columns [begin, end) of y, the rows of b four at a time. */
KILN_VECTOR_CLONES static void columns(const void *job_pointer, uint64_t begin, uint64_t end)
{
    const vector_matrix_job *job = job_pointer;
    const float *a = job->a;
    int64_t k = job->k, n = job->n, width = (int64_t)(end - begin);
    float *y = job->y + begin;
    const float *b = job->b + begin;
    memset(y, 0, (size_t)width * sizeof *y);
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
        const float *r0 = b + i * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        float a0 = a[i], a1 = a[i + 1], a2 = a[i + 2], a3 = a[i + 3];
        KILN_SIMD
        for (int64_t j = 0; j < width; j++)
            y[j] += a0 * r0[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j];
    }
    for (; i < k; i++) {
        const float *r = b + i * n;
        float ai = a[i];
        KILN_SIMD
        for (int64_t j = 0; j < width; j++)
            y[j] += ai * r[j];
    }
}

void kiln_vector_matrix_f32(const float *a, const float *b, float *y, int64_t k, int64_t n, uint32_t threads)
{
    vector_matrix_job job = {a, b, y, k, n};
    if ((uint64_t)k * (uint64_t)n < kiln_parallel_min_multiply_adds())
        threads = 1;
    kiln_parallel_chunks_from((uint64_t)n, threads, 0, columns, &job);
}
