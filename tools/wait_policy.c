/*
 * wait_policy.c — the kiln tool runs programs with OpenMP's passive wait
 * policy unless the environment chooses one (spec/opset.md, "Threads").
 *
 * Why: kiln's threads are libgomp's, whose idle threads by default spin
 * before they sleep (GOMP_SPINCOUNT 300000 pause instructions: several
 * milliseconds on current x86 cores). When other processes hold the
 * cores, a spinning thread takes the CPU its partner needs at every
 * parallel region, and 2-thread runs measured 10-30x slower than 1-thread
 * ones on a busy 2-core machine. With OMP_WAIT_POLICY=passive a waiting
 * thread sleeps at once, and 2 threads measured no slower than 1.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wait_policy.h"

/* The verbs that run a program's kernels, and so may start threads. */
static const char *const running_verbs[] = {"run", "bench", "verify", "probe", "evidence", "onnx-test"};

void cli_choose_wait_policy(char **argv)
{
    if (!argv[0] || !argv[1] || getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    for (size_t i = 0; i < sizeof running_verbs / sizeof running_verbs[0]; i++) {
        if (strcmp(argv[1], running_verbs[i]) != 0)
            continue;
        if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
            return;
        execv("/proc/self/exe", argv);
        /* Not executed again (no /proc): carry on with libgomp's default. */
        unsetenv("OMP_WAIT_POLICY");
        return;
    }
}
