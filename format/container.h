/*
 * container.h — the kiln container, format major 1.
 *
 * Layout of a kiln artifact (all integers little-endian; normative text is
 * spec/format.md):
 *
 *   1. Header, 64 bytes at offset 0
 *        0  u8[8]  magic 89 4B 4C 4E 0D 0A 1A 0A  ("\x89KLN\r\n\x1a\n")
 *        8  u16    format major               (frozen position in every major)
 *       10  u16    format minor
 *       12  u32    header size (64)
 *       16  u64    file size, trailer included
 *       24  u64    section table offset
 *       32  u32    section count
 *       36  u32    CRC32 of the section table bytes
 *       40  u64    required feature bits      (unknown bit => the reader refuses)
 *       48  u64    reserved, zero
 *       56  u32    reserved, zero
 *       60  u32    CRC32 of header bytes 0..59
 *   2. Sections, each starting at a multiple of 64, in table order,
 *      gaps filled with zero bytes.
 *   3. Section table at an 8-aligned offset after the last section
 *      (zero bytes in between): section count entries of 72 bytes
 *        0  u8[4]  type, four ASCII characters (e.g. "GRPH")
 *        4  u16    flags: bit 0 critical, bit 1 zlib-compressed
 *        6  u16    section version
 *        8  u64    offset
 *       16  u64    stored size (bytes in the file)
 *       24  u64    raw size (bytes after decompression)
 *       32  u32    CRC32 of the stored bytes
 *       36  u32    reserved, zero
 *       40  u8[32] BLAKE2b-256 of the raw bytes
 *   4. Trailer, 128 bytes, ending the file
 *        0  u8[4]  magic "KLNT"
 *        4  u32    flags: bit 0 signed
 *        8  u8[32] artifact digest: BLAKE2b-256 of header || section table
 *       40  u8[16] signing key id (zero when unsigned)
 *       56  u8[64] Ed25519 signature of the digest (zero when unsigned)
 *      120  u32    reserved, zero
 *      124  u32    CRC32 of trailer bytes 0..123
 *
 * The artifact digest commits to every byte before the trailer: to the
 * header and table directly, to each section through its BLAKE2b-256 in
 * the table, and to the gaps by the rule that they are zero. That lets a
 * reader authenticate the structure in microseconds and each section only
 * when it is used (lazy verification). Together with the zero-gap check of
 * full verification it is the same guarantee as hashing the whole file;
 * without it, only the (meaningless) gap bytes go unauthenticated.
 */
#ifndef KILN_FORMAT_CONTAINER_H
#define KILN_FORMAT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

#include "cursor.h"
#include "hashing.h"
#include "progress.h"

#define KILN_FORMAT_MAJOR 1
/* The newest minor this code reads and writes; a writer records the oldest
 * minor that has every section and feature a file uses. */
#define KILN_FORMAT_MINOR 2

#define KILN_HEADER_SIZE 64
#define KILN_TABLE_ENTRY_SIZE 72
#define KILN_TRAILER_SIZE 128
#define KILN_SECTION_ALIGNMENT 64
#define KILN_KEY_ID_SIZE 16
#define KILN_SIGNATURE_SIZE 64

#define KILN_SECTION_CRITICAL 0x0001u
#define KILN_SECTION_COMPRESSED 0x0002u
#define KILN_SECTION_KNOWN_FLAGS (KILN_SECTION_CRITICAL | KILN_SECTION_COMPRESSED)

#define KILN_TRAILER_SIGNED 0x0001u

/* zlib never expands data by more than this factor, so a compressed
 * section claiming a larger raw size is refused before inflating. */
#define KILN_MAX_COMPRESSION_RATIO 1032

/* Required feature bit 0: the program holds half-precision values (f16 or
 * bf16 inputs, weights or node results; spec/format.md §6). A runtime that
 * cannot run them refuses the file as an unknown required feature. */
#define KILN_FEATURE_HALF_PRECISION (UINT64_C(1) << 0)

/* Required feature bit 1: some method declares relations across its dims,
 * stored at the end of every DIMS payload (spec/format.md §6, §7.3; format
 * 1.3). A runtime without it would misread DIMS, so it must refuse. */
#define KILN_FEATURE_DIM_RELATIONS (UINT64_C(1) << 1)

/* Feature bits this runtime understands. */
#define KILN_KNOWN_FEATURES (KILN_FEATURE_HALF_PRECISION | KILN_FEATURE_DIM_RELATIONS)

extern const uint8_t kiln_magic[8];

/* Four-character section type codes, stored in file byte order. */
#define KILN_FOURCC(a, b, c, d) \
    ((uint32_t)(uint8_t)(a) | (uint32_t)(uint8_t)(b) << 8 | \
     (uint32_t)(uint8_t)(c) << 16 | (uint32_t)(uint8_t)(d) << 24)

