/*
 * test_memory_plan.c — the arena plan: slots sized at the domain's upper
 * bound, shared between results whose lifetimes do not overlap, and never
 * shared while both are live (checked by running and comparing values).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "format/container.h"
#include "sections.h"
#include "counting_malloc.h"


static kiln_program *load(kiln_builder *b)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    return program;
}

/* A 10-layer chain x -> t1 -> ... -> t10 of f32[batch, 1024], batch in 1..64:
 * each result is read only by the next layer, so two slots suffice. */
static void a_chain_needs_two_slots(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value value, one;
    assert_int_equal(kiln_builder_new("chain", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 64, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 1024]", &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 1.0, &one, &err), KILN_OK);
    for (int layer = 0; layer < 10; layer++)
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){value, one}, &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", value, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);

    uint64_t slot = 64 * 1024 * 4; /* f32[64, 1024] at the upper bound */
    assert_int_equal(kiln_program_intermediate_bytes(program), 10 * slot);
    assert_int_equal(kiln_program_arena_bytes(program), 2 * slot);

    /* Sharing must not corrupt values: y = x + 10. */
    kiln_session *session;
    kiln_tensor *x;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){64, 1024}, &x, &err), KILN_OK);
    float *in = kiln_tensor_data(x);
    for (int i = 0; i < 64 * 1024; i++)
        in[i] = (float)(i % 97);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *out = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 64 * 1024; i++)
        assert_true(out[i] == (float)(i % 97) + 10.0f);
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* neg(x) for x: f32 of `shape`, h in 1..2^62; the status of encoding and loading it. */
static kiln_status load_neg(const char *shape, kiln_program **program, kiln_error *err)
{
    kiln_builder *b;
    kiln_value x, y;
    void *bytes = NULL;
    size_t size;
    *program = NULL;
    assert_int_equal(kiln_builder_new("empty", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "h", 1, INT64_C(1) << 62, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, shape, &x, err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
    kiln_status status = kiln_builder_encode(b, NULL, &bytes, &size, err);
    kiln_builder_free(b);
    if (status == KILN_OK)
        status = kiln_program_load_memory(bytes, size, NULL, program, NULL, err);
    free(bytes);
    return status;
}

/*
 * Issue 20, point 10: a value with a zero extent holds no elements, so it
 * needs no bytes whatever its other extents and wherever the zero stands.
 * [h, 0] with h up to 2^62 was refused as "size overflows" (4 * 2^62
 * overflowed before the 0 was reached) while [0, h] was accepted; the
 * same held for kiln_tensor_new.
 */
static void zero_element_values_need_no_bytes_in_any_axis_order(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program;
    const char *shapes[] = {"[0, h]", "[h, 0]", "[h, h, 0]", "[h, 0, h]"};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (load_neg(shapes[i], &program, &err) != KILN_OK)
            fail_msg("%s: %s", shapes[i], err.message);
        assert_int_equal(kiln_program_arena_bytes(program), 0);
        kiln_program_free(program);
    }
    /* Not empty: 4 * 2^62 bytes overflow 64 bits. The program still loads
     * (issue 15: limits belong to sessions), with no plan for its whole
     * domain; a session over it is refused as what it is, and one that
     * narrows h runs. */
    assert_int_equal(load_neg("[h, 1]", &program, &err), KILN_OK);
    assert_int_equal(kiln_program_arena_bytes(program), UINT64_MAX);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "the arena at h=4611686018427387904 needs more than 2^64 bytes"));
    assert_non_null(strstr(err.message, "with h=1.."));
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.dims = (kiln_dim_bound[]){{"h", 1, 1000}};
    options.dim_count = 1;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(session), 4000 + 32); /* f32[1000, 1], 64-byte aligned */
    kiln_session_free(session);
    kiln_program_free(program);

    const int64_t huge = INT64_MAX;
    const int64_t orders[][3] = {{0, huge, huge}, {huge, 0, huge}, {huge, huge, 0}};
    for (size_t i = 0; i < 3; i++) {
        kiln_tensor *t = NULL;
        if (kiln_tensor_new(KILN_F32, 3, orders[i], &t, &err) != KILN_OK)
            fail_msg("order %zu: %s", i, err.message);
        assert_int_equal(kiln_tensor_element_count(t), 0);
        assert_int_equal(kiln_tensor_byte_size(t), 0);
        kiln_tensor_free(t);
    }
    kiln_tensor *t = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){huge, 2}, &t, &err), KILN_ERR_LIMIT);
    assert_null(t);
}

