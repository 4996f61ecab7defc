/*
 * test_run_cli.c — `kiln run` as a user drives it (issue 19, point 8):
 * where each output was written, --output-dir made with its parents,
 * --summary's figures on known values, --threads' range, and --random
 * generating the inputs not given, at the sizes it says.
 *
 * Usage: test_run_cli KILN_BINARY SOURCE_ROOT
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

/* x: f32[4] → 1/x, x/x, x as i32, x > 0: an infinity, a NaN, integers, bools. */
static const char stats_program[] = "kiln 1.0\n"
                                    "program \"stats\"\n"
                                    "input x: f32[4]\n"
                                    "%inv = div(1, x)\n"
                                    "%ratio = div(x, x)\n"
                                    "%ints = cast(x, to=\"i32\")\n"
                                    "%positive = gt(x, 0)\n"
                                    "output inv = %inv\n"
                                    "output ratio = %ratio\n"
                                    "output ints = %ints\n"
                                    "output positive = %positive\n";

/* a and b share dim n: a generated b must take the size a given a binds. */
static const char pair_program[] = "kiln 1.0\n"
                                   "program \"pair\"\n"
                                   "dim n in 1..8\n"
                                   "input a: f32[n]\n"
                                   "input b: f32[n]\n"
                                   "%sum = add(a, b)\n"
                                   "output y = %sum\n";

static void run_ok(command_result *r, const char *command_line)
{
    run(r, "%s", command_line);
    if (r->exit_code != 0)
        fail_msg("`%s` exited %d:\n%s%s", command_line, r->exit_code, r->out, r->err);
}

static int setup(void **state)
{
    (void)state;
    command_result r;
    write_work_file("stats.ktxt", stats_program);
    write_work_file("pair.ktxt", pair_program);
    write_npy_f32("x4.npy", 4, (const float[]){0, -2, 4, 1});
    write_npy_f32("a3.npy", 3, (const float[]){1, 2, 3});
    run(&r,
        "cp '%s/tests/golden/v1.0/scale.kiln' scale.kiln && '%s' asm stats.ktxt -o stats.kiln >/dev/null && "
        "'%s' asm pair.ktxt -o pair.kiln >/dev/null",
        source_root, kiln, kiln);
    return r.exit_code;
}

/* The outputs go under new nested directories, and the line says where. */
static void output_dir_is_made_with_its_parents(void **state)
{
    (void)state;
    command_result r;
    char line[1024];
    snprintf(line, sizeof line, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir deep/er/out",
             kiln, source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2) -> deep/er/out/y.npy\n");
    assert_string_equal(r.err, "");
    assert_scale_output("deep/er/out/y.npy");

    /* A trailing separator is not doubled; an existing directory is fine. */
    snprintf(line, sizeof line, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir deep/",
             kiln, source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2) -> deep/y.npy\n");
    assert_scale_output("deep/y.npy");

    /* Without --output-dir nothing is written and no arrow is printed. */
    snprintf(line, sizeof line, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy'", kiln, source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2)\n");
}

static void output_dir_that_is_a_file_is_refused(void **state)
{
    (void)state;
    command_result r;
    run(&r, "touch plain && '%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir plain", kiln,
        source_root);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "kiln: error: cannot create directory 'plain': it exists and is not a directory\n");
    run(&r, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir plain/sub/dir", kiln,
        source_root);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err,
                        "kiln: error: cannot create directory 'plain/sub/dir': 'plain' exists and is not a directory\n");
    assert_false(exists("plain/sub"));
}

/* The golden scale program gives 3 for ones: min 3, max 3, mean 3. */
static void summary_of_a_known_output(void **state)
{
    (void)state;
    command_result r;
    char line[1024];
    snprintf(line, sizeof line, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --summary", kiln,
             source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2)\n"
                               "  3, 3, 3, 3, 3, ...  min 3  max 3  mean 3  nan 0  inf 0\n");
}

