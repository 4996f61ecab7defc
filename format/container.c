/* container.c — parsing and encoding the kiln container (see container.h). */
#include "container.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#include "checked_math.h"
#include "error.h"

const uint8_t kiln_magic[8] = {0x89, 'K', 'L', 'N', '\r', '\n', 0x1a, '\n'};
static const uint8_t trailer_magic[4] = {'K', 'L', 'N', 'T'};

void kiln_fourcc_text(uint32_t type, char out[5])
{
    for (int i = 0; i < 4; i++) {
        unsigned char ch = (unsigned char)(type >> (8 * i));
        out[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    out[4] = '\0';
}

/*
 * Fuzzing builds compare no checksums, so that mutated files reach the
 * structure checks behind them instead of stopping at the first CRC.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CHECKSUMS_DIFFER(actual, stored) ((void)(actual), (void)(stored), false)
#else
#define CHECKSUMS_DIFFER(actual, stored) ((actual) != (stored))
#endif

static uint32_t crc32_of(const uint8_t *bytes, uint64_t size)
{
    /* zlib's crc32 takes a uInt length, so feed large ranges in pieces. */
    uLong crc = crc32(0L, Z_NULL, 0);
    while (size > 0) {
        uInt piece = size > (1u << 30) ? (1u << 30) : (uInt)size;
        crc = crc32(crc, bytes, piece);
        bytes += piece;
        size -= piece;
    }
    return (uint32_t)crc;
}

static void blake2b_256(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE])
{
    crypto_generichash_state state;
    int ready = sodium_init(); /* idempotent; BLAKE2b needs no randomness */
    (void)ready;
    crypto_generichash_init(&state, NULL, 0, KILN_DIGEST_SIZE);
    while (size > 0) {
        size_t piece = size > (1u << 30) ? (1u << 30) : (size_t)size;
        crypto_generichash_update(&state, bytes, piece);
        bytes += piece;
        size -= piece;
    }
    crypto_generichash_final(&state, out, KILN_DIGEST_SIZE);
}

static bool all_zero(const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (bytes[i])
            return false;
    return true;
}

static kiln_status parse_header(const uint8_t *bytes, size_t size, kiln_container *c,
                                uint64_t *table_offset, uint32_t *table_crc, kiln_error *err)
{
    if (size < 8)
        return kiln_fail(err, KILN_ERR_TRUNCATED, "file is %zu bytes, too short for a kiln header", size);
    if (memcmp(bytes, kiln_magic, 8) != 0)
        return kiln_fail(err, KILN_ERR_BAD_MAGIC,
                         "not a kiln artifact: the first 8 bytes are not the kiln magic");
    if (size < 12)
        return kiln_fail(err, KILN_ERR_TRUNCATED, "file is %zu bytes, too short for a kiln header", size);
    /* Magic and version sit at frozen offsets in every major, so a reader
     * can name a newer major before it trusts anything else. */
    c->major = kiln_load_u16(bytes + 8);
    c->minor = kiln_load_u16(bytes + 10);
    /* Any minor of our major is structurally readable: newer minors may add
     * section types and feature bits, which are judged further on. */
    if (c->major != KILN_FORMAT_MAJOR)
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_VERSION,
                         "format version %u.%u is not readable by this runtime (reads major %u)",
                         c->major, c->minor, KILN_FORMAT_MAJOR);
    if (size < KILN_HEADER_SIZE)
        return kiln_fail(err, KILN_ERR_TRUNCATED, "file is %zu bytes, the header alone needs %d",
                         size, KILN_HEADER_SIZE);
    uint32_t stored_crc = kiln_load_u32(bytes + 60);
    if (CHECKSUMS_DIFFER(crc32_of(bytes, 60), stored_crc))
        return kiln_fail(err, KILN_ERR_HEADER_CRC, "header checksum mismatch (header is damaged)");

    uint32_t header_size = kiln_load_u32(bytes + 12);
    uint64_t file_size = kiln_load_u64(bytes + 16);
    *table_offset = kiln_load_u64(bytes + 24);
    c->section_count = kiln_load_u32(bytes + 32);
    *table_crc = kiln_load_u32(bytes + 36);
    c->features = kiln_load_u64(bytes + 40);
    if (header_size != KILN_HEADER_SIZE)
        return kiln_fail(err, KILN_ERR_MALFORMED, "header size is %u, format 1 requires %d",
                         header_size, KILN_HEADER_SIZE);
    if (!all_zero(bytes + 48, 12))
        return kiln_fail(err, KILN_ERR_MALFORMED, "reserved header bytes are not zero");
    if (file_size > size)
        return kiln_fail(err, KILN_ERR_TRUNCATED,
                         "file is truncated: header declares %llu bytes, %zu present",
                         (unsigned long long)file_size, size);
    if (file_size < size)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "file has %llu bytes after its declared end",
                         (unsigned long long)(size - file_size));
    c->size = file_size;
    uint64_t unknown = c->features & ~KILN_KNOWN_FEATURES;
    if (unknown)
        return kiln_fail(err, KILN_ERR_UNKNOWN_CRITICAL,
                         "required feature bits 0x%llx are unknown to this runtime",
                         (unsigned long long)unknown);
    return KILN_OK;
}

