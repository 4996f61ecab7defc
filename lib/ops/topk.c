/*
 * topk.c — the k largest (or smallest) elements along an axis:
 * `top_k` gives their values, `top_k_indices` their positions.
 *
 * A graph node has exactly one result, so ONNX's two-output TopK is two
 * ops that make the same selection: an importer maps it onto both.
 * Semantics and numerics are in spec/ops/topk.md. Kernels allocate
 * nothing: the selection is kept sorted in the output itself.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "error.h"
#include "half.h"
#include "op_registry.h"
#include "size_claim.h"

static const kiln_attribute_spec topk_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {"k", KILN_ATTRIBUTE_INT},
    {"largest", KILN_ATTRIBUTE_INT},
    {"sorted", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

typedef struct topk_params {
    uint32_t axis;
    int64_t k;
    bool largest;
} topk_params;

/* Read and check the attributes for an input of rank `rank`. */
static bool read_params(const kiln_node_attribute *attributes, uint32_t count, uint32_t rank, topk_params *p,
                        char *why, size_t why_size)
{
    const kiln_node_attribute *k = kiln_attribute_find(attributes, count, "k");
    int64_t axis = kiln_attribute_int(attributes, count, "axis", -1);
    int64_t largest = kiln_attribute_int(attributes, count, "largest", 1);
    int64_t sorted = kiln_attribute_int(attributes, count, "sorted", 1);
    if (!k) {
        snprintf(why, why_size, "the attribute 'k' is required");
        return false;
    }
    if (k->i < 0) {
        snprintf(why, why_size, "k = %lld is negative", (long long)k->i);
        return false;
    }
    if (rank == 0 || axis < -(int64_t)rank || axis >= (int64_t)rank) {
        snprintf(why, why_size, "axis %lld is outside %d..%d for rank %u", (long long)axis, -(int)rank,
                 (int)rank - 1, rank);
        return false;
    }
    if ((largest != 0 && largest != 1) || (sorted != 0 && sorted != 1)) {
        snprintf(why, why_size, "largest and sorted are 0 or 1, got %lld and %lld", (long long)largest,
                 (long long)sorted);
        return false;
    }
    p->axis = (uint32_t)(axis < 0 ? axis + (int64_t)rank : axis);
    p->k = k->i;
    p->largest = largest == 1;
    return true;
}

