/* model_check.c — see model_check.h. */
#include "model_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "dtype.h"
#include "evidence_check.h"
#include "error.h"
#include "identifier.h"
#include "op_registry.h"
#include "semantic_check.h"
#include "shape_canon.h"
#include "size_claim.h"
#include "stored_guards.h"
#include "tensor.h"

static bool printable_text(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

static kiln_status check_header(const kiln_model *m, kiln_error *err)
{
    if (!m->name || !m->name[0] || !printable_text(m->name))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "program name must be non-empty printable text");
    if (m->mode != KILN_MODE_INFERENCE && m->mode != KILN_MODE_TRAINING)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "unknown mode %d", (int)m->mode);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        if (!m->metadata[i].key[0] || !printable_text(m->metadata[i].key))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "metadata key %u is empty or not printable", i);
        if (i > 0 && strcmp(m->metadata[i - 1].key, m->metadata[i].key) >= 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "metadata keys must be unique and sorted ('%s' after '%s')",
                             m->metadata[i].key, m->metadata[i - 1].key);
    }
    for (uint32_t i = 0; i < m->dim_count; i++) {
        const kiln_dim_decl *d = &m->dims[i];
        if (!kiln_is_identifier(d->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "dim %u: '%s' is not an identifier", i, d->name);
        if (d->min < 0 || d->min > d->max)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "dim '%s': range %lld..%lld is not a non-negative range", d->name,
                             (long long)d->min, (long long)d->max);
        if (d->multiple_of < 1)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "dim '%s': multiple_of %lld is not positive", d->name,
                             (long long)d->multiple_of);
        /* Through the last multiple, which cannot overflow (the first can:
         * min + (k - min % k) for min and k near 2^63). */
        if (kiln_dim_last(d) < d->min)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "dim '%s': no value in %lld..%lld is a multiple of %lld",
                             d->name, (long long)d->min, (long long)d->max, (long long)d->multiple_of);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->dims[j].name, d->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "dim '%s' is declared twice", d->name);
    }
    for (uint32_t i = 0; i < m->derived_count; i++) {
        const kiln_derived_dim *d = &m->derived[i];
        if (!kiln_is_identifier(d->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "derived dim %u: '%s' is not an identifier", i, d->name);
        if (d->expr >= m->exprs.count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "derived dim '%s' refers to expression %u of %u", d->name,
                             d->expr, m->exprs.count);
        for (uint32_t j = 0; j < m->dim_count; j++)
            if (strcmp(m->dims[j].name, d->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "'%s' is both a dim and a derived dim", d->name);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->derived[j].name, d->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "derived dim '%s' is declared twice", d->name);
    }
    return KILN_OK;
}

/* Every dim inside a compound input axis must be bindable from the inputs:
 * some input axis is exactly the dim, or `c*dim + k`, which the guard
 * solves for the dim, or a state's length binds it. Other axes are then
 * evaluated and compared. */
static bool dim_bindable_from_inputs(const kiln_model *m, uint32_t dim)
{
    if (kiln_model_state_length_dim(m, dim))
        return true; /* bound by the state's length before the inputs are guarded */
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_shape *s = &m->inputs[i].type.shape;
        for (uint32_t a = 0; a < s->rank; a++) {
            uint32_t solved;
            int64_t scale, offset;
            if (kiln_expr_as_affine(&m->exprs, s->axes[a], &solved, &scale, &offset) && solved == dim)
                return true;
        }
    }
    return false;
}

/*
 * An axis size must have finite interval bounds (they size memory) and be
 * non-negative at every point of the domain: proven by the bounds, or by
 * the contract checker when the bounds are too loose (`p*q - p` is never
 * negative for p, q >= 1, though its interval reaches below 0).
 */
static kiln_status check_axis_size(kiln_model *m, const char *label, uint32_t axis, const kiln_interval *ranges,
                                   kiln_proof_budget *budget, kiln_error *err)
{
    kiln_interval bounds;
    if (!kiln_expr_bounds(&m->exprs, axis, ranges, &bounds))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: size can overflow 64 bits over the domain", label);
    if (bounds.lo >= 0)
        return KILN_OK;
    kiln_shape_context ctx = {&m->exprs, m->dims, m->dim_count, label, NULL, 0, NULL, 0, budget, NULL, 0, NULL, 0};
    kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, axis, 0, 0};
    return kiln_prove_size_claim(&ctx, &claim, "the size is not negative", NULL, err);
}

