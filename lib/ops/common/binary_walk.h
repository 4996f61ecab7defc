/*
 * binary_walk.h — the one broadcasting walk of kiln's elementwise ops with
 * more than one operand: add, sub, mul, div (arithmetic.c, with the
 * vectorized rows of elementwise.h) and the binary, comparison, logical,
 * ternary and variadic ops (binary.c).
 *
 * The output is visited one row (its last axis) at a time, or a range of
 * it per thread when it is large (any element range: a range may start or
 * end inside a row). For each row the
 * walk hands a row kernel every operand's base pointer, the element offset
 * of the row's first element in that operand and the operand's element
 * step along the last axis (0 where it broadcasts). Row kernels are the only
 * dtype-specific code; the walk itself knows nothing of element types.
 */
#ifndef KILN_LIB_OPS_BINARY_WALK_H
#define KILN_LIB_OPS_BINARY_WALK_H

#include "broadcast.h"
#include "odometer.h"
#include "parallel.h"

/* The most operands a node may have (the builder's and loader's ceiling). */
#define KILN_WALK_MAX_OPERANDS 64

/*
 * Compute `n` output elements starting at `out`. Operand j's elements are
 * ((const T *)bases[j])[offsets[j] + k * steps[j]] for k in 0..n-1.
 */
typedef void (*kiln_row_kernel)(const void *const *bases, const int64_t *offsets, const int64_t *steps,
                                uint32_t count, void *out, int64_t n);

/*
 * Merge the adjacent axes of `shape` (rank >= 1) that every operand steps
 * through as one: operand j's stride along the outer axis equals its
 * stride along the inner one times the inner size (it is contiguous across
 * both, or broadcast along both). Axes of size 1 are dropped. Writes the
 * merged shape and each operand's strides over it in place of `strides`;
 * @return the merged rank (>= 1). The output is row-major, so its elements
 * keep their order: only the rows get longer and fewer. Why: a
 * per-channel operand times an NCHW tensor ([N, C, 1, 1] * [N, C, H, W],
 * a squeeze-excite block's scale) walked rows of W elements, 7 to 112 in
 * the CNNs of the zoo, with the odometer's work per row; merged they are
 * rows of H*W with a scalar factor, and same-shape operands one row.
 */
static inline __attribute__((always_inline)) uint32_t kiln_walk_merge_axes(uint32_t rank, const int64_t *shape,
                                                                           uint32_t count,
                                                                           int64_t (*strides)[KILN_MAX_RANK],
                                                                           int64_t *merged)
{
    uint32_t m = 0;
    for (uint32_t axis = 0; axis < rank; axis++) {
        if (shape[axis] == 1)
            continue;
        bool joins = m > 0;
        for (uint32_t j = 0; j < count && joins; j++)
            joins = strides[j][m - 1] == strides[j][axis] * shape[axis];
        if (joins) {
            merged[m - 1] *= shape[axis];
            for (uint32_t j = 0; j < count; j++)
                strides[j][m - 1] = strides[j][axis];
            continue;
        }
        merged[m] = shape[axis];
        for (uint32_t j = 0; j < count; j++)
            strides[j][m] = strides[j][axis];
        m++;
    }
    if (m == 0) { /* every axis of size 1: one element */
        merged[0] = 1;
        for (uint32_t j = 0; j < count; j++)
            strides[j][0] = 0;
        m = 1;
    }
    return m;
}

/*
 * Walk output elements [begin, end) of `out` (shape set, buffer sized) row
 * by row, calling `row` for each row or part of a row. `count` is at most
 * KILN_WALK_MAX_OPERANDS, and every operand broadcasts to `out` (the shape
 * rules proved it). Uses no heap: the run path must not allocate.
 *
 * Always inlined, so that kiln_walk_chunk's two-operand call is compiled
 * for exactly two operands (see there).
 */
