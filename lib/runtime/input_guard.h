/*
 * input_guard.h — the runtime side of the shape contract: checking concrete
 * inputs against the declared signature before anything runs.
 */
#ifndef KILN_LIB_GUARD_H
#define KILN_LIB_GUARD_H

#include "model.h"
#include "tensor.h"

#include "kernel_context.h"

/* Where a dim was first bound, for the "differs from" message: an input's
 * axis, or (input KILN_SITE_STATE) the length of state `axis`. */
typedef struct kiln_binding_site {
    uint32_t input;
    uint32_t axis;
} kiln_binding_site;

#define KILN_SITE_STATE UINT32_MAX

/* "input 'x' axis 1" or "state 'k0' length", for messages. */
void kiln_binding_site_text(const kiln_model *m, kiln_binding_site site, char *text, size_t size);

/*
 * Bind the dims the states' lengths give (`states`: one per program
 * state, m->states' order; NULL: bind none of them, as without a
 * session), then check
 * dtype, rank and every axis of `inputs` (one per declared input, in
 * order) and bind each dim to its size. Bare-dim axes are checked against
 * the dim's range and against earlier uses of the same dim; constant axes
 * must match exactly; expression axes are evaluated once all dims are bound.
 * The three arrays have one slot per dim and are caller-owned scratch, so
 * guarding allocates nothing.
 * @return KILN_OK or the first violation, with a message naming input,
 *         axis, dim, value and the allowed set.
 */
kiln_status kiln_guard_inputs(const kiln_model *m, const kiln_state_buffer *states, const kiln_tensor *const *inputs,
                              int64_t *dim_values, bool *dim_bound, kiln_binding_site *sites,
                              kiln_error *err);

#endif
