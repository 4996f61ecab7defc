/*
 * test_corruption.c — hostile and damaged artifacts must be refused with the
 * most specific status code, never crash, leak, hang or allocate more than
 * the input can justify.
 *
 * Three layers of attack:
 *  1. damage to a valid artifact (truncation, every single-bit flip), which
 *     the checksums must catch and attribute to the right region, under
 *     each verify policy (FULL, LAZY, NONE) as far as that policy looks;
 *  2. hand-edited container structure, resealed (every CRC, every section's
 *     BLAKE2b-256 and the digest over header and table recomputed) so the
 *     structural checks behind the checksums are reached, including those
 *     of compressed sections;
 *  3. hand-written section payloads with valid checksums, which only the
 *     program decoder and checker can refuse.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fork, alarm, waitpid */
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include <kiln/kiln.h>

#include "format/container.h"
#include "format/cursor.h"
#include "sections.h"
#include "model.h"

/*
 * Under AddressSanitizer, any single allocation above 1 MiB fails (returns
 * NULL) as it would under memory pressure. Every artifact here is well
 * below 1 MiB and every test asserts a specific status, so a size claim
 * trusted before being checked shows up as KILN_ERR_OUT_OF_MEMORY instead
 * of a silent (lazily mapped, hence fast) giant calloc; it also lets
 * test_allocation_failure_reported reach the out-of-memory paths.
 * Without ASan this function is simply never called.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ALLOCATION_CEILING_ACTIVE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOCATION_CEILING_ACTIVE 1
#endif
#endif
#define ALLOCATION_CEILING ((size_t)1 << 20)

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "max_allocation_size_mb=1:allocator_may_return_null=1";
}

/* ------------------------------------------------------------ artifacts */

typedef struct artifact {
    uint8_t *bytes;
    size_t size;
} artifact;

static void artifact_release(artifact *a)
{
    free(a->bytes);
    a->bytes = NULL;
    a->size = 0;
}

/* A fresh heap copy of `size` bytes, so a test can damage it freely. */
static uint8_t *copy_bytes(const uint8_t *bytes, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    if (size)
        memcpy(copy, bytes, size);
    return copy;
}

/* The program of examples/scale.c, y = 2*x + 1 for x: f64[batch, 2] with
 * batch in 2..4, sealed in memory by the public builder. */
static artifact encode_scale_with(const kiln_save_options *options)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    void *bytes = NULL;
    artifact a;
    assert_int_equal(kiln_builder_new("scale", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "kiln examples/scale.c", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b, options, &bytes, &a.size, &err), KILN_OK);
    kiln_builder_free(b);
    a.bytes = bytes;
    return a;
}

static artifact encode_scale(void)
{
    return encode_scale_with(NULL);
}

/* Lay out `specs` as a complete container (header, table, trailer, digest). */
static artifact encode_sections(const kiln_section_spec *specs, uint32_t count, uint64_t features)
{
    kiln_writer w;
    kiln_error err;
    kiln_writer_init(&w);
    assert_int_equal(kiln_container_encode(specs, count, features, &w, &err), KILN_OK);
    return (artifact){w.data, w.size};
}

/* Parse `a`'s container with limits wide enough for any test input. */
static void parse_container(const artifact *a, kiln_container *c)
{
    const kiln_container_limits wide = {UINT32_MAX, UINT64_MAX, UINT64_MAX};
    kiln_error err;
    assert_int_equal(kiln_container_parse(a->bytes, a->size, &wide, c, &err), KILN_OK);
}

/* The sections of `a` as specs borrowing a's bytes, so a test can re-lay
 * them out with changes or additions. @return the section count. */
static uint32_t split_sections(const artifact *a, kiln_section_spec *specs, uint32_t capacity)
{
    kiln_container c;
    parse_container(a, &c);
    assert_true(c.section_count <= capacity);
    for (uint32_t i = 0; i < c.section_count; i++)
        specs[i] = (kiln_section_spec){
            .type = c.sections[i].type,
            .flags = c.sections[i].flags,
            .version = c.sections[i].version,
            .data = a->bytes + c.sections[i].offset,
            .size = (size_t)c.sections[i].stored_size,
        };
    uint32_t count = c.section_count;
    kiln_container_release(&c);
    return count;
}

/* ------------------------------------------------------- resealing */

static uint32_t crc32_of(const uint8_t *bytes, size_t size)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), bytes, (uInt)size);
}

static uint64_t table_offset_of(const uint8_t *bytes)
{
    return kiln_load_u64(bytes + 24);
}

/* Entry `index` of the section table the header points at. */
static uint8_t *table_entry(uint8_t *bytes, uint32_t index)
{
    return bytes + table_offset_of(bytes) + (uint64_t)index * KILN_TABLE_ENTRY_SIZE;
}

static uint8_t *trailer_of(uint8_t *bytes, size_t size)
{
    return bytes + size - KILN_TRAILER_SIZE;
}

/* Recompute only the trailer's own CRC (to fake a digest mismatch). */
static void reseal_trailer_crc(uint8_t *bytes, size_t size)
{
    uint8_t *t = trailer_of(bytes, size);
    kiln_store_u32(t + 124, crc32_of(t, 124));
}

/* Largest raw size reseal() inflates to rehash a compressed section: well
 * under the ASan allocation ceiling, and far above any section here. */
#define RESEAL_INFLATE_MAX ((uint64_t)1 << 18)

/* The raw bytes of a zlib stream that inflates to exactly `raw_size`
 * bytes and ends exactly at the end of its input, or NULL. */
static uint8_t *inflate_exactly(const uint8_t *stored, size_t stored_size, uint64_t raw_size)
{
    z_stream stream;
    if (raw_size > RESEAL_INFLATE_MAX || stored_size > UINT32_MAX)
        return NULL;
    uint8_t *raw = malloc((size_t)raw_size + 1); /* one spare byte exposes a longer stream */
    assert_non_null(raw);
    memset(&stream, 0, sizeof stream);
    assert_int_equal(inflateInit(&stream), Z_OK);
    stream.next_in = (Bytef *)(uintptr_t)stored;
    stream.avail_in = (uInt)stored_size;
    stream.next_out = raw;
    stream.avail_out = (uInt)raw_size + 1;
    int rc = inflate(&stream, Z_FINISH);
    bool exact = rc == Z_STREAM_END && stream.total_out == raw_size && stream.avail_in == 0;
    inflateEnd(&stream);
    if (!exact) {
        free(raw);
        return NULL;
    }
    return raw;
}

/* BLAKE2b-256 of the raw bytes of the section whose table entry is `e`.
 * @return false (and leave `out` alone) when there is no such raw content:
 * a compressed section whose stream does not inflate to its raw size. */
static bool section_raw_hash(const uint8_t *bytes, const uint8_t *e, uint8_t out[KILN_DIGEST_SIZE])
{
    uint64_t offset = kiln_load_u64(e + 8), stored = kiln_load_u64(e + 16), raw_size = kiln_load_u64(e + 24);
    if (!(kiln_load_u16(e + 4) & KILN_SECTION_COMPRESSED)) {
        crypto_generichash(out, KILN_DIGEST_SIZE, bytes + offset, stored, NULL, 0);
        return true;
    }
    uint8_t *raw = inflate_exactly(bytes + offset, (size_t)stored, raw_size);
    if (!raw)
        return false;
    crypto_generichash(out, KILN_DIGEST_SIZE, raw, raw_size, NULL, 0);
    free(raw);
    return true;
}

/*
 * Make every checksum of an edited artifact consistent again, so a load
 * reaches the structural check the edit targets, in dependency order:
 * each in-bounds section's CRC32 (stored bytes) and, when `rehash`, its
 * BLAKE2b-256 at entry offset 40 (raw bytes: a compressed section is
 * inflated, and keeps its hash if it cannot be); then the table CRC, the
 * header CRC, the digest over header || table, and the trailer CRC. A
 * table or section placed outside the area between header and trailer is
 * left alone: there is no valid checksum to give it, and "fixing" it would
 * overwrite the header or trailer.
 */
static void reseal_with(uint8_t *bytes, size_t size, bool rehash)
{
    crypto_generichash_state digest;
    assert_true(size >= KILN_HEADER_SIZE + KILN_TRAILER_SIZE);
    uint64_t table_offset = table_offset_of(bytes);
    uint64_t table_size = (uint64_t)kiln_load_u32(bytes + 32) * KILN_TABLE_ENTRY_SIZE;
    uint64_t area_end = size - KILN_TRAILER_SIZE;
    bool table_in_bounds =
        table_offset >= KILN_HEADER_SIZE && table_offset <= area_end && table_size <= area_end - table_offset;
    if (table_in_bounds) {
        for (uint64_t e = table_offset; e < table_offset + table_size; e += KILN_TABLE_ENTRY_SIZE) {
            uint64_t offset = kiln_load_u64(bytes + e + 8), stored = kiln_load_u64(bytes + e + 16);
            if (offset > size || stored > size - offset)
                continue;
            kiln_store_u32(bytes + e + 32, crc32_of(bytes + offset, (size_t)stored));
            if (rehash)
                (void)section_raw_hash(bytes, bytes + e, bytes + e + 40);
        }
        kiln_store_u32(bytes + 36, crc32_of(bytes + table_offset, (size_t)table_size));
    }
    kiln_store_u32(bytes + 60, crc32_of(bytes, 60));
    crypto_generichash_init(&digest, NULL, 0, KILN_DIGEST_SIZE);
    crypto_generichash_update(&digest, bytes, KILN_HEADER_SIZE);
    if (table_in_bounds)
        crypto_generichash_update(&digest, bytes + table_offset, table_size);
    crypto_generichash_final(&digest, trailer_of(bytes, size) + 8, KILN_DIGEST_SIZE);
    reseal_trailer_crc(bytes, size);
}

static void reseal(uint8_t *bytes, size_t size)
{
    reseal_with(bytes, size, true);
}

/* Reseal, but leave every section's BLAKE2b-256 as it is: an edit that a
 * section's CRC no longer sees, but its hash still does. */
static void reseal_keeping_hashes(uint8_t *bytes, size_t size)
{
    reseal_with(bytes, size, false);
}

/* ---------------------------------------------------------- loading */

typedef struct load_result {
    kiln_status status;
    kiln_error err;
} load_result;

static kiln_load_options options_for(kiln_verify_policy verify)
{
    kiln_load_options options;
    kiln_load_options_default(&options);
    options.verify = verify;
    return options;
}

/* Load and free; a refusal must leave no program and report its own code. */
static load_result load_bytes(const uint8_t *bytes, size_t size, const kiln_load_options *options)
{
    load_result r;
    kiln_program *program = NULL;
    memset(&r.err, 0, sizeof r.err);
    r.status = kiln_program_load_memory(bytes, size, options, &program, NULL, &r.err);
    if (r.status == KILN_OK) {
        assert_non_null(program);
    } else {
        assert_null(program);
        assert_int_equal(r.err.code, r.status);
        assert_non_null(memchr(r.err.message, '\0', sizeof r.err.message));
    }
    kiln_program_free(program);
    return r;
}

/* The highest status code this runtime defines. */
#define LAST_STATUS KILN_ERR_BAD_SIGNATURE

/*
 * What opening `bytes` and then starting one session gives. `session` is
 * the kiln_session_new result when the open succeeded (under the lazy
 * policy that is where the weight data is first checked), else KILN_OK.
 * Both results obey the rules of load_bytes.
 */
typedef struct run_result {
    load_result open;
    load_result session;
} run_result;

static run_result open_and_start(const uint8_t *bytes, size_t size, const kiln_load_options *options)
{
    run_result r;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    memset(&r, 0, sizeof r);
    r.open.status = kiln_program_load_memory(bytes, size, options, &program, NULL, &r.open.err);
    if (r.open.status != KILN_OK) {
        assert_null(program);
        assert_int_equal(r.open.err.code, r.open.status);
        return r;
    }
    assert_non_null(program);
    r.session.status = kiln_session_new(program, NULL, &session, &r.session.err);
    if (r.session.status == KILN_OK) {
        assert_non_null(session);
    } else {
        assert_null(session);
        assert_int_equal(r.session.err.code, r.session.status);
        assert_non_null(memchr(r.session.err.message, '\0', sizeof r.session.err.message));
    }
    kiln_session_free(session);
    kiln_program_free(program);
    return r;
}

static bool result_is(const load_result *r, kiln_status code, const char *word)
{
    return r->status == code && (!word || strstr(r->err.message, word));
}

static void print_mismatch(const char *what, const load_result *r, kiln_status code, const char *word)
{
    print_error("%s: expected %d (%s)%s%s%s, got %d (%s): \"%s\"\n", what, (int)code, kiln_strerror(code),
                word ? " mentioning \"" : "", word ? word : "", word ? "\"" : "", (int)r->status,
                kiln_strerror(r->status), r->err.message);
}

#define expect_load(bytes, size, options, code, word) \
    expect_load_at((bytes), (size), (options), (code), (word), __FILE__, __LINE__)

/* Assert that loading gives `code` and, if `word` is set, that the message contains it. */
static void expect_load_at(const uint8_t *bytes, size_t size, const kiln_load_options *options,
                           kiln_status code, const char *word, const char *file, int line)
{
    load_result r = load_bytes(bytes, size, options);
    if (!result_is(&r, code, word)) {
        print_mismatch("load", &r, code, word);
        _fail(file, line);
    }
}

#define expect_run(bytes, size, options, open_code, session_code, word) \
    expect_run_at((bytes), (size), (options), (open_code), (session_code), (word), __FILE__, __LINE__)

