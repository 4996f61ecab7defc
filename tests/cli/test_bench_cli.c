/*
 * test_bench_cli.c — kiln bench as a new user meets it (issue #19, point
 * 4): the sizes it picks (the dims' minimum, the first evidence case's,
 * --dim's, the input files'), the statistics and fields of its JSON, the
 * time --duration bounds, where the peak RSS comes from, and the flags it
 * refuses. Small programs assembled from text with `kiln asm`; timing
 * checks are loose (seconds, not milliseconds) so a loaded machine passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cli_harness.h"
#include "json_tree.h"

static const char *kiln_binary;

/* Two dims, one with multiple_of, so the minimum is not the range's start
 * (n: 4, not 3) and each dim's source shows on its own. */
static const char two_dims_text[] = "kiln 1.0\n"
                                    "program \"two\"\n"
                                    "dim n in 3..64 multiple_of 2\n"
                                    "dim m in 1..8\n"
                                    "input x: f32[n]\n"
                                    "input y: f32[m]\n"
                                    "%a = add(x, x)\n"
                                    "%b = add(y, y)\n"
                                    "output a = %a\n"
                                    "output b = %b\n";

/* The same with an evidence case at n=6, m=2. */
static const char evidence_case_text[] = "evidence \"ones\" {\n"
                                         "  x: f32[6] = [1, 1, 1, 1, 1, 1]\n"
                                         "  y: f32[2] = [1, 1]\n"
                                         "  a: f32[6] = [2, 2, 2, 2, 2, 2]\n"
                                         "  b: f32[2] = [2, 2]\n"
                                         "  atol 1e-6 rtol 1e-5\n"
                                         "}\n";

static json_value *parse_stdout(const command_result *r)
{
    json_value *json = json_parse(r->out);
    if (!json)
        fail_msg("stdout is not one JSON value:\n%s", r->out);
    return json;
}

/* Member `key` of `object`, failing the test when it is missing. */
static const json_value *member(const json_value *object, const char *key)
{
    const json_value *value = json_get(object, key);
    if (!value)
        fail_msg("no member '%s' in the JSON", key);
    return value;
}

/* Extent `axis` of input `index`'s shape in bench's JSON. */
static int input_extent(const json_value *json, size_t index, size_t axis)
{
    return (int)json_at(member(json_at(member(json, "inputs"), index), "shape"), axis)->number;
}

static int setup(void **state)
{
    (void)state;
    if (harness_init("kiln-bench-cli") != 0)
        return -1;
    char text[2048];
    write_work_file("two.ktxt", two_dims_text);
    snprintf(text, sizeof text, "%s%s", two_dims_text, evidence_case_text);
    write_work_file("evidence.ktxt", text);
    command_result r;
    run(&r, "'%s' asm two.ktxt -o two.kiln && '%s' asm evidence.ktxt -o evidence.kiln", kiln_binary, kiln_binary);
    if (r.exit_code != 0) {
        fprintf(stderr, "kiln asm failed: %s\n", r.err);
        return -1;
    }
    write_npy_f32("x8.npy", 8, (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
    write_npy_f32("y3.npy", 3, (const float[]){1, 2, 3});
    write_npy_f32("x5.npy", 5, (const float[]){1, 2, 3, 4, 5});
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    harness_cleanup();
    return 0;
}

/* No flags: each dim's smallest value (multiple_of respected), said so, in
 * a session pinned to it (the arena of n=4 and m=1, not of the maximum). */
static void default_sizes_are_the_minimum(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench two.kiln --runs 3 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 4);
    assert_int_equal((int)member(member(json, "dims"), "m")->number, 1);
    assert_string_equal(member(member(json, "sizes_from"), "n")->string, "minimum");
    assert_string_equal(member(member(json, "sizes_from"), "m")->string, "minimum");
    assert_int_equal(member(json, "evidence_case")->kind, JSON_NULL);
    assert_int_equal(input_extent(json, 0, 0), 4);
    assert_int_equal(input_extent(json, 1, 0), 1);
    /* a: f32[4] and b: f32[1], 64 bytes each once aligned. */
    assert_int_equal((int)member(json, "arena_bytes")->number, 128);
    json_free(json);

    run(&r, "'%s' bench two.kiln --runs 3", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "sizes      n=4, m=1 (the dims' minimum)\n");
    assert_contains(r.out, "input      x: f32 [4] (random)\n");
}

/* An artifact with an evidence case runs at that case's sizes. */
static void evidence_sizes_when_present(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench evidence.kiln --runs 3 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 6);
    assert_int_equal((int)member(member(json, "dims"), "m")->number, 2);
    assert_string_equal(member(member(json, "sizes_from"), "n")->string, "evidence");
    assert_string_equal(member(json, "evidence_case")->string, "ones");
    assert_int_equal(input_extent(json, 0, 0), 6);
    assert_int_equal(input_extent(json, 1, 0), 2);
    json_free(json);

    run(&r, "'%s' bench evidence.kiln --runs 3", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "sizes      n=6, m=2 (evidence case 'ones')\n");

    /* --dim still wins for the dim it names; the other keeps the evidence's. */
    run(&r, "'%s' bench evidence.kiln --runs 3 --dim m=7", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "sizes      n=6 (evidence case 'ones'), m=7 (--dim)\n");

    /* A case larger than disasm writes inline (40 elements) gives its sizes too. */
    char text[4096], ones[40 * 3 + 1] = "", twos[40 * 3 + 1] = "";
    for (int i = 0; i < 40; i++) {
        strcat(ones, i ? ", 1" : "1");
        strcat(twos, i ? ", 2" : "2");
    }
    snprintf(text, sizeof text,
             "%sevidence \"forty\" {\n  x: f32[40] = [%s]\n  y: f32[3] = [1, 1, 1]\n  a: f32[40] = [%s]\n"
             "  b: f32[3] = [2, 2, 2]\n  atol 1e-6 rtol 1e-5\n}\n",
             two_dims_text, ones, twos);
    write_work_file("forty.ktxt", text);
    run(&r, "'%s' asm forty.ktxt -o forty.kiln && '%s' bench forty.kiln --runs 2", kiln_binary, kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "sizes      n=40, m=3 (evidence case 'forty')\n");
}

