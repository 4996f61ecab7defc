/*
 * test_session_threads.c — one loaded program run from several threads at
 * once (include/kiln/kiln.h: a program is shared by any number of threads,
 * a session belongs to one). CALLERS threads each create their own session
 * over one lazily loaded program with compressed weights, so that their
 * first sessions meet at the one-time weight check and inflation (the
 * program's weight_lock, lib/runtime/program.h), and run it ROUNDS times:
 * half the callers on one thread, half on two worker threads of their own
 * (the fixed thread policy, so that the elementwise splits, the softmax
 * chunks and the LSTM's team of lib/ops/common/parallel.c run on OpenMP's
 * threads while the other sessions run too). Every output must be the bits
 * one session on the main thread computed on one thread, from a program
 * loaded on its own: kiln's parallel loops split work between threads and
 * never reorder it (spec/opset.md, "Threads").
 *
 * Its real job is in the ThreadSanitizer build (scripts/tsan): there a
 * race between sessions, between a session and the program, or between a
 * session's worker threads fails it even when the outputs come out right.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

enum {
    CALLERS = 4,
    ROUNDS = 3,
    /* Fresh lazy loads of the program, so that the callers' first sessions meet at its weight check
     * more than once. */
    LOADS = 8,
    /* x is [ROWS, COLUMNS]: 2^18 elements, where elementwise loops split over threads
     * (KILN_PARALLEL_MIN_ELEMENTS); a softmax slice is a row. */
    ROWS = 4,
    COLUMNS = 65536,
    /* The LSTM: 32 inputs, 128 hidden units (8 panels of 16 rows: a step of 4 x 128 x 128
     * multiply-adds splits over a team of two), 6 steps, batch 1. */
    SEQ = 6,
    INPUT = 32,
    HIDDEN = 128,
    OUTPUTS = 2,
};

static const size_t output_elements[OUTPUTS] = {(size_t)ROWS * COLUMNS, (size_t)SEQ * HIDDEN};

/* Small numbers of both signs from a fixed sequence (a 32-bit LCG), in [-scale, scale). */
static void fill(float *values, size_t count, uint32_t seed, float scale)
{
    uint32_t state = seed;
    for (size_t i = 0; i < count; i++) {
        state = state * 1664525u + 1013904223u;
        values[i] = scale * ((float)(state >> 8) / 8388608.0f - 1.0f);
    }
}

static kiln_value weight(kiln_builder *b, const char *name, uint32_t rank, const int64_t *shape, uint32_t seed,
                         float scale)
{
    size_t count = 1;
    for (uint32_t i = 0; i < rank; i++)
        count *= (size_t)shape[i];
    float *data = malloc(count * sizeof *data);
    assert_non_null(data);
    fill(data, count, seed, scale);
    kiln_error err;
    kiln_value v;
    assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, rank, shape, data, &v, &err),
                     KILN_OK);
    free(data);
    return v;
}

/*
 * y0 = softmax(sigmoid(x) + w) over each row of x, y1 = lstm(s) with
 * hidden 128; sealed with compressed weights.
 */
static void encode_program(void **bytes, size_t *size)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, s, squashed, shifted, y0, y1;
    assert_int_equal(kiln_builder_new("session_threads", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[4, 65536]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F32, "[6, 1, 32]", &s, &err), KILN_OK);
    kiln_value w = weight(b, "w", 1, (int64_t[]){COLUMNS}, 1, 2.0f);
    assert_int_equal(kiln_builder_add_op(b, "sigmoid", 1, &x, &squashed, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){squashed, w}, &shifted, &err), KILN_OK);
    kiln_attribute last_axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "softmax", 1, &shifted, 1, &last_axis, &y0, &err),
                     KILN_OK);
    /* Weights scaled by 1/sqrt(fan-in) keep the state away from saturation. */
    kiln_value lstm_w = weight(b, "lstm_w", 3, (int64_t[]){1, 4 * HIDDEN, INPUT}, 2, 0.17f);
    kiln_value lstm_r = weight(b, "lstm_r", 3, (int64_t[]){1, 4 * HIDDEN, HIDDEN}, 3, 0.088f);
    kiln_value lstm_b = weight(b, "lstm_b", 2, (int64_t[]){1, 8 * HIDDEN}, 4, 0.5f);
    kiln_attribute hidden = {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = HIDDEN};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "lstm", 4, (kiln_value[]){s, lstm_w, lstm_r, lstm_b}, 1,
                                                         &hidden, &y1, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y0", y0, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y1", y1, &err), KILN_OK);
    kiln_save_options save;
    kiln_save_options_default(&save);
    save.compression_level = 6;
    assert_int_equal(kiln_builder_encode(b, &save, bytes, size, &err), KILN_OK);
    kiln_builder_free(b);
}

typedef struct inputs {
    kiln_tensor *x, *s;
} inputs;

static inputs make_inputs(void)
{
    kiln_error err;
    inputs in;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){ROWS, COLUMNS}, &in.x, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 3, (int64_t[]){SEQ, 1, INPUT}, &in.s, &err), KILN_OK);
    fill(kiln_tensor_data(in.x), (size_t)ROWS * COLUMNS, 5, 6.0f);
    fill(kiln_tensor_data(in.s), (size_t)SEQ * INPUT, 6, 1.5f);
    return in;
}

/* What one caller thread did; read by the main thread after the join. No cmocka calls on other threads. */
typedef struct caller {
    const kiln_program *program;
    const inputs *in;
    pthread_barrier_t *start;
    uint32_t threads;
    float *outputs[OUTPUTS]; /* the last round's outputs */
    kiln_status status;
    kiln_error err;
    uint32_t threads_used; /* the fewest any round ran on */
} caller;

