/*
 * odometer.h — stepping a multi-index through a shape in C order (last
 * axis fastest), keeping element offsets into operands in step with it.
 *
 * Every kernel that walks a tensor one element (or one row) at a time
 * takes the next position from here instead of dividing a flat index by
 * each extent: a step costs one increment and, for each operand, one add,
 * except when an axis wraps. The functions are inline because they run
 * once per element or row; with `count` a constant the per-operand loops
 * unroll.
 */
#ifndef KILN_LIB_ODOMETER_H
#define KILN_LIB_ODOMETER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Step `index` (over `rank` axes of extents `shape`) to the next position
 * and each offsets[j] (j < count) by the element strides strides[j][axis]
 * of the axes that moved, so that offsets[j] stays the sum of
 * index[axis] * strides[j][axis] plus its starting value.
 * @return true, or false when the index wrapped around to all zeros (the
 * walk is complete; the offsets are back at their starting values).
 */
static inline bool kiln_odometer_next_offsets(int64_t *index, uint32_t rank, const int64_t *shape, uint32_t count,
                                              const int64_t *const *strides, int64_t *offsets)
{
    for (uint32_t axis = rank; axis-- > 0;) {
        index[axis]++;
        for (uint32_t j = 0; j < count; j++)
            offsets[j] += strides[j][axis];
        if (index[axis] < shape[axis])
            return true;
        for (uint32_t j = 0; j < count; j++)
            offsets[j] -= strides[j][axis] * shape[axis];
        index[axis] = 0;
    }
    return false;
}

/* The same with one offset, at element strides `stride`. */
static inline bool kiln_odometer_next_offset(int64_t *index, uint32_t rank, const int64_t *shape,
                                             const int64_t *stride, int64_t *offset)
{
    return kiln_odometer_next_offsets(index, rank, shape, 1, &stride, offset);
}

/* The same with the index alone. */
static inline bool kiln_odometer_next(int64_t *index, uint32_t rank, const int64_t *shape)
{
    return kiln_odometer_next_offsets(index, rank, shape, 0, NULL, NULL);
}

#endif
