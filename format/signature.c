/* signature.c — Ed25519 (libsodium) over context || digest. */
#include "signature.h"

#include <string.h>

#include <sodium.h>

#include "error.h"
#include "hashing.h"

/* The context includes its terminating NUL, so no other message that a
 * key might sign can begin with these bytes and then look like a digest. */
#define CONTEXT_SIZE (sizeof KILN_SIGNATURE_CONTEXT)
#define MESSAGE_SIZE (CONTEXT_SIZE + KILN_DIGEST_SIZE)

static void build_message(const uint8_t digest[KILN_DIGEST_SIZE], uint8_t message[MESSAGE_SIZE])
{
    memcpy(message, KILN_SIGNATURE_CONTEXT, CONTEXT_SIZE);
    memcpy(message + CONTEXT_SIZE, digest, KILN_DIGEST_SIZE);
}

void kiln_signature_key_id(const uint8_t public_key[KILN_PUBLIC_KEY_SIZE], uint8_t out[KILN_KEY_ID_SIZE])
{
    uint8_t full[KILN_DIGEST_SIZE];
    kiln_blake2b_256(public_key, KILN_PUBLIC_KEY_SIZE, full);
    memcpy(out, full, KILN_KEY_ID_SIZE);
}

kiln_status kiln_signature_sign(const uint8_t secret_key[KILN_SECRET_KEY_SIZE],
                                const uint8_t digest[KILN_DIGEST_SIZE],
                                uint8_t signature[KILN_SIGNATURE_SIZE], kiln_error *err)
{
    uint8_t message[MESSAGE_SIZE];
    if (sodium_init() < 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "libsodium failed to initialise");
    /* A secret key is seed || public key. If they disagree, the signature
     * would name a key id that can never verify it: refuse instead. */
    uint8_t seed_public[crypto_sign_PUBLICKEYBYTES], seed_secret[crypto_sign_SECRETKEYBYTES];
    crypto_sign_seed_keypair(seed_public, seed_secret, secret_key);
    bool consistent = memcmp(seed_public, secret_key + 32, sizeof seed_public) == 0;
    sodium_memzero(seed_secret, sizeof seed_secret);
    if (!consistent)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the secret key is damaged: its seed and public half differ");
    build_message(digest, message);
    if (crypto_sign_detached(signature, NULL, message, MESSAGE_SIZE, secret_key) != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the secret key cannot sign");
    return KILN_OK;
}

bool kiln_signature_verify(const uint8_t public_key[KILN_PUBLIC_KEY_SIZE],
                           const uint8_t digest[KILN_DIGEST_SIZE],
                           const uint8_t signature[KILN_SIGNATURE_SIZE])
{
    uint8_t message[MESSAGE_SIZE];
    if (sodium_init() < 0)
        return false;
    build_message(digest, message);
    return crypto_sign_verify_detached(signature, message, MESSAGE_SIZE, public_key) == 0;
}
