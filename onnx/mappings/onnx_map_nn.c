/*
 * onnx_map_nn.c — neural-network mappings (declared in onnx_mapping.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_mapping.h"
#include "onnx_model.h"

/*
 * The extreme a ReduceMax (`largest`) or ReduceMin over no element gives
 * from opset 18: -inf (+inf) for floats, the dtype's smallest (largest)
 * value for integers, as its bytes in `bytes`. @return false for another dtype.
 */
static bool empty_extreme(kiln_dtype dtype, bool largest, unsigned char bytes[8])
{
    union {
        unsigned char all[8];
        float f32;
        double f64;
        uint16_t half;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } v = {0};
    switch (dtype) {
    case KILN_F32: v.f32 = largest ? -INFINITY : INFINITY; break;
    case KILN_F64: v.f64 = largest ? -INFINITY : INFINITY; break;
    case KILN_F16: v.half = largest ? 0xFC00 : 0x7C00; break;
    case KILN_BF16: v.half = largest ? 0xFF80 : 0x7F80; break;
    case KILN_I8: v.i8 = largest ? INT8_MIN : INT8_MAX; break;
    case KILN_I16: v.i16 = largest ? INT16_MIN : INT16_MAX; break;
    case KILN_I32: v.i32 = largest ? INT32_MIN : INT32_MAX; break;
    case KILN_I64: v.i64 = largest ? INT64_MIN : INT64_MAX; break;
    case KILN_U8: v.u8 = largest ? 0 : UINT8_MAX; break;
    case KILN_U16: v.u16 = largest ? 0 : UINT16_MAX; break;
    case KILN_U32: v.u32 = largest ? 0 : UINT32_MAX; break;
    case KILN_U64: v.u64 = largest ? 0 : UINT64_MAX; break;
    default: return false;
    }
    memcpy(bytes, &v, 8);
    return true;
}

/*
 * ReduceMax and ReduceMin from opset 18 over an axis of constant size 0:
 * ONNX defines the result (the extreme of empty_extreme), where kiln's
 * reduce_max and reduce_min have no value and refuse an empty axis. The
 * result holds no element of x, so it is a constant of the reduced shape
 * (every size constant; otherwise kiln's refusal stands).
 * @return true if the node was so bound (or a failure recorded in *status).
 */
static bool reduce_empty_extreme(onnx_node *node, const char *kiln_op, kiln_value x, const int64_t *axes,
                                 uint32_t count, bool keepdims, kiln_status *status)
{
    bool largest = strcmp(kiln_op, "reduce_max") == 0;
    if ((!largest && strcmp(kiln_op, "reduce_min") != 0) || node->opset < 18)
        return false;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    if (onnx_node_type(node, x, &dtype, &rank, sizes) != KILN_OK)
        return false;
    bool reduced[KILN_MAX_RANK] = {false}, empty = false;
    for (uint32_t a = 0; a < rank; a++) {
        if (sizes[a] < 0)
            return false;
        reduced[a] = count == 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= (int64_t)rank)
            return false; /* kiln's rule reports the axis */
        reduced[a] = true;
    }
    for (uint32_t a = 0; a < rank; a++)
        empty = empty || (reduced[a] && sizes[a] == 0);
    unsigned char bytes[8];
    if (!empty || !empty_extreme(dtype, largest, bytes))
        return false;
    int64_t shape[KILN_MAX_RANK];
    uint32_t out_rank = 0;
    for (uint32_t a = 0; a < rank; a++)
        if (!reduced[a] || keepdims)
            shape[out_rank++] = reduced[a] ? 1 : sizes[a];
    kiln_tensor *t;
    *status = kiln_tensor_new(dtype, out_rank, shape, &t, node->err);
    if (*status != KILN_OK)
        return true;
    size_t width = kiln_dtype_size(dtype);
    unsigned char *data = kiln_tensor_data(t);
    for (uint64_t e = 0; e < kiln_tensor_element_count(t); e++)
        memcpy(data + e * width, bytes, width);
    *status = onnx_node_set_constant_output(node, 0, t);
    return true;
}

/*
 * ReduceX: axes as an attribute, or as input 1 with noop_with_empty_axes
 * (ReduceSum from opset 13, the other nine from opset 18). An absent or
 * empty axes input reduces every axis, or with noop_with_empty_axes = 1
 * none (identity).
 */
kiln_status onnx_map_reduce(onnx_node *node, const char *kiln_op)
{
    int64_t axes_input_from = strcmp(node->proto->op_type, "ReduceSum") == 0 ? 13 : 18;
    kiln_value x;
    int64_t axes[KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_map_ints_operand(node, "axes", axes_input_from, 1, axes, KILN_MAX_RANK, &count, &present);
    if (status != KILN_OK)
        return status;
    if (node->opset >= axes_input_from && (!present || count == 0) &&
        onnx_node_int(node, "noop_with_empty_axes", 0) != 0)
        return onnx_map_emit_output(node, "identity", 1, &x, NULL);
    int64_t keepdims = onnx_node_int(node, "keepdims", 1);
    if (reduce_empty_extreme(node, kiln_op, x, axes, present ? count : 0, keepdims != 0, &status))
        return status;
    if (present && count)
        onnx_attrs_ints(&list, "axes", axes, count);
    onnx_attrs_int(&list, "keepdims", keepdims);
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/* Softmax, LogSoftmax, Hardmax. Before opset 13 they act on the input flattened to 2-D at `axis`. */
kiln_status onnx_map_softmax(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status != KILN_OK)
        return status;
    if (node->opset >= 13) {
        onnx_attrs_int(&list, "axis", onnx_node_int(node, "axis", -1));
        return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    }
    int64_t axis = onnx_node_int(node, "axis", 1);
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    if (normalized == (int64_t)rank - 1) {
        /* Flattening at the last axis leaves that axis alone: the same as acting on it. */
        onnx_attrs_int(&list, "axis", -1);
        return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    }
    for (uint32_t a = 0; a < rank; a++)
        if (sizes[a] < 0)
            return onnx_node_unsupported(node, "opset %lld %s over flattened axes %lld.. of a symbolic shape",
                                         (long long)node->opset, node->proto->op_type, (long long)normalized);
    kiln_value flat, y;
    onnx_attrs_int(&list, "axis", normalized);
    status = onnx_node_emit(node, "flatten", 1, &x, list.count, list.items, &flat);
    list.items[0].i = -1;
    if (status == KILN_OK)
        status = onnx_node_emit(node, kiln_op, 1, &flat, list.count, list.items, &y);
    onnx_attrs back = {0};
    onnx_attrs_ints(&back, "shape", sizes, rank);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "reshape", 1, &y, &back);
    return status;
}

kiln_status onnx_map_gemm(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"broadcast", NULL};
    kiln_value inputs[3];
    uint32_t count = onnx_map_present_inputs(node);
    onnx_attrs list = {0};
    kiln_status status = count < 2 || count > 3 ? onnx_node_unsupported(node, "Gemm takes 2 or 3 inputs, not %u", count)
                                                : onnx_map_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, skip);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, count, inputs, &list);
    return status;
}

