/*
 * Versioned structs through the public API (kiln.h's conventions): a
 * struct from an older, shorter header is taken with defaults for the
 * fields it lacks; a newer, longer one is taken when the bytes this
 * library does not know are zero and refused, naming the struct and the
 * byte, when one is set; a struct_size below the 1.0 size is refused;
 * kiln_*_init writes exactly the size it is given; structs the library
 * fills are filled up to their struct_size and no further; an array of
 * structs is walked with the caller's stride.
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
#include <kiln/util.h>

#include "seed_program.h"

/* The seed example (batch in 2..4), sealed in memory. */
static void encode_scale(void **bytes, size_t *size)
{
    kiln_builder *b = seed_program_builder(2, 4);
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b, NULL, bytes, size, &err), KILN_OK);
    kiln_builder_free(b);
}

static kiln_program *load_scale(void)
{
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_error err;
    encode_scale(&bytes, &size);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    return program;
}

/* kiln_session_options as a caller built against the header before `profile` passes it. */
static void an_older_shorter_session_options_is_taken(void **state)
{
    (void)state;
    kiln_program *program = load_scale();
    size_t old_size = KILN_SIZE_THROUGH(kiln_session_options, thread_policy);
    assert_true(old_size < sizeof(kiln_session_options));
    /* The old caller's struct ends where its header ended: make the bytes
     * after it garbage, which the library must not read. */
    unsigned char storage[sizeof(kiln_session_options)];
    memset(storage, 0xA5, sizeof storage);
    kiln_session_options *old = (kiln_session_options *)storage;
    kiln_session_options_init(old, old_size);
    old->threads = 1;
    old->thread_policy = KILN_THREADS_FIXED;
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, old, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_threads(session), 1);
    /* `profile`, which the old struct lacks, took its default (off), not the garbage. */
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    assert_int_equal(kiln_session_profile_summary(session, &summary, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "does not profile"));
    kiln_session_free(session);
    kiln_program_free(program);
}

/* Each public kiln_*_init writes exactly the bytes it is given, defaults included. */
static void init_writes_exactly_the_given_size(void **state)
{
    (void)state;
    unsigned char storage[512];
    memset(storage, 0xA5, sizeof storage);
    size_t size = KILN_SIZE_THROUGH(kiln_save_options, timestamp);
    kiln_save_options_init((kiln_save_options *)storage, size);
    kiln_save_options *options = (kiln_save_options *)storage;
    assert_int_equal(options->struct_size, size);
    assert_int_equal(options->timestamp, -1);
    for (size_t i = size; i < sizeof storage; i++)
        assert_int_equal(storage[i], 0xA5);
    /* A size with no room for struct_size itself is written nothing. */
    memset(storage, 0xA5, sizeof storage);
    kiln_limits_init((kiln_limits *)storage, sizeof(size_t) - 1);
    for (size_t i = 0; i < sizeof storage; i++)
        assert_int_equal(storage[i], 0xA5);
    /* The macro passes the caller's sizeof. */
    kiln_load_options load;
    kiln_load_options_default(&load);
    assert_int_equal(load.struct_size, sizeof load);
    assert_int_equal(load.verify, KILN_VERIFY_FULL);
    assert_null(load.limits);
}

/* A newer caller's struct: longer than this library's, its new fields at the end. */
typedef struct newer_load_options {
    kiln_load_options known;
    uint64_t future_field;
} newer_load_options;

