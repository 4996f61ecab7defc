/*
 * scatter.c — writing updates into a copy of a tensor at indexed
 * positions (scatter_elements, scatter_nd): shape rules and portable
 * reference kernels.
 *
 * Semantics, preconditions and numerics are in spec/ops/scatter.md. The
 * output starts as a copy of `data`; each update is then written, or
 * combined by the node's reduction (add, mul, max, min), at the position
 * its index names, in the row-major order of the indices, so that
 * duplicate indices have one defined result: with no reduction the last
 * update in index order wins. Every index is checked before anything is
 * written: an index out of range fails the run with KILN_ERR_RUNTIME
 * naming the op, the position and the value. A reduction on f16/bf16
 * values runs in f32 and rounds once (spec/opset.md, "Half precision");
 * without a reduction elements move bit for bit. Kernels allocate
 * nothing: a session run must not.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "error.h"
#include "half_compute.h"
#include "index_range.h"
#include "odometer.h"
#include "op_registry.h"
#include "size_claim.h"

/* How an update combines with the element already at its position. */
typedef enum scatter_reduction {
    REDUCE_NONE, /* the update replaces it */
    REDUCE_ADD,
    REDUCE_MUL,
    REDUCE_MAX,
    REDUCE_MIN,
    REDUCE_INVALID,
} scatter_reduction;

static const char *const reduction_names[] = {"none", "add", "mul", "max", "min"};

static scatter_reduction read_reduction(const kiln_node_attribute *attributes, uint32_t count)
{
    const kiln_node_attribute *a = kiln_attribute_find(attributes, count, "reduction");
    if (!a)
        return REDUCE_NONE;
    for (int r = REDUCE_NONE; r < REDUCE_INVALID; r++)
        if (a->s && strcmp(a->s, reduction_names[r]) == 0)
            return (scatter_reduction)r;
    return REDUCE_INVALID;
}

/* ------------------------------------------------------ shared helpers */

static bool is_const(const kiln_shape_context *ctx, uint32_t id, int64_t *value)
{
    const kiln_expr *e = &ctx->pool->items[id];
    if (e->kind != KILN_EXPR_CONST)
        return false;
    *value = e->constant;
    return true;
}

/*
 * What every scatter shape rule checks first: the reduction names one, the
 * data dtype suits it, updates have the data's dtype and indices are i32
 * or i64.
 */
static kiln_status check_operands(const kiln_shape_context *ctx, const kiln_value_type *data,
                                  const kiln_value_type *indices, const kiln_value_type *updates, kiln_error *err)
{
    scatter_reduction reduction = read_reduction(ctx->attributes, ctx->attribute_count);
    if (reduction == REDUCE_INVALID)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: reduction must be \"none\", \"add\", \"mul\", \"max\" or \"min\"", ctx->node_label);
    if (!kiln_dtype_is_supported(data->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(data->dtype));
    if (reduction != REDUCE_NONE && !kiln_dtype_is_arithmetic(data->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: reduction \"%s\" needs an arithmetic dtype (f32, f64, f16, bf16, i8..i64, "
                         "u8..u64), not %s",
                         ctx->node_label, reduction_names[reduction], kiln_dtype_name(data->dtype));
    if (indices->dtype != KILN_I32 && indices->dtype != KILN_I64)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices have dtype %s; i32 or i64 is required",
                         ctx->node_label, kiln_dtype_name(indices->dtype));
    if (data->shape.rank == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: data is a scalar; scatter needs rank >= 1",
                         ctx->node_label);
    return kiln_require_same_dtype(ctx, data, updates, err);
}

/* Prove that updates axis `u` has the size `size` (`what` names where that size comes from). */
static kiln_status prove_update_size(const kiln_shape_context *ctx, uint32_t u, uint32_t updates_size,
                                     const char *what, uint32_t size, kiln_error *err)
{
    char text[128], want[128], claim_text[400];
    kiln_format_size(ctx, updates_size, text, sizeof text);
    kiln_format_size(ctx, size, want, sizeof want);
    snprintf(claim_text, sizeof claim_text, "updates axis %u (%s) equals %s (%s)", u, text, what, want);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, updates_size, size, 0};
    return kiln_prove_size_claim(ctx, &claim, claim_text, "Give updates the same sizes", err);
}

static kiln_status mismatch(const char *op, kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: operands do not match the op's shape rule", op);
}

/* ------------------------------------------------------ combining values */

/*
 * Float max and min: a NaN already there stays, else a NaN update is
 * taken (the first NaN in index order wins, payload kept); otherwise the
 * IEEE 754-2019 maximum or minimum, which orders -0.0 below +0.0.
 */
