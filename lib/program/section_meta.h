/* section_meta.h — the META section: program name, mode, metadata (spec/format.md §7.1). */
#ifndef KILN_LIB_SECTION_META_H
#define KILN_LIB_SECTION_META_H

#include "format/cursor.h"
#include "model.h"

/* Append the META payload of `m` to `w`. */
void kiln_meta_encode(const kiln_model *m, kiln_writer *w);

/* Decode a META payload into m->name, m->mode and m->metadata. The mode
 * is only checked to be known here; that this runtime runs it is judged
 * once every section is decoded (section_decode.c). */
kiln_status kiln_meta_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                             kiln_error *err);

#endif
