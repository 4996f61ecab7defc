/* section_decode.c — container sections → program model, trusting nothing. */
#include "section_decode.h"

#include <stdio.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "evidence_check.h"
#include "model_check.h"
#include "report.h"
#include "required_features.h"
#include "section_checks.h"
#include "section_dims.h"
#include "section_dtypes.h"
#include "section_evidence.h"
#include "section_generation.h"
#include "section_graph.h"
#include "section_io_signature.h"
#include "section_meta.h"
#include "section_methods.h"
#include "section_node_names.h"
#include "section_opset.h"
#include "section_plan.h"
#include "section_runtime_guards.h"
#include "section_states.h"
#include "sections.h"

/* A decoder of a section that needs nothing but its bytes, the limits and the model. */
typedef kiln_status (*section_decoder)(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                       kiln_error *err);

/* Every section type this runtime knows, required ones first. */
enum { META, OPST, DIMS, IOSG, WTAB, GRPH, WDAT, EVID, CHKS, PLAN, RGRD, NNAM, GENV, STAT, MTHD, SECTION_COUNT };

/*
 * The required sections are read all at once and decoded in a fixed order
 * by kiln_model_decode, some of them recording compatibility problems on
 * the way; WDAT is only located. The optional ones are then each read and
 * decoded in the order of this table, by the decoder it names. Whether a
 * known section is critical is not judged on reading (spec/format.md §6),
 * and every minor of the major is read: how the writer stores each section
 * and from which minor is section_encode.c's table.
 */
static const struct known_section {
    uint32_t type;
    section_decoder decode_optional; /* NULL for a required section and MTHD */
} known[SECTION_COUNT] = {
    [META] = {KILN_SECTION_META, NULL},
    [OPST] = {KILN_SECTION_OPST, NULL},
    [DIMS] = {KILN_SECTION_DIMS, NULL},
    [IOSG] = {KILN_SECTION_IOSG, NULL},
    [WTAB] = {KILN_SECTION_WTAB, NULL},
    [GRPH] = {KILN_SECTION_GRPH, NULL},
    [WDAT] = {KILN_SECTION_WDAT, NULL},
    [EVID] = {KILN_SECTION_EVID, kiln_evidence_decode},
    [CHKS] = {KILN_SECTION_CHKS, kiln_input_checks_decode},
    [PLAN] = {KILN_SECTION_PLAN, kiln_stored_plan_decode},
    [RGRD] = {KILN_SECTION_RGRD, kiln_runtime_guards_decode},
    [NNAM] = {KILN_SECTION_NNAM, kiln_node_names_decode},
    /* Checked once the methods it names are decoded (kiln_model_decode). */
    [GENV] = {KILN_SECTION_GENV, kiln_generations_decode},
    /* Decoded by decode_states and decode_methods, in that order: the
     * methods borrow the states with what the others hold. */
    [STAT] = {KILN_SECTION_STAT, NULL},
    [MTHD] = {KILN_SECTION_MTHD, NULL},
};

static bool optional_section(int kind)
{
    return known[kind].decode_optional != NULL || kind == MTHD || kind == STAT;
}

/*
 * Find the program sections. Every unknown critical section and every
 * known section at a version this runtime does not read is recorded (all
 * of them, not the first); unknown ancillary sections are skipped with a
 * warning. A missing or repeated section ends the search.
 */
static kiln_status locate_sections(const kiln_container *c, int64_t *index_of, kiln_report *report,
                                   uint32_t *unreadable, kiln_error *err)
{
    for (int k = 0; k < SECTION_COUNT; k++)
        index_of[k] = -1;
    for (uint32_t i = 0; i < c->section_count; i++) {
        const kiln_section_entry *s = &c->sections[i];
        char name[5], location[48];
        int kind = -1;
        kiln_fourcc_text(s->type, name);
        snprintf(location, sizeof location, "section %u (%s)", i, name);
        for (int k = 0; k < SECTION_COUNT; k++)
            if (known[k].type == s->type)
                kind = k;
        if (kind < 0) {
            if (s->flags & KILN_SECTION_CRITICAL) {
                kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNKNOWN_CRITICAL, "section-unknown-critical",
                                location,
                                "unknown critical section type '%s' (format %u.%u): this runtime cannot "
                                "run the artifact", name, c->major, c->minor);
            } else {
                kiln_report_add(report, KILN_SEVERITY_WARNING, KILN_OK, "section-skipped", location,
                                "unknown ancillary section type '%s' skipped", name);
            }
            continue;
        }
        if (index_of[kind] >= 0)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section '%s' appears twice", name);
        if (s->version != KILN_PROGRAM_SECTION_VERSION && (kind == EVID || kind == GENV || kind == NNAM) &&
            !(s->flags & KILN_SECTION_CRITICAL)) {
            /* Evidence checks the program and names describe it: a newer
             * layout of either costs the check or the names, not the program. */
            kiln_report_add(report, KILN_SEVERITY_WARNING, KILN_OK, "section-skipped", location,
                            "%s section version %u is newer than this runtime reads (%u); skipped",
                            kind == NNAM ? "node name" : kind == GENV ? "generation evidence" : "evidence", s->version,
                            KILN_PROGRAM_SECTION_VERSION);
            continue;
        }
        if (s->version != KILN_PROGRAM_SECTION_VERSION) {
            (*unreadable)++;
            kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_VERSION, "section-version", location,
                            "section '%s' has version %u; this runtime reads version %u", name, s->version,
                            KILN_PROGRAM_SECTION_VERSION);
        }
        index_of[kind] = i;
    }
    for (int k = 0; k < SECTION_COUNT; k++) {
        char name[5];
        kiln_fourcc_text(known[k].type, name);
        if (index_of[k] < 0 && !optional_section(k))
            return kiln_fail(err, KILN_ERR_MALFORMED, "required section '%s' is missing", name);
    }
    return KILN_OK;
}

