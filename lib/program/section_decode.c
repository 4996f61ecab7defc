/* section_decode.c — container sections → program model, trusting nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/checked_math.h"
#include "attribute.h"
#include "format/container.h"
#include "format/error.h"
#include "dtype.h"
#include "half_feature.h"
#include "op_registry.h"
#include "report.h"
#include "stored_guards.h"
#include "section_checks.h"
#include "section_evidence.h"
#include "section_decode.h"
#include "sections.h"
#include "model_check.h"

/* Every section type this runtime knows; EVID, CHKS, RGRD and PLAN are optional. */
enum { META, OPST, DIMS, IOSG, WTAB, GRPH, WDAT, EVID, CHKS, RGRD, PLAN, SECTION_COUNT };

static const uint32_t known_types[SECTION_COUNT] = {
    KILN_SECTION_META, KILN_SECTION_OPST, KILN_SECTION_DIMS, KILN_SECTION_IOSG, KILN_SECTION_WTAB,
    KILN_SECTION_GRPH, KILN_SECTION_WDAT, KILN_SECTION_EVID, KILN_SECTION_CHKS, KILN_SECTION_RGRD,
    KILN_SECTION_PLAN,
};

static bool optional_section(int kind)
{
    return kind == EVID || kind == CHKS || kind == RGRD || kind == PLAN;
}

static void *alloc_array(uint32_t count, size_t item_size)
{
    return calloc(count ? count : 1, item_size);
}

static kiln_status out_of_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory decoding the program");
}

/*
 * Read a record count and allocate a zeroed array for it. The count is
 * stored only once the array exists, so a model released after a failure
 * here never walks a count without its array.
 */
static kiln_status read_array(kiln_reader *r, uint32_t limit, size_t min_record_size, const char *what,
                              size_t item_size, void **items, uint32_t *count, kiln_error *err)
{
    KILN_TRY(kiln_read_count(r, limit, min_record_size, what, count, err));
    *items = alloc_array(*count, item_size);
    return *items ? KILN_OK : out_of_memory(err);
}

/* Fill `array` and `count` together, and only on success. */
#define READ_ARRAY(reader, limit, min_record_size, what, array, count)                                \
    do {                                                                                         \
        void *items_;                                                                            \
        uint32_t count_;                                                                         \
        KILN_TRY(read_array(reader, limit, min_record_size, what, sizeof *(array), &items_, &count_, \
                            err));                                                               \
        (array) = items_;                                                                        \
        (count) = count_;                                                                        \
    } while (0)

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
            if (known_types[k] == s->type)
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
        if (s->version != KILN_PROGRAM_SECTION_VERSION && kind == EVID && !(s->flags & KILN_SECTION_CRITICAL)) {
            /* Evidence is ancillary: a newer layout costs the check, not the program. */
            kiln_report_add(report, KILN_SEVERITY_WARNING, KILN_OK, "section-skipped", location,
                            "evidence section version %u is newer than this runtime reads (%u); skipped",
                            s->version, KILN_PROGRAM_SECTION_VERSION);
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
        kiln_fourcc_text(known_types[k], name);
        if (index_of[k] < 0 && !optional_section(k))
            return kiln_fail(err, KILN_ERR_MALFORMED, "required section '%s' is missing", name);
    }
    return KILN_OK;
}

static kiln_status decode_meta(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m,
                               kiln_error *err)
{
    kiln_reader r;
    uint8_t mode;
    kiln_reader_init(&r, s->data, s->size, "section META");
    KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->name, err));
    KILN_TRY(kiln_read_u8(&r, &mode, err));
    if (mode > KILN_MODE_TRAINING)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section META: unknown mode %u", mode);
    m->mode = (kiln_mode)mode;
    READ_ARRAY(&r, limits->max_metadata, 8, "metadata entries", m->metadata, m->metadata_count);
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->metadata[i].key, err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->metadata[i].value, err));
    }
    return kiln_reader_expect_end(&r, err);
}

