/*
 * linalg.c — matrix products and data movement (matmul, gemm,
 * transpose, flatten): shape rules and portable reference kernels.
 *
 * Semantics, preconditions and numerics are in spec/ops/linalg.md. The
 * kernels favour obviously-correct loops over speed: matrix products run
 * in i-k-j order (the innermost loop walks a row of B and a row of the
 * output contiguously) and accumulate in the element type, so f32 sums are
 * rounded to f32 after every addition. Kernels allocate nothing: a session
 * run must not. (f16 and bf16 are widened to f32 copies kept by the node,
 * allocated only on a run larger than any before: half_compute.h.)
 *
 * Called by a session, f32 matmul and gemm first offer the call to the
 * oneDNN fast path (onednn.h), which runs it when the build has oneDNN and
 * the session allows it; everything else, and every direct call, runs the
 * reference loops here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "axis_product.h"
#include "broadcast.h"
#include "error.h"
#include "half_compute.h"
#include "onednn.h"
#include "odometer.h"
#include "parallel.h"
#include "op_registry.h"
#include "size_claim.h"
#include "vector_matrix.h"

/* ------------------------------------------------------ shared helpers */

/* f16 and bf16 are computed in f32 (half_compute.h), on the reference path. */
static bool is_matrix_dtype(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
}

/*
 * Prove that sizes `a` (described by `a_where`) and `b` are equal over the
 * whole declared domain (size_claim.h), or refuse, naming the node, both
 * sizes with the operand axis each comes from, the dims and a
 * counterexample. The domain is never narrowed.
 */
static kiln_status require_equal_sizes(const kiln_shape_context *ctx, const char *what, uint32_t a,
                                       const char *a_where, uint32_t b, const char *b_where, kiln_error *err)
{
    char left[128], right[128], claim_text[400], advice[400];
    kiln_format_size(ctx, a, left, sizeof left);
    kiln_format_size(ctx, b, right, sizeof right);
    snprintf(claim_text, sizeof claim_text, "%s %s (%s) and %s (%s) are equal", what, left, a_where, right, b_where);
    /* A dim against a constant: the constant is the only size that works. */
    const kiln_expr *ea = &ctx->pool->items[a], *eb = &ctx->pool->items[b];
    const kiln_expr *dim = ea->kind == KILN_EXPR_DIM ? ea : eb, *constant = ea->kind == KILN_EXPR_DIM ? eb : ea;
    if (dim->kind == KILN_EXPR_DIM && constant->kind == KILN_EXPR_CONST && dim->dim < ctx->dim_count)
        snprintf(advice, sizeof advice, "%s must equal %lld: declare %s in %lld..%lld, or use the same size on both "
                 "sides", ctx->dims[dim->dim].name, (long long)constant->constant, ctx->dims[dim->dim].name,
                 (long long)constant->constant, (long long)constant->constant);
    else
        snprintf(advice, sizeof advice, "Use the same dim on both sides");
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, a, b, 0};
    return kiln_prove_size_claim(ctx, &claim, claim_text, advice, err);
}

/* ---------------------------------------------------------------- matmul */

static kiln_status infer_matmul(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *a = inputs[0], *b = inputs[1];
    (void)input_count;
    KILN_TRY(kiln_require_same_dtype(ctx, a, b, err));
    if (!is_matrix_dtype(a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported (f32, f64, f16, bf16)",
                         ctx->node_label, kiln_dtype_name(a->dtype));
    if (a->shape.rank == 0 || b->shape.rank == 0)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: operand %s is a scalar; matmul needs rank >= 1",
                         ctx->node_label, a->shape.rank == 0 ? "a" : "b");

    uint32_t ar = a->shape.rank, br = b->shape.rank;
    uint32_t b_inner_axis = br == 1 ? 0 : br - 2;
    char a_where[32], b_where[32];
    snprintf(a_where, sizeof a_where, "a axis %u", ar - 1);
    snprintf(b_where, sizeof b_where, "b axis %u", b_inner_axis);
    KILN_TRY(require_equal_sizes(ctx, "inner sizes", a->shape.axes[ar - 1], a_where,
                                 b->shape.axes[b_inner_axis], b_where, err));

    /* Batch axes: everything before the last two, broadcast like NumPy. */
    kiln_shape a_batch = {0}, b_batch = {0}, batch;
    a_batch.rank = ar > 2 ? ar - 2 : 0;
    b_batch.rank = br > 2 ? br - 2 : 0;
    memcpy(a_batch.axes, a->shape.axes, a_batch.rank * sizeof a_batch.axes[0]);
    memcpy(b_batch.axes, b->shape.axes, b_batch.rank * sizeof b_batch.axes[0]);
    KILN_TRY(kiln_broadcast_shapes(ctx, &a_batch, &b_batch, &batch, err));

    out->dtype = a->dtype;
    out->shape = batch;
    if (ar >= 2)
        out->shape.axes[out->shape.rank++] = a->shape.axes[ar - 2];
    if (br >= 2)
        out->shape.axes[out->shape.rank++] = b->shape.axes[br - 1];
    return KILN_OK;
}

