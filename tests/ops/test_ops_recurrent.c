/*
 * test_ops_recurrent.c — rnn, gru and lstm (and their last-state ops)
 * against a reference written here differently from the kernel: long
 * double, the whole sequence of one direction kept in a sequence-first
 * array, every gate an explicitly named vector computed by its own loop,
 * and batch-first layouts reached by transposing the operands here rather
 * than by indexing. Also the shape rules over symbolic dims, refusals by
 * status and message, NaN propagation, and a session running all three
 * LSTM results of one program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribute.h"
#include "half.h"
#include "op_registry.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "family_check.h"
#include "tensor_fixture.h"

enum { RNN, GRU, LSTM };
#define MAX_ELEMENTS 4096

/* One layer configuration and the operands it runs on (all sequence-first here). */
typedef struct layer_case {
    int cell;
    const char *direction;   /* NULL: the default, forward */
    int64_t layout;
    const char *activations; /* NULL: the defaults */
    double clip;             /* 0: none */
    int64_t linear_before_reset;
    bool bias, initial, peepholes;
    int64_t seq, batch, input, hidden;
    kiln_dtype dtype;
} layer_case;

static int gates_of(int cell)
{
    return cell == RNN ? 1 : cell == GRU ? 3 : 4;
}

static int directions_of(const layer_case *lc)
{
    return lc->direction && strcmp(lc->direction, "bidirectional") == 0 ? 2 : 1;
}

/* A fixed pseudo-random value in [-scale, scale]. */
static long double next_value(uint32_t *seed, long double scale)
{
    *seed = *seed * 1103515245u + 12345u;
    return scale * ((long double)((*seed >> 8) & 0xFFFF) / 32767.5L - 1.0L);
}

/* The operands, as long double, in ONNX's sequence-first layout. */
typedef struct operands {
    long double x[MAX_ELEMENTS], w[MAX_ELEMENTS], r[MAX_ELEMENTS], b[MAX_ELEMENTS];
    long double h0[MAX_ELEMENTS], c0[MAX_ELEMENTS], p[MAX_ELEMENTS];
} operands;

/* Each value rounded to the case's dtype, so reference and kernel see the same operands. */
static long double as_dtype(const layer_case *lc, long double v)
{
    switch (lc->dtype) {
    case KILN_F16: return kiln_f16_to_f32(kiln_f32_to_f16((float)v));
    case KILN_BF16: return kiln_bf16_to_f32(kiln_f32_to_bf16((float)v));
    case KILN_F32: return (float)v;
    default: return (double)v;
    }
}

static void make_operands(const layer_case *lc, uint32_t seed, operands *o)
{
    int D = directions_of(lc), G = gates_of(lc->cell);
    int64_t H = lc->hidden;
    for (int64_t i = 0; i < lc->seq * lc->batch * lc->input; i++)
        o->x[i] = as_dtype(lc, next_value(&seed, 1.5L));
    for (int64_t i = 0; i < D * G * H * lc->input; i++)
        o->w[i] = as_dtype(lc, next_value(&seed, 0.8L));
    for (int64_t i = 0; i < D * G * H * H; i++)
        o->r[i] = as_dtype(lc, next_value(&seed, 0.8L));
    for (int64_t i = 0; i < D * 2 * G * H; i++)
        o->b[i] = lc->bias ? as_dtype(lc, next_value(&seed, 0.5L)) : 0;
    for (int64_t i = 0; i < D * lc->batch * H; i++) {
        o->h0[i] = lc->initial ? as_dtype(lc, next_value(&seed, 1.0L)) : 0;
        o->c0[i] = lc->initial ? as_dtype(lc, next_value(&seed, 1.0L)) : 0;
    }
    for (int64_t i = 0; i < D * 3 * H; i++)
        o->p[i] = lc->peepholes ? as_dtype(lc, next_value(&seed, 0.7L)) : 0;
}

/* ------------------------------------------------------------ reference */

static long double reference_activation(const char *name, long double v, double clip)
{
    if (clip > 0) /* clip bounds the input of every activation */
        v = v > clip ? clip : v < -clip ? -clip : v;
    if (strcmp(name, "sigmoid") == 0)
        return 1.0L / (1.0L + expl(-v));
    if (strcmp(name, "tanh") == 0)
        return tanhl(v);
    return v > 0 ? v : 0; /* relu */
}

