/*
 * test_text.c — the text format (spec/text-format.md): assembling, the
 * canonical form, round trips in memory and through files, literal
 * spelling, and one expected failure (place and message) per malformed
 * input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/kiln.h>
#include <kiln/text.h>

#include "attribute.h"
#include "program.h"
#include "text_literal.h"

static char work_dir[] = "/tmp/kiln-text-XXXXXX";

/* ------------------------------------------------------------- helpers */

static char *path_in(const char *dir, const char *name)
{
    size_t length = strlen(dir) + strlen(name) + 2;
    char *path = malloc(length);
    assert_non_null(path);
    snprintf(path, length, "%s/%s", dir, name);
    return path;
}

static char *make_dir(const char *name)
{
    char *dir = path_in(work_dir, name);
    char command[1024];
    snprintf(command, sizeof command, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    assert_int_equal(system(command), 0);
    return dir;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t capacity = 4096, size = 0;
    char *text = malloc(capacity + 1);
    assert_non_null(text);
    size_t got;
    while ((got = fread(text + size, 1, capacity - size, f)) > 0) {
        size += got;
        if (size == capacity) {
            capacity *= 2;
            text = realloc(text, capacity + 1);
            assert_non_null(text);
        }
    }
    fclose(f);
    text[size] = '\0';
    return text;
}

/* Assemble and seal `text`; fail the test with the message if it does not. */
static void seal_text(const char *text, const char *base_dir, void **bytes, size_t *size)
{
    kiln_builder *b = NULL;
    kiln_error err;
    if (kiln_text_assemble(text, strlen(text), "t.ktxt", base_dir, &b, &err) != KILN_OK)
        fail_msg("assemble failed: %s\n--- text:\n%s", err.message, text);
    if (kiln_builder_encode(b, NULL, bytes, size, &err) != KILN_OK)
        fail_msg("seal failed: %s", err.message);
    kiln_builder_free(b);
}

static void seal_builder(kiln_builder *b, void **bytes, size_t *size)
{
    kiln_error err;
    if (kiln_builder_encode(b, NULL, bytes, size, &err) != KILN_OK)
        fail_msg("seal failed: %s", err.message);
}

static char *disassemble(const void *bytes, size_t size, const char *weights_dir)
{
    kiln_program *program;
    kiln_error err;
    char *text;
    if (kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err) != KILN_OK)
        fail_msg("load failed: %s", err.message);
    if (kiln_text_disassemble(program, weights_dir, &text, &err) != KILN_OK)
        fail_msg("disassemble failed: %s", err.message);
    kiln_program_free(program);
    return text;
}

static void assert_same_bytes(const void *a, size_t a_size, const void *b, size_t b_size)
{
    assert_int_equal(a_size, b_size);
    assert_memory_equal(a, b, a_size);
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("expected to find \"%s\" in:\n%s", needle, haystack ? haystack : "(null)");
}

/* ------------------------------------------------------ the seed example */

static const char scale_text[] =
    "# y = 2*x + 1\n"
    "kiln 1.0\n"
    "program \"scale\"\n"
    "meta producer = \"kiln examples/scale.c\"\n"
    "mode inference\n"
    "\n"
    "dim batch in 2..4\n"
    "input x: f64[batch, 2]\n"
    "%doubled = mul(2, x)      # 2 takes the dtype of x\n"
    "%y = add(%doubled, 1)\n"
    "output y = %y\n";

static const char scale_canonical[] = "kiln 1.0\n"
                                      "program \"scale\"\n"
                                      "meta producer = \"kiln examples/scale.c\"\n"
                                      "mode inference\n"
                                      "dim batch in 2..4\n"
                                      "input x: f64[batch, 2]\n"
                                      "const scalar_0: f64[] = 2\n"
                                      "const scalar_1: f64[] = 1\n"
                                      "%0 = mul(scalar_0, x)\n"
                                      "%1 = add(%0, scalar_1)\n"
                                      "output y = %1\n";

/* The calls of examples/scale.c. */
static void seal_scale_with_the_builder(void **bytes, size_t *size)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    assert_int_equal(kiln_builder_new("scale", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "kiln examples/scale.c", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    seal_builder(b, bytes, size);
    kiln_builder_free(b);
}

static void scale_text_seals_the_same_bytes_as_the_c_example(void **state)
{
    (void)state;
    void *from_c, *from_text;
    size_t c_size, text_size;
    seal_scale_with_the_builder(&from_c, &c_size);
    seal_text(scale_text, NULL, &from_text, &text_size);
    assert_same_bytes(from_c, c_size, from_text, text_size);
    free(from_c);
    free(from_text);
}

/*
 * A C1 control (U+0080..U+009F, UTF-8 C2 80..C2 9F) in a string is printed
 * as two \\xHH escapes, never raw (some terminals obey U+009B as ESC [),
 * and reads back to the same bytes; other UTF-8 is printed as is.
 */
static void c1_controls_are_spelled_out(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("c1", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "note", "csi\xc2\x9b" "2J, e\xcc\x81t\xc3\xa9", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes, *again;
    size_t size, again_size;
    seal_builder(b, &bytes, &size);
    kiln_builder_free(b);
    char *text = disassemble(bytes, size, NULL);
    assert_contains(text, "csi\\xc2\\x9b2J, e\xcc\x81t\xc3\xa9");
    assert_null(strstr(text, "\xc2\x9b"));
    seal_text(text, NULL, &again, &again_size);
    assert_same_bytes(bytes, size, again, again_size);
    free(text);
    free(bytes);
    free(again);
}

static void disassembly_is_canonical_and_a_fixed_point(void **state)
{
    (void)state;
    void *first, *second;
    size_t first_size, second_size;
    seal_text(scale_text, NULL, &first, &first_size);
    char *canonical = disassemble(first, first_size, NULL);
    assert_string_equal(canonical, scale_canonical);
    seal_text(canonical, NULL, &second, &second_size);
    assert_same_bytes(first, first_size, second, second_size);
    char *again = disassemble(second, second_size, NULL);
    assert_string_equal(again, canonical);
    free(first);
    free(second);
    free(canonical);
    free(again);
}

/* ------------------------------------------- a program with everything */

static const char odd_metadata_value[] = "say \"hi\"\n\tpi \xcf\x80 \xe2\x89\x88 3.14 \\ ctl\x01 bad\xff end";

/*
 * Weights of every supported dtype and kind, awkward float values, a
 * constant too big to inline, a NaN with a payload (which has no literal),
 * expression axes, metadata that needs escapes, and outputs that name an
 * input and a weight directly. Built with the C API, as a producer would.
 */
static void seal_everything(void **bytes, size_t *size)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, z, w, v;
    assert_int_equal(kiln_builder_new("every \"dtype\" / \xc3\xa9t\xc3\xa9", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "test_text.c", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "odd", odd_metadata_value, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "key with spaces", "\xc3\xbcn\xc3\xaf" "c\xc3\xb8" "de", &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "empty", "", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 6, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "unused", 0, 9, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n, 2*n + 1, (n - 1) / 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "z", KILN_I32, "[n % 3 + n, n]", &z, &err), KILN_OK);

    float f32_values[6] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-45f, 0.1f};
    int64_t shape_3x2[2] = {3, 2};
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, shape_3x2, f32_values, &w, &err),
                     KILN_OK);
    double f64_values[4] = {-INFINITY, 1e-310, 0.1, 1.0 / 3.0};
    int64_t shape_4[1] = {4};
    assert_int_equal(kiln_builder_add_weight(b, "running_mean", KILN_WEIGHT_BUFFER, KILN_F64, 1, shape_4, f64_values, &v, &err),
                     KILN_OK);
    int8_t i8_values[4] = {-128, 127, 0, -1};
    assert_int_equal(kiln_builder_add_weight(b, "c_i8", KILN_WEIGHT_CONSTANT, KILN_I8, 1, shape_4, i8_values, &v, &err), KILN_OK);
    int16_t i16_values[2] = {-32768, 32767};
    int64_t shape_2[1] = {2};
    assert_int_equal(kiln_builder_add_weight(b, "c_i16", KILN_WEIGHT_CONSTANT, KILN_I16, 1, shape_2, i16_values, &v, &err),
                     KILN_OK);
    int32_t i32_values[2] = {INT32_MIN, INT32_MAX};
    assert_int_equal(kiln_builder_add_weight(b, "c_i32", KILN_WEIGHT_CONSTANT, KILN_I32, 1, shape_2, i32_values, &v, &err),
                     KILN_OK);
    int64_t i64_values[2] = {INT64_MIN, INT64_MAX};
    assert_int_equal(kiln_builder_add_weight(b, "c_i64", KILN_WEIGHT_CONSTANT, KILN_I64, 1, shape_2, i64_values, &v, &err),
                     KILN_OK);
    uint8_t u8_values[2] = {0, 255};
    assert_int_equal(kiln_builder_add_weight(b, "c_u8", KILN_WEIGHT_CONSTANT, KILN_U8, 1, shape_2, u8_values, &v, &err), KILN_OK);
    uint16_t u16_values[2] = {0, 65535};
    assert_int_equal(kiln_builder_add_weight(b, "c_u16", KILN_WEIGHT_CONSTANT, KILN_U16, 1, shape_2, u16_values, &v, &err),
                     KILN_OK);
    uint32_t u32_values[2] = {0, UINT32_MAX};
    assert_int_equal(kiln_builder_add_weight(b, "c_u32", KILN_WEIGHT_CONSTANT, KILN_U32, 1, shape_2, u32_values, &v, &err),
                     KILN_OK);
    uint64_t u64_values[2] = {0, UINT64_MAX};
    assert_int_equal(kiln_builder_add_weight(b, "c_u64", KILN_WEIGHT_CONSTANT, KILN_U64, 1, shape_2, u64_values, &v, &err),
                     KILN_OK);
    uint8_t bool_values[3] = {1, 0, 1};
    int64_t shape_3[1] = {3};
    assert_int_equal(kiln_builder_add_weight(b, "mask", KILN_WEIGHT_CONSTANT, KILN_BOOL, 1, shape_3, bool_values, &v, &err),
                     KILN_OK);
    double big[20];
    for (int i = 0; i < 20; i++)
        big[i] = i * 0.25 - 2.0;
    big[3] = NAN;
    big[4] = -0.0;
    int64_t shape_20[1] = {20};
    assert_int_equal(kiln_builder_add_weight(b, "big", KILN_WEIGHT_CONSTANT, KILN_F64, 1, shape_20, big, &v, &err), KILN_OK);
    uint32_t payload_nan = 0xffc00001u; /* negative, with a payload: no literal spells it */
    assert_int_equal(kiln_builder_add_weight(b, "odd_nan", KILN_WEIGHT_CONSTANT, KILN_F32, 0, NULL, &payload_nan, &v, &err),
                     KILN_OK);
    int64_t shape_empty[2] = {0, 3};
    assert_int_equal(kiln_builder_add_weight(b, "empty", KILN_WEIGHT_CONSTANT, KILN_U8, 2, shape_empty, "", &v, &err),
                     KILN_OK);

    kiln_value half, sum, negated, scaled, tail;
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 0.5, &half, &err), KILN_OK);
    int64_t shape_1x1x1[3] = {1, 1, 1};
    float one = 1.0f;
    kiln_value ones;
    assert_int_equal(kiln_builder_add_weight(b, "ones", KILN_WEIGHT_PARAMETER, KILN_F32, 3, shape_1x1x1, &one, &ones, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, half}, &scaled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){scaled, ones}, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){sum}, &negated, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "sub", 2, (kiln_value[]){z, z}, &tail, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", negated, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "t", tail, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "x_again", x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "the_weight", w, &err), KILN_OK);
    seal_builder(b, bytes, size);
    kiln_builder_free(b);
}