kiln_status onnx_map_batch_norm(onnx_node *node, const char *kiln_op)
{
    /* Opsets 1..6 select test mode by is_test, default 0 (training: the batch's own statistics). */
    if (onnx_node_int(node, "training_mode", 0) != 0 || onnx_node_int(node, "is_test", node->opset < 7 ? 0 : 1) == 0)
        return onnx_node_unsupported(node, "training mode%s: kiln runs inference only",
                                     node->opset < 7 ? " (is_test = 0)" : "");
    if (onnx_node_int(node, "spatial", 1) != 1)
        return onnx_node_unsupported(node, "spatial = 0 is not supported");
    kiln_value inputs[5];
    onnx_attrs list = {0};
    kiln_status status = onnx_map_refuse_extra_outputs(node, 1);
    if (status == KILN_OK)
        status = onnx_map_inputs(node, 0, 5, inputs);
    onnx_attrs_float(&list, "epsilon", onnx_node_float(node, "epsilon", 1e-5));
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 5, inputs, &list);
    return status;
}

/*
 * GroupNormalization-18: scale and bias hold one value per group (opset
 * 21 makes them per channel, as kiln's group_norm and PyTorch take them).
 * Each is repeated over its group's channels (C constant: channel c is
 * in group c / (C / G)), and kiln's group_norm computes the rest: the statistics
 * of each group over its channels and positions are the same either way.
 */
kiln_status onnx_map_group_norm_18(onnx_node *node, const char *kiln_op)
{
    kiln_value operands[3];
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_status status = onnx_map_inputs(node, 0, 3, operands);
    if (status == KILN_OK)
        status = onnx_node_type(node, operands[0], &dtype, &rank, sizes);
    if (status != KILN_OK)
        return status;
    for (size_t i = 0; i < node->proto->n_attribute; i++) {
        const char *name = node->proto->attribute[i]->name ? node->proto->attribute[i]->name : "";
        if (strcmp(name, "num_groups") != 0 && strcmp(name, "epsilon") != 0)
            return onnx_node_unsupported(node, "attribute '%s' is not part of GroupNormalization-18", name);
    }
    const Onnx__AttributeProto *groups = onnx_node_attribute(node, "num_groups");
    if (!groups)
        return onnx_node_unsupported(node, "attribute 'num_groups' is required");
    if (rank < 3)
        return onnx_node_unsupported(node, "x has rank %u; GroupNormalization takes (N, C, ...) of rank 3 or more",
                                     rank);
    int64_t channels = sizes[1], g = groups->i;
    if (channels < 0)
        return onnx_node_unsupported(node, "the channel axis is symbolic: the per-group scale cannot be spread "
                                           "over its channels at import");
    if (g < 1 || g > channels || channels % g != 0)
        return onnx_node_unsupported(node, "num_groups %lld does not divide the %lld channels", (long long)g,
                                     (long long)channels);
    /* [G] -> [G, 1] -> [G, C/G] -> [C]: each group's value repeated over its channels, copied exactly. */
    int64_t spread[2] = {g, channels / g}, axis_1 = 1;
    for (uint32_t k = 1; k < 3 && status == KILN_OK; k++) {
        onnx_attrs unsqueeze = {0}, expand = {0}, reshape = {0};
        onnx_attrs_ints(&unsqueeze, "axes", &axis_1, 1);
        onnx_attrs_ints(&expand, "shape", spread, 2);
        onnx_attrs_ints(&reshape, "shape", &channels, 1);
        status = onnx_node_emit(node, "unsqueeze", 1, &operands[k], unsqueeze.count, unsqueeze.items, &operands[k]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "expand", 1, &operands[k], expand.count, expand.items, &operands[k]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "reshape", 1, &operands[k], reshape.count, reshape.items, &operands[k]);
    }
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    onnx_attrs_int(&list, "num_groups", g);
    onnx_attrs_float(&list, "epsilon", onnx_node_float(node, "epsilon", 1e-5));
    return onnx_map_emit_output(node, kiln_op, 3, operands, &list);
}

/*
 * LayerNormalization (opset 17). Its optional outputs Mean and InvStdDev
 * are the statistics over axes axis..rank-1, kept as size-1 axes:
 * reduce_mean(x) and rsqrt(reduce_mean((x - mean)^2) + epsilon).
 */
kiln_status onnx_map_layer_norm(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"stash_type", NULL};
    kiln_value inputs[3];
    uint32_t count = onnx_map_present_inputs(node);
    onnx_attrs list = {0};
    kiln_status status = onnx_map_refuse_extra_outputs(node, 3);
    if (status == KILN_OK)
        status = onnx_map_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, skip);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, count, inputs, &list);
    bool wants_mean = onnx_node_output_read(node, 1);
    bool wants_inv = onnx_node_output_read(node, 2);
    if (status != KILN_OK || (!wants_mean && !wants_inv))
        return status;
    kiln_dtype dtype;
    uint32_t rank;
    status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    int64_t axis = onnx_node_int(node, "axis", -1);
    int64_t first = axis < 0 ? axis + rank : axis;
    if (first < 0 || first >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    int64_t axes[KILN_MAX_RANK];
    for (int64_t a = first; a < (int64_t)rank; a++)
        axes[a - first] = a;
    onnx_attrs reduce = {0};
    onnx_attrs_ints(&reduce, "axes", axes, (uint32_t)(rank - first));
    onnx_attrs_int(&reduce, "keepdims", 1);
    kiln_value mean, centered, squared, variance = 0, epsilon = 0, shifted, inv;
    status = onnx_node_emit(node, "reduce_mean", 1, inputs, reduce.count, reduce.items, &mean);
    if (status == KILN_OK && wants_mean)
        status = onnx_node_set_output(node, 1, mean);
    if (status != KILN_OK || !wants_inv)
        return status;
    kiln_value pair[2] = {inputs[0], mean};
    status = onnx_node_emit(node, "sub", 2, pair, 0, NULL, &centered);
    pair[0] = pair[1] = centered;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &squared);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "reduce_mean", 1, &squared, reduce.count, reduce.items, &variance);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "epsilon", 1e-5), &epsilon);
    pair[0] = variance;
    pair[1] = epsilon;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &shifted);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "rsqrt", 1, &shifted, 0, NULL, &inv);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 2, inv);
    return status;
}

/*
 * LRN: y = x / (bias + alpha / size * square_sum)^beta, where square_sum
 * sums x^2 over the channels c - floor((size-1)/2) .. c + ceil((size-1)/2)
 * that exist. The window sum is lp_pool with p = 1 (a sum of absolute
 * values, exact for squares) on the squares with a unit axis in front of
 * the channels, so that they become the first pooled axis, zero-padded.
 */
