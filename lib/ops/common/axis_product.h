/*
 * axis_product.h — products of shape expressions kept small, for the shape
 * rules that multiply axes together (flatten, reshape): the constant
 * factors fold into one constant c, the others multiply in axis order into
 * s, and the result is c*s. So [n, 3, 4] flattens to 12*n, [n, 1, 1] to n
 * and a static shape to a constant. The model canonicalizes every output
 * shape afterwards; folding here keeps the intermediate trees small and
 * lets reshape divide a known constant back out of c*s.
 */
#ifndef KILN_LIB_AXIS_PRODUCT_H
#define KILN_LIB_AXIS_PRODUCT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "shape.h"
#include "shape_context.h"

/*
 * The constant c * e, folded: c*(k*s) = (c*k)*s, constants multiply,
 * 1*e = e, 0*e = 0. A product beyond int64 is refused with
 * KILN_ERR_INVALID_PROGRAM: "<node>: an output size overflows".
 */
kiln_status kiln_expr_scale(const kiln_shape_context *ctx, uint32_t e, int64_t c, uint32_t *out, kiln_error *err);

/*
 * The product of axes [from, to) of `shape`, skipping those marked in
 * `skip` (indexed by axis; NULL skips none), as c*s above (an empty
 * product is the constant 1). A product of the constant factors beyond
 * int64 is refused with KILN_ERR_INVALID_PROGRAM: "<node>: the <what>
 * overflows" (`what` names the size for the op: "flattened size",
 * "element count").
 */
kiln_status kiln_axis_product(const kiln_shape_context *ctx, const kiln_shape *shape, uint32_t from, uint32_t to,
                              const bool *skip, const char *what, uint32_t *out, kiln_error *err);

#endif
