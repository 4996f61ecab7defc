/* counting_malloc.c — see counting_malloc.h. */
#include <stddef.h>
#include <stdlib.h> /* the prototypes of what this file replaces */

#include "counting_malloc.h"

#if COUNTING_ALLOCATIONS
#include <stdatomic.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
static atomic_ulong allocations;

void *malloc(size_t size)
{
    allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size)
{
    allocations++;
    return __libc_realloc(pointer, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    allocations++;
    return __libc_memalign(alignment, size);
}
#endif

unsigned long counted_allocations(void)
{
#if COUNTING_ALLOCATIONS
    return allocations;
#else
    return 0;
#endif
}