/* Long-lived values keep their slots: a = -x is read again at the end,
 * so it overlaps every result in between. */
static void long_lived_values_are_not_overwritten(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, a, value, two;
    assert_int_equal(kiln_builder_new("skip", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 256, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &a, &err), KILN_OK);
    value = a;
    for (int layer = 0; layer < 5; layer++)
        assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){value, two}, &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "sub", 2, (kiln_value[]){value, a}, &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "a", a, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    uint64_t slot = 256 * 8;
    assert_int_equal(kiln_program_intermediate_bytes(program), 7 * slot);
    assert_int_equal(kiln_program_arena_bytes(program), 3 * slot); /* a, and two for the chain */

    kiln_session *session;
    kiln_tensor *t;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 1, (int64_t[]){256}, &t, &err), KILN_OK);
    double *in = kiln_tensor_data(t);
    for (int i = 0; i < 256; i++)
        in[i] = i;
    assert_int_equal(kiln_session_set_input(session, "x", t, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const double *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    const double *a_out = kiln_tensor_const_data(kiln_session_output(session, 1));
    for (int i = 0; i < 256; i++) {
        assert_true(a_out[i] == -i);
        assert_true(y[i] == -32.0 * i + i); /* -x * 2^5 - (-x) */
    }
    kiln_tensor_free(t);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* -x, then five doublings, then minus -x again; f64[n], n in 1..256. */
static kiln_builder *build_skip(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, a, value, two;
    assert_int_equal(kiln_builder_new("skip", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 256, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &a, &err), KILN_OK);
    value = a;
    for (int layer = 0; layer < 5; layer++)
        assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){value, two}, &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "sub", 2, (kiln_value[]){value, a}, &value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "a", a, &err), KILN_OK);
    return b;
}

