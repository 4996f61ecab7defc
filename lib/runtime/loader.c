/*
 * loader.c — opening an artifact: structure, digest, signature, section
 * checksums per policy, program decoding and runtime checks, in that
 * order, so that damage is reported by the most specific check that sees
 * it and nothing is decoded before it is authenticated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "error.h"
#include "format/hashing.h"
#include "format/signature.h"
#include "layout.h"
#include "memory_plan.h"
#include "load_limits.h"
#include "loader.h"
#include "result_groups.h"
#include "program.h"
#include "program_info.h"
#include "proof_budget.h"
#include "report.h"
#include "section_decode.h"
#include "sections.h"

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define LOAD_OPTIONS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_load_options, progress_user)

static void load_options_default(kiln_load_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->verify = KILN_VERIFY_FULL;
}

void kiln_load_options_init(kiln_load_options *options, size_t struct_size)
{
    kiln_load_options defaults;
    load_options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

kiln_status kiln_load_settings_resolve(const kiln_load_options *options, kiln_load_settings *out, kiln_error *err)
{
    load_options_default(&out->options);
    KILN_TRY(kiln_struct_read(&out->options, sizeof out->options, options, LOAD_OPTIONS_SIZE_1_0,
                              "kiln_load_options", err));
    KILN_TRY(kiln_limits_read(out->options.limits, &out->limits, err));
    out->options.limits = &out->limits;
    return KILN_OK;
}

static kiln_status check_options(const kiln_load_options *options, kiln_error *err)
{
    if (options->verify != KILN_VERIFY_FULL && options->verify != KILN_VERIFY_NONE &&
        options->verify != KILN_VERIFY_LAZY)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "unknown verify policy %d", (int)options->verify);
    if (options->trusted_key_count && !options->trusted_keys)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "trusted_keys is NULL but trusted_key_count is %u",
                         options->trusted_key_count);
    return KILN_OK;
}

static void key_id_hex(const uint8_t id[KILN_KEY_ID_SIZE], char out[2 * KILN_KEY_ID_SIZE + 1])
{
    for (int i = 0; i < KILN_KEY_ID_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/*
 * Apply the signature policy. The digest has been verified already, so a
 * valid signature over it authenticates every byte (see container.h).
 */
static kiln_status check_signature(kiln_program *p, const kiln_load_options *options, kiln_error *err)
{
    const kiln_container *c = &p->container;
    char id[2 * KILN_KEY_ID_SIZE + 1];
    memset(&p->signature, 0, sizeof p->signature);
    if (!(c->trailer_flags & KILN_TRAILER_SIGNED)) {
        if (options->require_signature)
            return kiln_fail(err, KILN_ERR_UNSIGNED, "the artifact is not signed, and a signature is required");
        return KILN_OK;
    }
    memcpy(p->signature.key_id, c->key_id, KILN_KEY_ID_SIZE);
    p->signature.state = KILN_SIGNATURE_UNVERIFIED;
    key_id_hex(c->key_id, id);
    for (uint32_t k = 0; k < options->trusted_key_count; k++) {
        uint8_t trusted_id[KILN_KEY_ID_SIZE];
        kiln_signature_key_id(options->trusted_keys[k].bytes, trusted_id);
        if (memcmp(trusted_id, c->key_id, KILN_KEY_ID_SIZE) != 0)
            continue;
        if (!kiln_signature_verify(options->trusted_keys[k].bytes, c->digest, c->signature))
            return kiln_fail(err, KILN_ERR_BAD_SIGNATURE,
                             "bad signature: the signature by trusted key %s does not match the artifact "
                             "digest", id);
        p->signature.state = KILN_SIGNATURE_VERIFIED;
        return KILN_OK;
    }
    if (options->trusted_key_count || options->require_signature)
        return kiln_fail(err, KILN_ERR_UNTRUSTED_KEY, "the artifact is signed by key %s, which is not trusted", id);
    return KILN_OK;
}

/*
 * Program and state identities, from the section hashes in the table. The
 * program identity covers the contract: opset, dims, signature, semantic
 * checks, runtime guards and states (when present), weights table and graph, and
 * the same of every further method.
 */
