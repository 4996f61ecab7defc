/*
 * test_fusion.c — a conv and the relu, leaky_relu, clip, silu or hard_swish after it,
 * run as one oneDNN primitive (lib/plan/fusion.h, spec/opset.md "Fast
 * paths").
 *
 * Each program runs in a session with fast paths and in one with the
 * reference kernels only; the outputs must agree (within the conv
 * tolerance; specials exactly), and kiln_onednn_fused_runs() must grow by
 * exactly the number of convs that may fuse: pairs the model forms
 * (the conv's result read by the activation alone), with program weights,
 * an f32 x that is finite and small enough that no sum can overflow. A
 * chain of three pairs of equal sizes checks the memory plan: were an
 * activation's slot to share bytes with its conv's input, the fused conv
 * would overwrite what it reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "fusion.h"
#include "onednn.h"
#include "program_recipe.h"
#include "program.h"

enum { BATCH = 2, CHANNELS = 4, SIDE = 9 };

static uint64_t random_state = 0x243f6a8885a308d3u;

static float random_unit(void)
{
    random_state = random_state * 6364136223846793005u + 1442695040888963407u;
    return (float)((random_state >> 40) / (double)(1u << 24)) * 2.0f - 1.0f; /* [-1, 1) */
}

typedef struct program_case {
    const char *activation;  /* relu, leaky_relu, clip, silu or hard_swish */
    uint32_t stages;         /* conv + activation pairs in a chain */
    bool weight_is_input;    /* the weight an input: never fused */
    bool conv_is_output;     /* the last conv's result also an output: not a pair */
} program_case;

static float weights[3][CHANNELS * CHANNELS * 9], biases[3][CHANNELS];

static kiln_value activation_after(kiln_builder *b, const char *op, kiln_value x)
{
    kiln_error err;
    kiln_value y;
    kiln_attribute attributes[2];
    uint32_t count = 0;
    if (strcmp(op, "leaky_relu") == 0)
        attributes[count++] = (kiln_attribute){.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.125};
    if (strcmp(op, "clip") == 0) {
        attributes[count++] = (kiln_attribute){.name = "max", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.5};
        attributes[count++] = (kiln_attribute){.name = "min", .type = KILN_ATTRIBUTE_FLOAT, .f = -0.25};
    }
    assert_int_equal(kiln_builder_add_op_with_attributes(b, op, 1, &x, count, attributes, &y, &err), KILN_OK);
    return y;
}

static kiln_program *make_program(const program_case *c)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, conv = 0;
    char shape[64];
    snprintf(shape, sizeof shape, "[%d, %d, %d, %d]", BATCH, CHANNELS, SIDE, SIDE);
    assert_int_equal(kiln_builder_new("fusion", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, shape, &x, &err), KILN_OK);
    const int64_t weight_shape[] = {CHANNELS, CHANNELS, 3, 3}, bias_shape[] = {CHANNELS};
    const int64_t pads[] = {1, 1, 1, 1};
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    for (uint32_t stage = 0; stage < c->stages; stage++) {
        kiln_value operands[3] = {x};
        char name[32];
        snprintf(name, sizeof name, "w%u", stage);
        if (c->weight_is_input)
            assert_int_equal(kiln_builder_add_input(b, name, KILN_F32, "[4, 4, 3, 3]", &operands[1], &err), KILN_OK);
        else
            assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, 4, weight_shape,
                                                     weights[stage], &operands[1], &err),
                             KILN_OK);
        snprintf(name, sizeof name, "b%u", stage);
        assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, 1, bias_shape,
                                                 biases[stage], &operands[2], &err),
                         KILN_OK);
        assert_int_equal(kiln_builder_add_op_with_attributes(b, "conv", 3, operands, 1, attributes, &conv, &err),
                         KILN_OK);
        x = activation_after(b, c->activation, conv);
    }
    assert_int_equal(kiln_builder_add_output(b, "y", x, &err), KILN_OK);
    if (c->conv_is_output)
        assert_int_equal(kiln_builder_add_output(b, "conv", conv, &err), KILN_OK);
    return recipe_seal(b);
}