static void every_dtype_round_trips_through_files(void **state)
{
    (void)state;
    void *original, *rebuilt;
    size_t original_size, rebuilt_size;
    seal_everything(&original, &original_size);
    char *dir = make_dir("everything");
    char *text = disassemble(original, original_size, dir);

    /* What the canonical form looks like for the awkward parts. */
    assert_contains(text, "program \"every \\\"dtype\\\" / \xc3\xa9t\xc3\xa9\"\n");
    assert_contains(text, "meta \"key with spaces\" = \"\xc3\xbcn\xc3\xaf" "c\xc3\xb8" "de\"\n");
    assert_contains(text, "meta odd = \"say \\\"hi\\\"\\n\\tpi \xcf\x80 \xe2\x89\x88 3.14 \\\\ ctl\\x01 bad\\xff end\"\n");
    assert_contains(text, "meta empty = \"\"\n");
    assert_contains(text, "dim unused in 0..9\n");
    assert_contains(text, "input x: f32[n, 2*n + 1, (n + 1) / 2 - 1]\n");
    assert_contains(text, "input z: i32[n + n % 3, n]\n");
    assert_contains(text, "weight w: f32[3, 2] = file \"w.npy\"\n");
    assert_contains(text, "buffer running_mean: f64[4] = file \"running_mean.npy\"\n");
    assert_contains(text, "const c_i8: i8[4] = [-128, 127, 0, -1]\n");
    assert_contains(text, "const c_i64: i64[2] = [-9223372036854775808, 9223372036854775807]\n");
    assert_contains(text, "const c_u64: u64[2] = [0, 18446744073709551615]\n");
    assert_contains(text, "const mask: bool[3] = [true, false, true]\n");
    assert_contains(text, "const big: f64[20] = file \"big.npy\"\n");
    assert_contains(text, "const odd_nan: f32[] = file \"odd_nan.npy\"\n");
    assert_contains(text, "const empty: u8[0, 3] = []\n");
    assert_contains(text, "const scalar_0: f32[] = 0.5\n");
    assert_contains(text, "%0 = mul(x, scalar_0)\n%1 = add(%0, ones)\n%2 = neg(%1)\n%3 = sub(z, z)\n");
    assert_contains(text, "output y = %2\noutput t = %3\noutput x_again = x\noutput the_weight = w\n");

    char *text_path = path_in(dir, "p.ktxt");
    write_file(text_path, text);
    char *reread = read_file(text_path);
    seal_text(reread, dir, &rebuilt, &rebuilt_size);
    assert_same_bytes(original, original_size, rebuilt, rebuilt_size);
    char *again = disassemble(rebuilt, rebuilt_size, dir);
    assert_string_equal(again, text);

    free(original);
    free(rebuilt);
    free(text);
    free(again);
    free(reread);
    free(text_path);
    free(dir);
}

static void float_constants_inline_exactly(void **state)
{
    (void)state;
    const char *text = "kiln 1.0\nprogram \"floats\"\ninput x: f64[]\n"
                       "const d: f64[9] = [0.1, -0, nan, inf, -inf, 1e-310, 1.7976931348623157e+308, 0.3333333333333333, 5e-324]\n"
                       "const f: f32[7] = [0.1, -0, nan, -inf, 1e-45, 3.4028235e+38, 16777217]\n"
                       "%0 = add(x, 1)\noutput y = %0\n";
    void *bytes;
    size_t size;
    seal_text(text, NULL, &bytes, &size);
    char *canonical = disassemble(bytes, size, NULL);
    /* Shortest spellings that read back exactly. */
    assert_contains(canonical, "const d: f64[9] = [0.1, -0, nan, inf, -inf, 1e-310, 1.7976931348623157e+308, "
                               "0.3333333333333333, 5e-324]\n");
    /* 16777217 is not a binary32 value: it rounds once, to 16777216. */
    assert_contains(canonical, "const f: f32[7] = [0.1, -0, nan, -inf, 1e-45, 3.4028235e+38, 16777216]\n");
    void *again;
    size_t again_size;
    seal_text(canonical, NULL, &again, &again_size);
    assert_same_bytes(bytes, size, again, again_size);
    free(bytes);
    free(again);
    free(canonical);
}

/* f16 and bf16 programs: inline literals, a literal operand, a bf16 weight file; byte for byte back. */
static void half_programs_round_trip(void **state)
{
    (void)state;
    char *dir = make_dir("half");
    char *w_path = path_in(dir, "w.npy");
    kiln_tensor *w = NULL;
    kiln_error err;
    const int64_t w_shape[1] = {3};
    assert_int_equal(kiln_tensor_new(KILN_BF16, 1, w_shape, &w, &err), KILN_OK);
    uint16_t *w_bits = kiln_tensor_data(w);
    w_bits[0] = 0x3f80;
    w_bits[1] = 0xffc1; /* a NaN with a payload has no literal: it stays a file */
    w_bits[2] = 0x0001; /* the smallest subnormal */
    assert_int_equal(kiln_npy_write_file(w_path, w, &err), KILN_OK);
    kiln_tensor_free(w);
    const char *text = "kiln 1.0\nprogram \"half\"\ndim n in 1..4\ninput x: f16[n, 3]\n"
                       "weight w: bf16[3] = file \"w.npy\"\n"
                       "const c: f16[4] = [0.1, -0, 65519, 6e-8]\n"
                       "const b: bf16[2] = [1.00390625, -inf]\n"
                       "%0 = mul(x, 0.5)\n%1 = cast(%0, to=\"bf16\")\n%2 = add(%1, w)\noutput y = %2\noutput c = c\n"
                       "output b = b\n";
    void *bytes, *again;
    size_t size, again_size;
    seal_text(text, dir, &bytes, &size);
    char *canonical = disassemble(bytes, size, dir);
    /* 65519 rounds once to 65504; 6e-8 to the smallest subnormal; the bf16 tie to even. */
    assert_contains(canonical, "const c: f16[4] = [0.1, -0, 6.55e+04, 6e-08]\n");
    assert_contains(canonical, "const b: bf16[2] = [1, -inf]\n");
    assert_contains(canonical, "const scalar_0: f16[] = 0.5\n");
    assert_contains(canonical, "weight w: bf16[3] = file \"w.npy\"\n");
    char *text_path = path_in(dir, "p.ktxt");
    write_file(text_path, canonical);
    char *reread = read_file(text_path);
    seal_text(reread, dir, &again, &again_size);
    assert_same_bytes(bytes, size, again, again_size);
    free(bytes);
    free(again);
    free(canonical);
    free(reread);
    free(text_path);
    free(w_path);
    free(dir);
}

static void literal_spelling_reads_back_bit_for_bit(void **state)
{
    (void)state;
    char literal[KILN_TEXT_LITERAL_MAX];
    uint8_t element[8];
    double doubles[] = {0.0, -0.0, 1.0, 0.1, 1.0 / 3.0, 1e300, -2.5e-308, 5e-324, 123456789.125, 3.14159265358979323846, INFINITY};
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        assert_true(kiln_text_literal_format(KILN_F64, (const uint8_t *)&doubles[i], literal));
        assert_int_equal(kiln_text_literal_parse(KILN_F64, literal, element), KILN_LITERAL_OK);
        assert_memory_equal(element, &doubles[i], 8);
    }
    float floats[] = {0.0f, -0.0f, 0.1f, 1.0f / 3.0f, 3.4028235e38f, 1e-45f, 16777216.0f, (float)3.14159265358979323846};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        assert_true(kiln_text_literal_format(KILN_F32, (const uint8_t *)&floats[i], literal));
        assert_int_equal(kiln_text_literal_parse(KILN_F32, literal, element), KILN_LITERAL_OK);
        assert_memory_equal(element, &floats[i], 4);
    }
    assert_true(kiln_text_literal_format(KILN_F64, (const uint8_t *)&doubles[3], literal));
    assert_string_equal(literal, "0.1");
    /* Only the default quiet NaN has a literal. */
    uint64_t negative_nan = 0xfff8000000000000u;
    assert_false(kiln_text_literal_format(KILN_F64, (const uint8_t *)&negative_nan, literal));
    uint8_t bool_two = 2;
    assert_false(kiln_text_literal_format(KILN_BOOL, &bool_two, literal));
    /* Ranges and kinds. */
    assert_int_equal(kiln_text_literal_parse(KILN_I8, "-128", element), KILN_LITERAL_OK);
    assert_int_equal(kiln_text_literal_parse(KILN_I8, "128", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_U8, "-1", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_U8, "-0", element), KILN_LITERAL_OK);
    assert_int_equal(kiln_text_literal_parse(KILN_U64, "18446744073709551616", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_I64, "-9223372036854775809", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_I32, "1.5", element), KILN_LITERAL_NOT_INTEGER);
    assert_int_equal(kiln_text_literal_parse(KILN_I32, "nan", element), KILN_LITERAL_NOT_INTEGER);
    assert_int_equal(kiln_text_literal_parse(KILN_F32, "true", element), KILN_LITERAL_NOT_NUMBER);
    assert_int_equal(kiln_text_literal_parse(KILN_F64, "0x10", element), KILN_LITERAL_NOT_NUMBER);
    assert_int_equal(kiln_text_literal_parse(KILN_F64, "1e999", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_F32, "1e39", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_BOOL, "2", element), KILN_LITERAL_NOT_BOOL);
    assert_int_equal(kiln_text_literal_parse(KILN_F16, "70000", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_BF16, "1e39", element), KILN_LITERAL_OUT_OF_RANGE);
    assert_int_equal(kiln_text_literal_parse(KILN_F16, "true", element), KILN_LITERAL_NOT_NUMBER);
    assert_int_equal(kiln_text_literal_parse(KILN_DTYPE_INVALID, "1", element), KILN_LITERAL_UNSUPPORTED_DTYPE);
}

/* f16 and bf16 literals: one rounding from the decimal value, and every pattern reads back from its spelling. */
static void half_literals_round_once_and_read_back(void **state)
{
    (void)state;
    static const struct {
        kiln_dtype dtype;
        const char *text;
        uint16_t bits;
    } cases[] = {
        {KILN_F16, "1", 0x3c00},         {KILN_F16, "-0", 0x8000},        {KILN_F16, "0.1", 0x2e66},
        {KILN_F16, "65504", 0x7bff},     {KILN_F16, "65519", 0x7bff},     {KILN_F16, "1e-8", 0x0000},
        {KILN_F16, "3e-8", 0x0001},      {KILN_F16, "nan", 0x7e00},       {KILN_F16, "-inf", 0xfc00},
        {KILN_BF16, "1", 0x3f80},        {KILN_BF16, "nan", 0x7fc0},      {KILN_BF16, "inf", 0x7f80},
        /* 1 + 2^-8 is the tie between 1 and 1 + 2^-7: to even. */
        {KILN_BF16, "1.00390625", 0x3f80},
        /* 1e-16 above the tie: the nearest double is the tie itself, so reading the decimal
         * as a double first would round down; rounding once goes up. */
        {KILN_BF16, "1.0039062500000001", 0x3f81},
        /* The same for f16: 1 + 2^-11 is the tie between 1 and 1 + 2^-10. */
        {KILN_F16, "1.00048828125000001", 0x3c01},
        {KILN_F16, "1.00048828125", 0x3c00},
    };
    uint8_t element[8];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(kiln_text_literal_parse(cases[i].dtype, cases[i].text, element), KILN_LITERAL_OK);
        uint16_t bits;
        memcpy(&bits, element, 2);
        if (bits != cases[i].bits)
            fail_msg("%s literal %s is 0x%04x, want 0x%04x", kiln_dtype_name(cases[i].dtype), cases[i].text, bits,
                     cases[i].bits);
    }
    const kiln_dtype halves[] = {KILN_F16, KILN_BF16};
    for (size_t d = 0; d < 2; d++) {
        for (uint32_t p = 0; p < 65536; p++) {
            uint16_t bits = (uint16_t)p, back;
            char text[KILN_TEXT_LITERAL_MAX];
            bool has_literal = kiln_text_literal_format(halves[d], (const uint8_t *)&bits, text);
            bool nan = (bits & 0x7fffu) > (halves[d] == KILN_F16 ? 0x7c00u : 0x7f80u);
            if (nan) {
                assert_int_equal(has_literal, bits == (halves[d] == KILN_F16 ? 0x7e00 : 0x7fc0));
                continue;
            }
            assert_true(has_literal);
            assert_int_equal(kiln_text_literal_parse(halves[d], text, element), KILN_LITERAL_OK);
            memcpy(&back, element, 2);
            if (back != bits)
                fail_msg("%s 0x%04x is written %s, which reads back as 0x%04x", kiln_dtype_name(halves[d]), bits,
                         text, back);
        }
    }
}

/* ------------------------------------------------- weights kept as files */

