/*
 * test_ops_linalg.c — the linalg family (matmul, gemm, transpose, flatten)
 * against an independent reference, end to end through the public builder
 * and a session, and the shape rules' static refusals.
 *
 * The reference is written here with a deliberately different algorithm:
 * it walks the output one flat index at a time, recovers the multi-index by
 * div/mod, maps it into each operand and sums in double. The kernels
 * accumulate in the element type, so a product is compared with the
 * forward error bound of a dot product: |got - ref| <= rtol * (sum of
 * |terms|) (+ a tiny absolute floor), rtol 1e-5 for f32 and 1e-12 for f64.
 * Data movement (transpose, flatten) must match bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "borrowed_attribute.h"
#include "kernel_call.h"
#include "prng.h"
#include "tensor_fixture.h"

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"matmul", "gemm", "transpose", "flatten"};
    assert_family_registered(&kiln_ops_linalg, names, 4);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

/* A value in [-2, 2) with few significant bits, so it is exact in f32. */
static double random_value(void)
{
    return (double)(int64_t)(xorshift64_star_next(&rng_state) >> 40 & 0xFFFF) / 16384.0 - 2.0;
}

static uint64_t count_of(uint32_t rank, const int64_t *shape)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < rank; i++)
        n *= (uint64_t)shape[i];
    return n;
}

/* A float tensor of random values (or random bytes for other dtypes). */
static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_tensor(dtype, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++) {
        if (dtype == KILN_F32)
            ((float *)t->data)[i] = (float)random_value();
        else if (dtype == KILN_F64)
            ((double *)t->data)[i] = random_value();
    }
    if (dtype != KILN_F32 && dtype != KILN_F64)
        for (size_t i = 0; i < t->byte_size; i++)
            ((uint8_t *)t->data)[i] = (uint8_t)xorshift64_star_next(&rng_state);
    return t;
}

static double element(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_F32 ? (double)((const float *)t->data)[i] : ((const double *)t->data)[i];
}

/* Poison the output so that a kernel that skips elements is caught. */
static void poison(kiln_tensor *t)
{
    memset(t->data, 0x7F, t->byte_size);
}

static void assert_close(const kiln_tensor *got, const double *expected, const double *magnitude, const char *what)
{
    double rtol = got->dtype == KILN_F32 ? 1e-5 : 1e-12;
    for (uint64_t i = 0; i < got->element_count; i++) {
        double g = element(got, i);
        double bound = rtol * magnitude[i] + 1e-30;
        if (!(fabs(g - expected[i]) <= bound)) {
            print_error("%s: element %llu is %.17g, expected %.17g (bound %g)\n", what, (unsigned long long)i, g,
                        expected[i], bound);
            fail();
        }
    }
}

/* Flat index -> multi-index of `shape`. */
static void unflatten(uint64_t flat, uint32_t rank, const int64_t *shape, int64_t *index)
{
    for (uint32_t i = rank; i-- > 0;) {
        index[i] = (int64_t)(flat % (uint64_t)shape[i]);
        flat /= (uint64_t)shape[i];
    }
}

/* Multi-index -> flat offset in `shape`, index 0 on size-1 axes (broadcast). */
static uint64_t offset_of(uint32_t rank, const int64_t *shape, const int64_t *index)
{
    uint64_t offset = 0;
    for (uint32_t i = 0; i < rank; i++)
        offset = offset * (uint64_t)shape[i] + (uint64_t)(shape[i] == 1 ? 0 : index[i]);
    return offset;
}

/* ------------------------------------------------------------- matmul */

typedef struct matmul_case {
    uint32_t a_rank;
    int64_t a[5];
    uint32_t b_rank;
    int64_t b[5];
    uint32_t out_rank;
    int64_t out[5];
} matmul_case;

/*
 * Reference: operands promoted to 2-D matrices (and then to the full batch
 * rank with leading 1s), output walked over (batch..., M, N).
 */