/* Assert that opening gives `open_code` and, if that is KILN_OK, that the
 * first session gives `session_code`; `word` is checked in whichever failed. */
static void expect_run_at(const uint8_t *bytes, size_t size, const kiln_load_options *options,
                          kiln_status open_code, kiln_status session_code, const char *word, const char *file,
                          int line)
{
    run_result r = open_and_start(bytes, size, options);
    const char *open_word = open_code != KILN_OK ? word : NULL;
    const char *session_word = open_code == KILN_OK && session_code != KILN_OK ? word : NULL;
    if (!result_is(&r.open, open_code, open_word)) {
        print_mismatch("open", &r.open, open_code, open_word);
        _fail(file, line);
    }
    if (open_code == KILN_OK && !result_is(&r.session, session_code, session_word)) {
        print_mismatch("first session", &r.session, session_code, session_word);
        _fail(file, line);
    }
}

/* Reseal a copy of `a` after `edit` has changed it, then expect `code`. */
#define expect_edited(a, edit_fn, options, code, word) \
    expect_edited_at((a), (edit_fn), (options), (code), (word), __FILE__, __LINE__)

static void expect_edited_at(const artifact *a, void (*edit)(uint8_t *bytes, size_t size),
                             const kiln_load_options *options, kiln_status code, const char *word,
                             const char *file, int line)
{
    uint8_t *copy = copy_bytes(a->bytes, a->size);
    edit(copy, a->size);
    reseal(copy, a->size);
    load_result r = load_bytes(copy, a->size, options);
    free(copy);
    if (!result_is(&r, code, word)) {
        print_mismatch("edited artifact", &r, code, word);
        _fail(file, line);
    }
}

/* -------------------------------------------- hand-written programs */

enum { META, OPST, DIMS, IOSG, WTAB, GRPH, WDAT, PART_COUNT };

static const uint32_t part_types[PART_COUNT] = {
    KILN_SECTION_META, KILN_SECTION_OPST, KILN_SECTION_DIMS, KILN_SECTION_IOSG,
    KILN_SECTION_WTAB, KILN_SECTION_GRPH, KILN_SECTION_WDAT,
};

/* One payload per program section, written byte by byte. */
typedef struct program_parts {
    kiln_writer part[PART_COUNT];
} program_parts;

/* A string's length field with arbitrary bytes, e.g. an embedded NUL. */
static void write_raw_string(kiln_writer *w, const void *bytes, uint32_t length)
{
    kiln_write_u32(w, length);
    kiln_write_bytes(w, bytes, length);
}

static void write_meta(kiln_writer *w, const char *name, uint8_t mode)
{
    kiln_write_string(w, name);
    kiln_write_u8(w, mode);
    kiln_write_u32(w, 1);
    kiln_write_string(w, "producer");
    kiln_write_string(w, "kiln examples/scale.c");
}

static void write_opset_entry(kiln_writer *w, const char *name, uint32_t version)
{
    kiln_write_string(w, name);
    kiln_write_u32(w, version);
}

/* The single dim of the scale program: batch in 2..4. */
/* The dims of scale: batch in 2..4 (any value: multiple_of 1), no derived dims. */
static void write_batch_dim(kiln_writer *w)
{
    kiln_write_u32(w, 1);
    kiln_write_string(w, "batch");
    kiln_write_i64(w, 2);
    kiln_write_i64(w, 4);
    kiln_write_i64(w, 1);
    kiln_write_u32(w, 0);
}

static void write_expr_const(kiln_writer *w, int64_t value)
{
    kiln_write_u8(w, KILN_EXPR_CONST);
    kiln_write_i64(w, value);
}

static void write_expr_dim(kiln_writer *w, uint32_t dim)
{
    kiln_write_u8(w, KILN_EXPR_DIM);
    kiln_write_u32(w, dim);
}

static void write_expr_binary(kiln_writer *w, uint8_t kind, uint32_t lhs, uint32_t rhs)
{
    kiln_write_u8(w, kind);
    kiln_write_u32(w, lhs);
    kiln_write_u32(w, rhs);
}

/* One input of dtype `dtype` whose axes are the expression ids `axes`. */
static void write_input(kiln_writer *w, const char *name, uint8_t dtype, uint8_t rank, const uint32_t *axes)
{
    kiln_write_string(w, name);
    kiln_write_u8(w, dtype);
    kiln_write_u8(w, rank);
    for (uint8_t a = 0; a < rank; a++)
        kiln_write_u32(w, axes[a]);
}

/* IOSG with input x (axes `axes`) and output y = value `output_value`. */
static void write_signature(kiln_writer *w, uint8_t dtype, uint8_t rank, const uint32_t *axes,
                            uint32_t output_value)
{
    kiln_write_u32(w, 1);
    write_input(w, "x", dtype, rank, axes);
    kiln_write_u32(w, 1);
    kiln_write_string(w, "y");
    kiln_write_u32(w, output_value);
}

static void write_weight(kiln_writer *w, const char *name, uint8_t kind, uint8_t dtype, uint8_t rank,
                         const int64_t *shape, uint64_t data_offset, uint64_t byte_size)
{
    kiln_write_string(w, name);
    kiln_write_u8(w, kind);
    kiln_write_u8(w, dtype);
    kiln_write_u8(w, rank);
    for (uint8_t a = 0; a < rank; a++)
        kiln_write_i64(w, shape[a]);
    kiln_write_u64(w, data_offset);
    kiln_write_u64(w, byte_size);
}

/* The two f64 scalars of scale: scalar_0 = 2 at offset 0, scalar_1 = 1 at 64. */
static void write_scalar_weights(kiln_writer *w, uint32_t extra_count)
{
    kiln_write_u32(w, 2 + extra_count);
    write_weight(w, "scalar_0", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 0, 8);
    write_weight(w, "scalar_1", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 64, 8);
}

static void write_node(kiln_writer *w, uint32_t op, uint32_t input_count, const uint32_t *inputs)
{
    kiln_write_u32(w, op);
    kiln_write_u32(w, input_count);
    for (uint32_t i = 0; i < input_count; i++)
        kiln_write_u32(w, inputs[i]);
    kiln_write_u32(w, 1); /* results */
    kiln_write_u32(w, 0); /* attributes */
}

/* Value ids of the scale program, in the canonical order inputs, weights, nodes. */
enum { VALUE_X, VALUE_TWO, VALUE_ONE, VALUE_DOUBLED, VALUE_Y, VALUE_COUNT };

/* GRPH of scale: doubled = mul(two, x); y = add(doubled, one). */
static void write_scale_graph(kiln_writer *w)
{
    kiln_write_u32(w, 2);
    write_node(w, 0, 2, (uint32_t[]){VALUE_TWO, VALUE_X});
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
}

/*
 * The scale program written field by field, laid out exactly as
 * kiln_model_encode lays it out (test_hand_written_scale_matches_builder
 * proves it), so each test can swap one section for a hostile one while
 * the other six stay valid.
 */
static void parts_init_scale(program_parts *p)
{
    for (int i = 0; i < PART_COUNT; i++)
        kiln_writer_init(&p->part[i]);
    write_meta(&p->part[META], "scale", KILN_MODE_INFERENCE);

    kiln_write_u32(&p->part[OPST], 2);
    write_opset_entry(&p->part[OPST], "mul", 1);
    write_opset_entry(&p->part[OPST], "add", 1);

    write_batch_dim(&p->part[DIMS]);
    kiln_write_u32(&p->part[DIMS], 2);
    write_expr_dim(&p->part[DIMS], 0);   /* expression 0: batch */
    write_expr_const(&p->part[DIMS], 2); /* expression 1: 2 */

    write_signature(&p->part[IOSG], KILN_F64, 2, (uint32_t[]){0, 1}, VALUE_Y);
    write_scalar_weights(&p->part[WTAB], 0);
    write_scale_graph(&p->part[GRPH]);

    kiln_write_f64(&p->part[WDAT], 2.0);
    kiln_write_zeros(&p->part[WDAT], 56);
    kiln_write_f64(&p->part[WDAT], 1.0);
}

/* Empty section `which` so the caller can write a replacement into it. */
static kiln_writer *parts_replace(program_parts *p, int which)
{
    kiln_writer_release(&p->part[which]);
    return &p->part[which];
}

static void parts_release(program_parts *p)
{
    for (int i = 0; i < PART_COUNT; i++)
        kiln_writer_release(&p->part[i]);
}

/* Seal the seven payloads as critical version-1 sections. */
static artifact parts_seal(const program_parts *p)
{
    kiln_section_spec specs[PART_COUNT];
    kiln_error err;
    for (int i = 0; i < PART_COUNT; i++) {
        assert_int_equal(kiln_writer_finish(&p->part[i], &err), KILN_OK);
        specs[i] = (kiln_section_spec){
            .type = part_types[i],
            .flags = KILN_SECTION_CRITICAL,
            .version = KILN_PROGRAM_SECTION_VERSION,
            .data = p->part[i].data,
            .size = p->part[i].size,
        };
    }
    return encode_sections(specs, PART_COUNT, 0);
}

#define expect_parts(parts, options, code, word) \
    expect_parts_at((parts), (options), (code), (word), __FILE__, __LINE__)

static void expect_parts_at(const program_parts *p, const kiln_load_options *options, kiln_status code,
                            const char *word, const char *file, int line)
{
    artifact a = parts_seal(p);
    load_result r = load_bytes(a.bytes, a.size, options);
    artifact_release(&a);
    if (!result_is(&r, code, word)) {
        print_mismatch("hand-written program", &r, code, word);
        _fail(file, line);
    }
}

/* ===================================================== 1. truncation */

/*
 * Every proper prefix of a valid artifact is refused as truncated. The code
 * is KILN_ERR_TRUNCATED at every length, including those below 64: a prefix
 * shorter than 8 bytes cannot show the magic, 8..11 bytes show the magic
 * but not the version, and 12..63 bytes show magic and version 1.0 but not
 * the whole header. Only the message differs, as asserted below.
 */
static void test_truncation_sweep(void **state)
{
    (void)state;
    artifact a = encode_scale();
    for (size_t length = 0; length < a.size; length++) {
        /* A fresh buffer of exactly `length` bytes, so ASan sees any overread. */
        uint8_t *prefix = copy_bytes(a.bytes, length);
        const char *word = length < 12   ? "too short for a kiln header"
                           : length < 64 ? "the header alone needs 64"
                                         : "header declares";
        load_result r = load_bytes(prefix, length, NULL);
        free(prefix);
        if (!result_is(&r, KILN_ERR_TRUNCATED, word)) {
            print_error("prefix of %zu of %zu bytes\n", length, a.size);
            print_mismatch("truncated artifact", &r, KILN_ERR_TRUNCATED, word);
            artifact_release(&a);
            fail();
        }
    }
    /* The whole artifact, for contrast, loads. */
    expect_load(a.bytes, a.size, NULL, KILN_OK, NULL);
    artifact_release(&a);
}

/* A NULL buffer of size 0 is an empty file, not a bad argument. */
static void test_empty_input(void **state)
{
    (void)state;
    expect_load(NULL, 0, NULL, KILN_ERR_TRUNCATED, "0 bytes");
}

/* ===================================================== 2. bit flips */

/* What one flipped bit must produce: the open's status, then (when the
 * open succeeds) the first session's, and a word the failing one names. */
typedef struct flip_expectation {
    kiln_status open;
    kiln_status session;
    char word[64];
    bool in_gap; /* a zero byte between header, sections and table */
} flip_expectation;

/*
 * What a single flipped bit at `offset` of the valid artifact must produce
 * under `verify`, given its container layout `c`. Header, trailer and table
 * are covered by their own CRCs, checked at parse under every policy. A
 * section's bytes are covered by its CRC32: program sections are checked
 * at open under every policy; the weight data (WDAT) at open under FULL,
 * at the first session under LAZY and never under NONE. Gaps are zero by
 * rule, and only FULL checks the rule.
 */
static flip_expectation expected_flip(const kiln_container *c, size_t offset, kiln_verify_policy verify)
{
    flip_expectation x = {KILN_OK, KILN_OK, "", false};
    uint64_t trailer_offset = c->size - KILN_TRAILER_SIZE;
    if (offset < 8) {
        x.open = KILN_ERR_BAD_MAGIC;
    } else if (offset < 10) { /* the major version is read before the header CRC */
        x.open = KILN_ERR_UNSUPPORTED_VERSION;
    } else if (offset < KILN_HEADER_SIZE) { /* minor, fields, and the CRC itself */
        x.open = KILN_ERR_HEADER_CRC;
    } else if (offset >= trailer_offset) { /* magic, or anything the trailer CRC covers */
        x.open = KILN_ERR_TRAILER;
    } else if (offset >= c->table_offset) {
        x.open = KILN_ERR_TABLE_CRC;
    } else {
        for (uint32_t i = 0; i < c->section_count; i++) {
            const kiln_section_entry *s = &c->sections[i];
            if (offset < s->offset || offset >= s->offset + s->stored_size)
                continue;
            kiln_fourcc_text(s->type, x.word);
            if (s->type != KILN_SECTION_WDAT || verify == KILN_VERIFY_FULL)
                x.open = KILN_ERR_SECTION_CRC;
            else if (verify == KILN_VERIFY_LAZY)
                x.session = KILN_ERR_SECTION_CRC;
            /* NONE never reads WDAT's CRC. The scale program's WDAT holds
             * two f64 scalars and zero padding, so any flip there leaves a
             * valid program with other values. */
            return x;
        }
        x.in_gap = true;
        if (verify == KILN_VERIFY_FULL) {
            x.open = KILN_ERR_MALFORMED;
            snprintf(x.word, sizeof x.word, "non-zero byte at offset %zu between sections", offset);
        }
    }
    return x;
}

