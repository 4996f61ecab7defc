/* section_dims.h — the DIMS section: dims, derived dims and the shape expression pool (spec/format.md §7.3, §8). */
#ifndef KILN_LIB_SECTION_DIMS_H
#define KILN_LIB_SECTION_DIMS_H

#include "format/cursor.h"
#include "model.h"

/* Append the DIMS payload of `m` to `w`: its first m->stored_expr_count expressions. */
void kiln_dims_encode(const kiln_model *m, kiln_writer *w);

/* Decode a DIMS payload into m->dims, m->derived and the expression pool
 * m->exprs, interning each expression to check that none repeats. */
kiln_status kiln_dims_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                             kiln_error *err);

#endif