static void reference_matmul(const matmul_case *c, const kiln_tensor *a, const kiln_tensor *b, double *expected,
                             double *magnitude)
{
    int64_t pa[8], pb[8];
    uint32_t ra = c->a_rank < 2 ? 2 : c->a_rank, rb = c->b_rank < 2 ? 2 : c->b_rank;
    if (c->a_rank == 1) {
        pa[0] = 1;
        pa[1] = c->a[0];
    } else {
        memcpy(pa, c->a, c->a_rank * sizeof pa[0]);
    }
    if (c->b_rank == 1) {
        pb[0] = c->b[0];
        pb[1] = 1;
    } else {
        memcpy(pb, c->b, c->b_rank * sizeof pb[0]);
    }
    uint32_t rank = ra > rb ? ra : rb;
    int64_t fa[8], fb[8], full[8];
    for (uint32_t i = 0; i < rank; i++) {
        fa[i] = i + ra < rank ? 1 : pa[i + ra - rank];
        fb[i] = i + rb < rank ? 1 : pb[i + rb - rank];
        /* Batch axes broadcast (a size 1 takes the other's size, 0 included). */
        full[i] = fa[i] == 1 ? fb[i] : fa[i];
    }
    full[rank - 2] = fa[rank - 2];
    full[rank - 1] = fb[rank - 1];
    int64_t k = fa[rank - 1];
    uint64_t total = count_of(rank, full);
    for (uint64_t flat = 0; flat < total; flat++) {
        int64_t index[8], ia[8], ib[8];
        unflatten(flat, rank, full, index);
        memcpy(ia, index, sizeof ia);
        memcpy(ib, index, sizeof ib);
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            ia[rank - 1] = p;
            ib[rank - 2] = p;
            /* offset_of reads index 0 on size-1 axes: right for broadcast
             * batch axes, and for a matrix axis of size 1 the index is 0 anyway. */
            double x = element(a, offset_of(rank, fa, ia)), y = element(b, offset_of(rank, fb, ib));
            sum += x * y;
            mag += fabs(x * y);
        }
        expected[flat] = sum;
        magnitude[flat] = mag;
    }
}

static void matmul_matches_reference(void **state)
{
    (void)state;
    static const matmul_case cases[] = {
        {2, {3, 4}, 2, {4, 5}, 2, {3, 5}},
        {2, {1, 1}, 2, {1, 1}, 2, {1, 1}},
        {2, {7, 13}, 2, {13, 2}, 2, {7, 2}},
        {2, {17, 33}, 2, {33, 9}, 2, {17, 9}},
        /* batched, with broadcast batch axes */
        {3, {2, 3, 4}, 2, {4, 5}, 3, {2, 3, 5}},
        {2, {3, 4}, 3, {2, 4, 5}, 3, {2, 3, 5}},
        {4, {2, 1, 3, 4}, 3, {5, 4, 2}, 4, {2, 5, 3, 2}},
        {3, {1, 3, 4}, 3, {2, 4, 5}, 3, {2, 3, 5}},
        {3, {2, 3, 4}, 3, {2, 4, 5}, 3, {2, 3, 5}},
        {5, {2, 1, 2, 2, 3}, 4, {3, 1, 3, 2}, 5, {2, 3, 2, 2, 2}},
        /* 1-D operands */
        {1, {4}, 1, {4}, 0, {0}},
        {1, {4}, 2, {4, 5}, 1, {5}},
        {2, {3, 4}, 1, {4}, 1, {3}},
        {3, {2, 3, 4}, 1, {4}, 2, {2, 3}},
        {1, {4}, 3, {2, 4, 5}, 2, {2, 5}},
        /* zero-size axes */
        {2, {0, 4}, 2, {4, 5}, 2, {0, 5}},
        {2, {3, 0}, 2, {0, 5}, 2, {3, 5}},
        {2, {3, 4}, 2, {4, 0}, 2, {3, 0}},
        {3, {0, 3, 4}, 2, {4, 5}, 3, {0, 3, 5}},
        {1, {0}, 1, {0}, 0, {0}},
    };
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64};
    for (size_t d = 0; d < 2; d++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const matmul_case *c = &cases[i];
            kiln_tensor *a = random_tensor(dtypes[d], c->a_rank, c->a);
            kiln_tensor *b = random_tensor(dtypes[d], c->b_rank, c->b);
            kiln_tensor *out = new_tensor(dtypes[d], c->out_rank, c->out);
            poison(out);
            size_t n = out->element_count ? out->element_count : 1;
            double *expected = calloc(n, sizeof *expected), *magnitude = calloc(n, sizeof *magnitude);
            reference_matmul(c, a, b, expected, magnitude);
            kiln_error err;
            const kiln_tensor *inputs[] = {a, b};
            assert_int_equal(call_kernel("matmul", 2, inputs, out, 0, NULL, &err), KILN_OK);
            char what[64];
            snprintf(what, sizeof what, "matmul case %zu %s", i, kiln_dtype_name(dtypes[d]));
            assert_close(out, expected, magnitude, what);
            free(expected);
            free(magnitude);
            kiln_tensor_free(a);
            kiln_tensor_free(b);
            kiln_tensor_free(out);
        }
    }
}

