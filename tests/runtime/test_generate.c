/*
 * test_generate.c — kiln_generator: a prefill and a decode method over one
 * state, through the public API.
 *
 * The program counts: token t is looked up in a table whose row t is the
 * one-hot of (3t + 1) % VOCAB, the rows are appended to the state `cache`
 * (f64[1, CAPACITY, VOCAB]), and the logits are the column sums of every
 * row held (decode adds its position, `past`, to each): so the next token
 * is the code seen most often so far (the first on ties), which the test
 * simulates. A token lost, counted twice or a wrong position changes the
 * tokens or the logits.
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

#include <kiln/kiln.h>

#include "counting_malloc.h"

#define CAPACITY 16
#define VOCAB 5

static void add_counting_method(kiln_builder *b, bool decode)
{
    kiln_error err;
    kiln_value ids, table, rows, all, logits;
    double codes[VOCAB * VOCAB] = {0};
    for (int t = 0; t < VOCAB; t++)
        codes[t * VOCAB + (3 * t + 1) % VOCAB] = 1;
    assert_int_equal(kiln_builder_add_dim(b, "past", decode ? 1 : 0, decode ? CAPACITY - 1 : 0, &err), KILN_OK);
    if (decode)
        assert_int_equal(kiln_builder_add_relation(b, "past + 1 <= 16", &err), KILN_OK);
    else
        assert_int_equal(kiln_builder_add_dim(b, "seq", 1, CAPACITY, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F64, 3, (int64_t[]){1, CAPACITY, VOCAB}, 1, "past", &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "ids", KILN_I64, decode ? "[1, 1]" : "[1, seq]", &ids, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "table", KILN_WEIGHT_PARAMETER, KILN_F64, 2,
                                             (int64_t[]){VOCAB, VOCAB}, codes, &table, &err),
                     KILN_OK);
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "gather", 2, (kiln_value[]){table, ids}, 1, &axis, &rows,
                                                         &err),
                     KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &rows, 1, &state, &all, &err), KILN_OK);
    kiln_attribute axes = {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1}, .count = 1};
    kiln_attribute keep = {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "reduce_sum", 1, &all, 2, (kiln_attribute[]){axes, keep},
                                                         &logits, &err),
                     KILN_OK);
    if (decode) {
        kiln_value position, as_f64;
        assert_int_equal(kiln_builder_add_input(b, "position", KILN_I64, "[1]", &position, &err), KILN_OK);
        kiln_attribute to = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = "f64"};
        assert_int_equal(kiln_builder_add_op_with_attributes(b, "cast", 1, &position, 1, &to, &as_f64, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){logits, as_f64}, &logits, &err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_output(b, "logits", logits, &err), KILN_OK);
}

static kiln_program *load_counting_program(void)
{
    kiln_builder *prefill = NULL, *decode = NULL;
    kiln_error err;
    assert_int_equal(kiln_builder_new("counter", &prefill, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    add_counting_method(prefill, false);
    assert_int_equal(kiln_builder_new("decode", &decode, &err), KILN_OK);
    add_counting_method(decode, true);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program = NULL;
    if (kiln_builder_encode(prefill, NULL, &bytes, &size, &err) != KILN_OK)
        fail_msg("encode: %s", err.message);
    kiln_builder_free(prefill);
    if (kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("load: %s", err.message);
    free(bytes);
    return program;
}

/* What the program does, by hand: the next token after `prompt` and `made` tokens. */
static int64_t simulate_next(const int64_t *sequence, uint32_t length)
{
    double counts[VOCAB] = {0};
    for (uint32_t i = 0; i < length; i++)
        counts[(3 * sequence[i] + 1) % VOCAB] += 1;
    int64_t best = 0;
    for (int64_t v = 1; v < VOCAB; v++)
        if (counts[v] > counts[best])
            best = v;
    return best;
}

static kiln_generator *new_generator(const kiln_program *program, uint32_t max_tokens, double temperature,
                                     uint64_t seed)
{
    kiln_generate_options options;
    kiln_generate_options_default(&options);
    options.max_tokens = max_tokens;
    options.temperature = temperature;
    options.seed = seed;
    kiln_generator *g = NULL;
    kiln_error err;
    if (kiln_generator_new(program, &options, &g, &err) != KILN_OK)
        fail_msg("generator: %s", err.message);
    return g;
}

static void greedy_tokens_match_the_simulation(void **unused)
{
    (void)unused;
    kiln_program *program = load_counting_program();
    kiln_generator *g = new_generator(program, 10, 0, 0);
    int64_t sequence[CAPACITY] = {0, 2}, tokens[10];
    uint32_t count;
    kiln_error err;
    assert_int_equal(kiln_generator_run(g, sequence, 2, tokens, &count, &err), KILN_OK);
    assert_int_equal(count, 10);
    for (uint32_t i = 0; i < count; i++) {
        assert_int_equal(tokens[i], simulate_next(sequence, 2 + i));
        sequence[2 + i] = tokens[i];
    }
    /* The last step ran at past = 2 + 8 with 11 rows held: each logit is its count plus the position. */
    const kiln_tensor *logits = kiln_generator_logits(g);
    const double *values = kiln_tensor_const_data(logits);
    double total = 0;
    for (int v = 0; v < VOCAB; v++)
        total += values[v] - 10.0;
    assert_true(total == 11.0);
    int64_t length = 0;
    assert_int_equal(kiln_state_length(kiln_generator_state(g), "cache", &length, &err), KILN_OK);
    assert_int_equal(length, 11);
    kiln_generator_free(g);
    kiln_program_free(program);
}