/* Run `program` on x (and the weights as inputs when asked); output `index`. */
static const kiln_tensor *run(kiln_session *s, const program_case *c, const kiln_tensor *x, kiln_tensor **weight_inputs)
{
    kiln_error err;
    assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
    for (uint32_t stage = 0; c->weight_is_input && stage < c->stages; stage++) {
        char name[32];
        snprintf(name, sizeof name, "w%u", stage);
        assert_int_equal(kiln_session_set_input(s, name, weight_inputs[stage], &err), KILN_OK);
    }
    kiln_status status = kiln_session_run(s, &err);
    if (status != KILN_OK)
        fail_msg("run failed: %s", err.message);
    return kiln_session_output(s, 0);
}

static void assert_close(const kiln_tensor *got, const kiln_tensor *expected, const char *what)
{
    const float *a = kiln_tensor_const_data(got), *e = kiln_tensor_const_data(expected);
    assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(expected));
    for (uint64_t i = 0; i < kiln_tensor_element_count(got); i++) {
        bool same = isnan(e[i]) ? isnan(a[i]) : (isinf(e[i]) ? a[i] == e[i] : fabsf(a[i] - e[i]) <= 1e-5f * (1 + fabsf(e[i])));
        if (!same)
            fail_msg("%s: element %llu is %.9g, the reference %.9g", what, (unsigned long long)i, (double)a[i],
                     (double)e[i]);
    }
}

/*
 * Case `c` on x filled by random values, with `special` written into
 * element 7 when not 0: the fast session must agree with the reference
 * one, and fuse `fused_per_run` convs per run (on builds with oneDNN).
 */
static void check(const program_case *c, float special, uint64_t fused_per_run)
{
    kiln_program *program = make_program(c);
    kiln_session_options fast_options, reference_options;
    kiln_session_options_default(&fast_options);
    kiln_session_options_default(&reference_options);
    reference_options.reference_kernels = true;
    kiln_session *fast, *reference;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &fast_options, &fast, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, &reference_options, &reference, &err), KILN_OK);
    const int64_t shape[] = {BATCH, CHANNELS, SIDE, SIDE}, weight_shape[] = {CHANNELS, CHANNELS, 3, 3};
    kiln_tensor *x, *weight_inputs[3] = {NULL, NULL, NULL};
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, shape, &x, &err), KILN_OK);
    for (uint32_t stage = 0; c->weight_is_input && stage < c->stages; stage++) {
        assert_int_equal(kiln_tensor_new(KILN_F32, 4, weight_shape, &weight_inputs[stage], &err), KILN_OK);
        memcpy(kiln_tensor_data(weight_inputs[stage]), weights[stage], sizeof weights[stage]);
    }
    for (int round = 0; round < 2; round++) {
        float *v = kiln_tensor_data(x);
        for (uint64_t i = 0; i < kiln_tensor_element_count(x); i++)
            v[i] = random_unit() * 4;
        if (special != 0)
            v[7] = special;
        uint64_t before = kiln_onednn_fused_runs();
        const kiln_tensor *got = run(fast, c, x, weight_inputs);
        uint64_t fused = kiln_onednn_fused_runs() - before;
        assert_int_equal(fused, kiln_onednn_enabled() ? fused_per_run : 0);
        assert_close(got, run(reference, c, x, weight_inputs), c->activation);
        if (c->conv_is_output)
            assert_close(kiln_session_output(fast, 1), kiln_session_output(reference, 1), "conv");
    }
    kiln_tensor_free(x);
    for (uint32_t stage = 0; stage < 3; stage++)
        kiln_tensor_free(weight_inputs[stage]);
    kiln_session_free(fast);
    kiln_session_free(reference);
    kiln_program_free(program);
}

static int fill_weights(void **state)
{
    (void)state;
    for (int s = 0; s < 3; s++) {
        for (size_t i = 0; i < sizeof weights[s] / sizeof weights[s][0]; i++)
            weights[s][i] = random_unit() * 0.5f;
        for (int i = 0; i < CHANNELS; i++)
            biases[s][i] = random_unit() * 0.25f;
    }
    return 0;
}

static void each_activation_fuses(void **state)
{
    (void)state;
    static const char *const activations[] = {"relu", "leaky_relu", "clip", "silu", "hard_swish"};
    for (size_t a = 0; a < 5; a++) {
        check(&(program_case){activations[a], 1, false, false}, 0, 1);
        /* A chain: each activation's slot must stay apart from its conv's input. */
        check(&(program_case){activations[a], 3, false, false}, 0, 3);
    }
}