/* Create a session of `threads` (fixed policy), run it `rounds` times, copy the outputs into c->outputs. */
static void run_rounds(caller *c, uint32_t rounds)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = c->threads;
    options.thread_policy = KILN_THREADS_FIXED;
    kiln_session *session;
    c->status = kiln_session_new(c->program, &options, &session, &c->err);
    if (c->status != KILN_OK)
        return;
    c->threads_used = UINT32_MAX;
    for (uint32_t round = 0; round < rounds && c->status == KILN_OK; round++) {
        c->status = kiln_session_set_input(session, "x", c->in->x, &c->err);
        if (c->status == KILN_OK)
            c->status = kiln_session_set_input(session, "s", c->in->s, &c->err);
        if (c->status == KILN_OK)
            c->status = kiln_session_run(session, &c->err);
        uint32_t used = kiln_session_run_threads(session);
        c->threads_used = used < c->threads_used ? used : c->threads_used;
    }
    for (uint32_t o = 0; o < OUTPUTS && c->status == KILN_OK; o++) {
        const kiln_tensor *t = kiln_session_output(session, o);
        if (kiln_tensor_element_count(t) != output_elements[o]) {
            c->status = KILN_ERR_RUNTIME;
            strcpy(c->err.message, "an output has the wrong element count");
        } else {
            memcpy(c->outputs[o], kiln_tensor_const_data(t), output_elements[o] * sizeof(float));
        }
    }
    kiln_session_free(session);
}

static void *caller_main(void *arg)
{
    caller *c = arg;
    pthread_barrier_wait(c->start);
    run_rounds(c, ROUNDS);
    return NULL;
}

static caller new_caller(const kiln_program *program, const inputs *in, uint32_t threads)
{
    caller c = {.program = program, .in = in, .threads = threads};
    for (uint32_t o = 0; o < OUTPUTS; o++) {
        c.outputs[o] = calloc(output_elements[o], sizeof(float));
        assert_non_null(c.outputs[o]);
    }
    return c;
}

static void free_caller(caller *c)
{
    for (uint32_t o = 0; o < OUTPUTS; o++)
        free(c->outputs[o]);
}

static kiln_program *load_program(const void *bytes, size_t size, kiln_verify_policy policy)
{
    kiln_load_options options;
    kiln_load_options_default(&options);
    options.verify = policy;
    kiln_program *program;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_OK);
    return program;
}

/*
 * CALLERS threads at once, each with its own session of `shared`, half of
 * them on two worker threads; their outputs must be `expected`'s bits.
 */
static void run_callers(const kiln_program *shared, const inputs *in, const caller *expected)
{
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, CALLERS), 0);
    caller callers[CALLERS];
    pthread_t threads[CALLERS];
    for (uint32_t i = 0; i < CALLERS; i++) {
        callers[i] = new_caller(shared, in, i % 2 ? 2 : 1);
        callers[i].start = &start;
        assert_int_equal(pthread_create(&threads[i], NULL, caller_main, &callers[i]), 0);
    }
    for (uint32_t i = 0; i < CALLERS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);

    for (uint32_t i = 0; i < CALLERS; i++) {
        caller *c = &callers[i];
        if (c->status != KILN_OK)
            fail_msg("caller %u (%u threads): %s", i, c->threads, c->err.message);
        for (uint32_t o = 0; o < OUTPUTS; o++)
            if (memcmp(c->outputs[o], expected->outputs[o], output_elements[o] * sizeof(float)) != 0)
                fail_msg("caller %u (%u threads): output y%u differs from the single-threaded run", i, c->threads,
                         o);
    }
    /* The two-thread sessions ran on two threads where OpenMP is there; a build without it runs on one. */
    kiln_session *probe;
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = 2;
    kiln_error err;
    assert_int_equal(kiln_session_new(shared, &options, &probe, &err), KILN_OK);
    uint32_t available = kiln_session_threads(probe);
    kiln_session_free(probe);
    for (uint32_t i = 0; i < CALLERS; i++)
        assert_int_equal(callers[i].threads_used, callers[i].threads < available ? callers[i].threads : available);

    for (uint32_t i = 0; i < CALLERS; i++)
        free_caller(&callers[i]);
}

static void sessions_on_many_threads_agree_with_one(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    encode_program(&bytes, &size);
    inputs in = make_inputs();

    /* The expected bits: one session on this thread, one thread, its own program. */
    kiln_program *alone = load_program(bytes, size, KILN_VERIFY_FULL);
    caller expected = new_caller(alone, &in, 1);
    run_rounds(&expected, 1);
    if (expected.status != KILN_OK)
        fail_msg("the single-threaded run: %s", expected.err.message);
    kiln_program_free(alone);

    /* The outputs are not trivial: a softmax row sums to about 1 and spreads, the LSTM's state moves. */
    double row_sum = 0;
    for (size_t i = 0; i < COLUMNS; i++)
        row_sum += expected.outputs[0][i];
    assert_true(row_sum > 0.999 && row_sum < 1.001);
    assert_true(expected.outputs[0][0] != expected.outputs[0][1]);
    assert_true(expected.outputs[1][0] != 0.0f && expected.outputs[1][0] != expected.outputs[1][HIDDEN]);

    for (uint32_t load = 0; load < LOADS; load++) {
        kiln_program *shared = load_program(bytes, size, KILN_VERIFY_LAZY);
        run_callers(shared, &in, &expected);
        kiln_program_free(shared);
    }
    free_caller(&expected);
    kiln_tensor_free(in.x);
    kiln_tensor_free(in.s);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sessions_on_many_threads_agree_with_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
