/*
 * container_writer.c — laying out a kiln container (see container.h),
 * streamed to a sink.
 *
 * Each section's raw bytes pass through once, in pieces of
 * KILN_WRITE_CHUNK: a piece is hashed (BLAKE2b-256 of the raw bytes),
 * compressed when asked, checksummed (CRC32 of the stored bytes) and
 * written while it is still in the cache. Nothing the size of a section is
 * allocated, so writing an artifact costs the memory of its sections'
 * sources (the builder's weights, or the files they are read from) plus
 * one piece, not two or three copies of the artifact as when the file was
 * assembled in memory first (a 128 MiB weight peaked at 391 MiB then).
 *
 * 1 MiB pieces: small enough that a piece is still in L2 when it is
 * checksummed and copied to the page cache after being hashed, large
 * enough that the system calls cost nothing next to the hashing (128 per
 * 128 MiB). On the 128 MiB weight of tests/bench/writer.sh the writer
 * spends 0.37 s of CPU (was 1.12 s), about half of it in BLAKE2b, and
 * ends within 1.0-1.3x of `dd conv=fsync` of the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "checked_math.h"
#include "container.h"
#include "error.h"
#include "file_io.h"
#include "hashing.h"

static const uint8_t trailer_magic[4] = {'K', 'L', 'N', 'T'};
static const uint8_t zeros[KILN_SECTION_ALIGNMENT];

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

struct kiln_section_output {
    const kiln_byte_sink *sink;
    kiln_progress *progress; /* NULL on a second, raw pass: those bytes were counted */
    char type[5];            /* for messages */
    uint64_t start;          /* file offset of the section */
    uint64_t position;       /* file offset of the next stored byte */
    uint64_t raw_expected;
    uint64_t raw_done;
    uint64_t stored;
    uint32_t crc;            /* of the stored bytes */
    kiln_blake2b_state hash; /* of the raw bytes */
    z_stream *deflate;       /* NULL: the section is stored raw */
    bool gave_up;            /* the zlib stream reached the raw size: store raw */
    uint8_t *buffer;         /* KILN_WRITE_CHUNK bytes: small raw writes gathered, or zlib output */
    size_t buffered;
};

/* Checksum and write stored bytes at the section's current position. */
static kiln_status emit_stored(kiln_section_output *out, const uint8_t *bytes, size_t size, kiln_error *err)
{
    if (size == 0)
        return KILN_OK;
    out->crc = kiln_crc32_update(out->crc, bytes, size);
    KILN_TRY(out->sink->write_at(out->sink->user, out->position, bytes, size, err));
    out->position += size;
    out->stored += size;
    return KILN_OK;
}

/*
 * Write the zlib output gathered so far, unless the stream has reached the
 * raw size: then the section will be stored raw, and nothing past its raw
 * size is ever written, so the raw pass overwrites every compressed byte.
 */
static kiln_status flush_compressed(kiln_section_output *out, kiln_error *err)
{
    if (out->stored + out->buffered >= out->raw_expected) {
        out->gave_up = true;
        out->buffered = 0;
        return KILN_OK;
    }
    kiln_status status = emit_stored(out, out->buffer, out->buffered, err);
    out->buffered = 0;
    return status;
}

/* Run deflate over what it was given, with `flush`, writing full buffers. */
static kiln_status run_deflate(kiln_section_output *out, int flush, kiln_error *err)
{
    z_stream *z = out->deflate;
    for (;;) {
        z->next_out = out->buffer + out->buffered;
        z->avail_out = (uInt)(KILN_WRITE_CHUNK - out->buffered);
        int rc = deflate(z, flush);
        out->buffered = KILN_WRITE_CHUNK - z->avail_out;
        if (rc == Z_STREAM_ERROR)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "zlib could not compress section %s", out->type);
        if (out->buffered == KILN_WRITE_CHUNK) {
            KILN_TRY(flush_compressed(out, err));
            if (out->gave_up)
                return KILN_OK;
            continue;
        }
        if (flush == Z_FINISH ? rc == Z_STREAM_END : z->avail_in == 0)
            return KILN_OK;
    }
}