static void special_or_huge_inputs_run_unfused(void **state)
{
    (void)state;
    /* A NaN or infinity in x: oneDNN's clip and relu would not keep the op's
     * NaN (and relu turns -inf into NaN), so the conv runs alone. */
    check(&(program_case){"relu", 1, false, false}, NAN, 0);
    check(&(program_case){"clip", 1, false, false}, -INFINITY, 0);
    check(&(program_case){"leaky_relu", 1, false, false}, INFINITY, 0);
    check(&(program_case){"silu", 1, false, false}, -INFINITY, 0);
    check(&(program_case){"hard_swish", 1, false, false}, NAN, 0);
    /* Finite, but large enough that a sum might overflow: unfused. The
     * stages after the first see values the clip bounds, so they fuse. */
    check(&(program_case){"relu", 1, false, false}, 1e38f, 0);
    check(&(program_case){"clip", 3, false, false}, 3e38f, 2);
    /* A NaN spreads down a chain (a clip keeps it): no stage fuses. */
    check(&(program_case){"clip", 3, false, false}, NAN, 0);
}

static void only_pairs_with_program_weights_fuse(void **state)
{
    (void)state;
    /* The conv's result is an output too: the activation is not its only reader. */
    check(&(program_case){"relu", 1, false, true}, 0, 0);
    /* Weights given as inputs may change between runs: not fused. */
    check(&(program_case){"clip", 2, true, false}, 0, 0);
}

/*
 * The pairs are found from the model alone, and a plan that places an
 * activation's result over its conv's operands (as a stored plan of plain
 * lifetimes may) leaves that pair unfused.
 */
static void pairs_and_the_plan(void **state)
{
    (void)state;
    kiln_program *program = make_program(&(program_case){"relu", 2, false, false});
    const kiln_model *m = &program->model;
    uint32_t *readers;
    kiln_error err;
    assert_int_equal(kiln_fusion_readers(m, program->live, &readers, &err), KILN_OK);
    /* Nodes: conv, relu, conv, relu. */
    kiln_fused_activation a;
    assert_int_equal(kiln_fusion_pair(m, program->live, 0, readers, &a), 1);
    assert_int_equal(a.kind, KILN_ACTIVATION_RELU);
    assert_int_equal(kiln_fusion_pair(m, program->live, 1, readers, NULL), 0);
    assert_int_equal(kiln_fusion_pair(m, program->live, 2, readers, NULL), 3);
    assert_int_equal(kiln_fusion_pair(m, program->live, 3, readers, NULL), 0);
    /* This runtime's plan keeps both pairs apart. */
    assert_int_equal(program->nodes[0].fusion.kind, KILN_ACTIVATION_RELU);
    assert_int_equal(program->nodes[2].fusion.kind, KILN_ACTIVATION_RELU);
    /* Node 3's slot over node 1's (the second conv's x): not allowed. */
    uint64_t sizes[4] = {2592, 2592, 2592, 2592};
    uint64_t apart[4] = {0, 2624, 0, 5248}, over[4] = {0, 2624, 0, 2624};
    assert_true(kiln_fusion_plan_allows(m, 2, 3, apart, sizes));
    assert_false(kiln_fusion_plan_allows(m, 2, 3, over, sizes));
    /* Node 1's slot over node 0's, the first conv's own result: allowed
     * (the conv does not read it). */
    assert_true(kiln_fusion_plan_allows(m, 0, 1, (uint64_t[]){0, 0, 2624, 5248}, sizes));
    free(readers);
    kiln_program_free(program);
}

/*
 * batch_norm and the relu after it (batch_norm applies it in place): the
 * plan does not lengthen the relu's lifetime (the arena is the one of the
 * same chain with an unfusable sigmoid in the relu's place), and a session
 * fuses the pair where the relu's buffer is x's own or apart from it, with
 * the relu's bits. kiln_fusion_in_place: the same bytes or none in common.
 */