/*
 * Every compressed section but the weight data is inflated into memory
 * when it is read (and an unknown one when its hash is checked): their raw
 * sizes together are bounded before any is inflated, so that a small file
 * cannot ask for gigabytes (zlib inflates up to 1032 bytes per stored
 * byte). The weight data is bounded by its weights (kiln_weights_decode).
 */
static kiln_status check_inflation_budget(const kiln_container *c, const kiln_limits *limits, kiln_error *err)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < c->section_count; i++) {
        const kiln_section_entry *s = &c->sections[i];
        if (!(s->flags & KILN_SECTION_COMPRESSED) || s->type == KILN_SECTION_WDAT)
            continue;
        if (!kiln_add_u64(total, s->raw_size, &total) || total > limits->max_decompressed_program_bytes)
            return kiln_fail(err, KILN_ERR_LIMIT,
                             "the compressed program sections inflate to more than %llu bytes together "
                             "(kiln_limits.max_decompressed_program_bytes)",
                             (unsigned long long)limits->max_decompressed_program_bytes);
    }
    return KILN_OK;
}

/* One required section's decoder, with what kiln_model_decode hands it. */
static kiln_status decode_one(int kind, const kiln_section_view *v, const kiln_container *c, const int64_t *index_of,
                              const kiln_limits *limits, kiln_model *m, kiln_report *report, uint32_t *unsupported,
                              kiln_error *err)
{
    switch (kind) {
    case META: return kiln_meta_decode(v->data, v->size, limits, m, err);
    case OPST: return kiln_opset_decode(v->data, v->size, limits, m, report, unsupported, err);
    case DIMS: return kiln_dims_decode(v->data, v->size, limits, c->features, m, err);
    case IOSG: return kiln_io_signature_decode(v->data, v->size, limits, c->features, m, report, unsupported, err);
    case WTAB: {
        const kiln_section_entry *data = &c->sections[index_of[WDAT]];
        return kiln_weights_decode(v->data, v->size, data->raw_size, (data->flags & KILN_SECTION_COMPRESSED) != 0,
                                   limits, c->features, m, report, unsupported, err);
    }
    case GRPH: return kiln_graph_decode(v->data, v->size, limits, m, err);
    default: return KILN_OK;
    }
}

/*
 * Read and decode the required sections but WDAT, one at a time, in the
 * order of spec/format.md §10.3 steps 5-11, each released before the next
 * is read: at most one inflated section is held at once. The opset is
 * checked against the registry before the graph is read. Problems that
 * keep the program from being typed are recorded in *unsupported.
 */
static kiln_status decode_required(const kiln_container *c, const int64_t *index_of, const kiln_limits *limits,
                                   kiln_section_check check, kiln_model *m, kiln_report *report,
                                   uint32_t *unsupported, kiln_error *err)
{
    static const int order[] = {META, OPST, DIMS, IOSG, WTAB, GRPH};
    /* Weight data is not read here: the caller decides when (lazy policy). */
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        kiln_section_view view = {0};
        kiln_status status = kiln_container_section(c, (uint32_t)index_of[order[i]], check, &view, err);
        if (status == KILN_OK)
            status = decode_one(order[i], &view, c, index_of, limits, m, report, unsupported, err);
        kiln_section_view_release(&view);
        KILN_TRY(status);
    }
    return KILN_OK;
}

