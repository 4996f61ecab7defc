/* run_threads.c — the adaptive thread count of a session's runs (see run_threads.h). */
#define _GNU_SOURCE /* syscall(SYS_getdents64): reading a directory without allocating */
#include "run_threads.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The first `size - 1` bytes of a small /proc file, NUL-terminated; false if unreadable. */
static bool read_small(const char *path, char *text, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, text, size - 1);
    close(fd);
    if (got <= 0)
        return false;
    text[got] = '\0';
    return true;
}

/* Threads running or runnable on the whole machine now (the 4th field of
 * /proc/loadavg, "running/total"), this one included; -1 if unknown. */
static long machine_running(void)
{
    char text[128];
    if (!read_small("/proc/loadavg", text, sizeof text))
        return -1;
    double one, five, fifteen;
    long running, total;
    if (sscanf(text, "%lf %lf %lf %ld/%ld", &one, &five, &fifteen, &running, &total) != 5)
        return -1;
    return running;
}

/* One entry of getdents64's answer (linux_dirent64). */
struct directory_entry {
    uint64_t inode;
    int64_t next;
    unsigned short length;
    unsigned char type;
    char name[];
};

/* This process's threads in state R (running or runnable): the caller,
 * and OpenMP threads still spinning after an earlier run. The directory
 * is read with getdents64 into a buffer on the stack: a run allocates
 * nothing, and opendir would. */
static long own_running(void)
{
#ifndef SYS_getdents64
    return -1; /* not Linux: the machine is not read, runs use the session's count */
#else
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    long running = 0;
    _Alignas(8) char entries[4096];
    long got;
    while ((got = syscall(SYS_getdents64, dir, entries, sizeof entries)) > 0) {
        for (long at = 0; at < got;) {
            const struct directory_entry *entry = (const struct directory_entry *)(entries + at);
            at += entry->length;
            if (entry->length == 0)
                break;
            if (entry->name[0] < '0' || entry->name[0] > '9')
                continue;
            char path[64], text[512];
            snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", entry->name);
            if (!read_small(path, text, sizeof text))
                continue; /* the thread ended meanwhile */
            /* "tid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'. */
            const char *close_paren = strrchr(text, ')');
            if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'R')
                running++;
        }
    }
    close(dir);
    return got < 0 ? -1 : running;
#endif
}

bool kiln_run_threads_others(int32_t *others, uint32_t *cores)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    long all = machine_running();
    long own = all >= 0 ? own_running() : -1;
    if (online < 1 || all < 0 || own < 0)
        return false;
    /* The two reads are moments apart: a thread of ours counted in one
     * and not the other must not make the count negative. */
    long other = all > own ? all - own : 0;
    *others = other > INT32_MAX ? INT32_MAX : (int32_t)other;
    *cores = online > UINT32_MAX ? UINT32_MAX : (uint32_t)online;
    return true;
}

static int32_t median_of_three(int32_t a, int32_t b, int32_t c)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    /* now a <= b */
    return c <= a ? a : c >= b ? b : c;
}

uint32_t kiln_run_threads_decide(kiln_run_threads *state, uint32_t allowed, int32_t others, uint32_t cores)
{
    if (state->looks == 0)
        state->others[1] = state->others[2] = others; /* the first look stands for all three */
    state->others[state->looks % 3] = others;
    state->looks++;
    int32_t busy = median_of_three(state->others[0], state->others[1], state->others[2]);
    uint32_t free_cores = (uint32_t)busy < cores ? cores - (uint32_t)busy : 1;
    state->chosen = free_cores < allowed ? free_cores : allowed;
    return state->chosen;
}

/* Runs of any session of this process under way now (kiln_run_threads_begin/end). */
static atomic_uint active_runs;

uint32_t kiln_run_threads_begin(kiln_run_threads *state, uint32_t allowed, bool adaptive)
{
    atomic_fetch_add_explicit(&active_runs, 1, memory_order_relaxed);
    return adaptive ? kiln_run_threads_choose(state, allowed) : allowed;
}

void kiln_run_threads_end(void)
{
    atomic_fetch_sub_explicit(&active_runs, 1, memory_order_relaxed);
}

uint32_t kiln_run_threads_choose(kiln_run_threads *state, uint32_t allowed)
{
    if (allowed <= 1)
        return 1;
    uint64_t now = now_ns();
    if (state->last_look_ns && now - state->last_look_ns < KILN_RUN_THREADS_LOOK_NS && state->chosen)
        return state->chosen <= allowed ? state->chosen : allowed;
    state->last_look_ns = now;
    int32_t others;
    uint32_t cores;
    if (!kiln_run_threads_others(&others, &cores))
        return state->chosen = allowed;
    /*
     * The first look stands for three: when it sees another process
     * running, two more samples 0.5 ms apart decide by their median, so a
     * process that runs for a moment (a kernel worker, the reader of a
     * pipe) does not put a short-lived session on one thread. Measured:
     * `kiln bench` of a small program on an idle 2-core machine ran on one
     * thread in one of three runs with a single sample.
     */
    if (state->looks == 0 && others > 0) {
        int32_t samples[3] = {others, others, others};
        uint32_t ignored;
        for (int i = 1; i < 3; i++) {
            nanosleep(&(struct timespec){0, 500000}, NULL);
            if (!kiln_run_threads_others(&samples[i], &ignored))
                samples[i] = others;
        }
        others = median_of_three(samples[0], samples[1], samples[2]);
    }
    /* This process's threads are not counted by the look (its OpenMP
     * threads still spinning after the last run would make it choose one
     * thread, then two once they sleep, and so on); its other sessions'
     * runs under way are, a core each at least. */
    unsigned concurrent = atomic_load_explicit(&active_runs, memory_order_relaxed);
    if (concurrent > 1 && others < INT32_MAX - (int32_t)(concurrent - 1))
        others += (int32_t)(concurrent - 1);
    return kiln_run_threads_decide(state, allowed, others, cores);
}