/* out[M, N] = a[M, K] @ b[K, N] (row-major, contiguous), i-k-j order. */
#define DEFINE_MATRIX_PRODUCT(T, SUFFIX)                                                      \
    static void matrix_product_##SUFFIX(const T *a, const T *b, T *out, int64_t m, int64_t k, \
                                        int64_t n)                                            \
    {                                                                                         \
        for (int64_t i = 0; i < m; i++) {                                                     \
            T *row = out + i * n;                                                             \
            for (int64_t j = 0; j < n; j++)                                                   \
                row[j] = 0;                                                                   \
            for (int64_t p = 0; p < k; p++) {                                                 \
                T x = a[i * k + p];                                                           \
                const T *brow = b + p * n;                                                    \
                for (int64_t j = 0; j < n; j++)                                               \
                    row[j] += x * brow[j];                                                    \
            }                                                                                 \
        }                                                                                     \
    }
DEFINE_MATRIX_PRODUCT(float, f32)
DEFINE_MATRIX_PRODUCT(double, f64)

/*
 * Matrix strides of one operand over the output's batch axes: `strides`
 * (one per batch axis, 0 where the operand broadcasts or lacks the axis),
 * in elements of whole matrices.
 */
static void batch_strides(const kiln_tensor *t, uint32_t t_batch_rank, int64_t matrix_size,
                          const int64_t *batch_shape, uint32_t batch_rank, int64_t *strides)
{
    int64_t stride = matrix_size;
    for (uint32_t i = batch_rank; i-- > 0;) {
        uint32_t offset = batch_rank - t_batch_rank;
        if (i < offset) {
            strides[i] = 0;
            continue;
        }
        int64_t extent = t->shape[i - offset];
        strides[i] = (extent == 1 && batch_shape[i] != 1) ? 0 : stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, extent, &stride))
            stride = 0;
    }
}

/* A matmul call's sizes: m x k times k x n, batched over the leading axes. */
typedef struct matmul_sizes {
    int64_t m, k, n;
    uint32_t a_batch_rank, b_batch_rank, batch_rank;
} matmul_sizes;

/* The operands fit the op's shape rule: dtypes, inner sizes, output rank. */
static kiln_status check_matmul(const kiln_kernel_call *call, matmul_sizes *z, kiln_error *err)
{
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1], *out = call->output;
    if (a->rank == 0 || b->rank == 0 || a->dtype != b->dtype || a->dtype != out->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "matmul: operands do not match the op's shape rule");
    z->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    z->k = a->shape[a->rank - 1];
    int64_t kb = b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0];
    z->n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
    if (z->k != kb)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "matmul: inner sizes differ (%lld and %lld)",
                         (long long)z->k, (long long)kb);
    z->a_batch_rank = a->rank > 2 ? a->rank - 2 : 0;
    z->b_batch_rank = b->rank > 2 ? b->rank - 2 : 0;
    uint32_t matrix_axes = (a->rank >= 2) + (b->rank >= 2);
    if (out->rank < matrix_axes || out->rank - matrix_axes < z->a_batch_rank ||
        out->rank - matrix_axes < z->b_batch_rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "matmul: output rank %u does not fit the operands",
                         out->rank);
    z->batch_rank = out->rank - matrix_axes;
    return KILN_OK;
}