static void a_newer_longer_struct_is_taken_when_its_new_fields_are_zero(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    encode_scale(&bytes, &size);
    newer_load_options newer;
    memset(&newer, 0, sizeof newer);
    kiln_load_options_init(&newer.known, sizeof newer);
    assert_int_equal(newer.known.struct_size, sizeof newer);
    assert_int_equal(newer.future_field, 0);
    kiln_program *program;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(bytes, size, &newer.known, &program, NULL, &err), KILN_OK);
    kiln_program_free(program);
    /* A field this library does not know asks for what it cannot do. */
    newer.future_field = 1;
    assert_int_equal(kiln_program_load_memory(bytes, size, &newer.known, &program, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_null(program);
    char expected[128];
    snprintf(expected, sizeof expected, "kiln_load_options has byte %zu set", offsetof(newer_load_options, future_field));
    assert_non_null(strstr(err.message, expected));
    free(bytes);
}

/* Below the 1.0 size is no kiln's struct: refused by every entry, naming the struct. */
static void a_struct_below_its_first_size_is_refused(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    encode_scale(&bytes, &size);
    kiln_program *program;
    kiln_error err;
    kiln_load_options load;
    kiln_load_options_default(&load);
    load.struct_size = offsetof(kiln_load_options, progress_user);
    assert_int_equal(kiln_program_load_memory(bytes, size, &load, &program, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_load_options.struct_size"));
    kiln_limits limits;
    kiln_limits_default(&limits);
    limits.struct_size = sizeof(size_t);
    kiln_load_options_default(&load);
    load.limits = &limits;
    assert_int_equal(kiln_program_load_memory(bytes, size, &load, &program, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_limits.struct_size"));
    free(bytes);

    program = load_scale();
    kiln_session_options session_options;
    kiln_session_options_default(&session_options);
    session_options.struct_size = offsetof(kiln_session_options, thread_policy);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, &session_options, &session, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_session_options.struct_size"));
    kiln_node_profile profile = {.struct_size = offsetof(kiln_node_profile, shape)};
    kiln_session_options_default(&session_options);
    session_options.profile = true;
    assert_int_equal(kiln_session_new(program, &session_options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_profile_node(session, 0, &profile, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_node_profile.struct_size"));
    kiln_session_free(session);
    kiln_program_free(program);

    kiln_builder *b;
    assert_int_equal(kiln_builder_new("b", &b, &err), KILN_OK);
    kiln_save_options save;
    kiln_save_options_default(&save);
    save.struct_size = 1;
    void *out;
    size_t out_size;
    assert_int_equal(kiln_builder_encode(b, &save, &out, &out_size, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_save_options.struct_size"));
    kiln_value x;
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    kiln_input_check check;
    kiln_input_check_default(&check);
    check.struct_size = offsetof(kiln_input_check, description);
    assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "kiln_input_check.struct_size"));
    kiln_builder_free(b);
}

/* A newer caller's summary, and a canary past it. */
typedef struct newer_summary {
    kiln_profile_summary summary;
    uint64_t newer_field;
    uint64_t canary;
} newer_summary;

/* A struct the library fills is filled up to the caller's struct_size: a newer one's tail is zeroed, nothing past it is touched. */
static void filled_structs_stop_at_their_struct_size(void **state)
{
    (void)state;
    kiln_program *program = load_scale();
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.profile = true;
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    newer_summary out;
    memset(&out, 0xA5, sizeof out);
    out.summary.struct_size = offsetof(newer_summary, canary);
    assert_int_equal(kiln_session_profile_summary(session, &out.summary, &err), KILN_OK);
    assert_int_equal(out.summary.node_count, kiln_program_node_count(program));
    assert_int_equal(out.summary.runs, 0);
    assert_int_equal(out.newer_field, 0);
    assert_int_equal(out.canary, UINT64_C(0xA5A5A5A5A5A5A5A5));
    kiln_session_free(session);
    kiln_program_free(program);
}

/* An array of checks is walked with the caller's stride, not this library's sizeof. */
typedef struct newer_input_check {
    kiln_input_check known;
    uint64_t future_field;
} newer_input_check;

static void an_array_of_checks_uses_the_callers_stride(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    encode_scale(&bytes, &size);
    char path[] = "/tmp/kiln-struct-size-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    kiln_error err;
    assert_int_equal(kiln_write_file_atomic(path, bytes, size, &err), KILN_OK);
    free(bytes);
    /* One check, in a longer struct whose tail is zero. */
    newer_input_check checks[1];
    memset(checks, 0, sizeof checks);
    kiln_input_check_init(&checks[0].known, sizeof checks[0]);
    checks[0].known.has_range = true;
    checks[0].known.min = -1;
    checks[0].known.max = 1;
    const char *inputs[] = {"x"};
    assert_int_equal(kiln_artifact_add_input_checks(path, NULL, 1, inputs, &checks[0].known, NULL, NULL, NULL, NULL,
                                                    &err),
                     KILN_OK);
    kiln_program *program;
    assert_int_equal(kiln_program_load(path, NULL, &program, NULL, &err), KILN_OK);
    kiln_input_check stored;
    kiln_input_check_default(&stored);
    assert_true(kiln_program_input_check(program, 0, &stored));
    assert_true(stored.has_range);
    assert_true(stored.max == 1);
    kiln_program_free(program);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_older_shorter_session_options_is_taken),
        cmocka_unit_test(init_writes_exactly_the_given_size),
        cmocka_unit_test(a_newer_longer_struct_is_taken_when_its_new_fields_are_zero),
        cmocka_unit_test(a_struct_below_its_first_size_is_refused),
        cmocka_unit_test(filled_structs_stop_at_their_struct_size),
        cmocka_unit_test(an_array_of_checks_uses_the_callers_stride),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
