/*
 * test_checks_cli.c — semantic input checks on every CLI route, driven as a
 * user would: a `check` statement assembled by `kiln asm`, checks set on an
 * existing artifact by `kiln check add`, what both rewriting verbs (check
 * add, evidence add) say when they remove a signature, and evidence that a
 * new check would break. (`kiln import-onnx --check` is in
 * tests/onnx/test_onnx_cli.c, which can build ONNX models.)
 *
 * Usage: test_checks_cli KILN_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/kiln.h>

#include "cli_harness.h"

static const char *kiln, *source_root;

/* y = -x over x: f32[n]; ids: i64[n] passed through. */
#define PROGRAM_HEAD                                                                                                  \
    "kiln 1.0\n"                                                                                                      \
    "program \"checked\"\n"                                                                                           \
    "dim n in 1..4\n"                                                                                                 \
    "input x: f32[n]\n"                                                                                               \
    "input ids: i64[n]\n"
#define PROGRAM_TAIL                                                                                                  \
    "%0 = neg(x)\n"                                                                                                   \
    "output y = %0\n"                                                                                                 \
    "output z = ids\n"
/* One evidence case whose x holds 0.5 and 1.5. */
#define EVIDENCE_CASE                                                                                                 \
    "evidence \"halves\" {\n"                                                                                         \
    "  x: f32[2] = [0.5, 1.5]\n"                                                                                      \
    "  ids: i64[2] = [0, 1]\n"                                                                                        \
    "  y: f32[2] = [-0.5, -1.5]\n"                                                                                    \
    "  z: i64[2] = [0, 1]\n"                                                                                          \
    "}\n"

static void run_ok(const char *line)
{
    command_result r;
    run(&r, "( %s )", line);
    if (r.exit_code != 0)
        fail_msg("'%s' exited %d\nstdout: %s\nstderr: %s", line, r.exit_code, r.out, r.err);
}

static int mode_of(const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    assert_int_equal(stat(path, &st), 0);
    return (int)(st.st_mode & 07777);
}

static void write_inputs(void)
{
    write_npy_f32("half.npy", 2, (const float[]){0.5f, 0.25f});
    write_npy_f32("over.npy", 2, (const float[]){0.5f, 1.5f});
    write_npy_f32("nan.npy", 2, (const float[]){NAN, 0.5f});
}

/* `kiln run` of FILE with x from X_NPY and ids = [0, 1]. */
static void run_with_x(command_result *r, const char *file, const char *x_npy)
{
    run(r, "mkdir -p out && '%s' run %s --input x=%s --input ids=ids.npy --output-dir out", kiln, file, x_npy);
}

static int setup(void **state)
{
    (void)state;
    if (harness_init("kiln-checks-cli") != 0)
        return -1;
    write_inputs();
    /* ids.npy: i64 [2] = [0, 1], made by running a pass-through program. */
    write_work_file("ids.ktxt", "kiln 1.0\nprogram \"ids\"\ninput x: f32[2]\nconst k: i64[2] = [0, 1]\n"
                                "output ids = k\noutput y = x\n");
    command_result r;
    run(&r, "'%s' asm ids.ktxt -o ids.kiln && mkdir -p ids-out && '%s' run ids.kiln --input x=half.npy "
            "--output-dir ids-out >/dev/null && cp ids-out/ids.npy ids.npy",
        kiln, kiln);
    return r.exit_code;
}

static int teardown(void **state)
{
    (void)state;
    harness_cleanup();
    return 0;
}

