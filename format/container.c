/* container.c — parsing the kiln container and reading its sections (see container.h). */
#include "container.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#include "checked_math.h"
#include "error.h"
#include "file_io.h"
#include "hashing.h"

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

static bool all_zero(const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (bytes[i])
            return false;
    return true;
}

static kiln_status parse_header(const uint8_t *bytes, size_t size, kiln_container *c,
                                uint32_t *table_crc, kiln_error *err)
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
    if (KILN_CHECKSUMS_DIFFER(kiln_crc32(bytes, 60) != kiln_load_u32(bytes + 60)))
        return kiln_fail(err, KILN_ERR_HEADER_CRC, "header checksum mismatch (header is damaged)");

    uint32_t header_size = kiln_load_u32(bytes + 12);
    uint64_t file_size = kiln_load_u64(bytes + 16);
    c->table_offset = kiln_load_u64(bytes + 24);
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
    /* Unknown feature bits are the reader's to judge (and report with any
     * other incompatibility), not a structural fault. */
    if (c->size < (uint64_t)KILN_HEADER_SIZE + KILN_TRAILER_SIZE)
        return kiln_fail(err, KILN_ERR_MALFORMED, "declared file size %llu cannot hold header and trailer",
                         (unsigned long long)c->size);
    return KILN_OK;
}

static kiln_status parse_trailer(const uint8_t *bytes, kiln_container *c, kiln_error *err)
{
    const uint8_t *t = bytes + c->size - KILN_TRAILER_SIZE;
    if (memcmp(t, trailer_magic, 4) != 0)
        return kiln_fail(err, KILN_ERR_TRAILER, "trailer magic is missing (file damaged or truncated)");
    if (KILN_CHECKSUMS_DIFFER(kiln_crc32(t, 124) != kiln_load_u32(t + 124)))
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

static kiln_status check_entry(const kiln_section_entry *s, uint32_t i, uint64_t previous_end,
                               uint64_t table_offset, const kiln_container_limits *limits, kiln_error *err)
{
    char name[5];
    uint64_t end;
    kiln_fourcc_text(s->type, name);
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
    if ((s->flags & KILN_SECTION_COMPRESSED) && s->raw_size > limits->max_decompressed_size)
        return kiln_fail(err, KILN_ERR_LIMIT, "section %u (%s): inflates to %llu bytes, over the limit of %llu",
                         i, name, (unsigned long long)s->raw_size,
                         (unsigned long long)limits->max_decompressed_size);
    uint64_t ceiling;
    if ((s->flags & KILN_SECTION_COMPRESSED) &&
        (!kiln_mul_u64(s->stored_size, KILN_MAX_COMPRESSION_RATIO, &ceiling) || s->raw_size > ceiling + 64))
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section %u (%s): raw size %llu is more than zlib can encode in %llu bytes",
                         i, name, (unsigned long long)s->raw_size, (unsigned long long)s->stored_size);
    return KILN_OK;
}

static kiln_status parse_table(const uint8_t *bytes, kiln_container *c, uint32_t table_crc,
                               const kiln_container_limits *limits, kiln_error *err)
{
    uint64_t table_size, table_end;
    uint64_t trailer_offset = c->size - KILN_TRAILER_SIZE;
    if (c->section_count > limits->max_sections)
        return kiln_fail(err, KILN_ERR_LIMIT, "header declares %u sections, the limit is %u",
                         c->section_count, limits->max_sections);
    if (!kiln_mul_u64(c->section_count, KILN_TABLE_ENTRY_SIZE, &table_size) ||
        !kiln_add_u64(c->table_offset, table_size, &table_end) || c->table_offset < KILN_HEADER_SIZE ||
        c->table_offset % 8 != 0 || table_end != trailer_offset)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section table (offset %llu, %u entries) does not end where the trailer begins",
                         (unsigned long long)c->table_offset, c->section_count);
    if (KILN_CHECKSUMS_DIFFER(kiln_crc32(bytes + c->table_offset, table_size) != table_crc))
        return kiln_fail(err, KILN_ERR_TABLE_CRC, "section table checksum mismatch (table is damaged)");

    c->sections = calloc(c->section_count ? c->section_count : 1, sizeof *c->sections);
    if (!c->sections)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the section table");

    uint64_t previous_end = KILN_HEADER_SIZE;
    for (uint32_t i = 0; i < c->section_count; i++) {
        const uint8_t *e = bytes + c->table_offset + (uint64_t)i * KILN_TABLE_ENTRY_SIZE;
        kiln_section_entry *s = &c->sections[i];
        s->type = kiln_load_u32(e);
        s->flags = kiln_load_u16(e + 4);
        s->version = kiln_load_u16(e + 6);
        s->offset = kiln_load_u64(e + 8);
        s->stored_size = kiln_load_u64(e + 16);
        s->raw_size = kiln_load_u64(e + 24);
        s->crc = kiln_load_u32(e + 32);
        memcpy(s->hash, e + 40, KILN_DIGEST_SIZE);
        if (kiln_load_u32(e + 36) != 0) {
            char name[5];
            kiln_fourcc_text(s->type, name);
            return kiln_fail(err, KILN_ERR_MALFORMED, "section %u (%s): reserved field is not zero", i, name);
        }
        KILN_TRY(check_entry(s, i, previous_end, c->table_offset, limits, err));
        previous_end = s->offset + s->stored_size;
    }
    return KILN_OK;
}

