/*
 * counting_malloc.h — counting the calls to the malloc family, so that a
 * test can show that session runs allocate nothing. Linked in
 * (counting_malloc_dep), counting_malloc.c replaces the executable's
 * malloc, calloc, realloc and aligned_alloc with glibc's own, counted.
 * Sanitizer builds replace malloc themselves: there nothing is counted
 * (COUNTING_ALLOCATIONS is 0) and the tests skip.
 */
#ifndef KILN_TEST_COUNTING_MALLOC_H
#define KILN_TEST_COUNTING_MALLOC_H

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTING_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COUNTING_ALLOCATIONS 0
#endif
#endif
#ifndef COUNTING_ALLOCATIONS
#define COUNTING_ALLOCATIONS 1
#endif

/* Calls to the malloc family so far, on every thread. */
unsigned long counted_allocations(void);

#endif