/* Hundreds of generations, thousands of tokens: after the first, nothing is allocated. */
static void thousands_of_tokens_allocate_nothing(void **unused)
{
    (void)unused;
    if (!COUNTING_ALLOCATIONS)
        skip();
    kiln_program *program = load_counting_program();
    kiln_generator *g = new_generator(program, CAPACITY - 2, 0, 0);
    int64_t prompt[2] = {1, 3}, tokens[CAPACITY], first[CAPACITY];
    uint32_t count;
    kiln_error err;
    assert_int_equal(kiln_generator_run(g, prompt, 2, first, &count, &err), KILN_OK);
    unsigned long before = counted_allocations();
    uint32_t made = 0;
    for (int run = 0; run < 300; run++) {
        assert_int_equal(kiln_generator_run(g, prompt, 2, tokens, &count, &err), KILN_OK);
        made += count;
    }
    assert_int_equal(counted_allocations() - before, 0);
    assert_true(made >= 3000);
    assert_memory_equal(tokens, first, count * sizeof *tokens);
    kiln_generator_free(g);
    kiln_program_free(program);
}

static void a_full_cache_stops_with_the_dims_named(void **unused)
{
    (void)unused;
    kiln_program *program = load_counting_program();
    kiln_generator *g = new_generator(program, 20, 0, 0);
    int64_t prompt[2] = {4, 4}, tokens[20];
    uint32_t count = 99;
    kiln_error err;
    /* 2 rows, then 14 decodes fill the 16; the 15th decode is refused. */
    assert_int_equal(kiln_generator_run(g, prompt, 2, tokens, &count, &err), KILN_ERR_SHAPE_GUARD);
    assert_int_equal(count, CAPACITY - 1);
    assert_non_null(strstr(err.message, "past"));
    kiln_generator_free(g);
    kiln_program_free(program);
}

static void sampling_is_seeded(void **unused)
{
    (void)unused;
    kiln_program *program = load_counting_program();
    int64_t prompt[1] = {0}, a[12], b[12], c[12];
    uint32_t na, nb, nc;
    kiln_error err;
    kiln_generator *g1 = new_generator(program, 12, 100.0, 7), *g2 = new_generator(program, 12, 100.0, 7),
                   *g3 = new_generator(program, 12, 100.0, 8);
    assert_int_equal(kiln_generator_run(g1, prompt, 1, a, &na, &err), KILN_OK);
    assert_int_equal(kiln_generator_run(g2, prompt, 1, b, &nb, &err), KILN_OK);
    assert_int_equal(kiln_generator_run(g3, prompt, 1, c, &nc, &err), KILN_OK);
    assert_int_equal(na, 12);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    /* Almost uniform at T = 100: not one token over and over, as greedy would make. */
    bool varied = false;
    for (int i = 1; i < 12; i++)
        varied = varied || a[i] != a[0];
    assert_true(varied);
    for (int i = 0; i < 12; i++)
        assert_true(a[i] >= 0 && a[i] < VOCAB);
    kiln_generator_free(g1);
    kiln_generator_free(g2);
    kiln_generator_free(g3);
    kiln_program_free(program);
}

static void bad_setups_are_refused(void **unused)
{
    (void)unused;
    kiln_program *program = load_counting_program();
    kiln_generate_options options;
    kiln_generator *g = NULL;
    kiln_error err;
    kiln_generate_options_default(&options);
    options.decode_method = "step";
    assert_int_equal(kiln_generator_new(program, &options, &g, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "step"));
    kiln_generate_options_default(&options);
    options.ids_input = "tokens";
    assert_int_equal(kiln_generator_new(program, &options, &g, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no input 'tokens'"));
    kiln_generate_options_default(&options);
    options.temperature = -1;
    assert_int_equal(kiln_generator_new(program, &options, &g, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_generate_options_default(&options);
    options.logits_output = "scores";
    assert_int_equal(kiln_generator_new(program, &options, &g, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no output 'scores'"));
    assert_null(g);
    g = new_generator(program, 4, 0, 0);
    int64_t tokens[4];
    uint32_t count;
    assert_int_equal(kiln_generator_run(g, tokens, 0, tokens, &count, &err), KILN_ERR_INVALID_ARGUMENT);
    int64_t out_of_vocabulary[1] = {VOCAB};
    assert_int_not_equal(kiln_generator_run(g, out_of_vocabulary, 1, tokens, &count, &err), KILN_OK);
    assert_int_equal(count, 0);
    kiln_generator_free(g);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(greedy_tokens_match_the_simulation),
        cmocka_unit_test(thousands_of_tokens_allocate_nothing),
        cmocka_unit_test(a_full_cache_stops_with_the_dims_named),
        cmocka_unit_test(sampling_is_seeded),
        cmocka_unit_test(bad_setups_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
