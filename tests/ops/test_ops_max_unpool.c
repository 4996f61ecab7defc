/*
 * test_ops_max_unpool.c — max_unpool against an independent reference, its
 * run-time index checks, the static output shape (inferred, symbolic, or
 * the output_shape attribute) through the public builder and a session,
 * and the shape rule's refusals.
 *
 * The reference pulls instead of pushing: for every output position it
 * scans all indices for the last one naming that position (a later
 * element wins, as the kernel's in-order writes do) and expects that
 * element, bit for bit, or zero bytes when none does. The inputs come from
 * a naive max pool written here, as a network produces them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_family_registered(&kiln_ops_max_unpool, (const char *const[]){"max_unpool"}, 1);
    assert_null(kiln_op_find_version("max_unpool", 2));
}

static uint64_t rng_state = 0x853C49E6748FEA9Bu;

static kiln_status run_unpool(const kiln_tensor *x, const kiln_tensor *indices, kiln_tensor *out, uint32_t count,
                              const kiln_node_attribute *attributes, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find("max_unpool");
    assert_non_null(op);
    memset(out->data, 0x7F, out->byte_size); /* poison: an element left unwritten is caught */
    kiln_kernel_call call = {(const kiln_tensor *[]){x, indices}, 2, out, attributes, count, NULL};
    return op->run(&call, err);
}

/*
 * The reference: pull each output element from the last index naming its
 * position. `space` is the index space (the unpooled shape); an output
 * position outside it (output_shape larger) is never named: zero.
 */
static void check_against_pull(const kiln_tensor *x, const kiln_tensor *indices, const kiln_tensor *y,
                               const int64_t *space)
{
    size_t width = kiln_dtype_size(x->dtype);
    const int64_t *at = indices->data;
    static const uint8_t zero[16] = {0};
    for (uint64_t p = 0; p < y->element_count; p++) {
        int64_t position[KILN_MAX_RANK];
        uint64_t rest = p;
        for (uint32_t axis = y->rank; axis-- > 0;) {
            position[axis] = (int64_t)(rest % (uint64_t)y->shape[axis]);
            rest /= (uint64_t)y->shape[axis];
        }
        int64_t q = 0;
        for (uint32_t axis = 0; axis < y->rank && q >= 0; axis++)
            q = position[axis] < space[axis] ? q * space[axis] + position[axis] : -1;
        const uint8_t *want = zero;
        for (uint64_t i = 0; q >= 0 && i < indices->element_count; i++)
            if (at[i] == q)
                want = (const uint8_t *)x->data + i * width;
        if (memcmp((const uint8_t *)y->data + p * width, want, width) != 0)
            fail_msg("output element %llu is not what the indices put there", (unsigned long long)p);
    }
}

/*
 * A naive 2-D max pool of a random [n, c, h, w] f32 tensor (kernel k,
 * stride s, no pads): the pooled values and the flat indices of their
 * maxima over the whole tensor, first maximum on ties.
 */
static void pool(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, kiln_tensor **values,
                 kiln_tensor **indices)
{
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){n, c, h, w});
    for (uint64_t i = 0; i < x->element_count; i++)
        ((float *)x->data)[i] = (float)(xorshift64_star_next(&rng_state) % 7) - 3.0f; /* ties on purpose */
    int64_t oh = (h - k) / s + 1, ow = (w - k) / s + 1;
    *values = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){n, c, oh, ow});
    *indices = new_poisoned_tensor(KILN_I64, 4, (int64_t[]){n, c, oh, ow});
    uint64_t o = 0;
    for (int64_t b = 0; b < n * c; b++)
        for (int64_t r = 0; r < oh; r++)
            for (int64_t q = 0; q < ow; q++, o++) {
                int64_t best = -1;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t flat = (b * h + r * s + i) * w + q * s + j;
                        if (best < 0 || ((float *)x->data)[flat] > ((float *)x->data)[best])
                            best = flat;
                    }
                ((float *)(*values)->data)[o] = ((float *)x->data)[best];
                ((int64_t *)(*indices)->data)[o] = best;
            }
    kiln_tensor_free(x);
}

