/*
 * reader_limits.h — whether a reader with given limits (kiln_limits) would
 * load a model: the counts and string lengths the section decoders refuse
 * beyond their limits, checked before writing, so that the writer never
 * seals an artifact the readers it is meant for refuse.
 */
#ifndef KILN_LIB_READER_LIMITS_H
#define KILN_LIB_READER_LIMITS_H

#include "model.h"

/*
 * Check every count and string of `m` against `limits` as the decoders do
 * (spec/security.md §6), except the arena: a session's limit, not the
 * artifact's. @return KILN_OK, or KILN_ERR_LIMIT naming the first thing
 * over its limit, its size and the kiln_limits field.
 */
kiln_status kiln_model_fits_reader_limits(const kiln_model *m, const kiln_limits *limits, kiln_error *err);

#endif
