/*
 * onnx_map_shape.c — shape and layout mappings (declared in onnx_mapping.h).
 */
#include <stdio.h>
#include <string.h>

#include "onnx_mapping.h"
#include "onnx_model.h"

/*
 * Identity, and Dropout in inference: a copy, and its optional mask output
 * all true (nothing is dropped), emitted only when something reads it
 * (Swin-T's 24 Dropouts name a mask nothing reads): a constant expanded to
 * a constant shape, or over symbolic axes computed from x itself. Dropout in
 * training mode with a ratio of exactly 0 is the same (it keeps every
 * element and scales by 1 / (1 - 0)); any other ratio draws random numbers.
 */
kiln_status onnx_map_identity(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    bool dropout = strcmp(node->proto->op_type, "Dropout") == 0;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK && dropout && node->opset < 7) {
        /* Dropout-1 and -6: is_test (default 0) selects test mode; training drops at random. */
        double ratio = onnx_node_float(node, "ratio", 0.5);
        if (onnx_node_int(node, "is_test", 0) == 0 && ratio != 0)
            status = onnx_node_unsupported(node, "is_test = 0 (training) with ratio %g: dropping elements at random "
                                                 "is not supported (kiln runs inference)",
                                           ratio);
    } else if (status == KILN_OK && dropout) {
        double training = 0, ratio = 0.5;
        if (onnx_node_has_input(node, 2))
            status = onnx_map_constant_scalar(node, 2, &training);
        if (status == KILN_OK && training != 0 && onnx_node_has_input(node, 1))
            status = onnx_map_constant_scalar(node, 1, &ratio);
        if (status == KILN_OK && training != 0 && ratio != 0)
            status = onnx_node_unsupported(node, "training_mode is set with ratio %g: dropping elements at random is "
                                                 "not supported (kiln runs inference)",
                                           ratio);
    }
    if (status == KILN_OK)
        status = onnx_map_refuse_extra_outputs(node, dropout ? 2 : 1);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 1, &x, NULL);
    if (status != KILN_OK || !dropout || !onnx_node_output_read(node, 1))
        return status;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_value truth, mask, pair[2];
    bool symbolic = false;
    status = onnx_node_type(node, x, &dtype, &rank, sizes);
    for (uint32_t a = 0; status == KILN_OK && a < rank; a++)
        symbolic = symbolic || sizes[a] < 0;
    if (status == KILN_OK && symbolic) {
        /* All true at x's symbolic shape: cast(x) or not(cast(x)), true
         * for every element, NaN included (a NaN casts to true). */
        pair[0] = x;
        status = onnx_map_cast_to(node, &pair[0], KILN_BOOL);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "not", 1, &pair[0], 0, NULL, &pair[1]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "or", 2, pair, 0, NULL, &mask);
        return status == KILN_OK ? onnx_node_set_output(node, 1, mask) : status;
    }
    if (status == KILN_OK)
        status = onnx_node_scalar(node, KILN_BOOL, 1.0, &truth);
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "shape", sizes, rank);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "expand", 1, &truth, list.count, list.items, &mask);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 1, mask);
    return status;
}

kiln_status onnx_map_constant(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    if (node->proto->n_attribute != 1)
        return onnx_node_unsupported(node, "a Constant takes exactly one value attribute, it has %zu",
                                     node->proto->n_attribute);
    const Onnx__AttributeProto *a = node->proto->attribute[0];
    kiln_tensor *t = NULL;
    kiln_error tensor_err;
    kiln_status status = KILN_OK;
    const char *name = a->name ? a->name : "";
    if (strcmp(name, "value") == 0 && a->t) {
        status = onnx_tensor_to_kiln(a->t, NULL, NULL, &t, &tensor_err);
        if (status != KILN_OK)
            return onnx_node_unsupported(node, "%s", tensor_err.message);
    } else if (strcmp(name, "value_float") == 0 || strcmp(name, "value_int") == 0) {
        bool is_float = name[6] == 'f';
        status = kiln_tensor_new(is_float ? KILN_F32 : KILN_I64, 0, NULL, &t, node->err);
        if (status == KILN_OK && is_float)
            *(float *)kiln_tensor_data(t) = a->f;
        else if (status == KILN_OK)
            *(int64_t *)kiln_tensor_data(t) = a->i;
    } else if (strcmp(name, "value_floats") == 0 || strcmp(name, "value_ints") == 0) {
        bool is_float = name[6] == 'f';
        int64_t n = (int64_t)(is_float ? a->n_floats : a->n_ints);
        status = kiln_tensor_new(is_float ? KILN_F32 : KILN_I64, 1, &n, &t, node->err);
        if (status == KILN_OK && n && is_float)
            memcpy(kiln_tensor_data(t), a->floats, (size_t)n * sizeof(float));
        else if (status == KILN_OK && n)
            memcpy(kiln_tensor_data(t), a->ints, (size_t)n * sizeof(int64_t));
    } else
        return onnx_node_unsupported(node, "Constant attribute '%s' is not supported (strings and sparse tensors)",
                                     name);
    if (status != KILN_OK)
        return status;
    return onnx_node_set_constant_output(node, 0, t);
}

