/*
 * test_session_bound.c — sessions at real sizes (spec/contract.md §9): a
 * program whose arena at the upper bound of its domain is over the limit
 * loads and runs in sessions that narrow its dims; the session's arena is
 * planned for its own bound; runs outside the session's bound are refused
 * naming both ranges; bad narrowings are refused; the limit-exceeded
 * message names the bound, the bytes and narrowings that do fit; evidence
 * replays in sessions narrowed to each case.
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
#include <kiln/util.h>

/* Rows of 1024 floats: each of the three results of a batch row is 4 KiB. */
enum { WIDTH = 1024 };

/*
 * y = (x + 1) * x, then z = y + y, for x: f32[batch, WIDTH] (or
 * [batch, seq, 16] when `seq_max` is non-zero, with an attention-like
 * seq x seq result), loaded with `arena_limit` as the load limit.
 */
static kiln_program *load_program(int64_t batch_max, int64_t seq_max, uint64_t arena_limit, bool with_evidence)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, one, y, z;
    assert_int_equal(kiln_builder_new("rows", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, batch_max, &err), KILN_OK);
    if (seq_max) {
        assert_int_equal(kiln_builder_add_dim(b, "seq", 1, seq_max, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, seq, 16]", &x, &err), KILN_OK);
        kiln_value t, scores;
        kiln_attribute perm = {.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){0, 2, 1}, .count = 3};
        assert_int_equal(kiln_builder_add_op_with_attributes(b, "transpose", 1, &x, 1, &perm, &t, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, t}, &scores, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){scores, x}, &z, &err), KILN_OK);
    } else {
        assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 1024]", &x, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 1.0, &one, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, one}, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){y, x}, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){y, y}, &z, &err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    if (with_evidence) {
        /* x = 1 at batch 2: z = 2 * (1 + 1) * 1 = 4. */
        kiln_tensor *in, *expected;
        assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, WIDTH}, &in, &err), KILN_OK);
        assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, WIDTH}, &expected, &err), KILN_OK);
        for (int i = 0; i < 2 * WIDTH; i++) {
            ((float *)kiln_tensor_data(in))[i] = 1.0f;
            ((float *)kiln_tensor_data(expected))[i] = 4.0f;
        }
        kiln_compare_rule exact = {KILN_COMPARE_EXACT, 0, 0, false};
        assert_int_equal(kiln_builder_add_evidence(b, &(kiln_evidence_case){
                .name = "ones",
                .input_count = 1,
                .input_names = (const char *[]){"x"},
                .inputs = (const kiln_tensor *[]){in},
                .output_count = 1,
                .output_names = (const char *[]){"z"},
                .expected = (const kiln_tensor *[]){expected},
                .rules = &exact}, &err),
                         KILN_OK);
        kiln_tensor_free(in);
        kiln_tensor_free(expected);
    }
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_load_options options;
    kiln_load_options_default(&options);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    limits.max_arena_bytes = arena_limit;
    kiln_program *program;
    if (kiln_program_load_memory(bytes, size, &options, &program, NULL, &err) != KILN_OK)
        fail_msg("load: %s", err.message);
    free(bytes);
    return program;
}

static kiln_session_options narrowed(const kiln_dim_bound *dims, uint32_t count)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.dims = dims;
    options.dim_count = count;
    return options;
}

/* Run `session` on x = 0.5 at `batch` rows; @return the status. */
static kiln_status run_rows(kiln_session *session, int64_t batch, kiln_error *err)
{
    kiln_tensor *x;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){batch, WIDTH}, &x, err), KILN_OK);
    for (int64_t i = 0; i < batch * WIDTH; i++)
        ((float *)kiln_tensor_data(x))[i] = 0.5f;
    assert_int_equal(kiln_session_set_input(session, "x", x, err), KILN_OK);
    kiln_status status = kiln_session_run(session, err);
    if (status == KILN_OK) {
        const kiln_tensor *z = kiln_session_output(session, 0);
        assert_int_equal(kiln_tensor_shape(z)[0], batch);
        const float *values = kiln_tensor_const_data(z);
        for (int64_t i = 0; i < batch * WIDTH; i++)
            assert_float_equal(values[i], 1.5f, 0.0f); /* 2 * (0.5 + 1) * 0.5 */
    }
    kiln_tensor_free(x);
    return status;
}

