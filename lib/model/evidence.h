/*
 * evidence.h — known-input cases stored with a program: owned copies of
 * their tensors and rules, and the comparison of computed outputs with
 * expected ones. Their encoding is program/section_evidence.h, their
 * check against the signature evidence_check.h.
 */
#ifndef KILN_LIB_EVIDENCE_H
#define KILN_LIB_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

/* A tensor inside an evidence case: owned copy. */
typedef struct kiln_evidence_tensor {
    char *name;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    size_t byte_size;
    uint8_t *data;
} kiln_evidence_tensor;

typedef struct kiln_evidence_record {
    char *name;
    uint32_t input_count;
    kiln_evidence_tensor *inputs;
    uint32_t output_count;
    kiln_evidence_tensor *outputs;
    kiln_compare_rule *rules; /* one per output */
} kiln_evidence_record;

/* Release one evidence case's contents. */
void kiln_evidence_record_release(kiln_evidence_record *c);

/* Copy a caller's tensor into an evidence tensor named `name`. */
kiln_status kiln_evidence_tensor_copy(const char *name, const kiln_tensor *tensor, kiln_evidence_tensor *out,
                                      kiln_error *err);

/*
 * Make a record of the caller's case (copying every tensor). Only NULLs
 * are refused here; kiln_evidence_check judges the rest.
 */
kiln_status kiln_evidence_record_from_case(const kiln_evidence_case *evidence, kiln_evidence_record *out,
                                           kiln_error *err);

/* Deep-copy a case (for sealing). */
kiln_status kiln_evidence_record_copy(const kiln_evidence_record *from, kiln_evidence_record *to, kiln_error *err);

/* Compare `actual` with `expected` under `rule`, filling the figures of `result`. */
void kiln_evidence_compare(const kiln_tensor *actual, const kiln_evidence_tensor *expected,
                           const kiln_compare_rule *rule, kiln_evidence_result *result);

#endif