static void disassembly_without_a_directory_names_digests(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    seal_everything(&bytes, &size);
    char *text = disassemble(bytes, size, NULL);
    float f32_values[6] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-45f, 0.1f};
    uint8_t digest[32];
    assert_true(sodium_init() >= 0);
    crypto_generichash(digest, sizeof digest, (const uint8_t *)f32_values, sizeof f32_values, NULL, 0);
    char expected[128];
    int at = snprintf(expected, sizeof expected, "weight w: f32[3, 2] = file \"w.npy\"  # blake2b-256:");
    for (int i = 0; i < 8; i++)
        at += snprintf(expected + at, sizeof expected - (size_t)at, "%02x", digest[i]);
    snprintf(expected + at, sizeof expected - (size_t)at, " (not written)\n");
    assert_contains(text, expected);

    /* It still parses: only the files are missing. */
    char *empty = make_dir("no-weights");
    kiln_builder *b = NULL;
    kiln_error err;
    assert_int_equal(kiln_text_assemble(text, strlen(text), "t.ktxt", empty, &b, &err), KILN_ERR_IO);
    assert_null(b);
    assert_contains(err.message, "t.ktxt:");
    assert_contains(err.message, "w.npy");
    free(empty);
    free(text);
    free(bytes);
}

/* The seven statement forms of the tour in spec/text-format.md, as written. */
static void the_tour_parses_as_written(void **state)
{
    (void)state;
    char *dir = make_dir("tour");
    int64_t shape_4x2[2] = {4, 2}, shape_4[1] = {4};
    kiln_tensor *w, *r;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, shape_4x2, &w, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, shape_4, &r, &err), KILN_OK);
    char *w_path = path_in(dir, "w.npy"), *r_path = path_in(dir, "r.npy");
    assert_int_equal(kiln_npy_write_file(w_path, w, &err), KILN_OK);
    assert_int_equal(kiln_npy_write_file(r_path, r, &err), KILN_OK);
    const char *tour = "kiln 1.0\n"
                       "program \"tour\"\n"
                       "meta producer = \"examples\"          # any key = \"string\"\n"
                       "mode inference\n"
                       "dim batch in 2..4\n"
                       "input x: f64[batch, 2]\n"
                       "weight w: f32[4, 2] = file \"w.npy\"  # path relative to the text file; kind parameter\n"
                       "buffer r: f32[4] = file \"r.npy\"     # kind buffer (you may add this construct)\n"
                       "const c: f32[4] = [1, 2, 3, 4]      # inline literal; kind constant\n"
                       "const two: f64[] = 2                # rank-0 literal\n"
                       "%0 = mul(two, x)\n"
                       "%1 = add(%0, c)\n"
                       "output y = %1\n";
    /* Every line parses; the program itself adds f64 to f32, which the
     * builder refuses at the add's line. */
    kiln_builder *b = NULL;
    assert_int_equal(kiln_text_assemble(tour, strlen(tour), "tour.ktxt", dir, &b, &err), KILN_ERR_INVALID_PROGRAM);
    assert_null(b);
    assert_contains(err.message, "tour.ktxt:12:1: node 1 (add)");

    /* The same statements in a program that type-checks. */
    const char *fixed = "kiln 1.0\n"
                        "program \"tour\"\n"
                        "meta producer = \"examples\"\n"
                        "mode inference\n"
                        "dim batch in 2..4\n"
                        "input x: f32[batch, 4]\n"
                        "weight w: f32[4, 2] = file \"w.npy\"\n"
                        "buffer r: f32[4] = file \"r.npy\"\n"
                        "const c: f32[4] = [1, 2, 3, 4]\n"
                        "const two: f32[] = 2\n"
                        "%0 = mul(two, x)\n"
                        "%1 = add(%0, c)\n"
                        "%2 = sub(%1, r)\n"
                        "output y = %2\n"
                        "output w_out = w\n";
    void *bytes;
    size_t size;
    seal_text(fixed, dir, &bytes, &size);
    char *canonical = disassemble(bytes, size, NULL);
    assert_contains(canonical, "weight w: f32[4, 2] = file \"w.npy\"  # blake2b-256:");
    assert_contains(canonical, "buffer r: f32[4] = file \"r.npy\"  # blake2b-256:");
    assert_contains(canonical, "const c: f32[4] = [1, 2, 3, 4]\nconst two: f32[] = 2\n");
    free(canonical);
    free(bytes);
    kiln_tensor_free(w);
    kiln_tensor_free(r);
    free(w_path);
    free(r_path);
    free(dir);
}

/* Layout freedom the canonical form takes away. */
static void layout_comments_and_names_are_free(void **state)
{
    (void)state;
    const char *loose = "\xef\xbb\xbf# a byte order mark, CR LF line ends, comments, blank lines\r\n"
                        "\r\n"
                        "kiln 1.0   # the header\r\n"
                        "program \"loose\"\r\n"
                        "dim n in 0..3\r\n"
                        "input nan: f32[n]        # a name that is also a literal word\r\n"
                        "input in: f32[n]\r\n"
                        "const weights.v-1: f32[2] = [\r\n"
                        "    1.5,\r\n"
                        "    -2,\r\n"
                        "]\r\n"
                        "%sum.1 = add(\r\n"
                        "    nan,   # the input, not the literal\r\n"
                        "    in,\r\n"
                        ")\r\n"
                        "%42 = mul(%sum.1, nan)\r\n"
                        "%x = mul(%42, inf)       # inf: no such name, so the literal\r\n"
                        "output out = %x\r\n";
    const char *tight = "kiln 1.0\nprogram \"loose\"\ndim n in 0..3\ninput nan: f32[n]\ninput in: f32[n]\n"
                        "const weights.v-1: f32[2] = [1.5, -2]\n"
                        "%0 = add(nan, in)\n%1 = mul(%0, nan)\n%2 = mul(%1, inf)\noutput out = %2\n";
    void *a, *b;
    size_t a_size, b_size;
    seal_text(loose, NULL, &a, &a_size);
    seal_text(tight, NULL, &b, &b_size);
    assert_same_bytes(a, a_size, b, b_size);
    char *canonical = disassemble(a, a_size, NULL);
    assert_contains(canonical, "const scalar_0: f32[] = inf\n%0 = add(nan, in)\n%1 = mul(%0, nan)\n"
                               "%2 = mul(%1, scalar_0)\n");
    free(canonical);
    free(a);
    free(b);
}

/* ---------------------------------------------- contract: dims and derived */

static const char contract_text[] = "kiln 1.0\n"
                                    "program \"contract\"\n"
                                    "dim batch in 1..4\n"
                                    "dim seq in 8..512 multiple_of 8     # divisibility\n"
                                    "dim two_seq = 2*seq                 # a derived dim\n"
                                    "dim any in 0..9 multiple_of 1       # 1: no constraint\n"
                                    "dim four_seq = 2*two_seq + 0*any    # derived from a derived dim\n"
                                    "input x: f32[batch, seq]\n"
                                    "input s: f32[batch, two_seq]\n"
                                    "input t: f32[four_seq + 1, any]\n"
                                    "%0 = neg(s)\n"
                                    "output y = %0\n"
                                    "output x_again = x\n"
                                    "output t_again = t\n";

static const char contract_canonical[] = "kiln 1.0\n"
                                         "program \"contract\"\n"
                                         "mode inference\n"
                                         "dim batch in 1..4\n"
                                         "dim seq in 8..512 multiple_of 8\n"
                                         "dim any in 0..9\n"
                                         "dim two_seq = 2*seq\n"
                                         "dim four_seq = 4*seq\n"
                                         "input x: f32[batch, seq]\n"
                                         "input s: f32[batch, 2*seq]\n"
                                         "input t: f32[4*seq + 1, any]\n"
                                         "%0 = neg(s)\n"
                                         "output y = %0\n"
                                         "output x_again = x\n"
                                         "output t_again = t\n";

static void dims_multiple_of_and_derived_dims_round_trip(void **state)
{
    (void)state;
    void *from_text, *from_c, *again;
    size_t text_size, c_size, again_size;
    seal_text(contract_text, NULL, &from_text, &text_size);

    /* The same program through the C API. */
    kiln_builder *b;
    kiln_error err;
    kiln_value x, s, t, y;
    assert_int_equal(kiln_builder_new("contract", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 8, 512, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "seq", 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_derived_dim(b, "two_seq", "2*seq", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "any", 0, 9, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "any", 1, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_derived_dim(b, "four_seq", "2*two_seq + 0*any", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, seq]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F32, "[batch, two_seq]", &s, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "t", KILN_F32, "[four_seq + 1, any]", &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){s}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "x_again", x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "t_again", t, &err), KILN_OK);
    seal_builder(b, &from_c, &c_size);
    kiln_builder_free(b);
    assert_same_bytes(from_c, c_size, from_text, text_size);

    /* Shapes are stored expanded: the inputs print the expression, the
     * derived dims follow the plain ones, multiple_of 1 is not printed. */
    char *canonical = disassemble(from_text, text_size, NULL);
    assert_string_equal(canonical, contract_canonical);
    seal_text(canonical, NULL, &again, &again_size);
    assert_same_bytes(from_text, text_size, again, again_size);
    char *twice = disassemble(again, again_size, NULL);
    assert_string_equal(twice, canonical);

    /* The contract holds at run time: 12 is not a multiple of 8. */
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(from_text, text_size, NULL, &program, NULL, &err), KILN_OK);
    kiln_dim_info info;
    kiln_program_dim(program, 1, &info);
    assert_string_equal(info.name, "seq");
    assert_int_equal(info.multiple_of, 8);
    assert_int_equal(kiln_program_derived_dim_count(program), 2);
    const char *name;
    char expression[64];
    kiln_program_derived_dim(program, 0, &name, expression, sizeof expression);
    assert_string_equal(name, "two_seq");
    assert_string_equal(expression, "2*seq");
    kiln_program_free(program);

    free(from_text);
    free(from_c);
    free(again);
    free(canonical);
    free(twice);
}

/* ----------------------------------------------------------------- checks */

/* Every kind of rule, in both spellings of categories and units, in an
 * order and layout the canonical form normalises. */
static const char checks_text[] =
    "kiln 1.0\n"
    "program \"checks\"\n"
    "dim n in 1..4\n"
    "input x: f32[n]\n"
    "input ids: i64[n]\n"
    "input v: f64[n]\n"
    "input h: f16[n]\n"
    "input u: u8[n]\n"
    "input e: f32[n]\n"
    "input w: f64[n]\n"
    "input q: f32[n]\n"
    "check x range 0.0..1.0 finite   # the spelling without ':' and ','\n"
    "check ids: categories 7, -3, 7, 0  unit m/s description \"ids, \\\"q\\\" \xc3\xa9\"\n"
    "check v: unit \"meters per second\", range -inf..1e300, finite\n"
    "check h: range -0.0 .. 65504\n"
    "check u: categories [1, 2, 255,]\n"
    "check e:\n"
    "check w: range inf ..inf\n"
    "check q: range 0.1..0.30000000000000004, description \"tab\\there\"\n"
    "%0 = neg(x)\n"
    "output y = %0\n"
    "output i = ids\n"
    "output vv = v\n"
    "output hh = h\n"
    "output uu = u\n"
    "output ee = e\n"
    "output ww = w\n"
    "output qq = q\n";

static const char checks_canonical[] =
    "kiln 1.0\n"
    "program \"checks\"\n"
    "mode inference\n"
    "dim n in 1..4\n"
    "input x: f32[n]\n"
    "input ids: i64[n]\n"
    "input v: f64[n]\n"
    "input h: f16[n]\n"
    "input u: u8[n]\n"
    "input e: f32[n]\n"
    "input w: f64[n]\n"
    "input q: f32[n]\n"
    "check x: range 0.0..1.0, finite\n"
    "check ids: categories [-3, 0, 7], unit \"m/s\", description \"ids, \\\"q\\\" \xc3\xa9\"\n"
    "check v: range -inf..1e+300, finite, unit \"meters per second\"\n"
    "check h: range -0.0..65504.0\n"
    "check u: categories [1, 2, 255]\n"
    "check e:\n"
    "check w: range inf ..inf\n"
    "check q: range 0.1..0.30000000000000004, description \"tab\\there\"\n"
    "%0 = neg(x)\n"
    "output y = %0\n"
    "output i = ids\n"
    "output vv = v\n"
    "output hh = h\n"
    "output uu = u\n"
    "output ee = e\n"
    "output ww = w\n"
    "output qq = q\n";

