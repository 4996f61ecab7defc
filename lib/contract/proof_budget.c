/* proof_budget.c — the contract checker's work budget (see proof_budget.h). */
#include "proof_budget.h"

void kiln_proof_budget_init(kiln_proof_budget *budget, uint64_t limit)
{
    budget->limit = limit;
    budget->used = 0;
    budget->exhausted = false;
}

bool kiln_proof_budget_spend(kiln_proof_budget *budget, uint64_t steps)
{
    if (budget->exhausted || steps > budget->limit - budget->used) {
        budget->exhausted = true;
        return false;
    }
    budget->used += steps;
    return true;
}
