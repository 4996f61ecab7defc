/*
 * section_dtypes.h — the dtypes a program's sections hold, against what
 * this runtime holds and required feature bit 0, half precision
 * (section_dtypes.c; spec/format.md §6).
 */
#ifndef KILN_LIB_SECTION_DTYPES_H
#define KILN_LIB_SECTION_DTYPES_H

#include "format/container.h"
#include "model.h"

struct kiln_report;

/*
 * Record a dtype of input or weight `name` (`kind`: "input", "weight")
 * that this runtime cannot hold, in `report` and in *unsupported;
 * decoding goes on to find more. f16 and bf16 are held only under feature
 * bit 0 of `features`: a file that uses them without it was made for
 * runtimes that refuse them, and keeps that outcome here (required_features.h).
 */
void kiln_section_note_dtype(struct kiln_report *report, uint32_t *unsupported, uint64_t features, kiln_dtype dtype,
                             const char *kind, const char *name);

/*
 * Feature bit 0 of container `c` against the typed program `m`: a node
 * result may be half precision (a cast to f16) even when no input or
 * weight is, so it needs the bit too (recorded in `report`, node by node);
 * and a bit set for a program without half values is a writer fault (the
 * writer sets it exactly when one exists), refused so that one program
 * has one encoding. @return KILN_ERR_MALFORMED for the latter, else KILN_OK
 */
kiln_status kiln_section_check_half_feature(const kiln_container *c, const kiln_model *m,
                                            struct kiln_report *report, kiln_error *err);

#endif