static void unpools_a_pool(void **state)
{
    (void)state;
    static const struct {
        int64_t n, c, h, w, k, s;
    } cases[] = {{1, 1, 4, 4, 2, 2}, {2, 3, 5, 7, 3, 2}, {1, 2, 6, 6, 2, 1}, {2, 1, 3, 3, 3, 1}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        kiln_tensor *values, *indices;
        pool(cases[t].n, cases[t].c, cases[t].h, cases[t].w, cases[t].k, cases[t].s, &values, &indices);
        int64_t oh = (cases[t].h - cases[t].k) / cases[t].s + 1, ow = (cases[t].w - cases[t].k) / cases[t].s + 1;
        /* The inferred size: (in - 1) * s + k (no pads), which may be smaller than the pooled input. */
        int64_t uh = (oh - 1) * cases[t].s + cases[t].k, uw = (ow - 1) * cases[t].s + cases[t].k;
        int64_t kernel[] = {cases[t].k, cases[t].k}, strides[] = {cases[t].s, cases[t].s};
        int64_t space[] = {cases[t].n, cases[t].c, uh, uw};
        assert_true(uh == cases[t].h && uw == cases[t].w); /* these pools cover their input */
        kiln_node_attribute attrs[] = {
            {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
            {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
        };
        kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, space);
        kiln_error err;
        if (run_unpool(values, indices, y, 2, attrs, &err) != KILN_OK)
            fail_msg("max_unpool failed: %s", err.message);
        check_against_pull(values, indices, y, space);
        kiln_tensor_free(y);
        /* output_shape larger on every axis: each element keeps its position, zeros around. */
        int64_t target[] = {cases[t].n + 1, cases[t].c + 2, uh + 1, uw + 3};
        kiln_node_attribute with_target[] = {
            attrs[0], {.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = target, .count = 4}, attrs[1]};
        y = new_poisoned_tensor(KILN_F32, 4, target);
        assert_int_equal(run_unpool(values, indices, y, 3, with_target, &err), KILN_OK);
        check_against_pull(values, indices, y, space);
        kiln_tensor_free(y);
        kiln_tensor_free(values);
        kiln_tensor_free(indices);
    }
}

/* Any dtype, moved bit for bit; a repeated index keeps the later element. */
static void any_dtype_and_repeats(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_U8, KILN_I64, KILN_F16, KILN_BOOL, KILN_F64};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        kiln_tensor *x = new_poisoned_tensor(dtypes[d], 3, (int64_t[]){2, 1, 5});
        kiln_tensor *indices = new_poisoned_tensor(KILN_I64, 3, (int64_t[]){2, 1, 5});
        kiln_tensor *y = new_poisoned_tensor(dtypes[d], 3, (int64_t[]){2, 1, 11}); /* (5 - 1) * 2 + 3 */
        for (size_t b = 0; b < x->byte_size; b++) {
            uint64_t r = xorshift64_star_next(&rng_state);
            ((uint8_t *)x->data)[b] = dtypes[d] == KILN_BOOL ? (uint8_t)(r & 1) : (uint8_t)r;
        }
        for (uint64_t i = 0; i < indices->element_count; i++)
            ((int64_t *)indices->data)[i] = (int64_t)(xorshift64_star_next(&rng_state) % 22); /* repeats likely */
        int64_t kernel = 3, strides = 2;
        kiln_node_attribute attrs[] = {
            {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = &kernel, .count = 1},
            {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = &strides, .count = 1},
        };
        kiln_error err;
        assert_int_equal(run_unpool(x, indices, y, 2, attrs, &err), KILN_OK);
        check_against_pull(x, indices, y, y->shape);
        kiln_tensor_free(x);
        kiln_tensor_free(indices);
        kiln_tensor_free(y);
    }
}

