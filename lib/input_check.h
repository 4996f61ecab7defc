/*
 * input_check.h — semantic checks on input values: their encoding in the
 * CHKS section, their validation against the signature, and enforcing
 * them before a run.
 */
#ifndef KILN_LIB_INPUT_CHECK_H
#define KILN_LIB_INPUT_CHECK_H

#include "format/cursor.h"
#include "model.h"
#include "tensor.h"

void kiln_input_check_release(kiln_input_check_decl *check);

/* Copy a public check for input `input` into `out` (categories sorted, unique). */
kiln_status kiln_input_check_copy(uint32_t input, const kiln_input_check *from, kiln_input_check_decl *out,
                                  kiln_error *err);

void kiln_input_checks_encode(const kiln_model *m, kiln_writer *w);
kiln_status kiln_input_checks_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                     kiln_error *err);

/* Each check refers to an input once, in input order, and fits its dtype. */
kiln_status kiln_input_checks_validate(const kiln_model *m, kiln_error *err);

/*
 * Check the values of `inputs` (one per declared input). A violation names
 * the input, the first offending index, the value and the rule.
 */
kiln_status kiln_input_checks_enforce(const kiln_model *m, const kiln_tensor *const *inputs, kiln_error *err);

#endif
