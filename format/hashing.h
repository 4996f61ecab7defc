/*
 * hashing.h — the two checksums of the format: zlib's CRC32 (accidental
 * damage, cheap) and BLAKE2b-256 (identity and tamper evidence).
 */
#ifndef KILN_FORMAT_HASHING_H
#define KILN_FORMAT_HASHING_H

#include <stddef.h>
#include <stdint.h>

#include "progress.h"

/* BLAKE2b-256: the digest of the trailer, of each section and of the identities. */
#define KILN_DIGEST_SIZE 32

uint32_t kiln_crc32(const uint8_t *bytes, uint64_t size);
/* The same, advancing `progress` (may be NULL) as it goes. */
uint32_t kiln_crc32_progress(const uint8_t *bytes, uint64_t size, kiln_progress *progress);
void kiln_blake2b_256_progress(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE],
                               kiln_progress *progress);

/*
 * BLAKE2b-256 fed piece by piece, for bytes that never sit in memory
 * together (a section streamed from a file). The state is libsodium's
 * crypto_generichash_state, kept opaque here so that no layer above needs
 * libsodium's headers; hashing.c checks that it fits.
 */
typedef struct kiln_blake2b_state {
    _Alignas(64) uint8_t opaque[512];
} kiln_blake2b_state;

void kiln_blake2b_256_init(kiln_blake2b_state *state);
void kiln_blake2b_256_update(kiln_blake2b_state *state, const uint8_t *bytes, uint64_t size);
void kiln_blake2b_256_final(kiln_blake2b_state *state, uint8_t out[KILN_DIGEST_SIZE]);

/* Continue the CRC32 `crc` (0 to start) over `size` more bytes. */
uint32_t kiln_crc32_update(uint32_t crc, const uint8_t *bytes, uint64_t size);

/* BLAKE2b with a 32-byte output, over one or two byte ranges in order. */
void kiln_blake2b_256(const uint8_t *bytes, uint64_t size, uint8_t out[KILN_DIGEST_SIZE]);
void kiln_blake2b_256_pair(const uint8_t *first, uint64_t first_size, const uint8_t *second,
                           uint64_t second_size, uint8_t out[KILN_DIGEST_SIZE]);

/*
 * Fuzzing builds compare no checksums, so that mutated files reach the
 * structure checks behind them instead of stopping at the first one.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define KILN_CHECKSUMS_DIFFER(differ) ((void)(differ), 0)
#else
#define KILN_CHECKSUMS_DIFFER(differ) (differ)
#endif

#endif
