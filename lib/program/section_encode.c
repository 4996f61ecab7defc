/* section_encode.c — program model → sections → container bytes. */
#include <stdlib.h>
#include <string.h>

#include "format/checked_math.h"
#include "attribute.h"
#include "memory_plan.h"
#include "format/error.h"
#include "half_feature.h"
#include "section_checks.h"
#include "section_evidence.h"
#include "section_encode.h"
#include "sections.h"

static void encode_meta(const kiln_model *m, kiln_writer *w)
{
    kiln_write_string(w, m->name);
    kiln_write_u8(w, (uint8_t)m->mode);
    kiln_write_u32(w, m->metadata_count);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        kiln_write_string(w, m->metadata[i].key);
        kiln_write_string(w, m->metadata[i].value);
    }
}

static void encode_opset(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->opset_count);
    for (uint32_t i = 0; i < m->opset_count; i++) {
        kiln_write_string(w, m->opset[i].name);
        kiln_write_u32(w, m->opset[i].version);
    }
}

static void encode_dims(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->dim_count);
    for (uint32_t i = 0; i < m->dim_count; i++) {
        kiln_write_string(w, m->dims[i].name);
        kiln_write_i64(w, m->dims[i].min);
        kiln_write_i64(w, m->dims[i].max);
        kiln_write_i64(w, m->dims[i].multiple_of);
    }
    kiln_write_u32(w, m->derived_count);
    for (uint32_t i = 0; i < m->derived_count; i++) {
        kiln_write_string(w, m->derived[i].name);
        kiln_write_u32(w, m->derived[i].expr);
    }
    kiln_write_u32(w, m->stored_expr_count);
    for (uint32_t i = 0; i < m->stored_expr_count; i++) {
        const kiln_expr *e = &m->exprs.items[i];
        kiln_write_u8(w, e->kind);
        if (e->kind == KILN_EXPR_CONST) {
            kiln_write_i64(w, e->constant);
        } else if (e->kind == KILN_EXPR_DIM) {
            kiln_write_u32(w, e->dim);
        } else {
            kiln_write_u32(w, e->lhs);
            kiln_write_u32(w, e->rhs);
        }
    }

}

static void encode_signature(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->input_count);
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_input_decl *in = &m->inputs[i];
        kiln_write_string(w, in->name);
        kiln_write_u8(w, (uint8_t)in->type.dtype);
        kiln_write_u8(w, (uint8_t)in->type.shape.rank);
        for (uint32_t a = 0; a < in->type.shape.rank; a++)
            kiln_write_u32(w, in->type.shape.axes[a]);
    }
    kiln_write_u32(w, m->output_count);
    for (uint32_t i = 0; i < m->output_count; i++) {
        kiln_write_string(w, m->outputs[i].name);
        kiln_write_u32(w, m->outputs[i].value);
    }
}

static kiln_status encode_weights(kiln_model *m, kiln_writer *table, kiln_writer *data,
                                  kiln_error *err)
{
    kiln_write_u32(table, m->weight_count);
    for (uint32_t i = 0; i < m->weight_count; i++) {
        kiln_weight_decl *wt = &m->weights[i];
        uint64_t aligned;
        if (!kiln_align_up_u64(data->size, KILN_WEIGHT_ALIGNMENT, &aligned))
            return kiln_fail(err, KILN_ERR_LIMIT, "weights are too large");
        kiln_write_zeros(data, (size_t)(aligned - data->size));
        wt->data_offset = aligned;
        kiln_write_bytes(data, wt->data, (size_t)wt->byte_size);
        kiln_write_string(table, wt->name);
        kiln_write_u8(table, (uint8_t)wt->kind);
        kiln_write_u8(table, (uint8_t)wt->dtype);
        kiln_write_u8(table, (uint8_t)wt->rank);
        for (uint32_t a = 0; a < wt->rank; a++)
            kiln_write_i64(table, wt->shape[a]);
        kiln_write_u64(table, wt->data_offset);
        kiln_write_u64(table, wt->byte_size);
    }
    return KILN_OK;
}

static void encode_graph(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->node_count);
    for (uint32_t n = 0; n < m->node_count; n++) {
        const kiln_node_decl *node = &m->nodes[n];
        kiln_write_u32(w, node->op);
        kiln_write_u32(w, node->input_count);
        for (uint32_t i = 0; i < node->input_count; i++)
            kiln_write_u32(w, node->inputs[i]);
        kiln_write_u32(w, 1); /* output count: every op of this runtime has one result */
        kiln_attributes_encode(w, node->attribute_count, node->attributes);
    }
}

