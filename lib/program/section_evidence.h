/* section_evidence.h — the EVID section: evidence cases (spec/format.md §7). */
#ifndef KILN_LIB_SECTION_EVIDENCE_H
#define KILN_LIB_SECTION_EVIDENCE_H

#include "format/cursor.h"
#include "model.h"

/* Append the EVID payload of all cases of `m` to `w`. */
void kiln_evidence_encode(const kiln_model *m, kiln_writer *w);

/* Decode an EVID payload into m->evidence. */
kiln_status kiln_evidence_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                 kiln_error *err);

#endif