static inline __attribute__((always_inline)) void kiln_walk_range(const kiln_tensor *const *operands, uint32_t count,
                                                                  kiln_tensor *out, kiln_row_kernel row,
                                                                  uint64_t begin, uint64_t end)
{
    int64_t strides[KILN_WALK_MAX_OPERANDS][KILN_MAX_RANK];
    const int64_t *stride_rows[KILN_WALK_MAX_OPERANDS];
    const void *bases[KILN_WALK_MAX_OPERANDS];
    int64_t offsets[KILN_WALK_MAX_OPERANDS];
    int64_t starts[KILN_WALK_MAX_OPERANDS];
    int64_t steps[KILN_WALK_MAX_OPERANDS];
    int64_t index[KILN_MAX_RANK] = {0};
    int64_t shape[KILN_MAX_RANK];
    for (uint32_t j = 0; j < count; j++)
        kiln_broadcast_strides(operands[j], out, strides[j]);
    uint32_t rank = out->rank ? kiln_walk_merge_axes(out->rank, out->shape, count, strides, shape) : 0;
    uint32_t outer_rank = rank > 0 ? rank - 1 : 0;
    uint64_t inner = rank ? (uint64_t)shape[rank - 1] : 1;
    uint64_t first_row = begin / inner, from = begin % inner;
    for (uint32_t j = 0; j < count; j++) {
        stride_rows[j] = strides[j];
        bases[j] = operands[j]->data;
        offsets[j] = 0;
        steps[j] = rank ? strides[j][rank - 1] : 0;
    }
    /* The odometer at the first row: mixed radix over the outer axes. */
    uint64_t rest = first_row;
    for (uint32_t axis = outer_rank; axis-- > 0;) {
        index[axis] = (int64_t)(rest % (uint64_t)shape[axis]);
        rest /= (uint64_t)shape[axis];
        for (uint32_t j = 0; j < count; j++)
            offsets[j] += index[axis] * strides[j][axis];
    }
    size_t width = kiln_dtype_size(out->dtype);
    unsigned char *out_row = (unsigned char *)out->data + first_row * inner * width;
    for (uint64_t done = begin; done < end; out_row += inner * width) {
        uint64_t n = end - done < inner - from ? end - done : inner - from;
        for (uint32_t j = 0; j < count; j++)
            starts[j] = offsets[j] + (int64_t)from * steps[j];
        row(bases, starts, steps, count, out_row + from * width, (int64_t)n);
        done += n;
        from = 0;
        /* Every operand offset follows the odometer over the outer axes. */
        kiln_odometer_next_offsets(index, outer_rank, shape, count, stride_rows, offsets);
    }
}

/* One walk over a range of output elements, for kiln_parallel_chunks. */
typedef struct kiln_walk_job {
    const kiln_tensor *const *operands;
    uint32_t count;
    kiln_tensor *out;
    kiln_row_kernel row;
} kiln_walk_job;

static inline void kiln_walk_chunk(const void *vjob, uint64_t begin, uint64_t end)
{
    const kiln_walk_job *job = vjob;
    /* Two operands (add, mul, eq, ...) get a copy of the walk compiled for
     * exactly two: its per-operand loops unroll, which is most of the
     * per-row cost when rows are short (an NCHW tensor plus a per-channel
     * one walks rows of W elements). */
    if (job->count == 2)
        kiln_walk_range(job->operands, 2, job->out, job->row, begin, end);
    else
        kiln_walk_range(job->operands, job->count, job->out, job->row, begin, end);
}

/* Walk all of `out`, on up to `threads` threads when it is large (parallel.h). */
static inline void kiln_walk_rows(const kiln_tensor *const *operands, uint32_t count, kiln_tensor *out,
                                  kiln_row_kernel row, uint32_t threads)
{
    if (out->element_count == 0)
        return;
    kiln_walk_job job = {operands, count, out, row};
    kiln_parallel_chunks(out->element_count, threads, kiln_walk_chunk, &job);
}

/*
 * Define `static void NAME(const void *job, uint64_t begin, uint64_t end)`:
 * kiln_walk_chunk for two operands with row kernel `ROW` compiled in, so
 * the row is inlined into the walk instead of called through a pointer
 * once per row. For the hottest ops (add, mul, ...), whose rows can be a
 * handful of elements (an NCHW tensor plus a per-channel one: rows of W).
 * Run it with kiln_walk_rows_by.
 */
#define DEFINE_WALK_CHUNK_2(NAME, ROW)                                       \
    static void NAME(const void *vjob, uint64_t begin, uint64_t end)         \
    {                                                                        \
        const kiln_walk_job *job = vjob;                                     \
        kiln_walk_range(job->operands, 2, job->out, ROW, begin, end);        \
    }

/* kiln_walk_rows with the chunk function `chunk` (from DEFINE_WALK_CHUNK_2). */
static inline void kiln_walk_rows_by(const kiln_tensor *const *operands, uint32_t count, kiln_tensor *out,
                                     kiln_chunk_fn chunk, uint32_t threads)
{
    if (out->element_count == 0)
        return;
    kiln_walk_job job = {operands, count, out, NULL};
    kiln_parallel_chunks(out->element_count, threads, chunk, &job);
}

#endif
