/* vector_matrix.c — see vector_matrix.h. */
#include "vector_matrix.h"

#include <string.h>

#include "parallel.h"

/*
 * y[j] = sum over i < k of a[i * a_k] * b[i * b_k + j], j < width: the
 * rows of b four at a time into the whole of y.
 */
KILN_VECTOR_CLONES static void rows_into(const float *a, int64_t a_k, const float *b, int64_t b_k, float *y, int64_t k,
                                         int64_t width)
{
    memset(y, 0, (size_t)width * sizeof *y);
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
        const float *r0 = b + i * b_k, *r1 = r0 + b_k, *r2 = r1 + b_k, *r3 = r2 + b_k;
        float a0 = a[i * a_k], a1 = a[(i + 1) * a_k], a2 = a[(i + 2) * a_k], a3 = a[(i + 3) * a_k];
        KILN_SIMD
        for (int64_t j = 0; j < width; j++)
            y[j] += a0 * r0[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j];
    }
    for (; i < k; i++) {
        const float *r = b + i * b_k;
        float ai = a[i * a_k];
        KILN_SIMD
        for (int64_t j = 0; j < width; j++)
            y[j] += ai * r[j];
    }
}

enum { DOT_LANES = 16 };

/* The sum of `lanes`, halved in a fixed order (a tree, not a chain of 16 dependent adds). */
static inline float sum_lanes(float *lanes)
{
    for (int width = DOT_LANES / 2; width >= 1; width /= 2) {
        KILN_SIMD
        for (int l = 0; l < width; l++)
            lanes[l] += lanes[l + width];
    }
    return lanes[0];
}

/*
 * y[j * y_n] = the dot product of a and b + j * b_n, both contiguous over
 * k, j < n: four columns at a time, so that each block of a is loaded
 * once for four independent sums.
 */
KILN_VECTOR_CLONES static void dots_into(const float *a, const float *b, int64_t b_n, float *y, int64_t y_n, int64_t k,
                                         int64_t n)
{
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const float *c0 = b + j * b_n, *c1 = c0 + b_n, *c2 = c1 + b_n, *c3 = c2 + b_n;
        float l0[DOT_LANES] = {0}, l1[DOT_LANES] = {0}, l2[DOT_LANES] = {0}, l3[DOT_LANES] = {0};
        int64_t i = 0;
        for (; i + DOT_LANES <= k; i += DOT_LANES) {
            KILN_SIMD
            for (int l = 0; l < DOT_LANES; l++) {
                float v = a[i + l];
                l0[l] += v * c0[i + l];
                l1[l] += v * c1[i + l];
                l2[l] += v * c2[i + l];
                l3[l] += v * c3[i + l];
            }
        }
        float s0 = sum_lanes(l0), s1 = sum_lanes(l1), s2 = sum_lanes(l2), s3 = sum_lanes(l3);
        for (; i < k; i++) {
            s0 += a[i] * c0[i];
            s1 += a[i] * c1[i];
            s2 += a[i] * c2[i];
            s3 += a[i] * c3[i];
        }
        y[j * y_n] = s0, y[(j + 1) * y_n] = s1, y[(j + 2) * y_n] = s2, y[(j + 3) * y_n] = s3;
    }
    for (; j < n; j++) {
        const float *column = b + j * b_n;
        float lanes[DOT_LANES] = {0};
        int64_t i = 0;
        for (; i + DOT_LANES <= k; i += DOT_LANES) {
            KILN_SIMD
            for (int l = 0; l < DOT_LANES; l++)
                lanes[l] += a[i + l] * column[i + l];
        }
        float sum = sum_lanes(lanes);
        for (; i < k; i++)
            sum += a[i] * column[i];
        y[j * y_n] = sum;
    }
}

typedef struct vector_matrix_job {
    const float *a, *b;
    float *y;
    int64_t k, n;
} vector_matrix_job;

/* Columns [begin, end) of a vector_matrix_job's y. */
static void columns(const void *job_pointer, uint64_t begin, uint64_t end)
{
    const vector_matrix_job *job = job_pointer;
    rows_into(job->a, 1, job->b + begin, job->n, job->y + begin, job->k, (int64_t)(end - begin));
}

void kiln_vector_matrix_f32(const float *a, const float *b, float *y, int64_t k, int64_t n, uint32_t threads)
{
    vector_matrix_job job = {a, b, y, k, n};
    if ((uint64_t)k * (uint64_t)n < kiln_parallel_min_multiply_adds())
        threads = 1;
    kiln_parallel_chunks_from((uint64_t)n, threads, 0, columns, &job);
}

typedef struct products_job {
    const kiln_vector_products *p;
    const float *a, *b;
    float *y;
    bool rows; /* the form: b's rows contiguous, else its columns */
    uint64_t items;
} products_job;

/* Batch item `item` of the job: its offsets in a, b and y, by div and mod over the batch axes. */
static void product_item(const products_job *job, uint64_t item)
{
    const kiln_vector_products *p = job->p;
    int64_t a_at = 0, b_at = 0, y_at = 0;
    uint64_t rest = item;
    for (uint32_t axis = p->batch_rank; axis-- > 0;) {
        int64_t index = (int64_t)(rest % (uint64_t)p->batch[axis]);
        rest /= (uint64_t)p->batch[axis];
        a_at += index * p->a_batch[axis];
        b_at += index * p->b_batch[axis];
        y_at += index * p->y_batch[axis];
    }
    if (job->rows)
        rows_into(job->a + a_at, p->a_k, job->b + b_at, p->b_k, job->y + y_at, p->k, p->n);
    else
        dots_into(job->a + a_at, job->b + b_at, p->b_n, job->y + y_at, p->y_n, p->k, p->n);
}

/* Member `index` of `count`: an even share of the batch items. */
static void product_share(const void *job_pointer, uint32_t index, uint32_t count)
{
    const products_job *job = job_pointer;
    uint64_t begin = job->items * index / count, end = job->items * (index + 1) / count;
    for (uint64_t item = begin; item < end; item++)
        product_item(job, item);
}

bool kiln_vector_products_f32(const kiln_vector_products *p, const float *a, const float *b, float *y,
                              uint32_t threads)
{
    bool rows = (p->b_n == 1 || p->n == 1) && (p->y_n == 1 || p->n == 1);
    bool columns_contiguous = (p->b_k == 1 && p->a_k == 1) || p->k == 1;
    if (!rows && !columns_contiguous)
        return false;
    uint64_t items = 1;
    for (uint32_t axis = 0; axis < p->batch_rank; axis++)
        items *= (uint64_t)p->batch[axis];
    products_job job = {p, a, b, y, rows, items};
    uint64_t work = items * (uint64_t)p->k * (uint64_t)p->n;
    if (threads > 1 && items > 1 && work >= kiln_parallel_min_multiply_adds())
        kiln_parallel_team(threads < items ? threads : (uint32_t)items, product_share, &job);
    else
        product_share(&job, 0, 1);
    return true;
}
