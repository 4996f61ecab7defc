/*
 * test_ops_einsum.c — einsum against references written as the explicit
 * loops each equation stands for (matmul, batch matmul, transpose, trace,
 * diagonal, outer product, sums, '...' broadcasting), in long double; end
 * to end through the builder, a session and the text format; and the
 * equation's and shape rule's refusals, checked by status and message.
 *
 * The kernel is one generic odometer over labels; the references here are
 * one hand-written loop nest per equation, so a wrong stride, a missed
 * diagonal or a mis-sorted implicit output shows up as a difference.
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
#include <time.h>

#include <kiln/text.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "op_test_support.h"
#include "prng.h"
#include "tensor_fixture.h"

static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_family_registered(&kiln_ops_einsum, (const char *const[]){"einsum"}, 1);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x853C49E6748FEA9Bu;

/* Random values: reals in [-1, 1), integers in -50..49. */
static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++) {
        double r = (double)(xorshift64_star_next(&rng_state) >> 11) / 4503599627370496.0 * 2.0 - 1.0;
        int64_t n = (int64_t)(xorshift64_star_next(&rng_state) % 100) - 50;
        switch (dtype) {
        case KILN_F32: ((float *)t->data)[i] = (float)r; break;
        case KILN_F64: ((double *)t->data)[i] = r; break;
        case KILN_I32: ((int32_t *)t->data)[i] = (int32_t)n; break;
        default: ((int64_t *)t->data)[i] = n; break;
        }
    }
    return t;
}

/* Element at flat index i as long double. */
static long double at(const kiln_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case KILN_F32: return ((const float *)t->data)[i];
    case KILN_F64: return ((const double *)t->data)[i];
    case KILN_I32: return ((const int32_t *)t->data)[i];
    default: return (long double)((const int64_t *)t->data)[i];
    }
}

static kiln_status run_einsum(const char *equation, uint32_t count, const kiln_tensor *const *inputs,
                              kiln_tensor *out, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find("einsum");
    assert_non_null(op);
    memset(out->data, 0x7F, out->byte_size); /* poison: a skipped element is caught */
    kiln_node_attribute attr =
        borrowed_attribute((kiln_attribute){.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = equation});
    kiln_kernel_call call = {inputs, count, out, &attr, 1, NULL};
    return op->run(&call, err);
}

/*
 * The expected values and, per element, the sum of |products| (the
 * scale of the rounding error an accumulation may make).
 */
typedef struct expected {
    long double *value;
    long double *magnitude;
    uint64_t count;
} expected;

static expected expect(uint64_t count)
{
    expected e = {calloc(count + 1, sizeof(long double)), calloc(count + 1, sizeof(long double)), count};
    assert_non_null(e.value);
    assert_non_null(e.magnitude);
    return e;
}

static void accumulate(expected *e, uint64_t i, long double product)
{
    e->value[i] += product;
    e->magnitude[i] += fabsl(product);
}

/* Compare `out` with `e`: floats within their dtype's rounding of the accumulation, integers exactly. */
static void assert_matches(const char *equation, const kiln_tensor *out, expected *e)
{
    assert_int_equal(out->element_count, e->count);
    for (uint64_t i = 0; i < e->count; i++) {
        long double got = at(out, (int64_t)i), want = e->value[i];
        long double tolerance = out->dtype == KILN_F32   ? 1e-6L * (e->magnitude[i] + fabsl(want)) + 1e-30L
                                : out->dtype == KILN_F64 ? 1e-14L * (e->magnitude[i] + fabsl(want)) + 1e-300L
                                                         : 0.0L;
        if (fabsl(got - want) > tolerance)
            fail_msg("%s (%s): element %llu is %.17Lg, expected %.17Lg", equation, kiln_dtype_name(out->dtype),
                     (unsigned long long)i, got, want);
    }
    free(e->value);
    free(e->magnitude);
}

/* Run `equation`; the caller has filled `e` by its own loops. */
static void check(const char *equation, uint32_t count, const kiln_tensor *const *inputs, uint32_t out_rank,
                  const int64_t *out_shape, expected *e)
{
    kiln_tensor *out = new_poisoned_tensor(inputs[0]->dtype, out_rank, out_shape);
    kiln_error err;
    kiln_status status = run_einsum(equation, count, inputs, out, &err);
    if (status != KILN_OK)
        fail_msg("%s: %s", equation, err.message);
    assert_matches(equation, out, e);
    kiln_tensor_free(out);
}

