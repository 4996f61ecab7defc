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
 * elementwise ops below the session derives it (kiln_bound_apply).
 * Bounds only ever skip a check: one too large is safe, and each rule
 * includes slack for rounding.
 */
#ifndef KILN_LIB_VALUE_BOUND_H
#define KILN_LIB_VALUE_BOUND_H

#include <stdint.h>

#include "model.h"

/* How a node's result bound follows from its operands' (kiln_bound_rule_of). */
typedef enum kiln_bound_kind {
    KILN_BOUND_NONE,    /* nothing known */
    KILN_BOUND_SCALED,  /* factor * B(x): relu, leaky_relu */
    KILN_BOUND_CLAMPED, /* min(B(x), factor): clip */
    KILN_BOUND_SUM,     /* (B(a) + B(b)) * factor: add, sub */
    KILN_BOUND_LARGEST, /* the largest B of the operands: concat */
} kiln_bound_kind;

typedef struct kiln_bound_rule {
    kiln_bound_kind kind;
    double factor;
} kiln_bound_rule;

/*
 * The rule bounding node n's f32 result from its operands' bounds, for
 * relu, leaky_relu, clip, add and sub (rounding included), for ops that
 * only move their operand's elements (reshape, flatten, squeeze,
 * unsqueeze, transpose, slice, identity) and for concat; NONE for any
 * other op or dtype. Decided once per program, when it is loaded.
 */
kiln_bound_rule kiln_bound_rule_of(const kiln_model *m, uint32_t n);

/* A bound on the magnitude of `node`'s result under `rule`, from its operands' (`bounds`, per value); +inf: none. */
double kiln_bound_apply(kiln_bound_rule rule, const kiln_node_decl *node, const double *bounds);

#endif
