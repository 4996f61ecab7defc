/* stored_guards.c — stored preconditions of non-strict programs (see stored_guards.h). */
#include "stored_guards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "shape_canon.h"

static const char *op_name(const kiln_model *m, uint32_t node)
{
    uint32_t op = m->nodes[node].op;
    return op < m->opset_count ? m->opset[op].name : "?";
}

/* The same claim as `g` up to the form of its expressions. */
static kiln_status canonical_match(kiln_model *m, const kiln_runtime_guard *g, const kiln_runtime_guard *h,
                                   bool *match, kiln_error *err)
{
    *match = false;
    if (g->node != h->node || g->kind != h->kind || g->k != h->k)
        return KILN_OK;
    uint32_t ga, ha, gb = 0, hb = 0;
    KILN_TRY(kiln_expr_canonical(&m->exprs, g->a, &ga, err));
    KILN_TRY(kiln_expr_canonical(&m->exprs, h->a, &ha, err));
    if (g->kind == KILN_CLAIM_EQUAL) {
        KILN_TRY(kiln_expr_canonical(&m->exprs, g->b, &gb, err));
        KILN_TRY(kiln_expr_canonical(&m->exprs, h->b, &hb, err));
    }
    *match = ga == ha && gb == hb;
    return KILN_OK;
}

kiln_status kiln_runtime_guards_check(kiln_model *m, const kiln_guard_list *unproven, kiln_error *err)
{
    if (!m->non_strict && m->guards.count)
        return kiln_fail(err, KILN_ERR_MALFORMED, "a strict program stores %u runtime guards", m->guards.count);
    for (uint32_t i = 0; i < m->guards.count; i++) {
        const kiln_runtime_guard *g = &m->guards.items[i];
        if (g->node >= m->node_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u names node %u of %u", i, g->node,
                             m->node_count);
        if (g->kind > KILN_CLAIM_AT_LEAST)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u has unknown kind %u", i, (unsigned)g->kind);
        if (g->a >= m->stored_expr_count || (g->kind == KILN_CLAIM_EQUAL && g->b >= m->stored_expr_count))
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u refers to an expression that is not stored",
                             i);
        if (g->kind == KILN_CLAIM_MULTIPLE_OF && g->k < 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u: multiple of %lld", i, (long long)g->k);
    }
    for (uint32_t u = 0; u < unproven->count; u++) {
        const kiln_runtime_guard *need = &unproven->items[u];
        bool stored = false;
        for (uint32_t i = 0; i < m->guards.count && !stored; i++)
            KILN_TRY(canonical_match(m, &m->guards.items[i], need, &stored, err));
        if (!stored)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "node %u (%s): cannot prove that %s over the declared domain, and the artifact stores "
                             "no runtime guard for it",
                             need->node, op_name(m, need->node), need->text);
    }
    return KILN_OK;
}

static bool guard_holds(const kiln_model *m, const kiln_runtime_guard *g, const int64_t *values, const bool *bound)
{
    int64_t a, b;
    if (kiln_expr_eval(&m->exprs, g->a, values, bound, &a, NULL) != KILN_OK)
        return false;
    switch (g->kind) {
    case KILN_CLAIM_EQUAL: return kiln_expr_eval(&m->exprs, g->b, values, bound, &b, NULL) == KILN_OK && a == b;
    case KILN_CLAIM_MULTIPLE_OF: return a % g->k == 0;
    default: return a >= g->k;
    }
}

kiln_status kiln_runtime_guards_hold(const kiln_model *m, const int64_t *dim_values, const bool *dim_bound,
                                     kiln_error *err)
{
    for (uint32_t i = 0; i < m->guards.count; i++) {
        const kiln_runtime_guard *g = &m->guards.items[i];
        if (guard_holds(m, g, dim_values, dim_bound))
            continue;
        /* The failure path: name the dims the claim uses, with their values. */
        char point[256] = "";
        size_t used = 0;
        for (uint32_t d = 0; d < m->dim_count && used < sizeof point; d++) {
            bool uses = kiln_expr_uses_dim(&m->exprs, g->a, d) ||
                        (g->kind == KILN_CLAIM_EQUAL && kiln_expr_uses_dim(&m->exprs, g->b, d));
            if (uses && dim_bound[d])
                used += (size_t)snprintf(point + used, sizeof point - used, "%s%s=%lld", used ? ", " : "",
                                         m->dims[d].name, (long long)dim_values[d]);
        }
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "node %u (%s): runtime guard: %s; it does not hold at %s",
                         g->node, op_name(m, g->node), g->text, used ? point : "these inputs");
    }
    return KILN_OK;
}