static void compute_identities(kiln_program *p)
{
    static const uint32_t program_sections[] = {
        KILN_SECTION_OPST, KILN_SECTION_DIMS, KILN_SECTION_IOSG, KILN_SECTION_CHKS, KILN_SECTION_RGRD,
        KILN_SECTION_STAT, KILN_SECTION_WTAB, KILN_SECTION_GRPH,
    };
    uint8_t record[4 + KILN_DIGEST_SIZE];
    uint8_t joined[(sizeof program_sections / sizeof program_sections[0] + 1) * sizeof record];
    size_t used = 0;
    for (size_t i = 0; i < sizeof program_sections / sizeof program_sections[0]; i++) {
        int64_t index = kiln_container_find(&p->container, program_sections[i]);
        if (index < 0)
            continue; /* an optional section the program does not have */
        kiln_store_u32(record, program_sections[i]);
        memcpy(record + 4, p->container.sections[index].hash, KILN_DIGEST_SIZE);
        memcpy(joined + used, record, sizeof record);
        used += sizeof record;
    }
    /* Further methods: their names and contract parts, not the section's hash,
     * which also covers their evidence, names and plans (spec/format.md §14). */
    if (kiln_container_find(&p->container, KILN_SECTION_MTHD) >= 0) {
        kiln_store_u32(record, KILN_SECTION_MTHD);
        memcpy(record + 4, p->methods_digest, KILN_DIGEST_SIZE);
        memcpy(joined + used, record, sizeof record);
        used += sizeof record;
    }
    static const char program_label[] = "kiln program identity v1";
    static const char state_label[] = "kiln state identity v1";
    kiln_blake2b_256_pair((const uint8_t *)program_label, sizeof program_label, joined, used,
                          p->program_identity);
    kiln_blake2b_256_pair((const uint8_t *)state_label, sizeof state_label,
                          p->container.sections[p->weight_section].hash, KILN_DIGEST_SIZE, p->state_identity);
}

/*
 * What to prove about a section's bytes under a policy. Even "none" keeps
 * the CRC of the small program sections: it costs nothing and keeps
 * accidental damage away from the decoders. Only the weight data, where
 * checking is expensive, goes unchecked.
 */
static kiln_section_check section_check_for(kiln_verify_policy policy, bool weights)
{
    if (policy != KILN_VERIFY_NONE)
        return KILN_CHECK_CRC_AND_HASH;
    return weights ? KILN_CHECK_NOTHING : KILN_CHECK_CRC;
}

kiln_status kiln_program_prepare_weights(const kiln_program *shared, kiln_error *err)
{
    /* Logically const: this only completes the one-time weight check. The
     * weights are the root's, and a method's model shares its weight table. */
    kiln_program *p = (kiln_program *)(uintptr_t)kiln_program_root(shared);
    if (atomic_load_explicit(&p->weights_ready, memory_order_acquire))
        return KILN_OK;
    pthread_mutex_lock(&p->weight_lock);
    kiln_status status = p->weight_failure;
    if (status != KILN_OK) {
        kiln_fail(err, status, "%s", p->weight_failure_message);
    } else if (!atomic_load_explicit(&p->weights_ready, memory_order_relaxed)) {
        kiln_error detail;
        status = kiln_container_section(&p->container, p->weight_section, section_check_for(p->verify, true),
                                        &p->weight_view, &detail);
        if (status == KILN_OK) {
            kiln_model_bind_weights(&p->model, p->weight_view.data);
            atomic_store_explicit(&p->weights_ready, true, memory_order_release);
        } else {
            p->weight_failure = status;
            memcpy(p->weight_failure_message, detail.message, sizeof detail.message);
            kiln_fail(err, status, "%s", detail.message);
        }
    }
    pthread_mutex_unlock(&p->weight_lock);
    return status;
}

/* Under the full policy: every section not decoded as part of the program
 * (unknown ancillary ones), and the gaps between sections. */
static kiln_status verify_remaining(kiln_program *p, kiln_error *err)
{
    for (uint32_t i = 0; i < p->container.section_count; i++) {
        uint32_t type = p->container.sections[i].type;
        bool decoded = type == KILN_SECTION_META || type == KILN_SECTION_OPST || type == KILN_SECTION_DIMS ||
                       type == KILN_SECTION_IOSG || type == KILN_SECTION_WTAB || type == KILN_SECTION_GRPH ||
                       type == KILN_SECTION_EVID || type == KILN_SECTION_CHKS || type == KILN_SECTION_RGRD ||
                       type == KILN_SECTION_PLAN || type == KILN_SECTION_MTHD || type == KILN_SECTION_NNAM ||
                       type == KILN_SECTION_STAT || type == KILN_SECTION_GENV || i == p->weight_section;
        if (decoded)
            continue;
        kiln_section_view view;
        KILN_TRY(kiln_container_section(&p->container, i, KILN_CHECK_CRC_AND_HASH, &view, err));
        kiln_section_view_release(&view);
    }
    return kiln_container_verify_gaps(&p->container, err);
}

