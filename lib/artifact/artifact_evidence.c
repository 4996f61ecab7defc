/*
 * artifact_evidence.c — adding an evidence case to an existing artifact:
 * the case is replayed here and must hold under its rule (unless forced),
 * then every other section is copied byte for byte, only EVID is rewritten.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_rewrite.h"
#include "dtype.h"
#include "edit_options.h"
#include "evidence_check.h"
#include "section_evidence.h"
#include "error.h"
#include "program.h"
#include "sections.h"

/* Failing outputs named one by one in the refusal; the rest are counted,
 * so the message keeps its ending (how to force) within the error's size. */
#define NAMED_FAILURES_MAX 3

/* The rule as the comparison applies it: integer and bool outputs are
 * always compared exactly (spec/compatibility.md §5). */
static void describe_rule(const kiln_compare_rule *rule, kiln_dtype dtype, char *text, size_t size)
{
    if (rule->kind == KILN_COMPARE_EXACT || !kiln_dtype_is_floating(dtype))
        snprintf(text, size, "exact");
    else
        snprintf(text, size, "atol %g + rtol %g", rule->atol, rule->rtol);
}

/* The refusal names the case, each failing output (up to
 * NAMED_FAILURES_MAX) with its figures and rule, and how to force it. */
static kiln_status refuse_case(const kiln_evidence_record *c, const kiln_evidence_result *results, kiln_error *err)
{
    char failures[KILN_ERROR_MESSAGE_SIZE] = "";
    size_t used = 0;
    uint32_t named = 0, unnamed = 0;
    for (uint32_t o = 0; o < c->output_count; o++) {
        const kiln_evidence_result *r = &results[o];
        if (r->passed)
            continue;
        if (named == NAMED_FAILURES_MAX) {
            unnamed++;
            continue;
        }
        char rule[64];
        describe_rule(&r->rule, c->outputs[o].dtype, rule, sizeof rule);
        int n = snprintf(failures + used, sizeof failures - used,
                         "%soutput '%s': %llu of %llu elements outside %s%s (max abs error %.3g, max rel error %.3g)",
                         named ? "; " : "", c->outputs[o].name, (unsigned long long)r->mismatches,
                         (unsigned long long)r->elements, rule,
                         r->rule.nan_equal || !kiln_dtype_is_floating(c->outputs[o].dtype) ? "" : ", NaN unequal",
                         r->max_abs_error, r->max_rel_error);
        used = n < 0 ? used : used + (size_t)n < sizeof failures ? used + (size_t)n : sizeof failures - 1;
        named++;
    }
    if (unnamed)
        snprintf(failures + used, sizeof failures - used, "; %u more output%s", unnamed, unnamed == 1 ? "" : "s");
    return kiln_fail(err, KILN_ERR_RUNTIME,
                     "evidence '%s' does not hold on this runtime: %s; correct the expected values, or force it to "
                     "seal the case anyway (kiln evidence add --force; kiln verify will then fail it)",
                     c->name, failures);
}

/*
 * Check the new case against the program, run it here and compare each
 * expected output with what this runtime computes: a case that fails here
 * is refused unless `force`, since kiln verify would fail the artifact it
 * was sealed into. results[o] receives expected output o's figures.
 */
static kiln_status admit_case(kiln_program *p, kiln_evidence_record *c, bool force, kiln_evidence_result *results,
                              kiln_error *err)
{
    kiln_model *m = &p->model;
    kiln_evidence_record *grown = realloc(m->evidence, (m->evidence_count + 1) * sizeof *grown);
    if (!grown)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    m->evidence = grown;
    m->evidence[m->evidence_count++] = *c; /* the program now owns the case */
    memset(c, 0, sizeof *c);
    KILN_TRY(kiln_evidence_check(m, err));
    uint32_t index = m->evidence_count - 1;
    KILN_TRY(kiln_program_replay_evidence(p, index, results, err));
    const kiln_evidence_record *added = &m->evidence[index];
    for (uint32_t o = 0; o < added->output_count; o++)
        if (!results[o].passed && !force)
            return refuse_case(added, results, err);
    return KILN_OK;
}

/* Write the artifact again with the new EVID section, just before the
 * weight data (where the writer put evidence before PLAN existed). */
static kiln_status rewrite(const kiln_program *p, const char *path, const kiln_load_options *options,
                           kiln_error *err)
{
    kiln_writer evidence;
    kiln_writer_init(&evidence);
    kiln_evidence_encode(&p->model, &evidence);
    kiln_status status = kiln_writer_finish(&evidence, err);
    if (status == KILN_OK)
        status = kiln_artifact_rewrite_method_section(p, KILN_SECTION_EVID, false, &evidence,
                                                      (kiln_section_place){KILN_SECTION_WDAT, false}, path, options,
                                                      err);
    kiln_writer_release(&evidence);
    return status;
}

kiln_status kiln_artifact_add_evidence(const char *path, const char *out_path, const kiln_evidence_case *evidence,
                                       const kiln_edit_options *options, kiln_evidence_result *results,
                                       kiln_signature_info *removed_signature, kiln_error *err)
{
    if (removed_signature)
        memset(removed_signature, 0, sizeof *removed_signature);
    if (results && evidence)
        memset(results, 0, evidence->output_count * sizeof *results);
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    kiln_edit_settings settings;
    KILN_TRY(kiln_edit_settings_resolve(options, &settings, err));
    kiln_evidence_record c;
    KILN_TRY(kiln_evidence_record_from_case(evidence, &c, err));
    uint32_t output_count = evidence->output_count;
    /* The comparison needs somewhere to put its figures even when the
     * caller does not want them. */
    kiln_evidence_result *figures = calloc((size_t)output_count + 1, sizeof *figures);
    kiln_program *p = NULL;
    kiln_status status = figures ? KILN_OK : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for evidence");
    if (status == KILN_OK)
        status = kiln_program_load(path, settings.options.load, &p, NULL, err);
    kiln_program *method = p;
    if (status == KILN_OK)
        status = kiln_edit_method(p, &settings, &method, err);
    if (status == KILN_OK)
        status = admit_case(method, &c, settings.options.force, figures, err);
    kiln_evidence_record_release(&c);
    if (status == KILN_OK)
        status = rewrite(method, out_path ? out_path : path, settings.options.load, err);
    if (status == KILN_OK && removed_signature)
        kiln_program_signature(p, removed_signature);
    /* The figures name outputs by the program's strings, which go with it:
     * the caller's names are the same and outlive this call. */
    for (uint32_t o = 0; results && figures && o < output_count; o++) {
        results[o] = figures[o];
        results[o].output = figures[o].output ? evidence->output_names[o] : NULL;
    }
    free(figures);
    kiln_program_free(p);
    return status;
}