static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64, KILN_I32, KILN_I64};

/* ---------------------------------------------------- two-operand forms */

static void matmul_forms(void **state)
{
    (void)state;
    for (size_t d = 0; d < 4; d++) {
        const int64_t I = 3, J = 5, K = 4, B = 2;
        kiln_tensor *a = random_tensor(dtypes[d], 2, (int64_t[]){I, J});
        kiln_tensor *b = random_tensor(dtypes[d], 2, (int64_t[]){J, K});
        const kiln_tensor *ab[] = {a, b};
        /* ij,jk->ik and its implicit form ij,jk */
        static const char *const forms[] = {"ij,jk->ik", "ij,jk", " i j , j k -> i k "};
        for (size_t f = 0; f < 3; f++) {
            expected e = expect((uint64_t)(I * K));
            for (int64_t i = 0; i < I; i++)
                for (int64_t k = 0; k < K; k++)
                    for (int64_t j = 0; j < J; j++)
                        accumulate(&e, (uint64_t)(i * K + k), at(a, i * J + j) * at(b, j * K + k));
            check(forms[f], 2, ab, 2, (int64_t[]){I, K}, &e);
        }
        /* ij,jk->ki: the product transposed */
        expected e = expect((uint64_t)(I * K));
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t j = 0; j < J; j++)
                    accumulate(&e, (uint64_t)(k * I + i), at(a, i * J + j) * at(b, j * K + k));
        check("ij,jk->ki", 2, ab, 2, (int64_t[]){K, I}, &e);
        kiln_tensor_free(a);
        kiln_tensor_free(b);

        /* bij,bjk->bik */
        kiln_tensor *x = random_tensor(dtypes[d], 3, (int64_t[]){B, I, J});
        kiln_tensor *y = random_tensor(dtypes[d], 3, (int64_t[]){B, J, K});
        e = expect((uint64_t)(B * I * K));
        for (int64_t n = 0; n < B; n++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t k = 0; k < K; k++)
                    for (int64_t j = 0; j < J; j++)
                        accumulate(&e, (uint64_t)((n * I + i) * K + k),
                                   at(x, (n * I + i) * J + j) * at(y, (n * J + j) * K + k));
        check("bij,bjk->bik", 2, (const kiln_tensor *[]){x, y}, 3, (int64_t[]){B, I, K}, &e);
        kiln_tensor_free(x);
        kiln_tensor_free(y);
    }
}

static void outer_and_inner_products(void **state)
{
    (void)state;
    for (size_t d = 0; d < 4; d++) {
        kiln_tensor *u = random_tensor(dtypes[d], 1, (int64_t[]){4});
        kiln_tensor *v = random_tensor(dtypes[d], 1, (int64_t[]){3});
        expected e = expect(12);
        for (int64_t i = 0; i < 4; i++)
            for (int64_t j = 0; j < 3; j++)
                accumulate(&e, (uint64_t)(i * 3 + j), at(u, i) * at(v, j));
        check("i,j->ij", 2, (const kiln_tensor *[]){u, v}, 2, (int64_t[]){4, 3}, &e);
        /* implicit "j,i": labels sorted, so the output is [i, j] = v-major transposed */
        e = expect(12);
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 4; j++)
                accumulate(&e, (uint64_t)(i * 4 + j), at(u, j) * at(v, i));
        check("j,i", 2, (const kiln_tensor *[]){u, v}, 2, (int64_t[]){3, 4}, &e);
        /* dot product i,i-> and its implicit form i,i */
        kiln_tensor *w = random_tensor(dtypes[d], 1, (int64_t[]){4});
        for (int implicit = 0; implicit < 2; implicit++) {
            e = expect(1);
            for (int64_t i = 0; i < 4; i++)
                accumulate(&e, 0, at(u, i) * at(w, i));
            check(implicit ? "i,i" : "i,i->", 2, (const kiln_tensor *[]){u, w}, 0, NULL, &e);
        }
        /* i,i->i: elementwise product */
        e = expect(4);
        for (int64_t i = 0; i < 4; i++)
            accumulate(&e, (uint64_t)i, at(u, i) * at(w, i));
        check("i,i->i", 2, (const kiln_tensor *[]){u, w}, 1, (int64_t[]){4}, &e);
        kiln_tensor_free(u);
        kiln_tensor_free(v);
        kiln_tensor_free(w);
    }
}

