/*
 * broadcast.h — NumPy broadcasting, shared by every op that combines
 * tensors elementwise: the static rule (is each pair of axis sizes provably
 * compatible over the declared domain?) and, at run time, the element
 * strides of each operand over the output, 0 on broadcast axes (the walk
 * itself is binary_walk.h).
 */
#ifndef KILN_LIB_BROADCAST_H
#define KILN_LIB_BROADCAST_H

#include "op_def.h"

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

/* Element strides of `t` over `out` (rank out->rank), 0 where `t` broadcasts. */
void kiln_broadcast_strides(const kiln_tensor *t, const kiln_tensor *out, int64_t *strides);

#endif
