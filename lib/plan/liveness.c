/* liveness.c — the nodes whose results reach a program output or a state (see liveness.h). */
#include "liveness.h"

#include <string.h>

#include "op_def.h"

void kiln_live_nodes(const kiln_model *m, bool *live)
{
    uint32_t first = kiln_model_first_node_value(m);
    memset(live, 0, m->node_count * sizeof *live);
    for (uint32_t o = 0; o < m->output_count; o++)
        if (m->outputs[o].value >= first)
            live[m->outputs[o].value - first] = true;
    /* An append's effect is the state it leaves for the next run. */
    for (uint32_t n = 0; n < m->node_count; n++)
        if (m->opset[m->nodes[n].op].def && m->opset[m->nodes[n].op].def->traits.state_access == KILN_STATE_APPENDS)
            live[n] = true;
    for (uint32_t n = m->node_count; n-- > 0;) {
        if (!live[n])
            continue;
        const kiln_node_decl *node = &m->nodes[n];
        for (uint32_t i = 0; i < node->input_count; i++)
            if (node->inputs[i] >= first)
                live[node->inputs[i] - first] = true;
    }
}

uint32_t kiln_next_live_node(const kiln_model *m, const bool *live, uint32_t n)
{
    uint32_t next = n + 1;
    while (next < m->node_count && !live[next])
        next++;
    return next;
}