static void flip_every_bit(kiln_verify_policy verify)
{
    artifact a = encode_scale();
    kiln_container c;
    kiln_load_options options = options_for(verify);
    uint8_t *copy = copy_bytes(a.bytes, a.size);
    size_t gap_bytes = 0, wdat_bytes = 0;
    parse_container(&a, &c);
    for (size_t offset = 0; offset < a.size; offset++) {
        flip_expectation x = expected_flip(&c, offset, verify);
        gap_bytes += x.in_gap;
        wdat_bytes += strcmp(x.word, "WDAT") == 0;
        for (int bit = 0; bit < 8; bit++) {
            copy[offset] ^= (uint8_t)(1u << bit);
            run_result r = open_and_start(copy, a.size, &options);
            copy[offset] ^= (uint8_t)(1u << bit);
            const char *open_word = x.open != KILN_OK && x.word[0] ? x.word : NULL;
            const char *session_word = x.session != KILN_OK && x.word[0] ? x.word : NULL;
            bool ok = result_is(&r.open, x.open, open_word) &&
                      (x.open != KILN_OK || result_is(&r.session, x.session, session_word));
            if (!ok) {
                print_error("bit %d of byte %zu (of %zu), verify=%d\n", bit, offset, a.size, (int)verify);
                if (!result_is(&r.open, x.open, open_word))
                    print_mismatch("open of the flipped artifact", &r.open, x.open, open_word);
                else
                    print_mismatch("first session of the flipped artifact", &r.session, x.session, session_word);
                kiln_container_release(&c);
                free(copy);
                artifact_release(&a);
                fail();
            }
        }
    }
    /* The sweep must have covered gaps and weight data, or their cases went untested. */
    assert_true(gap_bytes > 0);
    assert_int_equal(wdat_bytes, 72);
    kiln_container_release(&c);
    free(copy);
    artifact_release(&a);
}

static void test_bit_flip_sweep_full(void **state)
{
    (void)state;
    flip_every_bit(KILN_VERIFY_FULL);
}

/* Without hashes: program sections are still caught by their CRCs, which
 * even NONE checks; weight data and gaps are the caller's responsibility. */
static void test_bit_flip_sweep_verify_none(void **state)
{
    (void)state;
    flip_every_bit(KILN_VERIFY_NONE);
}

/* LAZY: program sections at open, weight data at the first session. */
static void test_bit_flip_sweep_verify_lazy(void **state)
{
    (void)state;
    flip_every_bit(KILN_VERIFY_LAZY);
}

static const kiln_verify_policy all_policies[3] = {KILN_VERIFY_FULL, KILN_VERIFY_LAZY, KILN_VERIFY_NONE};

/* Change a section hash in the table and fix the table and header CRCs,
 * but not the digest: only the digest can see it. */
static void edit_hash_keep_digest(uint8_t *bytes, size_t size)
{
    uint8_t digest[KILN_DIGEST_SIZE];
    memcpy(digest, trailer_of(bytes, size) + 8, sizeof digest);
    table_entry(bytes, GRPH)[40 + 7] ^= 0x20;
    reseal_keeping_hashes(bytes, size);
    memcpy(trailer_of(bytes, size) + 8, digest, sizeof digest);
    reseal_trailer_crc(bytes, size);
}

/* A digest that no longer matches, under a trailer CRC that does: refused
 * under every policy, since the digest is microseconds of work. */
static void test_digest_mismatch(void **state)
{
    (void)state;
    artifact a = encode_scale();
    uint8_t *copy = copy_bytes(a.bytes, a.size);
    trailer_of(copy, a.size)[8 + 5] ^= 0x10;
    reseal_trailer_crc(copy, a.size);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        expect_load(copy, a.size, &options, KILN_ERR_DIGEST_MISMATCH, "BLAKE2b");
    }
    free(copy);
    /* The same for a consistent header and table that the digest does not match. */
    copy = copy_bytes(a.bytes, a.size);
    edit_hash_keep_digest(copy, a.size);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        expect_load(copy, a.size, &options, KILN_ERR_DIGEST_MISMATCH, "header and section table");
    }
    free(copy);
    artifact_release(&a);
}

/* ========================================= 3. one flip in each section */

static void test_flip_in_each_section_names_it(void **state)
{
    (void)state;
    artifact a = encode_scale();
    kiln_container c;
    kiln_load_options full = options_for(KILN_VERIFY_FULL);
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    parse_container(&a, &c);
    assert_int_equal(c.section_count, PART_COUNT);
    for (uint32_t i = 0; i < c.section_count; i++) {
        char name[5];
        kiln_fourcc_text(c.sections[i].type, name);
        assert_int_equal(c.sections[i].type, part_types[i]);
        uint8_t *copy = copy_bytes(a.bytes, a.size);
        copy[c.sections[i].offset + c.sections[i].stored_size / 2] ^= 0x04;
        expect_load(copy, a.size, NULL, KILN_ERR_SECTION_CRC, name);
        expect_run(copy, a.size, &full, KILN_ERR_SECTION_CRC, KILN_OK, name);
        if (i == WDAT) {
            /* The weight data is read when a session first needs it... */
            expect_run(copy, a.size, &lazy, KILN_OK, KILN_ERR_SECTION_CRC, name);
            /* ...or, under NONE, trusted; this byte is zero padding. */
            expect_run(copy, a.size, &none, KILN_OK, KILN_OK, NULL);
        } else {
            expect_run(copy, a.size, &lazy, KILN_ERR_SECTION_CRC, KILN_OK, name);
            expect_run(copy, a.size, &none, KILN_ERR_SECTION_CRC, KILN_OK, name);
        }
        free(copy);
    }
    kiln_container_release(&c);
    artifact_release(&a);
}

/*
 * A section edited with its CRC fixed (and the table, header and digest
 * resealed over the old BLAKE2b-256): the damage a CRC can be made to miss
 * on purpose. FULL and LAZY name the section by its hash; NONE, which
 * checks no hashes, never reports SECTION_HASH, and whatever the decoders
 * then make of the edited bytes is a specific code.
 */
static void test_section_hash_mismatch_names_it(void **state)
{
    (void)state;
    artifact a = encode_scale();
    kiln_container c;
    kiln_load_options full = options_for(KILN_VERIFY_FULL);
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    parse_container(&a, &c);
    for (uint32_t i = 0; i < c.section_count; i++) {
        char name[5];
        kiln_fourcc_text(c.sections[i].type, name);
        uint8_t *copy = copy_bytes(a.bytes, a.size);
        copy[c.sections[i].offset + c.sections[i].stored_size - 1] ^= 0x01;
        reseal_keeping_hashes(copy, a.size);
        expect_run(copy, a.size, &full, KILN_ERR_SECTION_HASH, KILN_OK, name);
        expect_run(copy, a.size, &full, KILN_ERR_SECTION_HASH, KILN_OK, "BLAKE2b-256 mismatch");
        if (i == WDAT)
            expect_run(copy, a.size, &lazy, KILN_OK, KILN_ERR_SECTION_HASH, name);
        else
            expect_run(copy, a.size, &lazy, KILN_ERR_SECTION_HASH, KILN_OK, name);
        run_result r = open_and_start(copy, a.size, &none);
        assert_true(r.open.status <= LAST_STATUS);
        assert_int_not_equal(r.open.status, KILN_ERR_SECTION_HASH);
        assert_int_not_equal(r.open.status, KILN_ERR_SECTION_CRC);
        if (i == WDAT) /* the low bit of 1.0's last byte: another f64 */
            assert_int_equal(r.open.status, KILN_OK);
        free(copy);
    }
    kiln_container_release(&c);
    artifact_release(&a);
}

/* ====================================== 4. magic, versions, features */

static void test_bad_magic(void **state)
{
    (void)state;
    artifact a = encode_scale();
    for (size_t i = 0; i < 8; i++) {
        uint8_t *copy = copy_bytes(a.bytes, a.size);
        copy[i] = (uint8_t)(copy[i] + 1);
        expect_load(copy, a.size, NULL, KILN_ERR_BAD_MAGIC, "kiln magic");
        free(copy);
    }
    /* Something that is plainly another format, too short to be kiln. */
    static const uint8_t png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    expect_load(png, sizeof png, NULL, KILN_ERR_BAD_MAGIC, NULL);
    artifact_release(&a);
}

static void set_major_2(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u16(bytes + 8, 2);
}

static void set_minor_1(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u16(bytes + 10, 1);
}

static void test_newer_major_refused(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, set_major_2, NULL, KILN_ERR_UNSUPPORTED_VERSION, "2.");
    expect_edited(&a, set_major_2, NULL, KILN_ERR_UNSUPPORTED_VERSION, "format version 2.0");
    /* Magic and major sit at frozen offsets, so a newer major is named even
     * when only its first 12 bytes are present. */
    uint8_t head[12];
    memcpy(head, a.bytes, sizeof head);
    kiln_store_u16(head + 8, 2);
    kiln_store_u16(head + 10, 7);
    expect_load(head, sizeof head, NULL, KILN_ERR_UNSUPPORTED_VERSION, "2.7");
    /* Major 0 is not "older and fine": only major 1 is readable. */
    kiln_store_u16(head + 8, 0);
    expect_load(head, sizeof head, NULL, KILN_ERR_UNSUPPORTED_VERSION, "0.7");
    artifact_release(&a);
}

/* The scale sections plus one extra section, written as format 1.1. */
static artifact encode_scale_plus(uint32_t type, uint16_t flags)
{
    static const uint8_t note[] = "a note from a future writer";
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT + 1];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    specs[count] = (kiln_section_spec){.type = type, .flags = flags, .version = 3,
                                      .data = note, .size = sizeof note};
    artifact a = encode_sections(specs, count + 1, 0);
    artifact_release(&scale);
    set_minor_1(a.bytes, a.size);
    reseal(a.bytes, a.size);
    return a;
}

/* A non-strict matmul of a: [3, k] by w: [4, 5], k in 2..8: one runtime guard (k == 4). */
static artifact encode_non_strict(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value a, w, y;
    void *bytes;
    artifact out;
    assert_int_equal(kiln_builder_new("guarded", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_strict(b, false, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "k", 2, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[3, k]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "w", KILN_F32, "[4, 5]", &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){a, w}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &out.size, &err), KILN_OK);
    kiln_builder_free(b);
    out.bytes = bytes;
    return out;
}

/* `a`'s sections with RGRD's payload replaced by `payload` (or RGRD dropped when NULL). */
static artifact replace_guards(const artifact *a, const kiln_writer *payload)
{
    kiln_section_spec specs[PART_COUNT + 2];
    uint32_t count = split_sections(a, specs, PART_COUNT + 2), kept = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (specs[i].type == KILN_SECTION_RGRD && !payload)
            continue;
        if (specs[i].type == KILN_SECTION_RGRD) {
            specs[i].data = payload->data;
            specs[i].size = payload->size;
        }
        specs[kept++] = specs[i];
    }
    return encode_sections(specs, kept, 0);
}

static void write_guard(kiln_writer *w, uint32_t node, uint8_t kind, uint32_t a, uint32_t b, int64_t k,
                        const char *text)
{
    kiln_write_u32(w, node);
    kiln_write_u8(w, kind);
    kiln_write_u32(w, a);
    kiln_write_u32(w, b);
    kiln_write_i64(w, k);
    kiln_write_string(w, text);
}

/*
 * A non-strict artifact must store every precondition its program leaves
 * unproven; stored guards are checked like every other record, and a
 * strict program (no RGRD) that needs one is refused.
 */