/* ----------------------------------------------------- one-operand forms */

static void one_operand_forms(void **state)
{
    (void)state;
    for (size_t d = 0; d < 4; d++) {
        kiln_tensor *m = random_tensor(dtypes[d], 2, (int64_t[]){3, 5});
        const kiln_tensor *in[] = {m};
        /* transpose, explicit and implicit ("ba" sorts to "ab") */
        static const char *const transposes[] = {"ij->ji", "ba"};
        for (size_t f = 0; f < 2; f++) {
            expected e = expect(15);
            for (int64_t j = 0; j < 5; j++)
                for (int64_t i = 0; i < 3; i++)
                    accumulate(&e, (uint64_t)(j * 3 + i), at(m, i * 5 + j));
            check(transposes[f], 1, in, 2, (int64_t[]){5, 3}, &e);
        }
        /* identity, row sums, column sums, total */
        expected e = expect(15);
        for (int64_t i = 0; i < 15; i++)
            accumulate(&e, (uint64_t)i, at(m, i));
        check("ij", 1, in, 2, (int64_t[]){3, 5}, &e);
        e = expect(3);
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 5; j++)
                accumulate(&e, (uint64_t)i, at(m, i * 5 + j));
        check("ij->i", 1, in, 1, (int64_t[]){3}, &e);
        e = expect(5);
        for (int64_t j = 0; j < 5; j++)
            for (int64_t i = 0; i < 3; i++)
                accumulate(&e, (uint64_t)j, at(m, i * 5 + j));
        check("ij->j", 1, in, 1, (int64_t[]){5}, &e);
        e = expect(1);
        for (int64_t i = 0; i < 15; i++)
            accumulate(&e, 0, at(m, i));
        check("ij->", 1, in, 0, NULL, &e);
        kiln_tensor_free(m);

        /* trace (explicit and implicit) and diagonal */
        kiln_tensor *s = random_tensor(dtypes[d], 2, (int64_t[]){4, 4});
        for (int implicit = 0; implicit < 2; implicit++) {
            e = expect(1);
            for (int64_t i = 0; i < 4; i++)
                accumulate(&e, 0, at(s, i * 4 + i));
            check(implicit ? "ii" : "ii->", 1, (const kiln_tensor *[]){s}, 0, NULL, &e);
        }
        e = expect(4);
        for (int64_t i = 0; i < 4; i++)
            accumulate(&e, (uint64_t)i, at(s, i * 4 + i));
        check("ii->i", 1, (const kiln_tensor *[]){s}, 1, (int64_t[]){4}, &e);
        kiln_tensor_free(s);

        /* a label three times: iji -> j (diagonal over axes 0 and 2) */
        kiln_tensor *c = random_tensor(dtypes[d], 3, (int64_t[]){3, 2, 3});
        e = expect(2);
        for (int64_t j = 0; j < 2; j++)
            for (int64_t i = 0; i < 3; i++)
                accumulate(&e, (uint64_t)j, at(c, (i * 2 + j) * 3 + i));
        check("iji->j", 1, (const kiln_tensor *[]){c}, 1, (int64_t[]){2}, &e);
        kiln_tensor_free(c);
    }
}

/* -------------------------------------------------------------- ellipsis */

