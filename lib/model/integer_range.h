/*
 * integer_range.h — whether an integer input value lies in a range that a
 * semantic check stores as doubles (format §7.9), decided exactly. Through
 * double, 2^53 + 1 rounds to 2^53 and passed the range 0..2^53, and every
 * i64 or u64 near a bound could land on the wrong side of it (issue 20,
 * point 9).
 */
#ifndef KILN_LIB_INTEGER_RANGE_H
#define KILN_LIB_INTEGER_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * @return true if min <= v <= max as real numbers, i.e. v >= ceil(min)
 * and v <= floor(max), computed without rounding v. Bounds beyond the
 * int64 range (infinities included) compare as the reals they are; a NaN
 * bound contains nothing, as `v >= NaN` is false in double.
 */
bool kiln_i64_in_range(int64_t v, double min, double max);

/* The same for an unsigned value (u64 values past INT64_MAX included). */
bool kiln_u64_in_range(uint64_t v, double min, double max);

#endif