/* An index outside the output fails the run, naming it, before anything is written. */
static void bad_indices(void **state)
{
    (void)state;
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 2, 2});
    kiln_tensor *indices = new_poisoned_tensor(KILN_I64, 4, (int64_t[]){1, 1, 2, 2});
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 4, 4});
    int64_t kernel[] = {2, 2}, strides[] = {2, 2};
    kiln_node_attribute attrs[] = {
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    static const int64_t bad[][4] = {{0, 5, 10, 16}, {-1, 5, 10, 15}, {0, 1, INT64_MIN, 2}};
    static const char *const messages[] = {("index 16 at indices position [0, 0, 1, 1] is outside 0..15 (the "
                                            "unpooled tensor has 16 elements)"),
                                           "index -1 at indices position [0, 0, 0, 0]",
                                           "index -9223372036854775808 at indices position [0, 0, 1, 0]"};
    for (size_t i = 0; i < 3; i++) {
        memcpy(indices->data, bad[i], sizeof bad[i]);
        kiln_error err;
        assert_int_equal(run_unpool(x, indices, y, 2, attrs, &err), KILN_ERR_RUNTIME);
        if (!strstr(err.message, messages[i]))
            fail_msg("expected \"%s\" in: %s", messages[i], err.message);
        for (size_t b = 0; b < y->byte_size; b++)
            assert_int_equal(((uint8_t *)y->data)[b], 0x7F); /* untouched */
    }
    kiln_tensor_free(x);
    kiln_tensor_free(indices);
    kiln_tensor_free(y);
}

/* ------------------------------------------------- builder and session */

static kiln_status try_build(const char *x_shape, kiln_dtype x_dtype, const char *indices_shape,
                             kiln_dtype indices_dtype, uint32_t attribute_count, const kiln_attribute *attributes,
                             kiln_program **program, kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("unpool", &b, err), KILN_OK);
    kiln_value in[2], y;
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "h", 1, 16, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", x_dtype, x_shape, &in[0], err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "indices", indices_dtype, indices_shape, &in[1], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, "max_unpool", 2, in, attribute_count, attributes, &y, err);
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

static void output_shapes_and_session(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program;
    int64_t kernel[] = {2, 3}, strides[] = {2, 1}, pads[] = {0, 1, 1, 0};
    kiln_attribute attrs[] = {
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
    };
    /* (h - 1) * 2 + 2 - 0 - 1 = 2h - 1 and (5 - 1) * 1 + 3 - 1 - 0 = 6. */
    assert_int_equal(try_build("[n, 3, h, 5]", KILN_F32, "[n, 3, h, 5]", KILN_I64, 3, attrs, &program, &err), KILN_OK);
    char shape[64];
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[n, 3, 2*h - 1, 6]");
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    for (int64_t h = 1; h <= 4; h += 3) {
        kiln_tensor *x = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, 3, h, 5});
        kiln_tensor *indices = new_poisoned_tensor(KILN_I64, 4, (int64_t[]){2, 3, h, 5});
        int64_t total = 2 * 3 * (2 * h - 1) * 6;
        for (uint64_t i = 0; i < x->element_count; i++) {
            ((float *)x->data)[i] = (float)i + 1;
            ((int64_t *)indices->data)[i] = (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)total);
        }
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "indices", indices, &err), KILN_OK);
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run: %s", err.message);
        const kiln_tensor *out = kiln_session_output(session, 0);
        check_against_pull(x, indices, out, out->shape);
        /* One index past the end: the run fails. */
        ((int64_t *)indices->data)[0] = total;
        assert_int_equal(kiln_session_set_input(session, "indices", indices, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "is outside 0.."));
        kiln_tensor_free(x);
        kiln_tensor_free(indices);
    }
    kiln_session_free(session);
    kiln_program_free(program);
    /* output_shape: a constant shape. */
    int64_t target[] = {1, 3, 5, 9}; /* around [1, 3, 5, 7] */
    kiln_attribute with_target[] = {
        attrs[0], {.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = target, .count = 4}};
    assert_int_equal(try_build("[1, 3, 4, 5]", KILN_F32, "[1, 3, 4, 5]", KILN_I64, 2, with_target, &program, &err),
                     KILN_OK);
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[1, 3, 5, 9]");
    kiln_program_free(program);
}

