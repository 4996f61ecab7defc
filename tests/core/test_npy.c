/*
 * test_npy.c — NumPy .npy reading and writing: round trips through files,
 * hand-built headers of every format version, NumPy's exact output bytes,
 * and every way a hostile or damaged file must be refused without crashing.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kiln/kiln.h>

/* ----------------------------------------------------------------- helpers */

typedef struct test_dir {
    char path[64];
} test_dir;

static int make_dir(void **state)
{
    test_dir *dir = calloc(1, sizeof *dir);
    if (!dir)
        return -1;
    strcpy(dir->path, "/tmp/kiln-npy-XXXXXX");
    if (!mkdtemp(dir->path)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int remove_dir(void **state)
{
    test_dir *dir = *state;
    int rc = rmdir(dir->path);
    free(dir);
    return rc;
}

static void path_in(void **state, const char *name, char *out, size_t size)
{
    test_dir *dir = *state;
    int n = snprintf(out, size, "%s/%s", dir->path, name);
    assert_true(n > 0 && (size_t)n < size);
}

/*
 * Assemble a .npy image: magic, version `major`.0, the length of `header`
 * (u16 for 1.0, u32 otherwise), `header` verbatim, then `data`.
 */
static uint8_t *make_npy(uint8_t major, const char *header, const void *data, size_t data_size,
                         size_t *size)
{
    size_t header_len = strlen(header);
    size_t length_size = major == 1 ? 2 : 4;
    size_t total = 8 + length_size + header_len + data_size;
    uint8_t *bytes = malloc(total ? total : 1);
    assert_non_null(bytes);
    memcpy(bytes, "\x93NUMPY", 6);
    bytes[6] = major;
    bytes[7] = 0;
    for (size_t i = 0; i < length_size; i++)
        bytes[8 + i] = (uint8_t)(header_len >> (8 * i));
    memcpy(bytes + 8 + length_size, header, header_len);
    if (data_size)
        memcpy(bytes + 8 + length_size + header_len, data, data_size);
    *size = total;
    return bytes;
}

/* Read a whole file written by the library. */
static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    assert_int_equal(fseek(file, 0, SEEK_END), 0);
    long end = ftell(file);
    assert_true(end >= 0);
    rewind(file);
    uint8_t *bytes = malloc((size_t)end + 1);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)end, file), (size_t)end);
    fclose(file);
    *size = (size_t)end;
    return bytes;
}

/* Make a tensor whose bytes are 0, 1, 2, ... (or 0/1 for bool). */
static kiln_tensor *patterned(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = NULL;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(dtype, rank, shape, &t, &err), KILN_OK);
    uint8_t *data = kiln_tensor_data(t);
    for (size_t i = 0; i < kiln_tensor_byte_size(t); i++)
        data[i] = dtype == KILN_BOOL ? (uint8_t)(i % 3 == 0) : (uint8_t)(i * 7 + 1);
    return t;
}

static void assert_same_tensor(const kiln_tensor *a, const kiln_tensor *b)
{
    assert_int_equal(kiln_tensor_dtype(a), kiln_tensor_dtype(b));
    assert_int_equal(kiln_tensor_rank(a), kiln_tensor_rank(b));
    for (uint32_t i = 0; i < kiln_tensor_rank(a); i++)
        assert_int_equal(kiln_tensor_shape(a)[i], kiln_tensor_shape(b)[i]);
    assert_int_equal(kiln_tensor_byte_size(a), kiln_tensor_byte_size(b));
    assert_memory_equal(kiln_tensor_const_data(a), kiln_tensor_const_data(b),
                        kiln_tensor_byte_size(a) ? kiln_tensor_byte_size(a) : 1);
}

