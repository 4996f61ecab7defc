/* evidence_replay.c — running a stored known-input case on this runtime. */
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "evidence_check.h"
#include "error.h"
#include "program.h"
#include "tensor.h"

uint32_t kiln_program_evidence_count(const kiln_program *p)
{
    return p->model.evidence_count;
}

const char *kiln_program_evidence_name(const kiln_program *p, uint32_t index)
{
    return index < p->model.evidence_count ? p->model.evidence[index].name : NULL;
}

uint32_t kiln_program_evidence_input_count(const kiln_program *p, uint32_t index)
{
    return index < p->model.evidence_count ? p->model.evidence[index].input_count : 0;
}

bool kiln_program_evidence_input(const kiln_program *p, uint32_t index, uint32_t input, const char **name,
                                 kiln_dtype *dtype, uint32_t *rank, const int64_t **shape, const void **data)
{
    if (index >= p->model.evidence_count || input >= p->model.evidence[index].input_count)
        return false;
    const kiln_evidence_tensor *t = &p->model.evidence[index].inputs[input];
    *name = t->name;
    *dtype = t->dtype;
    *rank = t->rank;
    *shape = t->shape;
    *data = t->data;
    return true;
}

uint32_t kiln_program_evidence_output_count(const kiln_program *p, uint32_t index)
{
    return index < p->model.evidence_count ? p->model.evidence[index].output_count : 0;
}

/*
 * The replay budget (issue 20, point 10): an artifact may hold 1024 cases
 * of a 10^6-node program, 15 minutes of `kiln verify` at 1.3 s a case.
 * Case `index` runs only if cases 0..index together run at most
 * max_replay_nodes nodes. Counting the cases before it, rather than
 * keeping a running total, keeps the program immutable and shareable
 * across threads, and bounds any caller that replays the cases in order,
 * as `kiln verify` does; nodes, not elements, because an element count is
 * known only once a case's inputs bind the dims, and a session's work per
 * node is already bounded by its arena (max_arena_bytes).
 */
static kiln_status check_replay_budget(const kiln_program *p, uint32_t index, kiln_error *err)
{
    uint64_t nodes = p->model.node_count ? p->model.node_count : 1;
    uint64_t total = nodes * ((uint64_t)index + 1); /* both below 2^32: no overflow */
    if (total <= p->limits.max_replay_nodes)
        return KILN_OK;
    return kiln_fail(err, KILN_ERR_LIMIT,
                     "evidence '%s' (case %u of %u) is not replayed: replaying cases 0..%u of this %u-node program "
                     "runs %llu nodes, over kiln_limits.max_replay_nodes (%llu); load it with a larger limit to "
                     "replay this case",
                     p->model.evidence[index].name, index, p->model.evidence_count, index, p->model.node_count,
                     (unsigned long long)total, (unsigned long long)p->limits.max_replay_nodes);
}

kiln_status kiln_program_replay_evidence(const kiln_program *p, uint32_t index, kiln_evidence_result *results,
                                         kiln_error *err)
{
    if (index >= p->model.evidence_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence case %u does not exist (%u cases)", index,
                         p->model.evidence_count);
    KILN_TRY(check_replay_budget(p, index, err));
    const kiln_evidence_record *c = &p->model.evidence[index];
    kiln_session *session = NULL;
    kiln_tensor *views = calloc(c->input_count + 1, sizeof *views);
    if (!views)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    for (uint32_t i = 0; i < c->input_count; i++) {
        const kiln_evidence_tensor *t = &c->inputs[i];
        kiln_tensor_view_init(&views[i], t->dtype, t->rank, t->shape, t->data);
    }
    /* A case runs at one point of the domain: in a session narrowed to it,
     * so the case of a program whose arena at the upper bound is over the
     * limit needs only the case's own arena. */
    const char **names = calloc(c->input_count + 1, sizeof *names);
    const kiln_tensor **tensors = calloc(c->input_count + 1, sizeof *tensors);
    kiln_status status = names && tensors ? KILN_OK : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    uint32_t bound = 0; /* the program's inputs; the "state:NAME" tensors seed the session's state instead */
    for (uint32_t i = 0; status == KILN_OK && i < c->input_count; i++) {
        if (kiln_evidence_state_input(&p->model, c->inputs[i].name))
            continue;
        names[bound] = c->inputs[i].name;
        tensors[bound++] = &views[i];
    }
    if (status == KILN_OK)
        status = kiln_session_new_for_inputs(p, NULL, bound, names, tensors, &session, err);
    free(names);
    free(tensors);
    size_t prefix = strlen(KILN_EVIDENCE_STATE_PREFIX);
    for (uint32_t i = 0; status == KILN_OK && i < c->input_count; i++) {
        if (kiln_evidence_state_input(&p->model, c->inputs[i].name))
            status = kiln_state_write(kiln_session_state(session), c->inputs[i].name + prefix, &views[i], err);
        else
            status = kiln_session_set_input(session, c->inputs[i].name, &views[i], err);
    }
    if (status == KILN_OK)
        status = kiln_session_run(session, err);
    for (uint32_t o = 0; status == KILN_OK && o < c->output_count; o++) {
        const kiln_evidence_tensor *expected = &c->outputs[o];
        for (uint32_t k = 0; k < kiln_session_output_count(session); k++) {
            if (strcmp(kiln_session_output_name(session, k), expected->name) != 0)
                continue;
            kiln_evidence_compare(kiln_session_output(session, k), expected, &c->rules[o], &results[o]);
            results[o].output = expected->name;
        }
    }
    if (status != KILN_OK) {
        char detail[KILN_ERROR_MESSAGE_SIZE];
        memcpy(detail, err ? err->message : "", err ? sizeof detail : 1);
        kiln_fail(err, status, "evidence '%s' could not run: %s", c->name, detail);
    }
    kiln_session_free(session);
    free(views);
    return status;
}
