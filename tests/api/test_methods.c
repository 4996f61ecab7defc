/*
 * test_methods.c — artifacts with several entry points (format 1.3,
 * section MTHD), through the public API only: building them (weights
 * joined by name, scalars by value, conflicts refused), loading them (the
 * methods, their names, finding one, each method's own signature, dims and
 * evidence), running each, identities, and the format version a writer
 * records.
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
#include <unistd.h>

#include <kiln/kiln.h>

static const double projection[4] = {1.0, 2.0, 3.0, 4.0}; /* w: f64[2, 2] */

/* The program's own method "prefill": y = x @ w + 1 over x: f64[seq, 2], seq in 1..8. */
static kiln_builder *prefill_builder(void)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, w, one, product, y;
    assert_int_equal(kiln_builder_new("decoder", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "test_methods", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[seq, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 2, (int64_t[]){2, 2},
                                             projection, &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){product, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

/* Method "decode": z = t @ w * 3 over t: f64[1, 2] (the same w, another scalar). */
static kiln_builder *decode_builder(const double *weight)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value t, w, three, product, z;
    assert_int_equal(kiln_builder_new("decode", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "t", KILN_F64, "[1, 2]", &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 2, (int64_t[]){2, 2}, weight,
                                             &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 3.0, &three, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){t, w}, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){product, three}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    return b;
}

/* Evidence for decode: t = [1, 1] gives z = 3 * [1 + 3, 2 + 4]. */
static void add_decode_evidence(kiln_builder *decode, double expected_first)
{
    kiln_error err;
    kiln_tensor *t = NULL, *z = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){1, 2}, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){1, 2}, &z, &err), KILN_OK);
    double *td = kiln_tensor_data(t), *zd = kiln_tensor_data(z);
    td[0] = td[1] = 1.0;
    zd[0] = expected_first;
    zd[1] = 18.0;
    kiln_compare_rule rule = {.kind = KILN_COMPARE_TOLERANCE, .atol = 1e-12};
    const kiln_tensor *inputs[] = {t}, *expected[] = {z};
    kiln_evidence_case evidence = {.name = "ones", .input_count = 1, .input_names = (const char *[]){"t"},
                                   .inputs = inputs, .output_count = 1, .output_names = (const char *[]){"z"},
                                   .expected = expected, .rules = &rule};
    assert_int_equal(kiln_builder_add_evidence(decode, &evidence, &err), KILN_OK);
    kiln_tensor_free(t);
    kiln_tensor_free(z);
}

/* The two-method program, encoded; `decode_evidence_first` the first expected value of decode's evidence. */
static void *encode_program(size_t *size, double decode_evidence_first)
{
    kiln_error err;
    kiln_builder *prefill = prefill_builder();
    kiln_builder *decode = decode_builder(projection);
    add_decode_evidence(decode, decode_evidence_first);
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    void *bytes = NULL;
    assert_int_equal(kiln_builder_encode(prefill, NULL, &bytes, size, &err), KILN_OK);
    kiln_builder_free(prefill); /* frees decode too */
    return bytes;
}

static kiln_program *load(const void *bytes, size_t size)
{
    kiln_program *program = NULL;
    kiln_error err;
    kiln_status status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
    if (status != KILN_OK)
        fail_msg("load: %s", err.message);
    return program;
}

/* Run `method` on one input of `rows` x 2 (element i = i + 1) and return output 0's elements (caller frees). */
static double *run(const kiln_program *method, const char *input, int64_t rows)
{
    kiln_error err;
    kiln_session *session = NULL;
    kiln_tensor *x = NULL;
    assert_int_equal(kiln_session_new(method, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){rows, 2}, &x, &err), KILN_OK);
    double *xd = kiln_tensor_data(x);
    for (int64_t i = 0; i < rows * 2; i++)
        xd[i] = (double)(i + 1);
    assert_int_equal(kiln_session_set_input(session, input, x, &err), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("run: %s", err.message);
    const kiln_tensor *out = kiln_session_output(session, 0);
    size_t bytes = kiln_tensor_byte_size(out);
    double *copy = malloc(bytes);
    assert_non_null(copy);
    memcpy(copy, kiln_tensor_const_data(out), bytes);
    kiln_tensor_free(x);
    kiln_session_free(session);
    return copy;
}

