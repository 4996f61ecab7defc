/* section_meta.c — see section_meta.h. */
#include "section_meta.h"

#include "error.h"
#include "section_read.h"

void kiln_meta_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_string(w, m->name);
    kiln_write_u8(w, (uint8_t)m->mode);
    kiln_write_u32(w, m->metadata_count);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        kiln_write_string(w, m->metadata[i].key);
        kiln_write_string(w, m->metadata[i].value);
    }
}

kiln_status kiln_meta_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                             kiln_error *err)
{
    kiln_reader r;
    uint8_t mode;
    kiln_reader_init(&r, data, size, "section META");
    KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->name, err));
    KILN_TRY(kiln_read_u8(&r, &mode, err));
    if (mode > KILN_MODE_TRAINING)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section META: unknown mode %u", mode);
    m->mode = (kiln_mode)mode;
    KILN_SECTION_READ_ARRAY(&r, limits->max_metadata, 8, "metadata entries", m->metadata, m->metadata_count, err);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->metadata[i].key, err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->metadata[i].value, err));
    }
    return kiln_reader_expect_end(&r, err);
}