/* Shape: folded to a constant when every size is known, else shape_of (and a slice for start/end). */
kiln_status onnx_map_shape(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status != KILN_OK)
        return status;
    int64_t start = onnx_node_int(node, "start", 0), end = onnx_node_int(node, "end", rank);
    start = start < 0 ? start + rank : start;
    end = end < 0 ? end + rank : end;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    int64_t count = end > start ? end - start : 0;
    bool all_known = true;
    for (int64_t a = start; a < end; a++)
        all_known = all_known && sizes[a] >= 0;
    if (all_known) {
        kiln_tensor *t;
        status = kiln_tensor_new(KILN_I64, 1, &count, &t, node->err);
        if (status != KILN_OK)
            return status;
        for (int64_t a = 0; a < count; a++)
            ((int64_t *)kiln_tensor_data(t))[a] = sizes[start + a];
        return onnx_node_set_constant_output(node, 0, t);
    }
    kiln_value shape;
    status = onnx_node_emit(node, kiln_op, 1, &x, 0, NULL, &shape);
    if (status == KILN_OK && (start != 0 || end != rank)) {
        onnx_attrs list = {0};
        int64_t zero = 0;
        onnx_attrs_ints(&list, "starts", &start, 1);
        onnx_attrs_ints(&list, "ends", &end, 1);
        onnx_attrs_ints(&list, "axes", &zero, 1);
        status = onnx_node_emit(node, "slice", 1, &shape, list.count, list.items, &shape);
    }
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, shape);
    return status;
}

/* ONNX ops whose shape-like operand (input 1, or an attribute before `input_from`) is a kiln INTS attribute. */
static kiln_status onnx_map_shape_operand(onnx_node *node, const char *kiln_op, const char *onnx_attribute,
                                     const char *kiln_attribute_name, int64_t input_from, bool required)
{
    kiln_value x;
    int64_t values[16];
    uint32_t count = 0;
    bool present = false;
    onnx_attrs list = {0};
    static const char *const skip[] = {"axes", "shape", "allowzero", NULL};
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_map_ints_operand(node, onnx_attribute, input_from, 1, values, 16, &count, &present);
    if (status == KILN_OK && required && !present)
        status = onnx_node_unsupported(node, "the %s operand is missing", onnx_attribute);
    if (status == KILN_OK && present && !onnx_attrs_ints(&list, kiln_attribute_name, values, count))
        status = onnx_node_unsupported(node, "too many %s", onnx_attribute);
    if (status == KILN_OK)
        status = onnx_attrs_copy(node, &list, skip);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

/*
 * ConstantOfShape: attribute `value` (a one-element tensor; f32 0 when
 * absent) over the shape operand. A constant shape is kiln's
 * constant_of_shape. A symbolic one ([seq, seq] of a causal mask,
 * [layers, batch, hidden] of a recurrent layer's zero state) is kiln's
 * expand_to of the value as a rank-0 constant to the shape text: exact,
 * every element a copy of the value.
 */
kiln_status onnx_map_constant_of_shape(onnx_node *node, const char *kiln_op)
{
    double value = 0;
    kiln_dtype dtype = KILN_F32;
    const Onnx__AttributeProto *a = onnx_node_attribute(node, "value");
    if (a) {
        kiln_tensor *t = NULL;
        kiln_error tensor_err;
        if (!a->t)
            return onnx_node_unsupported(node, "attribute 'value' is not a tensor");
        if (onnx_tensor_to_kiln(a->t, NULL, NULL, &t, &tensor_err) != KILN_OK)
            return onnx_node_unsupported(node, "attribute 'value': %s", tensor_err.message);
        dtype = kiln_tensor_dtype(t);
        kiln_status status = onnx_map_tensor_scalar(node, t, "attribute 'value'", &value);
        kiln_tensor_free(t);
        if (status != KILN_OK)
            return status;
    }
    onnx_attrs list = {0};
    if (!onnx_node_is_symbolic(node, 0)) {
        int64_t shape[KILN_MAX_RANK];
        uint32_t count;
        kiln_status status = onnx_node_constant_ints(node, 0, shape, KILN_MAX_RANK, &count);
        if (status != KILN_OK)
            return status;
        const char *name = kiln_dtype_name(dtype);
        onnx_attrs_ints(&list, "shape", shape, count);
        onnx_attrs_float(&list, "value", value);
        onnx_attrs_string(&list, "dtype", name, strlen(name));
        return onnx_map_emit_output(node, kiln_op, 0, NULL, &list);
    }
    const char *target[KILN_MAX_RANK];
    uint32_t count;
    char text[ONNX_ATTRS_TEXT_MAX];
    kiln_value filler;
    kiln_status status = onnx_node_symbolic_sizes(node, 0, target, KILN_MAX_RANK, &count);
    if (status != KILN_OK)
        return status;
    if (!onnx_shape_text(target, count, text, sizeof text) || !onnx_attrs_string(&list, "shape", text, strlen(text)))
        return onnx_node_unsupported(node, "the shape is too long to write");
    status = onnx_node_scalar(node, dtype, value, &filler);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "expand_to", 1, &filler, &list);
    return status;
}

