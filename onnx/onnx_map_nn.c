/*
 * onnx_map_nn.c — neural-network mappings (see onnx_map_nn.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_map_common.h"
#include "onnx_map_nn.h"
#include "onnx_model.h"

/* ReduceX: axes as an attribute, or (ReduceSum from opset 13) as input 1 with noop_with_empty_axes. */
kiln_status onnx_map_reduce(onnx_node *node, const char *kiln_op)
{
    bool axes_as_input = strcmp(node->proto->op_type, "ReduceSum") == 0 && node->opset >= 13;
    kiln_value x;
    int64_t axes[KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_map_ints_operand(node, "axes", axes_as_input ? 13 : INT64_MAX, 1, axes, KILN_MAX_RANK,
                                         &count, &present);
    if (status != KILN_OK)
        return status;
    if ((!present || count == 0) && onnx_node_int(node, "noop_with_empty_axes", 0) != 0)
        return onnx_map_emit_output(node, "identity", 1, &x, NULL);
    if (present && count)
        onnx_attrs_ints(&list, "axes", axes, count);
    onnx_attrs_int(&list, "keepdims", onnx_node_int(node, "keepdims", 1));
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
    kiln_value mean, centered, squared, variance, epsilon, shifted, inv;
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
    kiln_value scale, bias, beta, base;
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

/*
 * Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (opset 9: X, scales; opsets 7 and 8: the scales attribute). The scales or sizes operand must be constant and
 * becomes resize's attribute. Opset 10 and Upsample define no coordinate
 * transformation; nearest there is ONNX's asymmetric floor rule. Linear
 * Upsample and Resize-10 are refused rather than guessed.
 */
kiln_status onnx_map_resize(onnx_node *node, const char *kiln_op)
{
    bool legacy = node->opset < 11 || strcmp(node->proto->op_type, "Upsample") == 0;
    char mode_text[32], coordinate_text[32], nearest_text[32];
    const char *mode = onnx_node_string(node, "mode", "nearest", mode_text, sizeof mode_text);
    const char *coordinate = onnx_node_string(node, "coordinate_transformation_mode", "half_pixel",
                                              coordinate_text, sizeof coordinate_text);
    const char *nearest = onnx_node_string(node, "nearest_mode", "round_prefer_floor", nearest_text,
                                           sizeof nearest_text);
    uint32_t scales_index = legacy ? 1 : 2, sizes_index = 3;
    kiln_value x;
    kiln_status status = onnx_node_input(node, 0, &x);
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
    for (const char *const *name = later; *name; name++)
        if (onnx_node_attribute(node, *name))
            return onnx_node_unsupported(node, "attribute '%s' is not supported", *name);
    onnx_attrs list = {0};
    /* Opset 11 requires a scales input and lets sizes be empty: the non-empty one is the target. */
    int64_t sizes[KILN_MAX_RANK];
    uint32_t size_count = 0;
    char sizes_text[ONNX_ATTRS_TEXT_MAX];
    if (!legacy && onnx_node_is_symbolic(node, sizes_index)) {
        /* Sizes computed from the input's (F.interpolate(x, size=input.shape[-2:])): resize_to, its
         * sizes a shape text over the dims (spec/onnx-import.md §3.1). */
        const char *texts[KILN_MAX_RANK];
        status = onnx_node_symbolic_sizes(node, sizes_index, texts, KILN_MAX_RANK, &size_count);
        if (status != KILN_OK)
            return status;
        if (!onnx_shape_text(texts, size_count, sizes_text, sizeof sizes_text) ||
            !onnx_attrs_string(&list, "sizes", sizes_text, strlen(sizes_text)))
            return onnx_node_unsupported(node, "the sizes are too long to write");
        kiln_op = "resize_to";
    } else if (!legacy && onnx_node_has_input(node, sizes_index)) {
        status = onnx_node_constant_ints(node, sizes_index, sizes, KILN_MAX_RANK, &size_count);
        if (status != KILN_OK)
            return status;
    }
    if (size_count) {
        if (onnx_node_has_input(node, scales_index)) {
            const kiln_tensor *scales;
            status = onnx_node_constant(node, scales_index, &scales);
            if (status != KILN_OK)
                return status;
            if (kiln_tensor_element_count(scales) != 0)
                return onnx_node_unsupported(node, "both scales and sizes are given");
        }
        if (strcmp(kiln_op, "resize_to") != 0)
            onnx_attrs_ints(&list, "sizes", sizes, size_count);
    } else if (node->opset < 9) {
        /* Upsample-7: the scales are an attribute. */
        const Onnx__AttributeProto *scales = onnx_node_attribute(node, "scales");
        if (!scales || scales->n_floats == 0 || scales->n_floats > KILN_MAX_RANK)
            return onnx_node_unsupported(node, "attribute 'scales' must hold 1 to %u values", KILN_MAX_RANK);
        onnx_attrs_floats(&list, "scales", scales->floats, (uint32_t)scales->n_floats);
    } else {
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
        onnx_attrs_floats(&list, "scales", kiln_tensor_const_data(scales), (uint32_t)count);
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
