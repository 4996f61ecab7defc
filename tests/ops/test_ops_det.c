/*
 * test_ops_det.c — det against independent references, special values,
 * f16 through f32, end to end through the public builder and a session
 * (its scratch reused), and the shape rule's refusals.
 *
 * The references are written here differently from the kernel: for n <= 6
 * the Leibniz expansion (the signed sum over every permutation of products
 * of one element per row and column) in long double; for larger n,
 * matrices built with a known determinant (a permuted product of unit
 * triangular factors and a diagonal). The kernel instead eliminates with
 * partial pivoting. Agreement is required within a few rounding errors of
 * the sum of the expansion's absolute terms (the condition of the
 * determinant), plus the final rounding to the output dtype.
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

#include "half.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_family_registered(&kiln_ops_det, (const char *const[]){"det"}, 1);
    assert_null(kiln_op_find_version("det", 2));
}

static uint64_t rng_state = 0xA0761D6478BD642Fu;

/* Uniform in [-1, 1), a multiple of 2^-20 (exact in f32 and f64). */
static double random_real(void)
{
    return (double)(int64_t)(xorshift64_star_next(&rng_state) >> 43) / 1048576.0 - 1.0;
}

static long double element_real(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_F32 ? (long double)((const float *)t->data)[i] : (long double)((const double *)t->data)[i];
}

static void set_real(kiln_tensor *t, uint64_t i, long double v)
{
    if (t->dtype == KILN_F32)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = (double)v;
}

static kiln_status run_det(const kiln_tensor *x, kiln_tensor *out, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find("det");
    assert_non_null(op);
    memset(out->data, 0x7F, out->byte_size);
    kiln_kernel_call call = {(const kiln_tensor *[]){x}, 1, out, NULL, 0, NULL};
    return op->run(&call, err);
}

/* ------------------------------------------------ the Leibniz reference */

/*
 * Sum over the permutations of 0..n-1 (Heap's algorithm, sign flipped by
 * each swap) of sign * prod a[i][perm[i]]; `magnitude` gets the sum of the
 * terms' absolute values.
 */
static long double leibniz(const long double *a, int n, long double *magnitude)
{
    int perm[8], c[8] = {0};
    for (int i = 0; i < n; i++)
        perm[i] = i;
    long double sum = 0, total = 0, sign = 1;
    for (int i = 0;;) {
        long double term = sign;
        for (int r = 0; r < n; r++)
            term *= a[r * n + perm[r]];
        sum += term;
        total += fabsl(term);
        while (i < n && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= n)
            break;
        int j = i % 2 == 0 ? 0 : c[i];
        int swap = perm[j];
        perm[j] = perm[i];
        perm[i] = swap;
        sign = -sign;
        c[i]++;
        i = 1;
    }
    *magnitude = total;
    return sum;
}

static void check_close(kiln_dtype dtype, long double got, long double want, long double magnitude, const char *what)
{
    long double unit = dtype == KILN_F32 ? 0x1p-24L : 0x1p-53L;
    long double tolerance = unit * fabsl(want) + 0x1p-50L * magnitude + (dtype == KILN_F32 ? 0x1p-149L : 0x1p-1074L);
    if (!(fabsl(got - want) <= tolerance))
        fail_msg("%s %s: got %.21Lg, expected %.21Lg (terms %.3Lg)", what, kiln_dtype_name(dtype), got, want,
                 magnitude);
}

/* Random batches of n x n matrices, n = 0..6, against the expansion. */
static void matches_leibniz(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64};
    for (size_t d = 0; d < 2; d++)
        for (int n = 0; n <= 6; n++) {
            const int64_t shape[] = {2, 3, n, n};
            kiln_tensor *x = new_poisoned_tensor(dtypes[d], 4, shape), *y = new_poisoned_tensor(dtypes[d], 2, shape);
            for (uint64_t i = 0; i < x->element_count; i++) {
                /* Some matrices of small integers (exactly singular ones among them), some reals. */
                double v = (i / (uint64_t)(n * n + 1)) % 2 ? (double)(int)(xorshift64_star_next(&rng_state) % 5) - 2
                                                           : random_real();
                set_real(x, i, v);
            }
            kiln_error err;
            if (run_det(x, y, &err) != KILN_OK)
                fail_msg("det failed: %s", err.message);
            for (uint64_t m = 0; m < 6; m++) {
                long double a[36], magnitude;
                for (int i = 0; i < n * n; i++)
                    a[i] = element_real(x, m * (uint64_t)(n * n) + (uint64_t)i);
                long double want = leibniz(a, n, &magnitude);
                char what[32];
                snprintf(what, sizeof what, "n=%d matrix %llu", n, (unsigned long long)m);
                check_close(dtypes[d], element_real(y, m), want, magnitude, what);
            }
            kiln_tensor_free(x);
            kiln_tensor_free(y);
        }
}

