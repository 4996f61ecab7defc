/*
 * session_profile.h — what a profiling session (kiln_session_options.profile)
 * records per node and per run; the public readers over it
 * (kiln_session_profile_*, kiln.h) are in session_queries.c.
 *
 * The storage is allocated with the session, one slot per node, so a
 * profiled run allocates nothing either. The session times each node
 * around its kernel with kiln_profile_clock and hands the figures to
 * kiln_profile_record; a session that does not profile has no store and
 * pays one branch per node.
 */
#ifndef KILN_LIB_SESSION_PROFILE_H
#define KILN_LIB_SESSION_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include "kernel_context.h"
#include "model.h"

/* One node's figures. */
typedef struct kiln_profile_slot {
    const char *op;          /* the program's op name */
    uint64_t runs, fused_runs, nanoseconds, min_nanoseconds;
    kiln_node_path path;     /* NOT_RUN until its first run */
    bool applied_activation;
    uint32_t fused_into;     /* UINT32_MAX unless path is FUSED */
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
} kiln_profile_slot;

typedef struct kiln_profile {
    uint32_t node_count;
    uint64_t runs, nanoseconds;
    kiln_profile_slot *slots; /* node_count + 1 (never a zero-byte allocation) */
} kiln_profile;

/* A profile for the nodes of `m`, every figure zero. @return NULL when out of memory. */
kiln_profile *kiln_profile_new(const kiln_model *m);

/* Free a profile (NULL is a no-op). */
void kiln_profile_free(kiln_profile *profile);

/* Zero every figure, keeping the op names. */
void kiln_profile_reset(kiln_profile *profile);

/* Nanoseconds on CLOCK_MONOTONIC (48-63 ns a call measured here: session_profile.c). */
uint64_t kiln_profile_clock(void);

/*
 * Node n ran since `start` (kiln_profile_clock) along `path` and wrote
 * `result`; `applied`, when not 0, is the node whose activation n applied
 * (fusion.h), which is then recorded as fused into n, with the same
 * result shape.
 */
void kiln_profile_record(kiln_profile *profile, uint32_t n, uint64_t start, kiln_kernel_path path,
                         uint32_t applied, const kiln_tensor *result);

/* Node `node` did not run on its own: node `runner` computed `result` for it
 * (a group of nodes computed together, result_groups.h). Recorded as fused into `runner`. */
void kiln_profile_record_with(kiln_profile *profile, uint32_t node, uint32_t runner, const kiln_tensor *result);

/* A run that started at `start` succeeded. */
void kiln_profile_run_done(kiln_profile *profile, uint64_t start);

#endif
