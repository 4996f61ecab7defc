/*
 * test_container.c — the kiln container of format/container.h on its own,
 * without programs: the bytes the writer lays out (header fields, section
 * table, 64-byte alignment, zero gaps, trailer), and the exact status the
 * parser and the section reader give for each kind of damage.
 *
 * Damage to a field a checksum covers is made twice where it matters: once
 * raw (the checksum must catch it) and once with the checksums recomputed
 * (the structural check behind it must catch it). Whether an unknown
 * section type is acceptable is the loader's judgment, not the
 * container's: the container carries the critical flag (checked here) and
 * tests/runtime/test_corruption.c checks the loader's verdicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/container.h"
#include "format/cursor.h"
#include "format/hashing.h"

#define ZZZZ KILN_FOURCC('Z', 'Z', 'Z', 'Z')
#define META KILN_FOURCC('M', 'E', 'T', 'A')

static const kiln_container_limits roomy = {
    .max_sections = 16,
    .max_section_raw_size = 1u << 20,
    .max_decompressed_size = 1u << 20,
};

/* An artifact laid out by the writer; `bytes` is owned. */
typedef struct artifact {
    uint8_t *bytes;
    size_t size;
} artifact;

static artifact encode(const kiln_section_spec *sections, uint32_t count, uint16_t minor, uint64_t features)
{
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    kiln_status status = kiln_container_encode_progress(sections, count, minor, features, &w, NULL, &err);
    if (status != KILN_OK)
        fail_msg("encode: %s", err.message);
    return (artifact){w.data, w.size};
}

/* Two sections: a 10-byte critical one (so the next must skip to 128) and a 3-byte ancillary one. */
static const uint8_t first_bytes[10] = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9'};
static const uint8_t second_bytes[3] = {0xAA, 0xBB, 0xCC};

static artifact two_sections(void)
{
    const kiln_section_spec sections[] = {
        {.type = META, .flags = KILN_SECTION_CRITICAL, .version = 3, .data = first_bytes, .size = 10},
        {.type = ZZZZ, .flags = 0, .version = 9, .data = second_bytes, .size = 3},
    };
    return encode(sections, 2, 0, 0);
}

static kiln_status parse(const artifact *a, size_t size, kiln_container *c, kiln_error *err)
{
    return kiln_container_parse(a->bytes, size, &roomy, c, err);
}

/* Parsing `size` bytes of `a` fails with `status` and a message holding `fragment`. */
static void expect_refused(const artifact *a, size_t size, kiln_status status, const char *fragment)
{
    kiln_container c;
    kiln_error err = {0};
    kiln_status got = parse(a, size, &c, &err);
    if (got != status)
        fail_msg("status %d, expected %d (%s)", (int)got, (int)status, err.message);
    if (!strstr(err.message, fragment))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, fragment);
    assert_null(c.sections); /* released on failure */
}

static uint8_t *table_entry(const artifact *a, uint32_t index)
{
    return a->bytes + kiln_load_u64(a->bytes + 24) + (uint64_t)index * KILN_TABLE_ENTRY_SIZE;
}

/* Recompute the table CRC (in the header) and then the header CRC, after an edit. */
static void reseal(artifact *a)
{
    uint32_t count = kiln_load_u32(a->bytes + 32);
    kiln_store_u32(a->bytes + 36, kiln_crc32(table_entry(a, 0), (uint64_t)count * KILN_TABLE_ENTRY_SIZE));
    kiln_store_u32(a->bytes + 60, kiln_crc32(a->bytes, 60));
}

static void reseal_trailer(artifact *a)
{
    uint8_t *t = a->bytes + a->size - KILN_TRAILER_SIZE;
    kiln_store_u32(t + 124, kiln_crc32(t, 124));
}

/* ------------------------------------------------------------ layout */

