/*
 * gather.c — indexing and gathering (gather, gather_elements,
 * gather_nd, slice, cumsum, one_hot, trilu, depth_to_space,
 * space_to_depth): shape rules and portable reference kernels.
 *
 * Semantics, preconditions and numerics are in spec/ops/gather.md. Data
 * movement copies elements by their byte width, so every dtype moves bit
 * for bit. Every index read from a tensor is checked against the axis it
 * addresses before any read: an index out of range fails the run with
 * KILN_ERR_RUNTIME naming the op, the position and the value. Kernels
 * allocate nothing: a session run must not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "index_range.h"
#include "odometer.h"
#include "op_registry.h"
#include "real_access.h"
#include "size_claim.h"

/* ------------------------------------------------------ shared helpers */

static bool is_const(const kiln_shape_context *ctx, uint32_t id, int64_t *value)
{
    const kiln_expr *e = &ctx->pool->items[id];
    if (e->kind != KILN_EXPR_CONST)
        return false;
    *value = e->constant;
    return true;
}

static kiln_status make_const(const kiln_shape_context *ctx, int64_t value, uint32_t *id, kiln_error *err)
{
    return kiln_expr_const(ctx->pool, value, id, err);
}

static kiln_status make_binary(const kiln_shape_context *ctx, kiln_expr_kind kind, uint32_t lhs, uint32_t rhs,
                               uint32_t *id, kiln_error *err)
{
    kiln_expr node = {.kind = (uint8_t)kind, .lhs = lhs, .rhs = rhs};
    return kiln_expr_intern(ctx->pool, &node, ctx->dim_count, id, err);
}

/* Resolve `axis` (negative counts from the end) against `rank`. */
static kiln_status resolve_axis(const kiln_shape_context *ctx, const char *name, int64_t axis, uint32_t rank,
                                uint32_t *out, kiln_error *err)
{
    int64_t r = rank;
    if (axis < -r || axis >= r)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s %lld is outside %lld..%lld for rank %lld",
                         ctx->node_label, name, (long long)axis, (long long)-r, (long long)(r - 1), (long long)r);
    *out = (uint32_t)(axis < 0 ? axis + r : axis);
    return KILN_OK;
}

static kiln_status require_supported(const kiln_shape_context *ctx, const kiln_value_type *x, kiln_error *err)
{
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    return KILN_OK;
}

static kiln_status require_index_dtype(const kiln_shape_context *ctx, const kiln_value_type *x, kiln_error *err)
{
    if (x->dtype != KILN_I32 && x->dtype != KILN_I64)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices have dtype %s; i32 or i64 is required",
                         ctx->node_label, kiln_dtype_name(x->dtype));
    return KILN_OK;
}

/* Prove `size` >= k (at_least) or size % k == 0 over the domain; `what` names the axis. */
static kiln_status prove_size(const kiln_shape_context *ctx, const char *what, uint32_t size,
                              kiln_size_claim_kind kind, int64_t k, kiln_error *err)
{
    char text[128], claim_text[320], advice[200];
    kiln_format_size(ctx, size, text, sizeof text);
    uint32_t dim;
    bool bare = kiln_expr_is_dim(ctx->pool, size, &dim) && dim < ctx->dim_count;
    if (kind == KILN_CLAIM_AT_LEAST) {
        snprintf(claim_text, sizeof claim_text, "%s %s is >= %lld", what, text, (long long)k);
        if (bare)
            snprintf(advice, sizeof advice, "Declare %s with a minimum of at least %lld", text, (long long)k);
        else
            snprintf(advice, sizeof advice, "Declare the dims so that the axis is at least %lld", (long long)k);
    } else {
        snprintf(claim_text, sizeof claim_text, "%s %s is a multiple of %lld", what, text, (long long)k);
        if (bare)
            snprintf(advice, sizeof advice, "Declare %s multiple_of %lld", text, (long long)k);
        else
            snprintf(advice, sizeof advice, "Declare the dims so that the axis is a multiple of %lld", (long long)k);
    }
    kiln_size_claim claim = {kind, size, 0, k};
    return kiln_prove_size_claim(ctx, &claim, claim_text, advice, err);
}

static kiln_status prove_at_least(const kiln_shape_context *ctx, const char *what, uint32_t expr, int64_t k,
                                  kiln_error *err)
{
    return prove_size(ctx, what, expr, KILN_CLAIM_AT_LEAST, k, err);
}

static int64_t product(const int64_t *shape, uint32_t from, uint32_t to)
{
    int64_t p = 1;
    for (uint32_t i = from; i < to; i++)
        p *= shape[i];
    return p;
}

static kiln_status mismatch(const char *op, kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: operands do not match the op's shape rule", op);
}

/* ---------------------------------------------------------------- gather */

static const kiln_attribute_spec axis_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_gather(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *data = inputs[0], *indices = inputs[1];
    (void)input_count;
    KILN_TRY(require_supported(ctx, data, err));
    KILN_TRY(require_index_dtype(ctx, indices, err));
    if (data->shape.rank == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: data is a scalar; gather needs rank >= 1",
                         ctx->node_label);
    uint32_t axis = 0;
    KILN_TRY(resolve_axis(ctx, "axis", kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", 0),
                          data->shape.rank, &axis, err));
    uint32_t rank = data->shape.rank - 1 + indices->shape.rank;
    if (rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: output rank %u exceeds %d", ctx->node_label, rank,
                         KILN_MAX_RANK);
    out->dtype = data->dtype;
    out->shape.rank = 0;
    for (uint32_t i = 0; i < axis; i++)
        out->shape.axes[out->shape.rank++] = data->shape.axes[i];
    for (uint32_t i = 0; i < indices->shape.rank; i++)
        out->shape.axes[out->shape.rank++] = indices->shape.axes[i];
    for (uint32_t i = axis + 1; i < data->shape.rank; i++)
        out->shape.axes[out->shape.rank++] = data->shape.axes[i];
    return KILN_OK;
}

