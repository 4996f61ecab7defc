/*
 * test_artifact_api.c — inspecting and comparing artifacts through the
 * public API alone (<kiln/kiln.h>): kiln_artifact_open and its container
 * facts (kiln_artifact_open_memory giving the same), the program's op
 * uses, metadata, dims and axis texts, and kiln_diff_artifacts classing
 * a widened and a narrowed dim as spec/compatibility.md §6 says, and
 * kiln_artifact_add_evidence refusing a case that fails here unless
 * forced (compatibility §5).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/kiln.h>

#include "seed_program.h"

static char directory[] = "/tmp/kiln-artifact-api-XXXXXX";

/* y = 2*x + 1 on x: f64[batch, 2], batch in lo..hi, saved to `path`. */
static void save_scale(const char *path, int64_t lo, int64_t hi)
{
    kiln_builder *b = seed_program_builder(lo, hi);
    kiln_error err;
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "test_artifact_api", &err), KILN_OK);
    assert_int_equal(kiln_builder_save(b, path, NULL, &err), KILN_OK);
    kiln_builder_free(b);
}

static void path_in(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", directory, name);
}

static void opened_artifact_answers(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "scale.kiln");
    save_scale(path, 2, 4);
    kiln_artifact *a = NULL;
    kiln_error err;
    assert_int_equal(kiln_artifact_open(path, NULL, &a, &err), KILN_OK);
    assert_string_equal(kiln_artifact_path(a), path);
    kiln_program *p = kiln_artifact_program(a);
    assert_non_null(p);
    assert_null(kiln_artifact_container(a)); /* it runs here */
    assert_int_equal(kiln_report_count(kiln_artifact_report(a)), 0);

    uint16_t major, minor;
    kiln_artifact_format_version(a, &major, &minor);
    assert_int_equal(major, 1);
    uint8_t digest[32], expected[32];
    kiln_artifact_digest(a, digest);
    kiln_program_artifact_digest(p, expected);
    assert_memory_equal(digest, expected, 32);
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(kiln_artifact_file_size(a), (uint64_t)info.st_size);
    int64_t wdat = kiln_artifact_find_section(a, "WDAT");
    assert_true(wdat >= 0 && wdat < kiln_artifact_section_count(a));
    kiln_section_info section;
    kiln_artifact_section(a, (uint32_t)wdat, &section);
    assert_string_equal(section.type, "WDAT");
    assert_int_equal(kiln_artifact_find_section(a, "NOPE"), -1);

    /* mul then add, one node each, in order of first use. */
    assert_int_equal(kiln_program_op_use_count(p), 2);
    kiln_op_use use;
    kiln_program_op_use(p, 0, &use);
    assert_string_equal(use.name, "mul");
    assert_int_equal(use.nodes, 1);
    kiln_program_op_use(p, 1, &use);
    assert_string_equal(use.name, "add");
    assert_string_equal(kiln_program_metadata_value(p, "producer"), "test_artifact_api");
    assert_null(kiln_program_metadata_value(p, "no-such-key"));
    assert_int_equal(kiln_program_find_dim(p, "batch"), 0);
    assert_int_equal(kiln_program_find_dim(p, "seq"), -1);
    char axis[64];
    assert_int_equal(kiln_program_input_axis_text(p, 0, 0, axis, sizeof axis), 5);
    assert_string_equal(axis, "batch");
    assert_true(kiln_program_output_axis_text(p, 0, 1, axis, sizeof axis) > 0);
    assert_string_equal(axis, "2");
    assert_int_equal(kiln_program_input_axis_text(p, 0, 2, axis, sizeof axis), -1);
    assert_int_equal(kiln_program_input_axis_text(p, 1, 0, axis, sizeof axis), -1);
    kiln_artifact_free(a);
    kiln_artifact_free(NULL);
}

/* Every indexed getter past its count gives the defined empty answer of kiln.h's
 * conventions, never a read past an array (ASan would stop this test). */