static void header_fields_are_written_where_the_format_says(void **state)
{
    (void)state;
    artifact a = two_sections();
    const uint8_t *h = a.bytes;
    assert_memory_equal(h, ((const uint8_t[]){0x89, 'K', 'L', 'N', '\r', '\n', 0x1a, '\n'}), 8);
    assert_memory_equal(h, kiln_magic, 8);
    assert_int_equal(kiln_load_u16(h + 8), KILN_FORMAT_MAJOR);
    assert_int_equal(kiln_load_u16(h + 10), 0);
    assert_int_equal(kiln_load_u32(h + 12), KILN_HEADER_SIZE);
    assert_int_equal(kiln_load_u64(h + 16), a.size);
    /* Sections at 64 (10 bytes) and 128 (3 bytes); the table at the next multiple of 8. */
    assert_int_equal(kiln_load_u64(h + 24), 136);
    assert_int_equal(kiln_load_u32(h + 32), 2);
    assert_int_equal(kiln_load_u32(h + 36), kiln_crc32(a.bytes + 136, 2 * KILN_TABLE_ENTRY_SIZE));
    assert_int_equal(kiln_load_u64(h + 40), 0);
    for (int i = 48; i < 60; i++)
        assert_int_equal(h[i], 0);
    assert_int_equal(kiln_load_u32(h + 60), kiln_crc32(h, 60));
    assert_int_equal(a.size, 136 + 2 * KILN_TABLE_ENTRY_SIZE + KILN_TRAILER_SIZE);

    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.major, KILN_FORMAT_MAJOR);
    assert_int_equal(c.minor, 0);
    assert_int_equal(c.size, a.size);
    assert_int_equal(c.table_offset, 136);
    assert_int_equal(c.section_count, 2);
    assert_int_equal(c.features, 0);
    assert_int_equal(c.trailer_flags, 0);
    kiln_container_release(&c);
    assert_null(c.sections);
    free(a.bytes);
}

static void minor_and_feature_bits_are_carried(void **state)
{
    (void)state;
    const kiln_section_spec one = {.type = META, .flags = KILN_SECTION_CRITICAL, .data = first_bytes, .size = 10};
    /* A feature bit this runtime does not know: the container reports it, the loader judges it. */
    artifact a = encode(&one, 1, 1, KILN_FEATURE_HALF_PRECISION | UINT64_C(1) << 40);
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.minor, 1);
    assert_int_equal(c.features, KILN_FEATURE_HALF_PRECISION | UINT64_C(1) << 40);
    kiln_container_release(&c);
    free(a.bytes);
}

static void the_section_table_describes_each_section(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);

    const kiln_section_entry *s = &c.sections[0];
    assert_int_equal(s->type, META);
    assert_memory_equal(table_entry(&a, 0), "META", 4); /* type codes in file byte order */
    assert_int_equal(s->flags, KILN_SECTION_CRITICAL);
    assert_int_equal(s->version, 3);
    assert_int_equal(s->offset, 64);
    assert_int_equal(s->stored_size, 10);
    assert_int_equal(s->raw_size, 10);
    assert_int_equal(s->crc, kiln_crc32(first_bytes, 10));
    uint8_t hash[KILN_DIGEST_SIZE];
    kiln_blake2b_256(first_bytes, 10, hash);
    assert_memory_equal(s->hash, hash, KILN_DIGEST_SIZE);

    s = &c.sections[1];
    assert_int_equal(s->type, ZZZZ);
    assert_int_equal(s->flags, 0);
    assert_int_equal(s->version, 9);
    assert_int_equal(s->offset, 128);
    assert_int_equal(s->stored_size, 3);
    assert_int_equal(kiln_load_u32(table_entry(&a, 1) + 36), 0); /* reserved */

    assert_int_equal(kiln_container_find(&c, META), 0);
    assert_int_equal(kiln_container_find(&c, ZZZZ), 1);
    assert_int_equal(kiln_container_find(&c, KILN_FOURCC('N', 'O', 'N', 'E')), -1);

    char text[5];
    kiln_fourcc_text(ZZZZ, text);
    assert_string_equal(text, "ZZZZ");
    kiln_fourcc_text(KILN_FOURCC('A', 0x01, 0x7f, 'b'), text);
    assert_string_equal(text, "A??b");
    kiln_container_release(&c);
    free(a.bytes);
}