static void batch_norm_applies_its_relu_in_place(void **state)
{
    (void)state;
    float block[64] = {0};
    assert_true(kiln_fusion_in_place(block, 64, block, 64));             /* the same bytes */
    assert_true(kiln_fusion_in_place(block, 64, block + 16, 64));        /* apart */
    assert_true(kiln_fusion_in_place(block + 16, 64, block, 64));
    assert_false(kiln_fusion_in_place(block + 4, 64, block, 64));        /* overlapping, shifted */
    assert_false(kiln_fusion_in_place(block, 64, block + 4, 64));
    assert_false(kiln_fusion_in_place(block, 128, block, 64));           /* the same start, longer */
    uint64_t arena[2];
    for (int activation = 0; activation < 2; activation++) {
        recipe r;
        kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
        /* conv, (abs: the variance) batch_norm, relu (or sigmoid), twice, conv: nodes 0, 1 2 3, 4 5 6, 7 */
        kiln_value y = recipe_conv(&r, x, 8, 8, 3, 0.5f);
        for (int k = 0; k < 2; k++)
            y = recipe_unary(&r, activation ? "sigmoid" : "relu", recipe_batch_norm(&r, y, 8));
        y = recipe_conv(&r, y, 8, 4, 3, 0.5f);
        kiln_program *program = recipe_finish(&r, 1, &y);
        arena[activation] = kiln_program_arena_bytes(program);
        if (activation == 0) {
            assert_int_equal(program->nodes[2].fusion.kind, KILN_ACTIVATION_RELU);
            assert_int_equal(program->nodes[5].fusion.kind, KILN_ACTIVATION_RELU);
            recipe_sessions sessions = recipe_sessions_new(program, 2);
            for (int round = 0; round < 2; round++) {
                kiln_tensor *input = recipe_input(8, 2.0f, round ? NAN : 0);
                recipe_sessions_run(&sessions, program, &input, NULL, NULL);
                kiln_tensor_free(input);
            }
            recipe_sessions_free(&sessions);
            /* The relus (nodes 3 and 6) did not run: their batch_norms applied them. */
            kiln_session_options options;
            kiln_session_options_default(&options);
            options.profile = true;
            kiln_session *profiled;
            kiln_error err;
            assert_int_equal(kiln_session_new(program, &options, &profiled, &err), KILN_OK);
            kiln_tensor *input = recipe_input(8, 2.0f, 0);
            assert_int_equal(kiln_session_set_input(profiled, "x", input, &err), KILN_OK);
            assert_int_equal(kiln_session_run(profiled, &err), KILN_OK);
            for (uint32_t relu = 3; relu <= 6; relu += 3) {
                kiln_node_profile node = {.struct_size = sizeof node};
                assert_int_equal(kiln_session_profile_node(profiled, relu, &node, &err), KILN_OK);
                assert_int_equal(node.path, KILN_NODE_PATH_FUSED);
                assert_int_equal(node.fused_into, relu - 1);
            }
            kiln_tensor_free(input);
            kiln_session_free(profiled);
        }
        kiln_program_free(program);
    }
    assert_int_equal(arena[0], arena[1]);
}

/*
 * conv + silu, fused, against the reference kernels within the bound
 * spec/opset.md states for oneDNN's swish: SILU_ULP ulp of silu applied
 * to the conv's result y, or, for y below -86.9 (oneDNN's exp gives 0
 * below about -87), within SILU_TINY of it (the fused result is then -0.0
 * or a tiny value; tests/bench/measure_fused_activation.c measured both);
 * and conv + hard_swish within HARD_SWISH_ULP ulp (oneDNN's hardswish). x,
 * weights and biases are multiples of 1/16, 1/8 and 1/64 small enough
 * that every partial sum of either conv is exact in f32 whatever its
 * order: both paths compute the same y, which a twin program without the
 * silu gives, and the difference left is the activation's. The fused
 * runs are counted: a pointwise conv of a row-major x, and a conv whose
 * result the silu does not read alone, stay unfused.
 */
enum { SILU_ULP = 8, HARD_SWISH_ULP = 4, SILU_CHANNELS = 16 };
#define SILU_TINY 1.5e-36

typedef struct silu_case {
    const char *what;
    const char *op;      /* silu or hard_swish */
    int64_t kernel;      /* 1 or 3, pads kernel / 2 */
    bool depthwise;      /* group = channels */
    bool after_conv;     /* x the result of a 3x3 conv before it: channels-last on the oneDNN path */
    bool dead_sigmoid;   /* sigmoid(conv) between the conv and the silu, as the ONNX importer leaves it */
    bool sigmoid_output; /* that sigmoid a program output: the conv has two readers */
    uint64_t fused;      /* convs fused per run (oneDNN builds) */
} silu_case;

