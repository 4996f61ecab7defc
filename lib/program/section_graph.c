/* section_graph.c — see section_graph.h. */
#include "section_graph.h"

#include "error.h"
#include "attribute.h"
#include "section_read.h"

void kiln_graph_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->node_count);
    for (uint32_t n = 0; n < m->node_count; n++) {
        const kiln_node_decl *node = &m->nodes[n];
        kiln_write_u32(w, node->op);
        kiln_write_u32(w, node->input_count);
        for (uint32_t i = 0; i < node->input_count; i++)
            kiln_write_u32(w, node->inputs[i]);
        kiln_write_u32(w, 1); /* output count: every op of this runtime has one result */
        kiln_attributes_encode(w, node->attribute_count, node->attributes);
    }
}

kiln_status kiln_graph_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                              kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section GRPH");
    KILN_SECTION_READ_ARRAY(&r, limits->max_nodes, 16, "nodes", m->nodes, m->node_count, err);
    for (uint32_t n = 0; n < m->node_count; n++) {
        kiln_node_decl *node = &m->nodes[n];
        uint32_t output_count;
        KILN_TRY(kiln_read_u32(&r, &node->op, err));
        KILN_SECTION_READ_ARRAY(&r, limits->max_node_inputs, 4, "node inputs", node->inputs, node->input_count, err);
        for (uint32_t i = 0; i < node->input_count; i++)
            KILN_TRY(kiln_read_u32(&r, &node->inputs[i], err));
        KILN_TRY(kiln_read_u32(&r, &output_count, err));
        /* The format allows several results per node; every op this
         * runtime implements has exactly one. */
        if (output_count != 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section GRPH: node %u has %u results; ops here have one", n,
                             output_count);
        KILN_SECTION_READ_ARRAY(&r, limits->max_attributes, 5, "attributes", node->attributes,
                                node->attribute_count, err);
        KILN_TRY(kiln_attributes_decode(&r, limits, node->attribute_count, node->attributes, err));
    }
    return kiln_reader_expect_end(&r, err);
}