kiln_status kiln_container_parse(const uint8_t *bytes, size_t size,
                                 const kiln_container_limits *limits,
                                 kiln_container *out, kiln_error *err)
{
    uint32_t table_crc = 0;
    kiln_status status;
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    status = parse_header(bytes, size, out, &table_crc, err);
    if (status == KILN_OK)
        status = parse_trailer(bytes, out, err);
    if (status == KILN_OK)
        status = parse_table(bytes, out, table_crc, limits, err);
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

kiln_status kiln_container_verify_digest(const kiln_container *c, kiln_error *err)
{
    uint8_t actual[KILN_DIGEST_SIZE];
    uint64_t table_size = (uint64_t)c->section_count * KILN_TABLE_ENTRY_SIZE;
    kiln_blake2b_256_pair(c->bytes, KILN_HEADER_SIZE, c->bytes + c->table_offset, table_size, actual);
    if (KILN_CHECKSUMS_DIFFER(sodium_memcmp(actual, c->digest, KILN_DIGEST_SIZE) != 0))
        return kiln_fail(err, KILN_ERR_DIGEST_MISMATCH,
                         "artifact digest mismatch: header and section table do not match the trailer's "
                         "BLAKE2b-256 (the file was altered)");
    return KILN_OK;
}

static kiln_status check_zero_range(const kiln_container *c, uint64_t from, uint64_t to, kiln_error *err)
{
    for (uint64_t at = from; at < to; at++)
        if (c->bytes[at] != 0)
            return kiln_fail(err, KILN_ERR_MALFORMED, "non-zero byte at offset %llu between sections",
                             (unsigned long long)at);
    return KILN_OK;
}

kiln_status kiln_container_verify_gaps(const kiln_container *c, kiln_error *err)
{
    uint64_t previous_end = KILN_HEADER_SIZE;
    for (uint32_t i = 0; i < c->section_count; i++) {
        KILN_TRY(check_zero_range(c, previous_end, c->sections[i].offset, err));
        previous_end = c->sections[i].offset + c->sections[i].stored_size;
    }
    return check_zero_range(c, previous_end, c->table_offset, err);
}

static kiln_status inflate_section(const uint8_t *stored, uint64_t stored_size, uint64_t raw_size,
                                   uint8_t *raw, const char *name, uint32_t index, kiln_error *err)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit(&stream) != Z_OK)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "section %u (%s): cannot start zlib", index, name);
    uint64_t consumed = 0, produced = 0;
    int rc = Z_OK;
    /* Feed and drain in pieces: z_stream counts in uInt. */
    while (rc == Z_OK) {
        uint64_t in_left = stored_size - consumed, out_left = raw_size - produced;
        stream.next_in = (Bytef *)(uintptr_t)(stored + consumed);
        stream.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        stream.next_out = raw + produced;
        stream.avail_out = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
        uInt in_before = stream.avail_in, out_before = stream.avail_out;
        rc = inflate(&stream, Z_NO_FLUSH);
        consumed += in_before - stream.avail_in;
        produced += out_before - stream.avail_out;
        if (rc == Z_BUF_ERROR && stream.avail_in == 0 && consumed == stored_size)
            break; /* input ended before the stream did */
        if (rc == Z_BUF_ERROR && stream.avail_out == 0 && produced == raw_size)
            break; /* more output than the table declares */
        if (rc == Z_BUF_ERROR)
            rc = Z_OK; /* a piece boundary; continue */
    }
    inflateEnd(&stream);
    if (rc != Z_STREAM_END || produced != raw_size || consumed != stored_size)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section %u (%s): the zlib stream does not inflate to exactly %llu bytes",
                         index, name, (unsigned long long)raw_size);
    return KILN_OK;
}