static kiln_status parse_trailer(const uint8_t *bytes, kiln_container *c, kiln_error *err)
{
    const uint8_t *t = bytes + c->size - KILN_TRAILER_SIZE;
    if (memcmp(t, trailer_magic, 4) != 0)
        return kiln_fail(err, KILN_ERR_TRAILER, "trailer magic is missing (file damaged or truncated)");
    if (CHECKSUMS_DIFFER(crc32_of(t, 124), kiln_load_u32(t + 124)))
        return kiln_fail(err, KILN_ERR_TRAILER, "trailer checksum mismatch (trailer is damaged)");
    c->trailer_flags = kiln_load_u32(t + 4);
    if (c->trailer_flags & ~KILN_TRAILER_SIGNED)
        return kiln_fail(err, KILN_ERR_MALFORMED, "trailer has unknown flag bits 0x%x",
                         c->trailer_flags & ~KILN_TRAILER_SIGNED);
    if (!all_zero(t + 120, 4))
        return kiln_fail(err, KILN_ERR_MALFORMED, "reserved trailer bytes are not zero");
    if (!(c->trailer_flags & KILN_TRAILER_SIGNED) && !all_zero(t + 40, KILN_KEY_ID_SIZE + KILN_SIGNATURE_SIZE))
        return kiln_fail(err, KILN_ERR_MALFORMED, "unsigned trailer has a non-zero key id or signature");
    memcpy(c->digest, t + 8, KILN_DIGEST_SIZE);
    memcpy(c->key_id, t + 40, KILN_KEY_ID_SIZE);
    memcpy(c->signature, t + 56, KILN_SIGNATURE_SIZE);
    return KILN_OK;
}

