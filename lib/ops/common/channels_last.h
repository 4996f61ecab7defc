/*
 * channels_last.h — f32 data of shape [N, C, spatial...] stored in oneDNN's
 * channels-last order (for each image and position, the channels side by
 * side): telling when that order is the row-major one, converting it back
 * in place, and the kernel's side of the protocol. Which values may hold
 * such data is the plan's decision (plan/layout.h).
 */
#ifndef KILN_LIB_CHANNELS_LAST_H
#define KILN_LIB_CHANNELS_LAST_H

#include <stdbool.h>
#include <stdint.h>

#include "op_registry.h"
#include "tensor.h"

/* Whether t's channels-last order is its row-major order (one channel, or no spatial extent beyond 1). */
bool kiln_layout_is_trivial(const kiln_tensor *t);

/*
 * Reorder t's f32 data from channels-last to row-major, in place, through
 * `scratch` (at least t's byte size).
 */
void kiln_layout_to_plain(kiln_tensor *t, void *scratch);

/*
 * Called by a kernel that reads operand 0 in either layout, before a path
 * that reads it row-major only (a reference kernel): when an operand is
 * channels-last it asks the session to convert its operands and call it
 * again, and returns true; the kernel then returns KILN_OK at once.
 */
bool kiln_layout_needs_plain(const kiln_kernel_call *call);

/* Values converted by kiln_layout_to_plain in this process; tests check when a conversion happens. */
uint64_t kiln_layout_conversions(void);

#endif
