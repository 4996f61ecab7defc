/*
 * test_integrity.c — what the integrity layer of the container promises:
 * signatures and their outcomes, signing an existing artifact, key text
 * forms and ids, the three identities, weight compression, lazy weight
 * verification (also across threads), reproducible timestamps, and the
 * value and attribute limits.
 *
 * Files go to a fresh mkdtemp directory, removed when the group ends.
 * Byte-level checks (digest, signature message) are recomputed here with
 * libsodium and zlib directly, not with the library's own helpers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include <kiln/kiln.h>

#include "format/container.h"
#include "format/cursor.h"
#include "program.h"
#include "sections.h"

/* ------------------------------------------------------------ fixtures */

static char temp_dir[64];
static char *saved_epoch; /* SOURCE_DATE_EPOCH as the suite found it */

static int group_setup(void **state)
{
    (void)state;
    if (sodium_init() < 0)
        return -1;
    strcpy(temp_dir, "/tmp/kiln-integrity-XXXXXX");
    if (!mkdtemp(temp_dir))
        return -1;
    /* Encodes below must not pick up a timestamp from the environment. */
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    saved_epoch = epoch ? strdup(epoch) : NULL;
    unsetenv("SOURCE_DATE_EPOCH");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *listing = opendir(temp_dir);
    struct dirent *entry;
    char path[512];
    while (listing && (entry = readdir(listing))) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", temp_dir, entry->d_name);
        unlink(path);
    }
    if (listing)
        closedir(listing);
    rmdir(temp_dir);
    if (saved_epoch)
        setenv("SOURCE_DATE_EPOCH", saved_epoch, 1);
    free(saved_epoch);
    return 0;
}

/* `name` inside the suite's temporary directory. */
static const char *temp_path(const char *name, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s/%s", temp_dir, name);
    return buffer;
}

/* ------------------------------------------------------------- blobs */

typedef struct blob {
    uint8_t *bytes;
    size_t size;
} blob;

static void blob_release(blob *b)
{
    free(b->bytes);
    b->bytes = NULL;
    b->size = 0;
}

static blob blob_copy(const blob *b)
{
    blob copy = {malloc(b->size), b->size};
    assert_non_null(copy.bytes);
    memcpy(copy.bytes, b->bytes, b->size);
    return copy;
}

static void write_file(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static blob read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    blob b = {malloc((size_t)size + 1), (size_t)size};
    assert_non_null(b.bytes);
    assert_int_equal(fread(b.bytes, 1, b.size, f), b.size);
    fclose(f);
    return b;
}

/* The number of entries in the temporary directory (leftover temp files show here). */
static int temp_dir_entries(void)
{
    DIR *listing = opendir(temp_dir);
    struct dirent *entry;
    int count = 0;
    assert_non_null(listing);
    while ((entry = readdir(listing)))
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
            count++;
    closedir(listing);
    return count;
}

static uint8_t *trailer_of(const blob *b)
{
    return b->bytes + b->size - KILN_TRAILER_SIZE;
}

static uint32_t crc32_of(const uint8_t *bytes, size_t size)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), bytes, (uInt)size);
}

static void fix_trailer_crc(blob *b)
{
    kiln_store_u32(trailer_of(b) + 124, crc32_of(trailer_of(b), 124));
}

/* BLAKE2b-256 of header || section table, as the trailer digest is defined. */
static void digest_of(const blob *b, uint8_t out[KILN_DIGEST_SIZE])
{
    crypto_generichash_state state;
    uint64_t table = kiln_load_u64(b->bytes + 24);
    uint64_t table_size = (uint64_t)kiln_load_u32(b->bytes + 32) * KILN_TABLE_ENTRY_SIZE;
    crypto_generichash_init(&state, NULL, 0, KILN_DIGEST_SIZE);
    crypto_generichash_update(&state, b->bytes, KILN_HEADER_SIZE);
    crypto_generichash_update(&state, b->bytes + table, table_size);
    crypto_generichash_final(&state, out, KILN_DIGEST_SIZE);
}

/*
 * What a forger without the key can do after editing uncompressed
 * sections: make every CRC, section hash and the digest consistent again.
 * The trailer's flags, key id and signature are kept.
 */
static void forge_reseal(blob *b)
{
    uint64_t table = kiln_load_u64(b->bytes + 24);
    uint32_t count = kiln_load_u32(b->bytes + 32);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *e = b->bytes + table + (uint64_t)i * KILN_TABLE_ENTRY_SIZE;
        uint64_t offset = kiln_load_u64(e + 8), stored = kiln_load_u64(e + 16);
        assert_false(kiln_load_u16(e + 4) & KILN_SECTION_COMPRESSED);
        kiln_store_u32(e + 32, crc32_of(b->bytes + offset, (size_t)stored));
        crypto_generichash(e + 40, KILN_DIGEST_SIZE, b->bytes + offset, stored, NULL, 0);
    }
    kiln_store_u32(b->bytes + 36, crc32_of(b->bytes + table, (size_t)count * KILN_TABLE_ENTRY_SIZE));
    kiln_store_u32(b->bytes + 60, crc32_of(b->bytes, 60));
    digest_of(b, trailer_of(b) + 8);
    fix_trailer_crc(b);
}

/* The offset and size of the first section of `type` in `b`. */
static void find_section(const blob *b, uint32_t type, uint64_t *offset, uint64_t *stored)
{
    uint64_t table = kiln_load_u64(b->bytes + 24);
    uint32_t count = kiln_load_u32(b->bytes + 32);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = b->bytes + table + (uint64_t)i * KILN_TABLE_ENTRY_SIZE;
        if (kiln_load_u32(e) == type) {
            *offset = kiln_load_u64(e + 8);
            *stored = kiln_load_u64(e + 16);
            return;
        }
    }
    fail_msg("no such section");
}

/* ----------------------------------------------------------- programs */

/* The program of examples/scale.c, y = two*x + one for x: f64[batch, 2],
 * batch in 2..4, with the two scalars and the producer as parameters. */
static kiln_builder *build_scale(double two, double one, const char *producer)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, vtwo, vone, doubled, y;
    assert_int_equal(kiln_builder_new("scale", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", producer, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, two, &vtwo, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, one, &vone, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){vtwo, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, vone}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return b;
}

static blob encode_with(const kiln_builder *b, const kiln_save_options *options)
{
    blob out;
    void *bytes = NULL;
    kiln_error err;
    kiln_status status = kiln_builder_encode(b, options, &bytes, &out.size, &err);
    if (status != KILN_OK)
        fail_msg("encode failed: %s", err.message);
    out.bytes = bytes;
    return out;
}

static blob encode_scale(void)
{
    kiln_builder *b = build_scale(2.0, 1.0, "kiln examples/scale.c");
    blob out = encode_with(b, NULL);
    kiln_builder_free(b);
    return out;
}

enum { BIG_N = 16384 }; /* f32 elements: 64 KiB of weight */

static float big_weight_value(uint32_t i, float factor)
{
    return (float)(i % 13) * 0.25f * factor;
}

/* y = x * w for x: f32[batch, 16384], batch in 1..2, with a 64 KiB f32
 * weight w that repeats every 13 elements (so it compresses well). */
static kiln_builder *build_big(float factor)
{
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, w, y;
    float *data = malloc(BIG_N * sizeof *data);
    assert_non_null(data);
    for (uint32_t i = 0; i < BIG_N; i++)
        data[i] = big_weight_value(i, factor);
    assert_int_equal(kiln_builder_new("big", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 2, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 16384]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){BIG_N},
                                             data, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, w}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    free(data);
    return b;
}

static blob encode_big(int compression_level)
{
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.compression_level = compression_level;
    kiln_builder *b = build_big(1.0f);
    blob out = encode_with(b, &options);
    kiln_builder_free(b);
    return out;
}

/* ------------------------------------------------------------ loading */

static kiln_load_options options_for(kiln_verify_policy verify)
{
    kiln_load_options options;
    kiln_load_options_default(&options);
    options.verify = verify;
    return options;
}

static kiln_load_options trusting(const kiln_public_key *keys, uint32_t count, bool require)
{
    kiln_load_options options = options_for(KILN_VERIFY_FULL);
    options.trusted_keys = keys;
    options.trusted_key_count = count;
    options.require_signature = require;
    return options;
}

static const kiln_verify_policy all_policies[3] = {KILN_VERIFY_FULL, KILN_VERIFY_LAZY, KILN_VERIFY_NONE};

/* Load `b` (the program must load) and return it. */
static kiln_program *load_ok(const blob *b, const kiln_load_options *options)
{
    kiln_program *program = NULL;
    kiln_error err;
    kiln_status status = kiln_program_load_memory(b->bytes, b->size, options, &program, NULL, &err);
    if (status != KILN_OK)
        fail_msg("load failed: %d: %s", (int)status, err.message);
    assert_non_null(program);
    return program;
}

typedef struct load_result {
    kiln_status status;
    kiln_error err;
    kiln_signature_info signature; /* when loaded */
} load_result;

static load_result try_load(const uint8_t *bytes, size_t size, const kiln_load_options *options)
{
    load_result r;
    kiln_program *program = NULL;
    memset(&r, 0, sizeof r);
    r.status = kiln_program_load_memory(bytes, size, options, &program, NULL, &r.err);
    if (r.status == KILN_OK) {
        assert_non_null(program);
        kiln_program_signature(program, &r.signature);
    } else {
        assert_null(program);
        assert_int_equal(r.err.code, r.status);
    }
    kiln_program_free(program);
    return r;
}

#define expect_load(b, options, code, word) expect_load_at((b), (options), (code), (word), __FILE__, __LINE__)

/* Loading gives `code`, and a failure's message contains `word` (if set).
 * @return the signature state of a successful load. */
static kiln_signature_info expect_load_at(const blob *b, const kiln_load_options *options, kiln_status code,
                                          const char *word, const char *file, int line)
{
    load_result r = try_load(b->bytes, b->size, options);
    if (r.status != code || (word && !strstr(r.err.message, word))) {
        print_error("expected %d (%s)%s%s%s, got %d (%s): \"%s\"\n", (int)code, kiln_strerror(code),
                    word ? " mentioning \"" : "", word ? word : "", word ? "\"" : "", (int)r.status,
                    kiln_strerror(r.status), r.err.message);
        _fail(file, line);
    }
    return r.signature;
}

/* Run a scale program on x = [[1, 2], [3, 4], [5, 6]] into `out`. */
static void run_scale(const kiln_program *program, double out[6])
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
    memcpy(out, kiln_tensor_const_data(kiln_session_output(session, 0)), 6 * sizeof *out);
    kiln_tensor_free(x);
    kiln_session_free(session);
}

