/*
 * onednn.h — the oneDNN fast path for f32 matmul, gemm, conv,
 * conv_transpose, max_pool and avg_pool.
 *
 * Built when the meson feature `onednn` finds libdnnl (onednn_entry.c,
 * onednn_matmul.c, onednn_window.c); without it, onednn_none.c supplies
 * the same functions and every call reports "not run", so the reference
 * kernels (linalg.c, conv.c, pool.c) do the work. Both
 * paths compute the same op: the fast path may only differ in rounding
 * (spec/opset.md, "Fast paths").
 *
 * A session owns one engine and its streams (kiln_onednn_session). Each
 * node with a fast path keeps, in its kiln_node_state slot, a small cache of
 * primitives keyed by the concrete operand shapes, so repeated shapes build
 * nothing; see kernel_context.h for the allocation rule.
 */
#ifndef KILN_LIB_ONEDNN_H
#define KILN_LIB_ONEDNN_H

#include <stdbool.h>
#include <stdint.h>

#include "op_def.h"
#include "window.h"

typedef struct kiln_onednn_session kiln_onednn_session;

/* @return true if this build dispatches its f32 fast-path ops to oneDNN. */
bool kiln_onednn_enabled(void);

/*
 * Create the engine and stream of one session in *out. Without oneDNN
 * *out is NULL and the call succeeds.
 * @return KILN_OK or KILN_ERR_RUNTIME naming the failing oneDNN call.
 */
kiln_status kiln_onednn_session_new(kiln_onednn_session **out, kiln_error *err);

/* Free a session's engine and stream (NULL is a no-op). */
void kiln_onednn_session_free(kiln_onednn_session *session);

/*
 * Run a matmul call through oneDNN when its context has an oneDNN session
 * and the operands are f32 and non-empty. *ran says whether it did; when
 * false the caller runs the reference kernel. Shapes oneDNN refuses are
 * remembered as refused, so they are not asked again.
 * @return KILN_OK, or KILN_ERR_OUT_OF_MEMORY / KILN_ERR_RUNTIME.
 */
kiln_status kiln_onednn_matmul(const kiln_kernel_call *call, bool *ran, kiln_error *err);

/*
 * The same for gemm: out = alpha * A' B' + beta * C, A' = A or its
 * transpose (trans_a), B' likewise; C (call->inputs[2]) is optional and
 * broadcasts to [M, N]. A C of shape [N] or [1, N] with alpha = beta = 1
 * is fused as oneDNN's bias; other C are copied into the output first and
 * accumulated with a `sum` post-op scaled by beta.
 */
kiln_status kiln_onednn_gemm(const kiln_kernel_call *call, bool trans_a, bool trans_b, float alpha, float beta,
                             bool *ran, kiln_error *err);

/*
 * The window of one conv or pooling call on concrete extents, on x's
 * spatial axes (not lifted): what conv.c and pool.c resolved with
 * window.h before asking for the fast path. Pads are the ones in effect
 * (SAME pads resolved for this extent).
 */
/*
 * A batched matrix product over strided views of a kernel's operands:
 * y[batch..., m, n] = sum over k of a[batch..., m, k] * b[batch..., k, n],
 * each operand read through its own element strides (a batch axis of size
 * 1 in one operand broadcasts it), without copying. `rank` counts the
 * batch axes plus 2. For einsum equations that are contractions.
 */
typedef struct kiln_onednn_product {
    int rank; /* 2..12 */
    int64_t a_dims[12], a_strides[12];
    int64_t b_dims[12], b_strides[12];
    int64_t y_dims[12], y_strides[12];
} kiln_onednn_product;

/**
 * Run `product` over call->inputs[0], [1] into call->output (f32) with
 * oneDNN's matmul, the primitive kept in the node's slot (keyed by the
 * operands' shapes: a node's strides follow from them). *ran false: the
 * caller runs its reference kernel (no oneDNN, reference kernels asked for,
 * another dtype, or oneDNN declines the strides).
 * @return KILN_OK, or an error building or running the primitive.
 */
kiln_status kiln_onednn_strided_product(const kiln_kernel_call *call, const kiln_onednn_product *product, bool *ran,
                                        kiln_error *err);

/*
 * Run an f32 conv call (x, weight [M, C/group, k...], optional bias [M])
 * through oneDNN's direct convolution, the bias fused, and the activation
 * the session offers (call->context->fusion) fused when the result is
 * provably the same (onednn_window.c, run_convolution). Declined (and *ran
 * false) without a oneDNN session, for f64 or empty operands, for a weight
 * holding an infinity or NaN (oneDNN may multiply padding zeros by it,
 * where the reference skips the tap), and for geometries oneDNN refuses.
 * @return KILN_OK, or KILN_ERR_OUT_OF_MEMORY / KILN_ERR_RUNTIME.
 */
kiln_status kiln_onednn_conv(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                             bool *ran, kiln_error *err);

/*
 * The same for conv_transpose (weight [C, M/group, k...]) through oneDNN's
 * deconvolution; pads in effect as kiln_window_extent gives them
 * (output_padding and output_shape included). Declined like conv, and
 * where oneDNN refuses the pads (e.g. negative ones from output_shape).
 */
kiln_status kiln_onednn_conv_transpose(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                                       bool *ran, kiln_error *err);

typedef enum kiln_onednn_pool_kind {
    KILN_ONEDNN_POOL_MAX,
    KILN_ONEDNN_POOL_AVG_EXCLUDE_PAD, /* avg_pool, count_include_pad 0 */
    KILN_ONEDNN_POOL_AVG_INCLUDE_PAD, /* avg_pool, count_include_pad 1 */
} kiln_onednn_pool_kind;

/*
 * Run an f32 max_pool or avg_pool call through oneDNN's pooling; ceil_mode
 * becomes extra end padding. Declined (and *ran false) where oneDNN's
 * result would differ from the op's: a window that sees no input element,
 * count_include_pad with a ceil_mode window that passes the end pad (the
 * op counts only declared pads), and max_pool of an x holding a NaN (the
 * op's max is NaN; oneDNN's comparisons may skip it).
 * @return KILN_OK, or KILN_ERR_OUT_OF_MEMORY / KILN_ERR_RUNTIME.
 */
kiln_status kiln_onednn_pool(const kiln_kernel_call *call, const kiln_window_axes *window,
                             kiln_onednn_pool_kind kind, bool *ran, kiln_error *err);

/* Primitives this process has built so far, one per op and shape (the
 * reorders of a conv count with it); tests check that repeated shapes
 * build none. */
uint64_t kiln_onednn_primitives_built(void);

/* Conv runs that applied the next node's activation (fusion.h) in this
 * process; tests check which runs fused. */
uint64_t kiln_onednn_fused_runs(void);

/* Conv and pool runs that left their result channels-last (layout.h) in
 * this process; tests check that the layout was kept. */
uint64_t kiln_onednn_channels_last_runs(void);

/* Passes over an operand to bound its magnitude (value_bound.h) in this
 * process; tests check that a carried bound replaces the pass. */
uint64_t kiln_onednn_magnitude_scans(void);

/* Conv and pool runs split into batch slices, one per thread, in this
 * process; tests check which runs were split. */
uint64_t kiln_onednn_sliced_runs(void);

#endif
