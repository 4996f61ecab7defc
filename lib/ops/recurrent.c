/*
 * recurrent.c — recurrent layers over a sequence: the simple RNN, GRU
 * and LSTM, each as one op per result. `rnn`, `gru` and `lstm` give every
 * hidden state (ONNX's Y); `rnn_last_hidden`, `gru_last_hidden` and
 * `lstm_last_hidden` the last one (Y_h); `lstm_last_cell` the last cell
 * state (Y_c). A graph node has exactly one result, so an importer emits
 * one node per result it uses; the ops of one layer make the same
 * computation. Semantics, attributes and numerics: spec/ops/recurrent.md.
 *
 * Inputs are x, w, r and then, optionally and in this order, b and
 * initial_h (and for the LSTM initial_c and p): an absent input is zero,
 * so an importer that has a later one but not an earlier one passes zeros.
 *
 * The state is carried in double from step to step and each output
 * element is rounded once to the output dtype. The hidden (and cell) state
 * and the gates of one batch row live in a scratch kept in the node's
 * state slot, grown only when a run needs more than any before: a run at a
 * shape seen before allocates nothing (kernel_context.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "checked_math.h"
#include "error.h"
#include "half_compute.h"
#include "op_registry.h"
#include "parallel.h"
#include "real_access.h"
#include "recurrent_f32.h"
#include "size_claim.h"

/* Sanity bound on hidden_size: far above any real layer, low enough that
 * gate counts times it can never overflow the size arithmetic. */
#define MAX_HIDDEN_SIZE ((int64_t)1 << 24)
#define MAX_DIRECTIONS 2
#define MAX_ACTIVATIONS 3 /* per direction: f, g, h */

typedef enum cell_kind { CELL_RNN, CELL_GRU, CELL_LSTM } cell_kind;
typedef enum result_kind { RESULT_ALL_HIDDEN, RESULT_LAST_HIDDEN, RESULT_LAST_CELL } result_kind;
typedef enum activation { ACTIVATION_SIGMOID, ACTIVATION_TANH, ACTIVATION_RELU } activation;

/* What each op computes. */
typedef struct recurrent_op {
    const char *name;
    cell_kind cell;
    result_kind result;
} recurrent_op;

static const recurrent_op op_rnn = {"rnn", CELL_RNN, RESULT_ALL_HIDDEN};
static const recurrent_op op_rnn_last_hidden = {"rnn_last_hidden", CELL_RNN, RESULT_LAST_HIDDEN};
static const recurrent_op op_gru = {"gru", CELL_GRU, RESULT_ALL_HIDDEN};
static const recurrent_op op_gru_last_hidden = {"gru_last_hidden", CELL_GRU, RESULT_LAST_HIDDEN};
static const recurrent_op op_lstm = {"lstm", CELL_LSTM, RESULT_ALL_HIDDEN};
static const recurrent_op op_lstm_last_hidden = {"lstm_last_hidden", CELL_LSTM, RESULT_LAST_HIDDEN};
static const recurrent_op op_lstm_last_cell = {"lstm_last_cell", CELL_LSTM, RESULT_LAST_CELL};

/*
 * The results one run writes, NULL where not asked for: the hidden state
 * of every step (ONNX's Y), the last hidden state (Y_h), the last cell
 * state (Y_c). A node asks for one; a group of kin nodes (result_groups.h,
 * run_recurrent_together) for several, computed by one recurrence.
 */
typedef struct recurrent_results {
    kiln_tensor *all_hidden, *last_hidden, *last_cell;
} recurrent_results;

/* The results of `op`: its one result, `output`. */
static recurrent_results results_of(const recurrent_op *op, kiln_tensor *output)
{
    recurrent_results r = {NULL, NULL, NULL};
    if (op->result == RESULT_ALL_HIDDEN)
        r.all_hidden = output;
    else if (op->result == RESULT_LAST_HIDDEN)
        r.last_hidden = output;
    else
        r.last_cell = output;
    return r;
}

/* Whether every result asked for is empty (a run then computes nothing). */
static bool results_empty(const recurrent_results *r)
{
    return (!r->all_hidden || r->all_hidden->element_count == 0) &&
           (!r->last_hidden || r->last_hidden->element_count == 0) &&
           (!r->last_cell || r->last_cell->element_count == 0);
}

/* Input positions; an input past the node's count is absent (zero). */
enum { IN_X, IN_W, IN_R, IN_B, IN_INITIAL_H, IN_INITIAL_C, IN_P };

