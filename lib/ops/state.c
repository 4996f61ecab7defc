/*
 * state.c — state_read and state_append: the ops that reach the
 * session's state tensors (a KV cache): shape rules and kernels.
 *
 * Semantics are in spec/ops/state.md. A state (state_decl.h) has a
 * declared capacity and a length along its growing axis, the dim the
 * state's `length_dim` names, bound from the state before each run.
 * state_read gives the rows the state holds; state_append writes its
 * operand's rows in place after them and gives every row the state then
 * holds. The append's new length is committed by the session when the
 * whole run succeeds (kernel_context.h), so a run that fails changes no
 * state.
 *
 * Room: an append of `rows` needs length + rows <= capacity at every
 * point of the domain. The shape rule proves it (from the dims' ranges or
 * a declared relation such as `past + seq <= 2048`), or a non-strict
 * program checks it before every run; the kernel checks it again, so no
 * input ever writes past the buffer.
 */
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "dtype.h"
#include "error.h"
#include "op_registry.h"
#include "shape_canon.h"
#include "size_claim.h"

/* ------------------------------------------------------------ shape rule */

/* The state the node's `state` attribute names, and the dim its length binds in this method. */
static kiln_status find_state(const kiln_shape_context *ctx, const kiln_state_decl **out, uint32_t *length_dim,
                              kiln_error *err)
{
    const kiln_node_attribute *name = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "state");
    if (!name || name->type != KILN_ATTRIBUTE_STRING || !name->s)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: needs the string attribute 'state' (the state's name)",
                         ctx->node_label);
    const kiln_state_decl *decl = kiln_state_decl_find(ctx->states, ctx->state_count, name->s);
    if (!decl)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the program declares no state '%s'%s",
                         ctx->node_label, name->s, ctx->state_count ? "" : " (it declares no state at all)");
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        if (strcmp(ctx->dims[d].name, decl->length_dim) == 0) {
            *out = decl;
            *length_dim = d;
            return KILN_OK;
        }
    }
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                     "%s: state '%s' grows along the dim '%s', which this method does not declare: declare it "
                     "(0..%lld at most)",
                     ctx->node_label, decl->name, decl->length_dim, (long long)decl->shape[decl->axis]);
}

/* The state's shape with its growing axis `rows` long. */
static kiln_status state_type(const kiln_shape_context *ctx, const kiln_state_decl *decl, uint32_t rows,
                              kiln_value_type *out, kiln_error *err)
{
    out->dtype = decl->dtype;
    out->shape.rank = decl->rank;
    for (uint32_t a = 0; a < decl->rank; a++)
        if (a == decl->axis)
            out->shape.axes[a] = rows;
        else
            KILN_TRY(kiln_expr_const(ctx->pool, decl->shape[a], &out->shape.axes[a], err));
    return KILN_OK;
}

static kiln_status infer_state_read(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)inputs;
    (void)input_count;
    const kiln_state_decl *decl;
    uint32_t dim, length;
    KILN_TRY(find_state(ctx, &decl, &dim, err));
    KILN_TRY(kiln_expr_dim(ctx->pool, dim, ctx->dim_count, &length, err));
    return state_type(ctx, decl, length, out, err);
}

static kiln_status infer_state_append(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                      uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    const kiln_value_type *x = inputs[0];
    const kiln_state_decl *decl;
    uint32_t dim;
    KILN_TRY(find_state(ctx, &decl, &dim, err));
    if (x->dtype != decl->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has dtype %s; state '%s' holds %s", ctx->node_label,
                         kiln_dtype_name(x->dtype), decl->name, kiln_dtype_name(decl->dtype));
    if (x->shape.rank != decl->rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has rank %u; state '%s' has rank %u",
                         ctx->node_label, x->shape.rank, decl->name, decl->rank);
    for (uint32_t a = 0; a < decl->rank; a++) {
        if (a == decl->axis)
            continue;
        uint32_t extent;
        char size[128], what[320];
        KILN_TRY(kiln_expr_const(ctx->pool, decl->shape[a], &extent, err));
        kiln_format_size(ctx, x->shape.axes[a], size, sizeof size);
        snprintf(what, sizeof what, "x axis %u size %s equals state '%s' axis %u size %lld", a, size, decl->name, a,
                 (long long)decl->shape[a]);
        kiln_size_claim same = {KILN_CLAIM_EQUAL, x->shape.axes[a], extent, 0};
        KILN_TRY(kiln_prove_size_claim(ctx, &same, what, "Only the growing axis may differ from the state's shape",
                                       err));
    }
    /* Room: capacity - (length + rows) >= 0 over the domain. */
    uint32_t length, total, capacity, room;
    kiln_expr sum = {.kind = KILN_EXPR_ADD};
    KILN_TRY(kiln_expr_dim(ctx->pool, dim, ctx->dim_count, &length, err));
    sum.lhs = length;
    sum.rhs = x->shape.axes[decl->axis];
    KILN_TRY(kiln_expr_intern(ctx->pool, &sum, ctx->dim_count, &total, err));
    KILN_TRY(kiln_expr_canonical(ctx->pool, total, &total, err));
    KILN_TRY(kiln_expr_const(ctx->pool, decl->shape[decl->axis], &capacity, err));
    kiln_expr left = {.kind = KILN_EXPR_SUB, .lhs = capacity, .rhs = total};
    KILN_TRY(kiln_expr_intern(ctx->pool, &left, ctx->dim_count, &room, err));
    KILN_TRY(kiln_expr_canonical(ctx->pool, room, &room, err));
    char rows[128], what[400], advice[400];
    kiln_format_size(ctx, total, rows, sizeof rows);
    snprintf(what, sizeof what, "state '%s' has room for the rows appended: %s <= %lld", decl->name, rows,
             (long long)decl->shape[decl->axis]);
    snprintf(advice, sizeof advice, "Declare the relation '%s <= %lld' (or narrow the dims)", rows,
             (long long)decl->shape[decl->axis]);
    kiln_size_claim fits = {KILN_CLAIM_AT_LEAST, room, 0, 0};
    KILN_TRY(kiln_prove_size_claim(ctx, &fits, what, advice, err));
    return state_type(ctx, decl, total, out, err);
}

