/* integer_range.c — exact range checks of integers against double bounds (see integer_range.h). */
#include "integer_range.h"

#include <math.h>

/* 2^63 and 2^64, exact in double: the first values past int64 and uint64. */
#define TWO_63 9223372036854775808.0
#define TWO_64 18446744073709551616.0

/* A bound is compared through its integer part on the side that matters:
 * v >= min iff v >= ceil(min), v <= max iff v <= floor(max), for integer v.
 * Once in range, an integer-valued double converts to int64 or uint64 exactly. */

bool kiln_i64_in_range(int64_t v, double min, double max)
{
    if (isnan(min) || isnan(max))
        return false;
    double lo = ceil(min), hi = floor(max);
    bool above_min = lo < -TWO_63 || (lo < TWO_63 && v >= (int64_t)lo); /* -2^63 itself converts exactly */
    bool below_max = hi >= TWO_63 || (hi >= -TWO_63 && v <= (int64_t)hi);
    return above_min && below_max;
}

bool kiln_u64_in_range(uint64_t v, double min, double max)
{
    if (isnan(min) || isnan(max))
        return false;
    double lo = ceil(min), hi = floor(max);
    bool above_min = lo <= 0 || (lo < TWO_64 && v >= (uint64_t)lo);
    bool below_max = hi >= TWO_64 || (hi >= 0 && v <= (uint64_t)hi);
    return above_min && below_max;
}
