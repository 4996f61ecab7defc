/* ops_reduce.c — reductions and softmax-like ops: shape rules and portable reference kernels (spec/ops/reduce.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_reduce = {NULL, 0};
