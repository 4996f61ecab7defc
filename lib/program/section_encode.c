/* section_encode.c — program model → sections → container bytes. */
#include "section_encode.h"

#include <stdint.h>

#include "error.h"
#include "required_features.h"
#include "section_checks.h"
#include "section_dims.h"
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
#include "section_weights.h"
#include "sections.h"
#include "weight_stream.h"

/* Section order in the file (spec/format.md §7). */
enum { META, OPST, DIMS, IOSG, CHKS, RGRD, STAT, WTAB, GRPH, NNAM, EVID, GENV, PLAN, MTHD, WDAT, SECTION_COUNT };

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
    [STAT] = {KILN_SECTION_STAT, true, 3},
    [WTAB] = {KILN_SECTION_WTAB, true, 0},  [GRPH] = {KILN_SECTION_GRPH, true, 0},
    [NNAM] = {KILN_SECTION_NNAM, false, 2},
    [EVID] = {KILN_SECTION_EVID, false, 0}, [GENV] = {KILN_SECTION_GENV, false, 3},
    [PLAN] = {KILN_SECTION_PLAN, false, 1},
    [MTHD] = {KILN_SECTION_MTHD, true, 3},  [WDAT] = {KILN_SECTION_WDAT, true, 0},
};

/* Encode every section of `m` that the file holds into parts[], marking it
 * in present[]; WDAT is left empty (it is streamed) and its size put in *weight_bytes. */
static kiln_status encode_sections(kiln_model *m, bool store_memory_plan, kiln_writer *parts, bool *present,
                                   uint64_t *weight_bytes, kiln_error *err)
{
    for (int i = 0; i < SECTION_COUNT; i++)
        present[i] = true;
    /* CHKS, RGRD, STAT, NNAM, EVID, GENV and MTHD are written when the program has what
     * they hold (so a program without names is written as before names
     * existed), PLAN when asked. */
    present[CHKS] = m->check_count > 0;
    present[RGRD] = m->non_strict;
    present[NNAM] = kiln_node_names_present(m);
    present[EVID] = m->evidence_count > 0;
    present[GENV] = m->generation_count > 0;
    present[PLAN] = store_memory_plan;
    present[MTHD] = m->method_count > 0;
    present[STAT] = m->state_count > 0;

    kiln_meta_encode(m, &parts[META]);
    kiln_opset_encode(m, &parts[OPST]);
    kiln_dims_encode(m, kiln_model_declares_relations(m), &parts[DIMS]);
    kiln_io_signature_encode(m, &parts[IOSG]);
    kiln_status status = kiln_weights_encode(m, &parts[WTAB], weight_bytes, err);
    kiln_graph_encode(m, &parts[GRPH]);
    if (present[NNAM])
        kiln_node_names_encode(m, &parts[NNAM]);
    if (present[EVID])
        kiln_evidence_encode(m, &parts[EVID]);
    if (present[GENV])
        kiln_generations_encode(m, &parts[GENV]);
    if (present[CHKS])
        kiln_input_checks_encode(m, &parts[CHKS]);
    if (present[RGRD])
        kiln_runtime_guards_encode(m, &parts[RGRD]);
    if (present[STAT])
        kiln_states_encode(m, &parts[STAT]);
    if (status == KILN_OK && present[PLAN])
        status = kiln_stored_plan_encode(m, &parts[PLAN], err);
    if (status == KILN_OK && present[MTHD])
        status = kiln_methods_encode(m, store_memory_plan, &parts[MTHD], err);
    return status;
}

/*
 * The sections of `m` as the container writer takes them: each encoded
 * into parts[] except WDAT, whose bytes kiln_weights_produce streams from
 * the weights' own storage. *minor: the oldest format minor that has them.
 */
static kiln_status prepare(kiln_model *m, int weight_compression_level, bool store_memory_plan, kiln_writer *parts,
                           kiln_section_spec *specs, uint32_t *count, uint16_t *minor, kiln_progress *progress,
                           kiln_error *err)
{
    bool present[SECTION_COUNT];
    uint64_t weight_bytes = 0;
    kiln_status status = encode_sections(m, store_memory_plan, parts, present, &weight_bytes, err);
    if (status == KILN_OK && weight_bytes > SIZE_MAX)
        status = kiln_fail(err, KILN_ERR_LIMIT, "weights are too large");
    *count = 0;
    *minor = 0;
    for (int i = 0; status == KILN_OK && i < SECTION_COUNT; i++) {
        if (!present[i])
            continue;
        status = kiln_writer_finish(&parts[i], err);
        specs[(*count)++] = (kiln_section_spec){
            .type = layout[i].type,
            .flags = layout[i].critical ? KILN_SECTION_CRITICAL : 0,
            .version = KILN_PROGRAM_SECTION_VERSION,
            .data = parts[i].data,
            .size = i == WDAT ? (size_t)weight_bytes : parts[i].size,
            .compression_level = i == WDAT ? weight_compression_level : 0,
            .produce = i == WDAT ? kiln_weights_produce : NULL,
            .produce_user = i == WDAT ? m : NULL,
        };
        if (layout[i].since_minor > *minor)
            *minor = layout[i].since_minor;
    }
    /* Relations live inside DIMS, under feature bit 1, since format 1.3. */
    if (kiln_model_declares_relations(m) && *minor < 3)
        *minor = 3;
    if (progress) {
        /* Every section's raw bytes pass once through the hash (and zlib). */
        progress->total = 0;
        for (uint32_t i = 0; i < *count; i++)
            progress->total += specs[i].size;
    }
    return status;
}

/* Where kiln_model_encode and kiln_model_save send the container: memory or a file. */
typedef struct container_target {
    kiln_writer *memory; /* else `path` */
    const char *path;
} container_target;

static kiln_status encode_to(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                             container_target target, kiln_progress *progress, kiln_error *err)
{
    kiln_writer parts[SECTION_COUNT];
    kiln_section_spec specs[SECTION_COUNT];
    uint32_t count;
    uint16_t minor;
    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_init(&parts[i]);
    kiln_status status =
        prepare(m, weight_compression_level, store_memory_plan, parts, specs, &count, &minor, progress, err);
    uint64_t features = kiln_model_required_features(m);
    if (status == KILN_OK && target.memory)
        status = kiln_container_encode_progress(specs, count, minor, features, target.memory, progress, err);
    else if (status == KILN_OK)
        status = kiln_container_write_file(specs, count, minor, features, target.path, progress, err);
    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_release(&parts[i]);
    return status;
}

kiln_status kiln_model_encode(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                              kiln_writer *out, kiln_progress *progress, kiln_error *err)
{
    return encode_to(m, weight_compression_level, store_memory_plan, (container_target){out, NULL}, progress, err);
}

kiln_status kiln_model_save(kiln_model *m, int weight_compression_level, bool store_memory_plan, const char *path,
                            kiln_progress *progress, kiln_error *err)
{
    return encode_to(m, weight_compression_level, store_memory_plan, (container_target){NULL, path}, progress, err);
}
