/*
 * test_tensor_wrap.c — borrowed tensors (kiln_tensor_wrap, kiln_tensor_rewrap):
 * the session reads the caller's own buffer (no copy), every mismatch between
 * buffer and shape is refused saying what is wrong, and rewrapping allocates
 * nothing and leaves the wrapper unchanged on failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

static void wrapping_checks_the_buffer(void **state)
{
    (void)state;
    double values[6] = {1, 2, 3, 4, 5, 6};
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 2, (int64_t[]){3, 2}, values, sizeof values, &t, &err), KILN_OK);
    assert_ptr_equal(kiln_tensor_data(t), values);
    assert_int_equal(kiln_tensor_byte_size(t), sizeof values);
    assert_int_equal(kiln_tensor_shape(t)[0], 3);
    kiln_tensor_free(t); /* the wrapper only: values is still ours */
    assert_true(values[5] == 6);

    static const struct {
        kiln_dtype dtype;
        size_t offset, size;
        const char *message;
    } cases[] = {
        {KILN_F64, 0, 40, "the buffer holds 40 bytes; a f64 tensor of this shape needs 48"},
        {KILN_F64, 0, 56, "the buffer holds 56 bytes; a f64 tensor of this shape needs 48"},
        {KILN_F64, 4, 48, "is not aligned to the 8-byte elements of f64"},
        {(kiln_dtype)99, 0, 48, "dtype 99 is not a kiln dtype"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t = (kiln_tensor *)1;
        assert_int_equal(kiln_tensor_wrap(cases[i].dtype, 2, (int64_t[]){3, 2}, (char *)values + cases[i].offset,
                                          cases[i].size, &t, &err),
                         KILN_ERR_INVALID_ARGUMENT);
        assert_null(t);
        assert_non_null(strstr(err.message, cases[i].message));
    }
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 2, (int64_t[]){3, -2}, values, 48, &t, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 2, (int64_t[]){INT64_MAX, 2}, values, 48, &t, &err), KILN_ERR_LIMIT);
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 1, (int64_t[]){0}, NULL, 0, &t, &err), KILN_OK); /* empty: no data */
    kiln_tensor_free(t);
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 1, (int64_t[]){1}, NULL, 8, &t, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "data is NULL for a 8-byte tensor"));
}

static void rewrapping_moves_the_wrapper_or_nothing(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[6] = {0};
    kiln_tensor *t, *owned;
    kiln_error err;
    assert_int_equal(kiln_tensor_wrap(KILN_F32, 1, (int64_t[]){4}, a, sizeof a, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_rewrap(t, KILN_F32, 2, (int64_t[]){2, 3}, b, sizeof b, &err), KILN_OK);
    assert_ptr_equal(kiln_tensor_data(t), b);
    assert_int_equal(kiln_tensor_rank(t), 2);
    assert_int_equal(kiln_tensor_element_count(t), 6);
    assert_int_equal(kiln_tensor_rewrap(t, KILN_F32, 1, (int64_t[]){4}, a, 12, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_ptr_equal(kiln_tensor_data(t), b); /* unchanged */
    assert_int_equal(kiln_tensor_rank(t), 2);
    kiln_tensor_free(t);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (int64_t[]){4}, &owned, &err), KILN_OK);
    assert_int_equal(kiln_tensor_rewrap(owned, KILN_F32, 1, (int64_t[]){4}, a, sizeof a, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "only a tensor made by kiln_tensor_wrap"));
    kiln_tensor_free(owned);
}

/* A session reads the wrapped buffer itself: changing it between runs changes the result. */
static void sessions_read_the_callers_buffer(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("neg", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    double buffer[3] = {1, 2, 3};
    kiln_tensor *t;
    assert_int_equal(kiln_tensor_wrap(KILN_F64, 1, (int64_t[]){3}, buffer, sizeof buffer, &t, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", t, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    assert_true(((const double *)kiln_tensor_const_data(kiln_session_output(session, 0)))[2] == -3);
    buffer[2] = 7;
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    assert_true(((const double *)kiln_tensor_const_data(kiln_session_output(session, 0)))[2] == -7);
    kiln_tensor_free(t);
    kiln_session_free(session);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrapping_checks_the_buffer),
        cmocka_unit_test(rewrapping_moves_the_wrapper_or_nothing),
        cmocka_unit_test(sessions_read_the_callers_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
