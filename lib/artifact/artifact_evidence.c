/*
 * artifact_evidence.c — adding an evidence case to an existing artifact:
 * every other section is copied byte for byte, only EVID is rewritten.
 */
#include <stdlib.h>
#include <string.h>

#include "artifact_rewrite.h"
#include "evidence_check.h"
#include "section_evidence.h"
#include "format/error.h"
#include "program.h"
#include "sections.h"

/* Check the new case against the program and prove it can run here. */
static kiln_status admit_case(kiln_program *p, kiln_evidence_case *c, kiln_error *err)
{
    kiln_model *m = &p->model;
    kiln_evidence_case *grown = realloc(m->evidence, (m->evidence_count + 1) * sizeof *grown);
    if (!grown)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    m->evidence = grown;
    m->evidence[m->evidence_count++] = *c; /* the program now owns the case */
    memset(c, 0, sizeof *c);
    KILN_TRY(kiln_evidence_check(m, err));
    uint32_t index = m->evidence_count - 1;
    kiln_evidence_result *results = calloc(m->evidence[index].output_count + 1, sizeof *results);
    if (!results)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    kiln_status status = kiln_program_replay_evidence(p, index, results, err);
    free(results);
    return status;
}

/* Write the artifact again with the new EVID section, just before the
 * weight data (where the writer put evidence before PLAN existed). */
static kiln_status rewrite(const kiln_program *p, const char *path, kiln_error *err)
{
    kiln_writer evidence;
    kiln_writer_init(&evidence);
    kiln_evidence_encode(&p->model, &evidence);
    kiln_status status = kiln_writer_finish(&evidence, err);
    if (status == KILN_OK)
        status = kiln_artifact_rewrite_section(p, KILN_SECTION_EVID, false, &evidence,
                                               (kiln_section_place){KILN_SECTION_WDAT, false}, path, err);
    kiln_writer_release(&evidence);
    return status;
}

kiln_status kiln_artifact_add_evidence(const char *path, const char *out_path, const char *name,
                                       uint32_t input_count, const char *const *input_names,
                                       const kiln_tensor *const *inputs, uint32_t output_count,
                                       const char *const *output_names, const kiln_tensor *const *expected,
                                       const kiln_compare_rule *rules, kiln_error *err)
{
    kiln_program *p;
    kiln_evidence_case c;
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    KILN_TRY(kiln_evidence_case_from_arguments(name, input_count, input_names, inputs, output_count, output_names,
                                               expected, rules, &c, err));
    kiln_status status = kiln_program_load(path, NULL, &p, err);
    if (status != KILN_OK) {
        kiln_evidence_case_release(&c);
        return status;
    }
    status = admit_case(p, &c, err);
    kiln_evidence_case_release(&c);
    if (status == KILN_OK)
        status = rewrite(p, out_path ? out_path : path, err);
    kiln_program_free(p);
    return status;
}
