/*
 * test_roundtrip.c — every section survives encode → decode unchanged, the
 * writer is deterministic, and saving is atomic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kiln/kiln.h>

#include "program.h"
#include "sections.h"

/* A program touching every section: metadata, two dims, an expression
 * axis, weights of several dtypes and kinds, all five ops, two outputs. */
static kiln_builder *build_rich(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, k, w, bias, half, counts, t0, t1, t2, t3, t4, t5;
    const float w_data[6] = {1, -2, 3.5f, -4, 5, 0.25f};
    const float bias_data[3] = {0.5f, 1.5f, -2.5f};
    const int64_t counts_data[4] = {INT64_MIN, -1, 0, INT64_MAX};
    const uint8_t flags[2] = {1, 0};
    assert_int_equal(kiln_builder_new("rich program", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "zeta", "last", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "test_roundtrip", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "alpha", "first \"quoted\" \xc3\xa9", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "test_roundtrip v2", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 2, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 2, 3]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "k", KILN_I64, "[n, 2*n + 1, (n - 1) / 2]", &k, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){2, 3},
                                             w_data, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "bias", KILN_WEIGHT_BUFFER, KILN_F32, 1, (int64_t[]){3},
                                             bias_data, &bias, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "counts", KILN_WEIGHT_CONSTANT, KILN_I64, 1, (int64_t[]){4},
                                             counts_data, &counts, &err), KILN_OK);
    kiln_value flag_value;
    assert_int_equal(kiln_builder_add_weight(b, "flags", KILN_WEIGHT_CONSTANT, KILN_BOOL, 1, (int64_t[]){2},
                                             flags, &flag_value, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 0.5, &half, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, w}, &t0, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){t0, bias}, &t1, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "sub", 2, (kiln_value[]){t1, half}, &t2, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "div", 2, (kiln_value[]){t2, half}, &t3, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &t3, &t4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &k, &t5, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", t4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "minus_k", t5, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "counts_out", counts, &err), KILN_OK);
    return b;
}

static kiln_program *load_bytes(const void *bytes, size_t size)
{
    kiln_program *program;
    kiln_error err;
    kiln_status status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
    if (status != KILN_OK)
        fail_msg("load failed: %s", err.message);
    return program;
}