static void sections_are_aligned_and_gaps_are_zero(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    for (uint32_t i = 0; i < c.section_count; i++)
        assert_int_equal(c.sections[i].offset % KILN_SECTION_ALIGNMENT, 0);
    for (size_t at = 74; at < 128; at++)
        assert_int_equal(a.bytes[at], 0);
    assert_int_equal(kiln_container_verify_gaps(&c, &err), KILN_OK);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_OK);

    /* A gap byte is covered by no checksum: only the gap check sees it. */
    a.bytes[100] = 1;
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_OK);
    assert_int_equal(kiln_container_verify_gaps(&c, &err), KILN_ERR_MALFORMED);
    assert_string_equal(err.message, "non-zero byte at offset 100 between sections");
    a.bytes[100] = 0;
    a.bytes[133] = 1; /* between the last section and the table */
    assert_int_equal(kiln_container_verify_gaps(&c, &err), KILN_ERR_MALFORMED);
    assert_string_equal(err.message, "non-zero byte at offset 133 between sections");
    kiln_container_release(&c);
    free(a.bytes);
}

static void a_misaligned_section_is_refused(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_store_u64(table_entry(&a, 1) + 8, 129);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section 1 (ZZZZ): offset 129 is not 64-byte aligned");
    /* Aligned but overlapping the first section's area (the header ends at 64). */
    kiln_store_u64(table_entry(&a, 1) + 8, 0);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section 1 (ZZZZ): offset 0 overlaps the previous section");
    free(a.bytes);
}

static void sections_stay_inside_the_section_area(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_store_u64(table_entry(&a, 1) + 16, 9); /* 128 + 9 runs into the table at 136 */
    kiln_store_u64(table_entry(&a, 1) + 24, 9);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section 1 (ZZZZ): 9 bytes at offset 128 run past the section area");
    kiln_store_u64(table_entry(&a, 1) + 16, 3);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "uncompressed but raw size 9 != stored size 3");
    free(a.bytes);
}

static void the_writer_is_deterministic(void **state)
{
    (void)state;
    artifact a = two_sections(), b = two_sections();
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.bytes, b.bytes, a.size);
    free(a.bytes);
    free(b.bytes);
}

/* ------------------------------------------------------ truncation */

static void every_truncation_is_refused(void **state)
{
    (void)state;
    artifact a = two_sections();
    expect_refused(&a, 0, KILN_ERR_TRUNCATED, "file is 0 bytes, too short for a kiln header");
    expect_refused(&a, 7, KILN_ERR_TRUNCATED, "file is 7 bytes, too short for a kiln header");
    expect_refused(&a, 11, KILN_ERR_TRUNCATED, "file is 11 bytes, too short for a kiln header");
    expect_refused(&a, 63, KILN_ERR_TRUNCATED, "file is 63 bytes, the header alone needs 64");
    char expected[96];
    for (size_t size = 64; size < a.size; size += 37) {
        snprintf(expected, sizeof expected, "file is truncated: header declares %zu bytes, %zu present", a.size, size);
        expect_refused(&a, size, KILN_ERR_TRUNCATED, expected);
    }
    snprintf(expected, sizeof expected, "header declares %zu bytes, %zu present", a.size, a.size - 1);
    expect_refused(&a, a.size - 1, KILN_ERR_TRUNCATED, expected);
    free(a.bytes);
}

static void bytes_after_the_declared_end_are_refused(void **state)
{
    (void)state;
    artifact a = two_sections();
    uint8_t *longer = realloc(a.bytes, a.size + 2);
    assert_non_null(longer);
    a.bytes = longer;
    a.bytes[a.size] = a.bytes[a.size + 1] = 0;
    expect_refused(&a, a.size + 2, KILN_ERR_MALFORMED, "file has 2 bytes after its declared end");
    free(a.bytes);
}

/* ---------------------------------------------------------- header */

static void magic_and_major_are_judged_first(void **state)
{
    (void)state;
    artifact a = two_sections();
    a.bytes[4] = '\n' ^ 0x20; /* text-mode damage: not the magic */
    expect_refused(&a, a.size, KILN_ERR_BAD_MAGIC, "not a kiln artifact");
    a.bytes[4] = '\r';
    /* A newer major is named before any checksum is trusted. */
    kiln_store_u16(a.bytes + 8, 2);
    kiln_store_u16(a.bytes + 10, 5);
    expect_refused(&a, a.size, KILN_ERR_UNSUPPORTED_VERSION,
                   "format version 2.5 is not readable by this runtime (reads major 1)");
    /* Even truncated to its version fields. */
    expect_refused(&a, 12, KILN_ERR_UNSUPPORTED_VERSION, "format version 2.5");
    free(a.bytes);
}

