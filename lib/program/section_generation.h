/* section_generation.h — the GENV section: generation cases (spec/format.md §7.15; format 1.3). */
#ifndef KILN_LIB_SECTION_GENERATION_H
#define KILN_LIB_SECTION_GENERATION_H

#include "format/cursor.h"
#include "model.h"

/* Append the GENV payload of `m` (the root, m->generation_count >= 1) to `w`. */
void kiln_generations_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode a GENV payload into m->generations (the root's). The case count
 * is bounded by kiln_limits.max_outputs, as evidence cases are; each
 * token list by the bytes that remain. The methods the cases name are
 * judged once every method is decoded (kiln_generation_check).
 */
kiln_status kiln_generations_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                    kiln_error *err);

#endif