/* The product is exact on small integers, and K = 0 gives zeros. */
static void matmul_known_answers(void **state)
{
    (void)state;
    kiln_error err;
    kiln_tensor *a = new_tensor(KILN_F32, 2, (int64_t[]){2, 3});
    kiln_tensor *b = new_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_tensor *out = new_tensor(KILN_F32, 2, (int64_t[]){2, 2});
    const float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {7, 8, 9, 10, 11, 12};
    memcpy(a->data, av, sizeof av);
    memcpy(b->data, bv, sizeof bv);
    const kiln_tensor *inputs[] = {a, b};
    assert_int_equal(call_kernel("matmul", 2, inputs, out, 0, NULL, &err), KILN_OK);
    const float *o = out->data;
    assert_true(o[0] == 58 && o[1] == 64 && o[2] == 139 && o[3] == 154);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);

    /* A kernel called with mismatched inner sizes refuses instead of reading out of bounds. */
    a = new_tensor(KILN_F64, 2, (int64_t[]){2, 3});
    b = new_tensor(KILN_F64, 2, (int64_t[]){4, 2});
    out = new_tensor(KILN_F64, 2, (int64_t[]){2, 2});
    const kiln_tensor *bad[] = {a, b};
    assert_int_equal(call_kernel("matmul", 2, bad, out, 0, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);
}

/* --------------------------------------------------------------- gemm */

static void gemm_case(kiln_dtype dtype, int trans_a, int trans_b, double alpha, double beta, int64_t m, int64_t k,
                      int64_t n, int c_rank, const int64_t *c_shape)
{
    int64_t a_shape[2] = {trans_a ? k : m, trans_a ? m : k};
    int64_t b_shape[2] = {trans_b ? n : k, trans_b ? k : n};
    kiln_tensor *a = random_tensor(dtype, 2, a_shape);
    kiln_tensor *b = random_tensor(dtype, 2, b_shape);
    kiln_tensor *c = c_rank >= 0 ? random_tensor(dtype, (uint32_t)c_rank, c_shape) : NULL;
    kiln_tensor *out = new_tensor(dtype, 2, (int64_t[]){m, n});
    poison(out);
    size_t count = m * n > 0 ? (size_t)(m * n) : 1;
    double *expected = calloc(count, sizeof *expected), *magnitude = calloc(count, sizeof *magnitude);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = element(a, (uint64_t)(trans_a ? p * m + i : i * k + p));
                double y = element(b, (uint64_t)(trans_b ? j * k + p : p * n + j));
                sum += x * y;
                mag += fabs(x * y);
            }
            double value = alpha * sum, scale = fabs(alpha) * mag;
            if (c) {
                /* C aligned from the right against (M, N). */
                int64_t index[2] = {i, j}, cshape[2] = {1, 1};
                for (int r = 0; r < c_rank; r++)
                    cshape[2 - c_rank + r] = c_shape[r];
                double cv = element(c, offset_of(2, cshape, index));
                value += beta * cv;
                scale += fabs(beta * cv);
            }
            expected[i * n + j] = value;
            magnitude[i * n + j] = scale;
        }
    }
    kiln_node_attribute attributes[] = {
        {.name = (char *)"alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = alpha},
        {.name = (char *)"beta", .type = KILN_ATTRIBUTE_FLOAT, .f = beta},
        {.name = (char *)"transA", .type = KILN_ATTRIBUTE_INT, .i = trans_a},
        {.name = (char *)"transB", .type = KILN_ATTRIBUTE_INT, .i = trans_b},
    };
    const kiln_tensor *inputs[] = {a, b, c};
    kiln_error err;
    assert_int_equal(call_kernel("gemm", c ? 3 : 2, inputs, out, 4, attributes, &err), KILN_OK);
    char what[96];
    snprintf(what, sizeof what, "gemm %s tA=%d tB=%d alpha=%g beta=%g C rank %d", kiln_dtype_name(dtype), trans_a,
             trans_b, alpha, beta, c_rank);
    assert_close(out, expected, magnitude, what);
    free(expected);
    free(magnitude);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(c);
    kiln_tensor_free(out);
}

