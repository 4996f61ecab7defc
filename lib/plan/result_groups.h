/*
 * result_groups.h — nodes that compute their results together.
 *
 * A kiln node has one result, so an ONNX LSTM whose Y and Y_h are both
 * read becomes two nodes, lstm and lstm_last_hidden, with the same
 * operands and attributes, and top_k's values and indices two top_k
 * nodes. Run one by one, each repeats the whole computation (an LSTM's
 * every recurrence, measured at three recurrences for Y, Y_h and Y_c).
 * Nodes next to each other whose ops share a `together` kernel
 * (op_registry.h) and read the same operands with the same attributes are
 * a group: a session runs the kernel once, at the group's first node,
 * writing every member's result, and skips the others. The later members'
 * results are then written while the first node's operands are read, so
 * the memory planner keeps them apart (they live from the first node on),
 * and a session groups nodes under a stored plan only where that plan
 * keeps them apart (kiln_result_group_plan_allows), as for fused
 * activations (fusion.h). The results are the ones the nodes give one by
 * one, bit for bit: grouping changes how often the work is done, not what
 * it computes.
 */
#ifndef KILN_LIB_RESULT_GROUPS_H
#define KILN_LIB_RESULT_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* The most nodes one group holds: lstm's three results. */
#define KILN_RESULT_GROUP_MAX 3

/*
 * How many nodes from node n on form a group (1: n runs alone): n and the
 * live nodes after it whose ops share n's op's `together` kernel, each op
 * once, with the same operands and attributes. `live` from
 * kiln_live_nodes; a dead node ends a group (it gets no bytes).
 */
uint32_t kiln_result_group(const kiln_model *m, const bool *live, uint32_t n);

/*
 * Whether, under a plan of `offsets` and slot `sizes` per node result,
 * the results of nodes n + 1 .. n + count - 1 share no byte with each
 * other, with node n's, or with a node result node n reads.
 */
bool kiln_result_group_plan_allows(const kiln_model *m, uint32_t n, uint32_t count, const uint64_t *offsets,
                                   const uint64_t *sizes);

#endif
