/*
 * parallel.h — the one place kiln touches OpenMP: a session's thread
 * count, and splitting an elementwise loop into chunks run on several
 * threads.
 *
 * Without OpenMP (the compiler lacks -fopenmp) everything here runs on the
 * calling thread and kiln_default_threads() is 1.
 */
#ifndef KILN_LIB_PARALLEL_H
#define KILN_LIB_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "op_def.h"

/*
 * Elementwise loops shorter than this run on one thread: below it, waking
 * the other threads costs more than the loop. An f32 add of 32768
 * elements takes ~10 µs, but with passive waits (spec/opset.md, "Threads")
 * on a 2-core machine busy with other processes a sleeping thread took
 * tens of µs to wake, and 2-thread runs of an encoder layer (elementwise
 * ops of 131072 elements) measured 10-15% slower than 1-thread runs at
 * 32768; at 2^18 they are equal.
 */
enum { KILN_PARALLEL_MIN_ELEMENTS = 262144 };

/*
 * The same for loops costing tens of instructions an element (exp, tanh,
 * sigmoid, erf: about 0.7 ns an f32 element vectorized, far more on the
 * reference loops): 2^14 elements when OpenMP's idle threads spin (a
 * spinning thread starts in about a microsecond; 16384 sigmoids take
 * ~11 µs), 2^17 when they sleep at once. Measured at 2 threads on the zoo
 * of tests/bench/zoo (spec/opset.md, "Threads"): EfficientNet-B0, whose
 * sigmoids of 28x28 and 14x14 planes sit below 2^18, 2.32 -> 1.90 ms;
 * the same lower threshold for every elementwise op made DenseNet-121's
 * 120 relus (a few µs each) 2.4x slower, so cheap ops keep 2^18.
 */
enum { KILN_PARALLEL_MIN_COSTLY_ELEMENTS_SPINNING = 16384, KILN_PARALLEL_MIN_COSTLY_ELEMENTS = 131072 };

/* @return the elements from which a loop of costly elements splits over threads. */
uint64_t kiln_parallel_min_costly_elements(void);

/*
 * Products of fewer multiply-adds than this run on one thread (oneDNN's
 * primitives and kiln's own, vector_matrix.h) whatever the
 * session allows: waking a second thread costs more than such a product
 * saves. With passive waits (a sleeping thread, tens of microseconds to
 * wake, far more when the cores are busy) that is 2^24, a 256 x 256 x 256
 * product, about 170 µs at 100 GFLOP/s: at 2^21 the 2-thread runs of a
 * 784-512-512-10 MLP at batch 16 (products of 6.4M and 4.2M multiply-adds)
 * on a busy 2-core machine were 10% slower than 1-thread runs, at 2^24
 * equal. With spinning waits (kiln_threads_spin) 2^16: a spinning thread
 * starts in about a microsecond, and the small convs of mobile networks
 * gain from it (2 threads, the zoo of tests/bench/zoo: MobileNetV3-S 0.39
 * ms at 2^21, 0.33 at 2^18, 0.32 at 2^16; MNASNet 0.44, 0.33, 0.31;
 * MobileNetV2 0.80, 0.64, 0.60); the MLP above ran 0.093 ms at 2^21
 * against 0.125 ms at 2^24.
 */
uint64_t kiln_parallel_min_multiply_adds(void);

/*
 * Whether OpenMP's idle threads spin before they sleep (libgomp's default)
 * rather than sleep at once (OMP_WAIT_POLICY=passive, or GOMP_SPINCOUNT=0).
 * Read from the environment once, as libgomp itself does when it is
 * loaded. Waking a spinning thread costs about a microsecond, a sleeping
 * one tens of microseconds, so the work below which a product stays on
 * one thread depends on it (spec/opset.md, "Threads").
 */
bool kiln_threads_spin(void);