static kiln_status decode_opset(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m,
                                kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, s->data, s->size, "section OPST");
    READ_ARRAY(&r, limits->max_opset_entries, 8, "opset entries", m->opset, m->opset_count);
    for (uint32_t i = 0; i < m->opset_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->opset[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->opset[i].version, err));
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->opset[j].name, m->opset[i].name) == 0 && m->opset[j].version == m->opset[i].version)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section OPST: %s version %u is listed twice",
                                 m->opset[i].name, m->opset[i].version);
    }
    KILN_TRY(kiln_reader_expect_end(&r, err));

    /* Resolve every entry before failing, so the report names them all. */
    uint32_t missing = 0;
    for (uint32_t i = 0; i < m->opset_count; i++) {
        m->opset[i].def = kiln_op_find_version(m->opset[i].name, m->opset[i].version);
        if (m->opset[i].def)
            continue;
        const kiln_op_def *known = kiln_op_find(m->opset[i].name);
        char location[48];
        snprintf(location, sizeof location, "section OPST entry %u", i);
        if (known)
            kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_OP, "op-missing", location,
                            "op %s version %u is not available (this runtime implements versions %u..%u)",
                            m->opset[i].name, m->opset[i].version, known->versions.min, known->versions.max);
        else
            kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_OP, "op-missing", location,
                            "op %s version %u is not available (unknown op)", m->opset[i].name,
                            m->opset[i].version);
        missing++;
    }
    *unsupported += missing;
    return KILN_OK;
}

static kiln_status decode_dims(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m,
                               kiln_error *err)
{
    kiln_reader r;
    uint32_t expr_count;
    kiln_reader_init(&r, s->data, s->size, "section DIMS");
    READ_ARRAY(&r, limits->max_dims, 28, "dims", m->dims, m->dim_count);
    for (uint32_t i = 0; i < m->dim_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->dims[i].name, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].min, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].max, err));
        KILN_TRY(kiln_read_i64(&r, &m->dims[i].multiple_of, err));
    }
    READ_ARRAY(&r, limits->max_dims, 8, "derived dims", m->derived, m->derived_count);
    for (uint32_t i = 0; i < m->derived_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->derived[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->derived[i].expr, err));
    }
    KILN_TRY(kiln_read_count(&r, limits->max_expr_nodes, 5, "shape expressions", &expr_count, err));
    for (uint32_t i = 0; i < expr_count; i++) {
        kiln_expr e = {0};
        uint32_t id;
        KILN_TRY(kiln_read_u8(&r, &e.kind, err));
        if (e.kind == KILN_EXPR_CONST) {
            KILN_TRY(kiln_read_i64(&r, &e.constant, err));
        } else if (e.kind == KILN_EXPR_DIM) {
            KILN_TRY(kiln_read_u32(&r, &e.dim, err));
        } else {
            KILN_TRY(kiln_read_u32(&r, &e.lhs, err));
            KILN_TRY(kiln_read_u32(&r, &e.rhs, err));
        }
        KILN_TRY(kiln_expr_intern(&m->exprs, &e, m->dim_count, &id, err));
        /* The writer interns, so a stored pool never repeats a node; a
         * repeat would make ids ambiguous for equality checks. */
        if (id != i)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section DIMS: shape expression %u repeats %u", i, id);
    }
    m->stored_expr_count = m->exprs.count;
    for (uint32_t i = 0; i < m->derived_count; i++)
        if (m->derived[i].expr >= m->stored_expr_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section DIMS: derived dim '%s' refers to expression %u of %u",
                             m->derived[i].name, m->derived[i].expr, m->stored_expr_count);
    return kiln_reader_expect_end(&r, err);
}

static kiln_status read_dtype(kiln_reader *r, kiln_dtype *out, kiln_error *err)
{
    uint8_t code;
    KILN_TRY(kiln_read_u8(r, &code, err));
    if (kiln_dtype_size((kiln_dtype)code) == 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "%s: unknown dtype code %u", r->context, code);
    *out = (kiln_dtype)code;
    return KILN_OK;
}