kiln_status onnx_map_lrn(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x, squares, stacked, sums;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    int64_t size = onnx_node_int(node, "size", 0);
    if (!onnx_node_attribute(node, "size") || size < 1 || size > (INT64_C(1) << 24))
        return onnx_node_unsupported(node, "attribute 'size' must be given, in 1..16777216, got %lld",
                                     (long long)size);
    if (rank < 2 || rank > 4)
        return onnx_node_unsupported(node, "input of rank %u: LRN is mapped for ranks 2..4", rank);
    int64_t channel_axis = 1, kernel[3] = {size, 1, 1}, pads[6] = {0};
    uint32_t pooled = rank - 1; /* the channels and the axes after them */
    pads[0] = (size - 1) / 2;
    pads[pooled] = size / 2; /* ceil((size - 1) / 2) */
    kiln_value pair[2] = {x, x};
    status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &squares);
    onnx_attrs unsqueeze = {0}, pool = {0};
    onnx_attrs_ints(&unsqueeze, "axes", &channel_axis, 1);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "unsqueeze", 1, &squares, unsqueeze.count, unsqueeze.items, &stacked);
    onnx_attrs_ints(&pool, "kernel_shape", kernel, pooled);
    onnx_attrs_ints(&pool, "pads", pads, 2 * pooled);
    onnx_attrs_int(&pool, "p", 1);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "lp_pool", 1, &stacked, pool.count, pool.items, &sums);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "squeeze", 1, &sums, unsqueeze.count, unsqueeze.items, &sums);
    kiln_value scale = 0, bias = 0, beta = 0, base = 0;
    double alpha = onnx_node_float(node, "alpha", 1e-4);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, alpha / (double)size, &scale);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "bias", 1.0), &bias);
    if (status == KILN_OK)
        status = onnx_node_scalar(node, dtype, onnx_node_float(node, "beta", 0.75), &beta);
    pair[0] = sums, pair[1] = scale;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &base);
    pair[0] = bias, pair[1] = base;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &base);
    pair[0] = base, pair[1] = beta;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "pow", 2, pair, 0, NULL, &base);
    pair[0] = x, pair[1] = base;
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "div", 2, pair, NULL);
    return status;
}

/*
 * GlobalAveragePool / GlobalMaxPool: kiln's global pools (one window per
 * [n, c] plane, with the oneDNN fast path); rank < 3 has no plane.
 */
