/* cli_harness.c — running the kiln command from tests (see cli_harness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_harness.h"

#include <kiln/kiln.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

char harness_work_dir[256];

int harness_init(const char *prefix)
{
    snprintf(harness_work_dir, sizeof harness_work_dir, "/tmp/%s-XXXXXX", prefix);
    return mkdtemp(harness_work_dir) ? 0 : -1;
}

void harness_cleanup(void)
{
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", harness_work_dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", harness_work_dir);
}

static void read_file_into(const char *path, char *buffer, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buffer, 1, size - 1, f);
        fclose(f);
    }
    buffer[n] = '\0';
}

void run(command_result *result, const char *fmt, ...)
{
    char command[4096], full[4600];
    va_list args;
    va_start(args, fmt);
    vsnprintf(command, sizeof command, fmt, args);
    va_end(args);
    snprintf(full, sizeof full, "cd '%s' && %s >stdout.txt 2>stderr.txt", harness_work_dir, command);
    int status = system(full);
    assert_true(WIFEXITED(status));
    result->exit_code = WEXITSTATUS(status);
    char path[512];
    snprintf(path, sizeof path, "%s/stdout.txt", harness_work_dir);
    read_file_into(path, result->out, sizeof result->out);
    snprintf(path, sizeof path, "%s/stderr.txt", harness_work_dir);
    read_file_into(path, result->err, sizeof result->err);
}

void assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, haystack ? haystack : "(null)");
}

bool exists(const char *name)
{
    char path[512];
    struct stat info;
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    return stat(path, &info) == 0;
}

void write_work_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

void write_npy_f32(const char *name, uint32_t count, const float *values)
{
    char path[512];
    kiln_tensor *t;
    kiln_error err;
    int64_t shape[1] = {count};
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, shape, &t, &err), KILN_OK);
    memcpy(kiln_tensor_data(t), values, count * sizeof *values);
    if (kiln_npy_write_file(path, t, &err) != KILN_OK)
        fail_msg("writing %s: %s", name, err.message);
    kiln_tensor_free(t);
}

void assert_scale_output(const char *name)
{
    char path[512];
    kiln_tensor *y;
    kiln_error err;
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    assert_int_equal(kiln_npy_read_file(path, &y, &err), KILN_OK);
    assert_int_equal(kiln_tensor_dtype(y), KILN_F64);
    assert_int_equal(kiln_tensor_rank(y), 2);
    assert_int_equal(kiln_tensor_shape(y)[0], 3);
    assert_int_equal(kiln_tensor_shape(y)[1], 2);
    const double *values = kiln_tensor_const_data(y);
    for (int i = 0; i < 6; i++)
        assert_true(values[i] == 3.0);
    kiln_tensor_free(y);
}