static void set_check(kiln_builder *b, const char *input, const kiln_input_check *check)
{
    kiln_error err;
    if (kiln_builder_set_input_check(b, input, check, &err) != KILN_OK)
        fail_msg("check of '%s': %s", input, err.message);
}

/* The checks of checks_text through the C builder. */
static void seal_checks_with_the_builder(void **bytes, size_t *size)
{
    static const struct {
        const char *name;
        kiln_dtype dtype;
    } inputs[] = {{"x", KILN_F32}, {"ids", KILN_I64}, {"v", KILN_F64}, {"h", KILN_F16},
                  {"u", KILN_U8},  {"e", KILN_F32},   {"w", KILN_F64}, {"q", KILN_F32}};
    static const char *const outputs[] = {"i", "vv", "hh", "uu", "ee", "ww", "qq"};
    kiln_builder *b;
    kiln_error err;
    kiln_value values[8], y;
    assert_int_equal(kiln_builder_new("checks", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_OK);
    for (int i = 0; i < 8; i++)
        assert_int_equal(kiln_builder_add_input(b, inputs[i].name, inputs[i].dtype, "[n]", &values[i], &err), KILN_OK);
    kiln_input_check c;
    kiln_input_check_default(&c);
    c.has_range = true, c.min = 0, c.max = 1, c.finite_only = true;
    set_check(b, "x", &c);
    kiln_input_check_default(&c);
    static const int64_t categories[] = {7, -3, 0};
    c.category_count = 3, c.categories = categories, c.unit = "m/s", c.description = "ids, \"q\" \xc3\xa9";
    set_check(b, "ids", &c);
    kiln_input_check_default(&c);
    c.has_range = true, c.min = -INFINITY, c.max = 1e300, c.finite_only = true, c.unit = "meters per second";
    set_check(b, "v", &c);
    kiln_input_check_default(&c);
    c.has_range = true, c.min = -0.0, c.max = 65504;
    set_check(b, "h", &c);
    kiln_input_check_default(&c);
    static const int64_t bytes_allowed[] = {255, 1, 2};
    c.category_count = 3, c.categories = bytes_allowed;
    set_check(b, "u", &c);
    kiln_input_check_default(&c);
    set_check(b, "e", &c);
    c.has_range = true, c.min = INFINITY, c.max = INFINITY;
    set_check(b, "w", &c);
    kiln_input_check_default(&c);
    c.has_range = true, c.min = 0.1, c.max = 0.30000000000000004, c.description = "tab\there";
    set_check(b, "q", &c);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){values[0]}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    for (int i = 0; i < 7; i++)
        assert_int_equal(kiln_builder_add_output(b, outputs[i], values[i + 1], &err), KILN_OK);
    seal_builder(b, bytes, size);
    kiln_builder_free(b);
}

static void checks_round_trip_byte_exact(void **state)
{
    (void)state;
    void *from_text, *from_c, *again;
    size_t text_size, c_size, again_size;
    seal_text(checks_text, NULL, &from_text, &text_size);
    seal_checks_with_the_builder(&from_c, &c_size);
    assert_same_bytes(from_c, c_size, from_text, text_size);

    char *canonical = disassemble(from_text, text_size, NULL);
    assert_string_equal(canonical, checks_canonical);
    seal_text(canonical, NULL, &again, &again_size);
    assert_same_bytes(from_text, text_size, again, again_size);
    char *twice = disassemble(again, again_size, NULL);
    assert_string_equal(twice, canonical);

    /* The bounds come back bit for bit, -0.0 included. */
    kiln_program *program;
    kiln_error err;
    kiln_input_check c;
    kiln_input_check_default(&c);
    assert_int_equal(kiln_program_load_memory(again, again_size, NULL, &program, NULL, &err), KILN_OK);
    assert_true(kiln_program_input_check(program, 3, &c));
    assert_true(c.has_range && c.min == 0 && signbit(c.min) && c.max == 65504);
    assert_true(kiln_program_input_check(program, 7, &c));
    assert_true(c.min == 0.1 && c.max == 0.30000000000000004);
    assert_string_equal(c.description, "tab\there");
    kiln_program_free(program);
    free(from_text);
    free(from_c);
    free(again);
    free(canonical);
    free(twice);
}

/* A one-line spec reads like the text statement after 'check'. */
static void check_specs_parse(void **state)
{
    (void)state;
    kiln_check_spec spec;
    kiln_error err;
    assert_int_equal(kiln_check_spec_parse("x: range 0..1, finite", &spec, &err), KILN_OK);
    assert_string_equal(spec.input, "x");
    assert_true(spec.check.has_range && spec.check.min == 0 && spec.check.max == 1 && spec.check.finite_only);
    assert_int_equal(spec.check.category_count, 0);
    assert_null(spec.check.unit);
    kiln_check_spec_free(&spec);
    assert_null(spec.input);
    assert_int_equal(kiln_check_spec_parse("ids: categories 0,1,2", &spec, &err), KILN_OK);
    assert_int_equal(spec.check.category_count, 3);
    assert_int_equal(spec.check.categories[2], 2);
    kiln_check_spec_free(&spec);
    assert_int_equal(kiln_check_spec_parse("v: range -10..10, unit m/s", &spec, &err), KILN_OK);
    assert_true(spec.check.min == -10 && spec.check.max == 10);
    assert_string_equal(spec.check.unit, "m/s");
    kiln_check_spec_free(&spec);
    assert_int_equal(kiln_check_spec_parse("  k: categories 3, 4, unit \"1\", description \"a, b\" ", &spec, &err),
                     KILN_OK);
    assert_int_equal(spec.check.category_count, 2);
    assert_string_equal(spec.check.unit, "1");
    assert_string_equal(spec.check.description, "a, b");
    kiln_check_spec_free(&spec);
    kiln_check_spec_free(NULL);

    static const struct {
        const char *spec;
        kiln_status code;
        const char *message;
    } bad[] = {
        {"x range 0..1", KILN_ERR_MALFORMED,
         "check 'x range 0..1': column 3: expected ':' after the input's name (write NAME: RULE, ..., e.g. x: range "
         "0..1, finite), found 'range'"},
        {"x: rnage 0..1", KILN_ERR_MALFORMED,
         "check 'x: rnage 0..1': column 4: unknown check rule 'rnage'; the rules are range MIN..MAX, finite, "
         "categories A, B, ..., unit TEXT or description \"TEXT\""},
        {"x: range 1..0", KILN_ERR_INVALID_PROGRAM,
         "check 'x: range 1..0': column 4: range 1..0 is empty: its minimum exceeds its maximum; write range 0..1"},
        {"x: range nan..1", KILN_ERR_INVALID_PROGRAM,
         "check 'x: range nan..1': column 10: the minimum of a range cannot be NaN"},
        {"x: range 0..nan", KILN_ERR_INVALID_PROGRAM, "column 13: the maximum of a range cannot be NaN"},
        {"x:", KILN_ERR_MALFORMED, "check 'x:': column 3: expected a rule: range MIN..MAX"},
        {"", KILN_ERR_MALFORMED, "check '': column 1: the check is empty; write NAME: RULE, ..."},
        {": finite", KILN_ERR_MALFORMED, "column 1: expected the name of the input to check"},
        {"x: finite\ny: finite", KILN_ERR_MALFORMED, "check 'x: finite?y: finite': column 10: a check is one line"},
        {"x: range 0..1,", KILN_ERR_MALFORMED, "column 15: expected a rule after ','"},
        {"x: unit m/s, unit s", KILN_ERR_INVALID_PROGRAM, "column 14: 'unit' is given twice in this check"},
        {"x: range 0..1 @", KILN_ERR_MALFORMED, "column 15: unexpected character '@'"},
        {"x: categories 1, 2.5", KILN_ERR_MALFORMED, "column 18: expected a rule after ','"},
        {"x: categories", KILN_ERR_MALFORMED, "expected the integer categories after 'categories'"},
        {"x: range 0..1 1", KILN_ERR_MALFORMED, "column 15: expected ',' or a rule"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&spec, 0x5a, sizeof spec);
        kiln_status status = kiln_check_spec_parse(bad[i].spec, &spec, &err);
        if (status != bad[i].code || !strstr(err.message, bad[i].message))
            fail_msg("spec \"%s\": expected status %d and \"%s\"\n  got %d: %s", bad[i].spec, (int)bad[i].code,
                     bad[i].message, (int)status, err.message);
        assert_null(spec.input);
        assert_null(spec.check.categories);
        assert_null(spec.check.unit);
    }
    assert_int_equal(kiln_check_spec_parse(NULL, &spec, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_check_spec_parse("x: finite", NULL, &err), KILN_ERR_INVALID_ARGUMENT);
}

/* --------------------------------------------------------------- evidence */

static kiln_tensor *tensor_of(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const void *values)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(dtype, rank, shape, &t, &err), KILN_OK);
    if (kiln_tensor_byte_size(t))
        memcpy(kiln_tensor_data(t), values, kiln_tensor_byte_size(t));
    return t;
}

/* y = x*s and z = -x for x: f64[n, 2], n in 2..16 multiple_of 2. */
static kiln_builder *evidence_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, s, y, z, w;
    assert_int_equal(kiln_builder_new("evidence", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 2, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "n", 2, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F64, "[]", &s, &err), KILN_OK);
    /* A weight whose file name an evidence file would otherwise take. */
    double ones[2] = {1, 1};
    assert_int_equal(kiln_builder_add_weight(b, "evidence-small-x", KILN_WEIGHT_PARAMETER, KILN_F64, 1,
                                             (int64_t[]){2}, ones, &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, s}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){x}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "w", w, &err), KILN_OK);
    return b;
}

/* Add a case with x of `rows` rows holding `x_values`, s = 3, and the
 * exact expected y and z (only y when `only_y`). */
static void add_case(kiln_builder *b, const char *name, int64_t rows, const double *x_values, kiln_compare_rule rule,
                     bool only_y)
{
    double y_values[40], z_values[40], three = 3;
    for (int64_t i = 0; i < rows * 2; i++) {
        y_values[i] = x_values[i] * 3;
        z_values[i] = -x_values[i];
    }
    int64_t shape[2] = {rows, 2};
    kiln_tensor *x = tensor_of(KILN_F64, 2, shape, x_values), *s = tensor_of(KILN_F64, 0, NULL, &three);
    kiln_tensor *y = tensor_of(KILN_F64, 2, shape, y_values), *z = tensor_of(KILN_F64, 2, shape, z_values);
    kiln_compare_rule rules[2] = {rule, rule};
    kiln_error err;
    if (kiln_builder_add_evidence(b, &(kiln_evidence_case){
            .name = name,
            .input_count = 2,
            .input_names = (const char *[]){"x", "s"},
            .inputs = (const kiln_tensor *[]){x, s},
            .output_count = only_y ? 1 : 2,
            .output_names = (const char *[]){"y", "z"},
            .expected = (const kiln_tensor *[]){y, z},
            .rules = rules},
                                  &err) != KILN_OK)
        fail_msg("add_evidence: %s", err.message);
    kiln_tensor_free(x);
    kiln_tensor_free(s);
    kiln_tensor_free(y);
    kiln_tensor_free(z);
}

static const kiln_compare_rule default_rule = {KILN_COMPARE_TOLERANCE, 1e-6, 1e-5, true};

static void seal_evidence_program(void **bytes, size_t *size)
{
    kiln_builder *b = evidence_program();
    double small[4] = {1, -0.0, 0.1, INFINITY};
    double big[20];
    for (int i = 0; i < 20; i++)
        big[i] = i * 0.5 - 3;
    double odd[4] = {1, 2, 3, 4};
    uint64_t payload_nan = 0x7ff8000000000001u; /* no literal spells it */
    memcpy(&odd[1], &payload_nan, sizeof payload_nan);
    add_case(b, "small", 2, small, default_rule, false);
    add_case(b, "big", 10, big, (kiln_compare_rule){KILN_COMPARE_EXACT, 1e-6, 1e-5, true}, false);
    add_case(b, "a b/c", 2, odd, (kiln_compare_rule){KILN_COMPARE_EXACT, 0, 0, false}, true);
    add_case(b, "a_b_c", 2, small, (kiln_compare_rule){KILN_COMPARE_TOLERANCE, 0.5, 0, false}, true);
    seal_builder(b, bytes, size);
    kiln_builder_free(b);
}