static void expect_scale_outputs(const kiln_program *program, double two, double one)
{
    double y[6];
    run_scale(program, y);
    for (int i = 0; i < 6; i++)
        assert_true(y[i] == two * (1.0 + i) + one);
}

/* The input of the big program for batch 2. */
static kiln_tensor *big_input(void)
{
    kiln_tensor *x = NULL;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){2, BIG_N}, &x, &err), KILN_OK);
    float *in = kiln_tensor_data(x);
    for (uint32_t i = 0; i < 2 * BIG_N; i++)
        in[i] = (float)((int)(i % 7) - 3) * 1.5f;
    return x;
}

/* Run the big program; `out` receives its 2 x 16384 results. @return status. */
static kiln_status run_big(const kiln_program *program, const kiln_tensor *x, float *out, kiln_error *err)
{
    kiln_session *session = NULL;
    kiln_status status = kiln_session_new(program, NULL, &session, err);
    if (status == KILN_OK)
        status = kiln_session_set_input(session, "x", x, err);
    if (status == KILN_OK)
        status = kiln_session_run(session, err);
    if (status == KILN_OK)
        memcpy(out, kiln_tensor_const_data(kiln_session_output(session, 0)), 2 * BIG_N * sizeof *out);
    kiln_session_free(session);
    return status;
}

/* -------------------------------------------------------------- keys */

typedef struct key_pair {
    kiln_public_key public_key;
    kiln_secret_key secret_key;
    uint8_t id[16];
    char hex[33];
} key_pair;

static key_pair new_key(void)
{
    key_pair k;
    kiln_error err;
    assert_int_equal(kiln_key_generate(&k.public_key, &k.secret_key, &err), KILN_OK);
    kiln_key_id(&k.public_key, k.id);
    for (int i = 0; i < 16; i++)
        snprintf(k.hex + 2 * i, 3, "%02x", k.id[i]);
    return k;
}

/* Save `b` under `name`, sign it with `key` into `signed_name` and read that back. */
static blob sign_blob(const blob *b, const key_pair *key, const char *name)
{
    char path[512], out[512], signed_name[128];
    kiln_error err;
    snprintf(signed_name, sizeof signed_name, "%s.signed", name);
    write_file(temp_path(name, path, sizeof path), b->bytes, b->size);
    kiln_status status = kiln_artifact_sign(path, temp_path(signed_name, out, sizeof out), &key->secret_key, NULL, &err);
    if (status != KILN_OK)
        fail_msg("signing failed: %s", err.message);
    blob result = read_file(out);
    unlink(path);
    unlink(out);
    return result;
}

/* The message a kiln signature signs: the context with its NUL, then the digest. */
#define CONTEXT "kiln artifact signature v1"
#define MESSAGE_SIZE (sizeof CONTEXT + KILN_DIGEST_SIZE)

static void signature_message(const uint8_t digest[KILN_DIGEST_SIZE], uint8_t message[MESSAGE_SIZE])
{
    memcpy(message, CONTEXT, sizeof CONTEXT);
    memcpy(message + sizeof CONTEXT, digest, KILN_DIGEST_SIZE);
}

/* ================================================ (a) signature outcomes */

static void test_unsigned_outcomes(void **state)
{
    (void)state;
    blob b = encode_scale();
    key_pair a = new_key();
    kiln_signature_info info;
    memset(&info, 0xee, sizeof info);
    info = expect_load(&b, NULL, KILN_OK, NULL);
    assert_int_equal(info.state, KILN_SIGNATURE_NONE);
    static const uint8_t zero_id[16] = {0};
    assert_memory_equal(info.key_id, zero_id, 16);

    /* A trust list alone does not demand signatures... */
    kiln_load_options trust = trusting(&a.public_key, 1, false);
    info = expect_load(&b, &trust, KILN_OK, NULL);
    assert_int_equal(info.state, KILN_SIGNATURE_NONE);
    /* ...require_signature does, with or without a trust list, under every policy. */
    for (int p = 0; p < 3; p++) {
        kiln_load_options required = trusting(NULL, 0, true);
        required.verify = all_policies[p];
        expect_load(&b, &required, KILN_ERR_UNSIGNED, "not signed");
        required = trusting(&a.public_key, 1, true);
        required.verify = all_policies[p];
        expect_load(&b, &required, KILN_ERR_UNSIGNED, "a signature is required");
    }
    /* A count without keys is the caller's mistake. */
    kiln_load_options broken = trusting(NULL, 1, false);
    expect_load(&b, &broken, KILN_ERR_INVALID_ARGUMENT, "trusted_keys is NULL");
    blob_release(&b);
}

static void test_signed_by_trusted_key(void **state)
{
    (void)state;
    blob unsigned_blob = encode_scale();
    key_pair a = new_key(), other = new_key();
    blob b = sign_blob(&unsigned_blob, &a, "trusted.kiln");

    kiln_public_key keys[2] = {other.public_key, a.public_key};
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = trusting(&a.public_key, 1, false);
        options.verify = all_policies[p];
        kiln_signature_info info = expect_load(&b, &options, KILN_OK, NULL);
        assert_int_equal(info.state, KILN_SIGNATURE_VERIFIED);
        assert_memory_equal(info.key_id, a.id, 16);
        /* Among several trusted keys, and required. */
        options = trusting(keys, 2, true);
        options.verify = all_policies[p];
        info = expect_load(&b, &options, KILN_OK, NULL);
        assert_int_equal(info.state, KILN_SIGNATURE_VERIFIED);
        assert_memory_equal(info.key_id, a.id, 16);
    }
    /* Signed, nobody to check it against, not required: loads, unverified. */
    kiln_signature_info info = expect_load(&b, NULL, KILN_OK, NULL);
    assert_int_equal(info.state, KILN_SIGNATURE_UNVERIFIED);
    assert_memory_equal(info.key_id, a.id, 16);
    /* And it still runs. */
    kiln_load_options options = trusting(&a.public_key, 1, true);
    kiln_program *program = load_ok(&b, &options);
    expect_scale_outputs(program, 2.0, 1.0);
    kiln_program_free(program);
    blob_release(&b);
    blob_release(&unsigned_blob);
}

static void test_signed_by_untrusted_key(void **state)
{
    (void)state;
    blob unsigned_blob = encode_scale();
    key_pair a = new_key(), other = new_key(), third = new_key();
    blob b = sign_blob(&unsigned_blob, &a, "untrusted.kiln");
    kiln_public_key others[2] = {other.public_key, third.public_key};
    for (int p = 0; p < 3; p++) {
        /* A non-empty trust list without the signer. */
        kiln_load_options options = trusting(others, 2, false);
        options.verify = all_policies[p];
        expect_load(&b, &options, KILN_ERR_UNTRUSTED_KEY, a.hex);
        expect_load(&b, &options, KILN_ERR_UNTRUSTED_KEY, "not trusted");
        load_result r = try_load(b.bytes, b.size, &options);
        assert_null(strstr(r.err.message, other.hex));
        /* A signature required, and no key trusted at all. */
        options = trusting(NULL, 0, true);
        options.verify = all_policies[p];
        expect_load(&b, &options, KILN_ERR_UNTRUSTED_KEY, a.hex);
    }
    blob_release(&b);
    blob_release(&unsigned_blob);
}

static void test_bad_signature(void **state)
{
    (void)state;
    blob unsigned_blob = encode_scale();
    key_pair a = new_key();
    blob b = sign_blob(&unsigned_blob, &a, "bad.kiln");
    kiln_load_options trust = trusting(&a.public_key, 1, false);

    /* Every byte of the signature, trailer CRC fixed. */
    for (int i = 0; i < KILN_SIGNATURE_SIZE; i++) {
        blob copy = blob_copy(&b);
        trailer_of(&copy)[56 + i] ^= (uint8_t)(1u << (i % 8));
        fix_trailer_crc(&copy);
        expect_load(&copy, &trust, KILN_ERR_BAD_SIGNATURE, a.hex);
        expect_load(&copy, &trust, KILN_ERR_BAD_SIGNATURE, "does not match the artifact digest");
        /* Nobody checks an unverified signature: that is what the state says. */
        kiln_signature_info info = expect_load(&copy, NULL, KILN_OK, NULL);
        assert_int_equal(info.state, KILN_SIGNATURE_UNVERIFIED);
        blob_release(&copy);
    }

    uint8_t digest[KILN_DIGEST_SIZE], message[MESSAGE_SIZE];
    memcpy(digest, trailer_of(&b) + 8, sizeof digest);
    /* The documented message, signed with libsodium directly, verifies
     * (and, Ed25519 being deterministic, equals kiln_artifact_sign's). */
    blob copy = blob_copy(&b);
    signature_message(digest, message);
    assert_int_equal(crypto_sign_detached(trailer_of(&copy) + 56, NULL, message, sizeof message,
                                          a.secret_key.bytes), 0);
    assert_memory_equal(copy.bytes, b.bytes, b.size);
    assert_int_equal(expect_load(&copy, &trust, KILN_OK, NULL).state, KILN_SIGNATURE_VERIFIED);
    /* The bare digest, without the domain-separation context, does not. */
    assert_int_equal(crypto_sign_detached(trailer_of(&copy) + 56, NULL, digest, sizeof digest,
                                          a.secret_key.bytes), 0);
    fix_trailer_crc(&copy);
    expect_load(&copy, &trust, KILN_ERR_BAD_SIGNATURE, NULL);
    blob_release(&copy);

    /* A valid signature by the same key over another artifact. */
    kiln_builder *other_builder = build_scale(2.0, 1.0, "another producer");
    blob other_unsigned = encode_with(other_builder, NULL);
    kiln_builder_free(other_builder);
    blob other = sign_blob(&other_unsigned, &a, "other.kiln");
    copy = blob_copy(&b);
    memcpy(trailer_of(&copy) + 56, trailer_of(&other) + 56, KILN_SIGNATURE_SIZE);
    fix_trailer_crc(&copy);
    expect_load(&copy, &trust, KILN_ERR_BAD_SIGNATURE, NULL);
    blob_release(&copy);

    /* The signed flag with a zero key id and signature. */
    copy = blob_copy(&unsigned_blob);
    kiln_store_u32(trailer_of(&copy) + 4, 1);
    fix_trailer_crc(&copy);
    expect_load(&copy, &trust, KILN_ERR_UNTRUSTED_KEY, "00000000000000000000000000000000");
    assert_int_equal(expect_load(&copy, NULL, KILN_OK, NULL).state, KILN_SIGNATURE_UNVERIFIED);
    blob_release(&copy);
    /* A key id without the signed flag is malformed. */
    copy = blob_copy(&b);
    kiln_store_u32(trailer_of(&copy) + 4, 0);
    fix_trailer_crc(&copy);
    expect_load(&copy, NULL, KILN_ERR_MALFORMED, "unsigned trailer has a non-zero key id");
    blob_release(&copy);

    blob_release(&other);
    blob_release(&other_unsigned);
    blob_release(&b);
    blob_release(&unsigned_blob);
}

