/* evidence_replay.c — running a stored known-input case on this runtime. */
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "format/error.h"
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

uint32_t kiln_program_evidence_output_count(const kiln_program *p, uint32_t index)
{
    return index < p->model.evidence_count ? p->model.evidence[index].output_count : 0;
}

kiln_status kiln_program_replay_evidence(const kiln_program *p, uint32_t index, kiln_evidence_result *results,
                                         kiln_error *err)
{
    if (index >= p->model.evidence_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "evidence case %u does not exist (%u cases)", index,
                         p->model.evidence_count);
    const kiln_evidence_case *c = &p->model.evidence[index];
    kiln_session *session;
    KILN_TRY(kiln_session_new(p, NULL, &session, err));
    kiln_tensor *views = calloc(c->input_count + 1, sizeof *views);
    kiln_status status = views ? KILN_OK : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    for (uint32_t i = 0; status == KILN_OK && i < c->input_count; i++) {
        const kiln_evidence_tensor *t = &c->inputs[i];
        kiln_tensor_view_init(&views[i], t->dtype, t->rank, t->shape, t->data);
        status = kiln_session_set_input(session, t->name, &views[i], err);
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