#define DEFINE_FLOAT_COMBINE(T, SUFFIX)                                                              \
    static void combine_##SUFFIX(void *at, const void *from, scatter_reduction reduction)           \
    {                                                                                                \
        T acc, update;                                                                               \
        memcpy(&acc, at, sizeof acc);                                                                \
        memcpy(&update, from, sizeof update);                                                        \
        switch (reduction) {                                                                         \
        case REDUCE_ADD: acc = acc + update; break;                                                  \
        case REDUCE_MUL: acc = acc * update; break;                                                  \
        case REDUCE_MAX:                                                                             \
            if (!isnan(acc) && (isnan(update) || update > acc ||                                     \
                                (update == acc && signbit(acc) && !signbit(update))))                \
                acc = update;                                                                        \
            break;                                                                                   \
        case REDUCE_MIN:                                                                             \
            if (!isnan(acc) && (isnan(update) || update < acc ||                                     \
                                (update == acc && !signbit(acc) && signbit(update))))                \
                acc = update;                                                                        \
            break;                                                                                   \
        default: acc = update; break;                                                                \
        }                                                                                            \
        memcpy(at, &acc, sizeof acc);                                                                \
    }

/*
 * Integers: add and mul wrap modulo 2^bits, computed on the unsigned type
 * U; `* 1u` widens a narrow U to unsigned int before the product, so two
 * u16 values never multiply as (signed, overflowing) ints.
 */
#define DEFINE_INT_COMBINE(T, U, SUFFIX)                                                             \
    static void combine_##SUFFIX(void *at, const void *from, scatter_reduction reduction)           \
    {                                                                                                \
        T acc, update;                                                                               \
        memcpy(&acc, at, sizeof acc);                                                                \
        memcpy(&update, from, sizeof update);                                                        \
        U x = (U)acc, y = (U)update;                                                                 \
        switch (reduction) {                                                                         \
        case REDUCE_ADD: acc = (T)(U)(x * 1u + y); break;                                            \
        case REDUCE_MUL: acc = (T)(U)(x * 1u * y); break;                                            \
        case REDUCE_MAX: acc = update > acc ? update : acc; break;                                   \
        case REDUCE_MIN: acc = update < acc ? update : acc; break;                                   \
        default: acc = update; break;                                                                \
        }                                                                                            \
        memcpy(at, &acc, sizeof acc);                                                                \
    }

DEFINE_FLOAT_COMBINE(float, f32)
DEFINE_FLOAT_COMBINE(double, f64)
DEFINE_INT_COMBINE(int8_t, uint8_t, i8)
DEFINE_INT_COMBINE(int16_t, uint16_t, i16)
DEFINE_INT_COMBINE(int32_t, uint32_t, i32)
DEFINE_INT_COMBINE(int64_t, uint64_t, i64)
DEFINE_INT_COMBINE(uint8_t, uint8_t, u8)
DEFINE_INT_COMBINE(uint16_t, uint16_t, u16)
DEFINE_INT_COMBINE(uint32_t, uint32_t, u32)
DEFINE_INT_COMBINE(uint64_t, uint64_t, u64)

typedef void (*combine_fn)(void *at, const void *from, scatter_reduction reduction);

/* The combining function of `dtype` (f16/bf16 reach here widened to f32), or NULL. */
static combine_fn combine_for(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_F32: return combine_f32;
    case KILN_F64: return combine_f64;
    case KILN_I8: return combine_i8;
    case KILN_I16: return combine_i16;
    case KILN_I32: return combine_i32;
    case KILN_I64: return combine_i64;
    case KILN_U8: return combine_u8;
    case KILN_U16: return combine_u16;
    case KILN_U32: return combine_u32;
    case KILN_U64: return combine_u64;
    default: return NULL;
    }
}

/*
 * Write `count` elements from `from` into `at`: copied bit for bit without
 * a reduction, else combined one by one.
 */
static void write_elements(uint8_t *at, const uint8_t *from, uint64_t count, size_t width,
                           scatter_reduction reduction, combine_fn combine)
{
    if (reduction == REDUCE_NONE) {
        memcpy(at, from, (size_t)count * width);
        return;
    }
    for (uint64_t i = 0; i < count; i++)
        combine(at + i * width, from + i * width, reduction);
}

/*
 * The reduction of a call, checked against the data dtype; a reduction
 * on f16/bf16 is then run on f32 copies (the caller's first statement).
 */