kiln_status onnx_map_reshape(onnx_node *node, const char *kiln_op)
{
    if (onnx_node_is_symbolic(node, 1))
        return onnx_map_symbolic_reshape(node, kiln_op);
    if (onnx_node_int(node, "allowzero", 0) != 0) {
        int64_t values[16];
        uint32_t count;
        kiln_status status = onnx_node_constant_ints(node, 1, values, 16, &count);
        if (status != KILN_OK)
            return status;
        for (uint32_t i = 0; i < count; i++)
            if (values[i] == 0)
                return onnx_node_unsupported(node, "allowzero = 1 with a 0 in the shape (an empty axis) is not supported");
    }
    return onnx_map_shape_operand(node, kiln_op, "shape", "shape", 5, true);
}

kiln_status onnx_map_expand(onnx_node *node, const char *kiln_op)
{
    if (onnx_node_is_symbolic(node, 1))
        return onnx_map_symbolic_expand(node, kiln_op);
    return onnx_map_shape_operand(node, kiln_op, "shape", "shape", 8, true);
}

/*
 * Tile. Opsets 1..5 take two scalar inputs, `tiles` and `axis`: the input
 * repeated `tiles` times along `axis`, which is kiln's tile with repeats
 * 1 on every other axis (both must be constant).
 */
kiln_status onnx_map_tile(onnx_node *node, const char *kiln_op)
{
    if (node->opset >= 6)
        return onnx_map_shape_operand(node, kiln_op, "repeats", "repeats", 6, true);
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, count;
    int64_t tiles[1], axis[1], repeats[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 1, tiles, 1, &count);
    if (status == KILN_OK && count != 1)
        status = onnx_node_unsupported(node, "tiles must hold one value");
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 2, axis, 1, &count);
    if (status == KILN_OK && count != 1)
        status = onnx_node_unsupported(node, "axis must hold one value");
    if (status != KILN_OK)
        return status;
    int64_t a = axis[0] < 0 ? axis[0] + rank : axis[0];
    if (a < 0 || a >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is outside the input's rank %u", (long long)axis[0], rank);
    for (uint32_t i = 0; i < rank; i++)
        repeats[i] = (int64_t)i == a ? tiles[0] : 1;
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "repeats", repeats, rank);
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/* Concat: opsets 1..3 make `axis` optional, default 1. */
kiln_status onnx_map_concat(onnx_node *node, const char *kiln_op)
{
    if (node->opset >= 4 || onnx_node_attribute(node, "axis"))
        return onnx_map_rename(node, kiln_op);
    kiln_value inputs[64];
    uint32_t count = onnx_map_present_inputs(node);
    if (count > 64)
        return onnx_node_unsupported(node, "%u inputs", count);
    onnx_attrs list = {0};
    onnx_attrs_int(&list, "axis", 1);
    kiln_status status = onnx_map_inputs(node, 0, count, inputs);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, count, inputs, &list);
    return status;
}