static void test_runtime_guards_are_checked_at_load(void **state)
{
    (void)state;
    artifact good = encode_non_strict();
    load_result r = load_bytes(good.bytes, good.size, NULL);
    assert_int_equal(r.status, KILN_OK);

    kiln_writer w;
    kiln_writer_init(&w);
    kiln_write_u32(&w, 0); /* non-strict, but the k == 4 guard is missing */
    artifact a = replace_guards(&good, &w);
    r = load_bytes(a.bytes, a.size, NULL);
    assert_int_equal(r.status, KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(r.err.message, "node 0 (matmul)"));
    assert_non_null(strstr(r.err.message, "stores no runtime guard"));
    artifact_release(&a);

    a = replace_guards(&good, NULL); /* a strict program that cannot be proven */
    r = load_bytes(a.bytes, a.size, NULL);
    assert_int_equal(r.status, KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(r.err.message, "counterexample: k=2"));
    artifact_release(&a);

    static const struct {
        uint32_t node;
        uint8_t kind;
        uint32_t a;
        int64_t k;
        kiln_status status;
        const char *word;
    } bad[] = {
        {5, 0, 0, 0, KILN_ERR_MALFORMED, "names node 5"},
        {0, 7, 0, 0, KILN_ERR_MALFORMED, "unknown kind 7"},
        {0, 0, 999, 0, KILN_ERR_MALFORMED, "expression 999"},
        {0, 1, 0, 0, KILN_ERR_MALFORMED, "multiple of 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kiln_writer_release(&w);
        kiln_writer_init(&w);
        kiln_write_u32(&w, 1);
        write_guard(&w, bad[i].node, bad[i].kind, bad[i].a, 0, bad[i].k, "a guard");
        a = replace_guards(&good, &w);
        r = load_bytes(a.bytes, a.size, NULL);
        if (r.status != bad[i].status || !strstr(r.err.message, bad[i].word))
            fail_msg("case %zu: %d %s", i, (int)r.status, r.err.message);
        artifact_release(&a);
    }
    /* Truncated records and a guard stored twice. */
    kiln_writer_release(&w);
    kiln_writer_init(&w);
    kiln_write_u32(&w, 2);
    write_guard(&w, 0, 0, 0, 0, 0, "twice");
    a = replace_guards(&good, &w);
    r = load_bytes(a.bytes, a.size, NULL);
    assert_int_equal(r.status, KILN_ERR_MALFORMED);
    artifact_release(&a);
    write_guard(&w, 0, 0, 0, 0, 0, "twice");
    a = replace_guards(&good, &w);
    r = load_bytes(a.bytes, a.size, NULL);
    assert_int_equal(r.status, KILN_ERR_MALFORMED);
    assert_non_null(strstr(r.err.message, "stored twice"));
    artifact_release(&a);
    kiln_writer_release(&w);
    artifact_release(&good);
}

/*
 * A guard record is 25 bytes when its text is empty (spec/format.md
 * §7.10): the count check must not ask for more. The artifact's own guard,
 * re-stored with the texts "" and "k=4", still loads. (The decoder once
 * required 29 bytes per record and refused both.)
 */
static void test_runtime_guard_with_short_text_loads(void **state)
{
    (void)state;
    artifact good = encode_non_strict();
    kiln_section_spec specs[PART_COUNT + 2];
    uint32_t count = split_sections(&good, specs, PART_COUNT + 2);
    const uint8_t *stored = NULL;
    for (uint32_t i = 0; i < count; i++)
        if (specs[i].type == KILN_SECTION_RGRD)
            stored = specs[i].data;
    assert_non_null(stored);
    kiln_reader r;
    uint32_t guards, node, a, b;
    uint8_t kind;
    int64_t k;
    kiln_error err;
    kiln_reader_init(&r, stored, 25, "RGRD");
    assert_int_equal(kiln_read_u32(&r, &guards, &err), KILN_OK);
    assert_int_equal(guards, 1);
    assert_int_equal(kiln_read_u32(&r, &node, &err), KILN_OK);
    assert_int_equal(kiln_read_u8(&r, &kind, &err), KILN_OK);
    assert_int_equal(kiln_read_u32(&r, &a, &err), KILN_OK);
    assert_int_equal(kiln_read_u32(&r, &b, &err), KILN_OK);
    assert_int_equal(kiln_read_i64(&r, &k, &err), KILN_OK);
    static const char *const texts[] = {"", "k=4"};
    for (size_t t = 0; t < 2; t++) {
        kiln_writer w;
        kiln_writer_init(&w);
        kiln_write_u32(&w, 1);
        write_guard(&w, node, kind, a, b, k, texts[t]);
        artifact shorter = replace_guards(&good, &w);
        load_result loaded = load_bytes(shorter.bytes, shorter.size, NULL);
        if (loaded.status != KILN_OK)
            fail_msg("text '%s': %s", texts[t], loaded.err.message);
        artifact_release(&shorter);
        kiln_writer_release(&w);
    }
    artifact_release(&good);
}

static void test_newer_minor_unknown_ancillary_loads(void **state)
{
    (void)state;
    artifact a = encode_scale_plus(KILN_FOURCC('N', 'O', 'T', 'E'), 0);
    kiln_program *program = NULL;
    kiln_error err;
    uint16_t major, minor;
    assert_int_equal(kiln_program_load_memory(a.bytes, a.size, NULL, &program, NULL, &err), KILN_OK);
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(major, 1);
    assert_int_equal(minor, 1);
    assert_int_equal(kiln_program_section_count(program), PART_COUNT + 1);
    assert_string_equal(kiln_program_name(program), "scale");
    kiln_program_free(program);

    /* Skipped is not unchecked: under FULL a damaged ancillary section is
     * still a damaged file, by its CRC or, with the CRC fixed, its hash.
     * LAZY and NONE never read a section the program does not use. */
    kiln_container c;
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    parse_container(&a, &c);
    a.bytes[c.sections[PART_COUNT].offset] ^= 0x01;
    kiln_container_release(&c);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_SECTION_CRC, "section 7 (NOTE)");
    expect_run(a.bytes, a.size, &lazy, KILN_OK, KILN_OK, NULL);
    expect_run(a.bytes, a.size, &none, KILN_OK, KILN_OK, NULL);
    reseal_keeping_hashes(a.bytes, a.size);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_SECTION_HASH, "section 7 (NOTE)");
    expect_run(a.bytes, a.size, &lazy, KILN_OK, KILN_OK, NULL);
    expect_run(a.bytes, a.size, &none, KILN_OK, KILN_OK, NULL);
    artifact_release(&a);
}

static void test_newer_minor_unknown_critical_refused(void **state)
{
    (void)state;
    artifact a = encode_scale_plus(KILN_FOURCC('Z', 'Z', 'Z', 'Z'), KILN_SECTION_CRITICAL);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_UNKNOWN_CRITICAL, "ZZZZ");
    expect_load(a.bytes, a.size, NULL, KILN_ERR_UNKNOWN_CRITICAL, "format 1.1");
    expect_load(a.bytes, a.size, &none, KILN_ERR_UNKNOWN_CRITICAL, "ZZZZ");
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    expect_load(a.bytes, a.size, &lazy, KILN_ERR_UNKNOWN_CRITICAL, "ZZZZ");
    artifact_release(&a);
    /* A non-printable type is rendered safely. */
    a = encode_scale_plus(KILN_FOURCC('Z', 0x01, '\n', 0xff), KILN_SECTION_CRITICAL);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_UNKNOWN_CRITICAL, "'Z\?\?\?'");
    artifact_release(&a);
}

/* y = OP(x) for x: DTYPE[2], with the op's STRING attribute `to` when given (cast). */
static artifact encode_one_op(kiln_dtype dtype, const char *op, const char *to)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, y;
    void *bytes = NULL;
    artifact a;
    assert_int_equal(kiln_builder_new("one_op", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", dtype, "[2]", &x, &err), KILN_OK);
    kiln_attribute attribute = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = to};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, op, 1, &x, to ? 1 : 0, &attribute, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &a.size, &err), KILN_OK);
    kiln_builder_free(b);
    a.bytes = bytes;
    return a;
}

/*
 * Required feature bit 0, half-precision values: the writer sets it
 * exactly when an input, weight or node result is f16 or bf16; a file
 * using them without it keeps the outcome a runtime without half precision
 * gives (dtype-unsupported); the bit without such a value is malformed.
 */
static void test_half_precision_feature_bit(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    assert_int_equal(kiln_load_u64(scale.bytes + 40), 0);
    kiln_section_spec specs[PART_COUNT];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    artifact a = encode_sections(specs, count, UINT64_C(1));
    expect_load(a.bytes, a.size, NULL, KILN_ERR_MALFORMED, "feature bit 0 (half-precision values) is set, but no");
    artifact_release(&a);
    artifact_release(&scale);

    static const struct {
        kiln_dtype dtype;
        const char *op, *to, *refused;
    } cases[] = {
        {KILN_F16, "neg", NULL, "input 'x': dtype f16 is not supported by this runtime without the half-precision "
                                "feature bit"},
        {KILN_BF16, "abs", NULL, "input 'x': dtype bf16 is not supported by this runtime without the half-precision "
                                 "feature bit"},
        {KILN_F32, "cast", "f16", "node 0 (cast): result dtype f16 is not supported by this runtime without the "
                                  "half-precision feature bit"},
        {KILN_I32, "cast", "bf16", "node 0 (cast): result dtype bf16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        artifact half = encode_one_op(cases[i].dtype, cases[i].op, cases[i].to);
        assert_int_equal(kiln_load_u64(half.bytes + 40), UINT64_C(1));
        expect_load(half.bytes, half.size, NULL, KILN_OK, NULL);
        count = split_sections(&half, specs, PART_COUNT);
        a = encode_sections(specs, count, 0);
        expect_load(a.bytes, a.size, NULL, KILN_ERR_UNSUPPORTED_DTYPE, cases[i].refused);
        kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
        expect_load(a.bytes, a.size, &lazy, KILN_ERR_UNSUPPORTED_DTYPE, "half-precision feature bit");
        artifact_release(&a);
        artifact_release(&half);
    }
}

static void test_unknown_feature_bits_refused(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    /* The message names the bit, as a mask ("bits 0x1") or by number ("bit 0"). */
    static const struct {
        uint64_t features;
        const char *as_mask, *as_number;
    } cases[] = {
        {UINT64_C(1) << 2, "0x4 ", "bit 2 "},
        {UINT64_C(1) << 63, "0x8000000000000000", "bit 63 "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        artifact a = encode_sections(specs, count, cases[i].features);
        kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
        expect_load(a.bytes, a.size, NULL, KILN_ERR_UNKNOWN_CRITICAL, "unknown to this runtime");
        expect_load(a.bytes, a.size, &lazy, KILN_ERR_UNKNOWN_CRITICAL, "required feature bit");
        load_result r = load_bytes(a.bytes, a.size, NULL);
        if (!strstr(r.err.message, cases[i].as_mask) && !strstr(r.err.message, cases[i].as_number)) {
            print_error("the message does not name feature bits %s: \"%s\"\n", cases[i].as_mask, r.err.message);
            fail();
        }
        artifact_release(&a);
    }
    artifact_release(&scale);
}

static void test_newer_section_version_refused(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    specs[GRPH].version = 2;
    artifact a = encode_sections(specs, count, 0);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_UNSUPPORTED_VERSION, "'GRPH' has version 2");
    artifact_release(&a);
    artifact_release(&scale);
}

/* ------------------------------------------------ compressed sections */

/* Run a scale program on x = [[1, 2], [3, 4], [5, 6]]; y must be 2x + 1. */
static void expect_scale_runs(const kiln_program *program)
{
    kiln_session *session = NULL;
    kiln_tensor *x = NULL;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, (int64_t[]){3, 2}, &x, &err), KILN_OK);
    double *in = kiln_tensor_data(x);
    for (int i = 0; i < 6; i++)
        in[i] = 1.0 + i;
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const kiln_tensor *y = kiln_session_output(session, 0);
    assert_non_null(y);
    assert_int_equal(kiln_tensor_element_count(y), 6);
    const double *out = kiln_tensor_const_data(y);
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == 2.0 * (1.0 + i) + 1.0);
    kiln_tensor_free(x);
    kiln_session_free(session);
}

/* The builder's own compression: WDAT stored as zlib, read back under
 * every policy, giving the same results as the uncompressed artifact. */
static void test_compressed_weights_load_and_run(void **state)
{
    (void)state;
    kiln_save_options save;
    kiln_save_options_default(&save);
    save.compression_level = 9;
    artifact a = encode_scale_with(&save);
    artifact plain = encode_scale();
    assert_true(a.size < plain.size);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        kiln_program *program = NULL;
        kiln_section_info info;
        kiln_error err;
        assert_int_equal(kiln_program_load_memory(a.bytes, a.size, &options, &program, NULL, &err), KILN_OK);
        kiln_program_section(program, WDAT, &info);
        assert_string_equal(info.type, "WDAT");
        assert_true(info.compressed);
        assert_int_equal(info.raw_size, 72);
        assert_true(info.stored_size < info.raw_size);
        for (uint32_t i = 0; i < WDAT; i++) {
            kiln_program_section(program, i, &info);
            assert_false(info.compressed); /* the writer compresses weight data only */
        }
        expect_scale_runs(program);
        kiln_program_free(program);
    }
    artifact_release(&plain);
    artifact_release(&a);
}

/* The scale program with WDAT padded by 56 zero bytes that no weight uses
 * (128 bytes: its two 8-byte weights packed at 64-byte alignment, the most
 * compressed weight data may inflate to, spec/format.md §7.7), so a raw
 * size one short of the stream still holds every weight and only the
 * inflate check can refuse it. */
static void parts_init_padded_scale(program_parts *p)
{
    parts_init_scale(p);
    kiln_write_zeros(&p->part[WDAT], 56);
}

enum { PADDED_WDAT_SIZE = 128 };

/*
 * The padded scale program whose WDAT stores the `size` bytes `stored`,
 * flagged compressed, with raw size `raw_size` and BLAKE2b-256 `hash` in
 * its table entry; every CRC and the digest consistent with that.
 */
static artifact scale_with_stored_wdat(const uint8_t *stored, size_t size, uint64_t raw_size,
                                       const uint8_t hash[KILN_DIGEST_SIZE])
{
    program_parts p;
    kiln_section_spec specs[PART_COUNT];
    kiln_error err;
    parts_init_padded_scale(&p);
    for (int i = 0; i < PART_COUNT; i++) {
        assert_int_equal(kiln_writer_finish(&p.part[i], &err), KILN_OK);
        specs[i] = (kiln_section_spec){
            .type = part_types[i],
            .flags = KILN_SECTION_CRITICAL,
            .version = KILN_PROGRAM_SECTION_VERSION,
            .data = p.part[i].data,
            .size = p.part[i].size,
        };
    }
    /* Level 0 and the flag set: the writer stores the bytes as given. */
    specs[WDAT].flags |= KILN_SECTION_COMPRESSED;
    specs[WDAT].data = stored;
    specs[WDAT].size = size;
    artifact a = encode_sections(specs, PART_COUNT, 0);
    parts_release(&p);
    uint8_t *e = table_entry(a.bytes, WDAT);
    kiln_store_u64(e + 24, raw_size);
    memcpy(e + 40, hash, KILN_DIGEST_SIZE);
    reseal_keeping_hashes(a.bytes, a.size);
    return a;
}

/* The padded WDAT payload, its hash, and its zlib stream (level 9). */
typedef struct padded_wdat {
    uint8_t raw[PADDED_WDAT_SIZE];
    uint8_t hash[KILN_DIGEST_SIZE];
    uint8_t stream[256];
    size_t stream_size;
} padded_wdat;

