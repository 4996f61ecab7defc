/* section_encode.c — program model → sections → container bytes. */
#include "section_encode.h"

#include "half_feature.h"
#include "section_checks.h"
#include "section_dims.h"
#include "section_evidence.h"
#include "section_graph.h"
#include "section_io_signature.h"
#include "section_meta.h"
#include "section_node_names.h"
#include "section_opset.h"
#include "section_plan.h"
#include "section_runtime_guards.h"
#include "section_weights.h"
#include "sections.h"

/* Section order in the file (spec/format.md §7). */
enum { META, OPST, DIMS, IOSG, CHKS, RGRD, WTAB, GRPH, NNAM, EVID, PLAN, WDAT, SECTION_COUNT };

/*
 * How each section is stored, and the format minor that introduced it: a
 * file is written at the oldest minor that has every section it holds, so
 * that a runtime of that minor reads it. Evidence is a check, the plan a
 * convenience and node names a description, not semantics: a
 * runtime that does not know them may skip them, so they are ancillary;
 * every other section is critical.
 */
static const struct {
    uint32_t type;
    bool critical;
    uint8_t since_minor;
} layout[SECTION_COUNT] = {
    [META] = {KILN_SECTION_META, true, 0},  [OPST] = {KILN_SECTION_OPST, true, 0},
    [DIMS] = {KILN_SECTION_DIMS, true, 0},  [IOSG] = {KILN_SECTION_IOSG, true, 0},
    [CHKS] = {KILN_SECTION_CHKS, true, 0},  [RGRD] = {KILN_SECTION_RGRD, true, 1},
    [WTAB] = {KILN_SECTION_WTAB, true, 0},  [GRPH] = {KILN_SECTION_GRPH, true, 0},
    [NNAM] = {KILN_SECTION_NNAM, false, 2},
    [EVID] = {KILN_SECTION_EVID, false, 0}, [PLAN] = {KILN_SECTION_PLAN, false, 1},
    [WDAT] = {KILN_SECTION_WDAT, true, 0},
};

/* Encode every section of `m` that the file holds into parts[], marking it in present[]. */
static kiln_status encode_sections(kiln_model *m, bool store_memory_plan, kiln_writer *parts, bool *present,
                                   kiln_error *err)
{
    for (int i = 0; i < SECTION_COUNT; i++)
        present[i] = true;
    /* CHKS, RGRD, NNAM and EVID are written when the program has what they
     * hold (so a program without names is written as before names
     * existed), PLAN when asked. */
    present[CHKS] = m->check_count > 0;
    present[RGRD] = m->non_strict;
    present[NNAM] = kiln_node_names_present(m);
    present[EVID] = m->evidence_count > 0;
    present[PLAN] = store_memory_plan;

    kiln_meta_encode(m, &parts[META]);
    kiln_opset_encode(m, &parts[OPST]);
    kiln_dims_encode(m, &parts[DIMS]);
    kiln_io_signature_encode(m, &parts[IOSG]);
    kiln_status status = kiln_weights_encode(m, &parts[WTAB], &parts[WDAT], err);
    kiln_graph_encode(m, &parts[GRPH]);
    if (present[NNAM])
        kiln_node_names_encode(m, &parts[NNAM]);
    if (present[EVID])
        kiln_evidence_encode(m, &parts[EVID]);
    if (present[CHKS])
        kiln_input_checks_encode(m, &parts[CHKS]);
    if (present[RGRD])
        kiln_runtime_guards_encode(m, &parts[RGRD]);
    if (status == KILN_OK && present[PLAN])
        status = kiln_stored_plan_encode(m, &parts[PLAN], err);
    return status;
}

kiln_status kiln_model_encode(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                              kiln_writer *out, kiln_progress *progress, kiln_error *err)
{
    kiln_writer parts[SECTION_COUNT];
    bool present[SECTION_COUNT];
    kiln_section_spec specs[SECTION_COUNT];

    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_init(&parts[i]);
    kiln_status status = encode_sections(m, store_memory_plan, parts, present, err);
    uint32_t count = 0;
    uint16_t minor = 0;
    for (int i = 0; status == KILN_OK && i < SECTION_COUNT; i++) {
        if (!present[i])
            continue;
        status = kiln_writer_finish(&parts[i], err);
        specs[count++] = (kiln_section_spec){
            .type = layout[i].type,
            .flags = layout[i].critical ? KILN_SECTION_CRITICAL : 0,
            .version = KILN_PROGRAM_SECTION_VERSION,
            .data = parts[i].data,
            .size = parts[i].size,
            .compression_level = i == WDAT ? weight_compression_level : 0,
        };
        if (layout[i].since_minor > minor)
            minor = layout[i].since_minor;
    }
    if (progress) {
        /* Every section is hashed; the weights are also compressed when asked. */
        progress->total = 0;
        for (uint32_t i = 0; i < count; i++)
            progress->total += specs[i].size * (specs[i].compression_level > 0 ? 2 : 1);
    }
    if (status == KILN_OK)
        status = kiln_container_encode_progress(specs, count, minor, kiln_model_required_features(m), out, progress,
                                                err);
    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_release(&parts[i]);
    return status;
}