static void evidence_round_trips(void **state)
{
    (void)state;
    void *original, *rebuilt;
    size_t original_size, rebuilt_size;
    seal_evidence_program(&original, &original_size);

    /* Without a directory: small tensors inline with their type, others
     * as files with the digest of their bytes. */
    char *text = disassemble(original, original_size, NULL);
    assert_contains(text, "dim n in 2..16 multiple_of 2\n");
    assert_contains(text, "output y = %0\noutput z = %1\noutput w = evidence-small-x\n"
                          "evidence \"small\" {\n"
                          "  x: f64[2, 2] = [1, -0, 0.1, inf]\n"
                          "  s: f64[] = 3\n"
                          "  y: f64[2, 2] = [3, -0, 0.30000000000000004, inf]\n"
                          "  z: f64[2, 2] = [-1, 0, -0.1, -inf]\n"
                          "  atol 1e-06 rtol 1e-05\n"
                          "}\n"
                          "evidence \"big\" {\n"
                          "  x = file \"evidence-big-x.npy\"  # blake2b-256:");
    assert_contains(text, "  s: f64[] = 3\n  y = file \"evidence-big-y.npy\"  # blake2b-256:");
    assert_contains(text, " (not written)\n  exact\n}\n"
                          "evidence \"a b/c\" {\n"
                          "  x = file \"evidence-a_b_c-x.npy\"  # blake2b-256:");
    assert_contains(text, "  s: f64[] = 3\n  y = file \"evidence-a_b_c-y.npy\"  # blake2b-256:");
    assert_contains(text, " (not written)\n  exact atol 0 rtol 0 nan_unequal\n}\n"
                          "evidence \"a_b_c\" {\n"
                          "  x: f64[2, 2] = [1, -0, 0.1, inf]\n"
                          "  s: f64[] = 3\n"
                          "  y: f64[2, 2] = [3, -0, 0.30000000000000004, inf]\n"
                          "  atol 0.5 rtol 0 nan_unequal\n"
                          "}\n");
    assert_true(text[strlen(text) - 2] == '}');

    /* With a directory: every evidence tensor is a file, named after its
     * case and name, made unique where sanitising makes two alike. */
    char *dir = make_dir("evidence");
    char *written = disassemble(original, original_size, dir);
    assert_contains(written, "weight evidence-small-x: f64[2] = file \"evidence-small-x.npy\"\n");
    assert_contains(written, "evidence \"small\" {\n"
                             "  x = file \"evidence-small-x-2.npy\"\n"
                             "  s = file \"evidence-small-s.npy\"\n"
                             "  y = file \"evidence-small-y.npy\"\n"
                             "  z = file \"evidence-small-z.npy\"\n"
                             "  atol 1e-06 rtol 1e-05\n"
                             "}\n");
    assert_contains(written, "evidence \"a b/c\" {\n  x = file \"evidence-a_b_c-x.npy\"\n");
    assert_contains(written, "evidence \"a_b_c\" {\n  x = file \"evidence-a_b_c-x-2.npy\"\n");
    char *text_path = path_in(dir, "e.ktxt");
    write_file(text_path, written);
    char *reread = read_file(text_path);
    seal_text(reread, dir, &rebuilt, &rebuilt_size);
    assert_same_bytes(original, original_size, rebuilt, rebuilt_size);
    char *again = disassemble(rebuilt, rebuilt_size, dir);
    assert_string_equal(again, written);

    /* The inline form reassembles too, once the files it names exist. */
    void *from_inline;
    size_t inline_size;
    seal_text(text, dir, &from_inline, &inline_size);
    assert_same_bytes(original, original_size, from_inline, inline_size);

    free(original);
    free(rebuilt);
    free(from_inline);
    free(text);
    free(written);
    free(again);
    free(reread);
    free(text_path);
    free(dir);
}

