/*
 * memory_plan.h — where each intermediate value lives in a session's arena.
 *
 * Every node result gets a 64-byte aligned slot sized for the upper bound
 * of the declared domain, so one arena allocated when a session is created
 * serves every run. (Slots are not yet shared between values whose
 * lifetimes do not overlap.)
 */
#ifndef KILN_LIB_MEMORY_PLAN_H
#define KILN_LIB_MEMORY_PLAN_H

#include "model.h"

#define KILN_ARENA_ALIGNMENT 64

/*
 * Plan the arena: offsets[n] for node n's result (offsets may be NULL to
 * get only the size) and the total size in *arena_size.
 * @return KILN_OK, or KILN_ERR_LIMIT if a value or the arena exceeds
 *         limits->max_arena_bytes or a size overflows.
 */
kiln_status kiln_plan_arena(const kiln_model *m, const kiln_limits *limits, uint64_t *offsets,
                            uint64_t *arena_size, kiln_error *err);

#endif
