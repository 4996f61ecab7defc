/* section_dims.h — the DIMS section: dims, derived dims, the shape expression pool and relations (spec/format.md §7.3, §8). */
#ifndef KILN_LIB_SECTION_DIMS_H
#define KILN_LIB_SECTION_DIMS_H

#include "format/cursor.h"
#include "model.h"

/* Append the DIMS payload of `m` to `w`: its first m->stored_expr_count
 * expressions, then, `with_relations` (the file sets feature bit 1), its
 * relations across dims. */
void kiln_dims_encode(const kiln_model *m, bool with_relations, kiln_writer *w);

/* Decode a DIMS payload into m->dims, m->derived, the expression pool
 * m->exprs (interning each expression to check that none repeats) and,
 * under feature bit 1 of `features`, m->relations. */
kiln_status kiln_dims_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                             kiln_model *m, kiln_error *err);

#endif
