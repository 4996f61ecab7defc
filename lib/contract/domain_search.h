/*
 * domain_search.h — looking for a point of the declared domain where a
 * condition over shape expressions fails: the counterexample a refused
 * program is reported with.
 */
#ifndef KILN_LIB_DOMAIN_SEARCH_H
#define KILN_LIB_DOMAIN_SEARCH_H

#include "dim.h"
#include "proof_budget.h"
#include "shape_expr.h"

/* Exhaustive search is used when the dims involved span at most this many points. */
#define KILN_DOMAIN_ENUMERATION_LIMIT 100000

/* At most this many dims can be searched at once; with more, nothing is
 * searched and no counterexample is reported, so callers must not read
 * "not found" as a proof. */
#define KILN_DOMAIN_MAX_INVOLVED (KILN_MAX_RANK * 2 + 8)

/* @return true if the condition holds at the point `dim_values`. */
typedef bool (*kiln_domain_predicate)(const kiln_expr_pool *pool, const int64_t *dim_values,
                                      const bool *bound, const void *context);

/*
 * Search the dims in `involved` (dim indices) for a point where `holds` is
 * false: every point when the product of their range sizes is at most
 * KILN_DOMAIN_ENUMERATION_LIMIT, else every combination of {min, min+1,
 * max-1, max}. Dims not involved stay at their minimum. Each point spends
 * `point_cost` steps (the tree size of what `holds` evaluates) of
 * `budget`; the search stops, with budget->exhausted set, at the first
 * point the budget cannot pay for. NULL budget: a fresh one of
 * KILN_DEFAULT_MAX_PROOF_STEPS.
 * @return true and the point in `dim_values` if a counterexample was found.
 */
bool kiln_domain_find_counterexample(const kiln_expr_pool *pool, const kiln_dim_decl *dims,
                                     uint32_t dim_count, const uint32_t *involved,
                                     uint32_t involved_count, kiln_domain_predicate holds,
                                     const void *context, kiln_proof_budget *budget, uint64_t point_cost,
                                     int64_t *dim_values, bool *bound);

/* The values one dim takes in a grid search: `count` values first,
 * first + step, ...; or, when `ends`, just `first` and `last`. */
typedef struct kiln_grid_axis {
    int64_t first, step, last;
    uint64_t count;
    bool ends;
} kiln_grid_axis;

/*
 * Search the grid where dim involved[i] takes the values axes[i] gives
 * (the caller keeps them inside the dim's declared values). Nothing is
 * searched, and *searched is false, when the grid has more than
 * KILN_DOMAIN_ENUMERATION_LIMIT points. The decision procedure of
 * size_claim.c picks grids on which a claim holds exactly when it holds
 * over the whole domain. Points are paid for as in
 * kiln_domain_find_counterexample; when the budget runs out *searched is
 * false too.
 * @return true and the point in `dim_values` if a counterexample was found.
 */
bool kiln_domain_search_grid(const kiln_expr_pool *pool, const kiln_dim_decl *dims, uint32_t dim_count,
                             const uint32_t *involved, uint32_t involved_count, const kiln_grid_axis *axes,
                             kiln_domain_predicate holds, const void *context, kiln_proof_budget *budget,
                             uint64_t point_cost, int64_t *dim_values, bool *bound, bool *searched);

#endif