static kiln_status check_inputs(kiln_model *m, kiln_interval *ranges, kiln_proof_budget *budget, kiln_error *err)
{
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_input_decl *in = &m->inputs[i];
        if (!kiln_is_identifier(in->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input %u: '%s' is not an identifier", i, in->name);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->inputs[j].name, in->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s' is declared twice", in->name);
        if (!kiln_dtype_is_supported(in->type.dtype))
            return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "input '%s': dtype %s is not supported",
                             in->name, kiln_dtype_name(in->type.dtype));
        if (in->type.shape.rank > KILN_MAX_RANK)
            return kiln_fail(err, KILN_ERR_LIMIT, "input '%s': rank %u exceeds %d", in->name,
                             in->type.shape.rank, KILN_MAX_RANK);
        for (uint32_t a = 0; a < in->type.shape.rank; a++) {
            uint32_t axis = in->type.shape.axes[a];
            if (axis >= m->exprs.count)
                return kiln_fail(err, KILN_ERR_MALFORMED, "input '%s' axis %u: bad expression id", in->name, a);
            char label[96];
            snprintf(label, sizeof label, "input '%s' axis %u", in->name, a);
            KILN_TRY(check_axis_size(m, label, axis, ranges, budget, err));
            for (uint32_t d = 0; d < m->dim_count; d++)
                if (kiln_expr_uses_dim(&m->exprs, axis, d) && !dim_bindable_from_inputs(m, d))
                    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                     "input '%s' axis %u: dim '%s' appears only inside an expression the "
                                     "runtime cannot solve for it; some input axis must be '%s' or of the "
                                     "form c*%s + k",
                                     in->name, a, m->dims[d].name, m->dims[d].name, m->dims[d].name);
        }
    }
    return KILN_OK;
}

/*
 * The states (the root's table; each method checks it again, cheaply):
 * identifiers declared once, a supported dtype, a capacity whose bytes
 * fit, an axis inside the rank; and in this method, a dim named as a
 * state's length ranges within 0..its capacity, so a bound length is
 * always one the state can hold.
 */
static kiln_status check_states(const kiln_model *m, kiln_error *err)
{
    for (uint32_t i = 0; i < m->state_count; i++) {
        const kiln_state_decl *st = &m->states[i];
        if (!kiln_is_identifier(st->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "state %u: '%s' is not an identifier", i, st->name);
        if (kiln_state_decl_find(m->states, i, st->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "state '%s' is declared twice", st->name);
        if (!kiln_dtype_is_supported(st->dtype))
            return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "state '%s': dtype %s is not supported", st->name,
                             kiln_dtype_name(st->dtype));
        if (st->rank == 0 || st->rank > KILN_MAX_RANK || st->axis >= st->rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "state '%s': rank %u with growing axis %u (the rank is 1..%d, the axis below it)",
                             st->name, st->rank, st->axis, KILN_MAX_RANK);
        uint64_t elements;
        size_t bytes;
        KILN_TRY(kiln_fail_within(err, kiln_shape_sizes(st->dtype, st->rank, st->shape, &elements, &bytes, err),
                                  "state '%s'", st->name));
        if (!kiln_is_identifier(st->length_dim))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "state '%s': its length dim '%s' is not an identifier",
                             st->name, st->length_dim);
        for (uint32_t d = 0; d < m->dim_count; d++)
            if (strcmp(m->dims[d].name, st->length_dim) == 0 && m->dims[d].max > st->shape[st->axis])
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "dim '%s' (%lld..%lld) is the length of state '%s', which holds %lld rows: declare "
                                 "it within 0..%lld",
                                 st->length_dim, (long long)m->dims[d].min, (long long)m->dims[d].max, st->name,
                                 (long long)st->shape[st->axis], (long long)st->shape[st->axis]);
    }
    return KILN_OK;
}