/*
 * Larger n: A = P L D U with L unit lower, U unit upper (entries in
 * [-1, 1)), D diagonal and P a permutation of known sign, so
 * det A = sign(P) * prod(D). Pivoting must find its way through P.
 */
static void known_determinants(void **state)
{
    (void)state;
    static const int sizes[] = {7, 12, 25};
    for (size_t s = 0; s < 3; s++) {
        int n = sizes[s];
        long double *l = calloc((size_t)(n * n), sizeof *l), *u = calloc((size_t)(n * n), sizeof *u);
        long double *a = calloc((size_t)(n * n), sizeof *a);
        int *perm = calloc((size_t)n, sizeof *perm);
        assert_true(l && u && a && perm);
        long double want = 1;
        for (int i = 0; i < n; i++) {
            perm[i] = i;
            l[i * n + i] = u[i * n + i] = 1;
            for (int j = 0; j < i; j++)
                l[i * n + j] = random_real() / 2;
            for (int j = i + 1; j < n; j++)
                u[i * n + j] = random_real() / 2;
        }
        long double diagonal[32];
        for (int i = 0; i < n; i++) {
            diagonal[i] = (i % 3 == 0 ? 2.0L : 0.75L) * (i % 2 ? -1 : 1);
            want *= diagonal[i];
        }
        /* A reversal permutation: sign (-1)^(n(n-1)/2). */
        for (int i = 0; i < n; i++)
            perm[i] = n - 1 - i;
        if ((n * (n - 1) / 2) % 2)
            want = -want;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                long double sum = 0;
                for (int k = 0; k < n; k++)
                    sum += l[i * n + k] * diagonal[k] * u[k * n + j];
                a[perm[i] * n + j] = sum;
            }
        for (size_t d = 0; d < 2; d++) {
            kiln_dtype dtype = d ? KILN_F64 : KILN_F32;
            kiln_tensor *x = new_poisoned_tensor(dtype, 2, (int64_t[]){n, n}), *y = new_poisoned_tensor(dtype, 0, NULL);
            for (int i = 0; i < n * n; i++)
                set_real(x, (uint64_t)i, a[i]);
            kiln_error err;
            assert_int_equal(run_det(x, y, &err), KILN_OK);
            /* The matrix was rounded to the dtype on the way in: that, not the kernel, bounds the agreement. */
            long double got = element_real(y, 0), tolerance = (dtype == KILN_F32 ? 1e-4L : 1e-12L) * fabsl(want);
            if (!(fabsl(got - want) <= tolerance))
                fail_msg("n=%d %s: got %.17Lg, expected %.17Lg", n, kiln_dtype_name(dtype), got, want);
            kiln_tensor_free(x);
            kiln_tensor_free(y);
        }
        free(l);
        free(u);
        free(a);
        free(perm);
    }
}

