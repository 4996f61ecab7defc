/*
 * session.c — running a loaded program.
 *
 * A session sizes one buffer per op result for the upper bound of its
 * dims (the declared domain, or its own narrowing of it: session_bound.h)
 * when it is created, so a run only guards, binds dims,
 * computes concrete shapes and calls kernels: it allocates nothing. The
 * exception is a fast path's first run of a node at a new shape, which
 * builds what it keeps in the node's state slot (kernel_context.h).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "invariant.h"
#include "channels_last.h"
#include "input_guard.h"
#include "semantic_check.h"
#include "layout.h"
#include "memory_plan.h"
#include "onednn.h"
#include "op_registry.h"
#include "parallel.h"
#include "loader.h"
#include "program.h"
#include "result_groups.h"
#include "run_threads.h"
#include "session.h"
#include "session_bound.h"
#include "session_profile.h"
#include "session_state.h"
#include "relation_guard.h"
#include "state_store.h"
#include "stored_guards.h"
#include "value_bound.h"

static kiln_status allocate_arena(kiln_session *s, kiln_error *err)
{
    s->arena_size = (size_t)s->bound.arena_bytes;
    if (s->arena_size != s->bound.arena_bytes)
        return kiln_fail(err, KILN_ERR_LIMIT, "a %llu-byte arena does not fit this process's address space",
                         (unsigned long long)s->bound.arena_bytes);
    s->arena = aligned_alloc(KILN_ARENA_ALIGNMENT, s->arena_size ? s->arena_size : KILN_ARENA_ALIGNMENT);
    if (!s->arena)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a %zu-byte arena", s->arena_size);
    return KILN_OK;
}

/* The scratch a session converts channels-last results through: the largest slot of one (layout.h). */
static uint64_t channels_last_scratch_bytes(const kiln_session *s)
{
    uint64_t bytes = 0;
    for (uint32_t n = 0; n < s->model->node_count; n++)
        if (s->program->nodes[n].channels_last_ok && s->bound.sizes[n] > bytes)
            bytes = s->bound.sizes[n];
    return bytes;
}

/* The states the session's runs use: the caller's (of this program), or its own when the program has any. */
static kiln_status attach_state(kiln_session *s, kiln_state *given, kiln_error *err)
{
    const kiln_program *root = kiln_program_root(s->program);
    if (given && given->root != root)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "options.state was made for program '%s', not this one: make it with kiln_state_new of the "
                         "session's program", given->root->model.name);
    if (!given && root->model.state_count) {
        KILN_TRY(kiln_state_new(s->program, &given, err));
        s->owns_state = true;
    }
    s->state = given;
    if (given) {
        s->context.states = given->buffers;
        s->context.state_count = given->count;
    }
    return KILN_OK;
}

