/*
 * onnx_map_symbolic.c — symbolic shape targets (declared in onnx_mapping.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_mapping.h"

/* Longest size text a symbolic target holds. */
#define SIZE_TEXT 128

/* @return true and the value if size text `text` is an integer constant. */
static bool size_constant(const char *text, int64_t *value)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end)
        return false;
    *value = v;
    return true;
}

/*
 * Slice x to size 1 on every axis but `keep_a` and `keep_b`, and make it
 * i64 ones of shape [size(keep_a), size(keep_b)]: the frame of the row
 * indices split_axis gathers with. Casting to bool and or-ing with its own
 * negation gives true for every element, NaN included.
 */
static kiln_status ones_like_axes(onnx_node *node, kiln_value x, uint32_t rank, uint32_t keep_a, uint32_t keep_b,
                                  kiln_value *out)
{
    int64_t others[KILN_MAX_RANK], zeros[KILN_MAX_RANK], ones[KILN_MAX_RANK];
    uint32_t n = 0;
    for (uint32_t a = 0; a < rank; a++)
        if (a != keep_a && a != keep_b) {
            others[n] = a;
            zeros[n] = 0;
            ones[n++] = 1;
        }
    kiln_value t = x, truth, falsity = 0, pair[2];
    kiln_status status = KILN_OK;
    if (n) {
        onnx_attrs slice = {0};
        onnx_attrs_ints(&slice, "starts", zeros, n);
        onnx_attrs_ints(&slice, "ends", ones, n);
        onnx_attrs_ints(&slice, "axes", others, n);
        status = onnx_node_emit(node, "slice", 1, &x, slice.count, slice.items, &t);
    }
    if (status == KILN_OK)
        status = onnx_map_cast_to(node, &t, KILN_BOOL);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "not", 1, &t, 0, NULL, &falsity);
    pair[0] = t;
    pair[1] = falsity;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "or", 2, pair, 0, NULL, &truth);
    if (status == KILN_OK)
        status = onnx_map_cast_to(node, &truth, KILN_I64);
    if (status == KILN_OK && n) {
        onnx_attrs squeeze = {0};
        onnx_attrs_ints(&squeeze, "axes", others, n);
        status = onnx_node_emit(node, "squeeze", 1, &truth, squeeze.count, squeeze.items, &truth);
    }
    if (status == KILN_OK && keep_a > keep_b) {
        onnx_attrs transpose = {0};
        onnx_attrs_ints(&transpose, "perm", (const int64_t[]){1, 0}, 2);
        status = onnx_node_emit(node, "transpose", 1, &truth, transpose.count, transpose.items, &truth);
    }
    *out = truth;
    return status;
}

/*
 * Split axis `axis` of x, of size A*B, into the two symbolic sizes A and B
 * (`first`, `second`): kiln's reshape cannot, as its target has at most
 * one inferred size, so rows are gathered instead. Row a*B + b of the axis
 * becomes [a, b]: the indices come from ones of shape [A, B] taken from
 * `witness` (a value with axes of sizes A and B), as exclusive cumulative
 * sums (a and b) and a row sum (B).
 */
static kiln_status split_axis(onnx_node *node, kiln_value x, int64_t axis, kiln_value witness, uint32_t witness_rank,
                              uint32_t axis_a, uint32_t axis_b, kiln_value *out)
{
    kiln_value ones, rows = 0, cols = 0, width = 0, scaled = 0, index = 0, pair[2];
    kiln_status status = ones_like_axes(node, witness, witness_rank, axis_a, axis_b, &ones);
    onnx_attrs down = {0}, across = {0}, sum = {0}, gather = {0};
    onnx_attrs_int(&down, "axis", 0);
    onnx_attrs_int(&down, "exclusive", 1);
    onnx_attrs_int(&across, "axis", 1);
    onnx_attrs_int(&across, "exclusive", 1);
    onnx_attrs_ints(&sum, "axes", (const int64_t[]){1}, 1);
    onnx_attrs_int(&sum, "keepdims", 1);
    onnx_attrs_int(&gather, "axis", axis);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, down.count, down.items, &rows);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, across.count, across.items, &cols);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "reduce_sum", 1, &ones, sum.count, sum.items, &width);
    pair[0] = rows;
    pair[1] = width;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "mul", 2, pair, 0, NULL, &scaled);
    pair[0] = scaled;
    pair[1] = cols;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "add", 2, pair, 0, NULL, &index);
    pair[0] = x;
    pair[1] = index;
    if (status == KILN_OK)
        status = onnx_node_emit(node, "gather", 2, pair, gather.count, gather.items, out);
    return status;
}