/* Hash and store (or compress) one piece of at most KILN_WRITE_CHUNK raw bytes. */
static kiln_status take_piece(kiln_section_output *out, const uint8_t *bytes, size_t size, kiln_error *err)
{
    kiln_blake2b_256_update(&out->hash, bytes, size);
    kiln_progress_advance(out->progress, size);
    if (out->deflate) {
        out->deflate->next_in = (Bytef *)(uintptr_t)bytes;
        out->deflate->avail_in = (uInt)size;
        return run_deflate(out, Z_NO_FLUSH, err);
    }
    if (out->buffered == 0 && size == KILN_WRITE_CHUNK)
        return emit_stored(out, bytes, size, err); /* a whole piece: no copy */
    memcpy(out->buffer + out->buffered, bytes, size); /* fits: the caller cut the piece to the room left */
    out->buffered += size;
    if (out->buffered < KILN_WRITE_CHUNK)
        return KILN_OK;
    out->buffered = 0;
    return emit_stored(out, out->buffer, KILN_WRITE_CHUNK, err);
}

kiln_status kiln_section_output_write(kiln_section_output *out, const void *data, size_t size, kiln_error *err)
{
    const uint8_t *bytes = data;
    if (size > out->raw_expected - out->raw_done)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "section %s: its bytes run past the %llu declared (%llu written, %zu more given)", out->type,
                         (unsigned long long)out->raw_expected, (unsigned long long)out->raw_done, size);
    out->raw_done += size;
    if (out->gave_up)
        return KILN_OK; /* the raw pass will write these */
    while (size > 0) {
        /* Raw pieces fill the buffer up to a whole chunk, so that once it
         * is empty whole chunks skip it; zlib takes whole chunks. */
        size_t piece = out->deflate ? KILN_WRITE_CHUNK : KILN_WRITE_CHUNK - out->buffered;
        if (piece > size)
            piece = size;
        KILN_TRY(take_piece(out, bytes, piece, err));
        if (out->gave_up)
            return KILN_OK;
        bytes += piece;
        size -= piece;
    }
    return KILN_OK;
}

kiln_status kiln_section_output_zeros(kiln_section_output *out, uint64_t size, kiln_error *err)
{
    while (size > 0) {
        size_t piece = size > sizeof zeros ? sizeof zeros : (size_t)size;
        KILN_TRY(kiln_section_output_write(out, zeros, piece, err));
        size -= piece;
    }
    return KILN_OK;
}

/* The producer of a section whose raw bytes are in memory. */
static kiln_status produce_memory(void *user, kiln_section_output *out, kiln_error *err)
{
    const kiln_section_spec *spec = user;
    return kiln_section_output_write(out, spec->data, spec->size, err);
}

/* Start (or restart, raw) the section at out->start. */
static kiln_status section_begin(kiln_section_output *out, int level, kiln_error *err)
{
    out->position = out->start;
    out->raw_done = 0;
    out->stored = 0;
    out->crc = 0;
    out->buffered = 0;
    out->gave_up = false;
    kiln_blake2b_256_init(&out->hash);
    if (level <= 0)
        return KILN_OK;
    out->deflate = calloc(1, sizeof *out->deflate);
    if (!out->deflate || deflateInit(out->deflate, level) != Z_OK) {
        free(out->deflate);
        out->deflate = NULL;
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory compressing section %s", out->type);
    }
    return KILN_OK;
}

static void end_deflate(kiln_section_output *out)
{
    if (out->deflate) {
        deflateEnd(out->deflate);
        free(out->deflate);
        out->deflate = NULL;
    }
}

/*
 * Write one section at out->start from its producer and fill its table
 * fields: compressed when asked and smaller, else raw (produced again).
 */
