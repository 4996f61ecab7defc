/* section_methods.h — the MTHD section: a program's further entry points (spec/format.md §7.13; format 1.3). */
#ifndef KILN_LIB_SECTION_METHODS_H
#define KILN_LIB_SECTION_METHODS_H

#include "format/container.h"
#include "format/cursor.h"
#include "model.h"

struct kiln_report;

/*
 * Append the MTHD payload of `m` (m->method_count >= 1) to `w`: the method
 * count, the first method's name, then each further method's name and its
 * parts, each encoded as the section of that type would be.
 */
kiln_status kiln_methods_encode(const kiln_model *m, bool store_memory_plan, kiln_writer *w, kiln_error *err);

/*
 * Decode an MTHD payload into m->method_name and m->methods; the root's
 * META, OPST, WTAB (and its other sections) are decoded first, since each
 * method borrows its name, metadata, opset and weights. A method's parts
 * are decoded by the decoders of their section types, in the order the
 * root's are; a failure names the method. An input dtype this runtime cannot
 * hold is recorded in `report` and counted in *unsupported, as for IOSG.
 * `contract_digest` receives the BLAKE2b-256 of what the program identity
 * covers of the methods: their names and their DIMS, IOSG, CHKS, RGRD and
 * GRPH parts (spec/format.md §14).
 */
kiln_status kiln_methods_decode(const uint8_t *data, size_t size, const kiln_limits *limits, uint64_t features,
                                kiln_model *m, struct kiln_report *report, uint32_t *unsupported,
                                uint8_t contract_digest[KILN_DIGEST_SIZE], kiln_error *err);

/*
 * A copy of the MTHD payload `data` (one a reader accepted) into `out`,
 * with the part of section type `type` of method `method` (a further
 * method: not the first) replaced by `part` (NULL: removed), inserted at
 * its place if the method had none; every other byte copied as it was.
 * The evidence and check editors rewrite a method's EVID and CHKS so.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT when there is no such method
 *         or a method has no part of that type; decoding errors as above.
 */
kiln_status kiln_methods_replace_part(const uint8_t *data, size_t size, const char *method, uint32_t type,
                                      const kiln_writer *part, kiln_writer *out, kiln_error *err);

#endif
