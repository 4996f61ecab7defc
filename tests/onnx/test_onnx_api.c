/*
 * test_onnx_api.c — the ONNX importer through its public C API alone
 * (<kiln/onnx.h> and <kiln/kiln.h>, linked as kiln-onnx and kiln): models
 * imported from a path and from memory, saved or encoded, loaded and run;
 * the report of a model with several ops kiln lacks lists every one.
 *
 * Usage: test_onnx_api DENSE.onnx UNSUPPORTED.onnx (written by
 * gen_onnx_model: y = Relu(x W + b) with x: f32[batch, 4], W[i][j] = i - j,
 * b[j] = j; and Relu beside NonZero, StringSplit and Loop).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include "seed_program.h"

static const char *dense_path, *unsupported_path, *broadcast_path;

/* Run the dense model's program on x[r][i] = r + i (2 rows) and compare with the sum computed here. */
static void check_dense_program(const kiln_program *program)
{
    kiln_error err;
    kiln_session *session;
    kiln_tensor *x;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (const int64_t[]){2, 4}, &x, &err), KILN_OK);
    float *data = kiln_tensor_data(x);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 4; i++)
            data[r * 4 + i] = (float)(r + i);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    const kiln_tensor *y = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_rank(y), 2);
    assert_int_equal(kiln_tensor_shape(y)[0], 2);
    assert_int_equal(kiln_tensor_shape(y)[1], 3);
    const float *got = kiln_tensor_const_data(y);
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 3; j++) {
            float z = (float)j;
            for (int i = 0; i < 4; i++)
                z += (float)(r + i) * (float)(i - j);
            assert_float_equal(got[r * 3 + j], z > 0 ? z : 0, 1e-5);
        }
    kiln_tensor_free(x);
    kiln_session_free(session);
}

