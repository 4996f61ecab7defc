/*
 * stored_guards.h — the preconditions a non-strict program stores instead
 * of proving them (spec/contract.md §4.2): checking at load that every
 * unproven precondition is stored, and evaluating them before each run.
 */
#ifndef KILN_LIB_STORED_GUARDS_H
#define KILN_LIB_STORED_GUARDS_H

#include "model.h"

/*
 * Check the stored guards of `m` (node, kind, expression ids, k, text)
 * and that every claim in `unproven` — what this runtime's shape rules
 * could not prove while checking `m` — is one of them, compared by
 * canonical expressions. Interns into m->exprs.
 * @return KILN_OK, or KILN_ERR_INVALID_PROGRAM naming the node and claim.
 */
kiln_status kiln_runtime_guards_check(kiln_model *m, const kiln_guard_list *unproven, kiln_error *err);

/*
 * Evaluate every stored guard at the bound dim values (after the input
 * guards bound them). Allocates only when a guard fails, for its message.
 * @return KILN_OK or KILN_ERR_SHAPE_GUARD:
 *   "node 2 (matmul): runtime guard: x axis 1 size k equals w axis 0 size 4;
 *    it does not hold at k=3"
 */
kiln_status kiln_runtime_guards_hold(const kiln_model *m, const int64_t *dim_values, const bool *dim_bound,
                                     kiln_error *err);

#endif