/* The spelling users write, on one line, with files next to the text. */
static void evidence_as_users_write_it(void **state)
{
    (void)state;
    char *dir = make_dir("ones");
    int64_t shape[2] = {2, 2};
    double ones[4] = {1, 1, 1, 1}, threes[4] = {3, 3, 3, 3}, minus[4] = {-1, -1, -1, -1}, three = 3;
    kiln_tensor *x = tensor_of(KILN_F64, 2, shape, ones), *s = tensor_of(KILN_F64, 0, NULL, &three);
    kiln_tensor *y = tensor_of(KILN_F64, 2, shape, threes), *z = tensor_of(KILN_F64, 2, shape, minus);
    const char *names[] = {"x", "s", "y", "z"};
    kiln_tensor *tensors[] = {x, s, y, z};
    kiln_error err;
    for (int i = 0; i < 4; i++) {
        char file[16];
        snprintf(file, sizeof file, "%s.npy", names[i]);
        char *path = path_in(dir, file);
        assert_int_equal(kiln_npy_write_file(path, tensors[i], &err), KILN_OK);
        free(path);
    }
    const char *text = "kiln 1.0\n"
                       "program \"evidence\"\n"
                       "dim n in 2..16 multiple_of 2\n"
                       "input x: f64[n, 2]\n"
                       "input s: f64[]\n"
                       "weight evidence-small-x: f64[2] = [1, 1]\n"
                       "%y = mul(x, s)\n"
                       "%z = neg(x)\n"
                       "output y = %y\n"
                       "output z = %z\n"
                       "output w = evidence-small-x\n"
                       "evidence \"ones\" { x = file \"x.npy\"  s = file \"s.npy\"  y = file \"y.npy\"  "
                       "z = file \"z.npy\"  atol 1e-6  rtol 1e-5 }\n";
    void *from_text, *from_c;
    size_t text_size, c_size;
    seal_text(text, dir, &from_text, &text_size);
    kiln_builder *b = evidence_program();
    kiln_compare_rule rules[2] = {default_rule, default_rule};
    assert_int_equal(kiln_builder_add_evidence(b, &(kiln_evidence_case){
            .name = "ones",
            .input_count = 2,
            .input_names = names,
            .inputs = (const kiln_tensor *[]){x, s},
            .output_count = 2,
            .output_names = names + 2,
            .expected = (const kiln_tensor *[]){y, z},
            .rules = rules}, &err),
                     KILN_OK);
    seal_builder(b, &from_c, &c_size);
    kiln_builder_free(b);
    assert_same_bytes(from_c, c_size, from_text, text_size);

    /* The defaults are that same tolerance; the case replays and passes. */
    const char *defaults = "kiln 1.0\nprogram \"evidence\"\ndim n in 2..16 multiple_of 2\n"
                           "input x: f64[n, 2]\ninput s: f64[]\nweight evidence-small-x: f64[2] = [1, 1]\n"
                           "%y = mul(x, s)\n%z = neg(x)\noutput y = %y\noutput z = %z\noutput w = evidence-small-x\n"
                           "evidence \"ones\" {\n  x = file \"x.npy\"\n  s = file \"s.npy\"\n"
                           "  y = file \"y.npy\"   # the expected value\n  z = file \"z.npy\"\n}\n";
    void *from_defaults;
    size_t defaults_size;
    seal_text(defaults, dir, &from_defaults, &defaults_size);
    assert_same_bytes(from_c, c_size, from_defaults, defaults_size);
    kiln_program *program;
    kiln_evidence_result results[2];
    assert_int_equal(kiln_program_load_memory(from_text, text_size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_program_evidence_count(program), 1);
    assert_int_equal(kiln_program_replay_evidence(program, 0, results, &err), KILN_OK);
    assert_true(results[0].passed && results[1].passed);
    kiln_program_free(program);

    for (int i = 0; i < 4; i++)
        kiln_tensor_free(tensors[i]);
    free(from_text);
    free(from_c);
    free(from_defaults);
    free(dir);
}

static void evidence_with_rules_per_output_is_refused(void **state)
{
    (void)state;
    kiln_builder *b = evidence_program();
    int64_t shape[2] = {2, 2};
    double values[4] = {1, 2, 3, 4}, three = 3;
    kiln_tensor *x = tensor_of(KILN_F64, 2, shape, values), *s = tensor_of(KILN_F64, 0, NULL, &three);
    kiln_compare_rule rules[2] = {default_rule, {KILN_COMPARE_EXACT, 1e-6, 1e-5, true}};
    kiln_error err;
    assert_int_equal(kiln_builder_add_evidence(b, &(kiln_evidence_case){
            .name = "mixed",
            .input_count = 2,
            .input_names = (const char *[]){"x", "s"},
            .inputs = (const kiln_tensor *[]){x, s},
            .output_count = 2,
            .output_names = (const char *[]){"z", "y"},
            .expected = (const kiln_tensor *[]){x, x},
            .rules = rules}, &err),
                     KILN_OK);
    void *bytes;
    size_t size;
    seal_builder(b, &bytes, &size);
    kiln_program *program;
    char *text = (char *)&err; /* must come back NULL */
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    assert_int_equal(kiln_text_disassemble(program, NULL, &text, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(text);
    assert_contains(err.message, "evidence 'mixed': outputs 'z' and 'y' are compared under different rules; the "
                                 "text format has one rule per case");
    kiln_program_free(program);
    kiln_builder_free(b);
    kiln_tensor_free(x);
    kiln_tensor_free(s);
    free(bytes);
}

/* ------------------------------------------------------------- attributes */

/* No op of this runtime takes attributes, so the printer is exercised on a
 * loaded program whose node is given some in memory. */
static void attributes_print_in_stored_order(void **state)
{
    (void)state;
    void *bytes;
    size_t size;
    seal_text(scale_text, NULL, &bytes, &size);
    kiln_program *program;
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    int64_t perm[2] = {1, 0};
    double scales[4] = {0.5, 2.0, 1e300, -0.0};
    kiln_attribute attributes[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "edge\n"},
        {.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 1.0},
        {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1},
        {.name = "empty", .type = KILN_ATTRIBUTE_INTS, .ints = perm, .count = 0},
        {.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = perm, .count = 2},
        {.name = "scales", .type = KILN_ATTRIBUTE_FLOATS, .floats = scales, .count = 4},
        {.name = "tiny", .type = KILN_ATTRIBUTE_FLOAT, .f = 5e-324},
    };
    kiln_node_decl *node = &program->model.nodes[0];
    assert_int_equal(node->attribute_count, 0);
    free(node->attributes); /* the decoder's empty array */
    assert_int_equal(kiln_attributes_copy(7, attributes, &node->attributes, &err), KILN_OK);
    node->attribute_count = 7;
    char *text;
    assert_int_equal(kiln_text_disassemble(program, NULL, &text, &err), KILN_OK);
    assert_contains(text, "%0 = mul(scalar_0, x, alpha=1.0, axis=-1, empty=[], mode=\"edge\\n\", perm=[1, 0], "
                          "scales=[0.5, 2.0, 1e+300, -0.0], tiny=5e-324)\n%1 = add(%0, scalar_1)\n");
    /* It parses; the registry then refuses the first attribute by name. */
    kiln_builder *b = NULL;
    assert_int_equal(kiln_text_assemble(text, strlen(text), "t.ktxt", NULL, &b, &err), KILN_ERR_INVALID_PROGRAM);
    assert_contains(err.message, "t.ktxt:9:1: node 0 (mul): op 'mul' takes no attribute 'alpha'");
    free(text);

    /* What has no spelling is refused, never approximated. */
    uint64_t payload_nan = 0x7ff8000000000001u;
    double odd;
    memcpy(&odd, &payload_nan, sizeof odd);
    kiln_attribute unprintable[] = {
        {.name = "empty", .type = KILN_ATTRIBUTE_FLOATS, .floats = scales, .count = 0},
        {.name = "odd", .type = KILN_ATTRIBUTE_FLOAT, .f = odd},
    };
    const char *why[] = {"an empty float list reads back as an integer list", "has no literal"};
    for (int i = 0; i < 2; i++) {
        for (uint32_t a = 0; a < node->attribute_count; a++)
            kiln_attribute_release(&node->attributes[a]);
        free(node->attributes);
        assert_int_equal(kiln_attributes_copy(1, &unprintable[i], &node->attributes, &err), KILN_OK);
        node->attribute_count = 1;
        text = (char *)&err;
        assert_int_equal(kiln_text_disassemble(program, NULL, &text, &err), KILN_ERR_INVALID_ARGUMENT);
        assert_null(text);
        assert_contains(err.message, "node 0: attribute '");
        assert_contains(err.message, why[i]);
    }
    kiln_program_free(program);
    free(bytes);
}

/* ------------------------------------------------------------- failures */

typedef struct bad_text {
    const char *what;
    const char *text;
    kiln_status code;
    const char *place;    /* "LINE:COLUMN" */
    const char *fragment; /* part of the message after the place */
} bad_text;

#define HEAD "kiln 1.0\nprogram \"p\"\n"
/* A program for evidence errors: lines 3..8, the case on line 9. */
#define EVIDENCE_HEAD HEAD "dim n in 1..4\ninput x: f64[n, 2]\ninput s: f64[]\nconst k: f64[] = 2\n" \
                           "%0 = mul(x, s)\noutput y = %0\n"
#define EVIDENCE_CASE "evidence \"e\" { x: f64[1, 2] = [1, 2]  s: f64[] = 1  y: f64[1, 2] = [1, 2] }\n"

static const bad_text bad_texts[] = {
    {"unknown op, with a suggestion", HEAD "input x: f32[2]\n%0 = ad(x, x)\n", KILN_ERR_UNSUPPORTED_OP, "4:6",
     "unknown op 'ad'; did you mean 'add'?"},
    {"unknown op, nothing close", HEAD "input x: f32[2]\n%0 = frobnicate(x)\n", KILN_ERR_UNSUPPORTED_OP, "4:6",
     "unknown op 'frobnicate'; this kiln has add, sub, mul, div, neg"},
    {"missing header", "program \"p\"\n", KILN_ERR_MALFORMED, "1:1",
     "expected the header 'kiln 1.1' first, found 'program'"},
    {"empty text", "", KILN_ERR_MALFORMED, "1:1", "expected the header 'kiln 1.1' first, found end of file"},
    {"wrong version", "# comment\nkiln 2.0\n", KILN_ERR_UNSUPPORTED_VERSION, "2:6",
     "text format version 2.0 is not supported; this kiln reads versions 1.0 and 1.1"},
    {"program missing", "kiln 1.0\ndim n in 1..2\n", KILN_ERR_MALFORMED, "2:1",
     "expected 'program \"NAME\"' after the header, found 'dim'"},
    {"unterminated string", "kiln 1.0\nprogram \"p\n", KILN_ERR_MALFORMED, "2:9", "unterminated string"},
    {"bad escape", "kiln 1.0\nprogram \"a\\qb\"\n", KILN_ERR_MALFORMED, "2:11", "bad escape '\\' followed by 'q'"},
    {"bad hex escape", HEAD "meta k = \"\\x4\"\n", KILN_ERR_MALFORMED, "3:11", "bad escape '\\x'"},
    {"NUL escape", HEAD "meta k = \"a\\x00\"\n", KILN_ERR_MALFORMED, "3:12", "strings cannot contain NUL"},
    {"duplicate input", HEAD "input x: f32[2]\ninput x: f64[2]\n", KILN_ERR_INVALID_PROGRAM, "4:7",
     "'x' is already declared at line 3"},
    {"weight named like an input", HEAD "input x: f32[2]\nconst x: f32[] = 1\n", KILN_ERR_INVALID_PROGRAM, "4:7",
     "'x' is already declared at line 3"},
    {"duplicate result", HEAD "input x: f32[2]\n%a = neg(x)\n%a = neg(x)\n", KILN_ERR_INVALID_PROGRAM, "5:1",
     "'%a' is already defined at line 4"},
    {"undeclared dim in a shape", HEAD "dim n in 1..4\ninput x: f32[n, 2*q]\n", KILN_ERR_MALFORMED, "4:19",
     "'q' is not a declared dim"},
    {"shape syntax", HEAD "dim n in 1..4\ninput x: f32[n +, 2]\n", KILN_ERR_MALFORMED, "4:17",
     "expected an integer, a dim name or '(', found ', 2]'"},
    {"unclosed shape", HEAD "input x: f32[2, 3\n", KILN_ERR_MALFORMED, "3:18", "expected ']' to close the shape"},
    {"result used before definition", HEAD "input x: f32[2]\n%0 = add(x, %3)\n", KILN_ERR_INVALID_PROGRAM, "4:13",
     "'%3' is not defined"},
    {"undeclared name as operand", HEAD "input x: f32[2]\n%0 = add(x, y)\n", KILN_ERR_INVALID_PROGRAM, "4:13",
     "'y' is not a declared input or weight"},
    {"unknown statement", HEAD "input x: f32[2]\nfrob x\n", KILN_ERR_MALFORMED, "4:1", "unknown statement 'frob'"},
    {"attribute on add: the registry refuses it", HEAD "input x: f32[2]\n%0 = add(x, x, axis=1)\n",
     KILN_ERR_INVALID_PROGRAM, "4:1", "node 0 (add): op 'add' takes no attribute 'axis'"},
    {"attributes of every kind parse; the first refused is the first by name",
     HEAD "input x: f32[2]\n%0 = add(x, x, perm=[1, 0], scale=0.5, mode=\"edge\", f=[1, 2.5], on=true, e=[])\n",
     KILN_ERR_INVALID_PROGRAM, "4:1", "op 'add' takes no attribute 'e'"},
    {"nested attribute list", HEAD "input x: f32[2]\n%0 = add(x, x, pads=[[1, 2], [3, 4]])\n", KILN_ERR_MALFORMED,
     "4:22", "attribute lists do not nest"},
    {"string in an attribute list", HEAD "input x: f32[2]\n%0 = add(x, x, a=[1, \"b\"])\n", KILN_ERR_MALFORMED,
     "4:22", "attribute lists hold numbers, not strings"},
    {"integer attribute out of range", HEAD "input x: f32[2]\n%0 = add(x, x, a=9223372036854775808)\n",
     KILN_ERR_INVALID_PROGRAM, "4:18", "literal 9223372036854775808 does not fit dtype i64"},
    {"attribute given twice", HEAD "input x: f32[2]\n%0 = add(x, x, a=1, a=2)\n", KILN_ERR_INVALID_ARGUMENT, "4:1",
     "attribute 'a' is given twice"},
    {"multiple_of 0", HEAD "dim n in 2..8 multiple_of 0\n", KILN_ERR_INVALID_ARGUMENT, "3:27",
     "dim 'n': multiple_of must be at least 1, got 0"},
    {"multiple_of empties the range", HEAD "dim n in 3..5 multiple_of 8\n", KILN_ERR_INVALID_ARGUMENT, "3:27",
     "dim 'n': no value in 3..5 is a multiple of 8"},
    {"multiple_of without a number", HEAD "dim n in 2..8 multiple_of\n", KILN_ERR_MALFORMED, "3:26",
     "expected an integer, found end of line"},
    {"derived dim redeclared", HEAD "dim n in 1..4\ndim m = 2*n\ndim m = 3*n\n", KILN_ERR_INVALID_PROGRAM, "5:5",
     "'m' is already declared at line 4; dim and derived dim names are unique"},
    {"derived dim named like a dim", HEAD "dim n in 1..4\ndim n = 2\n", KILN_ERR_INVALID_PROGRAM, "4:5",
     "'n' is already declared at line 3"},
    {"dim named like a derived dim", HEAD "dim n in 1..4\ndim m = 2*n\ndim m in 1..2\n", KILN_ERR_INVALID_PROGRAM,
     "5:5", "'m' is already declared at line 4"},
    {"derived dim over an undeclared dim", HEAD "dim n in 1..4\ndim m = 2*q + n   # q?\n", KILN_ERR_MALFORMED,
     "4:11", "'q' is not a declared dim"},
    {"derived dim without an expression", HEAD "dim n in 1..4\ndim m =   # nothing\n", KILN_ERR_MALFORMED, "4:7",
     "expected a shape expression after '='"},
    {"derived dim of two expressions", HEAD "dim n in 1..4\ndim m = n, 2\n", KILN_ERR_MALFORMED, "4:9",
     "a derived dim is one expression, found 2"},
    {"derived dim in a weight shape", HEAD "dim n in 1..4\ndim m = 2*n\nweight w: f32[m] = [1]\n",
     KILN_ERR_INVALID_PROGRAM, "5:8", "weight 'w' axis 0 uses dim 'n'; weight shapes are static"},
    {"check with an unknown rule", HEAD "input x: f32[2]\ncheck x in 0..1\n", KILN_ERR_MALFORMED, "4:9",
     "unknown check rule 'in'; the rules are range MIN..MAX, finite, categories"},
    {"check of an undeclared input", HEAD "input x: f32[2]\ncheck y: finite\n", KILN_ERR_INVALID_PROGRAM, "4:7",
     "'y' is not a declared input; a check applies to an input declared before it"},
    {"check of a weight", HEAD "const w: f32[] = 1\ncheck w: finite\n", KILN_ERR_INVALID_PROGRAM, "4:7",
     "'w' is not an input but a stored tensor"},
    {"check given twice", HEAD "input x: f32[2]\ncheck x: finite\ncheck x: range 0..1\n", KILN_ERR_INVALID_PROGRAM,
     "5:7", "input 'x' already has a check at line 4; give all its rules in one check statement"},
    {"check range reversed", HEAD "input x: f32[2]\ncheck x: range 1..0\n", KILN_ERR_INVALID_PROGRAM, "4:10",
     "range 1..0 is empty: its minimum exceeds its maximum; write range 0..1"},
    {"check range NaN", HEAD "input x: f32[2]\ncheck x: range nan ..1\n", KILN_ERR_INVALID_PROGRAM, "4:16",
     "the minimum of a range cannot be NaN"},
    {"check range NaN glued", HEAD "input x: f32[2]\ncheck x: range 0..nan\n", KILN_ERR_INVALID_PROGRAM, "4:19",
     "the maximum of a range cannot be NaN"},
    {"check range without '..'", HEAD "input x: f32[2]\ncheck x: range 0 1\n", KILN_ERR_MALFORMED, "4:18",
     "expected '..' between the bounds of the range (range MIN..MAX), found '1'"},
    {"check range overflow", HEAD "input x: f32[2]\ncheck x: range 0..1e999\n", KILN_ERR_INVALID_PROGRAM, "4:19",
     "the maximum of the range, 1e999, does not fit f64"},
    {"check rule twice", HEAD "input x: f32[2]\ncheck x: finite, finite\n", KILN_ERR_INVALID_PROGRAM, "4:18",
     "'finite' is given twice in this check"},
    {"check finite on integers", HEAD "input x: i32[2]\ncheck x: finite\n", KILN_ERR_INVALID_PROGRAM, "4:7",
     "input 'x': a finite-only check needs a float input, not i32"},
    {"check categories on floats", HEAD "input x: f32[2]\ncheck x: categories 1, 2\n", KILN_ERR_INVALID_PROGRAM,
     "4:7", "input 'x': categories need an integer input, not f32"},
    {"check categories empty", HEAD "input x: i32[2]\ncheck x: categories []\n", KILN_ERR_INVALID_PROGRAM, "4:21",
     "an empty category list admits no value"},
    {"check categories not integers", HEAD "input x: i32[2]\ncheck x: categories 1.5\n", KILN_ERR_MALFORMED,
     "4:21", "expected the integer categories after 'categories'"},
    {"check trailing comma", HEAD "input x: f32[2]\ncheck x: finite,\n", KILN_ERR_MALFORMED, "4:17",
     "expected a rule after ',': range MIN..MAX"},
    {"check junk after a rule", HEAD "input x: f32[2]\ncheck x: finite 3\n", KILN_ERR_MALFORMED, "4:17",
     "expected ',' or a rule: range MIN..MAX"},
    {"check unit missing", HEAD "input x: f32[2]\ncheck x: unit\n", KILN_ERR_MALFORMED, "4:14",
     "expected the unit after 'unit'"},
    {"check empty unit", HEAD "input x: f32[2]\ncheck x: unit \"\"\n", KILN_ERR_INVALID_PROGRAM, "4:10",
     "the unit is empty"},
    {"check description bare", HEAD "input x: f32[2]\ncheck x: description speed\n", KILN_ERR_MALFORMED, "4:22",
     "expected the description as a string after 'description'"},
    {"check inf glued to '..'", HEAD "input x: f32[2]\ncheck x: range inf..inf\n", KILN_ERR_MALFORMED, "4:16",
     "write a blank between 'inf' and '..'"},
    {"evidence missing an input", EVIDENCE_HEAD "evidence \"e\" { x: f64[1, 2] = [1, 2]  y: f64[1, 2] = [1, 2] }\n",
     KILN_ERR_INVALID_PROGRAM, "9:1", "evidence 'e' does not give input 's'"},
    {"evidence naming an unknown value", EVIDENCE_HEAD "evidence \"e\" { q = file \"w.npy\" }\n",
     KILN_ERR_INVALID_PROGRAM, "9:16", "evidence 'e': 'q' is neither an input nor an output of the program"},
    {"evidence naming a weight", EVIDENCE_HEAD "evidence \"e\" {\n  k: f64[] = 1\n}\n", KILN_ERR_INVALID_PROGRAM,
     "10:3", "'k' is neither an input nor an output"},
    {"evidence tensor dtype mismatch", EVIDENCE_HEAD "evidence \"e\" { s: f32[] = 1 }\n", KILN_ERR_INVALID_PROGRAM,
     "9:19", "evidence 'e': 's' is f32[], but input 's' is f64[]"},
    {"evidence file shape mismatch", EVIDENCE_HEAD "evidence \"e\" { s = file \"w.npy\" }\n",
     KILN_ERR_INVALID_PROGRAM, "9:25", "evidence 'e': 's' is f64[4, 2], but input 's' is f64[]"},
    {"evidence constant axis mismatch", EVIDENCE_HEAD "evidence \"e\" { x: f64[1, 3] = [1, 2, 3] }\n",
     KILN_ERR_INVALID_PROGRAM, "9:19", "evidence 'e': 'x' is f64[1, 3], but input 'x' is f64[n, 2]"},
    {"evidence dim outside its range", EVIDENCE_HEAD "evidence \"e\" { x: f64[0, 2] = []  s: f64[] = 1  "
                                                      "y: f64[0, 2] = [] }\n",
     KILN_ERR_INVALID_PROGRAM, "9:19", "evidence 'e': input 'x' axis 0 (n): 0 is outside 1..4"},
    {"evidence output dtype mismatch", EVIDENCE_HEAD "evidence \"e\" {\n  y: f32[1, 2] = [1, 2]\n}\n",
     KILN_ERR_INVALID_PROGRAM, "10:6", "evidence 'e': 'y' is f32[1, 2], but output 'y' has dtype f64"},
    {"evidence inline value without a type", EVIDENCE_HEAD "evidence \"e\" { s = 1 }\n", KILN_ERR_MALFORMED,
     "9:20", "inline evidence values need their type: write s: DTYPE[EXTENTS] = [v, ...]"},
    {"evidence given twice", EVIDENCE_HEAD "evidence \"e\" { s: f64[] = 1  s: f64[] = 2 }\n",
     KILN_ERR_INVALID_PROGRAM, "9:30", "evidence 'e' gives 's' twice"},
    {"evidence without an output", EVIDENCE_HEAD "evidence \"e\" { x: f64[1, 2] = [1, 2]  s: f64[] = 1 }\n",
     KILN_ERR_INVALID_PROGRAM, "9:1", "evidence 'e' expects no output"},
    {"unknown evidence option", EVIDENCE_HEAD "evidence \"e\" {\n  s: f64[] = 1\n  exactly\n}\n",
     KILN_ERR_MALFORMED, "11:3",
     "unknown evidence option 'exactly'; expected NAME = VALUE, atol, rtol, exact or nan_unequal"},
    {"evidence option twice", EVIDENCE_HEAD "evidence \"e\" { exact atol 0 exact }\n", KILN_ERR_INVALID_PROGRAM,
     "9:29", "evidence option 'exact' is given twice"},
    {"negative tolerance", EVIDENCE_HEAD "evidence \"e\" { rtol -1e-3 }\n", KILN_ERR_INVALID_PROGRAM, "9:21",
     "rtol must be a finite number >= 0, got -1e-3"},
    {"tolerance that is not a number", EVIDENCE_HEAD "evidence \"e\" { atol nan }\n", KILN_ERR_MALFORMED, "9:21",
     "expected a number after 'atol', found 'nan'"},
    {"unterminated evidence block", EVIDENCE_HEAD "evidence \"e\" {\n  s: f64[] = 1\n  exact\n",
     KILN_ERR_MALFORMED, "9:14", "unterminated evidence block: no '}' closes this '{'"},
    {"evidence block cut by the next case", EVIDENCE_HEAD "evidence \"e\" {\n  exact\nevidence \"f\" {\n}\n",
     KILN_ERR_MALFORMED, "9:14", "unterminated evidence block"},
    {"evidence brace on the next line", EVIDENCE_HEAD "evidence \"e\"\n{\n}\n", KILN_ERR_MALFORMED, "9:13",
     "expected '{' after the evidence name, found end of line"},
    {"evidence with an empty name", EVIDENCE_HEAD "evidence \"\" { }\n", KILN_ERR_INVALID_PROGRAM, "9:10",
     "an evidence case needs a non-empty name"},
    {"evidence case twice", EVIDENCE_HEAD EVIDENCE_CASE EVIDENCE_CASE, KILN_ERR_INVALID_PROGRAM, "10:10",
     "evidence 'e' is already declared at line 9"},
    {"statement after evidence", EVIDENCE_HEAD EVIDENCE_CASE "output z = x\n", KILN_ERR_MALFORMED, "10:1",
     "evidence statements come last; 'output' cannot follow them"},
    {"evidence before the output it names", HEAD "input s: f64[]\nevidence \"e\" { s: f64[] = 1  t: f64[] = 1 }\n",
     KILN_ERR_INVALID_PROGRAM, "4:30", "'t' is neither an input nor an output"},
    {"too few values", HEAD "const c: f32[4] = [1, 2, 3]\n", KILN_ERR_INVALID_PROGRAM, "3:27",
     "expected 4 values for f32[4], found 3"},
    {"too many values", HEAD "const c: f32[2, 1] = [1, 2, 3]\n", KILN_ERR_INVALID_PROGRAM, "3:29",
     "too many values: f32[2, 1] holds 2"},
    {"single value for a vector", HEAD "const c: f32[2] = 1\n", KILN_ERR_INVALID_PROGRAM, "3:19",
     "a single value fits only shape []"},
    {"literal out of range", HEAD "const c: i8[2] = [1, 300]\n", KILN_ERR_INVALID_PROGRAM, "3:22",
     "literal 300 does not fit dtype i8"},
    {"operand literal out of range", HEAD "input x: u8[2]\n%0 = add(x, -1)\n", KILN_ERR_INVALID_PROGRAM, "4:13",
     "literal -1 does not fit dtype u8"},
    {"float for an integer", HEAD "const c: i32[] = 1.5\n", KILN_ERR_INVALID_PROGRAM, "3:18",
     "literal 1.5 is not an integer"},
    {"literal with no partner", HEAD "%0 = neg(1)\n", KILN_ERR_INVALID_PROGRAM, "3:10",
     "literal 1 takes its dtype from another operand of 'neg'"},
    {"inexact i64 scalar", HEAD "input x: i64[2]\n%0 = add(x, 9007199254740993)\n", KILN_ERR_INVALID_PROGRAM,
     "4:13", "cannot be passed exactly as a i64 scalar"},
    {"file dtype mismatch", HEAD "weight w: f32[4, 2] = file \"w.npy\"\n", KILN_ERR_INVALID_PROGRAM, "3:28",
     "file 'w.npy' holds f64[4, 2], but 'w' is declared f32[4, 2]"},
    {"file shape mismatch", HEAD "weight w: f64[2, 4] = file \"w.npy\"\n", KILN_ERR_INVALID_PROGRAM, "3:28",
     "file 'w.npy' holds f64[4, 2], but 'w' is declared f64[2, 4]"},
    {"missing file", HEAD "weight w: f32[2] = file \"missing.npy\"\n", KILN_ERR_IO, "3:25", "missing.npy"},
    {"absolute path", HEAD "weight w: f32[2] = file \"/etc/passwd\"\n", KILN_ERR_INVALID_PROGRAM, "3:25",
     "is an absolute path"},
    {"dim in a weight shape", HEAD "dim n in 1..2\nweight w: f32[n] = [1]\n", KILN_ERR_INVALID_PROGRAM, "4:8",
     "weight shapes are static"},
    {"trailing garbage", HEAD "input x: f32[2] extra\n", KILN_ERR_MALFORMED, "3:17",
     "expected end of line after the 'input' statement, found 'extra'"},
    {"missing colon", HEAD "input x f32[2]\n", KILN_ERR_MALFORMED, "3:9",
     "expected ':' after the input name, found 'f32'"},
    {"shape where ':' belongs", HEAD "input x[2]: f32\n", KILN_ERR_MALFORMED, "3:8",
     "expected ':' after the input name, found '['"},
    {"unknown dtype", HEAD "input x: f23[2]\n", KILN_ERR_MALFORMED, "3:10", "unknown dtype 'f23'"},
    {"arity", HEAD "input x: f32[2]\n%0 = neg(x, x)\n", KILN_ERR_INVALID_PROGRAM, "4:6", "op 'neg' takes 1 operand, got 2"},
    {"output of an undefined value", HEAD "input x: f32[2]\noutput y = %9\n", KILN_ERR_INVALID_PROGRAM, "4:12",
     "'%9' is not defined"},
    {"no output", HEAD "input x: f32[2]\n", KILN_ERR_INVALID_PROGRAM, "4:1", "the program has no output"},
    {"broadcast refused at the op", HEAD "dim n in 1..4\ndim m in 1..4\ninput x: f32[n]\ninput z: f32[m]\n"
                                        "\n%0 = add(x, z)\noutput y = %0\n",
     KILN_ERR_INVALID_PROGRAM, "8:1", "node 0 (add): output axis 0: cannot prove"},
    {"dtype mismatch at the op", HEAD "input x: f32[2]\ninput z: f64[2]\n%0 = add(x, z)\n", KILN_ERR_INVALID_PROGRAM,
     "5:1", "node 0 (add)"},
    {"bad number", HEAD "const c: f32[] = 1e\n", KILN_ERR_MALFORMED, "3:18", "bad number '1e'"},
    {"bad number glued to a name", HEAD "dim n in 1..2x\n", KILN_ERR_MALFORMED, "3:13", "bad number '2x'"},
    {"float overflow", HEAD "const c: f32[] = 1e39\n", KILN_ERR_INVALID_PROGRAM, "3:18", "literal 1e39 does not fit dtype f32"},
    {"dim range", HEAD "dim n in 4..2\n", KILN_ERR_INVALID_ARGUMENT, "3:5", "range 4..2 must satisfy 0 <= min <= max"},
    {"dim range separator", HEAD "dim n in 1...2\n", KILN_ERR_MALFORMED, "3:13", "unexpected character '.'"},
    {"duplicate metadata key", HEAD "meta a = \"1\"\nmeta a = \"2\"\n", KILN_ERR_INVALID_PROGRAM, "4:6",
     "metadata key 'a' is already set at line 3"},
    {"mode twice", HEAD "mode inference\nmode training\n", KILN_ERR_INVALID_PROGRAM, "4:1", "the mode is already set"},
    {"unknown mode", HEAD "mode eval\n", KILN_ERR_MALFORMED, "3:6", "expected 'inference' or 'training'"},
    {"program twice", HEAD "program \"q\"\n", KILN_ERR_INVALID_PROGRAM, "3:1", "'program' appears once"},
    {"control character in a string", "kiln 1.0\nprogram \"a\x01\"\n", KILN_ERR_MALFORMED, "2:11",
     "control character byte 0x01 in a string"},
    {"stray byte", HEAD "input x: f32[2] @\n", KILN_ERR_MALFORMED, "3:17", "unexpected character '@'"},
    {"columns count code points", HEAD "meta \"\xc3\xa9\xc3\xa9\" = \"\xe2\x82\xac\" extra\n", KILN_ERR_MALFORMED,
     "3:17", "found 'extra'"},
    {"deep parentheses", HEAD "input x: f32[((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))"
                              "))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))]\n",
     KILN_ERR_MALFORMED, "3:78", "parentheses nest deeper than 64"},
    {"operand after attribute", HEAD "input x: f32[2]\n%0 = add(x, a=1, x)\n", KILN_ERR_MALFORMED, "4:18",
     "operands of 'add' come before its attributes"},
};

static void malformed_texts_fail_at_the_right_place(void **state)
{
    (void)state;
    char *dir = make_dir("bad");
    int64_t shape[2] = {4, 2};
    kiln_tensor *w;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, shape, &w, &err), KILN_OK);
    char *w_path = path_in(dir, "w.npy");
    assert_int_equal(kiln_npy_write_file(w_path, w, &err), KILN_OK);
    kiln_tensor_free(w);
    free(w_path);
    assert_true(sizeof bad_texts / sizeof bad_texts[0] >= 20);
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        const bad_text *t = &bad_texts[i];
        kiln_builder *b = (kiln_builder *)&err; /* must come back NULL */
        kiln_status status = kiln_text_assemble(t->text, strlen(t->text), "t.ktxt", dir, &b, &err);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "t.ktxt:%s: ", t->place);
        if (status != t->code || strncmp(err.message, prefix, strlen(prefix)) != 0 ||
            !strstr(err.message, t->fragment) || b != NULL)
            fail_msg("%s: expected status %d and \"%s%s\"\n  got status %d: %s", t->what, (int)t->code, prefix,
                     t->fragment, (int)status, err.message);
        assert_int_equal(err.code, status);
    }
    free(dir);
}