/* Feature bits this runtime does not know, each named in the report. */
static void open_sections(kiln_program *p, const kiln_load_options *options, kiln_report *report);

static void note_unknown_features(const kiln_container *c, kiln_report *report)
{
    uint64_t unknown = c->features & ~KILN_KNOWN_FEATURES;
    for (int bit = 0; bit < 64; bit++)
        if (unknown >> bit & 1)
            kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNKNOWN_CRITICAL, "feature-unknown", "header",
                            "required feature bit %d is unknown to this runtime (format %u.%u)", bit, c->major,
                            c->minor);
}

/*
 * Validate and decode `bytes` under `options`, recording every problem in
 * `report`. Damage to structure, digest or signature ends the search at
 * once; compatibility problems are collected before giving up.
 */
static void open_bytes(kiln_program *p, const uint8_t *bytes, size_t size, const kiln_load_options *options,
                       kiln_report *report)
{
    const kiln_limits *limits = options->limits;
    /* An uncompressed section is bounded by the file itself; the weights
     * table bounds the weight bytes; inflating is bounded here. */
    kiln_container_limits container_limits = {
        .max_sections = limits->max_sections,
        .max_section_raw_size = UINT64_MAX,
        .max_decompressed_size = limits->max_decompressed_bytes,
    };
    kiln_error err;
    p->limits = *limits;
    p->verify = options->verify;
    if (kiln_container_parse(bytes, size, &container_limits, &p->container, &err) != KILN_OK ||
        kiln_container_verify_digest(&p->container, &err) != KILN_OK || check_signature(p, options, &err) != KILN_OK) {
        kiln_report_add_error(report, &err);
        return;
    }
    note_unknown_features(&p->container, report);
    /* A program loaded from a file checks its mapping: the checked pages
     * of uncompressed sections are given back (format/container.h). */
    p->container.file_mapped = p->file.mapping != NULL && bytes == p->file.bytes;
    /* Progress covers the section bytes checked now: CRC of the stored and
     * hash of the raw bytes, for every section under full verification,
     * shown as the stored bytes they cover (about the file's size). */
    kiln_progress progress = {options->progress, options->progress_user, 0, 0, 0};
    for (uint32_t i = 0; i < p->container.section_count; i++)
        if (options->verify == KILN_VERIFY_FULL || p->container.sections[i].type != KILN_SECTION_WDAT) {
            progress.total += p->container.sections[i].stored_size + p->container.sections[i].raw_size;
            progress.shown_total += p->container.sections[i].stored_size;
        }
    p->container.progress = &progress;
    open_sections(p, options, report);
    p->container.progress = NULL;
}

/*
 * The conv and activation pairs a session may run as one (fusion.h). A
 * plan this runtime makes keeps every pair apart; a stored plan only
 * those it happens to, so a pair is fused only where the stored plan
 * allows it (sessions that plan their own arena keep this subset).
 */
static kiln_status find_fusions(kiln_program *p, kiln_error *err)
{
    const kiln_model *m = &p->model;
    uint32_t *readers;
    KILN_TRY(kiln_fusion_readers(m, p->live, &readers, err));
    for (uint32_t n = 0; n < m->node_count; n++) {
        kiln_node_plan *node = &p->nodes[n];
        uint32_t at = kiln_fusion_pair(m, p->live, n, readers, &node->fusion);
        /* A producer applying it in place is checked by the session, on its own plan's buffers. */
        bool in_place = m->opset[m->nodes[n].op].def->traits.activation_in_place;
        if (at != 0 && p->plan_stored && !in_place &&
            !kiln_fusion_plan_allows(m, n, at, p->arena_offsets, p->slot_sizes))
            at = 0;
        if (at == 0)
            node->fusion.kind = KILN_ACTIVATION_NONE;
        node->fusion_node = at;
    }
    free(readers);
    return KILN_OK;
}

/*
 * The nodes that run as one (result_groups.h). A plan this runtime makes
 * keeps every group's results apart; a stored plan only those it happens
 * to, so a group runs as one only where the stored plan allows it.
 */
static void find_result_groups(kiln_program *p)
{
    const kiln_model *m = &p->model;
    for (uint32_t n = 0; n < m->node_count;) {
        uint32_t count = kiln_result_group(m, p->live, n);
        if (count > 1 && p->plan_stored &&
            !kiln_result_group_plan_allows(m, n, count, p->arena_offsets, p->slot_sizes))
            count = 1;
        p->nodes[n].result_group = (uint8_t)count;
        n += count; /* the members after the first stay 0 */
    }
}

