/*
 * test_golden.c — the golden artifacts of format 1.0 load, verify and run
 * forever; the current writer reproduces them byte for byte; and the
 * hand-made artifacts of newer versions get exactly the outcome the
 * version policy (spec/compatibility.md) promises.
 *
 * Usage: test_golden GOLDEN_DIR
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

#include "golden/programs.h"

static const char *golden_dir;

static char *golden_path(const char *relative)
{
    size_t n = strlen(golden_dir) + strlen(relative) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", golden_dir, relative);
    return path;
}

static uint8_t *read_file(const char *relative, size_t *size)
{
    char *path = golden_path(relative);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)length + 1);
    assert_int_equal(fread(data, 1, (size_t)length, f), (size_t)length);
    fclose(f);
    free(path);
    *size = (size_t)length;
    return data;
}

static kiln_program *load(const char *relative, kiln_verify_policy policy)
{
    kiln_load_options options;
    kiln_program *program;
    kiln_error err;
    char *path = golden_path(relative);
    kiln_load_options_default(&options);
    options.verify = policy;
    if (kiln_program_load(path, &options, &program, NULL, &err) != KILN_OK)
        fail_msg("%s: %s", path, err.message);
    free(path);
    return program;
}

/* Run a scale-like program on ones(3, 2) and check y = 3 everywhere. */
static void check_scale_runs(const kiln_program *program)
{
    kiln_session *session;
    kiln_tensor *x;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){3, 2}, &x, &err), KILN_OK);
    for (int i = 0; i < 6; i++)
        ((double *)kiln_tensor_data(x))[i] = 1.0;
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const double *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 6; i++)
        assert_true(y[i] == 3.0);
    kiln_tensor_free(x);
    kiln_session_free(session);
}

static void v1_artifacts_load_under_every_policy(void **state)
{
    (void)state;
    const char *files[] = {"v1.0/scale.kiln", "v1.0/scale-evidence.kiln", "v1.0/scale-signed.kiln",
                           "v1.0/weights.kiln", "v1.0/compressed.kiln"};
    const kiln_verify_policy policies[] = {KILN_VERIFY_FULL, KILN_VERIFY_LAZY, KILN_VERIFY_NONE};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        for (size_t p = 0; p < 3; p++) {
            kiln_program *program = load(files[f], policies[p]);
            uint16_t major, minor;
            kiln_program_format_version(program, &major, &minor);
            assert_int_equal(major, 1);
            assert_int_equal(minor, 0);
            kiln_session *session;
            kiln_error err;
            assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
            kiln_session_free(session);
            if (strstr(files[f], "scale"))
                check_scale_runs(program);
            kiln_program_free(program);
        }
    }
}

static void weights_and_compressed_compute_the_recorded_values(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program = load("v1.0/compressed.kiln", KILN_VERIFY_FULL);
    kiln_section_info section;
    bool compressed = false;
    for (uint32_t i = 0; i < kiln_program_section_count(program); i++) {
        kiln_program_section(program, i, &section);
        if (strcmp(section.type, "WDAT") == 0)
            compressed = section.compressed && section.stored_size < section.raw_size;
    }
    assert_true(compressed);
    kiln_session *session;
    kiln_tensor *x;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, 4096}, &x, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 2 * 4096; i++)
        assert_true(y[i] == (float)((i % 4096) % 64) * 0.5f);
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);

    program = load("v1.0/weights.kiln", KILN_VERIFY_FULL);
    kiln_tensor *k;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 3, (int64_t[]){1, 2, 3}, &x, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_I64, 2, (int64_t[]){2, 5}, &k, &err), KILN_OK);
    for (int i = 0; i < 6; i++)
        ((float *)kiln_tensor_data(x))[i] = 2.0f;
    for (int i = 0; i < 10; i++)
        ((int64_t *)kiln_tensor_data(k))[i] = i;
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "k", k, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float expected[6] = {2.5f, -2.5f, 4.5f, -7.5f, 11.5f, -2.0f}; /* 2*w + bias */
    assert_memory_equal(kiln_tensor_const_data(kiln_session_output(session, 0)), expected, sizeof expected);
    const int64_t *minus_k = kiln_tensor_const_data(kiln_session_output(session, 1));
    for (int i = 0; i < 10; i++)
        assert_int_equal(minus_k[i], -i);
    kiln_tensor_free(x);
    kiln_tensor_free(k);
    kiln_session_free(session);
    kiln_program_free(program);
}