/*
 * The one way split_axis applies to reshaping x (sizes `axis`, rank
 * `rank`) to `target` (rank + 1 sizes): every size matches x's but for one
 * axis k whose size is the product of target[k] and target[k+1].
 * @return the axis k, or -1.
 */
static int64_t split_position(onnx_node *node, const char *const *target, uint32_t count,
                              char axis[][SIZE_TEXT], uint32_t rank)
{
    if (count != rank + 1)
        return -1;
    for (uint32_t k = 0; k < rank; k++) {
        bool same = true;
        for (uint32_t i = 0; i < rank && same; i++)
            if (i != k)
                same = strcmp(target[i < k ? i : i + 1], axis[i]) == 0;
        char product[3 * SIZE_TEXT], canonical[SIZE_TEXT];
        snprintf(product, sizeof product, "(%s)*(%s)", target[k], target[k + 1]);
        if (same && onnx_node_canonical_size(node, product, canonical, sizeof canonical) == KILN_OK &&
            strcmp(canonical, axis[k]) == 0)
            return k;
    }
    return -1;
}

/* Transpose x by `perm` (rank entries); the identity permutation emits nothing. */
static kiln_status transpose_by(onnx_node *node, kiln_value x, const int64_t *perm, uint32_t rank, kiln_value *out)
{
    bool identity = true;
    for (uint32_t i = 0; i < rank; i++)
        identity = identity && perm[i] == (int64_t)i;
    if (identity) {
        *out = x;
        return KILN_OK;
    }
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "perm", perm, rank);
    return onnx_node_emit(node, "transpose", 1, &x, list.count, list.items, out);
}

/*
 * Reshape x (axis sizes `axis`, rank `rank`) to `target` (`count` sizes)
 * when the target keeps x's leading sizes (a prefix, same texts) and its
 * trailing sizes (a suffix) and changes only the axes between them into
 * constant sizes (at most one of them inferred, -1, or symbolic and then
 * checked): ShuffleNet's channel shuffle, [batch, c, h, w] to [batch, g,
 * c/g, h, w] and back, with h and w symbolic. kiln's reshape copies a size
 * only at the same position (0), so the suffix axes are moved before the
 * middle by a transpose, the middle reshaped, and the suffix moved back:
 * row-major order within the middle block is what the reshape keeps, and
 * the transposes only carry the suffix axes around it, so the elements
 * are those of ONNX's reshape.
 * @return KILN_OK with *done set when this form applies (the output set),
 *         else KILN_OK with *done false, or an error.
 */
static kiln_status reshape_around_suffix(onnx_node *node, kiln_value x, char axis[][SIZE_TEXT], uint32_t rank,
                                         const char *const *target, uint32_t count, bool *done)
{
    *done = false;
    uint32_t prefix = 0, suffix = 0, shortest = rank < count ? rank : count;
    while (prefix < shortest && strcmp(target[prefix], axis[prefix]) == 0)
        prefix++;
    while (prefix + suffix < shortest && strcmp(target[count - 1 - suffix], axis[rank - 1 - suffix]) == 0)
        suffix++;
    uint32_t middle = count - prefix - suffix, inferred = 0;
    if (suffix == 0 || middle == 0 || rank - prefix - suffix == 0 || count > KILN_MAX_RANK)
        return KILN_OK;
    int64_t shape[KILN_MAX_RANK], perm[KILN_MAX_RANK];
    for (uint32_t i = 0; i < prefix + suffix; i++)
        shape[i] = 0; /* the copied sizes, moved in front */
    for (uint32_t i = 0; i < middle; i++) {
        int64_t *size = &shape[prefix + suffix + i];
        if (!size_constant(target[prefix + i], size))
            *size = -1;
        if (*size == 0 || *size < -1)
            return KILN_OK;
        inferred += *size == -1;
    }
    if (inferred > 1)
        return KILN_OK;
    /* x's axes as prefix, suffix, middle. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < prefix; i++)
        perm[n++] = i;
    for (uint32_t i = rank - suffix; i < rank; i++)
        perm[n++] = i;
    for (uint32_t i = prefix; i < rank - suffix; i++)
        perm[n++] = i;
    kiln_value front, reshaped, y;
    kiln_status status = transpose_by(node, x, perm, rank, &front);
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "shape", shape, count);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "reshape", 1, &front, list.count, list.items, &reshaped);
    /* Back: prefix, middle, suffix. */
    n = 0;
    for (uint32_t i = 0; i < prefix; i++)
        perm[n++] = i;
    for (uint32_t i = 0; i < middle; i++)
        perm[n++] = prefix + suffix + i;
    for (uint32_t i = 0; i < suffix; i++)
        perm[n++] = prefix + i;
    if (status == KILN_OK)
        status = transpose_by(node, reshaped, perm, count, &y);
    for (uint32_t i = 0; status == KILN_OK && i < count; i++) {
        char got[SIZE_TEXT];
        int64_t ignored;
        status = onnx_node_axis_text(node, y, i, got, sizeof got);
        if (status == KILN_OK && strcmp(target[i], "-1") != 0 && !(size_constant(target[i], &ignored) && ignored < 0) &&
            strcmp(got, target[i]) != 0)
            return onnx_node_unsupported(node, "reshaping around the kept trailing sizes gives %s at axis %u, not the "
                                               "target's %s",
                                         got, i, target[i]);
    }
    if (status == KILN_OK)
        status = onnx_node_set_output(node, 0, y);
    *done = status == KILN_OK;
    return status;
}

