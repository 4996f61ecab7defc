/*
 * test_ops_reverse_sequence.c — reverse_sequence against an independent
 * reference, its run-time checks of sequence_lens, end to end through the
 * public builder (lengths as an input and as a stored constant) and a
 * session, and the shape rule's refusals.
 *
 * The reference walks every output element by its full multi-index and
 * computes the source index on the time axis by the ONNX definition; the
 * kernel instead copies whole inner rows by strides. The result must match
 * bit for bit.
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
    assert_family_registered(&kiln_ops_reverse_sequence, (const char *const[]){"reverse_sequence"}, 1);
    assert_null(kiln_op_find_version("reverse_sequence", 2));
}

static uint64_t rng_state = 0xD1B54A32D192ED03u;

static kiln_status run_reverse(const kiln_tensor *x, const kiln_tensor *lengths, kiln_tensor *out, int64_t time_axis,
                               int64_t batch_axis, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find("reverse_sequence");
    assert_non_null(op);
    memset(out->data, 0x7F, out->byte_size);
    kiln_node_attribute attrs[] = {
        {.name = "batch_axis", .type = KILN_ATTRIBUTE_INT, .i = batch_axis},
        {.name = "time_axis", .type = KILN_ATTRIBUTE_INT, .i = time_axis},
    };
    kiln_kernel_call call = {(const kiln_tensor *[]){x, lengths}, 2, out, attrs, 2, NULL};
    return op->run(&call, err);
}

static void check_case(kiln_dtype dtype, kiln_dtype length_dtype, uint32_t rank, const int64_t *shape, int time_axis)
{
    int batch_axis = 1 - time_axis;
    int64_t steps = shape[time_axis], batches = shape[batch_axis];
    kiln_tensor *x = new_poisoned_tensor(dtype, rank, shape), *y = new_poisoned_tensor(dtype, rank, shape);
    kiln_tensor *lengths = new_poisoned_tensor(length_dtype, 1, &batches);
    for (size_t i = 0; i < x->byte_size; i++)
        ((uint8_t *)x->data)[i] = (uint8_t)xorshift64_star_next(&rng_state);
    int64_t length_of[64];
    for (int64_t b = 0; b < batches; b++) {
        /* 0, 1, T and values between. */
        int64_t pick = (int64_t)(xorshift64_star_next(&rng_state) % 4);
        length_of[b] = pick == 0   ? 0
                       : pick == 1 ? steps
                       : pick == 2 ? 1 % (steps + 1)
                                   : (int64_t)(xorshift64_star_next(&rng_state) % (uint64_t)(steps + 1));
        if (length_dtype == KILN_I32)
            ((int32_t *)lengths->data)[b] = (int32_t)length_of[b];
        else
            ((int64_t *)lengths->data)[b] = length_of[b];
    }
    kiln_error err;
    if (run_reverse(x, lengths, y, time_axis, batch_axis, &err) != KILN_OK)
        fail_msg("reverse_sequence failed: %s", err.message);
    size_t width = kiln_dtype_size(dtype);
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint64_t e = 0; e < y->element_count; e++) {
        int64_t source[KILN_MAX_RANK];
        memcpy(source, index, sizeof source);
        int64_t b = index[batch_axis], t = index[time_axis];
        if (t < length_of[b])
            source[time_axis] = length_of[b] - 1 - t;
        uint64_t flat = 0;
        for (uint32_t i = 0; i < rank; i++)
            flat = flat * (uint64_t)shape[i] + (uint64_t)source[i];
        if (memcmp((uint8_t *)y->data + e * width, (uint8_t *)x->data + flat * width, width) != 0)
            fail_msg("time_axis %d, rank %u: element %llu does not come from %llu", time_axis, rank,
                     (unsigned long long)e, (unsigned long long)flat);
        for (uint32_t i = rank; i-- > 0;) {
            if (++index[i] < shape[i])
                break;
            index[i] = 0;
        }
    }
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    kiln_tensor_free(lengths);
}