static void signed_golden_verifies_with_its_key(void **state)
{
    (void)state;
    size_t size;
    char *text = (char *)read_file("v1.0/test-signing-key.pub", &size);
    text[size] = '\0';
    kiln_public_key key;
    kiln_error err;
    assert_int_equal(kiln_public_key_parse(text, &key, &err), KILN_OK);
    free(text);
    kiln_load_options options;
    kiln_load_options_default(&options);
    options.trusted_keys = &key;
    options.trusted_key_count = 1;
    options.require_signature = true;
    char *path = golden_path("v1.0/scale-signed.kiln");
    kiln_program *program;
    assert_int_equal(kiln_program_load(path, &options, &program, NULL, &err), KILN_OK);
    kiln_signature_info signature;
    kiln_program_signature(program, &signature);
    assert_int_equal(signature.state, KILN_SIGNATURE_VERIFIED);
    /* Signing changed only the trailer: the digest equals the unsigned file's. */
    uint8_t signed_digest[32], unsigned_digest[32];
    kiln_program_artifact_digest(program, signed_digest);
    kiln_program_free(program);
    program = load("v1.0/scale.kiln", KILN_VERIFY_FULL);
    kiln_program_artifact_digest(program, unsigned_digest);
    assert_memory_equal(signed_digest, unsigned_digest, 32);
    kiln_program_free(program);
    path = (free(path), golden_path("v1.0/scale.kiln"));
    assert_int_equal(kiln_program_load(path, &options, &program, NULL, &err), KILN_ERR_UNSIGNED);
    free(path);
}

static void evidence_replays_on_this_runtime(void **state)
{
    (void)state;
    kiln_program *program = load("v1.0/scale-evidence.kiln", KILN_VERIFY_FULL);
    kiln_evidence_result result;
    kiln_error err;
    assert_int_equal(kiln_program_evidence_count(program), 1);
    assert_string_equal(kiln_program_evidence_name(program, 0), "ones");
    assert_int_equal(kiln_program_replay_evidence(program, 0, &result, &err), KILN_OK);
    assert_true(result.passed);
    assert_string_equal(result.output, "y");
    assert_int_equal(result.elements, 6);
    kiln_program_free(program);
}

/* An integrity failure: the codes a damaged file may get, and nothing else. */
static bool integrity_status(kiln_status status)
{
    switch (status) {
    case KILN_ERR_TRUNCATED:
    case KILN_ERR_BAD_MAGIC:
    case KILN_ERR_UNSUPPORTED_VERSION:
    case KILN_ERR_HEADER_CRC:
    case KILN_ERR_TABLE_CRC:
    case KILN_ERR_SECTION_CRC:
    case KILN_ERR_SECTION_HASH:
    case KILN_ERR_TRAILER:
    case KILN_ERR_DIGEST_MISMATCH:
    case KILN_ERR_MALFORMED:
    case KILN_ERR_LIMIT:
        return true;
    default:
        return false;
    }
}

/*
 * The corruption sweep over every golden artifact: every truncation and one
 * flipped bit in every byte is refused under full verification with a
 * specific integrity error (never success, never a crash or leak).
 */
static void every_golden_artifact_refuses_truncation_and_bit_flips(void **state)
{
    (void)state;
    const char *files[] = {"v1.0/scale.kiln",      "v1.0/scale-evidence.kiln", "v1.0/scale-signed.kiln",
                           "v1.0/weights.kiln",    "v1.0/compressed.kiln",     "v1.1/guarded.kiln"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t size;
        uint8_t *bytes = read_file(files[f], &size);
        for (size_t length = 0; length < size; length++) {
            kiln_program *program;
            kiln_error err;
            kiln_status status = kiln_program_load_memory(bytes, length, NULL, &program, NULL, &err);
            if (!integrity_status(status))
                fail_msg("%s truncated to %zu bytes: status %d (%s)", files[f], length, (int)status, err.message);
        }
        for (size_t at = 0; at < size; at++) {
            kiln_program *program;
            kiln_error err;
            uint8_t bit = (uint8_t)(1u << (at % 8));
            bytes[at] ^= bit;
            kiln_status status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
            bytes[at] ^= bit;
            if (!integrity_status(status)) {
                kiln_program_free(program);
                fail_msg("%s with bit %zu of byte %zu flipped: status %d (%s)", files[f], at % 8, at, (int)status,
                         status ? err.message : "loaded");
            }
        }
        free(bytes);
    }
}