static void any_minor_of_major_1_is_structurally_readable(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_store_u16(a.bytes + 10, 7);
    reseal(&a);
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.minor, 7);
    kiln_container_release(&c);
    free(a.bytes);
}

static void header_damage_is_caught(void **state)
{
    (void)state;
    artifact a = two_sections();
    a.bytes[40] ^= 0x01; /* a feature bit: the header CRC catches it */
    expect_refused(&a, a.size, KILN_ERR_HEADER_CRC, "header checksum mismatch");
    a.bytes[40] ^= 0x01;

    kiln_store_u32(a.bytes + 12, 72);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "header size is 72, format 1 requires 64");
    kiln_store_u32(a.bytes + 12, KILN_HEADER_SIZE);

    a.bytes[50] = 1;
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "reserved header bytes are not zero");
    a.bytes[50] = 0;
    reseal(&a);

    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    kiln_container_release(&c);
    free(a.bytes);
}

/* A header edited with its CRC recomputed passes parsing; the digest in the trailer catches it. */
static void the_digest_commits_to_header_and_table(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_store_u64(a.bytes + 40, KILN_FEATURE_HALF_PRECISION);
    reseal(&a);
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_ERR_DIGEST_MISMATCH);
    kiln_container_release(&c);

    /* The same for a table field (a section version). */
    kiln_store_u64(a.bytes + 40, 0);
    kiln_store_u16(table_entry(&a, 0) + 6, 4);
    reseal(&a);
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.sections[0].version, 4);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_ERR_DIGEST_MISMATCH);
    kiln_container_release(&c);
    free(a.bytes);
}

/* ----------------------------------------------------------- table */

static void table_damage_is_caught(void **state)
{
    (void)state;
    artifact a = two_sections();
    table_entry(&a, 1)[0] ^= 0x20;
    expect_refused(&a, a.size, KILN_ERR_TABLE_CRC, "section table checksum mismatch");
    table_entry(&a, 1)[0] ^= 0x20;

    kiln_store_u32(table_entry(&a, 1) + 36, 5);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section 1 (ZZZZ): reserved field is not zero");
    kiln_store_u32(table_entry(&a, 1) + 36, 0);

    /* A table that does not end where the trailer begins. */
    kiln_store_u32(a.bytes + 32, 1);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section table (offset 136, 1 entries) does not end");
    kiln_store_u32(a.bytes + 32, 2);
    kiln_store_u64(a.bytes + 24, 132);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section table (offset 132, 2 entries) does not end");
    free(a.bytes);
}

static void section_limits_are_enforced(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_container c;
    kiln_error err = {0};
    kiln_container_limits tight = roomy;
    tight.max_sections = 1;
    assert_int_equal(kiln_container_parse(a.bytes, a.size, &tight, &c, &err), KILN_ERR_LIMIT);
    assert_string_equal(err.message, "header declares 2 sections, the limit is 1");
    tight = roomy;
    tight.max_section_raw_size = 9;
    assert_int_equal(kiln_container_parse(a.bytes, a.size, &tight, &c, &err), KILN_ERR_LIMIT);
    assert_string_equal(err.message, "section 0 (META): raw size 10 exceeds the limit 9");
    free(a.bytes);
}

/* The critical bit is carried as written; unknown flag bits are refused. */
static void critical_and_ancillary_flags_are_carried(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_true(c.sections[0].flags & KILN_SECTION_CRITICAL);
    assert_false(c.sections[1].flags & KILN_SECTION_CRITICAL);
    kiln_container_release(&c);

    /* An unknown type made critical is still a well-formed container. */
    kiln_store_u16(table_entry(&a, 1) + 4, KILN_SECTION_CRITICAL);
    reseal(&a);
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.sections[1].type, ZZZZ);
    assert_int_equal(c.sections[1].flags, KILN_SECTION_CRITICAL);
    kiln_container_release(&c);

    kiln_store_u16(table_entry(&a, 1) + 4, KILN_SECTION_CRITICAL | 0x0004);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "section 1 (ZZZZ): unknown flag bits 0x4");
    free(a.bytes);
}

/* -------------------------------------------------------- sections */

