/* program.h — the loaded program behind the opaque public handle. */
#ifndef KILN_LIB_PROGRAM_H
#define KILN_LIB_PROGRAM_H

#include <pthread.h>
#include <stdatomic.h>

#include "format/container.h"
#include "format/file_io.h"
#include "fusion.h"
#include "layout.h"
#include "liveness.h"
#include "memory_plan.h"
#include "model.h"
#include "value_bound.h"

/*
 * What the loader decided for one node, so that a run compares no op names
 * (one record per node, node_count + 1 of them, never a zero-byte allocation).
 */
typedef struct kiln_node_plan {
    /* The activation this node (a conv) may apply for node `fusion_node`, the next that runs
     * (fusion.h); kind NONE (and node 0) for most. */
    kiln_fused_activation fusion;
    uint32_t fusion_node;
    /* How many nodes from this one on run as one (result_groups.h): >= 2 at a group's first
     * node, 0 at its others (they ran with it), 1 for a node that runs alone. */
    uint8_t result_group;
    bool channels_last_ok;         /* its result may be left channels-last (layout.h) */
    kiln_layout_role layout_role;  /* how it reads channels-last operands (layout.h) */
    kiln_bound_rule bound_rule;    /* how its result's magnitude bound follows from its operands' (value_bound.h) */
} kiln_node_plan;

struct kiln_program {
    /*
     * Methods (format 1.3). The artifact's first method is the program the
     * loader returns, the root: it owns the file, the container, the
     * signature, the identities and the weights, and a handle per further
     * method (methods[i], whose model is model.methods[i] moved there).
     * A method's handle has everything else of its own (model, plan,
     * sessions' decisions) and reaches the rest through `root`.
     */
    struct kiln_program *root; /* NULL for the root */
    struct kiln_program **methods;
    uint32_t method_count;

    kiln_mapped_file file;  /* when loaded from a path */
    uint8_t *owned_bytes;   /* when loaded from memory */
    kiln_container container;
    kiln_model model;
    kiln_limits limits;
    kiln_verify_policy verify;
    kiln_signature_info signature;
    uint8_t program_identity[32];
    uint8_t state_identity[32];
    uint8_t methods_digest[32]; /* what the program identity covers of MTHD (section_methods.h) */
    /* The memory plan at the upper bound of the whole domain (memory_plan.h), made with no
     * size limit: sessions that do not narrow a dim use it, after checking its size. */
    kiln_arena_plan arena_plan; /* UINT64_MAX bytes when there is no such plan */
    uint64_t *arena_offsets;    /* per node result: the stored plan's when it checked out, else this runtime's */
    uint64_t *slot_sizes;       /* per node result: this runtime's slot at the domain's upper bound */
    bool domain_planned;        /* false when a size at the upper bound overflows 64 bits */
    bool plan_stored;           /* the offsets come from the artifact's PLAN section */
    bool *live; /* per node: its result reaches an output, so a run runs it (liveness.h); what the planners read */
    kiln_node_plan *nodes; /* per node: what the loader decided for a run (above) */
    /* The (op, version) pairs the nodes use, in order of first use, with their node counts (program_info.h). */
    kiln_op_use *op_uses;
    uint32_t op_use_count;

    /*
     * Weight data is read (checked, inflated) once, at open or — under the
     * lazy policy — when a session first needs it. The program is otherwise
     * immutable and shared across threads, so that one-time step is
     * serialised by a mutex and published through an atomic flag.
     */
    uint32_t weight_section;
    kiln_section_view weight_view;
    pthread_mutex_t weight_lock;
    atomic_bool weights_ready;
    kiln_status weight_failure; /* remembered so every caller sees it */
    char weight_failure_message[KILN_ERROR_MESSAGE_SIZE];
};

/* The program that owns the artifact `p` is a method of (p itself for the root). */
static inline const struct kiln_program *kiln_program_root(const struct kiln_program *p)
{
    return p->root ? p->root : p;
}

#endif
