/*
 * session_queries.c — what a caller can ask a session: its outputs, its
 * arena and threads, its profile's figures, and (for the library's tests,
 * session.h) the bounds and groups of its last run.
 */
#include <math.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/util.h>

#include "error.h"
#include "model.h"
#include "session.h"
#include "session_state.h"

double kiln_session_value_bound(const kiln_session *s, uint32_t value)
{
    return value < kiln_model_value_count(s->model) ? s->bounds[value] : INFINITY;
}

uint64_t kiln_session_arena_bytes(const kiln_session *s)
{
    return s->bound.arena_bytes;
}

kiln_state *kiln_session_state(const kiln_session *s)
{
    return s ? s->state : NULL;
}

uint32_t kiln_session_threads(const kiln_session *s)
{
    return s->max_threads;
}

uint32_t kiln_session_run_threads(const kiln_session *s)
{
    return s->context.threads;
}

uint64_t kiln_session_grouped_runs(const kiln_session *s)
{
    return s->grouped_runs;
}

uint32_t kiln_session_output_count(const kiln_session *s)
{
    return s->model->output_count;
}

const kiln_tensor *kiln_session_output(const kiln_session *s, uint32_t index)
{
    if (!s->has_outputs || index >= s->model->output_count)
        return NULL;
    return &s->values[s->model->outputs[index].value];
}

const char *kiln_session_output_name(const kiln_session *s, uint32_t index)
{
    return index < s->model->output_count ? s->model->outputs[index].name : NULL;
}

/* The session's profile, or an error saying how to get one. */
static kiln_status profile_of(const kiln_session *session, const kiln_profile **out, kiln_error *err)
{
    if (!session)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "session is NULL");
    *out = session->profile;
    if (!*out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "this session does not profile: create it with kiln_session_options.profile set");
    return KILN_OK;
}

/* The 1.0 sizes: a caller's struct is at least this long; it is filled up to its own size. */
#define PROFILE_SUMMARY_SIZE_1_0 KILN_SIZE_THROUGH(kiln_profile_summary, node_nanoseconds)
#define NODE_PROFILE_SIZE_1_0 KILN_SIZE_THROUGH(kiln_node_profile, shape)

static kiln_status check_out_size(const void *out, size_t min_size, const char *type_name, kiln_error *err)
{
    size_t given = 0;
    if (out)
        memcpy(&given, out, sizeof given);
    if (given < min_size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s.struct_size is %zu, below its smallest size %zu: set it "
                         "to sizeof(%s)", type_name, given, min_size, type_name);
    return KILN_OK;
}

kiln_status kiln_session_profile_summary(const kiln_session *session, kiln_profile_summary *out, kiln_error *err)
{
    const kiln_profile *profile;
    KILN_TRY(check_out_size(out, PROFILE_SUMMARY_SIZE_1_0, "kiln_profile_summary", err));
    KILN_TRY(profile_of(session, &profile, err));
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    summary.node_count = profile->node_count;
    summary.runs = profile->runs;
    summary.nanoseconds = profile->nanoseconds;
    for (uint32_t n = 0; n < profile->node_count; n++)
        summary.node_nanoseconds += profile->slots[n].nanoseconds;
    kiln_struct_fill(out, out->struct_size, &summary, sizeof summary);
    return KILN_OK;
}

kiln_status kiln_session_profile_node(const kiln_session *session, uint32_t node, kiln_node_profile *out,
                                      kiln_error *err)
{
    const kiln_profile *profile;
    KILN_TRY(check_out_size(out, NODE_PROFILE_SIZE_1_0, "kiln_node_profile", err));
    KILN_TRY(profile_of(session, &profile, err));
    if (node >= profile->node_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "node %u is out of range: the program has %u node%s", node,
                         profile->node_count, profile->node_count == 1 ? "" : "s");
    const kiln_profile_slot *slot = &profile->slots[node];
    kiln_node_profile filled = {.struct_size = sizeof filled};
    filled.op = slot->op;
    filled.path = slot->path;
    filled.applied_activation = slot->applied_activation;
    filled.fused_into = slot->fused_into;
    filled.runs = slot->runs;
    filled.fused_runs = slot->fused_runs;
    filled.nanoseconds = slot->nanoseconds;
    filled.min_nanoseconds = slot->min_nanoseconds;
    filled.dtype = slot->dtype;
    filled.rank = slot->rank;
    memcpy(filled.shape, slot->shape, sizeof filled.shape);
    kiln_struct_fill(out, out->struct_size, &filled, sizeof filled);
    return KILN_OK;
}

void kiln_session_profile_reset(kiln_session *session)
{
    kiln_profile *profile = session ? session->profile : NULL;
    if (profile)
        kiln_profile_reset(profile);
}