/* Weights and biases of the conv before (0) and the conv with the silu (1). */
static float silu_weights[2][SILU_CHANNELS * SILU_CHANNELS * 9], silu_biases[2][SILU_CHANNELS];

/* A random multiple of 1 / `denominator` of magnitude at most limit / denominator. */
static float random_multiple(int limit, float denominator)
{
    return (float)lroundf(random_unit() * (float)limit) / denominator;
}

static kiln_value exact_conv(kiln_builder *b, kiln_value x, int64_t kernel, bool depthwise, int which)
{
    kiln_error err;
    int64_t inputs = depthwise ? 1 : SILU_CHANNELS;
    const int64_t weight_shape[] = {SILU_CHANNELS, inputs, kernel, kernel}, bias_shape[] = {SILU_CHANNELS};
    const int64_t pads[] = {kernel / 2, kernel / 2, kernel / 2, kernel / 2};
    kiln_value operands[3] = {x}, y;
    assert_int_equal(kiln_builder_add_weight(b, which ? "w" : "w_before", KILN_WEIGHT_PARAMETER, KILN_F32, 4,
                                             weight_shape, silu_weights[which], &operands[1], &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, which ? "b" : "b_before", KILN_WEIGHT_PARAMETER, KILN_F32, 1,
                                             bias_shape, silu_biases[which], &operands[2], &err),
                     KILN_OK);
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
                                   {.name = "group", .type = KILN_ATTRIBUTE_INT, .i = depthwise ? SILU_CHANNELS : 1}};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "conv", 3, operands, 2, attributes, &y, &err), KILN_OK);
    return y;
}

/* Case c's program; without `silu` (c's activation), its twin whose output is the conv's result. */
static kiln_program *make_silu_program(const silu_case *c, bool silu)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, conv, sigmoid, y;
    char shape[64];
    snprintf(shape, sizeof shape, "[%d, %d, %d, %d]", BATCH, SILU_CHANNELS, SIDE, SIDE);
    assert_int_equal(kiln_builder_new("approximate_fusion", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, shape, &x, &err), KILN_OK);
    if (c->after_conv)
        x = exact_conv(b, x, 3, false, 0);
    y = conv = exact_conv(b, x, c->kernel, c->depthwise, 1);
    if (silu && (c->dead_sigmoid || c->sigmoid_output))
        assert_int_equal(kiln_builder_add_op(b, "sigmoid", 1, &conv, &sigmoid, &err), KILN_OK);
    if (silu)
        assert_int_equal(kiln_builder_add_op(b, c->op, 1, &conv, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    if (silu && c->sigmoid_output)
        assert_int_equal(kiln_builder_add_output(b, "sigmoid", sigmoid, &err), KILN_OK);
    return recipe_seal(b);
}

/* f32 values in an order where neighbours differ by 1, +0 and -0 both 0. */
static int64_t ordered(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits >> 31 ? -(int64_t)(bits & 0x7fffffffu) : (int64_t)bits;
}

static kiln_session *new_session(kiln_program *program, bool reference_kernels)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.reference_kernels = reference_kernels;
    kiln_session *s;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &options, &s, &err), KILN_OK);
    return s;
}