static void ellipsis_forms(void **state)
{
    (void)state;
    for (size_t d = 0; d < 4; d++) {
        /* ...ij,...jk->...ik with '...' = [2, 1] against [3]: broadcast to [2, 3] */
        kiln_tensor *x = random_tensor(dtypes[d], 4, (int64_t[]){2, 1, 3, 4});
        kiln_tensor *y = random_tensor(dtypes[d], 3, (int64_t[]){3, 4, 2});
        expected e = expect(2 * 3 * 3 * 2);
        for (int64_t p = 0; p < 2; p++)
            for (int64_t q = 0; q < 3; q++)
                for (int64_t i = 0; i < 3; i++)
                    for (int64_t k = 0; k < 2; k++)
                        for (int64_t j = 0; j < 4; j++)
                            accumulate(&e, (uint64_t)(((p * 3 + q) * 3 + i) * 2 + k),
                                       at(x, (p * 3 + i) * 4 + j) * at(y, (q * 4 + j) * 2 + k));
        check("...ij,...jk->...ik", 2, (const kiln_tensor *[]){x, y}, 4, (int64_t[]){2, 3, 3, 2}, &e);
        /* implicit: the '...' axes come first, then i and k */
        e = expect(2 * 3 * 3 * 2);
        for (int64_t p = 0; p < 2; p++)
            for (int64_t q = 0; q < 3; q++)
                for (int64_t i = 0; i < 3; i++)
                    for (int64_t k = 0; k < 2; k++)
                        for (int64_t j = 0; j < 4; j++)
                            accumulate(&e, (uint64_t)(((p * 3 + q) * 3 + i) * 2 + k),
                                       at(x, (p * 3 + i) * 4 + j) * at(y, (q * 4 + j) * 2 + k));
        check("...ij,...jk", 2, (const kiln_tensor *[]){x, y}, 4, (int64_t[]){2, 3, 3, 2}, &e);
        kiln_tensor_free(x);
        kiln_tensor_free(y);

        /* ...ii->...i: batched diagonal; i...->i sums the '...' axes away; ...->... is the identity */
        kiln_tensor *s = random_tensor(dtypes[d], 3, (int64_t[]){2, 3, 3});
        e = expect(6);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t i = 0; i < 3; i++)
                accumulate(&e, (uint64_t)(b * 3 + i), at(s, (b * 3 + i) * 3 + i));
        check("...ii->...i", 1, (const kiln_tensor *[]){s}, 2, (int64_t[]){2, 3}, &e);
        e = expect(2);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t r = 0; r < 9; r++)
                accumulate(&e, (uint64_t)b, at(s, b * 9 + r));
        check("i...->i", 1, (const kiln_tensor *[]){s}, 1, (int64_t[]){2}, &e);
        e = expect(18);
        for (int64_t r = 0; r < 18; r++)
            accumulate(&e, (uint64_t)r, at(s, r));
        check("...->...", 1, (const kiln_tensor *[]){s}, 3, (int64_t[]){2, 3, 3}, &e);
        /* '...' standing for no axes */
        e = expect(6);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t j = 0; j < 3; j++)
                for (int64_t i = 0; i < 3; i++)
                    accumulate(&e, (uint64_t)(b * 3 + j), at(s, (b * 3 + i) * 3 + j));
        check("b...ij->bj", 1, (const kiln_tensor *[]){s}, 2, (int64_t[]){2, 3}, &e);
        kiln_tensor_free(s);
    }
}

/* Integer sums wrap; float specials follow IEEE; empty axes sum to zero. */
static void numerics(void **state)
{
    (void)state;
    kiln_error err;
    kiln_tensor *a = new_poisoned_tensor(KILN_I32, 1, (int64_t[]){2});
    ((int32_t *)a->data)[0] = INT32_MAX;
    ((int32_t *)a->data)[1] = 2;
    kiln_tensor *out = new_poisoned_tensor(KILN_I32, 0, NULL);
    assert_int_equal(run_einsum("i,i->", 2, (const kiln_tensor *[]){a, a}, out, &err), KILN_OK);
    uint32_t wrapped = (uint32_t)INT32_MAX * (uint32_t)INT32_MAX + 4u;
    assert_int_equal(*(int32_t *)out->data, (int32_t)wrapped);
    kiln_tensor_free(out);
    kiln_tensor_free(a);

    kiln_tensor *f = new_poisoned_tensor(KILN_F64, 1, (int64_t[]){3});
    ((double *)f->data)[0] = 1.0;
    ((double *)f->data)[1] = INFINITY;
    ((double *)f->data)[2] = 2.0;
    out = new_poisoned_tensor(KILN_F64, 0, NULL);
    assert_int_equal(run_einsum("i->", 1, (const kiln_tensor *[]){f}, out, &err), KILN_OK);
    assert_true(isinf(*(double *)out->data));
    ((double *)f->data)[2] = NAN;
    assert_int_equal(run_einsum("i->", 1, (const kiln_tensor *[]){f}, out, &err), KILN_OK);
    assert_true(isnan(*(double *)out->data));
    kiln_tensor_free(out);
    kiln_tensor_free(f);

    /* A summed label of size 0: every output element is an empty sum, 0. */
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){3, 0});
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){0, 2});
    out = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    assert_int_equal(run_einsum("ij,jk->ik", 2, (const kiln_tensor *[]){x, y}, out, &err), KILN_OK);
    for (int i = 0; i < 6; i++)
        assert_true(((float *)out->data)[i] == 0.0f);
    kiln_tensor_free(out);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* Seconds on the monotonic clock. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * Labels only one operand has are summed within it first (issue 20):
 * "ij,kl->" on two 200 x 200 operands took 3.7 s walking all n^4 products;
 * the factored sum (sum of a) * (sum of b) takes 2n^2 steps. The reference
 * here is that product of sums, in long double. Then forms with shared and
 * own summed labels at once, against the full loop nest.
 */