kiln_status onnx_map_global_pool(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    if (rank < 3)
        return onnx_node_unsupported(node, "input of rank %u: global pooling needs rank >= 3", rank);
    onnx_attrs list = {0};
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * TopK: kiln has one op per result, making the same selection: top_k for
 * the values (output 0), top_k_indices for the positions (output 1); only
 * the outputs the graph uses are emitted. K is an attribute before opset
 * 10, then a constant one-element input.
 */
kiln_status onnx_map_topk(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x;
    int64_t k = onnx_node_int(node, "k", -1);
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && node->opset >= 10) {
        uint32_t count;
        status = onnx_node_constant_ints(node, 1, &k, 1, &count);
        if (status == KILN_OK && count != 1)
            return onnx_node_unsupported(node, "K has %u elements, not one", count);
    }
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    onnx_attrs_int(&list, "k", k);
    onnx_attrs_int(&list, "axis", onnx_node_int(node, "axis", -1));
    onnx_attrs_int(&list, "largest", onnx_node_int(node, "largest", 1));
    onnx_attrs_int(&list, "sorted", onnx_node_int(node, "sorted", 1));
    static const char *const ops[2] = {"top_k", "top_k_indices"};
    for (uint32_t o = 0; o < 2 && o < (uint32_t)node->proto->n_output; o++) {
        if (!onnx_node_output_read(node, o))
            continue;
        kiln_value result;
        status = onnx_node_emit(node, ops[o], 1, &x, list.count, list.items, &result);
        if (status == KILN_OK)
            status = onnx_node_set_output(node, o, result);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/*
 * ONNX RNN, GRU and LSTM: one kiln node per output used — Y (`rnn`, `gru`,
 * `lstm`), Y_h (`*_last_hidden`), Y_c (`lstm_last_cell`) — each with the
 * same operands and attributes (spec/ops/recurrent.md). kiln's optional
 * operands are positional without gaps (b, initial_h, initial_c, p), so an
 * absent one before a present one becomes zeros, which is what ONNX means
 * by its absence. sequence_lens is accepted only when it is a constant
 * equal to the (static) sequence length for every batch row.
 */
kiln_status onnx_map_recurrent(onnx_node *node, const char *kiln_op)
{
    const bool lstm = strcmp(kiln_op, "lstm") == 0;
    const uint32_t gates = lstm ? 4 : strcmp(kiln_op, "gru") == 0 ? 3 : 1;
    const uint32_t per_direction = lstm ? 3 : gates == 3 ? 2 : 1;
    kiln_value operands[7];
    kiln_dtype dtype;
    uint32_t x_rank, r_rank;
    int64_t x_sizes[KILN_MAX_RANK], r_sizes[KILN_MAX_RANK];
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; i < 3 && status == KILN_OK; i++)
        status = onnx_node_input(node, i, &operands[i]);
    if (status == KILN_OK)
        status = onnx_node_type(node, operands[0], &dtype, &x_rank, x_sizes);
    if (status == KILN_OK)
        status = onnx_node_type(node, operands[2], &dtype, &r_rank, r_sizes);
    if (status != KILN_OK)
        return status;
    if (x_rank != 3 || r_rank != 3 || r_sizes[0] < 1 || r_sizes[2] < 1)
        return onnx_node_unsupported(node, "X of rank %u and R of rank %u with static sizes are expected", x_rank,
                                     r_rank);
    int64_t layout = onnx_node_int(node, "layout", 0), directions = r_sizes[0];
    int64_t hidden = onnx_node_int(node, "hidden_size", r_sizes[2]);
    int64_t seq = x_sizes[layout == 1 ? 1 : 0], batch = x_sizes[layout == 1 ? 0 : 1];
    if (onnx_node_has_input(node, 4)) {
        int64_t lengths[4096];
        uint32_t count;
        status = onnx_node_constant_ints(node, 4, lengths, 4096, &count);
        if (status != KILN_OK)
            return status;
        if (batch >= 0 && count != (uint64_t)batch)
            return onnx_node_unsupported(node, "sequence_lens has %u entries for a batch of %lld", count,
                                         (long long)batch);
        for (uint32_t i = 0; i < count; i++)
            if (seq < 0 || lengths[i] != seq)
                return onnx_node_unsupported(node, "sequence_lens[%u] = %lld is not the full sequence length %s%lld "
                                                   "(kiln runs every sequence of the batch to the end)",
                                             i, (long long)lengths[i], seq < 0 ? "(symbolic) " : "",
                                             (long long)seq);
    }
    /* The operands after R, from ONNX's input positions; the last present one decides how many. */
    static const uint32_t onnx_index[7] = {0, 1, 2, 3, 5, 6, 7};
    uint32_t count = 3, last = lstm ? 7 : 5;
    for (uint32_t k = 3; k < last; k++)
        if (onnx_node_has_input(node, onnx_index[k]))
            count = k + 1;
    for (uint32_t k = 3; k < count && status == KILN_OK; k++) {
        if (onnx_node_has_input(node, onnx_index[k])) {
            status = onnx_node_input(node, onnx_index[k], &operands[k]);
            continue;
        }
        /* Absent before a present one: zeros of its shape (b, or a state of a static batch). */
        int64_t shape[3] = {directions, 2 * gates * hidden, 0};
        uint32_t rank = 2;
        if (k != 3 && batch < 0) {
            /* A symbolic batch: expand_to of a zero to the state's shape text. */
            char batch_text[128], size_text[3][160], text[ONNX_ATTRS_TEXT_MAX];
            kiln_value zero;
            status = onnx_node_axis_text(node, operands[0], layout == 1 ? 0 : 1, batch_text, sizeof batch_text);
            snprintf(size_text[0], sizeof size_text[0], "%lld", (long long)directions);
            snprintf(size_text[1], sizeof size_text[1], "%s", batch_text);
            snprintf(size_text[2], sizeof size_text[2], "%lld", (long long)hidden);
            const char *sizes[3] = {size_text[layout == 1 ? 1 : 0], size_text[layout == 1 ? 0 : 1], size_text[2]};
            onnx_attrs state = {0};
            if (status == KILN_OK && (!onnx_shape_text(sizes, 3, text, sizeof text) ||
                                      !onnx_attrs_string(&state, "shape", text, strlen(text))))
                return onnx_node_unsupported(node, "the shape of input %u is too long to write", onnx_index[k]);
            if (status == KILN_OK)
                status = onnx_node_scalar(node, dtype, 0, &zero);
            if (status == KILN_OK)
                status = onnx_node_emit(node, "expand_to", 1, &zero, state.count, state.items, &operands[k]);
            continue;
        }
        if (k != 3) {
            rank = 3;
            shape[0] = layout == 1 ? batch : directions;
            shape[1] = layout == 1 ? directions : batch;
            shape[2] = hidden;
        }
        onnx_attrs zeros = {0};
        const char *name = kiln_dtype_name(dtype);
        onnx_attrs_ints(&zeros, "shape", shape, rank);
        onnx_attrs_string(&zeros, "dtype", name, strlen(name));
        status = onnx_node_emit(node, "constant_of_shape", 0, NULL, zeros.count, zeros.items, &operands[k]);
    }
    if (status != KILN_OK)
        return status;

    onnx_attrs list = {0};
    char text[ONNX_ATTRS_TEXT_MAX] = "", direction[32];
    const Onnx__AttributeProto *activations = onnx_node_attribute(node, "activations");
    for (size_t i = 0; activations && i < activations->n_strings; i++) {
        char name[16];
        size_t length = activations->strings[i].len, used = strlen(text);
        for (size_t c = 0; c < length && c < sizeof name - 1; c++)
            name[c] = (char)tolower(activations->strings[i].data[c]);
        name[length < sizeof name - 1 ? length : sizeof name - 1] = '\0';
        if (length >= sizeof name ||
            (strcmp(name, "sigmoid") != 0 && strcmp(name, "tanh") != 0 && strcmp(name, "relu") != 0))
            return onnx_node_unsupported(node, "activation '%.*s' (kiln's recurrent layers take Sigmoid, Tanh and "
                                               "Relu)",
                                         (int)(length > 32 ? 32 : length), (const char *)activations->strings[i].data);
        if (i >= (size_t)(2 * per_direction))
            return onnx_node_unsupported(node, "%zu activations", activations->n_strings);
        snprintf(text + used, sizeof text - used, "%s%s", i ? "," : "", name);
    }
    if (text[0])
        onnx_attrs_string(&list, "activations", text, strlen(text));
    if (onnx_node_attribute(node, "clip"))
        onnx_attrs_float(&list, "clip", onnx_node_float(node, "clip", 0));
    const char *d = onnx_node_string(node, "direction", "forward", direction, sizeof direction);
    onnx_attrs_string(&list, "direction", d, strlen(d));
    onnx_attrs_int(&list, "hidden_size", hidden);
    onnx_attrs_int(&list, "layout", layout);
    if (gates == 3)
        onnx_attrs_int(&list, "linear_before_reset", onnx_node_int(node, "linear_before_reset", 0));
    if (lstm)
        onnx_attrs_int(&list, "input_forget", onnx_node_int(node, "input_forget", 0));

    char last_hidden[32], last_cell[32] = "lstm_last_cell";
    snprintf(last_hidden, sizeof last_hidden, "%s_last_hidden", kiln_op);
    const char *ops[3] = {kiln_op, last_hidden, last_cell};
    for (uint32_t o = 0; o < (lstm ? 3u : 2u) && o < (uint32_t)node->proto->n_output; o++) {
        if (!onnx_node_output_read(node, o))
            continue;
        kiln_value result;
        status = onnx_node_emit(node, ops[o], count, operands, list.count, list.items, &result);
        if (status == KILN_OK)
            status = onnx_node_set_output(node, o, result);
        if (status != KILN_OK)
            return status;
    }
    return KILN_OK;
}

/*
 * Conv, ConvTranspose and the windowed pools: kiln's ops take ONNX's
 * attribute names. MaxPool's storage_order only orders its Indices output,
 * which kiln does not produce (refused when the model asks for it).
 */
kiln_status onnx_map_window(onnx_node *node, const char *kiln_op)
{
    static const char *const skip[] = {"storage_order", NULL};
    kiln_value inputs[3];
    uint32_t count = onnx_map_present_inputs(node);
    onnx_attrs list = {0};
    kiln_status status = count < 1 || count > 3 ? onnx_node_unsupported(node, "%u inputs", count) : KILN_OK;
    /* LpPool has ceil_mode and dilations from opset 18 (kiln's lp_pool takes both): before, they are not its own. */
    static const char *const lp_pool_18[] = {"ceil_mode", "dilations", NULL};
    for (const char *const *name = lp_pool_18; status == KILN_OK && *name && node->opset < 18; name++)
        if (strcmp(kiln_op, "lp_pool") == 0 && onnx_node_attribute(node, *name))
            status = onnx_node_unsupported(node, "attribute '%s' is not part of LpPool at opset %lld (it is from "
                                                 "opset 18)",
                                           *name, (long long)node->opset);
    if (status == KILN_OK && onnx_node_output_read(node, 1))
        status = onnx_node_unsupported(node, "output 1 ('%s', the indices of the maxima) is not supported",
                                       node->proto->output[1]);
    if (status == KILN_OK)
        status = onnx_map_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, skip);
    kiln_dtype dtype = KILN_F32;
    uint32_t rank;
    if (status == KILN_OK && strcmp(kiln_op, "max_pool") == 0)
        status = onnx_node_type(node, inputs[0], &dtype, &rank, NULL);
    if (status != KILN_OK)
        return status;
    /*
     * Integer MaxPool (opset 12: i8, u8): the maximum of values a double
     * holds exactly is exact in double. A window with no input element
     * gives -inf, which the cast back refuses at run time.
     */
    bool widen = dtype == KILN_I8 || dtype == KILN_U8 || dtype == KILN_I16 || dtype == KILN_U16 ||
                 dtype == KILN_I32 || dtype == KILN_U32;
    if (!widen)
        return onnx_map_emit_output(node, kiln_op, count, inputs, &list);
    kiln_value pooled;
    status = onnx_map_cast_to(node, &inputs[0], KILN_F64);
    if (status == KILN_OK)
        status = onnx_node_emit(node, kiln_op, 1, inputs, list.count, list.items, &pooled);
    onnx_attrs back = {0};
    const char *name = kiln_dtype_name(dtype);
    onnx_attrs_string(&back, "to", name, strlen(name));
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "cast", 1, &pooled, &back);
    return status;
}

