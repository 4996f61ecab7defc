/* section_evidence.c — see section_evidence.h. */
#include "section_evidence.h"

#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "tensor.h"

static kiln_status no_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
}

static void encode_tensor(kiln_writer *w, const kiln_evidence_tensor *t)
{
    kiln_write_string(w, t->name);
    kiln_write_u8(w, (uint8_t)t->dtype);
    kiln_write_u8(w, (uint8_t)t->rank);
    for (uint32_t a = 0; a < t->rank; a++)
        kiln_write_i64(w, t->shape[a]);
    kiln_write_u64(w, t->byte_size);
    kiln_write_bytes(w, t->data, t->byte_size);
}

void kiln_evidence_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->evidence_count);
    for (uint32_t c = 0; c < m->evidence_count; c++) {
        const kiln_evidence_record *e = &m->evidence[c];
        kiln_write_string(w, e->name);
        kiln_write_u32(w, e->input_count);
        for (uint32_t i = 0; i < e->input_count; i++)
            encode_tensor(w, &e->inputs[i]);
        kiln_write_u32(w, e->output_count);
        for (uint32_t i = 0; i < e->output_count; i++) {
            encode_tensor(w, &e->outputs[i]);
            kiln_write_u8(w, (uint8_t)e->rules[i].kind);
            kiln_write_f64(w, e->rules[i].atol);
            kiln_write_f64(w, e->rules[i].rtol);
            kiln_write_u8(w, e->rules[i].nan_equal ? 1 : 0);
        }
    }
}

static kiln_status decode_tensor(kiln_reader *r, const kiln_limits *limits, kiln_evidence_tensor *t,
                                 kiln_error *err)
{
    uint8_t dtype, rank;
    uint64_t byte_size, count;
    size_t expected;
    const uint8_t *bytes;
    KILN_TRY(kiln_read_string(r, limits->max_string_length, &t->name, err));
    KILN_TRY(kiln_read_u8(r, &dtype, err));
    KILN_TRY(kiln_read_u8(r, &rank, err));
    if (kiln_dtype_size((kiln_dtype)dtype) == 0 || rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section EVID: tensor '%s' has dtype code %u and rank %u",
                         t->name, dtype, rank);
    t->dtype = (kiln_dtype)dtype;
    t->rank = rank;
    for (uint32_t a = 0; a < rank; a++)
        KILN_TRY(kiln_read_i64(r, &t->shape[a], err));
    KILN_TRY(kiln_read_u64(r, &byte_size, err));
    kiln_error detail;
    if (kiln_shape_sizes(t->dtype, t->rank, t->shape, &count, &expected, &detail) != KILN_OK ||
        byte_size != expected)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section EVID: tensor '%s' stores %llu bytes that its shape "
                         "does not account for", t->name, (unsigned long long)byte_size);
    /* The bytes must be present before anything is allocated for them. */
    KILN_TRY(kiln_read_bytes(r, expected, &bytes, err));
    if (!(t->data = malloc(expected ? expected : 1)))
        return no_memory(err);
    memcpy(t->data, bytes, expected);
    t->byte_size = expected;
    return KILN_OK;
}

static kiln_status decode_case(kiln_reader *r, const kiln_limits *limits, kiln_evidence_record *e,
                               kiln_error *err)
{
    uint32_t count;
    KILN_TRY(kiln_read_string(r, limits->max_string_length, &e->name, err));
    KILN_TRY(kiln_read_count(r, limits->max_inputs, 15, "evidence inputs", &count, err));
    if (!(e->inputs = calloc(count ? count : 1, sizeof *e->inputs)))
        return no_memory(err);
    e->input_count = count;
    for (uint32_t i = 0; i < count; i++)
        KILN_TRY(decode_tensor(r, limits, &e->inputs[i], err));
    KILN_TRY(kiln_read_count(r, limits->max_outputs, 33, "evidence outputs", &count, err));
    e->outputs = calloc(count ? count : 1, sizeof *e->outputs);
    e->rules = calloc(count ? count : 1, sizeof *e->rules);
    if (!e->outputs || !e->rules)
        return no_memory(err);
    e->output_count = count;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t kind, nan_equal;
        KILN_TRY(decode_tensor(r, limits, &e->outputs[i], err));
        KILN_TRY(kiln_read_u8(r, &kind, err));
        KILN_TRY(kiln_read_f64(r, &e->rules[i].atol, err));
        KILN_TRY(kiln_read_f64(r, &e->rules[i].rtol, err));
        KILN_TRY(kiln_read_u8(r, &nan_equal, err));
        if (kind > KILN_COMPARE_TOLERANCE || nan_equal > 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section EVID: case '%s' output %u has an unknown rule",
                             e->name, i);
        e->rules[i].kind = (kiln_compare_kind)kind;
        e->rules[i].nan_equal = nan_equal;
    }
    return KILN_OK;
}

kiln_status kiln_evidence_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                 kiln_error *err)
{
    kiln_reader r;
    uint32_t count;
    kiln_reader_init(&r, data, size, "section EVID");
    KILN_TRY(kiln_read_count(&r, limits->max_outputs, 12, "evidence cases", &count, err));
    if (!(m->evidence = calloc(count ? count : 1, sizeof *m->evidence)))
        return no_memory(err);
    m->evidence_count = count;
    for (uint32_t c = 0; c < count; c++)
        KILN_TRY(decode_case(&r, limits, &m->evidence[c], err));
    return kiln_reader_expect_end(&r, err);
}