static kiln_status parse_table(const uint8_t *bytes, kiln_container *c, uint64_t table_offset,
                               uint32_t table_crc, const kiln_container_limits *limits,
                               kiln_error *err)
{
    uint64_t table_size, table_end;
    uint64_t trailer_offset = c->size - KILN_TRAILER_SIZE;
    if (c->section_count > limits->max_sections)
        return kiln_fail(err, KILN_ERR_LIMIT, "header declares %u sections, the limit is %u",
                         c->section_count, limits->max_sections);
    if (!kiln_mul_u64(c->section_count, KILN_TABLE_ENTRY_SIZE, &table_size) ||
        !kiln_add_u64(table_offset, table_size, &table_end) ||
        table_offset < KILN_HEADER_SIZE || table_offset % 8 != 0 || table_end != trailer_offset)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section table (offset %llu, %u entries) does not end where the trailer begins",
                         (unsigned long long)table_offset, c->section_count);
    if (CHECKSUMS_DIFFER(crc32_of(bytes + table_offset, table_size), table_crc))
        return kiln_fail(err, KILN_ERR_TABLE_CRC, "section table checksum mismatch (table is damaged)");

    c->sections = calloc(c->section_count ? c->section_count : 1, sizeof *c->sections);
    if (!c->sections)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the section table");

    uint64_t previous_end = KILN_HEADER_SIZE;
    for (uint32_t i = 0; i < c->section_count; i++) {
        const uint8_t *e = bytes + table_offset + (uint64_t)i * KILN_TABLE_ENTRY_SIZE;
        kiln_section_entry *s = &c->sections[i];
        char name[5];
        uint64_t end;
        s->type = kiln_load_u32(e);
        s->flags = kiln_load_u16(e + 4);
        s->version = kiln_load_u16(e + 6);
        s->offset = kiln_load_u64(e + 8);
        s->stored_size = kiln_load_u64(e + 16);
        s->raw_size = kiln_load_u64(e + 24);
        s->crc = kiln_load_u32(e + 32);
        kiln_fourcc_text(s->type, name);
        if (kiln_load_u32(e + 36) != 0)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section %u (%s): reserved field is not zero", i, name);
        if (s->flags & ~KILN_SECTION_KNOWN_FLAGS)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section %u (%s): unknown flag bits 0x%x",
                             i, name, (unsigned)(s->flags & ~KILN_SECTION_KNOWN_FLAGS));
        if (s->offset % KILN_SECTION_ALIGNMENT != 0)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section %u (%s): offset %llu is not 64-byte aligned",
                             i, name, (unsigned long long)s->offset);
        /* Sections appear in offset order without overlap, so one running
         * "previous end" check rules out overlaps and out-of-bounds alike. */
        if (s->offset < previous_end)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section %u (%s): offset %llu overlaps the previous section or header",
                             i, name, (unsigned long long)s->offset);
        if (!kiln_add_u64(s->offset, s->stored_size, &end) || end > table_offset)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section %u (%s): %llu bytes at offset %llu run past the section area",
                             i, name, (unsigned long long)s->stored_size, (unsigned long long)s->offset);
        if (!(s->flags & KILN_SECTION_COMPRESSED) && s->raw_size != s->stored_size)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section %u (%s): uncompressed but raw size %llu != stored size %llu",
                             i, name, (unsigned long long)s->raw_size, (unsigned long long)s->stored_size);
        if (s->raw_size > limits->max_section_raw_size)
            return kiln_fail(err, KILN_ERR_LIMIT, "section %u (%s): raw size %llu exceeds the limit %llu",
                             i, name, (unsigned long long)s->raw_size,
                             (unsigned long long)limits->max_section_raw_size);
        previous_end = end;
    }
    return KILN_OK;
}

kiln_status kiln_container_parse(const uint8_t *bytes, size_t size,
                                 const kiln_container_limits *limits,
                                 kiln_container *out, kiln_error *err)
{
    uint64_t table_offset = 0;
    uint32_t table_crc = 0;
    kiln_status status;
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    status = parse_header(bytes, size, out, &table_offset, &table_crc, err);
    if (status == KILN_OK && out->size < (uint64_t)KILN_HEADER_SIZE + KILN_TRAILER_SIZE)
        status = kiln_fail(err, KILN_ERR_MALFORMED, "declared file size %llu cannot hold header and trailer",
                           (unsigned long long)out->size);
    if (status == KILN_OK)
        status = parse_trailer(bytes, out, err);
    if (status == KILN_OK)
        status = parse_table(bytes, out, table_offset, table_crc, limits, err);
    if (status != KILN_OK)
        kiln_container_release(out);
    return status;
}

void kiln_container_release(kiln_container *c)
{
    free(c->sections);
    c->sections = NULL;
    c->section_count = 0;
}

int64_t kiln_container_find(const kiln_container *c, uint32_t type)
{
    for (uint32_t i = 0; i < c->section_count; i++)
        if (c->sections[i].type == type)
            return i;
    return -1;
}

kiln_status kiln_container_section(const kiln_container *c, uint32_t index,
                                   const uint8_t **data, size_t *size, kiln_error *err)
{
    const kiln_section_entry *s = &c->sections[index];
    char name[5];
    kiln_fourcc_text(s->type, name);
    if (CHECKSUMS_DIFFER(crc32_of(c->bytes + s->offset, s->stored_size), s->crc))
        return kiln_fail(err, KILN_ERR_SECTION_CRC, "section %u (%s): checksum mismatch (section is damaged)",
                         index, name);
    if (s->flags & KILN_SECTION_COMPRESSED)
        return kiln_fail(err, KILN_ERR_UNKNOWN_CRITICAL,
                         "section %u (%s): compressed sections are not readable by this runtime",
                         index, name);
    *data = c->bytes + s->offset;
    *size = (size_t)s->stored_size;
    return KILN_OK;
}

