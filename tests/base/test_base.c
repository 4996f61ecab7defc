/*
 * test_base.c — lib/base: checked size arithmetic at its edges, error
 * filling, status strings, progress scaling, and the debug-only internal
 * assertions (abort in a debug build, not even evaluated in others).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "checked_math.h"
#include "error.h"
#include "invariant.h"
#include "progress.h"

static void checked_math_refuses_overflow(void **state)
{
    (void)state;
    uint64_t u;
    size_t s;
    assert_true(kiln_add_u64(UINT64_MAX - 1, 1, &u));
    assert_true(u == UINT64_MAX);
    assert_false(kiln_add_u64(UINT64_MAX, 1, &u));
    assert_true(kiln_mul_u64(UINT64_MAX / 3, 3, &u));
    assert_false(kiln_mul_u64(UINT64_MAX / 3 + 1, 3, &u));
    assert_true(kiln_add_size(SIZE_MAX - 7, 7, &s));
    assert_false(kiln_add_size(SIZE_MAX - 7, 8, &s));
    assert_true(kiln_mul_size(0, SIZE_MAX, &s) && s == 0);
    assert_false(kiln_mul_size(SIZE_MAX / 2 + 1, 2, &s));
    assert_true(kiln_align_up_u64(65, 64, &u) && u == 128);
    assert_true(kiln_align_up_u64(128, 64, &u) && u == 128);
    assert_true(kiln_align_up_u64(0, 64, &u) && u == 0);
    assert_false(kiln_align_up_u64(UINT64_MAX - 10, 64, &u));
}

static kiln_status fails_with_try(kiln_error *err, int *reached)
{
    KILN_TRY(kiln_fail(err, KILN_ERR_LIMIT, "limit %s is %d", "max_nodes", 7));
    *reached = 1;
    return KILN_OK;
}

static void fail_fills_code_and_message(void **state)
{
    (void)state;
    kiln_error err;
    int reached = 0;
    assert_int_equal(fails_with_try(&err, &reached), KILN_ERR_LIMIT);
    assert_int_equal(reached, 0);
    assert_int_equal(err.code, KILN_ERR_LIMIT);
    assert_string_equal(err.message, "limit max_nodes is 7");
    /* A message longer than the buffer is cut, still terminated. */
    char long_text[2 * sizeof err.message];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    kiln_fail(&err, KILN_ERR_IO, "%s", long_text);
    assert_int_equal(strlen(err.message), sizeof err.message - 1);
    kiln_error_clear(&err);
    assert_int_equal(err.code, KILN_OK);
    assert_string_equal(err.message, "");
    /* NULL: nobody wants the message, the code still comes back. */
    assert_int_equal(kiln_fail(NULL, KILN_ERR_MALFORMED, "ignored"), KILN_ERR_MALFORMED);
    kiln_error_clear(NULL);
}

static void every_status_has_its_own_string(void **state)
{
    (void)state;
    const char *unknown = kiln_strerror((kiln_status)-1);
    assert_string_equal(unknown, "unknown error");
    /* Statuses are dense from KILN_OK; each below the first unknown one has a distinct string. */
    int count = 0;
    while (strcmp(kiln_strerror((kiln_status)count), unknown) != 0)
        count++;
    assert_true(count > (int)KILN_ERR_INPUT_CHECK);
    for (int a = 0; a < count; a++)
        for (int b = a + 1; b < count; b++)
            assert_string_not_equal(kiln_strerror((kiln_status)a), kiln_strerror((kiln_status)b));
}

typedef struct progress_seen {
    uint64_t done, total;
    int calls;
} progress_seen;

static void remember_progress(void *user, uint64_t done, uint64_t total)
{
    progress_seen *seen = user;
    seen->done = done;
    seen->total = total;
    seen->calls++;
}

static void progress_scales_to_the_shown_total(void **state)
{
    (void)state;
    progress_seen seen = {0};
    kiln_progress plain = {.fn = remember_progress, .user = &seen, .total = 200};
    kiln_progress_advance(&plain, 50);
    assert_true(seen.done == 50 && seen.total == 200 && seen.calls == 1);
    /* Two passes over 100 bytes shown as 100 bytes: halfway is 50 of 100. */
    kiln_progress twice = {.fn = remember_progress, .user = &seen, .total = 200, .shown_total = 100};
    kiln_progress_advance(&twice, 100);
    assert_true(seen.done == 50 && seen.total == 100 && seen.calls == 2);
    kiln_progress_advance(NULL, 10);
    kiln_progress silent = {.total = 10};
    kiln_progress_advance(&silent, 10);
    assert_int_equal(seen.calls, 2);
}

static int evaluations;

static int counted_false(void)
{
    evaluations++;
    return 0;
}

static void assertion_aborts_only_in_debug_builds(void **state)
{
    (void)state;
    KILN_ASSERT(1 + 1 == 2);
    assert_int_equal(counted_false(), 0); /* the condition the child asserts is false */
    evaluations = 0;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        KILN_ASSERT(counted_false());
        _exit(evaluations == 0 ? 0 : 3);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
#if defined(KILN_DEBUG_ASSERTS)
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
#else
    /* Compiled away: the condition was not even evaluated. */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checked_math_refuses_overflow),
        cmocka_unit_test(fail_fills_code_and_message),
        cmocka_unit_test(every_status_has_its_own_string),
        cmocka_unit_test(progress_scales_to_the_shown_total),
        cmocka_unit_test(assertion_aborts_only_in_debug_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