/* The runtime guards of a non-strict program (spec/format.md §7.10). */
static void encode_runtime_guards(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->guards.count);
    for (uint32_t i = 0; i < m->guards.count; i++) {
        const kiln_runtime_guard *g = &m->guards.items[i];
        kiln_write_u32(w, g->node);
        kiln_write_u8(w, (uint8_t)g->kind);
        kiln_write_u32(w, g->a);
        kiln_write_u32(w, g->kind == KILN_CLAIM_EQUAL ? g->b : 0);
        kiln_write_i64(w, g->k);
        kiln_write_string(w, g->text);
    }
}

/* The memory plan at the domain's upper bound (spec/format.md §7.11). */
static kiln_status encode_plan(const kiln_model *m, kiln_writer *w, kiln_error *err)
{
    kiln_limits limits;
    kiln_arena_plan plan;
    kiln_limits_default(&limits);
    uint64_t *offsets = calloc(m->node_count + 1, sizeof *offsets), *sizes = calloc(m->node_count + 1, sizeof *sizes);
    kiln_status status = offsets && sizes ? kiln_plan_arena(m, &limits, offsets, sizes, &plan, err)
                                          : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the memory plan");
    if (status == KILN_OK) {
        kiln_write_u64(w, plan.arena_bytes);
        kiln_write_u64(w, plan.intermediate_bytes);
        kiln_write_u32(w, m->node_count);
        for (uint32_t n = 0; n < m->node_count; n++) {
            kiln_write_u64(w, offsets[n]);
            kiln_write_u64(w, sizes[n]);
        }
    }
    free(offsets);
    free(sizes);
    return status;
}

/* Section order in the file; CHKS, RGRD, EVID and PLAN are written only when present. */
enum { META, OPST, DIMS, IOSG, CHKS, RGRD, WTAB, GRPH, EVID, PLAN, WDAT, SECTION_COUNT };

kiln_status kiln_model_encode(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                              kiln_writer *out, kiln_progress *progress, kiln_error *err)
{
    static const uint32_t types[SECTION_COUNT] = {
        KILN_SECTION_META, KILN_SECTION_OPST, KILN_SECTION_DIMS, KILN_SECTION_IOSG, KILN_SECTION_CHKS,
        KILN_SECTION_RGRD, KILN_SECTION_WTAB, KILN_SECTION_GRPH, KILN_SECTION_EVID, KILN_SECTION_PLAN,
        KILN_SECTION_WDAT,
    };
    kiln_writer parts[SECTION_COUNT];
    kiln_section_spec specs[SECTION_COUNT];
    kiln_status status;

    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_init(&parts[i]);
    encode_meta(m, &parts[META]);
    encode_opset(m, &parts[OPST]);
    encode_dims(m, &parts[DIMS]);
    encode_signature(m, &parts[IOSG]);
    status = encode_weights(m, &parts[WTAB], &parts[WDAT], err);
    encode_graph(m, &parts[GRPH]);
    if (m->evidence_count)
        kiln_evidence_encode(m, &parts[EVID]);
    if (m->check_count)
        kiln_input_checks_encode(m, &parts[CHKS]);
    if (m->non_strict)
        encode_runtime_guards(m, &parts[RGRD]);
    if (status == KILN_OK && store_memory_plan)
        status = encode_plan(m, &parts[PLAN], err);
    uint32_t count = 0;
    for (int i = 0; status == KILN_OK && i < SECTION_COUNT; i++) {
        if ((i == EVID && !m->evidence_count) || (i == CHKS && !m->check_count) || (i == RGRD && !m->non_strict) ||
            (i == PLAN && !store_memory_plan))
            continue;
        status = kiln_writer_finish(&parts[i], err);
        /* Evidence is a check and the plan a convenience, not semantics: a
         * runtime that does not know them may skip them, so they are ancillary. */
        specs[count++] = (kiln_section_spec){
            .type = types[i],
            .flags = i == EVID || i == PLAN ? 0 : KILN_SECTION_CRITICAL,
            .version = KILN_PROGRAM_SECTION_VERSION,
            .data = parts[i].data,
            .size = parts[i].size,
            .compression_level = i == WDAT ? weight_compression_level : 0,
        };
    }
    if (progress) {
        /* Every section is hashed; the weights are also compressed when asked. */
        progress->total = 0;
        for (uint32_t i = 0; i < count; i++)
            progress->total += specs[i].size * (specs[i].compression_level > 0 ? 2 : 1);
    }
    if (status == KILN_OK)
        /* A file is written at the oldest minor that has what it uses:
         * runtime guards and the stored plan arrived in 1.1. */
        status = kiln_container_encode_progress(specs, count, m->non_strict || store_memory_plan ? 1 : 0,
                                                kiln_model_required_features(m), out, progress, err);
    for (int i = 0; i < SECTION_COUNT; i++)
        kiln_writer_release(&parts[i]);
    return status;
}
