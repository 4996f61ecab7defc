/*
 * test_recurrent_fast.c — the f32 fast path of rnn, gru and lstm (and their
 * last-state ops) against the reference kernel (spec/ops/recurrent.md,
 * "Fast path"): each case runs the op's fast kernel with a kernel context
 * (a node state slot, 1 or 2 threads), checks that it ran and said so
 * (KILN_PATH_VECTOR), and compares every element with the reference
 * kernel called without a context, within the tolerance the spec states
 * for the test's operands. Cases cover every cell, direction and layout,
 * sequences of 1 and more steps, batches of 1 and more, hidden sizes that
 * are and are not multiples of the 16-row panel, with and without bias,
 * initial states and peepholes, clip, every activation, both
 * linear_before_reset; weights as program weights (packed once, reused on
 * the next run) and as inputs (repacked every run, here changed between
 * runs at the same address), the directions on two threads (a layer
 * above the product threshold, spec/opset.md "Threads") and an LSTM's
 * steps split over two and three threads (the one-thread bits), each with the
 * AVX-512, AVX2 and plain C copies of the arithmetic. Also the
 * activations alone against libm, over a million arguments and the
 * special values.
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

#include "attribute.h"
#include "op_registry.h"
#include "recurrent_f32.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "prng.h"
#include "tensor_fixture.h"

enum { RNN, GRU, LSTM };

typedef struct fast_case {
    int cell;
    const char *direction; /* NULL: forward */
    int64_t layout;
    const char *activations;
    double clip; /* 0: none */
    int64_t linear_before_reset;
    uint32_t inputs; /* 3 .. 5 (7 for lstm) */
    int64_t seq, batch, input, hidden;
} fast_case;

static int gates_of(int cell)
{
    return cell == RNN ? 1 : cell == GRU ? 3 : 4;
}

static prng rng = {0x9E3779B97F4A7C15u};

static float uniform(float scale)
{
    return scale * ((float)(prng_next(&rng) >> 40) / (float)(1u << 23) - 1.0f);
}

static kiln_tensor *random_tensor(uint32_t rank, const int64_t *shape, float scale)
{
    kiln_tensor *t = new_poisoned_tensor(KILN_F32, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++)
        ((float *)t->data)[i] = uniform(scale);
    return t;
}

static uint32_t case_attributes(const fast_case *fc, kiln_node_attribute *a)
{
    uint32_t n = 0;
    if (fc->activations)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "activations", .type = KILN_ATTRIBUTE_STRING,
                                                     .s = fc->activations});
    if (fc->clip > 0)
        a[n++] = (kiln_node_attribute){.name = "clip", .type = KILN_ATTRIBUTE_FLOAT, .f = fc->clip};
    if (fc->direction)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "direction", .type = KILN_ATTRIBUTE_STRING,
                                                     .s = fc->direction});
    a[n++] = (kiln_node_attribute){.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = fc->hidden};
    a[n++] = (kiln_node_attribute){.name = "layout", .type = KILN_ATTRIBUTE_INT, .i = fc->layout};
    if (fc->cell == GRU)
        a[n++] = (kiln_node_attribute){.name = "linear_before_reset", .type = KILN_ATTRIBUTE_INT,
                                       .i = fc->linear_before_reset};
    return n;
}

/*
 * The tolerance of spec/opset.md's row for this path, for these operands
 * (|x| <= 1.5, |w|, |r| <= 0.8 / sqrt(k), |b| <= 0.5, |states| <= 1): the
 * reference's double steps and the fast path's f32 steps may differ by
 * 2^-18 (3.8e-6) relative to 1 + |reference|. Measured largest over
 * these cases: 6.0e-7 (AVX-512), 2.0e-6 (AVX2, plain C), printed by
 * attributes_match_the_reference.
 */
#define FAST_TOLERANCE 3.814697265625e-6
static double largest_error;