static void section_bytes_are_checked_as_asked(void **state)
{
    (void)state;
    artifact a = two_sections();
    kiln_container c;
    kiln_error err;
    kiln_section_view view;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC_AND_HASH, &view, &err), KILN_OK);
    assert_ptr_equal(view.data, a.bytes + 64); /* borrowed: stored uncompressed */
    assert_null(view.owned);
    assert_int_equal(view.size, 10);
    assert_memory_equal(view.data, first_bytes, 10);
    kiln_section_view_release(&view);

    /* Damage inside a section: the CRC catches it, a structure-only read does not look. */
    a.bytes[64 + 4] ^= 0x01;
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC, &view, &err), KILN_ERR_SECTION_CRC);
    assert_string_equal(err.message, "section 0 (META): checksum mismatch (section is damaged)");
    assert_null(view.data);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_NOTHING, &view, &err), KILN_OK);
    kiln_section_view_release(&view);
    kiln_container_release(&c);

    /* Tampering that fixes the CRC too: only the BLAKE2b-256 catches it. */
    kiln_store_u32(table_entry(&a, 0) + 32, kiln_crc32(a.bytes + 64, 10));
    reseal(&a);
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC, &view, &err), KILN_OK);
    kiln_section_view_release(&view);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC_AND_HASH, &view, &err), KILN_ERR_SECTION_HASH);
    assert_string_equal(err.message, "section 0 (META): BLAKE2b-256 mismatch (the section was altered)");
    assert_null(view.data);
    kiln_container_release(&c);
    free(a.bytes);
}

static void compressible_sections_are_stored_compressed(void **state)
{
    (void)state;
    uint8_t text[4096];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (uint8_t)"kiln "[i % 5];
    uint8_t noise[64];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[i] = (uint8_t)x;
    }
    const kiln_section_spec sections[] = {
        {.type = META, .flags = KILN_SECTION_CRITICAL, .data = text, .size = sizeof text, .compression_level = 6},
        {.type = ZZZZ, .data = noise, .size = sizeof noise, .compression_level = 9},
    };
    artifact a = encode(sections, 2, 0, 0);
    kiln_container c;
    kiln_error err;
    kiln_section_view view;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.sections[0].flags, KILN_SECTION_CRITICAL | KILN_SECTION_COMPRESSED);
    assert_int_equal(c.sections[0].raw_size, sizeof text);
    assert_true(c.sections[0].stored_size < 100);
    assert_int_equal(c.sections[1].flags, 0); /* incompressible: stored raw */
    assert_int_equal(c.sections[1].stored_size, sizeof noise);

    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC_AND_HASH, &view, &err), KILN_OK);
    assert_non_null(view.owned);
    assert_int_equal(view.size, sizeof text);
    assert_memory_equal(view.data, text, sizeof text);
    kiln_section_view_release(&view);
    assert_null(view.owned);
    kiln_container_release(&c);

    /* A raw size the stream does not inflate to (table and header resealed). */
    kiln_store_u64(table_entry(&a, 0) + 24, sizeof text + 1);
    reseal(&a);
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_NOTHING, &view, &err), KILN_ERR_MALFORMED);
    assert_string_equal(err.message, "section 0 (META): the zlib stream does not inflate to exactly 4097 bytes");
    kiln_container_release(&c);

    /* A raw size no zlib stream of this length can encode is refused by the parser. */
    kiln_store_u64(table_entry(&a, 0) + 24, (uint64_t)1 << 19);
    reseal(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "is more than zlib can encode in");

    /* Over the decompression limit. */
    kiln_store_u64(table_entry(&a, 0) + 24, sizeof text);
    reseal(&a);
    kiln_container_limits tight = roomy;
    tight.max_decompressed_size = sizeof text - 1;
    assert_int_equal(kiln_container_parse(a.bytes, a.size, &tight, &c, &err), KILN_ERR_LIMIT);
    assert_string_equal(err.message, "section 0 (META): inflates to 4096 bytes, over the limit of 4095");
    free(a.bytes);
}