/* The target of a Resize: sizes (constants, or size texts when symbolic) or scales, one per axis. */
typedef struct resize_target {
    bool by_sizes, symbolic;
    uint32_t count;
    int64_t sizes[KILN_MAX_RANK];
    const char *texts[KILN_MAX_RANK];
    double scales[KILN_MAX_RANK];
    char axis_texts[KILN_MAX_RANK][64]; /* storage for the texts of axes Resize-18's axes leave alone */
} resize_target;

/* The target from the sizes input (constant or symbolic) or the scales (input, or Upsample-7's attribute). */
static kiln_status resize_read_target(onnx_node *node, bool legacy, resize_target *t)
{
    uint32_t scales_index = legacy ? 1 : 2, sizes_index = 3;
    kiln_status status = KILN_OK;
    if (!legacy && onnx_node_is_symbolic(node, sizes_index)) {
        /* Sizes computed from the input's (F.interpolate(x, size=input.shape[-2:])): resize_to, its
         * sizes a shape text over the dims (spec/onnx-import.md §3.1). */
        t->by_sizes = t->symbolic = true;
        status = onnx_node_symbolic_sizes(node, sizes_index, t->texts, KILN_MAX_RANK, &t->count);
    } else if (!legacy && onnx_node_has_input(node, sizes_index)) {
        t->by_sizes = true;
        status = onnx_node_constant_ints(node, sizes_index, t->sizes, KILN_MAX_RANK, &t->count);
    }
    if (status != KILN_OK)
        return status;
    /* Opset 11 requires a scales input and lets sizes be empty: the non-empty one is the target. */
    if (t->by_sizes && t->count) {
        if (onnx_node_has_input(node, scales_index)) {
            const kiln_tensor *scales;
            status = onnx_node_constant(node, scales_index, &scales);
            if (status != KILN_OK)
                return status;
            if (kiln_tensor_element_count(scales) != 0)
                return onnx_node_unsupported(node, "both scales and sizes are given");
        }
        return KILN_OK;
    }
    t->by_sizes = t->symbolic = false;
    if (node->opset < 9) {
        /* Upsample-7: the scales are an attribute. */
        const Onnx__AttributeProto *scales = onnx_node_attribute(node, "scales");
        if (!scales || scales->n_floats == 0 || scales->n_floats > KILN_MAX_RANK)
            return onnx_node_unsupported(node, "attribute 'scales' must hold 1 to %u values", KILN_MAX_RANK);
        t->count = (uint32_t)scales->n_floats;
        for (uint32_t i = 0; i < t->count; i++)
            t->scales[i] = scales->floats[i];
        return KILN_OK;
    }
    const kiln_tensor *scales;
    if (!onnx_node_has_input(node, scales_index))
        return onnx_node_unsupported(node, "neither scales nor sizes is given");
    status = onnx_node_constant(node, scales_index, &scales);
    if (status != KILN_OK)
        return status;
    uint64_t count = kiln_tensor_element_count(scales);
    if (kiln_tensor_dtype(scales) != KILN_F32 || count > KILN_MAX_RANK)
        return onnx_node_unsupported(node, "scales must be at most %u f32 values, not %llu of %s", KILN_MAX_RANK,
                                     (unsigned long long)count, kiln_dtype_name(kiln_tensor_dtype(scales)));
    t->count = (uint32_t)count;
    const float *values = kiln_tensor_const_data(scales);
    for (uint32_t i = 0; i < t->count; i++)
        t->scales[i] = values[i]; /* widened exactly; kiln reads the ratio the f32 spells */
    return KILN_OK;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/*
 * Resize-18's keep_aspect_ratio_policy not_larger / not_smaller over the
 * sizes of the listed axes (`axes`, `count` of them): ONNX takes one
 * scale for all of them, the smallest (largest) sizes[i] / in[i], and
 * the output size round(scale * in) (half up) on each. kiln's resize
 * reads that scale exactly as the ratio p/q and gives floor(in * p / q),
 * so the target becomes scales (p/q on the listed axes) when the two
 * sizes agree on every axis, and is refused naming the axis otherwise.
 */
static kiln_status resize_keep_aspect_ratio(onnx_node *node, const char *policy, const int64_t *in,
                                            const uint32_t *axes, resize_target *t)
{
    bool not_larger = strcmp(policy, "not_larger") == 0;
    if (!not_larger && strcmp(policy, "not_smaller") != 0)
        return onnx_node_unsupported(node, "attribute 'keep_aspect_ratio_policy' is \"%s\", not stretch, not_larger "
                                           "or not_smaller",
                                     policy);
    if (t->symbolic)
        return onnx_node_unsupported(node, "keep_aspect_ratio_policy %s with symbolic sizes: the common scale is "
                                           "not known at import",
                                     policy);
    uint32_t best = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        int64_t size = in[axes[i]];
        if (size < 0)
            return onnx_node_unsupported(node, "keep_aspect_ratio_policy %s over the symbolic input axis %u: the "
                                               "common scale is not known at import",
                                         policy, axes[i]);
        if (size == 0 || size > INT32_MAX || t->sizes[i] < 1 || t->sizes[i] > INT32_MAX)
            return onnx_node_unsupported(node, "keep_aspect_ratio_policy %s with sizes[%u] = %lld over an input axis "
                                               "of size %lld",
                                         policy, i, (long long)t->sizes[i], (long long)size);
        /* sizes[i] / in[i] against the best so far, cross-multiplied (each factor below 2^31). */
        int64_t here = t->sizes[i] * in[axes[best]], there = t->sizes[best] * size;
        if (not_larger ? here < there : here > there)
            best = i;
    }
    int64_t p = t->sizes[best], q = in[axes[best]], g = gcd64(p, q);
    p /= g;
    q /= g;
    for (uint32_t i = 0; i < t->count; i++) {
        int64_t size = in[axes[i]];
        int64_t rounded = (2 * p * size + q) / (2 * q), floored = p * size / q;
        if (rounded != floored)
            return onnx_node_unsupported(node, "keep_aspect_ratio_policy %s: axis %u of size %lld scaled by %lld/%lld "
                                               "is %lld in ONNX (rounded half up), kiln's resize gives %lld (floor)",
                                         policy, axes[i], (long long)size, (long long)p, (long long)q,
                                         (long long)rounded, (long long)floored);
        t->scales[i] = (double)p / (double)q;
    }
    t->by_sizes = false;
    return KILN_OK;
}

/*
 * Resize-18's axes: the target names only the listed axes. It becomes one
 * entry per axis of x: a scale of 1, or the axis's own size (its text
 * when symbolic, which makes the target a shape text for resize_to).
 */