static void every_section_round_trips(void **state)
{
    (void)state;
    kiln_builder *b = build_rich();
    void *bytes;
    size_t size;
    kiln_error err;
    char text[256];
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_program *p = load_bytes(bytes, size);
    const kiln_model *m = &p->model;

    /* META */
    assert_string_equal(kiln_program_name(p), "rich program");
    assert_int_equal(kiln_program_mode(p), KILN_MODE_INFERENCE);
    assert_int_equal(kiln_program_metadata_count(p), 3);
    const char *key, *value;
    kiln_program_metadata(p, 0, &key, &value);
    assert_string_equal(key, "alpha");
    assert_string_equal(value, "first \"quoted\" \xc3\xa9");
    kiln_program_metadata(p, 1, &key, &value);
    assert_string_equal(key, "producer");
    assert_string_equal(value, "test_roundtrip v2");
    kiln_program_metadata(p, 2, &key, &value);
    assert_string_equal(key, "zeta");

    /* OPST: in order of first use, at the registry's version */
    assert_int_equal(m->opset_count, 5);
    const char *const ops[] = {"mul", "add", "sub", "div", "neg"};
    for (uint32_t i = 0; i < 5; i++) {
        assert_string_equal(m->opset[i].name, ops[i]);
        assert_int_equal(m->opset[i].version, 1);
    }

    /* DIMS + expressions */
    assert_int_equal(kiln_program_dim_count(p), 2);
    kiln_dim_info dim;
    kiln_program_dim(p, 1, &dim);
    assert_string_equal(dim.name, "n");
    assert_int_equal(dim.min, 2);
    assert_int_equal(dim.max, 16);

    /* IOSG */
    assert_int_equal(kiln_program_input_count(p), 2);
    kiln_io_info io;
    kiln_program_input(p, 1, &io);
    assert_string_equal(io.name, "k");
    assert_int_equal(io.dtype, KILN_I64);
    kiln_program_input_shape_text(p, 1, text, sizeof text);
    assert_string_equal(text, "[n, 2*n + 1, (n + 1) / 2 - 1]");
    kiln_program_input_shape_text(p, 0, text, sizeof text);
    assert_string_equal(text, "[batch, 2, 3]");
    assert_int_equal(kiln_program_output_count(p), 3);
    kiln_program_output(p, 0, &io);
    assert_string_equal(io.name, "y");
    assert_int_equal(io.dtype, KILN_F32);
    kiln_program_output_shape_text(p, 0, text, sizeof text);
    assert_string_equal(text, "[batch, 2, 3]");
    kiln_program_output_shape_text(p, 2, text, sizeof text);
    assert_string_equal(text, "[4]");

    /* WTAB + WDAT: bytes identical, 64-byte aligned in the file */
    assert_int_equal(kiln_program_weight_count(p), 5);
    kiln_weight_info w;
    kiln_program_weight(p, 0, &w);
    assert_string_equal(w.name, "w");
    assert_int_equal(w.kind, KILN_WEIGHT_PARAMETER);
    assert_int_equal(w.rank, 2);
    assert_int_equal(w.shape[1], 3);
    assert_int_equal(w.byte_size, 24);
    const float expected_w[6] = {1, -2, 3.5f, -4, 5, 0.25f};
    assert_memory_equal(m->weights[0].data, expected_w, sizeof expected_w);
    const int64_t expected_counts[4] = {INT64_MIN, -1, 0, INT64_MAX};
    assert_memory_equal(m->weights[2].data, expected_counts, sizeof expected_counts);
    kiln_program_weight(p, 1, &w);
    assert_int_equal(w.kind, KILN_WEIGHT_BUFFER);
    kiln_program_weight(p, 3, &w);
    assert_int_equal(w.dtype, KILN_BOOL);
    kiln_program_weight(p, 4, &w);
    assert_string_equal(w.name, "scalar_0");
    assert_int_equal(w.rank, 0);
    for (uint32_t i = 0; i < m->weight_count; i++)
        assert_int_equal(((uintptr_t)m->weights[i].data - (uintptr_t)p->owned_bytes) % 64, 0);

    /* GRPH: canonical numbering — inputs 0..1, weights 2..6, nodes 7.. */
    assert_int_equal(kiln_program_node_count(p), 6);
    assert_int_equal(m->nodes[0].inputs[0], 0); /* x */
    assert_int_equal(m->nodes[0].inputs[1], 2); /* w */
    assert_int_equal(m->nodes[1].inputs[0], 7); /* result of node 0 */
    assert_int_equal(m->nodes[5].inputs[0], 1); /* k */
    assert_int_equal(m->outputs[2].value, 4);   /* counts */

    /* Sections: all seven, critical, version 1 */
    assert_int_equal(kiln_program_section_count(p), 7);
    const char *const types[] = {"META", "OPST", "DIMS", "IOSG", "WTAB", "GRPH", "WDAT"};
    for (uint32_t i = 0; i < 7; i++) {
        kiln_section_info s;
        kiln_program_section(p, i, &s);
        assert_string_equal(s.type, types[i]);
        assert_true(s.critical);
        assert_int_equal(s.offset % 64, 0);
    }
    kiln_program_free(p);
    free(bytes);
    kiln_builder_free(b);
}