/* Write `t` to a file, read it back, compare, and remove the file. */
static void round_trip(void **state, kiln_tensor *t)
{
    char path[128];
    kiln_error err;
    kiln_tensor *back = NULL;
    path_in(state, "round.npy", path, sizeof path);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);

    size_t size;
    uint8_t *bytes = slurp(path, &size);
    /* NumPy >= 1.23 starts the data on a 64-byte boundary. */
    size_t header_size = 10 + (size_t)(bytes[8] | bytes[9] << 8);
    assert_int_equal(header_size % 64, 0);
    assert_int_equal(size, header_size + kiln_tensor_byte_size(t));
    assert_int_equal(bytes[header_size - 1], '\n');
    free(bytes);

    assert_int_equal(kiln_npy_read_file(path, &back, &err), KILN_OK);
    assert_non_null(back);
    assert_same_tensor(t, back);
    kiln_tensor_free(back);
    kiln_tensor_free(t);
    assert_int_equal(unlink(path), 0);
}

/* Expect `bytes` to be refused with `code` and a message containing `word`. */
static void expect_refused(const uint8_t *bytes, size_t size, kiln_status code, const char *word)
{
    kiln_error err;
    kiln_tensor *t = (kiln_tensor *)&err; /* must be reset to NULL */
    memset(&err, 0, sizeof err);
    kiln_status status = kiln_npy_read_memory(bytes, size, &t, &err);
    if (status != code || !strstr(err.message, word))
        print_error("expected code %d with '%s', got %d: %s\n", code, word, status, err.message);
    assert_int_equal(status, code);
    assert_int_equal(err.code, code);
    assert_null(t);
    assert_non_null(strstr(err.message, word));
}

static void expect_header_refused(uint8_t major, const char *header, size_t data_size,
                                  kiln_status code, const char *word)
{
    uint8_t data[64] = {0};
    size_t size;
    assert_true(data_size <= sizeof data);
    uint8_t *bytes = make_npy(major, header, data, data_size, &size);
    expect_refused(bytes, size, code, word);
    free(bytes);
}

/* -------------------------------------------------------------- round trip */

static void test_round_trip_f32(void **state)
{
    const int64_t shape[] = {2, 5};
    round_trip(state, patterned(KILN_F32, 2, shape));
}

static void test_round_trip_f64(void **state)
{
    const int64_t shape[] = {3, 2};
    kiln_tensor *t = patterned(KILN_F64, 2, shape);
    double *d = kiln_tensor_data(t);
    const double values[] = {0.0, -1.5, 3.25, 1e300, -0.0, 42.0};
    memcpy(d, values, sizeof values);
    round_trip(state, t);
}

static void test_round_trip_i32_rank1(void **state)
{
    const int64_t shape[] = {7};
    kiln_tensor *t = patterned(KILN_I32, 1, shape);
    int32_t *d = kiln_tensor_data(t);
    d[0] = INT32_MIN;
    d[6] = INT32_MAX;
    round_trip(state, t);
}

static void test_round_trip_i64_rank0(void **state)
{
    kiln_tensor *t = patterned(KILN_I64, 0, NULL);
    *(int64_t *)kiln_tensor_data(t) = -1234567890123LL;
    round_trip(state, t);
}

static void test_round_trip_u8_rank3(void **state)
{
    const int64_t shape[] = {2, 3, 4};
    round_trip(state, patterned(KILN_U8, 3, shape));
}

static void test_round_trip_bool_rank3(void **state)
{
    const int64_t shape[] = {3, 1, 5};
    round_trip(state, patterned(KILN_BOOL, 3, shape));
}

static void test_round_trip_zero_size(void **state)
{
    const int64_t shape[] = {0, 3};
    kiln_tensor *t = patterned(KILN_F32, 2, shape);
    assert_int_equal(kiln_tensor_byte_size(t), 0);
    round_trip(state, t);
}

static void test_round_trip_other_dtypes(void **state)
{
    const kiln_dtype dtypes[] = {KILN_F16, KILN_BF16, KILN_I8, KILN_I16, KILN_U16, KILN_U32, KILN_U64};
    const int64_t shape[] = {4, 3};
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        round_trip(state, patterned(dtypes[i], 2, shape));
}

static void test_round_trip_rank8(void **state)
{
    const int64_t shape[] = {1, 2, 1, 3, 1, 2, 1, 2};
    round_trip(state, patterned(KILN_I16, 8, shape));
}

/* ------------------------------------------------------------ exact output */