/* Tampering by someone who can recompute every checksum but not sign. */
static void test_forgery_after_signing(void **state)
{
    (void)state;
    blob unsigned_blob = encode_scale();
    key_pair a = new_key(), attacker = new_key();
    blob b = sign_blob(&unsigned_blob, &a, "forged.kiln");
    uint64_t wdat, wdat_size;
    find_section(&b, KILN_SECTION_WDAT, &wdat, &wdat_size);
    assert_int_equal(wdat_size, 72);

    /* Scalar 2.0 becomes 3.0, every checksum and the digest made consistent. */
    blob forged = blob_copy(&b);
    double three = 3.0;
    memcpy(forged.bytes + wdat, &three, sizeof three);
    forge_reseal(&forged);
    for (int p = 0; p < 3; p++) {
        kiln_load_options options = trusting(&a.public_key, 1, false);
        options.verify = all_policies[p];
        expect_load(&forged, &options, KILN_ERR_BAD_SIGNATURE, a.hex);
    }
    /* Without a trust list the forgery loads (unverified) and computes 3x + 1. */
    kiln_program *program = load_ok(&forged, NULL);
    kiln_signature_info info;
    kiln_program_signature(program, &info);
    assert_int_equal(info.state, KILN_SIGNATURE_UNVERIFIED);
    expect_scale_outputs(program, 3.0, 1.0);
    kiln_program_free(program);

    /* Re-signed by the attacker's key. */
    blob resigned = sign_blob(&forged, &attacker, "resigned.kiln");
    kiln_load_options trust = trusting(&a.public_key, 1, false);
    expect_load(&resigned, &trust, KILN_ERR_UNTRUSTED_KEY, attacker.hex);

    /* The signature stripped. */
    memset(trailer_of(&forged) + 4, 0, 4);
    memset(trailer_of(&forged) + 40, 0, KILN_KEY_ID_SIZE + KILN_SIGNATURE_SIZE);
    fix_trailer_crc(&forged);
    kiln_load_options required = trusting(&a.public_key, 1, true);
    expect_load(&forged, &required, KILN_ERR_UNSIGNED, NULL);
    assert_int_equal(expect_load(&forged, &trust, KILN_OK, NULL).state, KILN_SIGNATURE_NONE);

    blob_release(&resigned);
    blob_release(&forged);
    blob_release(&b);
    blob_release(&unsigned_blob);
}

/* Gap bytes of `b`: between header, sections and table. */
static bool *gap_map(const blob *b)
{
    bool *gap = calloc(b->size, sizeof *gap);
    assert_non_null(gap);
    uint64_t table = kiln_load_u64(b->bytes + 24);
    uint32_t count = kiln_load_u32(b->bytes + 32);
    for (uint64_t at = KILN_HEADER_SIZE; at < table; at++)
        gap[at] = true;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = b->bytes + table + (uint64_t)i * KILN_TABLE_ENTRY_SIZE;
        uint64_t offset = kiln_load_u64(e + 8), stored = kiln_load_u64(e + 16);
        for (uint64_t at = offset; at < offset + stored; at++)
            gap[at] = false;
    }
    return gap;
}

static void print_histogram(const char *what, const size_t counts[KILN_ERR_BAD_SIGNATURE + 1])
{
    print_message("%s:\n", what);
    for (int code = 0; code <= KILN_ERR_BAD_SIGNATURE; code++)
        if (counts[code])
            print_message("  %6zu x %2d %s\n", counts[code], code, kiln_strerror((kiln_status)code));
}

/*
 * Every bit of a signed artifact, flipped: a load that requires a
 * signature from the trusted signer never succeeds under FULL. The codes
 * that occur are recorded (and printed); each region has its own.
 */
static void test_every_flip_of_signed_artifact_refused(void **state)
{
    (void)state;
    blob unsigned_blob = encode_scale();
    key_pair a = new_key();
    blob b = sign_blob(&unsigned_blob, &a, "sweep.kiln");
    kiln_load_options full = trusting(&a.public_key, 1, true);
    size_t counts[KILN_ERR_BAD_SIGNATURE + 1] = {0};
    for (size_t offset = 0; offset < b.size; offset++) {
        for (int bit = 0; bit < 8; bit++) {
            b.bytes[offset] ^= (uint8_t)(1u << bit);
            load_result r = try_load(b.bytes, b.size, &full);
            b.bytes[offset] ^= (uint8_t)(1u << bit);
            if (r.status == KILN_OK || r.status > KILN_ERR_BAD_SIGNATURE) {
                print_error("bit %d of byte %zu (of %zu) gave %d: %s\n", bit, offset, b.size, (int)r.status,
                            r.err.message);
                fail();
            }
            counts[r.status]++;
        }
    }
    print_histogram("single-bit flips of a signed artifact (FULL, signature required)", counts);
    /* The expected codes, by region: magic, major, header CRC, sections'
     * CRCs, gaps (zero rule), table CRC, trailer CRC. Nothing else. */
    static const kiln_status expected[] = {
        KILN_ERR_BAD_MAGIC, KILN_ERR_UNSUPPORTED_VERSION, KILN_ERR_HEADER_CRC, KILN_ERR_SECTION_CRC,
        KILN_ERR_MALFORMED, KILN_ERR_TABLE_CRC, KILN_ERR_TRAILER,
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        assert_true(counts[expected[i]] > 0);
        total += counts[expected[i]];
    }
    assert_int_equal(total, b.size * 8);
    assert_int_equal(counts[KILN_ERR_BAD_MAGIC], 64);
    assert_int_equal(counts[KILN_ERR_TRAILER], KILN_TRAILER_SIZE * 8);

    /* The trailer again, with its CRC fixed after each flip: now the
     * fields it protects speak for themselves. */
    size_t trailer_counts[KILN_ERR_BAD_SIGNATURE + 1] = {0};
    for (size_t offset = 0; offset < 124; offset++) {
        kiln_status want = offset < 4      ? KILN_ERR_TRAILER
                           : offset < 8    ? KILN_ERR_MALFORMED
                           : offset < 40   ? KILN_ERR_DIGEST_MISMATCH
                           : offset < 56   ? KILN_ERR_UNTRUSTED_KEY
                           : offset < 120  ? KILN_ERR_BAD_SIGNATURE
                                           : KILN_ERR_MALFORMED;
        for (int bit = 0; bit < 8; bit++) {
            blob copy = blob_copy(&b);
            trailer_of(&copy)[offset] ^= (uint8_t)(1u << bit);
            fix_trailer_crc(&copy);
            load_result r = try_load(copy.bytes, copy.size, &full);
            blob_release(&copy);
            if (r.status != want) {
                print_error("trailer byte %zu bit %d: expected %d, got %d: %s\n", offset, bit, (int)want,
                            (int)r.status, r.err.message);
                fail();
            }
            trailer_counts[r.status]++;
        }
    }
    print_histogram("single-bit flips of the trailer, trailer CRC fixed", trailer_counts);

    /*
     * LAZY: the same sweep refuses every flip at open or at the first
     * session, except in the gaps, which LAZY does not read: zero padding
     * that carries nothing, but also that the signature does not cover
     * byte for byte (only FULL enforces the zero rule).
     */
    kiln_load_options lazy = full;
    lazy.verify = KILN_VERIFY_LAZY;
    bool *gap = gap_map(&b);
    size_t gap_bytes = 0;
    for (size_t offset = 0; offset < b.size; offset++) {
        gap_bytes += gap[offset];
        for (int bit = 0; bit < 8; bit++) {
            kiln_program *program = NULL;
            kiln_session *session = NULL;
            kiln_error err;
            b.bytes[offset] ^= (uint8_t)(1u << bit);
            kiln_status status = kiln_program_load_memory(b.bytes, b.size, &lazy, &program, NULL, &err);
            if (status == KILN_OK)
                status = kiln_session_new(program, NULL, &session, &err);
            kiln_session_free(session);
            kiln_program_free(program);
            b.bytes[offset] ^= (uint8_t)(1u << bit);
            if ((status == KILN_OK) != gap[offset]) {
                print_error("LAZY: bit %d of byte %zu (%s): %d: %s\n", bit, offset, gap[offset] ? "gap" : "data",
                            (int)status, status ? err.message : "");
                fail();
            }
        }
    }
    assert_true(gap_bytes > 0);
    free(gap);
    blob_release(&b);
    blob_release(&unsigned_blob);
}

/* ======================================== (b) kiln_artifact_sign on files */

static void check_trailer_signed_by(const blob *b, const key_pair *key, const uint8_t digest[KILN_DIGEST_SIZE])
{
    const uint8_t *t = trailer_of(b);
    uint8_t message[MESSAGE_SIZE];
    assert_memory_equal(t, "KLNT", 4);
    assert_int_equal(kiln_load_u32(t + 4), KILN_TRAILER_SIGNED);
    assert_memory_equal(t + 8, digest, KILN_DIGEST_SIZE);
    assert_memory_equal(t + 40, key->id, KILN_KEY_ID_SIZE);
    signature_message(digest, message);
    assert_int_equal(crypto_sign_verify_detached(t + 56, message, sizeof message, key->public_key.bytes), 0);
    assert_int_equal(kiln_load_u32(t + 120), 0);
    assert_int_equal(kiln_load_u32(t + 124), crc32_of(t, 124));
}

static void expect_same_identities(const blob *x, const blob *y)
{
    kiln_program *p = load_ok(x, NULL), *q = load_ok(y, NULL);
    uint8_t a[32], b[32];
    kiln_program_artifact_digest(p, a);
    kiln_program_artifact_digest(q, b);
    assert_memory_equal(a, b, 32);
    for (int id = KILN_IDENTITY_ARTIFACT; id <= KILN_IDENTITY_STATE; id++) {
        kiln_program_identity(p, (kiln_identity)id, a);
        kiln_program_identity(q, (kiln_identity)id, b);
        assert_memory_equal(a, b, 32);
    }
    kiln_program_free(p);
    kiln_program_free(q);
}

