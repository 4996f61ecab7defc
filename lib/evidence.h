/*
 * evidence.h — known-input cases stored with a program: their encoding in
 * the EVID section, their validation against the signature, and the
 * comparison of computed outputs with expected ones.
 */
#ifndef KILN_LIB_EVIDENCE_H
#define KILN_LIB_EVIDENCE_H

#include "format/cursor.h"
#include "model.h"

/* Copy a caller's tensor into an evidence tensor named `name`. */
kiln_status kiln_evidence_tensor_copy(const char *name, const kiln_tensor *tensor, kiln_evidence_tensor *out,
                                      kiln_error *err);

/*
 * Make a case from public-API arguments (copying every tensor). Only
 * NULLs are refused here; kiln_evidence_check judges the rest.
 */
kiln_status kiln_evidence_case_from_arguments(const char *name, uint32_t input_count,
                                              const char *const *input_names, const kiln_tensor *const *inputs,
                                              uint32_t output_count, const char *const *output_names,
                                              const kiln_tensor *const *expected, const kiln_compare_rule *rules,
                                              kiln_evidence_case *out, kiln_error *err);

/* Deep-copy a case (for sealing). */
kiln_status kiln_evidence_case_copy(const kiln_evidence_case *from, kiln_evidence_case *to, kiln_error *err);

/* Append the EVID payload of all cases of `m` to `w`. */
void kiln_evidence_encode(const kiln_model *m, kiln_writer *w);

/* Decode an EVID payload into m->evidence. */
kiln_status kiln_evidence_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                 kiln_error *err);

/*
 * Check every case against the typed model: each declared input given
 * once by name with its dtype and rank, each expected output a declared
 * output (once) with its dtype and rank, case names unique, rules sane.
 */
kiln_status kiln_evidence_check(const kiln_model *m, kiln_error *err);

/* Compare `actual` with `expected` under `rule`, filling the figures of `result`. */
void kiln_evidence_compare(const kiln_tensor *actual, const kiln_evidence_tensor *expected,
                           const kiln_compare_rule *rule, kiln_evidence_result *result);

#endif
