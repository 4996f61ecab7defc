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

bool kiln_domain_find_counterexample(const kiln_expr_pool *pool, const kiln_dim_decl *dims,
                                     uint32_t dim_count, const uint32_t *involved,
                                     uint32_t involved_count, kiln_domain_predicate holds,
                                     void *context, int64_t *dim_values, bool *bound)
{
    uint64_t points = 1;
    bool exhaustive = true;
    uint32_t counters[KILN_DOMAIN_MAX_INVOLVED] = {0};
    if (involved_count > KILN_DOMAIN_MAX_INVOLVED)
        return false;
    for (uint32_t d = 0; d < dim_count; d++) {
        dim_values[d] = kiln_dim_first(&dims[d]);
        bound[d] = true;
    }
    for (uint32_t i = 0; i < involved_count && exhaustive; i++) {
        uint64_t size = value_count(&dims[involved[i]]);
        if (size > KILN_DOMAIN_ENUMERATION_LIMIT || points * size > KILN_DOMAIN_ENUMERATION_LIMIT)
            exhaustive = false;
        else
            points *= size;
    }
    /* Odometer over the involved dims: exhaustive ranges, or 4 samples each. */
    for (;;) {
        for (uint32_t i = 0; i < involved_count; i++) {
            const kiln_dim_decl *d = &dims[involved[i]];
            dim_values[involved[i]] = exhaustive ? kiln_dim_first(d) + (int64_t)counters[i] * d->multiple_of
                                                 : sample_value(d, counters[i]);
        }
        if (!holds(pool, dim_values, bound, context))
            return true;
        uint32_t i = 0;
        for (; i < involved_count; i++) {
            uint64_t limit = exhaustive ? value_count(&dims[involved[i]]) : 4;
            if (++counters[i] < limit)
                break;
            counters[i] = 0;
        }
        if (i == involved_count)
            return false;
    }
}
