/* ops_gather.c — indexing, gathering and sequence-like ops: shape rules and portable reference kernels (spec/ops/gather.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_gather = {NULL, 0};
