/*
 * test_writer_memory.c — writing an artifact does not hold its weights in
 * memory (issue 19, point 7). `kiln asm` of a program with one 64 MiB
 * weight read from a .npy file used to peak at 3.1x the weight (the .npy
 * read whole, the builder's copy, the weight data section and the whole
 * artifact assembled in memory); the streaming writer reads the file and
 * writes the artifact a 1 MiB piece at a time (about 9 MiB in all here,
 * whatever the weight's size). The test fails if a peak exceeds 1.5x the
 * weight plus a fixed allowance, the bound the issue asks for; a
 * regression to even one whole copy plus the base process breaks it only
 * past 1.5x, so the bound is robust on a busy CI machine: it measures
 * memory, not time.
 *
 * kiln verify of the uncompressed artifact checks the weights in the
 * mapped file and gives the pages back as it goes, so it stays under half
 * the weight plus half the allowance (56 MiB; measured 11 MiB, 29 MiB
 * under ASan; 71 MiB before the pages were given back).
 *
 * Run against the kiln of main before the streaming writer (this test
 * takes the binary as its argument), asm peaks at 199 MiB and sign at
 * 71 MiB, and both checks fail.
 *
 * The peak is the child's own: wait4's rusage of the kiln process. Linux
 * carries the RSS a child had before exec into ru_maxrss (it was a copy of
 * this process), so this process stays small: the weight file is written
 * in 1 MiB pieces, never held whole.
 *
 * Usage: test_writer_memory KILN_BINARY
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

extern char **environ;

#define MIB ((uint64_t)1 << 20)
#define WEIGHT_ROWS 4096
#define WEIGHT_COLUMNS 4096 /* f32: 64 MiB */
#define WEIGHT_BYTES ((uint64_t)WEIGHT_ROWS * WEIGHT_COLUMNS * 4)
/* The base process (the library, its dependencies, oneDNN) and, under
 * AddressSanitizer, its shadow memory and quarantine: kiln asm peaked at
 * 10 MiB in the release build, 29 MiB under ASan. */
#define ALLOWANCE (48 * MIB)
#define BOUND (WEIGHT_BYTES + WEIGHT_BYTES / 2 + ALLOWANCE)

static const char *kiln_binary;

static void work_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", harness_work_dir, name);
}

/*
 * A .npy of f32[WEIGHT_ROWS, WEIGHT_COLUMNS] written a MiB at a time; the
 * values (i mod 251, as floats) compress well, so --compress stores them
 * compressed and exercises the streamed zlib path.
 */
static void write_weight_npy(const char *name)
{
    char path[512];
    work_path(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot create %s", path);
    char header[128];
    int text = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }",
                        WEIGHT_ROWS, WEIGHT_COLUMNS);
    /* Magic, version 1.0, u16 length; the header is padded with spaces
     * and a newline so the data starts at offset 128. */
    size_t length = 128 - 10;
    unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)length, 0};
    fwrite(preamble, 1, sizeof preamble, f);
    memset(header + text, ' ', length - (size_t)text - 1);
    header[length - 1] = '\n';
    fwrite(header, 1, length, f);
    static float piece[MIB / 4];
    for (uint64_t done = 0; done < WEIGHT_BYTES / 4;) {
        for (size_t i = 0; i < MIB / 4; i++)
            piece[i] = (float)((done + i) % 251);
        fwrite(piece, 4, MIB / 4, f);
        done += MIB / 4;
    }
    if (fclose(f) != 0)
        fail_msg("cannot write %s", path);
}

/* Run `kiln ARGS...` in the scratch directory; *peak: its maximum RSS in bytes. @return its exit status. */
static int run_measured(uint64_t *peak, char *const args[])
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)(uintptr_t)kiln_binary;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", 1 /* O_WRONLY */, 0);
    char cwd[512];
    if (!getcwd(cwd, sizeof cwd) || chdir(harness_work_dir) != 0)
        fail_msg("cannot enter %s", harness_work_dir);
    pid_t pid;
    int spawned = posix_spawn(&pid, kiln_binary, &actions, NULL, argv, environ);
    if (chdir(cwd) != 0)
        fail_msg("cannot return to %s", cwd);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        fail_msg("cannot start %s: %s", kiln_binary, strerror(spawned));
    int status;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0)
        if (errno != EINTR)
            fail_msg("wait4: %s", strerror(errno));
    *peak = (uint64_t)usage.ru_maxrss * 1024; /* KiB on Linux */
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void check_peak_under(const char *what, uint64_t peak, uint64_t bound, const char *cause)
{
    print_message("%s: peak RSS %.1f MiB for a %.0f MiB weight (bound %.1f MiB)\n", what, (double)peak / MIB,
                  (double)WEIGHT_BYTES / MIB, (double)bound / MIB);
    if (peak > bound)
        fail_msg("%s peaked at %.1f MiB, over the bound of %.1f MiB for a %.0f MiB weight: %s", what,
                 (double)peak / MIB, (double)bound / MIB, (double)WEIGHT_BYTES / MIB, cause);
}

