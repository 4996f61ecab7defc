/*
 * artifact_describe.c — a container-level view of an artifact, for tools
 * that must show an artifact this runtime cannot run (kiln inspect, kiln
 * diff). It proves the bytes intact as full verification does but decodes
 * no section, so it works whatever the sections hold.
 */
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "artifact_describe.h"
#include "format/container.h"
#include "error.h"
#include "format/file_io.h"

/* Every section's CRC32 and BLAKE2b-256 (inflating compressed ones), then
 * the gaps: the same proof KILN_VERIFY_FULL gives at open. */
static kiln_status verify_every_section(const kiln_container *c, kiln_error *err)
{
    for (uint32_t i = 0; i < c->section_count; i++) {
        kiln_section_view view;
        KILN_TRY(kiln_container_section(c, i, KILN_CHECK_CRC_AND_HASH, &view, err));
        kiln_section_view_release(&view);
    }
    return kiln_container_verify_gaps(c, err);
}

static kiln_status describe_container(const uint8_t *bytes, size_t size, kiln_artifact_description *out,
                                      kiln_error *err)
{
    kiln_limits limits;
    kiln_container c;
    kiln_limits_default(&limits);
    kiln_container_limits container_limits = {
        .max_sections = limits.max_sections,
        .max_section_raw_size = UINT64_MAX,
        .max_decompressed_size = limits.max_decompressed_bytes,
    };
    KILN_TRY(kiln_container_parse(bytes, size, &container_limits, &c, err));
    kiln_status status = kiln_container_verify_digest(&c, err);
    if (status == KILN_OK)
        status = verify_every_section(&c, err);
    if (status == KILN_OK) {
        out->sections = calloc(c.section_count ? c.section_count : 1, sizeof *out->sections);
        if (!out->sections)
            status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory describing %u sections",
                               c.section_count);
    }
    if (status == KILN_OK) {
        out->major = c.major;
        out->minor = c.minor;
        out->feature_bits = c.features;
        out->file_size = c.size;
        memcpy(out->digest, c.digest, KILN_DIGEST_SIZE);
        if (c.trailer_flags & KILN_TRAILER_SIGNED) {
            out->signature.state = KILN_SIGNATURE_UNVERIFIED;
            memcpy(out->signature.key_id, c.key_id, KILN_KEY_ID_SIZE);
        }
        out->section_count = c.section_count;
        for (uint32_t i = 0; i < c.section_count; i++) {
            const kiln_section_entry *s = &c.sections[i];
            kiln_section_info *info = &out->sections[i];
            kiln_fourcc_text(s->type, info->type);
            info->critical = (s->flags & KILN_SECTION_CRITICAL) != 0;
            info->compressed = (s->flags & KILN_SECTION_COMPRESSED) != 0;
            info->version = s->version;
            info->offset = s->offset;
            info->stored_size = s->stored_size;
            info->raw_size = s->raw_size;
            info->crc32 = s->crc;
        }
    }
    kiln_container_release(&c);
    return status;
}

kiln_status kiln_artifact_describe(const char *path, kiln_artifact_description *out, kiln_error *err)
{
    if (!out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    kiln_mapped_file file;
    KILN_TRY(kiln_mapped_file_open(path, &file, err));
    kiln_status status = kiln_artifact_describe_bytes(file.bytes, file.size, out, err);
    kiln_mapped_file_release(&file);
    return status;
}

kiln_status kiln_artifact_describe_bytes(const uint8_t *bytes, size_t size, kiln_artifact_description *out,
                                         kiln_error *err)
{
    memset(out, 0, sizeof *out);
    kiln_status status = describe_container(bytes, size, out, err);
    if (status != KILN_OK)
        kiln_artifact_description_free(out);
    return status;
}

void kiln_artifact_description_free(kiln_artifact_description *description)
{
    if (!description)
        return;
    free(description->sections);
    memset(description, 0, sizeof *description);
}
