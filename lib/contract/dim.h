/*
 * dim.h — a declared dim (a name over a bounded range, optionally only its
 * multiples) and a derived dim (a name for an expression over dims):
 * the domain every precondition is proved over (spec/contract.md §1).
 */
#ifndef KILN_LIB_DIM_H
#define KILN_LIB_DIM_H

#include <stdint.h>

/* A dim takes the values min..max that are multiples of multiple_of (1: all). */
typedef struct kiln_dim_decl {
    char *name;
    int64_t min;
    int64_t max;
    int64_t multiple_of;
} kiln_dim_decl;

/*
 * The smallest and largest values of a dim (valid once the model is
 * checked: some multiple lies in min..max, so the first is at most max
 * and cannot overflow; before that, check kiln_dim_last(d) >= min).
 */
static inline int64_t kiln_dim_first(const kiln_dim_decl *d)
{
    int64_t r = d->min % d->multiple_of;
    return r == 0 ? d->min : d->min + (d->multiple_of - r);
}

static inline int64_t kiln_dim_last(const kiln_dim_decl *d)
{
    return d->max - d->max % d->multiple_of;
}

/* A name for an expression over dims ("dim two_seq = 2*seq"); shapes may
 * use the name, which stands for the expression. */
typedef struct kiln_derived_dim {
    char *name;
    uint32_t expr;
} kiln_derived_dim;

/*
 * A relation a program declares across its dims, lhs <= rhs (expression
 * ids; "past + seq <= 2048"): checked before every run, and a hypothesis
 * the prover may use (spec/contract.md §1.1). It narrows the domain the
 * runtime accepts, never the one the memory plan is sized for.
 */
typedef struct kiln_dim_relation {
    uint32_t lhs;
    uint32_t rhs;
} kiln_dim_relation;

#endif
