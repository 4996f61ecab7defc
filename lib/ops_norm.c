/* ops_norm.c — normalization ops: shape rules and portable reference kernels (spec/ops/norm.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_norm = {NULL, 0};