static void matches_reference(void **state)
{
    (void)state;
    static const struct {
        uint32_t rank;
        int64_t shape[4];
    } shapes[] = {{2, {4, 4}}, {2, {1, 5}}, {2, {7, 1}}, {3, {3, 5, 2}}, {4, {6, 2, 3, 2}}, {3, {2, 0, 3}}};
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_I64, KILN_U8, KILN_F16, KILN_BOOL, KILN_F64};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int time_axis = 0; time_axis < 2; time_axis++)
            for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
                check_case(dtypes[d], d % 2 ? KILN_I32 : KILN_I64, shapes[s].rank, shapes[s].shape, time_axis);
}

/* ONNX's reversesequence_time case by hand: x[t, b] = 4t + b, lengths [4, 3, 2, 1]. */
static void known_values(void **state)
{
    (void)state;
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){4, 4});
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){4, 4});
    kiln_tensor *lengths = new_poisoned_tensor(KILN_I64, 1, (int64_t[]){4});
    for (int i = 0; i < 16; i++)
        ((float *)x->data)[i] = (float)i;
    memcpy(lengths->data, (int64_t[]){4, 3, 2, 1}, 4 * sizeof(int64_t));
    kiln_error err;
    assert_int_equal(run_reverse(x, lengths, y, 0, 1, &err), KILN_OK);
    static const float want[] = {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15};
    assert_memory_equal(y->data, want, sizeof want);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    kiln_tensor_free(lengths);
}

/* A length outside 0..T fails the run, naming the entry and the value, before anything is written. */
static void bad_lengths(void **state)
{
    (void)state;
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){3, 2});
    kiln_tensor *lengths = new_poisoned_tensor(KILN_I64, 1, (int64_t[]){2});
    static const int64_t bad[][2] = {{1, 4}, {-1, 2}, {INT64_MIN, 0}, {3, INT64_MAX}};
    static const char *const messages[] = {"sequence_lens[1] = 4 is outside 0..3", "sequence_lens[0] = -1 is outside",
                                           "sequence_lens[0] = -9223372036854775808",
                                           "sequence_lens[1] = 9223372036854775807"};
    for (size_t i = 0; i < 4; i++) {
        memcpy(lengths->data, bad[i], sizeof bad[i]);
        kiln_error err;
        assert_int_equal(run_reverse(x, lengths, y, 0, 1, &err), KILN_ERR_RUNTIME);
        if (!strstr(err.message, messages[i]))
            fail_msg("expected \"%s\" in: %s", messages[i], err.message);
        for (size_t b = 0; b < y->byte_size; b++)
            assert_int_equal(((uint8_t *)y->data)[b], 0x7F); /* untouched */
    }
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    kiln_tensor_free(lengths);
}

/* ------------------------------------------------- builder and session */