/* --dim NAME=N runs at N in a session pinned to it; NAME=MIN..MAX runs at
 * MAX and keeps the range (its arena is the range's). */
static void dim_option_sizes(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench two.kiln --runs 3 --dim n=10 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 10);
    assert_int_equal((int)member(member(json, "dims"), "m")->number, 1);
    assert_string_equal(member(member(json, "sizes_from"), "n")->string, "option");
    assert_string_equal(member(member(json, "sizes_from"), "m")->string, "minimum");
    assert_int_equal(input_extent(json, 0, 0), 10);
    json_free(json);

    run(&r, "'%s' bench two.kiln --runs 3 --dim n=4..40 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 40);
    /* a: f32[40] (160 bytes, 192 aligned) and b: f32[1] (64). */
    assert_int_equal((int)member(json, "arena_bytes")->number, 256);
    json_free(json);
}

/* Inputs from files: dims are the sizes they bind, said to come from the
 * files; a file beside made-up inputs gives its own dim. */
static void input_files_report_their_sizes(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench two.kiln --runs 3 --input x=x8.npy --input y=y3.npy --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 8);
    assert_int_equal((int)member(member(json, "dims"), "m")->number, 3);
    assert_string_equal(member(member(json, "sizes_from"), "n")->string, "files");
    assert_string_equal(member(member(json, "sizes_from"), "m")->string, "files");
    assert_string_equal(member(json_at(member(json, "inputs"), 0), "source")->string, "file");
    json_free(json);

    run(&r, "'%s' bench two.kiln --runs 3 --input x=x8.npy --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_int_equal((int)member(member(json, "dims"), "n")->number, 8);
    assert_int_equal((int)member(member(json, "dims"), "m")->number, 1);
    assert_string_equal(member(member(json, "sizes_from"), "n")->string, "files");
    assert_string_equal(member(member(json, "sizes_from"), "m")->string, "minimum");
    assert_string_equal(member(json_at(member(json, "inputs"), 1), "source")->string, "random");
    json_free(json);

    /* A file outside the contract is refused with the contract's words. */
    run(&r, "'%s' bench two.kiln --input x=x5.npy --input y=y3.npy", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' axis 0 (n): 5 is not a multiple of 2");
    assert_string_equal(r.out, "");
}

/* Every field, in a sensible order of values, and the text that shows them. */
static void json_has_every_field_in_order(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench two.kiln --runs 50 --warmup 2 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    static const char *const fields[] = {
        "file", "method", "runs", "warmup", "stopped_by", "threads", "last_run_threads", "waits", "reference_kernels", "load_ms", "session_ms",
        "first_run_ms", "min_ms", "median_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms", "stddev_ms",
        "runs_per_second", "arena_bytes", "peak_rss_bytes", "peak_rss_source", "dims", "sizes_from",
        "evidence_case", "inputs",
    };
    /* json_tree keeps an object's members as key, value, key, value, ... */
    assert_int_equal(json->count, 2 * (sizeof fields / sizeof fields[0]));
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        assert_string_equal(json->items[2 * f].string, fields[f]);
    assert_int_equal((int)member(json, "runs")->number, 50);
    assert_int_equal((int)member(json, "warmup")->number, 2);
    assert_string_equal(member(json, "stopped_by")->string, "runs");
    double min = member(json, "min_ms")->number, median = member(json, "median_ms")->number,
           mean = member(json, "mean_ms")->number, p90 = member(json, "p90_ms")->number,
           p99 = member(json, "p99_ms")->number, max = member(json, "max_ms")->number;
    assert_true(min >= 0 && min <= median && median <= p90 && p90 <= p99 && p99 <= max);
    assert_true(min <= mean && mean <= max);
    assert_true(member(json, "stddev_ms")->number >= 0 && member(json, "stddev_ms")->number <= max - min);
    assert_true(member(json, "load_ms")->number > 0 && member(json, "session_ms")->number >= 0);
    assert_true(member(json, "first_run_ms")->number > 0);
    assert_true(member(json, "runs_per_second")->number > 0);
    /* Linux has /proc: the peak is this process's own, not inherited. */
    assert_string_equal(member(json, "peak_rss_source")->string, "VmHWM");
    double rss = member(json, "peak_rss_bytes")->number;
    assert_true(rss > 1e5 && rss < 1e10);
    json_free(json);

    run(&r, "'%s' bench two.kiln --runs 5 --warmup 1", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "bench: two.kiln, 5 runs after 1 warm-up, ");
    assert_contains(r.out, "\nload       ");
    assert_contains(r.out, "\nsession    ");
    assert_contains(r.out, "\nfirst run  ");
    assert_contains(r.out, " (cold)\n");
    assert_contains(r.out, "\nlatency    min ");
    assert_contains(r.out, ", max ");
    assert_contains(r.out, "           p90 ");
    assert_contains(r.out, ", stddev ");
    assert_contains(r.out, "\narena      128 bytes\n");
    assert_contains(r.out, "\npeak RSS   ");
    assert_contains(r.out, " bytes, VmHWM)\n");
}

/* --duration: as many runs as fit, stopped by the time, well within loose
 * bounds; with --runs too, whichever comes first. */
static void duration_bounds_the_time(void **state)
{
    (void)state;
    command_result r;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    run(&r, "'%s' bench two.kiln --duration 0.2 --json", kiln_binary);
    clock_gettime(CLOCK_MONOTONIC, &end);
    assert_int_equal(r.exit_code, 0);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
    assert_true(seconds < 5);
    json_value *json = parse_stdout(&r);
    assert_true(member(json, "runs")->number > 1);
    assert_string_equal(member(json, "stopped_by")->string, "duration");
    json_free(json);

    /* --runs caps a --duration a tiny program would take far longer to fill. */
    run(&r, "'%s' bench two.kiln --duration 60 --runs 7 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_int_equal((int)member(json, "runs")->number, 7);
    assert_string_equal(member(json, "stopped_by")->string, "runs");
    json_free(json);
}

/* Piped stderr is not a terminal: no progress bar, not even for a second
 * of runs (the bar waits half a second before drawing). */
static void no_progress_when_not_a_terminal(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench two.kiln --duration 1", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
}

static void refuses_bad_flags_clearly(void **state)
{
    (void)state;
    command_result r;
    static const struct {
        const char *arguments;
        int exit_code;
        const char *message;
    } cases[] = {
        {"two.kiln --duration -1", 2, "kiln: error: --duration takes a number of seconds above 0 and at most "
                                      "604800 (e.g. 0.5, 30), got '-1'"},
        {"two.kiln --duration x", 2, "--duration takes a number of seconds above 0 and at most 604800 (e.g. 0.5, "
                                     "30), got 'x'"},
        {"two.kiln --duration 0", 2, "got '0'"},
        {"two.kiln --duration nan", 2, "got 'nan'"},
        {"two.kiln --duration 1e9", 2, "got '1e9'"},
        {"two.kiln --duration", 2, "--duration"},
        {"two.kiln --dim n=66", 1, "n=66 is outside the artifact's range for n, 3..64"},
        {"two.kiln --input x=x8.npy --dim n=5", 1, "n=5 holds no multiple of 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&r, "'%s' bench %s", kiln_binary, cases[i].arguments);
        if (r.exit_code != cases[i].exit_code)
            fail_msg("bench %s: exit %d, expected %d (%s)", cases[i].arguments, r.exit_code, cases[i].exit_code,
                     r.err);
        assert_contains(r.err, cases[i].message);
        assert_string_equal(r.out, "");
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_bench_cli KILN_BINARY\n");
        return 2;
    }
    kiln_binary = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_sizes_are_the_minimum),
        cmocka_unit_test(evidence_sizes_when_present),
        cmocka_unit_test(dim_option_sizes),
        cmocka_unit_test(input_files_report_their_sizes),
        cmocka_unit_test(json_has_every_field_in_order),
        cmocka_unit_test(duration_bounds_the_time),
        cmocka_unit_test(no_progress_when_not_a_terminal),
        cmocka_unit_test(refuses_bad_flags_clearly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