static const kiln_attribute_spec rnn_attributes[] = {
    {"activations", KILN_ATTRIBUTE_STRING},
    {"clip", KILN_ATTRIBUTE_FLOAT},
    {"direction", KILN_ATTRIBUTE_STRING},
    {"hidden_size", KILN_ATTRIBUTE_INT},
    {"layout", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec gru_attributes[] = {
    {"activations", KILN_ATTRIBUTE_STRING},
    {"clip", KILN_ATTRIBUTE_FLOAT},
    {"direction", KILN_ATTRIBUTE_STRING},
    {"hidden_size", KILN_ATTRIBUTE_INT},
    {"layout", KILN_ATTRIBUTE_INT},
    {"linear_before_reset", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

static const kiln_attribute_spec lstm_attributes[] = {
    {"activations", KILN_ATTRIBUTE_STRING},
    {"clip", KILN_ATTRIBUTE_FLOAT},
    {"direction", KILN_ATTRIBUTE_STRING},
    {"hidden_size", KILN_ATTRIBUTE_INT},
    {"input_forget", KILN_ATTRIBUTE_INT},
    {"layout", KILN_ATTRIBUTE_INT},
    {NULL, 0},
};

/* The attributes of one node, checked. */
typedef struct recurrent_params {
    int64_t hidden;
    uint32_t gates;       /* gates per direction: 1, 3 or 4 */
    uint32_t directions;  /* 1 or 2 */
    bool reverse_only;    /* direction "reverse" */
    int64_t layout;       /* 0: sequence first; 1: batch first */
    double clip;          /* INFINITY: no clipping */
    bool linear_before_reset;
    activation activations[MAX_DIRECTIONS][MAX_ACTIVATIONS];
} recurrent_params;

static uint32_t gate_count(cell_kind cell)
{
    return cell == CELL_RNN ? 1 : cell == CELL_GRU ? 3 : 4;
}

/* Activations per direction: f for the RNN; f, g for the GRU; f, g, h for the LSTM. */
static uint32_t activation_count(cell_kind cell)
{
    return cell == CELL_RNN ? 1 : cell == CELL_GRU ? 2 : 3;
}

static bool parse_activation(const char *name, size_t length, activation *out)
{
    static const struct {
        const char *name;
        activation value;
    } known[] = {{"sigmoid", ACTIVATION_SIGMOID}, {"tanh", ACTIVATION_TANH}, {"relu", ACTIVATION_RELU}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].name) == length && memcmp(known[i].name, name, length) == 0) {
            *out = known[i].value;
            return true;
        }
    return false;
}

/*
 * `activations`: comma-separated names, one set per direction (f, g, h in
 * that order, as many as the cell uses), for the forward direction first;
 * a single set serves both directions of a bidirectional layer.
 */
static bool read_activations(const kiln_node_attribute *a, cell_kind cell, recurrent_params *p, char *why,
                             size_t why_size)
{
    static const activation defaults[3][MAX_ACTIVATIONS] = {
        {ACTIVATION_TANH},
        {ACTIVATION_SIGMOID, ACTIVATION_TANH},
        {ACTIVATION_SIGMOID, ACTIVATION_TANH, ACTIVATION_TANH},
    };
    uint32_t per_direction = activation_count(cell);
    for (uint32_t d = 0; d < MAX_DIRECTIONS; d++)
        memcpy(p->activations[d], defaults[cell], sizeof p->activations[d]);
    if (!a)
        return true;
    activation listed[MAX_DIRECTIONS * MAX_ACTIVATIONS];
    uint32_t count = 0;
    const char *s = a->s ? a->s : "";
    for (;;) {
        size_t length = strcspn(s, ",");
        if (count == per_direction * p->directions) {
            snprintf(why, why_size, "activations \"%s\" names more than the %u functions of %u direction%s", a->s,
                     per_direction * p->directions, p->directions, p->directions == 1 ? "" : "s");
            return false;
        }
        if (!parse_activation(s, length, &listed[count])) {
            snprintf(why, why_size, "activation \"%.*s\" is not supported (supported: sigmoid, tanh, relu)",
                     (int)(length > 40 ? 40 : length), s);
            return false;
        }
        count++;
        if (s[length] == '\0')
            break;
        s += length + 1;
    }
    if (count != per_direction && count != per_direction * p->directions) {
        snprintf(why, why_size, "activations \"%s\" names %u functions; this layer takes %u per direction", a->s,
                 count, per_direction);
        return false;
    }
    for (uint32_t d = 0; d < p->directions; d++)
        for (uint32_t i = 0; i < per_direction; i++)
            p->activations[d][i] = listed[count == per_direction ? i : d * per_direction + i];
    return true;
}

static bool read_params(const kiln_node_attribute *attributes, uint32_t count, cell_kind cell, recurrent_params *p,
                        char *why, size_t why_size)
{
    memset(p, 0, sizeof *p);
    const kiln_node_attribute *hidden = kiln_attribute_find(attributes, count, "hidden_size");
    if (!hidden) {
        snprintf(why, why_size, "the attribute 'hidden_size' is required");
        return false;
    }
    if (hidden->i < 1 || hidden->i > MAX_HIDDEN_SIZE) {
        snprintf(why, why_size, "hidden_size = %lld is outside 1..%lld", (long long)hidden->i,
                 (long long)MAX_HIDDEN_SIZE);
        return false;
    }
    p->hidden = hidden->i;
    p->gates = gate_count(cell);
    const kiln_node_attribute *direction = kiln_attribute_find(attributes, count, "direction");
    const char *d = direction && direction->s ? direction->s : "forward";
    if (strcmp(d, "forward") == 0 || strcmp(d, "reverse") == 0) {
        p->directions = 1;
        p->reverse_only = d[0] == 'r';
    } else if (strcmp(d, "bidirectional") == 0) {
        p->directions = 2;
    } else {
        snprintf(why, why_size, "direction \"%.40s\" is not forward, reverse or bidirectional", d);
        return false;
    }
    p->layout = kiln_attribute_int(attributes, count, "layout", 0);
    if (p->layout != 0 && p->layout != 1) {
        snprintf(why, why_size, "layout = %lld is not 0 or 1", (long long)p->layout);
        return false;
    }
    const kiln_node_attribute *clip = kiln_attribute_find(attributes, count, "clip");
    p->clip = clip ? clip->f : INFINITY;
    if (isnan(p->clip) || p->clip <= 0) {
        snprintf(why, why_size, "clip = %g is not a positive threshold", p->clip);
        return false;
    }
    int64_t lbr = kiln_attribute_int(attributes, count, "linear_before_reset", 0);
    int64_t input_forget = kiln_attribute_int(attributes, count, "input_forget", 0);
    if (lbr != 0 && lbr != 1) {
        snprintf(why, why_size, "linear_before_reset = %lld is not 0 or 1", (long long)lbr);
        return false;
    }
    p->linear_before_reset = lbr == 1;
    if (input_forget != 0) {
        snprintf(why, why_size, "input_forget = %lld is not supported (only 0: uncoupled input and forget gates)",
                 (long long)input_forget);
        return false;
    }
    return read_activations(kiln_attribute_find(attributes, count, "activations"), cell, p, why, why_size);
}

/* ----------------------------------------------------------- shape rule */

static const char equal_advice[] = "Use the same dim (or the same constant) for both sizes";

/* Axis `axis` of input `name` (input `index`) has size `size` (an expression id), proven. */
static kiln_status prove_axis(const kiln_shape_context *ctx, const char *name, uint32_t index,
                              const kiln_value_type *t, uint32_t axis, uint32_t size, const char *size_name,
                              kiln_error *err)
{
    char have[128], want[128], what[400];
    kiln_format_size(ctx, t->shape.axes[axis], have, sizeof have);
    kiln_format_size(ctx, size, want, sizeof want);
    snprintf(what, sizeof what, "%s (input %u) axis %u size %s equals %s %s", name, index, axis, have, size_name,
             want);
    kiln_size_claim claim = {KILN_CLAIM_EQUAL, t->shape.axes[axis], size, 0};
    return kiln_prove_size_claim(ctx, &claim, what, equal_advice, err);
}

/* Input `name` has rank `rank` and axis sizes `sizes` (expression ids; `names` say what each is). */
static kiln_status prove_shape(const kiln_shape_context *ctx, const char *name, uint32_t index,
                               const kiln_value_type *t, uint32_t rank, const uint32_t *sizes,
                               const char *const *names, kiln_error *err)
{
    if (t->shape.rank != rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s (input %u) must have rank %u, got rank %u",
                         ctx->node_label, name, index, rank, t->shape.rank);
    for (uint32_t a = 0; a < rank; a++)
        KILN_TRY(prove_axis(ctx, name, index, t, a, sizes[a], names[a], err));
    return KILN_OK;
}

static kiln_status infer_recurrent(const kiln_shape_context *ctx, const recurrent_op *op,
                                   const kiln_value_type *const *inputs, uint32_t input_count,
                                   kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *x = inputs[IN_X];
    if (x->dtype != KILN_F32 && x->dtype != KILN_F64 && x->dtype != KILN_F16 && x->dtype != KILN_BF16)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: %s does not support dtype %s (it takes f32, f64, f16 or bf16)", ctx->node_label,
                         op->name, kiln_dtype_name(x->dtype));
    for (uint32_t i = 1; i < input_count; i++)
        KILN_TRY(kiln_require_same_dtype(ctx, x, inputs[i], err));
    recurrent_params p;
    char why[200];
    if (!read_params(ctx->attributes, ctx->attribute_count, op->cell, &p, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: %s", ctx->node_label, why);
    if (x->shape.rank != 3)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: x (input 0) must have rank 3, got rank %u",
                         ctx->node_label, x->shape.rank);
    uint32_t seq = x->shape.axes[p.layout == 0 ? 0 : 1], batch = x->shape.axes[p.layout == 0 ? 1 : 0];
    uint32_t input_size = x->shape.axes[2], dirs, hidden, gate_rows, bias_size, peephole_size;
    KILN_TRY(kiln_expr_const(ctx->pool, p.directions, &dirs, err));
    KILN_TRY(kiln_expr_const(ctx->pool, p.hidden, &hidden, err));
    KILN_TRY(kiln_expr_const(ctx->pool, p.gates * p.hidden, &gate_rows, err));
    KILN_TRY(kiln_expr_const(ctx->pool, 2 * p.gates * p.hidden, &bias_size, err));
    KILN_TRY(kiln_expr_const(ctx->pool, 3 * p.hidden, &peephole_size, err));

    const char *weight_names[3] = {"num_directions", "gates * hidden_size", "x's input size"};
    const char *recurrence_names[3] = {"num_directions", "gates * hidden_size", "hidden_size"};
    const char *bias_names[2] = {"num_directions", "2 * gates * hidden_size"};
    const char *peephole_names[2] = {"num_directions", "3 * hidden_size"};
    const char *state_names[2][3] = {{"num_directions", "x's batch size", "hidden_size"},
                                     {"x's batch size", "num_directions", "hidden_size"}};
    uint32_t weight_sizes[3] = {dirs, gate_rows, input_size};
    uint32_t recurrence_sizes[3] = {dirs, gate_rows, hidden};
    uint32_t bias_sizes[2] = {dirs, bias_size};
    uint32_t peephole_sizes[2] = {dirs, peephole_size};
    uint32_t state_sizes[3] = {dirs, batch, hidden};
    if (p.layout == 1) {
        state_sizes[0] = batch;
        state_sizes[1] = dirs;
    }
    KILN_TRY(prove_shape(ctx, "w", IN_W, inputs[IN_W], 3, weight_sizes, weight_names, err));
    KILN_TRY(prove_shape(ctx, "r", IN_R, inputs[IN_R], 3, recurrence_sizes, recurrence_names, err));
    if (input_count > IN_B)
        KILN_TRY(prove_shape(ctx, "b", IN_B, inputs[IN_B], 2, bias_sizes, bias_names, err));
    if (input_count > IN_INITIAL_H)
        KILN_TRY(prove_shape(ctx, "initial_h", IN_INITIAL_H, inputs[IN_INITIAL_H], 3, state_sizes,
                             state_names[p.layout], err));
    if (input_count > IN_INITIAL_C)
        KILN_TRY(prove_shape(ctx, "initial_c", IN_INITIAL_C, inputs[IN_INITIAL_C], 3, state_sizes,
                             state_names[p.layout], err));
    if (input_count > IN_P)
        KILN_TRY(prove_shape(ctx, "p", IN_P, inputs[IN_P], 2, peephole_sizes, peephole_names, err));

    out->dtype = x->dtype;
    if (op->result == RESULT_ALL_HIDDEN) {
        out->shape.rank = 4;
        uint32_t layout0[4] = {seq, dirs, batch, hidden}, layout1[4] = {batch, seq, dirs, hidden};
        memcpy(out->shape.axes, p.layout == 0 ? layout0 : layout1, sizeof layout0);
    } else {
        out->shape.rank = 3;
        memcpy(out->shape.axes, state_sizes, sizeof state_sizes);
    }
    return KILN_OK;
}

#define DEFINE_INFER(OP)                                                                                      \
    static kiln_status infer_##OP(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,      \
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)               \
    {                                                                                                         \
        return infer_recurrent(ctx, &op_##OP, inputs, input_count, out, err);                                \
    }
DEFINE_INFER(rnn)
DEFINE_INFER(rnn_last_hidden)
DEFINE_INFER(gru)
DEFINE_INFER(gru_last_hidden)
DEFINE_INFER(lstm)
DEFINE_INFER(lstm_last_hidden)
DEFINE_INFER(lstm_last_cell)

/* --------------------------------------------------------------- kernel */

/*
 * The node's scratch: for the reference kernel the state carried between
 * steps and the gates of one batch row (doubles); for the f32 fast path
 * its own block (fast_run) with the packed weights, which it keeps packed
 * across runs when they are program weights (packed_w, packed_r: the
 * operands they were packed from).
 */
typedef struct recurrent_scratch {
    double *block;
    size_t count; /* doubles */
    float *fast;
    size_t fast_count; /* floats */
    const void *packed_w, *packed_r;
} recurrent_scratch;

static void release_scratch(void *data)
{
    recurrent_scratch *scratch = data;
    if (scratch) {
        free(scratch->block);
        free(scratch->fast);
    }
    free(scratch);
}

/* The node's scratch grown to `count` doubles, or a new one owned by the caller (no session). */
static kiln_status get_scratch(const kiln_kernel_call *call, const char *op, size_t count,
                               recurrent_scratch **out, kiln_error *err)
{
    kiln_node_state *slot = call->context ? call->context->state : NULL;
    recurrent_scratch *scratch = slot ? slot->data : NULL;
    size_t bytes;
    if (!kiln_mul_size(count, sizeof(double), &bytes))
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: the recurrent state of %zu values is too large", op, count);
    if (!scratch) {
        scratch = calloc(1, sizeof *scratch);
        if (!scratch)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory for the recurrent state", op);
        if (slot) {
            slot->data = scratch;
            slot->release = release_scratch;
        }
    }
    if (scratch->count < count) {
        double *block = malloc(bytes ? bytes : 1);
        if (!block) {
            if (!slot)
                release_scratch(scratch);
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes of recurrent state", op,
                             bytes);
        }
        free(scratch->block);
        scratch->block = block;
        scratch->count = count;
    }
    *out = scratch;
    return KILN_OK;
}

/* An activation of a clipped input (ONNX clips the input of every activation). */
static double activate(activation f, double v, double clip)
{
    if (v > clip)
        v = clip;
    else if (v < -clip)
        v = -clip;
    switch (f) {
    case ACTIVATION_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case ACTIVATION_TANH: return tanh(v);
    default: return v > 0 ? v : (v < 0 ? 0.0 : v); /* relu; NaN stays NaN */
    }
}

/* The sizes of one run, read from x and checked against the other operands. */
/* The most multiply-adds a recurrence over an x without input features may take: about a second here. */
#define KILN_RECURRENT_EMPTY_INPUT_WORK 1e9

typedef struct run_sizes {
    size_t seq, batch, input, hidden, rows; /* rows = gates * hidden */
} run_sizes;

static kiln_status check_operand(const char *op, const char *name, const kiln_tensor *t, uint32_t rank,
                                 const size_t *sizes, kiln_error *err)
{
    if (t->rank != rank)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s has rank %u, not %u", op, name, t->rank, rank);
    for (uint32_t a = 0; a < rank; a++)
        if ((uint64_t)t->shape[a] != sizes[a])
            return kiln_fail(err, KILN_ERR_SHAPE_GUARD, "%s: %s axis %u has size %lld, not %zu", op, name, a,
                             (long long)t->shape[a], sizes[a]);
    return KILN_OK;
}

static kiln_status check_operands(const kiln_kernel_call *call, const recurrent_op *op, const recurrent_params *p,
                                  run_sizes *s, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[IN_X];
    uint32_t max_inputs = op->cell == CELL_LSTM ? 7 : 5;
    if (call->input_count < 3 || call->input_count > max_inputs)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %u inputs, not 3..%u", op->name, call->input_count,
                         max_inputs);
    if (x->dtype != KILN_F32 && x->dtype != KILN_F64)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: dtype %s", op->name, kiln_dtype_name(x->dtype));
    for (uint32_t i = 1; i < call->input_count; i++)
        if (call->inputs[i]->dtype != x->dtype)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: input %u is %s, x is %s", op->name, i,
                             kiln_dtype_name(call->inputs[i]->dtype), kiln_dtype_name(x->dtype));
    if (x->rank != 3)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: x has rank %u, not 3", op->name, x->rank);
    s->seq = (size_t)x->shape[p->layout == 0 ? 0 : 1];
    s->batch = (size_t)x->shape[p->layout == 0 ? 1 : 0];
    s->input = (size_t)x->shape[2];
    s->hidden = (size_t)p->hidden;
    s->rows = p->gates * s->hidden;
    size_t dirs = p->directions;
    size_t weight[3] = {dirs, s->rows, s->input}, recurrence[3] = {dirs, s->rows, s->hidden};
    size_t bias[2] = {dirs, 2 * s->rows}, peephole[2] = {dirs, 3 * s->hidden};
    size_t state[3] = {dirs, s->batch, s->hidden};
    if (p->layout == 1) {
        state[0] = s->batch;
        state[1] = dirs;
    }
    KILN_TRY(check_operand(op->name, "w", call->inputs[IN_W], 3, weight, err));
    KILN_TRY(check_operand(op->name, "r", call->inputs[IN_R], 3, recurrence, err));
    if (call->input_count > IN_B)
        KILN_TRY(check_operand(op->name, "b", call->inputs[IN_B], 2, bias, err));
    if (call->input_count > IN_INITIAL_H)
        KILN_TRY(check_operand(op->name, "initial_h", call->inputs[IN_INITIAL_H], 3, state, err));
    if (call->input_count > IN_INITIAL_C)
        KILN_TRY(check_operand(op->name, "initial_c", call->inputs[IN_INITIAL_C], 3, state, err));
    if (call->input_count > IN_P)
        KILN_TRY(check_operand(op->name, "p", call->inputs[IN_P], 2, peephole, err));
    if (call->output->dtype != x->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: output dtype does not match x", op->name);
    if (op->result == RESULT_ALL_HIDDEN) {
        size_t all0[4] = {s->seq, dirs, s->batch, s->hidden}, all1[4] = {s->batch, s->seq, dirs, s->hidden};
        return check_operand(op->name, "output", call->output, 4, p->layout == 0 ? all0 : all1, err);
    }
    return check_operand(op->name, "output", call->output, 3, state, err);
}

