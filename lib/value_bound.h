/*
 * value_bound.h — bounds on the magnitudes of a run's f32 values, carried
 * from node to node so that fast paths need not scan their operands.
 *
 * oneDNN's fused activations and max pooling give the op's result only
 * for operands without NaNs or values large enough to overflow a sum
 * (spec/opset.md, "Fast paths"); finding that out had cost a pass over
 * each such operand on every run (10% of a small CNN's run). But most of
 * these operands were just written by a node that can say how large its
 * result can be: a conv with program weights from a bound on its input, a
 * relu or a max_pool from theirs, a clip from its bounds. So a session
 * keeps, per value and per run, a bound B such that every element is
 * finite with |v| <= B, or +inf when nothing is known (inputs, weights,
 * results of other ops). A kernel reads its operand 0's bound from its
 * context and reports one for its result (kernel_context.h); for the
 * elementwise ops below the session derives it (kiln_value_bound_after).
 * Bounds only ever skip a check: one too large is safe, and each rule
 * includes slack for rounding.
 */
#ifndef KILN_LIB_VALUE_BOUND_H
#define KILN_LIB_VALUE_BOUND_H

#include <stdint.h>

#include "model.h"

/*
 * A bound on the magnitude of node n's f32 result from the bounds of its
 * operands (`bounds`, per value), for relu, leaky_relu, clip, add and sub;
 * +inf for any other op, dtype or unknown operand.
 */
double kiln_value_bound_after(const kiln_model *m, uint32_t n, const double *bounds);

struct kiln_session;

/* The bound the session's last run carried for `value` (+inf: none); for tests. */
double kiln_session_value_bound(const struct kiln_session *s, uint32_t value);

#endif
