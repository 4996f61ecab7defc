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

/*
 * kiln_model_encode into a file that atomically replaces `path`, streamed:
 * the weight bytes go from where the model holds them (memory, or the
 * files kiln_builder_add_weight_file named) to the file a piece at a time.
 */
kiln_status kiln_model_save(kiln_model *m, int weight_compression_level, bool store_memory_plan, const char *path,
                            kiln_progress *progress, kiln_error *err);

#endif