static void compare(const char *what, const fast_case *fc, const kiln_tensor *got, const kiln_tensor *want)
{
    const float *g = got->data, *w = want->data;
    for (uint64_t i = 0; i < want->element_count; i++) {
        if (isnan(w[i]) || isnan(g[i])) {
            if (!(isnan(w[i]) && isnan(g[i])))
                fail_msg("%s cell %d %s layout %lld seq %lld batch %lld input %lld hidden %lld: element %llu is %g, "
                         "reference %g",
                         what, fc->cell, fc->direction ? fc->direction : "forward", (long long)fc->layout,
                         (long long)fc->seq, (long long)fc->batch, (long long)fc->input, (long long)fc->hidden,
                         (unsigned long long)i, (double)g[i], (double)w[i]);
            continue;
        }
        double error = fabs((double)g[i] - (double)w[i]) / (1.0 + fabs((double)w[i]));
        if (error > largest_error)
            largest_error = error;
        if (!(error <= FAST_TOLERANCE))
            fail_msg("%s cell %d %s layout %lld seq %lld batch %lld input %lld hidden %lld inputs %u act %s clip %g: "
                     "element %llu is %.9g, reference %.9g",
                     what, fc->cell, fc->direction ? fc->direction : "forward", (long long)fc->layout,
                     (long long)fc->seq, (long long)fc->batch, (long long)fc->input, (long long)fc->hidden,
                     fc->inputs, fc->activations ? fc->activations : "default", fc->clip, (unsigned long long)i,
                     (double)g[i], (double)w[i]);
    }
}

static const char *const all_ops[3] = {"rnn", "gru", "lstm"};
static const char *const last_ops[3] = {"rnn_last_hidden", "gru_last_hidden", "lstm_last_hidden"};

/* The result's shape of `op` for the case. */
static kiln_tensor *result_for(const fast_case *fc, bool all)
{
    int64_t S = fc->seq, B = fc->batch, H = fc->hidden;
    int64_t D = fc->direction && strcmp(fc->direction, "bidirectional") == 0 ? 2 : 1;
    if (all)
        return fc->layout == 0 ? new_poisoned_tensor(KILN_F32, 4, (int64_t[]){S, D, B, H})
                               : new_poisoned_tensor(KILN_F32, 4, (int64_t[]){B, S, D, H});
    return fc->layout == 0 ? new_poisoned_tensor(KILN_F32, 3, (int64_t[]){D, B, H})
                           : new_poisoned_tensor(KILN_F32, 3, (int64_t[]){B, D, H});
}

/*
 * Run op `op` of the case on operands t through the fast path (context
 * with `threads`, the given slot, weights constant or not) and the
 * reference, twice, changing x (and, when the weights are inputs, r in
 * place) between the runs; compare both runs.
 */
static void check_op(const char *op, const fast_case *fc, kiln_tensor **t, bool all, uint32_t threads,
                     bool weights_constant)
{
    const kiln_op_def *def = kiln_op_find(op);
    assert_non_null(def);
    assert_non_null(def->fast);
    kiln_node_attribute attributes[8];
    uint32_t attribute_count = case_attributes(fc, attributes);
    kiln_node_state slot = {NULL, NULL};
    kiln_kernel_context context = {.threads = threads, .state = &slot};
    if (weights_constant)
        context.constant_operands = (1u << 1) | (1u << 2);
    for (int run = 0; run < 2; run++) {
        if (run == 1) {
            for (uint64_t i = 0; i < t[0]->element_count; i++)
                ((float *)t[0]->data)[i] = uniform(1.5f);
            if (!weights_constant)
                for (uint64_t i = 0; i < t[2]->element_count; i++)
                    ((float *)t[2]->data)[i] *= -0.75f;
        }
        kiln_tensor *fast = result_for(fc, all), *reference = result_for(fc, all);
        kiln_error err;
        kiln_kernel_call call = {(const kiln_tensor *const *)t, fc->inputs, fast, attributes, attribute_count,
                                 &context};
        bool ran = false;
        context.path = KILN_PATH_REFERENCE;
        assert_int_equal(def->fast(&call, &ran, &err), KILN_OK);
        assert_true(ran);
        assert_int_equal(context.path, KILN_PATH_VECTOR);
        call.output = reference;
        call.context = NULL;
        assert_int_equal(def->run(&call, &err), KILN_OK);
        compare(op, fc, fast, reference);
        kiln_tensor_free(fast);
        kiln_tensor_free(reference);
    }
    if (slot.release)
        slot.release(slot.data);
}

