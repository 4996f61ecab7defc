/*
 * wait_policy.c — the kiln tool runs programs with OpenMP's passive wait
 * policy when other processes are using the cores, and with libgomp's
 * default (spinning) when they are idle, unless the environment chooses a
 * policy (spec/opset.md, "Threads").
 *
 * Why: kiln's threads are libgomp's, whose idle threads by default spin
 * before they sleep (GOMP_SPINCOUNT 300000 pause instructions: several
 * milliseconds on current x86 cores). When other processes hold the
 * cores, a spinning thread takes the CPU its partner needs at every
 * parallel region, and 2-thread runs measured 10-30x slower than 1-thread
 * ones on a busy 2-core machine. With OMP_WAIT_POLICY=passive a waiting
 * thread sleeps at once, and 2 threads measured no slower than 1. But on
 * an idle machine waking a sleeping thread at every parallel region costs
 * tens of microseconds: a small CNN ran 0.85 ms on 2 passive threads and
 * 0.54 ms on 2 spinning ones (0.70 ms on 1). So the tool looks at the
 * machine when it starts: when at most half the online cores have a
 * runnable process (this one included; /proc/stat's procs_running, the
 * smallest of a few samples), it keeps libgomp's default; otherwise passive.
 * The smallest: a process busy computing is runnable in every sample,
 * while one that only starts alongside (the reader of a pipe from this
 * one, `kiln bench --json | sed ...`) is runnable for a moment; with the
 * largest, half the benchmarks of such a pipeline ran passive on an idle
 * 2-core machine.
 *
 * libgomp reads the policy once, when it is loaded, before main (and
 * before an executable's .preinit_array, measured), and has no call to
 * change it later. So the verbs that run programs set the variable and
 * execute the tool again, once: the new process image loads libgomp with
 * the policy. This belongs to the tool, not to the library: a program
 * linking libkiln chooses its own policy with the same variable.
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT already set are left as they are, and
 * if the tool cannot be executed again it goes on with libgomp's default.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wait_policy.h"

/* The verbs that run a program's kernels, and so may start threads. */
static const char *const running_verbs[] = {"run", "bench", "verify", "probe", "evidence", "onnx-test"};

/* Processes runnable right now, this one included (/proc/stat); 0 if unknown. */
static long running_now(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    char line[256];
    long running = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "procs_running %ld", &running) == 1)
            break;
    fclose(f);
    return running;
}

/* Whether at most half the online cores had a runnable process in at least one of a few samples 1 ms apart. */
static bool cores_look_idle(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), least = LONG_MAX;
    for (int sample = 0; sample < 5; sample++) {
        long running = running_now();
        if (running == 0)
            return false; /* unknown: assume busy */
        least = running < least ? running : least;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return cores > 0 && least * 2 <= cores;
}

void cli_choose_wait_policy(char **argv)
{
    if (!argv[0] || !argv[1] || getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    for (size_t i = 0; i < sizeof running_verbs / sizeof running_verbs[0]; i++) {
        if (strcmp(argv[1], running_verbs[i]) != 0)
            continue;
        if (cores_look_idle() || setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
            return;
        execv("/proc/self/exe", argv);
        /* Not executed again (no /proc): carry on with libgomp's default. */
        unsetenv("OMP_WAIT_POLICY");
        return;
    }
}
