/*
 * liveness.h — the nodes whose results reach a program output, and those
 * that append to a state (their effect outlives the run).
 *
 * A node nothing live reads (a dead tanh, the extra recurrences an ONNX
 * LSTM exports for outputs nobody uses) has no effect on any output: a
 * session does not run it and the memory plan gives it no bytes. The
 * artifact keeps it (the writer's bytes are the program as built), so
 * `inspect` still lists it and a runtime that runs everything computes the
 * same outputs.
 */
#ifndef KILN_LIB_LIVENESS_H
#define KILN_LIB_LIVENESS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/*
 * live[n] (node_count entries) is true when node n's result is a program
 * output or is read by a live node. Nodes come in topological order, so
 * one pass from the last node back decides every one.
 */
void kiln_live_nodes(const kiln_model *m, bool *live);

/* The first live node after node n (`live` from kiln_live_nodes), or m->node_count when none is. */
uint32_t kiln_next_live_node(const kiln_model *m, const bool *live, uint32_t n);

#endif