/* Relations refer to stored expressions, which then have finite bounds. */
static kiln_status check_relations(const kiln_model *m, const kiln_interval *ranges, kiln_error *err)
{
    for (uint32_t i = 0; i < m->relation_count; i++) {
        const kiln_dim_relation *r = &m->relations[i];
        kiln_interval bounds;
        if (r->lhs >= m->stored_expr_count || r->rhs >= m->stored_expr_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "relation %u refers to expression %u of %u", i,
                             r->lhs >= m->stored_expr_count ? r->lhs : r->rhs, m->stored_expr_count);
        if (!kiln_expr_bounds(&m->exprs, r->lhs, ranges, &bounds) || !kiln_expr_bounds(&m->exprs, r->rhs, ranges, &bounds))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "relation %u: a side can overflow 64 bits over the domain", i);
        for (uint32_t d = 0; d < m->dim_count; d++)
            if ((kiln_expr_uses_dim(&m->exprs, r->lhs, d) || kiln_expr_uses_dim(&m->exprs, r->rhs, d)) &&
                !dim_bindable_from_inputs(m, d))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "relation %u uses dim '%s', which no input axis (nor state length) binds", i,
                                 m->dims[d].name);
    }
    return KILN_OK;
}

static kiln_status check_weights(kiln_model *m, kiln_error *err)
{
    for (uint32_t i = 0; i < m->weight_count; i++) {
        const kiln_weight_decl *w = &m->weights[i];
        kiln_value_type *type = &m->value_types[m->input_count + i];
        if (!kiln_is_identifier(w->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "weight %u: '%s' is not an identifier", i, w->name);

        if (w->kind > KILN_WEIGHT_CONSTANT)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "weight '%s': unknown kind %d", w->name, (int)w->kind);
        if (!kiln_dtype_is_supported(w->dtype))
            return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "weight '%s': dtype %s is not supported",
                             w->name, kiln_dtype_name(w->dtype));
        type->dtype = w->dtype;
        type->shape.rank = w->rank;
        for (uint32_t a = 0; a < w->rank; a++)
            KILN_TRY(kiln_expr_const(&m->exprs, w->shape[a], &type->shape.axes[a], err));
    }
    return KILN_OK;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Names identify inputs and weights for people and tools, so they are
 * unique across both, as the builder enforces. Sorting keeps this
 * O(n log n) for the 65536 weights a file may declare.
 */
static kiln_status check_value_names_unique(const kiln_model *m, kiln_error *err)
{
    uint32_t count = m->input_count + m->weight_count;
    const char **names = malloc((count ? count : 1) * sizeof *names);
    if (!names)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory checking names");
    for (uint32_t i = 0; i < m->input_count; i++)
        names[i] = m->inputs[i].name;
    for (uint32_t i = 0; i < m->weight_count; i++)
        names[m->input_count + i] = m->weights[i].name;
    qsort(names, count, sizeof *names, compare_names);
    kiln_status status = KILN_OK;
    for (uint32_t i = 1; i < count && status == KILN_OK; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "the name '%s' is used by two inputs or weights",
                               names[i]);
    free(names);
    return status;
}

