/*
 * ops_binary_walk.h — the N-ary broadcasting walk behind the binary,
 * comparison, logical, ternary and variadic ops (ops_binary.c).
 *
 * The output is visited one row (its last axis) at a time. For each row the
 * walk hands a row kernel every operand's base pointer, the element offset
 * of the row's first element in that operand and the operand's element
 * step along the last axis (0 where it broadcasts). Row kernels are the only
 * dtype-specific code; the walk itself knows nothing of element types.
 */
#ifndef KILN_LIB_OPS_BINARY_WALK_H
#define KILN_LIB_OPS_BINARY_WALK_H

#include "broadcast.h"

/* The most operands a node may have (the builder's and loader's ceiling). */
#define KILN_WALK_MAX_OPERANDS 64

/*
 * Compute `n` output elements starting at `out`. Operand j's elements are
 * ((const T *)bases[j])[offsets[j] + k * steps[j]] for k in 0..n-1.
 */
typedef void (*kiln_row_kernel)(const void *const *bases, const int64_t *offsets, const int64_t *steps,
                                uint32_t count, void *out, int64_t n);

/*
 * Walk `out` (shape set, buffer sized) row by row, calling `row` for each.
 * `count` is at most KILN_WALK_MAX_OPERANDS, and every operand broadcasts
 * to `out` (the shape rules proved it). Uses no heap: the run path must
 * not allocate.
 */
static inline void kiln_walk_rows(const kiln_tensor *const *operands, uint32_t count, kiln_tensor *out,
                                  kiln_row_kernel row)
{
    if (out->element_count == 0)
        return;
    int64_t strides[KILN_WALK_MAX_OPERANDS][KILN_MAX_RANK];
    const void *bases[KILN_WALK_MAX_OPERANDS];
    int64_t offsets[KILN_WALK_MAX_OPERANDS];
    int64_t steps[KILN_WALK_MAX_OPERANDS];
    int64_t index[KILN_MAX_RANK] = {0};
    uint32_t rank = out->rank;
    for (uint32_t j = 0; j < count; j++) {
        kiln_broadcast_strides(operands[j], out, strides[j]);
        bases[j] = operands[j]->data;
        offsets[j] = 0;
        steps[j] = rank ? strides[j][rank - 1] : 0;
    }
    int64_t inner = rank ? out->shape[rank - 1] : 1;
    uint64_t rows = out->element_count / (uint64_t)inner;
    size_t row_bytes = (size_t)inner * kiln_dtype_size(out->dtype);
    unsigned char *out_row = out->data;
    for (uint64_t r = 0; r < rows; r++, out_row += row_bytes) {
        row(bases, offsets, steps, count, out_row, inner);
        /* Odometer over the outer axes; every operand offset follows it. */
        for (uint32_t axis = rank > 0 ? rank - 1 : 0; axis-- > 0;) {
            index[axis]++;
            for (uint32_t j = 0; j < count; j++)
                offsets[j] += strides[j][axis];
            if (index[axis] < out->shape[axis])
                break;
            for (uint32_t j = 0; j < count; j++)
                offsets[j] -= strides[j][axis] * out->shape[axis];
            index[axis] = 0;
        }
    }
}

#endif
