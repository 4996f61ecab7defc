/* ops_unary.c — unary elementwise ops: shape rules and portable reference kernels (spec/ops/unary.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_unary = {NULL, 0};
