/* section_runtime_guards.c — see section_runtime_guards.h. */
#include "section_runtime_guards.h"

#include <stdlib.h>

#include "error.h"

void kiln_runtime_guards_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->guards.count);
    for (uint32_t i = 0; i < m->guards.count; i++) {
        const kiln_runtime_guard *g = &m->guards.items[i];
        kiln_write_u32(w, g->node);
        kiln_write_u8(w, (uint8_t)g->kind);
        kiln_write_u32(w, g->a);
        kiln_write_u32(w, g->kind == KILN_CLAIM_EQUAL ? g->b : 0);
        kiln_write_i64(w, g->k);
        kiln_write_string(w, g->text);
    }
}

kiln_status kiln_runtime_guards_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                       kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section RGRD");
    uint32_t count;
    /* node 4 + kind 1 + a 4 + b 4 + k 8 + the text's length 4: 25 bytes at least (format.md §7.10). */
    KILN_TRY(kiln_read_count(&r, KILN_MAX_RUNTIME_GUARDS, 25, "runtime guards", &count, err));
    m->non_strict = true;
    for (uint32_t i = 0; i < count; i++) {
        kiln_runtime_guard g = {0};
        uint8_t kind;
        KILN_TRY(kiln_read_u32(&r, &g.node, err));
        KILN_TRY(kiln_read_u8(&r, &kind, err));
        KILN_TRY(kiln_read_u32(&r, &g.a, err));
        KILN_TRY(kiln_read_u32(&r, &g.b, err));
        KILN_TRY(kiln_read_i64(&r, &g.k, err));
        if (kind > KILN_CLAIM_AT_LEAST)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u has unknown kind %u", i, kind);
        g.kind = (kiln_size_claim_kind)kind;
        if (g.a >= m->stored_expr_count || (g.kind == KILN_CLAIM_EQUAL && g.b >= m->stored_expr_count))
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u refers to expression %u of %u", i,
                             g.a >= m->stored_expr_count ? g.a : g.b, m->stored_expr_count);
        uint32_t max_text = limits->max_string_length < KILN_MAX_GUARD_TEXT ? limits->max_string_length
                                                                            : KILN_MAX_GUARD_TEXT;
        KILN_TRY(kiln_read_string(&r, max_text, &g.text, err));
        /* The list copies the text; a guard it already holds is not added again. */
        kiln_status status = kiln_guard_list_add(&m->guards, &g, g.text, err);
        uint32_t listed = m->guards.count;
        free(g.text);
        KILN_TRY(status);
        if (listed != i + 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u is stored twice", i);
    }
    return kiln_reader_expect_end(&r, err);
}
