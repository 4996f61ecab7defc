/*
 * fusion.h — a conv and the activation after it, run as one oneDNN
 * primitive (and a batch_norm and the relu after it, as one pass: norm.c).
 *
 * A conv whose result only feeds the next node that runs, a relu,
 * leaky_relu, clip or silu of f32, can apply that activation as a oneDNN
 * post-op and write the activation's result itself: one pass over the
 * output instead of two, and one node less to dispatch. Nodes between the
 * two that no output depends on (liveness.h) do not run and do not count:
 * the ONNX importer turns Mul(x, Sigmoid(x)) into silu(x) and leaves the
 * Sigmoid, unread, between the conv and the silu. The pairs are a
 * property of the model alone (kiln_fusion_pair), so that the memory
 * planner can keep the activation's slot apart from the conv's operands,
 * which are still being read while it is written. A session offers the
 * activation to the conv (kernel_context.h) only when the plan in use
 * keeps them apart (kiln_fusion_plan_allows: a plan stored by another
 * writer may not), and the conv's fast path applies it only when it can
 * show the fused result is the one the two ops give, or for silu within
 * the bound stated for it (onednn_window.c; spec/opset.md, "Fast paths").
 */
#ifndef KILN_LIB_FUSION_H
#define KILN_LIB_FUSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_context.h"
#include "model.h"

/*
 * How many times each node result is read: by live nodes (`live` from
 * kiln_live_nodes), plus once as a program output. *out (node_count
 * entries, free()) feeds kiln_fusion_pair.
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_fusion_readers(const kiln_model *m, const bool *live, uint32_t **out, kiln_error *err);

/*
 * The activation node that node n (an op with the trait
 * applies_activation: conv, batch_norm) forms a pair with, or 0 when it
 * forms none: the next live node a, when n's result is read once
 * (`readers` from kiln_fusion_readers), by a, an f32 relu, leaky_relu,
 * clip or silu (which of them node n applies is its kernel's choice). The activation goes to *out (may be NULL).
 */
uint32_t kiln_fusion_pair(const kiln_model *m, const bool *live, uint32_t n, const uint32_t *readers,
                          kiln_fused_activation *out);

/*
 * For a pair whose producer n applies the activation in place (trait
 * activation_in_place): whether it may write the activation's result at
 * `output`, `output_bytes` long, while it reads operand 0 at `x`, `x_bytes`
 * long: the same bytes (each element read before it is written) or none
 * in common. A session asks this of its own plan's buffers before it
 * offers such an activation.
 */
bool kiln_fusion_in_place(const void *output, size_t output_bytes, const void *x, size_t x_bytes);

/*
 * Whether, under a plan of `offsets` and slot `sizes` per node result, the
 * slot of node a (n's activation) shares no byte with a node result that
 * node n reads.
 */
bool kiln_fusion_plan_allows(const kiln_model *m, uint32_t n, uint32_t a, const uint64_t *offsets,
                             const uint64_t *sizes);

#endif
