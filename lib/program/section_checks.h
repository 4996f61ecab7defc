/* section_checks.h — the CHKS section: semantic input checks (spec/format.md §7.9). */
#ifndef KILN_LIB_SECTION_CHECKS_H
#define KILN_LIB_SECTION_CHECKS_H

#include "format/cursor.h"
#include "model.h"

/* Append the CHKS payload of all input checks of `m` to `w`. */
void kiln_input_checks_encode(const kiln_model *m, kiln_writer *w);

/* Decode a CHKS payload into m->checks. What the checks refer to is
 * validated against the signature when the model is checked (model_check.h). */
kiln_status kiln_input_checks_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                     kiln_error *err);

#endif