/* Run the skip program on x = 0..255 and check both outputs. */
static void check_skip_runs(const kiln_program *program)
{
    kiln_session *session;
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 1, (int64_t[]){256}, &t, &err), KILN_OK);
    double *in = kiln_tensor_data(t);
    for (int i = 0; i < 256; i++)
        in[i] = i;
    assert_int_equal(kiln_session_set_input(session, "x", t, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const double *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    const double *a_out = kiln_tensor_const_data(kiln_session_output(session, 1));
    for (int i = 0; i < 256; i++) {
        assert_true(a_out[i] == -i);
        assert_true(y[i] == -32.0 * i + i);
    }
    kiln_tensor_free(t);
    kiln_session_free(session);
}

/* `bytes` re-laid out with section PLAN's payload replaced. */
static uint8_t *replace_plan(const uint8_t *bytes, size_t size, const kiln_writer *plan, size_t *out_size)
{
    const kiln_container_limits wide = {UINT32_MAX, UINT64_MAX, UINT64_MAX};
    kiln_container c;
    kiln_error err;
    kiln_section_spec specs[16];
    assert_int_equal(kiln_container_parse(bytes, size, &wide, &c, &err), KILN_OK);
    assert_true(c.section_count <= 16);
    for (uint32_t i = 0; i < c.section_count; i++) {
        bool is_plan = c.sections[i].type == KILN_SECTION_PLAN;
        specs[i] = (kiln_section_spec){
            .type = c.sections[i].type,
            .flags = c.sections[i].flags,
            .version = c.sections[i].version,
            .data = is_plan ? plan->data : bytes + c.sections[i].offset,
            .size = is_plan ? plan->size : (size_t)c.sections[i].stored_size,
        };
    }
    kiln_writer w;
    kiln_writer_init(&w);
    assert_int_equal(kiln_container_encode_progress(specs, c.section_count, 1, 0, &w, NULL, &err), KILN_OK);
    kiln_container_release(&c);
    *out_size = w.size;
    return w.data;
}

/*
 * The plan can be stored (section PLAN, format 1.1) and is then used as
 * stored; a stored plan that does not fit this runtime (slots too small,
 * live results sharing bytes) is set aside with a warning, and the
 * runtime's own plan is used. Without the section the runtime plans.
 */
static void stored_plans_are_checked_and_used(void **state)
{
    (void)state;
    kiln_builder *b = build_skip();
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.store_memory_plan = true;
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(b, &options, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_true(kiln_program_memory_plan_stored(program));
    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(minor, 1);
    assert_int_equal(kiln_program_arena_bytes(program), 3 * 256 * 8);
    check_skip_runs(program);
    kiln_program_free(program);

    /* Slots: 7 results of 2048 bytes. Every slot at offset 0: live results collide. */
    kiln_writer plan;
    for (int variant = 0; variant < 3; variant++) {
        kiln_writer_init(&plan);
        kiln_write_u64(&plan, variant == 0 ? 2048 : 7 * 2048);
        kiln_write_u64(&plan, 7 * 2048);
        kiln_write_u32(&plan, 7);
        for (uint64_t n = 0; n < 7; n++) {
            kiln_write_u64(&plan, variant == 0 ? 0 : n * 2048);
            kiln_write_u64(&plan, variant == 2 ? 64 : 2048); /* variant 2: slots too small */
        }
        size_t edited_size;
        uint8_t *edited = replace_plan(bytes, size, &plan, &edited_size);
        kiln_report *report;
        assert_int_equal(kiln_program_load_memory(edited, edited_size, NULL, &program, &report, &err),
                         KILN_OK);
        bool warned = false;
        for (uint32_t i = 0; i < kiln_report_count(report); i++) {
            kiln_problem_info info;
            kiln_report_problem(report, i, &info);
            warned = warned || (strcmp(info.code, "plan-ignored") == 0 && info.severity == KILN_SEVERITY_WARNING);
        }
        if (variant == 1) { /* no sharing at all is wasteful but valid */
            assert_false(warned);
            assert_true(kiln_program_memory_plan_stored(program));
            assert_int_equal(kiln_program_arena_bytes(program), 7 * 2048);
        } else {
            assert_true(warned);
            assert_false(kiln_program_memory_plan_stored(program));
            assert_int_equal(kiln_program_arena_bytes(program), 3 * 2048);
        }
        check_skip_runs(program);
        kiln_report_free(report);
        kiln_program_free(program);
        free(edited);
        kiln_writer_release(&plan);
    }
    free(bytes);

    /* Absent: planned by the runtime. */
    b = build_skip();
    program = load(b);
    kiln_builder_free(b);
    assert_false(kiln_program_memory_plan_stored(program));
    assert_int_equal(kiln_program_arena_bytes(program), 3 * 2048);
    kiln_program_free(program);
}

/*
 * A 10-layer MLP (gemm layers 784-512-...-512-10 with biases, batch in
 * 1..64): at the domain's upper bound the arena holds at most twice the two
 * largest activations that are live at the same time (a layer's input and
 * output). Prints the numbers.
 */
static void mlp_arena_is_at_most_twice_the_live_activations(void **state)
{
    (void)state;
    enum { LAYERS = 10 };
    const int64_t widths[LAYERS + 1] = {784, 512, 512, 512, 512, 512, 512, 512, 512, 512, 10};
    kiln_builder *b;
    kiln_error err;
    kiln_value value;
    assert_int_equal(kiln_builder_new("mlp", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 64, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 784]", &value, &err), KILN_OK);
    for (int l = 0; l < LAYERS; l++) {
        size_t count = (size_t)(widths[l] * widths[l + 1]);
        float *w = calloc(count, sizeof *w), *bias = calloc((size_t)widths[l + 1], sizeof *bias);
        assert_non_null(w);
        assert_non_null(bias);
        char name[32];
        kiln_value weight, bias_value;
        snprintf(name, sizeof name, "w%d", l);
        assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, 2,
                                                 (int64_t[]){widths[l], widths[l + 1]}, w, &weight, &err), KILN_OK);
        snprintf(name, sizeof name, "b%d", l);
        assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, 1,
                                                 (int64_t[]){widths[l + 1]}, bias, &bias_value, &err), KILN_OK);
        free(w);
        free(bias);
        if (kiln_builder_add_op(b, "gemm", 3, (kiln_value[]){value, weight, bias_value}, &value, &err) != KILN_OK)
            fail_msg("gemm layer %d: %s", l, err.message);
    }
    assert_int_equal(kiln_builder_add_output(b, "y", value, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    /* The two largest activations live together: a 512-wide layer's input and output at batch 64. */
    uint64_t largest_pair = 2 * 64 * 512 * sizeof(float);
    uint64_t arena = kiln_program_arena_bytes(program), total = kiln_program_intermediate_bytes(program);
    print_message("mlp: arena %llu bytes, intermediates %llu bytes, largest live pair %llu bytes (arena/pair %.2f)\n",
                  (unsigned long long)arena, (unsigned long long)total, (unsigned long long)largest_pair,
                  (double)arena / (double)largest_pair);
    assert_true(arena <= 2 * largest_pair);
    assert_true(arena < total);
    kiln_program_free(program);
}

/* Once a session exists, running it allocates nothing, valid input or not. */
#if COUNTING_ALLOCATIONS
/* y = (x + 1)^2 of x: f32[batch, 8], batch in 1..16: the program whose runs the allocation tests count. */
static kiln_program *counted_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y, one;
    assert_int_equal(kiln_builder_new("count", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 8]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){y, y}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    return program;
}