static kiln_status read_rank(kiln_reader *r, uint32_t *out, kiln_error *err)
{
    uint8_t rank;
    KILN_TRY(kiln_read_u8(r, &rank, err));
    if (rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: rank %u exceeds %d", r->context, rank, KILN_MAX_RANK);
    *out = rank;
    return KILN_OK;
}

/* Why a half-precision value is refused in a file without feature bit 0. */
#define WITHOUT_HALF_BIT "is not supported by this runtime without the half-precision feature bit"

/*
 * Record a dtype this runtime cannot hold; decoding goes on to find more.
 * f16 and bf16 are held only under required feature bit 0: a file that uses
 * them without it was made for runtimes that refuse them, and keeps that
 * outcome here (half_feature.h).
 */
static void note_dtype(kiln_report *report, uint32_t *unsupported, uint64_t features, kiln_dtype dtype,
                       const char *kind, const char *name)
{
    bool half_without_bit = kiln_dtype_is_half(dtype) && !(features & KILN_FEATURE_HALF_PRECISION);
    if (kiln_dtype_is_supported(dtype) && !half_without_bit)
        return;
    char location[160];
    snprintf(location, sizeof location, "%s '%s'", kind, name);
    kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_DTYPE, "dtype-unsupported", location,
                    "dtype %s %s", kiln_dtype_name(dtype),
                    half_without_bit ? WITHOUT_HALF_BIT : "is not supported by this runtime");
    (*unsupported)++;
}

/*
 * Feature bit 0 against the typed program: a node result may be half
 * precision (a cast to f16) even when no input or weight is, so it needs
 * the bit too; and a bit set for a program without half values is a
 * writer fault (the writer sets it exactly when one exists), refused so
 * that one program has one encoding.
 */
static kiln_status check_half_feature(const kiln_container *c, const kiln_model *m, kiln_report *report,
                                      kiln_error *err)
{
    bool has_bit = (c->features & KILN_FEATURE_HALF_PRECISION) != 0;
    if (has_bit && !kiln_model_holds_half(m))
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "header: required feature bit 0 (half-precision values) is set, but no input, weight "
                         "or node result is f16 or bf16");
    uint32_t first = kiln_model_first_node_value(m);
    for (uint32_t n = 0; !has_bit && n < m->node_count; n++) {
        kiln_dtype dtype = m->value_types[first + n].dtype;
        if (!kiln_dtype_is_half(dtype))
            continue;
        char location[160];
        snprintf(location, sizeof location, "node %u (%s)", n, m->opset[m->nodes[n].op].name);
        kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_DTYPE, "dtype-unsupported", location,
                        "result dtype %s " WITHOUT_HALF_BIT, kiln_dtype_name(dtype));
    }
    return KILN_OK;
}

static kiln_status decode_signature(const kiln_section_view *s, const kiln_limits *limits, uint64_t features,
                                    kiln_model *m, kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, s->data, s->size, "section IOSG");
    READ_ARRAY(&r, limits->max_inputs, 6, "inputs", m->inputs, m->input_count);
    for (uint32_t i = 0; i < m->input_count; i++) {
        kiln_input_decl *in = &m->inputs[i];
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &in->name, err));
        KILN_TRY(read_dtype(&r, &in->type.dtype, err));
        note_dtype(report, unsupported, features, in->type.dtype, "input", in->name);
        KILN_TRY(read_rank(&r, &in->type.shape.rank, err));
        for (uint32_t a = 0; a < in->type.shape.rank; a++) {
            KILN_TRY(kiln_read_u32(&r, &in->type.shape.axes[a], err));
            if (in->type.shape.axes[a] >= m->exprs.count)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section IOSG: input '%s' axis %u refers to "
                                 "expression %u of %u", in->name, a, in->type.shape.axes[a], m->exprs.count);
        }
    }
    READ_ARRAY(&r, limits->max_outputs, 8, "outputs", m->outputs, m->output_count);
    for (uint32_t i = 0; i < m->output_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->outputs[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->outputs[i].value, err));
    }
    return kiln_reader_expect_end(&r, err);
}