static void check_peak(const char *what, uint64_t peak)
{
    check_peak_under(what, peak, BOUND, "the writer holds the weights in memory again");
}

static int setup(void **state)
{
    (void)state;
    if (harness_init("kiln-writer-memory") != 0)
        return -1;
    write_weight_npy("w.npy");
    write_work_file("big.ktxt", "kiln 1.0\n"
                                "program \"big\"\n"
                                "dim batch in 1..4\n"
                                "input x: f32[batch, 4096]\n"
                                "weight w: f32[4096, 4096] = file \"w.npy\"\n"
                                "%y = matmul(x, w)\n"
                                "output y = %y\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    harness_cleanup();
    return 0;
}

/* The artifact holds the weight: it is at least that large, and a full verification passes. */
static void check_artifact(const char *name, bool compressed)
{
    char path[512];
    struct stat info;
    uint64_t peak;
    work_path(path, sizeof path, name);
    assert_int_equal(stat(path, &info), 0);
    if (compressed)
        assert_true((uint64_t)info.st_size < WEIGHT_BYTES / 4);
    else
        assert_true((uint64_t)info.st_size > WEIGHT_BYTES);
    assert_int_equal(run_measured(&peak, (char *[]){"verify", (char *)(uintptr_t)name, NULL}), 0);
    /* A compressed weight section is inflated into memory; a raw one is
     * checked in its mapping, whose pages are given back behind the check
     * (71 MiB before they were, 11 MiB since). */
    if (compressed)
        check_peak("kiln verify (compressed)", peak);
    else
        check_peak_under("kiln verify", peak, WEIGHT_BYTES / 2 + ALLOWANCE / 2,
                         "the checked pages of the mapped weights stay resident again");
}

static void asm_streams_the_weight(void **state)
{
    (void)state;
    uint64_t peak;
    assert_int_equal(run_measured(&peak, (char *[]){"asm", "big.ktxt", "-o", "big.kiln", NULL}), 0);
    check_peak("kiln asm", peak);
    check_artifact("big.kiln", false);
}

static void asm_compress_streams_the_weight(void **state)
{
    (void)state;
    uint64_t peak;
    assert_int_equal(run_measured(&peak, (char *[]){"asm", "big.ktxt", "-o", "big.z.kiln", "--compress", NULL}), 0);
    check_peak("kiln asm --compress", peak);
    check_artifact("big.z.kiln", true);
}

/*
 * Rewriting an artifact copies its mapped sections to the new file and
 * gives their pages back as they are written: kiln sign and kiln check
 * add stay under the bound kiln verify has (sign peaked at 1x the weight
 * plus the process before: 71 MiB here; check add at 2x).
 */
static void rewrites_do_not_hold_the_weights(void **state)
{
    (void)state;
    uint64_t peak;
    const uint64_t bound = WEIGHT_BYTES / 2 + ALLOWANCE / 2;
    assert_int_equal(run_measured(&peak, (char *[]){"asm", "big.ktxt", "-o", "plain.kiln", NULL}), 0);
    assert_int_equal(run_measured(&peak, (char *[]){"keygen", "--out", "signer", NULL}), 0);
    assert_int_equal(run_measured(&peak, (char *[]){"sign", "plain.kiln", "--key", "signer.key", "-o", "signed.kiln",
                                                    NULL}),
                     0);
    check_peak_under("kiln sign", peak, bound, "signing holds the artifact's pages again");
    assert_int_equal(run_measured(&peak, (char *[]){"check", "add", "plain.kiln", "--check", "x: range -10..10", "-o",
                                                    "checked.kiln", NULL}),
                     0);
    check_peak_under("kiln check add", peak, bound, "rewriting holds the copied sections again");
    assert_int_equal(run_measured(&peak, (char *[]){"verify", "signed.kiln", "--trust", "signer.pub", NULL}), 0);
    assert_int_equal(run_measured(&peak, (char *[]){"verify", "checked.kiln", NULL}), 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s KILN_BINARY\n", argv[0]);
        return 2;
    }
    kiln_binary = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(asm_streams_the_weight),
        cmocka_unit_test(asm_compress_streams_the_weight),
        cmocka_unit_test(rewrites_do_not_hold_the_weights),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