/* Over the limit at the upper bound: loads, refuses a session over the whole domain, runs narrowed. */
static void over_the_limit_loads_and_runs_narrowed(void **state)
{
    (void)state;
    /* Three 4 KiB slots per row, two live at once: the arena is 8 KiB per row (2 MiB at batch 256). */
    kiln_program *program = load_program(256, 0, UINT64_C(1) << 20, false);
    uint64_t row_arena = 2 * WIDTH * sizeof(float);
    assert_int_equal(kiln_program_arena_bytes(program), 256 * row_arena);

    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_ERR_LIMIT);
    assert_null(session);
    assert_non_null(strstr(err.message, "the arena at batch=256 needs 2.0 MiB (2097152 bytes), over the limit of "
                                        "1.0 MiB; with batch=1..128 it needs 1.0 MiB"));
    assert_non_null(strstr(err.message, "narrow the session's dims or raise its arena limit"));
    uint64_t bytes = 0;
    assert_int_equal(kiln_program_session_arena(program, NULL, &bytes, &err), KILN_ERR_LIMIT);
    assert_int_equal(bytes, 256 * row_arena);

    /* The suggested narrowing fits, and its arena is planned for batch 128. */
    kiln_session_options options = narrowed((kiln_dim_bound[]){{"batch", 1, 128}}, 1);
    assert_int_equal(kiln_program_session_arena(program, &options, &bytes, &err), KILN_OK);
    assert_int_equal(bytes, 128 * row_arena);
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(session), 128 * row_arena);
    assert_int_equal(run_rows(session, 1, &err), KILN_OK);
    assert_int_equal(run_rows(session, 128, &err), KILN_OK);
    /* Inside the artifact's domain, outside the session's: refused, naming both. */
    assert_int_equal(run_rows(session, 129, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 0 (batch): 129 is outside this session's 1..128 (the artifact "
                                     "allows 1..256: run it in a session whose bound on batch includes 129)");
    /* Outside the artifact's: the artifact's guard speaks first. */
    assert_int_equal(run_rows(session, 257, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 0 (batch): 257 is outside 1..256");
    kiln_session_free(session);

    /* A session's own limit replaces the load limit, both ways. */
    options = narrowed(NULL, 0);
    options.max_arena_bytes = 256 * row_arena;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(run_rows(session, 256, &err), KILN_OK);
    kiln_session_free(session);
    options = narrowed((kiln_dim_bound[]){{"batch", 1, 128}}, 1);
    options.max_arena_bytes = 64 * row_arena;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "the arena at batch=128 needs 1.0 MiB"));
    assert_non_null(strstr(err.message, "with batch=1..64 it needs 512.0 KiB"));
    kiln_program_free(program);
}

/* Every bad narrowing is refused at session creation, saying what is wrong. */
static void bad_narrowings_are_refused(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("dims", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 64, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "h", 8, 256, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "h", 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_derived_dim(b, "two_h", "2*h", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, h]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);

    static const struct {
        kiln_dim_bound dims[2];
        uint32_t count;
        const char *message;
    } cases[] = {
        {{{"size", 1, 2}}, 1, "'size' is not a dim of program 'dims' (dims: batch, h)"},
        {{{"two_h", 16, 32}}, 1, "'two_h' is a derived dim of program 'dims': narrow the dims it is made of (batch, h)"},
        {{{"batch", 4, 2}}, 1, "batch=4..2: the minimum is above the maximum"},
        {{{"batch", 0, 8}}, 1, "batch=0..8 is outside the artifact's range for batch, 1..64: a session can only narrow a dim"},
        {{{"h", 9, 15}}, 1, "h=9..15 holds no multiple of 8, the only sizes of h the artifact allows"},
        {{{"batch", 1, 2}, {"batch", 1, 4}}, 2, "dim 'batch' is narrowed twice"},
        {{{NULL, 1, 2}}, 1, "session dim 0 has no name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_session_options options = narrowed(cases[i].dims, cases[i].count);
        kiln_session *session = NULL;
        assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_ERR_INVALID_ARGUMENT);
        assert_null(session);
        assert_string_equal(err.message, cases[i].message);
    }
    kiln_session_options options = narrowed((kiln_dim_bound[]){{"batch", 65, 65}}, 1);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message,
                        "batch=65 is outside the artifact's range for batch, 1..64: a session can only narrow a dim");
    options = narrowed(NULL, 3);
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "session options: dim_count is 3 but dims is NULL");

    /* A good one: h at 16..24 runs 16 and 24 and refuses 32 (a multiple, inside the artifact). */
    options = narrowed((kiln_dim_bound[]){{"h", 16, 24}, {"batch", 2, 2}}, 2);
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(session), 2 * 24 * 4); /* f32[2, 24]: already 64-byte aligned */
    for (int64_t h = 16; h <= 32; h += 8) {
        kiln_tensor *x_value;
        assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, h}, &x_value, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "x", x_value, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), h <= 24 ? KILN_OK : KILN_ERR_SHAPE_GUARD);
        kiln_tensor_free(x_value);
    }
    assert_non_null(strstr(err.message, "32 is outside this session's 16..24"));
    kiln_session_free(session);
    kiln_program_free(program);
}

