/* keys.c — Ed25519 key pairs, key ids and their one-line text forms. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include <kiln/kiln.h>

#include "error.h"
#include "format/signature.h"

#define PUBLIC_PREFIX "kiln-ed25519-public-v1 "
#define SECRET_PREFIX "kiln-ed25519-secret-v1 "

kiln_status kiln_key_generate(kiln_public_key *public_key, kiln_secret_key *secret_key, kiln_error *err)
{
    if (sodium_init() < 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "libsodium failed to initialise");
    if (crypto_sign_keypair(public_key->bytes, secret_key->bytes) != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "key generation failed");
    return KILN_OK;
}

void kiln_key_id(const kiln_public_key *public_key, uint8_t out[16])
{
    kiln_signature_key_id(public_key->bytes, out);
}

static int format_key(const char *prefix, const uint8_t *bytes, size_t size, char *buffer, size_t buffer_size)
{
    char encoded[128];
    if (sodium_init() < 0)
        return -1;
    sodium_bin2base64(encoded, sizeof encoded, bytes, size, sodium_base64_VARIANT_ORIGINAL);
    return snprintf(buffer, buffer_size, "%s%s\n", prefix, encoded);
}

int kiln_public_key_format(const kiln_public_key *key, char *buffer, size_t size)
{
    return format_key(PUBLIC_PREFIX, key->bytes, sizeof key->bytes, buffer, size);
}

int kiln_secret_key_format(const kiln_secret_key *key, char *buffer, size_t size)
{
    return format_key(SECRET_PREFIX, key->bytes, sizeof key->bytes, buffer, size);
}

/* Decode "PREFIX base64" with optional surrounding white space into exactly `size` bytes. */
static kiln_status parse_key(const char *text, const char *prefix, const char *what, uint8_t *out, size_t size,
                             kiln_error *err)
{
    size_t prefix_len = strlen(prefix);
    if (!text)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s key text is NULL", what);
    while (isspace((unsigned char)*text))
        text++;
    if (strncmp(text, prefix, prefix_len) != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "not a kiln %s key: it must start with '%.*s'", what,
                         (int)prefix_len - 1, prefix);
    const char *body = text + prefix_len;
    size_t body_len = strlen(body);
    while (body_len && isspace((unsigned char)body[body_len - 1]))
        body_len--;
    size_t decoded = 0;
    const char *end;
    if (sodium_init() < 0 ||
        sodium_base642bin(out, size, body, body_len, NULL, &decoded, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
        decoded != size || end != body + body_len)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the %s key is not %zu base64-encoded bytes", what, size);
    return KILN_OK;
}

kiln_status kiln_public_key_parse(const char *text, kiln_public_key *out, kiln_error *err)
{
    return parse_key(text, PUBLIC_PREFIX, "public", out->bytes, sizeof out->bytes, err);
}

kiln_status kiln_secret_key_parse(const char *text, kiln_secret_key *out, kiln_error *err)
{
    kiln_status status = parse_key(text, SECRET_PREFIX, "secret", out->bytes, sizeof out->bytes, err);
    /* Signing checks the same, but a damaged key file is best named here. */
    uint8_t probe[KILN_DIGEST_SIZE] = {0}, signature[KILN_SIGNATURE_SIZE];
    if (status == KILN_OK)
        status = kiln_signature_sign(out->bytes, probe, signature, err);
    if (status != KILN_OK)
        sodium_memzero(out->bytes, sizeof out->bytes); /* no half-parsed secret left behind */
    return status;
}