/* The runs of running_allocates_on_no_thread, on a thread of their own: allocations counted over the runs. */
static void *runs_on_a_new_thread(void *program)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = 1; /* another count than OpenMP's default on a machine of 2 or more cores */
    options.thread_policy = KILN_THREADS_FIXED;
    kiln_session *session;
    kiln_tensor *x;
    kiln_error err;
    unsigned long *counted = malloc(sizeof *counted);
    if (!counted || kiln_session_new(program, &options, &session, &err) != KILN_OK ||
        kiln_tensor_new(KILN_F32, 2, (int64_t[]){4, 8}, &x, &err) != KILN_OK)
        return NULL;
    unsigned long before = counted_allocations();
    for (int i = 0; i < 10; i++)
        if (kiln_session_set_input(session, "x", x, &err) != KILN_OK || kiln_session_run(session, &err) != KILN_OK)
            before = 0; /* counted as allocations: the test fails */
    *counted = counted_allocations() - before;
    kiln_tensor_free(x);
    kiln_session_free(session);
    return counted;
}
#endif

/*
 * A session created on a new thread runs there on 1 thread, which writes
 * OpenMP's thread count for the first time on that thread (libgomp then
 * allocates the thread's own settings): the session wrote it when it was
 * created (kiln_threads_prepare), so its runs allocate nothing. (The
 * adaptive policy changes the count between runs in the same way when the
 * machine's load changes.)
 */
static void running_allocates_on_no_thread(void **state)
{
    (void)state;
#if COUNTING_ALLOCATIONS
    kiln_program *program = counted_program();
    pthread_t thread;
    void *result = NULL;
    assert_int_equal(pthread_create(&thread, NULL, runs_on_a_new_thread, program), 0);
    assert_int_equal(pthread_join(thread, &result), 0);
    assert_non_null(result);
    assert_int_equal(*(unsigned long *)result, 0);
    free(result);
    kiln_program_free(program);
#else
    skip();
#endif
}