static kiln_status call_reduction(const kiln_kernel_call *call, const char *op, scatter_reduction *reduction,
                                  combine_fn *combine, kiln_error *err)
{
    *reduction = read_reduction(call->attributes, call->attribute_count);
    *combine = combine_for(call->inputs[0]->dtype);
    if (*reduction == REDUCE_INVALID || (*reduction != REDUCE_NONE && !*combine))
        return mismatch(op, err);
    return KILN_OK;
}

/* ------------------------------------------------------ scatter_elements */

static const kiln_attribute_spec scatter_elements_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"reduction", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

static kiln_status infer_scatter_elements(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                          uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *data = inputs[0], *indices = inputs[1], *updates = inputs[2];
    (void)input_count;
    KILN_TRY(check_operands(ctx, data, indices, updates, err));
    uint32_t rank = data->shape.rank;
    if (indices->shape.rank != rank || updates->shape.rank != rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: indices and updates must have the rank of data (%u); got %u and %u", ctx->node_label,
                         rank, indices->shape.rank, updates->shape.rank);
    int64_t a = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", 0);
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: axis %lld is outside %lld..%lld for rank %u",
                         ctx->node_label, (long long)a, -(long long)rank, (long long)rank - 1, rank);
    uint32_t axis = (uint32_t)(a < 0 ? a + rank : a);
    for (uint32_t i = 0; i < rank; i++) {
        char what[64];
        snprintf(what, sizeof what, "indices axis %u", i);
        KILN_TRY(prove_update_size(ctx, i, updates->shape.axes[i], what, indices->shape.axes[i], err));
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
    *out = *data;
    return KILN_OK;
}

static kiln_status run_scatter_elements(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *data = call->inputs[0], *indices = call->inputs[1], *updates = call->inputs[2];
    kiln_tensor *out = call->output;
    uint32_t rank = data->rank;
    if (rank == 0 || indices->rank != rank || updates->rank != rank || out->rank != rank ||
        data->dtype != out->dtype || data->dtype != updates->dtype ||
        (indices->dtype != KILN_I32 && indices->dtype != KILN_I64))
        return mismatch("scatter_elements", err);
    int64_t a = kiln_attribute_int(call->attributes, call->attribute_count, "axis", 0);
    if (a < -(int64_t)rank || a >= (int64_t)rank)
        return mismatch("scatter_elements", err);
    uint32_t axis = (uint32_t)(a < 0 ? a + rank : a);
    for (uint32_t i = 0; i < rank; i++)
        if (out->shape[i] != data->shape[i] || updates->shape[i] != indices->shape[i] ||
            (i != axis && indices->shape[i] > data->shape[i]))
            return mismatch("scatter_elements", err);
    scatter_reduction reduction = read_reduction(call->attributes, call->attribute_count);
    if (reduction != REDUCE_NONE)
        KILN_HALF_IN_F32(call, run_scatter_elements, err);
    combine_fn combine;
    KILN_TRY(call_reduction(call, "scatter_elements", &reduction, &combine, err));
    /* Check every index before writing anything. */
    for (uint64_t e = 0; e < indices->element_count; e++)
        KILN_TRY(kiln_normalise_index("scatter_elements", indices, e, kiln_index_at(indices, e), data->shape[axis],
                                      NULL, err));
    if (out->byte_size)
        memcpy(out->data, data->data, out->byte_size);
    int64_t strides[KILN_MAX_RANK], stride = 1;
    for (uint32_t i = rank; i-- > 0;) {
        strides[i] = stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, data->shape[i], &stride))
            stride = 0;
    }
    size_t width = kiln_dtype_size(data->dtype);
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint64_t e = 0; e < indices->element_count; e++) {
        int64_t n = kiln_index_at(indices, e), offset = 0;
        if (n < 0)
            n += data->shape[axis];
        for (uint32_t i = 0; i < rank; i++)
            offset += (i == axis ? n : index[i]) * strides[i];
        write_elements((uint8_t *)out->data + (size_t)offset * width, (const uint8_t *)updates->data + e * width, 1,
                       width, reduction, combine);
        kiln_odometer_next(index, rank, indices->shape);
    }
    return KILN_OK;
}

/* ------------------------------------------------------------ scatter_nd */