static void padded_wdat_init(padded_wdat *w)
{
    program_parts p;
    kiln_error err;
    parts_init_padded_scale(&p);
    assert_int_equal(kiln_writer_finish(&p.part[WDAT], &err), KILN_OK);
    assert_int_equal(p.part[WDAT].size, PADDED_WDAT_SIZE);
    memcpy(w->raw, p.part[WDAT].data, PADDED_WDAT_SIZE);
    parts_release(&p);
    crypto_generichash(w->hash, sizeof w->hash, w->raw, sizeof w->raw, NULL, 0);
    uLongf length = sizeof w->stream;
    assert_int_equal(compress2(w->stream, &length, w->raw, sizeof w->raw, 9), Z_OK);
    w->stream_size = length;
    assert_true(w->stream_size > 6 && w->stream_size < PADDED_WDAT_SIZE);
}

/* Expect `code` from every policy: at open under FULL and NONE (NONE still
 * inflates the weights it binds), at the first session under LAZY. */
#define expect_weights_refused(a, code, word) \
    expect_weights_refused_at((a), (code), (word), __FILE__, __LINE__)

static void expect_weights_refused_at(const artifact *a, kiln_status code, const char *word, const char *file,
                                      int line)
{
    kiln_load_options full = options_for(KILN_VERIFY_FULL);
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    expect_run_at(a->bytes, a->size, &full, code, KILN_OK, word, file, line);
    expect_run_at(a->bytes, a->size, &lazy, KILN_OK, code, word, file, line);
    expect_run_at(a->bytes, a->size, &none, code, KILN_OK, word, file, line);
}

static void test_compressed_stream_sizes(void **state)
{
    (void)state;
    padded_wdat w;
    char word[96];
    padded_wdat_init(&w);

    /* The crafted layout itself is valid, and runs. */
    artifact a = scale_with_stored_wdat(w.stream, w.stream_size, PADDED_WDAT_SIZE, w.hash);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        kiln_program *program = NULL;
        kiln_error err;
        assert_int_equal(kiln_program_load_memory(a.bytes, a.size, &options, &program, NULL, &err), KILN_OK);
        expect_scale_runs(program);
        kiln_program_free(program);
    }
    artifact_release(&a);

    /* A raw size one short of, or one past, what the stream inflates to. */
    a = scale_with_stored_wdat(w.stream, w.stream_size, PADDED_WDAT_SIZE - 1, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate to exactly 127 bytes");
    artifact_release(&a);

    /* A raw size past what the weights need, up to the largest zlib could
     * encode in these bytes, passes the parse and is refused by the weights
     * table before anything is inflated, under every policy (issue #20
     * point 4: padding must not ask for memory). One more than zlib can
     * encode is refused by the parse. */
    uint64_t ceiling = (uint64_t)w.stream_size * KILN_MAX_COMPRESSION_RATIO + 64;
    const uint64_t beyond[] = {PADDED_WDAT_SIZE + 1, ceiling};
    for (size_t b = 0; b < 2; b++) {
        a = scale_with_stored_wdat(w.stream, w.stream_size, beyond[b], w.hash);
        snprintf(word, sizeof word, "compressed weight data inflates to %llu bytes; its weights need %d",
                 (unsigned long long)beyond[b], PADDED_WDAT_SIZE);
        for (int p = 0; p < 3; p++) {
            kiln_load_options options = options_for(all_policies[p]);
            expect_load(a.bytes, a.size, &options, KILN_ERR_MALFORMED, word);
        }
        artifact_release(&a);
    }
    a = scale_with_stored_wdat(w.stream, w.stream_size, ceiling + 1, w.hash);
    snprintf(word, sizeof word, "section 6 (WDAT): raw size %llu is more than zlib can encode in %zu bytes",
             (unsigned long long)(ceiling + 1), w.stream_size);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        expect_load(a.bytes, a.size, &options, KILN_ERR_MALFORMED, word);
    }
    artifact_release(&a);
    /* Nothing stored cannot hold more than 64 raw bytes either. */
    a = scale_with_stored_wdat(w.stream, 0, 65, w.hash);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_MALFORMED, "more than zlib can encode in 0 bytes");
    artifact_release(&a);
}

static void test_compressed_stream_damage(void **state)
{
    (void)state;
    padded_wdat w;
    uint8_t buffer[512];
    padded_wdat_init(&w);

    /* Bytes after the end of the stream: junk, or a whole second stream. */
    memcpy(buffer, w.stream, w.stream_size);
    memcpy(buffer + w.stream_size, "\0\0\0", 3);
    artifact a = scale_with_stored_wdat(buffer, w.stream_size + 3, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate to exactly 128 bytes");
    artifact_release(&a);
    memcpy(buffer + w.stream_size, w.stream, w.stream_size);
    a = scale_with_stored_wdat(buffer, 2 * w.stream_size, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);

    /* A stream cut short by its last (Adler-32) byte, or by half. */
    a = scale_with_stored_wdat(w.stream, w.stream_size - 1, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);
    a = scale_with_stored_wdat(w.stream, w.stream_size / 2, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);

    /* Corrupt streams, CRC and hash consistent: a wrong Adler-32, an
     * unknown compression method, a preset dictionary the reader cannot
     * have, and raw bytes that are no zlib stream at all. */
    memcpy(buffer, w.stream, w.stream_size);
    buffer[w.stream_size - 1] ^= 0x01;
    a = scale_with_stored_wdat(buffer, w.stream_size, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "section 6 (WDAT): the zlib stream does not inflate");
    artifact_release(&a);
    memcpy(buffer, w.stream, w.stream_size);
    buffer[0] = 0x79;
    a = scale_with_stored_wdat(buffer, w.stream_size, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);
    static const uint8_t dictionary_header[6] = {0x78, 0xbb, 0x01, 0x02, 0x03, 0x04}; /* FDICT set */
    memcpy(buffer, dictionary_header, sizeof dictionary_header);
    memcpy(buffer + sizeof dictionary_header, w.stream + 2, w.stream_size - 2);
    a = scale_with_stored_wdat(buffer, w.stream_size + 4, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);
    a = scale_with_stored_wdat(w.raw, sizeof w.raw, PADDED_WDAT_SIZE, w.hash);
    expect_weights_refused(&a, KILN_ERR_MALFORMED, "does not inflate");
    artifact_release(&a);

    /* A valid stream whose raw bytes are not the ones the table's hash
     * names: the CRC (of the stored bytes) is right, the hash is not. */
    uint8_t other_hash[KILN_DIGEST_SIZE];
    memcpy(other_hash, w.hash, sizeof other_hash);
    other_hash[31] ^= 0x80;
    a = scale_with_stored_wdat(w.stream, w.stream_size, PADDED_WDAT_SIZE, other_hash);
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    expect_run(a.bytes, a.size, NULL, KILN_ERR_SECTION_HASH, KILN_OK, "section 6 (WDAT): BLAKE2b-256 mismatch");
    expect_run(a.bytes, a.size, &lazy, KILN_OK, KILN_ERR_SECTION_HASH, "WDAT");
    expect_run(a.bytes, a.size, &none, KILN_OK, KILN_OK, NULL); /* NONE checks no weight hash */
    artifact_release(&a);

    /*
     * Every single-bit flip of the stream, resealed as a forger would (CRC
     * fixed, hash kept): refused by the inflate check or by the hash, or
     * else accepted only because the flipped stream still inflates to
     * exactly the same raw bytes (deflate has bits that do not change the
     * output, e.g. in a Huffman table). The hash commits to raw bytes, so
     * what is accepted is always what was hashed.
     */
    size_t refused = 0, same_output = 0;
    for (size_t i = 0; i < w.stream_size; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(buffer, w.stream, w.stream_size);
            buffer[i] ^= (uint8_t)(1u << bit);
            a = scale_with_stored_wdat(buffer, w.stream_size, PADDED_WDAT_SIZE, w.hash);
            load_result r = load_bytes(a.bytes, a.size, NULL);
            artifact_release(&a);
            if (r.status == KILN_ERR_MALFORMED || r.status == KILN_ERR_SECTION_HASH) {
                refused++;
                continue;
            }
            uint8_t *raw = inflate_exactly(buffer, w.stream_size, PADDED_WDAT_SIZE);
            bool same = r.status == KILN_OK && raw && memcmp(raw, w.raw, PADDED_WDAT_SIZE) == 0;
            free(raw);
            if (!same) {
                print_error("bit %d of stream byte %zu\n", bit, i);
                print_mismatch("flipped zlib stream", &r, KILN_ERR_MALFORMED, NULL);
                fail();
            }
            same_output++;
        }
    }
    assert_int_equal(refused + same_output, w.stream_size * 8);
    assert_true(refused > same_output);
}

/* Program sections may be compressed too (the writer only compresses the
 * weight data, but the format allows any section). */
static void test_compressed_program_section(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    uint8_t stream[256];
    uLongf length = sizeof stream;
    assert_int_equal(compress2(stream, &length, specs[DIMS].data, (uLong)specs[DIMS].size, 9), Z_OK);
    size_t raw_size = specs[DIMS].size;

    /* DIMS flagged compressed over its raw bytes: not a zlib stream. */
    specs[DIMS].flags |= KILN_SECTION_COMPRESSED;
    artifact a = encode_sections(specs, count, 0);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_MALFORMED, "section 2 (DIMS): the zlib stream does not inflate");
    artifact_release(&a);

    /* DIMS stored as a real stream (even if longer than its raw bytes). */
    uint8_t hash[KILN_DIGEST_SIZE];
    crypto_generichash(hash, sizeof hash, specs[DIMS].data, specs[DIMS].size, NULL, 0);
    specs[DIMS].data = stream;
    specs[DIMS].size = length;
    a = encode_sections(specs, count, 0);
    kiln_store_u64(table_entry(a.bytes, DIMS) + 24, raw_size);
    memcpy(table_entry(a.bytes, DIMS) + 40, hash, sizeof hash);
    reseal(a.bytes, a.size);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = options_for(all_policies[p]);
        kiln_limits limits;
        kiln_limits_default(&limits);
        options.limits = &limits;
        kiln_program *program = NULL;
        kiln_error err;
        assert_int_equal(kiln_program_load_memory(a.bytes, a.size, &options, &program, NULL, &err), KILN_OK);
        assert_int_equal(kiln_program_dim_count(program), 1);
        expect_scale_runs(program);
        kiln_program_free(program);
        /* The inflated program sections together are bounded before any is
         * inflated (kiln_limits.max_decompressed_program_bytes). */
        limits.max_decompressed_program_bytes = raw_size - 1;
        expect_load(a.bytes, a.size, &options, KILN_ERR_LIMIT, "max_decompressed_program_bytes");
        limits.max_decompressed_program_bytes = raw_size;
        assert_int_equal(kiln_program_load_memory(a.bytes, a.size, &options, &program, NULL, &err), KILN_OK);
        kiln_program_free(program);
    }
    /* Under NONE the program sections keep their CRC check. */
    a.bytes[kiln_load_u64(table_entry(a.bytes, DIMS) + 8) + 2] ^= 0x40;
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    expect_load(a.bytes, a.size, &none, KILN_ERR_SECTION_CRC, "DIMS");
    artifact_release(&a);
    artifact_release(&scale);
}

/* ============================================ 5. crafted structure */

static void wdat_past_table(uint8_t *bytes, size_t size)
{
    (void)size;
    uint8_t *e = table_entry(bytes, WDAT);
    uint64_t stored = table_offset_of(bytes) - kiln_load_u64(e + 8) + 8;
    kiln_store_u64(e + 16, stored);
    kiln_store_u64(e + 24, stored);
}

static void wdat_size_wraps(uint8_t *bytes, size_t size)
{
    (void)size;
    uint8_t *e = table_entry(bytes, WDAT);
    kiln_store_u64(e + 16, UINT64_MAX - 63);
    kiln_store_u64(e + 24, UINT64_MAX - 63);
}

static void test_section_beyond_section_area(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, wdat_past_table, NULL, KILN_ERR_MALFORMED, "run past the section area");
    expect_edited(&a, wdat_size_wraps, NULL, KILN_ERR_MALFORMED, "run past the section area");
    artifact_release(&a);
}

static void opst_over_meta(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(table_entry(bytes, OPST) + 8, kiln_load_u64(table_entry(bytes, META) + 8));
}

static void meta_over_header(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(table_entry(bytes, META) + 8, 0);
}

/* Table order is offset order, so swapping two sections' places is refused
 * even though the two ranges do not overlap. */
static void swap_meta_opst(uint8_t *bytes, size_t size)
{
    (void)size;
    uint64_t meta = kiln_load_u64(table_entry(bytes, META) + 8);
    uint64_t opst = kiln_load_u64(table_entry(bytes, OPST) + 8);
    kiln_store_u64(table_entry(bytes, META) + 8, opst);
    kiln_store_u64(table_entry(bytes, OPST) + 8, meta);
}

static void test_overlapping_sections(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, opst_over_meta, NULL, KILN_ERR_MALFORMED, "section 1 (OPST)");
    expect_edited(&a, opst_over_meta, NULL, KILN_ERR_MALFORMED, "overlaps");
    expect_edited(&a, meta_over_header, NULL, KILN_ERR_MALFORMED, "overlaps the previous section or header");
    expect_edited(&a, swap_meta_opst, NULL, KILN_ERR_MALFORMED, "overlaps");
    artifact_release(&a);
}

