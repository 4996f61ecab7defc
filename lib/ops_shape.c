/* ops_shape.c — shape and layout ops: shape rules and portable reference kernels (spec/ops/shape.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_shape = {NULL, 0};