static void gemm_matches_reference(void **state)
{
    (void)state;
    static const double scales[][2] = {{1.0, 1.0}, {0.5, -2.0}, {2.0, 0.0}, {-1.25, 0.75}};
    const int64_t m = 3, k = 4, n = 5;
    for (int d = 0; d < 2; d++) {
        kiln_dtype dtype = d ? KILN_F64 : KILN_F32;
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
                    double alpha = scales[s][0], beta = scales[s][1];
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, -1, NULL);
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 0, NULL);
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 1, (int64_t[]){n});
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 2, (int64_t[]){1, n});
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 2, (int64_t[]){m, 1});
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 2, (int64_t[]){m, n});
                    gemm_case(dtype, ta, tb, alpha, beta, m, k, n, 1, (int64_t[]){1});
                }
        /* Larger, and degenerate sizes. */
        gemm_case(dtype, 1, 1, 1.0, 1.0, 19, 31, 7, 2, (int64_t[]){19, 7});
        gemm_case(dtype, 0, 0, 1.0, 1.0, 3, 0, 4, 1, (int64_t[]){4});
        gemm_case(dtype, 1, 0, 1.0, 1.0, 0, 3, 4, -1, NULL);
        gemm_case(dtype, 0, 1, 1.0, 1.0, 3, 2, 0, 0, NULL);
    }
}

/* Attributes default to alpha = beta = 1 and no transposition. */
static void gemm_defaults(void **state)
{
    (void)state;
    kiln_error err;
    kiln_tensor *a = new_tensor(KILN_F64, 2, (int64_t[]){1, 2});
    kiln_tensor *b = new_tensor(KILN_F64, 2, (int64_t[]){2, 1});
    kiln_tensor *c = new_tensor(KILN_F64, 0, NULL);
    kiln_tensor *out = new_tensor(KILN_F64, 2, (int64_t[]){1, 1});
    ((double *)a->data)[0] = 2;
    ((double *)a->data)[1] = 3;
    ((double *)b->data)[0] = 5;
    ((double *)b->data)[1] = 7;
    ((double *)c->data)[0] = 100;
    const kiln_tensor *inputs[] = {a, b, c};
    assert_int_equal(call_kernel("gemm", 3, inputs, out, 0, NULL, &err), KILN_OK);
    assert_true(((double *)out->data)[0] == 131.0);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(c);
    kiln_tensor_free(out);
}

/* ---------------------------------------------------------- transpose */

/* Visit every permutation of 0..rank-1 in lexicographic order. */
static bool next_permutation(uint32_t rank, int64_t *perm)
{
    if (rank < 2)
        return false;
    int i = (int)rank - 2;
    while (i >= 0 && perm[i] > perm[i + 1])
        i--;
    if (i < 0)
        return false;
    int j = (int)rank - 1;
    while (perm[j] < perm[i])
        j--;
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    for (int lo = i + 1, hi = (int)rank - 1; lo < hi; lo++, hi--) {
        t = perm[lo];
        perm[lo] = perm[hi];
        perm[hi] = t;
    }
    return true;
}

static void check_transpose(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const int64_t *perm,
                            bool explicit_perm)
{
    int64_t out_shape[KILN_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++)
        out_shape[i] = shape[perm[i]];
    kiln_tensor *in = random_tensor(dtype, rank, shape);
    kiln_tensor *out = new_tensor(dtype, rank, out_shape);
    poison(out);
    kiln_node_attribute attribute =
        borrowed_attribute((kiln_attribute){.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = perm, .count = rank});
    const kiln_tensor *inputs[] = {in};
    kiln_error err;
    assert_int_equal(call_kernel("transpose", 1, inputs, out, explicit_perm ? 1 : 0, &attribute, &err), KILN_OK);
    size_t width = kiln_dtype_size(dtype);
    for (uint64_t flat = 0; flat < out->element_count; flat++) {
        int64_t index[KILN_MAX_RANK], in_index[KILN_MAX_RANK];
        unflatten(flat, rank, out_shape, index);
        for (uint32_t i = 0; i < rank; i++)
            in_index[perm[i]] = index[i];
        uint64_t source = 0;
        for (uint32_t i = 0; i < rank; i++)
            source = source * (uint64_t)shape[i] + (uint64_t)in_index[i];
        if (memcmp((uint8_t *)out->data + flat * width, (uint8_t *)in->data + source * width, width) != 0) {
            print_error("transpose %s rank %u: element %llu differs\n", kiln_dtype_name(dtype), rank,
                        (unsigned long long)flat);
            fail();
        }
    }
    kiln_tensor_free(in);
    kiln_tensor_free(out);
}

static void transpose_matches_reference(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_U8, KILN_I16, KILN_F32, KILN_I64, KILN_F64, KILN_BOOL};
    static const int64_t sizes[] = {2, 3, 4, 1, 5};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        if (!kiln_dtype_is_supported(dtypes[d]))
            continue;
        for (uint32_t rank = 1; rank <= 5; rank++) {
            int64_t perm[KILN_MAX_RANK];
            for (uint32_t i = 0; i < rank; i++)
                perm[i] = i;
            /* Every permutation up to rank 4; rank 5 every 7th of its 120. */
            uint32_t visited = 0;
            do {
                if (rank < 5 || visited % 7 == 0)
                    check_transpose(dtypes[d], rank, sizes, perm, true);
                visited++;
            } while (next_permutation(rank, perm));
            /* Absent perm: reversed axes. */
            for (uint32_t i = 0; i < rank; i++)
                perm[i] = rank - 1 - i;
            check_transpose(dtypes[d], rank, sizes, perm, false);
        }
    }
    /* Zero-size axes move too. */
    check_transpose(KILN_F32, 3, (int64_t[]){2, 0, 3}, (int64_t[]){2, 0, 1}, true);
}