/* Activation `which` (0 f, 1 g, 2 h) of direction d, parsed from the case's list. */
static void activation_name(const layer_case *lc, int d, int which, char *name, size_t size)
{
    static const char *const defaults[3][3] = {{"tanh"}, {"sigmoid", "tanh"}, {"sigmoid", "tanh", "tanh"}};
    if (!lc->activations) {
        snprintf(name, size, "%s", defaults[lc->cell][which]);
        return;
    }
    int per_direction = lc->cell == RNN ? 1 : lc->cell == GRU ? 2 : 3, listed = 1;
    for (const char *s = lc->activations; *s; s++)
        listed += *s == ',';
    int wanted = listed == per_direction ? which : d * per_direction + which;
    const char *s = lc->activations;
    for (int i = 0; i < wanted; i++)
        s = strchr(s, ',') + 1;
    size_t length = strcspn(s, ",");
    snprintf(name, size, "%.*s", (int)length, s);
}

/*
 * Every hidden state Y[t][d][b][j], the last hidden state H[d][b][j] and
 * the last cell state C[d][b][j], sequence-first.
 */
static void reference(const layer_case *lc, const operands *o, long double *y, long double *last_h, long double *last_c)
{
    const int64_t S = lc->seq, B = lc->batch, I = lc->input, H = lc->hidden;
    const int D = directions_of(lc), G = gates_of(lc->cell);
    for (int d = 0; d < D; d++) {
        char f[16], g[16], h[16];
        activation_name(lc, d, 0, f, sizeof f);
        activation_name(lc, d, lc->cell == RNN ? 0 : 1, g, sizeof g);
        activation_name(lc, d, lc->cell == LSTM ? 2 : 0, h, sizeof h);
        bool backward = d == 1 || (lc->direction && strcmp(lc->direction, "reverse") == 0);
        for (int64_t b = 0; b < B; b++) {
            long double hidden[64], cell[64];
            for (int64_t j = 0; j < H; j++) {
                hidden[j] = o->h0[(d * B + b) * H + j];
                cell[j] = o->c0[(d * B + b) * H + j];
            }
            for (int64_t n = 0; n < S; n++) {
                int64_t t = backward ? S - 1 - n : n;
                /* xw[gate][j] = x_t W_gate[j] + Wb, hr[gate][j] = h R_gate[j] + Rb */
                long double xw[4][64], hr[4][64];
                for (int gate = 0; gate < G; gate++)
                    for (int64_t j = 0; j < H; j++) {
                        int64_t row = gate * H + j;
                        long double a = o->b[d * 2 * G * H + row], c = o->b[d * 2 * G * H + G * H + row];
                        for (int64_t k = 0; k < I; k++)
                            a += o->x[(t * B + b) * I + k] * o->w[(d * G * H + row) * I + k];
                        for (int64_t k = 0; k < H; k++)
                            c += hidden[k] * o->r[(d * G * H + row) * H + k];
                        xw[gate][j] = a;
                        hr[gate][j] = c;
                    }
                long double next[64];
                if (lc->cell == RNN) {
                    for (int64_t j = 0; j < H; j++)
                        next[j] = reference_activation(f, xw[0][j] + hr[0][j], lc->clip);
                } else if (lc->cell == GRU) {
                    long double z[64], reset[64], candidate[64];
                    for (int64_t j = 0; j < H; j++) {
                        z[j] = reference_activation(f, xw[0][j] + hr[0][j], lc->clip);
                        reset[j] = reference_activation(f, xw[1][j] + hr[1][j], lc->clip);
                    }
                    for (int64_t j = 0; j < H; j++) {
                        long double pre;
                        if (lc->linear_before_reset) {
                            pre = xw[2][j] + reset[j] * hr[2][j];
                        } else {
                            /* (r . h) R_h + Rb_h, recomputed with the reset applied first */
                            pre = xw[2][j] + o->b[d * 2 * G * H + G * H + 2 * H + j];
                            for (int64_t k = 0; k < H; k++)
                                pre += reset[k] * hidden[k] * o->r[(d * G * H + 2 * H + j) * H + k];
                        }
                        candidate[j] = reference_activation(g, pre, lc->clip);
                    }
                    for (int64_t j = 0; j < H; j++)
                        next[j] = (1 - z[j]) * candidate[j] + z[j] * hidden[j];
                } else {
                    long double in[64], out[64], forget[64], cell_in[64];
                    const long double *p = o->p + d * 3 * H;
                    for (int64_t j = 0; j < H; j++) {
                        in[j] = reference_activation(f, xw[0][j] + hr[0][j] + p[j] * cell[j], lc->clip);
                        forget[j] = reference_activation(f, xw[2][j] + hr[2][j] + p[2 * H + j] * cell[j], lc->clip);
                        cell_in[j] = reference_activation(g, xw[3][j] + hr[3][j], lc->clip);
                    }
                    for (int64_t j = 0; j < H; j++)
                        cell[j] = forget[j] * cell[j] + in[j] * cell_in[j];
                    for (int64_t j = 0; j < H; j++) {
                        out[j] = reference_activation(f, xw[1][j] + hr[1][j] + p[H + j] * cell[j], lc->clip);
                        next[j] = out[j] * reference_activation(h, cell[j], lc->clip);
                    }
                }
                for (int64_t j = 0; j < H; j++) {
                    hidden[j] = next[j];
                    y[((t * D + d) * B + b) * H + j] = next[j];
                }
            }
            for (int64_t j = 0; j < H; j++) {
                last_h[(d * B + b) * H + j] = hidden[j];
                last_c[(d * B + b) * H + j] = cell[j];
            }
        }
    }
}

