/*
 * memory_plan.h — where each intermediate value lives in a session's arena.
 *
 * Every node result gets a 64-byte aligned slot sized for the upper bound
 * of the session's dims (the declared domain, or a narrowing of it), so one
 * arena allocated when a session is created serves every run. Results whose lifetimes (from the node that makes them
 * to the last node that reads them; program outputs to the end) do not
 * overlap share space: slots are placed greedily, largest first, at the
 * lowest offset free for their whole lifetime.
 */
#ifndef KILN_LIB_MEMORY_PLAN_H
#define KILN_LIB_MEMORY_PLAN_H

#include "model.h"

#define KILN_ARENA_ALIGNMENT 64

/* Above this many nodes the O(n^2) placement is skipped: every result gets
 * its own slot (the plan stays correct, only larger). */
#define KILN_PLAN_SHARING_LIMIT 16384

typedef struct kiln_arena_plan {
    uint64_t arena_bytes;         /* total size of the arena */
    uint64_t intermediate_bytes;  /* sum of all slots, as if none were shared */
} kiln_arena_plan;

/*
 * Plan the arena for the dims in `ranges` (one interval per declared dim,
 * inside its domain; NULL: the whole declared domain): offsets[n] and
 * sizes[n] (the aligned slot size) for node n's result; either array may
 * be NULL. A session plans for its own bound (a narrowing of the domain);
 * the loader for the whole domain, with no limit, to describe it.
 * @return KILN_OK, or KILN_ERR_LIMIT if a value or the arena exceeds
 *         max_arena_bytes (UINT64_MAX: no limit) or a size overflows.
 */
kiln_status kiln_plan_arena(const kiln_model *m, const kiln_interval *ranges, uint64_t max_arena_bytes,
                            uint64_t *offsets, uint64_t *sizes, kiln_arena_plan *plan, kiln_error *err);

/*
 * Check a plan read from an artifact (spec/format.md §7.11) against this
 * runtime's sizes `needed` (from kiln_plan_arena over the whole domain):
 * every slot at least as large as needed and 64-byte aligned, inside the
 * arena, and no two results whose lifetimes overlap sharing a byte. (Its
 * size is a session's concern: a session checks the arena it allocates.)
 * @return KILN_OK, or KILN_ERR_INVALID_PROGRAM saying what is wrong.
 */
kiln_status kiln_check_stored_plan(const kiln_model *m, const uint64_t *needed, const kiln_stored_plan *stored,
                                   kiln_error *err);

#endif