static kiln_status run_gather(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *data = call->inputs[0], *indices = call->inputs[1];
    kiln_tensor *out = call->output;
    if (data->rank == 0 || data->dtype != out->dtype || (indices->dtype != KILN_I32 && indices->dtype != KILN_I64))
        return mismatch("gather", err);
    int64_t a = kiln_attribute_int(call->attributes, call->attribute_count, "axis", 0);
    if (a < -(int64_t)data->rank || a >= (int64_t)data->rank)
        return mismatch("gather", err);
    uint32_t axis = (uint32_t)(a < 0 ? a + data->rank : a);
    if (out->rank != data->rank - 1 + indices->rank)
        return mismatch("gather", err);
    for (uint32_t i = 0; i < out->rank; i++) {
        int64_t expected = i < axis ? data->shape[i]
                           : i < axis + indices->rank ? indices->shape[i - axis]
                                                      : data->shape[i - indices->rank + 1];
        if (out->shape[i] != expected)
            return mismatch("gather", err);
    }
    int64_t extent = data->shape[axis];
    uint64_t count = indices->element_count;
    /* Check every index before writing anything. */
    for (uint64_t j = 0; j < count; j++) {
        int64_t n;
        KILN_TRY(kiln_normalise_index("gather", indices, j, kiln_index_at(indices, j), extent, &n, err));
    }
    /* Before the products: those of an empty data may overflow. */
    if (out->element_count == 0)
        return KILN_OK;
    int64_t outer = product(data->shape, 0, axis), inner = product(data->shape, axis + 1, data->rank);
    size_t width = kiln_dtype_size(data->dtype), chunk = (size_t)inner * width;
    uint8_t *o = out->data;
    const uint8_t *d = data->data;
    for (int64_t p = 0; p < outer; p++)
        for (uint64_t j = 0; j < count; j++) {
            int64_t n = kiln_index_at(indices, j);
            if (n < 0)
                n += extent;
            memcpy(o, d + (size_t)(p * extent + n) * chunk, chunk);
            o += chunk;
        }
    return KILN_OK;
}

/* ------------------------------------------------------- gather_elements */

static kiln_status infer_gather_elements(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                         uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *data = inputs[0], *indices = inputs[1];
    (void)input_count;
    KILN_TRY(require_supported(ctx, data, err));
    KILN_TRY(require_index_dtype(ctx, indices, err));
    if (data->shape.rank == 0 || indices->shape.rank != data->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: indices must have the rank of data (>= 1); got %u and %u", ctx->node_label,
                         indices->shape.rank, data->shape.rank);
    uint32_t axis = 0;
    KILN_TRY(resolve_axis(ctx, "axis", kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", 0),
                          data->shape.rank, &axis, err));
    for (uint32_t i = 0; i < data->shape.rank; i++) {
        if (i == axis)
            continue;
        uint32_t di = data->shape.axes[i], ii = indices->shape.axes[i];
        int64_t dv, iv;
        if (di == ii || (is_const(ctx, di, &dv) && is_const(ctx, ii, &iv) && iv <= dv))
            continue;
        char dt[128], it[128];
        kiln_format_size(ctx, di, dt, sizeof dt);
        kiln_format_size(ctx, ii, it, sizeof it);
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: cannot prove that indices axis %u (%s) is <= data axis %u (%s) over the declared "
                         "domain; use the same dim on both sides or constants",
                         ctx->node_label, i, it, i, dt);
    }
    out->dtype = data->dtype;
    out->shape = indices->shape;
    return KILN_OK;
}

static kiln_status run_gather_elements(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *data = call->inputs[0], *indices = call->inputs[1];
    kiln_tensor *out = call->output;
    if (data->rank == 0 || data->rank != indices->rank || out->rank != data->rank || data->dtype != out->dtype ||
        (indices->dtype != KILN_I32 && indices->dtype != KILN_I64))
        return mismatch("gather_elements", err);
    int64_t a = kiln_attribute_int(call->attributes, call->attribute_count, "axis", 0);
    if (a < -(int64_t)data->rank || a >= (int64_t)data->rank)
        return mismatch("gather_elements", err);
    uint32_t axis = (uint32_t)(a < 0 ? a + data->rank : a);
    int64_t strides[KILN_MAX_RANK], stride = 1;
    for (uint32_t i = data->rank; i-- > 0;) {
        if (out->shape[i] != indices->shape[i] || (i != axis && indices->shape[i] > data->shape[i]))
            return mismatch("gather_elements", err);
        strides[i] = stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, data->shape[i], &stride))
            stride = 0;
    }
    size_t width = kiln_dtype_size(data->dtype);
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint64_t e = 0; e < out->element_count; e++) {
        int64_t n, offset = 0;
        KILN_TRY(kiln_normalise_index("gather_elements", indices, e, kiln_index_at(indices, e), data->shape[axis], &n,
                                      err));
        for (uint32_t i = 0; i < data->rank; i++)
            offset += (i == axis ? n : index[i]) * strides[i];
        memcpy((uint8_t *)out->data + e * width, (const uint8_t *)data->data + (size_t)offset * width, width);
        kiln_odometer_next(index, out->rank, out->shape);
    }
    return KILN_OK;
}

/* ------------------------------------------------------------- gather_nd */

