/* section_io_signature.c — see section_io_signature.h. */
#include "section_io_signature.h"

#include "error.h"
#include "section_dtypes.h"
#include "section_read.h"

void kiln_io_signature_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->input_count);
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_input_decl *in = &m->inputs[i];
        kiln_write_string(w, in->name);
        kiln_write_u8(w, (uint8_t)in->type.dtype);
        kiln_write_u8(w, (uint8_t)in->type.shape.rank);
        for (uint32_t a = 0; a < in->type.shape.rank; a++)
            kiln_write_u32(w, in->type.shape.axes[a]);
    }
    kiln_write_u32(w, m->output_count);
    for (uint32_t i = 0; i < m->output_count; i++) {
        kiln_write_string(w, m->outputs[i].name);
        kiln_write_u32(w, m->outputs[i].value);
    }
}

kiln_status kiln_io_signature_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                                     kiln_model *m, kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section IOSG");
    KILN_SECTION_READ_ARRAY(&r, limits->max_inputs, 6, "inputs", m->inputs, m->input_count, err);
    for (uint32_t i = 0; i < m->input_count; i++) {
        kiln_input_decl *in = &m->inputs[i];
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &in->name, err));
        KILN_TRY(kiln_section_read_dtype(&r, &in->type.dtype, err));
        kiln_section_note_dtype(report, unsupported, features, in->type.dtype, "input", in->name);
        KILN_TRY(kiln_section_read_rank(&r, &in->type.shape.rank, err));
        for (uint32_t a = 0; a < in->type.shape.rank; a++) {
            KILN_TRY(kiln_read_u32(&r, &in->type.shape.axes[a], err));
            if (in->type.shape.axes[a] >= m->exprs.count)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section IOSG: input '%s' axis %u refers to "
                                 "expression %u of %u", in->name, a, in->type.shape.axes[a], m->exprs.count);
        }
    }
    KILN_SECTION_READ_ARRAY(&r, limits->max_outputs, 8, "outputs", m->outputs, m->output_count, err);
    for (uint32_t i = 0; i < m->output_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->outputs[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->outputs[i].value, err));
    }
    return kiln_reader_expect_end(&r, err);
}