/* -------------------------------------------------------- kernel driver */

static void set_value(kiln_tensor *t, uint64_t i, long double v)
{
    switch (t->dtype) {
    case KILN_F16: ((uint16_t *)t->data)[i] = kiln_f32_to_f16((float)v); break;
    case KILN_BF16: ((uint16_t *)t->data)[i] = kiln_f32_to_bf16((float)v); break;
    case KILN_F32: ((float *)t->data)[i] = (float)v; break;
    default: ((double *)t->data)[i] = (double)v; break;
    }
}

static long double value_at(const kiln_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case KILN_F16: return kiln_f16_to_f32(((const uint16_t *)t->data)[i]);
    case KILN_BF16: return kiln_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case KILN_F32: return ((const float *)t->data)[i];
    default: return ((const double *)t->data)[i];
    }
}

static kiln_tensor *tensor_from(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const long double *values)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    for (uint64_t i = 0; i < t->element_count; i++)
        set_value(t, i, values[i]);
    return t;
}

/* A [A][B][C] array as [B][A][C] (sequence-first ⇄ batch-first, directions ⇄ batch). */
static kiln_tensor *transposed_from(kiln_dtype dtype, int64_t a, int64_t b, int64_t c, const long double *values)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, 3, (int64_t[]){b, a, c});
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++)
            for (int64_t k = 0; k < c; k++)
                set_value(t, (j * a + i) * c + k, values[(i * b + j) * c + k]);
    return t;
}

/* The case's node attributes, sorted by name; `count` set. */
static uint32_t case_attributes(const layer_case *lc, kiln_node_attribute *a)
{
    uint32_t n = 0;
    if (lc->activations)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "activations", .type = KILN_ATTRIBUTE_STRING,
                                                     .s = lc->activations});
    if (lc->clip > 0)
        a[n++] = (kiln_node_attribute){.name = "clip", .type = KILN_ATTRIBUTE_FLOAT, .f = lc->clip};
    if (lc->direction)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "direction", .type = KILN_ATTRIBUTE_STRING,
                                                     .s = lc->direction});
    a[n++] = (kiln_node_attribute){.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = lc->hidden};
    a[n++] = (kiln_node_attribute){.name = "layout", .type = KILN_ATTRIBUTE_INT, .i = lc->layout};
    if (lc->cell == GRU)
        a[n++] = (kiln_node_attribute){.name = "linear_before_reset", .type = KILN_ATTRIBUTE_INT,
                                       .i = lc->linear_before_reset};
    return n;
}

static const char *const all_ops[3] = {"rnn", "gru", "lstm"};
static const char *const last_hidden_ops[3] = {"rnn_last_hidden", "gru_last_hidden", "lstm_last_hidden"};

