/*
 * test_messages_cli.c — messages a new user meets (issue 19, point 10): a
 * model, text program or .npy handed to a verb that takes an artifact gets
 * "not a kiln artifact" and a hint naming the command that makes one
 * (import-onnx, asm) or takes it (run --input); -q before the verb is the
 * global option `kiln --help` lists; import-onnx's --dim NAME=N is N..N.
 *
 * Usage: test_messages_cli KILN_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_harness.h"

static const char *kiln, *source_root;

static int setup(void **state)
{
    (void)state;
    command_result r;
    write_work_file("notes.txt", "Notes that are long enough for a kiln header, and no artifact.\n");
    run(&r,
        "cp '%s/tests/onnx-torch/mlp/model.onnx' model.onnx && cp model.onnx model.bin && "
        "cp '%s/examples/scale.ktxt' scale.ktxt && cp '%s/examples/ones_3x2_f64.npy' x.npy",
        source_root, source_root, source_root);
    return r.exit_code;
}

/* `kiln VERB FILE` fails with exit 1, the library's message and `hint` (NULL: no hint at all). */
static void assert_refused_with_hint(const char *verb, const char *file, const char *hint)
{
    command_result r;
    run(&r, "'%s' %s %s", kiln, verb, file);
    if (r.exit_code != 1)
        fail_msg("`kiln %s %s` exited %d, not 1:\n%s", verb, file, r.exit_code, r.err);
    assert_contains(r.err, "not a kiln artifact");
    if (hint)
        assert_contains(r.err, hint);
    else if (strstr(r.err, "hint:"))
        fail_msg("`kiln %s %s` gave a hint for a file it cannot recognise:\n%s", verb, file, r.err);
}

static void not_an_artifact_names_the_command_that_makes_one(void **state)
{
    (void)state;
    static const char *const verbs[] = {"run", "inspect", "verify", "probe", "disasm", "dot"};
    for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
        assert_refused_with_hint(verbs[v], "model.onnx",
                                 "kiln: hint: model.onnx looks like an ONNX model: import it first");
        assert_refused_with_hint(verbs[v], "model.onnx", "kiln import-onnx model.onnx -o model.kiln");
        assert_refused_with_hint(verbs[v], "scale.ktxt",
                                 "kiln: hint: scale.ktxt looks like a kiln text program: assemble it first, "
                                 "kiln asm scale.ktxt -o scale.kiln\n");
        assert_refused_with_hint(verbs[v], "x.npy", "kiln: hint: x.npy is a NumPy array, not an artifact");
        assert_refused_with_hint(verbs[v], "x.npy", "--input NAME=x.npy\n");
        /* Known by its first bytes under any name. */
        assert_refused_with_hint(verbs[v], "model.bin", "kiln import-onnx model.bin -o OUT.kiln");
        /* Something else: the library's message alone. */
        assert_refused_with_hint(verbs[v], "notes.txt", NULL);
    }
}

/* The hint's command works as given. */
static void the_hint_is_a_working_command(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' asm scale.ktxt -o scale.kiln && '%s' run scale.kiln --input x=x.npy", kiln, kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "y: f64 (3, 2)");
}

/* -q before the verb is the global option of `kiln --help`: the same as after it. */
static void quiet_before_the_verb(void **state)
{
    (void)state;
    command_result before, after, loud;
    run(&before, "'%s' asm scale.ktxt -o q.kiln && '%s' -q run q.kiln --input x=x.npy --output-dir qb", kiln, kiln);
    assert_int_equal(before.exit_code, 0);
    assert_true(exists("qb/y.npy"));
    run(&after, "'%s' run q.kiln --input x=x.npy --output-dir qa -q", kiln);
    assert_int_equal(after.exit_code, 0);
    assert_string_equal(before.out, after.out);
    assert_string_equal(before.err, after.err);
    run(&loud, "'%s' run q.kiln --input x=x.npy --output-dir ql", kiln);
    assert_string_not_equal(loud.out, before.out);

    run(&before, "'%s' --quiet -q inspect q.kiln", kiln);
    run(&after, "'%s' inspect q.kiln --quiet", kiln);
    assert_int_equal(before.exit_code, 0);
    assert_string_equal(before.out, after.out);

    /* The verb's errors and --help still come through. */
    run(&before, "'%s' -q run missing.kiln", kiln);
    assert_int_equal(before.exit_code, 1);
    assert_contains(before.err, "missing.kiln");
    run(&before, "'%s' -q run --help", kiln);
    assert_int_equal(before.exit_code, 0);
    assert_contains(before.out, "usage: kiln run");
    run(&before, "'%s' -q --version", kiln);
    assert_int_equal(before.exit_code, 0);
    assert_contains(before.out, "kiln ");

    /* -q without a verb is a usage error, not "unknown verb '-q'". */
    run(&before, "'%s' -q", kiln);
    assert_int_equal(before.exit_code, 2);
    assert_contains(before.err, "usage: kiln VERB");
    assert_null(strstr(before.err, "unknown verb"));
}

/* import-onnx --dim batch=8 declares batch 8..8, as --dim NAME=N does on run. */
static void import_dim_of_one_size(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' --help", kiln);
    if (!strstr(r.out, "import-onnx"))
        skip(); /* built without the ONNX importer */
    run(&r, "'%s' import-onnx model.onnx -o eight.kiln --dim batch=8 && '%s' inspect eight.kiln", kiln, kiln);
    if (r.exit_code != 0)
        fail_msg("import with --dim batch=8 exited %d:\n%s%s", r.exit_code, r.out, r.err);
    assert_contains(r.out, "batch  8..8");
    /* NAME=N takes no :K, and N is a size. */
    run(&r, "'%s' import-onnx model.onnx -o bad.kiln --dim batch=8:2", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "NAME=N");
    run(&r, "'%s' import-onnx model.onnx -o bad.kiln --dim batch=", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_false(exists("bad.kiln"));
}

/* Writing into a directory that does not exist names the directory, not
 * the input text or a temporary file (issue 19, point 10). */
static void a_missing_output_directory_is_named(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' asm '%s/examples/scale.ktxt' -o missing/dir/scale.kiln", kiln, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err, "kiln: error: cannot write 'missing/dir/scale.kiln': the directory 'missing/dir' "
                               "does not exist (create it first)\n");
    run(&r, "'%s' --help", kiln);
    if (!strstr(r.out, "import-onnx"))
        return; /* built without the ONNX importer */
    run(&r, "'%s' import-onnx model.onnx -o missing/mlp.kiln --dim batch=1..4", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err, "kiln: error: cannot write 'missing/mlp.kiln': the directory 'missing' does not exist "
                               "(create it first)\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_messages_cli KILN_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln = argv[1];
    source_root = argv[2];
    if (harness_init("kiln-messages") != 0) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(not_an_artifact_names_the_command_that_makes_one),
        cmocka_unit_test(the_hint_is_a_working_command),
        cmocka_unit_test(quiet_before_the_verb),
        cmocka_unit_test(import_dim_of_one_size),
        cmocka_unit_test(a_missing_output_directory_is_named),
    };
    int failed = cmocka_run_group_tests(tests, setup, NULL);
    harness_cleanup();
    return failed;
}