kiln_status onnx_map_unsqueeze(onnx_node *node, const char *kiln_op)
{
    return onnx_map_shape_operand(node, kiln_op, "axes", "axes", 13, true);
}

kiln_status onnx_map_squeeze(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    int64_t axes[KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_map_ints_operand(node, "axes", 13, 1, axes, KILN_MAX_RANK, &count, &present);
    if (status != KILN_OK)
        return status;
    if (!present) {
        /* Every axis of size 1: only known when the sizes are constants. */
        kiln_dtype dtype;
        uint32_t rank;
        int64_t sizes[KILN_MAX_RANK];
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
        if (status != KILN_OK)
            return status;
        for (uint32_t a = 0; a < rank; a++) {
            if (sizes[a] < 0)
                return onnx_node_unsupported(node, "squeeze without axes of a symbolic axis %u", a);
            if (sizes[a] == 1)
                axes[count++] = a;
        }
    }
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "axes", axes, count);
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

kiln_status onnx_map_slice(onnx_node *node, const char *kiln_op)
{
    static const char *const names[] = {"starts", "ends", "axes", "steps"};
    if (node->opset >= 10 && (onnx_node_is_symbolic(node, 1) || onnx_node_is_symbolic(node, 2)))
        return onnx_map_symbolic_slice(node, kiln_op);
    kiln_value x;
    onnx_attrs list = {0};
    kiln_status status = onnx_node_input(node, 0, &x);
    for (uint32_t k = 0; status == KILN_OK && k < 4; k++) {
        int64_t values[KILN_MAX_RANK];
        uint32_t count = 0;
        bool present = false;
        status = onnx_map_ints_operand(node, names[k], 10, k + 1, values, KILN_MAX_RANK, &count, &present);
        if (status == KILN_OK && present)
            onnx_attrs_ints(&list, names[k], values, count);
    }
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

/*
 * Pad-18's axes input: the pads given per listed axis (begins, then ends)
 * spread over every axis of x, 0 on the others. Negative axes count from
 * the end; an axis listed twice is refused, as ONNX refuses it.
 */
static kiln_status pad_axes(onnx_node *node, kiln_value x, int64_t *pads, uint32_t *count)
{
    kiln_dtype dtype;
    uint32_t rank, axis_count = 0;
    int64_t axes[KILN_MAX_RANK], full[2 * KILN_MAX_RANK] = {0};
    kiln_status status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 3, axes, KILN_MAX_RANK, &axis_count);
    if (status != KILN_OK)
        return status;
    if (*count != 2 * axis_count)
        return onnx_node_unsupported(node, "pads has %u values for %u axes (2 per axis)", *count, axis_count);
    bool seen[KILN_MAX_RANK] = {false};
    for (uint32_t i = 0; i < axis_count; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= (int64_t)rank)
            return onnx_node_unsupported(node, "axes[%u] = %lld is out of range for rank %u", i, (long long)axes[i],
                                         rank);
        if (seen[a])
            return onnx_node_unsupported(node, "axes[%u] = %lld repeats axis %lld", i, (long long)axes[i],
                                         (long long)a);
        seen[a] = true;
        full[a] = pads[i];
        full[rank + a] = pads[axis_count + i];
    }
    memcpy(pads, full, 2 * rank * sizeof *pads);
    *count = 2 * rank;
    return KILN_OK;
}

kiln_status onnx_map_pad(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    int64_t pads[2 * KILN_MAX_RANK];
    uint32_t count = 0;
    bool present = false;
    onnx_attrs list = {0};
    char mode_text[32];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_map_ints_operand(node, node->opset < 2 ? "paddings" : "pads", 11, 1, pads, 2 * KILN_MAX_RANK,
                                       &count, &present); /* Pad-1 names them paddings */
    if (status != KILN_OK)
        return status;
    if (!present)
        return onnx_node_unsupported(node, "the pads operand is missing");
    if (onnx_node_has_input(node, 3) && node->opset < 18)
        return onnx_node_unsupported(node, "input 3 (axes) is not part of Pad at opset %lld (it is from opset 18)",
                                     (long long)node->opset);
    if (onnx_node_has_input(node, 3))
        status = pad_axes(node, x, pads, &count);
    if (status != KILN_OK)
        return status;
    onnx_attrs_ints(&list, "pads", pads, count);
    const char *mode = onnx_node_string(node, "mode", "constant", mode_text, sizeof mode_text);
    onnx_attrs_string(&list, "mode", mode, strlen(mode));
    double value = node->opset < 11 ? onnx_node_float(node, "value", 0.0) : 0.0;
    if (node->opset >= 11 && onnx_node_has_input(node, 2))
        status = onnx_map_constant_scalar(node, 2, &value);
    onnx_attrs_float(&list, "value", value);
    /* No pad at all (PyTorch exports one before each avg_pool, DenseNet's
     * transitions among them): in every mode the result is x itself, so
     * nothing is emitted and no copy runs. */
    bool nothing_added = true;
    for (uint32_t i = 0; i < count; i++)
        nothing_added = nothing_added && pads[i] == 0;
    if (status == KILN_OK && nothing_added)
        return onnx_node_set_output(node, 0, x);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, kiln_op, 1, &x, &list);
    return status;
}