static kiln_status decode_weights(const kiln_section_view *s, uint64_t data_size, const kiln_limits *limits,
                                  uint64_t features, kiln_model *m, kiln_report *report, uint32_t *unsupported,
                                  kiln_error *err)
{
    kiln_reader r;
    uint64_t total = 0;
    kiln_reader_init(&r, s->data, s->size, "section WTAB");
    READ_ARRAY(&r, limits->max_weights, 23, "weights", m->weights, m->weight_count);
    for (uint32_t i = 0; i < m->weight_count; i++) {
        kiln_weight_decl *w = &m->weights[i];
        uint8_t kind;
        uint64_t element_count, end;
        size_t expected_bytes;
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &w->name, err));
        KILN_TRY(kiln_read_u8(&r, &kind, err));
        if (kind > KILN_WEIGHT_CONSTANT)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section WTAB: weight '%s' has unknown kind %u", w->name, kind);
        w->kind = (kiln_weight_kind)kind;
        KILN_TRY(read_dtype(&r, &w->dtype, err));
        note_dtype(report, unsupported, features, w->dtype, "weight", w->name);
        KILN_TRY(read_rank(&r, &w->rank, err));
        for (uint32_t a = 0; a < w->rank; a++)
            KILN_TRY(kiln_read_i64(&r, &w->shape[a], err));
        KILN_TRY(kiln_read_u64(&r, &w->data_offset, err));
        KILN_TRY(kiln_read_u64(&r, &w->byte_size, err));
        kiln_error detail;
        if (kiln_shape_sizes(w->dtype, w->rank, w->shape, &element_count, &expected_bytes, &detail) != KILN_OK)
            return kiln_fail(err, detail.code == KILN_ERR_LIMIT ? KILN_ERR_LIMIT : KILN_ERR_MALFORMED,
                             "section WTAB: weight '%s': %s", w->name, detail.message);
        if (w->byte_size != expected_bytes)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section WTAB: weight '%s' stores %llu bytes, its shape needs %zu",
                             w->name, (unsigned long long)w->byte_size, expected_bytes);
        if (w->data_offset % KILN_WEIGHT_ALIGNMENT != 0 || !kiln_add_u64(w->data_offset, w->byte_size, &end) ||
            end > data_size)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "section WTAB: weight '%s' (%llu bytes at %llu) lies outside the %llu-byte weight data",
                             w->name, (unsigned long long)w->byte_size, (unsigned long long)w->data_offset,
                             (unsigned long long)data_size);
        if (!kiln_add_u64(total, w->byte_size, &total) || total > limits->max_weight_bytes)
            return kiln_fail(err, KILN_ERR_LIMIT, "weights exceed the limit of %llu bytes",
                             (unsigned long long)limits->max_weight_bytes);
    }
    return kiln_reader_expect_end(&r, err);
}

static kiln_status decode_graph(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m,
                                kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, s->data, s->size, "section GRPH");
    READ_ARRAY(&r, limits->max_nodes, 16, "nodes", m->nodes, m->node_count);
    for (uint32_t n = 0; n < m->node_count; n++) {
        kiln_node_decl *node = &m->nodes[n];
        uint32_t output_count;
        KILN_TRY(kiln_read_u32(&r, &node->op, err));
        READ_ARRAY(&r, limits->max_node_inputs, 4, "node inputs", node->inputs, node->input_count);
        for (uint32_t i = 0; i < node->input_count; i++)
            KILN_TRY(kiln_read_u32(&r, &node->inputs[i], err));
        KILN_TRY(kiln_read_u32(&r, &output_count, err));
        /* The format allows several results per node; every op this
         * runtime implements has exactly one. */
        if (output_count != 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "section GRPH: node %u has %u results; ops here have one", n,
                             output_count);
        READ_ARRAY(&r, limits->max_attributes, 5, "attributes", node->attributes, node->attribute_count);
        KILN_TRY(kiln_attributes_decode(&r, limits, node->attribute_count, node->attributes, err));
    }
    return kiln_reader_expect_end(&r, err);
}

