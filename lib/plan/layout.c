/* layout.c — which results may stay channels-last (see layout.h). */
#include "layout.h"

#include <stdlib.h>

#include "attribute.h"
#include "error.h"

/* Whether values a and b have one static shape (canonical expressions compare by id). */
static bool same_shape(const kiln_model *m, uint32_t a, uint32_t b)
{
    const kiln_shape *x = &m->value_types[a].shape, *y = &m->value_types[b].shape;
    if (x->rank != y->rank)
        return false;
    for (uint32_t i = 0; i < x->rank; i++)
        if (x->axes[i] != y->axes[i])
            return false;
    return true;
}

/*
 * Whether value p is per channel for result r of rank 3 to 5: p has r's
 * rank, axis 0 of r's size or 1, axis 1 of r's size, every later axis 1
 * ([N, C, 1, 1] or [1, C, 1, 1] against [N, C, H, W]). Its row-major data
 * is then [N or 1][C], whatever r's layout.
 */
static bool per_channel(const kiln_model *m, uint32_t p, uint32_t r)
{
    const kiln_shape *x = &m->value_types[p].shape, *y = &m->value_types[r].shape;
    if (x->rank != y->rank || y->rank < 3 || y->rank > 5 || x->axes[1] != y->axes[1])
        return false;
    if (x->axes[0] != y->axes[0] && !kiln_expr_is_const(&m->exprs, x->axes[0], 1))
        return false;
    for (uint32_t i = 2; i < x->rank; i++)
        if (!kiln_expr_is_const(&m->exprs, x->axes[i], 1))
            return false;
    return true;
}

uint32_t kiln_layout_channelwise_operand(kiln_layout_role role)
{
    return role == KILN_LAYOUT_CHANNELWISE_1 ? 1 : 0;
}

/* Whether node n joins f32 operands of rank 3 to 5 along axis 1, at most 32 of them. */
static bool channel_concat(const kiln_model *m, uint32_t n)
{
    const kiln_node_decl *node = &m->nodes[n];
    const kiln_value_type *result = &m->value_types[kiln_model_first_node_value(m) + n];
    int64_t axis = kiln_attribute_int(node->attributes, node->attribute_count, "axis", 0);
    uint32_t rank = result->shape.rank;
    return node->input_count <= 32 && result->dtype == KILN_F32 && rank >= 3 && rank <= 5 &&
           (axis == 1 || axis == 1 - (int64_t)rank);
}

kiln_layout_role kiln_layout_role_of(const kiln_model *m, uint32_t n)
{
    const kiln_node_decl *node = &m->nodes[n];
    kiln_layout_role role = m->opset[node->op].def->traits.layout;
    if (role == KILN_LAYOUT_CHANNEL_CONCAT)
        return channel_concat(m, n) ? role : KILN_LAYOUT_PLAIN_ONLY;
    if (role != KILN_LAYOUT_ELEMENTWISE && role != KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL)
        return role;
    /* In order over memory: one operand, or two of the result's shape (no broadcast). */
    uint32_t result = kiln_model_first_node_value(m) + n;
    if (node->input_count == 1 ||
        (node->input_count == 2 && same_shape(m, node->inputs[0], result) && same_shape(m, node->inputs[1], result)))
        return KILN_LAYOUT_ELEMENTWISE;
    /* An operand of the result's shape and a per-channel one: the first keeps its layout. */
    if (role == KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL && node->input_count == 2 &&
        m->value_types[result].dtype == KILN_F32) {
        for (uint32_t i = 0; i < 2; i++)
            if (same_shape(m, node->inputs[i], result) && per_channel(m, node->inputs[1 - i], result))
                return i == 0 ? KILN_LAYOUT_CHANNELWISE : KILN_LAYOUT_CHANNELWISE_1;
    }
    return KILN_LAYOUT_PLAIN_ONLY;
}

/* Whether reader r takes value v channels-last, given the flags decided for the later nodes. */
static bool reader_takes(const kiln_model *m, uint32_t r, uint32_t v, const bool *may)
{
    uint32_t first = kiln_model_first_node_value(m);
    const kiln_node_decl *node = &m->nodes[r];
    switch (kiln_layout_role_of(m, r)) {
    case KILN_LAYOUT_READS_OPERAND_0:
        for (uint32_t i = 1; i < node->input_count; i++)
            if (node->inputs[i] == v)
                return false;
        return node->inputs[0] == v;
    case KILN_LAYOUT_CHANNELWISE:
    case KILN_LAYOUT_CHANNELWISE_1: {
        uint32_t kept = kiln_layout_channelwise_operand(kiln_layout_role_of(m, r));
        for (uint32_t i = 0; i < node->input_count; i++)
            if (i != kept && node->inputs[i] == v)
                return false;
        return node->inputs[kept] == v && may[r];
    }
    case KILN_LAYOUT_ELEMENTWISE:
    case KILN_LAYOUT_CHANNEL_CONCAT:
        if (!may[r])
            return false;
        /* Both operands of a binary op in one layout: the other must qualify too. */
        for (uint32_t i = 0; i < node->input_count; i++)
            if (node->inputs[i] != v && (node->inputs[i] < first || node->inputs[i] - first >= r))
                return false;
        return true;
    case KILN_LAYOUT_PLAIN_ONLY:
    case KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL: /* a trait, never a node's role */
        break;
    }
    return false;
}

kiln_status kiln_layout_plan(const kiln_model *m, const bool *live, bool **out, kiln_error *err)
{
    uint32_t first = kiln_model_first_node_value(m);
    bool *may = calloc(m->node_count + 1, sizeof *may);
    /* Per node result: read by some node, and taken channels-last by every reader so far. */
    bool *read = calloc(m->node_count + 1, sizeof *read);
    bool *taken = malloc((m->node_count + 1) * sizeof *taken);
    if (!may || !read || !taken) {
        free(may);
        free(read);
        free(taken);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning layouts");
    }
    for (uint32_t n = 0; n < m->node_count; n++)
        taken[n] = true;
    /* A program output has a reader that needs row-major data. */
    for (uint32_t o = 0; o < m->output_count; o++)
        if (m->outputs[o].value >= first)
            taken[m->outputs[o].value - first] = false;
    /*
     * Readers come after the node they read, so one pass from the last
     * node back sees all of a node's readers before the node itself: node
     * r is decided first, then its edges are counted against its operands.
     * One pass over the edges, linear in the program. A binary elementwise
     * reader's other operand is checked only for being a node result: when
     * at run time one operand is channels-last and the other is not, the
     * session converts the first (layout.h).
     */
    for (uint32_t r = m->node_count; r-- > 0;) {
        const kiln_value_type *type = &m->value_types[first + r];
        may[r] = read[r] && taken[r] && type->dtype == KILN_F32 && type->shape.rank >= 3 && type->shape.rank <= 5;
        const kiln_node_decl *node = &m->nodes[r];
        if (!live[r])
            continue; /* not run: reads nothing */
        for (uint32_t i = 0; i < node->input_count; i++) {
            uint32_t v = node->inputs[i];
            if (v < first || v - first >= r)
                continue; /* an input or a weight: never channels-last */
            read[v - first] = true;
            taken[v - first] = taken[v - first] && reader_takes(m, r, v, may);
        }
    }
    free(read);
    free(taken);
    *out = may;
    return KILN_OK;
}
