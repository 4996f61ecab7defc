/*
 * test_einsum_fast_path.c — einsum equations that are one batched matrix
 * product run on oneDNN's matmul over strided views (einsum.c as_product,
 * spec/ops/einsum.md "Fast path"), within the matmul bound of
 * spec/opset.md: |y - exact| <= (K + 2) 2^-23 sum |a b|. Each case runs in
 * a session with the fast paths and in one with the reference kernels (a
 * product of single rows runs on kiln's own loops instead, vector_matrix.h); the
 * reference run on |a| and |b| gives sum |a b|. Equations that are no such
 * product (two summed labels, a label summed in one operand only) build no
 * primitive and give the reference's bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "program_recipe.h"

#include "onednn.h"

typedef struct einsum_case {
    const char *equation;
    uint32_t a_rank;
    int64_t a_shape[6];
    uint32_t b_rank;
    int64_t b_shape[6];
    int64_t k;           /* the contracted extent (1 when none): the bound's K */
    bool product;        /* whether the equation is a batched product the fast path takes */
    bool one_row;        /* ... of single rows (M = 1), which kiln's own loops run */
} einsum_case;

static const einsum_case cases[] = {
    {"ij,jk->ik", 2, {5, 7}, 2, {7, 3}, 7, true, false},
    {"bij,bjk->bik", 3, {2, 5, 7}, 3, {2, 7, 3}, 7, true, false},
    {"bhqd,bhkd->bhqk", 4, {2, 3, 5, 8}, 4, {2, 3, 6, 8}, 8, true, false},
    {"bhqk,bhkd->bhqd", 4, {2, 3, 5, 6}, 4, {2, 3, 6, 8}, 6, true, false},
    {"ij,kj->ik", 2, {5, 9}, 2, {4, 9}, 9, true, false},
    {"ji,jk->ki", 2, {9, 5}, 2, {9, 4}, 9, true, false},
    {"bij,jk->bik", 3, {3, 5, 7}, 2, {7, 4}, 7, true, false},
    {"i,j->ij", 1, {6}, 1, {5}, 1, true, false},
    {"i,i->", 1, {33}, 1, {33}, 33, true, false},
    /* Single rows of packed operands: oneDNN (over a state view kiln's own loops run them,
     * tests/ops/test_vector_matrix.c and tests/runtime/test_state_view.c). */
    {"bhqd,bhkd->bhqk", 4, {1, 4, 1, 37}, 4, {1, 4, 21, 37}, 37, true, false},
    {"bhqk,bhkd->bhqd", 4, {1, 4, 1, 21}, 4, {1, 4, 21, 13}, 21, true, false},
    {"mk,nk->mn", 2, {1, 256}, 2, {300, 256}, 256, true, false},
    {"bmk,kn->bmn", 3, {3, 1, 7}, 2, {7, 5}, 7, true, false},
    {"ik,ak->ai", 2, {1, 9}, 2, {4, 9}, 9, true, false},
    {"...ij,...jk->...ik", 4, {2, 1, 4, 5}, 3, {3, 5, 6}, 5, true, false},
    {"bnhd,bmhd->bhnm", 4, {2, 7, 3, 16}, 4, {2, 9, 3, 16}, 16, true, false},
    {"ij,ij->", 2, {4, 5}, 2, {4, 5}, 20, false, false},
    {"ij,jk->i", 2, {4, 5}, 2, {5, 3}, 15, false, false},
};

static uint64_t rng = 0x9E3779B97F4A7C15u;

static float random_float(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static kiln_tensor *random_tensor(uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, rank, shape, &t, &err), KILN_OK);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        ((float *)kiln_tensor_data(t))[i] = random_float();
    return t;
}

static kiln_tensor *absolute(const kiln_tensor *t)
{
    kiln_tensor *copy;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, kiln_tensor_rank(t), kiln_tensor_shape(t), &copy, &err), KILN_OK);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        ((float *)kiln_tensor_data(copy))[i] = fabsf(((const float *)kiln_tensor_const_data(t))[i]);
    return copy;
}

static void shape_text(uint32_t rank, const int64_t *shape, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "[");
    for (uint32_t i = 0; i < rank; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(out + n, size - n, "]");
}

