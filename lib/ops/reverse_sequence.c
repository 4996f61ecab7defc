/*
 * reverse_sequence.c — reverse_sequence (reversing the first
 * sequence_lens[b] steps of each batch entry along the time axis): shape
 * rule and portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/reverse_sequence.md.
 * The lengths are data: each is checked before anything is written, and a
 * length outside 0..T fails the run naming the batch entry and the value.
 * Elements are moved bit for bit, so every dtype is taken and nothing is
 * computed.
 */
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "op_registry.h"
#include "size_claim.h"

static const kiln_attribute_spec reverse_sequence_attributes[] = {
    {"batch_axis", KILN_ATTRIBUTE_INT},
    {"time_axis", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

/* The node's time and batch axes: 0 and 1 in either order (ONNX's defaults: time 0, batch 1). */
static kiln_status read_axes(const char *label, const kiln_node_attribute *attributes, uint32_t count,
                             uint32_t *time_axis, uint32_t *batch_axis, kiln_error *err)
{
    int64_t time = kiln_attribute_int(attributes, count, "time_axis", 0);
    int64_t batch = kiln_attribute_int(attributes, count, "batch_axis", 1);
    if (time != 0 && time != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'time_axis' is %lld; expected 0 or 1", label,
                         (long long)time);
    if (batch != 0 && batch != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'batch_axis' is %lld; expected 0 or 1", label,
                         (long long)batch);
    if (time == batch)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attributes 'time_axis' and 'batch_axis' are both %lld; they must differ", label,
                         (long long)time);
    *time_axis = (uint32_t)time;
    *batch_axis = (uint32_t)batch;
    return KILN_OK;
}

static bool is_length_dtype(kiln_dtype dtype)
{
    return dtype == KILN_I64 || dtype == KILN_I32;
}

/* ------------------------------------------------------------ shape rule */

static kiln_status infer_reverse_sequence(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                          uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0], *lengths = inputs[1];
    (void)input_count;
    uint32_t time_axis, batch_axis;
    KILN_TRY(read_axes(ctx->node_label, ctx->attributes, ctx->attribute_count, &time_axis, &batch_axis, err));
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    if (x->shape.rank < 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: x has rank %u; reverse_sequence needs rank >= 2 (a time and a batch axis)",
                         ctx->node_label, x->shape.rank);
    if (!is_length_dtype(lengths->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: sequence_lens (input 1) has dtype %s; expected i64 or i32",
                         ctx->node_label, kiln_dtype_name(lengths->dtype));
    if (lengths->shape.rank != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: sequence_lens (input 1) must have rank 1, got rank %u",
                         ctx->node_label, lengths->shape.rank);
    char size[128], batch[128], what[320];
    kiln_format_size(ctx, lengths->shape.axes[0], size, sizeof size);
    kiln_format_size(ctx, x->shape.axes[batch_axis], batch, sizeof batch);
    snprintf(what, sizeof what, "sequence_lens (input 1) size %s equals x axis %u (batch_axis) size %s", size,
             batch_axis, batch);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, lengths->shape.axes[0], x->shape.axes[batch_axis], 0};
    KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Use the same dim (or the same constant) for both sizes",
                                   err));
    out->dtype = x->dtype;
    out->shape = x->shape;
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "reverse_sequence: operands do not match the op's shape rule");
}

static int64_t length_at(const kiln_tensor *t, int64_t i)
{
    return t->dtype == KILN_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

static kiln_status run_reverse_sequence(const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count != 2)
        return mismatch(err);
    const kiln_tensor *x = call->inputs[0], *lengths = call->inputs[1];
    kiln_tensor *out = call->output;
    uint32_t time_axis, batch_axis;
    if (read_axes("reverse_sequence", call->attributes, call->attribute_count, &time_axis, &batch_axis, err) !=
        KILN_OK)
        return mismatch(err);
    if (x->rank < 2 || out->dtype != x->dtype || out->rank != x->rank || !is_length_dtype(lengths->dtype) ||
        lengths->rank != 1 || lengths->shape[0] != x->shape[batch_axis])
        return mismatch(err);
    for (uint32_t i = 0; i < x->rank; i++)
        if (out->shape[i] != x->shape[i])
            return mismatch(err);
    int64_t steps = x->shape[time_axis], batches = x->shape[batch_axis];
    /* Every length is checked before anything is written. */
    for (int64_t b = 0; b < batches; b++) {
        int64_t length = length_at(lengths, b);
        if (length < 0 || length > steps)
            return kiln_fail(err, KILN_ERR_RUNTIME,
                             "reverse_sequence: sequence_lens[%lld] = %lld is outside 0..%lld (the time axis %u size)",
                             (long long)b, (long long)length, (long long)steps, time_axis);
    }
    if (x->element_count == 0)
        return KILN_OK;
    /* x is [outer0, outer1, inner] with the time and batch axes as axes 0 and 1 in some order. */
    size_t width = kiln_dtype_size(x->dtype);
    uint64_t inner = x->element_count / ((uint64_t)steps * (uint64_t)batches);
    size_t row = (size_t)inner * width;
    uint64_t time_stride = time_axis == 0 ? (uint64_t)batches * inner : inner;
    uint64_t batch_stride = batch_axis == 0 ? (uint64_t)steps * inner : inner;
    const uint8_t *from = x->data;
    uint8_t *to = out->data;
    for (int64_t b = 0; b < batches; b++) {
        int64_t length = length_at(lengths, b);
        for (int64_t t = 0; t < steps; t++) {
            int64_t source = t < length ? length - 1 - t : t;
            uint64_t target_at = (uint64_t)b * batch_stride + (uint64_t)t * time_stride;
            uint64_t source_at = (uint64_t)b * batch_stride + (uint64_t)source * time_stride;
            memcpy(to + target_at * width, from + source_at * width, row);
        }
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def reverse_sequence_ops[] = {
    {.name = "reverse_sequence", .versions = {1, 1}, .inputs = {2, 2}, .attributes = reverse_sequence_attributes,
     .infer = infer_reverse_sequence, .run = run_reverse_sequence},
};

const kiln_op_family kiln_ops_reverse_sequence = KILN_OP_FAMILY(reverse_sequence_ops, "spec/ops/reverse_sequence.md");