static void expect_refusal(const char *x_shape, const char *indices_shape, kiln_dtype indices_dtype, uint32_t count,
                           const kiln_attribute *attributes, const char *const *fragments)
{
    kiln_error err;
    assert_int_equal(try_build(x_shape, KILN_F32, indices_shape, indices_dtype, count, attributes, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (max_unpool)"));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void refusals(void **state)
{
    (void)state;
    int64_t kernel[] = {2, 2}, one[] = {2}, zero[] = {0, 2}, pads[] = {3, 3, 0, 0}, target[] = {1, 3, 4},
            negative[] = {1, 3, -4, 4};
    kiln_attribute k = {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 0, NULL,
                   (const char *[]){"attribute 'kernel_shape' is required", NULL});
    kiln_attribute short_kernel = {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = one, .count = 1};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 1, &short_kernel,
                   (const char *[]){"'kernel_shape' has 1 entries", "one per spatial axis (2)", NULL});
    kiln_attribute zero_kernel = {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = zero, .count = 2};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 1, &zero_kernel,
                   (const char *[]){"kernel_shape[0] = 0 is outside 1..", NULL});
    expect_refusal("[n, 3]", "[n, 3]", KILN_I64, 1, &k, (const char *[]){"x has rank 2", NULL});
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I32, 1, &k,
                   (const char *[]){"indices (input 1) have dtype i32; expected i64", NULL});
    expect_refusal("[n, 3, h, h]", "[n, 3, h]", KILN_I64, 1, &k,
                   (const char *[]){"indices (input 1) have rank 3; x has rank 4", NULL});
    expect_refusal("[n, 3, h, h]", "[m, 3, h, h]", KILN_I64, 1, &k,
                   (const char *[]){"indices (input 1) axis 0 size m equals x axis 0 size n", "counterexample", NULL});
    /* Pads that empty the output: (h - 1) * 1 + 2 - 6 >= 1 fails for small h. */
    kiln_attribute padded[] = {k, {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 2, padded,
                   (const char *[]){"output axis 2 size", "is at least 1", "counterexample", NULL});
    kiln_attribute short_target[] = {
        k, {.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = target, .count = 3}};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 2, short_target,
                   (const char *[]){"'output_shape' has 3 entries", "rank 4", NULL});
    int64_t small[] = {1, 3, 9, 9};
    kiln_attribute small_target[] = {
        k, {.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = small, .count = 4}};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 2, small_target,
                   (const char *[]){"output_shape[0] = 1 is at least the unpooled size n", "counterexample", NULL});
    expect_refusal("[1, 3, h, h]", "[1, 3, h, h]", KILN_I64, 2, small_target,
                   (const char *[]){"output_shape[2] = 9 is at least the unpooled size h + 1", "counterexample",
                                    NULL});
    kiln_attribute target_and_pads[] = {k, small_target[1], padded[1]};
    expect_refusal("[1, 3, h, h]", "[1, 3, h, h]", KILN_I64, 3, target_and_pads,
                   (const char *[]){"'pads' cannot be given with 'output_shape'", NULL});
    kiln_attribute negative_target[] = {
        k, {.name = "output_shape", .type = KILN_ATTRIBUTE_INTS, .ints = negative, .count = 4}};
    expect_refusal("[n, 3, h, h]", "[n, 3, h, h]", KILN_I64, 2, negative_target,
                   (const char *[]){"output_shape[2] = -4 is negative", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(unpools_a_pool),
        cmocka_unit_test(any_dtype_and_repeats),
        cmocka_unit_test(bad_indices),
        cmocka_unit_test(output_shapes_and_session),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
