/*
 * onednn_matmul.c — f32 matmul and gemm through oneDNN's matmul primitive
 * (onednn.h). A rank-1 matmul operand becomes a 1-row (a) or 1-column (b)
 * matrix, and batch axes are left-padded with 1 to a common rank, which is
 * how oneDNN broadcasts batch axes. Gemm's transposes are strides only:
 * nothing is copied. A program weight is packed once per entry.
 */
#include <float.h>
#include <string.h>

#include "broadcast.h"
#include "onednn_entry.h"

/* ---------------------------------------------------------------- matmul */

/*
 * Build entry e's matmul primitive over a, b and the output as described
 * (dims and element strides, `rank` of them); b in the layout oneDNN
 * prefers, packed once, when e->weights_constant. Strides oneDNN cannot
 * describe leave the entry refused (the reference runs).
 */
static kiln_status build_product(const kiln_kernel_call *call, primitive_entry *e, int rank, const dnnl_dims_t a_dims,
                                 const dnnl_dims_t a_strides, const dnnl_dims_t b_dims, const dnnl_dims_t b_strides,
                                 const dnnl_dims_t o_dims, const dnnl_dims_t o_strides, kiln_error *err)
{
    dnnl_memory_desc_t a_md, b_md, o_md, b_any;
    if (!onednn_describe(&a_md, rank, a_dims, a_strides) || !onednn_describe(&b_md, rank, b_dims, b_strides) ||
        !onednn_describe(&o_md, rank, o_dims, o_strides) || !onednn_describe_any(&b_any, rank, b_dims)) {
        e->refused = true;
        return KILN_OK;
    }
    dnnl_matmul_desc_t desc;
    bool described =
        dnnl_matmul_desc_init(&desc, &a_md, e->weights_constant ? &b_any : &b_md, NULL, &o_md) == dnnl_success;
    return onednn_build_entry(call->context->onednn, e, &desc, described, "matmul", &a_md, &b_md, NULL, &o_md, NULL,
                              NULL, 1.0f, 0.0f, err);
}

/* Run entry e's product on the call's operands (*ran false when e was refused). */
static kiln_status run_product(const kiln_kernel_call *call, primitive_entry *e, bool *ran, kiln_error *err)
{
    if (e->refused)
        return KILN_OK;
    KILN_TRY(onednn_execute_entry(call->context->onednn, e, "matmul", call->inputs[0]->data, call->inputs[1]->data,
                                  NULL, call->output->data, err));
    kiln_call_report_path(call, KILN_PATH_ONEDNN);
    *ran = true;
    return KILN_OK;
}

kiln_status kiln_onednn_matmul(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!onednn_fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    kiln_tensor *out = call->output;
    primitive_entry *e;
    bool fresh;
    KILN_TRY(onednn_entry_for(call, KEY_MATMUL, a, b, NULL, out, &e, &fresh, err));
    if (fresh) {
        /* All three as matrices with batch axes padded to one rank. */
        uint32_t matrix_axes = (a->rank >= 2) + (b->rank >= 2);
        uint32_t batch_rank = out->rank - matrix_axes;
        /*
         * A weight-like b (one matrix) shared by every batch of a: a's
         * batch axes and rows are one [batch * m, k] matrix in the same
         * row-major bytes, and so are the output's, so the product is one
         * 2-D matmul instead of a batch of small ones sharing b (measured
         * faster with oneDNN 2.6 for the [2, 64, 256] x [256, 256]
         * projections of an encoder layer). Each output element is the
         * same sum of the same products.
         */
        bool fold_batch = b->rank == 2 && a->rank > 2;
        if (fold_batch)
            batch_rank = 0;
        int rank = (int)batch_rank + 2;
        /* dnnl_dims_t holds DNNL_MAX_NDIMS (12) >= KILN_MAX_RANK + 2 dims. */
        dnnl_dims_t a_dims, b_dims, o_dims, a_strides, b_strides, o_strides;
        uint32_t a_batch = a->rank > 2 ? a->rank - 2 : 0, b_batch = b->rank > 2 ? b->rank - 2 : 0;
        for (uint32_t i = 0; i < batch_rank; i++) {
            a_dims[i] = i < batch_rank - a_batch ? 1 : a->shape[i - (batch_rank - a_batch)];
            b_dims[i] = i < batch_rank - b_batch ? 1 : b->shape[i - (batch_rank - b_batch)];
            o_dims[i] = out->shape[i];
        }
        int64_t m = a->rank >= 2 ? a->shape[a->rank - 2] : 1, k = a->shape[a->rank - 1];
        if (fold_batch)
            m = (int64_t)(a->element_count / (uint64_t)k);
        int64_t n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
        a_dims[batch_rank] = m, a_dims[batch_rank + 1] = k;
        b_dims[batch_rank] = k, b_dims[batch_rank + 1] = n;
        o_dims[batch_rank] = m, o_dims[batch_rank + 1] = n;
        e->threads = onednn_product_threads(call, (double)out->element_count * (double)k);
        onednn_row_major_strides(rank, a_dims, a_strides);
        onednn_row_major_strides(rank, b_dims, b_strides);
        onednn_row_major_strides(rank, o_dims, o_strides);
        /* A program weight b is packed once into the layout oneDNN prefers
         * (measured 1.3x on a [16, 784] x [784, 512] product). */
        e->weights_constant = onednn_operand_is_constant(call, 1);
        KILN_TRY(build_product(call, e, rank, a_dims, a_strides, b_dims, b_strides, o_dims, o_strides, err));
    }
    return run_product(call, e, ran, err);
}

/* ------------------------------------------------------- strided product */

