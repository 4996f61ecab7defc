/*
 * test_generate.c — kiln_generator (a prefill and a decode method over one
 * state, through the public API) and generation cases (a prompt and the
 * tokens it must make, sealed in the artifact and replayed), over the
 * counting decoder of tests/support/counting_decoder.h, whose tokens the
 * test computes by hand.
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

#include <kiln/kiln.h>

#include "counting_decoder.h"
#include "counting_malloc.h"

#define CAPACITY COUNTING_CAPACITY
#define VOCAB COUNTING_VOCAB

/* Seal `b` (freed) and load it. */
static kiln_program *seal_and_load(kiln_builder *b)
{
    void *bytes;
    size_t size;
    kiln_program *program = NULL;
    kiln_error err;
    if (kiln_builder_encode(b, NULL, &bytes, &size, &err) != KILN_OK)
        fail_msg("encode: %s", err.message);
    kiln_builder_free(b);
    if (kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("load: %s", err.message);
    free(bytes);
    return program;
}

static kiln_program *load_counting_program(void)
{
    return seal_and_load(counting_decoder_builder());
}

/* What the program does, by hand: the next token after `sequence[length]`. */
static int64_t simulate_next(const int64_t *sequence, uint32_t length)
{
    return counting_decoder_next(sequence, length, NULL);
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


/* ------------------------------------------------------ generation cases */

/* The tokens greedy generation makes of `prompt`, by hand, the first forced to `first` unless it is -1. */
static void simulate_tokens(const int64_t *prompt, uint32_t prompt_length, int64_t first, uint32_t count,
                            int64_t *tokens)
{
    int64_t sequence[64];
    assert_true(prompt_length + count <= 64);
    memcpy(sequence, prompt, prompt_length * sizeof *prompt);
    for (uint32_t i = 0; i < count; i++) {
        tokens[i] = i == 0 && first >= 0 ? first : simulate_next(sequence, prompt_length + i);
        sequence[prompt_length + i] = tokens[i];
    }
}

static void add_case(kiln_builder *b, const char *name, const int64_t *prompt, uint32_t prompt_length,
                     const int64_t *tokens, uint32_t count, double margin)
{
    kiln_generation_case c = {.name = name, .prompt = prompt, .prompt_length = prompt_length, .tokens = tokens,
                              .token_count = count, .margin = margin};
    kiln_error err;
    if (kiln_builder_add_generation(b, &c, &err) != KILN_OK)
        fail_msg("add_generation: %s", err.message);
}

static kiln_generation_result replay(const kiln_program *program, uint32_t index)
{
    kiln_generation_result r;
    kiln_error err;
    if (kiln_program_replay_generation(program, index, &r, &err) != KILN_OK)
        fail_msg("replay: %s", err.message);
    return r;
}

/*
 * Prompt {0, 2} counts codes 1 and 2 once each: a tie of logits 1 and 2,
 * which greedy breaks to token 1, though token 2 has the same logit. A case
 * recording token 2 first passes at margin 0, and the tokens after it
 * follow only if token 2, not the chosen 1, is fed back.
 */
static void generation_cases_replay_with_their_tokens_fed_back(void **unused)
{
    (void)unused;
    const int64_t prompt[2] = {0, 2};
    int64_t greedy[10], tied[10], wrong[10];
    simulate_tokens(prompt, 2, -1, 10, greedy);
    simulate_tokens(prompt, 2, 2, 10, tied);
    assert_int_equal(greedy[0], 1);
    assert_int_not_equal(tied[1], greedy[1]); /* the fed-back token decides what follows */
    /* Token 3 replaced by one whose code was seen less often than the largest. */
    memcpy(wrong, greedy, sizeof wrong);
    double best_count;
    int64_t sequence[5] = {prompt[0], prompt[1], greedy[0], greedy[1], greedy[2]};
    counting_decoder_next(sequence, 5, &best_count);
    int64_t lower = -1;
    double lower_count = 0;
    for (int64_t v = 0; v < VOCAB && lower < 0; v++) {
        double c = 0;
        for (int i = 0; i < 5; i++)
            c += counting_decoder_code(sequence[i]) == v; /* logit v counts code v */
        if (c < best_count)
            lower = v, lower_count = c;
    }
    assert_true(lower >= 0);
    wrong[3] = lower;

    kiln_builder *b = counting_decoder_builder();
    add_case(b, "greedy", prompt, 2, greedy, 10, 0);
    add_case(b, "tied", prompt, 2, tied, 10, 0);
    add_case(b, "wrong", prompt, 2, wrong, 10, 0);
    add_case(b, "near", prompt, 2, wrong, 4, best_count - lower_count); /* within its margin exactly */
    kiln_program *program = seal_and_load(b);
    const kiln_program *decode;
    kiln_error err;
    assert_int_equal(kiln_program_method(program, "decode", &decode, &err), KILN_OK);
    assert_int_equal(kiln_program_generation_count(program), 4);
    assert_int_equal(kiln_program_generation_count(decode), 4);

    kiln_generation_case stored;
    assert_true(kiln_program_generation(decode, 1, &stored));
    assert_string_equal(stored.name, "tied");
    assert_string_equal(stored.prefill_method, "prefill");
    assert_string_equal(stored.decode_method, "decode");
    assert_int_equal(stored.prompt_length, 2);
    assert_memory_equal(stored.prompt, prompt, sizeof prompt);
    assert_int_equal(stored.token_count, 10);
    assert_memory_equal(stored.tokens, tied, sizeof tied);
    assert_true(stored.margin == 0);
    assert_false(kiln_program_generation(program, 4, &stored));

    kiln_generation_result r = replay(program, 0);
    assert_true(r.passed);
    assert_int_equal(r.matched, 10);
    r = replay(decode, 1);
    assert_true(r.passed);
    assert_int_equal(r.matched, 10);
    r = replay(program, 2);
    assert_false(r.passed);
    assert_int_equal(r.matched, 3);
    assert_int_equal(r.expected, lower);
    assert_int_equal(r.chosen, greedy[3]);
    assert_true(r.chosen_logit - r.expected_logit == best_count - lower_count);
    r = replay(program, 3);
    assert_true(r.passed);
    assert_int_equal(r.matched, 4);
    assert_int_equal(kiln_program_replay_generation(program, 4, &r, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_program_free(program);
}

/* A case whose tokens overflow the cache cannot run, naming the case and the dim; one past the budget is LIMIT. */
static void generation_cases_are_bounded(void **unused)
{
    (void)unused;
    const int64_t prompt[2] = {1, 4};
    int64_t tokens[CAPACITY];
    simulate_tokens(prompt, 2, -1, CAPACITY, tokens);
    kiln_builder *b = counting_decoder_builder();
    add_case(b, "fits", prompt, 2, tokens, CAPACITY - 1, 0);  /* 2 rows, then 14 decodes: 16 */
    add_case(b, "overflows", prompt, 2, tokens, CAPACITY, 0); /* a 15th decode */
    void *bytes;
    size_t size;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    kiln_generation_result r = replay(program, 0);
    assert_true(r.passed);
    assert_int_equal(kiln_program_replay_generation(program, 1, &r, &err), KILN_ERR_SHAPE_GUARD);
    assert_non_null(strstr(err.message, "generation case 'overflows' could not run"));
    assert_non_null(strstr(err.message, "past"));
    assert_int_equal(r.matched, CAPACITY - 1);

    /* Case 0 runs the prefill's nodes once and the decode's 14 times. */
    const kiln_program *decode;
    assert_int_equal(kiln_program_method(program, "decode", &decode, &err), KILN_OK);
    uint64_t nodes = kiln_program_node_count(program) + 14 * (uint64_t)kiln_program_node_count(decode);
    kiln_program_free(program);
    kiln_load_options options;
    kiln_limits limits;
    kiln_load_options_default(&options);
    kiln_limits_default(&limits);
    options.limits = &limits;
    limits.max_replay_nodes = nodes - 1;
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_replay_generation(program, 0, &r, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "max_replay_nodes"));
    kiln_program_free(program);
    limits.max_replay_nodes = nodes;
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_replay_generation(program, 0, &r, &err), KILN_OK);
    kiln_program_free(program);
    free(bytes);
}

/* Each sealing rule of spec/format.md §7.15, and the argument checks, refused by name. */
static void bad_generation_cases_are_refused(void **unused)
{
    (void)unused;
    const int64_t prompt[1] = {0}, tokens[2] = {0, 0}, negative[2] = {0, -1};
    kiln_error err;
    kiln_builder *b = counting_decoder_builder();
    kiln_generation_case c = {.name = "c", .prompt = prompt, .prompt_length = 1, .tokens = tokens, .token_count = 2};
    kiln_generation_case bad = c;
    bad.name = "";
    assert_int_equal(kiln_builder_add_generation(b, &bad, &err), KILN_ERR_INVALID_ARGUMENT);
    bad = c;
    bad.token_count = 0;
    assert_int_equal(kiln_builder_add_generation(b, &bad, &err), KILN_ERR_INVALID_ARGUMENT);
    bad = c;
    bad.margin = NAN;
    assert_int_equal(kiln_builder_add_generation(b, &bad, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "margin"));
    bad.margin = -1;
    assert_int_equal(kiln_builder_add_generation(b, &bad, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_generation(b, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_builder_free(b);

    static const struct {
        const char *prefill, *decode, *second_name;
        bool negative;
        const char *message;
    } sealing[] = {
        {"step", NULL, NULL, false, "generation case 'c': the program has no method 'step' (its prefill method)"},
        {NULL, "prefill", NULL, false, "generation case 'c': method 'prefill' is both its prefill and its decode "
                                       "method"},
        {NULL, NULL, "c", false, "generation case 'c' is recorded twice"},
        {NULL, NULL, NULL, true, "generation case 'c': token 1 is -1 (token ids are >= 0)"},
    };
    for (size_t i = 0; i < sizeof sealing / sizeof sealing[0]; i++) {
        b = counting_decoder_builder();
        kiln_generation_case one = c;
        one.prefill_method = sealing[i].prefill;
        one.decode_method = sealing[i].decode;
        if (sealing[i].negative)
            one.tokens = negative;
        assert_int_equal(kiln_builder_add_generation(b, &one, &err), KILN_OK);
        if (sealing[i].second_name) {
            one.name = sealing[i].second_name;
            assert_int_equal(kiln_builder_add_generation(b, &one, &err), KILN_OK);
        }
        void *bytes;
        size_t size;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
        assert_string_equal(err.message, sealing[i].message);
        kiln_builder_free(b);
    }

    /* A method's builder holds no generation case: one spans methods. */
    kiln_builder *method;
    assert_int_equal(kiln_builder_new("m", &method, &err), KILN_OK);
    b = counting_decoder_builder();
    assert_int_equal(kiln_builder_add_method(b, "third", method, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_generation(method, &c, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "spans methods"));
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(greedy_tokens_match_the_simulation),
        cmocka_unit_test(thousands_of_tokens_allocate_nothing),
        cmocka_unit_test(a_full_cache_stops_with_the_dims_named),
        cmocka_unit_test(sampling_is_seeded),
        cmocka_unit_test(bad_setups_are_refused),
        cmocka_unit_test(generation_cases_replay_with_their_tokens_fed_back),
        cmocka_unit_test(generation_cases_are_bounded),
        cmocka_unit_test(bad_generation_cases_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