static kiln_program *einsum_program(const einsum_case *c)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value a, bv, y;
    char text[128];
    assert_int_equal(kiln_builder_new("einsum", &b, &err), KILN_OK);
    shape_text(c->a_rank, c->a_shape, text, sizeof text);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, text, &a, &err), KILN_OK);
    shape_text(c->b_rank, c->b_shape, text, sizeof text);
    assert_int_equal(kiln_builder_add_input(b, "b", KILN_F32, text, &bv, &err), KILN_OK);
    kiln_attribute equation = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = c->equation};
    if (kiln_builder_add_op_with_attributes(b, "einsum", 2, (kiln_value[]){a, bv}, 1, &equation, &y, &err) != KILN_OK)
        fail_msg("%s: %s", c->equation, err.message);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return recipe_seal(b);
}

/* y of one run of `s` on a, b (owned by the session until its next run). */
static const char *running; /* the equation of the case being run, for failures */

static const kiln_tensor *run(kiln_session *s, const kiln_tensor *a, const kiln_tensor *b)
{
    kiln_error err;
    assert_int_equal(kiln_session_set_input(s, "a", a, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "b", b, &err), KILN_OK);
    if (kiln_session_run(s, &err) != KILN_OK)
        fail_msg("%s: run: %s", running, err.message);
    return kiln_session_output(s, 0);
}

static kiln_session *session(const kiln_program *p, bool reference)
{
    kiln_session_options options;
    kiln_session *s;
    kiln_error err;
    kiln_session_options_default(&options);
    options.reference_kernels = reference;
    options.profile = !reference; /* which path ran the einsum */
    assert_int_equal(kiln_session_new(p, &options, &s, &err), KILN_OK);
    return s;
}

static void check_case(const einsum_case *c)
{
    running = c->equation;
    kiln_program *p = einsum_program(c);
    kiln_session *fast = session(p, false), *reference = session(p, true);
    kiln_tensor *a = random_tensor(c->a_rank, c->a_shape), *b = random_tensor(c->b_rank, c->b_shape);
    kiln_tensor *abs_a = absolute(a), *abs_b = absolute(b);
    const kiln_tensor *got = run(fast, a, b);
    kiln_node_profile profile = {.struct_size = sizeof profile};
    kiln_error err;
    assert_int_equal(kiln_session_profile_node(fast, 0, &profile, &err), KILN_OK);
    /* A product of single rows runs on kiln's loops (vector_matrix.h), any other on oneDNN. */
    bool one_row = c->one_row;
    bool took_fast_path = profile.path == (one_row ? KILN_NODE_PATH_VECTOR : KILN_NODE_PATH_ONEDNN);
    const kiln_tensor *exact = run(reference, a, b);
    uint64_t count = kiln_tensor_element_count(got);
    float *exact_values = malloc(count * sizeof *exact_values + 1);
    assert_non_null(exact_values);
    memcpy(exact_values, kiln_tensor_const_data(exact), count * sizeof *exact_values);
    const float *magnitude = kiln_tensor_const_data(run(reference, abs_a, abs_b));
    const float *values = kiln_tensor_const_data(got);
    for (uint64_t i = 0; i < count; i++) {
        /* The reference rounds its double sum once: within half an ulp of exact, inside the bound's +2. */
        double bound = (double)(c->k + 2) * ldexp(1.0, -23) * (double)magnitude[i] + 1e-30;
        double error = fabs((double)values[i] - (double)exact_values[i]);
        if (!(error <= bound))
            fail_msg("%s: element %llu is %.9g, reference %.9g, error %g > bound %g", c->equation,
                     (unsigned long long)i, (double)values[i], (double)exact_values[i], error, bound);
        if (!c->product && values[i] != exact_values[i])
            fail_msg("%s: not a product, yet element %llu differs from the reference", c->equation,
                     (unsigned long long)i);
    }
    if ((kiln_onednn_enabled() || c->one_row) && took_fast_path != c->product)
        fail_msg("%s: the fast path %s, expected it %s", c->equation, took_fast_path ? "ran" : "did not run",
                 c->product ? "to" : "not to");
    free(exact_values);
    kiln_tensor_free(a), kiln_tensor_free(b), kiln_tensor_free(abs_a), kiln_tensor_free(abs_b);
    kiln_session_free(fast);
    kiln_session_free(reference);
    kiln_program_free(p);
}

static void products_match_the_reference_within_the_bound(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(products_match_the_reference_within_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