static void test_sign_in_place_and_to_path(void **state)
{
    (void)state;
    char source[512], in_place[512], to_path[512];
    kiln_error err;
    key_pair a = new_key(), b_key = new_key();
    blob original = encode_scale();
    uint8_t digest[KILN_DIGEST_SIZE];
    digest_of(&original, digest);
    assert_memory_equal(trailer_of(&original) + 8, digest, sizeof digest);
    int entries = temp_dir_entries();
    write_file(temp_path("source.kiln", source, sizeof source), original.bytes, original.size);
    write_file(temp_path("in_place.kiln", in_place, sizeof in_place), original.bytes, original.size);

    assert_int_equal(kiln_artifact_sign(in_place, NULL, &a.secret_key, NULL, &err), KILN_OK);
    assert_int_equal(kiln_artifact_sign(source, temp_path("to_path.kiln", to_path, sizeof to_path),
                                        &a.secret_key, NULL, &err), KILN_OK);
    blob signed_in_place = read_file(in_place), signed_to_path = read_file(to_path), still = read_file(source);
    /* The source of "-o" is untouched; both ways give the same bytes. */
    assert_int_equal(still.size, original.size);
    assert_memory_equal(still.bytes, original.bytes, original.size);
    assert_int_equal(signed_in_place.size, original.size);
    assert_int_equal(signed_to_path.size, original.size);
    assert_memory_equal(signed_in_place.bytes, signed_to_path.bytes, original.size);
    /* Only the trailer differs, and it carries the same digest. */
    assert_memory_equal(signed_in_place.bytes, original.bytes, original.size - KILN_TRAILER_SIZE);
    assert_memory_not_equal(trailer_of(&signed_in_place), trailer_of(&original), KILN_TRAILER_SIZE);
    check_trailer_signed_by(&signed_in_place, &a, digest);
    expect_same_identities(&original, &signed_in_place);

    /* Signing a signed artifact again replaces the signature. */
    assert_int_equal(kiln_artifact_sign(to_path, NULL, &b_key.secret_key, NULL, &err), KILN_OK);
    blob resigned = read_file(to_path);
    assert_memory_equal(resigned.bytes, original.bytes, original.size - KILN_TRAILER_SIZE);
    check_trailer_signed_by(&resigned, &b_key, digest);
    expect_same_identities(&original, &resigned);
    kiln_load_options trust_b = trusting(&b_key.public_key, 1, true);
    assert_int_equal(expect_load(&resigned, &trust_b, KILN_OK, NULL).state, KILN_SIGNATURE_VERIFIED);

    /* No temporary file is left behind. */
    assert_int_equal(temp_dir_entries(), entries + 3);
    unlink(source);
    unlink(in_place);
    unlink(to_path);
    blob_release(&resigned);
    blob_release(&still);
    blob_release(&signed_to_path);
    blob_release(&signed_in_place);
    blob_release(&original);
}

/* Sign `damaged` to a destination holding other bytes, and in place:
 * both fail with `code`, and neither file changes. */
static void expect_sign_refused(const blob *damaged, kiln_status code, const char *word)
{
    char source[512], dest[512];
    static const char precious[] = "not to be overwritten";
    kiln_error err;
    key_pair a = new_key();
    int entries = temp_dir_entries();
    write_file(temp_path("damaged.kiln", source, sizeof source), damaged->bytes, damaged->size);
    write_file(temp_path("dest.kiln", dest, sizeof dest), precious, sizeof precious);
    assert_int_equal(kiln_artifact_sign(source, dest, &a.secret_key, NULL, &err), code);
    assert_non_null(strstr(err.message, word));
    assert_int_equal(kiln_artifact_sign(source, NULL, &a.secret_key, NULL, &err), code);
    blob after_dest = read_file(dest), after_source = read_file(source);
    assert_int_equal(after_dest.size, sizeof precious);
    assert_memory_equal(after_dest.bytes, precious, sizeof precious);
    assert_int_equal(after_source.size, damaged->size);
    assert_memory_equal(after_source.bytes, damaged->bytes, damaged->size);
    assert_int_equal(temp_dir_entries(), entries + 2);
    blob_release(&after_dest);
    blob_release(&after_source);
    unlink(source);
    unlink(dest);
}