/* Exact cases: identity, permutation signs, a zero column, 0 x 0, NaN, infinity. */
static void special_values(void **state)
{
    (void)state;
    kiln_error err;
    kiln_tensor *x = new_poisoned_tensor(KILN_F64, 3, (int64_t[]){6, 3, 3});
    kiln_tensor *y = new_poisoned_tensor(KILN_F64, 1, (int64_t[]){6});
    static const double matrices[6][9] = {
        {1, 0, 0, 0, 1, 0, 0, 0, 1},         /* identity: 1 */
        {0, 1, 0, 1, 0, 0, 0, 0, 1},         /* one swap: -1 */
        {1, 0, 5, 2, 0, 6, 3, 0, 7},         /* a zero column: 0 */
        {1, 2, 3, NAN, 5, 6, 7, 8, 9},       /* NaN: NaN */
        {2, 0, 0, 0, 0.5, 0, 0, 0, 1e300},   /* exact: 1e300 */
        {0, NAN, 1, 0, 1, 0, 0, 0, 1},       /* singular, but a NaN: NaN */
    };
    memcpy(x->data, matrices, sizeof matrices);
    assert_int_equal(run_det(x, y, &err), KILN_OK);
    const double *o = y->data;
    assert_true(o[0] == 1);
    assert_true(o[1] == -1);
    assert_true(o[2] == 0);
    assert_true(isnan(o[3]));
    assert_true(o[4] == 1e300);
    assert_true(isnan(o[5]));
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    /* 2^600 * 2^600 overflows double but not long double; the rounding at the end gives inf. */
    x = new_poisoned_tensor(KILN_F64, 2, (int64_t[]){2, 2});
    y = new_poisoned_tensor(KILN_F64, 0, NULL);
    memcpy(x->data, (double[]){0x1p600, 0, 0, 0x1p600}, 4 * sizeof(double));
    assert_int_equal(run_det(x, y, &err), KILN_OK);
    assert_true(isinf(((double *)y->data)[0]));
    /* ... and 2^700 * 2^-600 is 2^100, exactly. */
    memcpy(x->data, (double[]){0x1p700, 7, 0, 0x1p-600}, 4 * sizeof(double));
    assert_int_equal(run_det(x, y, &err), KILN_OK);
    assert_true(((double *)y->data)[0] == 0x1p100);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    /* 0 x 0 matrices: 1; an empty batch: nothing. */
    x = new_poisoned_tensor(KILN_F32, 3, (int64_t[]){2, 0, 0});
    y = new_poisoned_tensor(KILN_F32, 1, (int64_t[]){2});
    assert_int_equal(run_det(x, y, &err), KILN_OK);
    assert_true(((float *)y->data)[0] == 1 && ((float *)y->data)[1] == 1);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* f16: the f32 kernel on the widened values, rounded once. */
static void half_through_f32(void **state)
{
    (void)state;
    const int64_t shape[] = {4, 3, 3};
    kiln_tensor *x16 = new_poisoned_tensor(KILN_BF16, 3, shape), *x32 = new_poisoned_tensor(KILN_F32, 3, shape);
    kiln_tensor *y16 = new_poisoned_tensor(KILN_BF16, 1, shape), *y32 = new_poisoned_tensor(KILN_F32, 1, shape);
    for (uint64_t i = 0; i < x16->element_count; i++) {
        ((uint16_t *)x16->data)[i] = kiln_f32_to_bf16((float)random_real() * 3);
        ((float *)x32->data)[i] = kiln_bf16_to_f32(((uint16_t *)x16->data)[i]);
    }
    kiln_error err;
    assert_int_equal(run_det(x16, y16, &err), KILN_OK);
    assert_int_equal(run_det(x32, y32, &err), KILN_OK);
    for (uint64_t i = 0; i < 4; i++)
        assert_int_equal(((uint16_t *)y16->data)[i], kiln_f32_to_bf16(((float *)y32->data)[i]));
    kiln_tensor_free(x16);
    kiln_tensor_free(x32);
    kiln_tensor_free(y16);
    kiln_tensor_free(y32);
}

/* ------------------------------------------------- builder and session */

static kiln_status try_build(const char *shape, kiln_dtype dtype, kiln_program **program, kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("det", &b, err), KILN_OK);
    kiln_value x, y;
    assert_int_equal(kiln_builder_add_dim(b, "n", 0, 9, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 1, 9, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, shape, &x, err), KILN_OK);
    kiln_status status = kiln_builder_add_op(b, "det", 1, &x, &y, err);
    if (status == KILN_OK && program) {
        assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
        void *bytes;
        size_t size;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, err), KILN_OK);
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, program, NULL, err), KILN_OK);
        free(bytes);
    }
    kiln_builder_free(b);
    return status;
}

/* A symbolic size, run at growing and shrinking sizes (the scratch grows once, then is reused). */
static void end_to_end_symbolic(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program;
    assert_int_equal(try_build("[2, n, n]", KILN_F64, &program, &err), KILN_OK);
    char shape[32];
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[2]");
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    static const int64_t sizes[] = {3, 6, 0, 2, 6, 1};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        kiln_tensor *x = new_poisoned_tensor(KILN_F64, 3, (int64_t[]){2, n, n});
        for (uint64_t i = 0; i < x->element_count; i++)
            set_real(x, i, random_real());
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run: %s", err.message);
        const double *o = kiln_tensor_const_data(kiln_session_output(session, 0));
        for (uint64_t m = 0; m < 2; m++) {
            long double a[36], magnitude;
            for (int64_t i = 0; i < n * n; i++)
                a[i] = element_real(x, m * (uint64_t)(n * n) + (uint64_t)i);
            long double want = leibniz(a, (int)n, &magnitude);
            check_close(KILN_F64, o[m], want, magnitude, "session");
        }
        kiln_tensor_free(x);
    }
    kiln_session_free(session);
    kiln_program_free(program);
}

static void expect_refusal(const char *shape, kiln_dtype dtype, const char *const *fragments)
{
    kiln_error err;
    assert_int_equal(try_build(shape, dtype, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (det)"));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void refusals(void **state)
{
    (void)state;
    expect_refusal("[n]", KILN_F32, (const char *[]){"x has rank 1", "rank >= 2", NULL});
    expect_refusal("[3, 3]", KILN_I64, (const char *[]){"x has dtype i64", "f32, f64, f16 or bf16", NULL});
    expect_refusal("[2, 3]", KILN_F32, (const char *[]){"x axis 0 size 2 equals x axis 1 size 3", NULL});
    expect_refusal("[4, n, m]", KILN_F64,
                   (const char *[]){"x axis 1 size n equals x axis 2 size m", "counterexample", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(matches_leibniz),
        cmocka_unit_test(known_determinants),
        cmocka_unit_test(special_values),
        cmocka_unit_test(half_through_f32),
        cmocka_unit_test(end_to_end_symbolic),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