/*
 * RGRD: the runtime guards of a non-strict program (spec/format.md §7.10).
 * Expression ids are checked against the stored pool here; the rest
 * (nodes, kinds, that every unproven precondition is stored) when the
 * model is checked (stored_guards.c).
 */
static kiln_status decode_runtime_guards(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m,
                                         kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, s->data, s->size, "section RGRD");
    uint32_t count;
    KILN_TRY(kiln_read_count(&r, KILN_MAX_RUNTIME_GUARDS, 29, "runtime guards", &count, err));
    m->non_strict = true;
    for (uint32_t i = 0; i < count; i++) {
        kiln_runtime_guard g = {0};
        uint8_t kind;
        KILN_TRY(kiln_read_u32(&r, &g.node, err));
        KILN_TRY(kiln_read_u8(&r, &kind, err));
        KILN_TRY(kiln_read_u32(&r, &g.a, err));
        KILN_TRY(kiln_read_u32(&r, &g.b, err));
        KILN_TRY(kiln_read_i64(&r, &g.k, err));
        if (kind > KILN_CLAIM_AT_LEAST)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u has unknown kind %u", i, kind);
        g.kind = (kiln_size_claim_kind)kind;
        if (g.a >= m->stored_expr_count || (g.kind == KILN_CLAIM_EQUAL && g.b >= m->stored_expr_count))
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u refers to expression %u of %u", i,
                             g.a >= m->stored_expr_count ? g.a : g.b, m->stored_expr_count);
        uint32_t max_text = limits->max_string_length < KILN_MAX_GUARD_TEXT ? limits->max_string_length
                                                                            : KILN_MAX_GUARD_TEXT;
        KILN_TRY(kiln_read_string(&r, max_text, &g.text, err));
        kiln_status status = kiln_guard_list_add(&m->guards, &g, err);
        uint32_t listed = m->guards.count;
        free(g.text);
        KILN_TRY(status);
        if (listed != i + 1)
            return kiln_fail(err, KILN_ERR_MALFORMED, "runtime guard %u is stored twice", i);
    }
    return kiln_reader_expect_end(&r, err);
}

/*
 * PLAN: a stored memory plan (spec/format.md §7.11). Only its layout is
 * checked here; whether it fits this runtime's sizes and lifetimes is
 * checked by the loader (kiln_check_stored_plan), which falls back to its
 * own plan otherwise.
 */
static kiln_status decode_plan(const kiln_section_view *s, const kiln_limits *limits, kiln_model *m, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, s->data, s->size, "section PLAN");
    kiln_stored_plan *plan = &m->stored_plan;
    uint32_t count;
    KILN_TRY(kiln_read_u64(&r, &plan->arena_bytes, err));
    KILN_TRY(kiln_read_u64(&r, &plan->intermediate_bytes, err));
    KILN_TRY(kiln_read_count(&r, limits->max_nodes, 16, "plan slots", &count, err));
    plan->offsets = calloc(count + 1, sizeof *plan->offsets);
    plan->sizes = calloc(count + 1, sizeof *plan->sizes);
    if (!plan->offsets || !plan->sizes)
        return out_of_memory(err);
    plan->count = count;
    for (uint32_t n = 0; n < count; n++) {
        KILN_TRY(kiln_read_u64(&r, &plan->offsets[n], err));
        KILN_TRY(kiln_read_u64(&r, &plan->sizes[n], err));
    }
    KILN_TRY(kiln_reader_expect_end(&r, err));
    plan->present = true;
    return KILN_OK;
}

