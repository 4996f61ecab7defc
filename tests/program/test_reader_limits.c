/*
 * test_reader_limits.c — the writer refuses an artifact the readers it is
 * meant for would refuse (issue #20, point 10): a metadata value longer
 * than max_string_length, more dims than max_dims, more inputs than
 * max_inputs, more evidence cases than max_outputs; and writes it when
 * kiln_save_options.reader_limits names readers that accept it, which
 * then load it while default readers still refuse it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

/* y = x, x: f32[2]: the smallest program to hang things on. */
static kiln_builder *identity_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("limits", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

/* Encode `b` for readers with `limits` (NULL: the defaults); @return the status. */
static kiln_status encode_for(const kiln_builder *b, const kiln_limits *limits, void **bytes, size_t *size,
                              kiln_error *err)
{
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.reader_limits = limits;
    return kiln_builder_encode(b, &options, bytes, size, err);
}

static void long_metadata_value(void **state)
{
    (void)state;
    kiln_builder *b = identity_program();
    kiln_error err;
    char *value = malloc(5001);
    assert_non_null(value);
    memset(value, 'v', 5000);
    value[5000] = '\0';
    assert_int_equal(kiln_builder_set_metadata(b, "note", value, &err), KILN_OK);
    void *bytes = NULL;
    size_t size;
    assert_int_equal(encode_for(b, NULL, &bytes, &size, &err), KILN_ERR_LIMIT);
    assert_null(bytes);
    assert_non_null(strstr(err.message, "note is 5000 bytes long"));
    assert_non_null(strstr(err.message, "kiln_limits.max_string_length"));

    kiln_limits raised;
    kiln_limits_default(&raised);
    raised.max_string_length = 8192;
    assert_int_equal(encode_for(b, &raised, &bytes, &size, &err), KILN_OK);
    kiln_program *program = NULL;
    /* Default readers refuse it, for the reason the writer gave; raised ones load it. */
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_ERR_LIMIT);
    kiln_load_options load;
    kiln_load_options_default(&load);
    load.limits = &raised;
    assert_int_equal(kiln_program_load_memory(bytes, size, &load, &program, NULL, &err), KILN_OK);
    assert_string_equal(kiln_program_metadata_value(program, "note"), value);
    kiln_program_free(program);
    free(bytes);
    free(value);
    kiln_builder_free(b);
}

static void too_many_dims(void **state)
{
    (void)state;
    kiln_builder *b = identity_program();
    kiln_error err;
    for (int d = 0; d < 257; d++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", d);
        assert_int_equal(kiln_builder_add_dim(b, name, 1, 4, &err), KILN_OK);
    }
    void *bytes;
    size_t size;
    assert_int_equal(encode_for(b, NULL, &bytes, &size, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "dims: 257"));
    assert_non_null(strstr(err.message, "(256, kiln_limits.max_dims)"));
    kiln_builder_free(b);
}

static void too_many_inputs(void **state)
{
    (void)state;
    kiln_builder *b = identity_program();
    kiln_error err;
    for (int i = 0; i < 1024; i++) {
        char name[16];
        kiln_value v;
        snprintf(name, sizeof name, "extra%d", i);
        assert_int_equal(kiln_builder_add_input(b, name, KILN_F32, "[1]", &v, &err), KILN_OK);
    }
    void *bytes;
    size_t size;
    assert_int_equal(encode_for(b, NULL, &bytes, &size, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "inputs: 1025"));
    kiln_builder_free(b);
}

static void too_many_evidence_cases(void **state)
{
    (void)state;
    kiln_builder *b = identity_program();
    kiln_error err;
    kiln_tensor *x, *y;
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (const int64_t[]){2}, &x, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (const int64_t[]){2}, &y, &err), KILN_OK);
    const char *in[] = {"x"}, *out[] = {"y"};
    kiln_compare_rule rule = {KILN_COMPARE_EXACT, 0, 0, false};
    kiln_evidence_case evidence = {.name = "first", .input_count = 1, .input_names = in,
                                   .inputs = (const kiln_tensor *const *)&x, .output_count = 1,
                                   .output_names = out, .expected = (const kiln_tensor *const *)&y, .rules = &rule};
    assert_int_equal(kiln_builder_add_evidence(b, &evidence, &err), KILN_OK);
    evidence.name = "second";
    assert_int_equal(kiln_builder_add_evidence(b, &evidence, &err), KILN_OK);
    kiln_limits one_output;
    kiln_limits_default(&one_output);
    one_output.max_outputs = 1;
    void *bytes;
    size_t size;
    assert_int_equal(encode_for(b, &one_output, &bytes, &size, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "evidence cases: 2"));
    assert_int_equal(encode_for(b, NULL, &bytes, &size, &err), KILN_OK);
    free(bytes);
    one_output.struct_size = 1; /* not from kiln_limits_default */
    assert_int_equal(encode_for(b, &one_output, &bytes, &size, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_metadata_value),
        cmocka_unit_test(too_many_dims),
        cmocka_unit_test(too_many_inputs),
        cmocka_unit_test(too_many_evidence_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