/* A recurrent node's operands, NULL where absent (zero). */
typedef struct recurrent_operands {
    const kiln_tensor *x, *w, *r, *b, *initial_h, *initial_c, *p;
} recurrent_operands;

static recurrent_operands operands_of(const kiln_kernel_call *call)
{
    return (recurrent_operands){
        .x = call->inputs[IN_X],
        .w = call->inputs[IN_W],
        .r = call->inputs[IN_R],
        .b = call->input_count > IN_B ? call->inputs[IN_B] : NULL,
        .initial_h = call->input_count > IN_INITIAL_H ? call->inputs[IN_INITIAL_H] : NULL,
        .initial_c = call->input_count > IN_INITIAL_C ? call->inputs[IN_INITIAL_C] : NULL,
        .p = call->input_count > IN_P ? call->inputs[IN_P] : NULL,
    };
}

/* Where everything of one direction is, and the scratch it computes in. */
typedef struct direction_run {
    recurrent_operands in;
    recurrent_results out;
    const recurrent_params *params;
    const activation *f; /* this direction's activations */
    run_sizes s;
    size_t d;
    double *h, *c; /* [batch][hidden] */
    double *gates; /* [rows]: one batch row's gate pre-activations, then values */
    double *reset_h; /* [hidden]: GRU r (.) h_prev */
} direction_run;