/* The check statement: 0.5 runs; 1.5 and NaN are refused naming x. */
static void asm_check_is_enforced_at_run(void **state)
{
    (void)state;
    write_work_file("checked.ktxt", PROGRAM_HEAD "check x range 0.0..1.0 finite\n" PROGRAM_TAIL);
    command_result r;
    run(&r, "'%s' asm checked.ktxt -o checked.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    run_with_x(&r, "checked.kiln", "half.npy");
    if (r.exit_code != 0)
        fail_msg("0.5 was refused: %s", r.err);
    run_with_x(&r, "checked.kiln", "over.npy");
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' element [1]: 1.5 is outside the range 0..1");
    run_with_x(&r, "checked.kiln", "nan.npy");
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' element [0]: nan is not finite");

    /* The rule is listed, and the text comes back canonical and byte-exact. */
    run(&r, "'%s' disasm checked.kiln > again.ktxt && '%s' asm again.ktxt -o again.kiln && cmp checked.kiln "
            "again.kiln && cat again.ktxt",
        kiln, kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "input ids: i64[n]\ncheck x: range 0.0..1.0, finite\n%0 = neg(x)\n");
}

/* check add on an unsigned artifact: enforced, other checks kept, the
 * same input's replaced (and said), the mode kept, round trip exact. */
static void check_add_on_an_unsigned_artifact(void **state)
{
    (void)state;
    write_work_file("plain.ktxt", PROGRAM_HEAD "check ids: categories 0, 1\n" PROGRAM_TAIL);
    char line[1024];
    snprintf(line, sizeof line, "'%s' asm plain.ktxt -o plain.kiln && chmod 640 plain.kiln", kiln);
    run_ok(line);
    command_result r;
    run_with_x(&r, "plain.kiln", "over.npy");
    assert_int_equal(r.exit_code, 0); /* no check on x yet */

    run(&r, "'%s' check add plain.kiln --check 'x: range 0..1, finite, unit m/s'", kiln);
    if (r.exit_code != 0)
        fail_msg("check add exited %d: %s", r.exit_code, r.err);
    assert_string_equal(r.err, "");
    assert_contains(r.out, "set the checks of 1 input in plain.kiln");
    assert_int_equal(mode_of("plain.kiln"), 0640);
    run_with_x(&r, "plain.kiln", "over.npy");
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' element [1]: 1.5 is outside the range 0..1");
    run_with_x(&r, "plain.kiln", "half.npy");
    assert_int_equal(r.exit_code, 0);

    /* Replacing: said on stderr; the old rule is gone, the other input's kept. */
    run(&r, "'%s' check add plain.kiln --check 'x: range 0..2' -o wider.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "kiln: warning: input 'x' had a check; it is replaced by the new one\n");
    run(&r, "'%s' disasm wider.kiln", kiln);
    assert_contains(r.out, "check x: range 0.0..2.0\ncheck ids: categories [0, 1]\n");
    run_with_x(&r, "wider.kiln", "over.npy");
    assert_int_equal(r.exit_code, 0);

    /* The rewritten artifact round-trips through text byte for byte. */
    snprintf(line, sizeof line, "'%s' disasm plain.kiln > plain-again.ktxt && '%s' asm plain-again.ktxt -o "
                                "plain-again.kiln && cmp plain.kiln plain-again.kiln && '%s' verify plain.kiln",
             kiln, kiln, kiln);
    run_ok(line);
}

/* Both rewriting verbs name the key of the signature they remove. */
static void removing_a_signature_is_loud(void **state)
{
    (void)state;
    write_work_file("signed.ktxt", PROGRAM_HEAD PROGRAM_TAIL);
    char line[1024];
    snprintf(line, sizeof line, "'%s' asm signed.ktxt -o signed.kiln && '%s' keygen --out signer >/dev/null && "
                                "'%s' sign signed.kiln --key signer.key",
             kiln, kiln, kiln);
    command_result r;
    run(&r, "%s", line);
    assert_int_equal(r.exit_code, 0);
    const char *id = strstr(r.out, "key id ");
    assert_non_null(id);
    char expected[160];
    snprintf(expected, sizeof expected, "kiln: warning: removed the signature by key %.32s; sign again with kiln sign\n",
             id + strlen("key id "));

    run(&r, "'%s' check add signed.kiln --check 'x: finite' -o checked-unsigned.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, expected);
    run(&r, "'%s' verify checked-unsigned.kiln --require-signature", kiln);
    assert_int_equal(r.exit_code, 1);
    run(&r, "'%s' verify signed.kiln --require-signature --trust signer.pub", kiln);
    assert_int_equal(r.exit_code, 0); /* the original is untouched */

    run(&r, "'%s' run signed.kiln --input x=half.npy --input ids=ids.npy --output-dir ev >/dev/null && "
            "'%s' evidence add signed.kiln --name quarter --input x=half.npy --input ids=ids.npy "
            "--expect y=ev/y.npy --expect z=ev/z.npy -o evidence-unsigned.kiln",
        kiln, kiln);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, expected);

    /* An unsigned artifact: nothing to warn about. */
    run(&r, "'%s' check add checked-unsigned.kiln --check 'ids: categories 0, 1'", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
}

/* Evidence that breaks a new check: refused (nothing written) unless --force. */
static void evidence_breaking_a_new_check_is_refused(void **state)
{
    (void)state;
    write_work_file("ev.ktxt", PROGRAM_HEAD PROGRAM_TAIL EVIDENCE_CASE);
    char line[1024];
    snprintf(line, sizeof line, "'%s' asm ev.ktxt -o ev.kiln && cp ev.kiln ev-before.kiln", kiln);
    run_ok(line);
    command_result r;
    run(&r, "'%s' check add ev.kiln --check 'x: range 0..1'", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err, "kiln: error: ev.kiln: evidence 'halves' breaks the new check: input 'x' element "
                               "[1]: 1.5 is outside the range 0..1; change the check, or force it to keep the case "
                               "(kiln verify will then fail it)\n");
    run(&r, "cmp ev.kiln ev-before.kiln");
    assert_int_equal(r.exit_code, 0);

    /* A check the case satisfies is taken, and the case still verifies. */
    run(&r, "( '%s' check add ev.kiln --check 'x: range 0..2' --check 'ids: categories 0, 1' -o ev-ok.kiln && "
            "'%s' verify ev-ok.kiln )",
        kiln, kiln);
    if (r.exit_code != 0)
        fail_msg("exited %d: %s", r.exit_code, r.err);

    run(&r, "'%s' check add ev.kiln --check 'x: range 0..1' --force -o ev-forced.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.err, "kiln: warning: kept because of --force: evidence 'halves' breaks the new check: input "
                           "'x' element [1]: 1.5 is outside the range 0..1\n");
    run(&r, "'%s' verify ev-forced.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "evidence check failed: 1 of 1 evidence case failed");
}

/* Bad specs are usage errors that say what to write; unknown inputs list the inputs. */
static void check_add_errors(void **state)
{
    (void)state;
    write_work_file("e.ktxt", PROGRAM_HEAD PROGRAM_TAIL);
    char line[512];
    snprintf(line, sizeof line, "'%s' asm e.ktxt -o e.kiln && cp e.kiln e-before.kiln", kiln);
    run_ok(line);
    static const struct {
        const char *arguments;
        int exit_code;
        const char *message;
    } cases[] = {
        {"--check 'x range 0..1'", 2, "kiln: error: --check: check 'x range 0..1': column 3: expected ':' after the "
                                      "input's name"},
        {"--check 'x: range 1..0'", 2, "range 1..0 is empty: its minimum exceeds its maximum; write range 0..1"},
        {"--check 'x: range nan..1'", 2, "the minimum of a range cannot be NaN"},
        {"--check 'x: positive'", 2, "unknown check rule 'positive'; the rules are range MIN..MAX"},
        {"--check 'x: finite' --check 'x: range 0..1'", 2, "--check names input 'x' twice"},
        {"", 2, "FILE and at least one --check are required"},
        {"--check 'q: finite'", 1, "kiln: error: e.kiln: 'q' is not an input of the program; its inputs are x, ids\n"},
        {"--check 'ids: finite'", 1, "input 'ids': a finite-only check needs a float input, not i64"},
        {"--check 'x: categories 1, 2'", 1, "input 'x': categories need an integer input, not f32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        command_result r;
        run(&r, "'%s' check add e.kiln %s", kiln, cases[i].arguments);
        if (r.exit_code != cases[i].exit_code || !strstr(r.err, cases[i].message))
            fail_msg("check add %s: expected exit %d and \"%s\"\n  got %d: %s", cases[i].arguments,
                     cases[i].exit_code, cases[i].message, r.exit_code, r.err);
    }
    command_result r;
    run(&r, "'%s' check e.kiln --check 'x: finite'", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "expected 'kiln check add FILE --check SPEC ...'");
    run(&r, "cmp e.kiln e-before.kiln");
    assert_int_equal(r.exit_code, 0);
}

/* Golden artifacts take checks through -o and are never changed. */
static void golden_artifacts_stay_unchanged(void **state)
{
    (void)state;
    char line[2048];
    snprintf(line, sizeof line,
             "cp '%s/tests/golden/v1.0/scale-signed.kiln' golden-copy.kiln && "
             "'%s' check add '%s/tests/golden/v1.0/scale-signed.kiln' --check 'x: range -1..1, finite' "
             "-o golden-checked.kiln 2>golden.err && "
             "cmp golden-copy.kiln '%s/tests/golden/v1.0/scale-signed.kiln' && '%s' verify golden-checked.kiln && "
             "'%s' inspect golden-checked.kiln",
             source_root, kiln, source_root, source_root, kiln, kiln);
    command_result r;
    run(&r, "( %s )", line);
    if (r.exit_code != 0)
        fail_msg("exited %d\nstdout: %s\nstderr: %s", r.exit_code, r.out, r.err);
    assert_contains(r.out, "in -1..1, finite");
    run(&r, "cat golden.err");
    assert_contains(r.out, "kiln: warning: removed the signature by key ");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_checks_cli KILN_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln = argv[1];
    source_root = argv[2];
    unsetenv("SOURCE_DATE_EPOCH");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(asm_check_is_enforced_at_run),
        cmocka_unit_test(check_add_on_an_unsigned_artifact),
        cmocka_unit_test(removing_a_signature_is_loud),
        cmocka_unit_test(evidence_breaking_a_new_check_is_refused),
        cmocka_unit_test(check_add_errors),
        cmocka_unit_test(golden_artifacts_stay_unchanged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