/* Run `op` on the case's operands into `out`. */
static kiln_status run_op(const char *op, const layer_case *lc, const operands *o, kiln_tensor *out, kiln_error *err)
{
    const int64_t S = lc->seq, B = lc->batch, H = lc->hidden;
    const int64_t D = directions_of(lc), G = gates_of(lc->cell);
    kiln_tensor *t[7];
    t[0] = lc->layout == 0 ? tensor_from(lc->dtype, 3, (int64_t[]){S, B, lc->input}, o->x)
                           : transposed_from(lc->dtype, S, B, lc->input, o->x);
    t[1] = tensor_from(lc->dtype, 3, (int64_t[]){D, G * H, lc->input}, o->w);
    t[2] = tensor_from(lc->dtype, 3, (int64_t[]){D, G * H, H}, o->r);
    t[3] = tensor_from(lc->dtype, 2, (int64_t[]){D, 2 * G * H}, o->b);
    t[4] = lc->layout == 0 ? tensor_from(lc->dtype, 3, (int64_t[]){D, B, H}, o->h0)
                           : transposed_from(lc->dtype, D, B, H, o->h0);
    t[5] = lc->layout == 0 ? tensor_from(lc->dtype, 3, (int64_t[]){D, B, H}, o->c0)
                           : transposed_from(lc->dtype, D, B, H, o->c0);
    t[6] = tensor_from(lc->dtype, 2, (int64_t[]){D, 3 * H}, o->p);
    /* Pass optional operands only as far as the case needs them: absent ones are zero. */
    uint32_t count = 3;
    if (lc->bias)
        count = 4;
    if (lc->initial)
        count = lc->cell == LSTM ? 6 : 5;
    if (lc->peepholes)
        count = 7;
    kiln_node_attribute attributes[8];
    uint32_t attribute_count = case_attributes(lc, attributes);
    kiln_kernel_call call = {(const kiln_tensor *const *)t, count, out, attributes, attribute_count, NULL};
    kiln_status status = kiln_op_find(op)->run(&call, err);
    for (int i = 0; i < 7; i++)
        kiln_tensor_free(t[i]);
    return status;
}

static void expect_close(const char *what, const layer_case *lc, long double got, long double want)
{
    long double tolerance = lc->dtype == KILN_F32 ? 2e-5L : 1e-12L;
    if (isnan(want) ? !isnan(got) : !(fabsl(got - want) <= tolerance * (1 + fabsl(want)))) {
        print_error("%s: got %.17Lg, want %.17Lg (cell %d, direction %s, layout %lld)\n", what, got, want,
                    lc->cell, lc->direction ? lc->direction : "forward", (long long)lc->layout);
        fail();
    }
}

/* Every result op of the case's cell against the reference. */
static void check_case(const layer_case *lc, uint32_t seed)
{
    static operands o;
    static long double y[MAX_ELEMENTS], last_h[MAX_ELEMENTS], last_c[MAX_ELEMENTS];
    make_operands(lc, seed, &o);
    reference(lc, &o, y, last_h, last_c);
    const int64_t S = lc->seq, B = lc->batch, H = lc->hidden, D = directions_of(lc);
    kiln_error err;

    kiln_tensor *all = lc->layout == 0 ? new_poisoned_tensor(lc->dtype, 4, (int64_t[]){S, D, B, H})
                                       : new_poisoned_tensor(lc->dtype, 4, (int64_t[]){B, S, D, H});
    assert_int_equal(run_op(all_ops[lc->cell], lc, &o, all, &err), KILN_OK);
    for (int64_t t = 0; t < S; t++)
        for (int64_t d = 0; d < D; d++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < H; j++) {
                    int64_t at = lc->layout == 0 ? ((t * D + d) * B + b) * H + j : ((b * S + t) * D + d) * H + j;
                    expect_close("y", lc, value_at(all, (uint64_t)at), y[((t * D + d) * B + b) * H + j]);
                }
    kiln_tensor_free(all);

    int last_ops = lc->cell == LSTM ? 2 : 1;
    for (int which = 0; which < last_ops; which++) {
        const char *op = which == 0 ? last_hidden_ops[lc->cell] : "lstm_last_cell";
        const long double *want = which == 0 ? last_h : last_c;
        kiln_tensor *last = lc->layout == 0 ? new_poisoned_tensor(lc->dtype, 3, (int64_t[]){D, B, H})
                                            : new_poisoned_tensor(lc->dtype, 3, (int64_t[]){B, D, H});
        assert_int_equal(run_op(op, lc, &o, last, &err), KILN_OK);
        for (int64_t d = 0; d < D; d++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < H; j++) {
                    int64_t at = lc->layout == 0 ? (d * B + b) * H + j : (b * D + d) * H + j;
                    expect_close(op, lc, value_at(last, (uint64_t)at), want[(d * B + b) * H + j]);
                }
        kiln_tensor_free(last);
    }
}

/* Every cell through each direction, layout, dtype and operand set. */
static void cells_match_the_reference(void **state)
{
    (void)state;
    static const char *const directions[] = {NULL, "forward", "reverse", "bidirectional"};
    uint32_t seed = 1;
    for (int cell = RNN; cell <= LSTM; cell++)
        for (int d = 0; d < 4; d++)
            for (int64_t layout = 0; layout <= 1; layout++)
                for (int operand_set = 0; operand_set < 3; operand_set++) {
                    layer_case lc = {.cell = cell, .direction = directions[d], .layout = layout,
                                     .bias = operand_set >= 1, .initial = operand_set >= 2,
                                     .peepholes = cell == LSTM && operand_set >= 2,
                                     .seq = 4, .batch = 3, .input = 5, .hidden = 3,
                                     .dtype = operand_set == 1 ? KILN_F64 : KILN_F32};
                    check_case(&lc, seed++);
                }
}