static void a_bad_compression_level_is_refused(void **state)
{
    (void)state;
    const kiln_section_spec bad = {.type = META, .data = first_bytes, .size = 10, .compression_level = 10};
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    assert_int_equal(kiln_container_encode(&bad, 1, 0, &w, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "compression level 10 is not in 1..9");
    kiln_writer_release(&w);
}

/* --------------------------------------------------------- trailer */

static void trailer_damage_is_caught(void **state)
{
    (void)state;
    artifact a = two_sections();
    uint8_t *t = a.bytes + a.size - KILN_TRAILER_SIZE;
    assert_memory_equal(t, "KLNT", 4);
    assert_int_equal(kiln_load_u32(t + 124), kiln_crc32(t, 124));

    t[0] = 'X';
    expect_refused(&a, a.size, KILN_ERR_TRAILER, "trailer magic is missing");
    t[0] = 'K';
    t[20] ^= 0x01;
    expect_refused(&a, a.size, KILN_ERR_TRAILER, "trailer checksum mismatch");
    t[20] ^= 0x01;

    kiln_store_u32(t + 4, 0x2);
    reseal_trailer(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "trailer has unknown flag bits 0x2");
    kiln_store_u32(t + 4, 0);
    t[121] = 1;
    reseal_trailer(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "reserved trailer bytes are not zero");
    t[121] = 0;
    t[60] = 1; /* signature bytes of an unsigned trailer */
    reseal_trailer(&a);
    expect_refused(&a, a.size, KILN_ERR_MALFORMED, "unsigned trailer has a non-zero key id or signature");
    free(a.bytes);
}

static void a_signed_trailer_carries_key_id_and_signature(void **state)
{
    (void)state;
    artifact a = two_sections();
    uint8_t *t = a.bytes + a.size - KILN_TRAILER_SIZE;
    uint8_t digest[KILN_DIGEST_SIZE], key_id[KILN_KEY_ID_SIZE], signature[KILN_SIGNATURE_SIZE];
    memcpy(digest, t + 8, sizeof digest);
    memset(key_id, 0x11, sizeof key_id);
    memset(signature, 0x22, sizeof signature);
    kiln_trailer_write(t, digest, key_id, signature);
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.trailer_flags, KILN_TRAILER_SIGNED);
    assert_memory_equal(c.digest, digest, sizeof digest);
    assert_memory_equal(c.key_id, key_id, sizeof key_id);
    assert_memory_equal(c.signature, signature, sizeof signature);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_OK);
    kiln_container_release(&c);
    free(a.bytes);
}

static void an_empty_container_is_valid(void **state)
{
    (void)state;
    artifact a = encode(NULL, 0, 0, 0);
    assert_int_equal(a.size, KILN_HEADER_SIZE + KILN_TRAILER_SIZE);
    kiln_container c;
    kiln_error err;
    assert_int_equal(parse(&a, a.size, &c, &err), KILN_OK);
    assert_int_equal(c.section_count, 0);
    assert_int_equal(c.table_offset, KILN_HEADER_SIZE);
    assert_int_equal(kiln_container_verify_gaps(&c, &err), KILN_OK);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_OK);
    kiln_container_release(&c);
    free(a.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_fields_are_written_where_the_format_says),
        cmocka_unit_test(minor_and_feature_bits_are_carried),
        cmocka_unit_test(the_section_table_describes_each_section),
        cmocka_unit_test(sections_are_aligned_and_gaps_are_zero),
        cmocka_unit_test(a_misaligned_section_is_refused),
        cmocka_unit_test(sections_stay_inside_the_section_area),
        cmocka_unit_test(the_writer_is_deterministic),
        cmocka_unit_test(every_truncation_is_refused),
        cmocka_unit_test(bytes_after_the_declared_end_are_refused),
        cmocka_unit_test(magic_and_major_are_judged_first),
        cmocka_unit_test(any_minor_of_major_1_is_structurally_readable),
        cmocka_unit_test(header_damage_is_caught),
        cmocka_unit_test(the_digest_commits_to_header_and_table),
        cmocka_unit_test(table_damage_is_caught),
        cmocka_unit_test(section_limits_are_enforced),
        cmocka_unit_test(critical_and_ancillary_flags_are_carried),
        cmocka_unit_test(section_bytes_are_checked_as_asked),
        cmocka_unit_test(compressible_sections_are_stored_compressed),
        cmocka_unit_test(a_bad_compression_level_is_refused),
        cmocka_unit_test(trailer_damage_is_caught),
        cmocka_unit_test(a_signed_trailer_carries_key_id_and_signature),
        cmocka_unit_test(an_empty_container_is_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
