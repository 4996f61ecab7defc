/* parallel.c — thread counts and chunked elementwise loops (parallel.h). */
#ifdef _OPENMP
#include <omp.h>
#endif

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parallel.h"

bool kiln_threads_spin(void)
{
    /* 0 not read yet, 1 spin, 2 passive. Threads racing here all read the
     * same environment and store the same answer. */
    static atomic_int policy;
    int known = atomic_load_explicit(&policy, memory_order_relaxed);
    if (!known) {
        const char *wait = getenv("OMP_WAIT_POLICY"), *spins = getenv("GOMP_SPINCOUNT");
        bool passive = (wait && strcasecmp(wait, "passive") == 0) || (spins && strcmp(spins, "0") == 0);
        known = passive ? 2 : 1;
        atomic_store_explicit(&policy, known, memory_order_relaxed);
    }
    return known == 1;
}

uint32_t kiln_session_thread_count(uint32_t requested)
{
#ifdef _OPENMP
    if (requested > 0)
        return requested;
    int threads = omp_get_max_threads();
    return threads > 0 ? (uint32_t)threads : 1;
#else
    (void)requested;
    return 1;
#endif
}

uint32_t kiln_call_threads(const kiln_kernel_call *call)
{
    return call->context && call->context->threads > 0 ? call->context->threads : 1;
}

int kiln_threads_enter(uint32_t threads)
{
#ifdef _OPENMP
    int previous = omp_get_max_threads();
    if ((uint32_t)previous != threads)
        omp_set_num_threads((int)threads);
    return previous;
#else
    (void)threads;
    return 1;
#endif
}

void kiln_threads_prepare(void)
{
#ifdef _OPENMP
    omp_set_num_threads(omp_get_max_threads());
#endif
}

void kiln_threads_leave(int previous)
{
#ifdef _OPENMP
    if (omp_get_max_threads() != previous)
        omp_set_num_threads(previous);
#else
    (void)previous;
#endif
}

uint64_t kiln_parallel_min_costly_elements(void)
{
    return kiln_threads_spin() ? KILN_PARALLEL_MIN_COSTLY_ELEMENTS_SPINNING : KILN_PARALLEL_MIN_COSTLY_ELEMENTS;
}

uint64_t kiln_parallel_min_multiply_adds(void)
{
    return kiln_threads_spin() ? UINT64_C(1) << 16 : UINT64_C(1) << 24;
}

void kiln_parallel_chunks(uint64_t count, uint32_t threads, kiln_chunk_fn chunk, const void *job)
{
    kiln_parallel_chunks_from(count, threads, KILN_PARALLEL_MIN_ELEMENTS, chunk, job);
}

void kiln_parallel_chunks_from(uint64_t count, uint32_t threads, uint64_t min_elements, kiln_chunk_fn chunk,
                               const void *job)
{
#ifdef _OPENMP
    if (threads > 1 && count >= min_elements && count >= 64) {
        /* Chunk size rounded up to 64 elements: threads never share a line. */
        uint64_t size = (count + threads - 1) / threads;
        size = (size + 63) / 64 * 64;
        int64_t chunks = (int64_t)((count + size - 1) / size);
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            uint64_t begin = (uint64_t)c * size;
            uint64_t end = begin + size < count ? begin + size : count;
            chunk(job, begin, end);
        }
        return;
    }
#else
    (void)threads, (void)min_elements;
#endif
    chunk(job, 0, count);
}

void kiln_parallel_team(uint32_t threads, kiln_team_fn body, const void *job)
{
#ifdef _OPENMP
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        body(job, (uint32_t)omp_get_thread_num(), (uint32_t)omp_get_num_threads());
        return;
    }
#else
    (void)threads;
#endif
    body(job, 0, 1);
}

void kiln_team_barrier(void)
{
#ifdef _OPENMP
#pragma omp barrier
#endif
}