static void check_fast_case(const fast_case *fc, uint32_t threads, bool weights_constant)
{
    const int64_t S = fc->seq, B = fc->batch, H = fc->hidden, I = fc->input, G = gates_of(fc->cell);
    const int64_t D = fc->direction && strcmp(fc->direction, "bidirectional") == 0 ? 2 : 1;
    float w_scale = 0.8f / sqrtf((float)I), r_scale = 0.8f / sqrtf((float)H);
    kiln_tensor *t[7];
    t[0] = random_tensor(3, fc->layout == 0 ? (int64_t[]){S, B, I} : (int64_t[]){B, S, I}, 1.5f);
    t[1] = random_tensor(3, (int64_t[]){D, G * H, I}, w_scale);
    t[2] = random_tensor(3, (int64_t[]){D, G * H, H}, r_scale);
    t[3] = random_tensor(2, (int64_t[]){D, 2 * G * H}, 0.5f);
    t[4] = random_tensor(3, fc->layout == 0 ? (int64_t[]){D, B, H} : (int64_t[]){B, D, H}, 1.0f);
    t[5] = random_tensor(3, fc->layout == 0 ? (int64_t[]){D, B, H} : (int64_t[]){B, D, H}, 1.0f);
    t[6] = random_tensor(2, (int64_t[]){D, 3 * H}, 0.7f);
    check_op(all_ops[fc->cell], fc, t, true, threads, weights_constant);
    check_op(last_ops[fc->cell], fc, t, false, threads, weights_constant);
    if (fc->cell == LSTM)
        check_op("lstm_last_cell", fc, t, false, threads, weights_constant);
    for (int i = 0; i < 7; i++)
        kiln_tensor_free(t[i]);
}

/* Every cell, direction, layout and operand count over sizes around the panel height. */
static void shapes_match_the_reference(void **state)
{
    (void)state;
    static const char *const directions[] = {NULL, "reverse", "bidirectional"};
    static const int64_t seqs[] = {1, 2, 7};
    static const int64_t batches[] = {1, 3};
    static const int64_t hiddens[] = {1, 5, 16, 17, 33};
    static const int64_t inputs[] = {1, 7, 40};
    uint32_t n = 0;
    for (int cell = RNN; cell <= LSTM; cell++)
        for (int d = 0; d < 3; d++)
            for (int64_t layout = 0; layout <= 1; layout++)
                for (size_t h = 0; h < sizeof hiddens / sizeof hiddens[0]; h++, n++) {
                    uint32_t max_inputs = cell == LSTM ? 7 : 5;
                    fast_case fc = {.cell = cell, .direction = directions[d], .layout = layout,
                                    .linear_before_reset = (int64_t)(n % 2),
                                    .inputs = 3 + n % (max_inputs - 2),
                                    .seq = seqs[n % 3], .batch = batches[(n / 3) % 2],
                                    .input = inputs[(n / 2) % 3], .hidden = hiddens[h]};
                    check_fast_case(&fc, 1 + n % 2, n % 4 < 2);
                }
}

