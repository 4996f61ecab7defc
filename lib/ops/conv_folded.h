/*
 * conv_folded.h — a strided 1-D conv of one input channel run by oneDNN
 * as a conv of `stride` input channels and stride 1 (conv_folded.c).
 */
#ifndef KILN_LIB_CONV_FOLDED_H
#define KILN_LIB_CONV_FOLDED_H

#include <stdbool.h>
#include <stdint.h>

#include "onednn.h"
#include "op_registry.h"

/*
 * Whether an f32 conv call belongs to the folded path: one spatial axis,
 * one group, one input channel, a weight (and bias) of the program. A
 * property of the node, not of one run's extents, so that its kernel
 * state keeps one shape (kiln_conv_folded keeps the node's oneDNN
 * primitives in its own state, folded or not).
 */
bool kiln_conv_folds(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group);

/*
 * Run a call kiln_conv_folds accepts through kiln_onednn_conv: folded when
 * this run's extents allow it (stride 2 to 64, no dilation, the signal's
 * length, the kernel and both pads multiples of the stride), as it is
 * otherwise. *ran as kiln_onednn_conv's.
 * @return KILN_OK, KILN_ERR_OUT_OF_MEMORY or kiln_onednn_conv's error.
 */
kiln_status kiln_conv_folded(const kiln_kernel_call *call, const kiln_window_axes *window, bool *ran,
                             kiln_error *err);

/* Tests: calls run folded so far, in this process. */
uint64_t kiln_conv_folded_runs(void);

#endif