static void misalign_dims(uint8_t *bytes, size_t size)
{
    (void)size;
    uint8_t *e = table_entry(bytes, DIMS);
    kiln_store_u64(e + 8, kiln_load_u64(e + 8) + 8);
}

static void test_misaligned_section(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, misalign_dims, NULL, KILN_ERR_MALFORMED, "not 64-byte aligned");
    artifact_release(&a);
}

static void header_reserved_48(uint8_t *bytes, size_t size)
{
    (void)size;
    bytes[48] = 1;
}

static void header_reserved_59(uint8_t *bytes, size_t size)
{
    (void)size;
    bytes[59] = 0x80;
}

static void entry_reserved(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(table_entry(bytes, IOSG) + 36, 1);
}

static void trailer_reserved(uint8_t *bytes, size_t size)
{
    trailer_of(bytes, size)[123] = 1;
}

static void test_nonzero_reserved_fields(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, header_reserved_48, NULL, KILN_ERR_MALFORMED, "reserved header bytes");
    expect_edited(&a, header_reserved_59, NULL, KILN_ERR_MALFORMED, "reserved header bytes");
    expect_edited(&a, entry_reserved, NULL, KILN_ERR_MALFORMED, "section 3 (IOSG): reserved field");
    expect_edited(&a, trailer_reserved, NULL, KILN_ERR_MALFORMED, "reserved trailer bytes");
    artifact_release(&a);
}

static void section_flag_bit_2(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u16(table_entry(bytes, WTAB) + 4, KILN_SECTION_CRITICAL | 0x0004);
}

static void trailer_flag_bit_1(uint8_t *bytes, size_t size)
{
    kiln_store_u32(trailer_of(bytes, size) + 4, 0x2);
}

static void uncompressed_raw_size_differs(uint8_t *bytes, size_t size)
{
    (void)size;
    uint8_t *e = table_entry(bytes, GRPH);
    kiln_store_u64(e + 24, kiln_load_u64(e + 16) + 1);
}

/* A compressed section may declare any raw size; a huge one hits the
 * limit before anything is inflated or allocated. */
static void compressed_raw_size_huge(uint8_t *bytes, size_t size)
{
    (void)size;
    uint8_t *e = table_entry(bytes, GRPH);
    kiln_store_u16(e + 4, KILN_SECTION_CRITICAL | KILN_SECTION_COMPRESSED);
    kiln_store_u64(e + 24, UINT64_C(1) << 40);
}

static void test_unknown_flags_and_sizes(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, section_flag_bit_2, NULL, KILN_ERR_MALFORMED, "unknown flag bits 0x4");
    expect_edited(&a, trailer_flag_bit_1, NULL, KILN_ERR_MALFORMED, "trailer has unknown flag bits 0x2");
    expect_edited(&a, uncompressed_raw_size_differs, NULL, KILN_ERR_MALFORMED, "uncompressed but raw size");
    expect_edited(&a, compressed_raw_size_huge, NULL, KILN_ERR_LIMIT, "over the limit");
    artifact_release(&a);
}

static void test_extra_trailing_bytes(void **state)
{
    (void)state;
    artifact a = encode_scale();
    uint8_t *longer = calloc(a.size + 16, 1);
    assert_non_null(longer);
    memcpy(longer, a.bytes, a.size);
    expect_load(longer, a.size + 16, NULL, KILN_ERR_MALFORMED, "16 bytes after its declared end");
    /* Even if someone reseals the longer file, the trailer is not at its end. */
    kiln_store_u64(longer + 16, a.size + 16);
    reseal(longer, a.size + 16);
    expect_load(longer, a.size + 16, NULL, KILN_ERR_TRAILER, "trailer magic");
    free(longer);
    artifact_release(&a);
}

static void declare_one_more_byte(uint8_t *bytes, size_t size)
{
    kiln_store_u64(bytes + 16, (uint64_t)size + 1);
}

static void declare_huge_size(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(bytes + 16, UINT64_MAX);
}

static void declare_one_less_byte(uint8_t *bytes, size_t size)
{
    kiln_store_u64(bytes + 16, (uint64_t)size - 1);
}

static void test_declared_file_size(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, declare_one_more_byte, NULL, KILN_ERR_TRUNCATED, "header declares");
    expect_edited(&a, declare_huge_size, NULL, KILN_ERR_TRUNCATED, "18446744073709551615");
    expect_edited(&a, declare_one_less_byte, NULL, KILN_ERR_MALFORMED, "1 bytes after its declared end");
    /* A 64-byte "file" that declares itself complete has no room for a trailer. */
    uint8_t header[KILN_HEADER_SIZE];
    memcpy(header, a.bytes, sizeof header);
    kiln_store_u64(header + 16, sizeof header);
    kiln_store_u32(header + 60, crc32_of(header, 60));
    expect_load(header, sizeof header, NULL, KILN_ERR_MALFORMED, "cannot hold header and trailer");
    artifact_release(&a);
}

static void header_size_65(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(bytes + 12, 65);
}

static void table_offset_plus_8(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(bytes + 24, table_offset_of(bytes) + 8);
}

static void table_offset_zero(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(bytes + 24, 0);
}

static void table_offset_huge(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u64(bytes + 24, UINT64_MAX - 7);
}

static void section_count_6(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(bytes + 32, 6);
}

static void section_count_8(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(bytes + 32, 8);
}

static void test_misplaced_table(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, header_size_65, NULL, KILN_ERR_MALFORMED, "header size is 65");
    expect_edited(&a, table_offset_plus_8, NULL, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    expect_edited(&a, table_offset_zero, NULL, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    expect_edited(&a, table_offset_huge, NULL, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    expect_edited(&a, section_count_6, NULL, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    expect_edited(&a, section_count_8, NULL, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    artifact_release(&a);
}

static void section_count_65(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(bytes + 32, 65);
}

static void section_count_max(uint8_t *bytes, size_t size)
{
    (void)size;
    kiln_store_u32(bytes + 32, UINT32_MAX);
}

static void test_section_count_over_limit(void **state)
{
    (void)state;
    artifact a = encode_scale();
    expect_edited(&a, section_count_65, NULL, KILN_ERR_LIMIT, "65 sections, the limit is 64");
    expect_edited(&a, section_count_max, NULL, KILN_ERR_LIMIT, "the limit is 64");
    /* With the limit lifted, the count is still checked against the bytes
     * before the table is allocated. */
    kiln_load_options lifted = options_for(KILN_VERIFY_FULL);
    kiln_limits lifted_limits;
    kiln_limits_default(&lifted_limits);
    lifted.limits = &lifted_limits;
    lifted_limits.max_sections = UINT32_MAX;
    expect_edited(&a, section_count_max, &lifted, KILN_ERR_MALFORMED, "does not end where the trailer begins");
    /* A caller's tighter limit applies to a valid file too. */
    kiln_load_options tight = options_for(KILN_VERIFY_FULL);
    kiln_limits tight_limits;
    kiln_limits_default(&tight_limits);
    tight.limits = &tight_limits;
    tight_limits.max_sections = 6;
    expect_load(a.bytes, a.size, &tight, KILN_ERR_LIMIT, "7 sections, the limit is 6");
    artifact_release(&a);
}

static void test_duplicate_known_section(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT + 1];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    specs[count] = specs[META];
    artifact a = encode_sections(specs, count + 1, 0);
    expect_load(a.bytes, a.size, NULL, KILN_ERR_MALFORMED, "'META' appears twice");
    artifact_release(&a);
    artifact_release(&scale);
}

static void test_missing_required_section(void **state)
{
    (void)state;
    artifact scale = encode_scale();
    kiln_section_spec specs[PART_COUNT];
    uint32_t count = split_sections(&scale, specs, PART_COUNT);
    for (uint32_t missing = 0; missing < count; missing++) {
        kiln_section_spec fewer[PART_COUNT];
        uint32_t n = 0;
        char name[5], word[32];
        for (uint32_t i = 0; i < count; i++)
            if (i != missing)
                fewer[n++] = specs[i];
        kiln_fourcc_text(part_types[missing], name);
        snprintf(word, sizeof word, "'%s' is missing", name);
        artifact a = encode_sections(fewer, n, 0);
        expect_load(a.bytes, a.size, NULL, KILN_ERR_MALFORMED, word);
        artifact_release(&a);
    }
    /* A container with no sections at all. */
    artifact empty = encode_sections(NULL, 0, 0);
    expect_load(empty.bytes, empty.size, NULL, KILN_ERR_MALFORMED, "'META' is missing");
    artifact_release(&empty);
    artifact_release(&scale);
}

/* ========================================= 6. crafted program payloads */

/* The hand-written program must be byte-identical to the builder's, or
 * every payload test below would be testing a different program. */
static void test_hand_written_scale_matches_builder(void **state)
{
    (void)state;
    program_parts p;
    artifact built = encode_scale();
    parts_init_scale(&p);
    artifact written = parts_seal(&p);
    assert_int_equal(written.size, built.size);
    assert_memory_equal(written.bytes, built.bytes, built.size);
    expect_load(written.bytes, written.size, NULL, KILN_OK, NULL);
    artifact_release(&written);
    artifact_release(&built);
    parts_release(&p);
}

/* Every proper prefix of every section payload, resealed, is malformed:
 * every field is required, so no shortened payload can still parse. */
static void test_payload_truncation_sweep(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    for (int which = 0; which < PART_COUNT; which++) {
        size_t full = p.part[which].size;
        for (size_t length = 0; length < full; length++) {
            p.part[which].size = length;
            artifact a = parts_seal(&p);
            p.part[which].size = full;
            load_result r = load_bytes(a.bytes, a.size, NULL);
            artifact_release(&a);
            if (!result_is(&r, KILN_ERR_MALFORMED, NULL)) {
                print_error("section %d cut to %zu of %zu bytes\n", which, length, full);
                print_mismatch("shortened payload", &r, KILN_ERR_MALFORMED, NULL);
                parts_release(&p);
                fail();
            }
        }
    }
    parts_release(&p);
}

static void test_payload_trailing_bytes(void **state)
{
    (void)state;
    static const char *const contexts[] = {"section META", "section OPST", "section DIMS",
                                           "section IOSG", "section WTAB", "section GRPH"};
    for (int which = META; which <= GRPH; which++) {
        program_parts p;
        char word[64];
        parts_init_scale(&p);
        kiln_write_u8(&p.part[which], 0);
        snprintf(word, sizeof word, "%s: 1 unexpected trailing bytes", contexts[which]);
        expect_parts(&p, NULL, KILN_ERR_MALFORMED, word);
        parts_release(&p);
    }
    /* WDAT is raw storage addressed by WTAB: bytes no weight refers to are
     * allowed (like the alignment gaps between weights). */
    program_parts p;
    parts_init_scale(&p);
    kiln_write_zeros(&p.part[WDAT], 100);
    expect_parts(&p, NULL, KILN_OK, NULL);
    parts_release(&p);
}

/* WTAB with the two scalars plus one more weight "big". */
static void write_weights_with_big(kiln_writer *w, uint8_t dtype, uint8_t rank, const int64_t *shape,
                                   uint64_t byte_size)
{
    write_scalar_weights(w, 1);
    write_weight(w, "big", KILN_WEIGHT_PARAMETER, dtype, rank, shape, 128, byte_size);
}

/* Weight claims are checked against the bytes present before anything is
 * allocated for them (the ASan allocation ceiling enforces "nothing"). */
static void test_huge_weight_claims(void **state)
{
    (void)state;
    program_parts p;
    const int64_t two_pow_40[1] = {INT64_C(1) << 40};
    parts_init_scale(&p);

    /* 2^40 f64 elements with the matching byte count, 8 TiB. */
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 1, two_pow_40, UINT64_C(8) << 40);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "lies outside the 72-byte weight data");
    /* The same shape, claiming only 8 bytes. */
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 1, two_pow_40, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "its shape needs 8796093022208");
    /* Element counts that overflow 64 bits, and byte counts that do. */
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 2,
                           (int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32}, 8);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "element count overflows");
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 1, (int64_t[]){INT64_C(1) << 61}, 8);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "too large to address");
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 1, (int64_t[]){-1}, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "negative extent");
    /* A data offset near 2^64 must not wrap around the bounds check. */
    write_scalar_weights(parts_replace(&p, WTAB), 1);
    write_weight(&p.part[WTAB], "big", KILN_WEIGHT_PARAMETER, KILN_F64, 0, NULL, UINT64_MAX - 63, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "lies outside");
    /* The weight count itself is bounded by the bytes that follow it. */
    kiln_write_u32(parts_replace(&p, WTAB), 60000);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "claims 60000 weights");
    kiln_write_u32(parts_replace(&p, WTAB), 70000);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "70000 weights exceeds the limit of 65536");
    parts_release(&p);

    /* A caller's byte budget for weights applies to the sum. */
    kiln_load_options tight = options_for(KILN_VERIFY_FULL);
    kiln_limits tight_limits;
    kiln_limits_default(&tight_limits);
    tight.limits = &tight_limits;
    tight_limits.max_weight_bytes = 15;
    parts_init_scale(&p);
    expect_parts(&p, &tight, KILN_ERR_LIMIT, "weights exceed the limit of 15 bytes");
    parts_release(&p);
}

static void test_weight_entry_fields(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    /* scalar_1 moved off the 64-byte grid. */
    kiln_writer *w = parts_replace(&p, WTAB);
    kiln_write_u32(w, 2);
    write_weight(w, "scalar_0", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 0, 8);
    write_weight(w, "scalar_1", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 8, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "'scalar_1' (8 bytes at 8) lies outside");
    /* An unknown weight kind. */
    w = parts_replace(&p, WTAB);
    kiln_write_u32(w, 2);
    write_weight(w, "scalar_0", 3, KILN_F64, 0, NULL, 0, 8);
    write_weight(w, "scalar_1", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 64, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "unknown kind 3");
    parts_release(&p);
}