/*
 * Split into slices along `axis`: sizes from input 1 (opset 13+), the
 * `split` attribute, `num_outputs` (opset 18+: parts of ceil(size / n),
 * the last one smaller), or, with neither, equal parts, one per output.
 */
kiln_status onnx_map_split(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK], split[64];
    uint32_t count = 0, outputs = (uint32_t)node->proto->n_output;
    bool present = false;
    const Onnx__AttributeProto *num_outputs = onnx_node_attribute(node, "num_outputs");
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status == KILN_OK && node->opset < 2 && onnx_node_has_input(node, 1)) {
        status = onnx_node_constant_ints(node, 1, split, 64, &count); /* Split-1 may take split as an input */
        present = true;
    } else if (status == KILN_OK) {
        status = onnx_map_ints_operand(node, "split", 13, 1, split, 64, &count, &present);
    }
    if (status != KILN_OK)
        return status;
    int64_t axis = onnx_node_int(node, "axis", 0);
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= (int64_t)rank)
        return onnx_node_unsupported(node, "axis %lld is out of range for rank %u", (long long)axis, rank);
    if (outputs == 0 || outputs > 64)
        return onnx_node_unsupported(node, "%u outputs", outputs);
    if (num_outputs && node->opset < 18)
        return onnx_node_unsupported(node, "attribute 'num_outputs' is not part of Split at opset %lld (it is from "
                                           "opset 18)",
                                     (long long)node->opset);
    if (num_outputs && present)
        return onnx_node_unsupported(node, "both the split input and attribute 'num_outputs' are given (Split-18 "
                                           "takes one of them)");
    if (num_outputs && num_outputs->i != (int64_t)outputs)
        return onnx_node_unsupported(node, "attribute 'num_outputs' is %lld, the node has %u outputs",
                                     (long long)num_outputs->i, outputs);
    if (!present) {
        if (sizes[a] < 0)
            return onnx_node_unsupported(node, "equal split of the symbolic axis %lld", (long long)a);
        /* Split-18's num_outputs: parts of ceil(size / n), the last one what is left (ONNX's definition). */
        int64_t part = sizes[a] / outputs + (num_outputs && sizes[a] % outputs != 0);
        if (!num_outputs && sizes[a] % outputs != 0)
            return onnx_node_unsupported(node, "axis %lld of size %lld does not split into %u equal parts",
                                         (long long)a, (long long)sizes[a], outputs);
        if (part * (int64_t)(outputs - 1) > sizes[a])
            return onnx_node_unsupported(node, "axis %lld of size %lld does not split into %u parts of %lld and a "
                                               "smaller last one (num_outputs %u)",
                                         (long long)a, (long long)sizes[a], outputs, (long long)part, outputs);
        for (uint32_t o = 0; o < outputs; o++)
            split[o] = o + 1 < outputs ? part : sizes[a] - part * (int64_t)(outputs - 1);
        count = outputs;
    }
    if (count != outputs)
        return onnx_node_unsupported(node, "split has %u sizes for %u outputs", count, outputs);
    int64_t start = 0;
    for (uint32_t o = 0; o < outputs; o++) {
        int64_t end = start + split[o];
        onnx_attrs list = {0};
        onnx_attrs_ints(&list, "starts", &start, 1);
        onnx_attrs_ints(&list, "ends", &end, 1);
        onnx_attrs_ints(&list, "axes", &a, 1);
        kiln_value part;
        status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &part);
        if (status == KILN_OK && node->proto->output[o][0])
            status = onnx_node_set_output(node, o, part);
        if (status != KILN_OK)
            return status;
        start = end;
    }
    return KILN_OK;
}