static void indexed_getters_past_the_count_are_defined(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "scale-getters.kiln");
    save_scale(path, 2, 4);
    kiln_artifact *a = NULL;
    kiln_error err;
    assert_int_equal(kiln_artifact_open(path, NULL, &a, &err), KILN_OK);
    const kiln_program *p = kiln_artifact_program(a);
    char text[64];
    const char *name = "unset", *value = "unset";
    kiln_dim_info dim = {.name = "unset", .min = 7};
    kiln_program_dim(p, kiln_program_dim_count(p), &dim);
    assert_null(dim.name);
    assert_int_equal(dim.min, 0);
    assert_int_equal(kiln_program_derived_dim(p, kiln_program_derived_dim_count(p), &name, text, sizeof text), -1);
    assert_null(name);
    kiln_io_info io = {.name = "unset"};
    kiln_program_input(p, kiln_program_input_count(p), &io);
    assert_null(io.name);
    io.name = "unset";
    kiln_program_output(p, kiln_program_output_count(p), &io);
    assert_null(io.name);
    assert_int_equal(kiln_program_input_shape_text(p, 1, text, sizeof text), -1);
    assert_int_equal(kiln_program_output_shape_text(p, 1, text, sizeof text), -1);
    assert_int_equal(kiln_program_input_axis_text(p, 1, 0, text, sizeof text), -1);
    assert_int_equal(kiln_program_node_shape_text(p, kiln_program_node_count(p), text, sizeof text), -1);
    int64_t shape[KILN_MAX_RANK], dims[1] = {3};
    assert_int_equal(kiln_program_input_shape_at(p, 1, dims, shape, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_program_output_shape_at(p, 1, dims, shape, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_program_metadata(p, kiln_program_metadata_count(p), &name, &value);
    assert_null(name);
    assert_null(value);
    kiln_weight_info weight = {.name = "unset"};
    kiln_program_weight(p, kiln_program_weight_count(p), &weight);
    assert_null(weight.name);
    kiln_node_info node = {.op = "unset"};
    kiln_program_node(p, kiln_program_node_count(p), &node);
    assert_null(node.op);
    assert_null(kiln_program_node_name(p, kiln_program_node_count(p)));
    assert_int_equal(kiln_program_node_input(p, 0, 2), UINT32_MAX);
    assert_int_equal(kiln_program_node_input(p, kiln_program_node_count(p), 0), UINT32_MAX);
    assert_int_equal(kiln_program_output_value(p, kiln_program_output_count(p)), UINT32_MAX);
    kiln_section_info section = {.stored_size = 9};
    kiln_program_section(p, kiln_program_section_count(p), &section);
    assert_int_equal(section.stored_size, 0);
    section.stored_size = 9;
    kiln_artifact_section(a, kiln_artifact_section_count(a), &section);
    assert_int_equal(section.stored_size, 0);
    assert_null(kiln_program_evidence_name(p, kiln_program_evidence_count(p)));
    assert_null(kiln_program_runtime_guard(p, kiln_program_runtime_guard_count(p), NULL));
    kiln_problem_info problem = {.message = "unset"};
    kiln_report_problem(kiln_artifact_report(a), kiln_report_count(kiln_artifact_report(a)), &problem);
    assert_null(problem.message);
    kiln_artifact_free(a);
}

static void unreadable_artifact_is_an_error(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "missing.kiln");
    kiln_artifact *a = (kiln_artifact *)1;
    kiln_error err;
    assert_int_not_equal(kiln_artifact_open(path, NULL, &a, &err), KILN_OK);
    assert_null(a);
    assert_non_null(strstr(err.message, "missing.kiln"));
}

/* Two opened artifacts state the same container facts. */
static void same_container(const kiln_artifact *a, const kiln_artifact *b)
{
    uint16_t major_a, minor_a, major_b, minor_b;
    kiln_artifact_format_version(a, &major_a, &minor_a);
    kiln_artifact_format_version(b, &major_b, &minor_b);
    assert_int_equal(major_a, major_b);
    assert_int_equal(minor_a, minor_b);
    assert_int_equal(kiln_artifact_file_size(a), kiln_artifact_file_size(b));
    assert_int_equal(kiln_artifact_feature_bits(a), kiln_artifact_feature_bits(b));
    uint8_t digest_a[32], digest_b[32];
    kiln_artifact_digest(a, digest_a);
    kiln_artifact_digest(b, digest_b);
    assert_memory_equal(digest_a, digest_b, 32);
    kiln_signature_info signature_a, signature_b;
    kiln_artifact_signature(a, &signature_a);
    kiln_artifact_signature(b, &signature_b);
    assert_int_equal(signature_a.state, signature_b.state);
    assert_int_equal(kiln_artifact_section_count(a), kiln_artifact_section_count(b));
    for (uint32_t i = 0; i < kiln_artifact_section_count(a); i++) {
        kiln_section_info s, t;
        kiln_artifact_section(a, i, &s);
        kiln_artifact_section(b, i, &t);
        assert_string_equal(s.type, t.type);
        assert_int_equal(s.offset, t.offset);
        assert_int_equal(s.stored_size, t.stored_size);
        assert_int_equal(s.crc32, t.crc32);
    }
    assert_int_equal(kiln_report_count(kiln_artifact_report(a)), kiln_report_count(kiln_artifact_report(b)));
}

/* kiln_artifact_open_memory answers as kiln_artifact_open does for the
 * file holding the same bytes, runnable or not, and keeps no pointer into
 * the caller's bytes (they are freed before any question is asked). */
static void opened_from_memory_answers_as_the_file(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "scale-memory.kiln");
    save_scale(path, 2, 4);
    size_t size;
    uint8_t *bytes = read_file_bytes(path, &size);
    kiln_error err;
    kiln_artifact *file = NULL, *memory = NULL;
    assert_int_equal(kiln_artifact_open(path, NULL, &file, &err), KILN_OK);
    assert_int_equal(kiln_artifact_open_memory(bytes, size, NULL, &memory, &err), KILN_OK);
    memset(bytes, 0, size);
    assert_string_equal(kiln_artifact_path(memory), "<memory>");
    assert_int_equal(kiln_artifact_file_size(memory), size);
    assert_non_null(kiln_artifact_program(memory));
    assert_null(kiln_artifact_container(memory));
    assert_int_equal(kiln_artifact_feature_bits(memory), kiln_program_feature_bits(kiln_artifact_program(memory)));
    same_container(file, memory);
    kiln_artifact_free(file);
    kiln_artifact_free(memory);

    /* Refused here (an unsigned artifact under require_signature): the
     * description of the container answers, from memory as from the file. */
    free(bytes);
    bytes = read_file_bytes(path, &size);
    kiln_load_options options;
    kiln_load_options_default(&options);
    options.require_signature = true;
    assert_int_equal(kiln_artifact_open(path, &options, &file, &err), KILN_OK);
    assert_int_equal(kiln_artifact_open_memory(bytes, size, &options, &memory, &err), KILN_OK);
    memset(bytes, 0, size);
    assert_null(kiln_artifact_program(memory));
    const kiln_artifact_description *container = kiln_artifact_container(memory);
    assert_non_null(container);
    assert_int_equal(kiln_artifact_feature_bits(memory), container->feature_bits);
    assert_int_equal(kiln_artifact_file_size(memory), size);
    assert_true(kiln_report_has_errors(kiln_artifact_report(memory)));
    same_container(file, memory);
    kiln_artifact_free(file);
    kiln_artifact_free(memory);
    free(bytes);
}