/* kiln_builder_value_type: inputs, weights, scalars and op results, constant sizes or -1. */
static void builder_reports_value_types(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, half, t;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    assert_int_equal(kiln_builder_new("types", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 3]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 1, (int64_t[]){3},
                                             (double[]){1, 2, 3}, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I32, 2, &half, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, w}, &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_value_type(b, x, &dtype, &rank, sizes, &err), KILN_OK);
    assert_int_equal(dtype, KILN_F64);
    assert_int_equal(rank, 2);
    assert_int_equal(sizes[0], -1);
    assert_int_equal(sizes[1], 3);
    assert_int_equal(kiln_builder_value_type(b, w, &dtype, &rank, sizes, &err), KILN_OK);
    assert_int_equal(rank, 1);
    assert_int_equal(sizes[0], 3);
    assert_int_equal(kiln_builder_value_type(b, half, &dtype, &rank, NULL, &err), KILN_OK);
    assert_int_equal(dtype, KILN_I32);
    assert_int_equal(rank, 0);
    assert_int_equal(kiln_builder_value_type(b, t, &dtype, &rank, sizes, &err), KILN_OK);
    assert_int_equal(rank, 2);
    assert_int_equal(sizes[0], -1);
    assert_int_equal(sizes[1], 3);
    assert_int_equal(kiln_builder_value_type(b, t + 1, &dtype, &rank, sizes, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "is not a value of this builder"));
    kiln_builder_free(b);
}

/* kiln_builder_value_axis_text and kiln_builder_canonical_size: equal sizes give equal texts. */
static void builder_reports_axis_texts(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, t, flat;
    char text[64];
    size_t length = 0;
    assert_int_equal(kiln_builder_new("texts", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, seq, 4*2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F64, 1, (int64_t[]){8},
                                             (double[]){1, 2, 3, 4, 5, 6, 7, 8}, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, w}, &t, &err), KILN_OK);
    kiln_attribute target = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){-1, 2}, .count = 2};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "reshape", 1, &t, 1, &target, &flat, &err), KILN_OK);
    assert_int_equal(kiln_builder_value_axis_text(b, x, 0, text, sizeof text, &length, &err), KILN_OK);
    assert_string_equal(text, "batch");
    assert_int_equal(length, 5);
    assert_int_equal(kiln_builder_value_axis_text(b, x, 2, text, sizeof text, NULL, &err), KILN_OK);
    assert_string_equal(text, "8");
    assert_int_equal(kiln_builder_value_axis_text(b, w, 0, text, sizeof text, NULL, &err), KILN_OK);
    assert_string_equal(text, "8");
    /* The reshape's inferred axis, and the same size written two other ways, print the same. */
    char inferred[64], written[64], other[64];
    assert_int_equal(kiln_builder_value_axis_text(b, flat, 0, inferred, sizeof inferred, NULL, &err), KILN_OK);
    assert_int_equal(kiln_builder_canonical_size(b, "seq*batch*4", written, sizeof written, NULL, &err), KILN_OK);
    assert_int_equal(kiln_builder_canonical_size(b, "2*batch*seq + (seq*batch)*2", other, sizeof other, NULL, &err),
                     KILN_OK);
    assert_string_equal(inferred, written);
    assert_string_equal(written, other);
    assert_int_equal(kiln_builder_canonical_size(b, "batch * 3", text, sizeof text, NULL, &err), KILN_OK);
    assert_string_not_equal(text, written);
    /* A short buffer is truncated and NUL-terminated; the full length is reported. */
    assert_int_equal(kiln_builder_canonical_size(b, "seq*batch*4", text, 3, &length, &err), KILN_OK);
    assert_string_equal(text, "4*");
    assert_int_equal(length, strlen(written));
    assert_int_equal(kiln_builder_value_axis_text(b, x, 3, text, sizeof text, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "axis 3 is out of range for a value of rank 3"));
    assert_int_equal(kiln_builder_value_axis_text(b, w, 1, text, sizeof text, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "axis 1 is out of range for a value of rank 1"));
    assert_int_equal(kiln_builder_value_axis_text(b, flat + 1, 0, text, sizeof text, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "is not a value of this builder"));
    assert_int_equal(kiln_builder_canonical_size(b, "heads * 2", text, sizeof text, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "heads"));
    assert_int_equal(kiln_builder_canonical_size(b, "batch, seq", text, sizeof text, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "not one"));
    kiln_builder_free(b);
}