/* Render a type code as text, replacing non-printable bytes with '?'. */
void kiln_fourcc_text(uint32_t type, char out[5]);

typedef struct kiln_section_entry {
    uint32_t type;
    uint16_t flags;
    uint16_t version;
    uint64_t offset;
    uint64_t stored_size;
    uint64_t raw_size;
    uint32_t crc;
    uint8_t hash[KILN_DIGEST_SIZE];
} kiln_section_entry;

typedef struct kiln_container_limits {
    uint32_t max_sections;
    uint64_t max_section_raw_size;   /* any section */
    uint64_t max_decompressed_size;  /* a compressed section, once inflated */
} kiln_container_limits;

/* A parsed container: borrowed bytes plus the validated table. */
typedef struct kiln_container {
    const uint8_t *bytes;
    uint64_t size;
    uint16_t major;
    uint16_t minor;
    uint64_t features;
    uint64_t table_offset;
    uint32_t section_count;
    kiln_section_entry *sections;
    uint8_t digest[KILN_DIGEST_SIZE];
    uint32_t trailer_flags;
    uint8_t key_id[KILN_KEY_ID_SIZE];
    uint8_t signature[KILN_SIGNATURE_SIZE];
    kiln_progress *progress; /* set by the caller; NULL for none */
    /* Set by the caller when `bytes` is a read-only mapping of a file
     * (kiln_mapped_file): the pages of an uncompressed section are then
     * given back as soon as they are checked (they stay in the page cache
     * and are mapped again when used), so verifying an artifact does not
     * make them resident: a full verification of a 128 MiB weight no
     * longer peaks at 1x the weights. Never for memory the caller owns,
     * which giving back would zero. */
    bool file_mapped;
} kiln_container;

/*
 * Validate header, version, section table and trailer of `bytes` and fill
 * `out`. Section contents are not read here (see kiln_container_section).
 * On success the caller releases `out` with kiln_container_release.
 * Unknown feature bits are left to the caller to judge (c->features).
 * @return KILN_OK, or the specific error (truncation, magic, version,
 *         header/table/trailer CRC, structure, limits).
 */
kiln_status kiln_container_parse(const uint8_t *bytes, size_t size,
                                 const kiln_container_limits *limits,
                                 kiln_container *out, kiln_error *err);

void kiln_container_release(kiln_container *c);

/* @return the index of the first section of `type`, or -1. */
int64_t kiln_container_find(const kiln_container *c, uint32_t type);

/*
 * Recompute the artifact digest (BLAKE2b-256 of header and table) and
 * compare it with the trailer. Microseconds: it does not read sections.
 * @return KILN_OK or KILN_ERR_DIGEST_MISMATCH.
 */
kiln_status kiln_container_verify_digest(const kiln_container *c, kiln_error *err);

/* Check that every byte between header, sections and table is zero.
 * @return KILN_OK or KILN_ERR_MALFORMED naming the first offset. */
kiln_status kiln_container_verify_gaps(const kiln_container *c, kiln_error *err);

/* The bytes of one section, borrowed from the file or owned (inflated). */
typedef struct kiln_section_view {
    const uint8_t *data;
    size_t size;
    uint8_t *owned; /* non-NULL when `data` was allocated for this view */
} kiln_section_view;

/* What kiln_container_section proves about a section's bytes. */
typedef enum kiln_section_check {
    KILN_CHECK_NOTHING = 0,      /* structure only (the caller verified the file) */
    KILN_CHECK_CRC = 1,          /* CRC32 of the stored bytes: accidental damage */
    KILN_CHECK_CRC_AND_HASH = 2, /* and BLAKE2b-256 of the raw bytes: tampering */
} kiln_section_check;

/*
 * Give the raw bytes of section `index`: check the CRC32 of the stored
 * bytes, inflate a compressed section into an exactly raw-size buffer,
 * and check the BLAKE2b-256 of the raw bytes, as `check` asks.
 * @return KILN_OK, KILN_ERR_SECTION_CRC, KILN_ERR_SECTION_HASH,
 *         KILN_ERR_MALFORMED (bad zlib stream or size), KILN_ERR_LIMIT or
 *         KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_container_section(const kiln_container *c, uint32_t index, kiln_section_check check,
                                   kiln_section_view *out, kiln_error *err);

void kiln_section_view_release(kiln_section_view *view);

/*
 * Where the writer puts a container's bytes: in file order, except that
 * the header is written last, at offset 0 (its sizes and table CRC are
 * known only at the end), and that a section whose compression did not
 * pay is written again, raw, from its own start. A file sink writes the
 * temporary file of an atomic write (kiln_container_write_file); a memory
 * sink appends to a kiln_writer (kiln_container_encode_progress).
 */
typedef struct kiln_byte_sink {
    kiln_status (*write_at)(void *user, uint64_t offset, const uint8_t *bytes, size_t size, kiln_error *err);
    void *user;
} kiln_byte_sink;