/* The bytes NumPy 1.24 writes for np.zeros((3, 2)) (np.save). */
static void test_write_matches_numpy(void **state)
{
    const int64_t shape[] = {3, 2};
    char path[128], expected[128];
    kiln_tensor *t = NULL;
    kiln_error err;
    path_in(state, "numpy.npy", path, sizeof path);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, shape, &t, &err), KILN_OK);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);

    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
    memcpy(expected, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(expected + 10, ' ', sizeof expected - 10);
    memcpy(expected + 10, dict, strlen(dict));
    expected[127] = '\n';

    size_t size;
    uint8_t *bytes = slurp(path, &size);
    assert_int_equal(size, 128 + 48);
    assert_memory_equal(bytes, expected, 128);
    for (size_t i = 128; i < size; i++)
        assert_int_equal(bytes[i], 0);
    free(bytes);
    kiln_tensor_free(t);
    assert_int_equal(unlink(path), 0);
}

/* The 1-tuple and the empty tuple are written as Python writes them. */
static void test_write_shape_text(void **state)
{
    const int64_t shape[] = {4};
    char path[128];
    kiln_tensor *t = NULL;
    kiln_error err;
    size_t size;
    path_in(state, "shape.npy", path, sizeof path);

    assert_int_equal(kiln_tensor_new(KILN_BOOL, 1, shape, &t, &err), KILN_OK);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);
    kiln_tensor_free(t);
    uint8_t *bytes = slurp(path, &size);
    bytes[size - 1] = '\0'; /* data is all zero bytes anyway */
    assert_non_null(strstr((char *)bytes + 10,
                           "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"));
    free(bytes);

    assert_int_equal(kiln_tensor_new(KILN_I8, 0, NULL, &t, &err), KILN_OK);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);
    kiln_tensor_free(t);
    bytes = slurp(path, &size);
    assert_int_equal(size, 129);
    bytes[size - 1] = '\0';
    assert_non_null(strstr((char *)bytes + 10,
                           "{'descr': '|i1', 'fortran_order': False, 'shape': (), }"));
    free(bytes);
    assert_int_equal(unlink(path), 0);
}

/* NumPy has no bf16: kiln writes the patterns as 2-byte void ('<V2'), and reads them back as bf16. */
static void test_bf16_as_two_byte_void(void **state)
{
    const int64_t shape[] = {2};
    char path[128];
    kiln_tensor *t = NULL, *back = NULL;
    kiln_error err;
    path_in(state, "bf16.npy", path, sizeof path);
    assert_int_equal(kiln_tensor_new(KILN_BF16, 1, shape, &t, &err), KILN_OK);
    uint16_t *bits = kiln_tensor_data(t);
    bits[0] = 0x3f80; /* 1.0 */
    bits[1] = 0xffc1; /* a NaN with a payload: bit patterns travel unchanged */
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    char header[128] = {0};
    assert_true(fread(header, 1, sizeof header - 1, file) > 0);
    fclose(file);
    assert_non_null(strstr(header + 10, "'descr': '<V2'")); /* the dict follows magic, version, length */
    assert_int_equal(kiln_npy_read_file(path, &back, &err), KILN_OK);
    assert_int_equal(kiln_tensor_dtype(back), KILN_BF16);
    assert_memory_equal(kiln_tensor_data(back), bits, 4);
    kiln_tensor_free(t);
    kiln_tensor_free(back);
    assert_int_equal(unlink(path), 0);
}