/* `unproven` collects, for a non-strict model, what the shape rules could not prove. */
static kiln_status check_nodes(kiln_model *m, const kiln_interval *ranges, kiln_guard_list *unproven,
                               kiln_proof_budget *budget, kiln_error *err)
{
    const kiln_value_type *operand_types[64];
    uint32_t first = kiln_model_first_node_value(m);
    for (uint32_t n = 0; n < m->node_count; n++) {
        const kiln_node_decl *node = &m->nodes[n];
        if (node->op >= m->opset_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "node %u: opset index %u out of range", n, node->op);
        const kiln_opset_entry *entry = &m->opset[node->op];
        const kiln_op_def *op = entry->def;
        char label[96];
        snprintf(label, sizeof label, "node %u (%s)", n, entry->name);
        if (!op)
            return kiln_fail(err, KILN_ERR_UNSUPPORTED_OP, "%s: op version %u is not implemented here",
                             label, entry->version);
        if (node->input_count < op->inputs.min || node->input_count > op->inputs.max ||
            node->input_count > sizeof operand_types / sizeof operand_types[0])
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: takes %u..%u inputs, got %u", label,
                             op->inputs.min, op->inputs.max, node->input_count);
        for (uint32_t i = 0; i < node->input_count; i++) {
            if (node->inputs[i] >= first + n)
                return kiln_fail(err, KILN_ERR_MALFORMED,
                                 "%s: input %u uses value %u before it is defined", label, i, node->inputs[i]);
            operand_types[i] = &m->value_types[node->inputs[i]];
        }
        KILN_TRY(kiln_attributes_check(label, entry->name, node->attribute_count, node->attributes, op->attributes,
                                       err));
        kiln_shape_context ctx = {&m->exprs,        m->dims,
                                  m->dim_count,     label,
                                  node->attributes, node->attribute_count,
                                  m->non_strict ? unproven : NULL, n,
                                  budget,           m->relations,
                                  m->relation_count, m->states,
                                  m->state_count};
        kiln_value_type *result = &m->value_types[first + n];
        KILN_TRY(op->infer(&ctx, operand_types, node->input_count, result, err));
        KILN_TRY(kiln_shape_make_canonical(&m->exprs, &result->shape, err));
        for (uint32_t a = 0; a < result->shape.rank; a++) {
            char axis_label[128];
            snprintf(axis_label, sizeof axis_label, "%s: output axis %u", label, a);
            KILN_TRY(check_axis_size(m, axis_label, result->shape.axes[a], ranges, budget, err));
        }
    }
    return KILN_OK;
}

/* The state a state op's node names (its `state` attribute), or NULL for other nodes. */
static const char *appended_state(const kiln_model *m, uint32_t n)
{
    const kiln_node_decl *node = &m->nodes[n];
    const kiln_op_def *op = m->opset[node->op].def;
    if (!op || op->traits.state_access != KILN_STATE_APPENDS)
        return NULL;
    const kiln_node_attribute *a = kiln_attribute_find(node->attributes, node->attribute_count, "state");
    return a ? a->s : NULL;
}

/* A method appends to each state once: a second append would write over the first's rows. */
static kiln_status check_state_appends(const kiln_model *m, kiln_error *err)
{
    for (uint32_t n = 0; m->state_count && n < m->node_count; n++) {
        const char *state = appended_state(m, n);
        for (uint32_t e = 0; state && e < n; e++) {
            const char *earlier = appended_state(m, e);
            if (earlier && strcmp(earlier, state) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "node %u (%s): state '%s' is appended to by node %u already; a method appends to a "
                                 "state once (concatenate the rows first)",
                                 n, m->opset[m->nodes[n].op].name, state, e);
        }
    }
    return KILN_OK;
}

static kiln_status check_outputs(const kiln_model *m, kiln_error *err)
{
    if (m->output_count == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "the program has no outputs");
    for (uint32_t i = 0; i < m->output_count; i++) {
        const kiln_output_decl *out = &m->outputs[i];
        if (!kiln_is_identifier(out->name))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "output %u: '%s' is not an identifier", i, out->name);
        if (out->value >= kiln_model_value_count(m))
            return kiln_fail(err, KILN_ERR_MALFORMED, "output '%s' refers to value %u of %u", out->name,
                             out->value, kiln_model_value_count(m));
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->outputs[j].name, out->name) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "output '%s' is declared twice", out->name);
    }
    return KILN_OK;
}