/* Offset of state element (d, b, j) in initial_h / initial_c / a last-state output. */
static size_t state_at(const direction_run *dr, size_t b, size_t j)
{
    size_t dirs = dr->params->directions;
    return dr->params->layout == 0 ? (dr->d * dr->s.batch + b) * dr->s.hidden + j
                                   : (b * dirs + dr->d) * dr->s.hidden + j;
}

static size_t x_at(const direction_run *dr, size_t t, size_t b)
{
    return dr->params->layout == 0 ? (t * dr->s.batch + b) * dr->s.input : (b * dr->s.seq + t) * dr->s.input;
}

static size_t y_at(const direction_run *dr, size_t t, size_t b)
{
    size_t dirs = dr->params->directions;
    return dr->params->layout == 0 ? ((t * dirs + dr->d) * dr->s.batch + b) * dr->s.hidden
                                   : ((b * dr->s.seq + t) * dirs + dr->d) * dr->s.hidden;
}

/* x_t · W[row] for gate row `row`. */
static double input_term(const direction_run *dr, size_t xt, size_t row)
{
    const size_t w_row = (dr->d * dr->s.rows + row) * dr->s.input;
    double sum = 0;
    for (size_t k = 0; k < dr->s.input; k++)
        sum += kiln_tensor_load_real(dr->in.x, xt + k) * kiln_tensor_load_real(dr->in.w, w_row + k);
    return sum;
}

/* v · R[row] for a hidden-sized vector v. */
static double recurrence_term(const direction_run *dr, const double *v, size_t row)
{
    const size_t r_row = (dr->d * dr->s.rows + row) * dr->s.hidden;
    double sum = 0;
    for (size_t k = 0; k < dr->s.hidden; k++)
        sum += v[k] * kiln_tensor_load_real(dr->in.r, r_row + k);
    return sum;
}

/* Wb[row] (recurrence = false) or Rb[row]; 0 without b. */
static double bias(const direction_run *dr, size_t row, bool recurrence)
{
    if (!dr->in.b)
        return 0;
    return kiln_tensor_load_real(dr->in.b, dr->d * 2 * dr->s.rows + (recurrence ? dr->s.rows : 0) + row);
}

/* One time step of batch row b: h (and c) of the row go from step t-1 to step t. */
static void step_row(direction_run *dr, cell_kind cell, size_t t, size_t b)
{
    const size_t H = dr->s.hidden, xt = x_at(dr, t, b);
    const double clip = dr->params->clip;
    double *h = dr->h + b * H, *c = dr->c + b * H, *g = dr->gates;
    if (cell == CELL_RNN) {
        for (size_t j = 0; j < H; j++)
            g[j] = input_term(dr, xt, j) + recurrence_term(dr, h, j) + bias(dr, j, false) + bias(dr, j, true);
        for (size_t j = 0; j < H; j++)
            h[j] = activate(dr->f[0], g[j], clip);
        return;
    }
    if (cell == CELL_GRU) {
        /* Gate rows: z, r, h (ONNX order). */
        for (size_t j = 0; j < 2 * H; j++)
            g[j] = activate(dr->f[0],
                            input_term(dr, xt, j) + recurrence_term(dr, h, j) + bias(dr, j, false) +
                                bias(dr, j, true),
                            clip);
        const double *z = g, *reset = g + H;
        double *candidate = g + 2 * H;
        if (dr->params->linear_before_reset) {
            for (size_t j = 0; j < H; j++)
                candidate[j] = input_term(dr, xt, 2 * H + j) + bias(dr, 2 * H + j, false) +
                               reset[j] * (recurrence_term(dr, h, 2 * H + j) + bias(dr, 2 * H + j, true));
        } else {
            for (size_t k = 0; k < H; k++)
                dr->reset_h[k] = reset[k] * h[k];
            for (size_t j = 0; j < H; j++)
                candidate[j] = input_term(dr, xt, 2 * H + j) + recurrence_term(dr, dr->reset_h, 2 * H + j) +
                               bias(dr, 2 * H + j, false) + bias(dr, 2 * H + j, true);
        }
        for (size_t j = 0; j < H; j++) {
            double hc = activate(dr->f[1], candidate[j], clip);
            h[j] = (1 - z[j]) * hc + z[j] * h[j];
        }
        return;
    }
    /* LSTM gate rows: i, o, f, c (ONNX order); peepholes p: i, o, f. */
    for (size_t j = 0; j < 4 * H; j++)
        g[j] = input_term(dr, xt, j) + recurrence_term(dr, h, j) + bias(dr, j, false) + bias(dr, j, true);
    const size_t p_row = dr->d * 3 * H;
    for (size_t j = 0; j < H; j++) {
        double pi = dr->in.p ? kiln_tensor_load_real(dr->in.p, p_row + j) : 0;
        double po = dr->in.p ? kiln_tensor_load_real(dr->in.p, p_row + H + j) : 0;
        double pf = dr->in.p ? kiln_tensor_load_real(dr->in.p, p_row + 2 * H + j) : 0;
        double i = activate(dr->f[0], g[j] + pi * c[j], clip);
        double f = activate(dr->f[0], g[2 * H + j] + pf * c[j], clip);
        double cell_input = activate(dr->f[1], g[3 * H + j], clip);
        c[j] = f * c[j] + i * cell_input;
        double o = activate(dr->f[0], g[H + j] + po * c[j], clip);
        h[j] = o * activate(dr->f[2], c[j], clip);
    }
}

/*
 * The reference recurrence of `op`'s cell writing `out` (the operands and
 * every result already checked, `p` and `s` from them).
 */
static kiln_status run_recurrent_into(const kiln_kernel_call *call, const recurrent_op *op,
                                      const recurrent_params *params, run_sizes s, recurrent_results out,
                                      kiln_error *err)
{
    recurrent_params p = *params;
    /* Empty results (batch 0 or hidden size 0) need no step: without
     * this, a sequence of 2^63-1 empty steps runs for ever. */
    if (results_empty(&out))
        return KILN_OK;
    /* With no input features (x [seq, batch, 0]) x holds no element, so its
     * size bounds nothing, yet a last-state op still has a result after
     * seq steps: an empty x of 2^63-1 steps would run for ever. Such a
     * recurrence is refused beyond about a second of work (spec/ops/recurrent.md). */
    if (s.input == 0) {
        double work = (double)s.seq * (double)s.batch * (double)s.rows * (double)s.hidden;
        if (work > KILN_RECURRENT_EMPTY_INPUT_WORK)
            return kiln_fail(err, KILN_ERR_LIMIT,
                             "%s: x has no input features, so its %zu steps read nothing; more than %.0f "
                             "multiply-adds of recurrence over no input are refused",
                             op->name, s.seq, (double)KILN_RECURRENT_EMPTY_INPUT_WORK);
    }
    /* Scratch: h and c of every batch row, one row's gates, GRU's r (.) h. */
    size_t state, count;
    if (!kiln_mul_size(s.batch, s.hidden, &state) || !kiln_mul_size(state, 2, &count) ||
        !kiln_add_size(count, s.rows + s.hidden, &count))
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: the recurrent state of batch %zu x hidden %zu is too large",
                         op->name, s.batch, s.hidden);
    recurrent_scratch *scratch = NULL;
    KILN_TRY(get_scratch(call, op->name, count, &scratch, err));
    direction_run dr = {
        .in = operands_of(call),
        .out = out,
        .params = &p,
        .s = s,
        .h = scratch->block,
        .c = scratch->block + state,
        .gates = scratch->block + 2 * state,
        .reset_h = scratch->block + 2 * state + s.rows,
    };
    for (size_t d = 0; d < p.directions; d++) {
        dr.d = d;
        dr.f = p.activations[d];
        bool reverse = p.reverse_only || d == 1;
        for (size_t b = 0; b < s.batch; b++)
            for (size_t j = 0; j < s.hidden; j++) {
                dr.h[b * s.hidden + j] = dr.in.initial_h ? kiln_tensor_load_real(dr.in.initial_h, state_at(&dr, b, j)) : 0;
                dr.c[b * s.hidden + j] = dr.in.initial_c ? kiln_tensor_load_real(dr.in.initial_c, state_at(&dr, b, j)) : 0;
            }
        for (size_t step = 0; step < s.seq; step++) {
            size_t t = reverse ? s.seq - 1 - step : step;
            for (size_t b = 0; b < s.batch; b++) {
                step_row(&dr, op->cell, t, b);
                if (out.all_hidden)
                    for (size_t j = 0; j < s.hidden; j++)
                        kiln_tensor_store_real(out.all_hidden, y_at(&dr, t, b) + j, dr.h[b * s.hidden + j]);
            }
        }
        for (size_t b = 0; b < s.batch; b++)
            for (size_t j = 0; j < s.hidden; j++) {
                if (out.last_hidden)
                    kiln_tensor_store_real(out.last_hidden, state_at(&dr, b, j), dr.h[b * s.hidden + j]);
                if (out.last_cell)
                    kiln_tensor_store_real(out.last_cell, state_at(&dr, b, j), dr.c[b * s.hidden + j]);
            }
    }
    /* Without a state slot to keep it in (no session), the scratch was this call's own. */
    if (!call->context || !call->context->state)
        release_scratch(scratch);
    return KILN_OK;
}