/*
 * The fast paths for f32 calls the reference kernel accepts (spec/opset.md,
 * "Fast paths"): one row times one matrix (a decode step's projections)
 * on kiln's own loops (vector_matrix.h), the rest through oneDNN; others
 * are declined.
 */
static kiln_status fast_matmul(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    *ran = false;
    matmul_sizes z;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (call->output->dtype != KILN_F32 || check_matmul(call, &z, NULL) != KILN_OK ||
        call->output->element_count == 0)
        return KILN_OK;
    if (b->rank == 2 && a->element_count == (uint64_t)z.k && z.k > 0) {
        kiln_vector_matrix_f32(a->data, b->data, call->output->data, z.k, z.n, kiln_call_threads(call));
        kiln_call_report_path(call, KILN_PATH_VECTOR);
        *ran = true;
        return KILN_OK;
    }
    return kiln_onednn_matmul(call, ran, err);
}

static kiln_status run_matmul(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    kiln_tensor *out = call->output;
    matmul_sizes z;
    KILN_TRY(check_matmul(call, &z, err));
    KILN_HALF_IN_F32(call, run_matmul, err);
    int64_t m = z.m, k = z.k, n = z.n;
    uint32_t batch_rank = z.batch_rank;
    /* Before m * k and k * n: with an empty result they may overflow
     * (k = 2^63-1 between empty operands); with elements, k is 0 or the
     * operands hold m * k and k * n elements. */
    if (out->element_count == 0)
        return KILN_OK;
    int64_t stride_a[KILN_MAX_RANK], stride_b[KILN_MAX_RANK], index[KILN_MAX_RANK] = {0};
    batch_strides(a, z.a_batch_rank, m * k, out->shape, batch_rank, stride_a);
    batch_strides(b, z.b_batch_rank, k * n, out->shape, batch_rank, stride_b);
    uint64_t batches = out->element_count / (uint64_t)(m * n);
    size_t width = kiln_dtype_size(out->dtype);
    const int64_t *strides[2] = {stride_a, stride_b};
    int64_t at[2] = {0, 0}; /* a's matrix, b's matrix */
    for (uint64_t s = 0; s < batches; s++) {
        const uint8_t *pa = (const uint8_t *)a->data + (size_t)at[0] * width;
        const uint8_t *pb = (const uint8_t *)b->data + (size_t)at[1] * width;
        uint8_t *po = (uint8_t *)out->data + (size_t)(s * (uint64_t)(m * n)) * width;
        if (out->dtype == KILN_F32)
            matrix_product_f32((const float *)pa, (const float *)pb, (float *)po, m, k, n);
        else if (out->dtype == KILN_F64)
            matrix_product_f64((const double *)pa, (const double *)pb, (double *)po, m, k, n);
        else
            return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "matmul: no kernel for dtype %s",
                             kiln_dtype_name(out->dtype));
        /* Step the batch odometer, keeping both operand offsets in sync. */
        kiln_odometer_next_offsets(index, batch_rank, out->shape, 2, strides, at);
    }
    return KILN_OK;
}

/* ------------------------------------------------------------------ gemm */

