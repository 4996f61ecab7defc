/*
 * dot_graph.h — a loaded program's graph as Graphviz DOT (dot_graph.c),
 * for `kiln dot`.
 */
#ifndef KILN_TOOLS_DOT_GRAPH_H
#define KILN_TOOLS_DOT_GRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include <kiln/kiln.h>

typedef struct dot_graph_options {
    /* Draw stored tensors as nodes of their own with an edge to each use,
     * instead of listing them inside the box of each op that uses them. */
    bool weights_as_nodes;
} dot_graph_options;

/*
 * Write the graph of `program` to `out`: one record-style box per node
 * (op, version when not 1, node name, key attributes, folded weights with
 * their shapes), inputs and outputs as boxes of their own, edges labelled
 * with the shape of the value they carry. Deterministic: the same artifact
 * and options give the same text.
 */
void dot_graph_write(FILE *out, const kiln_program *program, const dot_graph_options *options);

#endif