static const kiln_attribute_spec scatter_nd_attributes[] = {
    {"reduction", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

static kiln_status infer_scatter_nd(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                    uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *data = inputs[0], *indices = inputs[1], *updates = inputs[2];
    (void)input_count;
    KILN_TRY(check_operands(ctx, data, indices, updates, err));
    uint32_t r = data->shape.rank, q = indices->shape.rank;
    if (q == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: indices are a scalar; scatter_nd needs rank >= 1",
                         ctx->node_label);
    int64_t k;
    if (!is_const(ctx, indices->shape.axes[q - 1], &k))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the last axis of indices must be a constant",
                         ctx->node_label);
    if (k < 1 || k > (int64_t)r)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: the last axis of indices (%lld) must be 1..%u, the rank of data", ctx->node_label,
                         (long long)k, r);
    uint32_t expected_rank = q - 1 + r - (uint32_t)k;
    if (updates->shape.rank != expected_rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: updates have rank %u; indices of rank %u with tuples of %lld into data of rank %u "
                         "need rank %u",
                         ctx->node_label, updates->shape.rank, q, (long long)k, r, expected_rank);
    for (uint32_t u = 0; u < expected_rank; u++) {
        char what[64];
        if (u + 1 < q) {
            snprintf(what, sizeof what, "indices axis %u", u);
            KILN_TRY(prove_update_size(ctx, u, updates->shape.axes[u], what, indices->shape.axes[u], err));
        } else {
            uint32_t d = u - (q - 1) + (uint32_t)k;
            snprintf(what, sizeof what, "data axis %u", d);
            KILN_TRY(prove_update_size(ctx, u, updates->shape.axes[u], what, data->shape.axes[d], err));
        }
    }
    *out = *data;
    return KILN_OK;
}

static kiln_status run_scatter_nd(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *data = call->inputs[0], *indices = call->inputs[1], *updates = call->inputs[2];
    kiln_tensor *out = call->output;
    uint32_t r = data->rank, q = indices->rank;
    if (r == 0 || q == 0 || out->rank != r || data->dtype != out->dtype || data->dtype != updates->dtype ||
        (indices->dtype != KILN_I32 && indices->dtype != KILN_I64))
        return mismatch("scatter_nd", err);
    int64_t k = indices->shape[q - 1];
    if (k < 1 || k > (int64_t)r || updates->rank != q - 1 + r - (uint32_t)k)
        return mismatch("scatter_nd", err);
    for (uint32_t i = 0; i < r; i++)
        if (out->shape[i] != data->shape[i])
            return mismatch("scatter_nd", err);
    for (uint32_t u = 0; u < updates->rank; u++) {
        int64_t expected = u + 1 < q ? indices->shape[u] : data->shape[u - (q - 1) + (uint32_t)k];
        if (updates->shape[u] != expected)
            return mismatch("scatter_nd", err);
    }
    scatter_reduction reduction = read_reduction(call->attributes, call->attribute_count);
    if (reduction != REDUCE_NONE)
        KILN_HALF_IN_F32(call, run_scatter_nd, err);
    combine_fn combine;
    KILN_TRY(call_reduction(call, "scatter_nd", &reduction, &combine, err));
    /* Check every tuple component against its axis before writing anything. */
    for (uint64_t position = 0; position < indices->element_count; position++)
        KILN_TRY(kiln_normalise_index("scatter_nd", indices, position, kiln_index_at(indices, position),
                                      data->shape[position % (uint64_t)k], NULL, err));
    if (out->byte_size)
        memcpy(out->data, data->data, out->byte_size);
    uint64_t tuples = indices->element_count / (uint64_t)k, inner = 1;
    for (uint32_t i = (uint32_t)k; i < r; i++)
        inner *= (uint64_t)data->shape[i];
    size_t width = kiln_dtype_size(data->dtype);
    for (uint64_t t = 0; t < tuples; t++) {
        int64_t offset = 0;
        for (int64_t c = 0; c < k; c++) {
            int64_t n = kiln_index_at(indices, t * (uint64_t)k + (uint64_t)c);
            if (n < 0)
                n += data->shape[c];
            offset = offset * data->shape[c] + n;
        }
        write_elements((uint8_t *)out->data + (size_t)offset * inner * width,
                       (const uint8_t *)updates->data + t * inner * width, inner, width, reduction, combine);
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def scatter_ops[] = {
    {.name = "scatter_elements", .versions = {1, 1}, .inputs = {3, 3}, .attributes = scatter_elements_attributes,
     .infer = infer_scatter_elements, .run = run_scatter_elements},
    {.name = "scatter_nd", .versions = {1, 1}, .inputs = {3, 3}, .attributes = scatter_nd_attributes,
     .infer = infer_scatter_nd, .run = run_scatter_nd},
};

const kiln_op_family kiln_ops_scatter = KILN_OP_FAMILY(scatter_ops, "spec/ops/scatter.md");