static kiln_status write_section(kiln_section_output *out, const kiln_section_spec *spec, uint16_t *flags,
                                 uint8_t hash[KILN_DIGEST_SIZE], kiln_error *err)
{
    kiln_section_produce_fn produce = spec->produce ? spec->produce : produce_memory;
    void *user = spec->produce ? spec->produce_user : (void *)(uintptr_t)spec;
    int level = spec->size > 0 ? spec->compression_level : 0;
    if (level < 0 || level > 9)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "compression level %d is not in 1..9",
                         spec->compression_level);
    out->raw_expected = spec->size;
    KILN_TRY(section_begin(out, level, err));
    kiln_status status = produce(user, out, err);
    if (status == KILN_OK && out->deflate && !out->gave_up) {
        status = run_deflate(out, Z_FINISH, err);
        if (status == KILN_OK && !out->gave_up)
            status = flush_compressed(out, err);
    }
    bool compressed = out->deflate && !out->gave_up;
    end_deflate(out);
    if (status == KILN_OK && level > 0 && !compressed) {
        /* Incompressible: the section is stored raw, produced a second time. */
        out->progress = NULL;
        status = section_begin(out, 0, err);
        if (status == KILN_OK)
            status = produce(user, out, err);
    }
    if (status == KILN_OK && !compressed) {
        status = emit_stored(out, out->buffer, out->buffered, err);
        out->buffered = 0;
    }
    if (status != KILN_OK)
        return status;
    if (out->raw_done != out->raw_expected)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "section %s: %llu bytes were written, %llu declared",
                         out->type, (unsigned long long)out->raw_done, (unsigned long long)out->raw_expected);
    *flags = (uint16_t)(spec->flags | (compressed ? KILN_SECTION_COMPRESSED : 0));
    kiln_blake2b_256_final(&out->hash, hash);
    return KILN_OK;
}

/* Write `size` bytes at `offset`, in pieces (bounded system calls; a
 * mapping's pages given back behind them). */
static kiln_status write_stored_copy(const kiln_byte_sink *sink, uint64_t offset, const uint8_t *bytes,
                                     uint64_t size, bool mapped, kiln_progress *progress, kiln_error *err)
{
    while (size > 0) {
        size_t piece = size > KILN_WRITE_CHUNK * 4 ? KILN_WRITE_CHUNK * 4 : (size_t)size;
        KILN_TRY(sink->write_at(sink->user, offset, bytes, piece, err));
        kiln_progress_advance(progress, piece);
        if (mapped)
            kiln_mapped_pages_release(bytes, piece);
        offset += piece;
        bytes += piece;
        size -= piece;
    }
    return KILN_OK;
}

static void table_entry(kiln_writer *table, uint32_t type, uint16_t flags, uint16_t version, uint64_t offset,
                        uint64_t stored_size, uint64_t raw_size, uint32_t crc, const uint8_t hash[KILN_DIGEST_SIZE])
{
    kiln_write_u32(table, type);
    kiln_write_u16(table, flags);
    kiln_write_u16(table, version);
    kiln_write_u64(table, offset);
    kiln_write_u64(table, stored_size);
    kiln_write_u64(table, raw_size);
    kiln_write_u32(table, crc);
    kiln_write_u32(table, 0);
    kiln_write_bytes(table, hash, KILN_DIGEST_SIZE);
}

/* Write the sections from offset 64 on, their table entries into `table`; *end: where the last one ends. */
static kiln_status write_sections(const kiln_section_spec *sections, uint32_t count, kiln_section_output *out,
                                  kiln_writer *table, uint64_t *end, kiln_error *err)
{
    uint64_t offset = KILN_HEADER_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        const kiln_section_spec *s = &sections[i];
        uint64_t aligned, section_end;
        if (!kiln_align_up_u64(offset, KILN_SECTION_ALIGNMENT, &aligned))
            return kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
        KILN_TRY(out->sink->write_at(out->sink->user, offset, zeros, (size_t)(aligned - offset), err));
        if (s->copy_of) {
            const kiln_section_entry *e = s->copy_of;
            KILN_TRY(write_stored_copy(out->sink, aligned, s->data, s->size, s->data_mapped, out->progress, err));
            table_entry(table, s->type, e->flags, s->version, aligned, s->size, e->raw_size, e->crc, e->hash);
            section_end = aligned + s->size;
        } else {
            uint16_t flags = 0;
            uint8_t hash[KILN_DIGEST_SIZE] = {0};
            kiln_fourcc_text(s->type, out->type);
            out->start = aligned;
            KILN_TRY(write_section(out, s, &flags, hash, err));
            table_entry(table, s->type, flags, s->version, aligned, out->stored, s->size, out->crc, hash);
            section_end = out->position;
        }
        if (section_end < aligned)
            return kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
        offset = section_end;
    }
    *end = offset;
    return KILN_OK;
}