/*
 * Reshape to a symbolic target (spec/onnx-import.md §3): each size is a
 * constant, the input's size at the same position (kiln's 0: copy) or, for
 * at most one, inferred (-1) and then checked against the target. A target
 * that splits one axis into two symbolic sizes is split_axis.
 */
kiln_status onnx_map_symbolic_reshape(onnx_node *node, const char *kiln_op)
{
    kiln_value x, y;
    kiln_dtype dtype;
    uint32_t rank, count;
    const char *target[KILN_MAX_RANK + 1];
    char axis[KILN_MAX_RANK][SIZE_TEXT], got[SIZE_TEXT], listed[512] = "", target_text[512] = "";
    int64_t shape[KILN_MAX_RANK + 1];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_symbolic_sizes(node, 1, target, KILN_MAX_RANK + 1, &count);
    for (uint32_t a = 0; status == KILN_OK && a < rank; a++)
        status = onnx_node_axis_text(node, x, a, axis[a], SIZE_TEXT);
    if (status != KILN_OK)
        return status;
    uint32_t unresolved = 0, minus_ones = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t used = strlen(target_text);
        snprintf(target_text + used, sizeof target_text - used, "%s%s", i ? ", " : "", target[i]);
        if (size_constant(target[i], &shape[i])) {
            minus_ones += shape[i] == -1;
            continue;
        }
        if (i < rank && strcmp(target[i], axis[i]) == 0) {
            shape[i] = 0;
            continue;
        }
        shape[i] = -1;
        unresolved++;
        used = strlen(listed);
        snprintf(listed + used, sizeof listed - used, "%s%s (axis %u)", used ? ", " : "", target[i], i);
    }
    if (unresolved + minus_ones > 1 && unresolved > 0) {
        int64_t k = split_position(node, target, count, axis, rank);
        kiln_value witness;
        uint32_t witness_rank, axis_a, axis_b;
        if (k >= 0 && onnx_node_find_sizes(node, target[k], target[k + 1], &witness, &witness_rank, &axis_a,
                                           &axis_b)) {
            status = split_axis(node, x, k, witness, witness_rank, axis_a, axis_b, &y);
            for (uint32_t i = 0; status == KILN_OK && i < count; i++) {
                status = onnx_node_axis_text(node, y, i, got, sizeof got);
                if (status == KILN_OK && strcmp(got, target[i]) != 0)
                    return onnx_node_unsupported(node, "splitting axis %lld gives %s at axis %u, not the target's %s",
                                                 (long long)k, got, i, target[i]);
            }
            return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
        }
        bool done;
        status = reshape_around_suffix(node, x, axis, rank, target, count, &done);
        if (status != KILN_OK || done)
            return status;
        return onnx_node_unsupported(node, "the target shape [%s] needs %u inferred sizes: %s%s; kiln's reshape "
                                           "infers at most one (-1), the others must be constants or the input's "
                                           "size at the same position, and they do not split one input axis",
                                     target_text, unresolved + minus_ones, listed,
                                     minus_ones ? " and a -1" : "");
    }
    if (count > KILN_MAX_RANK)
        return onnx_node_unsupported(node, "the target shape [%s] has more than %d sizes", target_text,
                                     KILN_MAX_RANK);
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "shape", shape, count);
    status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &y);
    if (status == KILN_OK && unresolved == 1) {
        for (uint32_t i = 0; i < count; i++)
            if (shape[i] == -1 && !size_constant(target[i], &shape[i])) {
                status = onnx_node_axis_text(node, y, i, got, sizeof got);
                if (status == KILN_OK && strcmp(got, target[i]) != 0)
                    return onnx_node_unsupported(node, "the target shape [%s]: kiln infers %s for axis %u, not %s",
                                                 target_text, got, i, target[i]);
            }
    }
    return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
}

