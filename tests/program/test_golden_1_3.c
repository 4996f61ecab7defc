/*
 * test_golden_1_3.c — the golden artifact of format 1.3 (tests/golden-1.3).
 * methods.kiln is the program below, written by the 1.3 writer: two
 * methods over one weight table (section MTHD); state.kiln two methods
 * over one state tensor, one with a relation (section STAT, feature bit 1);
 * generation.kiln the counting decoder (tests/support/counting_decoder.h)
 * with a generation case (section GENV). Every later kiln must load them,
 * run their methods and replay the case, and this writer must reproduce it byte for byte
 * (a change to what the writer emits needs a format version bump and a new
 * directory once 1.3 is released; see tests/golden-1.3/README.md).
 *
 * Usage: test_golden_1_3 DIR [--write]   (--write: create DIR's three files)
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

#include "counting_decoder.h"
#include "golden_file.h"

static const char *golden_dir;
static const float weights[4] = {1, -1, 2, 0.5f}, biases[2] = {0.5f, -0.5f};

/* prefill: y = x @ w + b over x: f32[seq, 2], seq in 1..8. */
static kiln_builder *prefill_method(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, bias, product, y;
    assert_int_equal(kiln_builder_new("methods", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_method_name(b, "prefill", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[seq, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){2, 2}, weights,
                                             &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){2}, biases,
                                             &bias, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){product, bias}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

/* decode: z = relu(t @ w) over t: f32[1, 2], its nodes named, one evidence case: t = [[1, 1]] gives [[3, 0]]. */
static kiln_builder *decode_method(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value t, w, product, z;
    assert_int_equal(kiln_builder_new("methods", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "t", KILN_F32, "[1, 2]", &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){2, 2}, weights,
                                             &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){t, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &product, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_node_name(b, product, "/step/MatMul", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_node_name(b, z, "/step/Relu", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    kiln_tensor *in, *out;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){1, 2}, &in, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){1, 2}, &out, &err), KILN_OK);
    memcpy(kiln_tensor_data(in), (float[]){1, 1}, 2 * sizeof(float));
    memcpy(kiln_tensor_data(out), (float[]){3, 0}, 2 * sizeof(float));
    const kiln_tensor *inputs[] = {in}, *expected[] = {out};
    kiln_compare_rule rule = {.kind = KILN_COMPARE_EXACT};
    kiln_evidence_case evidence = {.name = "step", .input_count = 1, .input_names = (const char *[]){"t"},
                                   .inputs = inputs, .output_count = 1, .output_names = (const char *[]){"z"},
                                   .expected = expected, .rules = &rule};
    assert_int_equal(kiln_builder_add_evidence(b, &evidence, &err), KILN_OK);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
    return b;
}

static kiln_builder *methods_program(void)
{
    kiln_builder *b = prefill_method();
    kiln_error err;
    assert_int_equal(kiln_builder_add_method(b, "decode", decode_method(), &err), KILN_OK);
    return b;
}

/* Run `method` on `input` = `values` of shape [rows, 2]; compare output 0 with `want`. */
static void run_and_compare(const kiln_program *method, const char *input, int64_t rows, const float *values,
                            const float *want)
{
    kiln_tensor *x;
    kiln_session *s;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){rows, 2}, &x, &err), KILN_OK);
    memcpy(kiln_tensor_data(x), values, (size_t)rows * 2 * sizeof(float));
    assert_int_equal(kiln_session_new(method, NULL, &s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, input, x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    assert_memory_equal(kiln_tensor_const_data(kiln_session_output(s, 0)), want, (size_t)rows * 2 * sizeof(float));
    kiln_session_free(s);
    kiln_tensor_free(x);
}

static void methods_artifact_loads_and_runs_both(void **state)
{
    (void)state;
    kiln_program *p = golden_load(golden_dir, "methods.kiln", 3);
    kiln_error err;
    assert_int_equal(kiln_program_method_count(p), 2);
    assert_string_equal(kiln_program_method_name(p), "prefill");
    assert_int_equal(kiln_program_weight_count(p), 2);
    const kiln_program *decode;
    assert_int_equal(kiln_program_method(p, "decode", &decode, &err), KILN_OK);
    assert_string_equal(kiln_program_node_name(decode, 1), "/step/Relu");
    /* x = [[1, 0], [0, 1]]: the rows of w, + b. */
    run_and_compare(p, "x", 2, (float[]){1, 0, 0, 1}, (float[]){1.5f, -1.5f, 2.5f, 0});
    run_and_compare(decode, "t", 1, (float[]){1, 1}, (float[]){3, 0});
    kiln_evidence_result result;
    assert_int_equal(kiln_program_replay_evidence(decode, 0, &result, &err), KILN_OK);
    assert_true(result.passed);
    kiln_program_free(p);
}

/*
 * A method over the state `cache` f32[8, 2] (capacity 8 rows, length dim
 * `past`): appends `x` f32[seq, 2] and returns every row the cache holds.
 * prefill takes past 0..0; decode past 0..7 under past + seq <= 8.
 */
static kiln_builder *cache_method(const char *name, int64_t past_max, const char *relation)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, rows;
    assert_int_equal(kiln_builder_new("state", &b, &err), KILN_OK);
    if (!relation)
        assert_int_equal(kiln_builder_set_method_name(b, name, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "past", 0, past_max, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 8, &err), KILN_OK);
    if (relation)
        assert_int_equal(kiln_builder_add_relation(b, relation, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F32, 2, (int64_t[]){8, 2}, 0, "past", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[seq, 2]", &x, &err), KILN_OK);
    kiln_attribute attribute = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &x, 1, &attribute, &rows, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "rows", rows, &err), KILN_OK);
    return b;
}