static void factored_sums(void **state)
{
    (void)state;
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        int64_t n = 200;
        kiln_tensor *a = random_tensor(dtypes[d], 2, (int64_t[]){n, n});
        kiln_tensor *b = random_tensor(dtypes[d], 2, (int64_t[]){n, n});
        long double sum_a = 0, sum_b = 0, abs_a = 0, abs_b = 0;
        for (int64_t i = 0; i < n * n; i++) {
            sum_a += at(a, i);
            abs_a += fabsl(at(a, i));
            sum_b += at(b, i);
            abs_b += fabsl(at(b, i));
        }
        expected e = expect(1);
        e.value[0] = sum_a * sum_b;
        e.magnitude[0] = abs_a * abs_b;
        if (dtypes[d] == KILN_I32) /* wraps modulo 2^32 like the kernel */
            e.value[0] = (int32_t)(uint32_t)(uint64_t)(int64_t)e.value[0];
        kiln_tensor *out = new_poisoned_tensor(dtypes[d], 0, NULL);
        kiln_error err;
        double start = now();
        assert_int_equal(run_einsum("ij,kl->", 2, (const kiln_tensor *[]){a, b}, out, &err), KILN_OK);
        double seconds = now() - start;
        if (seconds >= 0.1)
            fail_msg("ij,kl-> on two %lld x %lld operands (%s) took %.3f s", (long long)n, (long long)n,
                     kiln_dtype_name(dtypes[d]), seconds);
        assert_matches("ij,kl->", out, &e);
        kiln_tensor_free(out);
        kiln_tensor_free(a);
        kiln_tensor_free(b);
    }

    /* b shared and kept, j shared and summed, i and k each one operand's own. */
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        kiln_tensor *a = random_tensor(dtypes[d], 3, (int64_t[]){2, 3, 4});
        kiln_tensor *b = random_tensor(dtypes[d], 3, (int64_t[]){2, 4, 5});
        expected e = expect(2);
        for (int64_t bi = 0; bi < 2; bi++)
            for (int64_t i = 0; i < 3; i++)
                for (int64_t j = 0; j < 4; j++)
                    for (int64_t k = 0; k < 5; k++)
                        accumulate(&e, (uint64_t)bi, at(a, (bi * 3 + i) * 4 + j) * at(b, (bi * 4 + j) * 5 + k));
        check("bij,bjk->b", 2, (const kiln_tensor *[]){a, b}, 1, (int64_t[]){2}, &e);
        /* '...' summed away, broadcast from 1 in one operand. */
        kiln_tensor *c = random_tensor(dtypes[d], 3, (int64_t[]){1, 3, 4});
        e = expect(4);
        for (int64_t x = 0; x < 2; x++)
            for (int64_t i = 0; i < 3; i++)
                for (int64_t j = 0; j < 4; j++)
                    for (int64_t k = 0; k < 5; k++)
                        accumulate(&e, (uint64_t)j, at(c, i * 4 + j) * at(b, (x * 4 + j) * 5 + k));
        check("...ij,...jk->j", 2, (const kiln_tensor *[]){c, b}, 1, (int64_t[]){4}, &e);
        kiln_tensor_free(a);
        kiln_tensor_free(b);
        kiln_tensor_free(c);
    }
}

/* ------------------------------------------------- builder and session */

