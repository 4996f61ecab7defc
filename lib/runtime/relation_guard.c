/* relation_guard.c — see relation_guard.h. */
#include "relation_guard.h"

#include <stdio.h>
#include <stdlib.h>

#include "program.h"

#include "error.h"

/* "past = 2047, seq = 2": the dims relation `r` uses, at their values. */
static void format_values(const kiln_model *m, const kiln_dim_relation *r, const int64_t *dim_values, char *text,
                          size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t d = 0; d < m->dim_count && used < size; d++)
        if (kiln_expr_uses_dim(&m->exprs, r->lhs, d) || kiln_expr_uses_dim(&m->exprs, r->rhs, d))
            used += (size_t)snprintf(text + used, size - used, "%s%s = %lld", used ? ", " : "", m->dims[d].name,
                                     (long long)dim_values[d]);
}

kiln_status kiln_relations_hold(const kiln_model *m, const int64_t *dim_values, const bool *dim_bound,
                                kiln_error *err)
{
    for (uint32_t i = 0; i < m->relation_count; i++) {
        const kiln_dim_relation *r = &m->relations[i];
        int64_t lhs, rhs;
        KILN_TRY(kiln_expr_eval(&m->exprs, r->lhs, dim_values, dim_bound, &lhs, err));
        KILN_TRY(kiln_expr_eval(&m->exprs, r->rhs, dim_values, dim_bound, &rhs, err));
        if (lhs <= rhs)
            continue;
        char relation[512], values[512];
        kiln_model_format_relation(m, r, relation, sizeof relation);
        format_values(m, r, dim_values, values, sizeof values);
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "relation %s does not hold: %s give %lld > %lld", relation, values,
                         (long long)lhs, (long long)rhs);
    }
    return KILN_OK;
}

kiln_status kiln_program_relations_hold(const kiln_program *program, const int64_t *dim_values, kiln_error *err)
{
    if (!program || (program->model.dim_count && !dim_values))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program and dim_values must not be NULL");
    const kiln_model *m = &program->model;
    bool *bound = malloc((m->dim_count ? m->dim_count : 1) * sizeof *bound);
    if (!bound)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory checking relations");
    for (uint32_t d = 0; d < m->dim_count; d++)
        bound[d] = true;
    kiln_status status = kiln_relations_hold(m, dim_values, bound, err);
    free(bound);
    return status;
}
