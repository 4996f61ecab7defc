/*
 * linear_rows.h — the arithmetic of resize's linear fast path (resize.c,
 * spec/ops/resize.md "Fast path"): one output row of a 2-D linear
 * interpolation from two input rows, block by block.
 *
 * Linear: each output row reads two input rows (top, bottom; one when the
 * row's second weight is 0) at two columns per output column (one when
 * the column's second weight is 0). The sum of each element is the
 * reference's: from 0, in the order (top, first column), (top, second),
 * (bottom, first), (bottom, second), each product (row weight x column
 * weight) x element in double, a tap of weight 0 left out, rounded once.
 *
 * A block of at most KILN_LINEAR_BLOCK output columns is done in two passes:
 * the four elements of each column are first copied side by side
 * (gathered through the column table), then the sums run over those
 * arrays, which vectorize. The gathered elements of the last two input
 * rows are kept for the next output row, which mostly reads one or both
 * of them again (an upsampling by 2 reads each input row four times).
 * Measured 1x64x32x32 -> 64x64 half_pixel, 1 thread, min of
 * 300 runs: one pass reading through the table, 0.47 ms (GCC does not
 * vectorize it), 0.56 ms with AVX-512 gathers; the two passes, 0.34 ms
 * gathering both rows of every output row, 0.23 ms keeping gathered rows.
 */
#ifndef KILN_LIB_LINEAR_ROWS_H
#define KILN_LIB_LINEAR_ROWS_H

#include <stdbool.h>
#include <stdint.h>

/* Output columns per block. */
enum { KILN_LINEAR_BLOCK = 256 };

/* One input row's elements at a block's columns: at the first and at the second tap of each. */
typedef struct kiln_gathered_row {
    float first[KILN_LINEAR_BLOCK], second[KILN_LINEAR_BLOCK];
    const float *row;   /* the input row, NULL: none yet */
    int64_t begin, end; /* the block's columns */
} kiln_gathered_row;

/* One block of one output row: the two input rows gathered, and the weights. */
typedef struct kiln_linear_block {
    kiln_gathered_row slots[2];             /* kept for the next row, which often reads one of them again */
    const kiln_gathered_row *top, *bottom;  /* the slots this block reads */
    double wy0, wy1;         /* the row's weights; wy1 0: the bottom row is not read */
    const double *wx0, *wx1; /* the columns' weights at the block's first column; wx1 0: one tap */
    float *out;              /* at the block's first column */
} kiln_linear_block;

/* Forget every gathered row (a block starts so). */
void kiln_linear_block_reset(kiln_linear_block *b);

/*
 * The slot holding input row `row` at columns [begin, end) (at most
 * KILN_LINEAR_BLOCK), its elements at the columns' taps x0 and x1:
 * found, or gathered into a slot other than `keep`.
 */
const kiln_gathered_row *kiln_linear_gather(kiln_linear_block *b, const kiln_gathered_row *keep, const float *row,
                                            const int64_t *x0, const int64_t *x1, int64_t begin, int64_t end);

/* out[0 .. n) of the block: the sums above, in the widest copy this CPU runs (AVX-512F, AVX2, plain C). */
void kiln_linear_sums(const kiln_linear_block *b, int64_t n);

/*
 * Tests only: run no copy wider than `bits` (512, 256 or 128) from now on
 * in this process. Not thread-safe; 512 restores the default.
 */
void kiln_linear_rows_limit_width(unsigned bits);

#endif
