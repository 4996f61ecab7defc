/* section_weights.c — see section_weights.h. */
#include "section_weights.h"

#include "checked_math.h"
#include "error.h"
#include "section_dtypes.h"
#include "section_read.h"
#include "sections.h"
#include "tensor.h"

kiln_status kiln_weights_encode(kiln_model *m, kiln_writer *table, uint64_t *data_size, kiln_error *err)
{
    uint64_t end = 0;
    kiln_write_u32(table, m->weight_count);
    for (uint32_t i = 0; i < m->weight_count; i++) {
        kiln_weight_decl *wt = &m->weights[i];
        uint64_t aligned;
        if (!kiln_align_up_u64(end, KILN_WEIGHT_ALIGNMENT, &aligned) || !kiln_add_u64(aligned, wt->byte_size, &end))
            return kiln_fail(err, KILN_ERR_LIMIT, "weights are too large");
        wt->data_offset = aligned;
        kiln_write_string(table, wt->name);
        kiln_write_u8(table, (uint8_t)wt->kind);
        kiln_write_u8(table, (uint8_t)wt->dtype);
        kiln_write_u8(table, (uint8_t)wt->rank);
        for (uint32_t a = 0; a < wt->rank; a++)
            kiln_write_i64(table, wt->shape[a]);
        kiln_write_u64(table, wt->data_offset);
        kiln_write_u64(table, wt->byte_size);
    }
    *data_size = end;
    return KILN_OK;
}

/* A weight's byte count against its shape, and its bytes against the weight data. */
static kiln_status check_weight_bytes(const kiln_weight_decl *w, uint64_t data_size, kiln_error *err)
{
    uint64_t element_count, end;
    size_t expected_bytes;
    kiln_error detail;
    if (kiln_shape_sizes(w->dtype, w->rank, w->shape, &element_count, &expected_bytes, &detail) != KILN_OK)
        return kiln_fail(err, detail.code == KILN_ERR_LIMIT ? KILN_ERR_LIMIT : KILN_ERR_MALFORMED,
                         "section WTAB: weight '%s': %s", w->name, detail.message);
    if (w->byte_size != expected_bytes)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section WTAB: weight '%s' stores %llu bytes, its shape needs %zu",
                         w->name, (unsigned long long)w->byte_size, expected_bytes);
    if (w->data_offset % KILN_WEIGHT_ALIGNMENT != 0 || !kiln_add_u64(w->data_offset, w->byte_size, &end) ||
        end > data_size)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section WTAB: weight '%s' (%llu bytes at %llu) lies outside the %llu-byte weight data",
                         w->name, (unsigned long long)w->byte_size, (unsigned long long)w->data_offset,
                         (unsigned long long)data_size);
    return KILN_OK;
}

kiln_status kiln_weights_decode(const uint8_t *data, size_t size, uint64_t data_size, bool data_compressed,
                                const kiln_limits *limits, uint64_t features, kiln_model *m, kiln_report *report,
                                uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    uint64_t total = 0, packed = 0;
    kiln_reader_init(&r, data, size, "section WTAB");
    KILN_SECTION_READ_ARRAY(&r, limits->max_weights, 23, "weights", m->weights, m->weight_count, err);
    for (uint32_t i = 0; i < m->weight_count; i++) {
        kiln_weight_decl *w = &m->weights[i];
        uint8_t kind;
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &w->name, err));
        KILN_TRY(kiln_read_u8(&r, &kind, err));
        if (kind > KILN_WEIGHT_CONSTANT)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section WTAB: weight '%s' has unknown kind %u", w->name, kind);
        w->kind = (kiln_weight_kind)kind;
        KILN_TRY(kiln_section_read_dtype(&r, &w->dtype, err));
        kiln_section_note_dtype(report, unsupported, features, w->dtype, "weight", w->name);
        KILN_TRY(kiln_section_read_rank(&r, &w->rank, err));
        for (uint32_t a = 0; a < w->rank; a++)
            KILN_TRY(kiln_read_i64(&r, &w->shape[a], err));
        KILN_TRY(kiln_read_u64(&r, &w->data_offset, err));
        KILN_TRY(kiln_read_u64(&r, &w->byte_size, err));
        KILN_TRY(check_weight_bytes(w, data_size, err));
        if (!kiln_add_u64(total, w->byte_size, &total) || total > limits->max_weight_bytes)
            return kiln_fail(err, KILN_ERR_LIMIT, "weights exceed the limit of %llu bytes",
                             (unsigned long long)limits->max_weight_bytes);
        uint64_t slot;
        if (!kiln_align_up_u64(w->byte_size, KILN_WEIGHT_ALIGNMENT, &slot) || !kiln_add_u64(packed, slot, &packed))
            return kiln_fail(err, KILN_ERR_LIMIT, "weights exceed the limit of %llu bytes",
                             (unsigned long long)limits->max_weight_bytes);
    }
    /* Compressed weight data is inflated into memory: it may hold no more
     * than its weights packed at 64-byte alignment, as the writer lays
     * them out (spec/format.md §7.7), so padding cannot ask for memory. */
    if (data_compressed && data_size > packed)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "section WDAT: compressed weight data inflates to %llu bytes; its weights need %llu",
                         (unsigned long long)data_size, (unsigned long long)packed);
    return kiln_reader_expect_end(&r, err);
}

void kiln_model_bind_weights(kiln_model *m, const uint8_t *data)
{
    for (uint32_t i = 0; i < m->weight_count; i++)
        m->weights[i].data = data + m->weights[i].data_offset;
}
