/* section_encode.h — a checked model into a complete artifact (section_encode.c). */
#ifndef KILN_LIB_SECTION_ENCODE_H
#define KILN_LIB_SECTION_ENCODE_H

#include <stdbool.h>

#include "format/container.h"
#include "model.h"

/*
 * Encode a checked model (kiln_model_infer succeeded) into a complete
 * artifact in `out`, storing the weight data zlib-compressed at
 * `weight_compression_level` (0: raw) and, when `store_memory_plan`, the
 * memory plan as section PLAN. Weight data_offset fields are computed here.
 */
kiln_status kiln_model_encode(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                              kiln_writer *out, kiln_progress *progress, kiln_error *err);

#endif