/*
 * Format 1.1: a non-strict program's runtime guard is stored, listed and
 * checked before every run; the run computes a @ w where it holds.
 */
static void v1_1_runtime_guards_load_and_guard(void **state)
{
    (void)state;
    kiln_program *program = load("v1.1/guarded.kiln", KILN_VERIFY_FULL);
    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(major, 1);
    assert_int_equal(minor, 1);
    assert_false(kiln_program_is_strict(program));
    assert_int_equal(kiln_program_runtime_guard_count(program), 1);
    uint32_t node;
    assert_string_equal(kiln_program_runtime_guard(program, 0, &node),
                        "inner sizes k (a axis 1) and 4 (b axis 0) are equal");
    kiln_session *session;
    kiln_tensor *a4, *a3;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){3, 4}, &a4, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){3, 3}, &a3, &err), KILN_OK);
    for (int i = 0; i < 12; i++)
        ((float *)kiln_tensor_data(a4))[i] = (float)i;
    memset(kiln_tensor_data(a3), 0, kiln_tensor_byte_size(a3));
    assert_int_equal(kiln_session_set_input(session, "a", a4, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    /* w[i][j] = (5i + j) % 7 - 3; y[1][2] = sum_i a[1][i] * w[i][2] with a[1] = 4 5 6 7. */
    const float *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    double want = 0;
    for (int i = 0; i < 4; i++)
        want += (4.0 + i) * ((5 * i + 2) % 7 - 3);
    assert_true(y[1 * 5 + 2] == (float)want);
    assert_int_equal(kiln_session_set_input(session, "a", a3, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_ERR_SHAPE_GUARD);
    assert_non_null(strstr(err.message, "runtime guard: inner sizes k (a axis 1) and 4 (b axis 0) are equal; it does "
                                        "not hold at k=3"));
    kiln_tensor_free(a4);
    kiln_tensor_free(a3);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* The current writer gives the same bytes as the 1.0 and 1.1 goldens. */
static void writer_reproduces_the_goldens(void **state)
{
    (void)state;
    struct {
        const char *file;
        kiln_builder *(*make)(void);
        bool evidence;
        int compression;
    } cases[] = {
        {"v1.0/scale.kiln", golden_scale, false, 0},
        {"v1.0/scale-evidence.kiln", golden_scale, true, 0},
        {"v1.0/weights.kiln", golden_weights, false, 0},
        {"v1.0/compressed.kiln", golden_compressed, false, 9},
        {"v1.1/guarded.kiln", golden_guarded, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_builder *b = cases[i].make();
        if (cases[i].evidence)
            golden_add_scale_evidence(b);
        kiln_save_options options;
        kiln_save_options_default(&options);
        options.compression_level = cases[i].compression;
        void *bytes;
        size_t size, golden_size;
        kiln_error err;
        assert_int_equal(kiln_builder_encode(b, &options, &bytes, &size, &err), KILN_OK);
        uint8_t *golden = read_file(cases[i].file, &golden_size);
        if (size != golden_size || memcmp(bytes, golden, size) != 0)
            fail_msg("%s: the writer no longer reproduces this golden artifact", cases[i].file);
        free(golden);
        free(bytes);
        kiln_builder_free(b);
    }
}

/* Load a future file with a report and check its outcome. */
static void expect_future(const char *file, kiln_status status, uint32_t errors, const char *const *needles,
                          size_t needle_count)
{
    char *path = golden_path(file);
    kiln_program *program;
    kiln_report *report;
    kiln_error err;
    kiln_status got = kiln_program_load(path, NULL, &program, &report, &err);
    if (got != status)
        fail_msg("%s: status %d, expected %d (%s)", file, (int)got, (int)status, err.message);
    uint32_t error_count = 0;
    char all[4096] = "";
    for (uint32_t i = 0; i < kiln_report_count(report); i++) {
        kiln_problem_info p;
        kiln_report_problem(report, i, &p);
        error_count += p.severity == KILN_SEVERITY_ERROR;
        strncat(all, p.location, sizeof all - strlen(all) - 1);
        strncat(all, ": ", sizeof all - strlen(all) - 1);
        strncat(all, p.message, sizeof all - strlen(all) - 1);
        strncat(all, "\n", sizeof all - strlen(all) - 1);
    }
    assert_int_equal(error_count, errors);
    for (size_t i = 0; i < needle_count; i++)
        if (!strstr(all, needles[i]))
            fail_msg("%s: report lacks \"%s\":\n%s", file, needles[i], all);
    kiln_report_free(report);
    kiln_program_free(program);
    free(path);
}

static void future_files_meet_the_version_policy(void **state)
{
    (void)state;
    expect_future("future/minor-1.1-unknown-ancillary.kiln", KILN_OK, 0,
                  (const char *[]){"unknown ancillary section type 'XTRA' skipped"}, 1);
    expect_future("future/minor-1.1-unknown-critical.kiln", KILN_ERR_UNKNOWN_CRITICAL, 1,
                  (const char *[]){"unknown critical section type 'XCRT'", "format 1.1"}, 2);
    expect_future("future/minor-1.1-unknown-feature.kiln", KILN_ERR_UNKNOWN_CRITICAL, 1,
                  (const char *[]){"required feature bit 5 is unknown"}, 1);
    expect_future("future/major-2.0.kiln", KILN_ERR_UNSUPPORTED_VERSION, 1,
                  (const char *[]){"format version 2.0 is not readable"}, 1);
    expect_future("future/op-add-v2.kiln", KILN_ERR_UNSUPPORTED_OP, 1,
                  (const char *[]){"op add version 2 is not available (this runtime implements versions 1..1)"}, 1);
    expect_future("future/three-missing-ops.kiln", KILN_ERR_UNSUPPORTED_OP, 3,
                  (const char *[]){"op future_op_a version 1", "op future_op_b version 3", "op add version 9"}, 3);
    expect_future("future/input-f16.kiln", KILN_ERR_UNSUPPORTED_DTYPE, 1,
                  (const char *[]){"input 'x': dtype f16 is not supported by this runtime"}, 1);
}

/*
 * The arena limit belongs to sessions (issue 15): a golden program loads
 * whatever the limit, and its sessions are held to it: the load limit is
 * their default, which a session's own max_arena_bytes replaces.
 */
static void arena_over_the_limit_is_a_session_error(void **state)
{
    (void)state;
    char *path = golden_path("v1.0/weights.kiln");
    kiln_load_options options;
    kiln_program *program;
    kiln_report *report;
    kiln_session *session;
    kiln_error err;
    kiln_load_options_default(&options);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    limits.max_arena_bytes = 64;
    assert_int_equal(kiln_program_load(path, &options, &program, &report, &err), KILN_OK);
    assert_int_equal(kiln_report_count(report), 0);
    assert_true(kiln_program_arena_bytes(program) > 64);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "over the limit of 64 bytes"));
    kiln_session_options session_options;
    kiln_session_options_default(&session_options);
    session_options.max_arena_bytes = kiln_program_arena_bytes(program);
    assert_int_equal(kiln_session_new(program, &session_options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_arena_bytes(session), kiln_program_arena_bytes(program));
    kiln_session_free(session);
    kiln_report_free(report);
    kiln_program_free(program);
    free(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_golden GOLDEN_DIR\n");
        return 2;
    }
    golden_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v1_artifacts_load_under_every_policy),
        cmocka_unit_test(weights_and_compressed_compute_the_recorded_values),
        cmocka_unit_test(signed_golden_verifies_with_its_key),
        cmocka_unit_test(evidence_replays_on_this_runtime),
        cmocka_unit_test(v1_1_runtime_guards_load_and_guard),
        cmocka_unit_test(writer_reproduces_the_goldens),
        cmocka_unit_test(every_golden_artifact_refuses_truncation_and_bit_flips),
        cmocka_unit_test(future_files_meet_the_version_policy),
        cmocka_unit_test(arena_over_the_limit_is_a_session_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
