/*
 * test_conv_folded.c — a strided 1-D conv of one input channel folded into
 * a conv of `stride` channels and stride 1 (lib/ops/conv_folded.c,
 * spec/opset.md "Fast paths"): against the reference kernels within the
 * conv's bound (program_recipe.h), with and without a fused relu, for
 * kernels, strides and pads as raw-waveform front ends use them; a length
 * that is no multiple of the stride runs unfolded in the same session and
 * the next multiple folds again; a kernel that is no multiple of the
 * stride never folds. The counter shows which way each run went.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "conv_folded.h"
#include "program_recipe.h"

/* x [2, 1, time] (time in 100..2048) -> conv (`outputs` channels, `taps`, `stride`, pads) -> relu when asked. */
static kiln_program *signal_program(int64_t outputs, int64_t taps, int64_t stride, int64_t pad_begin,
                                    int64_t pad_end, bool relu)
{
    recipe r;
    kiln_error err;
    kiln_value x;
    memset(&r, 0, sizeof r);
    assert_int_equal(kiln_builder_new("signal", &r.b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(r.b, "time", 100, 2048, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(r.b, "x", KILN_F32, "[2, 1, time]", &x, &err), KILN_OK);
    const int64_t weight_shape[] = {outputs, 1, taps}, bias_shape[] = {outputs};
    const int64_t pads[] = {pad_begin, pad_end}, strides[] = {stride};
    kiln_attribute attributes[] = {
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 2},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 1},
    };
    kiln_value operands[3] = {x, recipe_weight(&r, 3, weight_shape, 0.5f), recipe_weight(&r, 1, bias_shape, 0.25f)};
    kiln_value y = recipe_op(&r, "conv", 3, operands, 2, attributes);
    if (relu)
        y = recipe_unary(&r, "relu", y);
    return recipe_finish(&r, 1, &y);
}

/* A signal [2, 1, length] of values in [-1, 1). */
static kiln_tensor *signal(int64_t length)
{
    const int64_t shape[] = {2, 1, length};
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 3, shape, &t, &err), KILN_OK);
    float *v = kiln_tensor_data(t);
    uint64_t state = 0x9E3779B97F4A7C15u + (uint64_t)length;
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        v[i] = (float)((double)(state >> 11) / 4503599627370496.0 - 1.0);
    }
    return t;
}

/* Run the program at `length` in both sessions; @return how many runs folded. */
static uint64_t run_at(recipe_sessions *sessions, const kiln_program *program, int64_t length)
{
    kiln_tensor *x = signal(length);
    uint64_t before = kiln_conv_folded_runs();
    recipe_sessions_run(sessions, program, &x, NULL, NULL);
    kiln_tensor_free(x);
    return kiln_conv_folded_runs() - before;
}

static void folded_convs_match_the_reference(void **state)
{
    (void)state;
    static const struct {
        int64_t outputs, taps, stride, pad_begin, pad_end;
    } cases[] = {
        {32, 80, 4, 40, 40}, /* M5's first layer */
        {16, 10, 5, 0, 0},   /* a wav2vec-style feature encoder's */
        {8, 8, 2, 2, 4},
        {7, 6, 3, 3, 0},
        {33, 64, 16, 16, 16},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int relu = 0; relu < 2; relu++)
            for (uint32_t threads = 1; threads <= 2; threads++) {
                kiln_program *program = signal_program(cases[c].outputs, cases[c].taps, cases[c].stride,
                                                       cases[c].pad_begin, cases[c].pad_end, relu);
                recipe_sessions sessions = recipe_sessions_new(program, threads);
                int64_t s = cases[c].stride, length = 400 / s * s;
                uint64_t expect = kiln_onednn_enabled() ? 1 : 0;
                assert_int_equal(run_at(&sessions, program, length), expect);
                assert_int_equal(run_at(&sessions, program, length + 1), 0); /* no multiple of the stride */
                assert_int_equal(run_at(&sessions, program, length + s), expect);
                assert_int_equal(run_at(&sessions, program, length), expect);
                recipe_sessions_free(&sessions);
                kiln_program_free(program);
            }
}

static void a_kernel_across_strides_does_not_fold(void **state)
{
    (void)state;
    kiln_program *program = signal_program(8, 7, 2, 0, 0, false);
    recipe_sessions sessions = recipe_sessions_new(program, 1);
    assert_int_equal(run_at(&sessions, program, 400), 0);
    recipe_sessions_free(&sessions);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(folded_convs_match_the_reference),
        cmocka_unit_test(a_kernel_across_strides_does_not_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