static void test_sign_refuses_damaged_artifact(void **state)
{
    (void)state;
    blob original = encode_scale();
    uint64_t wdat, wdat_size;
    find_section(&original, KILN_SECTION_WDAT, &wdat, &wdat_size);

    blob damaged = blob_copy(&original);
    damaged.bytes[wdat + 3] ^= 0x10; /* weight data: refused by the full check that signing runs */
    expect_sign_refused(&damaged, KILN_ERR_SECTION_CRC, "WDAT");
    blob_release(&damaged);
    damaged = blob_copy(&original);
    damaged.bytes[wdat - 1] = 0x01; /* the gap before WDAT */
    expect_sign_refused(&damaged, KILN_ERR_MALFORMED, "between sections");
    blob_release(&damaged);
    damaged = blob_copy(&original);
    trailer_of(&damaged)[9] ^= 0x01;
    fix_trailer_crc(&damaged);
    expect_sign_refused(&damaged, KILN_ERR_DIGEST_MISMATCH, "digest");
    blob_release(&damaged);
    damaged = blob_copy(&original);
    damaged.size -= 1;
    expect_sign_refused(&damaged, KILN_ERR_TRUNCATED, "truncated");
    blob_release(&damaged);

    /* Missing source, bad arguments, unwritable destination. */
    char missing[512], dest[512], nowhere[512], good[512];
    kiln_error err;
    key_pair a = new_key();
    temp_path("dest.kiln", dest, sizeof dest);
    write_file(dest, "x", 1);
    assert_int_equal(kiln_artifact_sign(temp_path("missing.kiln", missing, sizeof missing), dest, &a.secret_key, NULL,
                                        &err), KILN_ERR_IO);
    assert_non_null(strstr(err.message, "missing.kiln"));
    blob after = read_file(dest);
    assert_int_equal(after.size, 1);
    blob_release(&after);
    unlink(dest);
    write_file(temp_path("good.kiln", good, sizeof good), original.bytes, original.size);
    assert_int_equal(kiln_artifact_sign(NULL, NULL, &a.secret_key, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_artifact_sign(good, NULL, NULL, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_artifact_sign(good, temp_path("no/such/dir.kiln", nowhere, sizeof nowhere),
                                        &a.secret_key, NULL, &err), KILN_ERR_IO);
    blob still = read_file(good);
    assert_memory_equal(still.bytes, original.bytes, original.size);
    blob_release(&still);
    unlink(good);
    blob_release(&original);
}

/*
 * A secret key is a seed and the public key derived from it. A key whose
 * halves disagree cannot make a signature that verifies under either, so
 * signing with one must be refused (signature.h: "KILN_ERR_INVALID_ARGUMENT
 * (bad key)"), as kiln_secret_key_parse refuses its text form.
 */
static void test_sign_refuses_inconsistent_secret_key(void **state)
{
    (void)state;
    char source[512], dest[512];
    kiln_error err;
    blob original = encode_scale();
    write_file(temp_path("key-source.kiln", source, sizeof source), original.bytes, original.size);
    temp_path("key-dest.kiln", dest, sizeof dest);
    unlink(dest);
    kiln_status status[2];
    for (int which = 0; which < 2; which++) {
        key_pair k = new_key();
        k.secret_key.bytes[which ? 0 : 63] ^= 0x01; /* the public half, then the seed */
        status[which] = kiln_artifact_sign(source, dest, &k.secret_key, NULL, &err);
        if (status[which] == KILN_OK) {
            /* What was written verifies under no key: the real one finds a bad signature... */
            blob written = read_file(dest);
            kiln_load_options trust = trusting(&k.public_key, 1, true);
            load_result r = try_load(written.bytes, written.size, &trust);
            assert_true(r.status == KILN_ERR_BAD_SIGNATURE || r.status == KILN_ERR_UNTRUSTED_KEY);
            blob_release(&written);
            unlink(dest);
        }
    }
    blob still = read_file(source);
    assert_memory_equal(still.bytes, original.bytes, original.size);
    blob_release(&still);
    unlink(source);
    blob_release(&original);
    /*
     * Regression: kiln_artifact_sign once signed with a secret key whose
     * public half did not belong to its seed, writing an artifact no key
     * could verify. kiln_signature_sign now refuses such a key.
     */
    assert_int_equal(status[0], KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(status[1], KILN_ERR_INVALID_ARGUMENT);
}

/* ====================================================== (c) key text, ids */

#define PUBLIC_PREFIX "kiln-ed25519-public-v1 "
#define SECRET_PREFIX "kiln-ed25519-secret-v1 "

static void test_key_text_round_trip(void **state)
{
    (void)state;
    key_pair k = new_key();
    char text[256], small[10];
    kiln_error err;
    kiln_public_key public_back;
    kiln_secret_key secret_back;

    int length = kiln_public_key_format(&k.public_key, text, sizeof text);
    assert_int_equal(length, (int)strlen(text));
    assert_int_equal(length, (int)strlen(PUBLIC_PREFIX) + 44 + 1);
    assert_memory_equal(text, PUBLIC_PREFIX, strlen(PUBLIC_PREFIX));
    assert_int_equal(text[length - 1], '\n');
    memset(&public_back, 0, sizeof public_back);
    assert_int_equal(kiln_public_key_parse(text, &public_back, &err), KILN_OK);
    assert_memory_equal(public_back.bytes, k.public_key.bytes, 32);
    /* Like snprintf: the full length, a truncated NUL-terminated text. */
    assert_int_equal(kiln_public_key_format(&k.public_key, small, sizeof small), length);
    assert_int_equal(strlen(small), sizeof small - 1);

    length = kiln_secret_key_format(&k.secret_key, text, sizeof text);
    assert_int_equal(length, (int)strlen(text));
    assert_int_equal(length, (int)strlen(SECRET_PREFIX) + 88 + 1);
    assert_memory_equal(text, SECRET_PREFIX, strlen(SECRET_PREFIX));
    memset(&secret_back, 0, sizeof secret_back);
    assert_int_equal(kiln_secret_key_parse(text, &secret_back, &err), KILN_OK);
    assert_memory_equal(secret_back.bytes, k.secret_key.bytes, 64);

    /* Surrounding white space is allowed. */
    char padded[300];
    kiln_public_key_format(&k.public_key, text, sizeof text);
    snprintf(padded, sizeof padded, " \t\n%s\r\n\n", text);
    assert_int_equal(kiln_public_key_parse(padded, &public_back, &err), KILN_OK);
    assert_memory_equal(public_back.bytes, k.public_key.bytes, 32);
    /* A parsed secret key signs what its public key verifies. */
    blob b = encode_scale();
    kiln_secret_key_format(&k.secret_key, text, sizeof text);
    assert_int_equal(kiln_secret_key_parse(text, &secret_back, &err), KILN_OK);
    key_pair parsed = k;
    parsed.secret_key = secret_back;
    blob s = sign_blob(&b, &parsed, "parsed-key.kiln");
    kiln_load_options trust = trusting(&public_back, 1, true);
    assert_int_equal(expect_load(&s, &trust, KILN_OK, NULL).state, KILN_SIGNATURE_VERIFIED);
    blob_release(&s);
    blob_release(&b);
}

#define expect_public_parse_error(text, word) expect_parse_error_at((text), false, (word), __FILE__, __LINE__)
#define expect_secret_parse_error(text, word) expect_parse_error_at((text), true, (word), __FILE__, __LINE__)

static void expect_parse_error_at(const char *text, bool secret, const char *word, const char *file, int line)
{
    kiln_public_key public_key;
    kiln_secret_key secret_key;
    kiln_error err;
    memset(&err, 0, sizeof err);
    kiln_status status = secret ? kiln_secret_key_parse(text, &secret_key, &err)
                                : kiln_public_key_parse(text, &public_key, &err);
    if (status != KILN_ERR_INVALID_ARGUMENT || err.code != status || !strstr(err.message, word)) {
        print_error("parsing \"%s\": expected INVALID_ARGUMENT mentioning \"%s\", got %d: \"%s\"\n",
                    text ? text : "(null)", word, (int)status, err.message);
        _fail(file, line);
    }
}

/* PREFIX + base64 of `size` bytes of `bytes`. */
static void key_text(const char *prefix, const uint8_t *bytes, size_t size, char *out, size_t out_size)
{
    char encoded[256];
    sodium_bin2base64(encoded, sizeof encoded, bytes, size, sodium_base64_VARIANT_ORIGINAL);
    snprintf(out, out_size, "%s%s\n", prefix, encoded);
}

static void test_key_parse_errors(void **state)
{
    (void)state;
    key_pair k = new_key();
    char public_text[256], secret_text[256], text[512];
    kiln_public_key_format(&k.public_key, public_text, sizeof public_text);
    kiln_secret_key_format(&k.secret_key, secret_text, sizeof secret_text);

    /* Wrong prefix: each kind refuses the other's text, and no prefix at all. */
    expect_public_parse_error(secret_text, "must start with 'kiln-ed25519-public-v1'");
    expect_secret_parse_error(public_text, "must start with 'kiln-ed25519-secret-v1'");
    expect_public_parse_error("", "must start with");
    expect_public_parse_error(public_text + strlen(PUBLIC_PREFIX), "must start with");
    expect_public_parse_error("kiln-ed25519-public-v2 AAAA", "must start with");
    expect_public_parse_error(NULL, "NULL");

    /* Bad base64. */
    expect_public_parse_error(PUBLIC_PREFIX "!!!!", "not 32 base64-encoded bytes");
    expect_public_parse_error(PUBLIC_PREFIX, "not 32 base64-encoded bytes");
    snprintf(text, sizeof text, "%.*s-_%s", (int)strlen(PUBLIC_PREFIX) + 10, public_text,
             public_text + strlen(PUBLIC_PREFIX) + 12); /* URL-safe characters */
    expect_public_parse_error(text, "base64");
    snprintf(text, sizeof text, "%.*s extra\n", (int)strlen(public_text) - 1, public_text); /* trailing words */
    expect_public_parse_error(text, "base64");
    snprintf(text, sizeof text, "%.*s %s", (int)strlen(PUBLIC_PREFIX) + 20, public_text,
             public_text + strlen(PUBLIC_PREFIX) + 20); /* a space inside */
    expect_public_parse_error(text, "base64");

    /* Wrong length. */
    key_text(PUBLIC_PREFIX, k.public_key.bytes, 31, text, sizeof text);
    expect_public_parse_error(text, "not 32 base64-encoded bytes");
    uint8_t longer[65] = {0};
    memcpy(longer, k.secret_key.bytes, 64);
    key_text(PUBLIC_PREFIX, longer, 33, text, sizeof text);
    expect_public_parse_error(text, "not 32 base64-encoded bytes");
    key_text(SECRET_PREFIX, k.secret_key.bytes, 32, text, sizeof text);
    expect_secret_parse_error(text, "not 64 base64-encoded bytes");
    key_text(SECRET_PREFIX, longer, 65, text, sizeof text);
    expect_secret_parse_error(text, "not 64 base64-encoded bytes");

    /* A secret key whose public half is not its seed's. */
    uint8_t mixed[64];
    key_pair other = new_key();
    memcpy(mixed, k.secret_key.bytes, 32);
    memcpy(mixed + 32, other.public_key.bytes, 32);
    key_text(SECRET_PREFIX, mixed, 64, text, sizeof text);
    expect_secret_parse_error(text, "seed and public half differ");
    memcpy(mixed, k.secret_key.bytes, 64);
    mixed[63] ^= 0x01;
    key_text(SECRET_PREFIX, mixed, 64, text, sizeof text);
    expect_secret_parse_error(text, "seed and public half differ");
}

static void test_key_id(void **state)
{
    (void)state;
    key_pair a = new_key(), b = new_key();
    uint8_t again[16], full[32];
    kiln_key_id(&a.public_key, again);
    assert_memory_equal(again, a.id, 16);
    assert_memory_not_equal(a.id, b.id, 16);
    /* The first 16 bytes of BLAKE2b-256 of the public key. */
    crypto_generichash(full, sizeof full, a.public_key.bytes, 32, NULL, 0);
    assert_memory_equal(a.id, full, 16);
    /* The secret key's second half is its public key. */
    assert_memory_equal(a.secret_key.bytes + 32, a.public_key.bytes, 32);
    /* Two fresh keys differ. */
    assert_memory_not_equal(a.public_key.bytes, b.public_key.bytes, 32);
    assert_memory_not_equal(a.secret_key.bytes, b.secret_key.bytes, 64);
}

/* ========================================================= (d) identities */

typedef struct identities {
    uint8_t id[3][32];
} identities;

static identities identities_of(const blob *b)
{
    identities out;
    kiln_program *p = load_ok(b, NULL);
    for (int id = KILN_IDENTITY_ARTIFACT; id <= KILN_IDENTITY_STATE; id++)
        kiln_program_identity(p, (kiln_identity)id, out.id[id]);
    kiln_program_free(p);
    return out;
}

#define expect_identity(x, y, which, same)                                 \
    do {                                                                   \
        if (same)                                                          \
            assert_memory_equal((x).id[which], (y).id[which], 32);         \
        else                                                               \
            assert_memory_not_equal((x).id[which], (y).id[which], 32);     \
    } while (0)

static void expect_identities(const blob *x, const blob *y, bool artifact, bool program, bool state)
{
    identities a = identities_of(x), b = identities_of(y);
    expect_identity(a, b, KILN_IDENTITY_ARTIFACT, artifact);
    expect_identity(a, b, KILN_IDENTITY_PROGRAM, program);
    expect_identity(a, b, KILN_IDENTITY_STATE, state);
}

static blob scale_blob(double two, double one, const char *producer, int level, int64_t timestamp)
{
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.compression_level = level;
    options.timestamp = timestamp;
    kiln_builder *b = build_scale(two, one, producer);
    blob out = encode_with(b, &options);
    kiln_builder_free(b);
    return out;
}

static void test_identities(void **state)
{
    (void)state;
    blob base = scale_blob(2.0, 1.0, "p", 0, -1);

    /* The artifact identity is the trailer digest: BLAKE2b-256 of header || table. */
    identities ids = identities_of(&base);
    uint8_t digest[32];
    digest_of(&base, digest);
    assert_memory_equal(ids.id[KILN_IDENTITY_ARTIFACT], digest, 32);
    kiln_program *p = load_ok(&base, NULL);
    kiln_program_artifact_digest(p, digest);
    kiln_program_free(p);
    assert_memory_equal(ids.id[KILN_IDENTITY_ARTIFACT], digest, 32);
    /* The three are distinct from one another. */
    assert_memory_not_equal(ids.id[0], ids.id[1], 32);
    assert_memory_not_equal(ids.id[1], ids.id[2], 32);

    /* The same program built twice: same bytes, same identities. */
    blob twice = scale_blob(2.0, 1.0, "p", 0, -1);
    assert_int_equal(twice.size, base.size);
    assert_memory_equal(twice.bytes, base.bytes, base.size);
    expect_identities(&base, &twice, true, true, true);

    /* The same graph with other weight values. */
    blob weights = scale_blob(3.0, 1.0, "p", 0, -1);
    expect_identities(&base, &weights, false, true, false);

    /* Compressed weights: same program and state, another file. */
    blob compressed = scale_blob(2.0, 1.0, "p", 6, -1);
    kiln_program *cp = load_ok(&compressed, NULL);
    kiln_section_info info;
    kiln_program_section(cp, kiln_program_section_count(cp) - 1, &info);
    assert_string_equal(info.type, "WDAT");
    assert_true(info.compressed);
    kiln_program_free(cp);
    expect_identities(&base, &compressed, false, true, true);

    /* Other metadata (producer, a timestamp): same program and state. */
    blob metadata = scale_blob(2.0, 1.0, "q", 0, -1);
    expect_identities(&base, &metadata, false, true, true);
    blob stamped = scale_blob(2.0, 1.0, "p", 0, 0);
    expect_identities(&base, &stamped, false, true, true);

    /* Another graph over the same weights: another program, same state. */
    kiln_builder *b = NULL;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    assert_int_equal(kiln_builder_new("scale", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "producer", "p", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "sub", 2, (kiln_value[]){doubled, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    blob graph = encode_with(b, NULL);
    kiln_builder_free(b);
    expect_identities(&base, &graph, false, false, true);

    blob_release(&graph);
    blob_release(&stamped);
    blob_release(&metadata);
    blob_release(&compressed);
    blob_release(&weights);
    blob_release(&twice);
    blob_release(&base);
}

/* ===================================================== (e) compression */

static void test_compression_round_trip(void **state)
{
    (void)state;
    blob plain = encode_big(0), packed = encode_big(6);
    kiln_tensor *x = big_input();
    float *expected = malloc(2 * BIG_N * sizeof *expected), *got = malloc(2 * BIG_N * sizeof *got);
    assert_non_null(expected);
    assert_non_null(got);
    const float *in = kiln_tensor_const_data(x);
    for (uint32_t i = 0; i < 2 * BIG_N; i++)
        expected[i] = in[i] * big_weight_value(i % BIG_N, 1.0f);

    /* 64 KiB that repeats every 13 floats shrinks to a small fraction. */
    assert_true(plain.size > BIG_N * 4);
    assert_true(packed.size * 4 < plain.size);
    for (int which = 0; which < 2; which++) {
        const blob *b = which ? &packed : &plain;
        for (int p = 0; p < 3; p++) {
            kiln_load_options options = options_for(all_policies[p]);
            kiln_program *program = load_ok(b, &options);
            kiln_section_info info;
            kiln_program_section(program, kiln_program_section_count(program) - 1, &info);
            assert_string_equal(info.type, "WDAT");
            assert_int_equal(info.compressed, which == 1);
            assert_int_equal(info.raw_size, BIG_N * 4);
            assert_true(which ? info.stored_size < info.raw_size / 4 : info.stored_size == info.raw_size);
            kiln_error err;
            memset(got, 0, 2 * BIG_N * sizeof *got);
            assert_int_equal(run_big(program, x, got, &err), KILN_OK);
            assert_memory_equal(got, expected, 2 * BIG_N * sizeof *got);
            kiln_program_free(program);
        }
    }
    /* Every level reads back; levels outside 0..9 are refused. */
    for (int level = 1; level <= 9; level += 4) {
        blob b = encode_big(level);
        kiln_program *program = load_ok(&b, NULL);
        kiln_error err;
        assert_int_equal(run_big(program, x, got, &err), KILN_OK);
        assert_memory_equal(got, expected, 2 * BIG_N * sizeof *got);
        kiln_program_free(program);
        blob_release(&b);
    }
    kiln_save_options options;
    kiln_builder *builder = build_big(1.0f);
    void *bytes = NULL;
    size_t size = 0;
    kiln_error err;
    kiln_save_options_default(&options);
    options.compression_level = 10;
    assert_int_equal(kiln_builder_encode(builder, &options, &bytes, &size, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_null(bytes);
    options.compression_level = -1;
    assert_int_equal(kiln_builder_encode(builder, &options, &bytes, &size, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    kiln_builder_free(builder);

    /* Weights that do not compress are stored raw. */
    kiln_builder *noisy = NULL;
    kiln_value w, xv, y;
    uint8_t random_bytes[4096];
    randombytes_buf(random_bytes, sizeof random_bytes);
    assert_int_equal(kiln_builder_new("noisy", &noisy, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(noisy, "x", KILN_U8, "[4096]", &xv, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(noisy, "w", KILN_WEIGHT_CONSTANT, KILN_U8, 1, (int64_t[]){4096},
                                             random_bytes, &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(noisy, "add", 2, (kiln_value[]){xv, w}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(noisy, "y", y, &err), KILN_OK);
    options.compression_level = 9;
    blob stored = encode_with(noisy, &options);
    kiln_builder_free(noisy);
    kiln_program *program = load_ok(&stored, NULL);
    kiln_section_info info;
    kiln_program_section(program, kiln_program_section_count(program) - 1, &info);
    assert_false(info.compressed);
    kiln_program_free(program);
    blob_release(&stored);

    free(got);
    free(expected);
    kiln_tensor_free(x);
    blob_release(&packed);
    blob_release(&plain);
}

/* ============================================= (f) lazy weight checking */

#define expect_lazy_weights_fail(b, code, word) expect_lazy_weights_fail_at((b), (code), (word), __FILE__, __LINE__)

/* LAZY opens `b`; every kiln_session_new then fails with `code` and the
 * same message; FULL refuses `b` at open with the same code. */
static void expect_lazy_weights_fail_at(const blob *b, kiln_status code, const char *word, const char *file,
                                        int line)
{
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_error err, first;
    kiln_status status = kiln_program_load_memory(b->bytes, b->size, &lazy, &program, NULL, &err);
    if (status != KILN_OK) {
        print_error("LAZY open failed: %s\n", err.message);
        _fail(file, line);
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        status = kiln_session_new(program, NULL, &session, &err);
        if (status != code || session || !strstr(err.message, word) ||
            (attempt > 0 && strcmp(err.message, first.message) != 0)) {
            print_error("session %d: expected %d mentioning \"%s\", got %d: \"%s\"\n", attempt, (int)code, word,
                        (int)status, err.message);
            kiln_session_free(session);
            kiln_program_free(program);
            _fail(file, line);
        }
        if (attempt == 0)
            first = err;
    }
    kiln_program_free(program);
    load_result r = try_load(b->bytes, b->size, NULL);
    if (r.status != code || !strstr(r.err.message, word)) {
        print_error("FULL: expected %d, got %d: \"%s\"\n", (int)code, (int)r.status, r.err.message);
        _fail(file, line);
    }
}

static void test_lazy_weight_verification(void **state)
{
    (void)state;
    blob original = encode_scale();
    uint64_t wdat, wdat_size;
    find_section(&original, KILN_SECTION_WDAT, &wdat, &wdat_size);

    /* A valid artifact: open, then sessions, each runs. */
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    kiln_program *program = load_ok(&original, &lazy);
    expect_scale_outputs(program, 2.0, 1.0);
    expect_scale_outputs(program, 2.0, 1.0);
    kiln_program_free(program);

    /* One flipped weight byte, nothing fixed up. */
    blob tampered = blob_copy(&original);
    tampered.bytes[wdat + 6] ^= 0x08;
    expect_lazy_weights_fail(&tampered, KILN_ERR_SECTION_CRC, "section 6 (WDAT): checksum mismatch");
    /* NONE does not look at the weight data at all: the value is just different. */
    kiln_load_options none = options_for(KILN_VERIFY_NONE);
    program = load_ok(&tampered, &none);
    double y[6];
    run_scale(program, y);
    assert_true(y[0] != 3.0);
    kiln_program_free(program);
    blob_release(&tampered);

    /* The CRC fixed too: the hash still sees it. */
    tampered = blob_copy(&original);
    tampered.bytes[wdat + 6] ^= 0x08;
    uint64_t table = kiln_load_u64(tampered.bytes + 24);
    uint8_t *entry = tampered.bytes + table + 6 * KILN_TABLE_ENTRY_SIZE;
    assert_int_equal(kiln_load_u32(entry), KILN_SECTION_WDAT);
    kiln_store_u32(entry + 32, crc32_of(tampered.bytes + wdat, (size_t)wdat_size));
    kiln_store_u32(tampered.bytes + 36, crc32_of(tampered.bytes + table, 7 * KILN_TABLE_ENTRY_SIZE));
    kiln_store_u32(tampered.bytes + 60, crc32_of(tampered.bytes, 60));
    digest_of(&tampered, trailer_of(&tampered) + 8);
    fix_trailer_crc(&tampered);
    expect_lazy_weights_fail(&tampered, KILN_ERR_SECTION_HASH, "section 6 (WDAT): BLAKE2b-256 mismatch");
    blob_release(&tampered);

    /* Compressed weights, a flipped stored byte. */
    blob packed = encode_big(6);
    find_section(&packed, KILN_SECTION_WDAT, &wdat, &wdat_size);
    packed.bytes[wdat + wdat_size / 2] ^= 0x01;
    expect_lazy_weights_fail(&packed, KILN_ERR_SECTION_CRC, "WDAT");
    blob_release(&packed);
    blob_release(&original);
}

/* ====================================================== (g) timestamps */

/* The value of metadata `key` in `b`, or NULL; also the metadata count. */
static char *metadata_value(const blob *b, const char *key, uint32_t *count)
{
    kiln_program *p = load_ok(b, NULL);
    char *found = NULL;
    *count = kiln_program_metadata_count(p);
    for (uint32_t i = 0; i < *count; i++) {
        const char *k, *v;
        kiln_program_metadata(p, i, &k, &v);
        if (strcmp(k, key) == 0)
            found = strdup(v);
    }
    kiln_program_free(p);
    return found;
}

static void expect_created(const blob *b, const char *want)
{
    uint32_t count;
    char *value = metadata_value(b, "created", &count);
    if (!want) {
        assert_null(value);
        assert_int_equal(count, 1); /* only the producer */
    } else {
        assert_non_null(value);
        assert_string_equal(value, want);
        assert_int_equal(count, 2);
    }
    free(value);
}

static void test_timestamp(void **state)
{
    (void)state;
    kiln_builder *b = build_scale(2.0, 1.0, "kiln examples/scale.c");
    kiln_save_options options;
    kiln_error err;
    void *bytes = NULL;
    size_t size = 0;
    unsetenv("SOURCE_DATE_EPOCH");

    /* Default: no timestamp, so the bytes depend on the program only. */
    blob plain = encode_with(b, NULL);
    expect_created(&plain, NULL);
    kiln_save_options_default(&options);
    assert_int_equal(options.timestamp, -1);

    options.timestamp = 0;
    blob epoch = encode_with(b, &options);
    expect_created(&epoch, "1970-01-01T00:00:00Z");
    /* Sorted among the other metadata. */
    kiln_program *p = load_ok(&epoch, NULL);
    const char *key, *value;
    kiln_program_metadata(p, 0, &key, &value);
    assert_string_equal(key, "created");
    kiln_program_metadata(p, 1, &key, &value);
    assert_string_equal(key, "producer");
    kiln_program_free(p);
    /* Deterministic: the same timestamp gives the same bytes. */
    blob again = encode_with(b, &options);
    assert_int_equal(again.size, epoch.size);
    assert_memory_equal(again.bytes, epoch.bytes, epoch.size);
    blob_release(&again);
    options.timestamp = 253402300799; /* the last second of 9999 */
    blob late = encode_with(b, &options);
    expect_created(&late, "9999-12-31T23:59:59Z");
    blob_release(&late);

    /* SOURCE_DATE_EPOCH, when the option is unset. */
    setenv("SOURCE_DATE_EPOCH", "86400", 1);
    blob from_env = encode_with(b, NULL);
    expect_created(&from_env, "1970-01-02T00:00:00Z");
    blob from_env_again = encode_with(b, NULL);
    assert_memory_equal(from_env_again.bytes, from_env.bytes, from_env.size);
    /* The option wins over the environment. */
    options.timestamp = 0;
    again = encode_with(b, &options);
    assert_memory_equal(again.bytes, epoch.bytes, epoch.size);
    blob_release(&again);
    /* Equal instants give equal bytes, whichever way they were given. */
    options.timestamp = 86400;
    unsetenv("SOURCE_DATE_EPOCH");
    again = encode_with(b, &options);
    assert_int_equal(again.size, from_env.size);
    assert_memory_equal(again.bytes, from_env.bytes, from_env.size);
    blob_release(&again);

    /* An invalid SOURCE_DATE_EPOCH is refused, naming it... */
    static const char *const invalid[] = {"abc", "-5", "12x", "1.5", "0x10", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        setenv("SOURCE_DATE_EPOCH", invalid[i], 1);
        bytes = NULL;
        kiln_status status = kiln_builder_encode(b, NULL, &bytes, &size, &err);
        if (status != KILN_ERR_INVALID_ARGUMENT || !strstr(err.message, "SOURCE_DATE_EPOCH")) {
            print_error("SOURCE_DATE_EPOCH='%s': got %d: %s\n", invalid[i], (int)status,
                        status ? err.message : "");
            free(bytes);
            fail();
        }
        assert_null(bytes);
    }
    /* ...unless the option makes it irrelevant; an empty one means unset. */
    options.timestamp = 0;
    again = encode_with(b, &options);
    assert_memory_equal(again.bytes, epoch.bytes, epoch.size);
    blob_release(&again);
    setenv("SOURCE_DATE_EPOCH", "", 1);
    again = encode_with(b, NULL);
    assert_int_equal(again.size, plain.size);
    assert_memory_equal(again.bytes, plain.bytes, plain.size);
    blob_release(&again);
    unsetenv("SOURCE_DATE_EPOCH");

    blob_release(&from_env_again);
    blob_release(&from_env);
    blob_release(&epoch);
    blob_release(&plain);
    kiln_builder_free(b);
}

/*
 * SOURCE_DATE_EPOCH follows the reproducible-builds convention that kiln.h
 * cites: decimal digits only, as `date +%s` prints them; anything else is
 * malformed and must not silently become a timestamp.
 */
static void test_source_date_epoch_must_be_digits(void **state)
{
    (void)state;
    kiln_builder *b = build_scale(2.0, 1.0, "kiln examples/scale.c");
    static const char *const malformed[] = {" 7", "\t7", "+7", "\n86400"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        void *bytes = NULL;
        size_t size = 0;
        kiln_error err;
        setenv("SOURCE_DATE_EPOCH", malformed[i], 1);
        kiln_status status = kiln_builder_encode(b, NULL, &bytes, &size, &err);
        unsetenv("SOURCE_DATE_EPOCH");
        free(bytes);
        /*
         * Regression: strtoll once let " 7", "\t7", "+7" and "\n86400"
         * through as timestamps; SOURCE_DATE_EPOCH must be digits only.
         */
        if (status != KILN_ERR_INVALID_ARGUMENT) {
            print_error("SOURCE_DATE_EPOCH='%s' was accepted (status %d)\n", malformed[i], (int)status);
            kiln_builder_free(b);
            fail();
        }
    }
    kiln_builder_free(b);
}

/* ========================================================== (h) limits */

/*
 * The scale program written field by field (spec §7), with `extra` more
 * f64 scalar weights and `attributes` as node 0's attribute count (whose
 * attributes themselves are never read: no op takes any).
 */
static blob craft_scale(uint32_t extra, uint32_t attributes)
{
    enum { META, OPST, DIMS, IOSG, WTAB, GRPH, WDAT, PARTS };
    static const uint32_t types[PARTS] = {
        KILN_SECTION_META, KILN_SECTION_OPST, KILN_SECTION_DIMS, KILN_SECTION_IOSG,
        KILN_SECTION_WTAB, KILN_SECTION_GRPH, KILN_SECTION_WDAT,
    };
    kiln_writer w[PARTS], out;
    kiln_section_spec specs[PARTS];
    kiln_error err;
    const uint32_t value_x = 0, value_two = 1, value_one = 2, value_doubled = 3 + extra, value_y = 4 + extra;
    for (int i = 0; i < PARTS; i++)
        kiln_writer_init(&w[i]);
    kiln_write_string(&w[META], "scale");
    kiln_write_u8(&w[META], KILN_MODE_INFERENCE);
    kiln_write_u32(&w[META], 0);
    kiln_write_u32(&w[OPST], 2);
    kiln_write_string(&w[OPST], "mul");
    kiln_write_u32(&w[OPST], 1);
    kiln_write_string(&w[OPST], "add");
    kiln_write_u32(&w[OPST], 1);
    kiln_write_u32(&w[DIMS], 1);
    kiln_write_string(&w[DIMS], "batch");
    kiln_write_i64(&w[DIMS], 2);
    kiln_write_i64(&w[DIMS], 4);
    kiln_write_i64(&w[DIMS], 1); /* multiple_of */
    kiln_write_u32(&w[DIMS], 0); /* derived dims */
    kiln_write_u32(&w[DIMS], 2);
    kiln_write_u8(&w[DIMS], KILN_EXPR_DIM);
    kiln_write_u32(&w[DIMS], 0);
    kiln_write_u8(&w[DIMS], KILN_EXPR_CONST);
    kiln_write_i64(&w[DIMS], 2);
    kiln_write_u32(&w[IOSG], 1);
    kiln_write_string(&w[IOSG], "x");
    kiln_write_u8(&w[IOSG], KILN_F64);
    kiln_write_u8(&w[IOSG], 2);
    kiln_write_u32(&w[IOSG], 0);
    kiln_write_u32(&w[IOSG], 1);
    kiln_write_u32(&w[IOSG], 1);
    kiln_write_string(&w[IOSG], "y");
    kiln_write_u32(&w[IOSG], value_y);
    kiln_write_u32(&w[WTAB], 2 + extra);
    for (uint32_t i = 0; i < 2 + extra; i++) {
        char name[32];
        snprintf(name, sizeof name, i < 2 ? "scalar_%u" : "extra_%u", i);
        kiln_write_string(&w[WTAB], name);
        kiln_write_u8(&w[WTAB], KILN_WEIGHT_CONSTANT);
        kiln_write_u8(&w[WTAB], KILN_F64);
        kiln_write_u8(&w[WTAB], 0);
        kiln_write_u64(&w[WTAB], i == 1 ? 64 : 0); /* extras share scalar_0's bytes */
        kiln_write_u64(&w[WTAB], 8);
    }
    kiln_write_u32(&w[GRPH], 2);
    kiln_write_u32(&w[GRPH], 0);
    kiln_write_u32(&w[GRPH], 2);
    kiln_write_u32(&w[GRPH], value_two);
    kiln_write_u32(&w[GRPH], value_x);
    kiln_write_u32(&w[GRPH], 1); /* results */
    kiln_write_u32(&w[GRPH], attributes);
    kiln_write_u32(&w[GRPH], 1);
    kiln_write_u32(&w[GRPH], 2);
    kiln_write_u32(&w[GRPH], value_doubled);
    kiln_write_u32(&w[GRPH], value_one);
    kiln_write_u32(&w[GRPH], 1); /* results */
    kiln_write_u32(&w[GRPH], 0);
    kiln_write_f64(&w[WDAT], 2.0);
    kiln_write_zeros(&w[WDAT], 56);
    kiln_write_f64(&w[WDAT], 1.0);
    for (int i = 0; i < PARTS; i++) {
        assert_int_equal(kiln_writer_finish(&w[i], &err), KILN_OK);
        specs[i] = (kiln_section_spec){.type = types[i], .flags = KILN_SECTION_CRITICAL,
                                       .version = KILN_PROGRAM_SECTION_VERSION,
                                       .data = w[i].data, .size = w[i].size};
    }
    kiln_writer_init(&out);
    assert_int_equal(kiln_container_encode(specs, PARTS, 0, &out, &err), KILN_OK);
    for (int i = 0; i < PARTS; i++)
        kiln_writer_release(&w[i]);
    return (blob){out.data, out.size};
}

/* Load options whose limits (in *limits, which must outlive them) lower max_values and max_attributes. */
static kiln_load_options limited(kiln_limits *limits, uint32_t max_values, uint32_t max_attributes)
{
    kiln_load_options options = options_for(KILN_VERIFY_FULL);
    kiln_limits_default(limits);
    limits->max_values = max_values;
    limits->max_attributes = max_attributes;
    options.limits = limits;
    return options;
}

static void test_limit_max_values(void **state)
{
    (void)state;
    kiln_limits defaults_limits;
    kiln_limits_default(&defaults_limits);
    assert_int_equal(defaults_limits.max_values, 4194304);
    assert_int_equal(defaults_limits.max_attributes, 64);

    /* The crafted program is the real one: it loads and runs. */
    blob b = craft_scale(0, 0);
    kiln_program *program = load_ok(&b, NULL);
    expect_scale_outputs(program, 2.0, 1.0);
    kiln_program_free(program);
    /* 1 input + 2 weights + 2 nodes = 5 values. */
    kiln_limits limits;
    kiln_load_options options = limited(&limits, 5, 64);
    expect_load(&b, &options, KILN_OK, NULL);
    options = limited(&limits, 4, 64);
    expect_load(&b, &options, KILN_ERR_LIMIT, "the program has 5 values, the limit is 4");
    blob_release(&b);

    /* 100 more weights: 105 values, each count under its own limit. */
    b = craft_scale(100, 0);
    program = load_ok(&b, NULL);
    assert_int_equal(kiln_program_weight_count(program), 102);
    expect_scale_outputs(program, 2.0, 1.0);
    kiln_program_free(program);
    options = limited(&limits, 105, 64);
    expect_load(&b, &options, KILN_OK, NULL);
    options = limited(&limits, 104, 64);
    options.verify = KILN_VERIFY_LAZY;
    expect_load(&b, &options, KILN_ERR_LIMIT, "105 values, the limit is 104");
    options = limited(&limits, 0, 64);
    expect_load(&b, &options, KILN_ERR_LIMIT, "the limit is 0");
    blob_release(&b);
}

static void test_limit_max_attributes(void **state)
{
    (void)state;
    /* Over the limit: LIMIT, before anything else is said about them. */
    blob b = craft_scale(0, 65);
    expect_load(&b, NULL, KILN_ERR_LIMIT, "65 attributes exceeds the limit of 64");
    blob_release(&b);
    b = craft_scale(0, UINT32_MAX);
    expect_load(&b, NULL, KILN_ERR_LIMIT, "4294967295 attributes exceeds the limit of 64");
    blob_release(&b);
    /* At the limit, but the bytes cannot hold them: refused before allocating. */
    b = craft_scale(0, 64);
    expect_load(&b, NULL, KILN_ERR_MALFORMED, "claims 64 attributes");
    blob_release(&b);
    /* A caller's tighter limit. */
    b = craft_scale(0, 1);
    kiln_limits limits;
    kiln_load_options options = limited(&limits, 4194304, 0);
    expect_load(&b, &options, KILN_ERR_LIMIT, "1 attributes exceeds the limit of 0");
    /* Under the default limit its (absent) bytes are read as node 1's and refused. */
    expect_load(&b, NULL, KILN_ERR_MALFORMED, "has unknown type");
    blob_release(&b);
}

/*
 * max_decompressed_bytes bounds the raw size of a compressed section
 * ("default 16 GiB per compressed section", kiln.h).
 */
static void test_limit_max_decompressed_bytes(void **state)
{
    (void)state;
    blob packed = encode_big(6), plain = encode_big(0);
    kiln_load_options options = options_for(KILN_VERIFY_FULL);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    assert_int_equal(limits.max_decompressed_bytes, UINT64_C(16) << 30);
    /* Exactly at the limit. */
    limits.max_decompressed_bytes = BIG_N * 4;
    expect_load(&packed, &options, KILN_OK, NULL);
    /* The limit is about decompression: stored weights are not affected. */
    limits.max_decompressed_bytes = 1024;
    expect_load(&plain, &options, KILN_OK, NULL);
    /* With max_weight_bytes lowered as well, the section is refused at parse. */
    kiln_load_options both = options;
    kiln_limits both_limits = limits;
    both.limits = &both_limits;
    both_limits.max_weight_bytes = 1024;
    expect_load(&packed, &both, KILN_ERR_LIMIT, "inflates to 65536 bytes, over the limit of 1024");
    /*
     * Regression: the container limit was once the LARGER of
     * max_decompressed_bytes and max_weight_bytes, so lowering
     * max_decompressed_bytes alone bounded nothing. It now bounds the raw
     * size of every compressed section by itself.
     */
    load_result r = try_load(packed.bytes, packed.size, &options);
    blob_release(&plain);
    blob_release(&packed);
    if (r.status != KILN_ERR_LIMIT)
        fail_msg("max_decompressed_bytes = 1024 with 65536 bytes to inflate: expected %d (LIMIT), got %d: \"%s\"",
                 (int)KILN_ERR_LIMIT, (int)r.status, r.status ? r.err.message : "");
}

/* y = x negated `nodes` times, x: f32[2], with `cases` evidence cases; encoded. */
static blob encode_neg_chain(uint32_t nodes, uint32_t cases)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("chain", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    y = x;
    for (uint32_t n = 0; n < nodes; n++)
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &y, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_tensor *in, *out;
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (int64_t[]){2}, &in, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (int64_t[]){2}, &out, &err), KILN_OK);
    const char *in_name = "x", *out_name = "y";
    kiln_compare_rule exact = {KILN_COMPARE_EXACT, 0, 0, false};
    for (uint32_t c = 0; c < cases; c++) {
        char name[16];
        float *i = kiln_tensor_data(in), *o = kiln_tensor_data(out);
        i[0] = (float)c;
        i[1] = 1;
        o[0] = nodes % 2 ? -i[0] : i[0];
        o[1] = nodes % 2 ? -i[1] : i[1];
        snprintf(name, sizeof name, "case%u", c);
        assert_int_equal(kiln_builder_add_evidence(b, &(kiln_evidence_case){
                .name = name,
                .input_count = 1,
                .input_names = &in_name,
                .inputs = (const kiln_tensor *const[]){in},
                .output_count = 1,
                .output_names = &out_name,
                .expected = (const kiln_tensor *const[]){out},
                .rules = &exact}, &err),
                         KILN_OK);
    }
    kiln_tensor_free(in);
    kiln_tensor_free(out);
    blob result = {0};
    assert_int_equal(kiln_builder_encode(b, NULL, (void **)&result.bytes, &result.size, &err), KILN_OK);
    kiln_builder_free(b);
    return result;
}

/*
 * Issue 20, point 10: replaying evidence is bounded. An artifact may hold
 * 1024 cases of a 10^6-node program (15 minutes of `kiln verify`); case i
 * replays only if cases 0..i run at most max_replay_nodes nodes in all.
 */
static void test_limit_max_replay_nodes(void **state)
{
    (void)state;
    blob chain = encode_neg_chain(100, 3);
    kiln_load_options options = options_for(KILN_VERIFY_FULL);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    assert_int_equal(limits.max_replay_nodes, 1048576);
    limits.max_replay_nodes = 250; /* two cases of 100 nodes, not three */
    kiln_program *program;
    kiln_error err;
    kiln_evidence_result result;
    assert_int_equal(kiln_program_load_memory(chain.bytes, chain.size, &options, &program, NULL, &err), KILN_OK);
    for (uint32_t c = 0; c < 2; c++) {
        assert_int_equal(kiln_program_replay_evidence(program, c, &result, &err), KILN_OK);
        assert_true(result.passed);
    }
    assert_int_equal(kiln_program_replay_evidence(program, 2, &result, &err), KILN_ERR_LIMIT);
    assert_string_equal(err.message, "evidence 'case2' (case 2 of 3) is not replayed: replaying cases 0..2 of this "
                                     "100-node program runs 300 nodes, over kiln_limits.max_replay_nodes (250); load "
                                     "it with a larger limit to replay this case");
    kiln_program_free(program);
    /* The default replays every case of it. */
    assert_int_equal(kiln_program_load_memory(chain.bytes, chain.size, NULL, &program, NULL, &err), KILN_OK);
    for (uint32_t c = 0; c < 3; c++)
        assert_int_equal(kiln_program_replay_evidence(program, c, &result, &err), KILN_OK);
    kiln_program_free(program);
    blob_release(&chain);
}

/* ===================================================== (i) concurrency */

enum { THREADS = 4 };

typedef struct worker {
    const kiln_program *program;
    pthread_barrier_t *start;
    const kiln_tensor *x;
    const float *expected;
    kiln_status status;
    kiln_error err;
    bool outputs_match;
} worker;

/* No cmocka calls here: results are checked by the main thread. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    float *got = malloc(2 * BIG_N * sizeof *got);
    pthread_barrier_wait(w->start);
    w->status = got ? run_big(w->program, w->x, got, &w->err) : KILN_ERR_OUT_OF_MEMORY;
    w->outputs_match = w->status == KILN_OK && memcmp(got, w->expected, 2 * BIG_N * sizeof *got) == 0;
    free(got);
    return NULL;
}

/* Start THREADS sessions on `program` at once; fill `workers`. */
static void run_workers(const kiln_program *program, const kiln_tensor *x, const float *expected,
                        worker workers[THREADS])
{
    pthread_t threads[THREADS];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){.program = program, .start = &start, .x = x, .expected = expected};
        assert_int_equal(pthread_create(&threads[i], NULL, worker_main, &workers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);
}

/*
 * Four threads create their first sessions on one LAZY-loaded program at
 * the same moment. The weights are checked (and, compressed, inflated)
 * once: a second inflation would leak its buffer, which the sanitizer
 * build reports; a race would show under TSan or as wrong outputs.
 */
static void test_concurrent_lazy_sessions(void **state)
{
    (void)state;
    kiln_tensor *x = big_input();
    float *expected = malloc(2 * BIG_N * sizeof *expected);
    assert_non_null(expected);
    const float *in = kiln_tensor_const_data(x);
    for (uint32_t i = 0; i < 2 * BIG_N; i++)
        expected[i] = in[i] * big_weight_value(i % BIG_N, 1.0f);
    kiln_load_options lazy = options_for(KILN_VERIFY_LAZY);
    worker workers[THREADS];

    for (int level = 0; level <= 6; level += 6) {
        blob b = encode_big(level);
        for (int round = 0; round < 5; round++) {
            kiln_program *program = load_ok(&b, &lazy);
            assert_false(atomic_load(&program->weights_ready));
            run_workers(program, x, expected, workers);
            for (int i = 0; i < THREADS; i++) {
                if (workers[i].status != KILN_OK)
                    fail_msg("thread %d: %s", i, workers[i].err.message);
                assert_true(workers[i].outputs_match);
            }
            assert_true(atomic_load(&program->weights_ready));
            assert_int_equal(program->weight_failure, KILN_OK);
            assert_int_equal(program->weight_view.owned != NULL, level != 0);
            kiln_program_free(program);
        }
        /* Damaged weights: every thread gets the same refusal. */
        uint64_t wdat, wdat_size;
        find_section(&b, KILN_SECTION_WDAT, &wdat, &wdat_size);
        b.bytes[wdat + 100] ^= 0x02;
        kiln_program *program = load_ok(&b, &lazy);
        run_workers(program, x, expected, workers);
        for (int i = 0; i < THREADS; i++) {
            assert_int_equal(workers[i].status, KILN_ERR_SECTION_CRC);
            assert_string_equal(workers[i].err.message, workers[0].err.message);
            assert_non_null(strstr(workers[i].err.message, "WDAT"));
        }
        assert_false(atomic_load(&program->weights_ready));
        kiln_program_free(program);
        blob_release(&b);
    }
    free(expected);
    kiln_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* (a) signature outcomes */
        cmocka_unit_test(test_unsigned_outcomes),
        cmocka_unit_test(test_signed_by_trusted_key),
        cmocka_unit_test(test_signed_by_untrusted_key),
        cmocka_unit_test(test_bad_signature),
        cmocka_unit_test(test_forgery_after_signing),
        cmocka_unit_test(test_every_flip_of_signed_artifact_refused),
        /* (b) signing files */
        cmocka_unit_test(test_sign_in_place_and_to_path),
        cmocka_unit_test(test_sign_refuses_damaged_artifact),
        cmocka_unit_test(test_sign_refuses_inconsistent_secret_key),
        /* (c) keys */
        cmocka_unit_test(test_key_text_round_trip),
        cmocka_unit_test(test_key_parse_errors),
        cmocka_unit_test(test_key_id),
        /* (d) identities */
        cmocka_unit_test(test_identities),
        /* (e) compression */
        cmocka_unit_test(test_compression_round_trip),
        /* (f) lazy verification */
        cmocka_unit_test(test_lazy_weight_verification),
        /* (g) timestamps */
        cmocka_unit_test(test_timestamp),
        cmocka_unit_test(test_source_date_epoch_must_be_digits),
        /* (h) limits */
        cmocka_unit_test(test_limit_max_values),
        cmocka_unit_test(test_limit_max_attributes),
        cmocka_unit_test(test_limit_max_decompressed_bytes),
        cmocka_unit_test(test_limit_max_replay_nodes),
        /* (i) concurrency */
        cmocka_unit_test(test_concurrent_lazy_sessions),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
