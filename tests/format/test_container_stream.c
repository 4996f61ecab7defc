/*
 * test_container_stream.c — the streaming container writer
 * (kiln_container_write, kiln_container_write_file): sections produced
 * piece by piece, across the writer's 1 MiB pieces, give the bytes,
 * sizes, CRC32 and BLAKE2b-256 that zlib and libsodium give for the whole
 * section at once (checked with zlib's one-shot compress2 and libsodium
 * directly, not with the writer's helpers); a section whose zlib stream is
 * no smaller than its raw bytes is produced a second time and stored raw,
 * even after compressed output already reached the file; a producer that
 * gives more or fewer bytes than declared, or fails, fails the write, and
 * a failed file write leaves neither the destination nor a temporary file.
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
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "format/container.h"
#include "format/cursor.h"
#include "error.h"
#include "format/file_io.h"

#define DATA KILN_FOURCC('D', 'A', 'T', 'A')
#define MIB ((size_t)1 << 20)

static const kiln_container_limits roomy = {
    .max_sections = 16,
    .max_section_raw_size = (uint64_t)1 << 30,
    .max_decompressed_size = (uint64_t)1 << 30,
};

/* Raw bytes, and how the producer hands them over. */
typedef struct source {
    const uint8_t *bytes;
    size_t size;
    const size_t *pieces; /* sizes handed over in turn, repeated; NULL: all at once */
    size_t piece_count;
    size_t extra;         /* bytes given past `size` (or, negative, short: `missing`) */
    size_t missing;
    kiln_status fail_with; /* KILN_OK, or returned after the first piece */
    int calls;
} source;

static kiln_status produce(void *user, kiln_section_output *out, kiln_error *err)
{
    source *s = user;
    s->calls++;
    size_t total = s->size - s->missing, done = 0;
    for (size_t i = 0; done < total; i++) {
        size_t piece = s->pieces ? s->pieces[i % s->piece_count] : total;
        if (piece > total - done)
            piece = total - done;
        KILN_TRY(kiln_section_output_write(out, s->bytes + done, piece, err));
        done += piece;
        if (s->fail_with != KILN_OK)
            return kiln_fail(err, s->fail_with, "the source failed");
    }
    if (s->extra)
        return kiln_section_output_zeros(out, s->extra, err);
    return KILN_OK;
}

static uint8_t *noise(size_t size, uint64_t seed)
{
    uint8_t *bytes = malloc(size);
    assert_non_null(bytes);
    for (size_t i = 0; i < size; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        bytes[i] = (uint8_t)(seed >> 24);
    }
    return bytes;
}

/* Bytes that compress well but not trivially: a slow ramp with a little noise. */
static uint8_t *ramp(size_t size)
{
    uint8_t *bytes = noise(size, 7);
    for (size_t i = 0; i < size; i++)
        bytes[i] = (uint8_t)((i / 4096) + (bytes[i] & 3));
    return bytes;
}

static kiln_status write_memory(const kiln_section_spec *spec, kiln_writer *w, kiln_error *err)
{
    kiln_writer_init(w);
    return kiln_container_encode_progress(spec, 1, 0, 0, w, NULL, err);
}

/*
 * The one section of artifact `w` holds `raw` as zlib (compress2 at
 * `level`) or libsodium compute it whole: stored bytes, flags, sizes,
 * CRC32 and hash; and it reads back.
 */
static void expect_section(const kiln_writer *w, const uint8_t *raw, size_t size, int level, bool compressed)
{
    kiln_container c;
    kiln_error err;
    kiln_section_view view;
    assert_int_equal(kiln_container_parse(w->data, w->size, &roomy, &c, &err), KILN_OK);
    const kiln_section_entry *e = &c.sections[0];
    const uint8_t *stored = w->data + e->offset;
    uLongf expected_size = compressBound((uLong)size);
    uint8_t *expected = compressed ? malloc(expected_size) : NULL;
    if (compressed) {
        assert_non_null(expected);
        assert_int_equal(compress2(expected, &expected_size, raw, (uLong)size, level), Z_OK);
        assert_int_equal(e->flags, KILN_SECTION_CRITICAL | KILN_SECTION_COMPRESSED);
        assert_int_equal(e->stored_size, expected_size);
        assert_memory_equal(stored, expected, expected_size);
    } else {
        assert_int_equal(e->flags, KILN_SECTION_CRITICAL);
        assert_int_equal(e->stored_size, size);
        assert_memory_equal(stored, raw, size);
    }
    assert_int_equal(e->raw_size, size);
    assert_int_equal(e->crc, (uint32_t)crc32(0, stored, (uInt)e->stored_size));
    uint8_t hash[32];
    crypto_generichash(hash, sizeof hash, raw, size, NULL, 0);
    assert_memory_equal(e->hash, hash, sizeof hash);
    assert_int_equal(kiln_container_verify_digest(&c, &err), KILN_OK);
    assert_int_equal(kiln_container_verify_gaps(&c, &err), KILN_OK);
    assert_int_equal(kiln_container_section(&c, 0, KILN_CHECK_CRC_AND_HASH, &view, &err), KILN_OK);
    assert_int_equal(view.size, size);
    assert_memory_equal(view.data, raw, size);
    kiln_section_view_release(&view);
    kiln_container_release(&c);
    free(expected);
}

/* Pieces that straddle the writer's 1 MiB pieces in every way: tiny, odd, whole, larger. */
static const size_t ragged[] = {1, 63, MIB - 64, MIB, 5, 2 * MIB + 3, 4096};

