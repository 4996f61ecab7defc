/*
 * artifact_evidence.c — adding an evidence case to an existing artifact:
 * every other section is copied byte for byte, only EVID is rewritten.
 */
#include <stdlib.h>
#include <string.h>

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

/* Re-encode the container with a new EVID section in the writer's place for it. */
static kiln_status rewrite(const kiln_program *p, const char *path, kiln_error *err)
{
    const kiln_container *c = &p->container;
    kiln_writer evidence, out;
    kiln_writer_init(&evidence);
    kiln_writer_init(&out);
    kiln_evidence_encode(&p->model, &evidence);
    kiln_section_spec *specs = calloc(c->section_count + 1, sizeof *specs);
    kiln_status status = specs ? kiln_writer_finish(&evidence, err)
                               : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory rewriting the artifact");
    uint32_t count = 0;
    const kiln_section_spec new_evidence = {
        .type = KILN_SECTION_EVID,
        .flags = 0,
        .version = KILN_PROGRAM_SECTION_VERSION,
        .data = evidence.data,
        .size = evidence.size,
    };
    for (uint32_t i = 0; status == KILN_OK && i < c->section_count; i++) {
        const kiln_section_entry *s = &c->sections[i];
        if (s->type == KILN_SECTION_EVID)
            continue;
        if (s->type == KILN_SECTION_WDAT)
            specs[count++] = new_evidence; /* evidence sits just before the weight data */
        specs[count++] = (kiln_section_spec){
            .type = s->type,
            .flags = s->flags,
            .version = s->version,
            .data = c->bytes + s->offset,
            .size = (size_t)s->stored_size,
            .copy_of = s,
        };
    }
    if (status == KILN_OK)
        status = kiln_container_encode_progress(specs, count, c->minor, c->features, &out, NULL, err); /* keeps the minor */
    if (status == KILN_OK)
        status = kiln_atomic_write_file(path, out.data, out.size, err);
    free(specs);
    kiln_writer_release(&evidence);
    kiln_writer_release(&out);
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