/* `op`'s attributes read into *p and the call's operands and result checked against them (sizes in *s). */
static kiln_status prepare(const kiln_kernel_call *call, const recurrent_op *op, recurrent_params *p, run_sizes *s,
                           kiln_error *err)
{
    char why[200];
    if (!read_params(call->attributes, call->attribute_count, op->cell, p, why, sizeof why))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: %s", op->name, why);
    return check_operands(call, op, p, s, err);
}

static kiln_status run_recurrent(const kiln_kernel_call *call, const recurrent_op *op, kiln_error *err)
{
    recurrent_params p;
    run_sizes s;
    KILN_TRY(prepare(call, op, &p, &s, err));
    return run_recurrent_into(call, op, &p, s, results_of(op, call->output), err);
}

/* ------------------------------------------------------------ fast path */

/*
 * The f32 fast path (spec/ops/recurrent.md, "Fast path"). The reference
 * kernel above forms every dot product in double, element by element
 * through the dtype-generic accessors, and recomputes x_t·Wᵀ inside the
 * recurrence: an embedding + 2-layer LSTM 128 (seq 32) ran 15.7x slower
 * than ONNX Runtime, a bidirectional GRU 64 (50 frames) 11.4x. This path
 * computes in f32: the input projection x·Wᵀ + biases of every step at
 * once before the recurrence (it does not depend on the state), then per
 * step one product of R, packed once in panels (recurrent_f32.h), with the
 * state, and the gate math over whole arrays with vectorized activations.
 * The two directions of a bidirectional layer are independent and run on
 * two threads when the session has them (above the product threshold).
 *
 * Why not oneDNN's RNN primitives: besides semantics they do not cover
 * (ONNX's gate order, peepholes with clip, relu, per-direction
 * activations), oneDNN 2.6's lstm_forward with weights packed once took
 * 0.266 ms (min of 2000) for the zoo's two LSTM 128 layers over 32 steps
 * on one thread, where this path runs the whole model in 0.19-0.20 ms;
 * its gru_forward took 0.074 ms for the two GRU 64 directions over 50
 * frames, this path 0.046 ms.
 *
 * Every per-gate array holds hp = H rounded up to 16 values (the panel
 * height), so each gate's rows are whole panels and each array starts
 * 64-byte aligned; the padding is never written to a result.
 */

/* One direction's arrays in the fast block. */
typedef struct fast_direction {
    float *w, *r;      /* packed panels: G gates of hp rows of input / H values */
    float *bias;       /* [G*hp]: Wb + Rb (GRU, linear_before_reset: Wb alone for gate h) */
    float *r_bias_h;   /* [hp]: Rb of the GRU's gate h (linear_before_reset) */
    float *peephole;   /* [3*hp]: p_i, p_o, p_f (zero without p) */
    float *projection; /* [x rows][G*hp]: x·Wᵀ + bias of every row of x */
    float *h, *c;      /* [batch][hp]: the state */
    float *gates;      /* [batch][G*hp]: the gates of one step */
    float *work;       /* [batch][hp]: GRU r (.) h; LSTM h(C) */
} fast_direction;

/*
 * Sizes of the fast block, in floats, each checked against overflow. The
 * block holds first the packed w and r of every direction (`weights`
 * each), whose sizes do not depend on the run's sequence length or batch,
 * so a program weight packed by one run is where the next run looks for
 * it whatever its sizes; then the rest of every direction (`rest` each).
 */
typedef struct fast_sizes {
    size_t hp, gate_rows, w, r, projection, state, gates, weights, rest;
} fast_sizes;

static bool fast_block_sizes(const run_sizes *s, const recurrent_params *p, fast_sizes *f, size_t *total)
{
    f->hp = kiln_panel_rows(s->hidden);
    size_t rows_of_x, all_weights, all_rest;
    if (!kiln_mul_size(p->gates, f->hp, &f->gate_rows) || !kiln_mul_size(f->gate_rows, s->input, &f->w) ||
        !kiln_mul_size(f->gate_rows, s->hidden, &f->r) || !kiln_mul_size(s->seq, s->batch, &rows_of_x) ||
        !kiln_mul_size(rows_of_x, f->gate_rows, &f->projection) || !kiln_mul_size(s->batch, f->hp, &f->state) ||
        !kiln_mul_size(s->batch, f->gate_rows, &f->gates) || !kiln_add_size(f->w, f->r, &f->weights))
        return false;
    size_t parts[] = {f->gate_rows, f->hp, 3 * f->hp, f->projection, f->state, f->state, f->gates, f->state};
    f->rest = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!kiln_add_size(f->rest, parts[i], &f->rest))
            return false;
    return kiln_mul_size(f->weights, p->directions, &all_weights) && kiln_mul_size(f->rest, p->directions, &all_rest) &&
           kiln_add_size(all_weights, all_rest, total);
}

/* Direction d's arrays in a block of `directions` directions. */
static void carve_direction(float *block, const fast_sizes *f, size_t directions, size_t d, fast_direction *fd)
{
    fd->w = block + d * f->weights;
    fd->r = fd->w + f->w;
    fd->bias = block + directions * f->weights + d * f->rest;
    fd->r_bias_h = fd->bias + f->gate_rows;
    fd->peephole = fd->r_bias_h + f->hp;
    fd->projection = fd->peephole + 3 * f->hp;
    fd->h = fd->projection + f->projection;
    fd->c = fd->h + f->state;
    fd->gates = fd->c + f->state;
    fd->work = fd->gates + f->gates;
}

/* Everything one direction's run reads. */
typedef struct fast_run {
    const recurrent_op *op;
    const recurrent_params *params;
    run_sizes s;
    fast_sizes f;
    recurrent_operands in;
    recurrent_results out;
    bool pack_w, pack_r; /* pack this run (else packed by an earlier run of the session) */
    fast_direction dir[MAX_DIRECTIONS];
} fast_run;

/* The fast path's activation for the reference's. */
static kiln_recurrent_activation fast_activation(activation f)
{
    return f == ACTIVATION_SIGMOID ? KILN_RECURRENT_SIGMOID
           : f == ACTIVATION_TANH  ? KILN_RECURRENT_TANH
                                   : KILN_RECURRENT_RELU;
}

