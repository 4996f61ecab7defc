/* section_states.h — the STAT section: the program's state tensors (spec/format.md §7.14; format 1.3). */
#ifndef KILN_LIB_SECTION_STATES_H
#define KILN_LIB_SECTION_STATES_H

#include "format/cursor.h"
#include "model.h"

struct kiln_report;

/* Append the STAT payload of `m` (m->state_count >= 1) to `w`. */
void kiln_states_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode a STAT payload into m->states (the root's; its methods borrow
 * them). A dtype this runtime cannot hold is recorded in `report` and
 * counted in *unsupported, as for IOSG. The count is bounded by
 * kiln_limits.max_inputs: a state is an input the session keeps.
 */
kiln_status kiln_states_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                               kiln_model *m, struct kiln_report *report, uint32_t *unsupported, kiln_error *err);

#endif