static void methods_share_the_weights_and_run_apart(void **state)
{
    (void)state;
    size_t size;
    void *bytes = encode_program(&size, 12.0);
    kiln_program *program = load(bytes, size);
    kiln_error err;

    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(major, 1);
    assert_int_equal(minor, 3);
    assert_int_equal(kiln_program_method_count(program), 2);
    assert_ptr_equal(kiln_program_method_at(program, 0), program);
    assert_string_equal(kiln_program_method_name(program), "prefill");
    const kiln_program *decode = kiln_program_method_at(program, 1);
    assert_non_null(decode);
    assert_null(kiln_program_method_at(program, 2));
    assert_string_equal(kiln_program_method_name(decode), "decode");
    assert_int_equal(kiln_program_method_count(decode), 2);
    assert_ptr_equal(kiln_program_method_at(decode, 0), program);

    const kiln_program *found = NULL;
    assert_int_equal(kiln_program_method(program, "decode", &found, &err), KILN_OK);
    assert_ptr_equal(found, decode);
    assert_int_equal(kiln_program_method(decode, "prefill", &found, &err), KILN_OK);
    assert_ptr_equal(found, program);
    assert_int_equal(kiln_program_method(program, "decod", &found, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(found);
    assert_non_null(strstr(err.message, "no method 'decod'; did you mean 'decode'?"));
    assert_non_null(strstr(err.message, "prefill, decode"));

    /* One weight table: w once (the same tensor), the two scalars (1 and 3) apart, the second renamed. */
    assert_int_equal(kiln_program_weight_count(program), 3);
    assert_int_equal(kiln_program_weight_count(decode), 3);
    kiln_weight_info scalar;
    kiln_program_weight(decode, 2, &scalar);
    assert_string_equal(scalar.name, "scalar_0.decode");
    /* The artifact's name and metadata; each method's own inputs, outputs and dims. */
    assert_string_equal(kiln_program_name(decode), "decoder");
    assert_int_equal(kiln_program_metadata_count(decode), kiln_program_metadata_count(program));
    kiln_io_info input;
    kiln_program_input(program, 0, &input);
    assert_string_equal(input.name, "x");
    kiln_program_input(decode, 0, &input);
    assert_string_equal(input.name, "t");
    assert_int_equal(kiln_program_dim_count(program), 1);
    assert_int_equal(kiln_program_dim_count(decode), 0);
    assert_int_equal(kiln_program_evidence_count(program), 0);
    assert_int_equal(kiln_program_evidence_count(decode), 1);

    /* prefill: [[1,2],[3,4],[5,6]] @ [[1,2],[3,4]] + 1 */
    double *y = run(program, "x", 3);
    const double want_y[] = {8, 11, 16, 23, 24, 35};
    for (int i = 0; i < 6; i++)
        assert_true(y[i] == want_y[i]);
    free(y);
    /* decode: 3 * [1, 2] @ w */
    double *z = run(decode, "t", 1);
    assert_true(z[0] == 21.0 && z[1] == 30.0);
    free(z);

    /* Each method's evidence is its own: decode's case replays (3 * [1 + 3, 2 + 4] = [12, 18]). */
    kiln_evidence_result results[1];
    assert_int_equal(kiln_program_replay_evidence(decode, 0, results, &err), KILN_OK);
    assert_true(results[0].passed);

    /* The artifact's identities are the same through every handle. */
    uint8_t a[32], b[32];
    kiln_program_identity(program, KILN_IDENTITY_PROGRAM, a);
    kiln_program_identity(decode, KILN_IDENTITY_PROGRAM, b);
    assert_memory_equal(a, b, 32);
    kiln_program_free((kiln_program *)(uintptr_t)decode); /* a method's handle: does nothing */
    assert_string_equal(kiln_program_method_name(decode), "decode");
    kiln_program_free(program);
    free(bytes);
}

static void evidence_leaves_the_identity_a_graph_changes_it(void **state)
{
    (void)state;
    size_t size_a, size_b;
    void *a_bytes = encode_program(&size_a, 12.0);
    void *b_bytes = encode_program(&size_b, 21.0);
    kiln_program *a = load(a_bytes, size_a), *b = load(b_bytes, size_b);
    uint8_t ia[32], ib[32], da[32], db[32];
    kiln_program_identity(a, KILN_IDENTITY_PROGRAM, ia);
    kiln_program_identity(b, KILN_IDENTITY_PROGRAM, ib);
    kiln_program_identity(a, KILN_IDENTITY_ARTIFACT, da);
    kiln_program_identity(b, KILN_IDENTITY_ARTIFACT, db);
    /* Only decode's evidence differs (and b's is wrong): the same program, another artifact. */
    assert_memory_equal(ia, ib, 32);
    assert_memory_not_equal(da, db, 32);
    kiln_evidence_result results[1];
    kiln_error err;
    assert_int_equal(kiln_program_replay_evidence(kiln_program_method_at(b, 1), 0, results, &err), KILN_OK);
    assert_false(results[0].passed);

    /* A method's graph is the program: renaming decode's method changes the identity. */
    kiln_builder *prefill = prefill_builder();
    kiln_builder *decode = decode_builder(projection);
    add_decode_evidence(decode, 12.0);
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_method(prefill, "step", decode, &err), KILN_OK);
    void *c_bytes = NULL;
    size_t size_c;
    assert_int_equal(kiln_builder_encode(prefill, NULL, &c_bytes, &size_c, &err), KILN_OK);
    kiln_builder_free(prefill);
    kiln_program *c = load(c_bytes, size_c);
    uint8_t ic[32];
    kiln_program_identity(c, KILN_IDENTITY_PROGRAM, ic);
    assert_memory_not_equal(ia, ic, 32);
    kiln_program_free(a);
    kiln_program_free(b);
    kiln_program_free(c);
    free(a_bytes);
    free(b_bytes);
    free(c_bytes);
}

static void one_method_programs_are_written_as_before(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b = prefill_builder();
    /* Naming the only method stores nothing: there is no MTHD without a second method. */
    assert_int_equal(kiln_builder_set_method_name(b, "prefill", &err), KILN_OK);
    void *bytes = NULL;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    kiln_program *program = load(bytes, size);
    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(minor, 0);
    assert_int_equal(kiln_program_method_count(program), 1);
    assert_string_equal(kiln_program_method_name(program), "main");
    const kiln_program *found = NULL;
    assert_int_equal(kiln_program_method(program, "main", &found, &err), KILN_OK);
    assert_ptr_equal(found, program);
    assert_int_equal(kiln_program_method(program, "decode", &found, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "has no method 'decode' (its methods: main)"));
    for (uint32_t i = 0; i < kiln_program_section_count(program); i++) {
        kiln_section_info section;
        kiln_program_section(program, i, &section);
        assert_string_not_equal(section.type, "MTHD");
    }
    kiln_program_free(program);
    free(bytes);
}

static void bad_methods_are_refused(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *prefill = prefill_builder();
    kiln_builder *decode = decode_builder(projection);
    assert_int_equal(kiln_builder_add_method(prefill, "main", decode, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "has a method called 'main' already"));
    assert_int_equal(kiln_builder_add_method(prefill, "1st", decode, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_method(prefill, "self", prefill, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_set_mode(decode, KILN_MODE_TRAINING, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "shares the program's mode"));
    kiln_builder_free(decode);

    /* A method's metadata joins the program's; a key set to two values is refused. */
    kiln_builder *tagged = prefill_builder(), *tagged_method = decode_builder(projection);
    assert_int_equal(kiln_builder_set_metadata(tagged_method, "producer", "test_methods", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(tagged_method, "extra", "yes", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_method(tagged, "decode", tagged_method, &err), KILN_OK);
    void *tagged_bytes = NULL;
    size_t tagged_size;
    assert_int_equal(kiln_builder_encode(tagged, NULL, &tagged_bytes, &tagged_size, &err), KILN_OK);
    kiln_program *loaded = NULL;
    assert_int_equal(kiln_program_load_memory(tagged_bytes, tagged_size, NULL, &loaded, NULL, &err), KILN_OK);
    assert_string_equal(kiln_program_metadata_value(loaded, "extra"), "yes");
    assert_string_equal(kiln_program_metadata_value(loaded, "producer"), "test_methods");
    kiln_program_free(loaded);
    free(tagged_bytes);
    assert_int_equal(kiln_builder_set_metadata(tagged_method, "producer", "other", &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(tagged, NULL, &tagged_bytes, &tagged_size, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "method 'decode' sets metadata 'producer' to 'other', another method to "
                                        "'test_methods'"));
    kiln_builder_free(tagged);

    /* A method may not have methods, nor join two programs. */
    decode = decode_builder(projection);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    kiln_builder *other = prefill_builder();
    assert_int_equal(kiln_builder_add_method(other, "decode", decode, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "is a method of a program already"));
    kiln_builder *third = decode_builder(projection);
    assert_int_equal(kiln_builder_add_method(decode, "third", third, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_set_method_name(prefill, "decode", &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_builder_free(third);
    kiln_builder_free(other);
    kiln_builder_free(prefill);

    /* A method's w with other bytes is another tensor: stored as w.decode, beside the program's w. */
    static const double other_weight[4] = {1.0, 2.0, 3.0, 5.0};
    prefill = prefill_builder();
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode_builder(other_weight), &err), KILN_OK);
    void *bytes = NULL;
    size_t size;
    assert_int_equal(kiln_builder_encode(prefill, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(prefill);
    kiln_program *renamed = NULL;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &renamed, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_weight_count(renamed), 4);
    kiln_weight_info info;
    kiln_program_weight(renamed, 2, &info);
    assert_string_equal(info.name, "w.decode");
    kiln_program_weight(renamed, 3, &info);
    assert_string_equal(info.name, "scalar_0.decode");
    double *result = run(kiln_program_method_at(renamed, 1), "t", 1);
    assert_true(result[0] == 21.0 && result[1] == 36.0); /* 3 * [1, 2] @ [[1, 2], [3, 5]] */
    free(result);
    kiln_program_free(renamed);
    free(bytes);

    /* A method's graph is checked like a program, and the error names the method. */
    prefill = prefill_builder();
    kiln_builder *bad = NULL;
    kiln_value t, z;
    assert_int_equal(kiln_builder_new("bad", &bad, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(bad, "t", KILN_F64, "[3]", &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(bad, "neg", 1, (kiln_value[]){t}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_method(prefill, "empty", bad, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(prefill, NULL, &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_string_equal(err.message, "method 'empty': the program has no outputs");
    kiln_builder_free(prefill);
}

/* The program with decode's input widened to [2, 2] (when `widen`) and, when `extra`, a third method. */
static void *encode_variant(size_t *size, bool widen, bool extra, bool with_decode)
{
    kiln_error err;
    kiln_builder *prefill = prefill_builder();
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    if (with_decode) {
        kiln_builder *decode = NULL;
        kiln_value t, w, z;
        assert_int_equal(kiln_builder_new("decode", &decode, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(decode, "t", KILN_F64, widen ? "[2, 2]" : "[1, 2]", &t, &err),
                         KILN_OK);
        assert_int_equal(kiln_builder_add_weight(decode, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 2, (int64_t[]){2, 2},
                                                 projection, &w, &err),
                         KILN_OK);
        assert_int_equal(kiln_builder_add_op(decode, "matmul", 2, (kiln_value[]){t, w}, &z, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(decode, "z", z, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    }
    if (extra) {
        kiln_builder *embed = NULL;
        kiln_value ids, e;
        assert_int_equal(kiln_builder_new("embed", &embed, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(embed, "ids", KILN_F64, "[3]", &ids, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(embed, "neg", 1, &ids, &e, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(embed, "e", e, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_method(prefill, "embed", embed, &err), KILN_OK);
    }
    void *bytes = NULL;
    assert_int_equal(kiln_builder_encode(prefill, NULL, &bytes, size, &err), KILN_OK);
    kiln_builder_free(prefill);
    return bytes;
}

static kiln_artifact *open_bytes(const void *bytes, size_t size)
{
    kiln_artifact *a = NULL;
    kiln_error err;
    assert_int_equal(kiln_artifact_open_memory(bytes, size, NULL, &a, &err), KILN_OK);
    return a;
}

/* Whether `d` has a change of `kind` whose subject is `subject`. */
static bool has_change(const kiln_diff *d, const char *kind, const char *subject)
{
    for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
        kiln_change_info c;
        kiln_diff_change(d, i, &c);
        if (strcmp(c.kind, kind) == 0 && strcmp(c.subject, subject) == 0)
            return true;
    }
    return false;
}

static void diff_compares_methods_by_name(void **state)
{
    (void)state;
    size_t sa, sb, sc;
    void *a_bytes = encode_variant(&sa, false, false, true);
    void *b_bytes = encode_variant(&sb, true, true, true);
    void *c_bytes = encode_variant(&sc, false, false, false);
    kiln_artifact *a = open_bytes(a_bytes, sa), *b = open_bytes(b_bytes, sb), *c = open_bytes(c_bytes, sc);
    kiln_diff *d = NULL;
    kiln_error err;
    assert_int_equal(kiln_diff_artifacts(a, b, &d, &err), KILN_OK);
    /* decode's input changed (named with its method), embed added, prefill the same. */
    assert_true(has_change(d, "method-added", "method 'embed'"));
    assert_true(kiln_diff_breaking(d));
    bool decode_change = false, prefill_change = false;
    for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
        kiln_change_info info;
        kiln_diff_change(d, i, &info);
        decode_change |= strncmp(info.subject, "method 'decode' input 't'", 25) == 0;
        prefill_change |= strncmp(info.subject, "method 'prefill' ", 17) == 0;
    }
    assert_true(decode_change);
    assert_false(prefill_change);
    kiln_diff_free(d);

    /* Only prefill: nothing of decode's, nothing added. */
    assert_int_equal(kiln_diff_method(a, b, "prefill", &d, &err), KILN_OK);
    assert_false(has_change(d, "method-added", "method 'embed'"));
    for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
        kiln_change_info info;
        kiln_diff_change(d, i, &info);
        assert_true(strncmp(info.subject, "method 'decode'", 15) != 0);
    }
    assert_false(kiln_diff_breaking(d));
    kiln_diff_free(d);

    /* decode removed: breaking; a method neither has is refused by name. */
    assert_int_equal(kiln_diff_artifacts(a, c, &d, &err), KILN_OK);
    assert_true(has_change(d, "method-removed", "method 'decode'"));
    assert_true(kiln_diff_breaking(d));
    kiln_diff_free(d);
    assert_int_equal(kiln_diff_method(a, c, "decode", &d, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(d);
    /* C has one method, whose name the artifact does not store: it is "main". */
    assert_non_null(strstr(err.message, "<memory>: program 'decoder' has no method 'decode' (its methods: main)"));
    kiln_artifact_free(a);
    kiln_artifact_free(b);
    kiln_artifact_free(c);
    free(a_bytes);
    free(b_bytes);
    free(c_bytes);
}

/* Evidence and checks added to a further method land in its MTHD part; the program identity stays. */
static void editing_a_method_rewrites_its_part(void **state)
{
    (void)state;
    char path[64], edited[64];
    snprintf(path, sizeof path, "/tmp/kiln-test-methods-%ld.kiln", (long)getpid());
    snprintf(edited, sizeof edited, "/tmp/kiln-test-methods-%ld-edited.kiln", (long)getpid());
    size_t size;
    void *bytes = encode_program(&size, 12.0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
    free(bytes);

    kiln_error err;
    kiln_tensor *t = NULL, *z = NULL;
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){1, 2}, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){1, 2}, &z, &err), KILN_OK);
    memcpy(kiln_tensor_data(t), (double[]){0, 1}, sizeof(double[2]));
    memcpy(kiln_tensor_data(z), (double[]){9, 12}, sizeof(double[2])); /* 3 * [3, 4] */
    const kiln_tensor *inputs[] = {t}, *expected[] = {z};
    kiln_compare_rule rule = {.kind = KILN_COMPARE_EXACT};
    kiln_evidence_case evidence = {.name = "second", .input_count = 1, .input_names = (const char *[]){"t"},
                                   .inputs = inputs, .output_count = 1, .output_names = (const char *[]){"z"},
                                   .expected = expected, .rules = &rule};
    kiln_edit_options edit;
    kiln_edit_options_default(&edit);
    edit.method = "decode";
    assert_int_equal(kiln_artifact_add_evidence(path, edited, &evidence, &edit, NULL, NULL, &err), KILN_OK);
    /* The first method has no input t: the case is refused there, naming it. */
    edit.method = NULL;
    assert_int_not_equal(kiln_artifact_add_evidence(path, edited, &evidence, &edit, NULL, NULL, &err), KILN_OK);
    edit.method = "nope";
    assert_int_equal(kiln_artifact_add_evidence(path, edited, &evidence, &edit, NULL, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "has no method 'nope'"));

    kiln_program *before = NULL, *after = NULL;
    assert_int_equal(kiln_program_load(path, NULL, &before, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_load(edited, NULL, &after, NULL, &err), KILN_OK);
    const kiln_program *decode = kiln_program_method_at(after, 1);
    assert_int_equal(kiln_program_evidence_count(decode), 2);
    assert_string_equal(kiln_program_evidence_name(decode, 1), "second");
    assert_int_equal(kiln_program_evidence_count(after), 0);
    kiln_evidence_result result;
    assert_int_equal(kiln_program_replay_evidence(decode, 1, &result, &err), KILN_OK);
    assert_true(result.passed);
    uint8_t ia[32], ib[32];
    kiln_program_identity(before, KILN_IDENTITY_PROGRAM, ia);
    kiln_program_identity(after, KILN_IDENTITY_PROGRAM, ib);
    assert_memory_equal(ia, ib, 32);
    kiln_program_free(after);

    /* A check on decode's input: a contract change, so the program identity moves. */
    kiln_input_check check;
    kiln_input_check_default(&check);
    check.finite_only = true;
    edit.method = "decode";
    assert_int_equal(kiln_artifact_add_input_checks(edited, NULL, 1, (const char *[]){"t"}, &check, &edit, NULL,
                                                    NULL, NULL, &err),
                     KILN_OK);
    assert_int_equal(kiln_program_load(edited, NULL, &after, NULL, &err), KILN_OK);
    kiln_input_check got;
    kiln_input_check_default(&got);
    assert_true(kiln_program_input_check(kiln_program_method_at(after, 1), 0, &got));
    assert_true(got.finite_only);
    assert_false(kiln_program_input_check(after, 0, &got));
    kiln_program_identity(after, KILN_IDENTITY_PROGRAM, ib);
    assert_memory_not_equal(ia, ib, 32);
    kiln_program_free(after);
    kiln_program_free(before);
    kiln_tensor_free(t);
    kiln_tensor_free(z);
    remove(path);
    remove(edited);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(methods_share_the_weights_and_run_apart),
        cmocka_unit_test(evidence_leaves_the_identity_a_graph_changes_it),
        cmocka_unit_test(one_method_programs_are_written_as_before),
        cmocka_unit_test(bad_methods_are_refused),
        cmocka_unit_test(diff_compares_methods_by_name),
        cmocka_unit_test(editing_a_method_rewrites_its_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