static void test_write_io_error(void **state)
{
    const int64_t shape[] = {2};
    char path[128];
    kiln_tensor *t = NULL;
    kiln_error err;
    path_in(state, "missing-dir/x.npy", path, sizeof path);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, shape, &t, &err), KILN_OK);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_ERR_IO);
    assert_non_null(strstr(err.message, "missing-dir"));
    /* A full disk shows up in fwrite or fclose and must be reported. */
    if (access("/dev/full", W_OK) == 0) {
        assert_int_equal(kiln_npy_write_file("/dev/full", t, &err), KILN_ERR_IO);
        assert_non_null(strstr(err.message, "/dev/full"));
    }
    assert_int_equal(kiln_npy_write_file(NULL, t, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_npy_write_file(path, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(t);
}

/* ------------------------------------------------------- hand-built headers */

static void test_read_v1_header(void **state)
{
    (void)state;
    const float values[] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
    size_t size;
    kiln_tensor *t = NULL;
    kiln_error err;
    uint8_t *bytes = make_npy(
        1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n", values,
        sizeof values, &size);
    assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_dtype(t), KILN_F32);
    assert_int_equal(kiln_tensor_rank(t), 2);
    assert_int_equal(kiln_tensor_shape(t)[0], 2);
    assert_int_equal(kiln_tensor_shape(t)[1], 3);
    assert_memory_equal(kiln_tensor_const_data(t), values, sizeof values);
    kiln_tensor_free(t);
    free(bytes);
}

/* Version 2.0: u32 length; double quotes, another key order, odd spacing. */
static void test_read_v2_header(void **state)
{
    (void)state;
    const int64_t values[] = {-1, 2, -3, 4};
    size_t size;
    kiln_tensor *t = NULL;
    kiln_error err;
    uint8_t *bytes = make_npy(2,
                              "{ \"shape\":(2,2,) ,\"descr\" : \"<i8\",\t\"fortran_order\":False}"
                              "    \n",
                              values, sizeof values, &size);
    assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_dtype(t), KILN_I64);
    assert_int_equal(kiln_tensor_rank(t), 2);
    assert_int_equal(kiln_tensor_shape(t)[0], 2);
    assert_int_equal(kiln_tensor_shape(t)[1], 2);
    assert_memory_equal(kiln_tensor_const_data(t), values, sizeof values);
    kiln_tensor_free(t);
    free(bytes);
}

/* Version 3.0 (UTF-8 header) reads like 2.0. */
static void test_read_v3_header(void **state)
{
    (void)state;
    const uint8_t values[] = {1, 0, 1};
    size_t size;
    kiln_tensor *t = NULL;
    kiln_error err;
    uint8_t *bytes = make_npy(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}\n",
                              values, sizeof values, &size);
    assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_dtype(t), KILN_BOOL);
    assert_int_equal(kiln_tensor_rank(t), 1);
    assert_int_equal(kiln_tensor_shape(t)[0], 3);
    kiln_tensor_free(t);
    free(bytes);
}

/* Every accepted descr maps to the right dtype; rank 0 needs one element. */
static void test_read_descr_table(void **state)
{
    (void)state;
    static const struct {
        const char *descr;
        kiln_dtype dtype;
    } cases[] = {
        {"<f4", KILN_F32}, {"<f8", KILN_F64}, {"<f2", KILN_F16}, {"<i1", KILN_I8},
        {"|i1", KILN_I8},  {"<i2", KILN_I16}, {"<i4", KILN_I32}, {"<i8", KILN_I64},
        {"|u1", KILN_U8},  {"<u1", KILN_U8},  {"<u2", KILN_U16}, {"<u4", KILN_U32},
        {"<u8", KILN_U64}, {"|b1", KILN_BOOL}, {"<V2", KILN_BF16}, {"|V2", KILN_BF16},
    };
    const uint8_t zeros[8] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char header[128];
        size_t size;
        kiln_tensor *t = NULL;
        kiln_error err;
        snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (), }\n",
                 cases[i].descr);
        uint8_t *bytes = make_npy(1, header, zeros, kiln_dtype_size(cases[i].dtype), &size);
        assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
        assert_int_equal(kiln_tensor_dtype(t), cases[i].dtype);
        assert_int_equal(kiln_tensor_rank(t), 0);
        kiln_tensor_free(t);
        free(bytes);
    }
}

/* --------------------------------------------------------------- rejection */

static void test_reject_fortran_order(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }\n", 32,
                          KILN_ERR_NPY, "Fortran");
}

static void test_reject_big_endian(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }\n", 16,
                          KILN_ERR_NPY, "big-endian");
}

static void test_reject_object(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16,
                          KILN_ERR_NPY, "object");
}

static void test_reject_other_descrs(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }\n", 16,
                          KILN_ERR_NPY, "'<c16'");
    expect_header_refused(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }\n", 12,
                          KILN_ERR_NPY, "'<U3'");
    expect_header_refused(1, "{'descr': '', 'fortran_order': False, 'shape': (1,), }\n", 1,
                          KILN_ERR_NPY, "descr");
    expect_header_refused(1,
                          "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n",
                          4, KILN_ERR_NPY, "structured");
}

