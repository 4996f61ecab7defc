/*
 * section_weights.h — the WTAB section, the weights table, and the layout
 * of the weight bytes in WDAT that it describes (spec/format.md §7.5, §7.7).
 */
#ifndef KILN_LIB_SECTION_WEIGHTS_H
#define KILN_LIB_SECTION_WEIGHTS_H

#include <stdbool.h>

#include "format/cursor.h"
#include "model.h"

struct kiln_report;

/*
 * Lay out the weight bytes of WDAT, each weight at the next multiple of
 * KILN_WEIGHT_ALIGNMENT (the offsets chosen are stored in the weights'
 * data_offset, *data_size receives the raw size of WDAT), and append the
 * WTAB payload of `m` to `table`. The bytes themselves are written by
 * kiln_weights_produce (weight_stream.h).
 * @return KILN_OK, or KILN_ERR_LIMIT when the offsets overflow
 */
kiln_status kiln_weights_encode(kiln_model *m, kiln_writer *table, uint64_t *data_size, kiln_error *err);

/*
 * Decode a WTAB payload into m->weights, checking each weight's bytes
 * against its shape and against `data_size`, the raw size of WDAT, which
 * is not read here; when WDAT is stored compressed (`data_compressed`) its
 * raw size may not exceed its weights packed at 64-byte alignment. A weight dtype this runtime cannot hold under
 * `features` is recorded in `report` and counted in *unsupported, and
 * decoding goes on (section_dtypes.h).
 */
kiln_status kiln_weights_decode(const uint8_t *data, size_t size, uint64_t data_size, bool data_compressed,
                                const kiln_limits *limits, uint64_t features, kiln_model *m,
                                struct kiln_report *report, uint32_t *unsupported, kiln_error *err);

/* Point every weight at its bytes inside the raw weight data `data` (WDAT). */
void kiln_model_bind_weights(kiln_model *m, const uint8_t *data);

#endif
