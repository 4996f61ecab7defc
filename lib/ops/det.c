/*
 * det.c — det (the determinant of each square matrix of a batch):
 * shape rule and portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/det.md. Each
 * matrix is factored by Gaussian elimination with partial pivoting in long
 * double, and the determinant, the signed product of the pivots, is
 * rounded once to the output dtype. The long double copy of one matrix
 * lives in the node's state slot, grown only when a run needs more than
 * any before, so a session run at a size seen before allocates nothing
 * (kernel_context.h). f16 and bf16 are computed by the f32 kernel and
 * rounded once (half_compute.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "half_compute.h"
#include "dtype.h"
#include "op_registry.h"
#include "size_claim.h"

/* ------------------------------------------------------------ shape rule */

static bool takes(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || kiln_dtype_is_half(dtype);
}

static kiln_status infer_det(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                             uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[0];
    (void)input_count;
    if (!takes(x->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has dtype %s; det needs f32, f64, f16 or bf16",
                         ctx->node_label, kiln_dtype_name(x->dtype));
    uint32_t rank = x->shape.rank;
    if (rank < 2)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x has rank %u; det needs rank >= 2 ([..., M, M])",
                         ctx->node_label, rank);
    char rows[128], columns[128], what[400];
    kiln_format_size(ctx, x->shape.axes[rank - 2], rows, sizeof rows);
    kiln_format_size(ctx, x->shape.axes[rank - 1], columns, sizeof columns);
    snprintf(what, sizeof what, "x axis %u size %s equals x axis %u size %s (the matrices are square)", rank - 2,
             rows, rank - 1, columns);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, x->shape.axes[rank - 2], x->shape.axes[rank - 1], 0};
    KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Use the same dim (or the same constant) for both sizes",
                                   err));
    out->dtype = x->dtype;
    out->shape.rank = rank - 2;
    for (uint32_t i = 0; i + 2 < rank; i++)
        out->shape.axes[i] = x->shape.axes[i];
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

/* One matrix in long double, kept in the node's state slot between runs. */
typedef struct det_scratch {
    long double *values;
    size_t count;
} det_scratch;

static void release_scratch(void *data)
{
    det_scratch *scratch = data;
    if (scratch)
        free(scratch->values);
    free(scratch);
}

/* Room for `count` long doubles: the session's scratch grown, or a new one the caller frees (no session). */
static kiln_status get_scratch(const kiln_kernel_call *call, size_t count, det_scratch **out, kiln_error *err)
{
    kiln_node_state *slot = call->context ? call->context->state : NULL;
    det_scratch *scratch = slot ? slot->data : NULL;
    size_t bytes;
    if (!kiln_mul_size(count, sizeof(long double), &bytes))
        return kiln_fail(err, KILN_ERR_LIMIT, "det: a matrix of %zu elements is too large to factor", count);
    if (!scratch) {
        scratch = calloc(1, sizeof *scratch);
        if (!scratch)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "det: out of memory for its scratch");
        if (slot) {
            slot->data = scratch;
            slot->release = release_scratch;
        }
    }
    if (scratch->count < count) {
        long double *values = malloc(bytes);
        if (!values) {
            if (!slot)
                release_scratch(scratch);
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "det: out of memory for %zu bytes of scratch", bytes);
        }
        free(scratch->values);
        scratch->values = values;
        scratch->count = count;
    }
    *out = scratch;
    return KILN_OK;
}

/*
 * The determinant of the n x n matrix `a` (row-major, overwritten): the
 * signed product of the pivots of Gaussian elimination, choosing in each
 * column the row of largest magnitude (the first such). A column with no
 * non-zero candidate makes the matrix singular: 0. A NaN anywhere: NaN
 * (a NaN is never the largest magnitude, so it would otherwise be skipped).
 */
static long double determinant(long double *a, size_t n)
{
    for (size_t i = 0; i < n * n; i++)
        if (isnan(a[i]))
            return NAN;
    long double det = 1.0L;
    for (size_t k = 0; k < n; k++) {
        size_t pivot = k;
        for (size_t i = k + 1; i < n; i++)
            if (fabsl(a[i * n + k]) > fabsl(a[pivot * n + k]))
                pivot = i;
        if (a[pivot * n + k] == 0.0L)
            return 0.0L;
        if (pivot != k) {
            for (size_t j = k; j < n; j++) {
                long double swap = a[k * n + j];
                a[k * n + j] = a[pivot * n + j];
                a[pivot * n + j] = swap;
            }
            det = -det;
        }
        long double p = a[k * n + k];
        det *= p;
        for (size_t i = k + 1; i < n; i++) {
            long double factor = a[i * n + k] / p;
            if (factor == 0.0L)
                continue;
            for (size_t j = k + 1; j < n; j++)
                a[i * n + j] -= factor * a[k * n + j];
        }
    }
    return det;
}

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "det: operands do not match the op's shape rule");
}

static kiln_status run_det(const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count != 1)
        return mismatch(err);
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *out = call->output;
    if (!takes(x->dtype) || out->dtype != x->dtype || x->rank < 2 || out->rank != x->rank - 2)
        return mismatch(err);
    KILN_HALF_IN_F32(call, run_det, err);
    int64_t n = x->shape[x->rank - 1];
    if (x->shape[x->rank - 2] != n)
        return mismatch(err);
    for (uint32_t i = 0; i < out->rank; i++)
        if (out->shape[i] != x->shape[i])
            return mismatch(err);
    if (out->element_count == 0)
        return KILN_OK;
    size_t size = (size_t)n, count = size * size; /* <= x's element count: no overflow */
    det_scratch *scratch = NULL;
    if (count > 0)
        KILN_TRY(get_scratch(call, count, &scratch, err));
    for (uint64_t m = 0; m < out->element_count; m++) {
        long double result = 1.0L; /* the determinant of a 0 x 0 matrix */
        if (count > 0) {
            for (size_t i = 0; i < count; i++)
                scratch->values[i] = x->dtype == KILN_F32 ? (long double)((const float *)x->data)[m * count + i]
                                                          : (long double)((const double *)x->data)[m * count + i];
            result = determinant(scratch->values, size);
        }
        if (out->dtype == KILN_F32)
            ((float *)out->data)[m] = (float)result;
        else
            ((double *)out->data)[m] = (double)result;
    }
    /* Without a state slot to keep it in (no session), the scratch was this call's own. */
    if (scratch && (!call->context || !call->context->state))
        release_scratch(scratch);
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def det_ops[] = {
    {.name = "det", .versions = {1, 1}, .inputs = {1, 1}, .infer = infer_det, .run = run_det},
};

const kiln_op_family kiln_ops_det = KILN_OP_FAMILY(det_ops, "spec/ops/det.md");
