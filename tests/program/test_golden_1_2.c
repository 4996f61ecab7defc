/*
 * test_golden_1_2.c — the golden artifact of format 1.2 (tests/golden-1.2:
 * tests/golden holds the 1.0 and 1.1 artifacts as released, its README
 * and generator included). named.kiln is the program below, written by the
 * 1.2 writer: every later kiln must load and run it with its node names,
 * and this writer must reproduce it byte for byte (a change to what the
 * writer emits needs a format version bump and a new directory).
 *
 * Usage: test_golden_1_2 DIR [--write]   (--write: create DIR/named.kiln, once)
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

#include "golden_file.h"

static const char *golden_dir;

/*
 * y = relu(x @ w + b) over x: f32[batch, 3], batch in 1..4, w: f32[3, 2]
 * with w[i][j] = i - j, b = [0.5, -0.5]; the matmul, add and relu named as
 * an ONNX export names them, the output's identity left unnamed.
 */
static kiln_builder *named_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, bias, product, sum, y;
    static const float weights[6] = {0, -1, 1, 0, 2, 1}, biases[2] = {0.5f, -0.5f};
    assert_int_equal(kiln_builder_new("named", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 3]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){3, 2}, weights,
                                             &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){2}, biases,
                                             &bias, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){product, bias}, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &sum, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_node_name(b, product, "/fc/MatMul", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_node_name(b, sum, "/fc/Add", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_node_name(b, y, "/act/Relu", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

static void named_artifact_loads_runs_and_keeps_its_names(void **state)
{
    (void)state;
    kiln_program *p = golden_load(golden_dir, "named.kiln", 2);
    kiln_error err;
    assert_int_equal(kiln_program_node_count(p), 3);
    assert_string_equal(kiln_program_node_name(p, 0), "/fc/MatMul");
    assert_string_equal(kiln_program_node_name(p, 1), "/fc/Add");
    assert_string_equal(kiln_program_node_name(p, 2), "/act/Relu");
    /* x = [[1, 1, 1], [1, -1, 0]]: x @ w = [[3, 0], [-1, -1]], + b, relu. */
    kiln_tensor *x;
    kiln_session *s;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 3}, &x, &err), KILN_OK);
    memcpy(kiln_tensor_data(x), (float[]){1, 1, 1, 1, -1, 0}, 6 * sizeof(float));
    assert_int_equal(kiln_session_new(p, NULL, &s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    const float *y = kiln_tensor_const_data(kiln_session_output(s, 0));
    float expected[4] = {3.5f, 0.0f, 0.0f, 0.0f};
    assert_memory_equal(y, expected, sizeof expected);
    kiln_session_free(s);
    kiln_tensor_free(x);
    kiln_program_free(p);
}

static void writer_reproduces_it(void **state)
{
    (void)state;
    char *path = golden_path(golden_dir, "named.kiln");
    kiln_builder *b = named_program();
    assert_writer_reproduces(b, path,
                             "a change to the bytes written needs a format version bump and a new golden directory");
    kiln_builder_free(b);
    free(path);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_golden_1_2 DIR [--write]\n");
        return 2;
    }
    golden_dir = argv[1];
    if (argc == 3 && strcmp(argv[2], "--write") == 0) {
        char *path = golden_path(golden_dir, "named.kiln");
        kiln_builder *b = named_program();
        int rc = golden_write(b, path);
        kiln_builder_free(b);
        free(path);
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(named_artifact_loads_runs_and_keeps_its_names),
        cmocka_unit_test(writer_reproduces_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
