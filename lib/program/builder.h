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

/**
 * kiln_builder_add_weight_file for `resolved`, a real path (realpath) the
 * caller has confined (the text assembler: inside the text's folder): a
 * symbolic link put in its last component since is refused (O_NOFOLLOW),
 * when the weight is added and again when the artifact is written.
 * @return as kiln_builder_add_weight_file.
 */
kiln_status kiln_builder_add_weight_file_resolved(kiln_builder *builder, const char *name, kiln_weight_kind kind,
                                                  kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                                  const char *resolved, uint64_t offset, kiln_value *out,
                                                  kiln_error *err);

/**
 * Add to `method` the weight `name` of `program` (a program builder, and
 * `method` one of its methods or to be): the same tensor, its bytes copied
 * or its file named again, so that sealing stores it once. The text
 * assembler gives a method block the program's weights this way.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT if `program` has no weight
 *         `name` or `method` has a value of that name; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_builder_share_weight(kiln_builder *method, const kiln_builder *program, const char *name,
                                      kiln_value *out, kiln_error *err);

/**
 * Declare in `method` every state `program` (a program builder) declares,
 * alike: the text assembler gives a method block the program's states so.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT if `method` declares one of
 *         them already; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_builder_share_states(kiln_builder *method, const kiln_builder *program, kiln_error *err);

#endif
