/* hashing.c — CRC32 through zlib, BLAKE2b-256 through libsodium. */
#include "hashing.h"

#include <sodium.h>
#include <zlib.h>

uint32_t kiln_crc32(const uint8_t *bytes, uint64_t size)
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

static void hash_update(crypto_generichash_state *state, const uint8_t *bytes, uint64_t size)
{
    while (size > 0) {
        size_t piece = size > (1u << 30) ? (1u << 30) : (size_t)size;
        crypto_generichash_update(state, bytes, piece);
        bytes += piece;
        size -= piece;
    }
}

void kiln_blake2b_256_pair(const uint8_t *first, uint64_t first_size, const uint8_t *second,
                           uint64_t second_size, uint8_t out[KILN_DIGEST_SIZE])
{
    crypto_generichash_state state;
    int ready = sodium_init(); /* idempotent; BLAKE2b needs no randomness */
    (void)ready;
    crypto_generichash_init(&state, NULL, 0, KILN_DIGEST_SIZE);
    hash_update(&state, first, first_size);
    hash_update(&state, second, second_size);
    crypto_generichash_final(&state, out, KILN_DIGEST_SIZE);
}

void kiln_blake2b_256(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE])
{
    kiln_blake2b_256_pair(bytes, size, NULL, 0, out);
}
