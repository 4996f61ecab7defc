/*
 * test_run_threads.c — the adaptive thread count of a session's runs
 * (run_threads.h, spec/opset.md "Threads"): the decision from looks at the
 * machine (median of three, never above the session's count, never below
 * one), and a session on cores other processes keep busy running on one
 * thread by default and on its full count under KILN_THREADS_FIXED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kiln/kiln.h>

#include "program_recipe.h"

#include "run_threads.h"

static void the_median_of_three_looks_decides(void **state)
{
    (void)state;
    kiln_run_threads t = {0};
    /* Idle 2-core machine: both threads. */
    assert_int_equal(kiln_run_threads_decide(&t, 2, 0, 2), 2);
    /* One look sees another process: a moment's process does not count. */
    assert_int_equal(kiln_run_threads_decide(&t, 2, 1, 2), 2);
    /* Seen at two of three looks: it holds a core, one thread is left. */
    assert_int_equal(kiln_run_threads_decide(&t, 2, 1, 2), 1);
    /* Every core busy: still one thread, never zero. */
    assert_int_equal(kiln_run_threads_decide(&t, 2, 5, 2), 1);
    assert_int_equal(kiln_run_threads_decide(&t, 2, 5, 2), 1);
    /* Idle again for two looks: back to the session's count. */
    assert_int_equal(kiln_run_threads_decide(&t, 2, 0, 2), 1);
    assert_int_equal(kiln_run_threads_decide(&t, 2, 0, 2), 2);
    /* Never more than the session allows, whatever the cores. */
    kiln_run_threads wide = {0};
    assert_int_equal(kiln_run_threads_decide(&wide, 4, 2, 16), 4);
    assert_int_equal(kiln_run_threads_decide(&wide, 4, 13, 16), 4);
    assert_int_equal(kiln_run_threads_decide(&wide, 4, 13, 16), 3);
}

static void the_machine_can_be_read(void **state)
{
    (void)state;
    int32_t others = -1;
    uint32_t cores = 0;
    if (!kiln_run_threads_others(&others, &cores))
        skip(); /* no /proc */
    assert_true(others >= 0);
    assert_true(cores >= 1);
}

/* y = x + x on f32[n]: large enough that a run uses threads if it may. */
static kiln_program *small_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("double", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[4]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, x}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    return recipe_seal(b);
}

static uint32_t threads_of_a_run(const kiln_program *p, kiln_thread_policy policy)
{
    kiln_session_options options;
    kiln_session *s;
    kiln_tensor *x;
    kiln_error err;
    kiln_session_options_default(&options);
    options.threads = 2;
    options.thread_policy = policy;
    assert_int_equal(kiln_session_new(p, &options, &s, &err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, (int64_t[]){4}, &x, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    uint32_t used = kiln_session_run_threads(s);
    assert_int_equal(kiln_session_threads(s), 2);
    kiln_tensor_free(x);
    kiln_session_free(s);
    return used;
}

static void busy_cores_leave_one_thread(void **state)
{
    (void)state;
    int32_t others;
    uint32_t cores;
    if (!kiln_run_threads_others(&others, &cores) || cores > 64)
        skip();
    kiln_program *p = small_program();
    {
        kiln_session_options options;
        kiln_session *s;
        kiln_error err;
        kiln_session_options_default(&options);
        options.threads = 2;
        assert_int_equal(kiln_session_new(p, &options, &s, &err), KILN_OK);
        bool threaded = kiln_session_threads(s) == 2;
        kiln_session_free(s);
        if (!threaded) {
            kiln_program_free(p);
            skip(); /* a build without OpenMP runs on one thread anyway */
        }
    }
    /* A process spinning on every core. */
    pid_t spinners[64];
    for (uint32_t i = 0; i < cores; i++) {
        spinners[i] = fork();
        assert_true(spinners[i] >= 0);
        if (spinners[i] == 0)
            for (volatile unsigned long n = 0;; n++)
                ;
    }
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL); /* let them be scheduled */
    uint32_t adaptive = threads_of_a_run(p, KILN_THREADS_ADAPTIVE);
    uint32_t fixed = threads_of_a_run(p, KILN_THREADS_FIXED);
    for (uint32_t i = 0; i < cores; i++) {
        kill(spinners[i], SIGKILL);
        waitpid(spinners[i], NULL, 0);
    }
    kiln_program_free(p);
    assert_int_equal(adaptive, 1);
    assert_int_equal(fixed, 2);
}

static void a_bad_policy_is_refused(void **state)
{
    (void)state;
    kiln_program *p = small_program();
    kiln_session_options options;
    kiln_session *s;
    kiln_error err;
    kiln_session_options_default(&options);
    options.thread_policy = (kiln_thread_policy)7;
    assert_int_equal(kiln_session_new(p, &options, &s, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "thread_policy 7"));
    kiln_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_median_of_three_looks_decides),
        cmocka_unit_test(the_machine_can_be_read),
        cmocka_unit_test(busy_cores_leave_one_thread),
        cmocka_unit_test(a_bad_policy_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
