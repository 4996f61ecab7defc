/*
 * input_guard.h — the runtime side of the shape contract: checking concrete
 * inputs against the declared signature before anything runs.
 */
#ifndef KILN_LIB_GUARD_H
#define KILN_LIB_GUARD_H

#include "model.h"
#include "tensor.h"

/* Where a dim was first bound, for the "differs from" message. */
typedef struct kiln_binding_site {
    uint32_t input;
    uint32_t axis;
} kiln_binding_site;

/*
 * Check dtype, rank and every axis of `inputs` (one per declared input, in
 * order) and bind each dim to its size. Bare-dim axes are checked against
 * the dim's range and against earlier uses of the same dim; constant axes
 * must match exactly; expression axes are evaluated once all dims are bound.
 * The three arrays have one slot per dim and are caller-owned scratch, so
 * guarding allocates nothing.
 * @return KILN_OK or the first violation, with a message naming input,
 *         axis, dim, value and the allowed set.
 */
kiln_status kiln_guard_inputs(const kiln_model *m, const kiln_tensor *const *inputs,
                              int64_t *dim_values, bool *dim_bound, kiln_binding_site *sites,
                              kiln_error *err);

#endif
