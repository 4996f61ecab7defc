/*
 * test_state.c — state tensors and relations across dims (format 1.3):
 * a cache of rows that a "prefill" method fills and a "decode" method
 * extends one row at a time, through the public API.
 *
 * The program: state `cache` f64[1, CAPACITY, 2] grows along axis 1, its
 * length the dim `past`. prefill (past 0..0, seq 1..CAPACITY) appends
 * x: f64[1, seq, 2]; decode (past 0..CAPACITY-1, seq 1..CAPACITY under the
 * relation past + seq <= CAPACITY) appends t: f64[1, seq, 2]. Each returns
 * the column sums of every row the cache then holds, so a wrong row, a
 * row lost or a row counted twice changes the outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "counting_malloc.h"

#define CAPACITY 8

/* One method over the cache: appends input `name` ([1, seq, 2]) and sums the rows held. */
static void add_append_method(kiln_builder *b, const char *input, int64_t past_max, bool with_relation)
{
    kiln_error err;
    kiln_value x, all, sums;
    char relation[64];
    snprintf(relation, sizeof relation, "past + seq <= %d", CAPACITY);
    assert_int_equal(kiln_builder_add_dim(b, "past", 0, past_max, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, CAPACITY, &err), KILN_OK);
    if (with_relation)
        assert_int_equal(kiln_builder_add_relation(b, relation, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F64, 3, (int64_t[]){1, CAPACITY, 2}, 1, "past", &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, input, KILN_F64, "[1, seq, 2]", &x, &err), KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    kiln_status status = kiln_builder_add_op_with_attributes(b, "state_append", 1, &x, 1, &state, &all, &err);
    assert_int_equal(status, KILN_OK);
    kiln_attribute axes = {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1}, .count = 1};
    kiln_attribute keep = {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 0};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "reduce_sum", 1, &all, 2, (kiln_attribute[]){axes, keep},
                                                         &sums, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "sums", sums, &err), KILN_OK);
}

/* The cache program; `decorate` (may be NULL) adds to the decode method before it joins (evidence, say). */
/* The cache program's bytes (caller frees), decode decorated by `decorate` when not NULL. */
static void *encode_cache_program(void (*decorate)(kiln_builder *decode, double arg), double arg, size_t *size)
{
    kiln_builder *prefill = NULL, *decode = NULL;
    kiln_error err;
    assert_int_equal(kiln_builder_new("cache", &prefill, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    add_append_method(prefill, "x", 0, false);
    assert_int_equal(kiln_builder_new("decode", &decode, &err), KILN_OK);
    add_append_method(decode, "t", CAPACITY - 1, true);
    if (decorate)
        decorate(decode, arg);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    void *bytes;
    assert_int_equal(kiln_builder_encode(prefill, NULL, &bytes, size, &err), KILN_OK);
    kiln_builder_free(prefill);
    return bytes;
}

static kiln_program *load_cache_program_with(void (*decorate)(kiln_builder *decode, double arg), double arg)
{
    size_t size;
    void *bytes = encode_cache_program(decorate, arg, &size);
    kiln_program *program = NULL;
    kiln_error err;
    if (kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("load: %s", err.message);
    free(bytes);
    return program;
}

static kiln_program *load_cache_program(void)
{
    return load_cache_program_with(NULL, 0);
}

/* Rows [1, rows, 2] whose row r is (first + r, 10 * (first + r)). */
static kiln_tensor *rows_from(int64_t rows, double first)
{
    kiln_error err;
    kiln_tensor *t = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F64, 3, (int64_t[]){1, rows, 2}, &t, &err), KILN_OK);
    double *d = kiln_tensor_data(t);
    for (int64_t r = 0; r < rows; r++) {
        d[2 * r] = first + (double)r;
        d[2 * r + 1] = 10.0 * (first + (double)r);
    }
    return t;
}

/* Run `session` on input `name` = rows_from(rows, first); the status, with the message in err. */
static kiln_status run_rows(kiln_session *session, const char *name, int64_t rows, double first, kiln_error *err)
{
    kiln_tensor *t = rows_from(rows, first);
    kiln_status status = kiln_session_set_input(session, name, t, err);
    if (status == KILN_OK)
        status = kiln_session_run(session, err);
    kiln_tensor_free(t);
    return status;
}

/* After appending rows 1, 2, ..., n in turn the sums are n(n+1)/2 and ten times that. */
static void assert_sums_through(const kiln_session *session, int64_t n)
{
    const double *sums = kiln_tensor_const_data(kiln_session_output(session, 0));
    assert_true(sums[0] == (double)(n * (n + 1) / 2));
    assert_true(sums[1] == 10.0 * (double)(n * (n + 1) / 2));
}

static kiln_session *new_session(const kiln_program *method, kiln_state *state, bool reference)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.state = state;
    options.threads = 1;
    options.reference_kernels = reference;
    kiln_session *session = NULL;
    kiln_error err;
    if (kiln_session_new(method, &options, &session, &err) != KILN_OK)
        fail_msg("session: %s", err.message);
    return session;
}

