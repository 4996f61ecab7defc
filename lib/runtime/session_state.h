/*
 * session_state.h — what a session is made of. Private to the runtime: the
 * files that create and run sessions (session.c) and answer questions about
 * them (session_queries.c) share this struct; callers see an opaque
 * kiln_session, and the modules below (session_bound.h, session_profile.h)
 * know nothing of it.
 */
#ifndef KILN_LIB_SESSION_STATE_H
#define KILN_LIB_SESSION_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include "input_guard.h"
#include "kernel_context.h"
#include "program.h"
#include "run_threads.h"
#include "session_bound.h"
#include "session_profile.h"
#include "state_store.h"
#include "state_view.h"

struct kiln_session {
    const kiln_program *program;
    const kiln_model *model;
    const kiln_tensor **bound_inputs; /* per declared input; borrowed */
    kiln_tensor *values;              /* a view per value */
    kiln_session_bound bound;         /* its dims' ranges and the arena planned for them */
    uint8_t *arena;
    size_t arena_size;
    int64_t *dim_values;
    bool *dim_bound;
    kiln_binding_site *binding_sites;
    const kiln_tensor **operands;     /* scratch for one node's inputs */
    kiln_node_state *node_states;     /* per node: what its kernel keeps between runs */
    bool *channels_last;              /* per value: its data is channels-last now (layout.h) */
    kiln_value_view *views;           /* per value: a state op's rows left in the state (state_view.h) */
    void *layout_scratch;             /* the largest channels-last result's slot, to convert through */
    double *bounds;                   /* per value: a bound on its magnitude this run (value_bound.h) */
    kiln_kernel_context context;      /* threads, oneDNN; `state` set per node */
    uint32_t max_threads;             /* options->threads resolved: the most a run uses */
    bool adaptive_threads;            /* KILN_THREADS_ADAPTIVE: fewer while other processes hold cores */
    kiln_run_threads run_threads;     /* the adaptive policy's looks at the machine */
    kiln_profile *profile;            /* options.profile: what each run records (session_profile.h); else NULL */
    bool check_inputs;                /* enforce the semantic input checks */
    uint64_t grouped_runs;            /* node groups run as one (result_groups.h), for tests */
    bool has_outputs;
    kiln_state *state;                /* options.state, or its own; NULL when the program has no states */
    bool owns_state;
};

#endif
