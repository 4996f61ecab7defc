/* section_plan.h — the PLAN section: a stored memory plan (spec/format.md §7.11). */
#ifndef KILN_LIB_SECTION_PLAN_H
#define KILN_LIB_SECTION_PLAN_H

#include "format/cursor.h"
#include "model.h"

/*
 * Append the PLAN payload of `m` to `w`: the memory plan (memory_plan.h)
 * at the domain's upper bound, with no size limit (a session checks the
 * arena it allocates against its own).
 * @return the planner's failure (KILN_ERR_LIMIT: a size overflows 64 bits),
 *         or KILN_ERR_OUT_OF_MEMORY
 */
kiln_status kiln_stored_plan_encode(const kiln_model *m, kiln_writer *w, kiln_error *err);

/*
 * Decode a PLAN payload into m->stored_plan. Only its layout is checked
 * here; whether it fits this runtime's sizes and lifetimes is checked by
 * the loader (kiln_check_stored_plan), which falls back to its own plan
 * otherwise.
 */
kiln_status kiln_stored_plan_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                    kiln_error *err);

#endif