static const kiln_attribute_spec gemm_attributes[] = {
    {"alpha", KILN_ATTRIBUTE_FLOAT},
    {"beta", KILN_ATTRIBUTE_FLOAT},
    {"transA", KILN_ATTRIBUTE_INT},
    {"transB", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_gemm(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                              uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *a = inputs[0], *b = inputs[1], *c = input_count > 2 ? inputs[2] : NULL;
    int64_t trans_a = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "transA", 0);
    int64_t trans_b = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "transB", 0);
    if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: transA and transB must be 0 or 1 (got %lld, %lld)",
                         ctx->node_label, (long long)trans_a, (long long)trans_b);
    if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: operand dtypes differ (%s, %s%s%s); kiln does not promote implicitly",
                         ctx->node_label, kiln_dtype_name(a->dtype), kiln_dtype_name(b->dtype), c ? ", " : "",
                         c ? kiln_dtype_name(c->dtype) : "");
    if (!is_matrix_dtype(a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported (f32, f64, f16, bf16)",
                         ctx->node_label, kiln_dtype_name(a->dtype));
    if (a->shape.rank != 2 || b->shape.rank != 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: A and B must have rank 2 (got %u and %u)",
                         ctx->node_label, a->shape.rank, b->shape.rank);
    if (c && c->shape.rank > 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: C must have rank 0, 1 or 2 (got %u)",
                         ctx->node_label, c->shape.rank);

    uint32_t m = a->shape.axes[trans_a ? 1 : 0], ka = a->shape.axes[trans_a ? 0 : 1];
    uint32_t kb = b->shape.axes[trans_b ? 1 : 0], n = b->shape.axes[trans_b ? 0 : 1];
    KILN_TRY(require_equal_sizes(ctx, "inner sizes", ka, trans_a ? "A axis 0" : "A axis 1", kb,
                                 trans_b ? "B axis 1" : "B axis 0", err));
    out->dtype = a->dtype;
    out->shape.rank = 2;
    out->shape.axes[0] = m;
    out->shape.axes[1] = n;
    if (c) {
        kiln_shape broadcast;
        kiln_error detail;
        kiln_status status = kiln_broadcast_shapes(ctx, &c->shape, &out->shape, &broadcast, &detail);
        if (status != KILN_OK) {
            /* Say which operand failed; the detail repeats the node label. */
            const char *reason = detail.message;
            size_t label_length = strlen(ctx->node_label);
            if (strncmp(reason, ctx->node_label, label_length) == 0 && strncmp(reason + label_length, ": ", 2) == 0)
                reason += label_length + 2;
            return kiln_fail(err, status, "%s: C does not broadcast to the product's shape: %s", ctx->node_label,
                             reason);
        }
        if (broadcast.rank != 2 || broadcast.axes[0] != m || broadcast.axes[1] != n) {
            char cm[128], cn[128], om[128], on[128];
            kiln_format_size(ctx, broadcast.axes[0], cm, sizeof cm);
            kiln_format_size(ctx, broadcast.axes[1], cn, sizeof cn);
            kiln_format_size(ctx, m, om, sizeof om);
            kiln_format_size(ctx, n, on, sizeof on);
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: C broadcasts with the product to [%s, %s], not to the product's shape [%s, %s]",
                             ctx->node_label, cm, cn, om, on);
        }
    }
    return KILN_OK;
}

/*
 * out = alpha * A' B' + beta * C. Each row of A'B' is accumulated in the
 * output row (i-k-j), then scaled and offset in place; A' and B' are read
 * through strides, so transposition copies nothing.
 */
#define DEFINE_GEMM(T, SUFFIX)                                                                        \
    static void gemm_##SUFFIX(const kiln_tensor *ta, const kiln_tensor *tb, const kiln_tensor *tc,   \
                              const int64_t *c_strides, kiln_tensor *to, bool trans_a, bool trans_b, \
                              T alpha, T beta)                                                        \
    {                                                                                                 \
        const T *a = ta->data, *b = tb->data, *c = tc ? tc->data : NULL;                              \
        T *out = to->data;                                                                            \
        int64_t m = to->shape[0], n = to->shape[1], k = trans_a ? ta->shape[0] : ta->shape[1];        \
        /* Element strides of A'(i, p) and B'(p, j). */                                               \
        int64_t a_i = trans_a ? 1 : ta->shape[1], a_p = trans_a ? ta->shape[1] : 1;                   \
        int64_t b_p = trans_b ? 1 : tb->shape[1], b_j = trans_b ? tb->shape[1] : 1;                   \
        for (int64_t i = 0; i < m; i++) {                                                             \
            T *row = out + i * n;                                                                     \
            for (int64_t j = 0; j < n; j++)                                                           \
                row[j] = 0;                                                                           \
            for (int64_t p = 0; p < k; p++) {                                                         \
                T x = a[i * a_i + p * a_p];                                                           \
                const T *bp = b + p * b_p;                                                            \
                for (int64_t j = 0; j < n; j++)                                                       \
                    row[j] += x * bp[j * b_j];                                                        \
            }                                                                                         \
            for (int64_t j = 0; j < n; j++)                                                           \
                row[j] = c ? alpha * row[j] + beta * c[i * c_strides[0] + j * c_strides[1]]           \
                           : alpha * row[j];                                                          \
        }                                                                                             \
    }