static const kiln_program *method(const kiln_program *program, const char *name)
{
    const kiln_program *found = NULL;
    kiln_error err;
    assert_int_equal(kiln_program_method(program, name, &found, &err), KILN_OK);
    return found;
}

static void the_artifact_declares_the_state_and_relation(void **unused)
{
    (void)unused;
    kiln_program *program = load_cache_program();
    kiln_error err;
    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(minor, 3);
    assert_int_equal(kiln_program_state_count(program), 1);
    const char *name, *length_dim;
    kiln_dtype dtype;
    uint32_t rank, axis;
    const int64_t *shape;
    assert_int_equal(kiln_program_state_at(program, 0, &name, &dtype, &rank, &shape, &axis, &length_dim, &err),
                     KILN_OK);
    assert_string_equal(name, "cache");
    assert_int_equal(dtype, KILN_F64);
    assert_int_equal(rank, 3);
    assert_int_equal(shape[1], CAPACITY);
    assert_int_equal(axis, 1);
    assert_string_equal(length_dim, "past");
    assert_int_equal(kiln_program_state_at(program, 1, NULL, NULL, NULL, NULL, NULL, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    /* The relation is decode's, not prefill's. */
    assert_int_equal(kiln_program_relation_count(program), 0);
    const kiln_program *decode = method(program, "decode");
    assert_int_equal(kiln_program_relation_count(decode), 1);
    char text[64];
    assert_int_equal(kiln_program_relation(decode, 0, text, sizeof text, &err), KILN_OK);
    assert_string_equal(text, "past + seq <= 8");
    assert_int_equal(kiln_program_relation(decode, 0, text, 4, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_program_free(program);
}

/* Without the relation, decode cannot prove the append fits: refused, advising the relation. */
static void an_unproven_append_is_refused_with_the_relation_to_declare(void **unused)
{
    (void)unused;
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value t, all;
    assert_int_equal(kiln_builder_new("cache", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "past", 0, CAPACITY - 1, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, CAPACITY, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F64, 3, (int64_t[]){1, CAPACITY, 2}, 1, "past", &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "t", KILN_F64, "[1, seq, 2]", &t, &err), KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &t, 1, &state, &all, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "state 'cache' has room for the rows appended: past + seq <= 8"));
    assert_non_null(strstr(err.message, "counterexample"));
    assert_non_null(strstr(err.message, "Declare the relation 'past + seq <= 8'"));
    /* A state the program does not declare, and a state's length dim the method lacks. */
    kiln_attribute other = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "kv"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_read", 0, NULL, 1, &other, &all, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "declares no state 'kv'"));
    assert_int_equal(kiln_builder_add_state(b, "kv", KILN_F64, 2, (int64_t[]){CAPACITY, 2}, 0, "used", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_read", 0, NULL, 1, &other, &all, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "grows along the dim 'used', which this method does not declare"));
    /* Declarations the builder refuses. */
    assert_int_equal(kiln_builder_add_state(b, "kv", KILN_F64, 2, (int64_t[]){CAPACITY, 2}, 0, "used", &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_state(b, "bad", KILN_F64, 2, (int64_t[]){CAPACITY, 2}, 2, "past", &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_relation(b, "past + seq < 8", &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_relation(b, "past + width <= 8", &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "relation 'past + width <= 8'"));
    kiln_builder_free(b);
}

/* A sequence: prefill 3 rows, decode one row at a time to the capacity, then the refusals. */
static void decode_extends_the_cache_in_place_up_to_its_capacity(void **unused)
{
    (void)unused;
    kiln_program *program = load_cache_program();
    kiln_error err;
    kiln_state *state = NULL;
    assert_int_equal(kiln_state_new(program, &state, &err), KILN_OK);
    kiln_session *prefill = new_session(program, state, false);
    kiln_session *decode = new_session(method(program, "decode"), state, false);
    assert_ptr_equal(kiln_session_state(decode), state);
    assert_int_equal(run_rows(prefill, "x", 3, 1.0, &err), KILN_OK);
    assert_sums_through(prefill, 3);
    int64_t length = -1;
    assert_int_equal(kiln_state_length(state, "cache", &length, &err), KILN_OK);
    assert_int_equal(length, 3);
    for (int64_t n = 4; n <= CAPACITY; n++) {
        if (run_rows(decode, "t", 1, (double)n, &err) != KILN_OK)
            fail_msg("decode step %lld: %s", (long long)n, err.message);
        assert_sums_through(decode, n);
    }
    kiln_tensor *held = NULL;
    assert_int_equal(kiln_state_read(state, "cache", &held, &err), KILN_OK);
    assert_int_equal(kiln_tensor_shape(held)[1], CAPACITY);
    const double *rows = kiln_tensor_data(held);
    for (int r = 0; r < CAPACITY; r++)
        assert_true(rows[2 * r] == r + 1.0 && rows[2 * r + 1] == 10.0 * (r + 1.0));
    kiln_tensor_free(held);

    /* Full: past = 8 is outside decode's 0..7, refused before any node runs; nothing changes. */
    assert_int_equal(run_rows(decode, "t", 1, 9.0, &err), KILN_ERR_SHAPE_GUARD);
    assert_non_null(strstr(err.message, "state 'cache' length (past): 8 is outside 0..7"));
    /* Prefill takes an empty cache only. */
    assert_int_equal(run_rows(prefill, "x", 1, 1.0, &err), KILN_ERR_SHAPE_GUARD);
    assert_non_null(strstr(err.message, "state 'cache' length (past): 8 is outside 0..0"));
    assert_int_equal(kiln_state_length(state, "cache", &length, &err), KILN_OK);
    assert_int_equal(length, CAPACITY);

    /* Reset, and a decode of two rows where only one fits: the relation names the dims. */
    kiln_state_reset(state);
    assert_int_equal(kiln_state_length(state, "cache", &length, &err), KILN_OK);
    assert_int_equal(length, 0);
    assert_int_equal(run_rows(prefill, "x", 7, 1.0, &err), KILN_OK);
    assert_sums_through(prefill, 7);
    assert_int_equal(run_rows(decode, "t", 2, 8.0, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "relation past + seq <= 8 does not hold: past = 7, seq = 2 give 9 > 8");
    assert_int_equal(kiln_state_length(state, "cache", &length, &err), KILN_OK);
    assert_int_equal(length, 7);
    assert_int_equal(run_rows(decode, "t", 1, 8.0, &err), KILN_OK);
    assert_sums_through(decode, 8);
    assert_int_equal(kiln_state_length(state, "nope", &length, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "has no state 'nope' (states: 'cache')"));

    kiln_session_free(prefill);
    kiln_session_free(decode);
    kiln_state_free(state);
    kiln_program_free(program);
}

/* A session without options.state has its own; a state of another program is refused. */
static void sessions_own_a_state_unless_given_one(void **unused)
{
    (void)unused;
    kiln_program *program = load_cache_program(), *other = load_cache_program();
    kiln_error err;
    kiln_session *own = new_session(program, NULL, false);
    assert_non_null(kiln_session_state(own));
    assert_int_equal(run_rows(own, "x", 2, 1.0, &err), KILN_OK);
    int64_t length;
    assert_int_equal(kiln_state_length(kiln_session_state(own), "cache", &length, &err), KILN_OK);
    assert_int_equal(length, 2);
    kiln_state *foreign = NULL;
    assert_int_equal(kiln_state_new(other, &foreign, &err), KILN_OK);
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.state = foreign;
    kiln_session *refused = NULL;
    assert_int_equal(kiln_session_new(program, &options, &refused, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(refused);
    assert_non_null(strstr(err.message, "options.state was made for program 'cache', not this one"));
    kiln_state_free(foreign);
    kiln_session_free(own);
    kiln_program_free(other);
    kiln_program_free(program);
}

/* Thousands of decode steps (reset at capacity) allocate nothing: the cache is written in place. */
static void thousands_of_steps_allocate_nothing(void **unused)
{
    (void)unused;
    if (!COUNTING_ALLOCATIONS)
        skip();
    kiln_program *program = load_cache_program();
    kiln_error err;
    kiln_state *state = NULL;
    assert_int_equal(kiln_state_new(program, &state, &err), KILN_OK);
    kiln_session *prefill = new_session(program, state, true);
    kiln_session *decode = new_session(method(program, "decode"), state, true);
    kiln_tensor *first = rows_from(1, 1.0), *next = rows_from(1, 2.0);
    assert_int_equal(kiln_session_set_input(prefill, "x", first, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(decode, "t", next, &err), KILN_OK);
    unsigned long before = counted_allocations();
    uint32_t steps = 0;
    for (int sequence = 0; sequence < 500; sequence++) {
        kiln_state_reset(state);
        assert_int_equal(kiln_session_run(prefill, &err), KILN_OK);
        for (int step = 1; step < CAPACITY; step++, steps++)
            assert_int_equal(kiln_session_run(decode, &err), KILN_OK);
    }
    assert_int_equal(counted_allocations() - before, 0);
    assert_true(steps >= 3000);
    /* The last sequence: row 1 then seven rows of 2. */
    const double *sums = kiln_tensor_const_data(kiln_session_output(decode, 0));
    assert_true(sums[0] == 1.0 + 2.0 * (CAPACITY - 1));
    kiln_tensor_free(first);
    kiln_tensor_free(next);
    kiln_session_free(prefill);
    kiln_session_free(decode);
    kiln_state_free(state);
    kiln_program_free(program);
}

/* Threads: each sequence in its own sessions and state, all at once, each seeing only its own rows. */
typedef struct sequence_job {
    const kiln_program *program;
    double first; /* its rows are first, first + 1, ... */
    bool ok;
    char message[KILN_ERROR_MESSAGE_SIZE];
} sequence_job;

static void *run_sequence(void *argument)
{
    sequence_job *job = argument;
    kiln_error err;
    kiln_state *state = NULL;
    kiln_session *prefill = NULL, *decode = NULL;
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = 1;
    const kiln_program *decode_method = NULL;
    job->ok = kiln_state_new(job->program, &state, &err) == KILN_OK &&
              kiln_program_method(job->program, "decode", &decode_method, &err) == KILN_OK;
    options.state = state;
    job->ok = job->ok && kiln_session_new(job->program, &options, &prefill, &err) == KILN_OK &&
              kiln_session_new(decode_method, &options, &decode, &err) == KILN_OK;
    for (int round = 0; job->ok && round < 200; round++) {
        kiln_state_reset(state);
        job->ok = run_rows(prefill, "x", 2, job->first, &err) == KILN_OK;
        for (int64_t n = 2; job->ok && n < CAPACITY; n++)
            job->ok = run_rows(decode, "t", 1, job->first + (double)n, &err) == KILN_OK;
        /* Rows first .. first+7: their sum is 8 * first + 28. */
        const double *sums = job->ok ? kiln_tensor_const_data(kiln_session_output(decode, 0)) : NULL;
        if (job->ok && sums[0] != 8.0 * job->first + 28.0) {
            snprintf(err.message, sizeof err.message, "sum %g, not %g", sums[0], 8.0 * job->first + 28.0);
            job->ok = false;
        }
    }
    if (!job->ok)
        snprintf(job->message, sizeof job->message, "%s", err.message);
    kiln_session_free(prefill);
    kiln_session_free(decode);
    kiln_state_free(state);
    return NULL;
}

static void concurrent_sequences_keep_separate_caches(void **unused)
{
    (void)unused;
    kiln_program *program = load_cache_program();
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    sequence_job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (sequence_job){.program = program, .first = 100.0 * (i + 1)};
        assert_int_equal(pthread_create(&threads[i], NULL, run_sequence, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        if (!jobs[i].ok)
            fail_msg("sequence %d: %s", i, jobs[i].message);
    }
    kiln_program_free(program);
}

/* A second append would write over the first's rows: the model check refuses it. */
static void an_append_twice_in_one_method_is_refused(void **unused)
{
    (void)unused;
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, first, second;
    assert_int_equal(kiln_builder_new("twice", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "past", 0, 0, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F64, 2, (int64_t[]){4, 2}, 0, "past", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[1, 2]", &x, &err), KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &x, 1, &state, &first, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &x, 1, &state, &second, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", second, &err), KILN_OK);
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "state 'cache' is appended to by node 0 already"));
    kiln_builder_free(b);
}

/* A decode case that gives the cache it starts from ("state:cache", spec/format.md §7.8.3) replays
 * from those rows: right sums pass, wrong ones fail, and a name that is no state is refused. */
static void add_decode_evidence(kiln_builder *decode, double expected_first_sum)
{
    kiln_error err;
    kiln_tensor *held = rows_from(3, 1.0), *next = rows_from(1, 4.0), *sums = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){1, 2}, &sums, &err), KILN_OK);
    double *s = kiln_tensor_data(sums);
    s[0] = expected_first_sum, s[1] = 100.0; /* rows 1..4: 10 and 100 */
    const char *in_names[] = {"t", "state:cache"}, *out_names[] = {"sums"};
    const kiln_tensor *inputs[] = {next, held}, *expected[] = {sums};
    kiln_compare_rule exact = {.kind = KILN_COMPARE_EXACT};
    kiln_evidence_case c = {"past 3", 2, in_names, inputs, 1, out_names, expected, &exact};
    assert_int_equal(kiln_builder_add_evidence(decode, &c, &err), KILN_OK);
    const char *bad_names[] = {"t", "state:kache"};
    kiln_evidence_case bad = {"bad", 2, bad_names, inputs, 1, out_names, expected, &exact};
    assert_int_equal(kiln_builder_add_evidence(decode, &bad, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "'state:kache' is not an input (a state's rows are named state:NAME)"));
    kiln_tensor_free(held);
    kiln_tensor_free(next);
    kiln_tensor_free(sums);
}

static void a_decode_case_starts_from_the_cache_it_gives(void **unused)
{
    (void)unused;
    kiln_error err;
    for (int right = 1; right >= 0; right--) {
        kiln_program *program = load_cache_program_with(add_decode_evidence, right ? 10.0 : 11.0);
        const kiln_program *decode = method(program, "decode");
        assert_int_equal(kiln_program_evidence_count(decode), 1);
        kiln_evidence_result result;
        assert_int_equal(kiln_program_replay_evidence(decode, 0, &result, &err), KILN_OK);
        assert_int_equal(result.passed, right);
        assert_int_equal(result.mismatches, right ? 0 : 1);
        kiln_program_free(program);
    }
}

/* The states are bounded by the program's max_arena_bytes before anything is allocated. */
static void states_over_the_arena_limit_are_refused(void **unused)
{
    (void)unused;
    size_t size;
    void *bytes = encode_cache_program(NULL, 0, &size);
    const uint64_t cache_bytes = CAPACITY * 2 * sizeof(double);
    for (int over = 0; over < 2; over++) {
        kiln_load_options options;
        kiln_limits limits;
        kiln_load_options_default(&options);
        kiln_limits_default(&limits);
        limits.max_arena_bytes = cache_bytes - (uint64_t)over;
        options.limits = &limits;
        kiln_program *program;
        kiln_state *state = NULL;
        kiln_error err;
        assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_OK);
        kiln_status status = kiln_state_new(program, &state, &err);
        if (over) {
            assert_int_equal(status, KILN_ERR_LIMIT);
            assert_null(state);
            assert_non_null(strstr(err.message, "state 'cache' (128 bytes)"));
            assert_non_null(strstr(err.message, "max_arena_bytes"));
        } else {
            assert_int_equal(status, KILN_OK);
        }
        kiln_state_free(state);
        kiln_program_free(program);
    }
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(states_over_the_arena_limit_are_refused),
        cmocka_unit_test(the_artifact_declares_the_state_and_relation),
        cmocka_unit_test(an_unproven_append_is_refused_with_the_relation_to_declare),
        cmocka_unit_test(decode_extends_the_cache_in_place_up_to_its_capacity),
        cmocka_unit_test(sessions_own_a_state_unless_given_one),
        cmocka_unit_test(thousands_of_steps_allocate_nothing),
        cmocka_unit_test(concurrent_sequences_keep_separate_caches),
        cmocka_unit_test(an_append_twice_in_one_method_is_refused),
        cmocka_unit_test(a_decode_case_starts_from_the_cache_it_gives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