/*
 * ScatterElements and ScatterND: kiln's ops of the same attributes. The
 * reductions grew with the versions (none before opset 16; add and mul
 * from 16; max and min from 18), and a reduction the node's version does
 * not define is refused rather than computed.
 */
kiln_status onnx_map_scatter(onnx_node *node, const char *kiln_op)
{
    char text[32];
    const char *reduction = onnx_node_string(node, "reduction", "none", text, sizeof text);
    bool from_16 = strcmp(reduction, "add") == 0 || strcmp(reduction, "mul") == 0;
    bool from_18 = strcmp(reduction, "max") == 0 || strcmp(reduction, "min") == 0;
    if (onnx_node_attribute(node, "reduction") && node->opset < 16)
        return onnx_node_unsupported(node, "attribute 'reduction' is not part of %s at opset %lld (it is from opset 16)",
                                     node->proto->op_type, (long long)node->opset);
    if ((from_18 && node->opset < 18) || (!from_16 && !from_18 && strcmp(reduction, "none") != 0))
        return onnx_node_unsupported(node, "reduction \"%s\" is not defined at opset %lld (none, add, mul%s)", reduction,
                                     (long long)node->opset, node->opset >= 18 ? ", max, min" : "");
    return onnx_map_rename(node, kiln_op);
}

/*
 * CenterCropPad (opset 18): on each listed axis (`axes`, default all;
 * negative from the end) a centered window of the target size: cropped
 * where the input is larger (the window starts at floor((in - out) / 2)),
 * padded with zeros where it is smaller (floor((out - in) / 2) before, the
 * rest after). The input sizes on the listed axes and the target must be
 * constants: a slice, then a pad.
 */
kiln_status onnx_map_center_crop_pad(onnx_node *node, const char *kiln_op)
{
    (void)kiln_op;
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, count = 0;
    int64_t sizes[KILN_MAX_RANK], target[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, sizes);
    if (status == KILN_OK)
        status = onnx_node_constant_ints(node, 1, target, KILN_MAX_RANK, &count);
    if (status != KILN_OK)
        return status;
    uint32_t axes[KILN_MAX_RANK], axis_count = rank;
    for (uint32_t a = 0; a < rank; a++)
        axes[a] = a;
    const Onnx__AttributeProto *axes_attr = onnx_node_attribute(node, "axes");
    bool seen[KILN_MAX_RANK] = {false};
    if (axes_attr) {
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
    if (count != axis_count)
        return onnx_node_unsupported(node, "the shape holds %u sizes for %u axes", count, axis_count);
    int64_t starts[KILN_MAX_RANK], ends[KILN_MAX_RANK], slice_axes[KILN_MAX_RANK], pads[2 * KILN_MAX_RANK] = {0};
    uint32_t sliced = 0;
    bool padded = false;
    for (uint32_t i = 0; i < axis_count; i++) {
        int64_t in = sizes[axes[i]], out = target[i];
        if (out < 0)
            return onnx_node_unsupported(node, "shape[%u] = %lld is negative", i, (long long)out);
        if (in < 0)
            return onnx_node_unsupported(node, "input axis %u is symbolic: where to crop or pad is not known at import",
                                         axes[i]);
        if (out < in) {
            starts[sliced] = (in - out) / 2;
            ends[sliced] = starts[sliced] + out;
            slice_axes[sliced++] = axes[i];
        } else if (out > in) {
            pads[axes[i]] = (out - in) / 2;
            pads[rank + axes[i]] = out - in - pads[axes[i]];
            padded = true;
        }
    }
    if (sliced) {
        onnx_attrs list = {0};
        onnx_attrs_ints(&list, "starts", starts, sliced);
        onnx_attrs_ints(&list, "ends", ends, sliced);
        onnx_attrs_ints(&list, "axes", slice_axes, sliced);
        status = onnx_node_emit(node, "slice", 1, &x, list.count, list.items, &x);
    }
    if (status == KILN_OK && padded) {
        onnx_attrs list = {0};
        onnx_attrs_ints(&list, "pads", pads, 2 * rank);
        onnx_attrs_string(&list, "mode", "constant", strlen("constant"));
        onnx_attrs_float(&list, "value", 0.0);
        status = onnx_node_emit(node, "pad", 1, &x, list.count, list.items, &x);
    }
    if (status == KILN_OK && !sliced && !padded)
        status = onnx_node_emit(node, "identity", 1, &x, 0, NULL, &x);
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, x);
    return status;
}
