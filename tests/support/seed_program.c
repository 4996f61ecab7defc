/* seed_program.c — see seed_program.h. */
#include "seed_program.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

kiln_builder *seed_program_builder(int64_t batch_min, int64_t batch_max)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    assert_int_equal(kiln_builder_new("scale", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", batch_min, batch_max, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

uint8_t *read_file_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long length = ftell(f);
    assert_true(length > 0);
    rewind(f);
    uint8_t *bytes = malloc((size_t)length);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)length, f), (size_t)length);
    fclose(f);
    *size = (size_t)length;
    return bytes;
}