/* A sequence of one step, a batch of one, a hidden state of one, a sequence of no step. */
static void edge_sizes_match_the_reference(void **state)
{
    (void)state;
    uint32_t seed = 100;
    for (int cell = RNN; cell <= LSTM; cell++) {
        layer_case one_step = {.cell = cell, .direction = "bidirectional", .bias = true, .initial = true,
                               .seq = 1, .batch = 2, .input = 3, .hidden = 4, .dtype = KILN_F64};
        check_case(&one_step, seed++);
        layer_case tiny = {.cell = cell, .layout = 1, .bias = true, .seq = 5, .batch = 1, .input = 1, .hidden = 1,
                           .dtype = KILN_F32};
        check_case(&tiny, seed++);
        /* No step at all: Y is empty, the last states are the initial ones. */
        layer_case empty = {.cell = cell, .direction = "bidirectional", .layout = 1, .initial = true, .seq = 0,
                            .batch = 2, .input = 2, .hidden = 2, .dtype = KILN_F32};
        check_case(&empty, seed++);
    }
}

/* Activations (one set for both directions, or one per direction), clip, linear_before_reset. */
static void attributes_match_the_reference(void **state)
{
    (void)state;
    uint32_t seed = 200;
    const layer_case cases[] = {
        {.cell = RNN, .activations = "relu", .bias = true, .seq = 3, .batch = 2, .input = 2, .hidden = 3},
        {.cell = RNN, .direction = "bidirectional", .activations = "sigmoid,relu", .bias = true, .seq = 3,
         .batch = 2, .input = 2, .hidden = 3},
        {.cell = GRU, .activations = "tanh,relu", .bias = true, .initial = true, .seq = 3, .batch = 2,
         .input = 2, .hidden = 3},
        {.cell = GRU, .linear_before_reset = 1, .bias = true, .initial = true, .seq = 4, .batch = 2, .input = 3,
         .hidden = 3},
        {.cell = GRU, .direction = "bidirectional", .layout = 1, .linear_before_reset = 1, .bias = true,
         .initial = true, .seq = 4, .batch = 3, .input = 3, .hidden = 2},
        {.cell = LSTM, .direction = "bidirectional", .activations = "sigmoid,tanh,tanh,tanh,relu,sigmoid",
         .bias = true, .initial = true, .peepholes = true, .seq = 3, .batch = 2, .input = 2, .hidden = 3},
        {.cell = LSTM, .clip = 0.5, .bias = true, .initial = true, .peepholes = true, .seq = 4, .batch = 2,
         .input = 3, .hidden = 3},
        {.cell = GRU, .clip = 0.25, .direction = "reverse", .bias = true, .seq = 4, .batch = 2, .input = 3,
         .hidden = 3},
        {.cell = RNN, .clip = 0.3, .bias = true, .seq = 4, .batch = 2, .input = 3, .hidden = 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int f64 = 0; f64 <= 1; f64++) {
            layer_case lc = cases[i];
            lc.dtype = f64 ? KILN_F64 : KILN_F32;
            check_case(&lc, seed++);
        }
}

/* A NaN in x at step 1 makes every later hidden state NaN and leaves the earlier one alone. */
static void nan_propagates_forward_in_time(void **state)
{
    (void)state;
    layer_case lc = {.cell = LSTM, .bias = true, .seq = 3, .batch = 1, .input = 2, .hidden = 2,
                     .dtype = KILN_F32};
    static operands o;
    make_operands(&lc, 7, &o);
    o.x[1 * 2 + 0] = NAN;
    kiln_error err;
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){3, 1, 1, 2});
    assert_int_equal(run_op("lstm", &lc, &o, y, &err), KILN_OK);
    const float *v = y->data;
    assert_false(isnan(v[0]) || isnan(v[1]));
    for (int i = 2; i < 6; i++)
        assert_true(isnan(v[i]));
    kiln_tensor_free(y);
}

