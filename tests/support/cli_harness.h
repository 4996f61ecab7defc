/*
 * cli_harness.h — running the kiln command from cmocka tests, as a user
 * would: shell command lines in a scratch directory, with exit status,
 * stdout and stderr captured.
 */
#ifndef KILN_TESTS_CLI_HARNESS_H
#define KILN_TESTS_CLI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct command_result {
    int exit_code;
    char out[16384];
    char err[4096];
} command_result;

/* The scratch directory the commands run in (valid after harness_init). */
extern char harness_work_dir[];

/* Create the scratch directory /tmp/<prefix>-XXXXXX. @return 0 or -1. */
int harness_init(const char *prefix);
/* Remove the scratch directory and everything in it. */
void harness_cleanup(void);

/* Run a shell command line (printf-style) in the scratch directory. */
void run(command_result *result, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fail the test unless `needle` occurs in `haystack`. */
void assert_contains(const char *haystack, const char *needle);

/* Fail unless the .npy file `name` (in the scratch directory) is the seed
 * example's output for ones(3, 2): f64 of shape (3, 2), 3.0 everywhere. */
void assert_scale_output(const char *name);

/* Whether `name` exists in the scratch directory. */
bool exists(const char *name);
/* Write `text` to `name` in the scratch directory. */
void write_work_file(const char *name, const char *text);
/* Write an f32 .npy of shape [count] holding `values` to `name` in the scratch directory. */
void write_npy_f32(const char *name, uint32_t count, const float *values);

#endif