static void running_allocates_nothing(void **state)
{
    (void)state;
#if COUNTING_ALLOCATIONS
    kiln_error err;
    kiln_program *program = counted_program();
    kiln_session *session;
    kiln_tensor *small, *large, *outside;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 8}, &small, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){16, 8}, &large, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){17, 8}, &outside, &err), KILN_OK);
    for (uint64_t e = 0; e < 16 * 8; e++)
        ((float *)kiln_tensor_data(large))[e] = (float)(e % 5);
    unsigned long before = counted_allocations();
    for (int i = 0; i < 100; i++) {
        assert_int_equal(kiln_session_set_input(session, "x", i % 2 ? small : large, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        /* A refused input (batch 17 is outside 1..16) allocates nothing either. */
        assert_int_equal(kiln_session_set_input(session, "x", outside, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_ERR_SHAPE_GUARD);
    }
    assert_int_equal(counted_allocations() - before, 0);
    /* A session narrowed to batch 2..8 (issue 15) plans its own, smaller
     * arena; its runs allocate nothing either, nor does refusing batch 16,
     * inside the artifact's domain but outside the session's. */
    kiln_session *narrow;
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.dims = (kiln_dim_bound[]){{"batch", 2, 8}};
    options.dim_count = 1;
    assert_int_equal(kiln_session_new(program, &options, &narrow, &err), KILN_OK);
    assert_true(kiln_session_arena_bytes(narrow) < kiln_program_arena_bytes(program));
    before = counted_allocations();
    for (int i = 0; i < 100; i++) {
        assert_int_equal(kiln_session_set_input(narrow, "x", small, &err), KILN_OK);
        assert_int_equal(kiln_session_run(narrow, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(narrow, "x", large, &err), KILN_OK);
        assert_int_equal(kiln_session_run(narrow, &err), KILN_ERR_SHAPE_GUARD);
    }
    assert_int_equal(counted_allocations() - before, 0);
    assert_non_null(strstr(err.message, "16 is outside this session's 2..8"));
    kiln_session_free(narrow);
    /* A profiling session keeps its figures in storage allocated with it:
     * its runs allocate nothing either, and reading the profile neither. */
    kiln_session *profiled;
    kiln_session_options_default(&options);
    options.profile = true;
    assert_int_equal(kiln_session_new(program, &options, &profiled, &err), KILN_OK);
    before = counted_allocations();
    for (int i = 0; i < 100; i++) {
        assert_int_equal(kiln_session_set_input(profiled, "x", i % 2 ? small : large, &err), KILN_OK);
        assert_int_equal(kiln_session_run(profiled, &err), KILN_OK);
    }
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    kiln_node_profile node = {.struct_size = sizeof node};
    assert_int_equal(kiln_session_profile_summary(profiled, &summary, &err), KILN_OK);
    assert_int_equal(kiln_session_profile_node(profiled, 1, &node, &err), KILN_OK);
    assert_int_equal(counted_allocations() - before, 0);
    assert_int_equal(summary.runs, 100);
    assert_int_equal(node.runs, 100);
    kiln_session_free(profiled);
    /* And the runs computed y = (x + 1)^2. */
    assert_int_equal(kiln_session_set_input(session, "x", large, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *y_values = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (uint64_t e = 0; e < 16 * 8; e++)
        assert_float_equal(y_values[e], (float)((e % 5 + 1) * (e % 5 + 1)), 0.0);
    kiln_tensor_free(outside);
    kiln_tensor_free(small);
    kiln_tensor_free(large);
    kiln_session_free(session);
    kiln_program_free(program);
#else
    skip();
#endif
}

/*
 * A dense layer (gemm with a bias, then relu) in three sessions: reference
 * kernels, and default (oneDNN when built) with 1 and 2 threads. After one
 * warm-up run at each of two shapes, runs at those shapes must allocate
 * nothing on the reference path. On the oneDNN path the primitives are
 * built by then, so kiln allocates nothing either; what oneDNN's execute
 * itself allocates per call is measured and reported, and must not grow
 * with the number of runs (a primitive rebuilt per run would).
 */
static void dense_layer_runs_allocate_nothing_after_warm_up(void **state)
{
    (void)state;
#if COUNTING_ALLOCATIONS
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, bias, y;
    static float weights[64 * 32], offsets[32];
    for (int i = 0; i < 64 * 32; i++)
        weights[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < 32; i++)
        offsets[i] = (float)i;
    assert_int_equal(kiln_builder_new("dense", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 64]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){64, 32},
                                             weights, &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "b", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){32}, offsets,
                                             &bias, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "gemm", 3, (kiln_value[]){x, w, bias}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &y, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    kiln_tensor *small, *large;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 64}, &small, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){16, 64}, &large, &err), KILN_OK);
    for (uint64_t e = 0; e < 16 * 64; e++)
        ((float *)kiln_tensor_data(large))[e] = (float)(e % 5);
    for (uint64_t e = 0; e < 2 * 64; e++)
        ((float *)kiln_tensor_data(small))[e] = (float)(e % 5);
    for (int mode = 0; mode < 3; mode++) {
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.reference_kernels = mode == 0;
        options.threads = mode == 2 ? 2 : 1;
        options.thread_policy = KILN_THREADS_FIXED;
        kiln_session *session;
        assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(kiln_session_set_input(session, "x", i ? small : large, &err), KILN_OK);
            assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        }
        unsigned long counts[2];
        for (int round = 0; round < 2; round++) {
            unsigned long before = counted_allocations();
            for (int i = 0; i < (round + 1) * 50; i++) {
                assert_int_equal(kiln_session_set_input(session, "x", i % 2 ? small : large, &err), KILN_OK);
                assert_int_equal(kiln_session_run(session, &err), KILN_OK);
            }
            counts[round] = counted_allocations() - before;
        }
        print_message("dense layer, %s, %u thread(s): %lu allocations in 50 runs, %lu in 100\n",
                      mode == 0 ? "reference kernels" : "fast paths", kiln_session_threads(session), counts[0],
                      counts[1]);
        if (mode == 0)
            assert_int_equal(counts[0] + counts[1], 0);
        else
            assert_int_equal(counts[1], 2 * counts[0]); /* a fixed cost per run, nothing built */
        const float *y_values = kiln_tensor_const_data(kiln_session_output(session, 0));
        for (int j = 0; j < 32; j++) {
            float sum = (float)j;
            for (int p = 0; p < 64; p++)
                sum += (float)(p % 5) * weights[p * 32 + j];
            assert_float_equal(y_values[j], sum > 0 ? sum : 0, 1e-3);
        }
        kiln_session_free(session);
    }
    kiln_tensor_free(small);
    kiln_tensor_free(large);
    kiln_program_free(program);
