/*
 * builder.h — questions other library modules may ask a builder
 * that the public API does not answer. The text assembler needs the dtype
 * of any value to give an inline literal operand (`add(%0, 1)`) the dtype
 * of the tensor it combines with.
 */
#ifndef KILN_LIB_BUILDER_H
#define KILN_LIB_BUILDER_H

#include <kiln/kiln.h>

/**
 * The dtype of `value` (input, weight or op result) of `builder`.
 * @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT if `value` is not one of
 *         the builder's values.
 */
kiln_status kiln_builder_value_dtype(const kiln_builder *builder, kiln_value value, kiln_dtype *out,
                                     kiln_error *err);

#endif