static const kiln_attribute_spec gather_nd_attributes[] = {
    {"batch_dims", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_gather_nd(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                   uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *data = inputs[0], *indices = inputs[1];
    (void)input_count;
    KILN_TRY(require_supported(ctx, data, err));
    KILN_TRY(require_index_dtype(ctx, indices, err));
    int64_t batch_dims = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "batch_dims", 0);
    if (batch_dims != 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: batch_dims %lld is not supported (only 0)",
                         ctx->node_label, (long long)batch_dims);
    if (indices->shape.rank == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices are a scalar; gather_nd needs rank >= 1",
                         ctx->node_label);
    int64_t k;
    if (!is_const(ctx, indices->shape.axes[indices->shape.rank - 1], &k))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the last axis of indices must be a constant",
                         ctx->node_label);
    if (k < 0 || k > (int64_t)data->shape.rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the last axis of indices (%lld) exceeds the rank of "
                         "data (%u)", ctx->node_label, (long long)k, data->shape.rank);
    uint32_t rank = indices->shape.rank - 1 + data->shape.rank - (uint32_t)k;
    if (rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: output rank %u exceeds %d", ctx->node_label, rank,
                         KILN_MAX_RANK);
    out->dtype = data->dtype;
    out->shape.rank = 0;
    for (uint32_t i = 0; i + 1 < indices->shape.rank; i++)
        out->shape.axes[out->shape.rank++] = indices->shape.axes[i];
    for (uint32_t i = (uint32_t)k; i < data->shape.rank; i++)
        out->shape.axes[out->shape.rank++] = data->shape.axes[i];
    return KILN_OK;
}

static kiln_status run_gather_nd(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *data = call->inputs[0], *indices = call->inputs[1];
    kiln_tensor *out = call->output;
    if (indices->rank == 0 || data->dtype != out->dtype || (indices->dtype != KILN_I32 && indices->dtype != KILN_I64))
        return mismatch("gather_nd", err);
    int64_t k = indices->shape[indices->rank - 1];
    if (k > (int64_t)data->rank || out->rank != indices->rank - 1 + data->rank - (uint32_t)k)
        return mismatch("gather_nd", err);
    for (uint32_t i = 0; i < out->rank; i++) {
        int64_t expected = i + 1 < indices->rank ? indices->shape[i] : data->shape[i - (indices->rank - 1) + k];
        if (out->shape[i] != expected)
            return mismatch("gather_nd", err);
    }
    /* An empty result reads no index: with k = 0, indices (2^63-1, 0) ask
     * for 2^63-1 tuples of nothing. */
    if (out->element_count == 0)
        return KILN_OK;
    int64_t tuples = product(indices->shape, 0, indices->rank - 1);
    int64_t inner = product(data->shape, (uint32_t)k, data->rank);
    size_t width = kiln_dtype_size(data->dtype), chunk = (size_t)inner * width;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t offset = 0;
        for (int64_t c = 0; c < k; c++) {
            uint64_t position = (uint64_t)(t * k + c);
            int64_t n;
            KILN_TRY(kiln_normalise_index("gather_nd", indices, position, kiln_index_at(indices, position),
                                          data->shape[c], &n, err));
            offset = offset * data->shape[c] + n;
        }
        if (chunk)
            memcpy((uint8_t *)out->data + (size_t)t * chunk, (const uint8_t *)data->data + (size_t)offset * chunk,
                   chunk);
    }
    return KILN_OK;
}

/* ----------------------------------------------------------------- slice */