/* Activations (one set, or one per direction), clip, linear_before_reset. */
static void attributes_match_the_reference(void **state)
{
    (void)state;
    const fast_case cases[] = {
        {.cell = RNN, .activations = "relu", .inputs = 5, .seq = 6, .batch = 2, .input = 3, .hidden = 19},
        {.cell = RNN, .activations = "sigmoid", .inputs = 4, .seq = 5, .batch = 1, .input = 8, .hidden = 32},
        {.cell = RNN, .direction = "bidirectional", .activations = "sigmoid,relu", .inputs = 4, .seq = 3,
         .batch = 2, .input = 2, .hidden = 3},
        {.cell = GRU, .activations = "tanh,relu", .inputs = 5, .seq = 4, .batch = 2, .input = 5, .hidden = 21},
        {.cell = GRU, .activations = "relu,sigmoid", .inputs = 5, .seq = 4, .batch = 1, .input = 5, .hidden = 9},
        {.cell = GRU, .direction = "bidirectional", .layout = 1, .linear_before_reset = 1, .inputs = 5, .seq = 9,
         .batch = 3, .input = 3, .hidden = 18},
        {.cell = LSTM, .direction = "bidirectional", .activations = "sigmoid,tanh,tanh,tanh,relu,sigmoid",
         .inputs = 7, .seq = 3, .batch = 2, .input = 2, .hidden = 20},
        {.cell = LSTM, .activations = "relu,sigmoid,relu", .inputs = 7, .seq = 4, .batch = 1, .input = 6,
         .hidden = 7},
        {.cell = LSTM, .clip = 0.5, .inputs = 7, .seq = 4, .batch = 2, .input = 3, .hidden = 17},
        {.cell = GRU, .clip = 0.25, .direction = "reverse", .inputs = 4, .seq = 4, .batch = 2, .input = 3,
         .hidden = 3},
        {.cell = GRU, .clip = 3, .linear_before_reset = 1, .inputs = 5, .seq = 5, .batch = 2, .input = 3,
         .hidden = 40},
        {.cell = RNN, .clip = 0.3, .activations = "relu", .inputs = 4, .seq = 4, .batch = 2, .input = 3,
         .hidden = 3},
        /* The zoo's sizes: an LSTM 128 over 32 steps, a bidirectional GRU 64 over 50 frames of 40. */
        {.cell = LSTM, .layout = 1, .inputs = 3, .seq = 32, .batch = 1, .input = 64, .hidden = 128},
        {.cell = GRU, .direction = "bidirectional", .layout = 1, .inputs = 4, .seq = 50, .batch = 1, .input = 40,
         .hidden = 64},
        /* 4.2M multiply-adds a direction: on two threads the directions run in parallel when threads spin */
        {.cell = LSTM, .direction = "bidirectional", .inputs = 7, .seq = 64, .batch = 2, .input = 64, .hidden = 64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_fast_case(&cases[i], 1, true);
        check_fast_case(&cases[i], 2, false);
    }
    print_message("largest difference from the reference: %.3g of 1 + |reference|\n", largest_error);
}

/* The fast kernel of `op` on operands t (weights constant) with `threads` threads into a new result. */
static kiln_tensor *run_fast(const char *op, const fast_case *fc, kiln_tensor **t, bool all, uint32_t threads)
{
    const kiln_op_def *def = kiln_op_find(op);
    kiln_node_attribute attributes[8];
    uint32_t attribute_count = case_attributes(fc, attributes);
    kiln_node_state slot = {NULL, NULL};
    kiln_kernel_context context = {.threads = threads, .state = &slot, .constant_operands = (1u << 1) | (1u << 2)};
    kiln_tensor *y = result_for(fc, all);
    kiln_kernel_call call = {(const kiln_tensor *const *)t, fc->inputs, y, attributes, attribute_count, &context};
    kiln_error err;
    bool ran = false;
    assert_int_equal(def->fast(&call, &ran, &err), KILN_OK);
    assert_true(ran);
    if (slot.release)
        slot.release(slot.data);
    return y;
}

/*
 * An LSTM's steps split over a team (recurrent.c, lstm_split: panels
 * shared between the threads, two barriers a step) give the one-thread
 * bits: hidden 128 (8 panels), 70 (5, shared unevenly), with peepholes,
 * batch 2, both directions one after the other, on 2 and 3 threads.
 */
static void split_steps_give_the_same_bits(void **state)
{
    (void)state;
    const fast_case cases[] = {
        {.cell = LSTM, .inputs = 7, .seq = 9, .batch = 2, .input = 12, .hidden = 128},
        {.cell = LSTM, .direction = "reverse", .layout = 1, .inputs = 7, .seq = 5, .batch = 1, .input = 3,
         .hidden = 70},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fast_case *fc = &cases[i];
        const int64_t S = fc->seq, B = fc->batch, H = fc->hidden, I = fc->input;
        kiln_tensor *t[7];
        t[0] = random_tensor(3, fc->layout == 0 ? (int64_t[]){S, B, I} : (int64_t[]){B, S, I}, 1.5f);
        t[1] = random_tensor(3, (int64_t[]){1, 4 * H, I}, 0.8f / sqrtf((float)I));
        t[2] = random_tensor(3, (int64_t[]){1, 4 * H, H}, 0.8f / sqrtf((float)H));
        t[3] = random_tensor(2, (int64_t[]){1, 8 * H}, 0.5f);
        t[4] = random_tensor(3, fc->layout == 0 ? (int64_t[]){1, B, H} : (int64_t[]){B, 1, H}, 1.0f);
        t[5] = random_tensor(3, fc->layout == 0 ? (int64_t[]){1, B, H} : (int64_t[]){B, 1, H}, 1.0f);
        t[6] = random_tensor(2, (int64_t[]){1, 3 * H}, 0.7f);
        static const char *const ops[] = {"lstm", "lstm_last_hidden", "lstm_last_cell"};
        for (int o = 0; o < 3; o++) {
            kiln_tensor *alone = run_fast(ops[o], fc, t, o == 0, 1);
            for (uint32_t threads = 2; threads <= 3; threads++) {
                kiln_tensor *team = run_fast(ops[o], fc, t, o == 0, threads);
                if (memcmp(alone->data, team->data, alone->byte_size) != 0)
                    fail_msg("%s hidden %lld on %u threads: not the one-thread bits", ops[o], (long long)H, threads);
                kiln_tensor_free(team);
            }
            kiln_tensor_free(alone);
        }
        for (int k = 0; k < 7; k++)
            kiln_tensor_free(t[k]);
    }
}

/*
 * One node's slot across runs of other sequence lengths and batches, its
 * weights program weights packed by the first run: each run against the
 * reference (the packed weights must stay where the next run looks for
 * them whatever the sizes).
 */
static void runs_of_other_sizes_reuse_the_packing(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{5, 2}, {9, 3}, {2, 1}, {9, 3}, {1, 4}};
    for (int cell = RNN; cell <= LSTM; cell++) {
        const int64_t G = gates_of(cell), H = 21, I = 6;
        kiln_tensor *w = random_tensor(3, (int64_t[]){2, G * H, I}, 0.3f);
        kiln_tensor *r = random_tensor(3, (int64_t[]){2, G * H, H}, 0.2f);
        kiln_tensor *b = random_tensor(2, (int64_t[]){2, 2 * G * H}, 0.5f);
        kiln_node_attribute attributes[8];
        kiln_node_state slot = {NULL, NULL};
        kiln_kernel_context context = {.threads = 1, .state = &slot, .constant_operands = (1u << 1) | (1u << 2)};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            fast_case fc = {.cell = cell, .direction = "bidirectional", .inputs = 4, .seq = sizes[i][0],
                            .batch = sizes[i][1], .input = I, .hidden = H};
            uint32_t attribute_count = case_attributes(&fc, attributes);
            kiln_tensor *x = random_tensor(3, (int64_t[]){fc.seq, fc.batch, I}, 1.5f);
            kiln_tensor *fast = result_for(&fc, true), *reference = result_for(&fc, true);
            const kiln_tensor *inputs[] = {x, w, r, b};
            kiln_kernel_call call = {inputs, 4, fast, attributes, attribute_count, &context};
            kiln_error err;
            bool ran = false;
            assert_int_equal(kiln_op_find(all_ops[cell])->fast(&call, &ran, &err), KILN_OK);
            assert_true(ran);
            call.output = reference;
            call.context = NULL;
            assert_int_equal(kiln_op_find(all_ops[cell])->run(&call, &err), KILN_OK);
            compare(all_ops[cell], &fc, fast, reference);
            kiln_tensor_free(x);
            kiln_tensor_free(fast);
            kiln_tensor_free(reference);
        }
        slot.release(slot.data);
        kiln_tensor_free(w);
        kiln_tensor_free(r);
        kiln_tensor_free(b);
    }
}

