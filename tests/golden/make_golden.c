/*
 * make_golden.c — writes the golden artifacts of the current format
 * version and the hand-made "future" artifacts that test the version
 * policy. Run once per format version; the files are committed and never
 * edited afterwards (tests/golden/README.md).
 *
 * Usage: make_golden OUT_DIR     (writes OUT_DIR/v1.0/ and OUT_DIR/future/)
 *        make_golden OUT_DIR --future-only    (only OUT_DIR/future/)
 *        make_golden OUT_DIR --v1.1-only      (only OUT_DIR/v1.1/)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/kiln.h>

#include "format/container.h"
#include "programs.h"
#include "format/file_io.h"
#include "format/hashing.h"
#include "sections.h"

static kiln_error err;

/* Every call passes &err; a failure ends the generator with its message. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        if ((call) != KILN_OK) {                                                       \
            fprintf(stderr, "make_golden: %s failed: %s\n", #call, err.message);       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

static void save(kiln_builder *b, const char *dir, const char *name, int compression)
{
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.compression_level = compression;
    char *path = join(dir, name);
    CHECK(kiln_builder_save_with_options(b, path, &options, &err));
    printf("wrote %s\n", path);
    free(path);
}

static void write_key_files(const char *dir, kiln_public_key *public_key, kiln_secret_key *secret_key)
{
    char text[256];
    CHECK(kiln_key_generate(public_key, secret_key, &err));
    const char *names[2] = {"test-signing-key.pub", "test-signing-key.key"};
    for (int i = 0; i < 2; i++) {
        char *path = join(dir, names[i]);
        if (i == 0)
            kiln_public_key_format(public_key, text, sizeof text);
        else
            kiln_secret_key_format(secret_key, text, sizeof text);
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            perror(path);
            exit(1);
        }
        free(path);
    }
}

/* ------------------------------------------------------- future files */

typedef struct bytes {
    uint8_t *data;
    size_t size;
} bytes;

static bytes encode(kiln_builder *b)
{
    bytes out;
    void *data;
    CHECK(kiln_builder_encode(b, &data, &out.size, &err));
    out.data = data;
    return out;
}

/* Recompute header CRC, digest and trailer after editing header fields. */
static void reseal(bytes *a)
{
    uint64_t table_offset = kiln_load_u64(a->data + 24);
    uint32_t count = kiln_load_u32(a->data + 32);
    kiln_store_u32(a->data + 36, kiln_crc32(a->data + table_offset, (uint64_t)count * KILN_TABLE_ENTRY_SIZE));
    kiln_store_u32(a->data + 60, kiln_crc32(a->data, 60));
    uint8_t digest[KILN_DIGEST_SIZE];
    kiln_blake2b_256_pair(a->data, KILN_HEADER_SIZE, a->data + table_offset, (uint64_t)count * KILN_TABLE_ENTRY_SIZE,
                          digest);
    kiln_trailer_write(a->data + a->size - KILN_TRAILER_SIZE, digest, NULL, NULL);
}

/*
 * Re-encode `a` with its sections, the section of type `replace_type`
 * given the payload `payload` when `payload` is non-NULL, and one extra
 * section of `extra_type` (flags `extra_flags`) when non-zero.
 */
static bytes rebuild_replacing(const bytes *a, uint32_t replace_type, const uint8_t *payload, size_t payload_size,
                               uint32_t extra_type, uint16_t extra_flags)
{
    kiln_container c;
    kiln_container_limits limits = {64, UINT64_C(1) << 32, UINT64_C(1) << 32};
    CHECK(kiln_container_parse(a->data, a->size, &limits, &c, &err));
    kiln_section_spec specs[16];
    uint32_t n = 0;
    static const uint8_t extra_payload[] = "a section from a newer writer";
    for (uint32_t i = 0; i < c.section_count; i++) {
        const kiln_section_entry *s = &c.sections[i];
        if (s->type == replace_type && payload) {
            specs[n++] = (kiln_section_spec){.type = s->type, .flags = s->flags, .version = s->version,
                                             .data = payload, .size = payload_size};
            continue;
        }
        if (s->type == KILN_SECTION_WDAT && extra_type)
            specs[n++] = (kiln_section_spec){.type = extra_type, .flags = extra_flags, .version = 1,
                                             .data = extra_payload, .size = sizeof extra_payload};
        specs[n++] = (kiln_section_spec){.type = s->type, .flags = s->flags, .version = s->version,
                                         .data = a->data + s->offset, .size = (size_t)s->stored_size, .copy_of = s};
    }
    kiln_writer w;
    kiln_writer_init(&w);
    CHECK(kiln_container_encode(specs, n, 0, &w, &err));
    kiln_container_release(&c);
    return (bytes){w.data, w.size};
}

static bytes rebuild(const bytes *a, const uint8_t *opst, size_t opst_size, uint32_t extra_type,
                     uint16_t extra_flags)
{
    return rebuild_replacing(a, KILN_SECTION_OPST, opst, opst_size, extra_type, extra_flags);
}

static void write_bytes(const char *dir, const char *name, const bytes *a)
{
    char *path = join(dir, name);
    CHECK(kiln_atomic_write_file(path, a->data, a->size, &err));
    printf("wrote %s\n", path);
    free(path);
}

/* An OPST naming `count` (op, version) pairs. */
static bytes opset_payload(uint32_t count, const char *const *names, const uint32_t *versions)
{
    kiln_writer w;
    kiln_writer_init(&w);
    kiln_write_u32(&w, count);
    for (uint32_t i = 0; i < count; i++) {
        kiln_write_string(&w, names[i]);
        kiln_write_u32(&w, versions[i]);
    }
    return (bytes){w.data, w.size};
}