/* f16 and bf16 are the f32 kernel on the widened operands, rounded once (spec/opset.md, "Half precision"). */
static void half_is_the_f32_result_rounded_once(void **state)
{
    (void)state;
    static operands o;
    for (int half = 0; half < 2; half++)
        for (int cell = RNN; cell <= LSTM; cell++) {
            layer_case lc = {.cell = cell, .direction = "bidirectional", .bias = true, .initial = true,
                             .peepholes = cell == LSTM, .seq = 3, .batch = 2, .input = 3, .hidden = 2,
                             .dtype = half ? KILN_BF16 : KILN_F16};
            make_operands(&lc, 300 + (uint32_t)cell, &o); /* values exact in the half dtype */
            kiln_error err;
            const int64_t shape[4] = {3, 2, 2, 2};
            kiln_tensor *narrow = new_poisoned_tensor(lc.dtype, 4, shape);
            kiln_tensor *wide = new_poisoned_tensor(KILN_F32, 4, shape);
            assert_int_equal(run_op(all_ops[cell], &lc, &o, narrow, &err), KILN_OK);
            layer_case wide_case = lc;
            wide_case.dtype = KILN_F32;
            assert_int_equal(run_op(all_ops[cell], &wide_case, &o, wide, &err), KILN_OK);
            for (uint64_t i = 0; i < wide->element_count; i++) {
                float v = ((const float *)wide->data)[i];
                uint16_t want = half ? kiln_f32_to_bf16(v) : kiln_f32_to_f16(v);
                assert_int_equal(((const uint16_t *)narrow->data)[i], want);
            }
            kiln_tensor_free(narrow);
            kiln_tensor_free(wide);
        }
}

/* A kernel called with operands that do not fit refuses them, naming the operand and axis. */
static void kernels_refuse_bad_operands(void **state)
{
    (void)state;
    layer_case lc = {.cell = GRU, .seq = 2, .batch = 2, .input = 3, .hidden = 2, .dtype = KILN_F32};
    static operands o;
    make_operands(&lc, 3, &o);
    kiln_error err;
    kiln_tensor *wrong = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, 1, 2, 3});
    assert_int_equal(run_op("gru", &lc, &o, wrong, &err), KILN_ERR_SHAPE_GUARD);
    assert_non_null(strstr(err.message, "gru: output axis 3 has size 3, not 2"));
    kiln_tensor_free(wrong);
    layer_case bad = lc;
    bad.hidden = 0;
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, 1, 2, 2});
    assert_int_equal(run_op("gru", &bad, &o, y, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "hidden_size = 0 is outside 1.."));
    kiln_tensor_free(y);
}

static kiln_status infer(const char *op, kiln_expr_pool *pool, const kiln_dim_decl *dims,
                         const kiln_value_type *const *inputs, uint32_t count, const kiln_node_attribute *attributes,
                         uint32_t attribute_count, kiln_value_type *out, kiln_error *err)
{
    kiln_shape_context ctx = {pool, dims, 2, "node 2 (lstm)", attributes, attribute_count, NULL, 0, NULL, NULL, 0, NULL, 0};
    return kiln_op_find(op)->infer(&ctx, inputs, count, out, err);
}

