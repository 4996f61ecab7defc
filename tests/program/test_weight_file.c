/*
 * test_weight_file.c — weights the builder reads from a file while it
 * seals (kiln_builder_add_weight_file): the artifact is the one the same
 * bytes given in memory make, byte for byte (with and without
 * compression, written to memory and to a file); the file is checked when
 * the weight is added (not a regular file, too short) and again when
 * sealing (a file that shrank in between fails the seal with KILN_ERR_IO
 * and leaves no artifact); bool weights, whose bytes must be checked, are
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kiln/kiln.h>

#define ROWS 300
#define COLUMNS 1000 /* 1.2 MB of f32: more than one 1 MiB piece of the writer */
#define PREFIX 100   /* bytes before the weight in its file */

static char dir[] = "/tmp/kiln-weight-file-XXXXXX";
static char weight_path[128];
static float values[ROWS * COLUMNS];

static void write_weight_file(size_t weight_bytes)
{
    FILE *f = fopen(weight_path, "wb");
    assert_non_null(f);
    uint8_t prefix[PREFIX];
    memset(prefix, 0xEE, sizeof prefix);
    assert_int_equal(fwrite(prefix, 1, sizeof prefix, f), sizeof prefix);
    assert_int_equal(fwrite(values, 1, weight_bytes, f), weight_bytes);
    assert_int_equal(fclose(f), 0);
}

/* y = matmul(x, w) with w f32[ROWS, COLUMNS]: from memory, or from the file. */
static kiln_builder *program(bool from_file, kiln_error *err)
{
    kiln_builder *b;
    kiln_value x, w, y;
    const int64_t shape[2] = {ROWS, COLUMNS};
    assert_int_equal(kiln_builder_new("weights", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 300]", &x, err), KILN_OK);
    kiln_status added = from_file ? kiln_builder_add_weight_file(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, shape,
                                                                 weight_path, PREFIX, &w, err)
                                  : kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, shape, values,
                                                            &w, err);
    assert_int_equal(added, KILN_OK);
    kiln_value operands[2] = {x, w};
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, operands, &y, err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
    return b;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(weight_path, sizeof weight_path, "%s/w.bin", dir);
    for (size_t i = 0; i < ROWS * COLUMNS; i++)
        values[i] = (float)(i % 97) * 0.25f;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[160];
    const char *names[] = {"w.bin", "a.kiln", "b.kiln"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

static void a_weight_from_a_file_gives_the_same_artifact(void **state)
{
    (void)state;
    kiln_error err;
    write_weight_file(sizeof values);
    kiln_builder *memory = program(false, &err), *file = program(true, &err);
    for (int level = 0; level <= 6; level += 6) {
        kiln_save_options options;
        kiln_save_options_default(&options);
        options.compression_level = level;
        void *a, *b;
        size_t a_size, b_size;
        assert_int_equal(kiln_builder_encode(memory, &options, &a, &a_size, &err), KILN_OK);
        assert_int_equal(kiln_builder_encode(file, &options, &b, &b_size, &err), KILN_OK);
        assert_int_equal(a_size, b_size);
        assert_memory_equal(a, b, a_size);
        /* And kiln_builder_save writes those bytes. */
        char path[160];
        snprintf(path, sizeof path, "%s/b.kiln", dir);
        assert_int_equal(kiln_builder_save(file, path, &options, &err), KILN_OK);
        kiln_program *loaded;
        assert_int_equal(kiln_program_load(path, NULL, &loaded, NULL, &err), KILN_OK);
        kiln_program_free(loaded);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t *saved = malloc(a_size + 1);
        assert_non_null(saved);
        assert_int_equal(fread(saved, 1, a_size + 1, f), a_size);
        fclose(f);
        assert_memory_equal(saved, a, a_size);
        free(saved);
        free(a);
        free(b);
    }
    kiln_builder_free(memory);
    kiln_builder_free(file);
}

static void the_file_is_checked_when_added_and_when_sealed(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    kiln_value w;
    const int64_t shape[2] = {ROWS, COLUMNS};
    assert_int_equal(kiln_builder_new("checked", &b, &err), KILN_OK);
    write_weight_file(sizeof values - 4);
    assert_int_equal(kiln_builder_add_weight_file(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, shape, weight_path,
                                                  PREFIX, &w, &err),
                     KILN_ERR_IO);
    assert_non_null(strstr(err.message, "the weight needs 1200000 bytes from offset 100"));
    assert_int_equal(kiln_builder_add_weight_file(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, shape, dir, 0, &w,
                                                  &err),
                     KILN_ERR_IO);
    assert_non_null(strstr(err.message, "is not a regular file"));
    const int64_t flags_shape[1] = {4};
    assert_int_equal(kiln_builder_add_weight_file(b, "flags", KILN_WEIGHT_PARAMETER, KILN_BOOL, 1, flags_shape,
                                                  weight_path, 0, &w, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "bool weights must be added with kiln_builder_add_weight"));
    kiln_builder_free(b);

    /* Whole when added, shorter when sealed. */
    write_weight_file(sizeof values);
    b = program(true, &err);
    write_weight_file(sizeof values / 2);
    char path[160];
    snprintf(path, sizeof path, "%s/a.kiln", dir);
    assert_int_equal(kiln_builder_save(b, path, NULL, &err), KILN_ERR_IO);
    assert_non_null(strstr(err.message, "was the file changed after it was added?"));
    assert_int_not_equal(access(path, F_OK), 0);
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_weight_from_a_file_gives_the_same_artifact),
        cmocka_unit_test(the_file_is_checked_when_added_and_when_sealed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
