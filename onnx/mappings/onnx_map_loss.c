/*
 * onnx_map_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * as compositions of kiln ops, exact to the ONNX operator documentation
 * (opsets 12 and 13).
 *
 * For input x [N, C, d1..dk] (log-probabilities; SoftmaxCrossEntropyLoss
 * takes scores and applies log_softmax over axis 1 first), target t
 * [N, d1..dk] of class indices and optional per-class weight w [C]:
 *
 *   ignored[n, d] = (t[n, d] == ignore_index)       (only with ignore_index)
 *   safe[n, d]    = ignored ? 0 : t[n, d]            (an ignored target may lie
 *                                                     outside 0..C-1; it is never
 *                                                     read, only replaced)
 *   picked[n, d]  = x[n, safe[n, d], d]              gather_elements on axis 1
 *   weight[n, d]  = ignored ? 0 : w[safe[n, d]]      (w absent: 1)
 *   loss[n, d]    = ignored ? 0 : -picked * weight   (not -picked * 0: an
 *                                                     ignored entry is 0 even when
 *                                                     x holds inf or NaN there)
 *
 * reduction "none" returns loss; "sum" its sum; "mean" sum(loss) /
 * sum(weight) when there are weights or an ignore_index (every entry
 * ignored gives 0/0 = NaN, as in ONNX), else the mean of loss.
 */
#include <string.h>

#include "onnx_mapping.h"

/* Emit a kiln op with at most one INT or INTS attribute. */
static kiln_status emit(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                        const kiln_attribute *attribute, kiln_value *out)
{
    return onnx_node_emit(node, op, input_count, inputs, attribute ? 1 : 0, attribute, out);
}

static kiln_status emit2(onnx_node *node, const char *op, kiln_value a, kiln_value b, kiln_value *out)
{
    kiln_value pair[2] = {a, b};
    return emit(node, op, 2, pair, NULL, out);
}

static kiln_status emit_where(onnx_node *node, kiln_value condition, kiln_value when_true, kiln_value otherwise,
                              kiln_value *out)
{
    kiln_value triple[3] = {condition, when_true, otherwise};
    return emit(node, "where", 3, triple, NULL, out);
}

enum reduction { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN };

static kiln_status read_reduction(onnx_node *node, enum reduction *out)
{
    char text[16];
    const char *name = onnx_node_string(node, "reduction", "mean", text, sizeof text);
    if (strcmp(name, "none") == 0)
        *out = REDUCE_NONE;
    else if (strcmp(name, "sum") == 0)
        *out = REDUCE_SUM;
    else if (strcmp(name, "mean") == 0)
        *out = REDUCE_MEAN;
    else
        return onnx_node_unsupported(node, "attribute 'reduction' is \"%s\", not \"none\", \"sum\" or \"mean\"",
                                     name);
    return KILN_OK;
}

/*
 * The loss from log-probabilities `x`, the target (input 1) and the
 * optional weight (input 2), bound to output 0.
 */
