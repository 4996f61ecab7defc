/*
 * half_compute.h — running an op on f16/bf16 values by its f32 kernel.
 *
 * kiln stores f16 and bf16 but computes in f32 (spec/opset.md, "Half
 * precision"): an op widens its half-precision operands to f32 (exactly:
 * every f16 and bf16 is an f32), computes exactly as its f32 kernel does,
 * and rounds the result once, to nearest even, to the storage type. So an
 * op's half result is, bit for bit, round_once(f32 kernel(widened inputs)),
 * and each op of the family needs no half-specific arithmetic at all.
 */
#ifndef KILN_LIB_HALF_COMPUTE_H
#define KILN_LIB_HALF_COMPUTE_H

#include <stdbool.h>

#include "op_def.h"

/* @return true if an operand or the result of `call` is f16 or bf16. */
bool kiln_call_holds_half(const kiln_kernel_call *call);

/*
 * Run `kernel` (an f32-capable kernel) on `call` in f32: each f16/bf16
 * operand is widened into an f32 copy, other operands are passed as they
 * are; a half result is computed as f32 and narrowed once into
 * call->output, another result is written directly. The kernel runs its
 * portable reference path (fast paths stay f32-only).
 *
 * Scratch for the copies: in a session it lives in the node's state slot,
 * grown only when a run needs more than any before (so a run at a shape
 * seen before allocates nothing; kernel_context.h), and the kernel gets a
 * state slot of its own nested inside; called without a context (tests) it
 * is allocated and freed per call.
 *
 * @return the kernel's status; KILN_ERR_LIMIT if the copies' size
 *         overflows; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_run_half_in_f32(const kiln_kernel_call *call, kiln_kernel kernel, kiln_error *err);

/*
 * The first statement of a kernel entry point that computes half values in
 * f32: `KILN_HALF_IN_F32(call, this_entry_point, err);`. The nested call
 * sees only f32 values there, so it does not come back here.
 */
#define KILN_HALF_IN_F32(CALL, KERNEL, ERR)                    \
    do {                                                       \
        if (kiln_call_holds_half(CALL))                        \
            return kiln_run_half_in_f32(CALL, KERNEL, ERR);    \
    } while (0)

#endif
