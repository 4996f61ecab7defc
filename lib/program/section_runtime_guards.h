/* section_runtime_guards.h — the RGRD section: runtime guards of a non-strict program (spec/format.md §7.10). */
#ifndef KILN_LIB_SECTION_RUNTIME_GUARDS_H
#define KILN_LIB_SECTION_RUNTIME_GUARDS_H

#include "format/cursor.h"
#include "model.h"

/* Append the RGRD payload of m->guards to `w`. */
void kiln_runtime_guards_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode an RGRD payload into m->guards and mark the model non-strict;
 * the DIMS section must be decoded first. Expression ids are checked
 * against the stored pool here; the rest (nodes, kinds, that every
 * unproven precondition is stored) when the model is checked
 * (stored_guards.h).
 */
kiln_status kiln_runtime_guards_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                       kiln_error *err);

#endif
