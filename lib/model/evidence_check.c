/* evidence_check.c — see evidence_check.h. */
#include "evidence_check.h"

#include <math.h>
#include <string.h>

#include "error.h"

static kiln_status check_rule(const kiln_evidence_record *e, uint32_t i, kiln_error *err)
{
    const kiln_compare_rule *rule = &e->rules[i];
    if (rule->kind != KILN_COMPARE_EXACT && rule->kind != KILN_COMPARE_TOLERANCE)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s': output '%s' has an unknown rule",
                         e->name, e->outputs[i].name);
    if (!(rule->atol >= 0 && isfinite(rule->atol)) || !(rule->rtol >= 0 && isfinite(rule->rtol)))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "evidence '%s': output '%s': atol and rtol must be finite and non-negative",
                         e->name, e->outputs[i].name);
    return KILN_OK;
}

const kiln_state_decl *kiln_evidence_state_input(const kiln_model *m, const char *name)
{
    size_t prefix = strlen(KILN_EVIDENCE_STATE_PREFIX);
    if (strncmp(name, KILN_EVIDENCE_STATE_PREFIX, prefix) != 0)
        return NULL;
    return kiln_state_decl_find(m->states, m->state_count, name + prefix);
}

/* The case's "state:NAME" tensors: each a state of the program, once, of its dtype and rank. */
static kiln_status check_state_inputs(const kiln_model *m, const kiln_evidence_record *e, uint32_t *count,
                                      kiln_error *err)
{
    *count = 0;
    size_t prefix = strlen(KILN_EVIDENCE_STATE_PREFIX);
    for (uint32_t j = 0; j < e->input_count; j++) {
        const kiln_evidence_tensor *given = &e->inputs[j];
        if (strncmp(given->name, KILN_EVIDENCE_STATE_PREFIX, prefix) != 0)
            continue;
        const kiln_state_decl *decl = kiln_evidence_state_input(m, given->name);
        if (!decl)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' gives '%s', and the program has no state "
                             "'%s'", e->name, given->name, given->name + prefix);
        for (uint32_t k = 0; k < j; k++)
            if (strcmp(e->inputs[k].name, given->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' gives '%s' twice", e->name,
                                 given->name);
        if (given->dtype != decl->dtype || given->rank != decl->rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s': '%s' is %s of rank %u; the state is %s "
                             "of rank %u", e->name, given->name, kiln_dtype_name(given->dtype), given->rank,
                             kiln_dtype_name(decl->dtype), decl->rank);
        (*count)++;
    }
    return KILN_OK;
}

static kiln_status check_case(const kiln_model *m, const kiln_evidence_record *e, kiln_error *err)
{
    if (!e->name[0])
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "an evidence case has an empty name");
    uint32_t states;
    KILN_TRY(check_state_inputs(m, e, &states, err));
    if (e->input_count - states != m->input_count)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' gives %u inputs; the program declares %u",
                         e->name, e->input_count - states, m->input_count);
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_input_decl *decl = &m->inputs[i];
        const kiln_evidence_tensor *given = NULL;
        for (uint32_t j = 0; j < e->input_count; j++)
            if (strcmp(e->inputs[j].name, decl->name) == 0)
                given = &e->inputs[j];
        if (!given)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' does not give input '%s'", e->name,
                             decl->name);
        if (given->dtype != decl->type.dtype || given->rank != decl->type.shape.rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "evidence '%s': input '%s' is %s of rank %u; the program declares %s of rank %u",
                             e->name, decl->name, kiln_dtype_name(given->dtype), given->rank,
                             kiln_dtype_name(decl->type.dtype), decl->type.shape.rank);
    }
    if (e->output_count == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' expects no output", e->name);
    for (uint32_t i = 0; i < e->output_count; i++) {
        const kiln_evidence_tensor *expected = &e->outputs[i];
        const kiln_output_decl *decl = NULL;
        for (uint32_t o = 0; o < m->output_count; o++)
            if (strcmp(m->outputs[o].name, expected->name) == 0)
                decl = &m->outputs[o];
        if (!decl)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' expects '%s', which is not an output",
                             e->name, expected->name);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(e->outputs[j].name, expected->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "evidence '%s' expects output '%s' twice",
                                 e->name, expected->name);
        const kiln_value_type *type = &m->value_types[decl->value];
        if (expected->dtype != type->dtype || expected->rank != type->shape.rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "evidence '%s': expected '%s' is %s of rank %u; the output is %s of rank %u", e->name,
                             expected->name, kiln_dtype_name(expected->dtype), expected->rank,
                             kiln_dtype_name(type->dtype), type->shape.rank);
        KILN_TRY(check_rule(e, i, err));
    }
    return KILN_OK;
}

kiln_status kiln_evidence_check(const kiln_model *m, kiln_error *err)
{
    for (uint32_t c = 0; c < m->evidence_count; c++) {
        KILN_TRY(check_case(m, &m->evidence[c], err));
        for (uint32_t d = 0; d < c; d++)
            if (strcmp(m->evidence[d].name, m->evidence[c].name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "two evidence cases are named '%s'",
                                 m->evidence[c].name);
    }
    return KILN_OK;
}

/* Whether `root` (or one of its further methods) is the method called `name`. */
static bool has_method(const kiln_model *root, const char *name)
{
    if (strcmp(kiln_model_method_name(root), name) == 0)
        return true;
    for (uint32_t i = 0; i < root->method_count; i++)
        if (strcmp(kiln_model_method_name(&root->methods[i]), name) == 0)
            return true;
    return false;
}

/* The first negative token of `tokens[count]`, or -1 when there is none. */
static int64_t first_negative(const int64_t *tokens, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (tokens[i] < 0)
            return i;
    return -1;
}

kiln_status kiln_generation_check(const kiln_model *root, kiln_error *err)
{
    for (uint32_t c = 0; c < root->generation_count; c++) {
        const kiln_generation_record *g = &root->generations[c];
        if (!g->name[0])
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "generation case %u has an empty name", c);
        for (uint32_t e = 0; e < c; e++)
            if (strcmp(root->generations[e].name, g->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "generation case '%s' is recorded twice", g->name);
        const char *methods[2] = {g->prefill_method, g->decode_method};
        for (int k = 0; k < 2; k++)
            if (!has_method(root, methods[k]))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "generation case '%s': the program has no method '%s' (its %s method)", g->name,
                                 methods[k], k ? "decode" : "prefill");
        if (strcmp(g->prefill_method, g->decode_method) == 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "generation case '%s': method '%s' is both its prefill and its decode method", g->name,
                             g->decode_method);
        int64_t at = first_negative(g->prompt, g->prompt_length);
        if (at >= 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "generation case '%s': prompt token %lld is %lld (token "
                             "ids are >= 0)", g->name, (long long)at, (long long)g->prompt[at]);
        if ((at = first_negative(g->tokens, g->token_count)) >= 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "generation case '%s': token %lld is %lld (token ids "
                             "are >= 0)", g->name, (long long)at, (long long)g->tokens[at]);
        if (!(g->margin >= 0 && isfinite(g->margin)))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "generation case '%s': margin %g is not a finite number >= 0", g->name, g->margin);
    }
    return KILN_OK;
}