kiln_status kiln_model_decode(const kiln_container *c, const kiln_limits *limits, kiln_section_check check,
                              kiln_model *m, uint32_t *weight_section, kiln_report *report, kiln_error *err)
{
    int64_t index_of[SECTION_COUNT];
    kiln_section_view views[SECTION_COUNT] = {{0}};
    uint32_t unsupported = 0, unreadable = 0;
    KILN_TRY(locate_sections(c, index_of, report, &unreadable, err));
    if (unreadable)
        return KILN_OK; /* sections at unknown versions: recorded, not decoded */
    kiln_status status = KILN_OK;
    /* Weight data is not read here: the caller decides when (lazy policy). */
    for (int k = 0; k < SECTION_COUNT && status == KILN_OK; k++)
        if (k != WDAT && !optional_section(k))
            status = kiln_container_section(c, (uint32_t)index_of[k], check, &views[k], err);
    /* The opset is checked against the registry before the graph is read. */
    if (status == KILN_OK)
        status = decode_meta(&views[META], limits, m, err);
    if (status == KILN_OK)
        status = decode_opset(&views[OPST], limits, m, report, &unsupported, err);
    if (status == KILN_OK)
        status = decode_dims(&views[DIMS], limits, m, err);
    if (status == KILN_OK)
        status = decode_signature(&views[IOSG], limits, c->features, m, report, &unsupported, err);
    if (status == KILN_OK)
        status = decode_weights(&views[WTAB], c->sections[index_of[WDAT]].raw_size, limits, c->features, m,
                                report, &unsupported, err);
    if (status == KILN_OK)
        status = decode_graph(&views[GRPH], limits, m, err);
    for (int k = 0; k < SECTION_COUNT; k++)
        kiln_section_view_release(&views[k]);
    if (status == KILN_OK && index_of[EVID] >= 0) {
        kiln_section_view evidence;
        status = kiln_container_section(c, (uint32_t)index_of[EVID], check, &evidence, err);
        if (status == KILN_OK)
            status = kiln_evidence_decode(evidence.data, evidence.size, limits, m, err);
        kiln_section_view_release(&evidence);
    }
    if (status == KILN_OK && index_of[CHKS] >= 0) {
        kiln_section_view checks;
        status = kiln_container_section(c, (uint32_t)index_of[CHKS], check, &checks, err);
        if (status == KILN_OK)
            status = kiln_input_checks_decode(checks.data, checks.size, limits, m, err);
        kiln_section_view_release(&checks);
    }
    if (status == KILN_OK && index_of[PLAN] >= 0) {
        kiln_section_view plan;
        status = kiln_container_section(c, (uint32_t)index_of[PLAN], check, &plan, err);
        if (status == KILN_OK)
            status = decode_plan(&plan, limits, m, err);
        kiln_section_view_release(&plan);
    }
    if (status == KILN_OK && index_of[RGRD] >= 0) {
        kiln_section_view guards;
        status = kiln_container_section(c, (uint32_t)index_of[RGRD], check, &guards, err);
        if (status == KILN_OK)
            status = decode_runtime_guards(&guards, limits, m, err);
        kiln_section_view_release(&guards);
    }
    KILN_TRY(status);
    if (m->mode != KILN_MODE_INFERENCE) {
        kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_MODE, "mode-unsupported", "section META",
                        "program '%s' is a training-mode artifact; this runtime runs inference only", m->name);
        unsupported++;
    }
    /* The graph cannot be typed without its ops and dtypes: stop here,
     * with every such problem recorded. */
    if (unsupported)
        return KILN_OK;
    uint64_t values = (uint64_t)m->input_count + m->weight_count + m->node_count;
    if (values > limits->max_values)
        return kiln_fail(err, KILN_ERR_LIMIT, "the program has %llu values, the limit is %u",
                         (unsigned long long)values, limits->max_values);
    *weight_section = (uint32_t)index_of[WDAT];
    KILN_TRY(kiln_model_infer(m, limits->max_proof_steps, err));
    return check_half_feature(c, m, report, err);
}

void kiln_model_bind_weights(kiln_model *m, const uint8_t *data)
{
    for (uint32_t i = 0; i < m->weight_count; i++)
        m->weights[i].data = data + m->weights[i].data_offset;
}