static kiln_status infer_topk(const kiln_shape_context *ctx, const kiln_value_type *x, bool indices,
                              kiln_value_type *out, kiln_error *err)
{
    const char *op = indices ? "top_k_indices" : "top_k";
    if (!kiln_dtype_is_arithmetic(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s does not support dtype %s (it takes f32, f64, f16, bf16 or "
                         "an integer dtype)", ctx->node_label, op, kiln_dtype_name(x->dtype));
    topk_params p;
    char why[160];
    if (!read_params(ctx->attributes, ctx->attribute_count, x->shape.rank, &p, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    if (p.k > 0) {
        char size[128], what[256], advice[200];
        kiln_format_size(ctx, x->shape.axes[p.axis], size, sizeof size);
        snprintf(what, sizeof what, "x axis %u size %s is >= k = %lld", p.axis, size, (long long)p.k);
        snprintf(advice, sizeof advice, "Declare the dims so that the axis has at least %lld elements",
                 (long long)p.k);
        kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, x->shape.axes[p.axis], 0, p.k};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, advice, err));
    }
    *out = *x;
    out->dtype = indices ? KILN_I64 : x->dtype;
    return kiln_expr_const(ctx->pool, p.k, &out->shape.axes[p.axis], err);
}

static kiln_status infer_top_k(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                               uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_topk(ctx, inputs[0], false, out, err);
}

static kiln_status infer_top_k_indices(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                       uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    return infer_topk(ctx, inputs[0], true, out, err);
}

/*
 * One slice of `n` elements `stride` apart into `k` results (k <= n),
 * ranked by value — a NaN above every number, whatever its sign — largest
 * or smallest first; equal values keep their input order. The ranking is
 * kept sorted in the output while the slice is walked once in index order
 * (O(n·k) comparisons), so a later equal value always goes after an
 * earlier one. `values` (may be NULL) gets the values, `positions` (may
 * be NULL) the indices along the axis.
 */
#define DEFINE_SELECT(T, SUFFIX, ISNAN, KT, KEY)                                                            \
    static int compare_##SUFFIX(T a_bits, T b_bits)                                                        \
    {                                                                                                      \
        KT a = KEY(a_bits), b = KEY(b_bits); /* the value an element stands for */                         \
        if (ISNAN(a) || ISNAN(b))                                                                          \
            return ISNAN(a) - ISNAN(b);                                                                    \
        return (a > b) - (a < b);                                                                          \
    }                                                                                                      \
    static void select_##SUFFIX(const T *x, uint64_t n, uint64_t stride, uint64_t k, bool largest, T *values, \
                                int64_t *positions, uint64_t out_stride)                                   \
    {                                                                                                      \
        uint64_t kept = 0;                                                                                 \
        for (uint64_t e = 0; e < n && k > 0; e++) {                                                        \
            T v = x[e * stride];                                                                           \
            uint64_t slot = kept < k ? kept : k;                                                           \
            while (slot > 0) {                                                                             \
                /* The value ranked just above: kept in the output, or read back through its position. */  \
                uint64_t above = (slot - 1) * out_stride;                                                  \
                T held = values ? values[above] : x[(uint64_t)positions[above] * stride];                  \
                int order = compare_##SUFFIX(v, held);                                                     \
                if (!(largest ? order > 0 : order < 0))                                                    \
                    break;                                                                                 \
                slot--;                                                                                    \
            }                                                                                              \
            if (slot == k)                                                                                 \
                continue; /* ranks below every kept value */                                               \
            uint64_t last = kept < k ? kept : k - 1;                                                       \
            for (uint64_t j = last; j > slot; j--) {                                                       \
                if (values)                                                                                \
                    values[j * out_stride] = values[(j - 1) * out_stride];                                 \
                if (positions)                                                                             \
                    positions[j * out_stride] = positions[(j - 1) * out_stride];                           \
            }                                                                                              \
            if (values)                                                                                    \
                values[slot * out_stride] = v;                                                             \
            if (positions)                                                                                 \
                positions[slot * out_stride] = (int64_t)e;                                                 \
            if (kept < k)                                                                                  \
                kept++;                                                                                    \
        }                                                                                                  \
    }
#define NEVER_NAN(x) ((void)(x), 0)
#define FLOAT_NAN(x) (isnan(x) ? 1 : 0)
#define SAME(x) (x)
/* f16 and bf16 are ranked by the exact f32 value they stand for, and moved as bit patterns. */
DEFINE_SELECT(float, f32, FLOAT_NAN, float, SAME)
DEFINE_SELECT(double, f64, FLOAT_NAN, double, SAME)
DEFINE_SELECT(uint16_t, f16, FLOAT_NAN, float, kiln_f16_to_f32)
DEFINE_SELECT(uint16_t, bf16, FLOAT_NAN, float, kiln_bf16_to_f32)
DEFINE_SELECT(int8_t, i8, NEVER_NAN, int8_t, SAME)
DEFINE_SELECT(int16_t, i16, NEVER_NAN, int16_t, SAME)
DEFINE_SELECT(int32_t, i32, NEVER_NAN, int32_t, SAME)
DEFINE_SELECT(int64_t, i64, NEVER_NAN, int64_t, SAME)
DEFINE_SELECT(uint8_t, u8, NEVER_NAN, uint8_t, SAME)
DEFINE_SELECT(uint16_t, u16, NEVER_NAN, uint16_t, SAME)
DEFINE_SELECT(uint32_t, u32, NEVER_NAN, uint32_t, SAME)
DEFINE_SELECT(uint64_t, u64, NEVER_NAN, uint64_t, SAME)

/* A top_k or top_k_indices result `y` of `x` checked against the op's shape rule. */
static kiln_status check_result(const char *op, const kiln_tensor *x, const kiln_tensor *y, bool indices,
                                const topk_params *p, kiln_error *err)
{
    if (!kiln_dtype_is_arithmetic(x->dtype) || y->dtype != (indices ? KILN_I64 : x->dtype) || y->rank != x->rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output type does not match the input", op);
    for (uint32_t a = 0; a < x->rank; a++)
        if (y->shape[a] != (a == p->axis ? p->k : x->shape[a]))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output axis %u has size %lld", op, a,
                             (long long)y->shape[a]);
    return KILN_OK;
}

