/*
 * checked_math.h — overflow-checked size arithmetic. Every size derived from
 * untrusted input goes through these; each returns false on overflow and
 * leaves *out unspecified.
 */
#ifndef KILN_BASE_CHECKED_MATH_H
#define KILN_BASE_CHECKED_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool kiln_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

static inline bool kiln_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static inline bool kiln_add_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

static inline bool kiln_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* Round `value` up to a multiple of the power of two `alignment`. */
static inline bool kiln_align_up_u64(uint64_t value, uint64_t alignment, uint64_t *out)
{
    uint64_t bumped;
    if (!kiln_add_u64(value, alignment - 1, &bumped))
        return false;
    *out = bumped & ~(alignment - 1);
    return true;
}

#endif
