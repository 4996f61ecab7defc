/* artifact_sign.c — signing an artifact in place: only the trailer changes. */
#include <string.h>

#include <kiln/kiln.h>

#include "error.h"
#include "format/signature.h"
#include "loader.h"
#include "program.h"

kiln_status kiln_artifact_sign(const char *path, const char *out_path, const kiln_secret_key *key,
                               const kiln_load_options *options, kiln_error *err)
{
    kiln_program *program;
    kiln_load_settings settings;
    if (!path || !key)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path and key must not be NULL");
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    kiln_load_options full = settings.options;
    /* Sign only what verifies in full: a signature vouches for the bytes. */
    full.verify = KILN_VERIFY_FULL;
    KILN_TRY(kiln_program_load(path, &full, &program, NULL, err));
    const kiln_container *c = &program->container;
    uint8_t public_key[KILN_PUBLIC_KEY_SIZE], key_id[KILN_KEY_ID_SIZE], signature[KILN_SIGNATURE_SIZE];
    memcpy(public_key, key->bytes + 32, sizeof public_key);
    kiln_signature_key_id(public_key, key_id);
    kiln_status status = kiln_signature_sign(key->bytes, c->digest, signature, err);
    if (status == KILN_OK) {
        uint8_t trailer[KILN_TRAILER_SIZE];
        kiln_trailer_write(trailer, c->digest, key_id, signature);
        /* The body goes from the mapping to the new file, its pages given
         * back as they are written: signing does not make the weights resident. */
        kiln_byte_range parts[2] = {
            {c->bytes, (size_t)(c->size - KILN_TRAILER_SIZE), c->file_mapped},
            {trailer, KILN_TRAILER_SIZE, false},
        };
        kiln_progress progress = {full.progress, full.progress_user, 0, c->size, 0};
        status = kiln_atomic_write_parts_progress(out_path ? out_path : path, parts, 2, &progress, err);
    }
    kiln_program_free(program);
    return status;
}