kiln_status kiln_container_write(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                 uint64_t features, const kiln_byte_sink *sink, kiln_progress *progress,
                                 kiln_error *err)
{
    uint8_t header[KILN_HEADER_SIZE] = {0};
    kiln_writer table;
    kiln_section_output out = {.sink = sink, .progress = progress};
    uint64_t end = 0, table_offset = 0, file_size = 0;

    out.buffer = malloc(KILN_WRITE_CHUNK);
    if (!out.buffer)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory writing an artifact");
    kiln_writer_init(&table);
    /* Zeros now, so the file is written front to back; the header is
     * filled in once the layout is known. */
    kiln_status status = sink->write_at(sink->user, 0, zeros, KILN_HEADER_SIZE, err);
    if (status == KILN_OK)
        status = write_sections(sections, count, &out, &table, &end, err);
    end_deflate(&out);
    free(out.buffer);
    if (status == KILN_OK && !kiln_align_up_u64(end, 8, &table_offset))
        status = kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
    if (status == KILN_OK)
        status = kiln_writer_finish(&table, err);
    if (status == KILN_OK &&
        (!kiln_add_u64(table_offset, table.size, &file_size) ||
         !kiln_add_u64(file_size, KILN_TRAILER_SIZE, &file_size)))
        status = kiln_fail(err, KILN_ERR_LIMIT, "artifact too large");
    if (status == KILN_OK)
        status = sink->write_at(sink->user, end, zeros, (size_t)(table_offset - end), err);
    if (status == KILN_OK)
        status = sink->write_at(sink->user, table_offset, table.data, table.size, err);
    if (status != KILN_OK) {
        kiln_writer_release(&table);
        return status;
    }

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

    uint8_t digest[KILN_DIGEST_SIZE], trailer[KILN_TRAILER_SIZE];
    kiln_blake2b_256_pair(header, KILN_HEADER_SIZE, table.data, table.size, digest);
    kiln_trailer_write(trailer, digest, NULL, NULL);
    status = sink->write_at(sink->user, table_offset + table.size, trailer, KILN_TRAILER_SIZE, err);
    kiln_writer_release(&table);
    if (status == KILN_OK)
        status = sink->write_at(sink->user, 0, header, KILN_HEADER_SIZE, err);
    return status;
}

/* ------------------------------------------------------------ sinks */

typedef struct memory_sink {
    kiln_writer *writer;
    size_t base; /* the writer's size when the container began */
} memory_sink;

/* Overwrite what the writer holds at `offset` and append the rest. */
static kiln_status memory_write_at(void *user, uint64_t offset, const uint8_t *bytes, size_t size, kiln_error *err)
{
    memory_sink *m = user;
    kiln_writer *w = m->writer;
    uint64_t at;
    if (!kiln_add_u64(m->base, offset, &at) || at > SIZE_MAX)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory writing an artifact");
    if (at > w->size)
        kiln_write_zeros(w, (size_t)at - w->size);
    KILN_TRY(kiln_writer_finish(w, err));
    size_t inside = w->size - (size_t)at;
    size_t overlap = size < inside ? size : inside;
    if (overlap)
        memcpy(w->data + at, bytes, overlap);
    kiln_write_bytes(w, bytes + overlap, size - overlap);
    return kiln_writer_finish(w, err);
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
    KILN_TRY(kiln_writer_finish(out, err));
    memory_sink memory = {out, out->size};
    kiln_byte_sink sink = {memory_write_at, &memory};
    return kiln_container_write(sections, count, minor, features, &sink, progress, err);
}

static kiln_status file_write_at(void *user, uint64_t offset, const uint8_t *bytes, size_t size, kiln_error *err)
{
    return kiln_atomic_file_write_at(user, offset, bytes, size, err);
}

kiln_status kiln_container_write_file(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                      uint64_t features, const char *path, kiln_progress *progress,
                                      kiln_error *err)
{
    kiln_atomic_file file;
    KILN_TRY(kiln_atomic_file_begin(path, &file, err));
    kiln_byte_sink sink = {file_write_at, &file};
    kiln_status status = kiln_container_write(sections, count, minor, features, &sink, progress, err);
    if (status != KILN_OK) {
        kiln_atomic_file_abort(&file);
        return status;
    }
    return kiln_atomic_file_commit(&file, err);
}