static void produced_sections_are_written_as_whole_ones(void **state)
{
    (void)state;
    size_t size = 3 * MIB + 12345;
    uint8_t *raw = ramp(size);
    static const int levels[] = {0, 1, 6};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        int level = levels[l];
        source s = {raw, size, ragged, sizeof ragged / sizeof *ragged, 0, 0, KILN_OK, 0};
        kiln_section_spec spec = {.type = DATA, .flags = KILN_SECTION_CRITICAL, .size = size,
                                  .compression_level = level, .produce = produce, .produce_user = &s};
        kiln_writer w;
        kiln_error err;
        assert_int_equal(write_memory(&spec, &w, &err), KILN_OK);
        assert_int_equal(s.calls, 1);
        expect_section(&w, raw, size, level, level > 0);
        /* The same section from memory gives the same file. */
        kiln_section_spec whole = {.type = DATA, .flags = KILN_SECTION_CRITICAL, .data = raw, .size = size,
                                   .compression_level = level};
        kiln_writer again;
        assert_int_equal(write_memory(&whole, &again, &err), KILN_OK);
        assert_int_equal(again.size, w.size);
        assert_memory_equal(again.data, w.data, w.size);
        kiln_writer_release(&again);
        kiln_writer_release(&w);
    }
    free(raw);
}

/*
 * Noise does not compress: zlib's output passes the first MiB pieces to
 * the file before it reaches the raw size, and then the section is
 * produced again and stored raw over it.
 */
static void an_incompressible_section_is_produced_again_and_stored_raw(void **state)
{
    (void)state;
    size_t size = 3 * MIB + 77;
    uint8_t *raw = noise(size, 0x9E3779B97F4A7C15u);
    source s = {raw, size, ragged, sizeof ragged / sizeof *ragged, 0, 0, KILN_OK, 0};
    kiln_section_spec spec = {.type = DATA, .flags = KILN_SECTION_CRITICAL, .size = size, .compression_level = 1,
                              .produce = produce, .produce_user = &s};
    kiln_writer w;
    kiln_error err;
    assert_int_equal(write_memory(&spec, &w, &err), KILN_OK);
    assert_int_equal(s.calls, 2);
    expect_section(&w, raw, size, 1, false);
    assert_int_equal(w.size, 64 + size + (8 - size % 8) % 8 + KILN_TABLE_ENTRY_SIZE + KILN_TRAILER_SIZE);
    kiln_writer_release(&w);
    free(raw);
}

static void a_producer_gives_exactly_the_declared_bytes(void **state)
{
    (void)state;
    uint8_t *raw = ramp(3 * MIB);
    kiln_writer w;
    kiln_error err;
    source over = {raw, 3 * MIB, NULL, 0, 10, 0, KILN_OK, 0};
    kiln_section_spec spec = {.type = DATA, .size = 3 * MIB, .produce = produce, .produce_user = &over};
    assert_int_equal(write_memory(&spec, &w, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "section DATA: its bytes run past the 3145728 declared (3145728 written, 10 more "
                                     "given)");
    kiln_writer_release(&w);
    source under = {raw, 3 * MIB, NULL, 0, 0, 1, KILN_OK, 0};
    spec.produce_user = &under;
    spec.compression_level = 6;
    assert_int_equal(write_memory(&spec, &w, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_string_equal(err.message, "section DATA: 3145727 bytes were written, 3145728 declared");
    kiln_writer_release(&w);
    free(raw);
}

static bool directory_has_temporary_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    bool found = false;
    for (struct dirent *e; (e = readdir(d));)
        found = found || strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return found;
}

/* A file written by the streaming writer is the memory one; a failed write leaves nothing behind. */
static void a_file_is_written_atomically_from_the_stream(void **state)
{
    (void)state;
    char dir[] = "/tmp/kiln-stream-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.kiln", dir);
    size_t size = 2 * MIB + 9;
    uint8_t *raw = ramp(size);
    source s = {raw, size, ragged, sizeof ragged / sizeof *ragged, 0, 0, KILN_OK, 0};
    kiln_section_spec spec = {.type = DATA, .flags = KILN_SECTION_CRITICAL, .size = size, .compression_level = 1,
                              .produce = produce, .produce_user = &s};
    kiln_error err;
    kiln_writer w;
    assert_int_equal(kiln_container_write_file(&spec, 1, 0, 0, path, NULL, &err), KILN_OK);
    assert_int_equal(write_memory(&spec, &w, &err), KILN_OK);
    kiln_mapped_file file;
    assert_int_equal(kiln_mapped_file_open(path, &file, &err), KILN_OK);
    assert_int_equal(file.size, w.size);
    assert_memory_equal(file.bytes, w.data, w.size);
    kiln_mapped_file_release(&file);
    kiln_writer_release(&w);

    /* The source fails after its first piece: the old file stays, no temporary file is left. */
    source failing = {raw, size, ragged, sizeof ragged / sizeof *ragged, 0, 0, KILN_ERR_IO, 0};
    kiln_section_spec broken = spec;
    broken.produce_user = &failing;
    broken.compression_level = 0;
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    assert_int_equal(kiln_container_write_file(&broken, 1, 0, 0, path, NULL, &err), KILN_ERR_IO);
    assert_string_equal(err.message, "the source failed");
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_size, before.st_size);
    assert_false(directory_has_temporary_files(dir));
    unlink(path);
    rmdir(dir);
    free(raw);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(produced_sections_are_written_as_whole_ones),
        cmocka_unit_test(an_incompressible_section_is_produced_again_and_stored_raw),
        cmocka_unit_test(a_producer_gives_exactly_the_declared_bytes),
        cmocka_unit_test(a_file_is_written_atomically_from_the_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