/*
 * Select the k largest (or smallest) along the axis into `values` and/or
 * `positions` (either may be NULL): one selection writes both, so top_k
 * and top_k_indices of one node group (result_groups.h) select once.
 */
static kiln_status run_topk(const kiln_kernel_call *call, kiln_tensor *values, kiln_tensor *positions,
                            kiln_error *err)
{
    const char *op = values ? "top_k" : "top_k_indices";
    const kiln_tensor *x = call->inputs[0];
    const kiln_tensor *y = values ? values : positions;
    topk_params p;
    char why[160];
    if (!read_params(call->attributes, call->attribute_count, x->rank, &p, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op, why);
    if (values)
        KILN_TRY(check_result("top_k", x, values, false, &p, err));
    if (positions)
        KILN_TRY(check_result("top_k_indices", x, positions, true, &p, err));
    uint64_t n = (uint64_t)x->shape[p.axis], k = (uint64_t)p.k, outer = 1, inner = 1;
    if (k > n)
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "%s: k = %llu is more than the %llu elements of axis %u", op,
                         (unsigned long long)k, (unsigned long long)n, p.axis);
    /* No result, no selection: the slices are counted by the other axes,
     * which an empty x may still make huge ((0, 2^63-1) along axis 0). */
    if (y->element_count == 0)
        return KILN_OK;
    for (uint32_t a = 0; a < p.axis; a++)
        outer *= (uint64_t)x->shape[a];
    for (uint32_t a = p.axis + 1; a < x->rank; a++)
        inner *= (uint64_t)x->shape[a];
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            uint64_t in_base = o * n * inner + i, out_base = o * k * inner + i;
            int64_t *at = positions ? (int64_t *)positions->data + out_base : NULL;
            switch (x->dtype) {
#define SELECT_CASE(CODE, T, SUFFIX)                                                                          \
    case CODE:                                                                                                \
        select_##SUFFIX((const T *)x->data + in_base, n, inner, k, p.largest,                                 \
                        values ? (T *)values->data + out_base : NULL, at, inner);                             \
        break;
                SELECT_CASE(KILN_F32, float, f32)
                SELECT_CASE(KILN_F64, double, f64)
                SELECT_CASE(KILN_F16, uint16_t, f16)
                SELECT_CASE(KILN_BF16, uint16_t, bf16)
                SELECT_CASE(KILN_I8, int8_t, i8)
                SELECT_CASE(KILN_I16, int16_t, i16)
                SELECT_CASE(KILN_I32, int32_t, i32)
                SELECT_CASE(KILN_I64, int64_t, i64)
                SELECT_CASE(KILN_U8, uint8_t, u8)
                SELECT_CASE(KILN_U16, uint16_t, u16)
                SELECT_CASE(KILN_U32, uint32_t, u32)
                SELECT_CASE(KILN_U64, uint64_t, u64)
#undef SELECT_CASE
            default:
                return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: dtype %s", op, kiln_dtype_name(x->dtype));
            }
        }
    return KILN_OK;
}

static kiln_status run_top_k(const kiln_kernel_call *call, kiln_error *err)
{
    return run_topk(call, call->output, NULL, err);
}

static kiln_status run_top_k_indices(const kiln_kernel_call *call, kiln_error *err)
{
    return run_topk(call, NULL, call->output, err);
}

/* top_k and top_k_indices of one group: the values and the positions of one selection. */
static kiln_status run_top_k_together(const kiln_kernel_call *call, kiln_tensor *const *results,
                                      const kiln_op_def *const *ops, uint32_t count, kiln_error *err)
{
    kiln_tensor *values = NULL, *positions = NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (ops[i]->run == run_top_k)
            values = results[i];
        else
            positions = results[i];
    }
    return run_topk(call, values, positions, err);
}

static const kiln_op_def topk_ops[] = {
    {.name = "top_k", .versions = {1, 1}, .inputs = {1, 1}, .attributes = topk_attributes,
     .infer = infer_top_k, .run = run_top_k, .together = run_top_k_together},
    {.name = "top_k_indices", .versions = {1, 1}, .inputs = {1, 1}, .attributes = topk_attributes,
     .infer = infer_top_k_indices, .run = run_top_k_indices, .together = run_top_k_together},
};

const kiln_op_family kiln_ops_topk = KILN_OP_FAMILY(topk_ops, "spec/ops/topk.md");
