/*
 * shape_attribute.h — a target shape written as text in a STRING attribute
 * ("[batch, 1, 4*seq]"): the ops whose output sizes follow the declared
 * dims rather than constants (expand_to, resize_to; spec/ops/shape.md,
 * spec/ops/resize.md) read their target with it.
 */
#ifndef KILN_LIB_SHAPE_ATTRIBUTE_H
#define KILN_LIB_SHAPE_ATTRIBUTE_H

#include "op_def.h"

/*
 * Parse STRING attribute `name` of the node as a shape over the declared
 * dims (lib/contract/shape_parse.h grammar: constants, dim names, + - *,
 * floor division and mod by positive constants) into `out`, and prove
 * every size at least `min_size` over the declared domain.
 * @return KILN_OK, or KILN_ERR_INVALID_PROGRAM naming ctx->node_label and
 *         the attribute: missing, not a shape, a name that is no declared
 *         dim, or a size that may be below `min_size` (with a
 *         counterexample).
 */
kiln_status kiln_shape_attribute(const kiln_shape_context *ctx, const char *name, int64_t min_size, kiln_shape *out,
                                 kiln_error *err);

#endif
