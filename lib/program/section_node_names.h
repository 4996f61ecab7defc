/* section_node_names.h — the NNAM section: node names (spec/format.md §7.12; format 1.2). */
#ifndef KILN_LIB_SECTION_NODE_NAMES_H
#define KILN_LIB_SECTION_NODE_NAMES_H

#include <stdbool.h>

#include "format/cursor.h"
#include "model.h"

/* @return true if some node of `m` has a name: the writer stores NNAM only then. */
bool kiln_node_names_present(const kiln_model *m);

/* Append the NNAM payload of `m` to `w`: the named nodes, in node order. */
void kiln_node_names_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode an NNAM payload into the names of m's nodes (GRPH is decoded
 * first). A node index out of range or not above the previous one, a name
 * that breaks the rule of node_name.h, or bytes left over → MALFORMED; more
 * entries than nodes, or a name longer than the string limit → LIMIT.
 */
kiln_status kiln_node_names_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                   kiln_error *err);

#endif
