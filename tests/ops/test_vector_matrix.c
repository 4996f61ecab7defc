/*
 * test_vector_matrix.c — kiln's one-row products (lib/ops/common/
 * vector_matrix.h): kiln_vector_matrix_f32 and both forms of
 * kiln_vector_products_f32 (b's rows contiguous; b's columns and a
 * contiguous), batched, broadcast and strided as a state view is, each
 * element within the matmul bound of spec/opset.md of the exact sum
 * (long double), the same bits on one and two threads, NaN and infinity
 * propagated, and strides neither form reads declined.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"
#include "vector_matrix.h"

static prng rng = {0x243F6A8885A308D3u};

static float *random_floats(size_t count)
{
    float *v = malloc(count * sizeof *v + 1);
    assert_non_null(v);
    for (size_t i = 0; i < count; i++)
        v[i] = (float)((double)prng_below(&rng, 2000001) / 1000000.0 - 1.0);
    return v;
}

/* Element (item, j) of p's exact product, and the bound's scale sum |a b|. */
static long double exact(const kiln_vector_products *p, const float *a, const float *b, uint64_t item, int64_t j,
                         long double *magnitude)
{
    int64_t a_at = 0, b_at = 0;
    uint64_t rest = item;
    for (uint32_t axis = p->batch_rank; axis-- > 0;) {
        int64_t index = (int64_t)(rest % (uint64_t)p->batch[axis]);
        rest /= (uint64_t)p->batch[axis];
        a_at += index * p->a_batch[axis];
        b_at += index * p->b_batch[axis];
    }
    long double sum = 0;
    *magnitude = 0;
    for (int64_t i = 0; i < p->k; i++) {
        long double term = (long double)a[a_at + i * p->a_k] * b[b_at + i * p->b_k + j * p->b_n];
        sum += term;
        *magnitude += fabsl(term);
    }
    return sum;
}

static int64_t y_offset(const kiln_vector_products *p, uint64_t item, int64_t j)
{
    int64_t at = 0;
    uint64_t rest = item;
    for (uint32_t axis = p->batch_rank; axis-- > 0;) {
        at += (int64_t)(rest % (uint64_t)p->batch[axis]) * p->y_batch[axis];
        rest /= (uint64_t)p->batch[axis];
    }
    return at + j * p->y_n;
}

/* Run p over buffers of the given sizes on one and on two threads; check the bound and the bits. */
static void check(const char *what, const kiln_vector_products *p, size_t a_size, size_t b_size, size_t y_size,
                  float special)
{
    float *a = random_floats(a_size), *b = random_floats(b_size);
    if (special != 0.0f)
        a[0] = special;
    float *y[2] = {calloc(y_size + 1, sizeof(float)), calloc(y_size + 1, sizeof(float))};
    for (uint32_t t = 0; t < 2; t++)
        assert_true(kiln_vector_products_f32(p, a, b, y[t], t + 1));
    assert_memory_equal(y[0], y[1], y_size * sizeof(float));
    uint64_t items = 1;
    for (uint32_t axis = 0; axis < p->batch_rank; axis++)
        items *= (uint64_t)p->batch[axis];
    for (uint64_t item = 0; item < items; item++)
        for (int64_t j = 0; j < p->n; j++) {
            long double magnitude, e = exact(p, a, b, item, j, &magnitude);
            float got = y[0][y_offset(p, item, j)];
            if (isnan(e) || isinf(e)) {
                if (!(isnan(e) ? isnan(got) : (long double)got == e))
                    fail_msg("%s: item %llu column %lld is %g, exact %Lg", what, (unsigned long long)item,
                             (long long)j, (double)got, e);
                continue;
            }
            long double bound = (long double)(p->k + 2) * ldexpl(1.0L, -23) * magnitude + 1e-30L;
            if (!(fabsl((long double)got - e) <= bound))
                fail_msg("%s: item %llu column %lld is %.9g, exact %.12Lg, bound %Lg", what,
                         (unsigned long long)item, (long long)j, (double)got, e, bound);
        }
    free(a);
    free(b);
    free(y[0]);
    free(y[1]);
}

/*
 * The shapes of a decode step's attention over a cache of CAPACITY rows
 * per head, `rows` of them held: q k^T (dots over the head width) and the
 * probabilities times the values (rows of the cache).
 */
enum { HEADS = 4, WIDTH = 64, CAPACITY = 300 };