/* ------------------------------------------------ files stay in the folder */

/* Assemble `text` with its files under `dir`; the builder is freed. */
static kiln_status assemble_in(const char *dir, const char *text, kiln_error *err)
{
    kiln_builder *b = NULL;
    kiln_status status = kiln_text_assemble(text, strlen(text), "t.ktxt", dir, &b, err);
    kiln_builder_free(b);
    return status;
}

/* Expect `text` under `dir` to fail with `code` and a message holding `fragment`. */
static void expect_refused(const char *dir, const char *text, kiln_status code, const char *fragment)
{
    kiln_error err;
    kiln_status status = assemble_in(dir, text, &err);
    if (status != code || !strstr(err.message, fragment))
        fail_msg("expected status %d and \"%s\"\n  got status %d: %s", (int)code, fragment, (int)status,
                 status == KILN_OK ? "(assembled)" : err.message);
}

#define WEIGHT_FILE(path) HEAD "input x: f32[2]\nweight w: f32[2] = file \"" path "\"\n%0 = add(x, w)\noutput y = %0\n"

/*
 * Regression: `file "PATH"` was joined onto the text's folder and read with
 * no further check, so a text embedded any readable .npy (`../../x.npy`, or
 * a link leading out), hung on a FIFO, and read /dev/zero until realloc
 * failed. Now files are confined to the folder, must be regular files and
 * may be no larger than their declaration allows; the alarm turns a hang
 * back into a failure.
 */