/* A NaN in x reaches the same elements on both paths. */
static void nan_matches_the_reference(void **state)
{
    (void)state;
    for (int cell = RNN; cell <= LSTM; cell++) {
        fast_case fc = {.cell = cell, .direction = "bidirectional", .inputs = 4, .seq = 5, .batch = 2, .input = 3,
                        .hidden = 5};
        const int64_t G = gates_of(cell);
        kiln_tensor *t[4];
        t[0] = random_tensor(3, (int64_t[]){5, 2, 3}, 1.5f);
        ((float *)t[0]->data)[(2 * 2 + 1) * 3 + 1] = NAN; /* step 2, batch row 1 */
        t[1] = random_tensor(3, (int64_t[]){2, G * 5, 3}, 0.5f);
        t[2] = random_tensor(3, (int64_t[]){2, G * 5, 5}, 0.4f);
        t[3] = random_tensor(2, (int64_t[]){2, 2 * G * 5}, 0.5f);
        check_op(all_ops[cell], &fc, t, true, 1, true);
        for (int i = 0; i < 4; i++)
            kiln_tensor_free(t[i]);
    }
}

/* Operands the fast path leaves to the reference: f64, an x without features. */
static void declines_what_the_reference_does(void **state)
{
    (void)state;
    kiln_node_attribute hidden = {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 2};
    kiln_node_state slot = {NULL, NULL};
    kiln_kernel_context context = {.threads = 1, .state = &slot};
    kiln_error err;
    bool ran = true;
    kiln_tensor *x = new_poisoned_tensor(KILN_F64, 3, (int64_t[]){2, 1, 3});
    kiln_tensor *w = new_poisoned_tensor(KILN_F64, 3, (int64_t[]){1, 2, 3});
    kiln_tensor *r = new_poisoned_tensor(KILN_F64, 3, (int64_t[]){1, 2, 2});
    kiln_tensor *y = new_poisoned_tensor(KILN_F64, 4, (int64_t[]){2, 1, 1, 2});
    const kiln_tensor *inputs[] = {x, w, r};
    kiln_kernel_call call = {inputs, 3, y, &hidden, 1, &context};
    assert_int_equal(kiln_op_find("rnn")->fast(&call, &ran, &err), KILN_OK);
    assert_false(ran);
    /* reference_only: never the fast path. */
    context.reference_only = true;
    kiln_tensor *xf = random_tensor(3, (int64_t[]){2, 1, 3}, 1.0f), *wf = random_tensor(3, (int64_t[]){1, 2, 3}, 1.0f);
    kiln_tensor *rf = random_tensor(3, (int64_t[]){1, 2, 2}, 1.0f);
    kiln_tensor *yf = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, 1, 1, 2});
    const kiln_tensor *f32_inputs[] = {xf, wf, rf};
    kiln_kernel_call f32_call = {f32_inputs, 3, yf, &hidden, 1, &context};
    ran = true;
    assert_int_equal(kiln_op_find("rnn")->fast(&f32_call, &ran, &err), KILN_OK);
    assert_false(ran);
    kiln_tensor *tensors[] = {x, w, r, y, xf, wf, rf, yf};
    for (size_t i = 0; i < 8; i++)
        kiln_tensor_free(tensors[i]);
    if (slot.release)
        slot.release(slot.data);
}

