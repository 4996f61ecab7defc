/*
 * relation_guard.h — the relations a method declares across its dims
 * (spec/contract.md §1.1), checked before every run once the inputs and
 * states have bound the dims.
 */
#ifndef KILN_LIB_RELATION_GUARD_H
#define KILN_LIB_RELATION_GUARD_H

#include "model.h"

/*
 * @return KILN_OK when every relation of `m` holds at the bound dims, else
 *         KILN_ERR_SHAPE_GUARD naming the relation, the dims' values and
 *         both sides: "relation past + seq <= 2048 does not hold: past =
 *         2047, seq = 2 give 2049 > 2048". Allocates only to say why.
 */
kiln_status kiln_relations_hold(const kiln_model *m, const int64_t *dim_values, const bool *dim_bound,
                                kiln_error *err);

#endif