/* Pack the weights, biases, peepholes and initial state of direction d, and project x. */
static void fast_prepare(const fast_run *run, size_t d)
{
    const run_sizes *s = &run->s;
    const fast_sizes *f = &run->f;
    const fast_direction *fd = &run->dir[d];
    const size_t H = s->hidden, G = run->params->gates;
    const bool split_h = run->op->cell == CELL_GRU && run->params->linear_before_reset;
    for (size_t g = 0; g < G; g++) {
        if (run->pack_w)
            kiln_pack_panels((const float *)run->in.w->data + (d * G + g) * H * s->input, H, s->input,
                             fd->w + g * f->hp * s->input);
        if (run->pack_r)
            kiln_pack_panels((const float *)run->in.r->data + (d * G + g) * H * H, H, H, fd->r + g * f->hp * H);
    }
    const float *b = run->in.b ? (const float *)run->in.b->data + d * 2 * s->rows : NULL;
    memset(fd->bias, 0, f->gate_rows * sizeof(float));
    memset(fd->r_bias_h, 0, f->hp * sizeof(float));
    for (size_t g = 0; g < G && b; g++)
        for (size_t j = 0; j < H; j++) {
            bool recurrence_apart = split_h && g == 2;
            fd->bias[g * f->hp + j] = recurrence_apart ? b[g * H + j] : b[g * H + j] + b[s->rows + g * H + j];
            if (recurrence_apart)
                fd->r_bias_h[j] = b[s->rows + g * H + j];
        }
    memset(fd->peephole, 0, 3 * f->hp * sizeof(float));
    if (run->in.p)
        for (size_t g = 0; g < 3; g++)
            memcpy(fd->peephole + g * f->hp, (const float *)run->in.p->data + (d * 3 + g) * H, H * sizeof(float));
    memset(fd->h, 0, 2 * f->state * sizeof(float));
    size_t dirs = run->params->directions;
    for (size_t bi = 0; bi < s->batch; bi++) {
        size_t at = run->params->layout == 0 ? (d * s->batch + bi) * H : (bi * dirs + d) * H;
        if (run->in.initial_h)
            memcpy(fd->h + bi * f->hp, (const float *)run->in.initial_h->data + at, H * sizeof(float));
        if (run->in.initial_c)
            memcpy(fd->c + bi * f->hp, (const float *)run->in.initial_c->data + at, H * sizeof(float));
    }
    kiln_panels_gemm(fd->w, f->gate_rows / KILN_PANEL_ROWS, s->input, run->in.x->data, s->input, s->seq * s->batch,
                     fd->bias, 0, fd->projection, f->gate_rows);
}

/*
 * Step t of every batch row: h (and c) go from the previous step to this
 * one. The products of R with the batch's states run as one product over
 * the batch (a block of R stays in cache while the rows pass), then the
 * gate math row by row.
 */
/*
 * The LSTM gates of step t for the hidden units of panels [p0, p1) of each
 * gate (i, o, f, c, ONNX order): x's projection plus R times the state,
 * every batch row. A row's sum is the same whichever panels a call takes.
 */
static void lstm_gates(const fast_run *run, const fast_direction *fd, size_t t, size_t p0, size_t p1)
{
    const size_t H = run->s.hidden, B = run->s.batch, hp = run->f.hp, rows = run->f.gate_rows;
    const size_t xp_stride = run->params->layout == 0 ? rows : run->s.seq * rows;
    const float *xp = fd->projection + (run->params->layout == 0 ? t * B : t) * rows;
    for (size_t g = 0; g < 4 && p1 > p0; g++) {
        size_t first = g * hp + p0 * KILN_PANEL_ROWS;
        kiln_panels_gemm(fd->r + first * H, p1 - p0, H, fd->h, hp, B, xp + first, xp_stride, fd->gates + first,
                         rows);
    }
}

/* The LSTM's new state of hidden units [j0, j1) from the gates of the step, every batch row. */
static void lstm_update(const fast_run *run, const fast_direction *fd, const activation *acts, size_t j0, size_t j1)
{
    const size_t B = run->s.batch, hp = run->f.hp, rows = run->f.gate_rows, n = j1 - j0;
    const float clip = (float)run->params->clip;
    kiln_recurrent_activation f0 = fast_activation(acts[0]);
    /* Peepholes i, o, f. */
    const float *pi = fd->peephole + j0, *po = fd->peephole + hp + j0, *pf = fd->peephole + 2 * hp + j0;
    for (size_t b = 0; b < B && n > 0; b++) {
        float *g = fd->gates + b * rows + j0, *h = fd->h + b * hp + j0, *c = fd->c + b * hp + j0;
        float *work = fd->work + b * hp + j0;
        float *gi = g, *go = g + hp, *gf = g + 2 * hp, *gc = g + 3 * hp;
        if (run->in.p) {
            KILN_SIMD for (size_t j = 0; j < n; j++) {
                gi[j] += pi[j] * c[j];
                gf[j] += pf[j] * c[j];
            }
        }
        kiln_recurrent_activate(f0, clip, gi, n);
        kiln_recurrent_activate(f0, clip, gf, n);
        kiln_recurrent_activate(fast_activation(acts[1]), clip, gc, n);
        KILN_SIMD for (size_t j = 0; j < n; j++)
            c[j] = gf[j] * c[j] + gi[j] * gc[j];
        if (run->in.p) {
            KILN_SIMD for (size_t j = 0; j < n; j++)
                go[j] += po[j] * c[j];
        }
        kiln_recurrent_activate(f0, clip, go, n);
        memcpy(work, c, n * sizeof(float));
        kiln_recurrent_activate(fast_activation(acts[2]), clip, work, n);
        KILN_SIMD for (size_t j = 0; j < n; j++)
            h[j] = go[j] * work[j];
    }
}

static void fast_step(const fast_run *run, const fast_direction *fd, const activation *acts, size_t t)
{
    const size_t H = run->s.hidden, B = run->s.batch, hp = run->f.hp, rows = run->f.gate_rows;
    const size_t panels = hp / KILN_PANEL_ROWS;
    const float clip = (float)run->params->clip;
    /* The projections of step t: rows t*B + b (layout 0) or b*seq + t (layout 1) of the projection. */
    const size_t xp_stride = run->params->layout == 0 ? rows : run->s.seq * rows;
    const float *xp = fd->projection + (run->params->layout == 0 ? t * B : t) * rows;
    kiln_recurrent_activation f0 = fast_activation(acts[0]);
    switch (run->op->cell) {
    case CELL_RNN:
        kiln_panels_gemm(fd->r, panels, H, fd->h, hp, B, xp, xp_stride, fd->gates, rows);
        for (size_t b = 0; b < B; b++) {
            kiln_recurrent_activate(f0, clip, fd->gates + b * rows, H);
            memcpy(fd->h + b * hp, fd->gates + b * rows, H * sizeof(float));
        }
        return;
    case CELL_GRU: {
        /* Gates z, r, h (ONNX order). */
        const float *r_h = fd->r + 2 * hp * H;
        kiln_panels_gemm(fd->r, 2 * panels, H, fd->h, hp, B, xp, xp_stride, fd->gates, rows);
        for (size_t b = 0; b < B; b++) {
            kiln_recurrent_activate(f0, clip, fd->gates + b * rows, H);
            kiln_recurrent_activate(f0, clip, fd->gates + b * rows + hp, H);
        }
        if (run->params->linear_before_reset) {
            kiln_panels_gemm(r_h, panels, H, fd->h, hp, B, fd->r_bias_h, 0, fd->gates + 2 * hp, rows);
            for (size_t b = 0; b < B; b++) {
                const float *reset = fd->gates + b * rows + hp, *x_h = xp + b * xp_stride + 2 * hp;
                float *candidate = fd->gates + b * rows + 2 * hp;
                KILN_SIMD for (size_t j = 0; j < H; j++)
                    candidate[j] = x_h[j] + reset[j] * candidate[j];
            }
        } else {
            for (size_t b = 0; b < B; b++) {
                const float *reset = fd->gates + b * rows + hp, *h = fd->h + b * hp;
                float *work = fd->work + b * hp;
                KILN_SIMD for (size_t j = 0; j < H; j++)
                    work[j] = reset[j] * h[j];
            }
            kiln_panels_gemm(r_h, panels, H, fd->work, hp, B, xp + 2 * hp, xp_stride, fd->gates + 2 * hp, rows);
        }
        for (size_t b = 0; b < B; b++) {
            const float *z = fd->gates + b * rows;
            float *candidate = fd->gates + b * rows + 2 * hp, *h = fd->h + b * hp;
            kiln_recurrent_activate(fast_activation(acts[1]), clip, candidate, H);
            KILN_SIMD for (size_t j = 0; j < H; j++)
                h[j] = (1 - z[j]) * candidate[j] + z[j] * h[j];
        }
        return;
    }
    case CELL_LSTM:
        lstm_gates(run, fd, t, 0, panels);
        lstm_update(run, fd, acts, 0, H);
        return;
    }
}

