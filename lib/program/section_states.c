/* section_states.c — see section_states.h. */
#include "section_states.h"

#include "error.h"
#include "section_dtypes.h"
#include "section_read.h"

void kiln_states_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->state_count);
    for (uint32_t i = 0; i < m->state_count; i++) {
        const kiln_state_decl *st = &m->states[i];
        kiln_write_string(w, st->name);
        kiln_write_u8(w, (uint8_t)st->dtype);
        kiln_write_u32(w, st->rank);
        for (uint32_t a = 0; a < st->rank; a++)
            kiln_write_i64(w, st->shape[a]);
        kiln_write_u32(w, st->axis);
        kiln_write_string(w, st->length_dim);
    }
}

kiln_status kiln_states_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                               kiln_model *m, struct kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section STAT");
    /* name 4 + dtype 1 + rank 4 + axis 4 + length dim 4: 17 bytes at least (format.md §7.14). */
    KILN_SECTION_READ_ARRAY(&r, limits->max_inputs, 17, "states", m->states, m->state_count, err);
    for (uint32_t i = 0; i < m->state_count; i++) {
        kiln_state_decl *st = &m->states[i];
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &st->name, err));
        KILN_TRY(kiln_section_read_dtype(&r, &st->dtype, err));
        kiln_section_note_dtype(report, unsupported, features, st->dtype, "state", st->name);
        KILN_TRY(kiln_read_u32(&r, &st->rank, err));
        if (st->rank == 0 || st->rank > KILN_MAX_RANK)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section STAT: state '%s' has rank %u (1..%d)", st->name,
                             st->rank, KILN_MAX_RANK);
        for (uint32_t a = 0; a < st->rank; a++) {
            KILN_TRY(kiln_read_i64(&r, &st->shape[a], err));
            if (st->shape[a] < 0)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section STAT: state '%s' axis %u has size %lld",
                                 st->name, a, (long long)st->shape[a]);
        }
        KILN_TRY(kiln_read_u32(&r, &st->axis, err));
        if (st->axis >= st->rank)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section STAT: state '%s' grows along axis %u of rank %u",
                             st->name, st->axis, st->rank);
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &st->length_dim, err));
    }
    return kiln_reader_expect_end(&r, err);
}