/* ------------------------------------------------------------ flatten */

static void flatten_matches_reference(void **state)
{
    (void)state;
    static const int64_t shape[] = {2, 3, 1, 4};
    for (uint32_t rank = 0; rank <= 4; rank++) {
        for (int64_t axis = -(int64_t)rank; axis <= (int64_t)rank; axis++) {
            int64_t split = axis < 0 ? axis + rank : axis;
            int64_t out_shape[2] = {1, 1};
            for (int64_t i = 0; i < (int64_t)rank; i++)
                out_shape[i < split ? 0 : 1] *= shape[i];
            kiln_tensor *in = random_tensor(KILN_I32, rank, shape);
            kiln_tensor *out = new_tensor(KILN_I32, 2, out_shape);
            poison(out);
            kiln_node_attribute attribute = {.name = (char *)"axis", .type = KILN_ATTRIBUTE_INT, .i = axis};
            const kiln_tensor *inputs[] = {in};
            kiln_error err;
            assert_int_equal(call_kernel("flatten", 1, inputs, out, 1, &attribute, &err), KILN_OK);
            assert_memory_equal(out->data, in->data, in->byte_size);
            kiln_tensor_free(in);
            kiln_tensor_free(out);
        }
    }
}

/* ------------------------------------------------- builder and session */

typedef struct built {
    kiln_builder *builder;
    kiln_program *program;
    kiln_session *session;
} built;

static kiln_builder *new_builder(void)
{
    kiln_builder *b;
    kiln_error err;
    assert_int_equal(kiln_builder_new("linalg", &b, &err), KILN_OK);
    return b;
}

static void open_session(built *p)
{
    void *bytes;
    size_t size;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(p->builder, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &p->program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(p->program, NULL, &p->session, &err), KILN_OK);
}

static void close_built(built *p)
{
    kiln_session_free(p->session);
    kiln_program_free(p->program);
    kiln_builder_free(p->builder);
}

static void assert_output_text(const kiln_program *program, const char *expected)
{
    char text[128];
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    assert_string_equal(text, expected);
}

static const kiln_tensor *run_session(built *p, uint32_t count, const char *const *names,
                                      kiln_tensor *const *inputs)
{
    kiln_error err;
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(kiln_session_set_input(p->session, names[i], inputs[i], &err), KILN_OK);
    kiln_status status = kiln_session_run(p->session, &err);
    if (status != KILN_OK)
        print_error("run: %s\n", err.message);
    assert_int_equal(status, KILN_OK);
    return kiln_session_output(p->session, 0);
}