kiln_status kiln_session_new(const kiln_program *program, const kiln_session_options *options,
                             kiln_session **out, kiln_error *err)
{
    *out = NULL;
    if (!program)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program is NULL");
    kiln_session_options settings;
    KILN_TRY(kiln_session_options_read(options, &settings, err));
    options = &settings;
    const kiln_model *m = &program->model;
    /* Under the lazy policy this is where the weights are first checked. */
    KILN_TRY(kiln_program_prepare_weights(program, err));
    kiln_session *s = calloc(1, sizeof *s);
    if (!s)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a session");
    s->program = program;
    s->model = m;
    s->check_inputs = !(options && options->skip_input_checks);
    s->max_threads = kiln_session_thread_count(options ? options->threads : 0);
    s->context.threads = s->max_threads;
    /* Here, not in the first run that changes the count: that would allocate (parallel.h). */
    kiln_threads_prepare();
    s->adaptive_threads = !options || options->thread_policy != KILN_THREADS_FIXED;
    s->context.reference_only = options && options->reference_kernels;
    s->bound_inputs = calloc(m->input_count + 1, sizeof *s->bound_inputs);
    s->values = calloc(kiln_model_value_count(m) + 1, sizeof *s->values);
    s->dim_values = calloc(m->dim_count + 1, sizeof *s->dim_values);
    s->dim_bound = calloc(m->dim_count + 1, sizeof *s->dim_bound);
    s->binding_sites = calloc(m->dim_count + 1, sizeof *s->binding_sites);
    s->operands = calloc(program->limits.max_node_inputs + 1, sizeof *s->operands);
    s->node_states = calloc(m->node_count + 1, sizeof *s->node_states);
    s->channels_last = calloc(kiln_model_value_count(m) + 1, sizeof *s->channels_last);
    s->views = calloc(kiln_model_value_count(m) + 1, sizeof *s->views);
    s->bounds = calloc(kiln_model_value_count(m) + 1, sizeof *s->bounds);
    bool profile = options->profile;
    if (profile)
        s->profile = kiln_profile_new(m);
    kiln_status status = KILN_OK;
    if (!s->bound_inputs || !s->values || !s->dim_values || !s->dim_bound || !s->binding_sites || !s->operands ||
        !s->node_states || !s->channels_last || !s->views || !s->bounds || (profile && !s->profile))
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a session");
    if (status == KILN_OK)
        status = kiln_session_bound_resolve(program, options, &s->bound, NULL, err);
    /* Only oneDNN's kernels write channels-last data: without them nothing is ever converted. */
    uint64_t scratch = status == KILN_OK ? channels_last_scratch_bytes(s) : 0;
    if (scratch && !s->context.reference_only && kiln_onednn_enabled() &&
        !(s->layout_scratch = aligned_alloc(KILN_ARENA_ALIGNMENT, (size_t)scratch)))
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a session");
    if (status == KILN_OK)
        status = allocate_arena(s, err);
    if (status == KILN_OK && !s->context.reference_only)
        status = kiln_onednn_session_new(&s->context.onednn, err);
    if (status == KILN_OK)
        status = attach_state(s, options->state, err);
    if (status != KILN_OK) {
        kiln_session_free(s);
        return status;
    }
    for (uint32_t w = 0; w < m->weight_count; w++) {
        const kiln_weight_decl *decl = &m->weights[w];
        /* Weights are read-only views into the artifact bytes. */
        kiln_tensor_view_init(&s->values[m->input_count + w], decl->dtype, decl->rank, decl->shape,
                              (void *)(uintptr_t)decl->data);
    }
    *out = s;
    return KILN_OK;
}

void kiln_session_free(kiln_session *s)
{
    if (!s)
        return;
    free(s->bound_inputs);
    free(s->values);
    kiln_session_bound_release(&s->bound);
    free(s->arena);
    free(s->dim_values);
    free(s->dim_bound);
    free(s->binding_sites);
    free(s->operands);
    for (uint32_t n = 0; s->node_states && n < s->model->node_count; n++)
        if (s->node_states[n].release)
            s->node_states[n].release(s->node_states[n].data);
    free(s->node_states);
    free(s->channels_last);
    free(s->views);
    free(s->bounds);
    free(s->layout_scratch);
    kiln_profile_free(s->profile);
    kiln_onednn_session_free(s->context.onednn);
    if (s->owns_state)
        kiln_state_free(s->state);
    free(s);
}

kiln_status kiln_session_new_for_inputs(const kiln_program *program, const kiln_session_options *options,
                                        uint32_t count, const char *const *names, const kiln_tensor *const *tensors,
                                        kiln_session **out, kiln_error *err)
{
    *out = NULL;
    if (!program)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program is NULL");
    kiln_session_options narrowed;
    KILN_TRY(kiln_session_options_read(options, &narrowed, err));
    if (narrowed.dim_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "session options narrow dims already: the inputs' sizes narrow them here");
    const kiln_model *m = &program->model;
    int64_t *values = calloc(m->dim_count + 1, sizeof *values);
    bool *bound = calloc(m->dim_count + 1, sizeof *bound);
    kiln_dim_bound *dims = calloc(m->dim_count + 1, sizeof *dims);
    kiln_status status = values && bound && dims ? KILN_OK
                                                 : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a session");
    if (status == KILN_OK)
        status = kiln_program_bind_dims(program, count, names, tensors, values, bound, err);
    /* A state's length changes from run to run: its dim keeps its whole range. */
    for (uint32_t d = 0; status == KILN_OK && d < m->dim_count; d++)
        if (bound[d] && !kiln_model_state_length_dim(m, d))
            dims[narrowed.dim_count++] = (kiln_dim_bound){m->dims[d].name, values[d], values[d]};
    narrowed.dims = dims;
    if (status == KILN_OK)
        status = kiln_session_new(program, &narrowed, out, err);
    free(values);
    free(bound);
    free(dims);
    return status;
}