static const kiln_attribute_spec slice_attributes[] = {
    {"axes", KILN_ATTRIBUTE_INTS},
    {"ends", KILN_ATTRIBUTE_INTS},
    {"starts", KILN_ATTRIBUTE_INTS},
    {"steps", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/* One sliced axis: first element, step and element count for an axis of size n (ONNX clamping). */
static void slice_axis(int64_t n, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count)
{
    if (start < 0)
        start = start < -n ? 0 : start + n;
    if (end < 0)
        end = end < -n ? -1 : end + n;
    if (step > 0) {
        if (start > n)
            start = n;
        if (end > n)
            end = n;
        if (end < 0)
            end = 0;
        *count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
        if (start > n - 1)
            start = n - 1;
        if (end > n - 1)
            end = n - 1;
        /* end may be -1 here: the slice then runs through element 0. */
        *count = start > end ? (start - end - 1) / -step + 1 : 0;
    }
    *first = start;
}

typedef struct slice_plan {
    uint32_t count;
    uint32_t axis[KILN_MAX_RANK];
    int64_t start[KILN_MAX_RANK], end[KILN_MAX_RANK], step[KILN_MAX_RANK];
} slice_plan;

/* Read and check the attributes; @return NULL on success, else what is wrong. */
static const char *slice_read(const kiln_node_attribute *attributes, uint32_t attribute_count, uint32_t rank,
                              slice_plan *plan)
{
    const kiln_node_attribute *starts = kiln_attribute_find(attributes, attribute_count, "starts");
    const kiln_node_attribute *ends = kiln_attribute_find(attributes, attribute_count, "ends");
    const kiln_node_attribute *axes = kiln_attribute_find(attributes, attribute_count, "axes");
    const kiln_node_attribute *steps = kiln_attribute_find(attributes, attribute_count, "steps");
    if (!starts || !ends)
        return "starts and ends are required";
    if (starts->count != ends->count || (axes && axes->count != starts->count) ||
        (steps && steps->count != starts->count))
        return "starts, ends, axes and steps must have the same length";
    if (starts->count > rank)
        return "more sliced axes than the input has";
    bool seen[KILN_MAX_RANK] = {false};
    plan->count = starts->count;
    for (uint32_t i = 0; i < starts->count; i++) {
        int64_t a = axes ? axes->ints[i] : (int64_t)i;
        if (a < -(int64_t)rank || a >= (int64_t)rank)
            return "an axis is outside the input's rank";
        if (a < 0)
            a += rank;
        if (seen[a])
            return "an axis is repeated";
        seen[a] = true;
        plan->axis[i] = (uint32_t)a;
        plan->start[i] = starts->ints[i];
        plan->end[i] = ends->ints[i];
        plan->step[i] = steps ? steps->ints[i] : 1;
        if (plan->step[i] == 0)
            return "a step is 0";
        if (plan->step[i] == INT64_MIN)
            return "a step is too large";
    }
    return NULL;
}

/*
 * Whether a slice with a step other than 1 takes a symbolic axis whole,
 * over sizes in `bounds`: for step k > 0 from start 0 (or a start clamped
 * to 0 everywhere) to the end, for step -k from the last element (start
 * -1, or a start clamped to size - 1 everywhere) to the beginning (an end
 * below -size everywhere: INT64_MIN, or PyTorch's -INT64_MAX for
 * torch.flip). Either visits ceil(size / k) elements (slice_whole_size).
 */
static bool slice_is_whole(const kiln_interval *bounds, int64_t start, int64_t end, int64_t step)
{
    if (step == INT64_MIN || bounds->hi >= INT64_MAX)
        return false;
    int64_t hi = bounds->hi;
    return step > 0 ? (start == 0 || start <= -hi) && end >= hi : (start == -1 || start >= hi - 1) && end < -hi;
}

/*
 * ceil(size / k) for a whole-axis slice of step +-k: `size` itself for
 * k = 1, else (size + k - 1) floordiv k; at size 0 both are 0, as ONNX's
 * clamping gives.
 */
static kiln_status slice_whole_size(const kiln_shape_context *ctx, uint32_t size, int64_t step, uint32_t *out,
                                    kiln_error *err)
{
    int64_t k = step > 0 ? step : -step;
    if (k == 1) {
        *out = size;
        return KILN_OK;
    }
    uint32_t pad, summed, divisor;
    KILN_TRY(make_const(ctx, k - 1, &pad, err));
    KILN_TRY(make_binary(ctx, KILN_EXPR_ADD, size, pad, &summed, err));
    KILN_TRY(make_const(ctx, k, &divisor, err));
    return make_binary(ctx, KILN_EXPR_FLOORDIV, summed, divisor, out, err);
}

static kiln_status infer_slice(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                               uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x, err));
    slice_plan plan;
    const char *problem = slice_read(ctx->attributes, ctx->attribute_count, x->shape.rank, &plan);
    if (problem)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, problem);
    kiln_interval *ranges = malloc((ctx->dim_count + 1) * sizeof *ranges);
    if (!ranges)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->node_label);
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        ranges[d].lo = kiln_dim_first(&ctx->dims[d]);
        ranges[d].hi = kiln_dim_last(&ctx->dims[d]);
    }
    out->dtype = x->dtype;
    out->shape = x->shape;
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; i < plan.count && status == KILN_OK; i++) {
        uint32_t a = plan.axis[i], size = x->shape.axes[a];
        int64_t start = plan.start[i], end = plan.end[i], step = plan.step[i], n, first, count;
        if (is_const(ctx, size, &n)) {
            slice_axis(n, start, end, step, &first, &count);
            status = make_const(ctx, count, &out->shape.axes[a], err);
            continue;
        }
        kiln_interval iv;
        bool bounded = kiln_expr_bounds(ctx->pool, size, ranges, &iv);
        bool to_end = bounded && end >= iv.hi;
        char what[64], text[128];
        kiln_format_size(ctx, size, text, sizeof text);
        snprintf(what, sizeof what, "input axis %u", a);
        if (step != 1 && bounded && slice_is_whole(&iv, start, end, step)) {
            status = slice_whole_size(ctx, size, step, &out->shape.axes[a], err);
        } else if (step != 1) {
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                   "%s: slice %lld..%lld of symbolic axis %u (%s) with step %lld is not supported; "
                                   "a step other than 1 slices a symbolic axis only whole (from its first element "
                                   "to the end, or for a negative step from its last to the beginning)",
                                   ctx->node_label, (long long)start, (long long)end, a, text, (long long)step);
        } else if (start >= 0 && end >= 0 && bounded && iv.lo >= end) {
            status = make_const(ctx, end > start ? end - start : 0, &out->shape.axes[a], err);
        } else if (start >= 0 && to_end) {
            status = prove_at_least(ctx, what, size, start, err);
            if (status == KILN_OK && start != 0) {
                uint32_t s;
                status = make_const(ctx, start, &s, err);
                if (status == KILN_OK)
                    status = make_binary(ctx, KILN_EXPR_SUB, size, s, &out->shape.axes[a], err);
            }
        } else if (start < 0 && start != INT64_MIN && to_end) {
            status = prove_at_least(ctx, what, size, -start, err);
            if (status == KILN_OK)
                status = make_const(ctx, -start, &out->shape.axes[a], err);
        } else if (start >= 0 && end >= 0) {
            status = prove_at_least(ctx, what, size, end, err);
            if (status == KILN_OK)
                status = make_const(ctx, end > start ? end - start : 0, &out->shape.axes[a], err);
        } else if (start >= 0 && end < 0 && end != INT64_MIN && start <= INT64_MAX + end) {
            /* x[:, s:-k]: with size >= s + k the clamped end size - k is at
             * least the start, so exactly size - k - s elements remain. */
            uint32_t cut;
            status = prove_at_least(ctx, what, size, start - end, err);
            if (status == KILN_OK)
                status = make_const(ctx, start - end, &cut, err);
            if (status == KILN_OK)
                status = make_binary(ctx, KILN_EXPR_SUB, size, cut, &out->shape.axes[a], err);
        } else if (start < 0 && end < 0 && start != INT64_MIN && end != INT64_MIN) {
            /* x[:, -j:-k]: with size >= j neither bound is clamped. */
            status = prove_at_least(ctx, what, size, -start, err);
            if (status == KILN_OK)
                status = make_const(ctx, end > start ? end - start : 0, &out->shape.axes[a], err);
        } else {
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                               "%s: slice %lld..%lld of symbolic axis %u (%s) is not supported; supported forms "
                               "with step 1: start >= 0 to the end, 0 <= start..end within the axis, negative "
                               "start to the end",
                               ctx->node_label, (long long)start, (long long)end, a, text);
        }
    }
    free(ranges);
    return status;
}