static void end_to_end_matmul(void **state)
{
    (void)state;
    built p = {new_builder(), NULL, NULL};
    kiln_error err;
    kiln_value a, b, y;
    assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(p.builder, "k", 2, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "a", KILN_F32, "[batch, 3, k]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "b", KILN_F32, "[k, 5]", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(p.builder, "matmul", 2, (kiln_value[]){a, b}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
    open_session(&p);
    assert_output_text(p.program, "[batch, 3, 5]");
    for (int64_t batch = 1; batch <= 4; batch += 3) {
        matmul_case c = {3, {batch, 3, 6}, 2, {6, 5}, 3, {batch, 3, 5}};
        kiln_tensor *ta = random_tensor(KILN_F32, 3, c.a), *tb = random_tensor(KILN_F32, 2, c.b);
        const kiln_tensor *out = run_session(&p, 2, (const char *[]){"a", "b"}, (kiln_tensor *[]){ta, tb});
        assert_int_equal(kiln_tensor_rank(out), 3);
        assert_int_equal(kiln_tensor_shape(out)[0], batch);
        assert_int_equal(kiln_tensor_shape(out)[2], 5);
        double expected[4 * 15], magnitude[4 * 15];
        reference_matmul(&c, ta, tb, expected, magnitude);
        assert_close(out, expected, magnitude, "matmul end to end");
        kiln_tensor_free(ta);
        kiln_tensor_free(tb);
    }
    close_built(&p);
}

static void end_to_end_gemm(void **state)
{
    (void)state;
    built p = {new_builder(), NULL, NULL};
    kiln_error err;
    kiln_value a, w, c, y;
    assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "a", KILN_F64, "[batch, 4]", &a, &err), KILN_OK);
    /* A linear layer: weights stored (out, in) and transposed by gemm. */
    double weights[5 * 4], bias[5];
    for (int i = 0; i < 20; i++)
        weights[i] = random_value();
    for (int i = 0; i < 5; i++)
        bias[i] = random_value();
    assert_int_equal(kiln_builder_add_weight(p.builder, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 2, (int64_t[]){5, 4},
                                             weights, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(p.builder, "bias", KILN_WEIGHT_PARAMETER, KILN_F64, 1, (int64_t[]){5},
                                             bias, &c, &err), KILN_OK);
    kiln_attribute attributes[] = {
        {.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.5},
        {.name = "transB", .type = KILN_ATTRIBUTE_INT, .i = 1},
    };
    assert_int_equal(kiln_builder_add_op_with_attributes(p.builder, "gemm", 3, (kiln_value[]){a, w, c}, 2,
                                                         attributes, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
    open_session(&p);
    assert_output_text(p.program, "[batch, 5]");
    kiln_tensor *ta = random_tensor(KILN_F64, 2, (int64_t[]){3, 4});
    const kiln_tensor *out = run_session(&p, 1, (const char *[]){"a"}, (kiln_tensor *[]){ta});
    assert_int_equal(kiln_tensor_shape(out)[0], 3);
    assert_int_equal(kiln_tensor_shape(out)[1], 5);
    const double *x = ta->data, *o = kiln_tensor_const_data(out);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            double sum = 0, mag = 0;
            for (int p2 = 0; p2 < 4; p2++) {
                sum += x[i * 4 + p2] * weights[j * 4 + p2];
                mag += fabs(x[i * 4 + p2] * weights[j * 4 + p2]);
            }
            assert_true(fabs(o[i * 5 + j] - (0.5 * sum + bias[j])) <= 1e-12 * (mag + fabs(bias[j])) + 1e-30);
        }
    kiln_tensor_free(ta);
    close_built(&p);
}

static void end_to_end_transpose(void **state)
{
    (void)state;
    built p = {new_builder(), NULL, NULL};
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "x", KILN_I16, "[batch, 3, 2]", &x, &err), KILN_OK);
    kiln_attribute perm = {.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){2, 0, 1}, .count = 3};
    assert_int_equal(kiln_builder_add_op_with_attributes(p.builder, "transpose", 1, &x, 1, &perm, &y, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
    open_session(&p);
    assert_output_text(p.program, "[2, batch, 3]");
    kiln_tensor *tx = random_tensor(KILN_I16, 3, (int64_t[]){4, 3, 2});
    const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
    assert_int_equal(kiln_tensor_shape(out)[0], 2);
    assert_int_equal(kiln_tensor_shape(out)[1], 4);
    assert_int_equal(kiln_tensor_shape(out)[2], 3);
    const int16_t *in = tx->data, *o = kiln_tensor_const_data(out);
    for (int c = 0; c < 2; c++)
        for (int b = 0; b < 4; b++)
            for (int r = 0; r < 3; r++)
                assert_int_equal(o[(c * 4 + b) * 3 + r], in[(b * 3 + r) * 2 + c]);
    kiln_tensor_free(tx);
    close_built(&p);
}

static void end_to_end_flatten(void **state)
{
    (void)state;
    static const struct {
        int64_t axis;
        const char *shape;
        int64_t rows, cols; /* at batch = 3 */
    } cases[] = {
        {1, "[batch, 12]", 3, 12},
        {-2, "[batch, 12]", 3, 12},
        {0, "[1, 12*batch]", 1, 36},
        {3, "[12*batch, 1]", 36, 1},
        {2, "[3*batch, 4]", 9, 4},
        {-3, "[1, 12*batch]", 1, 36},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        built p = {new_builder(), NULL, NULL};
        kiln_error err;
        kiln_value x, y;
        assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 1, 4, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(p.builder, "x", KILN_U8, "[batch, 3, 4]", &x, &err), KILN_OK);
        kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = cases[i].axis};
        assert_int_equal(kiln_builder_add_op_with_attributes(p.builder, "flatten", 1, &x, 1, &axis, &y, &err),
                         KILN_OK);
        assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
        open_session(&p);
        assert_output_text(p.program, cases[i].shape);
        kiln_tensor *tx = random_tensor(KILN_U8, 3, (int64_t[]){3, 3, 4});
        const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
        assert_int_equal(kiln_tensor_rank(out), 2);
        assert_int_equal(kiln_tensor_shape(out)[0], cases[i].rows);
        assert_int_equal(kiln_tensor_shape(out)[1], cases[i].cols);
        assert_memory_equal(kiln_tensor_const_data(out), tx->data, 36);
        kiln_tensor_free(tx);
        close_built(&p);
    }
}

