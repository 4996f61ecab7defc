/*
 * test_cursor.c — the bounds-checked cursor of format/cursor.h, the only
 * way kiln reads or writes encoded bytes.
 *
 * Every reader is checked three ways: the little-endian value it returns
 * from known bytes, an exact fit (the reader may end the range), and one
 * byte short, which must fail with KILN_ERR_MALFORMED, say "needs N bytes
 * at offset P but only R remain" with the reader's context, and leave the
 * position and the output untouched. Strings and counts add their limits;
 * the writer is checked byte for byte and for its sticky failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/cursor.h"

/* Bytes 01 02 03 ... 10: every reader's result names the bytes it took. */
static const uint8_t counting[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                     0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};

static void assert_message(const kiln_error *err, const char *expected)
{
    if (strcmp(err->message, expected) != 0)
        fail_msg("message \"%s\", expected \"%s\"", err->message, expected);
}

static void readers_take_little_endian_values(void **state)
{
    (void)state;
    kiln_reader r;
    kiln_error err;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    kiln_reader_init(&r, counting, 15, "counting");
    assert_int_equal(kiln_read_u8(&r, &u8, &err), KILN_OK);
    assert_int_equal(u8, 0x01);
    assert_int_equal(kiln_read_u16(&r, &u16, &err), KILN_OK);
    assert_int_equal(u16, 0x0302);
    assert_int_equal(kiln_read_u32(&r, &u32, &err), KILN_OK);
    assert_int_equal(u32, 0x07060504);
    assert_int_equal(kiln_read_u64(&r, &u64, &err), KILN_OK);
    assert_int_equal(u64, 0x0f0e0d0c0b0a0908ull);
    assert_int_equal(r.pos, 15);
    assert_int_equal(kiln_reader_remaining(&r), 0);
}

static void signed_and_float_readers_keep_the_bits(void **state)
{
    (void)state;
    uint8_t bytes[16];
    kiln_store_u64(bytes, 0xfffffffffffffffeull);  /* -2 */
    kiln_store_u64(bytes + 8, 0xbff8000000000000ull); /* -1.5 */
    kiln_reader r;
    kiln_error err;
    int64_t i;
    double f;
    kiln_reader_init(&r, bytes, sizeof bytes, NULL);
    assert_int_equal(kiln_read_i64(&r, &i, &err), KILN_OK);
    assert_int_equal(i, -2);
    assert_int_equal(kiln_read_f64(&r, &f, &err), KILN_OK);
    assert_true(f == -1.5);
    assert_int_equal(kiln_reader_remaining(&r), 0);
}

/* One fixed-width reader, one byte short of what it needs. */
typedef kiln_status (*fixed_reader)(kiln_reader *r, void *out, kiln_error *err);

static kiln_status read_u8_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_u8(r, out, err); }
static kiln_status read_u16_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_u16(r, out, err); }
static kiln_status read_u32_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_u32(r, out, err); }
static kiln_status read_u64_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_u64(r, out, err); }
static kiln_status read_i64_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_i64(r, out, err); }
static kiln_status read_f64_into(kiln_reader *r, void *out, kiln_error *err) { return kiln_read_f64(r, out, err); }