/* Read and decode each optional section present, in table order. */
static kiln_status decode_optional(const kiln_container *c, const int64_t *index_of, const kiln_limits *limits,
                                   kiln_section_check check, kiln_model *m, kiln_error *err)
{
    for (int k = 0; k < SECTION_COUNT; k++) {
        if (!known[k].decode_optional || index_of[k] < 0)
            continue;
        kiln_section_view view = {0};
        kiln_status status = kiln_container_section(c, (uint32_t)index_of[k], check, &view, err);
        if (status == KILN_OK)
            status = known[k].decode_optional(view.data, view.size, limits, m, err);
        kiln_section_view_release(&view);
        KILN_TRY(status);
    }
    return KILN_OK;
}

/* Read and decode STAT, when present, into m's states. */
static kiln_status decode_states(const kiln_container *c, const int64_t *index_of, const kiln_limits *limits,
                                 kiln_section_check check, kiln_model *m, kiln_report *report, uint32_t *unsupported,
                                 kiln_error *err)
{
    if (index_of[STAT] < 0)
        return KILN_OK;
    kiln_section_view view = {0};
    kiln_status status = kiln_container_section(c, (uint32_t)index_of[STAT], check, &view, err);
    if (status == KILN_OK)
        status = kiln_states_decode(view.data, view.size, limits, c->features, m, report, unsupported, err);
    kiln_section_view_release(&view);
    return status;
}

/* Read and decode MTHD, when present, into m's further methods. */
static kiln_status decode_methods(const kiln_container *c, const int64_t *index_of, const kiln_limits *limits,
                                  kiln_section_check check, kiln_model *m, kiln_report *report,
                                  uint32_t *unsupported, uint8_t contract_digest[KILN_DIGEST_SIZE], kiln_error *err)
{
    if (index_of[MTHD] < 0)
        return KILN_OK;
    kiln_section_view view = {0};
    kiln_status status = kiln_container_section(c, (uint32_t)index_of[MTHD], check, &view, err);
    if (status == KILN_OK)
        status = kiln_methods_decode(view.data, view.size, limits, c->features, m, report, unsupported,
                                     contract_digest, err);
    kiln_section_view_release(&view);
    return status;
}

/* Each program's values within the limit, then typed by its shape rules. */
static kiln_status infer_program(kiln_model *m, const kiln_limits *limits, kiln_error *err)
{
    uint64_t values = (uint64_t)m->input_count + m->weight_count + m->node_count;
    kiln_status status = values > limits->max_values
                             ? kiln_fail(err, KILN_ERR_LIMIT, "the program has %llu values, the limit is %u",
                                         (unsigned long long)values, limits->max_values)
                             : kiln_model_infer(m, limits->max_proof_steps, err);
    /* A program of several methods: say which. */
    return m->method_name ? kiln_fail_within(err, status, "method '%s'", m->method_name) : status;
}

kiln_status kiln_model_decode(const kiln_container *c, const kiln_limits *limits, kiln_section_check check,
                              kiln_model *m, uint32_t *weight_section, uint8_t methods_digest[KILN_DIGEST_SIZE],
                              kiln_report *report, kiln_error *err)
{
    int64_t index_of[SECTION_COUNT];
    uint32_t unsupported = 0, unreadable = 0;
    KILN_TRY(locate_sections(c, index_of, report, &unreadable, err));
    KILN_TRY(check_inflation_budget(c, limits, err));
    if (unreadable)
        return KILN_OK; /* sections at unknown versions: recorded, not decoded */
    KILN_TRY(decode_required(c, index_of, limits, check, m, report, &unsupported, err));
    KILN_TRY(decode_optional(c, index_of, limits, check, m, err));
    KILN_TRY(decode_states(c, index_of, limits, check, m, report, &unsupported, err));
    memset(methods_digest, 0, KILN_DIGEST_SIZE);
    KILN_TRY(decode_methods(c, index_of, limits, check, m, report, &unsupported, methods_digest, err));
    if (m->mode != KILN_MODE_INFERENCE) {
        kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_MODE, "mode-unsupported", "section META",
                        "program '%s' is a training-mode artifact; this runtime runs inference only", m->name);
        unsupported++;
    }
    /* The graph cannot be typed without its ops and dtypes: stop here,
     * with every such problem recorded. */
    if (unsupported)
        return KILN_OK;
    *weight_section = (uint32_t)index_of[WDAT];
    KILN_TRY(infer_program(m, limits, err));
    for (uint32_t i = 0; i < m->method_count; i++)
        KILN_TRY(infer_program(&m->methods[i], limits, err));
    KILN_TRY(kiln_generation_check(m, err));
    /* The writer sets bit 1 exactly when a relation is declared: one program, one encoding. */
    if ((c->features & KILN_FEATURE_DIM_RELATIONS) && !kiln_model_declares_relations(m))
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "required feature bit 1 (relations across dims) is set, but no method declares a relation");
    return kiln_section_check_half_feature(c, m, report, err);
}