#else
    skip();
#endif
}

/*
 * f16 conv (a program weight) -> avg_pool -> resize linear -> einsum: the
 * half-precision scratch of each node (spec/security.md: outside the
 * arena) is allocated by the first runs and kept, so after warm-up at the
 * largest batch, runs at any batch allocate nothing, with the default
 * options (half values never take the oneDNN path) and the reference ones.
 */
static void half_window_runs_allocate_nothing_after_warm_up(void **state)
{
    (void)state;
#if COUNTING_ALLOCATIONS
    enum { ONE = 0x3c00, HALF = 0x3800, F16_324 = 0x5d10 }; /* f16 patterns of 1, 0.5 and 324 */
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, conv, pool, resize, y;
    static uint16_t weights[3 * 2 * 3 * 3];
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++)
        weights[i] = HALF;
    assert_int_equal(kiln_builder_new("half_windows", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F16, "[batch, 2, 6, 6]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F16, 4, (int64_t[]){3, 2, 3, 3},
                                             weights, &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "conv", 2, (kiln_value[]){x, w}, &conv, &err), KILN_OK);
    kiln_attribute kernel = {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){2, 2},
                             .count = 2};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "avg_pool", 1, &conv, 1, &kernel, &pool, &err), KILN_OK);
    kiln_attribute linear[2] = {{.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "linear"},
                                {.name = "scales", .type = KILN_ATTRIBUTE_FLOATS,
                                 .floats = (const double[]){1, 1, 2, 2}, .count = 4}};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "resize", 1, &pool, 2, linear, &resize, &err), KILN_OK);
    kiln_attribute equation = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = "nchw->nc"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "einsum", 1, &resize, 1, &equation, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    kiln_tensor *inputs[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kiln_tensor_new(KILN_F16, 4, (int64_t[]){i ? 1 : 4, 2, 6, 6}, &inputs[i], &err), KILN_OK);
        uint16_t *values = kiln_tensor_data(inputs[i]);
        for (int64_t e = 0; e < (i ? 1 : 4) * 2 * 6 * 6; e++)
            values[e] = ONE;
    }
    for (int mode = 0; mode < 2; mode++) {
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.reference_kernels = mode == 0;
        kiln_session *session;
        assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "x", inputs[0], &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        unsigned long before = counted_allocations();
        for (int i = 0; i < 100; i++) {
            assert_int_equal(kiln_session_set_input(session, "x", inputs[i % 2], &err), KILN_OK);
            assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        }
        assert_int_equal(counted_allocations() - before, 0);
        /* Every conv output is 2*9 taps of 1 * 0.5 = 9, pooled (3x3) and resized (6x6) to 9: each y is 36 * 9. */
        const kiln_tensor *out = kiln_session_output(session, 0);
        const uint16_t *y_values = kiln_tensor_const_data(out);
        for (int j = 0; j < 3; j++)
            assert_int_equal(y_values[j], F16_324);
        kiln_session_free(session);
    }
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
#else
    skip();
