/* section_io_signature.h — the IOSG section: the program's inputs and outputs (spec/format.md §7.4). */
#ifndef KILN_LIB_SECTION_IO_SIGNATURE_H
#define KILN_LIB_SECTION_IO_SIGNATURE_H

#include "format/cursor.h"
#include "model.h"

struct kiln_report;

/* Append the IOSG payload of `m` to `w`. */
void kiln_io_signature_encode(const kiln_model *m, kiln_writer *w);

/*
 * Decode an IOSG payload into m->inputs and m->outputs; the DIMS section
 * must be decoded first (input axes refer to its expressions). An input
 * dtype this runtime cannot hold under `features` is recorded in `report`
 * and counted in *unsupported, and decoding goes on (section_dtypes.h).
 */
kiln_status kiln_io_signature_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                                     kiln_model *m, struct kiln_report *report, uint32_t *unsupported,
                                     kiln_error *err);

#endif
