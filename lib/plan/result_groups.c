/* result_groups.c — nodes that compute their results together (see result_groups.h). */
#include "result_groups.h"

#include <string.h>

#include "attribute.h"
#include "op_registry.h"

/* Whether two attribute lists (each sorted by name) are the same. */
static bool same_attributes(const kiln_node_decl *a, const kiln_node_decl *b)
{
    if (a->attribute_count != b->attribute_count)
        return false;
    for (uint32_t i = 0; i < a->attribute_count; i++) {
        const kiln_node_attribute *x = &a->attributes[i], *y = &b->attributes[i];
        if (strcmp(x->name, y->name) != 0 || x->type != y->type || x->i != y->i || x->count != y->count ||
            memcmp(&x->f, &y->f, sizeof x->f) != 0)
            return false;
        if ((x->s || y->s) && (!x->s || !y->s || strcmp(x->s, y->s) != 0))
            return false;
        if (x->count && x->ints && (!y->ints || memcmp(x->ints, y->ints, x->count * sizeof *x->ints) != 0))
            return false;
        if (x->count && x->floats && (!y->floats || memcmp(x->floats, y->floats, x->count * sizeof *x->floats) != 0))
            return false;
    }
    return true;
}

static bool same_operands(const kiln_node_decl *a, const kiln_node_decl *b)
{
    return a->input_count == b->input_count && memcmp(a->inputs, b->inputs, a->input_count * sizeof *a->inputs) == 0;
}

uint32_t kiln_result_group(const kiln_model *m, const bool *live, uint32_t n)
{
    const kiln_node_decl *head = &m->nodes[n];
    const kiln_op_def *def = m->opset[head->op].def;
    if (!live[n] || !def || !def->together)
        return 1;
    uint32_t count = 1;
    while (count < KILN_RESULT_GROUP_MAX && n + count < m->node_count) {
        const kiln_node_decl *next = &m->nodes[n + count];
        const kiln_op_def *next_def = m->opset[next->op].def;
        if (!live[n + count] || !next_def || next_def->together != def->together || !same_operands(head, next) ||
            !same_attributes(head, next))
            break;
        bool repeated = false; /* each op once: two nodes of one op are two copies, not kin */
        for (uint32_t j = 0; j < count; j++)
            repeated = repeated || m->nodes[n + j].op == next->op;
        if (repeated)
            break;
        count++;
    }
    return count;
}

static bool overlap(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size)
{
    return a_size && b_size && a < b + b_size && b < a + a_size;
}

bool kiln_result_group_plan_allows(const kiln_model *m, uint32_t n, uint32_t count, const uint64_t *offsets,
                                   const uint64_t *sizes)
{
    uint32_t first = kiln_model_first_node_value(m);
    const kiln_node_decl *head = &m->nodes[n];
    for (uint32_t j = 1; j < count; j++) {
        uint64_t at = offsets[n + j], size = sizes[n + j];
        for (uint32_t other = 0; other < j; other++)
            if (overlap(at, size, offsets[n + other], sizes[n + other]))
                return false;
        for (uint32_t i = 0; i < head->input_count; i++) {
            uint32_t v = head->inputs[i];
            if (v >= first && overlap(at, size, offsets[v - first], sizes[v - first]))
                return false;
        }
    }
    return true;
}
