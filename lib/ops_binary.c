/* ops_binary.c — binary, comparison, logical, ternary and variadic elementwise ops: shape rules and portable reference kernels (spec/ops/binary.md). */
#include "op_registry.h"

/* No op of this family is implemented yet. */
const kiln_op_family kiln_ops_binary = {NULL, 0};