static void writer_is_deterministic(void **state)
{
    (void)state;
    kiln_builder *b1 = build_rich(), *b2 = build_rich();
    void *bytes1, *bytes2, *bytes3;
    size_t size1, size2, size3;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b1, NULL, &bytes1, &size1, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b2, NULL, &bytes2, &size2, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b1, NULL, &bytes3, &size3, &err), KILN_OK);
    assert_int_equal(size1, size2);
    assert_memory_equal(bytes1, bytes2, size1);
    assert_int_equal(size1, size3);
    assert_memory_equal(bytes1, bytes3, size1);
    free(bytes1);
    free(bytes2);
    free(bytes3);
    kiln_builder_free(b1);
    kiln_builder_free(b2);
}

static void save_is_atomic_and_matches_encode(void **state)
{
    (void)state;
    char dir_template[] = "/tmp/kiln-roundtrip-XXXXXX";
    char *dir = mkdtemp(dir_template);
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/rich.kiln", dir);
    kiln_builder *b = build_rich();
    kiln_error err;
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    /* Saving over an existing file replaces it whole. */
    FILE *old = fopen(path, "wb");
    assert_non_null(old);
    fputs("previous contents", old);
    fclose(old);
    assert_int_equal(kiln_builder_save(b, path, NULL, &err), KILN_OK);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *disk = malloc(size + 1);
    assert_int_equal(fread(disk, 1, size + 1, f), size);
    fclose(f);
    assert_memory_equal(disk, bytes, size);

    /* No temporary file is left behind. */
    DIR *listing = opendir(dir);
    struct dirent *entry;
    int files = 0;
    while ((entry = readdir(listing)))
        if (entry->d_name[0] != '.')
            files++;
    closedir(listing);
    assert_int_equal(files, 1);

    kiln_program *from_file;
    assert_int_equal(kiln_program_load(path, NULL, &from_file, NULL, &err), KILN_OK);
    assert_string_equal(kiln_program_name(from_file), "rich program");
    kiln_program_free(from_file);

    /* A save into a missing directory fails cleanly, naming the path. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/missing/x.kiln", dir);
    assert_int_equal(kiln_builder_save(b, bad, NULL, &err), KILN_ERR_IO);
    assert_non_null(strstr(err.message, "missing/x.kiln"));

    unlink(path);
    rmdir(dir);
    free(disk);
    free(bytes);
    kiln_builder_free(b);
}

static void loading_a_missing_file_is_an_io_error(void **state)
{
    (void)state;
    kiln_program *p;
    kiln_error err;
    assert_int_equal(kiln_program_load("/nonexistent/kiln/file.kiln", NULL, &p, NULL, &err), KILN_ERR_IO);
    assert_null(p);
    assert_non_null(strstr(err.message, "/nonexistent/kiln/file.kiln"));
    assert_int_equal(kiln_program_load("/tmp", NULL, &p, NULL, &err), KILN_ERR_IO);
}

static void verify_none_still_loads_a_valid_file(void **state)
{
    (void)state;
    kiln_builder *b = build_rich();
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_load_options options;
    kiln_program *p;
    kiln_load_options_default(&options);
    options.verify = KILN_VERIFY_NONE;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &p, NULL, &err), KILN_OK);
    kiln_program_free(p);
    /* Options not made by the default function are refused. */
    options.struct_size = 3;
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &p, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    free(bytes);
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_section_round_trips),
        cmocka_unit_test(writer_is_deterministic),
        cmocka_unit_test(builder_reports_value_types),
        cmocka_unit_test(builder_reports_axis_texts),
        cmocka_unit_test(save_is_atomic_and_matches_encode),
        cmocka_unit_test(loading_a_missing_file_is_an_io_error),
        cmocka_unit_test(verify_none_still_loads_a_valid_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
