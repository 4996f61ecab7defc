/* hashing.c — CRC32 through zlib, BLAKE2b-256 through libsodium. */
#include "hashing.h"

#include <sodium.h>
#include <zlib.h>

/* Pieces fit zlib's uInt lengths, and are small enough to report progress. */
uint32_t kiln_crc32_progress(const uint8_t *bytes, uint64_t size, kiln_progress *progress)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (size > 0) {
        uInt piece = size > KILN_PROGRESS_STEP ? (uInt)KILN_PROGRESS_STEP : (uInt)size;
        crc = crc32(crc, bytes, piece);
        bytes += piece;
        size -= piece;
        kiln_progress_advance(progress, piece);
    }
    return (uint32_t)crc;
}

uint32_t kiln_crc32(const uint8_t *bytes, uint64_t size)
{
    return kiln_crc32_progress(bytes, size, NULL);
}

uint32_t kiln_crc32_update(uint32_t crc, const uint8_t *bytes, uint64_t size)
{
    uLong value = crc;
    while (size > 0) {
        uInt piece = size > KILN_PROGRESS_STEP ? (uInt)KILN_PROGRESS_STEP : (uInt)size;
        value = crc32(value, bytes, piece);
        bytes += piece;
        size -= piece;
    }
    return (uint32_t)value;
}

_Static_assert(sizeof(crypto_generichash_state) <= sizeof(kiln_blake2b_state),
               "kiln_blake2b_state must hold libsodium's BLAKE2b state");
_Static_assert(_Alignof(crypto_generichash_state) <= _Alignof(kiln_blake2b_state),
               "kiln_blake2b_state must be aligned as libsodium's BLAKE2b state");

void kiln_blake2b_256_init(kiln_blake2b_state *state)
{
    int ready = sodium_init(); /* idempotent; BLAKE2b needs no randomness */
    (void)ready;
    crypto_generichash_init((crypto_generichash_state *)(void *)state->opaque, NULL, 0, KILN_DIGEST_SIZE);
}

void kiln_blake2b_256_update(kiln_blake2b_state *state, const uint8_t *bytes, uint64_t size)
{
    while (size > 0) {
        size_t piece = size > KILN_PROGRESS_STEP ? (size_t)KILN_PROGRESS_STEP : (size_t)size;
        crypto_generichash_update((crypto_generichash_state *)(void *)state->opaque, bytes, piece);
        bytes += piece;
        size -= piece;
    }
}

void kiln_blake2b_256_final(kiln_blake2b_state *state, uint8_t out[KILN_DIGEST_SIZE])
{
    crypto_generichash_final((crypto_generichash_state *)(void *)state->opaque, out, KILN_DIGEST_SIZE);
}

static void hash_update(crypto_generichash_state *state, const uint8_t *bytes, uint64_t size,
                        kiln_progress *progress)
{
    while (size > 0) {
        size_t piece = size > KILN_PROGRESS_STEP ? (size_t)KILN_PROGRESS_STEP : (size_t)size;
        crypto_generichash_update(state, bytes, piece);
        bytes += piece;
        size -= piece;
        kiln_progress_advance(progress, piece);
    }
}

void kiln_blake2b_256_pair(const uint8_t *first, uint64_t first_size, const uint8_t *second,
                           uint64_t second_size, uint8_t out[KILN_DIGEST_SIZE])
{
    crypto_generichash_state state;
    int ready = sodium_init(); /* idempotent; BLAKE2b needs no randomness */
    (void)ready;
    crypto_generichash_init(&state, NULL, 0, KILN_DIGEST_SIZE);
    hash_update(&state, first, first_size, NULL);
    hash_update(&state, second, second_size, NULL);
    crypto_generichash_final(&state, out, KILN_DIGEST_SIZE);
}

void kiln_blake2b_256(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE])
{
    kiln_blake2b_256_pair(bytes, size, NULL, 0, out);
}

void kiln_blake2b_256_progress(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE],
                               kiln_progress *progress)
{
    crypto_generichash_state state;
    int ready = sodium_init();
    (void)ready;
    crypto_generichash_init(&state, NULL, 0, KILN_DIGEST_SIZE);
    hash_update(&state, bytes, size, progress);
    crypto_generichash_final(&state, out, KILN_DIGEST_SIZE);
}