/* Symbolic seq and batch flow through; weight sizes are proven against hidden_size; attributes are checked. */
static void shape_rules(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_dim_decl dims[] = {{.name = "seq", .min = 1, .max = 50, .multiple_of = 1},
                            {.name = "batch", .min = 1, .max = 8, .multiple_of = 1}};
    kiln_error err;
    uint32_t seq, batch, c2, c4, c5, c12, c16, c32;
    assert_int_equal(kiln_expr_dim(&pool, 0, 2, &seq, &err), KILN_OK);
    assert_int_equal(kiln_expr_dim(&pool, 1, 2, &batch, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 2, &c2, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 4, &c4, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 5, &c5, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 12, &c12, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 16, &c16, &err), KILN_OK);
    assert_int_equal(kiln_expr_const(&pool, 32, &c32, &err), KILN_OK);
    /* A batch-first bidirectional LSTM with hidden_size 4 and input size 5. */
    kiln_value_type x = {KILN_F32, {3, {batch, seq, c5}}}, w = {KILN_F32, {3, {c2, c16, c5}}};
    kiln_value_type r = {KILN_F32, {3, {c2, c16, c4}}}, h0 = {KILN_F32, {3, {batch, c2, c4}}};
    kiln_value_type b = {KILN_F32, {2, {c2, c32}}}, p = {KILN_F32, {2, {c2, c12}}};
    kiln_node_attribute attributes[] = {
        {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"bidirectional"},
        {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4},
        {.name = "layout", .type = KILN_ATTRIBUTE_INT, .i = 1},
    };
    const kiln_value_type *inputs[7] = {&x, &w, &r, &b, &h0, &h0, &p};
    kiln_value_type out;
    assert_int_equal(infer("lstm", &pool, dims, inputs, 7, attributes, 3, &out, &err), KILN_OK);
    assert_int_equal(out.shape.rank, 4);
    assert_int_equal(out.shape.axes[0], batch);
    assert_int_equal(out.shape.axes[1], seq);
    assert_true(kiln_expr_is_const(&pool, out.shape.axes[2], 2));
    assert_true(kiln_expr_is_const(&pool, out.shape.axes[3], 4));
    assert_int_equal(infer("lstm_last_cell", &pool, dims, inputs, 7, attributes, 3, &out, &err), KILN_OK);
    assert_int_equal(out.shape.rank, 3);
    assert_int_equal(out.shape.axes[0], batch);
    assert_true(kiln_expr_is_const(&pool, out.shape.axes[1], 2));

    /* W with the rows of a GRU (3 gates) under an LSTM. */
    kiln_value_type gru_w = {KILN_F32, {3, {c2, c12, c5}}};
    inputs[1] = &gru_w;
    assert_int_equal(infer("lstm", &pool, dims, inputs, 3, attributes, 3, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 2 (lstm): it is not true that w (input 1) axis 1 size 12 equals "
                                        "gates * hidden_size 16"));
    inputs[1] = &w;
    /* initial_h whose batch axis is not provably x's. */
    kiln_value_type loose = {KILN_F32, {3, {seq, c2, c4}}};
    inputs[4] = &loose;
    assert_int_equal(infer("lstm", &pool, dims, inputs, 5, attributes, 3, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "initial_h (input 4) axis 0 size seq equals x's batch size batch"));
    assert_non_null(strstr(err.message, "counterexample"));
    inputs[4] = &h0;

    /* Attribute refusals. */
    struct {
        kiln_node_attribute a[3];
        uint32_t count;
        const char *message;
    } refusals[] = {
        {{{.name = "layout", .type = KILN_ATTRIBUTE_INT, .i = 1}}, 1, "the attribute 'hidden_size' is required"},
        {{{.name = "activations", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"sigmoid,leakyrelu,tanh"},
          {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4}},
         2, "activation \"leakyrelu\" is not supported (supported: sigmoid, tanh, relu)"},
        {{{.name = "activations", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"sigmoid,tanh"},
          {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4}},
         2, "activations \"sigmoid,tanh\" names 2 functions; this layer takes 3 per direction"},
        {{{.name = "clip", .type = KILN_ATTRIBUTE_FLOAT, .f = -1},
          {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4}},
         2, "clip = -1 is not a positive threshold"},
        {{{.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"sideways"},
          {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4}},
         2, "direction \"sideways\" is not forward, reverse or bidirectional"},
        {{{.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4},
          {.name = "input_forget", .type = KILN_ATTRIBUTE_INT, .i = 1}},
         2, "input_forget = 1 is not supported"},
        {{{.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4},
          {.name = "layout", .type = KILN_ATTRIBUTE_INT, .i = 2}},
         2, "layout = 2 is not 0 or 1"},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        assert_int_equal(infer("lstm", &pool, dims, inputs, 3, refusals[i].a, refusals[i].count, &out, &err),
                         KILN_ERR_INVALID_PROGRAM);
        if (!strstr(err.message, refusals[i].message)) {
            print_error("refusal %zu: %s\n", i, err.message);
            fail();
        }
    }
    kiln_value_type ints = {KILN_I32, x.shape};
    inputs[0] = &ints;
    assert_int_equal(infer("rnn", &pool, dims, inputs, 3, attributes, 3, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "rnn does not support dtype i32"));
    kiln_expr_pool_release(&pool);
}