const char *kiln_thread_wait_policy(void)
{
    return kiln_threads_spin() ? "spin" : "passive";
}

kiln_status kiln_session_set_input(kiln_session *s, const char *name, const kiln_tensor *tensor,
                                   kiln_error *err)
{
    const kiln_model *m = s->model;
    if (!name || !tensor)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "input name and tensor must not be NULL");
    for (uint32_t i = 0; i < m->input_count; i++) {
        if (strcmp(m->inputs[i].name, name) == 0) {
            s->bound_inputs[i] = tensor;
            return KILN_OK;
        }
    }
    char known[512] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < m->input_count && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s'%s'", i ? ", " : "", m->inputs[i].name);
    return kiln_fail(err, KILN_ERR_UNKNOWN_INPUT, "'%s' is not an input of program '%s' (inputs: %s)", name,
                     m->name, known);
}

static kiln_status check_all_bound(const kiln_session *s, kiln_error *err)
{
    const kiln_model *m = s->model;
    char missing[512] = "";
    size_t used = 0;
    uint32_t count = 0;
    for (uint32_t i = 0; i < m->input_count; i++) {
        if (s->bound_inputs[i])
            continue;
        if (used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s'%s'", count ? ", " : "",
                                     m->inputs[i].name);
        count++;
    }
    if (count)
        return kiln_fail(err, KILN_ERR_MISSING_INPUT, "missing input%s %s: every declared input must be set",
                         count == 1 ? "" : "s", missing);
    return KILN_OK;
}

/* Point node n's result view at its arena slot, with its shape at the bound dims. */
static kiln_status bind_result(kiln_session *s, uint32_t n, kiln_tensor **out, kiln_error *err)
{
    const kiln_model *m = s->model;
    uint32_t value = kiln_model_first_node_value(m) + n;
    const kiln_value_type *type = &m->value_types[value];
    int64_t shape[KILN_MAX_RANK];
    for (uint32_t a = 0; a < type->shape.rank; a++)
        KILN_TRY(kiln_expr_eval(&m->exprs, type->shape.axes[a], s->dim_values, s->dim_bound, &shape[a], err));
    *out = &s->values[value];
    kiln_tensor_view_init(*out, type->dtype, type->shape.rank, shape, s->arena + s->bound.offsets[n]);
    /* Bound to its own slot: no longer a view of a state (a previous run's), whatever it was. */
    s->views[value].state = NULL;
    /* The plan sized the arena for the largest shapes the bound dims allow. */
    KILN_ASSERT(s->bound.offsets[n] <= s->arena_size && (*out)->byte_size <= s->arena_size - s->bound.offsets[n]);
    return KILN_OK;
}

/* Make value v row-major if it is channels-last now (layout.h). */
static void make_plain(kiln_session *s, uint32_t v)
{
    if (!s->channels_last[v])
        return;
    kiln_layout_to_plain(&s->values[v], s->layout_scratch);
    s->channels_last[v] = false;
}

/*
 * Before node n runs: convert the operands it cannot take channels-last,
 * and tell its kernel which operands are. An elementwise node reads its
 * operands channels-last only when all of them are and its result may
 * be (it then writes its result in that layout too); a channelwise one
 * (batch_norm, or a per-channel scale of an operand) the operand
 * kiln_layout_channelwise_operand names when its result may be.
 */