kiln_status kiln_container_verify_digest(const kiln_container *c, kiln_error *err)
{
    uint8_t actual[KILN_DIGEST_SIZE];
    blake2b_256(c->bytes, c->size - KILN_TRAILER_SIZE, actual);
    if (CHECKSUMS_DIFFER(sodium_memcmp(actual, c->digest, KILN_DIGEST_SIZE) != 0, false))
        return kiln_fail(err, KILN_ERR_DIGEST_MISMATCH,
                         "artifact digest mismatch: the BLAKE2b-256 of the file does not match its trailer");
    return KILN_OK;
}

kiln_status kiln_container_encode(const kiln_section_spec *sections, uint32_t count,
                                  uint64_t features, kiln_writer *out, kiln_error *err)
{
    uint8_t header[KILN_HEADER_SIZE] = {0};
    kiln_writer table;
    uint64_t offset = KILN_HEADER_SIZE;
    size_t start = out->size;

    kiln_writer_init(&table);
    kiln_write_zeros(out, KILN_HEADER_SIZE); /* filled in once the layout is known */
    for (uint32_t i = 0; i < count; i++) {
        const kiln_section_spec *s = &sections[i];
        uint64_t aligned;
        if (!kiln_align_up_u64(offset, KILN_SECTION_ALIGNMENT, &aligned)) {
            kiln_writer_release(&table);
            return kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
        }
        kiln_write_zeros(out, (size_t)(aligned - offset));
        kiln_write_bytes(out, s->data, s->size);
        kiln_write_u32(&table, s->type);
        kiln_write_u16(&table, s->flags);
        kiln_write_u16(&table, s->version);
        kiln_write_u64(&table, aligned);
        kiln_write_u64(&table, s->size);
        kiln_write_u64(&table, s->size);
        kiln_write_u32(&table, crc32_of(s->data, s->size));
        kiln_write_u32(&table, 0);
        offset = aligned + s->size;
    }
    uint64_t table_offset;
    if (!kiln_align_up_u64(offset, 8, &table_offset)) {
        kiln_writer_release(&table);
        return kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
    }
    kiln_write_zeros(out, (size_t)(table_offset - offset));
    kiln_write_bytes(out, table.data, table.size);
    kiln_status status = kiln_writer_finish(&table, err);
    uint32_t table_crc = table.size ? crc32_of(table.data, table.size) : crc32_of(NULL, 0);
    kiln_writer_release(&table);
    KILN_TRY(status);
    KILN_TRY(kiln_writer_finish(out, err));

    uint64_t file_size = (uint64_t)(out->size - start) + KILN_TRAILER_SIZE;
    memcpy(header, kiln_magic, 8);
    kiln_store_u16(header + 8, KILN_FORMAT_MAJOR);
    kiln_store_u16(header + 10, KILN_FORMAT_MINOR);
    kiln_store_u32(header + 12, KILN_HEADER_SIZE);
    kiln_store_u64(header + 16, file_size);
    kiln_store_u64(header + 24, table_offset);
    kiln_store_u32(header + 32, count);
    kiln_store_u32(header + 36, table_crc);
    kiln_store_u64(header + 40, features);
    kiln_store_u32(header + 60, crc32_of(header, 60));
    memcpy(out->data + start, header, KILN_HEADER_SIZE);

    uint8_t trailer[KILN_TRAILER_SIZE] = {0};
    memcpy(trailer, trailer_magic, 4);
    blake2b_256(out->data + start, out->size - start, trailer + 8);
    kiln_store_u32(trailer + 124, crc32_of(trailer, 124));
    kiln_write_bytes(out, trailer, KILN_TRAILER_SIZE);
    return kiln_writer_finish(out, err);
}
