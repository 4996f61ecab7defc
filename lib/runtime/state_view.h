/*
 * state_view.h — the result of a state op left in the state's own storage.
 *
 * state_read and state_append give the rows a state holds, the state's
 * shape with its growing axis `rows` long. Copied out packed, that is the
 * whole KV cache once per layer and token: at 512 cached rows it was 30%
 * of a decode step. Instead the op leaves its result where the rows are
 * (kernel_context.h, view_of): the value's data points into the state's
 * buffer, its elements at the strides of the state's capacity. A node
 * whose op reads strided operands (its record's strided_operands trait:
 * einsum) reads it so; for any other node, and before the value is an
 * output, the session packs it into the value's own arena slot, which the
 * memory plan reserved as for any result. Nothing else sees a view.
 */
#ifndef KILN_LIB_STATE_VIEW_H
#define KILN_LIB_STATE_VIEW_H

#include <stdint.h>

#include "kernel_context.h"
#include "tensor.h"

typedef struct kiln_value_view {
    const kiln_state_buffer *state; /* NULL: the value's data is its own, packed */
    int64_t rows;                   /* the rows it holds along the state's growing axis */
    void *slot;                     /* the value's arena slot, which packing fills */
    int64_t strides[KILN_MAX_RANK]; /* element strides of the state's storage */
} kiln_value_view;

/* Make `value` (bound to its slot, shaped as the rows) a view of `rows` rows of `state`. */
void kiln_value_view_begin(kiln_value_view *view, kiln_tensor *value, const kiln_state_buffer *state, int64_t rows);

/* If `value` is a view: copy its rows into its slot, packed, and point it there. */
void kiln_value_view_pack(kiln_value_view *view, kiln_tensor *value);

/* How many views have been packed (by every session: tests read it before and after a run). */
uint64_t kiln_state_view_packs(void);

#endif
