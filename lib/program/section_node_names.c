/* section_node_names.c — see section_node_names.h. */
#include "section_node_names.h"

#include <string.h>

#include "error.h"
#include "node_name.h"

bool kiln_node_names_present(const kiln_model *m)
{
    for (uint32_t n = 0; n < m->node_count; n++)
        if (m->nodes[n].name)
            return true;
    return false;
}

void kiln_node_names_encode(const kiln_model *m, kiln_writer *w)
{
    uint32_t count = 0;
    for (uint32_t n = 0; n < m->node_count; n++)
        count += m->nodes[n].name != NULL;
    kiln_write_u32(w, count);
    for (uint32_t n = 0; n < m->node_count; n++) {
        if (!m->nodes[n].name)
            continue;
        kiln_write_u32(w, n);
        kiln_write_string(w, m->nodes[n].name);
    }
}

kiln_status kiln_node_names_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                   kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section NNAM");
    uint32_t count, previous = 0;
    /* node 4 + the name's length 4 + at least one byte: 9 bytes at least (format.md §7.12). */
    KILN_TRY(kiln_read_count(&r, limits->max_nodes, 9, "node names", &count, err));
    if (count > m->node_count)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section NNAM names %u nodes, but the graph has %u", count,
                         m->node_count);
    uint32_t max_length = limits->max_string_length < KILN_MAX_NODE_NAME ? limits->max_string_length
                                                                          : KILN_MAX_NODE_NAME;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node;
        KILN_TRY(kiln_read_u32(&r, &node, err));
        if (node >= m->node_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section NNAM: entry %u names node %u, but the graph has %u nodes",
                             i, node, m->node_count);
        /* Increasing node order makes the encoding canonical and each node named at most once. */
        if (i > 0 && node <= previous)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section NNAM: entry %u names node %u after node %u; entries are in increasing node "
                             "order, one per named node", i, node, previous);
        previous = node;
        char *name;
        KILN_TRY(kiln_read_string(&r, max_length, &name, err));
        m->nodes[node].name = name; /* owned by the model from here, even on failure */
        const char *problem = kiln_node_name_problem(name, strlen(name));
        if (problem)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section NNAM: the name of node %u %s", node, problem);
    }
    return kiln_reader_expect_end(&r, err);
}