static void settle_operand_layouts(kiln_session *s, uint32_t n, kiln_layout_role role)
{
    const kiln_node_decl *node = &s->model->nodes[n];
    uint32_t first = kiln_model_first_node_value(s->model);
    bool all = true, any = false;
    for (uint32_t i = 0; i < node->input_count; i++) {
        bool cl = s->channels_last[node->inputs[i]];
        all = all && cl;
        any = any || cl;
    }
    s->context.channels_last_operands = 0;
    if (!any)
        return;
    /* A channel concat whose result may be channels-last takes its operands
     * in either layout, each (its kernel transposes the row-major ones). */
    bool keep_all = ((role == KILN_LAYOUT_ELEMENTWISE && all) || role == KILN_LAYOUT_CHANNEL_CONCAT) &&
                    s->program->nodes[n].channels_last_ok;
    bool channelwise = role == KILN_LAYOUT_CHANNELWISE || role == KILN_LAYOUT_CHANNELWISE_1;
    uint32_t kept = kiln_layout_channelwise_operand(role);
    for (uint32_t i = 0; i < node->input_count; i++) {
        uint32_t v = node->inputs[i];
        bool keep = keep_all || (v >= first && ((i == 0 && role == KILN_LAYOUT_READS_OPERAND_0) ||
                                                (i == kept && channelwise && s->program->nodes[n].channels_last_ok)));
        if (!keep)
            make_plain(s, v);
        else if (s->channels_last[v] && i < 32)
            s->context.channels_last_operands |= UINT32_C(1) << i;
    }
}

/*
 * Before node n runs: tell a kernel that reads strided operands which of
 * them are state views (state_view.h), and pack them for any other.
 */
static void settle_operand_views(kiln_session *s, uint32_t n, const kiln_op_def *def)
{
    const kiln_node_decl *node = &s->model->nodes[n];
    s->context.strided_operands = 0;
    for (uint32_t i = 0; i < node->input_count; i++) {
        uint32_t v = node->inputs[i];
        kiln_value_view *view = &s->views[v];
        if (!view->state)
            continue;
        kiln_dtype dtype = s->values[v].dtype;
        if (def->traits.strided_operands && i < KILN_CONTEXT_OPERANDS && dtype != KILN_F16 && dtype != KILN_BF16) {
            s->context.strided_operands |= UINT32_C(1) << i;
            s->context.operand_strides[i] = view->strides;
        } else {
            kiln_value_view_pack(view, &s->values[v]);
        }
    }
}

/*
 * Call node n's kernels: its fast path first, where it has one (it may
 * read channels-last operands as its layout trait says, and may decline);
 * a fast path that declined channels-last operands is offered them again
 * row-major, converted here (a resize of a rank-5 x reads only row-major
 * data); else its reference kernel, on row-major operands.
 */
static kiln_status call_kernel(kiln_session *s, uint32_t n, kiln_kernel_call *call, kiln_error *err)
{
    const kiln_node_decl *node = &s->model->nodes[n];
    const kiln_op_def *def = s->model->opset[node->op].def;
    bool fast = def->fast && !s->context.reference_only;
    s->context.wrote_channels_last = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (fast) {
            bool ran = false;
            KILN_TRY(def->fast(call, &ran, err));
            if (ran)
                return KILN_OK;
        }
        if (def->traits.layout != KILN_LAYOUT_READS_OPERAND_0 || !s->context.channels_last_operands)
            break;
        for (uint32_t i = 0; i < node->input_count; i++)
            make_plain(s, node->inputs[i]);
        s->context.channels_last_operands = 0;
    }
    return def->run(call, err);
}

/*
 * Run the `count` nodes from n on that compute their results together
 * (result_groups.h) as one call of their `together` kernel, which writes
 * every member's result. Their kernels are reference kernels: row-major
 * operands.
 */