static void every_reader_refuses_one_byte_short(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        fixed_reader read;
        size_t width;
    } readers[] = {
        {"u8", read_u8_into, 1},   {"u16", read_u16_into, 2}, {"u32", read_u32_into, 4},
        {"u64", read_u64_into, 8}, {"i64", read_i64_into, 8}, {"f64", read_f64_into, 8},
    };
    for (size_t k = 0; k < sizeof readers / sizeof readers[0]; k++) {
        /* Start at offset 3 so the message's offset is the reader's, not 0. */
        kiln_reader r;
        kiln_error err = {0};
        uint8_t out[8];
        const uint8_t *skipped;
        kiln_reader_init(&r, counting, 3 + readers[k].width - 1, "the table");
        assert_int_equal(kiln_read_bytes(&r, 3, &skipped, &err), KILN_OK);
        memset(out, 0xA5, sizeof out);
        assert_int_equal(readers[k].read(&r, out, &err), KILN_ERR_MALFORMED);
        assert_int_equal(err.code, KILN_ERR_MALFORMED);
        char expected[128];
        snprintf(expected, sizeof expected, "the table: needs %zu bytes at offset 3 but only %zu remain",
                 readers[k].width, readers[k].width - 1);
        assert_message(&err, expected);
        assert_int_equal(r.pos, 3);
        for (size_t b = 0; b < sizeof out; b++)
            assert_int_equal(out[b], 0xA5);

        /* The exact fit succeeds and ends the range. */
        kiln_reader_init(&r, counting, readers[k].width, "the table");
        assert_int_equal(readers[k].read(&r, out, &err), KILN_OK);
        assert_int_equal(kiln_reader_remaining(&r), 0);
        assert_int_equal(readers[k].read(&r, out, &err), KILN_ERR_MALFORMED);
        if (!strstr(err.message, "only 0 remain"))
            fail_msg("%s at the end: %s", readers[k].name, err.message);
    }
}