/* Hidden units [j0, j1) of direction d's state after step t into the result holding every step's (if any). */
static void store_step(const fast_run *run, size_t d, size_t t, size_t j0, size_t j1)
{
    const run_sizes *s = &run->s;
    const recurrent_params *p = run->params;
    const size_t H = s->hidden, dirs = p->directions;
    float *y = run->out.all_hidden ? run->out.all_hidden->data : NULL;
    for (size_t b = 0; b < s->batch && y && j1 > j0; b++) {
        size_t at = p->layout == 0 ? ((t * dirs + d) * s->batch + b) * H : ((b * s->seq + t) * dirs + d) * H;
        memcpy(y + at + j0, run->dir[d].h + b * run->f.hp + j0, (j1 - j0) * sizeof(float));
    }
}

/* Direction d's last state into the results that take it. */
static void store_last_state(const fast_run *run, size_t d)
{
    const run_sizes *s = &run->s;
    const fast_direction *fd = &run->dir[d];
    const recurrent_params *p = run->params;
    const size_t H = s->hidden, hp = run->f.hp, dirs = p->directions;
    for (size_t b = 0; b < s->batch; b++) {
        size_t at = p->layout == 0 ? (d * s->batch + b) * H : (b * dirs + d) * H;
        if (run->out.last_hidden)
            memcpy((float *)run->out.last_hidden->data + at, fd->h + b * hp, H * sizeof(float));
        if (run->out.last_cell)
            memcpy((float *)run->out.last_cell->data + at, fd->c + b * hp, H * sizeof(float));
    }
}

/* Direction d of the layer, start to end. */
static void fast_direction_run(const fast_run *run, size_t d)
{
    const recurrent_params *p = run->params;
    fast_prepare(run, d);
    bool reverse = p->reverse_only || d == 1;
    for (size_t step = 0; step < run->s.seq; step++) {
        size_t t = reverse ? run->s.seq - 1 - step : step;
        fast_step(run, &run->dir[d], p->activations[d], t);
        store_step(run, d, t, 0, run->s.hidden);
    }
    store_last_state(run, d);
}

/*
 * Direction d of an LSTM layer with its steps split over a team
 * (lstm_split): member i of n takes the i-th share of each gate's
 * panels, computes their gates and then the new state of their hidden
 * units, the team meeting twice a step: once every member has read the
 * old state (the products), and once the new state is whole. A step of
 * hidden 128 (512 x 128 multiply-adds, about 2.8 us on one core, the
 * matrix streamed from L2) then takes half as long on two, plus two
 * barriers. The same operations on every element as fast_direction_run:
 * the same bits.
 */
typedef struct split_job {
    const fast_run *run;
    size_t d;
} split_job;

static void split_member(const void *vjob, uint32_t index, uint32_t count)
{
    const split_job *job = vjob;
    const fast_run *run = job->run;
    const recurrent_params *p = run->params;
    size_t panels = run->f.hp / KILN_PANEL_ROWS, share = (panels + count - 1) / count;
    size_t p0 = index * share < panels ? index * share : panels;
    size_t p1 = p0 + share < panels ? p0 + share : panels;
    size_t H = run->s.hidden, j0 = p0 * KILN_PANEL_ROWS, j1 = p1 * KILN_PANEL_ROWS;
    j0 = j0 < H ? j0 : H, j1 = j1 < H ? j1 : H;
    bool reverse = p->reverse_only || job->d == 1;
    for (size_t step = 0; step < run->s.seq; step++) {
        size_t t = reverse ? run->s.seq - 1 - step : step;
        lstm_gates(run, &run->dir[job->d], t, p0, p1);
        kiln_team_barrier(); /* every member has read the old state */
        lstm_update(run, &run->dir[job->d], p->activations[job->d], j0, j1);
        store_step(run, job->d, t, j0, j1);
        kiln_team_barrier(); /* the new state is whole */
    }
}

static void fast_direction_run_split(const fast_run *run, size_t d, uint32_t threads)
{
    fast_prepare(run, d);
    split_job job = {run, d};
    kiln_parallel_team(threads, split_member, &job);
    store_last_state(run, d);
}

/*
 * Whether an LSTM's steps split over the session's threads: with spinning
 * waits (a sleeping thread takes tens of microseconds to wake, longer
 * than a step) and at least 2^15 multiply-adds a step, two panels a
 * member at least. Measured on the zoo's 2-layer LSTM of hidden 128 (one
 * direction, batch 1, 32 steps): 0.200 ms a run on one thread.
 */
static uint32_t lstm_split(const kiln_kernel_call *call, const fast_run *run)
{
    uint32_t threads = kiln_call_threads(call);
    double step = 4.0 * (double)run->f.hp * (double)run->s.hidden * (double)run->s.batch;
    size_t panels = run->f.hp / KILN_PANEL_ROWS;
    if (run->op->cell != CELL_LSTM || !kiln_threads_spin() || threads < 2 || step < 32768.0 || panels < 4)
        return 1;
    return threads < panels / 2 ? threads : (uint32_t)(panels / 2);
}

/*
 * Whether the two directions of a bidirectional layer, each of `work`
 * multiply-adds, run on two threads: from 2^21 when OpenMP's threads spin
 * and 2^24 when they sleep at once (spec/opset.md, "Fast paths"). Below it a second thread costs more than it
 * saves: the zoo's bidirectional GRU 64 (1.0M multiply-adds a direction)
 * ran 0.082 ms on two threads with passive waits against 0.070 ms on one.
 */
static bool directions_in_parallel(const kiln_kernel_call *call, double work)
{
    double threshold = kiln_threads_spin() ? 2097152.0 : 16777216.0;
    return kiln_call_threads(call) >= 2 && work >= threshold;
}

/* The node's fast block, grown to `count` floats; *moved when it was (re)allocated. */
static kiln_status fast_block(recurrent_scratch *scratch, const char *op, size_t count, bool *moved, kiln_error *err)
{
    *moved = false;
    if (scratch->fast && scratch->fast_count >= count)
        return KILN_OK;
    size_t bytes;
    if (!kiln_mul_size(count, sizeof(float), &bytes) || !kiln_add_size(bytes, 63, &bytes))
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: the recurrent state of %zu values is too large", op, count);
    float *block = aligned_alloc(64, bytes / 64 * 64);
    if (!block)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes of recurrent state", op,
                         bytes);
    free(scratch->fast);
    scratch->fast = block;
    scratch->fast_count = count;
    scratch->packed_w = scratch->packed_r = NULL;
    *moved = true;
    return KILN_OK;
}

static bool operand_is_constant(const kiln_kernel_call *call, uint32_t i)
{
    return (call->context->constant_operands >> i) & 1u;
}

/* Whether the f32 fast path may run `call` at all (a session's, not asking for reference kernels). */
static bool fast_allowed(const kiln_kernel_call *call)
{
    return call->context && call->context->state && !call->context->reference_only &&
           call->inputs[IN_X]->dtype == KILN_F32;
}

/* The fast recurrence writing `out` (operands and results checked); declines (*ran false) as fast_recurrent does. */
static kiln_status fast_recurrent_into(const kiln_kernel_call *call, const recurrent_op *op,
                                       const recurrent_params *params, run_sizes s, recurrent_results out,
                                       bool *ran, kiln_error *err)
{
    *ran = false;
    recurrent_params p = *params;
    /* Empty results and x without input features: the reference's rules (and its limit). */
    bool some_empty = (out.all_hidden && out.all_hidden->element_count == 0) ||
                      (out.last_hidden && out.last_hidden->element_count == 0) ||
                      (out.last_cell && out.last_cell->element_count == 0);
    if (some_empty || s.input == 0)
        return KILN_OK;
    fast_run run = {
        .op = op,
        .params = &p,
        .s = s,
        .in = operands_of(call),
        .out = out,
    };
    size_t total;
    if (!fast_block_sizes(&s, &p, &run.f, &total))
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: the recurrent state of seq %zu x batch %zu x hidden %zu is too large",
                         op->name, s.seq, s.batch, s.hidden);
    recurrent_scratch *scratch;
    KILN_TRY(get_scratch(call, op->name, 0, &scratch, err));
    bool moved;
    KILN_TRY(fast_block(scratch, op->name, total, &moved, err));
    /* A program weight is at the same address, unchanged, on every run of the session (kernel_context.h). */
    run.pack_w = !(operand_is_constant(call, IN_W) && scratch->packed_w == run.in.w->data);
    run.pack_r = !(operand_is_constant(call, IN_R) && scratch->packed_r == run.in.r->data);
    for (size_t d = 0; d < p.directions; d++)
        carve_direction(scratch->fast, &run.f, p.directions, d, &run.dir[d]);
    double work = (double)s.seq * (double)s.batch * (double)s.rows * (double)(s.input + s.hidden);
    if (p.directions == 2 && directions_in_parallel(call, work)) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(2) schedule(static, 1)