static kiln_status run_slice(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *out = call->output;
    slice_plan plan;
    if (x->rank != out->rank || x->dtype != out->dtype ||
        slice_read(call->attributes, call->attribute_count, x->rank, &plan))
        return mismatch("slice", err);
    int64_t first[KILN_MAX_RANK], step[KILN_MAX_RANK], strides[KILN_MAX_RANK], stride = 1;
    for (uint32_t i = x->rank; i-- > 0;) {
        first[i] = 0;
        step[i] = 1;
        strides[i] = stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, x->shape[i], &stride))
            stride = 0;
    }
    int64_t expected[KILN_MAX_RANK];
    memcpy(expected, x->shape, sizeof expected);
    for (uint32_t i = 0; i < plan.count; i++) {
        uint32_t a = plan.axis[i];
        slice_axis(x->shape[a], plan.start[i], plan.end[i], plan.step[i], &first[a], &expected[a]);
        step[a] = plan.step[i];
    }
    for (uint32_t i = 0; i < x->rank; i++)
        if (expected[i] != out->shape[i])
            return mismatch("slice", err);
    size_t width = kiln_dtype_size(x->dtype);
    /* Copied a run at a time: the trailing axes taken whole are contiguous
     * in x and in the result, and so is the axis before them when its step
     * is 1, so one memcpy copies them all (a channel split of a batch-1
     * [1, 48, 14, 14] is one copy, not 336 of a row: 1.6 -> 0.3 us); the
     * odometer steps the axes before the run. */
    uint32_t walked = out->rank;
    uint64_t run = 1;
    while (walked > 0 && first[walked - 1] == 0 && step[walked - 1] == 1 &&
           out->shape[walked - 1] == x->shape[walked - 1]) {
        walked--;
        run *= (uint64_t)out->shape[walked];
    }
    if (walked > 0 && step[walked - 1] == 1) {
        walked--;
        run *= (uint64_t)out->shape[walked];
    }
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint64_t e = 0; run && e < out->element_count; e += run) {
        int64_t offset = 0;
        for (uint32_t i = 0; i < x->rank; i++)
            offset += (first[i] + index[i] * step[i]) * strides[i];
        memcpy((uint8_t *)out->data + e * width, (const uint8_t *)x->data + (size_t)offset * width, run * width);
        kiln_odometer_next(index, walked, out->shape);
    }
    return KILN_OK;
}

/* ---------------------------------------------------------------- cumsum */

static const kiln_attribute_spec cumsum_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"exclusive", KILN_ATTRIBUTE_INT},
    {"reverse", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

/* f16 and bf16 are summed by the f32 kernel and rounded once (half_compute.h). */
static bool is_cumsum_dtype(kiln_dtype d)
{
    return d == KILN_F32 || d == KILN_F64 || d == KILN_F16 || d == KILN_BF16 || d == KILN_I8 || d == KILN_I16 ||
           d == KILN_I32 || d == KILN_I64 ||
           d == KILN_U8 || d == KILN_U16 || d == KILN_U32 || d == KILN_U64;
}

static kiln_status infer_cumsum(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    if (!is_cumsum_dtype(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: dtype %s is not supported (f32, f64, f16, bf16, i8..i64, u8..u64)", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    if (x->shape.rank == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: input is a scalar; cumsum needs rank >= 1",
                         ctx->node_label);
    uint32_t axis = 0;
    KILN_TRY(resolve_axis(ctx, "axis", kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", 0),
                          x->shape.rank, &axis, err));
    int64_t exclusive = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "exclusive", 0);
    int64_t reverse = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "reverse", 0);
    if ((exclusive != 0 && exclusive != 1) || (reverse != 0 && reverse != 1))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: exclusive and reverse must be 0 or 1",
                         ctx->node_label);
    *out = *x;
    return KILN_OK;
}

