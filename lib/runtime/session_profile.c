/*
 * session_profile.c — a session's profile: the figures kiln_session_run
 * records when options.profile is set (the public readers over them are
 * in session_queries.c, which sees the session).
 *
 * What a node's time covers: from before its result is bound to after its
 * kernel returns, so operand layout conversions (layout.h) count with the
 * node that needed them. A node whose kernel applied the next running node's
 * activation (fusion.h) carries that activation's time too; the
 * activation node is recorded as fused into it, with no time of its own.
 *
 * The cost when on: two clock reads and a few stores per node. Measured
 * here (2 cores, loaded): a clock read 48-63 ns (the fastest of loops of
 * 2 million), and callgrind counts 37 instructions per node besides
 * (MobileNetV3-S, 122 nodes, batch 1: 14,077,816 instructions per
 * profiled run against 14,073,303; valgrind does not count the clock
 * reads). So about 0.1 us per node: 1% of that 1 ms run, nothing for
 * runs of slow nodes, a lot for a program of nanosecond nodes. Off, the
 * session has no profile and tests one pointer per node: run_nodes' own
 * instructions grew by 1,167 per run of those 122 nodes (0.008% of the
 * run; callgrind, against the commit before profiles).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "session_profile.h"
#include "tensor.h"

kiln_profile *kiln_profile_new(const kiln_model *m)
{
    kiln_profile *profile = calloc(1, sizeof *profile);
    if (!profile)
        return NULL;
    profile->node_count = m->node_count;
    profile->slots = calloc((size_t)m->node_count + 1, sizeof *profile->slots);
    if (!profile->slots) {
        free(profile);
        return NULL;
    }
    for (uint32_t n = 0; n < m->node_count; n++)
        profile->slots[n].op = m->opset[m->nodes[n].op].name;
    kiln_profile_reset(profile);
    return profile;
}

void kiln_profile_free(kiln_profile *profile)
{
    if (!profile)
        return;
    free(profile->slots);
    free(profile);
}

void kiln_profile_reset(kiln_profile *profile)
{
    profile->runs = 0;
    profile->nanoseconds = 0;
    for (uint32_t n = 0; n < profile->node_count; n++) {
        const char *op = profile->slots[n].op;
        memset(&profile->slots[n], 0, sizeof profile->slots[n]);
        profile->slots[n].op = op;
        profile->slots[n].path = KILN_NODE_PATH_NOT_RUN;
        profile->slots[n].fused_into = UINT32_MAX;
    }
}

uint64_t kiln_profile_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * UINT64_C(1000000000) + (uint64_t)t.tv_nsec;
}

/* The public path of a kernel's (kernel_context.h): the same four, in the same order. */
static kiln_node_path node_path(kiln_kernel_path path)
{
    switch (path) {
    case KILN_PATH_VECTOR: return KILN_NODE_PATH_VECTOR;
    case KILN_PATH_ONEDNN: return KILN_NODE_PATH_ONEDNN;
    case KILN_PATH_VIEW: return KILN_NODE_PATH_VIEW;
    case KILN_PATH_REFERENCE: break;
    }
    return KILN_NODE_PATH_REFERENCE;
}

static void record_shape(kiln_profile_slot *slot, const kiln_tensor *result)
{
    slot->dtype = result->dtype;
    slot->rank = result->rank;
    memcpy(slot->shape, result->shape, sizeof slot->shape);
}

void kiln_profile_record(kiln_profile *profile, uint32_t n, uint64_t start, kiln_kernel_path path,
                         uint32_t applied, const kiln_tensor *result)
{
    kiln_profile_slot *slot = &profile->slots[n];
    uint64_t elapsed = kiln_profile_clock() - start;
    slot->nanoseconds += elapsed;
    if (slot->runs == 0 || elapsed < slot->min_nanoseconds)
        slot->min_nanoseconds = elapsed;
    slot->runs++;
    slot->path = node_path(path);
    slot->applied_activation = applied != 0;
    slot->fused_into = UINT32_MAX;
    record_shape(slot, result);
    if (applied != 0 && applied < profile->node_count)
        kiln_profile_record_with(profile, applied, n, result);
}

void kiln_profile_record_with(kiln_profile *profile, uint32_t node, uint32_t runner, const kiln_tensor *result)
{
    kiln_profile_slot *fused = &profile->slots[node];
    fused->fused_runs++;
    fused->path = KILN_NODE_PATH_FUSED;
    fused->applied_activation = false;
    fused->fused_into = runner;
    record_shape(fused, result);
}

void kiln_profile_run_done(kiln_profile *profile, uint64_t start)
{
    profile->nanoseconds += kiln_profile_clock() - start;
    profile->runs++;
}

/* ------------------------------------------------------------ public API */

const char *kiln_node_path_name(kiln_node_path path)
{
    switch (path) {
    case KILN_NODE_PATH_REFERENCE: return "reference";
    case KILN_NODE_PATH_VECTOR: return "vector";
    case KILN_NODE_PATH_ONEDNN: return "onednn";
    case KILN_NODE_PATH_VIEW: return "view";
    case KILN_NODE_PATH_FUSED: return "fused";
    case KILN_NODE_PATH_NOT_RUN: return "not-run";
    }
    return "?";
}
