/*
 * test_batch_slices.c — a conv or pool whose batch the session's threads
 * divide runs as one primitive per slice of images, one slice per thread
 * (lib/ops/onednn/onednn_entry.c, build_slices; spec/opset.md "Threads").
 *
 * A slice that started at the wrong image, or a primitive built for the
 * wrong slice, gives other numbers than the reference kernels; the
 * counter kiln_onednn_sliced_runs shows which runs were split: with
 * oneDNN and spinning waits (the default; under OMP_WAIT_POLICY=passive
 * only entries large enough for several threads split), those whose x or
 * y holds at least 256 KiB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include <kiln/kiln.h>

#include "onednn.h"
#include "parallel.h"
#include "program_recipe.h"

/*
 * On [N, 8, 32, 32]: conv+relu to 16 channels, avg_pool (3x3, stride 1),
 * conv, max_pool (2x2) and global_avg_pool. At N = 4 the first four
 * touch 256 KiB each (split), global_avg_pool's x 64 KiB (whole).
 */
static kiln_program *cnn(const char *shape)
{
    recipe r;
    kiln_value x = recipe_start(&r, shape, NULL);
    kiln_value a = recipe_pool(&r, "avg_pool", recipe_unary(&r, "relu", recipe_conv(&r, x, 8, 16, 3, 0.5f)), 3);
    kiln_value b = recipe_pool(&r, "max_pool", recipe_conv(&r, a, 16, 16, 3, 0.5f), 2);
    kiln_value y = recipe_unary(&r, "global_avg_pool", b);
    return recipe_finish(&r, 1, &y);
}

static void count_slices(void *user, bool before)
{
    uint64_t *count = user;
    *count = kiln_onednn_sliced_runs() - (before ? 0 : *count);
}

/* Run twice on `threads` threads at `batch` images; @return the sliced runs of the second run. */
static uint64_t sliced_runs(const char *shape, int64_t batch, uint32_t threads)
{
    kiln_program *program = cnn(shape);
    recipe_sessions sessions = recipe_sessions_new(program, threads);
    uint64_t count = 0;
    for (int round = 0; round < 2; round++) {
        kiln_tensor *x = recipe_input_of(batch, 8, 32, 2.0f, 0);
        recipe_sessions_run(&sessions, program, &x, count_slices, &count);
        kiln_tensor_free(x);
    }
    recipe_sessions_free(&sessions);
    kiln_program_free(program);
    return count;
}

/* Slices need the strided layouts oneDNN's channels-last convolutions pick, and spinning waits. */
static bool splits(void)
{
    return recipe_convs_write_channels_last() && kiln_threads_spin();
}

static void a_batch_the_threads_divide_is_split(void **state)
{
    (void)state;
    uint64_t even = sliced_runs("[4, 8, 32, 32]", 4, 2);
    uint64_t dynamic = sliced_runs("[batch, 8, 32, 32]", 6, 2);
    if (splits()) {
        assert_int_equal(even, 4);
        assert_int_equal(dynamic, 4);
    }
}

static void other_batches_run_whole(void **state)
{
    (void)state;
    /* 3 images on 2 threads, 1 image on 2, 4 on 1 thread: no split, same results. */
    assert_int_equal(sliced_runs("[3, 8, 32, 32]", 3, 2), 0);
    assert_int_equal(sliced_runs("[1, 8, 32, 32]", 1, 2), 0);
    assert_int_equal(sliced_runs("[4, 8, 32, 32]", 4, 1), 0);
    /* 2 images, 128 KiB per tensor: only the nodes whose work alone takes 2
     * threads (over 2^16 multiply-adds when threads spin): the two convs and
     * the avg_pool (2 x 16 x 30 x 30 outputs x 9); not the max_pool (2 x 16
     * x 15 x 15 x 4) or the global pool. */
    uint64_t small = sliced_runs("[2, 8, 32, 32]", 2, 2);
    if (splits())
        assert_int_equal(small, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_batch_the_threads_divide_is_split),
        cmocka_unit_test(other_batches_run_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