/* @return the threads a session asking for `requested` gets: that many,
 *         or for 0 OpenMP's default (OMP_NUM_THREADS, else the cores);
 *         always 1 without OpenMP. */
uint32_t kiln_session_thread_count(uint32_t requested);

/* @return the threads `call` may use: its context's, or 1 without one. */
uint32_t kiln_call_threads(const kiln_kernel_call *call);

/*
 * Make `threads` the calling thread's OpenMP thread count (what oneDNN
 * uses) for one run. @return the previous count, for kiln_threads_leave.
 */
int kiln_threads_enter(uint32_t threads);
void kiln_threads_leave(int previous);

/*
 * Write the calling thread's OpenMP thread count once, unchanged: libgomp
 * allocates a thread's own copy of its settings at the first write, and a
 * session's run that writes it (kiln_threads_enter, when the adaptive
 * policy picks another count than the last run's) must not allocate.
 * Called when a session is created.
 */
void kiln_threads_prepare(void);

/*
 * Written before an elementwise inner loop: the iterations are independent
 * (each writes its own element, reading that element or a broadcast value
 * of the operands; an output is never a shifted view of an input), so the
 * compiler may run them in SIMD lanes. It also lifts GCC's -O2 "very
 * cheap" cost model, which never vectorizes a loop of unknown length.
 * Results are unchanged: nothing is reassociated.
 */
#ifdef _OPENMP
#define KILN_SIMD _Pragma("omp simd")
#else
#define KILN_SIMD
#endif

/*
 * Written before a function whose loops vectorize (KILN_SIMD): the
 * function is compiled for baseline x86-64 (SSE2, 128-bit vectors), AVX2
 * and AVX-512F, and the first call binds the widest copy the CPU runs
 * (GCC's target_clones, an ifunc). Why: kiln is built for baseline
 * x86-64, so that one build runs on every x86-64 CPU, and SSE2 halves
 * what a loop of memory-bound arithmetic does per instruction (DenseNet-121's
 * batch_norm passes on SSE2: 0.31 ns an element). Every copy computes
 * the same IEEE operations in the same order (C11 mode: no multiply and
 * add is contracted into an FMA; the AVX2 copy has no FMA either), so
 * the results are the same bits on every CPU. Elsewhere (clang, other
 * architectures) the function is compiled once.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define KILN_VECTOR_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#endif
#endif
#ifndef KILN_VECTOR_CLONES
#define KILN_VECTOR_CLONES
#endif

/* Computes elements [begin, end) of some elementwise loop described by `job`. */
typedef void (*kiln_chunk_fn)(const void *job, uint64_t begin, uint64_t end);

/*
 * Run chunk(job, begin, end) over [0, count) split into one contiguous
 * chunk per thread (boundaries at multiples of 64 elements, so no two
 * threads write one cache line of f32 or wider), or as one chunk on the
 * calling thread when `threads` is 1 or `count` is below
 * KILN_PARALLEL_MIN_ELEMENTS.
 */
void kiln_parallel_chunks(uint64_t count, uint32_t threads, kiln_chunk_fn chunk, const void *job);

/* kiln_parallel_chunks, splitting from `min_elements` elements on. */
void kiln_parallel_chunks_from(uint64_t count, uint32_t threads, uint64_t min_elements, kiln_chunk_fn chunk,
                               const void *job);

/* One member of a team: `index` of `count` (count >= 1). */
typedef void (*kiln_team_fn)(const void *job, uint32_t index, uint32_t count);

/*
 * Run body(job, i, count) on a team of up to `threads` threads, i = 0 ..
 * count - 1 (count may be fewer than asked: OpenMP's limits; 1 without
 * OpenMP), for work whose members meet at kiln_team_barrier: each step
 * of a recurrence, say, split between them.
 */
void kiln_parallel_team(uint32_t threads, kiln_team_fn body, const void *job);

/* Inside a kiln_parallel_team body: wait until every member of the team has reached it. */
void kiln_team_barrier(void);

#endif