/* ---------------------------------------------------------------- kernel */

static kiln_status find_buffer(const kiln_kernel_call *call, const char *op, kiln_state_buffer **out, kiln_error *err)
{
    const kiln_node_attribute *name = kiln_attribute_find(call->attributes, call->attribute_count, "state");
    kiln_kernel_context *ctx = call->context;
    for (uint32_t i = 0; ctx && name && name->s && i < ctx->state_count; i++) {
        if (strcmp(ctx->states[i].decl->name, name->s) == 0) {
            *out = &ctx->states[i];
            return KILN_OK;
        }
    }
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: state '%s' is not held by this call's session", op,
                     name && name->s ? name->s : "?");
}

/* The shapes the session computed must be the state's: anything else is a broken invariant, never a write. */
static bool matches_state(const kiln_state_decl *decl, const kiln_tensor *t, int64_t rows)
{
    if (t->dtype != decl->dtype || t->rank != decl->rank)
        return false;
    for (uint32_t a = 0; a < decl->rank; a++)
        if (t->shape[a] != (a == decl->axis ? rows : decl->shape[a]))
            return false;
    return true;
}

/*
 * The result: the first `rows` rows of the state. In a session they stay
 * where they are, a view the session packs only for a reader that needs
 * them packed (runtime/state_view.h); called directly, they are copied.
 */
static void give_rows(const kiln_kernel_call *call, const kiln_state_buffer *buffer, int64_t rows)
{
    if (call->context) {
        call->context->view_of = buffer;
        call->context->view_rows = rows;
    } else {
        kiln_state_decl_copy_rows(buffer->decl, buffer->data, rows, call->output->data);
    }
    kiln_call_report_path(call, KILN_PATH_VIEW);
}

static kiln_status run_state_read(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_state_buffer *buffer;
    KILN_TRY(find_buffer(call, "state_read", &buffer, err));
    if (!matches_state(buffer->decl, call->output, buffer->length))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state_read: the result's shape is not state '%s''s",
                         buffer->decl->name);
    give_rows(call, buffer, buffer->length);
    return KILN_OK;
}

static kiln_status run_state_append(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_state_buffer *buffer;
    KILN_TRY(find_buffer(call, "state_append", &buffer, err));
    const kiln_state_decl *decl = buffer->decl;
    const kiln_tensor *x = call->inputs[0];
    int64_t rows = x->rank == decl->rank ? x->shape[decl->axis] : -1;
    int64_t capacity = decl->shape[decl->axis], past = buffer->length;
    if (buffer->appended)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state_append: state '%s' was appended to already in this run",
                         decl->name);
    if (rows < 0 || !matches_state(decl, x, rows))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state_append: x does not have state '%s''s shape",
                         decl->name);
    if (rows > capacity - past)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                         "state '%s' (%s = %lld) has room for %lld more rows of its %lld, not %lld: reset the state "
                         "or start a new sequence",
                         decl->name, decl->length_dim, (long long)past, (long long)(capacity - past),
                         (long long)capacity, (long long)rows);
    if (!matches_state(decl, call->output, past + rows))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "state_append: the result's shape is not state '%s''s",
                         decl->name);
    size_t outer, row_bytes;
    kiln_state_decl_geometry(decl, &outer, &row_bytes);
    size_t count = (size_t)rows;
    for (size_t o = 0; o < outer && count; o++)
        memcpy((uint8_t *)buffer->data + (o * (size_t)capacity + (size_t)past) * row_bytes,
               (const uint8_t *)x->data + o * count * row_bytes, count * row_bytes);
    buffer->pending = past + rows;
    buffer->appended = true;
    give_rows(call, buffer, past + rows);
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_attribute_spec state_attributes[] = {{"state", KILN_ATTRIBUTE_STRING}, {NULL, 0}};

static const kiln_op_def state_ops[] = {
    {.name = "state_read", .versions = {1, 1}, .inputs = {0, 0}, .attributes = state_attributes,
     .infer = infer_state_read, .run = run_state_read, .traits = {.state_access = KILN_STATE_READS}},
    {.name = "state_append", .versions = {1, 1}, .inputs = {1, 1}, .attributes = state_attributes,
     .infer = infer_state_append, .run = run_state_append, .traits = {.state_access = KILN_STATE_APPENDS}},
};

const kiln_op_family kiln_ops_state = KILN_OP_FAMILY(state_ops, "spec/ops/state.md");
