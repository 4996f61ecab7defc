/*
 * proof_budget.h — a bound on the work the contract checker spends
 * looking at points of the declared domain (the decision procedure's
 * grids, enumeration and the counterexample search), shared by every
 * claim of one program check. Without it a hostile artifact of a few KB
 * could make a load walk 4^24 sample points (issue 20, point 1).
 *
 * A step is one expression node evaluated: a point of the domain costs
 * the tree size of the expressions its condition evaluates, so the
 * budget bounds time whatever the size of the claim (about 3 ns a step
 * measured here; see KILN_DEFAULT_MAX_PROOF_STEPS).
 */
#ifndef KILN_LIB_PROOF_BUDGET_H
#define KILN_LIB_PROOF_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* The default of kiln_limits.max_proof_steps, also what the builder checks with. */
#define KILN_DEFAULT_MAX_PROOF_STEPS UINT64_C(100000000)

typedef struct kiln_proof_budget {
    uint64_t limit; /* steps allowed in all */
    uint64_t used;  /* steps spent so far; never above limit */
    bool exhausted; /* some search stopped because the next point would have passed the limit */
} kiln_proof_budget;

/* A fresh budget of `limit` steps. */
void kiln_proof_budget_init(kiln_proof_budget *budget, uint64_t limit);

/*
 * Spend `steps` on one more point. @return false, spending nothing and
 * marking the budget exhausted, when that would pass the limit: the
 * caller must then stop searching and not read "nothing found" as a proof.
 */
bool kiln_proof_budget_spend(kiln_proof_budget *budget, uint64_t steps);

#endif