DEFINE_GEMM(float, f32)
DEFINE_GEMM(double, f64)

/* A gemm call's attributes. */
typedef struct gemm_params {
    bool trans_a, trans_b;
    double alpha, beta;
} gemm_params;

/* The operands fit the op's shape rule: ranks, dtypes, sizes after transposition. */
static kiln_status check_gemm(const kiln_kernel_call *call, gemm_params *p, kiln_error *err)
{
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    const kiln_tensor *c = call->input_count > 2 ? call->inputs[2] : NULL;
    const kiln_tensor *out = call->output;
    p->trans_a = kiln_attribute_int(call->attributes, call->attribute_count, "transA", 0) != 0;
    p->trans_b = kiln_attribute_int(call->attributes, call->attribute_count, "transB", 0) != 0;
    p->alpha = kiln_attribute_float(call->attributes, call->attribute_count, "alpha", 1.0);
    p->beta = kiln_attribute_float(call->attributes, call->attribute_count, "beta", 1.0);
    if (a->rank != 2 || b->rank != 2 || out->rank != 2 || (c && c->rank > 2) || a->dtype != b->dtype ||
        a->dtype != out->dtype || (c && c->dtype != a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "gemm: operands do not match the op's shape rule");
    int64_t m = p->trans_a ? a->shape[1] : a->shape[0], ka = p->trans_a ? a->shape[0] : a->shape[1];
    int64_t kb = p->trans_b ? b->shape[1] : b->shape[0], n = p->trans_b ? b->shape[0] : b->shape[1];
    if (ka != kb || m != out->shape[0] || n != out->shape[1])
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "gemm: operand sizes do not match (K %lld and %lld)",
                         (long long)ka, (long long)kb);
    return KILN_OK;
}

/* oneDNN for f32 calls the reference kernel accepts (spec/opset.md, "Fast paths"); others are declined. */
static kiln_status fast_gemm(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    *ran = false;
    gemm_params p;
    if (call->output->dtype != KILN_F32 || check_gemm(call, &p, NULL) != KILN_OK)
        return KILN_OK;
    return kiln_onednn_gemm(call, p.trans_a, p.trans_b, (float)p.alpha, (float)p.beta, ran, err);
}

static kiln_status run_gemm(const kiln_kernel_call *call, kiln_error *err)
{
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    const kiln_tensor *c = call->input_count > 2 ? call->inputs[2] : NULL;
    kiln_tensor *out = call->output;
    gemm_params p;
    KILN_TRY(check_gemm(call, &p, err));
    KILN_HALF_IN_F32(call, run_gemm, err);
    bool trans_a = p.trans_a, trans_b = p.trans_b;
    double alpha = p.alpha, beta = p.beta;
    int64_t c_strides[KILN_MAX_RANK] = {0};
    if (c)
        kiln_broadcast_strides(c, out, c_strides);
    if (out->dtype == KILN_F32)
        gemm_f32(a, b, c, c_strides, out, trans_a, trans_b, (float)alpha, (float)beta);
    else if (out->dtype == KILN_F64)
        gemm_f64(a, b, c, c_strides, out, trans_a, trans_b, alpha, beta);
    else
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "gemm: no kernel for dtype %s",
                         kiln_dtype_name(out->dtype));
    return KILN_OK;
}

/* ------------------------------------------------------------- transpose */

static const kiln_attribute_spec transpose_attributes[] = {
    {"perm", KILN_ATTRIBUTE_INTS},
    {NULL, 0},
};

/*
 * The permutation of a node of rank `rank`: its perm attribute or, when
 * absent, the reversed axes. @return false if perm is no permutation of
 * 0..rank-1.
 */
