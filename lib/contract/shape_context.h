/*
 * shape_context.h — what a shape rule sees while it derives an output type
 * and proves its preconditions: the expression pool, the declared dims,
 * the node's label and attributes, (non-strict) where to defer a claim it
 * cannot prove, the work budget its proofs draw on, the relations it may
 * assume and the state tensors it may name.
 */
#ifndef KILN_LIB_SHAPE_CONTEXT_H
#define KILN_LIB_SHAPE_CONTEXT_H

#include <stdint.h>

#include "claim_guard.h"
#include "dim.h"
#include "proof_budget.h"
#include "shape_expr.h"
#include "state_decl.h"

struct kiln_node_attribute;

/* What a shape rule may look at and extend. */
typedef struct kiln_shape_context {
    kiln_expr_pool *pool;
    const kiln_dim_decl *dims;
    uint32_t dim_count;
    const char *node_label; /* e.g. "node 3 (add)", for messages */
    const struct kiln_node_attribute *attributes; /* the node's, sorted by name */
    uint32_t attribute_count;
    /* Non-strict checking: a precondition that cannot be proven is added
     * here as a runtime guard of node `node` instead of refusing the
     * program. NULL: strict. */
    kiln_guard_list *deferred;
    uint32_t node;
    /* The budget every search of this program check draws on
     * (proof_budget.h), shared by all nodes so that it bounds the whole
     * check. NULL: each claim gets a fresh budget of
     * KILN_DEFAULT_MAX_PROOF_STEPS (a builder checking one node; the
     * whole program is checked again with one budget when it is sealed). */
    kiln_proof_budget *budget;
    /* The relations the program declares across its dims (dim.h): what
     * the prover may assume besides the dims' ranges. */
    const kiln_dim_relation *relations;
    uint32_t relation_count;
    /* The program's state tensors (state_decl.h), for the ops that read
     * and extend them. */
    const kiln_state_decl *states;
    uint32_t state_count;
} kiln_shape_context;

#endif