static void attention_over_a_strided_cache(void **unused)
{
    (void)unused;
    static const int64_t held[] = {1, 3, 17, 129, 300};
    for (size_t h = 0; h < sizeof held / sizeof held[0]; h++) {
        int64_t rows = held[h];
        /* scores[h][n] = q[h] . K[h][n]: b[k][n] = K[h][n][k], rows CAPACITY apart per head. */
        kiln_vector_products qk = {.batch_rank = 1, .batch = {HEADS}, .a_batch = {WIDTH},
                                   .b_batch = {CAPACITY * WIDTH}, .y_batch = {rows}, .k = WIDTH, .n = rows,
                                   .a_k = 1, .b_k = 1, .b_n = WIDTH, .y_n = 1};
        check("q k^T", &qk, HEADS * WIDTH, HEADS * CAPACITY * WIDTH, (size_t)(HEADS * rows), 0);
        /* context[h][d] = sum over n of p[h][n] V[h][n][d]. */
        kiln_vector_products pv = {.batch_rank = 1, .batch = {HEADS}, .a_batch = {rows},
                                   .b_batch = {CAPACITY * WIDTH}, .y_batch = {WIDTH}, .k = rows, .n = WIDTH,
                                   .a_k = 1, .b_k = WIDTH, .b_n = 1, .y_n = 1};
        check("p v", &pv, (size_t)(HEADS * rows), HEADS * CAPACITY * WIDTH, HEADS * WIDTH, 0);
    }
}

static void odd_widths_broadcasts_and_specials(void **unused)
{
    (void)unused;
    /* Dots of 37 (two 16-lane blocks and a tail) over 7 columns (a block of four and three). */
    kiln_vector_products dots = {.batch_rank = 2, .batch = {2, 3}, .a_batch = {0, 37}, .b_batch = {7 * 37 * 3, 7 * 37},
                                 .y_batch = {21, 7}, .k = 37, .n = 7, .a_k = 1, .b_k = 1, .b_n = 37, .y_n = 1};
    check("dots, a broadcast over the first batch axis", &dots, 3 * 37, 2 * 3 * 7 * 37, 42, 0);
    check("dots with a NaN", &dots, 3 * 37, 2 * 3 * 7 * 37, 42, NAN);
    check("dots with an infinity", &dots, 3 * 37, 2 * 3 * 7 * 37, 42, INFINITY);
    /* Rows: 6 rows (a block of four and two) of 5 columns, one b shared by the batch, a read with a stride. */
    kiln_vector_products rows = {.batch_rank = 1, .batch = {3}, .a_batch = {1}, .b_batch = {0}, .y_batch = {5},
                                 .k = 6, .n = 5, .a_k = 3, .b_k = 5, .b_n = 1, .y_n = 1};
    check("rows of one shared b", &rows, 18, 30, 15, 0);
    check("rows with a NaN", &rows, 18, 30, 15, NAN);
    /* Strides neither form reads: declined, nothing written. */
    kiln_vector_products neither = rows;
    neither.b_n = 2, neither.b_k = 11; /* b's rows not contiguous, its columns neither */
    float y[15] = {0};
    float a[64] = {0}, b[128] = {0};
    assert_false(kiln_vector_products_f32(&neither, a, b, y, 1));
}

static void vector_matrix_splits_columns_alike(void **unused)
{
    (void)unused;
    static const int64_t shapes[][2] = {{256, 1024}, {1027, 300}, {6, 1}, {1, 70}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t k = shapes[s][0], n = shapes[s][1];
        float *a = random_floats((size_t)k), *b = random_floats((size_t)(k * n));
        float *y1 = malloc((size_t)n * sizeof *y1), *y2 = malloc((size_t)n * sizeof *y2);
        kiln_vector_matrix_f32(a, b, y1, k, n, 1);
        kiln_vector_matrix_f32(a, b, y2, k, n, 2);
        assert_memory_equal(y1, y2, (size_t)n * sizeof *y1);
        kiln_vector_products same = {.k = k, .n = n, .a_k = 1, .b_k = n, .b_n = 1, .y_n = 1};
        check("one row times a matrix", &same, (size_t)k, (size_t)(k * n), (size_t)n, 0);
        free(a), free(b), free(y1), free(y2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_over_a_strided_cache),
        cmocka_unit_test(odd_widths_broadcasts_and_specials),
        cmocka_unit_test(vector_matrix_splits_columns_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