/* Build einsum over inputs x (and y) with dims n in 1..5, m in 2..6, b in 1..3. */
static kiln_status try_build(const char *equation, uint32_t count, const char *x_shape, const char *y_shape,
                             kiln_dtype y_dtype, char *out_shape, size_t out_size, kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("einsum", &b, err), KILN_OK);
    kiln_value v[2], out;
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 5, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 2, 6, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "b", 1, 3, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, x_shape, &v[0], err), KILN_OK);
    if (count > 1)
        assert_int_equal(kiln_builder_add_input(b, "y", y_dtype, y_shape, &v[1], err), KILN_OK);
    kiln_attribute attr = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = equation};
    kiln_status status = kiln_builder_add_op_with_attributes(b, "einsum", count, v, equation ? 1 : 0, &attr, &out, err);
    if (status == KILN_OK && out_shape) {
        assert_int_equal(kiln_builder_add_output(b, "z", out, err), KILN_OK);
        void *bytes;
        size_t size;
        kiln_program *program;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, err), KILN_OK);
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, err), KILN_OK);
        kiln_program_output_shape_text(program, 0, out_shape, out_size);
        kiln_program_free(program);
        free(bytes);
    }
    kiln_builder_free(b);
    return status;
}

static void symbolic_shape_rule(void **state)
{
    (void)state;
    kiln_error err;
    char text[128];
    assert_int_equal(try_build("bij,bjk->bik", 2, "[b, n, m]", "[b, m, 4]", KILN_F32, text, sizeof text, &err),
                     KILN_OK);
    assert_string_equal(text, "[b, n, 4]");
    assert_int_equal(try_build("ii->i", 1, "[n, n]", NULL, KILN_F32, text, sizeof text, &err), KILN_OK);
    assert_string_equal(text, "[n]");
    assert_int_equal(try_build("ij", 1, "[m, n]", NULL, KILN_F32, text, sizeof text, &err), KILN_OK);
    assert_string_equal(text, "[m, n]");
    assert_int_equal(try_build("ji", 1, "[m, n]", NULL, KILN_F32, text, sizeof text, &err), KILN_OK);
    assert_string_equal(text, "[n, m]");
    /* '...' broadcasting: [b, 1] with [n]; a constant 1 broadcasts */
    assert_int_equal(try_build("...ij,...jk->...ik", 2, "[b, 1, 2, m]", "[n, m, 3]", KILN_F32, text, sizeof text,
                               &err),
                     KILN_OK);
    assert_string_equal(text, "[b, n, 2, 3]");
    assert_int_equal(try_build("...i,...i->...", 2, "[b, n]", "[n]", KILN_F32, text, sizeof text, &err), KILN_OK);
    assert_string_equal(text, "[b]");
}

static void end_to_end(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("einsum", &b, &err), KILN_OK);
    kiln_value v[2], out;
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 6, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n, 3]", &v[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "y", KILN_F64, "[3, n]", &v[1], &err), KILN_OK);
    kiln_attribute attr = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = "ij,jk->ki"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "einsum", 2, v, 1, &attr, &out, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", out, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    for (int64_t n = 1; n <= 6; n += 5) {
        kiln_tensor *x = random_tensor(KILN_F64, 2, (int64_t[]){n, 3});
        kiln_tensor *y = random_tensor(KILN_F64, 2, (int64_t[]){3, n});
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "y", y, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        const kiln_tensor *z = kiln_session_output(session, 0);
        expected e = expect((uint64_t)(n * n));
        for (int64_t k = 0; k < n; k++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < 3; j++)
                    accumulate(&e, (uint64_t)(k * n + i), at(x, i * 3 + j) * at(y, j * n + k));
        assert_matches("ij,jk->ki", z, &e);
        kiln_tensor_free(x);
        kiln_tensor_free(y);
    }
    kiln_session_free(session);
    kiln_program_free(program);
}

/* The equation string survives asm -> artifact -> disasm -> asm byte for byte. */
static void text_round_trip(void **state)
{
    (void)state;
    static const char text[] = "kiln 1.0\n"
                               "program \"e\"\n"
                               "dim n in 1..8\n"
                               "input x: f32[2, n, 3]\n"
                               "input y: f32[3, 4]\n"
                               "%z = einsum(x, y, equation=\"...ij,jk->...ik\")\n"
                               "output z = %z\n";
    kiln_builder *b;
    kiln_error err;
    if (kiln_text_assemble(text, strlen(text), "e.ktxt", NULL, &b, &err) != KILN_OK)
        fail_msg("assemble: %s", err.message);
    static const char *const fragments[] = {"equation=\"...ij,jk->...ik\""};
    ots_assert_text_round_trip(b, "e.ktxt", "[2, n, 4]", fragments, OTS_COUNT(fragments));
}

/* ----------------------------------------------------- static refusals */

