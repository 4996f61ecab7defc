/*
 * max_unpool.c — max_unpool (placing each element of a pooled tensor
 * at the flat output position its index gives, zeros elsewhere): shape rule
 * and portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/max_unpool.md. The
 * output shape is static: the inverse of the pooling window (shared with
 * conv_transpose through window.h) or the `output_shape` attribute. The
 * indices are data: each is checked before anything is written, and one
 * outside the output fails the run naming its position and value.
 * Elements are moved bit for bit, so every dtype is taken.
 */
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "index_range.h"
#include "op_registry.h"
#include "size_claim.h"
#include "window.h"

static const kiln_attribute_spec max_unpool_attributes[] = {
    {"kernel_shape", KILN_ATTRIBUTE_INTS},
    {"output_shape", KILN_ATTRIBUTE_INTS},
    {"pads", KILN_ATTRIBUTE_INTS},
    {"strides", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/*
 * The window of a node over `spatial` axes: kernel_shape (required),
 * strides and pads, read by window.c as conv_transpose's are (its output
 * size is the same s * (in - 1) + k - pads). max_unpool's own output_shape
 * is a whole shape, not conv_transpose's spatial one, so it is not passed.
 */
static kiln_status read_window(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                               uint32_t spatial, kiln_window *w, kiln_error *err)
{
    const kiln_node_attribute *kernel = kiln_attribute_find(attributes, count, "kernel_shape");
    if (!kernel)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'kernel_shape' is required", label);
    if (kernel->count != spatial)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attribute 'kernel_shape' has %u entries; it needs one per spatial axis (%u)", label,
                         kernel->count, spatial);
    memset(w, 0, sizeof *w);
    w->kind = KILN_WINDOW_CONV_TRANSPOSE;
    w->spatial = spatial;
    for (uint32_t i = 0; i < spatial; i++)
        w->kernel[i] = kernel->ints[i];
    kiln_node_attribute window_attributes[4];
    uint32_t window_count = 0;
    for (uint32_t i = 0; i < count && window_count < 4; i++)
        if (strcmp(attributes[i].name, "output_shape") != 0)
            window_attributes[window_count++] = attributes[i];
    char why[256];
    if (!kiln_window_resolve(window_attributes, window_count, w, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", label, why);
    return KILN_OK;
}

/* ------------------------------------------------------------ shape rule */

static kiln_status infer_max_unpool(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0], *indices = inputs[1];
    (void)input_count;
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    uint32_t rank = x->shape.rank;
    if (rank < 3 || rank > 2 + KILN_WINDOW_MAX_SPATIAL)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: x has rank %u; max_unpool needs [N, C, spatial...] with 1 to %d spatial axes",
                         ctx->node_label, rank, KILN_WINDOW_MAX_SPATIAL);
    if (indices->dtype != KILN_I64)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices (input 1) have dtype %s; expected i64",
                         ctx->node_label, kiln_dtype_name(indices->dtype));
    if (indices->shape.rank != rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices (input 1) have rank %u; x has rank %u",
                         ctx->node_label, indices->shape.rank, rank);
    for (uint32_t axis = 0; axis < rank; axis++) {
        char a[128], b[128], what[400];
        kiln_format_size(ctx, indices->shape.axes[axis], a, sizeof a);
        kiln_format_size(ctx, x->shape.axes[axis], b, sizeof b);
        snprintf(what, sizeof what, "indices (input 1) axis %u size %s equals x axis %u size %s", axis, a, axis, b);
        kiln_size_claim claim = {KILN_CLAIM_EQUAL, indices->shape.axes[axis], x->shape.axes[axis], 0};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Give indices the shape of x (one index per element)",
                                       err));
    }
    kiln_window w;
    KILN_TRY(read_window(ctx->node_label, ctx->attributes, ctx->attribute_count, rank - 2, &w, err));
    const kiln_node_attribute *target = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "output_shape");
    if (target) {
        if (target->count != rank)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: attribute 'output_shape' has %u entries; it needs one per axis of x (rank %u)",
                             ctx->node_label, target->count, rank);
        if (kiln_attribute_find(ctx->attributes, ctx->attribute_count, "pads"))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: attribute 'pads' cannot be given with 'output_shape' (where the pads would go is "
                             "not defined)",
                             ctx->node_label);
        for (uint32_t axis = 0; axis < rank; axis++)
            if (target->ints[axis] < 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: output_shape[%u] = %lld is negative",
                                 ctx->node_label, axis, (long long)target->ints[axis]);
    }
    /* The index space: [N, C, (in - 1) * s + k - pads ...]. */
    kiln_value_type space = {.dtype = x->dtype, .shape = {.rank = rank}};
    space.shape.axes[0] = x->shape.axes[0];
    space.shape.axes[1] = x->shape.axes[1];
    for (uint32_t i = 0; i < rank - 2; i++)
        KILN_TRY(kiln_window_infer_size(ctx, &w, i, x->shape.axes[i + 2], &space.shape.axes[i + 2], err));
    *out = space;
    if (!target)
        return KILN_OK;
    for (uint32_t axis = 0; axis < rank; axis++) {
        int64_t size = target->ints[axis];
        KILN_TRY(kiln_expr_const(ctx->pool, size, &out->shape.axes[axis], err));
        /* Every position of the index space must exist in the output: output_shape[axis] - space >= 0. */
        uint32_t room;
        kiln_expr difference = {.kind = KILN_EXPR_SUB, .lhs = out->shape.axes[axis], .rhs = space.shape.axes[axis]};
        KILN_TRY(kiln_expr_intern(ctx->pool, &difference, ctx->dim_count, &room, err));
        char inferred[128], what[320];
        kiln_format_size(ctx, space.shape.axes[axis], inferred, sizeof inferred);
        snprintf(what, sizeof what, "output_shape[%u] = %lld is at least the unpooled size %s", axis,
                 (long long)size, inferred);
        kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, room, 0, 0};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Give an output_shape no smaller than the unpooled shape",
                                       err));
    }
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "max_unpool: operands do not match the op's shape rule");
}