/* sigmoid and tanh within 2^-22 absolute of libm's (in double), relu exact; NaN, infinities, ±0. */
static void activations_match_libm(void **state)
{
    (void)state;
    enum { COUNT = 1 << 20 };
    static float v[COUNT], x[COUNT];
    double worst[2] = {0, 0};
    for (int f = KILN_RECURRENT_SIGMOID; f <= KILN_RECURRENT_RELU; f++) {
        for (size_t i = 0; i < COUNT; i++) {
            /* spread over [-100, 100], dense near 0 */
            float u = uniform(1.0f);
            x[i] = i % 2 ? u * 100.0f : u * u * u * 10.0f;
            v[i] = x[i];
        }
        kiln_recurrent_activate((kiln_recurrent_activation)f, INFINITY, v, COUNT);
        for (size_t i = 0; i < COUNT; i++) {
            double want = f == KILN_RECURRENT_SIGMOID ? 1.0 / (1.0 + exp(-(double)x[i]))
                          : f == KILN_RECURRENT_TANH  ? tanh((double)x[i])
                                                      : (x[i] > 0 ? x[i] : 0.0);
            double error = fabs((double)v[i] - want);
            if (f == KILN_RECURRENT_RELU)
                assert_true(error == 0);
            else if (error > worst[f])
                worst[f] = error;
        }
    }
    print_message("largest error: sigmoid %.3g, tanh %.3g\n", worst[0], worst[1]);
    assert_true(worst[0] <= 0x1p-22 && worst[1] <= 0x1p-22);
    float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f, 88.5f, -88.5f};
    float expected[3][9] = {
        {NAN, 1.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f},
        {NAN, 1.0f, -1.0f, 0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f, -1.0f},
        {NAN, INFINITY, 0.0f, 0.0f, -0.0f, 1e-30f, 0.0f, 88.5f, 0.0f},
    };
    for (int f = KILN_RECURRENT_SIGMOID; f <= KILN_RECURRENT_RELU; f++) {
        float got[9];
        memcpy(got, special, sizeof got);
        kiln_recurrent_activate((kiln_recurrent_activation)f, INFINITY, got, 9);
        for (int i = 0; i < 9; i++) {
            if (isnan(expected[f][i])) {
                assert_true(isnan(got[i]));
                continue;
            }
            /* sigmoid(-88.5) is 3.4e-39 exactly, about 1e-38 here: within the absolute bound */
            if (isinf(expected[f][i]))
                assert_true(got[i] == expected[f][i]);
            else
                assert_true(fabsf(got[i] - expected[f][i]) <= 0x1p-22f);
            if (expected[f][i] == 0)
                assert_int_equal(signbit(got[i]) != 0, signbit(expected[f][i]) != 0);
        }
    }
    /* clip bounds the argument first and keeps NaN */
    float clipped[] = {5.0f, -5.0f, NAN};
    kiln_recurrent_activate(KILN_RECURRENT_RELU, 0.5f, clipped, 3);
    assert_true(clipped[0] == 0.5f && clipped[1] == 0.0f && isnan(clipped[2]));
}

/* `kiln version` names the path (spec/opset.md: a build lists its fast paths). */
static void features_name_the_path(void **state)
{
    (void)state;
    bool listed = false;
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        listed = listed || strcmp(*f, "recurrent-f32") == 0;
    assert_true(listed);
}

/* The AVX2 and plain C copies, on a machine that has wider ones: the same checks. */
static void narrower_copies_match_too(void **state)
{
    for (unsigned bits = 256; bits >= 128; bits /= 2) {
        kiln_recurrent_f32_limit_width(bits);
        shapes_match_the_reference(state);
        attributes_match_the_reference(state);
        nan_matches_the_reference(state);
        activations_match_libm(state);
    }
    kiln_recurrent_f32_limit_width(512);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_match_the_reference),
        cmocka_unit_test(attributes_match_the_reference),
        cmocka_unit_test(nan_matches_the_reference),
        cmocka_unit_test(runs_of_other_sizes_reuse_the_packing),
        cmocka_unit_test(split_steps_give_the_same_bits),
        cmocka_unit_test(declines_what_the_reference_does),
        cmocka_unit_test(activations_match_libm),
        cmocka_unit_test(features_name_the_path),
        cmocka_unit_test(narrower_copies_match_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