/*
 * Expand to a symbolic target: a target size equal to x's size on the
 * aligned axis (right-aligned, as ONNX broadcasts) keeps that axis, which
 * kiln's expand writes as 1. Any other symbolic size (a 1 broadcast to
 * batch: ViT's class token) makes the node kiln's expand_to, whose target
 * is the shape text itself; its shape rule proves the broadcast over the
 * declared dims, as ONNX's Expand needs it at run time.
 */
/* kiln's expand_to of x to the size texts `target` (spec/ops/shape.md). */
static kiln_status expand_to_text(onnx_node *node, kiln_value x, const char *const *target, uint32_t count)
{
    char text[ONNX_ATTRS_TEXT_MAX];
    onnx_attrs list = {0};
    if (!onnx_shape_text(target, count, text, sizeof text) || !onnx_attrs_string(&list, "shape", text, strlen(text)))
        return onnx_node_unsupported(node, "the target shape is too long to write");
    return onnx_map_emit_output(node, "expand_to", 1, &x, &list);
}

kiln_status onnx_map_symbolic_expand(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, count;
    const char *target[KILN_MAX_RANK];
    int64_t shape[KILN_MAX_RANK];
    char size[SIZE_TEXT];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_symbolic_sizes(node, 1, target, KILN_MAX_RANK, &count);
    if (status != KILN_OK)
        return status;
    for (uint32_t i = 0; i < count; i++) {
        if (size_constant(target[i], &shape[i]))
            continue;
        int64_t aligned = (int64_t)i - (int64_t)count + (int64_t)rank;
        if (aligned >= 0 && (status = onnx_node_axis_text(node, x, (uint32_t)aligned, size, sizeof size)) != KILN_OK)
            return status;
        if (aligned < 0 || strcmp(size, target[i]) != 0)
            return expand_to_text(node, x, target, count);
        shape[i] = 1;
    }
    onnx_attrs list = {0};
    onnx_attrs_ints(&list, "shape", shape, count);
    return onnx_map_emit_output(node, kiln_op, 1, &x, &list);
}

/*
 * The i64 vector start, start + 1, ..., of the symbolic length `length`:
 * ones along an axis of that size in a value already translated (the
 * frame ones_like_axes makes), their exclusive cumulative sum, plus
 * `start`. `what` names the operand in a report.
 */
static kiln_status arange_of_size(onnx_node *node, const char *length, int64_t start, const char *what,
                                  kiln_value *out)
{
    kiln_value witness, ones, pair[2];
    uint32_t rank, axis;
    if (!onnx_node_find_size(node, length, &witness, &rank, &axis))
        return onnx_node_unsupported(node, "%s needs %s indices, and no value translated so far has an axis of that "
                                           "size",
                                     what, length);
    onnx_attrs count = {0};
    onnx_attrs_int(&count, "axis", 0);
    onnx_attrs_int(&count, "exclusive", 1);
    kiln_status status = ones_like_axes(node, witness, rank, axis, axis, &ones);
    if (status == KILN_OK)
        status = onnx_node_emit(node, "cumsum", 1, &ones, count.count, count.items, out);
    if (status == KILN_OK && start != 0) {
        pair[0] = *out;
        status = onnx_node_scalar(node, KILN_I64, (double)start, &pair[1]);
        if (status == KILN_OK)
            status = onnx_node_emit(node, "add", 2, pair, 0, NULL, out);
    }
    return status;
}

/* The size text of `end - start` (start a constant). */
static kiln_status length_text(onnx_node *node, const char *end, int64_t start, char *buffer, size_t size)
{
    if (start == 0) {
        snprintf(buffer, size, "%s", end);
        return KILN_OK;
    }
    char expression[2 * SIZE_TEXT];
    snprintf(expression, sizeof expression, "(%s) - %lld", end, (long long)start);
    return onnx_node_canonical_size(node, expression, buffer, size);
}