/* A session runs all three LSTM results of one program over a symbolic sequence length, twice. */
static void a_program_uses_every_result(void **state)
{
    (void)state;
    layer_case lc = {.cell = LSTM, .direction = "bidirectional", .bias = true, .seq = 4, .batch = 2, .input = 3,
                     .hidden = 2, .dtype = KILN_F32};
    static operands o;
    static long double y[MAX_ELEMENTS], last_h[MAX_ELEMENTS], last_c[MAX_ELEMENTS];
    make_operands(&lc, 11, &o);
    reference(&lc, &o, y, last_h, last_c);
    float w[2 * 8 * 3], r[2 * 8 * 2], b[2 * 16];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        w[i] = (float)o.w[i];
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        r[i] = (float)o.r[i];
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        b[i] = (float)o.b[i];
    kiln_builder *builder;
    kiln_error err;
    kiln_value in[4], results[3];
    kiln_attribute attributes[] = {
        {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"bidirectional"},
        {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 2},
    };
    assert_int_equal(kiln_builder_new("lstm", &builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(builder, "seq", 1, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(builder, "x", KILN_F32, "[seq, 2, 3]", &in[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(builder, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){2, 8, 3},
                                             w, &in[1], &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(builder, "r", KILN_WEIGHT_PARAMETER, KILN_F32, 3, (int64_t[]){2, 8, 2},
                                             r, &in[2], &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_weight(builder, "b", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){2, 16},
                                             b, &in[3], &err),
                     KILN_OK);
    static const char *const ops[3] = {"lstm", "lstm_last_hidden", "lstm_last_cell"};
    static const char *const names[3] = {"y", "y_h", "y_c"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kiln_builder_add_op_with_attributes(builder, ops[i], 4, in, 2, attributes, &results[i], &err),
                         KILN_OK);
        assert_int_equal(kiln_builder_add_output(builder, names[i], results[i], &err), KILN_OK);
    }
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(builder, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(builder);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    kiln_tensor *x = tensor_from(KILN_F32, 3, (int64_t[]){4, 2, 3}, o.x);
    for (int run = 0; run < 2; run++) {
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        const kiln_tensor *got[3] = {kiln_session_output(session, 0), kiln_session_output(session, 1),
                                     kiln_session_output(session, 2)};
        const long double *want[3] = {y, last_h, last_c};
        for (int i = 0; i < 3; i++)
            for (uint64_t e = 0; e < got[i]->element_count; e++)
                expect_close(names[i], &lc, value_at(got[i], e), want[i][e]);
        assert_int_equal(got[0]->element_count, 4 * 2 * 2 * 2);
    }
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* The family is exactly these ops, each served by the registry. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"rnn", "rnn_last_hidden", "gru", "gru_last_hidden", "lstm", "lstm_last_hidden",
                                        "lstm_last_cell"};
    assert_family_registered(&kiln_ops_recurrent, names, 7);
    assert_int_equal(kiln_ops_recurrent.count, 7);
}

/* Watchdog for the empty-input test: a recurrence that runs on fails instead of hanging the suite. */
static void on_alarm(int signal)
{
    (void)signal;
    static const char message[] = "a recurrence over no input ran for 5 s\n";
    if (write(2, message, sizeof message - 1) < 0)
        _exit(3);
    _exit(2);
}

/*
 * x [seq, 1, 0] has no element however long seq is, and a last-state op
 * still has a result: 2^63-1 steps over no input are refused at once (issue
 * #20 point 2), a few of them still run (zero weights: every state 0).
 */
static void empty_input_recurrence_is_bounded(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        int64_t gates;
    } ops[] = {{"rnn_last_hidden", 1}, {"gru_last_hidden", 3}, {"lstm_last_hidden", 4}, {"lstm_last_cell", 4}};
    signal(SIGALRM, on_alarm);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        const int64_t H = 2, G = ops[o].gates;
        const int64_t lengths[] = {INT64_MAX, 3};
        for (int l = 0; l < 2; l++) {
            kiln_tensor *t[3] = {new_tensor(KILN_F32, 3, (int64_t[]){lengths[l], 1, 0}),
                                 new_tensor(KILN_F32, 3, (int64_t[]){1, G * H, 0}),
                                 new_tensor(KILN_F32, 3, (int64_t[]){1, G * H, H})};
            kiln_tensor *out = new_poisoned_tensor(KILN_F32, 3, (int64_t[]){1, 1, H});
            kiln_node_attribute hidden = {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = H};
            kiln_kernel_call call = {(const kiln_tensor *const *)t, 3, out, &hidden, 1, NULL};
            kiln_error err;
            alarm(5);
            kiln_status status = kiln_op_find(ops[o].op)->run(&call, &err);
            alarm(0);
            if (l == 0) {
                assert_int_equal(status, KILN_ERR_LIMIT);
                assert_non_null(strstr(err.message, "no input features"));
            } else {
                assert_int_equal(status, KILN_OK);
                for (int64_t j = 0; j < H; j++)
                    assert_true(((const float *)out->data)[j] == 0.0f);
            }
            for (int i = 0; i < 3; i++)
                kiln_tensor_free(t[i]);
            kiln_tensor_free(out);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(cells_match_the_reference),
        cmocka_unit_test(edge_sizes_match_the_reference),
        cmocka_unit_test(attributes_match_the_reference),
        cmocka_unit_test(nan_propagates_forward_in_time),
        cmocka_unit_test(half_is_the_f32_result_rounded_once),
        cmocka_unit_test(kernels_refuse_bad_operands),
        cmocka_unit_test(shape_rules),
        cmocka_unit_test(a_program_uses_every_result),
        cmocka_unit_test(empty_input_recurrence_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
