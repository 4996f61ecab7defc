/* section_decode.h — a parsed container's program sections into a model (section_decode.c). */
#ifndef KILN_LIB_SECTION_DECODE_H
#define KILN_LIB_SECTION_DECODE_H

#include "format/container.h"
#include "model.h"
/* kiln_model_bind_weights, the second half of decoding, is declared there. */
#include "section_weights.h"

struct kiln_report;

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
 * kiln_model_bind_weights (section_weights.h) later points the weights
 * into its bytes. A program with several methods (MTHD) gets them in
 * m->methods, each typed like the first; *methods_digest receives what the
 * program identity covers of them (section_methods.h), zero without MTHD.
 */
kiln_status kiln_model_decode(const kiln_container *c, const kiln_limits *limits, kiln_section_check check,
                              kiln_model *m, uint32_t *weight_section, uint8_t methods_digest[KILN_DIGEST_SIZE],
                              struct kiln_report *report, kiln_error *err);

#endif