static void expect_refusal(const char *equation, uint32_t count, const char *x_shape, const char *y_shape,
                           kiln_dtype y_dtype, const char *const *fragments)
{
    kiln_error err;
    assert_int_equal(try_build(equation, count, x_shape, y_shape, y_dtype, NULL, 0, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (einsum)"));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void equation_refusals(void **state)
{
    (void)state;
    expect_refusal("ij,j?->i", 2, "[2, 3]", "[3, 3]", KILN_F32,
                   (const char *[]){"equation \"ij,j?->i\"", "character '?'", "position 4", NULL});
    expect_refusal("i1->i", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"character '1'", "position 1", NULL});
    expect_refusal("..i->i", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"'.' at position 0 does not start '...'", NULL});
    expect_refusal("...i...->i", 1, "[2, 3]", NULL, 0,
                   (const char *[]){"a second '...' at position 4 in operand 0", NULL});
    expect_refusal("ij-i", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"'-' at position 2 is not followed by '>'", NULL});
    expect_refusal("ij->i->j", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"a second '->' at position 5", NULL});
    expect_refusal("ij->i,j", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"',' at position 5 is in the output", NULL});
    expect_refusal("i,j,k", 2, "[2]", "[3]", KILN_F32, (const char *[]){"third operand", NULL});
    expect_refusal("ij->ik", 1, "[2, 3]", NULL, 0,
                   (const char *[]){"output label 'k' at position 5 is in no operand", NULL});
    expect_refusal("ij->ii", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"output label 'i' at position 5 appears twice", NULL});
    expect_refusal("abcdefghi->a", 1, "[1, 1, 1, 1, 1, 1, 1, 1]", NULL, KILN_F32, (const char *[]){"more than 8 labels", NULL});
    /* Operand count and rank */
    expect_refusal("ij,jk->ik", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"has 2 operands; the node has 1 input", NULL});
    expect_refusal("ijk->i", 1, "[2, 3]", NULL, 0,
                   (const char *[]){"operand 0 has subscripts \"ijk\" (3 labels) but input 0 has rank 2", NULL});
    expect_refusal("...ijk->i", 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"\"...ijk\"", NULL});
    /* Attribute and dtypes */
    expect_refusal(NULL, 1, "[2, 3]", NULL, KILN_F32, (const char *[]){"attribute 'equation' is required", NULL});
    expect_refusal("ij,jk", 2, "[2, 3]", "[3, 3]", KILN_F64, (const char *[]){"f64", NULL});
    expect_refusal("ij,jk", 2, "[2, 3]", "[3, 3]", KILN_U8, (const char *[]){"input 1 has dtype u8", NULL});
}

static void size_refusals(void **state)
{
    (void)state;
    /* A label shared by axes of different sizes: a counterexample, or two constants. */
    expect_refusal("ij,jk->ik", 2, "[2, n]", "[m, 4]", KILN_F32,
                   (const char *[]){"label 'j'", "input 1 axis 0 size m equals input 0 axis 1 size n",
                                    "counterexample", NULL});
    expect_refusal("ij,jk->ik", 2, "[2, 3]", "[4, 4]", KILN_F32,
                   (const char *[]){"it is not true that label 'j': input 1 axis 0 size 4 equals input 0 axis 1 "
                                    "size 3",
                                    NULL});
    expect_refusal("ii->i", 1, "[n, m]", NULL, 0,
                   (const char *[]){"label 'i': input 0 axis 1 size m equals input 0 axis 0 size n", NULL});
    /* '...' axes that do not broadcast */
    expect_refusal("...i,...i->...", 2, "[n, 2]", "[m, 2]", KILN_F32,
                   (const char *[]){"broadcasting the '...' axes", NULL});
    /* Proven equal although written differently: a dim against itself plus zero is the same expression. */
    kiln_error err;
    assert_int_equal(try_build("ij,jk->ik", 2, "[2, n]", "[n, 4]", KILN_F32, NULL, 0, &err), KILN_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(matmul_forms),
        cmocka_unit_test(outer_and_inner_products),
        cmocka_unit_test(one_operand_forms),
        cmocka_unit_test(ellipsis_forms),
        cmocka_unit_test(numerics),
        cmocka_unit_test(factored_sums),
        cmocka_unit_test(symbolic_shape_rule),
        cmocka_unit_test(end_to_end),
        cmocka_unit_test(text_round_trip),
        cmocka_unit_test(equation_refusals),
        cmocka_unit_test(size_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
