/*
 * artifact_rewrite.h — writing an artifact again with one section
 * replaced: what `kiln evidence add` (EVID) and `kiln check add` (CHKS)
 * share. Every other section is copied byte for byte (its stored bytes,
 * CRC and hash unchanged), the format minor and feature bits are kept, and
 * the file is written atomically. The new file carries no signature: the
 * digest changes, so the old one no longer covers it.
 */
#ifndef KILN_LIB_ARTIFACT_REWRITE_H
#define KILN_LIB_ARTIFACT_REWRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "format/cursor.h"
#include "program.h"

/* Where the new section goes: next to the first section of type `anchor`. */
typedef struct kiln_section_place {
    uint32_t anchor;
    bool after; /* after the anchor (else before it) */
} kiln_section_place;

/*
 * Write `p`'s container to `path` with any section of `type` dropped and
 * `data` (a finished writer) stored as that section, critical or not, at
 * `place`, reporting the bytes written to `progress` (NULL: nobody; a new
 * pass, over about the file's size). @return KILN_OK, KILN_ERR_MALFORMED
 * if the container has no anchor section, or an encoding or I/O error.
 */
kiln_status kiln_artifact_rewrite_section(const kiln_program *p, uint32_t type, bool critical,
                                          const kiln_writer *data, kiln_section_place place, const char *path,
                                          const kiln_load_options *progress, kiln_error *err);

/*
 * Write the artifact of `method` to `path` with that method's section of
 * `type` (EVID or CHKS) replaced by `data`: the first method's as a section
 * of its own, stored critical or not at `place`; a further method's as its
 * part of MTHD, the section rewritten (spec/format.md §7.13). @return as
 * kiln_artifact_rewrite_section.
 */
kiln_status kiln_artifact_rewrite_method_section(const kiln_program *method, uint32_t type, bool critical,
                                                 const kiln_writer *data, kiln_section_place place, const char *path,
                                                 const kiln_load_options *progress, kiln_error *err);

#endif
