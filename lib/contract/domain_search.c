/* domain_search.c — counterexample search over the declared domain. */
#include "domain_search.h"

/* The candidate values of one dim in the sampled (non-exhaustive) search:
 * its first two and last two values. */
static int64_t sample_value(const kiln_dim_decl *d, uint32_t which)
{
    int64_t first = kiln_dim_first(d), last = kiln_dim_last(d), step = d->multiple_of;
    int64_t candidates[4] = {first, first + step, last - step, last};
    int64_t v = candidates[which];
    return v < first ? first : v > last ? last : v;
}

/* How many values a dim takes. */
static uint64_t value_count(const kiln_dim_decl *d)
{
    return (uint64_t)((kiln_dim_last(d) - kiln_dim_first(d)) / d->multiple_of) + 1;
}

/* How a dim's values are picked in one search. */
typedef enum pick_mode {
    PICK_ALL,     /* every value, in order */
    PICK_SAMPLES, /* the four of sample_value */
    PICK_AXIS,    /* as a kiln_grid_axis says */
} pick_mode;

static int64_t pick_value(const kiln_dim_decl *d, pick_mode mode, const kiln_grid_axis *axis, uint64_t j)
{
    switch (mode) {
    case PICK_SAMPLES: return sample_value(d, (uint32_t)j);
    case PICK_AXIS: return axis->ends ? (j ? axis->last : axis->first) : axis->first + (int64_t)j * axis->step;
    default: return kiln_dim_first(d) + (int64_t)j * d->multiple_of;
    }
}

/* How one search pays for its points (see proof_budget.h). */
typedef struct search_cost {
    kiln_proof_budget *budget;
    uint64_t per_point;
} search_cost;

/* Odometer over the involved dims; dim i takes counts[i] values picked by
 * modes[i] (and axes[i]). Stops, finding nothing, when the budget cannot
 * pay for the next point. */
static bool search(const kiln_expr_pool *pool, const kiln_dim_decl *dims, uint32_t dim_count,
                   const uint32_t *involved, uint32_t involved_count, const pick_mode *modes,
                   const kiln_grid_axis *axes, const uint64_t *counts, kiln_domain_predicate holds,
                   const void *context, search_cost cost, int64_t *dim_values, bool *bound)
{
    uint64_t counters[KILN_DOMAIN_MAX_INVOLVED] = {0};
    for (uint32_t d = 0; d < dim_count; d++) {
        dim_values[d] = kiln_dim_first(&dims[d]);
        bound[d] = true;
    }
    for (;;) {
        if (!kiln_proof_budget_spend(cost.budget, cost.per_point))
            return false;
        for (uint32_t i = 0; i < involved_count; i++)
            dim_values[involved[i]] = pick_value(&dims[involved[i]], modes[i], axes ? &axes[i] : NULL, counters[i]);
        if (!holds(pool, dim_values, bound, context))
            return true;
        uint32_t i = 0;
        for (; i < involved_count; i++) {
            if (++counters[i] < counts[i])
                break;
            counters[i] = 0;
        }
        if (i == involved_count)
            return false;
    }
}

bool kiln_domain_find_counterexample(const kiln_expr_pool *pool, const kiln_dim_decl *dims,
                                     uint32_t dim_count, const uint32_t *involved,
                                     uint32_t involved_count, kiln_domain_predicate holds,
                                     const void *context, kiln_proof_budget *budget, uint64_t point_cost,
                                     int64_t *dim_values, bool *bound)
{
    uint64_t points = 1;
    bool exhaustive = true;
    pick_mode modes[KILN_DOMAIN_MAX_INVOLVED];
    uint64_t counts[KILN_DOMAIN_MAX_INVOLVED];
    kiln_proof_budget own;
    if (involved_count > KILN_DOMAIN_MAX_INVOLVED)
        return false;
    if (!budget) {
        kiln_proof_budget_init(&own, KILN_DEFAULT_MAX_PROOF_STEPS);
        budget = &own;
    }
    for (uint32_t i = 0; i < involved_count && exhaustive; i++) {
        uint64_t size = value_count(&dims[involved[i]]);
        if (size > KILN_DOMAIN_ENUMERATION_LIMIT || points * size > KILN_DOMAIN_ENUMERATION_LIMIT)
            exhaustive = false;
        else
            points *= size;
    }
    for (uint32_t i = 0; i < involved_count; i++) {
        modes[i] = exhaustive ? PICK_ALL : PICK_SAMPLES;
        counts[i] = exhaustive ? value_count(&dims[involved[i]]) : 4;
    }
    return search(pool, dims, dim_count, involved, involved_count, modes, NULL, counts, holds, context,
                  (search_cost){budget, point_cost}, dim_values, bound);
}

bool kiln_domain_search_grid(const kiln_expr_pool *pool, const kiln_dim_decl *dims, uint32_t dim_count,
                             const uint32_t *involved, uint32_t involved_count, const kiln_grid_axis *axes,
                             kiln_domain_predicate holds, const void *context, kiln_proof_budget *budget,
                             uint64_t point_cost, int64_t *dim_values, bool *bound, bool *searched)
{
    pick_mode modes[KILN_DOMAIN_MAX_INVOLVED];
    uint64_t counts[KILN_DOMAIN_MAX_INVOLVED];
    uint64_t points = 1;
    *searched = false;
    if (involved_count > KILN_DOMAIN_MAX_INVOLVED)
        return false;
    for (uint32_t i = 0; i < involved_count; i++) {
        modes[i] = PICK_AXIS;
        counts[i] = axes[i].ends ? (axes[i].last != axes[i].first ? 2 : 1) : axes[i].count;
        if (counts[i] == 0 || __builtin_mul_overflow(points, counts[i], &points) ||
            points > KILN_DOMAIN_ENUMERATION_LIMIT)
            return false;
    }
    kiln_proof_budget own;
    if (!budget) {
        kiln_proof_budget_init(&own, KILN_DEFAULT_MAX_PROOF_STEPS);
        budget = &own;
    }
    bool found = search(pool, dims, dim_count, involved, involved_count, modes, axes, counts, holds, context,
                        (search_cost){budget, point_cost}, dim_values, bound);
    *searched = found || !budget->exhausted;
    return found;
}
