/* golden_file.c — see golden_file.h. */
#include "golden_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

char *golden_path(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, file);
    return path;
}

void assert_writer_reproduces(const kiln_builder *b, const char *path, const char *remedy)
{
    void *bytes;
    size_t size;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *golden = malloc(size + 1);
    assert_non_null(golden);
    size_t got = fread(golden, 1, size + 1, f);
    fclose(f);
    bool same = got == size && memcmp(golden, bytes, size) == 0;
    free(golden);
    free(bytes);
    if (!same)
        fail_msg("the writer no longer reproduces %s (%zu bytes written, %zu stored): %s", path, size, got, remedy);
}

int golden_write(const kiln_builder *b, const char *path)
{
    kiln_error err;
    kiln_status status = kiln_builder_save(b, path, NULL, &err);
    if (status != KILN_OK)
        fprintf(stderr, "%s\n", err.message);
    return status == KILN_OK ? 0 : 1;
}

kiln_program *golden_load(const char *dir, const char *file, uint16_t minor)
{
    char *path = golden_path(dir, file);
    kiln_program *p = NULL;
    kiln_error err;
    if (kiln_program_load(path, NULL, &p, NULL, &err) != KILN_OK)
        fail_msg("%s: %s", path, err.message);
    free(path);
    uint16_t major, found;
    kiln_program_format_version(p, &major, &found);
    assert_int_equal(major, 1);
    assert_int_equal(found, minor);
    return p;
}