/*
 * Per node, what a run would otherwise decide by op name: whether it runs
 * at all (liveness.h), the results that may stay channels-last (layout.h),
 * how each node reads channels-last operands, its bound rule
 * (value_bound.h).
 */
static kiln_status plan_node_paths(kiln_program *p, kiln_error *err)
{
    const kiln_model *m = &p->model;
    p->live = calloc(m->node_count + 1, sizeof *p->live);
    p->nodes = calloc(m->node_count + 1, sizeof *p->nodes);
    if (!p->live || !p->nodes)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning the nodes' fast paths");
    kiln_live_nodes(m, p->live);
    bool *channels_last_ok;
    KILN_TRY(kiln_layout_plan(m, p->live, &channels_last_ok, err));
    for (uint32_t n = 0; n < m->node_count; n++) {
        p->nodes[n].channels_last_ok = channels_last_ok[n];
        p->nodes[n].layout_role = kiln_layout_role_of(m, n);
        p->nodes[n].bound_rule = kiln_bound_rule_of(m, n);
    }
    free(channels_last_ok);
    return KILN_OK;
}

/*
 * The memory plan at the upper bound of the whole domain, with no size
 * limit: it describes the program (inspect) and serves every session that
 * does not narrow a dim. Its size is checked by each session against the
 * session's own limit, so a program too large to run at its upper bound
 * still loads, and runs in narrowed sessions. Should a size overflow 64
 * bits, there is no such plan (a warning): every session must narrow.
 * This runtime's plan is replaced by the artifact's stored one (PLAN) when
 * that checks out; a stored plan that does not is only a warning: it is
 * ancillary, and the runtime's own plan is as good.
 */