static bool node_permutation(const kiln_node_attribute *attributes, uint32_t attribute_count, uint32_t rank,
                             uint32_t *perm)
{
    const kiln_node_attribute *attr = kiln_attribute_find(attributes, attribute_count, "perm");
    if (!attr) {
        for (uint32_t i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return true;
    }
    if (attr->count != rank)
        return false;
    bool seen[KILN_MAX_RANK] = {false};
    for (uint32_t i = 0; i < rank; i++) {
        int64_t axis = attr->ints[i];
        if (axis < 0 || axis >= (int64_t)rank || seen[axis])
            return false;
        seen[axis] = true;
        perm[i] = (uint32_t)axis;
    }
    return true;
}

static kiln_status infer_transpose(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                   uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    uint32_t perm[KILN_MAX_RANK];
    if (!node_permutation(ctx->attributes, ctx->attribute_count, x->shape.rank, perm)) {
        const kiln_node_attribute *attr = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "perm");
        char text[160] = "";
        size_t used = 0;
        for (uint32_t i = 0; attr && i < attr->count && used < sizeof text; i++)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%lld", i ? ", " : "",
                                     (long long)attr->ints[i]);
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: perm [%s] is not a permutation of the %u axes 0..%d of the input", ctx->node_label,
                         text, x->shape.rank, (int)x->shape.rank - 1);
    }
    out->dtype = x->dtype;
    out->shape.rank = x->shape.rank;
    for (uint32_t i = 0; i < x->shape.rank; i++)
        out->shape.axes[i] = x->shape.axes[perm[i]];
    return KILN_OK;
}

/*
 * Copy elements of width sizeof(T), walking the output in order: one row
 * of the output's last axis at a time (a memcpy when the input is
 * contiguous along it, else a strided copy the compiler can vectorize),
 * the other axes by an odometer. Walking every element with the odometer
 * measured 4% of an encoder layer's run, mostly in that bookkeeping.
 */
#define DEFINE_PERMUTE(T, SUFFIX)                                                                  \
    static void permute_##SUFFIX(const void *vin, void *vout, const kiln_tensor *out,             \
                                 const int64_t *in_strides)                                        \
    {                                                                                              \
        const T *in = vin;                                                                         \
        T *o = vout;                                                                               \
        if (out->rank == 0) {                                                                      \
            o[0] = in[0];                                                                          \
            return;                                                                                \
        }                                                                                          \
        uint32_t last = out->rank - 1;                                                             \
        int64_t row = out->shape[last], step = in_strides[last];                                   \
        int64_t index[KILN_MAX_RANK] = {0}, offset = 0;                                            \
        for (uint64_t e = 0; e < out->element_count; e += (uint64_t)row) {                         \
            const T *from = in + offset;                                                           \
            T *to = o + e;                                                                         \
            if (step == 1)                                                                         \
                memcpy(to, from, (size_t)row * sizeof(T));                                         \
            else                                                                                   \
                for (int64_t j = 0; j < row; j++)                                                  \
                    to[j] = from[j * step];                                                        \
            kiln_odometer_next_offset(index, last, out->shape, in_strides, &offset);               \
        }                                                                                          \
    }
DEFINE_PERMUTE(uint8_t, 1)
DEFINE_PERMUTE(uint16_t, 2)
DEFINE_PERMUTE(uint32_t, 4)
DEFINE_PERMUTE(uint64_t, 8)