static void test_reject_bad_magic(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                              "\0\0\0\0\0\0\0\0", 8, &size);
    bytes[1] = 'n';
    expect_refused(bytes, size, KILN_ERR_NPY, "magic");
    free(bytes);
    expect_refused((const uint8_t *)"PK\x03\x04", 4, KILN_ERR_NPY, "magic");
    expect_refused(NULL, 0, KILN_ERR_NPY, "truncated");
}

static void test_reject_version(void **state)
{
    (void)state;
    expect_header_refused(4, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", 8,
                          KILN_ERR_NPY, "version 4.0");
    size_t size;
    uint8_t *bytes = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                              "\0\0\0\0\0\0\0\0", 8, &size);
    bytes[7] = 1;
    expect_refused(bytes, size, KILN_ERR_NPY, "version 1.1");
    free(bytes);
}

static void test_reject_truncated_data(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n", 40,
                          KILN_ERR_NPY, "truncated: needs 48 data bytes, 40 present");
}

static void test_reject_trailing_bytes(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n", 49,
                          KILN_ERR_NPY, "trailing");
}

static void test_reject_header_past_end(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                              "\0\0\0\0\0\0\0\0", 8, &size);
    bytes[8] = 0xff; /* claim 0x??ff header bytes */
    bytes[9] = 0x7f;
    expect_refused(bytes, size, KILN_ERR_NPY, "past the end");
    free(bytes);

    /* A 2.0 header claiming 2 GiB: refused by the 1 MiB bound first. */
    bytes = make_npy(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
                     "\0\0\0\0\0\0\0\0", 8, &size);
    bytes[11] = 0x80;
    expect_refused(bytes, size, KILN_ERR_NPY, "1 MiB");
    free(bytes);
}

static void test_reject_malformed_dict(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        const char *word;
    } cases[] = {
        /* keys */
        {"{'descr': '<f8', 'fortran_order': False, }\n", "missing the 'shape'"},
        {"{'fortran_order': False, 'shape': (1,), }\n", "missing the 'descr'"},
        {"{'descr': '<f8', 'shape': (1,), }\n", "missing the 'fortran_order'"},
        {"{}\n", "missing"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1, }\n",
         "unknown key 'extra'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'shape': (1,), }\n",
         "duplicate key 'shape'"},
        {"{'descr': '<f8', 'fortran_order': False, 'Shape': (1,), }\n", "unknown key"},
        /* shape */
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1), }\n", "tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': [1], }\n", "shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1.0,), }\n", "'.'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1L,), }\n", "'L'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (,), }\n", "integer"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1 1), }\n", "',' or ')'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (01,), }\n", "leading zero"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,, }\n", "integer"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': 1, }\n", "tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }\n",
         "int64"},
        /* values and punctuation */
        {"{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }\n", "True or False"},
        {"{'descr': '<f8', 'fortran_order': Falsey, 'shape': (1,), }\n", "True or False"},
        {"{'descr': <f8, 'fortran_order': False, 'shape': (1,), }\n", "quoted string"},
        {"{'descr': '<f8, 'fortran_order': False, 'shape': (1,), }\n", "'<f8, '"},
        {"{'descr': '<f8\n", "unterminated"},
        {"{'descr\\x': '<f8', 'fortran_order': False, 'shape': (1,), }\n", "escape"},
        {"{'descr' '<f8', 'fortran_order': False, 'shape': (1,), }\n", "':'"},
        {"{'descr': '<f8' 'fortran_order': False, 'shape': (1,), }\n", "',' or '}'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }}\n", "padding"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } x\n", "padding"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), ,}\n", "quoted string"},
        {"('descr', '<f8')\n", "'{'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", "newline"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), \n", "quoted string"},
        {"\n", "'{'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_header_refused(1, cases[i].header, 8, KILN_ERR_NPY, cases[i].word);
}