static kiln_status resize_spread_axes(onnx_node *node, kiln_value x, uint32_t rank, const int64_t *in,
                                      const uint32_t *axes, resize_target *t)
{
    resize_target full = {.by_sizes = t->by_sizes, .symbolic = t->symbolic, .count = rank};
    bool listed[KILN_MAX_RANK] = {false};
    for (uint32_t i = 0; i < t->count; i++) {
        listed[axes[i]] = true;
        full.sizes[axes[i]] = t->sizes[i];
        full.texts[axes[i]] = t->texts[i];
        full.scales[axes[i]] = t->scales[i];
    }
    for (uint32_t a = 0; a < rank; a++) {
        if (listed[a])
            continue;
        full.scales[a] = 1.0;
        full.sizes[a] = in[a];
        full.symbolic = full.symbolic || (full.by_sizes && in[a] < 0);
    }
    if (full.symbolic)
        for (uint32_t a = 0; a < rank; a++) {
            if (listed[a] && t->symbolic)
                continue;
            if (listed[a])
                snprintf(full.axis_texts[a], sizeof full.axis_texts[a], "%lld", (long long)full.sizes[a]);
            else {
                kiln_status status = onnx_node_axis_text(node, x, a, full.axis_texts[a], sizeof full.axis_texts[a]);
                if (status != KILN_OK)
                    return status;
            }
            full.texts[a] = full.axis_texts[a];
        }
    *t = full;
    return KILN_OK;
}

/*
 * Resize-18's antialias = 1 widens the linear and cubic filters by 1 /
 * scale on an axis that is downscaled; kiln's resize has no such filter.
 * On an axis whose scale is at least 1 the widened filter is the plain
 * one (ONNX: "max(1, 1 / scale)"), so the node is taken when every scale
 * is provably at least 1, and refused naming the axis otherwise. Mode
 * nearest has no filter to widen.
 */
static kiln_status resize_antialias(onnx_node *node, const char *mode, kiln_value x, const int64_t *in,
                                    const resize_target *t)
{
    if (onnx_node_int(node, "antialias", 0) == 0 || strcmp(mode, "nearest") == 0)
        return KILN_OK;
    for (uint32_t a = 0; a < t->count; a++) {
        if (!t->by_sizes) {
            if (t->scales[a] < 1.0)
                return onnx_node_unsupported(node, "antialias = 1 downscales axis %u (scale %.17g): kiln's resize has "
                                                   "no antialiasing filter",
                                             a, t->scales[a]);
            continue;
        }
        if (!t->symbolic && in[a] >= 0) {
            if (t->sizes[a] < in[a])
                return onnx_node_unsupported(node, "antialias = 1 downscales axis %u (%lld to %lld): kiln's resize has "
                                                   "no antialiasing filter",
                                             a, (long long)in[a], (long long)t->sizes[a]);
            continue;
        }
        char own[64];
        kiln_status status = onnx_node_axis_text(node, x, a, own, sizeof own);
        if (status != KILN_OK)
            return status;
        char target[64];
        if (t->symbolic)
            snprintf(target, sizeof target, "%s", t->texts[a]);
        else
            snprintf(target, sizeof target, "%lld", (long long)t->sizes[a]);
        if (strcmp(own, target) != 0)
            return onnx_node_unsupported(node, "antialias = 1 resizes axis %u from %s to %s, which may downscale: "
                                               "kiln's resize has no antialiasing filter",
                                         a, own, target);
    }
    return KILN_OK;
}

/*
 * Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (opset 9: X, scales; opsets 7 and 8: the scales attribute). The scales
 * or sizes operand must be constant and becomes resize's attribute.
 * Opset 10 and Upsample define no coordinate transformation; nearest there
 * is ONNX's asymmetric floor rule. Linear Upsample and Resize-10 are
 * refused rather than guessed. Resize-18 adds `axes` (the target names
 * only those axes), `keep_aspect_ratio_policy` (one scale for the sizes
 * of all of them) and `antialias` (a wider filter when downscaling),
 * each read by a helper above.
 */
kiln_status onnx_map_resize(onnx_node *node, const char *kiln_op)
{
    bool legacy = node->opset < 11 || strcmp(node->proto->op_type, "Upsample") == 0;
    char mode_text[32], coordinate_text[32], nearest_text[32], policy_text[32];
    const char *mode = onnx_node_string(node, "mode", "nearest", mode_text, sizeof mode_text);
    const char *coordinate = onnx_node_string(node, "coordinate_transformation_mode", "half_pixel",
                                              coordinate_text, sizeof coordinate_text);
    const char *nearest = onnx_node_string(node, "nearest_mode", "round_prefer_floor", nearest_text,
                                           sizeof nearest_text);
    const char *policy = onnx_node_string(node, "keep_aspect_ratio_policy", "stretch", policy_text,
                                          sizeof policy_text);
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t in[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, in);
    if (status != KILN_OK)
        return status;
    if (legacy) {
        if (strcmp(mode, "nearest") != 0)
            return onnx_node_unsupported(node, "mode \"%s\" at opset %lld: only nearest is supported there", mode,
                                         (long long)node->opset);
        coordinate = "asymmetric";
        nearest = "floor";
    }
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 && strcmp(mode, "cubic") != 0)
        return onnx_node_unsupported(node, "attribute 'mode' is \"%s\", not nearest, linear or cubic", mode);
    if (strcmp(coordinate, "tf_crop_and_resize") == 0)
        return onnx_node_unsupported(node, "coordinate_transformation_mode tf_crop_and_resize (a region of interest) "
                                           "is not supported");
    static const char *const later[] = {"antialias", "axes", "keep_aspect_ratio_policy", NULL};
    for (const char *const *name = later; node->opset < 18 && *name; name++)
        if (onnx_node_attribute(node, *name))
            return onnx_node_unsupported(node, "attribute '%s' is not part of %s at opset %lld (Resize has it from "
                                               "opset 18)",
                                         *name, node->proto->op_type, (long long)node->opset);
    /* Resize-18's axes: distinct, negative ones counted from the end; all axes in order by default. */
    uint32_t axes[KILN_MAX_RANK], axis_count = rank;
    for (uint32_t a = 0; a < rank; a++)
        axes[a] = a;
    const Onnx__AttributeProto *axes_attr = onnx_node_attribute(node, "axes");
    if (axes_attr) {
        bool seen[KILN_MAX_RANK] = {false};
        if (axes_attr->n_ints > rank)
            return onnx_node_unsupported(node, "attribute 'axes' has %zu values for rank %u", axes_attr->n_ints, rank);
        axis_count = (uint32_t)axes_attr->n_ints;
        for (uint32_t i = 0; i < axis_count; i++) {
            int64_t a = axes_attr->ints[i] < 0 ? axes_attr->ints[i] + rank : axes_attr->ints[i];
            if (a < 0 || a >= (int64_t)rank || seen[a])
                return onnx_node_unsupported(node, "axes[%u] = %lld is out of range for rank %u or repeated", i,
                                             (long long)axes_attr->ints[i], rank);
            seen[a] = true;
            axes[i] = (uint32_t)a;
        }
    }
    resize_target t = {0};
    status = resize_read_target(node, legacy, &t);
    if (status != KILN_OK)
        return status;
    if (t.count != axis_count)
        return onnx_node_unsupported(node, "the %s hold %u values for %u axes (%s)", t.by_sizes ? "sizes" : "scales",
                                     t.count, axis_count, axes_attr ? "attribute 'axes'" : "the input's rank");
    if (t.by_sizes && strcmp(policy, "stretch") != 0)
        status = resize_keep_aspect_ratio(node, policy, in, axes, &t);
    if (status == KILN_OK && axes_attr)
        status = resize_spread_axes(node, x, rank, in, axes, &t);
    if (status == KILN_OK)
        status = resize_antialias(node, mode, x, in, &t);
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    char sizes_text[ONNX_ATTRS_TEXT_MAX];
    if (t.symbolic) {
        if (!onnx_shape_text(t.texts, t.count, sizes_text, sizeof sizes_text) ||
            !onnx_attrs_string(&list, "sizes", sizes_text, strlen(sizes_text)))
            return onnx_node_unsupported(node, "the sizes are too long to write");
        kiln_op = "resize_to";
    } else if (t.by_sizes) {
        onnx_attrs_ints(&list, "sizes", t.sizes, t.count);
    } else {
        onnx_attrs_doubles(&list, "scales", t.scales, t.count);
    }
    /* Attributes that cannot matter for the mode are dropped: kiln refuses them rather than ignore them. */
    onnx_attrs_string(&list, "mode", mode, strlen(mode));
    onnx_attrs_string(&list, "coordinate_transformation_mode", coordinate, strlen(coordinate));
    if (strcmp(mode, "nearest") == 0)
        onnx_attrs_string(&list, "nearest_mode", nearest, strlen(nearest));
    if (strcmp(mode, "cubic") == 0) {
        onnx_attrs_float(&list, "cubic_coeff_a", onnx_node_float(node, "cubic_coeff_a", -0.75));
        onnx_attrs_int(&list, "exclude_outside", onnx_node_int(node, "exclude_outside", 0));
    }
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * GridSample (opset 16: modes bilinear, nearest, bicubic; opset 20 names
 * them linear, nearest, cubic and allows any rank, of which kiln takes the
 * 4-D case). The grid must have x's dtype: kiln does not convert it.
 */