/*
 * A section being written: its producer hands over the raw bytes in order
 * with kiln_section_output_write; the writer hashes them (BLAKE2b-256),
 * compresses them when asked, takes the CRC32 of the stored bytes and
 * writes them, a piece at a time, so a section never needs to be in
 * memory whole.
 */
typedef struct kiln_section_output kiln_section_output;

/*
 * Produce a section's raw bytes. Called once, or a second time when the
 * section was to be compressed and its zlib stream came out no smaller
 * than the raw bytes (it is then stored raw): both calls must give the
 * same bytes, exactly the spec's `size` of them.
 */
typedef kiln_status (*kiln_section_produce_fn)(void *user, kiln_section_output *out, kiln_error *err);

/* Hand `size` more raw bytes of the section to the writer.
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT past the declared size, or
 *         the sink's error (KILN_ERR_IO, KILN_ERR_OUT_OF_MEMORY). */
kiln_status kiln_section_output_write(kiln_section_output *out, const void *bytes, size_t size, kiln_error *err);

/* Hand `size` zero bytes to the writer (padding inside a section).
 * @return as kiln_section_output_write. */
kiln_status kiln_section_output_zeros(kiln_section_output *out, uint64_t size, kiln_error *err);

/* One section handed to the writer. */
typedef struct kiln_section_spec {
    uint32_t type;
    uint16_t flags;          /* KILN_SECTION_CRITICAL; the writer sets COMPRESSED */
    uint16_t version;
    const uint8_t *data;     /* raw bytes, or stored bytes when `copy_of` is set */
    size_t size;             /* raw bytes: those at `data`, or those `produce` gives */
    int compression_level;   /* 0 = store; 1..9 = zlib level */
    /* When rewriting an artifact: copy this already-verified section's
     * stored bytes and table fields (flags, sizes, CRC, hash) unchanged. */
    const kiln_section_entry *copy_of;
    /* When set, the raw bytes come from this producer instead of `data`
     * (the weight data, streamed from the weights' own storage). */
    kiln_section_produce_fn produce;
    void *produce_user;
    /* `data` lies in a read-only file mapping (a section copied from the
     * artifact being rewritten): its pages are given back once written. */
    bool data_mapped;
} kiln_section_spec;

/*
 * Lay out header, sections, table and trailer (digest, unsigned) into
 * `out`, which must be initialised. A section is stored compressed only if
 * that makes it smaller. Deterministic: equal inputs (and zlib version)
 * give equal bytes.
 */
kiln_status kiln_container_encode(const kiln_section_spec *sections, uint32_t count,
                                  uint64_t features, kiln_writer *out, kiln_error *err);

/* kiln_container_encode writing format minor `minor` (<= KILN_FORMAT_MINOR;
 * kiln_container_encode writes 0), advancing `progress` (may be NULL) over
 * the raw bytes of the sections as they are hashed (and compressed). */
kiln_status kiln_container_encode_progress(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                           uint64_t features, kiln_writer *out, kiln_progress *progress,
                                           kiln_error *err);

/*
 * The container writer itself: the bytes of kiln_container_encode_progress,
 * written to `sink` as they are made. Sections are streamed in pieces of
 * KILN_WRITE_CHUNK bytes (each hashed, checksummed and written while it is
 * in the cache), so besides the sections' own storage the writer holds one
 * piece, the table and, when compressing, zlib's state (256 KiB at the
 * default window and memory level, by zlib's own account).
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT (a compression level outside
 *         1..9, a producer giving more or fewer bytes than declared),
 *         KILN_ERR_LIMIT (offsets past 2^64), KILN_ERR_OUT_OF_MEMORY, or
 *         the sink's or a producer's error.
 */
kiln_status kiln_container_write(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                 uint64_t features, const kiln_byte_sink *sink, kiln_progress *progress,
                                 kiln_error *err);

/*
 * kiln_container_write into a new file that atomically replaces `path`
 * (file_io.h): the destination holds the old bytes or the whole new
 * artifact, never a part.
 * @return as kiln_container_write, or KILN_ERR_IO from the file.
 */
kiln_status kiln_container_write_file(const kiln_section_spec *sections, uint32_t count, uint16_t minor,
                                      uint64_t features, const char *path, kiln_progress *progress,
                                      kiln_error *err);

/* The size of the pieces the writer streams (see container_writer.c). */
#define KILN_WRITE_CHUNK ((size_t)1 << 20)

/*
 * Write a new trailer into the last KILN_TRAILER_SIZE bytes `trailer`:
 * `digest`, and a signature with its key id when `signature` is non-NULL.
 */
void kiln_trailer_write(uint8_t *trailer, const uint8_t digest[KILN_DIGEST_SIZE],
                        const uint8_t *key_id, const uint8_t *signature);

#endif
