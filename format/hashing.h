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