/* A NUL inside the header is an error, not the end of the text. */
static void test_reject_nul_in_header(void **state)
{
    (void)state;
    const char *header = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n";
    size_t size, len = strlen(header);
    uint8_t *bytes = make_npy(1, header, "\0\0\0\0\0\0\0\0", 8, &size);
    assert_int_equal(bytes[10 + 20], 'r');
    bytes[10 + 20] = '\0'; /* inside "fortran_order" */
    expect_refused(bytes, size, KILN_ERR_NPY, "unknown key");
    bytes[10 + 20] = 'r';
    assert_int_equal(bytes[10 + len - 3], ' ');
    bytes[10 + len - 3] = '\0'; /* the space in ", }" */
    expect_refused(bytes, size, KILN_ERR_NPY, "0x00");
    free(bytes);
}

static void test_reject_negative_extent(void **state)
{
    (void)state;
    expect_header_refused(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 3), }\n", 0,
                          KILN_ERR_NPY, "negative");
}

static void test_reject_rank9(void **state)
{
    (void)state;
    expect_header_refused(
        1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }\n", 1,
        KILN_ERR_NPY, "rank 9");
}

static void test_reject_bad_bool(void **state)
{
    (void)state;
    const uint8_t values[] = {1, 0, 2};
    size_t size;
    uint8_t *bytes = make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n",
                              values, sizeof values, &size);
    expect_refused(bytes, size, KILN_ERR_NPY, "bool element 2");
    free(bytes);
}

/* Sizes that overflow are a limit error; a huge but addressable shape with
 * no data behind it is refused as truncated, never allocated. */
static void test_reject_huge_shapes(void **state)
{
    (void)state;
    expect_header_refused(
        1,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n", 0,
        KILN_ERR_LIMIT, "overflow");
    expect_header_refused(1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': "
                          "(9223372036854775807, 9223372036854775807), }\n",
                          0, KILN_ERR_LIMIT, "shape (");
    expect_header_refused(1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': "
                          "(2305843009213693952,), }\n",
                          8, KILN_ERR_LIMIT, "f64");
    expect_header_refused(1,
                          "{'descr': '|u1', 'fortran_order': False, 'shape': "
                          "(1000000000000, 1000), }\n",
                          4, KILN_ERR_NPY, "truncated");
    /* A zero axis makes any other extent harmless. */
    size_t size;
    kiln_tensor *t = NULL;
    kiln_error err;
    uint8_t *bytes = make_npy(1,
                              "{'descr': '<f8', 'fortran_order': False, 'shape': "
                              "(0, 9223372036854775807), }\n",
                              NULL, 0, &size);
    assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
    assert_int_equal(kiln_tensor_element_count(t), 0);
    kiln_tensor_free(t);
    free(bytes);
}