/* Running sums along an axis of `n` elements `inner` apart; T the storage type, A the accumulator. */
#define DEFINE_CUMSUM(T, A, SUFFIX)                                                                   \
    static void cumsum_##SUFFIX(const void *vin, void *vout, int64_t outer, int64_t n, int64_t inner, \
                                bool exclusive, bool reverse)                                         \
    {                                                                                                 \
        const T *in = vin;                                                                            \
        T *o = vout;                                                                                  \
        for (int64_t p = 0; p < outer; p++)                                                           \
            for (int64_t q = 0; q < inner; q++) {                                                     \
                A sum = 0;                                                                            \
                for (int64_t s = 0; s < n; s++) {                                                     \
                    int64_t i = reverse ? n - 1 - s : s;                                              \
                    size_t at = (size_t)((p * n + i) * inner + q);                                    \
                    A value = (A)in[at];                                                              \
                    if (exclusive) {                                                                  \
                        o[at] = (T)sum;                                                               \
                        sum += value;                                                                 \
                    } else {                                                                          \
                        sum += value;                                                                 \
                        o[at] = (T)sum;                                                               \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
    }
DEFINE_CUMSUM(float, float, f32)
DEFINE_CUMSUM(double, double, f64)
DEFINE_CUMSUM(int8_t, uint8_t, i8)
DEFINE_CUMSUM(int16_t, uint16_t, i16)
DEFINE_CUMSUM(int32_t, uint32_t, i32)
DEFINE_CUMSUM(int64_t, uint64_t, i64)
DEFINE_CUMSUM(uint8_t, uint8_t, u8)
DEFINE_CUMSUM(uint16_t, uint16_t, u16)
DEFINE_CUMSUM(uint32_t, uint32_t, u32)
DEFINE_CUMSUM(uint64_t, uint64_t, u64)

static kiln_status run_cumsum(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *out = call->output;
    if (x->rank == 0 || x->rank != out->rank || x->dtype != out->dtype ||
        memcmp(x->shape, out->shape, x->rank * sizeof x->shape[0]) != 0)
        return mismatch("cumsum", err);
    KILN_HALF_IN_F32(call, run_cumsum, err);
    int64_t a = kiln_attribute_int(call->attributes, call->attribute_count, "axis", 0);
    if (a < -(int64_t)x->rank || a >= (int64_t)x->rank)
        return mismatch("cumsum", err);
    uint32_t axis = (uint32_t)(a < 0 ? a + x->rank : a);
    bool exclusive = kiln_attribute_int(call->attributes, call->attribute_count, "exclusive", 0) != 0;
    bool reverse = kiln_attribute_int(call->attributes, call->attribute_count, "reverse", 0) != 0;
    /* Before the products: those of an empty x may overflow ((0, 2^62, 4)). */
    if (x->element_count == 0)
        return KILN_OK;
    int64_t outer = product(x->shape, 0, axis), n = x->shape[axis], inner = product(x->shape, axis + 1, x->rank);
    switch (x->dtype) {
    case KILN_F32: cumsum_f32(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_F64: cumsum_f64(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_I8: cumsum_i8(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_I16: cumsum_i16(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_I32: cumsum_i32(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_I64: cumsum_i64(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_U8: cumsum_u8(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_U16: cumsum_u16(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_U32: cumsum_u32(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    case KILN_U64: cumsum_u64(x->data, out->data, outer, n, inner, exclusive, reverse); break;
    default:
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "cumsum: no kernel for dtype %s",
                         kiln_dtype_name(x->dtype));
    }
    return KILN_OK;
}

/* --------------------------------------------------------------- one_hot */

static const kiln_attribute_spec one_hot_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"depth", KILN_ATTRIBUTE_INT},
    {"dtype", KILN_ATTRIBUTE_STRING},
    {"off_value", KILN_ATTRIBUTE_FLOAT},
    {"on_value", KILN_ATTRIBUTE_FLOAT},
    {NULL, 0},
};

static bool is_one_hot_dtype(kiln_dtype d)
{
    return is_cumsum_dtype(d) || d == KILN_BOOL;
}

/* The output dtype named by the node's dtype attribute (default f32). */
static bool one_hot_dtype(const kiln_node_attribute *attributes, uint32_t count, kiln_dtype *out)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "dtype");
    if (!a) {
        *out = KILN_F32;
        return true;
    }
    return a->s && kiln_dtype_from_name(a->s, out) == KILN_OK && is_one_hot_dtype(*out);
}

static kiln_status infer_one_hot(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *indices = inputs[0];
    (void)input_count;
    KILN_TRY(require_index_dtype(ctx, indices, err));
    const kiln_node_attribute *depth = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "depth");
    if (!depth || depth->i < 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: depth is required and must be >= 1",
                         ctx->node_label);
    if (indices->shape.rank + 1 > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: output rank exceeds %d", ctx->node_label,
                         KILN_MAX_RANK);
    uint32_t axis = 0;
    KILN_TRY(resolve_axis(ctx, "axis", kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", -1),
                          indices->shape.rank + 1, &axis, err));
    if (!one_hot_dtype(ctx->attributes, ctx->attribute_count, &out->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: dtype must name f32, f64, f16, bf16, i8..i64, u8..u64 or bool", ctx->node_label);
    out->shape.rank = indices->shape.rank + 1;
    for (uint32_t i = 0, j = 0; i < out->shape.rank; i++) {
        if (i == axis)
            KILN_TRY(make_const(ctx, depth->i, &out->shape.axes[i], err));
        else
            out->shape.axes[i] = indices->shape.axes[j++];
    }
    return KILN_OK;
}

/* Whether `value` converts to the element type without undefined behaviour. */
static bool value_fits(kiln_dtype d, double v)
{
    switch (d) {
    case KILN_F32:
    case KILN_F64:
    case KILN_F16: /* rounded once; beyond the range, to infinity */
    case KILN_BF16:
    case KILN_BOOL: return true;
    case KILN_I8: return v > -129.0 && v < 128.0;
    case KILN_I16: return v > -32769.0 && v < 32768.0;
    case KILN_I32: return v > -2147483649.0 && v < 2147483648.0;
    case KILN_I64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case KILN_U8: return v > -1.0 && v < 256.0;
    case KILN_U16: return v > -1.0 && v < 65536.0;
    case KILN_U32: return v > -1.0 && v < 4294967296.0;
    case KILN_U64: return v > -1.0 && v < 18446744073709551616.0;
    default: return false;
    }
}

static kiln_status run_one_hot(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *indices = call->inputs[0];
    kiln_tensor *out = call->output;
    kiln_dtype dtype;
    int64_t depth = kiln_attribute_int(call->attributes, call->attribute_count, "depth", 0);
    int64_t a = kiln_attribute_int(call->attributes, call->attribute_count, "axis", -1);
    int64_t rank = (int64_t)indices->rank + 1;
    if ((indices->dtype != KILN_I32 && indices->dtype != KILN_I64) || out->rank != (uint32_t)rank || depth < 1 ||
        a < -rank || a >= rank || !one_hot_dtype(call->attributes, call->attribute_count, &dtype) ||
        dtype != out->dtype)
        return mismatch("one_hot", err);
    uint32_t axis = (uint32_t)(a < 0 ? a + rank : a);
    for (uint32_t i = 0, j = 0; i < out->rank; i++)
        if (out->shape[i] != (i == axis ? depth : indices->shape[j++]))
            return mismatch("one_hot", err);
    double on = kiln_attribute_float(call->attributes, call->attribute_count, "on_value", 1.0);
    double off = kiln_attribute_float(call->attributes, call->attribute_count, "off_value", 0.0);
    if (!value_fits(dtype, on) || !value_fits(dtype, off))
        return kiln_fail(err, KILN_ERR_RUNTIME, "one_hot: on_value %g or off_value %g does not fit dtype %s", on,
                         off, kiln_dtype_name(dtype));
    /* An empty result has nothing to mark; the depth loop below would still
     * run `depth` (up to 2^63-1) times over an empty inner block. */
    if (out->element_count == 0)
        return KILN_OK;
    int64_t outer = product(indices->shape, 0, axis), inner = product(indices->shape, axis, indices->rank);
    for (int64_t p = 0; p < outer; p++)
        for (int64_t d = 0; d < depth; d++)
            for (int64_t q = 0; q < inner; q++) {
                int64_t v = kiln_index_at(indices, (uint64_t)(p * inner + q));
                if (v < 0 && v >= -depth)
                    v += depth;
                kiln_store_converted(out->dtype, out->data, (uint64_t)((p * depth + d) * inner + q), v == d ? on : off);
            }
    return KILN_OK;
}

/* ----------------------------------------------------------------- trilu */

static const kiln_attribute_spec trilu_attributes[] = {
    {"k", KILN_ATTRIBUTE_INT},
    {"upper", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_trilu(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                               uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    KILN_TRY(require_supported(ctx, x, err));
    if (x->shape.rank < 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: trilu needs rank >= 2 (got %u)", ctx->node_label,
                         x->shape.rank);
    int64_t upper = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "upper", 1);
    if (upper != 0 && upper != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: upper must be 0 or 1 (got %lld)", ctx->node_label,
                         (long long)upper);
    *out = *x;
    return KILN_OK;
}

static kiln_status run_trilu(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *out = call->output;
    if (x->rank < 2 || x->rank != out->rank || x->dtype != out->dtype ||
        memcmp(x->shape, out->shape, x->rank * sizeof x->shape[0]) != 0)
        return mismatch("trilu", err);
    bool upper = kiln_attribute_int(call->attributes, call->attribute_count, "upper", 1) != 0;
    int64_t k = kiln_attribute_int(call->attributes, call->attribute_count, "k", 0);
    if (x->element_count == 0)
        return KILN_OK; /* rows * cols below may overflow for an empty x */
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
    size_t width = kiln_dtype_size(x->dtype);
    uint64_t matrices = x->element_count / (uint64_t)(rows * cols);
    for (uint64_t m = 0; m < matrices; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                size_t at = (size_t)((int64_t)m * rows * cols + i * cols + j) * width;
                /* j - i cannot overflow: both are extents below 2^62. */
                bool keep = upper ? j - i >= k : j - i <= k;
                if (keep)
                    memcpy((uint8_t *)out->data + at, (const uint8_t *)x->data + at, width);
                else
                    memset((uint8_t *)out->data + at, 0, width);
            }
    return KILN_OK;
}

/* -------------------------------------------- depth_to_space / space_to_depth */

static const kiln_attribute_spec depth_to_space_attributes[] = {
    {"blocksize", KILN_ATTRIBUTE_INT},
    {"mode", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

static const kiln_attribute_spec space_to_depth_attributes[] = {
    {"blocksize", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

/* 0 = DCR, 1 = CRD, -1 = not a mode. */
static int block_mode(const kiln_node_attribute *attributes, uint32_t count)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "mode");
    if (!a)
        return 0;
    if (a->s && strcmp(a->s, "DCR") == 0)
        return 0;
    if (a->s && strcmp(a->s, "CRD") == 0)
        return 1;
    return -1;
}

/* size * factor, kept small: constants fold, factor 1 keeps the size. */
static kiln_status scale_size(const kiln_shape_context *ctx, uint32_t size, int64_t factor, uint32_t *out,
                              kiln_error *err)
{
    int64_t v;
    if (factor == 1) {
        *out = size;
        return KILN_OK;
    }
    if (is_const(ctx, size, &v)) {
        if (__builtin_mul_overflow(v, factor, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return make_const(ctx, v, out, err);
    }
    uint32_t c;
    KILN_TRY(make_const(ctx, factor, &c, err));
    return make_binary(ctx, KILN_EXPR_MUL, c, size, out, err);
}

/* size / divisor after proving size % divisor == 0 over the domain. */
static kiln_status divide_size(const kiln_shape_context *ctx, const char *what, uint32_t size, int64_t divisor,
                               uint32_t *out, kiln_error *err)
{
    KILN_TRY(prove_size(ctx, what, size, KILN_CLAIM_MULTIPLE_OF, divisor, err));
    int64_t v;
    if (divisor == 1) {
        *out = size;
        return KILN_OK;
    }
    if (is_const(ctx, size, &v))
        return make_const(ctx, v / divisor, out, err);
    uint32_t d;
    KILN_TRY(make_const(ctx, divisor, &d, err));
    return make_binary(ctx, KILN_EXPR_FLOORDIV, size, d, out, err);
}

static kiln_status block_common(const kiln_shape_context *ctx, const kiln_value_type *x, int64_t *blocksize,
                                kiln_error *err)
{
    KILN_TRY(require_supported(ctx, x, err));
    if (x->shape.rank != 4)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: input must have rank 4 (NCHW); got %u",
                         ctx->node_label, x->shape.rank);
    const kiln_node_attribute *b = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "blocksize");
    if (!b || b->i < 1 || b->i > 3037000499) /* b*b must fit int64 */
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: blocksize is required and must be >= 1",
                         ctx->node_label);
    *blocksize = b->i;
    return KILN_OK;
}

static kiln_status infer_depth_to_space(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                        uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    int64_t b;
    (void)input_count;
    KILN_TRY(block_common(ctx, x, &b, err));
    if (block_mode(ctx->attributes, ctx->attribute_count) < 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: mode must be \"DCR\" or \"CRD\"", ctx->node_label);
    out->dtype = x->dtype;
    out->shape.rank = 4;
    out->shape.axes[0] = x->shape.axes[0];
    KILN_TRY(divide_size(ctx, "input axis 1 (channels)", x->shape.axes[1], b * b, &out->shape.axes[1], err));
    KILN_TRY(scale_size(ctx, x->shape.axes[2], b, &out->shape.axes[2], err));
    KILN_TRY(scale_size(ctx, x->shape.axes[3], b, &out->shape.axes[3], err));
    return KILN_OK;
}

static kiln_status infer_space_to_depth(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                        uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    int64_t b;
    (void)input_count;
    KILN_TRY(block_common(ctx, x, &b, err));
    out->dtype = x->dtype;
    out->shape.rank = 4;
    out->shape.axes[0] = x->shape.axes[0];
    KILN_TRY(scale_size(ctx, x->shape.axes[1], b * b, &out->shape.axes[1], err));
    KILN_TRY(divide_size(ctx, "input axis 2 (height)", x->shape.axes[2], b, &out->shape.axes[2], err));
    KILN_TRY(divide_size(ctx, "input axis 3 (width)", x->shape.axes[3], b, &out->shape.axes[3], err));
    return KILN_OK;
}

/*
 * Move elements between the depth form d[N, C*b*b, H, W] and the space
 * form s[N, C, H*b, W*b]: s[n][c][h*b+i][w*b+j] is
 * d[n][(i*b+j)*C + c][h][w] (DCR) or d[n][c*b*b + i*b + j][h][w] (CRD).
 * `to_space` copies depth -> space, else space -> depth.
 */
static void block_move(const kiln_tensor *depth_form, const kiln_tensor *space_form, int64_t b, bool crd,
                       bool to_space)
{
    int64_t n_count = space_form->shape[0], c_count = space_form->shape[1];
    int64_t h_count = depth_form->shape[2], w_count = depth_form->shape[3];
    int64_t dc = depth_form->shape[1], sh = space_form->shape[2], sw = space_form->shape[3];
    size_t width = kiln_dtype_size(depth_form->dtype);
    /* The loops below run b*b times per channel even when the planes are
     * empty; b can be 3037000499 (b*b near 2^63) with no element at all. */
    if (depth_form->element_count == 0)
        return;
    for (int64_t n = 0; n < n_count; n++)
        for (int64_t c = 0; c < c_count; c++)
            for (int64_t i = 0; i < b; i++)
                for (int64_t j = 0; j < b; j++) {
                    int64_t channel = crd ? c * b * b + i * b + j : (i * b + j) * c_count + c;
                    for (int64_t h = 0; h < h_count; h++)
                        for (int64_t w = 0; w < w_count; w++) {
                            size_t d_at = (size_t)(((n * dc + channel) * h_count + h) * w_count + w) * width;
                            size_t s_at = (size_t)(((n * c_count + c) * sh + h * b + i) * sw + w * b + j) * width;
                            if (to_space)
                                memcpy((uint8_t *)space_form->data + s_at, (const uint8_t *)depth_form->data + d_at,
                                       width);
                            else
                                memcpy((uint8_t *)depth_form->data + d_at, (const uint8_t *)space_form->data + s_at,
                                       width);
                        }
                }
}

/* The shapes agree with depth form d and space form s for blocksize b. */
static bool block_shapes_agree(const kiln_tensor *d, const kiln_tensor *s, int64_t b)
{
    int64_t channels, height, width;
    return d->rank == 4 && s->rank == 4 && d->dtype == s->dtype && b >= 1 && d->shape[0] == s->shape[0] &&
           !__builtin_mul_overflow(s->shape[1], b * b, &channels) && d->shape[1] == channels &&
           !__builtin_mul_overflow(d->shape[2], b, &height) && s->shape[2] == height &&
           !__builtin_mul_overflow(d->shape[3], b, &width) && s->shape[3] == width;
}

static kiln_status run_depth_to_space(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    int64_t b = kiln_attribute_int(call->attributes, call->attribute_count, "blocksize", 0);
    int mode = block_mode(call->attributes, call->attribute_count);
    if (mode < 0 || b < 1 || b > 3037000499 || !block_shapes_agree(call->inputs[0], call->output, b))
        return mismatch("depth_to_space", err);
    block_move(call->inputs[0], call->output, b, mode == 1, true);
    return KILN_OK;
}

static kiln_status run_space_to_depth(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    int64_t b = kiln_attribute_int(call->attributes, call->attribute_count, "blocksize", 0);
    if (b < 1 || b > 3037000499 || !block_shapes_agree(call->output, call->inputs[0], b))
        return mismatch("space_to_depth", err);
    block_move(call->output, call->inputs[0], b, false, false);
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def gather_ops[] = {
    {.name = "gather", .versions = {1, 1}, .inputs = {2, 2}, .attributes = axis_attributes,
     .infer = infer_gather, .run = run_gather},
    {.name = "gather_elements", .versions = {1, 1}, .inputs = {2, 2}, .attributes = axis_attributes,
     .infer = infer_gather_elements, .run = run_gather_elements},
    {.name = "gather_nd", .versions = {1, 1}, .inputs = {2, 2}, .attributes = gather_nd_attributes,
     .infer = infer_gather_nd, .run = run_gather_nd},
    {.name = "slice", .versions = {1, 1}, .inputs = {1, 1}, .attributes = slice_attributes,
     .infer = infer_slice, .run = run_slice, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "cumsum", .versions = {1, 1}, .inputs = {1, 1}, .attributes = cumsum_attributes,
     .infer = infer_cumsum, .run = run_cumsum},
    {.name = "one_hot", .versions = {1, 1}, .inputs = {1, 1}, .attributes = one_hot_attributes,
     .infer = infer_one_hot, .run = run_one_hot},
    {.name = "trilu", .versions = {1, 1}, .inputs = {1, 1}, .attributes = trilu_attributes,
     .infer = infer_trilu, .run = run_trilu},
    {.name = "depth_to_space", .versions = {1, 1}, .inputs = {1, 1}, .attributes = depth_to_space_attributes,
     .infer = infer_depth_to_space, .run = run_depth_to_space},
    {.name = "space_to_depth", .versions = {1, 1}, .inputs = {1, 1}, .attributes = space_to_depth_attributes,
     .infer = infer_space_to_depth, .run = run_space_to_depth},
};

const kiln_op_family kiln_ops_gather = KILN_OP_FAMILY(gather_ops, "spec/ops/gather.md");