static void an_empty_range_refuses_everything_but_nothing(void **state)
{
    (void)state;
    kiln_reader r;
    kiln_error err;
    uint8_t u8 = 7;
    const uint8_t *bytes = NULL;
    kiln_reader_init(&r, counting, 0, NULL);
    assert_int_equal(kiln_read_u8(&r, &u8, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "data: needs 1 bytes at offset 0 but only 0 remain"); /* NULL context reads "data" */
    assert_int_equal(u8, 7);
    assert_int_equal(kiln_read_bytes(&r, 0, &bytes, &err), KILN_OK);
    assert_ptr_equal(bytes, counting);
    assert_int_equal(kiln_reader_expect_end(&r, &err), KILN_OK);
}

static void bytes_are_borrowed_in_place(void **state)
{
    (void)state;
    kiln_reader r;
    kiln_error err;
    const uint8_t *bytes = NULL;
    kiln_reader_init(&r, counting, sizeof counting, "blob");
    assert_int_equal(kiln_read_bytes(&r, 5, &bytes, &err), KILN_OK);
    assert_ptr_equal(bytes, counting);
    assert_int_equal(kiln_read_bytes(&r, 11, &bytes, &err), KILN_OK);
    assert_ptr_equal(bytes, counting + 5);
    bytes = NULL;
    assert_int_equal(kiln_read_bytes(&r, 1, &bytes, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "blob: needs 1 bytes at offset 16 but only 0 remain");
    assert_null(bytes);
    /* A huge request is refused by the remaining-bytes check, not by overflow. */
    kiln_reader_init(&r, counting, sizeof counting, "blob");
    assert_int_equal(kiln_read_bytes(&r, SIZE_MAX, &bytes, &err), KILN_ERR_MALFORMED);
    assert_int_equal(r.pos, 0);
}

/* A u32 length and then the string's bytes. */
static size_t encode_string(uint8_t *out, uint32_t length, const char *bytes)
{
    kiln_store_u32(out, length);
    memcpy(out + 4, bytes, length);
    return 4 + length;
}

static void strings_are_copied_and_terminated(void **state)
{
    (void)state;
    uint8_t bytes[32];
    size_t size = encode_string(bytes, 5, "kilns");
    size += encode_string(bytes + size, 0, "");
    kiln_reader r;
    kiln_error err;
    char *s = NULL;
    kiln_reader_init(&r, bytes, size, "names");
    assert_int_equal(kiln_read_string(&r, 5, &s, &err), KILN_OK);
    assert_string_equal(s, "kilns");
    assert_true(s != (char *)bytes + 4);
    free(s);
    assert_int_equal(kiln_read_string(&r, 5, &s, &err), KILN_OK);
    assert_string_equal(s, "");
    free(s);
    assert_int_equal(kiln_reader_expect_end(&r, &err), KILN_OK);
}

static void strings_refuse_their_limit_nul_and_truncation(void **state)
{
    (void)state;
    uint8_t bytes[32];
    kiln_reader r;
    kiln_error err;
    char *s = NULL;

    size_t size = encode_string(bytes, 5, "kilns");
    kiln_reader_init(&r, bytes, size, "names");
    assert_int_equal(kiln_read_string(&r, 4, &s, &err), KILN_ERR_LIMIT);
    assert_message(&err, "names: string at offset 0 is 5 bytes, limit is 4");
    assert_null(s);

    size = encode_string(bytes, 3, "a\0b");
    kiln_reader_init(&r, bytes, size, "names");
    assert_int_equal(kiln_read_string(&r, 16, &s, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "names: string at offset 0 contains a NUL byte");
    assert_null(s);

    /* A length the range cannot hold: refused before anything is allocated. */
    size = encode_string(bytes, 3, "abc");
    kiln_store_u32(bytes, 4);
    kiln_reader_init(&r, bytes, size, "names");
    assert_int_equal(kiln_read_string(&r, 16, &s, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "names: needs 4 bytes at offset 4 but only 3 remain");
    assert_null(s);

    /* Not even the length fits. */
    kiln_reader_init(&r, bytes, 3, "names");
    assert_int_equal(kiln_read_string(&r, 16, &s, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "names: needs 4 bytes at offset 0 but only 3 remain");
}

static void counts_are_bounded_by_limit_and_remaining_bytes(void **state)
{
    (void)state;
    uint8_t bytes[4 + 24] = {0};
    kiln_reader r;
    kiln_error err;
    uint32_t count = 99;

    /* 3 items of 8 bytes: exactly what remains. */
    kiln_store_u32(bytes, 3);
    kiln_reader_init(&r, bytes, sizeof bytes, "dims");
    assert_int_equal(kiln_read_count(&r, 3, 8, "dims", &count, &err), KILN_OK);
    assert_int_equal(count, 3);
    assert_int_equal(kiln_reader_remaining(&r), 24);

    /* Over the limit. */
    count = 99;
    kiln_reader_init(&r, bytes, sizeof bytes, "dims");
    assert_int_equal(kiln_read_count(&r, 2, 8, "dims", &count, &err), KILN_ERR_LIMIT);
    assert_message(&err, "dims: 3 dims exceeds the limit of 2");
    assert_int_equal(count, 99);

    /* One item more than the bytes left can hold. */
    kiln_store_u32(bytes, 4);
    kiln_reader_init(&r, bytes, sizeof bytes, "dims");
    assert_int_equal(kiln_read_count(&r, 100, 8, "dims", &count, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "dims: claims 4 dims but only 24 bytes remain");
    assert_int_equal(count, 99);

    /* Items of no minimum size are bounded by the limit alone. */
    kiln_store_u32(bytes, 1000);
    kiln_reader_init(&r, bytes, 4, "flags");
    assert_int_equal(kiln_read_count(&r, 1000, 0, "flags", &count, &err), KILN_OK);
    assert_int_equal(count, 1000);
}

static void expect_end_counts_trailing_bytes(void **state)
{
    (void)state;
    kiln_reader r;
    kiln_error err;
    uint32_t u32;
    kiln_reader_init(&r, counting, 7, "section");
    assert_int_equal(kiln_read_u32(&r, &u32, &err), KILN_OK);
    assert_int_equal(kiln_reader_expect_end(&r, &err), KILN_ERR_MALFORMED);
    assert_message(&err, "section: 3 unexpected trailing bytes");
}

static void loads_and_stores_are_little_endian(void **state)
{
    (void)state;
    uint8_t bytes[8];
    kiln_store_u16(bytes, 0xBEEF);
    assert_int_equal(bytes[0], 0xEF);
    assert_int_equal(bytes[1], 0xBE);
    assert_int_equal(kiln_load_u16(bytes), 0xBEEF);
    kiln_store_u32(bytes, 0x89ABCDEFu);
    assert_memory_equal(bytes, ((const uint8_t[]){0xEF, 0xCD, 0xAB, 0x89}), 4);
    assert_int_equal(kiln_load_u32(bytes), 0x89ABCDEFu);
    kiln_store_u64(bytes, 0x0123456789ABCDEFull);
    assert_memory_equal(bytes, ((const uint8_t[]){0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01}), 8);
    assert_int_equal(kiln_load_u64(bytes), 0x0123456789ABCDEFull);
    assert_int_equal(kiln_load_u64(counting), 0x0807060504030201ull);
}

static void the_writer_appends_little_endian_bytes(void **state)
{
    (void)state;
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    kiln_write_u8(&w, 0x01);
    kiln_write_u16(&w, 0x0302);
    kiln_write_u32(&w, 0x07060504);
    kiln_write_u64(&w, 0x0f0e0d0c0b0a0908ull);
    kiln_write_bytes(&w, counting + 15, 1);
    kiln_write_bytes(&w, NULL, 0); /* nothing, and no dereference */
    assert_int_equal(kiln_writer_finish(&w, &err), KILN_OK);
    assert_int_equal(w.size, 16);
    assert_memory_equal(w.data, counting, 16);

    kiln_write_i64(&w, -2);
    kiln_write_f64(&w, -1.5);
    kiln_write_zeros(&w, 3);
    kiln_write_string(&w, "ab");
    static const uint8_t tail[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* -2 */
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0xbf, /* -1.5 */
                                   0x00, 0x00, 0x00,                               /* zeros */
                                   0x02, 0x00, 0x00, 0x00, 'a',  'b'};             /* no NUL */
    assert_int_equal(w.size, 16 + sizeof tail);
    assert_memory_equal(w.data + 16, tail, sizeof tail);
    assert_int_equal(kiln_writer_finish(&w, &err), KILN_OK);

    kiln_writer_release(&w);
    assert_null(w.data);
    assert_int_equal(w.size, 0);
    assert_int_equal(w.capacity, 0);
}

static void the_writer_grows_past_its_first_block(void **state)
{
    (void)state;
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    for (uint32_t i = 0; i < 1000; i++)
        kiln_write_u32(&w, i);
    assert_int_equal(kiln_writer_finish(&w, &err), KILN_OK);
    assert_int_equal(w.size, 4000);
    assert_true(w.capacity >= w.size);
    kiln_reader r;
    kiln_reader_init(&r, w.data, w.size, "grown");
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t v;
        assert_int_equal(kiln_read_u32(&r, &v, &err), KILN_OK);
        assert_int_equal(v, i);
    }
    kiln_writer_release(&w);
}

/* A failed append is sticky: later writes are dropped and finish reports it once. */
static void a_writer_failure_is_sticky(void **state)
{
    (void)state;
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    kiln_write_u32(&w, 1);
    kiln_write_bytes(&w, counting, SIZE_MAX - 2); /* more than any buffer can grow to */
    assert_true(w.failed);
    assert_int_equal(w.size, 4);
    kiln_write_u32(&w, 2);
    kiln_write_string(&w, "dropped");
    assert_int_equal(w.size, 4);
    assert_int_equal(kiln_writer_finish(&w, &err), KILN_ERR_OUT_OF_MEMORY);
    assert_message(&err, "out of memory while encoding");
    kiln_writer_release(&w);
    assert_false(w.failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers_take_little_endian_values),
        cmocka_unit_test(signed_and_float_readers_keep_the_bits),
        cmocka_unit_test(every_reader_refuses_one_byte_short),
        cmocka_unit_test(an_empty_range_refuses_everything_but_nothing),
        cmocka_unit_test(bytes_are_borrowed_in_place),
        cmocka_unit_test(strings_are_copied_and_terminated),
        cmocka_unit_test(strings_refuse_their_limit_nul_and_truncation),
        cmocka_unit_test(counts_are_bounded_by_limit_and_remaining_bytes),
        cmocka_unit_test(expect_end_counts_trailing_bytes),
        cmocka_unit_test(loads_and_stores_are_little_endian),
        cmocka_unit_test(the_writer_appends_little_endian_bytes),
        cmocka_unit_test(the_writer_grows_past_its_first_block),
        cmocka_unit_test(a_writer_failure_is_sticky),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