/* Slice operand `index` (starts or ends) as size texts, symbolic or constant. */
static kiln_status slice_bound_texts(onnx_node *node, uint32_t index, const char **texts,
                                     char storage[][SIZE_TEXT], uint32_t *count)
{
    if (onnx_node_is_symbolic(node, index))
        return onnx_node_symbolic_sizes(node, index, texts, KILN_MAX_RANK, count);
    int64_t values[KILN_MAX_RANK];
    kiln_status status = onnx_node_constant_ints(node, index, values, KILN_MAX_RANK, count);
    for (uint32_t i = 0; status == KILN_OK && i < *count; i++) {
        snprintf(storage[i], SIZE_TEXT, "%lld", (long long)values[i]);
        texts[i] = storage[i];
    }
    return status;
}

/*
 * Slice (opset 10+) whose starts or ends are symbolic (spec/onnx-import.md
 * §3.1). Per sliced axis: constant bounds stay a kiln slice; a symbolic
 * end equal to the axis's own size is "to the end"; on an axis of
 * constant size N, a constant start s >= 0 with a symbolic end E that is
 * a declared dim (or a constant) at most N everywhere is a gather of the
 * rows s..E-1 (the PyTorch `table[:, :x.size(1)]` of positional tables),
 * with indices from a value of size E - s. Anything else is reported.
 */
kiln_status onnx_map_symbolic_slice(onnx_node *node, const char *kiln_op)
{
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank, start_count = 0, end_count = 0, axis_count = 0, step_count = 0;
    const char *starts[KILN_MAX_RANK], *ends[KILN_MAX_RANK];
    char start_storage[KILN_MAX_RANK][SIZE_TEXT], end_storage[KILN_MAX_RANK][SIZE_TEXT];
    int64_t axes[KILN_MAX_RANK], steps[KILN_MAX_RANK];
    kiln_status status = onnx_node_input(node, 0, &x);
    if (status == KILN_OK)
        status = onnx_node_type(node, x, &dtype, &rank, NULL);
    if (status == KILN_OK)
        status = slice_bound_texts(node, 1, starts, start_storage, &start_count);
    if (status == KILN_OK)
        status = slice_bound_texts(node, 2, ends, end_storage, &end_count);
    if (status == KILN_OK && onnx_node_has_input(node, 3))
        status = onnx_node_constant_ints(node, 3, axes, KILN_MAX_RANK, &axis_count);
    if (status == KILN_OK && onnx_node_has_input(node, 4))
        status = onnx_node_constant_ints(node, 4, steps, KILN_MAX_RANK, &step_count);
    if (status != KILN_OK)
        return status;
    if (end_count != start_count || (onnx_node_has_input(node, 3) && axis_count != start_count) ||
        (onnx_node_has_input(node, 4) && step_count != start_count))
        return onnx_node_unsupported(node, "starts, ends, axes and steps have different lengths");
    int64_t fixed_starts[KILN_MAX_RANK], fixed_ends[KILN_MAX_RANK], fixed_axes[KILN_MAX_RANK],
        fixed_steps[KILN_MAX_RANK];
    uint32_t fixed = 0, gathered = 0, gather_axes[KILN_MAX_RANK];
    int64_t gather_starts[KILN_MAX_RANK];
    const char *gather_ends[KILN_MAX_RANK];
    for (uint32_t i = 0; i < start_count; i++) {
        int64_t a = onnx_node_has_input(node, 3) ? axes[i] : (int64_t)i;
        int64_t step = onnx_node_has_input(node, 4) ? steps[i] : 1, start, end, size;
        if (a < -(int64_t)rank || a >= (int64_t)rank)
            return onnx_node_unsupported(node, "axis %lld is outside the input's rank %u", (long long)a, rank);
        uint32_t axis = (uint32_t)(a < 0 ? a + rank : a);
        char size_text[SIZE_TEXT];
        status = onnx_node_axis_text(node, x, axis, size_text, sizeof size_text);
        if (status != KILN_OK)
            return status;
        bool constant_start = size_constant(starts[i], &start), constant_end = size_constant(ends[i], &end);
        if (constant_start && !constant_end && strcmp(ends[i], size_text) == 0) {
            constant_end = true; /* the axis's own size: to the end */
            end = INT64_MAX;
        }
        if (constant_start && constant_end) {
            fixed_starts[fixed] = start;
            fixed_ends[fixed] = end;
            fixed_axes[fixed] = axis;
            fixed_steps[fixed++] = step;
            continue;
        }
        if (step != 1)
            return onnx_node_unsupported(node, "axis %u has a symbolic start or end and step %lld; only step 1 "
                                               "takes symbolic bounds",
                                         axis, (long long)step);
        int64_t largest;
        if (!constant_start || start < 0 || constant_end || !size_constant(size_text, &size))
            return onnx_node_unsupported(node, "the slice %s..%s of axis %u (size %s) is not supported: a symbolic "
                                               "end must be the axis's own size, or, on an axis of constant size, "
                                               "a declared dim after a constant start >= 0",
                                         starts[i], ends[i], axis, size_text);
        if (!onnx_node_size_max(node, ends[i], &largest))
            return onnx_node_unsupported(node, "the end %s of axis %u is an expression whose largest value the "
                                               "importer does not know; ONNX clamps an end past the axis size "
                                               "(%lld), kiln's gather would not",
                                         ends[i], axis, (long long)size);
        if (largest > size)
            return onnx_node_unsupported(node, "the end %s of axis %u may be %lld, past the axis size %lld, where "
                                               "ONNX clamps it; kiln's gather would not",
                                         ends[i], axis, (long long)largest, (long long)size);
        gather_axes[gathered] = axis;
        gather_starts[gathered] = start;
        gather_ends[gathered++] = ends[i];
    }
    kiln_value y = x;
    if (fixed) {
        onnx_attrs list = {0};
        onnx_attrs_ints(&list, "starts", fixed_starts, fixed);
        onnx_attrs_ints(&list, "ends", fixed_ends, fixed);
        onnx_attrs_ints(&list, "axes", fixed_axes, fixed);
        onnx_attrs_ints(&list, "steps", fixed_steps, fixed);
        status = onnx_node_emit(node, kiln_op, 1, &x, list.count, list.items, &y);
    }
    for (uint32_t g = 0; status == KILN_OK && g < gathered; g++) {
        char length[SIZE_TEXT], what[64];
        kiln_value pair[2];
        snprintf(what, sizeof what, "the slice of axis %u", gather_axes[g]);
        status = length_text(node, gather_ends[g], gather_starts[g], length, sizeof length);
        if (status == KILN_OK)
            status = arange_of_size(node, length, gather_starts[g], what, &pair[1]);
        onnx_attrs gather = {0};
        onnx_attrs_int(&gather, "axis", gather_axes[g]);
        pair[0] = y;
        if (status == KILN_OK)
            status = onnx_node_emit(node, "gather", 2, pair, gather.count, gather.items, &y);
    }
    return status == KILN_OK ? onnx_node_set_output(node, 0, y) : status;
}

