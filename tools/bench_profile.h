/*
 * bench_profile.h — the per-node profile of `kiln bench --profile`: the
 * figures of a profiling session (kiln_session_profile_*), sorted by time,
 * summed per op, printed as a table or as the "profile" member of bench's
 * JSON (spec/bench-json.md).
 */
#ifndef KILN_TOOLS_BENCH_PROFILE_H
#define KILN_TOOLS_BENCH_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include <kiln/kiln.h>

#include "json.h"

/* One node that ran or was fused. */
typedef struct profile_node {
    uint32_t node;
    kiln_node_profile figures;
} profile_node;

/* The nodes of one (op, path) pair. */
typedef struct profile_op {
    const char *op;
    kiln_node_path path;
    bool activation_applied;
    uint32_t nodes;
    uint64_t nanoseconds;
} profile_op;

typedef struct bench_profile {
    kiln_profile_summary summary;
    long warmup_runs;
    double median_ms;            /* profiled runs, as bench times them (around kiln_session_run) */
    double unprofiled_median_ms; /* bench's timed runs, in a session that does not profile */
    profile_node *nodes;         /* by time, longest first; ties by node index */
    uint32_t node_count;         /* nodes that ran or were fused */
    profile_op *ops;             /* by time, longest first */
    uint32_t op_count;
} bench_profile;

/*
 * Read the profile of `session` (created with options.profile) into *out.
 * @return CLI_OK, or CLI_FAILED after reporting why.
 */
int bench_profile_collect(const kiln_session *session, bench_profile *out);

/* The text report: a line on the runs, the `top` longest nodes, the ops. */
void bench_profile_print_text(const bench_profile *profile, uint32_t top, FILE *out);

/* The "profile" object of bench's JSON (spec/bench-json.md), every node in it. */
void bench_profile_write_json(const bench_profile *profile, json_writer *w);

void bench_profile_release(bench_profile *profile);

#endif