/* Flatten without attributes splits after axis 0; a static shape flattens to constants. */
static void flatten_default_axis_and_constants(void **state)
{
    (void)state;
    kiln_builder *b = new_builder();
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2, 3, 4]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "flatten", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    built p = {b, NULL, NULL};
    open_session(&p);
    assert_output_text(p.program, "[2, 12]");
    close_built(&p);
}

/* ----------------------------------------------------- static refusals */

typedef struct dim_spec {
    const char *name;
    int64_t min, max;
} dim_spec;

/*
 * Build a program with the given dims and inputs and apply `op`.
 * @return the builder's status; `err` holds its message.
 */
static kiln_status try_build(const char *op, uint32_t dim_count, const dim_spec *dims, uint32_t input_count,
                             const kiln_dtype *dtypes, const char *const *shapes, uint32_t attribute_count,
                             const kiln_attribute *attributes, kiln_error *err)
{
    kiln_builder *b = new_builder();
    kiln_value values[3], y;
    for (uint32_t i = 0; i < dim_count; i++)
        assert_int_equal(kiln_builder_add_dim(b, dims[i].name, dims[i].min, dims[i].max, err), KILN_OK);
    static const char *const names[] = {"a", "b", "c"};
    for (uint32_t i = 0; i < input_count; i++)
        assert_int_equal(kiln_builder_add_input(b, names[i], dtypes[i], shapes[i], &values[i], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, op, input_count, values, attribute_count, attributes, &y, err);
    kiln_builder_free(b);
    return status;
}

static const dim_spec mkn_dims[] = {{"m", 1, 4}, {"k", 2, 8}, {"n", 1, 4}};
static const kiln_dtype f32x3[] = {KILN_F32, KILN_F32, KILN_F32};

static void matmul_refuses_unproven_inner_sizes(void **state)
{
    (void)state;
    kiln_error err;
    assert_int_equal(try_build("matmul", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, k]", "[4, n]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (matmul)"));
    assert_non_null(strstr(err.message, "k"));
    assert_non_null(strstr(err.message, "4"));
    assert_non_null(strstr(err.message, "counterexample"));
    assert_non_null(strstr(err.message, "k=2"));
    assert_non_null(strstr(err.message, "k must equal 4: declare k in 4..4, or use the same size on both sides"));

    /* The same dim on both sides is proven. */
    assert_int_equal(try_build("matmul", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, k]", "[k, n]"}, 0, NULL, &err),
                     KILN_OK);
    /* Two different dims: a point where they differ is named. */
    assert_int_equal(try_build("matmul", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, k]", "[n, m]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample"));
    /* Different constants. */
    assert_int_equal(try_build("matmul", 0, NULL, 2, f32x3, (const char *[]){"[2, 3]", "[4, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "3"));
    /* Batch axes that cannot be proven to broadcast. */
    assert_int_equal(try_build("matmul", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, 2, 3]", "[n, 3, 2]"}, 0, NULL,
                               &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample"));
    /* Dtypes: both the same float type. */
    assert_int_equal(try_build("matmul", 0, NULL, 2, (kiln_dtype[]){KILN_F32, KILN_F64},
                               (const char *[]){"[2, 3]", "[3, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("matmul", 0, NULL, 2, (kiln_dtype[]){KILN_I32, KILN_I32},
                               (const char *[]){"[2, 3]", "[3, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("matmul", 0, NULL, 2, f32x3, (const char *[]){"[]", "[3, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
}

static void transpose_refuses_bad_perm(void **state)
{
    (void)state;
    static const int64_t bad[][3] = {{0, 0}, {0, 2}, {-1, 0}, {1, 0, 2}};
    static const uint32_t counts[] = {2, 2, 2, 3};
    for (size_t i = 0; i < 4; i++) {
        kiln_error err;
        kiln_attribute perm = {.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = bad[i], .count = counts[i]};
        assert_int_equal(try_build("transpose", 0, NULL, 1, f32x3, (const char *[]){"[2, 3]"}, 1, &perm, &err),
                         KILN_ERR_INVALID_PROGRAM);
        assert_non_null(strstr(err.message, "perm"));
        assert_non_null(strstr(err.message, "permutation"));
    }
    kiln_error err;
    kiln_attribute wrong_type = {.name = "perm", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_not_equal(try_build("transpose", 0, NULL, 1, f32x3, (const char *[]){"[2, 3]"}, 1, &wrong_type, &err),
                         KILN_OK);
}

static void gemm_refuses_unproven_shapes(void **state)
{
    (void)state;
    kiln_error err;
    /* Inner sizes: k vs 4, also through transA. */
    assert_int_equal(try_build("gemm", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, k]", "[4, n]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample"));
    assert_non_null(strstr(err.message, "k=2"));
    kiln_attribute trans_a = {.name = "transA", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(try_build("gemm", 3, mkn_dims, 2, f32x3, (const char *[]){"[m, k]", "[k, n]"}, 1, &trans_a,
                               &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("gemm", 3, mkn_dims, 2, f32x3, (const char *[]){"[k, m]", "[k, n]"}, 1, &trans_a,
                               &err),
                     KILN_OK);
    assert_int_equal(try_build("gemm", 0, NULL, 2, f32x3, (const char *[]){"[2, 3]", "[4, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    /* transA out of {0, 1}. */
    kiln_attribute trans_two = {.name = "transA", .type = KILN_ATTRIBUTE_INT, .i = 2};
    assert_int_equal(try_build("gemm", 0, NULL, 2, f32x3, (const char *[]){"[2, 3]", "[3, 2]"}, 1, &trans_two,
                               &err),
                     KILN_ERR_INVALID_PROGRAM);
    /* Rank other than 2. */
    assert_int_equal(try_build("gemm", 0, NULL, 2, f32x3, (const char *[]){"[2, 3, 1]", "[3, 2]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);

    /* C: accepted shapes. */
    static const char *const good_c[] = {"[]", "[n]", "[1, n]", "[m, 1]", "[m, n]", "[1]"};
    for (size_t i = 0; i < sizeof good_c / sizeof good_c[0]; i++)
        assert_int_equal(try_build("gemm", 3, mkn_dims, 3, f32x3, (const char *[]){"[m, k]", "[k, n]", good_c[i]}, 0,
                                   NULL, &err),
                         KILN_OK);
    /* C: refused shapes. */
    static const char *const bad_c[] = {"[k]", "[m]", "[2, n]", "[m, n, 1]", "[1, 1, 1]"};
    for (size_t i = 0; i < sizeof bad_c / sizeof bad_c[0]; i++) {
        assert_int_equal(try_build("gemm", 3, mkn_dims, 3, f32x3, (const char *[]){"[m, k]", "[k, n]", bad_c[i]}, 0,
                                   NULL, &err),
                         KILN_ERR_INVALID_PROGRAM);
        assert_non_null(strstr(err.message, "node 0 (gemm)"));
        assert_non_null(strstr(err.message, "C "));
    }
    /* C that broadcasts to more than (M, N) when M is the constant 1. */
    assert_int_equal(try_build("gemm", 3, mkn_dims, 3, f32x3, (const char *[]){"[1, k]", "[k, n]", "[3, n]"}, 0, NULL,
                               &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "C"));
}

static void flatten_refuses_bad_axis(void **state)
{
    (void)state;
    static const int64_t bad[] = {4, -4, 100};
    for (size_t i = 0; i < 3; i++) {
        kiln_error err;
        kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = bad[i]};
        assert_int_equal(try_build("flatten", 0, NULL, 1, f32x3, (const char *[]){"[2, 3, 4]"}, 1, &axis, &err),
                         KILN_ERR_INVALID_PROGRAM);
        assert_non_null(strstr(err.message, "axis"));
    }
    /* The default axis 1 does not exist for a scalar. */
    kiln_error err;
    assert_int_equal(try_build("flatten", 0, NULL, 1, f32x3, (const char *[]){"[]"}, 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(matmul_matches_reference),
        cmocka_unit_test(matmul_known_answers),
        cmocka_unit_test(gemm_matches_reference),
        cmocka_unit_test(gemm_defaults),
        cmocka_unit_test(transpose_matches_reference),
        cmocka_unit_test(flatten_matches_reference),
        cmocka_unit_test(end_to_end_matmul),
        cmocka_unit_test(end_to_end_gemm),
        cmocka_unit_test(end_to_end_transpose),
        cmocka_unit_test(end_to_end_flatten),
        cmocka_unit_test(flatten_default_axis_and_constants),
        cmocka_unit_test(matmul_refuses_unproven_inner_sizes),
        cmocka_unit_test(transpose_refuses_bad_perm),
        cmocka_unit_test(gemm_refuses_unproven_shapes),
        cmocka_unit_test(flatten_refuses_bad_axis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