static void test_node_count_claims(void **state)
{
    (void)state;
    program_parts p;
    kiln_load_options lifted = options_for(KILN_VERIFY_FULL);
    kiln_limits lifted_limits;
    kiln_limits_default(&lifted_limits);
    lifted.limits = &lifted_limits;
    lifted_limits.max_nodes = UINT32_MAX;
    parts_init_scale(&p);
    kiln_write_u32(parts_replace(&p, GRPH), 1000000000u);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "1000000000 nodes exceeds the limit of 1000000");
    /* With the limit lifted, four bytes still cannot hold 10^9 nodes. */
    expect_parts(&p, &lifted, KILN_ERR_MALFORMED, "claims 1000000000 nodes");
    kiln_write_u32(parts_replace(&p, GRPH), UINT32_MAX);
    expect_parts(&p, &lifted, KILN_ERR_MALFORMED, "claims 4294967295 nodes");
    /* The same for a node's input count. */
    kiln_writer *w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 1);
    kiln_write_u32(w, 0);
    kiln_write_u32(w, 65);
    kiln_write_u32(w, VALUE_X); /* enough bytes for one node, so only the limit can refuse */
    kiln_write_u32(w, VALUE_X);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "65 node inputs exceeds the limit of 64");
    parts_release(&p);
}

static void test_node_uses_undefined_value(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    /* Node 0 consuming its own result: a one-node cycle. */
    kiln_writer *w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    write_node(w, 0, 2, (uint32_t[]){VALUE_TWO, VALUE_DOUBLED});
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "node 0 (mul): input 1 uses value 3 before it is defined");
    /* Node 0 consuming node 1's result: a two-node cycle. */
    w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    write_node(w, 0, 2, (uint32_t[]){VALUE_Y, VALUE_X});
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "uses value 4 before it is defined");
    /* A value id past every value. */
    w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    write_node(w, 0, 2, (uint32_t[]){VALUE_TWO, VALUE_X});
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, UINT32_MAX});
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "uses value 4294967295 before it is defined");
    parts_release(&p);
}

static void test_node_fields(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    /* An opset index past the table. */
    kiln_writer *w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    write_node(w, 0, 2, (uint32_t[]){VALUE_TWO, VALUE_X});
    write_node(w, 2, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "opset index 2 out of range");
    /* An attribute the op does not take: decoded, then refused by name. */
    w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    kiln_write_u32(w, 0);
    kiln_write_u32(w, 2);
    kiln_write_u32(w, VALUE_TWO);
    kiln_write_u32(w, VALUE_X);
    kiln_write_u32(w, 1); /* results */
    kiln_write_u32(w, 1); /* attributes */
    kiln_write_string(w, "axis");
    kiln_write_u8(w, KILN_ATTRIBUTE_INT);
    kiln_write_i64(w, 0);
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "op 'mul' takes no attribute 'axis'");
    /* A node with two results: the format allows it, no op here has it. */
    w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 1);
    kiln_write_u32(w, 0);
    kiln_write_u32(w, 2);
    kiln_write_u32(w, VALUE_TWO);
    kiln_write_u32(w, VALUE_X);
    kiln_write_u32(w, 2);
    kiln_write_u32(w, 0);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "node 0 has 2 results");
    /* Wrong arity is a program error, found by the checker after decoding. */
    w = parts_replace(&p, GRPH);
    kiln_write_u32(w, 2);
    write_node(w, 0, 1, (uint32_t[]){VALUE_X});
    write_node(w, 1, 2, (uint32_t[]){VALUE_DOUBLED, VALUE_ONE});
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "takes 2..2 inputs, got 1");
    parts_release(&p);
}

/* DIMS of scale (batch, then expressions batch and 2) followed by `extra`
 * more expressions written by the caller; the count covers all of them. */
static kiln_writer *write_dims_header(program_parts *p, uint32_t extra)
{
    kiln_writer *w = parts_replace(p, DIMS);
    write_batch_dim(w);
    kiln_write_u32(w, 2 + extra);
    write_expr_dim(w, 0);
    write_expr_const(w, 2);
    return w;
}

static void test_expression_forward_reference(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_expr_binary(write_dims_header(&p, 1), KILN_EXPR_ADD, 0, 3);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "operand refers forward (0, 3 of 2)");
    /* An expression using itself. */
    write_expr_binary(write_dims_header(&p, 1), KILN_EXPR_MUL, 2, 1);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "refers forward");
    write_expr_binary(write_dims_header(&p, 1), KILN_EXPR_SUB, 0, UINT32_MAX);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "refers forward");
    parts_release(&p);
}

static void test_expression_division_by_nonpositive(void **state)
{
    (void)state;
    static const int64_t divisors[] = {0, -3, INT64_MIN};
    program_parts p;
    parts_init_scale(&p);
    for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; i++) {
        for (uint8_t kind = KILN_EXPR_FLOORDIV; kind <= KILN_EXPR_MOD; kind++) {
            kiln_writer *w = write_dims_header(&p, 2);
            write_expr_const(w, divisors[i]);
            write_expr_binary(w, kind, 0, 2);
            expect_parts(&p, NULL, KILN_ERR_MALFORMED, "need a positive constant divisor");
        }
    }
    /* A dim is not a constant, even one whose range is positive. */
    write_expr_binary(write_dims_header(&p, 1), KILN_EXPR_FLOORDIV, 1, 0);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "need a positive constant divisor");
    parts_release(&p);
}

/* A chain of `links` additions, each adding 2 to the previous, so the last
 * one is links + 1 deep (a leaf is 1 deep). No input uses the chain. */
static void write_linear_chain(program_parts *p, uint32_t links)
{
    kiln_writer *w = write_dims_header(p, links);
    for (uint32_t k = 0; k < links; k++)
        write_expr_binary(w, KILN_EXPR_ADD, k == 0 ? 0 : 1 + k, 1);
}

static void test_expression_depth_limit(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_linear_chain(&p, KILN_EXPR_MAX_DEPTH - 1); /* exactly 64 deep */
    expect_parts(&p, NULL, KILN_OK, NULL);
    write_linear_chain(&p, KILN_EXPR_MAX_DEPTH); /* 65 deep */
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "deeper than 64");
    write_linear_chain(&p, 1000);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "deeper than 64");
    parts_release(&p);
}

static void test_expression_fields(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_expr_binary(write_dims_header(&p, 1), 7, 0, 1);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "unknown shape expression kind 7");
    write_expr_dim(write_dims_header(&p, 1), 1);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "refers to dim 1 of 1");
    /* The writer interns, so a stored pool never repeats a node. */
    write_expr_const(write_dims_header(&p, 1), 2);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "shape expression 2 repeats 1");
    /* An expression count the bytes cannot hold. */
    kiln_writer *w = parts_replace(&p, DIMS);
    write_batch_dim(w);
    kiln_write_u32(w, 60000);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "claims 60000 shape expressions");
    parts_release(&p);
}

typedef enum child_outcome { CHILD_LOADED, CHILD_TIMED_OUT, CHILD_CRASHED } child_outcome;

/* Offset of the load status in the child's exit code, so a status can
 * never be mistaken for a sanitizer's exit code (1) or a shell's (126+). */
#define CHILD_STATUS_BASE 64

/*
 * Load `bytes` in a child process that is killed after `seconds`, so a
 * hang or crash fails one test instead of stalling or killing the suite.
 * The child leaves with _exit, skipping the parent's cmocka and leak-check
 * state. *status receives the load status when the outcome is CHILD_LOADED.
 */
static child_outcome load_in_child(const uint8_t *bytes, size_t size, unsigned seconds, kiln_status *status)
{
    int wait_status;
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        kiln_program *program = NULL;
        alarm(seconds);
        kiln_status s = kiln_program_load_memory(bytes, size, NULL, &program, NULL, NULL);
        kiln_program_free(program);
        _exit(CHILD_STATUS_BASE + (int)s);
    }
    assert_int_equal(waitpid(child, &wait_status, 0), child);
    if (WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGALRM)
        return CHILD_TIMED_OUT;
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) < CHILD_STATUS_BASE ||
        WEXITSTATUS(wait_status) > CHILD_STATUS_BASE + LAST_STATUS)
        return CHILD_CRASHED;
    *status = (kiln_status)(WEXITSTATUS(wait_status) - CHILD_STATUS_BASE);
    return CHILD_LOADED;
}

/* Input x: f64[batch, e] where e is the top of a chain of `links` nodes
 * e_k = e_{k-1} + e_{k-1} over the constant 0: every node is shared by
 * both operands of the next, so the tree it denotes has 2^links leaves
 * while the stored pool has links + 1 nodes (about 9 bytes each). */
static void write_shared_chain_program(program_parts *p, uint32_t links)
{
    kiln_writer *w = write_dims_header(p, links + 1);
    write_expr_const(w, 0); /* expression 2 */
    for (uint32_t k = 0; k < links; k++)
        write_expr_binary(w, KILN_EXPR_ADD, 2 + k, 2 + k);
    write_signature(parts_replace(p, IOSG), KILN_F64, 2, (uint32_t[]){0, 2 + links}, VALUE_Y);
}

/*
 * Regression: shape expressions are stored as a DAG but walked as trees
 * (bounds, eval, uses_dim, format). A 63-link chain e_k = e_{k-1} + e_{k-1}
 * (DIMS payload under 700 bytes, depth 64) once made one load take ~2^63
 * calls. Fixed by bounding the unshared tree size of every expression
 * (KILN_EXPR_MAX_TREE_SIZE): such a chain is now refused with
 * KILN_ERR_LIMIT at decode time. The 8-link control (511 tree nodes) shows
 * the same program shape is otherwise valid.
 */
static void test_shared_subexpressions_load_promptly(void **state)
{
    (void)state;
    program_parts p;
    kiln_status status = KILN_OK;
    parts_init_scale(&p);
    write_shared_chain_program(&p, 8);
    expect_parts(&p, NULL, KILN_OK, NULL);

    write_shared_chain_program(&p, KILN_EXPR_MAX_DEPTH - 1);
    artifact a = parts_seal(&p);
    parts_release(&p);
    child_outcome outcome = load_in_child(a.bytes, a.size, 2, &status);
    size_t size = a.size;
    artifact_release(&a);
    if (outcome != CHILD_LOADED) {
        print_error("loading a %zu-byte artifact with a 63-link shared expression chain %s\n", size,
                    outcome == CHILD_TIMED_OUT ? "did not finish within 2 s (exponential walk of the "
                                                 "expression DAG)" : "crashed");
        fail();
    }
    assert_int_equal(status, KILN_ERR_LIMIT);
}

/*
 * Regression: an allocation failure while decoding once crashed instead of
 * returning KILN_ERR_OUT_OF_MEMORY: the decoders stored the count read from
 * the file before allocating its array, and releasing the model then
 * walked the count over a NULL array. Fixed by READ_ARRAY in
 * lib/program/section_decode.c, which sets array and count together on success only.
 * Input: a WTAB claiming 20000 weights over 460 KB of zeros (a count that
 * passes every check), whose 2.2 MB entry array exceeds the 1 MiB
 * allocation ceiling set above.
 */
static void test_allocation_failure_reported(void **state)
{
    (void)state;
#ifdef ALLOCATION_CEILING_ACTIVE
    enum { CLAIMED_WEIGHTS = 20000, MIN_WEIGHT_ENTRY = 23 };
    program_parts p;
    kiln_status status = KILN_OK;
    assert_true((size_t)CLAIMED_WEIGHTS * sizeof(kiln_weight_decl) > ALLOCATION_CEILING);
    parts_init_scale(&p);
    kiln_writer *w = parts_replace(&p, WTAB);
    kiln_write_u32(w, CLAIMED_WEIGHTS);
    kiln_write_zeros(w, (size_t)CLAIMED_WEIGHTS * MIN_WEIGHT_ENTRY);
    artifact a = parts_seal(&p);
    parts_release(&p);
    child_outcome outcome = load_in_child(a.bytes, a.size, 5, &status);
    artifact_release(&a);
    if (outcome != CHILD_LOADED) {
        print_error("the load crashed on a failed allocation instead of reporting KILN_ERR_OUT_OF_MEMORY\n");
        fail();
    }
    assert_int_equal(status, KILN_ERR_OUT_OF_MEMORY);
#else
    skip(); /* failing allocations are injected through the ASan allocator */
#endif
}

static void test_unknown_dtype(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_signature(parts_replace(&p, IOSG), 99, 2, (uint32_t[]){0, 1}, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "section IOSG: unknown dtype code 99");
    write_signature(parts_replace(&p, IOSG), KILN_DTYPE_INVALID, 2, (uint32_t[]){0, 1}, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "unknown dtype code 0");
    /* A dtype the format knows but this runtime cannot run is a different error. */
    write_signature(parts_replace(&p, IOSG), KILN_F16, 2, (uint32_t[]){0, 1}, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_DTYPE, "f16");
    write_signature(parts_replace(&p, IOSG), KILN_F64, 2, (uint32_t[]){0, 1}, VALUE_Y);
    kiln_writer *w = parts_replace(&p, WTAB);
    kiln_write_u32(w, 2);
    write_weight(w, "scalar_0", KILN_WEIGHT_CONSTANT, 14, 0, NULL, 0, 8);
    write_weight(w, "scalar_1", KILN_WEIGHT_CONSTANT, KILN_F64, 0, NULL, 64, 8);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "section WTAB: unknown dtype code 14");
    parts_release(&p);
}

