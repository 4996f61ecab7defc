/*
 * bench_busy_machine.c — what an embedding C program gets from a session
 * with the library's defaults while other processes keep the cores busy
 * (issue 19 point 5; spec/opset.md, "Wait policy and adaptive threads").
 *
 * It starts BUSY processes that spin (as other work on a shared machine
 * does), then times runs of FILE at its dims' minimum (inputs of zeros,
 * x 0.5 for floats) in interleaved rounds: a session with the default
 * options (KILN_THREADS_ADAPTIVE) against one with the same thread count
 * fixed (KILN_THREADS_FIXED: what every session did before the adaptive
 * policy), and one fixed to 1 thread. It prints the median ms of each
 * round and the medians of the rounds.
 *
 * Usage: bench_busy_machine FILE.kiln [BUSY (default: online cores)] [RUNS per round (20)] [ROUNDS (3)]
 * Run without OMP_WAIT_POLICY in the environment (the library's default
 * waits); by hand, not in CI.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kiln/kiln.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

/* Bind every input at the dims' minimum (zeros; floats 0.5). @return false on error. */
static bool bind_inputs(const kiln_program *p, kiln_session *s, kiln_tensor **tensors)
{
    uint32_t dims = kiln_program_dim_count(p);
    int64_t values[64];
    kiln_error err;
    for (uint32_t d = 0; d < dims && d < 64; d++) {
        kiln_dim_info info;
        kiln_program_dim(p, d, &info);
        values[d] = info.min;
    }
    for (uint32_t i = 0; i < kiln_program_input_count(p); i++) {
        kiln_io_info io;
        int64_t shape[KILN_MAX_RANK];
        kiln_program_input(p, i, &io);
        if (kiln_program_input_shape_at(p, i, values, shape, &err) != KILN_OK ||
            kiln_tensor_new(io.dtype, io.rank, shape, &tensors[i], &err) != KILN_OK) {
            fprintf(stderr, "input %s: %s\n", io.name, err.message);
            return false;
        }
        if (io.dtype == KILN_F32)
            for (uint64_t e = 0; e < kiln_tensor_element_count(tensors[i]); e++)
                ((float *)kiln_tensor_data(tensors[i]))[e] = 0.5f;
        if (kiln_session_set_input(s, io.name, tensors[i], &err) != KILN_OK) {
            fprintf(stderr, "input %s: %s\n", io.name, err.message);
            return false;
        }
    }
    return true;
}

/* The median ms of `runs` runs of `s` (after 3 untimed ones); -1 on error. */
static double time_runs(kiln_session *s, int runs)
{
    double times[1000];
    kiln_error err;
    for (int r = -3; r < runs; r++) {
        double start = now_ms();
        if (kiln_session_run(s, &err) != KILN_OK) {
            fprintf(stderr, "run: %s\n", err.message);
            return -1;
        }
        if (r >= 0)
            times[r] = now_ms() - start;
    }
    return median(times, runs);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_busy_machine FILE.kiln [BUSY] [RUNS] [ROUNDS]\n");
        return 2;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int busy = argc > 2 ? atoi(argv[2]) : (int)cores;
    int runs = argc > 3 ? atoi(argv[3]) : 20;
    int rounds = argc > 4 ? atoi(argv[4]) : 3;
    if (busy < 0 || busy > 64 || runs < 1 || runs > 1000 || rounds < 1 || rounds > 50) {
        fprintf(stderr, "BUSY 0..64, RUNS 1..1000, ROUNDS 1..50\n");
        return 2;
    }
    kiln_program *p;
    kiln_error err;
    if (kiln_program_load(argv[1], NULL, &p, NULL, &err) != KILN_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err.message);
        return 1;
    }
    static const struct {
        const char *name;
        kiln_thread_policy policy;
        uint32_t threads;
    } modes[] = {{"default (adaptive)", KILN_THREADS_ADAPTIVE, 0},
                 {"fixed, every core", KILN_THREADS_FIXED, 0},
                 {"fixed, 1 thread", KILN_THREADS_FIXED, 1}};
    enum { MODES = sizeof modes / sizeof modes[0] };
    kiln_session *sessions[MODES];
    kiln_tensor *tensors[MODES][64] = {{0}};
    if (kiln_program_input_count(p) > 64)
        return 1;
    for (int m = 0; m < MODES; m++) {
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.thread_policy = modes[m].policy;
        options.threads = modes[m].threads;
        if (kiln_session_new(p, &options, &sessions[m], &err) != KILN_OK) {
            fprintf(stderr, "session: %s\n", err.message);
            return 1;
        }
        if (!bind_inputs(p, sessions[m], tensors[m]))
            return 1;
    }
    pid_t spinners[64];
    for (int i = 0; i < busy; i++) {
        spinners[i] = fork();
        if (spinners[i] == 0)
            for (volatile unsigned long n = 0;; n++)
                ;
    }
    printf("%s on %ld cores, %d busy processes, %d runs per round, %d rounds (median ms per round)\n", argv[1],
           cores, busy, runs, rounds);
    double per_mode[MODES][50];
    for (int round = 0; round < rounds; round++)
        for (int m = 0; m < MODES; m++)
            per_mode[m][round] = time_runs(sessions[m], runs);
    for (int i = 0; i < busy; i++) {
        kill(spinners[i], SIGKILL);
        waitpid(spinners[i], NULL, 0);
    }
    for (int m = 0; m < MODES; m++) {
        printf("%-20s threads %u (last run %u):", modes[m].name, kiln_session_threads(sessions[m]),
               kiln_session_run_threads(sessions[m]));
        for (int round = 0; round < rounds; round++)
            printf(" %.2f", per_mode[m][round]);
        printf("  median %.2f\n", median(per_mode[m], rounds));
    }
    for (int m = 0; m < MODES; m++) {
        kiln_session_free(sessions[m]);
        for (uint32_t i = 0; i < kiln_program_input_count(p); i++)
            kiln_tensor_free(tensors[m][i]);
    }
    kiln_program_free(p);
    return 0;
}