/* Two dims: the message names both at the bound and a narrowing of each that fits. */
static void suggestions_cover_each_dim(void **state)
{
    (void)state;
    /* scores: f32[batch, seq, seq] dominates: 4 * 64 * 2048^2 = 1 GiB at the bound. */
    kiln_program *program = load_program(64, 2048, UINT64_C(256) << 20, false);
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "the arena at batch=64, seq=2048 needs"));
    assert_non_null(strstr(err.message, "over the limit of 256.0 MiB; with batch=1.."));
    assert_non_null(strstr(err.message, "; or with seq=1.."));
    /* Every suggestion printed fits: parse and try each. */
    const char *at = err.message;
    char dim[16];
    long long lo, hi;
    int tried = 0;
    while ((at = strstr(at, "with ")) != NULL) {
        at += 5;
        if (sscanf(at, "%15[a-z]=%lld..%lld", dim, &lo, &hi) != 3)
            continue;
        kiln_session_options options = narrowed((kiln_dim_bound[]){{dim, lo, hi}}, 1);
        kiln_error fit_err;
        if (kiln_session_new(program, &options, &session, &fit_err) != KILN_OK)
            fail_msg("suggested %s=%lld..%lld: %s", dim, lo, hi, fit_err.message);
        assert_true(kiln_session_arena_bytes(session) <= (UINT64_C(256) << 20));
        kiln_session_free(session);
        tried++;
    }
    assert_int_equal(tried, 2);
    kiln_program_free(program);
}

/* Evidence at a small batch replays though the whole domain's arena is over the limit. */
static void evidence_replays_narrowed_to_its_case(void **state)
{
    (void)state;
    kiln_program *program = load_program(4096, 0, UINT64_C(1) << 20, true);
    kiln_evidence_result result;
    kiln_error err;
    if (kiln_program_replay_evidence(program, 0, &result, &err) != KILN_OK)
        fail_msg("replay: %s", err.message);
    assert_true(result.passed);
    assert_int_equal(result.elements, 2 * WIDTH);

    /* The same inputs make a session of exactly their size. */
    kiln_tensor *x;
    kiln_session *session;
    int64_t values[1];
    bool bound[1];
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){3, WIDTH}, &x, &err), KILN_OK);
    assert_int_equal(kiln_program_bind_dims(program, 1, (const char *[]){"x"}, (const kiln_tensor *[]){x}, values,
                                            bound, &err),
                     KILN_OK);
    assert_true(bound[0]);
    assert_int_equal(values[0], 3);
    assert_int_equal(kiln_session_new_for_inputs(program, NULL, 1, (const char *[]){"x"}, (const kiln_tensor *[]){x},
                                                 &session, &err),
                     KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(session), 3 * 2 * WIDTH * sizeof(float));
    kiln_session_free(session);
    /* Inputs outside the contract give the run's error. */
    assert_int_equal(kiln_program_bind_dims(program, 1, (const char *[]){"y"}, (const kiln_tensor *[]){x}, values,
                                            bound, &err),
                     KILN_ERR_UNKNOWN_INPUT);
    kiln_tensor_free(x);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){3, 7}, &x, &err), KILN_OK);
    assert_int_equal(kiln_session_new_for_inputs(program, NULL, 1, (const char *[]){"x"}, (const kiln_tensor *[]){x},
                                                 &session, &err),
                     KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 1: 7 is not the declared size 1024");
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/* A stored plan serves unnarrowed sessions; a narrowed one plans its own, and both compute the same. */
static void narrowed_sessions_of_a_stored_plan_plan_their_own(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, one, y, z;
    assert_int_equal(kiln_builder_new("stored", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 64, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 1024]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){y, x}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){y, y}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    kiln_save_options save;
    kiln_save_options_default(&save);
    save.store_memory_plan = true;
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, &save, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_true(kiln_program_memory_plan_stored(program));
    kiln_session *whole, *small;
    kiln_session_options options = narrowed((kiln_dim_bound[]){{"batch", 1, 4}}, 1);
    assert_int_equal(kiln_session_new(program, NULL, &whole, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, &options, &small, &err), KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(whole), kiln_program_arena_bytes(program));
    assert_int_equal(kiln_session_arena_bytes(small), 4 * 2 * WIDTH * sizeof(float));
    for (int64_t batch = 1; batch <= 4; batch++) {
        assert_int_equal(run_rows(whole, batch, &err), KILN_OK);
        assert_int_equal(run_rows(small, batch, &err), KILN_OK);
    }
    kiln_session_free(whole);
    kiln_session_free(small);
    kiln_program_free(program);
}

/* kiln_format_bytes: the units messages use. */
static void byte_counts_read_as_people_write_them(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {
        {0, "0 bytes"},           {1023, "1023 bytes"},          {1024, "1.0 KiB"},
        {1536, "1.5 KiB"},        {1048575, "1.0 MiB"},          {UINT64_C(8724152320), "8.1 GiB"},
        {UINT64_C(1) << 40, "1.0 TiB"}, {UINT64_MAX, "16.0 EiB"},
    };
    char text[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int length = kiln_format_bytes(cases[i].bytes, text, sizeof text);
        assert_string_equal(text, cases[i].text);
        assert_int_equal(length, (int)strlen(cases[i].text));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(over_the_limit_loads_and_runs_narrowed),
        cmocka_unit_test(bad_narrowings_are_refused),
        cmocka_unit_test(suggestions_cover_each_dim),
        cmocka_unit_test(evidence_replays_narrowed_to_its_case),
        cmocka_unit_test(narrowed_sessions_of_a_stored_plan_plan_their_own),
        cmocka_unit_test(byte_counts_read_as_people_write_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