static void write_future(const char *dir)
{
    kiln_builder *b = golden_scale();
    bytes scale = encode(b);
    kiln_builder_free(b);

    bytes ancillary = rebuild(&scale, NULL, 0, KILN_FOURCC('X', 'T', 'R', 'A'), 0);
    kiln_store_u16(ancillary.data + 10, 1);
    reseal(&ancillary);
    write_bytes(dir, "minor-1.1-unknown-ancillary.kiln", &ancillary);

    bytes critical = rebuild(&scale, NULL, 0, KILN_FOURCC('X', 'C', 'R', 'T'), KILN_SECTION_CRITICAL);
    kiln_store_u16(critical.data + 10, 1);
    reseal(&critical);
    write_bytes(dir, "minor-1.1-unknown-critical.kiln", &critical);

    bytes feature = rebuild(&scale, NULL, 0, 0, 0);
    kiln_store_u16(feature.data + 10, 1);
    kiln_store_u64(feature.data + 40, UINT64_C(1) << 5);
    reseal(&feature);
    write_bytes(dir, "minor-1.1-unknown-feature.kiln", &feature);

    bytes major = rebuild(&scale, NULL, 0, 0, 0);
    kiln_store_u16(major.data + 8, 2);
    reseal(&major);
    write_bytes(dir, "major-2.0.kiln", &major);

    /* scale uses mul and add: claim add version 2. */
    bytes newer_opst = opset_payload(2, (const char *[]){"mul", "add"}, (const uint32_t[]){1, 2});
    bytes newer = rebuild(&scale, newer_opst.data, newer_opst.size, 0, 0);
    write_bytes(dir, "op-add-v2.kiln", &newer);

    /* Three ops this runtime lacks, in one artifact (weights program: mul, add, neg). */
    b = golden_weights();
    bytes weights = encode(b);
    kiln_builder_free(b);
    /* future_op_a and future_op_b are reserved: no kiln version registers them. */
    bytes three_opst = opset_payload(3, (const char *[]){"future_op_a", "future_op_b", "add"},
                                     (const uint32_t[]){1, 3, 9});
    bytes three = rebuild(&weights, three_opst.data, three_opst.size, 0, 0);
    write_bytes(dir, "three-missing-ops.kiln", &three);

    /* scale with input x declared f16, a dtype this runtime does not run. */
    kiln_writer iosg;
    kiln_writer_init(&iosg);
    kiln_write_u32(&iosg, 1);
    kiln_write_string(&iosg, "x");
    kiln_write_u8(&iosg, KILN_F16);
    kiln_write_u8(&iosg, 2);
    kiln_write_u32(&iosg, 0); /* batch */
    kiln_write_u32(&iosg, 1); /* 2 */
    kiln_write_u32(&iosg, 1);
    kiln_write_string(&iosg, "y");
    kiln_write_u32(&iosg, 4);
    bytes half = rebuild_replacing(&scale, KILN_SECTION_IOSG, iosg.data, iosg.size, 0, 0);
    kiln_writer_release(&iosg);
    write_bytes(dir, "input-f16.kiln", &half);

    bytes all[] = {scale, ancillary, critical, feature, major, newer_opst, newer, weights, three_opst, three, half};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i].data);
}

int main(int argc, char **argv)
{
    bool future_only = argc == 3 && strcmp(argv[2], "--future-only") == 0;
    bool v1_1_only = argc == 3 && strcmp(argv[2], "--v1.1-only") == 0;
    if (argc != 2 && !future_only && !v1_1_only) {
        fprintf(stderr, "usage: make_golden OUT_DIR [--future-only | --v1.1-only]\n");
        return 2;
    }
    if (v1_1_only) {
        /* Format 1.1's first goldens, written once by the 1.1 writer. */
        char *v1_1 = join(argv[1], "v1.1");
        mkdir(v1_1, 0777);
        kiln_builder *b = golden_guarded();
        save(b, v1_1, "guarded.kiln", 0);
        kiln_builder_free(b);
        free(v1_1);
        return 0;
    }
    char *v1 = join(argv[1], "v1.0"), *future = join(argv[1], "future");
    mkdir(v1, 0777);
    mkdir(future, 0777);
    if (future_only) {
        /* The released goldens stay untouched; only the hand-made files of
         * newer versions are written again. */
        write_future(future);
        free(v1);
        free(future);
        return 0;
    }

    kiln_builder *b = golden_scale();
    save(b, v1, "scale.kiln", 0);
    golden_add_scale_evidence(b);
    save(b, v1, "scale-evidence.kiln", 0);
    kiln_builder_free(b);

    b = golden_weights();
    save(b, v1, "weights.kiln", 0);
    kiln_builder_free(b);

    b = golden_compressed();
    save(b, v1, "compressed.kiln", 9);
    kiln_builder_free(b);

    kiln_public_key public_key;
    kiln_secret_key secret_key;
    write_key_files(v1, &public_key, &secret_key);
    char *unsigned_path = join(v1, "scale.kiln"), *signed_path = join(v1, "scale-signed.kiln");
    CHECK(kiln_artifact_sign(unsigned_path, signed_path, &secret_key, &err));
    printf("wrote %s\n", signed_path);

    write_future(future);
    free(unsigned_path);
    free(signed_path);
    free(v1);
    free(future);
    return 0;
}