static void imports_a_file_then_saves_loads_and_runs(void **state)
{
    (void)state;
    kiln_onnx_dim dims[] = {{.name = "batch", .min = 1, .max = 8, .multiple_of = 2}};
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    options.dims = dims;
    options.dim_count = 1;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    if (kiln_onnx_import_file(dense_path, &options, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    assert_int_equal(kiln_onnx_result_unsupported_count(result), 0);
    assert_int_equal(kiln_onnx_result_input_count(result), 1);
    assert_string_equal(kiln_onnx_result_input_onnx_name(result, 0), "x");
    assert_string_equal(kiln_onnx_result_input_kiln_name(result, 0), "x");
    assert_null(kiln_onnx_result_input_kiln_name(result, 1));
    /* The builder is the caller's to extend before saving. */
    kiln_builder *builder = kiln_onnx_result_builder(result);
    assert_non_null(builder);
    assert_int_equal(kiln_builder_set_metadata(builder, "origin", "test_onnx_api", &err), KILN_OK);
    char path[] = "/tmp/kiln_onnx_api_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(kiln_builder_save(builder, path, NULL, &err), KILN_OK);
    kiln_onnx_result_free(result);

    kiln_program *program;
    if (kiln_program_load(path, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("%s", err.message);
    unlink(path);
    /* Named after the graph; the dim keeps its bounds and its multiple. */
    assert_string_equal(kiln_program_name(program), "test_graph");
    kiln_dim_info dim;
    assert_int_equal(kiln_program_dim_count(program), 1);
    kiln_program_dim(program, 0, &dim);
    assert_string_equal(dim.name, "batch");
    assert_int_equal(dim.min, 1);
    assert_int_equal(dim.max, 8);
    assert_int_equal(dim.multiple_of, 2);
    check_dense_program(program);
    kiln_program_free(program);
}

static void imports_from_memory_then_encodes_loads_and_runs(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = read_file_bytes(dense_path, &size);
    kiln_onnx_dim dims[] = {{.name = "batch", .min = 1, .max = 4}};
    kiln_onnx_limits limits;
    kiln_onnx_limits_default(&limits);
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    options.program_name = "from_memory";
    options.dims = dims;
    options.dim_count = 1;
    options.limits = &limits;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    if (kiln_onnx_import_memory(bytes, size, &options, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    memset(bytes, 0, size);
    free(bytes);
    /* Taken, the builder outlives the result. */
    kiln_builder *builder = kiln_onnx_result_take_builder(result);
    assert_null(kiln_onnx_result_builder(result));
    kiln_onnx_result_free(result);
    void *encoded;
    size_t encoded_size;
    assert_int_equal(kiln_builder_encode(builder, NULL, &encoded, &encoded_size, &err), KILN_OK);
    kiln_builder_free(builder);
    kiln_program *program;
    if (kiln_program_load_memory(encoded, encoded_size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("%s", err.message);
    assert_string_equal(kiln_program_name(program), "from_memory");
    check_dense_program(program);
    kiln_program_free(program);
    free(encoded);
}

static void the_report_lists_every_unsupported_op(void **state)
{
    (void)state;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    assert_int_equal(kiln_onnx_import_file(unsupported_path, NULL, &result, &err), KILN_ERR_UNSUPPORTED_OP);
    assert_non_null(result);
    assert_null(kiln_onnx_result_builder(result));
    assert_int_equal(kiln_onnx_result_unsupported_count(result), 3);
    static const char *const ops[] = {"(NonZero): unsupported op NonZero", "(StringSplit): unsupported op StringSplit",
                                      "(Loop): unsupported op Loop"};
    for (uint32_t i = 0; i < 3; i++) {
        const char *line = kiln_onnx_result_unsupported(result, i);
        assert_non_null(line);
        if (!strstr(line, ops[i]))
            fail_msg("report line %u is '%s', expected it to name %s", i, line, ops[i]);
    }
    assert_null(kiln_onnx_result_unsupported(result, 3));
    assert_non_null(strstr(err.message, "3 constructs cannot be imported"));
    kiln_onnx_result_free(result);
}

static void the_model_handle_describes_the_graph(void **state)
{
    (void)state;
    kiln_onnx_model *model = NULL;
    kiln_error err;
    assert_int_equal(kiln_onnx_model_read(dense_path, NULL, &model, &err), KILN_OK);
    assert_int_equal(kiln_onnx_model_input_count(model), 1);
    assert_int_equal(kiln_onnx_model_output_count(model), 1);
    kiln_onnx_value_info info;
    assert_int_equal(kiln_onnx_model_value(model, false, 0, &info, &err), KILN_OK);
    assert_string_equal(info.name, "x");
    assert_int_equal(info.kind, KILN_ONNX_VALUE_TENSOR);
    assert_int_equal(info.dtype, KILN_F32);
    assert_false(info.is_initializer);
    assert_int_equal(kiln_onnx_model_value(model, true, 1, &info, &err), KILN_ERR_INVALID_ARGUMENT);
    /* An undeclared dim is an error that names it; the import still hands back a result. */
    kiln_onnx_result *result = NULL;
    assert_int_equal(kiln_onnx_import(model, NULL, &result, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "batch"));
    assert_non_null(result);
    assert_null(kiln_onnx_result_builder(result));
    kiln_onnx_result_free(result);
    kiln_onnx_model_free(model);
}

static void misuse_is_an_error(void **state)
{
    (void)state;
    kiln_onnx_result *result = (kiln_onnx_result *)&result;
    kiln_error err;
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    options.struct_size = offsetof(kiln_onnx_options, non_strict); /* shorter than any released header's */
    assert_int_equal(kiln_onnx_import_file(dense_path, &options, &result, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(err.message, "kiln_onnx_options.struct_size"));
    assert_int_equal(kiln_onnx_import_memory("not onnx", 8, NULL, &result, &err), KILN_ERR_MALFORMED);
    assert_null(result);
    assert_int_equal(kiln_onnx_import_file("/nonexistent/model.onnx", NULL, &result, &err), KILN_ERR_IO);
    assert_null(result);
    /* Every release accepts NULL, every getter a NULL result. */
    kiln_onnx_result_free(NULL);
    kiln_onnx_model_free(NULL);
    assert_int_equal(kiln_onnx_result_unsupported_count(NULL), 0);
    assert_int_equal(kiln_onnx_result_input_count(NULL), 0);
    assert_null(kiln_onnx_result_take_builder(NULL));
}

/* Run y = a + b with a of size p and b of size q; @return the run's status. */
static kiln_status run_broadcast(const kiln_program *program, int64_t p, int64_t q, kiln_error *err)
{
    kiln_session *session;
    kiln_tensor *a, *b;
    assert_int_equal(kiln_session_new(program, NULL, &session, err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, &p, &a, err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, &q, &b, err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "a", a, err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "b", b, err), KILN_OK);
    kiln_status status = kiln_session_run(session, err);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_session_free(session);
    return status;
}

/* Strict (the default) refuses a broadcast it cannot prove; non-strict stores it as a runtime guard. */
static void non_strict_stores_what_it_cannot_prove(void **state)
{
    (void)state;
    kiln_onnx_dim dims[] = {{.name = "p", .min = 1, .max = 8}, {.name = "q", .min = 1, .max = 8}};
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    assert_false(options.non_strict);
    options.dims = dims;
    options.dim_count = 2;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    /* Refused in the report of what cannot be imported, with the node and a counterexample. */
    assert_int_equal(kiln_onnx_import_file(broadcast_path, &options, &result, &err), KILN_ERR_UNSUPPORTED_OP);
    assert_int_equal(kiln_onnx_result_unsupported_count(result), 1);
    assert_non_null(strstr(kiln_onnx_result_unsupported(result, 0), "counterexample: p=3, q=2"));
    kiln_onnx_result_free(result);

    options.non_strict = true;
    if (kiln_onnx_import_file(broadcast_path, &options, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    void *encoded;
    size_t size;
    assert_int_equal(kiln_builder_encode(kiln_onnx_result_builder(result), NULL, &encoded, &size, &err), KILN_OK);
    kiln_onnx_result_free(result);
    kiln_program *program;
    if (kiln_program_load_memory(encoded, size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("%s", err.message);
    free(encoded);
    assert_false(kiln_program_is_strict(program));
    assert_int_equal(kiln_program_runtime_guard_count(program), 1);
    assert_int_equal(run_broadcast(program, 3, 3, &err), KILN_OK);
    /* The stored guard is the claim the shape rule needed: equal sizes (spec/contract.md §4.2). */
    assert_int_not_equal(run_broadcast(program, 3, 2, &err), KILN_OK);
    assert_non_null(strstr(err.message, "runtime guard"));
    kiln_program_free(program);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_onnx_api DENSE.onnx UNSUPPORTED.onnx BROADCAST.onnx\n");
        return 2;
    }
    dense_path = argv[1];
    unsupported_path = argv[2];
    broadcast_path = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(imports_a_file_then_saves_loads_and_runs),
        cmocka_unit_test(imports_from_memory_then_encodes_loads_and_runs),
        cmocka_unit_test(the_report_lists_every_unsupported_op),
        cmocka_unit_test(the_model_handle_describes_the_graph),
        cmocka_unit_test(misuse_is_an_error),
        cmocka_unit_test(non_strict_stores_what_it_cannot_prove),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
