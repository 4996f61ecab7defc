/* section_opset.h — the OPST section: the (op, version) table (spec/format.md §7.2). */
#ifndef KILN_LIB_SECTION_OPSET_H
#define KILN_LIB_SECTION_OPSET_H

#include "format/cursor.h"
#include "model.h"

struct kiln_report;

/* Append the OPST payload of `m` to `w`. */
void kiln_opset_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode an OPST payload into m->opset and resolve every entry against the
 * op registry. An entry this runtime does not implement is recorded in
 * `report` and counted in *unsupported (all of them, not the first), and
 * the call still returns KILN_OK: the graph is then not typed.
 */
kiln_status kiln_opset_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                              struct kiln_report *report, uint32_t *unsupported, kiln_error *err);

#endif
