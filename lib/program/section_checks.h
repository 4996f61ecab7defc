/* section_checks.h — the CHKS section: semantic input checks (spec/format.md §7). */
#ifndef KILN_LIB_SECTION_CHECKS_H
#define KILN_LIB_SECTION_CHECKS_H

#include "format/cursor.h"
#include "model.h"

void kiln_input_checks_encode(const kiln_model *m, kiln_writer *w);
kiln_status kiln_input_checks_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                     kiln_error *err);

#endif
