/*
 * conv_folded.c — a strided 1-D conv of one input channel (a raw
 * waveform's first layer) folded into a conv of `stride` channels and
 * stride 1 before oneDNN runs it (conv_folded.h).
 *
 * Why: oneDNN's direct convolution gives such a conv (one input channel,
 * a long kernel, stride s) little to work with: per output element one
 * channel of K taps, read s elements apart. M5's first layer (1 -> 32
 * channels, kernel 80, stride 4, 2001 outputs) ran at 28 G multiply-adds
 * a second on one core, a third of what its next convs reach. Read as a
 * channels-last [N, s, W/s] tensor (the same memory: element t s + c of
 * the signal is channel c of position t), x convolved with the weight
 * w'[m, c, j] = w[m, 0, j s + c] at stride 1 gives the same outputs: output
 * t sums x[(t + j - pb/s) s + c] w[j s + c] over j and c, which is
 * x[t s + k - pb] w[k] over k = j s + c, the conv's own sum; a tap is
 * padding in one exactly when it is in the other. oneDNN then has s
 * input channels and K/s taps: the same products, another order of the
 * sum, within the conv's bound (spec/opset.md).
 */
#include "conv_folded.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tensor.h"

static _Atomic uint64_t folded_runs;

uint64_t kiln_conv_folded_runs(void)
{
    return atomic_load(&folded_runs);
}

/*
 * What a folded node keeps between runs: the rearranged weight (built
 * once: the weight is a program weight) and the slot where oneDNN keeps
 * its primitives for this node, folded or not.
 */
typedef struct folded_state {
    float *weight; /* [M, s, K/s]; NULL until the first folded run */
    int64_t stride;
    kiln_node_state primitives;
} folded_state;

static void release_folded(void *data)
{
    folded_state *f = data;
    if (!f)
        return;
    if (f->primitives.release)
        f->primitives.release(f->primitives.data);
    free(f->weight);
    free(f);
}

/* Whether the node's call may fold at these extents: the rest of the test beside kiln_conv_folds. */
static bool folds_here(const kiln_tensor *x, const kiln_tensor *weight, const kiln_window_axes *w)
{
    int64_t s = w->strides[0];
    return s >= 2 && s <= 64 && w->dilations[0] == 1 && x->shape[2] % s == 0 && weight->shape[2] % s == 0 &&
           w->pad_begin[0] % s == 0 && w->pad_end[0] % s == 0;
}

bool kiln_conv_folds(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group)
{
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1];
    return call->context && call->context->state && window->spatial == 1 && group == 1 && x->rank == 3 &&
           weight->rank == 3 && weight->shape[1] == 1 && (call->context->constant_operands >> 1 & 1u) &&
           (call->input_count < 3 || (call->context->constant_operands >> 2 & 1u));
}

/* The node's folded state, made on its first call. */
static kiln_status state_of(const kiln_kernel_call *call, folded_state **out, kiln_error *err)
{
    kiln_node_state *slot = call->context->state;
    if (!slot->data) {
        folded_state *f = calloc(1, sizeof *f);
        if (!f)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "conv: out of memory for its folded state");
        slot->data = f;
        slot->release = release_folded;
    }
    *out = slot->data;
    return KILN_OK;
}

/* w'[m, c, j] = w[m, 0, j s + c], built on the first folded run (the weight never changes). */
static kiln_status fold_weight(folded_state *f, const kiln_tensor *weight, int64_t s, kiln_error *err)
{
    if (f->weight && f->stride == s)
        return KILN_OK;
    free(f->weight);
    f->weight = malloc(weight->byte_size ? weight->byte_size : 1);
    if (!f->weight)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "conv: out of memory folding a %zu-byte weight",
                         weight->byte_size);
    f->stride = s;
    const float *w = weight->data;
    int64_t outputs = weight->shape[0], taps = weight->shape[2], columns = taps / s;
    for (int64_t m = 0; m < outputs; m++)
        for (int64_t c = 0; c < s; c++)
            for (int64_t j = 0; j < columns; j++)
                f->weight[(m * s + c) * columns + j] = w[m * taps + j * s + c];
    return KILN_OK;
}

kiln_status kiln_conv_folded(const kiln_kernel_call *call, const kiln_window_axes *window, bool *ran,
                             kiln_error *err)
{
    *ran = false;
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1];
    folded_state *f = NULL;
    KILN_TRY(state_of(call, &f, err));
    /* The node's primitives live in the folded state's slot, whichever way this call runs. */
    kiln_kernel_context inner = *call->context;
    inner.state = &f->primitives;
    kiln_kernel_call folded_call = *call;
    folded_call.context = &inner;
    kiln_window_axes folded_window = *window;
    kiln_tensor x_view, weight_view;
    const kiln_tensor *operands[3] = {&x_view, &weight_view, call->input_count > 2 ? call->inputs[2] : NULL};
    bool folds = folds_here(x, weight, window);
    if (folds) {
        int64_t s = window->strides[0];
        KILN_TRY(fold_weight(f, weight, s, err));
        int64_t x_shape[3] = {x->shape[0], s, x->shape[2] / s};
        int64_t weight_shape[3] = {weight->shape[0], s, weight->shape[2] / s};
        kiln_tensor_view_init(&x_view, KILN_F32, 3, x_shape, x->data);
        kiln_tensor_view_init(&weight_view, KILN_F32, 3, weight_shape, f->weight);
        folded_call.inputs = operands;
        /* One channel is the same memory in either layout: read it as channels-last [N, W/s, s]. */
        inner.channels_last_operands = 1u;
        folded_window.kernel[0] = weight_shape[2];
        folded_window.strides[0] = 1;
        folded_window.pad_begin[0] = window->pad_begin[0] / s;
        folded_window.pad_end[0] = window->pad_end[0] / s;
    }
    KILN_TRY(kiln_onednn_conv(&folded_call, &folded_window, 1, ran, err));
    if (folds && *ran)
        atomic_fetch_add(&folded_runs, 1);
    /* What the kernel reports of its run goes back to the session's context. */
    call->context->wrote_channels_last = inner.wrote_channels_last;
    call->context->result_bound = inner.result_bound;
    call->context->path = inner.path;
    return KILN_OK;
}