static kiln_status run_transpose(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    uint32_t perm[KILN_MAX_RANK];
    if (in->rank != out->rank || in->dtype != out->dtype ||
        !node_permutation(call->attributes, call->attribute_count, in->rank, perm))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "transpose: operands do not match the op's shape rule");
    /* Strides of the input, then reordered so axis i of the output steps
     * by the stride of input axis perm[i]. */
    int64_t strides[KILN_MAX_RANK], in_strides[KILN_MAX_RANK];
    int64_t stride = 1;
    for (uint32_t i = in->rank; i-- > 0;) {
        strides[i] = stride;
        /* Only an empty x overflows ((0, 2^63-1, 2^63-1)); it moves nothing. */
        if (__builtin_mul_overflow(stride, in->shape[i], &stride))
            stride = 0;
    }
    for (uint32_t i = 0; i < out->rank; i++) {
        if (out->shape[i] != in->shape[perm[i]])
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "transpose: output axis %u has the wrong size", i);
        in_strides[i] = strides[perm[i]];
    }
    if (out->element_count == 0)
        return KILN_OK;
    /* Adjacent output axes that are adjacent in the input too (the outer
     * one's stride the inner one's times its size) are one axis to the
     * copy, and axes of size 1 drop out: longer rows (ShuffleNet's channel
     * shuffle [1, 2, 24, 14, 14] -> [1, 24, 2, 14, 14] copies rows of 196
     * elements, not 14: 1.8 -> 0.5 us). */
    kiln_tensor merged = *out;
    int64_t merged_strides[KILN_MAX_RANK];
    uint32_t rank = 0;
    for (uint32_t i = 0; i < out->rank; i++) {
        if (out->shape[i] == 1)
            continue;
        if (rank > 0 && merged_strides[rank - 1] == in_strides[i] * out->shape[i]) {
            merged.shape[rank - 1] *= out->shape[i];
            merged_strides[rank - 1] = in_strides[i];
            continue;
        }
        merged.shape[rank] = out->shape[i];
        merged_strides[rank++] = in_strides[i];
    }
    merged.rank = rank;
    switch (kiln_dtype_size(out->dtype)) {
    case 1: permute_1(in->data, out->data, &merged, merged_strides); return KILN_OK;
    case 2: permute_2(in->data, out->data, &merged, merged_strides); return KILN_OK;
    case 4: permute_4(in->data, out->data, &merged, merged_strides); return KILN_OK;
    case 8: permute_8(in->data, out->data, &merged, merged_strides); return KILN_OK;
    default:
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "transpose: no kernel for dtype %s",
                         kiln_dtype_name(out->dtype));
    }
}

/* --------------------------------------------------------------- flatten */

static const kiln_attribute_spec flatten_attributes[] = {
    {"axis", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static kiln_status infer_flatten(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                 uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    if (!kiln_dtype_is_supported(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported", ctx->node_label,
                         kiln_dtype_name(x->dtype));
    int64_t rank = x->shape.rank;
    int64_t axis = kiln_attribute_int(ctx->attributes, ctx->attribute_count, "axis", 1);
    if (axis < -rank || axis > rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: axis %lld is outside %lld..%lld for rank %lld",
                         ctx->node_label, (long long)axis, (long long)-rank, (long long)rank, (long long)rank);
    if (axis < 0)
        axis += rank;
    out->dtype = x->dtype;
    out->shape.rank = 2;
    /* Each side folded small (axis_product.h): [n, 3, 4] at axis 1 flattens to [n, 12]. */
    KILN_TRY(kiln_axis_product(ctx, &x->shape, 0, (uint32_t)axis, NULL, "flattened size", &out->shape.axes[0],
                               err));
    KILN_TRY(kiln_axis_product(ctx, &x->shape, (uint32_t)axis, (uint32_t)rank, NULL, "flattened size",
                               &out->shape.axes[1], err));
    return KILN_OK;
}

/* Flattening keeps row-major order: the bytes are copied as they are. */
static kiln_status run_flatten(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_call_report_path(call, KILN_PATH_VIEW); /* moves data, computes nothing */
    const kiln_tensor *in = call->inputs[0];
    kiln_tensor *out = call->output;
    if (in->byte_size != out->byte_size || in->dtype != out->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "flatten: output size %zu differs from input size %zu",
                         out->byte_size, in->byte_size);
    if (out->byte_size)
        memmove(out->data, in->data, out->byte_size);
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def linalg_ops[] = {
    {.name = "matmul", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_matmul, .run = run_matmul,
     .fast = fast_matmul},
    {.name = "gemm", .versions = {1, 1}, .inputs = {2, 3}, .attributes = gemm_attributes,
     .infer = infer_gemm, .run = run_gemm, .fast = fast_gemm},
    {.name = "transpose", .versions = {1, 1}, .inputs = {1, 1}, .attributes = transpose_attributes,
     .infer = infer_transpose, .run = run_transpose, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
    {.name = "flatten", .versions = {1, 1}, .inputs = {1, 1}, .attributes = flatten_attributes,
     .infer = infer_flatten, .run = run_flatten, .traits = {.magnitude = KILN_MAGNITUDE_NOT_ABOVE_OPERAND}},
};

const kiln_op_family kiln_ops_linalg = KILN_OP_FAMILY(linalg_ops, "spec/ops/linalg.md");