static kiln_status run_max_unpool(const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count != 2)
        return mismatch(err);
    const kiln_tensor *x = call->inputs[0], *indices = call->inputs[1];
    kiln_tensor *out = call->output;
    if (out->dtype != x->dtype || indices->dtype != KILN_I64 || indices->rank != x->rank ||
        indices->element_count != x->element_count)
        return mismatch(err);
    for (uint32_t i = 0; i < x->rank; i++)
        if (indices->shape[i] != x->shape[i])
            return mismatch(err);
    /* The index space [N, C, (in - 1) * s + k - pads ...], and the output: that, or output_shape around it. */
    kiln_window w;
    if (x->rank < 3 || x->rank > 2 + KILN_WINDOW_MAX_SPATIAL || out->rank != x->rank ||
        read_window("max_unpool", call->attributes, call->attribute_count, x->rank - 2, &w, err) != KILN_OK)
        return mismatch(err);
    const kiln_node_attribute *target = kiln_attribute_find(call->attributes, call->attribute_count, "output_shape");
    int64_t space[KILN_MAX_RANK];
    uint64_t space_count = 1;
    for (uint32_t axis = 0; axis < x->rank; axis++) {
        int64_t pad_begin, pad_end;
        space[axis] = x->shape[axis];
        if (axis >= 2 && !kiln_window_extent(&w, axis - 2, x->shape[axis], &space[axis], &pad_begin, &pad_end))
            return mismatch(err);
        int64_t want = target ? (target->count == x->rank ? target->ints[axis] : -1) : space[axis];
        if (space[axis] < 0 || out->shape[axis] != want || want < space[axis])
            return mismatch(err);
        space_count *= (uint64_t)space[axis]; /* <= the output's element count: no overflow */
    }
    const int64_t *at = indices->data;
    /* Every index is checked before anything is written. */
    for (uint64_t i = 0; i < indices->element_count; i++)
        if (at[i] < 0 || (uint64_t)at[i] >= space_count) {
            char position[160];
            kiln_format_position(i, indices->rank, indices->shape, position, sizeof position);
            return kiln_fail(err, KILN_ERR_RUNTIME,
                             "max_unpool: index %lld at indices position %s is outside 0..%lld (the unpooled "
                             "tensor has %llu elements)",
                             (long long)at[i], position, (long long)space_count - 1, (unsigned long long)space_count);
        }
    if (out->byte_size)
        memset(out->data, 0, out->byte_size); /* every dtype's zero is all zero bytes */
    size_t width = kiln_dtype_size(x->dtype);
    for (uint64_t i = 0; i < x->element_count; i++) {
        /* The index's position in the index space, at the same position in the output. */
        uint64_t flat = (uint64_t)at[i], offset = 0, stride = 1;
        for (uint32_t axis = x->rank; axis-- > 0;) {
            offset += (flat % (uint64_t)space[axis]) * stride;
            flat /= (uint64_t)space[axis];
            stride *= (uint64_t)out->shape[axis];
        }
        memcpy((uint8_t *)out->data + offset * width, (const uint8_t *)x->data + i * width, width);
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def max_unpool_ops[] = {
    {.name = "max_unpool", .versions = {1, 1}, .inputs = {2, 2}, .attributes = max_unpool_attributes,
     .infer = infer_max_unpool, .run = run_max_unpool},
};

const kiln_op_family kiln_ops_max_unpool = KILN_OP_FAMILY(max_unpool_ops, "spec/ops/max_unpool.md");
