/*
 * signature.h — Ed25519 signatures over the artifact digest.
 *
 * The signed message is a fixed domain-separation context followed by the
 * 32-byte artifact digest, so a kiln signature can never be replayed as a
 * signature over anything else (or the reverse). A key is named by its key
 * id: the first 16 bytes of BLAKE2b-256 of the 32-byte public key.
 */
#ifndef KILN_FORMAT_SIGNATURE_H
#define KILN_FORMAT_SIGNATURE_H

#include <stdbool.h>
#include <stdint.h>

#include "container.h"

#define KILN_PUBLIC_KEY_SIZE 32
#define KILN_SECRET_KEY_SIZE 64

/* "kiln artifact signature v1" and a NUL byte. */
#define KILN_SIGNATURE_CONTEXT "kiln artifact signature v1"

void kiln_signature_key_id(const uint8_t public_key[KILN_PUBLIC_KEY_SIZE], uint8_t out[KILN_KEY_ID_SIZE]);

/* Sign `digest`. @return KILN_OK or KILN_ERR_INVALID_ARGUMENT (bad key). */
kiln_status kiln_signature_sign(const uint8_t secret_key[KILN_SECRET_KEY_SIZE],
                                const uint8_t digest[KILN_DIGEST_SIZE],
                                uint8_t signature[KILN_SIGNATURE_SIZE], kiln_error *err);

/* @return true if `signature` is a valid signature of `digest` by `public_key`. */
bool kiln_signature_verify(const uint8_t public_key[KILN_PUBLIC_KEY_SIZE],
                           const uint8_t digest[KILN_DIGEST_SIZE],
                           const uint8_t signature[KILN_SIGNATURE_SIZE]);

#endif