static kiln_builder *state_program(void)
{
    kiln_builder *b = cache_method("prefill", 0, NULL);
    kiln_error err;
    assert_int_equal(kiln_builder_add_method(b, "decode", cache_method("decode", 7, "past + seq <= 8"), &err), KILN_OK);
    return b;
}

/* prefill [[1, 2]], then decode [[3, 4]]: decode returns both rows; a decode of 8 rows then is refused. */
static void state_artifact_keeps_its_cache(void **state)
{
    (void)state;
    kiln_program *p = golden_load(golden_dir, "state.kiln", 3);
    kiln_error err;
    assert_int_equal(kiln_program_state_count(p), 1);
    const kiln_program *decode;
    assert_int_equal(kiln_program_method(p, "decode", &decode, &err), KILN_OK);
    kiln_state *cache;
    assert_int_equal(kiln_state_new(p, &cache, &err), KILN_OK);
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.state = cache;
    kiln_session *prefill_session, *decode_session;
    assert_int_equal(kiln_session_new(p, &options, &prefill_session, &err), KILN_OK);
    assert_int_equal(kiln_session_new(decode, &options, &decode_session, &err), KILN_OK);
    kiln_tensor *x;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){1, 2}, &x, &err), KILN_OK);
    memcpy(kiln_tensor_data(x), (float[]){1, 2}, sizeof(float[2]));
    assert_int_equal(kiln_session_set_input(prefill_session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(prefill_session, &err), KILN_OK);
    memcpy(kiln_tensor_data(x), (float[]){3, 4}, sizeof(float[2]));
    assert_int_equal(kiln_session_set_input(decode_session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(decode_session, &err), KILN_OK);
    assert_memory_equal(kiln_tensor_const_data(kiln_session_output(decode_session, 0)), ((float[]){1, 2, 3, 4}),
                        sizeof(float[4]));
    kiln_tensor *many;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){8, 2}, &many, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(decode_session, "x", many, &err), KILN_OK);
    assert_int_equal(kiln_session_run(decode_session, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "relation past + seq <= 8 does not hold: past = 2, seq = 8 give 10 > 8");
    kiln_tensor_free(many);
    kiln_tensor_free(x);
    kiln_session_free(prefill_session);
    kiln_session_free(decode_session);
    kiln_state_free(cache);
    kiln_program_free(p);
}

/* The counting decoder with the case `count`: prompt {0, 2} and the 8 tokens it makes greedily. */
static const int64_t count_prompt[2] = {0, 2}, count_tokens[8] = {1, 1, 4, 4, 3, 3, 0, 0};

static kiln_builder *generation_program(void)
{
    kiln_builder *b = counting_decoder_builder();
    kiln_generation_case c = {.name = "count", .prompt = count_prompt, .prompt_length = 2, .tokens = count_tokens,
                              .token_count = 8, .margin = 0};
    kiln_error err;
    assert_int_equal(kiln_builder_add_generation(b, &c, &err), KILN_OK);
    return b;
}

/* The case is stored as written and replays; its tokens are those counting_decoder_next gives. */
static void generation_artifact_replays_its_case(void **state)
{
    (void)state;
    int64_t sequence[10] = {count_prompt[0], count_prompt[1]};
    for (uint32_t i = 0; i < 8; i++) {
        sequence[2 + i] = counting_decoder_next(sequence, 2 + i, NULL);
        assert_int_equal(sequence[2 + i], count_tokens[i]);
    }
    kiln_program *p = golden_load(golden_dir, "generation.kiln", 3);
    kiln_generation_case c;
    assert_int_equal(kiln_program_generation_count(p), 1);
    assert_true(kiln_program_generation(p, 0, &c));
    assert_string_equal(c.name, "count");
    assert_string_equal(c.prefill_method, "prefill");
    assert_string_equal(c.decode_method, "decode");
    assert_int_equal(c.token_count, 8);
    assert_memory_equal(c.tokens, count_tokens, sizeof count_tokens);
    kiln_generation_result r;
    kiln_error err;
    assert_int_equal(kiln_program_replay_generation(p, 0, &r, &err), KILN_OK);
    assert_true(r.passed);
    assert_int_equal(r.matched, 8);
    kiln_program_free(p);
}

/* Every golden file of this directory and the program it holds. */
static const struct {
    const char *file;
    kiln_builder *(*program)(void);
} goldens[] = {
    {"methods.kiln", methods_program},
    {"state.kiln", state_program},
    {"generation.kiln", generation_program},
};

static void writer_reproduces_it(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
        char *path = golden_path(golden_dir, goldens[i].file);
        kiln_builder *b = goldens[i].program();
        assert_writer_reproduces(b, path, "see tests/golden-1.3/README.md");
        kiln_builder_free(b);
        free(path);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_golden_1_3 DIR [--write]\n");
        return 2;
    }
    golden_dir = argv[1];
    if (argc == 3 && strcmp(argv[2], "--write") == 0) {
        int rc = 0;
        for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
            char *path = golden_path(golden_dir, goldens[i].file);
            kiln_builder *b = goldens[i].program();
            rc = rc || golden_write(b, path);
            kiln_builder_free(b);
            free(path);
        }
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(methods_artifact_loads_and_runs_both),
        cmocka_unit_test(state_artifact_keeps_its_cache),
        cmocka_unit_test(generation_artifact_replays_its_case),
        cmocka_unit_test(writer_reproduces_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