static void test_reject_bad_arguments(void **state)
{
    (void)state;
    kiln_error err;
    kiln_tensor *t = NULL;
    assert_int_equal(kiln_npy_read_memory("x", 1, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_npy_read_memory(NULL, 5, &t, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_npy_read_file(NULL, &t, &err), KILN_ERR_INVALID_ARGUMENT);
    /* err may be NULL. */
    assert_int_equal(kiln_npy_read_memory("x", 1, &t, NULL), KILN_ERR_NPY);
    assert_null(t);
}

/* --------------------------------------------------------------- file input */

static void test_read_file_errors(void **state)
{
    char path[128];
    kiln_error err;
    kiln_tensor *t = NULL;
    path_in(state, "does-not-exist.npy", path, sizeof path);
    assert_int_equal(kiln_npy_read_file(path, &t, &err), KILN_ERR_IO);
    assert_non_null(strstr(err.message, "does-not-exist.npy"));
    assert_null(t);

    /* A directory opens but cannot be read. */
    test_dir *dir = *state;
    assert_int_equal(kiln_npy_read_file(dir->path, &t, &err), KILN_ERR_IO);
    assert_null(t);

    /* A malformed file names the file and the problem. */
    path_in(state, "empty.npy", path, sizeof path);
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fclose(file), 0);
    assert_int_equal(kiln_npy_read_file(path, &t, &err), KILN_ERR_NPY);
    assert_non_null(strstr(err.message, "empty.npy"));
    assert_non_null(strstr(err.message, "truncated"));
    assert_int_equal(unlink(path), 0);
}

/* ------------------------------------------------------------- robustness */

static uint8_t *small_file(void **state, size_t *size)
{
    const int64_t shape[] = {3, 2};
    char path[128];
    kiln_error err;
    kiln_tensor *t = patterned(KILN_F64, 2, shape);
    path_in(state, "small.npy", path, sizeof path);
    assert_int_equal(kiln_npy_write_file(path, t, &err), KILN_OK);
    kiln_tensor_free(t);
    uint8_t *bytes = slurp(path, size);
    assert_int_equal(unlink(path), 0);
    return bytes;
}

/* Every proper prefix of a valid file is refused cleanly. */
static void test_every_truncation(void **state)
{
    size_t size;
    uint8_t *bytes = small_file(state, &size);
    for (size_t len = 0; len < size; len++) {
        /* A fresh allocation of exactly `len` bytes lets ASan catch any
         * read past the end. */
        uint8_t *prefix = malloc(len ? len : 1);
        assert_non_null(prefix);
        memcpy(prefix, bytes, len);
        kiln_error err;
        kiln_tensor *t = NULL;
        assert_int_equal(kiln_npy_read_memory(prefix, len, &t, &err), KILN_ERR_NPY);
        assert_null(t);
        free(prefix);
    }
    kiln_tensor *t = NULL;
    kiln_error err;
    assert_int_equal(kiln_npy_read_memory(bytes, size, &t, &err), KILN_OK);
    kiln_tensor_free(t);
    free(bytes);
}

/* Every single-byte change to the header parses or fails without crashing. */
static void test_every_byte_mutation(void **state)
{
    size_t size;
    uint8_t *bytes = small_file(state, &size);
    size_t header_size = 128;
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    for (size_t pos = 0; pos < header_size; pos++) {
        for (unsigned value = 0; value < 256; value++) {
            memcpy(copy, bytes, size);
            copy[pos] = (uint8_t)value;
            kiln_error err;
            kiln_tensor *t = NULL;
            kiln_status status = kiln_npy_read_memory(copy, size, &t, &err);
            if (status == KILN_OK)
                kiln_tensor_free(t);
            else
                assert_null(t);
        }
    }
    free(copy);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_f32),
        cmocka_unit_test(test_round_trip_f64),
        cmocka_unit_test(test_round_trip_i32_rank1),
        cmocka_unit_test(test_round_trip_i64_rank0),
        cmocka_unit_test(test_round_trip_u8_rank3),
        cmocka_unit_test(test_round_trip_bool_rank3),
        cmocka_unit_test(test_round_trip_zero_size),
        cmocka_unit_test(test_round_trip_other_dtypes),
        cmocka_unit_test(test_round_trip_rank8),
        cmocka_unit_test(test_write_matches_numpy),
        cmocka_unit_test(test_write_shape_text),
        cmocka_unit_test(test_bf16_as_two_byte_void),
        cmocka_unit_test(test_write_io_error),
        cmocka_unit_test(test_read_v1_header),
        cmocka_unit_test(test_read_v2_header),
        cmocka_unit_test(test_read_v3_header),
        cmocka_unit_test(test_read_descr_table),
        cmocka_unit_test(test_reject_fortran_order),
        cmocka_unit_test(test_reject_big_endian),
        cmocka_unit_test(test_reject_object),
        cmocka_unit_test(test_reject_other_descrs),
        cmocka_unit_test(test_reject_bad_magic),
        cmocka_unit_test(test_reject_version),
        cmocka_unit_test(test_reject_truncated_data),
        cmocka_unit_test(test_reject_trailing_bytes),
        cmocka_unit_test(test_reject_header_past_end),
        cmocka_unit_test(test_reject_malformed_dict),
        cmocka_unit_test(test_reject_nul_in_header),
        cmocka_unit_test(test_reject_negative_extent),
        cmocka_unit_test(test_reject_rank9),
        cmocka_unit_test(test_reject_bad_bool),
        cmocka_unit_test(test_reject_huge_shapes),
        cmocka_unit_test(test_reject_bad_arguments),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_every_byte_mutation),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
