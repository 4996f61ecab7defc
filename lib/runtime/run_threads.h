/*
 * run_threads.h — how many threads a session's next run uses under
 * KILN_THREADS_ADAPTIVE (spec/opset.md, "Threads"): no more than the cores
 * other processes leave free, so OpenMP's spinning threads never wait on a
 * core another process holds.
 *
 * Why in the library: libgomp's idle threads spin before they sleep, and it
 * reads that policy once, when it is loaded, with no call to change it. On
 * a 2-core machine busy with other work, 2-thread runs measured 10-30x
 * slower than 1-thread ones (an encoder layer: 3.6 ms on one thread, 65 ms
 * on two; ResNet-18 from C 220-340 ms against 33-45 ms). What a session can
 * choose is its thread count: a run on one thread starts no OpenMP team, so
 * nothing spins, and on a busy machine it measured as fast as two threads
 * with passive waits.
 */
#ifndef KILN_LIB_RUN_THREADS_H
#define KILN_LIB_RUN_THREADS_H

#include <stdbool.h>
#include <stdint.h>

/* Looks at the machine are this far apart at least: reading /proc costs
 * tens of microseconds, a run may take less. */
#define KILN_RUN_THREADS_LOOK_NS ((uint64_t)50 * 1000 * 1000)

/* The last looks a session took at the machine, and what it decided. */
typedef struct kiln_run_threads {
    uint64_t last_look_ns; /* CLOCK_MONOTONIC of the last look; 0: none yet */
    int32_t others[3];     /* running threads of other processes at the last three looks; -1 unknown */
    uint32_t looks;        /* looks taken (the ring's fill) */
    uint32_t chosen;       /* the thread count decided at the last look */
} kiln_run_threads;

/**
 * The threads the next run may use: `allowed` (the session's count) when
 * the cores are idle, fewer when other processes hold some (the median of
 * the last three looks' count of other processes' running threads, so a
 * process that runs for a moment does not count; the first look, when it
 * sees another process, is the median of three samples 0.5 ms apart),
 * never fewer than 1.
 * Looks again only when KILN_RUN_THREADS_LOOK_NS has passed since the last
 * look; where the machine cannot be read (no /proc), `allowed`.
 * @return 1..allowed.
 */
uint32_t kiln_run_threads_choose(kiln_run_threads *state, uint32_t allowed);

/**
 * A run starts: counted among this process's runs under way until
 * kiln_run_threads_end (fixed or adaptive: each holds a core), and, when
 * `adaptive`, its threads chosen by kiln_run_threads_choose. Each other
 * session running meanwhile in this process counts as another process's
 * thread, since the look itself leaves this process out.
 * @return 1..allowed (`allowed` when not adaptive).
 */
uint32_t kiln_run_threads_begin(kiln_run_threads *state, uint32_t allowed, bool adaptive);

/** The run kiln_run_threads_begin counted has ended. */
void kiln_run_threads_end(void);

/**
 * The decision of kiln_run_threads_choose from one look (`others` running
 * threads of other processes on `cores` cores), recorded in `state`: the
 * median of the last three looks leaves min(allowed, free cores), at least 1.
 * @return 1..allowed.
 */
uint32_t kiln_run_threads_decide(kiln_run_threads *state, uint32_t allowed, int32_t others, uint32_t cores);

/**
 * The threads of processes other than this one that are running now, on
 * `cores` online cores (Linux: /proc/loadavg's running count minus this
 * process's threads in state R).
 * @return false when the machine cannot be read.
 */
bool kiln_run_threads_others(int32_t *others, uint32_t *cores);

#endif