static void file_references_stay_in_the_folder(void **state)
{
    (void)state;
    char *root = make_dir("confine");
    char *dir = path_in(root, "text");
    char *sub = path_in(dir, "sub");
    char command[1024];
    snprintf(command, sizeof command, "mkdir -p '%s'", sub);
    assert_int_equal(system(command), 0);
    float values[2] = {1.5f, -2.0f};
    kiln_tensor *w = tensor_of(KILN_F32, 1, (const int64_t[]){2}, values);
    kiln_error err;
    const char *files[] = {"w.npy", "sub/w.npy", "../secret.npy"};
    for (int i = 0; i < 3; i++) {
        char *path = path_in(dir, files[i]);
        assert_int_equal(kiln_npy_write_file(path, w, &err), KILN_OK);
        free(path);
    }
    kiln_tensor_free(w);
    char *link_out = path_in(dir, "link.npy"), *link_in = path_in(dir, "inlink.npy");
    char *fifo = path_in(dir, "fifo.npy"), *big = path_in(dir, "big.npy");
    char *dir_link = path_in(root, "text-link");
    assert_int_equal(symlink("../secret.npy", link_out), 0);
    assert_int_equal(symlink("sub/w.npy", link_in), 0);
    assert_int_equal(symlink("text", dir_link), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* A sparse gigabyte: a regular file as large as /dev/zero is endless, read by no one. */
    FILE *f = fopen(big, "wb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (1L << 30) - 1, SEEK_SET), 0);
    assert_int_equal(fputc(0, f), 0);
    assert_int_equal(fclose(f), 0);

    alarm(20);
    /* Inside the folder, directly, below it, through a link that stays inside, and from a linked folder. */
    assert_int_equal(assemble_in(dir, WEIGHT_FILE("w.npy"), &err), KILN_OK);
    assert_int_equal(assemble_in(dir, WEIGHT_FILE("sub/w.npy"), &err), KILN_OK);
    assert_int_equal(assemble_in(dir, WEIGHT_FILE("./sub//w.npy"), &err), KILN_OK);
    assert_int_equal(assemble_in(dir, WEIGHT_FILE("inlink.npy"), &err), KILN_OK);
    assert_int_equal(assemble_in(dir_link, WEIGHT_FILE("w.npy"), &err), KILN_OK);
    /* Out of it. */
    expect_refused(dir, WEIGHT_FILE("../secret.npy"), KILN_ERR_INVALID_PROGRAM, "t.ktxt:4:25: file '../secret.npy' "
                                                                                 "leaves the text's folder ('..')");
    expect_refused(dir, WEIGHT_FILE("sub/../w.npy"), KILN_ERR_INVALID_PROGRAM, "leaves the text's folder");
    expect_refused(dir, WEIGHT_FILE("../../../../../../../../dev/zero"), KILN_ERR_INVALID_PROGRAM,
                   "leaves the text's folder");
    expect_refused(dir, WEIGHT_FILE("/dev/zero"), KILN_ERR_INVALID_PROGRAM, "is an absolute path");
    expect_refused(dir, WEIGHT_FILE("link.npy"), KILN_ERR_INVALID_PROGRAM, "outside the text's folder");
    expect_refused(dir_link, WEIGHT_FILE("link.npy"), KILN_ERR_INVALID_PROGRAM, "outside the text's folder");
    /* Not regular files. */
    expect_refused(dir, WEIGHT_FILE("fifo.npy"), KILN_ERR_IO, "file 'fifo.npy' is a FIFO, not a regular file");
    expect_refused(dir, WEIGHT_FILE("sub"), KILN_ERR_IO, "file 'sub' is a directory, not a regular file");
    /* Larger than the declaration can be: refused from its size, before it is read. */
    expect_refused(dir, WEIGHT_FILE("big.npy"), KILN_ERR_LIMIT,
                   "file 'big.npy' is 1073741824 bytes, more than a .npy of f32[2] can be");
    expect_refused(dir,
                   HEAD "dim n in 1..4\ninput x: f32[n, 2]\n%0 = neg(x)\noutput y = %0\n"
                        "evidence \"e\" { x = file \"big.npy\" }\n",
                   KILN_ERR_LIMIT, "more than a .npy of input 'x' f32[n, 2] at its dims' upper bounds can be");
    expect_refused(dir,
                   HEAD "input x: f32[2]\n%0 = neg(x)\noutput y = %0\n"
                        "evidence \"e\" { x = file \"w.npy\"  y = file \"fifo.npy\" }\n",
                   KILN_ERR_IO, "is a FIFO");
    expect_refused(dir,
                   HEAD "input x: f32[2]\n%0 = neg(x)\noutput y = %0\n"
                        "evidence \"e\" { x: f32[2] = file \"link.npy\" }\n",
                   KILN_ERR_INVALID_PROGRAM, "outside the text's folder");
    alarm(0);

    unlink(fifo);
    unlink(big);
    free(link_out);
    free(link_in);
    free(fifo);
    free(big);
    free(dir_link);
    free(sub);
    free(dir);
    free(root);
}

/* Every prefix and many one-byte mutations of a valid text: no crash, and
 * every failure names a place. */
static void damaged_texts_never_crash(void **state)
{
    (void)state;
    const char *base = "kiln 1.0\nprogram \"d\"\nmeta k = \"v\\x41\"\ndim n in 1..4\n"
                       "input x: f32[n, 2*n + 1]\nconst c: f32[3] = [1, -inf, 2.5e3]\n"
                       "%a = add(x, 1)\n%b = mul(%a, x, q=[1, \"s\"])\noutput y = %a\n";
    size_t length = strlen(base);
    char *copy = malloc(length + 1);
    assert_non_null(copy);
    uint32_t seed = 12345;
    for (size_t cut = 0; cut <= length; cut++) {
        kiln_builder *b = NULL;
        kiln_error err;
        if (kiln_text_assemble(base, cut, "d.ktxt", "/nonexistent", &b, &err) == KILN_OK)
            kiln_builder_free(b);
        else
            assert_true(strncmp(err.message, "d.ktxt:", 7) == 0 || err.code == KILN_ERR_OUT_OF_MEMORY);
    }
    static const char alphabet[] = "\0\n\"\\%[](),:=.-#x19eE \xc3\xff";
    for (int round = 0; round < 4000; round++) {
        memcpy(copy, base, length + 1);
        for (int edits = 0; edits < 1 + round % 3; edits++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % length;
            seed = seed * 1103515245u + 12345u;
            copy[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        kiln_builder *b = NULL;
        kiln_error err;
        if (kiln_text_assemble(copy, length, "d.ktxt", "/nonexistent", &b, &err) == KILN_OK) {
            void *bytes;
            size_t size;
            if (kiln_builder_encode(b, NULL, &bytes, &size, &err) == KILN_OK)
                free(bytes);
            kiln_builder_free(b);
        }
    }
    free(copy);
}

static void arguments_are_checked(void **state)
{
    (void)state;
    kiln_builder *b = NULL;
    kiln_error err;
    char *text = NULL;
    assert_int_equal(kiln_text_assemble(NULL, 4, "x", NULL, &b, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_text_assemble("", 0, "x", NULL, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_text_disassemble(NULL, NULL, &text, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_null(text);
    /* A NULL source name still gives a place. */
    assert_int_equal(kiln_text_assemble("kiln 3.0", 8, NULL, NULL, &b, &err), KILN_ERR_UNSUPPORTED_VERSION);
    assert_contains(err.message, "<text>:1:6: ");
}

static int remove_work_dir(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", work_dir);
    return system(command) == 0 ? 0 : -1;
}

int main(void)
{
    /* Byte comparisons and canonical texts assume no timestamp metadata. */
    unsetenv("SOURCE_DATE_EPOCH");
    if (!mkdtemp(work_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scale_text_seals_the_same_bytes_as_the_c_example),
        cmocka_unit_test(disassembly_is_canonical_and_a_fixed_point),
        cmocka_unit_test(c1_controls_are_spelled_out),
        cmocka_unit_test(every_dtype_round_trips_through_files),
        cmocka_unit_test(float_constants_inline_exactly),
        cmocka_unit_test(literal_spelling_reads_back_bit_for_bit),
        cmocka_unit_test(half_literals_round_once_and_read_back),
        cmocka_unit_test(half_programs_round_trip),
        cmocka_unit_test(disassembly_without_a_directory_names_digests),
        cmocka_unit_test(the_tour_parses_as_written),
        cmocka_unit_test(layout_comments_and_names_are_free),
        cmocka_unit_test(dims_multiple_of_and_derived_dims_round_trip),
        cmocka_unit_test(checks_round_trip_byte_exact),
        cmocka_unit_test(check_specs_parse),
        cmocka_unit_test(evidence_round_trips),
        cmocka_unit_test(evidence_as_users_write_it),
        cmocka_unit_test(evidence_with_rules_per_output_is_refused),
        cmocka_unit_test(attributes_print_in_stored_order),
        cmocka_unit_test(malformed_texts_fail_at_the_right_place),
        cmocka_unit_test(file_references_stay_in_the_folder),
        cmocka_unit_test(damaged_texts_never_crash),
        cmocka_unit_test(arguments_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, remove_work_dir);
}
