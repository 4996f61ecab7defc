/*
 * channels_last.h — f32 data of shape [N, C, spatial...] stored in oneDNN's
 * channels-last order (for each image and position, the channels side by
 * side): telling when that order is the row-major one, converting it back
 * in place. Which values may hold such data is the plan's decision
 * (plan/layout.h); the session converts (runtime/session.c).
 */
#ifndef KILN_LIB_CHANNELS_LAST_H
#define KILN_LIB_CHANNELS_LAST_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* Whether t's channels-last order is its row-major order (one channel, or no spatial extent beyond 1). */
bool kiln_layout_is_trivial(const kiln_tensor *t);

/*
 * Reorder t's f32 data from channels-last to row-major, in place, through
 * `scratch` (at least t's byte size).
 */
void kiln_layout_to_plain(kiln_tensor *t, void *scratch);

/* Values converted by kiln_layout_to_plain in this process; tests check when a conversion happens. */
uint64_t kiln_layout_conversions(void);

#endif