/*
 * The CRC32 and, when `hash` is set, the BLAKE2b-256 of an uncompressed
 * section's bytes (stored and raw bytes are the same), in one pass of
 * 1 MiB pieces while each is in the cache: reading a 128 MiB weight
 * section once instead of twice. The pages of a mapped file are given back
 * behind the pass (container.h, file_mapped).
 */
#define CHECK_PIECE ((uint64_t)1 << 20)

static void check_in_place(const kiln_container *c, const uint8_t *bytes, uint64_t size, bool hash, uint32_t *crc,
                           uint8_t digest[KILN_DIGEST_SIZE])
{
    kiln_blake2b_state state;
    uint32_t value = 0;
    uint64_t released = 0;
    if (hash)
        kiln_blake2b_256_init(&state);
    for (uint64_t done = 0; done < size;) {
        uint64_t piece = size - done < CHECK_PIECE ? size - done : CHECK_PIECE;
        value = kiln_crc32_update(value, bytes + done, piece);
        if (hash)
            kiln_blake2b_256_update(&state, bytes + done, piece);
        kiln_progress_advance(c->progress, hash ? 2 * piece : piece);
        done += piece;
        if (c->file_mapped && (done - released >= 4 * CHECK_PIECE || done == size)) {
            kiln_mapped_pages_release(bytes + released, (size_t)(done - released));
            released = done;
        }
    }
    *crc = value;
    if (hash)
        kiln_blake2b_256_final(&state, digest);
}

kiln_status kiln_container_section(const kiln_container *c, uint32_t index, kiln_section_check check,
                                   kiln_section_view *out, kiln_error *err)
{
    const kiln_section_entry *s = &c->sections[index];
    const uint8_t *stored = c->bytes + s->offset;
    char name[5];
    uint8_t actual[KILN_DIGEST_SIZE];
    memset(out, 0, sizeof *out);
    kiln_fourcc_text(s->type, name);
    bool compressed = (s->flags & KILN_SECTION_COMPRESSED) != 0;
    if (check >= KILN_CHECK_CRC) {
        uint32_t crc = 0;
        if (compressed)
            crc = kiln_crc32_progress(stored, s->stored_size, c->progress);
        else
            check_in_place(c, stored, s->stored_size, check >= KILN_CHECK_CRC_AND_HASH, &crc, actual);
        if (KILN_CHECKSUMS_DIFFER(crc != s->crc))
            return kiln_fail(err, KILN_ERR_SECTION_CRC, "section %u (%s): checksum mismatch (section is damaged)",
                             index, name);
    }
    if (s->raw_size > SIZE_MAX)
        return kiln_fail(err, KILN_ERR_LIMIT, "section %u (%s) is too large for this machine", index, name);
    if (compressed) {
        uint8_t *raw = malloc(s->raw_size ? (size_t)s->raw_size : 1);
        if (!raw)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "section %u (%s): out of memory for %llu bytes",
                             index, name, (unsigned long long)s->raw_size);
        kiln_status status = inflate_section(stored, s->stored_size, s->raw_size, raw, name, index, err);
        if (status != KILN_OK) {
            free(raw);
            return status;
        }
        out->owned = raw;
        out->data = raw;
    } else {
        out->data = stored;
    }
    out->size = (size_t)s->raw_size;
    if (check >= KILN_CHECK_CRC_AND_HASH) {
        /* An uncompressed section's hash was taken with its CRC. */
        if (compressed)
            kiln_blake2b_256_progress(out->data, out->size, actual, c->progress);
        if (KILN_CHECKSUMS_DIFFER(sodium_memcmp(actual, s->hash, KILN_DIGEST_SIZE) != 0)) {
            kiln_section_view_release(out);
            return kiln_fail(err, KILN_ERR_SECTION_HASH,
                             "section %u (%s): BLAKE2b-256 mismatch (the section was altered)", index, name);
        }
    }
    return KILN_OK;
}

void kiln_section_view_release(kiln_section_view *view)
{
    free(view->owned);
    memset(view, 0, sizeof *view);
}