#endif
}

/*
 * gru and lstm_last_cell over a symbolic sequence and batch: the recurrent
 * state scratch of each node is allocated by the first run at the largest
 * shape and kept, so later runs at any shape allocate nothing.
 */
static void recurrent_runs_allocate_nothing_after_warm_up(void **state)
{
    (void)state;
#if COUNTING_ALLOCATIONS
    kiln_builder *b;
    kiln_error err;
    kiln_value x, gru_w, gru_r, lstm_w, lstm_r, y, c;
    static float weights[4 * 3 * 3];
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++)
        weights[i] = 0.125f * (float)(i % 5) - 0.25f;
    assert_int_equal(kiln_builder_new("recurrent", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[seq, batch, 3]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "gru_w", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){1, 9, 3},
                                             weights, &gru_w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "gru_r", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){1, 9, 3},
                                             weights, &gru_r, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "lstm_w", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){1, 12, 3},
                                             weights, &lstm_w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "lstm_r", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){1, 12, 3},
                                             weights, &lstm_r, &err),
                     KILN_OK);
    kiln_attribute hidden = {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 3};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "gru", 3, (kiln_value[]){x, gru_w, gru_r}, 1, &hidden,
                                                         &y, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "lstm_last_cell", 3, (kiln_value[]){x, lstm_w, lstm_r}, 1,
                                                         &hidden, &c, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "c", c, &err), KILN_OK);
    kiln_program *program = load(b);
    kiln_builder_free(b);
    kiln_tensor *inputs[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kiln_tensor_new(KILN_F32, 3, (int64_t[]){i ? 2 : 8, i ? 1 : 4, 3}, &inputs[i], &err),
                         KILN_OK);
        float *values = kiln_tensor_data(inputs[i]);
        for (int64_t e = 0; e < (i ? 2 : 32) * 3; e++)
            values[e] = 0.1f * (float)(e % 7) - 0.3f;
    }
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", inputs[0], &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    unsigned long before = counted_allocations();
    for (int i = 0; i < 50; i++) {
        assert_int_equal(kiln_session_set_input(session, "x", inputs[i % 2], &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    }
    assert_int_equal(counted_allocations() - before, 0);
    kiln_session_free(session);
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_chain_needs_two_slots),
        cmocka_unit_test(zero_element_values_need_no_bytes_in_any_axis_order),
        cmocka_unit_test(long_lived_values_are_not_overwritten),
        cmocka_unit_test(running_allocates_nothing),
        cmocka_unit_test(running_allocates_on_no_thread),
        cmocka_unit_test(dense_layer_runs_allocate_nothing_after_warm_up),
        cmocka_unit_test(half_window_runs_allocate_nothing_after_warm_up),
        cmocka_unit_test(recurrent_runs_allocate_nothing_after_warm_up),
        cmocka_unit_test(mlp_arena_is_at_most_twice_the_live_activations),
        cmocka_unit_test(stored_plans_are_checked_and_used),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
