/* container_writer.c — laying out a kiln container (see container.h). */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "checked_math.h"
#include "container.h"
#include "error.h"
#include "hashing.h"

static const uint8_t trailer_magic[4] = {'K', 'L', 'N', 'T'};

void kiln_trailer_write(uint8_t *trailer, const uint8_t digest[KILN_DIGEST_SIZE],
                        const uint8_t *key_id, const uint8_t *signature)
{
    memset(trailer, 0, KILN_TRAILER_SIZE);
    memcpy(trailer, trailer_magic, 4);
    memcpy(trailer + 8, digest, KILN_DIGEST_SIZE);
    if (signature) {
        kiln_store_u32(trailer + 4, KILN_TRAILER_SIGNED);
        memcpy(trailer + 40, key_id, KILN_KEY_ID_SIZE);
        memcpy(trailer + 56, signature, KILN_SIGNATURE_SIZE);
    }
    kiln_store_u32(trailer + 124, kiln_crc32(trailer, 124));
}

/*
 * Compress `spec` at its level. Sets *stored to the compressed bytes (owned,
 * caller frees) when that is smaller than the raw bytes, else to NULL. The
 * input is fed in KILN_PROGRESS_STEP pieces so progress can be reported.
 */
static kiln_status maybe_compress(const kiln_section_spec *spec, uint8_t **stored, size_t *stored_size,
                                  kiln_progress *progress, kiln_error *err)
{
    *stored = NULL;
    if (spec->compression_level <= 0 || spec->size == 0)
        return KILN_OK;
    if (spec->compression_level > 9 || spec->size > (uLong)-1)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "compression level %d is not in 1..9",
                         spec->compression_level);
    uLong bound = compressBound((uLong)spec->size);
    uint8_t *buffer = malloc(bound);
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (!buffer || deflateInit(&stream, spec->compression_level) != Z_OK) {
        free(buffer);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory compressing a section");
    }
    uint64_t consumed = 0, produced = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
        uint64_t left = spec->size - consumed;
        uInt piece = left > KILN_PROGRESS_STEP ? (uInt)KILN_PROGRESS_STEP : (uInt)left;
        uint64_t room = bound - produced;
        stream.next_in = (Bytef *)(uintptr_t)(spec->data + consumed);
        stream.avail_in = piece;
        stream.next_out = buffer + produced;
        stream.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt out_before = stream.avail_out;
        rc = deflate(&stream, piece == left ? Z_FINISH : Z_NO_FLUSH);
        consumed += piece - stream.avail_in;
        produced += out_before - stream.avail_out;
        kiln_progress_advance(progress, piece - stream.avail_in);
        if (rc == Z_BUF_ERROR)
            rc = Z_OK; /* no progress possible this round; the next piece continues */
    }
    deflateEnd(&stream);
    if (rc != Z_STREAM_END) {
        free(buffer);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "zlib could not compress a section");
    }
    if (produced >= spec->size) {
        free(buffer); /* incompressible: store raw */
        return KILN_OK;
    }
    *stored = buffer;
    *stored_size = (size_t)produced;
    return KILN_OK;
}

kiln_status kiln_container_encode(const kiln_section_spec *sections, uint32_t count,
                                  uint64_t features, kiln_writer *out, kiln_error *err)
{
    return kiln_container_encode_progress(sections, count, 0, features, out, NULL, err);
}

kiln_status kiln_container_encode_progress(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                           uint64_t features, kiln_writer *out, kiln_progress *progress,
                                           kiln_error *err)
{
    uint8_t header[KILN_HEADER_SIZE] = {0};
    kiln_writer table;
    uint64_t offset = KILN_HEADER_SIZE;
    size_t start = out->size;
    kiln_status status = KILN_OK;

    kiln_writer_init(&table);
    kiln_write_zeros(out, KILN_HEADER_SIZE); /* filled in once the layout is known */
    for (uint32_t i = 0; i < count && status == KILN_OK; i++) {
        const kiln_section_spec *s = &sections[i];
        uint8_t *compressed = NULL;
        size_t compressed_size = 0;
        uint64_t aligned;
        if (!s->copy_of)
            status = maybe_compress(s, &compressed, &compressed_size, progress, err);
        if (status != KILN_OK)
            break;
        const uint8_t *stored = compressed ? compressed : s->data;
        size_t stored_size = compressed ? compressed_size : s->size;
        uint16_t flags = (uint16_t)(s->flags | (compressed ? KILN_SECTION_COMPRESSED : 0));
        uint64_t raw_size = s->size;
        uint8_t hash[KILN_DIGEST_SIZE];
        if (!kiln_align_up_u64(offset, KILN_SECTION_ALIGNMENT, &aligned)) {
            free(compressed);
            status = kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
            break;
        }
        kiln_write_zeros(out, (size_t)(aligned - offset));
        kiln_write_bytes(out, stored, stored_size);
        uint32_t crc;
        if (s->copy_of) {
            flags = s->copy_of->flags;
            raw_size = s->copy_of->raw_size;
            crc = s->copy_of->crc;
            memcpy(hash, s->copy_of->hash, sizeof hash);
        } else {
            crc = kiln_crc32(stored, stored_size);
            kiln_blake2b_256_progress(s->data, s->size, hash, progress);
        }
        kiln_write_u32(&table, s->type);
        kiln_write_u16(&table, flags);
        kiln_write_u16(&table, s->version);
        kiln_write_u64(&table, aligned);
        kiln_write_u64(&table, stored_size);
        kiln_write_u64(&table, raw_size);
        kiln_write_u32(&table, crc);
        kiln_write_u32(&table, 0);
        kiln_write_bytes(&table, hash, sizeof hash);
        offset = aligned + stored_size;
        free(compressed);
    }
    uint64_t table_offset = 0;
    if (status == KILN_OK && !kiln_align_up_u64(offset, 8, &table_offset))
        status = kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
    if (status == KILN_OK) {
        kiln_write_zeros(out, (size_t)(table_offset - offset));
        kiln_write_bytes(out, table.data, table.size);
        status = kiln_writer_finish(&table, err);
    }
    if (status == KILN_OK)
        status = kiln_writer_finish(out, err);
    if (status != KILN_OK) {
        kiln_writer_release(&table);
        return status;
    }

    uint64_t file_size = (uint64_t)(out->size - start) + KILN_TRAILER_SIZE;
    memcpy(header, kiln_magic, 8);
    kiln_store_u16(header + 8, KILN_FORMAT_MAJOR);
    kiln_store_u16(header + 10, minor);
    kiln_store_u32(header + 12, KILN_HEADER_SIZE);
    kiln_store_u64(header + 16, file_size);
    kiln_store_u64(header + 24, table_offset);
    kiln_store_u32(header + 32, count);
    kiln_store_u32(header + 36, kiln_crc32(table.data, table.size));
    kiln_store_u64(header + 40, features);
    kiln_store_u32(header + 60, kiln_crc32(header, 60));
    memcpy(out->data + start, header, KILN_HEADER_SIZE);

    uint8_t digest[KILN_DIGEST_SIZE], trailer[KILN_TRAILER_SIZE];
    kiln_blake2b_256_pair(header, KILN_HEADER_SIZE, table.data, table.size, digest);
    kiln_writer_release(&table);
    kiln_trailer_write(trailer, digest, NULL, NULL);
    kiln_write_bytes(out, trailer, KILN_TRAILER_SIZE);
    return kiln_writer_finish(out, err);
}
