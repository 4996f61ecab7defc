/* section_graph.h — the GRPH section: the nodes, their operands and attributes (spec/format.md §7.6). */
#ifndef KILN_LIB_SECTION_GRAPH_H
#define KILN_LIB_SECTION_GRAPH_H

#include "format/cursor.h"
#include "model.h"

/* Append the GRPH payload of `m` to `w`. */
void kiln_graph_encode(const kiln_model *m, kiln_writer *w);

/* Decode a GRPH payload into m->nodes. Operands and ops are checked
 * against the rest of the program when the model is checked (model_check.h). */
kiln_status kiln_graph_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                              kiln_error *err);

#endif