static void test_rank_above_max(void **state)
{
    (void)state;
    static const uint32_t nine_axes[9] = {0, 1, 1, 1, 1, 1, 1, 1, 1};
    static const int64_t nine_extents[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    program_parts p;
    parts_init_scale(&p);
    write_signature(parts_replace(&p, IOSG), KILN_F64, 9, nine_axes, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "section IOSG: rank 9 exceeds 8");
    /* Rank 255 is refused before any of its axes is read. */
    kiln_writer *w = parts_replace(&p, IOSG);
    kiln_write_u32(w, 1);
    kiln_write_string(w, "x");
    kiln_write_u8(w, KILN_F64);
    kiln_write_u8(w, 255);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "rank 255 exceeds 8");
    write_signature(parts_replace(&p, IOSG), KILN_F64, 2, (uint32_t[]){0, 1}, VALUE_Y);
    write_weights_with_big(parts_replace(&p, WTAB), KILN_F64, 9, nine_extents, 8);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "section WTAB: rank 9 exceeds 8");
    parts_release(&p);
}

static void test_signature_references(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_signature(parts_replace(&p, IOSG), KILN_F64, 2, (uint32_t[]){0, 1}, VALUE_COUNT);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "output 'y' refers to value 5 of 5");
    write_signature(parts_replace(&p, IOSG), KILN_F64, 2, (uint32_t[]){0, 1}, UINT32_MAX);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "refers to value 4294967295 of 5");
    write_signature(parts_replace(&p, IOSG), KILN_F64, 2, (uint32_t[]){0, 7}, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "input 'x' axis 1 refers to expression 7 of 2");
    /* Input and output counts are bounded by the bytes that follow. */
    kiln_write_u32(parts_replace(&p, IOSG), 1000);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "claims 1000 inputs");
    kiln_write_u32(parts_replace(&p, IOSG), 1025);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "1025 inputs exceeds the limit of 1024");
    parts_release(&p);
}

static void test_opset_unsupported(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    kiln_writer *w = parts_replace(&p, OPST);
    kiln_write_u32(w, 2);
    write_opset_entry(w, "mul", 1);
    write_opset_entry(w, "no_such_op", 1);
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "not available");
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "no_such_op version 1");
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "(unknown op)");

    /* A known op at a version this runtime lacks names the versions it has. */
    w = parts_replace(&p, OPST);
    kiln_write_u32(w, 2);
    write_opset_entry(w, "mul", 1);
    write_opset_entry(w, "add", 99);
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "add version 99");
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "1..1)");

    /* All unavailable entries are named at once, not just the first. */
    w = parts_replace(&p, OPST);
    kiln_write_u32(w, 3);
    write_opset_entry(w, "no_such_op", 1);
    write_opset_entry(w, "add", 99);
    write_opset_entry(w, "mul", 0);
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "no_such_op version 1");
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "add version 99");
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "mul version 0");

    /* The same entry twice is a malformed table, not an unsupported op. */
    w = parts_replace(&p, OPST);
    kiln_write_u32(w, 2);
    write_opset_entry(w, "mul", 1);
    write_opset_entry(w, "mul", 1);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "mul version 1 is listed twice");
    parts_release(&p);
}

/* A hundred unknown ops with names of 4000 bytes: the message that names
 * them must stay bounded (it has room for a few) and the load quick. */
static void test_opset_many_long_unknown_names(void **state)
{
    (void)state;
    char *name = malloc(4001);
    program_parts p;
    assert_non_null(name);
    memset(name, 'q', 4000);
    name[4000] = '\0';
    parts_init_scale(&p);
    kiln_writer *w = parts_replace(&p, OPST);
    kiln_write_u32(w, 100);
    for (uint32_t i = 0; i < 100; i++) {
        snprintf(name, 16, "op%07u", i); /* distinct prefixes, then the run of q */
        name[9] = 'q';
        write_opset_entry(w, name, 1);
    }
    /* (load_bytes checks that the message is NUL-terminated within its buffer.) */
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_OP, "op0000000qqq");
    free(name);
    parts_release(&p);
}

static void test_string_with_nul(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    kiln_writer *w = parts_replace(&p, META);
    write_raw_string(w, "sc\0le", 5);
    kiln_write_u8(w, KILN_MODE_INFERENCE);
    kiln_write_u32(w, 0);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "section META: string at offset 0 contains a NUL byte");
    /* In a later string of another section. */
    write_meta(parts_replace(&p, META), "scale", KILN_MODE_INFERENCE);
    w = parts_replace(&p, IOSG);
    kiln_write_u32(w, 1);
    write_input(w, "x", KILN_F64, 2, (uint32_t[]){0, 1});
    kiln_write_u32(w, 1);
    write_raw_string(w, "y\0", 2);
    kiln_write_u32(w, VALUE_Y);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "section IOSG: string at offset");
    parts_release(&p);
}

static void test_string_length_limit(void **state)
{
    (void)state;
    char *name = malloc(4098);
    program_parts p;
    assert_non_null(name);
    memset(name, 'n', 4097);
    name[4097] = '\0';
    parts_init_scale(&p);
    write_meta(parts_replace(&p, META), name, KILN_MODE_INFERENCE);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "string at offset 0 is 4097 bytes, limit is 4096");
    name[4096] = '\0'; /* exactly at the limit is fine */
    write_meta(parts_replace(&p, META), name, KILN_MODE_INFERENCE);
    expect_parts(&p, NULL, KILN_OK, NULL);
    /* A length field near 2^32 with nothing behind it. */
    kiln_writer *w = parts_replace(&p, META);
    kiln_write_u32(w, UINT32_MAX);
    expect_parts(&p, NULL, KILN_ERR_LIMIT, "4294967295 bytes, limit is 4096");
    kiln_load_options lifted = options_for(KILN_VERIFY_FULL);
    kiln_limits lifted_limits;
    kiln_limits_default(&lifted_limits);
    lifted.limits = &lifted_limits;
    lifted_limits.max_string_length = UINT32_MAX;
    expect_parts(&p, &lifted, KILN_ERR_MALFORMED, "needs 4294967295 bytes");
    /* A caller's tighter limit applies to valid names. */
    kiln_load_options tight = options_for(KILN_VERIFY_FULL);
    kiln_limits tight_limits;
    kiln_limits_default(&tight_limits);
    tight.limits = &tight_limits;
    tight_limits.max_string_length = 4;
    write_meta(parts_replace(&p, META), "scale", KILN_MODE_INFERENCE);
    expect_parts(&p, &tight, KILN_ERR_LIMIT, "5 bytes, limit is 4");
    free(name);
    parts_release(&p);
}

static void test_mode(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_meta(parts_replace(&p, META), "scale", KILN_MODE_TRAINING);
    expect_parts(&p, NULL, KILN_ERR_UNSUPPORTED_MODE, "'scale' is a training-mode artifact");
    write_meta(parts_replace(&p, META), "scale", 2);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "unknown mode 2");
    write_meta(parts_replace(&p, META), "scale", 255);
    expect_parts(&p, NULL, KILN_ERR_MALFORMED, "unknown mode 255");
    parts_release(&p);
}

/* Decoded programs go through the same checker as built ones. */
static void test_decoded_program_is_rechecked(void **state)
{
    (void)state;
    program_parts p;
    parts_init_scale(&p);
    write_meta(parts_replace(&p, META), "", KILN_MODE_INFERENCE);
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "program name");
    write_meta(parts_replace(&p, META), "scale\n", KILN_MODE_INFERENCE);
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "program name");
    kiln_writer *w = parts_replace(&p, META);
    kiln_write_string(w, "scale");
    kiln_write_u8(w, KILN_MODE_INFERENCE);
    kiln_write_u32(w, 2);
    kiln_write_string(w, "zeta");
    kiln_write_string(w, "1");
    kiln_write_string(w, "alpha");
    kiln_write_string(w, "2");
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "sorted");
    write_meta(parts_replace(&p, META), "scale", KILN_MODE_INFERENCE);
    w = parts_replace(&p, DIMS);
    kiln_write_u32(w, 1);
    kiln_write_string(w, "batch");
    kiln_write_i64(w, 5);
    kiln_write_i64(w, 4);
    kiln_write_i64(w, 1); /* multiple_of */
    kiln_write_u32(w, 0); /* derived dims */
    kiln_write_u32(w, 2);
    write_expr_dim(w, 0);
    write_expr_const(w, 2);
    expect_parts(&p, NULL, KILN_ERR_INVALID_PROGRAM, "range 5..4");
    parts_release(&p);
}

/*
 * Structure-aware fuzzing past the checksums: each byte of each payload set
 * to 0x00, 0xff, and with its low and high bits flipped, then resealed.
 * Any refusal is acceptable; crashes, leaks, sanitizer reports and a
 * status/err.code disagreement (checked in load_bytes) are not.
 */
static void test_payload_byte_mutation_sweep(void **state)
{
    (void)state;
    program_parts p;
    size_t accepted = 0, refused = 0;
    parts_init_scale(&p);
    for (int which = 0; which < PART_COUNT; which++) {
        for (size_t i = 0; i < p.part[which].size; i++) {
            uint8_t original = p.part[which].data[i];
            const uint8_t mutations[4] = {0x00, 0xff, (uint8_t)(original ^ 0x01), (uint8_t)(original ^ 0x80)};
            for (int m = 0; m < 4; m++) {
                if (mutations[m] == original)
                    continue;
                p.part[which].data[i] = mutations[m];
                artifact a = parts_seal(&p);
                load_result r = load_bytes(a.bytes, a.size, NULL);
                artifact_release(&a);
                /* Sealed consistently, so no integrity code (hash, signature) can occur. */
                assert_true(r.status >= KILN_OK && r.status <= KILN_ERR_UNSUPPORTED_MODE);
                /* A ~1 KB artifact has no business needing a large allocation. */
                assert_int_not_equal(r.status, KILN_ERR_OUT_OF_MEMORY);
                if (r.status == KILN_OK)
                    accepted++;
                else
                    refused++;
            }
            p.part[which].data[i] = original;
        }
    }
    /* Most mutations must be caught; some (e.g. inside weight values) are
     * legitimately still valid programs. */
    assert_true(refused > accepted);
    assert_true(accepted > 0);
    parts_release(&p);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        /* 1. truncation */
        cmocka_unit_test(test_truncation_sweep),
        cmocka_unit_test(test_empty_input),
        /* 2-3. damage caught by checksums */
        cmocka_unit_test(test_bit_flip_sweep_full),
        cmocka_unit_test(test_bit_flip_sweep_verify_none),
        cmocka_unit_test(test_bit_flip_sweep_verify_lazy),
        cmocka_unit_test(test_digest_mismatch),
        cmocka_unit_test(test_flip_in_each_section_names_it),
        cmocka_unit_test(test_section_hash_mismatch_names_it),
        /* 4. magic, versions, features */
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_newer_major_refused),
        cmocka_unit_test(test_newer_minor_unknown_ancillary_loads),
        cmocka_unit_test(test_runtime_guards_are_checked_at_load),
        cmocka_unit_test(test_runtime_guard_with_short_text_loads),
        cmocka_unit_test(test_newer_minor_unknown_critical_refused),
        cmocka_unit_test(test_unknown_feature_bits_refused),
        cmocka_unit_test(test_half_precision_feature_bit),
        cmocka_unit_test(test_newer_section_version_refused),
        cmocka_unit_test(test_compressed_weights_load_and_run),
        cmocka_unit_test(test_compressed_stream_sizes),
        cmocka_unit_test(test_compressed_stream_damage),
        cmocka_unit_test(test_compressed_program_section),
        /* 5. crafted container structure */
        cmocka_unit_test(test_section_beyond_section_area),
        cmocka_unit_test(test_overlapping_sections),
        cmocka_unit_test(test_misaligned_section),
        cmocka_unit_test(test_nonzero_reserved_fields),
        cmocka_unit_test(test_unknown_flags_and_sizes),
        cmocka_unit_test(test_extra_trailing_bytes),
        cmocka_unit_test(test_declared_file_size),
        cmocka_unit_test(test_misplaced_table),
        cmocka_unit_test(test_section_count_over_limit),
        cmocka_unit_test(test_duplicate_known_section),
        cmocka_unit_test(test_missing_required_section),
        /* 6. crafted program payloads */
        cmocka_unit_test(test_hand_written_scale_matches_builder),
        cmocka_unit_test(test_payload_truncation_sweep),
        cmocka_unit_test(test_payload_trailing_bytes),
        cmocka_unit_test(test_huge_weight_claims),
        cmocka_unit_test(test_weight_entry_fields),
        cmocka_unit_test(test_node_count_claims),
        cmocka_unit_test(test_node_uses_undefined_value),
        cmocka_unit_test(test_node_fields),
        cmocka_unit_test(test_expression_forward_reference),
        cmocka_unit_test(test_expression_division_by_nonpositive),
        cmocka_unit_test(test_expression_depth_limit),
        cmocka_unit_test(test_expression_fields),
        cmocka_unit_test(test_shared_subexpressions_load_promptly),
        cmocka_unit_test(test_allocation_failure_reported),
        cmocka_unit_test(test_unknown_dtype),
        cmocka_unit_test(test_rank_above_max),
        cmocka_unit_test(test_signature_references),
        cmocka_unit_test(test_opset_unsupported),
        cmocka_unit_test(test_opset_many_long_unknown_names),
        cmocka_unit_test(test_string_with_nul),
        cmocka_unit_test(test_string_length_limit),
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_decoded_program_is_rechecked),
        cmocka_unit_test(test_payload_byte_mutation_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
