/* section_dims.c — see section_dims.h. */
#include "section_dims.h"

#include "error.h"
#include "format/container.h"
#include "section_read.h"

void kiln_dims_encode(const kiln_model *m, bool with_relations, kiln_writer *w)
{
    kiln_write_u32(w, m->dim_count);
    for (uint32_t i = 0; i < m->dim_count; i++) {
        kiln_write_string(w, m->dims[i].name);
        kiln_write_i64(w, m->dims[i].min);
        kiln_write_i64(w, m->dims[i].max);
        kiln_write_i64(w, m->dims[i].multiple_of);
    }
    kiln_write_u32(w, m->derived_count);
    for (uint32_t i = 0; i < m->derived_count; i++) {
        kiln_write_string(w, m->derived[i].name);
        kiln_write_u32(w, m->derived[i].expr);
    }
    kiln_write_u32(w, m->stored_expr_count);
    for (uint32_t i = 0; i < m->stored_expr_count; i++) {
        const kiln_expr *e = &m->exprs.items[i];
        kiln_write_u8(w, e->kind);
        if (e->kind == KILN_EXPR_CONST) {
            kiln_write_i64(w, e->constant);
        } else if (e->kind == KILN_EXPR_DIM) {
            kiln_write_u32(w, e->dim);
        } else {
            kiln_write_u32(w, e->lhs);
            kiln_write_u32(w, e->rhs);
        }
    }
    if (!with_relations)
        return;
    kiln_write_u32(w, m->relation_count);
    for (uint32_t i = 0; i < m->relation_count; i++) {
        kiln_write_u32(w, m->relations[i].lhs);
        kiln_write_u32(w, m->relations[i].rhs);
    }
}

/* Read one expression record and intern it as the pool's next id. */
static kiln_status decode_expr(kiln_reader *r, uint32_t i, kiln_model *m, kiln_error *err)
{
    kiln_expr e = {0};
    uint32_t id;
    KILN_TRY(kiln_read_u8(r, &e.kind, err));
    if (e.kind == KILN_EXPR_CONST) {
        KILN_TRY(kiln_read_i64(r, &e.constant, err));
    } else if (e.kind == KILN_EXPR_DIM) {
        KILN_TRY(kiln_read_u32(r, &e.dim, err));
    } else {
        KILN_TRY(kiln_read_u32(r, &e.lhs, err));
        KILN_TRY(kiln_read_u32(r, &e.rhs, err));
    }
    KILN_TRY(kiln_expr_intern(&m->exprs, &e, m->dim_count, &id, err));
    /* The writer interns, so a stored pool never repeats a node; a
     * repeat would make ids ambiguous for equality checks. */
    if (id != i)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section DIMS: shape expression %u repeats %u", i, id);
    return KILN_OK;
}

kiln_status kiln_dims_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                             kiln_model *m, kiln_error *err)
{
    kiln_reader r;
    uint32_t expr_count;
    kiln_reader_init(&r, data, size, "section DIMS");
    KILN_SECTION_READ_ARRAY(&r, limits->max_dims, 28, "dims", m->dims, m->dim_count, err);
    for (uint32_t i = 0; i < m->dim_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->dims[i].name, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].min, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].max, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].multiple_of, err));
    }
    KILN_SECTION_READ_ARRAY(&r, limits->max_dims, 8, "derived dims", m->derived, m->derived_count, err);
    for (uint32_t i = 0; i < m->derived_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->derived[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->derived[i].expr, err));
    }
    KILN_TRY(kiln_read_count(&r, limits->max_expr_nodes, 5, "shape expressions", &expr_count, err));
    for (uint32_t i = 0; i < expr_count; i++)
        KILN_TRY(decode_expr(&r, i, m, err));
    m->stored_expr_count = m->exprs.count;
    for (uint32_t i = 0; i < m->derived_count; i++)
        if (m->derived[i].expr >= m->stored_expr_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section DIMS: derived dim '%s' refers to expression %u of %u",
                             m->derived[i].name, m->derived[i].expr, m->stored_expr_count);
    if (features & KILN_FEATURE_DIM_RELATIONS) {
        /* Two expression ids each; at most one relation per ordered pair of stored expressions is
         * meaningful, but the count is bounded like the dims: a relation is a declaration. */
        KILN_SECTION_READ_ARRAY(&r, limits->max_dims, 8, "dim relations", m->relations, m->relation_count, err);
        for (uint32_t i = 0; i < m->relation_count; i++) {
            KILN_TRY(kiln_read_u32(&r, &m->relations[i].lhs, err));
            KILN_TRY(kiln_read_u32(&r, &m->relations[i].rhs, err));
            if (m->relations[i].lhs >= m->stored_expr_count || m->relations[i].rhs >= m->stored_expr_count)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section DIMS: relation %u refers to expression %u of %u",
                                 i, m->relations[i].lhs >= m->stored_expr_count ? m->relations[i].lhs
                                                                                 : m->relations[i].rhs,
                                 m->stored_expr_count);
        }
    }
    return kiln_reader_expect_end(&r, err);
}