/* Bytes that are no artifact are an error with nothing handed out, as a damaged file is. */
static void unreadable_memory_is_an_error(void **state)
{
    (void)state;
    char path[256];
    path_in(path, sizeof path, "scale-damaged.kiln");
    save_scale(path, 2, 4);
    size_t size;
    uint8_t *bytes = read_file_bytes(path, &size);
    kiln_error err;
    kiln_artifact *a = (kiln_artifact *)1;
    bytes[size / 2] ^= 0x40;
    assert_int_not_equal(kiln_artifact_open_memory(bytes, size, NULL, &a, &err), KILN_OK);
    assert_null(a);
    a = (kiln_artifact *)1;
    assert_int_not_equal(kiln_artifact_open_memory(bytes, 16, NULL, &a, &err), KILN_OK); /* truncated */
    assert_null(a);
    a = (kiln_artifact *)1;
    assert_int_equal(kiln_artifact_open_memory(NULL, size, NULL, &a, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(a);
    assert_int_equal(kiln_artifact_open_memory(bytes, size, NULL, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    free(bytes);
}

/* Count the changes of `kind` in d, checking each has `class`. */
static uint32_t changes_of(const kiln_diff *d, const char *kind, kiln_change_class class)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
        kiln_change_info c;
        kiln_diff_change(d, i, &c);
        if (strcmp(c.kind, kind) == 0) {
            assert_int_equal(c.change_class, class);
            n++;
        }
    }
    return n;
}

static void diff_classes_dim_changes(void **state)
{
    (void)state;
    char base[256], wide[256], narrow[256];
    path_in(base, sizeof base, "base.kiln");
    path_in(wide, sizeof wide, "wide.kiln");
    path_in(narrow, sizeof narrow, "narrow.kiln");
    save_scale(base, 2, 4);
    save_scale(wide, 1, 8);
    save_scale(narrow, 2, 3);
    kiln_artifact *a, *w, *n;
    kiln_error err;
    assert_int_equal(kiln_artifact_open(base, NULL, &a, &err), KILN_OK);
    assert_int_equal(kiln_artifact_open(wide, NULL, &w, &err), KILN_OK);
    assert_int_equal(kiln_artifact_open(narrow, NULL, &n, &err), KILN_OK);

    kiln_diff *d;
    assert_int_equal(kiln_diff_artifacts(a, a, &d, &err), KILN_OK);
    assert_true(kiln_diff_compared(d));
    assert_false(kiln_diff_breaking(d));
    assert_int_equal(kiln_diff_change_count(d), 0);
    assert_string_equal(kiln_diff_verdict(d), "identical artifacts");
    kiln_identity_pair id;
    kiln_diff_identity(d, 0, &id);
    assert_string_equal(id.name, "artifact");
    assert_true(kiln_identity_pair_equal(&id));
    kiln_diff_identity(d, 3, &id);
    assert_null(id.name);
    assert_false(kiln_identity_pair_equal(&id));
    kiln_change_info none;
    kiln_diff_change(d, 0, &none); /* no change at all */
    assert_null(none.kind);
    kiln_diff_free(d);

    assert_int_equal(kiln_diff_artifacts(a, w, &d, &err), KILN_OK);
    assert_false(kiln_diff_breaking(d));
    assert_int_equal(changes_of(d, "dim-widened", KILN_CHANGE_COMPATIBLE), 1);
    assert_int_equal(kiln_diff_class_count(d, KILN_CHANGE_BREAKING), 0);
    kiln_diff_identity(d, 1, &id);
    assert_string_equal(id.name, "program");
    assert_false(kiln_identity_pair_equal(&id)); /* the contract is part of the program identity */
    kiln_diff_free(d);

    assert_int_equal(kiln_diff_artifacts(a, n, &d, &err), KILN_OK);
    assert_true(kiln_diff_breaking(d));
    assert_int_equal(changes_of(d, "dim-narrowed", KILN_CHANGE_BREAKING), 1);
    assert_int_equal(kiln_diff_class_count(d, KILN_CHANGE_BREAKING), 1);
    kiln_diff_free(d);
    kiln_diff_free(NULL);

    assert_int_equal(kiln_diff_artifacts(a, NULL, &d, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_artifact_free(a);
    kiln_artifact_free(w);
    kiln_artifact_free(n);
}

/* A (3, 2) f64 tensor holding `value` everywhere but its last element. */
static kiln_tensor *filled_3x2(double value, double last)
{
    kiln_tensor *t = NULL;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (const int64_t[]){3, 2}, &t, &err), KILN_OK);
    double *data = kiln_tensor_data(t);
    for (int i = 0; i < 6; i++)
        data[i] = i == 5 ? last : value;
    return t;
}

static bool file_exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

/* y = 2x + 1 gives 3 for ones: an expected 3.1 is refused unless forced,
 * and the results say what the comparison found either way. */
static void evidence_add_compares_at_add_time(void **state)
{
    (void)state;
    char path[256], refused[256], forced[256], signed_path[256];
    path_in(path, sizeof path, "evidence.kiln");
    path_in(refused, sizeof refused, "evidence-refused.kiln");
    path_in(forced, sizeof forced, "evidence-forced.kiln");
    path_in(signed_path, sizeof signed_path, "evidence-signed.kiln");
    save_scale(path, 2, 4);
    kiln_tensor *x = filled_3x2(1.0, 1.0), *wrong = filled_3x2(3.0, 3.1), *right = filled_3x2(3.0, 3.0);
    const char *in[] = {"x"}, *out[] = {"y"};
    kiln_compare_rule rule = {KILN_COMPARE_TOLERANCE, 0.01, 0, true};
    kiln_evidence_result result;
    kiln_signature_info removed = {.state = KILN_SIGNATURE_VERIFIED};
    kiln_error err;

    /* Refused: nothing written, the figures reported and named in the message. */
    assert_int_equal(kiln_artifact_add_evidence(path, refused, &(kiln_evidence_case){
            .name = "wrong",
            .input_count = 1,
            .input_names = in,
            .inputs = (const kiln_tensor *const[]){x},
            .output_count = 1,
            .output_names = out,
            .expected = (const kiln_tensor *const[]){wrong},
            .rules = &rule}, NULL,
                                                             &result, &removed, &err),
                     KILN_ERR_RUNTIME);
    assert_false(file_exists(refused));
    assert_int_equal(removed.state, KILN_SIGNATURE_NONE);
    assert_string_equal(result.output, "y");
    assert_false(result.passed);
    assert_int_equal(result.elements, 6);
    assert_int_equal(result.mismatches, 1);
    assert_true(result.max_abs_error > 0.099 && result.max_abs_error < 0.101);
    assert_true(result.rule.atol == 0.01);
    assert_non_null(strstr(err.message, "evidence 'wrong' does not hold on this runtime: output 'y': 1 of 6 "
                                        "elements outside atol 0.01 + rtol 0 (max abs error 0.1, max rel error 0.0323)"));
    /* The strict wrapper refuses it the same way. */
    assert_int_equal(kiln_artifact_add_evidence(path, refused, &(kiln_evidence_case){
            .name = "wrong",
            .input_count = 1,
            .input_names = in,
            .inputs = (const kiln_tensor *const[]){x},
            .output_count = 1,
            .output_names = out,
            .expected = (const kiln_tensor *const[]){wrong},
            .rules = &rule}, NULL, NULL, NULL, &err),
                     KILN_ERR_RUNTIME);
    assert_false(file_exists(refused));

    /* Forced: written, the same figures reported; replaying it fails. */
    assert_int_equal(kiln_artifact_add_evidence(path, forced, &(kiln_evidence_case){
            .name = "wrong",
            .input_count = 1,
            .input_names = in,
            .inputs = (const kiln_tensor *const[]){x},
            .output_count = 1,
            .output_names = out,
            .expected = (const kiln_tensor *const[]){wrong},
            .rules = &rule}, &(kiln_edit_options){
            .struct_size = sizeof(kiln_edit_options),
            .force = true,
            .load = NULL},
                                                             &result, &removed, &err),
                     KILN_OK);
    assert_false(result.passed);
    assert_int_equal(result.mismatches, 1);
    kiln_program *p = NULL;
    assert_int_equal(kiln_program_load(forced, NULL, &p, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_evidence_count(p), 1);
    kiln_evidence_result replayed;
    assert_int_equal(kiln_program_replay_evidence(p, 0, &replayed, &err), KILN_OK);
    assert_false(replayed.passed);
    kiln_program_free(p);

    /* A case that holds, added to a signed artifact: the signature removed is reported. */
    kiln_public_key public_key;
    kiln_secret_key secret_key;
    assert_int_equal(kiln_key_generate(&public_key, &secret_key, &err), KILN_OK);
    assert_int_equal(kiln_artifact_sign(path, signed_path, &secret_key, NULL, &err), KILN_OK);
    assert_int_equal(kiln_artifact_add_evidence(signed_path, NULL, &(kiln_evidence_case){
            .name = "right",
            .input_count = 1,
            .input_names = in,
            .inputs = (const kiln_tensor *const[]){x},
            .output_count = 1,
            .output_names = out,
            .expected = (const kiln_tensor *const[]){right},
            .rules = &rule}, NULL,
                                                             &result, &removed, &err),
                     KILN_OK);
    assert_true(result.passed);
    assert_int_equal(result.mismatches, 0);
    assert_true(result.max_abs_error == 0);
    assert_int_equal(removed.state, KILN_SIGNATURE_UNVERIFIED);
    uint8_t key_id[16];
    kiln_key_id(&public_key, key_id);
    assert_memory_equal(removed.key_id, key_id, 16);
    assert_int_equal(kiln_program_load(signed_path, NULL, &p, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_replay_evidence(p, 0, &replayed, &err), KILN_OK);
    assert_true(replayed.passed);
    kiln_program_free(p);

    kiln_tensor_free(x);
    kiln_tensor_free(wrong);
    kiln_tensor_free(right);
}

static int cleanup(void **state)
{
    (void)state;
    static const char *const names[] = {"scale.kiln", "scale-getters.kiln", "scale-memory.kiln",
                                          "scale-damaged.kiln", "base.kiln", "wide.kiln", "narrow.kiln",
                                          "evidence.kiln", "evidence-forced.kiln", "evidence-signed.kiln"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        path_in(path, sizeof path, names[i]);
        unlink(path);
    }
    rmdir(directory);
    return 0;
}

int main(void)
{
    if (!mkdtemp(directory))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opened_artifact_answers),
        cmocka_unit_test(indexed_getters_past_the_count_are_defined),
        cmocka_unit_test(unreadable_artifact_is_an_error),
        cmocka_unit_test(opened_from_memory_answers_as_the_file),
        cmocka_unit_test(unreadable_memory_is_an_error),
        cmocka_unit_test(diff_classes_dim_changes),
        cmocka_unit_test(evidence_add_compares_at_add_time),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