static kiln_status negative_log_likelihood(onnx_node *node, kiln_value x)
{
    enum reduction reduction = REDUCE_MEAN;
    kiln_value target, weight = 0;
    kiln_dtype dtype, target_dtype;
    uint32_t rank, target_rank;
    bool has_weight = onnx_node_has_input(node, 2);
    const Onnx__AttributeProto *ignore = onnx_node_attribute(node, "ignore_index");
    kiln_status status = read_reduction(node, &reduction);
    if (status == KILN_OK)
        status = onnx_node_input(node, 1, &target);
    if (status == KILN_OK && has_weight)
        status = onnx_node_input(node, 2, &weight);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, target, &target_dtype, &target_rank, NULL);
    if (status != KILN_OK)
        return status;
    if (rank < 2 || target_rank + 1 != rank)
        return onnx_node_unsupported(node, "input of rank %u and target of rank %u: the target must have one axis "
                                           "less than an input of rank >= 2 (no class axis)",
                                     rank, target_rank);
    if (target_dtype != KILN_I32 && target_dtype != KILN_I64)
        return onnx_node_unsupported(node, "target has dtype %s, not i32 or i64", kiln_dtype_name(target_dtype));

    kiln_value ignored = 0, safe = target, zero_index, ignore_value;
    if (ignore) {
        status = onnx_node_scalar(node, target_dtype, (double)ignore->i, &ignore_value);
        if (status == KILN_OK && (ignore->i > (INT64_C(1) << 53) || ignore->i < -(INT64_C(1) << 53)))
            status = onnx_node_unsupported(node, "ignore_index %lld is beyond 2^53 in magnitude",
                                           (long long)ignore->i);
        if (status == KILN_OK)
            status = emit2(node, "eq", target, ignore_value, &ignored);
        if (status == KILN_OK)
            status = onnx_node_scalar(node, target_dtype, 0.0, &zero_index);
        if (status == KILN_OK)
            status = emit_where(node, ignored, zero_index, target, &safe);
        if (status != KILN_OK)
            return status;
    }

    /* picked = x[n, safe[n, d], d]: gather_elements on axis 1 of the target with a class axis added. */
    const int64_t class_axis = 1;
    kiln_attribute axes = {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = &class_axis, .count = 1};
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    kiln_value index, picked, loss, zero;
    status = emit(node, "unsqueeze", 1, &safe, &axes, &index);
    if (status == KILN_OK) {
        kiln_value pair[2] = {x, index};
        status = emit(node, "gather_elements", 2, pair, &axis, &picked);
    }
    if (status == KILN_OK)
        status = emit(node, "squeeze", 1, &picked, &axes, &picked);
    if (status == KILN_OK)
        status = emit(node, "neg", 1, &picked, NULL, &loss);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, 0.0, &zero);
    if (status != KILN_OK)
        return status;

    /* Per-entry weights: w[safe], 0 where ignored; without w, 1 (0 where ignored). */
    kiln_value entry_weight = 0;
    bool weighted = has_weight || ignore;
    if (has_weight) {
        kiln_attribute first = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
        kiln_value pair[2] = {weight, safe};
        status = emit(node, "gather", 2, pair, &first, &entry_weight);
        if (status == KILN_OK)
            status = emit2(node, "mul", loss, entry_weight, &loss);
        if (status == KILN_OK && ignore)
            status = emit_where(node, ignored, zero, entry_weight, &entry_weight);
    } else if (ignore) {
        kiln_value one;
        status = onnx_node_scalar(node, dtype, 1.0, &one);
        if (status == KILN_OK)
            status = emit_where(node, ignored, zero, one, &entry_weight);
    }
    if (status == KILN_OK && ignore)
        status = emit_where(node, ignored, zero, loss, &loss);
    if (status != KILN_OK)
        return status;

    /* Reductions over every axis (no axes attribute), to a scalar. */
    kiln_attribute flat = {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 0};
    kiln_value total, count;
    switch (reduction) {
    case REDUCE_NONE: break;
    case REDUCE_SUM: status = emit(node, "reduce_sum", 1, &loss, &flat, &loss); break;
    case REDUCE_MEAN:
        if (!weighted) {
            status = emit(node, "reduce_mean", 1, &loss, &flat, &loss);
            break;
        }
        status = emit(node, "reduce_sum", 1, &loss, &flat, &total);
        if (status == KILN_OK)
            status = emit(node, "reduce_sum", 1, &entry_weight, &flat, &count);
        if (status == KILN_OK)
            status = emit2(node, "div", total, count, &loss);
        break;
    }
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, loss);
    return status;
}

kiln_status onnx_map_nll_loss(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = negative_log_likelihood(node, x);
    return status;
}

kiln_status onnx_map_softmax_cross_entropy(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value scores, log_prob;
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    kiln_status status = onnx_node_input(node, 0, &scores);
    if (status == KILN_OK)
        status = emit(node, "log_softmax", 1, &scores, &axis, &log_prob);
    if (status == KILN_OK)
        status = negative_log_likelihood(node, log_prob);
    if (status == KILN_OK && node->proto->n_output > 1 && node->proto->output[1][0])
        status = onnx_node_set_output(node, 1, log_prob);
    return status;
}