static kiln_status plan_memory(kiln_program *p, kiln_report *report)
{
    kiln_error err;
    uint32_t count = p->model.node_count;
    p->arena_offsets = calloc(count + 1, sizeof *p->arena_offsets);
    p->slot_sizes = calloc(count + 1, sizeof *p->slot_sizes);
    if (!p->slot_sizes || !p->arena_offsets) {
        kiln_fail(&err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the memory plan");
        kiln_report_add_error(report, &err);
        return err.code;
    }
    kiln_status status = kiln_plan_arena(&p->model, NULL, UINT64_MAX, p->arena_offsets, p->slot_sizes,
                                         &p->arena_plan, &err);
    p->domain_planned = status == KILN_OK;
    if (status == KILN_ERR_LIMIT) {
        kiln_report_add(report, KILN_SEVERITY_WARNING, KILN_OK, "arena-unbounded", "memory plan",
                        "%s: no session can run the whole domain; a session must narrow a dim", err.message);
        p->arena_plan.arena_bytes = UINT64_MAX;
        p->arena_plan.intermediate_bytes = UINT64_MAX;
        status = KILN_OK;
    } else if (status != KILN_OK) {
        kiln_report_add_error(report, &err);
        return status;
    }
    const kiln_stored_plan *stored = &p->model.stored_plan;
    if (stored->present && p->domain_planned) {
        if (kiln_check_stored_plan(&p->model, p->slot_sizes, stored, &err) == KILN_OK) {
            memcpy(p->arena_offsets, stored->offsets, count * sizeof *p->arena_offsets);
            p->arena_plan.arena_bytes = stored->arena_bytes;
            p->plan_stored = true;
        } else {
            kiln_report_add(report, KILN_SEVERITY_WARNING, KILN_OK, "plan-ignored", "section PLAN",
                            "the stored memory plan is not used (%s); this runtime's own plan is", err.message);
        }
    }
    /* Liveness (plan_node_paths) first: the pairs skip nodes that do not run. */
    status = plan_node_paths(p, &err);
    if (status == KILN_OK)
        status = find_fusions(p, &err);
    if (status == KILN_OK)
        find_result_groups(p);
    if (status == KILN_OK)
        status = kiln_program_count_op_uses(p, &err);
    if (status != KILN_OK)
        kiln_report_add_error(report, &err);
    return status;
}

static kiln_program *program_new(void);

/*
 * A handle per further method of the root (program.h), each planned as a
 * program of its own. A problem of a method is named with it.
 */
static kiln_status open_methods(kiln_program *p, kiln_report *report)
{
    if (!p->model.method_count)
        return KILN_OK;
    p->methods = calloc(p->model.method_count, sizeof *p->methods);
    if (!p->methods) {
        kiln_error err;
        kiln_fail(&err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the program's methods");
        kiln_report_add_error(report, &err);
        return err.code;
    }
    for (uint32_t i = 0; i < p->model.method_count; i++) {
        kiln_program *method = program_new();
        if (!method) {
            kiln_error err;
            kiln_fail(&err, KILN_ERR_OUT_OF_MEMORY, "out of memory for method '%s'", p->model.methods[i].method_name);
            kiln_report_add_error(report, &err);
            return err.code;
        }
        method->root = p;
        method->model = p->model.methods[i];
        memset(&p->model.methods[i], 0, sizeof p->model.methods[i]);
        method->limits = p->limits;
        method->verify = p->verify;
        p->methods[p->method_count++] = method;
        KILN_TRY(plan_memory(method, report));
    }
    return KILN_OK;
}

/* Decode, plan and check the sections (the part of open_bytes that reports progress). */
static void open_sections(kiln_program *p, const kiln_load_options *options, kiln_report *report)
{
    const kiln_limits *limits = options->limits;
    kiln_error err;
    if (kiln_model_decode(&p->container, limits, section_check_for(options->verify, false), &p->model,
                          &p->weight_section, p->methods_digest, report, &err) != KILN_OK)
        kiln_report_add_error(report, &err);
    if (report->error_count)
        return;
    compute_identities(p);
    if (plan_memory(p, report) != KILN_OK || open_methods(p, report) != KILN_OK)
        return;
    if ((options->verify != KILN_VERIFY_LAZY && kiln_program_prepare_weights(p, &err) != KILN_OK) ||
        (options->verify == KILN_VERIFY_FULL && verify_remaining(p, &err) != KILN_OK))
        kiln_report_add_error(report, &err);
}

static kiln_program *program_new(void)
{
    kiln_program *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (pthread_mutex_init(&p->weight_lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    atomic_init(&p->weights_ready, false);
    return p;
}

/*
 * The shared tail of every load: open the program's bytes, then hand the
 * program and report to the caller or free them, as they asked.
 */
static kiln_status finish_load(kiln_program *program, const uint8_t *bytes, size_t size,
                               const kiln_load_options *options, kiln_program **out, kiln_report **report_out,
                               kiln_error *err)
{
    kiln_report *report = calloc(1, sizeof *report);
    if (!report) {
        kiln_program_free(program);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the report");
    }
    open_bytes(program, bytes, size, options, report);
    kiln_status status = kiln_report_summarise(report, err);
    if (status != KILN_OK) {
        kiln_program_free(program);
        program = NULL;
    }
    *out = program;
    if (report_out)
        *report_out = report;
    else
        kiln_report_free(report);
    return status;
}

kiln_status kiln_program_load(const char *path, const kiln_load_options *options, kiln_program **out,
                              kiln_report **report, kiln_error *err)
{
    kiln_load_settings settings;
    *out = NULL;
    if (report)
        *report = NULL;
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    KILN_TRY(check_options(&settings.options, err));
    kiln_program *program = program_new();
    if (!program)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
    kiln_status status = kiln_mapped_file_open(path, &program->file, err);
    if (status != KILN_OK) {
        kiln_program_free(program);
        if (report && (*report = calloc(1, sizeof **report)) != NULL)
            kiln_report_add_error(*report, err);
        return status;
    }
    return finish_load(program, program->file.bytes, program->file.size, &settings.options, out, report, err);
}

kiln_status kiln_program_load_memory(const void *bytes, size_t size, const kiln_load_options *options,
                                     kiln_program **out, kiln_report **report, kiln_error *err)
{
    kiln_load_settings settings;
    *out = NULL;
    if (report)
        *report = NULL;
    if (!bytes && size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "bytes is NULL");
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    KILN_TRY(check_options(&settings.options, err));
    kiln_program *program = program_new();
    /* Copy so the program owns aligned bytes for its whole lifetime. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!program || !copy) {
        kiln_program_free(program);
        free(copy);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory loading %zu bytes", size);
    }
    if (size)
        memcpy(copy, bytes, size);
    program->owned_bytes = copy;
    return finish_load(program, copy, size, &settings.options, out, report, err);
}

void kiln_program_free(kiln_program *program)
{
    /* A method's handle is its program's, freed with it. */
    if (!program || program->root)
        return;
    for (uint32_t i = 0; i < program->method_count; i++) {
        program->methods[i]->root = NULL;
        kiln_program_free(program->methods[i]);
    }
    free(program->methods);
    kiln_model_release(&program->model);
    free(program->arena_offsets);
    free(program->slot_sizes);
    free(program->nodes);
    free(program->live);
    free(program->op_uses);
    kiln_section_view_release(&program->weight_view);
    kiln_container_release(&program->container);
    kiln_mapped_file_release(&program->file);
    pthread_mutex_destroy(&program->weight_lock);
    free(program->owned_bytes);
    free(program);
}