static kiln_status try_build(const char *x_shape, kiln_dtype x_dtype, const char *lengths_shape,
                             kiln_dtype lengths_dtype, uint32_t attribute_count, const kiln_attribute *attributes,
                             kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("reverse", &b, err), KILN_OK);
    kiln_value in[2], y;
    assert_int_equal(kiln_builder_add_dim(b, "t", 1, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 1, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", x_dtype, x_shape, &in[0], err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "lengths", lengths_dtype, lengths_shape, &in[1], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, "reverse_sequence", 2, in, attribute_count, attributes, &y, err);
    kiln_builder_free(b);
    return status;
}

static void expect_refusal(const char *x_shape, kiln_dtype x_dtype, const char *lengths_shape,
                           kiln_dtype lengths_dtype, uint32_t count, const kiln_attribute *attributes,
                           const char *const *fragments)
{
    kiln_error err;
    assert_int_equal(try_build(x_shape, x_dtype, lengths_shape, lengths_dtype, count, attributes, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (reverse_sequence)"));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void refusals(void **state)
{
    (void)state;
    kiln_attribute attr = {.name = "time_axis", .type = KILN_ATTRIBUTE_INT, .i = 2};
    expect_refusal("[t, n]", KILN_F32, "[n]", KILN_I64, 1, &attr,
                   (const char *[]){"attribute 'time_axis' is 2; expected 0 or 1", NULL});
    attr = (kiln_attribute){.name = "batch_axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    expect_refusal("[t, n]", KILN_F32, "[n]", KILN_I64, 1, &attr,
                   (const char *[]){"attribute 'batch_axis' is -1; expected 0 or 1", NULL});
    attr = (kiln_attribute){.name = "batch_axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
    expect_refusal("[t, n]", KILN_F32, "[n]", KILN_I64, 1, &attr,
                   (const char *[]){"'time_axis' and 'batch_axis' are both 0", NULL});
    expect_refusal("[t]", KILN_F32, "[n]", KILN_I64, 0, NULL, (const char *[]){"x has rank 1", "rank >= 2", NULL});
    expect_refusal("[t, n]", KILN_F32, "[n]", KILN_F32, 0, NULL,
                   (const char *[]){"sequence_lens (input 1) has dtype f32; expected i64 or i32", NULL});
    expect_refusal("[t, n]", KILN_F32, "[n, 1]", KILN_I64, 0, NULL,
                   (const char *[]){"sequence_lens (input 1) must have rank 1, got rank 2", NULL});
    expect_refusal("[t, n]", KILN_F32, "[m]", KILN_I64, 0, NULL,
                   (const char *[]){"sequence_lens (input 1) size m equals x axis 1 (batch_axis) size n",
                                    "counterexample", NULL});
    kiln_attribute swapped[] = {{.name = "batch_axis", .type = KILN_ATTRIBUTE_INT, .i = 0},
                                {.name = "time_axis", .type = KILN_ATTRIBUTE_INT, .i = 1}};
    expect_refusal("[n, t]", KILN_F32, "[t]", KILN_I64, 2, swapped,
                   (const char *[]){"x axis 0 (batch_axis) size n", NULL});
    kiln_error err;
    assert_int_equal(try_build("[n, t, 3]", KILN_BOOL, "[n]", KILN_I32, 2, swapped, &err), KILN_OK);
}

/* Lengths stored in the program, symbolic time axis, through a session; a bad length fails the run. */
static void end_to_end(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("reverse", &b, &err), KILN_OK);
    kiln_value in[2], y;
    assert_int_equal(kiln_builder_add_dim(b, "t", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_I32, "[t, 3]", &in[0], &err), KILN_OK);
    static const int64_t lengths[] = {2, 0, 5};
    assert_int_equal(kiln_builder_add_weight(b, "lengths", KILN_WEIGHT_CONSTANT, KILN_I64, 1, (int64_t[]){3}, lengths,
                                             &in[1], &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "reverse_sequence", 2, in, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    for (int64_t t = 5; t <= 8; t += 3) {
        kiln_tensor *x = new_poisoned_tensor(KILN_I32, 2, (int64_t[]){t, 3});
        for (int64_t i = 0; i < 3 * t; i++)
            ((int32_t *)x->data)[i] = (int32_t)i;
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run: %s", err.message);
        const int32_t *o = kiln_tensor_const_data(kiln_session_output(session, 0));
        for (int64_t s = 0; s < t; s++)
            for (int64_t col = 0; col < 3; col++) {
                int64_t from = s < lengths[col] ? lengths[col] - 1 - s : s;
                assert_int_equal(o[s * 3 + col], from * 3 + col);
            }
        kiln_tensor_free(x);
    }
    /* t = 4 < lengths[2] = 5: the run fails. */
    kiln_tensor *x = new_poisoned_tensor(KILN_I32, 2, (int64_t[]){4, 3});
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "sequence_lens[2] = 5 is outside 0..4"));
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(matches_reference),
        cmocka_unit_test(known_values),
        cmocka_unit_test(bad_lengths),
        cmocka_unit_test(refusals),
        cmocka_unit_test(end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
