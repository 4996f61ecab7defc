/*
 * broadcast.h — NumPy broadcasting, shared by every op that combines
 * tensors elementwise: the static rule (is each pair of axis sizes provably
 * compatible over the declared domain?) and the run-time walk (element
 * strides of each operand over the output, 0 on broadcast axes).
 */
#ifndef KILN_LIB_BROADCAST_H
#define KILN_LIB_BROADCAST_H

#include "op_registry.h"

/*
 * The output size of one aligned pair of axis sizes (expression ids `a`
 * and `b`): `a` if they are the same expression or `b` is the constant 1,
 * `b` if `a` is the constant 1. Anything else is refused with
 * KILN_ERR_INVALID_PROGRAM, naming ctx->node_label, `out_axis`, both sizes
 * and a counterexample point of the domain when one is found.
 */
kiln_status kiln_broadcast_axis(const kiln_shape_context *ctx, uint32_t a, uint32_t b, uint32_t out_axis,
                                uint32_t *out, kiln_error *err);

/* Broadcast two shapes (aligned from the right) into `out`. */
kiln_status kiln_broadcast_shapes(const kiln_shape_context *ctx, const kiln_shape *a, const kiln_shape *b,
                                  kiln_shape *out, kiln_error *err);

/* Element strides of two operands over an output, 0 on broadcast axes. */
typedef struct kiln_broadcast_plan {
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    int64_t stride_a[KILN_MAX_RANK];
    int64_t stride_b[KILN_MAX_RANK];
    int64_t inner;  /* extent of the last axis (1 for rank 0) */
    uint64_t rows;  /* element count / inner */
} kiln_broadcast_plan;

/* Element strides of `t` over `out` (rank out->rank), 0 where `t` broadcasts. */
void kiln_broadcast_strides(const kiln_tensor *t, const kiln_tensor *out, int64_t *strides);

void kiln_broadcast_plan_init(const kiln_tensor *a, const kiln_tensor *b, const kiln_tensor *out,
                              kiln_broadcast_plan *p);

/*
 * Set the outer-axis odometer `index` and both operand offsets to the
 * start of output row `row` (row < p->rows).
 */
void kiln_broadcast_row_start(const kiln_broadcast_plan *p, uint64_t row, int64_t *index, int64_t *ia, int64_t *ib);

/*
 * Step the outer-axis odometer `index` by one row (the last axis is the
 * inner loop), keeping both operand offsets in sync. Call only when
 * p->rank > 1.
 */
void kiln_broadcast_next_row(const kiln_broadcast_plan *p, int64_t *index, int64_t *ia, int64_t *ib);

#endif