kiln_status onnx_map_grid_sample(onnx_node *node, const char *kiln_op)
{
    char mode_text[32], padding_text[32];
    const char *mode = onnx_node_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear", mode_text,
                                        sizeof mode_text);
    const char *padding = onnx_node_string(node, "padding_mode", "zeros", padding_text, sizeof padding_text);
    if (node->opset >= 20 && strcmp(mode, "linear") == 0)
        mode = "bilinear";
    else if (node->opset >= 20 && strcmp(mode, "cubic") == 0)
        mode = "bicubic";
    else if (node->opset >= 20 && strcmp(mode, "nearest") != 0)
        return onnx_node_unsupported(node, "attribute 'mode' is \"%s\", not linear, nearest or cubic", mode);
    kiln_value inputs[2];
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    onnx_attrs list = {0};
    onnx_attrs_int(&list, "align_corners", onnx_node_int(node, "align_corners", 0));
    onnx_attrs_string(&list, "mode", mode, strlen(mode));
    onnx_attrs_string(&list, "padding_mode", padding, strlen(padding));
    return onnx_map_emit_output(node, kiln_op, 2, inputs, &list);
}

/*
 * MaxUnpool (opset 9 and 11: X, I, optional output_shape): max_unpool,
 * with the output_shape operand, which must be constant, as its attribute.
 */
kiln_status onnx_map_max_unpool(onnx_node *node, const char *kiln_op)
{
    kiln_value inputs[2];
    kiln_status status = onnx_map_inputs(node, 0, 2, inputs);
    if (status != KILN_OK)
        return status;
    static const char *const skip[] = {NULL};
    onnx_attrs list = {0};
    status = onnx_attrs_copy(node, &list, skip);
    if (status != KILN_OK)
        return status;
    if (onnx_node_has_input(node, 2)) {
        int64_t shape[KILN_MAX_RANK];
        uint32_t rank = 0;
        status = onnx_node_constant_ints(node, 2, shape, KILN_MAX_RANK, &rank);
        if (status != KILN_OK)
            return status;
        onnx_attrs_ints(&list, "output_shape", shape, rank);
    }
    return onnx_map_emit_output(node, kiln_op, 2, inputs, &list);
}

/* An INTS attribute of `count` values, or `fallback` in each when absent. @return false if it has another count. */
static bool ints_attribute(const onnx_node *node, const char *name, uint32_t count, int64_t fallback, int64_t *out)
{
    const Onnx__AttributeProto *a = onnx_node_attribute(node, name);
    for (uint32_t i = 0; i < count; i++)
        out[i] = a && i < a->n_ints ? a->ints[i] : fallback;
    return !a || a->n_ints == count;
}

/* The most positions Col2Im's index tensors may hold: each is an i64 constant of the model. */
#define COL2IM_MAX_POSITIONS (UINT32_C(1) << 24)

/*
 * Col2Im (opset 18): the sum of overlapping sliding blocks into an image,
 * the inverse of im2col. Input column c * K + k (k the kernel offset,
 * row-major over block_shape; K its count) at block position l (row-major
 * over the grid of blocks) adds into output position l_d * stride_d -
 * pad_begin_d + k_d * dilation_d of channel c, when that lies inside the
 * image. image_shape and block_shape must be constant, and so x's
 * channels and block count, so the importer lists the V taps that land
 * inside the image at import: x is reshaped to [N, C, K * L], those taps
 * gathered (indices j = k * L + l), and scatter_elements with reduction
 * add sums each into its position of zeros [N, C, prod(image_shape)],
 * reshaped to [N, C, image...]. The sums run in tap order (k, then l),
 * the order of PyTorch's col2im loops.
 */
