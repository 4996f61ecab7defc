/*
 * sections.h — the program's section types and their encoders/decoders.
 * Byte layouts are normative in spec/format.md §7.
 */
#ifndef KILN_LIB_SECTIONS_H
#define KILN_LIB_SECTIONS_H

#include "format/container.h"
#include "model.h"

#define KILN_SECTION_META KILN_FOURCC('M', 'E', 'T', 'A') /* name, mode, metadata */
#define KILN_SECTION_OPST KILN_FOURCC('O', 'P', 'S', 'T') /* (op, version) table */
#define KILN_SECTION_DIMS KILN_FOURCC('D', 'I', 'M', 'S') /* dims + shape expressions */
#define KILN_SECTION_IOSG KILN_FOURCC('I', 'O', 'S', 'G') /* I/O signature */
#define KILN_SECTION_WTAB KILN_FOURCC('W', 'T', 'A', 'B') /* weights table */
#define KILN_SECTION_GRPH KILN_FOURCC('G', 'R', 'P', 'H') /* nodes */
#define KILN_SECTION_WDAT KILN_FOURCC('W', 'D', 'A', 'T') /* raw weight bytes */
#define KILN_SECTION_EVID KILN_FOURCC('E', 'V', 'I', 'D') /* evidence cases; ancillary, optional */
#define KILN_SECTION_CHKS KILN_FOURCC('C', 'H', 'K', 'S') /* semantic input checks; critical, optional */
/* Runtime guards of a non-strict program; critical, present exactly when
 * the program is non-strict. Format 1.1. */
#define KILN_SECTION_RGRD KILN_FOURCC('R', 'G', 'R', 'D')
/* The memory plan; ancillary, optional (kiln_save_options.store_memory_plan). Format 1.1. */
#define KILN_SECTION_PLAN KILN_FOURCC('P', 'L', 'A', 'N')

/* Every section type above is at version 1 (RGRD since format 1.1, the
 * others since 1.0). */
#define KILN_PROGRAM_SECTION_VERSION 1
/* Offsets of tensors inside WDAT are multiples of this. */
#define KILN_WEIGHT_ALIGNMENT 64

/*
 * Encode a checked model (kiln_model_infer succeeded) into a complete
 * artifact in `out`, storing the weight data zlib-compressed at
 * `weight_compression_level` (0: raw) and, when `store_memory_plan`, the
 * memory plan as section PLAN. Weight data_offset fields are computed here.
 */
kiln_status kiln_model_encode(kiln_model *m, int weight_compression_level, bool store_memory_plan,
                              kiln_writer *out, kiln_progress *progress, kiln_error *err);

/*
 * Decode the program sections of a parsed container into `m` (zeroed by
 * the caller), checking each section's bytes as `check` says first.
 * Unknown critical sections are refused; unknown ancillary ones skipped.
 * Incompatibilities (every unknown critical section, section version,
 * missing op version, unsupported dtype, the mode) are all added to
 * `report`, and the call then returns KILN_OK with the model left
 * untyped: the caller must check the report's errors. A returned error is
 * a single fatal problem that the report does not hold yet.
 * The weight data section is located and its size checked against the
 * weights table but not read: *weight_section receives its index, and
 * kiln_model_bind_weights later points the weights into its bytes.
 */
kiln_status kiln_model_decode(const kiln_container *c, const kiln_limits *limits, kiln_section_check check,
                              kiln_model *m, uint32_t *weight_section, struct kiln_report *report,
                              kiln_error *err);

/* Point every weight at its bytes inside the raw weight data `data`. */
void kiln_model_bind_weights(kiln_model *m, const uint8_t *data);

#endif