#endif
        for (int d = 0; d < 2; d++)
            fast_direction_run(&run, (size_t)d);
    } else {
        uint32_t team = lstm_split(call, &run);
        for (size_t d = 0; d < p.directions; d++) {
            if (team > 1)
                fast_direction_run_split(&run, d, team);
            else
                fast_direction_run(&run, d);
        }
    }
    scratch->packed_w = operand_is_constant(call, IN_W) ? run.in.w->data : NULL;
    scratch->packed_r = operand_is_constant(call, IN_R) ? run.in.r->data : NULL;
    call->context->path = KILN_PATH_VECTOR;
    *ran = true;
    return KILN_OK;
}

static kiln_status fast_recurrent(const kiln_kernel_call *call, const recurrent_op *op, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!fast_allowed(call))
        return KILN_OK;
    recurrent_params p;
    run_sizes s;
    KILN_TRY(prepare(call, op, &p, &s, err));
    return fast_recurrent_into(call, op, &p, s, results_of(op, call->output), ran, err);
}

#define DEFINE_FAST(OP)                                                                                       \
    static kiln_status fast_##OP(const kiln_kernel_call *call, bool *ran, kiln_error *err)                  \
    {                                                                                                         \
        return fast_recurrent(call, &op_##OP, ran, err);                                                      \
    }
DEFINE_FAST(rnn)
DEFINE_FAST(rnn_last_hidden)
DEFINE_FAST(gru)
DEFINE_FAST(gru_last_hidden)
DEFINE_FAST(lstm)
DEFINE_FAST(lstm_last_hidden)
DEFINE_FAST(lstm_last_cell)

#define DEFINE_RUN(OP)                                                                                        \
    static kiln_status run_##OP(const kiln_kernel_call *call, kiln_error *err)                              \
    {                                                                                                         \
        KILN_HALF_IN_F32(call, run_##OP, err);                                                                \
        return run_recurrent(call, &op_##OP, err);                                                            \
    }
DEFINE_RUN(rnn)
DEFINE_RUN(rnn_last_hidden)
DEFINE_RUN(gru)
DEFINE_RUN(gru_last_hidden)
DEFINE_RUN(lstm)
DEFINE_RUN(lstm_last_hidden)
DEFINE_RUN(lstm_last_cell)

/* Each op's kernel and what it computes: how a group's members are told apart. */
static const struct {
    kiln_kernel run;
    const recurrent_op *op;
} kin[] = {
    {run_rnn, &op_rnn},   {run_rnn_last_hidden, &op_rnn_last_hidden},   {run_gru, &op_gru},
    {run_gru_last_hidden, &op_gru_last_hidden},   {run_lstm, &op_lstm},
    {run_lstm_last_hidden, &op_lstm_last_hidden}, {run_lstm_last_cell, &op_lstm_last_cell},
};

/*
 * A group of one cell's ops over the same operands (result_groups.h): one
 * recurrence writes every member's result, on the fast path where it
 * takes the call, else the reference. Half-precision operands run member
 * by member (their f32 copies are per result).
 */
static kiln_status run_recurrent_together(const kiln_kernel_call *call, kiln_tensor *const *results,
                                          const kiln_op_def *const *ops, uint32_t count, kiln_error *err)
{
    /* Half-precision operands: member by member (their f32 copies are per result). */
    if (kiln_call_holds_half(call)) {
        for (uint32_t i = 0; i < count; i++) {
            kiln_kernel_call alone = *call;
            alone.output = results[i];
            KILN_TRY(ops[i]->run(&alone, err));
        }
        return KILN_OK;
    }
    recurrent_results out = {NULL, NULL, NULL};
    const recurrent_op *first = NULL;
    recurrent_params p;
    run_sizes s;
    for (uint32_t i = 0; i < count; i++) {
        const recurrent_op *op = NULL;
        for (size_t k = 0; k < sizeof kin / sizeof kin[0] && !op; k++)
            op = kin[k].run == ops[i]->run ? kin[k].op : NULL;
        if (!op || (first && op->cell != first->cell))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: not a recurrent op of this group", ops[i]->name);
        first = first ? first : op;
        kiln_kernel_call member = *call;
        member.output = results[i];
        KILN_TRY(prepare(&member, op, &p, &s, err));
        recurrent_results r = results_of(op, results[i]);
        out.all_hidden = r.all_hidden ? r.all_hidden : out.all_hidden;
        out.last_hidden = r.last_hidden ? r.last_hidden : out.last_hidden;
        out.last_cell = r.last_cell ? r.last_cell : out.last_cell;
    }
    if (!first)
        return KILN_OK;
    if (fast_allowed(call)) {
        bool ran;
        KILN_TRY(fast_recurrent_into(call, first, &p, s, out, &ran, err));
        if (ran)
            return KILN_OK;
    }
    return run_recurrent_into(call, first, &p, s, out, err);
}

/* One together kernel per cell: the groups (result_groups.h) are the ops sharing it. */
#define DEFINE_TOGETHER(CELL)                                                                                 \
    static kiln_status CELL##_together(const kiln_kernel_call *call, kiln_tensor *const *results,            \
                                       const kiln_op_def *const *ops, uint32_t count, kiln_error *err)       \
    {                                                                                                         \
        return run_recurrent_together(call, results, ops, count, err);                                        \
    }
DEFINE_TOGETHER(rnn)
DEFINE_TOGETHER(gru)
DEFINE_TOGETHER(lstm)

static const kiln_op_def recurrent_ops[] = {
    {.name = "rnn", .versions = {1, 1}, .inputs = {3, 5}, .attributes = rnn_attributes,
     .infer = infer_rnn, .run = run_rnn,
     .fast = fast_rnn, .together = rnn_together},
    {.name = "rnn_last_hidden", .versions = {1, 1}, .inputs = {3, 5}, .attributes = rnn_attributes,
     .infer = infer_rnn_last_hidden, .run = run_rnn_last_hidden,
     .fast = fast_rnn_last_hidden, .together = rnn_together},
    {.name = "gru", .versions = {1, 1}, .inputs = {3, 5}, .attributes = gru_attributes,
     .infer = infer_gru, .run = run_gru,
     .fast = fast_gru, .together = gru_together},
    {.name = "gru_last_hidden", .versions = {1, 1}, .inputs = {3, 5}, .attributes = gru_attributes,
     .infer = infer_gru_last_hidden, .run = run_gru_last_hidden,
     .fast = fast_gru_last_hidden, .together = gru_together},
    {.name = "lstm", .versions = {1, 1}, .inputs = {3, 7}, .attributes = lstm_attributes,
     .infer = infer_lstm, .run = run_lstm,
     .fast = fast_lstm, .together = lstm_together},
    {.name = "lstm_last_hidden", .versions = {1, 1}, .inputs = {3, 7}, .attributes = lstm_attributes,
     .infer = infer_lstm_last_hidden, .run = run_lstm_last_hidden,
     .fast = fast_lstm_last_hidden, .together = lstm_together},
    {.name = "lstm_last_cell", .versions = {1, 1}, .inputs = {3, 7}, .attributes = lstm_attributes,
     .infer = infer_lstm_last_cell, .run = run_lstm_last_cell,
     .fast = fast_lstm_last_cell, .together = lstm_together},
};

const kiln_op_family kiln_ops_recurrent = KILN_OP_FAMILY(recurrent_ops, "spec/ops/recurrent.md");