kiln_status onnx_map_col2im(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, n = 0, block_count = 0;
    int64_t sizes[KILN_MAX_RANK], image[KILN_MAX_RANK], block[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 1, image, KILN_MAX_RANK - 2, &n);
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 2, block, KILN_MAX_RANK - 2, &block_count);
    if (status != KILN_OK)
        return status;
    if (rank != 3)
        return onnx_node_unsupported(node, "input has rank %u; Col2Im takes [N, C * prod(block_shape), L]", rank);
    if (n == 0 || block_count != n)
        return onnx_node_unsupported(node, "image_shape has %u sizes and block_shape %u", n, block_count);
    int64_t dilations[KILN_MAX_RANK], strides[KILN_MAX_RANK], pads[2 * KILN_MAX_RANK];
    if (!ints_attribute(node, "dilations", n, 1, dilations) || !ints_attribute(node, "strides", n, 1, strides) ||
        !ints_attribute(node, "pads", 2 * n, 0, pads))
        return onnx_node_unsupported(node, "dilations and strides need %u values, pads %u", n, 2 * n);
    if (sizes[1] < 0 || sizes[2] < 0)
        return onnx_node_unsupported(node, "input axes 1 and 2 must be constant (they are %s and %s)",
                                     sizes[1] < 0 ? "symbolic" : "constant", sizes[2] < 0 ? "symbolic" : "constant");
    /* K, the grid of blocks and the image, each product bounded before it is formed. */
    int64_t kernel = 1, grid[KILN_MAX_RANK], blocks = 1, positions = 1;
    for (uint32_t d = 0; d < n; d++) {
        if (image[d] < 1 || block[d] < 1 || dilations[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[n + d] < 0 ||
            image[d] > COL2IM_MAX_POSITIONS || block[d] > COL2IM_MAX_POSITIONS || dilations[d] > COL2IM_MAX_POSITIONS ||
            strides[d] > COL2IM_MAX_POSITIONS || pads[d] > COL2IM_MAX_POSITIONS || pads[n + d] > COL2IM_MAX_POSITIONS)
            return onnx_node_unsupported(node, "axis %u: image %lld, block %lld, dilation %lld, stride %lld, pads "
                                               "%lld, %lld are not sizes Col2Im takes",
                                         d, (long long)image[d], (long long)block[d], (long long)dilations[d],
                                         (long long)strides[d], (long long)pads[d], (long long)pads[n + d]);
        int64_t span = dilations[d] * (block[d] - 1) + 1, padded = image[d] + pads[d] + pads[n + d];
        grid[d] = padded < span ? 0 : (padded - span) / strides[d] + 1;
        if (grid[d] < 1)
            return onnx_node_unsupported(node, "axis %u: a block of span %lld does not fit the padded image of %lld",
                                         d, (long long)span, (long long)padded);
        kernel *= block[d];
        blocks *= grid[d];
        positions *= image[d];
        if (kernel > COL2IM_MAX_POSITIONS || blocks > COL2IM_MAX_POSITIONS || positions > COL2IM_MAX_POSITIONS)
            return onnx_node_unsupported(node, "more than %u kernel taps, blocks or image positions",
                                         COL2IM_MAX_POSITIONS);
    }
    if (kernel * blocks > (int64_t)COL2IM_MAX_POSITIONS)
        return onnx_node_unsupported(node, "%lld taps, more than %u", (long long)(kernel * blocks),
                                     COL2IM_MAX_POSITIONS);
    if (sizes[1] % kernel != 0 || sizes[2] != blocks)
        return onnx_node_unsupported(node, "input [%lld, %lld] does not hold C * %lld columns of %lld blocks",
                                     (long long)sizes[1], (long long)sizes[2], (long long)kernel, (long long)blocks);
    int64_t channels = sizes[1] / kernel, taps = kernel * blocks;
    /* The taps that land inside the image: their column (k * L + l) and their output position. */
    kiln_tensor *gather_index, *position;
    status = kiln_tensor_new(KILN_I64, 1, &taps, &gather_index, node->err);
    if (status != KILN_OK)
        return status;
    status = kiln_tensor_new(KILN_I64, 3, (const int64_t[]){1, 1, taps}, &position, node->err);
    if (status != KILN_OK) {
        kiln_tensor_free(gather_index);
        return status;
    }
    int64_t *column = kiln_tensor_data(gather_index), *target = kiln_tensor_data(position), inside = 0;
    for (int64_t k = 0; k < kernel; k++)
        for (int64_t l = 0; l < blocks; l++) {
            int64_t flat = 0, k_rest = k, l_rest = l, k_unit = kernel, l_unit = blocks;
            bool in = true;
            for (uint32_t d = 0; d < n; d++) {
                k_unit /= block[d];
                l_unit /= grid[d];
                int64_t at = (l_rest / l_unit) * strides[d] - pads[d] + (k_rest / k_unit) * dilations[d];
                k_rest %= k_unit;
                l_rest %= l_unit;
                in = in && at >= 0 && at < image[d];
                flat = flat * image[d] + at;
            }
            if (in) {
                column[inside] = k * blocks + l;
                target[inside++] = flat;
            }
        }
    /* Only the first `inside` entries are taps: the index tensors are rewritten at that length. */
    kiln_tensor *columns = NULL, *targets = NULL;
    status = kiln_tensor_new(KILN_I64, 1, &inside, &columns, node->err);
    if (status == KILN_OK)
        status = kiln_tensor_new(KILN_I64, 3, (const int64_t[]){1, 1, inside}, &targets, node->err);
    if (status == KILN_OK && inside) {
        memcpy(kiln_tensor_data(columns), column, (size_t)inside * sizeof *column);
        memcpy(kiln_tensor_data(targets), target, (size_t)inside * sizeof *target);
    }
    kiln_tensor_free(gather_index);
    kiln_tensor_free(position);
    kiln_value column_value, target_value, flat_x, taken, zero, zeros, index, summed;
    if (status == KILN_OK)
        status = onnx_node_constant_tensor(node, "col2im_columns", columns, &column_value);
    if (status == KILN_OK)
        status = onnx_node_constant_tensor(node, "col2im_positions", targets, &target_value);
    kiln_tensor_free(columns);
    kiln_tensor_free(targets);
    if (status != KILN_OK)
        return status;
    /* x [N, C*K, L] -> [N, C, K*L] -> the taps [N, C, V]. */
    onnx_attrs flat = {0}, gather = {0};
    onnx_attrs_ints(&flat, "shape", (const int64_t[]){0, channels, taps}, 3);
    onnx_attrs_int(&gather, "axis", 2);
    status = onnx_node_emit(node, "reshape", 1, &x, flat.count, flat.items, &flat_x);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "gather", 2, (kiln_value[]){flat_x, column_value}, gather.count, gather.items,
                                &taken);
    /* Zeros [N, C, P] and the positions [N, C, V], over x's batch size (a symbolic one too). */
    char batch[64], zeros_shape[256], index_shape[256];
    if (status == KILN_OK)
        status = onnx_node_axis_text(node, x, 0, batch, sizeof batch);
    if (status != KILN_OK)
        return status;
    snprintf(zeros_shape, sizeof zeros_shape, "[%s, %lld, %lld]", batch, (long long)channels, (long long)positions);
    snprintf(index_shape, sizeof index_shape, "[%s, %lld, %lld]", batch, (long long)channels, (long long)inside);
    onnx_attrs zeros_attrs = {0}, index_attrs = {0};
    onnx_attrs_string(&zeros_attrs, "shape", zeros_shape, strlen(zeros_shape));
    onnx_attrs_string(&index_attrs, "shape", index_shape, strlen(index_shape));
    status = onnx_node_scalar(node, dtype, 0.0, &zero);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "expand_to", 1, &zero, zeros_attrs.count, zeros_attrs.items, &zeros);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "expand_to", 1, &target_value, index_attrs.count, index_attrs.items, &index);
    onnx_attrs scatter = {0};
    onnx_attrs_int(&scatter, "axis", 2);
    onnx_attrs_string(&scatter, "reduction", "add", 3);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "scatter_elements", 3, (kiln_value[]){zeros, index, taken}, scatter.count,
                                scatter.items, &summed);
    int64_t out_shape[KILN_MAX_RANK] = {0, channels};
    for (uint32_t d = 0; d < n; d++)
        out_shape[2 + d] = image[d];
    onnx_attrs back = {0};
    onnx_attrs_ints(&back, "shape", out_shape, 2 + n);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "reshape", 1, &summed, &back);
    return status;
}