static void check_silu(const silu_case *c)
{
    for (int which = 0; which < 2; which++) {
        for (size_t i = 0; i < sizeof silu_weights[which] / sizeof silu_weights[which][0]; i++)
            silu_weights[which][i] = random_multiple(4, 8.0f); /* [-0.5, 0.5] */
        for (int i = 0; i < SILU_CHANNELS; i++)
            silu_biases[which][i] = random_multiple(32, 64.0f);
    }
    kiln_program *program = make_silu_program(c, true), *twin = make_silu_program(c, false);
    kiln_session *fast = new_session(program, false), *reference = new_session(program, true);
    kiln_session *conv_only = new_session(twin, true);
    kiln_error err;
    const int64_t shape[] = {BATCH, SILU_CHANNELS, SIDE, SIDE};
    kiln_tensor *x;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, shape, &x, &err), KILN_OK);
    const program_case plain = {c->op, 1, false, false};
    bool silu = strcmp(c->op, "silu") == 0;
    for (int round = 0; round < 3; round++) {
        float *v = kiln_tensor_data(x);
        /* Round 0 near 0, where silu curves; the others reach y below -87,
         * where the fused result may be -0.0. */
        for (uint64_t i = 0; i < kiln_tensor_element_count(x); i++)
            v[i] = random_multiple(round == 0 ? 16 : 128, 16.0f);
        uint64_t before = kiln_onednn_fused_runs();
        const float *got = kiln_tensor_const_data(run(fast, &plain, x, NULL));
        uint64_t fused = kiln_onednn_fused_runs() - before, expected_fused = kiln_onednn_enabled() ? c->fused : 0;
        /* A 1x1 conv's x is channels-last only where oneDNN's 3x3 conv
         * before it wrote that layout (its AVX-512 kernels do, its AVX2
         * ones write 8-channel blocks, converted back): a plain x makes it
         * a pointwise conv, which runs unfused as for a row-major x. */
        if (c->kernel == 1 && c->after_conv && !recipe_convs_write_channels_last())
            expected_fused = 0;
        if (fused != expected_fused)
            fail_msg("%s %s: %llu fused runs, expected %llu", c->op, c->what, (unsigned long long)fused,
                     (unsigned long long)expected_fused);
        const float *expected = kiln_tensor_const_data(run(reference, &plain, x, NULL));
        const float *y = kiln_tensor_const_data(run(conv_only, &plain, x, NULL));
        for (uint64_t i = 0; i < kiln_tensor_element_count(x); i++) {
            bool within = llabs(ordered(got[i]) - ordered(expected[i])) <= (silu ? SILU_ULP : HARD_SWISH_ULP) ||
                          (silu && y[i] < -86.9f && fabs((double)got[i] - (double)expected[i]) <= SILU_TINY);
            if (!within)
                fail_msg("%s %s: element %llu (conv %.9g) is %.9g, the reference %.9g", c->op, c->what,
                         (unsigned long long)i, (double)y[i], (double)got[i], (double)expected[i]);
        }
        if (c->sigmoid_output)
            assert_close(kiln_session_output(fast, 1), kiln_session_output(reference, 1), "sigmoid");
    }
    kiln_tensor_free(x);
    kiln_session_free(fast);
    kiln_session_free(reference);
    kiln_session_free(conv_only);
    kiln_program_free(program);
    kiln_program_free(twin);
}

static void silu_fuses_within_its_bound(void **state)
{
    (void)state;
    static const silu_case cases[] = {
        {"3x3", "silu", 3, false, false, false, false, 1},
        {"depthwise 3x3", "silu", 3, true, false, false, false, 1},
        {"3x3 of a channels-last x", "silu", 3, false, true, false, false, 1},
        {"depthwise 3x3 of a channels-last x", "silu", 3, true, true, false, false, 1},
        {"1x1 of a channels-last x", "silu", 1, false, true, false, false, 1},
        /* A pointwise conv of a row-major x: oneDNN's GEMM applies swish slowly, so unfused. */
        {"1x1 of a row-major x", "silu", 1, false, false, false, false, 0},
        /* The ONNX importer's Mul(x, Sigmoid(x)): the sigmoid, read by nothing, does not run. */
        {"3x3, a dead sigmoid between", "silu", 3, false, false, true, false, 1},
        {"3x3, the sigmoid an output", "silu", 3, false, false, false, true, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_silu(&cases[i]);
}

/* The same for hard_swish (MobileNetV3's), within HARD_SWISH_ULP. */
static void hard_swish_fuses_within_its_bound(void **state)
{
    (void)state;
    static const silu_case cases[] = {
        {"3x3", "hard_swish", 3, false, false, false, false, 1},
        {"depthwise 3x3 of a channels-last x", "hard_swish", 3, true, true, false, false, 1},
        {"1x1 of a channels-last x", "hard_swish", 1, false, true, false, false, 1},
        {"1x1 of a row-major x", "hard_swish", 1, false, false, false, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_silu(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(each_activation_fuses, fill_weights),
        cmocka_unit_test_setup(special_or_huge_inputs_run_unfused, fill_weights),
        cmocka_unit_test_setup(only_pairs_with_program_weights_fuse, fill_weights),
        cmocka_unit_test_setup(pairs_and_the_plan, fill_weights),
        cmocka_unit_test(batch_norm_applies_its_relu_in_place),
        cmocka_unit_test(silu_fuses_within_its_bound),
        cmocka_unit_test(hard_swish_fuses_within_its_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