/* x = (0, -2, 4, 1): an infinity (1/0), a NaN (0/0), integers and bools. */
static void summary_counts_nan_and_inf(void **state)
{
    (void)state;
    command_result r;
    char line[512];
    snprintf(line, sizeof line, "'%s' run stats.kiln --input x=x4.npy --summary --output-dir stats-out", kiln);
    run_ok(&r, line);
    assert_string_equal(r.out, "inv: f32 (4,) -> stats-out/inv.npy\n"
                               "  inf, -0.5, 0.25, 1  min -0.5  max inf  mean 0.25  nan 0  inf 1\n"
                               "ratio: f32 (4,) -> stats-out/ratio.npy\n"
                               "  nan, 1, 1, 1  min 1  max 1  mean 1  nan 1  inf 0\n"
                               "ints: i32 (4,) -> stats-out/ints.npy\n"
                               "  0, -2, 4, 1  min -2  max 4\n"
                               "positive: bool (4,) -> stats-out/positive.npy\n"
                               "  0, 0, 1, 1  min 0  max 1\n");
    assert_true(exists("stats-out/positive.npy"));
}

static void threads_in_range(void **state)
{
    (void)state;
    command_result r;
    char line[512];
    snprintf(line, sizeof line, "'%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --threads 2", kiln,
             source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2)\n");
    static const char *const bad[] = {"0", "1025", "two", "-1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, "'%s' run scale.kiln --random --threads '%s'", kiln, bad[i]);
        assert_int_equal(r.exit_code, 2);
        char expected[128];
        snprintf(expected, sizeof expected, "kiln: error: --threads takes a whole number in 1..1024, got '%s'\n",
                 bad[i]);
        assert_contains(r.err, expected);
    }
}

static void random_generates_missing_inputs(void **state)
{
    (void)state;
    command_result r;
    char line[512];
    /* Without --random a missing input is an error, as before. */
    run(&r, "'%s' run scale.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err, "kiln: error: missing input 'x': every declared input must be set\n");

    /* At the dim's smallest size, or the --dim minimum. */
    snprintf(line, sizeof line, "'%s' run scale.kiln --random --output-dir random-out", kiln);
    run_ok(&r, line);
    assert_string_equal(r.out, "input x: random f64 (2, 2) at batch=2\n"
                               "y: f64 (2, 2) -> random-out/y.npy\n");
    snprintf(line, sizeof line, "'%s' run scale.kiln --random --dim batch=3..4", kiln);
    run_ok(&r, line);
    assert_string_equal(r.out, "input x: random f64 (3, 2) at batch=3\n"
                               "y: f64 (3, 2)\n");
    snprintf(line, sizeof line, "'%s' run scale.kiln --random --dim batch=4 --summary", kiln);
    run_ok(&r, line);
    assert_contains(r.out, "input x: random f64 (4, 2) at batch=4\ny: f64 (4, 2)\n  ");

    /* The same values every time. */
    snprintf(line, sizeof line, "'%s' run scale.kiln --random --output-dir again && cmp again/y.npy random-out/y.npy",
             kiln);
    run_ok(&r, line);

    /* An input given from a file keeps its size; the generated one follows it. */
    snprintf(line, sizeof line, "'%s' run pair.kiln --input a=a3.npy --random --summary", kiln);
    run_ok(&r, line);
    assert_contains(r.out, "input b: random f32 (3,) at n=3\ny: f32 (3,)\n");

    /* A given input is never replaced by a generated one. */
    snprintf(line, sizeof line, "'%s' run scale.kiln --random --input x='%s/examples/ones_3x2_f64.npy' --summary",
             kiln, source_root);
    run_ok(&r, line);
    assert_string_equal(r.out, "y: f64 (3, 2)\n"
                               "  3, 3, 3, 3, 3, ...  min 3  max 3  mean 3  nan 0  inf 0\n");
}

static void usage_names_the_options(void **state)
{
    (void)state;
    command_result r;
    char line[256];
    snprintf(line, sizeof line, "'%s' run --help", kiln);
    run_ok(&r, line);
    assert_contains(r.out, "--random");
    assert_contains(r.out, "--summary");
    assert_contains(r.out, "--threads N");
    assert_contains(r.out, "(DIR and its\n                       parents are created)");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_run_cli KILN_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln = argv[1];
    source_root = argv[2];
    if (harness_init("kiln-run") != 0) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_dir_is_made_with_its_parents),
        cmocka_unit_test(output_dir_that_is_a_file_is_refused),
        cmocka_unit_test(summary_of_a_known_output),
        cmocka_unit_test(summary_counts_nan_and_inf),
        cmocka_unit_test(threads_in_range),
        cmocka_unit_test(random_generates_missing_inputs),
        cmocka_unit_test(usage_names_the_options),
    };
    int failed = cmocka_run_group_tests(tests, setup, NULL);
    harness_cleanup();
    return failed;
}