kiln_status kiln_model_infer(kiln_model *m, uint64_t max_proof_steps, kiln_error *err)
{
    kiln_status status;
    kiln_proof_budget budget; /* one for the whole program, so that it bounds the whole check */
    kiln_proof_budget_init(&budget, max_proof_steps);
    kiln_interval *ranges = malloc((m->dim_count ? m->dim_count : 1) * sizeof *ranges);
    free(m->value_types);
    m->value_types = calloc(kiln_model_value_count(m) ? kiln_model_value_count(m) : 1,
                            sizeof *m->value_types);
    if (!ranges || !m->value_types) {
        free(ranges);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory checking the program");
    }
    status = check_header(m, err);
    for (uint32_t d = 0; status == KILN_OK && d < m->dim_count; d++) {
        ranges[d].lo = m->dims[d].min;
        ranges[d].hi = m->dims[d].max;
    }
    if (status == KILN_OK)
        status = check_states(m, err);
    if (status == KILN_OK)
        status = check_relations(m, ranges, err);
    if (status == KILN_OK)
        status = check_inputs(m, ranges, &budget, err);
    if (status == KILN_OK)
        status = kiln_model_check_semantic_checks(m, err);
    /* Artifacts written before expressions were canonical may store an
     * input axis as written (`n*2`); shape rules see the canonical form. */
    for (uint32_t i = 0; status == KILN_OK && i < m->input_count; i++) {
        m->value_types[i] = m->inputs[i].type;
        status = kiln_shape_make_canonical(&m->exprs, &m->value_types[i].shape, err);
    }
    if (status == KILN_OK)
        status = check_weights(m, err);
    if (status == KILN_OK)
        status = check_value_names_unique(m, err);
    kiln_guard_list unproven = {0};
    if (status == KILN_OK)
        status = check_nodes(m, ranges, &unproven, &budget, err);
    if (status == KILN_OK)
        status = check_state_appends(m, err);
    if (status == KILN_OK)
        status = kiln_runtime_guards_check(m, &unproven, err);
    kiln_guard_list_release(&unproven);
    if (status == KILN_OK)
        status = check_outputs(m, err);
    if (status == KILN_OK)
        status = kiln_evidence_check(m, err);
    free(ranges);
    return status;
}

kiln_status kiln_model_check_semantic_checks(const kiln_model *m, kiln_error *err)
{
    for (uint32_t i = 0; i < m->check_count; i++) {
        const kiln_input_check_decl *c = &m->checks[i];
        if (c->input >= m->input_count || (i > 0 && m->checks[i - 1].input >= c->input))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "input checks must name each input at most once, in input order (check %u)", i);
        const kiln_input_decl *in = &m->inputs[c->input];
        if (c->has_range && !(c->min <= c->max))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': range %g..%g is empty or NaN", in->name,
                             c->min, c->max);
        if (c->finite_only && !kiln_dtype_is_floating(in->type.dtype))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': a finite-only check needs a float input, "
                             "not %s", in->name, kiln_dtype_name(in->type.dtype));
        if (c->category_count && (kiln_dtype_is_floating(in->type.dtype) || in->type.dtype == KILN_BOOL))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': categories need an integer input, not %s",
                             in->name, kiln_dtype_name(in->type.dtype));
        for (uint32_t k = 1; k < c->category_count; k++)
            if (c->categories[k - 1] >= c->categories[k])
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "input '%s': categories must be sorted and unique",
                                 in->name);
    }
    return KILN_OK;
}

kiln_status kiln_model_set_input_check(kiln_model *m, kiln_input_check_decl *decl, bool *replaced,
                                       kiln_error *err)
{
    if (replaced)
        *replaced = false;
    kiln_model probe = *m;
    probe.checks = decl;
    probe.check_count = 1;
    kiln_status status = kiln_model_check_semantic_checks(&probe, err);
    if (status != KILN_OK) {
        kiln_input_check_release(decl);
        return status;
    }
    uint32_t at = 0;
    while (at < m->check_count && m->checks[at].input < decl->input)
        at++;
    if (at < m->check_count && m->checks[at].input == decl->input) {
        kiln_input_check_release(&m->checks[at]);
        m->checks[at] = *decl;
        if (replaced)
            *replaced = true;
        return KILN_OK;
    }
    kiln_input_check_decl *grown = realloc(m->checks, ((size_t)m->check_count + 1) * sizeof *grown);
    if (!grown) {
        kiln_input_check_release(decl);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for input checks");
    }
    m->checks = grown;
    memmove(&m->checks[at + 1], &m->checks[at], (m->check_count - at) * sizeof *m->checks);
    m->checks[at] = *decl;
    m->check_count++;
    return KILN_OK;
}
