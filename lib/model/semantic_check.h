/*
 * semantic_check.h — semantic checks on input values (range, finite-only,
 * categories, unit): the owned form a program holds, and enforcing one
 * before a run. Their encoding is program/section_checks.h, their
 * validation against the signature model_check.c.
 */
#ifndef KILN_LIB_SEMANTIC_CHECK_H
#define KILN_LIB_SEMANTIC_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

#include "tensor.h"

/* The semantic checks of one input (kiln_input_check, owned). */
typedef struct kiln_input_check_decl {
    uint32_t input;
    bool has_range;
    double min, max;
    bool finite_only;
    uint32_t category_count;
    int64_t *categories; /* sorted, unique */
    char *unit;          /* "" for none */
    char *description;   /* "" for none */
} kiln_input_check_decl;

void kiln_input_check_release(kiln_input_check_decl *check);

/* Read a caller's check (any struct_size from its 1.0 size up, kiln_struct_read) into `out`. */
kiln_status kiln_input_check_read(const kiln_input_check *check, kiln_input_check *out, kiln_error *err);

/* Element `index` of a caller's array of checks, whose stride is the
 * caller's struct_size (its first element's), not necessarily ours. */
const kiln_input_check *kiln_input_check_at(const kiln_input_check *checks, uint32_t index);

/* Copy a public check for input `input` into `out` (categories sorted, unique). */
kiln_status kiln_input_check_copy(uint32_t input, const kiln_input_check *from, kiln_input_check_decl *out,
                                  kiln_error *err);

/*
 * Check the values of input `input_name` against `check`. A violation names
 * the input, the first offending index, the value and the rule.
 */
kiln_status kiln_input_check_enforce(const kiln_input_check_decl *check, const char *input_name,
                                     const kiln_tensor *values, kiln_error *err);

#endif