static kiln_status run_group(kiln_session *s, uint32_t n, uint32_t count, kiln_kernel_call *call, kiln_error *err)
{
    const kiln_model *m = s->model;
    const kiln_node_decl *node = &m->nodes[n];
    kiln_tensor *results[KILN_RESULT_GROUP_MAX];
    const kiln_op_def *ops[KILN_RESULT_GROUP_MAX];
    results[0] = call->output;
    for (uint32_t j = 0; j < count; j++) {
        if (j)
            KILN_TRY(bind_result(s, n + j, &results[j], err));
        ops[j] = m->opset[m->nodes[n + j].op].def;
    }
    for (uint32_t i = 0; i < node->input_count; i++) {
        make_plain(s, node->inputs[i]);
        kiln_value_view_pack(&s->views[node->inputs[i]], &s->values[node->inputs[i]]);
    }
    s->context.channels_last_operands = 0;
    s->context.strided_operands = 0;
    s->context.wrote_channels_last = false;
    s->grouped_runs++;
    return ops[0]->together(call, results, ops, count, err);
}

/* The nodes in order; the caller has set up the thread count. */
static kiln_status run_nodes(kiln_session *s, kiln_error *err)
{
    const kiln_model *m = s->model;
    uint32_t first = kiln_model_first_node_value(m);
    uint64_t run_start = s->profile ? kiln_profile_clock() : 0;
    s->has_outputs = false;
    KILN_TRY(check_all_bound(s, err));
    KILN_TRY(kiln_guard_inputs(m, s->context.states, s->bound_inputs, s->dim_values, s->dim_bound, s->binding_sites,
                               err));
    KILN_TRY(kiln_session_bound_check(s->program, &s->bound, s->dim_values, s->dim_bound, s->binding_sites, err));
    KILN_TRY(kiln_relations_hold(m, s->dim_values, s->dim_bound, err));
    KILN_TRY(kiln_runtime_guards_hold(m, s->dim_values, s->dim_bound, err));
    if (s->check_inputs)
        for (uint32_t i = 0; i < m->check_count; i++)
            KILN_TRY(kiln_input_check_enforce(&m->checks[i], m->inputs[m->checks[i].input].name,
                                              s->bound_inputs[m->checks[i].input], err));
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_tensor *in = s->bound_inputs[i];
        kiln_tensor_view_init(&s->values[i], in->dtype, in->rank, in->shape, in->data);
    }
    memset(s->channels_last, 0, kiln_model_value_count(m) * sizeof *s->channels_last);
    for (uint32_t v = 0; v < kiln_model_value_count(m); v++)
        s->bounds[v] = INFINITY;
    for (uint32_t n = 0; n < m->node_count; n++) {
        if (!s->program->live[n])
            continue; /* no output depends on it (liveness.h) */
        const kiln_node_decl *node = &m->nodes[n];
        uint64_t node_start = s->profile ? kiln_profile_clock() : 0;
        kiln_tensor *result;
        KILN_TRY(bind_result(s, n, &result, err));
        /* An activation the node may apply for the next one that runs (fusion.h). */
        kiln_fusion_offer offer = {s->program->nodes[n].fusion, NULL, false, false};
        uint32_t activation_node = s->program->nodes[n].fusion_node;
        s->context.fusion = NULL;
        if (offer.activation.kind != KILN_ACTIVATION_NONE && !s->context.reference_only) {
            KILN_TRY(bind_result(s, activation_node, &offer.output, err));
            offer.output_may_be_channels_last = s->program->nodes[activation_node].channels_last_ok;
            /* In place (batch_norm): only over x's own bytes or apart from them. */
            const kiln_tensor *x = &s->values[node->inputs[0]];
            bool in_place = m->opset[node->op].def->traits.activation_in_place;
            if (!in_place || kiln_fusion_in_place(offer.output->data, offer.output->byte_size, x->data, x->byte_size))
                s->context.fusion = &offer;
        }
        s->context.constant_operands = 0;
        for (uint32_t i = 0; i < node->input_count; i++) {
            s->operands[i] = &s->values[node->inputs[i]];
            /* Values input_count..first-1 are the program's weights. */
            if (i < 32 && node->inputs[i] >= m->input_count && node->inputs[i] < first)
                s->context.constant_operands |= UINT32_C(1) << i;
        }
        kiln_layout_role role = s->program->nodes[n].layout_role;
        settle_operand_layouts(s, n, role);
        settle_operand_views(s, n, m->opset[node->op].def);
        s->context.view_of = NULL;
        s->context.result_may_be_channels_last = s->program->nodes[n].channels_last_ok;
        s->context.operand_bound = node->input_count ? s->bounds[node->inputs[0]] : INFINITY;
        s->context.result_bound = INFINITY;
        s->context.path = KILN_PATH_REFERENCE;
        s->context.state = &s->node_states[n];
        kiln_kernel_call call = {s->operands, node->input_count, result, node->attributes, node->attribute_count,
                                 &s->context};
        uint32_t together = s->program->nodes[n].result_group;
        kiln_status status = together > 1 ? run_group(s, n, together, &call, err) : call_kernel(s, n, &call, err);
        s->context.fusion = NULL;
        if (status != KILN_OK) {
            char detail[KILN_ERROR_MESSAGE_SIZE];
            memcpy(detail, err ? err->message : "", err ? sizeof detail : 1);
            return kiln_fail(err, status, "node %u (%s): %s", n, m->opset[node->op].name, detail);
        }
        /* The value written: node n's result, or the activation's when the node applied it. */
        uint32_t written = first + (offer.applied ? activation_node : n);
        if (s->context.view_of)
            kiln_value_view_begin(&s->views[written], &s->values[written], s->context.view_of, s->context.view_rows);
        if (role == KILN_LAYOUT_ELEMENTWISE || role == KILN_LAYOUT_CHANNEL_CONCAT)
            s->channels_last[written] = s->context.channels_last_operands != 0;
        else if (role == KILN_LAYOUT_CHANNELWISE || role == KILN_LAYOUT_CHANNELWISE_1)
            s->channels_last[written] = (s->context.channels_last_operands >> kiln_layout_channelwise_operand(role)) & 1u;
        else
            s->channels_last[written] = s->context.wrote_channels_last;
        double bound = s->context.result_bound;
        s->bounds[written] = bound <= FLT_MAX ? bound : kiln_bound_apply(s->program->nodes[n].bound_rule, node, s->bounds);
        if (s->profile)
            kiln_profile_record(s->profile, n, node_start, s->context.path, offer.applied ? activation_node : 0,
                                result);
        if (offer.applied)
            n = activation_node; /* the node wrote the activation's result: that node has run */
        for (uint32_t j = 1; j < together; j++) {
            s->channels_last[first + n + j] = false;
            s->bounds[first + n + j] = kiln_bound_apply(s->program->nodes[n + j].bound_rule, &m->nodes[n + j], s->bounds);
            if (s->profile)
                kiln_profile_record_with(s->profile, n + j, n, &s->values[first + n + j]);
        }
        if (together > 1)
            n += together - 1; /* the group's other nodes have run with it */
    }
    /* Never left channels-last (layout.h); converted here should a kernel have done so anyway. */
    for (uint32_t o = 0; o < m->output_count; o++) {
        make_plain(s, m->outputs[o].value);
        kiln_value_view_pack(&s->views[m->outputs[o].value], &s->values[m->outputs[o].value]);
    }
    s->has_outputs = true;
    if (s->profile)
        kiln_profile_run_done(s->profile, run_start);
    return KILN_OK;
}

kiln_status kiln_session_run(kiln_session *s, kiln_error *err)
{
    s->context.threads = kiln_run_threads_begin(&s->run_threads, s->max_threads, s->adaptive_threads);
    /* Per run, not per session: OpenMP's thread count belongs to the
     * calling thread, and sessions of other thread counts may share it. */
    int previous = kiln_threads_enter(s->context.threads);
    /* The states are this run's until it ends: their lengths bind dims, and appends commit only on success. */
    kiln_status status = s->state ? kiln_state_acquire(s->state, err) : KILN_OK;
    if (status == KILN_OK) {
        status = run_nodes(s, err);
        if (s->state)
            kiln_state_release(s->state, status == KILN_OK);
    }
    kiln_threads_leave(previous);
    kiln_run_threads_end();
    return status;
}