/*
 * Range with a symbolic limit L, a constant integer start s and delta 1
 * (spec/onnx-import.md §3.1): s, s + 1, ..., L - 1, of the size L - s, taken
 * from a value already translated that has an axis of that size, cast to
 * the range's dtype.
 */
kiln_status onnx_map_symbolic_range(onnx_node *node)
{
    const char *limit[1];
    uint32_t count;
    const kiln_tensor *start_tensor, *delta_tensor;
    double start, delta;
    kiln_status status = onnx_node_symbolic_sizes(node, 1, limit, 1, &count);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 0, &start_tensor);
    if (status == KILN_OK)
        status = onnx_map_tensor_scalar(node, start_tensor, "input 0 (start)", &start);
    if (status == KILN_OK)
        status = onnx_node_constant(node, 2, &delta_tensor);
    if (status == KILN_OK)
        status = onnx_map_tensor_scalar(node, delta_tensor, "input 2 (delta)", &delta);
    if (status != KILN_OK)
        return status;
    if (count != 1 || delta != 1 || start != floor(start) || fabs(start) > 1e15)
        return onnx_node_unsupported(node, "a range with the symbolic limit %s needs an integer start and delta 1 "
                                           "(start %g, delta %g)",
                                     count ? limit[0] : "?", start, delta);
    char length[SIZE_TEXT];
    kiln_value out;
    status = length_text(node, limit[0], (int64_t)start, length, sizeof length);
    if (status == KILN_OK)
        status = arange_of_size(node, length, (int64_t)start, "the range", &out);
    if (status == KILN_OK)
        status = onnx_map_cast_to(node, &out, kiln_tensor_dtype(start_tensor));
    return status == KILN_OK ? onnx_node_set_output(node, 0, out) : status;
}