kiln_status kiln_onednn_strided_product(const kiln_kernel_call *call, const kiln_onednn_product *product, bool *ran,
                                        kiln_error *err)
{
    *ran = false;
    if (!onednn_fast_path_allowed(call) || product->rank < 2 || product->rank > DNNL_MAX_NDIMS)
        return KILN_OK;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    kiln_tensor *out = call->output;
    primitive_entry *e;
    bool fresh;
    /* A state view and a packed operand of one shape have different strides: different primitives. */
    int64_t kind = KEY_STRIDED_PRODUCT | (int64_t)(call->context->strided_operands & 3u) << 8;
    KILN_TRY(onednn_entry_for(call, kind, a, b, NULL, out, &e, &fresh, err));
    if (fresh) {
        int rank = product->rank;
        dnnl_dims_t a_dims, b_dims, o_dims, a_strides, b_strides, o_strides;
        for (int i = 0; i < rank; i++) {
            a_dims[i] = product->a_dims[i], a_strides[i] = product->a_strides[i];
            b_dims[i] = product->b_dims[i], b_strides[i] = product->b_strides[i];
            o_dims[i] = product->y_dims[i], o_strides[i] = product->y_strides[i];
        }
        double k = (double)product->a_dims[rank - 1];
        e->threads = onednn_product_threads(call, (double)out->element_count * k);
        KILN_TRY(build_product(call, e, rank, a_dims, a_strides, b_dims, b_strides, o_dims, o_strides, err));
    }
    return run_product(call, e, ran, err);
}

/* ------------------------------------------------------------------ gemm */

/* out[i, j] = C broadcast to [M, N]: the accumulator a `sum` post-op reads. */
static void copy_broadcast(const kiln_tensor *c, kiln_tensor *out)
{
    int64_t strides[KILN_MAX_RANK] = {0};
    kiln_broadcast_strides(c, out, strides);
    const float *from = c->data;
    float *to = out->data;
    int64_t m = out->shape[0], n = out->shape[1];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            to[i * n + j] = from[i * strides[0] + j * strides[1]];
}

/* Whether C is one row of N values: oneDNN's bias shape. */
static bool is_row_bias(const kiln_tensor *c, int64_t n)
{
    return c && ((c->rank == 1 && c->shape[0] == n) || (c->rank == 2 && c->shape[0] == 1 && c->shape[1] == n));
}

kiln_status kiln_onednn_gemm(const kiln_kernel_call *call, bool trans_a, bool trans_b, float alpha, float beta,
                             bool *ran, kiln_error *err)
{
    *ran = false;
    if (!onednn_fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    const kiln_tensor *c = call->input_count > 2 ? call->inputs[2] : NULL;
    kiln_tensor *out = call->output;
    int64_t m = out->shape[0], n = out->shape[1], k = trans_a ? a->shape[0] : a->shape[1];
    /*
     * beta = 0 still reads C (0 * inf and 0 * NaN are NaN), but oneDNN's
     * GEMM implementations take a sum post-op of scale 0 as "C unread"
     * (its AVX2 GEMM did, its AVX-512 kernels did not): so a C of beta 0
     * is left out of the primitive, where it only adds zeros, and a C
     * holding a special value leaves the call to the reference.
     */
    if (c && beta == 0.0f && onednn_exceeds(c, FLT_MAX))
        return KILN_OK;
    if (beta == 0.0f)
        c = NULL;
    bool fuse_bias = is_row_bias(c, n) && alpha == 1.0f && beta == 1.0f;
    primitive_entry *e;
    bool fresh;
    KILN_TRY(onednn_entry_for(call, KEY_GEMM, a, b, c, out, &e, &fresh, err));
    if (fresh) {
        dnnl_dims_t a_dims = {m, k}, b_dims = {k, n}, o_dims = {m, n}, bias_dims = {1, n};
        /* A' and B' by strides: a transposed operand is read column-wise. */
        dnnl_dims_t a_strides = {trans_a ? 1 : k, trans_a ? m : 1};
        dnnl_dims_t b_strides = {trans_b ? 1 : n, trans_b ? k : 1};
        dnnl_dims_t o_strides = {n, 1}, bias_strides = {n, 1};
        dnnl_memory_desc_t a_md, b_md, o_md, bias_md;
        dnnl_memory_desc_t b_any;
        e->prefill = c && !fuse_bias;
        e->threads = onednn_product_threads(call, (double)m * (double)n * (double)k);
        e->weights_constant = onednn_operand_is_constant(call, 1); /* packed once, as for matmul */
        if (!onednn_describe(&a_md, 2, a_dims, a_strides) || !onednn_describe(&b_md, 2, b_dims, b_strides) ||
            !onednn_describe(&o_md, 2, o_dims, o_strides) || !onednn_describe(&bias_md, 2, bias_dims, bias_strides) ||
            !onednn_describe_any(&b_any, 2, b_dims))
            e->refused = true;
        else {
            dnnl_matmul_desc_t desc;
            bool described = dnnl_matmul_desc_init(&desc, &a_md, e->weights_constant ? &b_any : &b_md,
                                                   fuse_bias ? &bias_md : NULL, &o_md) == dnnl_success;
            KILN_TRY(onednn_build_entry(call->context->onednn, e, &desc, described, "matmul", &a_md, &b_md,
                                        fuse_bias ? &bias_md : NULL, &o_md, NULL, NULL, alpha, beta, err));
        }
    }
    if (e->refused)
        return KILN_OK;
    if (e->prefill)
        copy_broadcast(c, out);
    KILN_TRY(onednn_execute_entry(call->context->onednn, e, "matmul", a->data, b->data, fuse_bias ? c->data : NULL,
                                  out->data, err));
    kiln_call_report_path(call, KILN_PATH_ONEDNN);
    *ran = true;
    return KILN_OK;
}
