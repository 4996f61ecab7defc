/*
 * artifact_checks.c — setting semantic input checks on an existing
 * artifact (`kiln check add`): the checks are judged against the inputs,
 * the stored evidence must still satisfy them, and only CHKS is written
 * anew (artifact_rewrite.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_rewrite.h"
#include "edit_options.h"
#include "error.h"
#include "model_check.h"
#include "program.h"
#include "section_checks.h"
#include "sections.h"
#include "semantic_check.h"
#include "tensor.h"

/* Longest list of input names quoted in an "is not an input" message. */
#define INPUT_LIST_MAX 400

static kiln_status not_an_input(const kiln_model *m, const char *name, kiln_error *err)
{
    char list[INPUT_LIST_MAX + 8] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < m->input_count && used < INPUT_LIST_MAX; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", m->inputs[i].name);
    if (used >= INPUT_LIST_MAX)
        snprintf(list + INPUT_LIST_MAX, sizeof list - INPUT_LIST_MAX, ", ...");
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is not an input of the program; its inputs are %s", name,
                     list);
}

static kiln_status find_input(const kiln_model *m, const char *name, uint32_t *index, kiln_error *err)
{
    for (*index = 0; *index < m->input_count; (*index)++)
        if (strcmp(m->inputs[*index].name, name) == 0)
            return KILN_OK;
    return not_an_input(m, name, err);
}

/* Every evidence case's value of the checked input must pass `check`. */
static kiln_status evidence_satisfies(const kiln_model *m, const kiln_input_check_decl *check, kiln_error *err)
{
    const char *name = m->inputs[check->input].name;
    for (uint32_t c = 0; c < m->evidence_count; c++) {
        const kiln_evidence_record *e = &m->evidence[c];
        for (uint32_t i = 0; i < e->input_count; i++) {
            const kiln_evidence_tensor *t = &e->inputs[i];
            if (strcmp(t->name, name) != 0)
                continue;
            kiln_tensor view;
            kiln_error cause;
            kiln_tensor_view_init(&view, t->dtype, t->rank, t->shape, t->data);
            if (kiln_input_check_enforce(check, name, &view, &cause) != KILN_OK)
                return kiln_fail(err, cause.code, "evidence '%s' breaks the new check: %s", e->name, cause.message);
        }
    }
    return KILN_OK;
}

/* Judge `check` and set it on input `input` of the loaded program. */
static kiln_status set_one(kiln_program *p, const char *input, const kiln_input_check *check, bool force,
                           bool *replaced, kiln_error *forced_violation, kiln_error *err)
{
    kiln_model *m = &p->model;
    uint32_t index;
    kiln_input_check_decl decl;
    if (!input)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "an input name is NULL");
    KILN_TRY(find_input(m, input, &index, err));
    KILN_TRY(kiln_input_check_copy(index, check, &decl, err));
    kiln_error violation;
    kiln_status status = evidence_satisfies(m, &decl, &violation);
    if (status != KILN_OK && !force) {
        kiln_input_check_release(&decl);
        return kiln_fail(err, status, "%s; change the check, or force it to keep the case (kiln verify will then "
                         "fail it)", violation.message);
    }
    if (status != KILN_OK && forced_violation && forced_violation->code == KILN_OK)
        *forced_violation = violation;
    return kiln_model_set_input_check(m, &decl, replaced, err);
}

static kiln_status check_arguments(const char *path, uint32_t count, const char *const *inputs,
                                   const kiln_input_check *checks, kiln_error *err)
{
    if (!path || !inputs || !checks)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_artifact_add_input_checks: NULL argument");
    if (count == 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "no check to add");
    /* Two checks for one input: the second would silently win. */
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t k = 0; k < i; k++)
            if (inputs[i] && inputs[k] && strcmp(inputs[i], inputs[k]) == 0)
                return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                                 "input '%s' is given two checks; give all its rules in one", inputs[i]);
    return KILN_OK;
}

kiln_status kiln_artifact_add_input_checks(const char *path, const char *out_path, uint32_t count,
                                           const char *const *inputs, const kiln_input_check *checks,
                                           const kiln_edit_options *options, bool *replaced,
                                           kiln_signature_info *removed_signature, kiln_error *forced_violation,
                                           kiln_error *err)
{
    if (removed_signature)
        memset(removed_signature, 0, sizeof *removed_signature);
    if (forced_violation)
        kiln_error_clear(forced_violation);
    kiln_edit_settings settings;
    KILN_TRY(kiln_edit_settings_resolve(options, &settings, err));
    bool force = settings.options.force;
    KILN_TRY(check_arguments(path, count, inputs, checks, err));
    kiln_program *root, *p = NULL;
    KILN_TRY(kiln_program_load(path, settings.options.load, &root, NULL, err));
    kiln_status status = kiln_edit_method(root, &settings, &p, err);
    for (uint32_t i = 0; status == KILN_OK && i < count; i++) {
        /* The array's stride is the caller's struct size, which an older or newer header makes other than ours. */
        kiln_input_check check;
        status = kiln_input_check_read(kiln_input_check_at(checks, i), &check, err);
        if (status == KILN_OK)
            status = set_one(p, inputs[i], &check, force, replaced ? &replaced[i] : NULL, forced_violation, err);
    }
    kiln_writer section;
    kiln_writer_init(&section);
    if (status == KILN_OK) {
        kiln_input_checks_encode(&p->model, &section);
        status = kiln_writer_finish(&section, err);
    }
    /* CHKS follows the I/O signature whose inputs it names (spec/format.md §7). */
    if (status == KILN_OK)
        status = kiln_artifact_rewrite_method_section(p, KILN_SECTION_CHKS, true, &section,
                                                      (kiln_section_place){KILN_SECTION_IOSG, true},
                                                      out_path ? out_path : path, settings.options.load, err);
    if (status == KILN_OK && removed_signature)
        kiln_program_signature(root, removed_signature);
    kiln_writer_release(&section);
    kiln_program_free(root);
    return status;
}
