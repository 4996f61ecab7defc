/* ops_linalg.c — matrix products and data movement: shape rules and portable reference kernels (spec/ops/linalg.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_linalg = {NULL, 0};
