/*
 * onednn_window.c — f32 conv and conv_transpose through oneDNN's
 * convolution and deconvolution, max_pool, avg_pool and the global pools
 * through its pooling (onednn.h): the descriptors, the checks that decide
 * when oneDNN gives the op's result (special values, fused activations,
 * carried bounds: value_bound.h), channels-last operands and results
 * (layout.h) and batch slices (onednn_entry.c, build_slices).
 *
 * Conv describes kiln's x, weight and y by their shapes (a grouped weight
 * [M, C/group, k...] is [group, M/group, C/group, k...] read row-major)
 * but lets oneDNN choose the layouts it computes in. Pooling reads x and
 * writes y as they are, row-major or channels-last.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "onednn_entry.h"
#include "parallel.h"
#include "window.h"

static _Atomic uint64_t fused_runs;
static _Atomic uint64_t channels_last_runs;
static _Atomic uint64_t magnitude_scans;

uint64_t kiln_onednn_fused_runs(void)
{
    return atomic_load(&fused_runs);
}

uint64_t kiln_onednn_channels_last_runs(void)
{
    return atomic_load(&channels_last_runs);
}

uint64_t kiln_onednn_magnitude_scans(void)
{
    return atomic_load(&magnitude_scans);
}

/* Tell the session the entry left its result channels-last (kernel_context.h). */
static void report_layout(const kiln_kernel_call *call, const primitive_entry *e)
{
    call->context->wrote_channels_last = e->dst_channels_last;
    if (e->dst_channels_last)
        atomic_fetch_add(&channels_last_runs, 1);
}

/* ------------------------------------------------------ conv and pooling */

/*
 * The largest |v| of an f32 tensor, or +inf if it holds an infinity or a
 * NaN: the one pass that finds both what `onednn_exceeds` finds and a bound to
 * carry to the nodes after (kernel_context.h, operand_bound). Blocks of a
 * fixed size with a max reduction the compiler vectorizes (1 MB: about
 * 1.4 times an `onednn_exceeds` pass).
 */
static float block_magnitude(const float *v, int *special)
{
    float m = 0.0f;
    int found = 0;
#ifdef _OPENMP
#pragma omp simd reduction(max : m) reduction(| : found)
#endif
    for (int i = 0; i < ONEDNN_SCAN_BLOCK; i++) {
        float a = fabsf(v[i]);
        found |= !(a <= FLT_MAX);
        m = a > m ? a : m;
    }
    *special |= found;
    return m;
}

static float magnitude(const kiln_tensor *t)
{
    const float *v = t->data;
    uint64_t n = t->element_count, i = 0;
    float m = 0.0f;
    int special = 0;
    atomic_fetch_add(&magnitude_scans, 1);
    for (; n - i >= ONEDNN_SCAN_BLOCK; i += ONEDNN_SCAN_BLOCK) {
        float block = block_magnitude(v + i, &special);
        m = block > m ? block : m;
    }
    for (; i < n; i++) {
        float a = fabsf(v[i]);
        special |= !(a <= FLT_MAX);
        m = a > m ? a : m;
    }
    return special ? INFINITY : m;
}

/* The bound on |x| the session carries for operand 0 (rounded up to an f32), or one pass over x when it has none. */
static float operand_magnitude(const kiln_kernel_call *call)
{
    double known = call->context->operand_bound;
    if (!(known <= FLT_MAX))
        return magnitude(call->inputs[0]);
    float rounded = (float)known;
    return (double)rounded < known ? nextafterf(rounded, INFINITY) : rounded;
}

/*
 * The spatial attributes in oneDNN's terms: dilation counts the gaps
 * (kiln's dilation - 1), and the end pad is the one that makes oneDNN's
 * size rule give y's extent. For conv and pools that rule is
 * out = (in + pads - dilated) / stride + 1 rounded down: a ceil_mode window
 * past the declared end pad widens the end pad. For conv_transpose it is
 * out = (in - 1) * stride + dilated - pads, so output_padding (and an
 * output_shape) come out as a smaller, possibly negative, end pad.
 * @return false when a size overflows.
 */
static bool window_dims(const kiln_window_axes *w, bool transposed, const kiln_tensor *x, const kiln_tensor *y,
                        dnnl_dims_t strides, dnnl_dims_t kernel, dnnl_dims_t gaps, dnnl_dims_t pad_l, dnnl_dims_t pad_r)
{
    for (uint32_t a = 0; a < w->spatial; a++) {
        int64_t in = x->shape[a + 2], out = y->shape[a + 2];
        int64_t dilated = (w->kernel[a] - 1) * w->dilations[a] + 1;
        int64_t reach; /* conv: pad end at which the last window ends exactly */
        if (transposed) {
            if (in < 1 || __builtin_mul_overflow(in - 1, w->strides[a], &reach) ||
                __builtin_add_overflow(reach, dilated - w->pad_begin[a], &reach) ||
                __builtin_sub_overflow(reach, out, &pad_r[a]))
                return false;
        } else {
            if (out < 1 || __builtin_mul_overflow(out - 1, w->strides[a], &reach) ||
                __builtin_add_overflow(reach, dilated - in - w->pad_begin[a], &reach))
                return false;
            pad_r[a] = reach > w->pad_end[a] ? reach : w->pad_end[a];
        }
        strides[a] = w->strides[a];
        kernel[a] = w->kernel[a];
        gaps[a] = w->dilations[a] - 1;
        pad_l[a] = w->pad_begin[a];
    }
    return true;
}

/* Row-major f32 descriptor of a tensor's own shape. */
static bool describe_tensor(dnnl_memory_desc_t *md, const kiln_tensor *t)
{
    dnnl_dims_t dims, strides;
    for (uint32_t i = 0; i < t->rank; i++)
        dims[i] = t->shape[i];
    onednn_row_major_strides((int)t->rank, dims, strides);
    return onednn_describe(md, (int)t->rank, dims, strides);
}

/* Channels-last f32 descriptor of t's shape [N, C, spatial...] (layout.h): C varies fastest, then space, then N. */
static bool describe_channels_last(dnnl_memory_desc_t *md, const kiln_tensor *t)
{
    if (t->rank < 3)
        return describe_tensor(md, t);
    dnnl_dims_t dims, strides;
    for (uint32_t i = 0; i < t->rank; i++)
        dims[i] = t->shape[i];
    dnnl_dim_t stride = dims[1] > 0 ? dims[1] : 1;
    strides[1] = 1;
    for (uint32_t a = t->rank; a-- > 2;) {
        strides[a] = stride;
        stride *= dims[a] > 0 ? dims[a] : 1;
    }
    strides[0] = stride;
    return onednn_describe(md, (int)t->rank, dims, strides);
}

/* A tensor's descriptor in the layout it has now. */
static bool describe_in_layout(dnnl_memory_desc_t *md, const kiln_tensor *t, bool channels_last)
{
    return channels_last ? describe_channels_last(md, t) : describe_tensor(md, t);
}

/* Whether operand 0 of the call is channels-last now (kernel_context.h). */
static bool source_is_channels_last(const kiln_kernel_call *call)
{
    return call->context->channels_last_operands & 1u;
}

/*
 * For a fused conv: the largest sum of |w| over the taps of one output
 * channel (weight [M, C/group, k...]: a row of C/group * volume values),
 * and the largest |bias|. Both operands are finite program weights.
 */
static void conv_bounds(const kiln_tensor *weight, const kiln_tensor *bias, double *row_bound, double *bias_bound)
{
    const float *w = weight->data;
    uint64_t rows = (uint64_t)weight->shape[0], row = weight->element_count / rows;
    *row_bound = 0;
    for (uint64_t m = 0; m < rows; m++) {
        double sum = 0;
        for (uint64_t i = 0; i < row; i++)
            sum += fabs((double)w[m * row + i]);
        *row_bound = sum > *row_bound ? sum : *row_bound;
    }
    *bias_bound = 0;
    for (uint64_t i = 0; bias && i < bias->element_count; i++) {
        double b = fabs((double)((const float *)bias->data)[i]);
        *bias_bound = b > *bias_bound ? b : *bias_bound;
    }
}

/*
 * The largest |x| a fused conv of `terms` products per result may meet,
 * from the bounds conv_bounds gives: with |x| <= it, the largest magnitude
 * any partial sum can reach exactly, |x| * row_bound + bias_bound, stays
 * below FLT_MAX / 4, slack for rounding (which grows a partial sum by a
 * factor under 2 for fewer than 2^22 terms; longer sums never fuse).
 * Rounded down to an f32.
 */
static float finite_input_limit(uint64_t terms, double row_bound, double bias_bound)
{
    double limit = (double)FLT_MAX / 4 - bias_bound;
    if (limit <= 0 || terms >= (UINT64_C(1) << 22))
        return 0.0f;
    if (row_bound == 0)
        return FLT_MAX; /* still finite: 0 * inf is NaN */
    limit /= row_bound;
    if (limit >= (double)FLT_MAX)
        return FLT_MAX;
    float rounded = (float)limit;
    return (double)rounded > limit ? nextafterf(rounded, 0.0f) : rounded;
}

/*
 * How many batch slices (build_slices) a conv or pool entry of `threads`
 * threads runs as: the session's thread count when it divides the batch.
 * With spinning waits (kiln_threads_spin) a conv or pool whose x or y
 * holds at least SLICE_MIN_BYTES is split even when its work alone would
 * run on one thread, so that consecutive nodes split their batch alike: a
 * pool otherwise reads on one core what two had written (a small CNN of
 * 16 images on 2 threads: 0.33 ms split by work alone, 0.20 ms split
 * alike). Smaller tensors stay in the cores' caches, and there a parallel
 * region per node costs more than it saves (a CNN of 8 16x16 images:
 * 0.045 ms whole, 0.061 ms split). With passive waits, where waking a
 * thread costs tens of microseconds, only entries that would use several
 * threads anyway are split.
 */
enum { SLICE_MIN_BYTES = 1 << 18 };

static uint32_t batch_slices(const kiln_kernel_call *call, uint32_t threads, int64_t batch)
{
    const kiln_tensor *x = call->inputs[0], *y = call->output;
    bool large =
        (x->element_count > y->element_count ? x->element_count : y->element_count) * sizeof(float) >= SLICE_MIN_BYTES;
    uint32_t slices = kiln_threads_spin() && large ? kiln_call_threads(call) : threads;
    return slices > 1 && slices <= MAX_SLICES && batch >= (int64_t)slices && batch % slices == 0 ? slices : 1;
}

/* t with its batch axis divided into `slices` (only its shape is meaningful, for describing). */
static kiln_tensor batch_slice(const kiln_tensor *t, uint32_t slices)
{
    kiln_tensor slice = *t;
    slice.shape[0] /= slices;
    return slice;
}

typedef union convolution_desc {
    dnnl_convolution_desc_t conv;
    dnnl_deconvolution_desc_t deconv;
} convolution_desc;

/*
 * oneDNN's descriptor of the conv (deconvolution when `transposed`) of x
 * into y: layouts `any`, for oneDNN to pick, but for a pointwise conv
 * (convolution_entry), which reads and writes kiln's row-major buffers.
 */
static bool describe_convolution(convolution_desc *d, bool transposed, bool pointwise, const kiln_tensor *x,
                                 const kiln_tensor *y, const dnnl_memory_desc_t *weight_any,
                                 const dnnl_memory_desc_t *bias_md, const dnnl_dim_t *strides, const dnnl_dim_t *gaps,
                                 const dnnl_dim_t *pad_l, const dnnl_dim_t *pad_r)
{
    dnnl_memory_desc_t x_md, y_md;
    dnnl_dims_t x_dims, y_dims;
    for (uint32_t i = 0; i < x->rank; i++)
        x_dims[i] = x->shape[i], y_dims[i] = y->shape[i];
    bool ok = pointwise ? describe_tensor(&x_md, x) && describe_tensor(&y_md, y)
                        : onednn_describe_any(&x_md, (int)x->rank, x_dims) &&
                              onednn_describe_any(&y_md, (int)y->rank, y_dims);
    /* oneDNN refuses what it cannot do (e.g. a negative pad): the reference runs it. */
    if (ok && transposed)
        return dnnl_dilated_deconvolution_forward_desc_init(&d->deconv, dnnl_forward_inference,
                                                            dnnl_deconvolution_direct, &x_md, weight_any, bias_md,
                                                            &y_md, strides, gaps, pad_l, pad_r) == dnnl_success;
    return ok && dnnl_dilated_convolution_forward_desc_init(&d->conv, dnnl_forward_inference, dnnl_convolution_direct,
                                                            &x_md, weight_any, bias_md, &y_md, strides, gaps, pad_l,
                                                            pad_r) == dnnl_success;
}

/*
 * conv, or conv_transpose (`transposed`): oneDNN's convolution or
 * deconvolution. kiln's conv weight [M, C/G, k...] is oneDNN's
 * (g, o, i, k...) read row-major; its conv_transpose weight [C, M/G, k...]
 * is [G, C/G, M/G, k...] row-major, so oneDNN's (g, o = M/G, i = C/G, k...)
 * with the o and i strides swapped. Either way nothing is copied.
 */
static kiln_status convolution_entry(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                                     bool transposed, const kiln_fused_activation *activation,
                                     bool y_may_be_channels_last, primitive_entry **out, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1];
    const kiln_tensor *bias = call->input_count > 2 ? call->inputs[2] : NULL;
    kiln_tensor *y = call->output;
    const char *what = transposed ? "conv_transpose" : "conv";
    /* A program weight is scanned once, here; a weight that is an input
     * on every run, by the caller (run_convolution). */
    bool constant_weight = onednn_operand_is_constant(call, 1);
    bool x_channels_last = source_is_channels_last(call);
    int64_t kind = transposed ? KEY_CONV_TRANSPOSE : activation ? KEY_CONV_FUSED : KEY_CONV;
    kind |= (x_channels_last ? KEY_SRC_CHANNELS_LAST : 0) | (y_may_be_channels_last ? KEY_DST_MAY_BE_CHANNELS_LAST : 0);
    primitive_entry *e;
    bool fresh;
    KILN_TRY(onednn_entry_for(call, kind, x, weight, bias, y, &e, &fresh, err));
    *out = e;
    if (fresh && constant_weight && onednn_exceeds(weight, FLT_MAX)) {
        e->refused = true;
    } else if (fresh) {
        /* Program weights and bias: bounds on |y| follow from one on |x| (conv_result_bound). */
        if (!transposed && constant_weight && (!bias || onednn_operand_is_constant(call, 2))) {
            e->bounded = true;
            e->terms = weight->element_count / (uint64_t)weight->shape[0];
            conv_bounds(weight, bias, &e->row_bound, &e->bias_bound);
        }
        if (activation) {
            e->activation = *activation;
            e->input_limit = finite_input_limit(e->terms, e->row_bound, e->bias_bound);
        }
        /* With groups the weight gains a leading group axis g. */
        int grouped = group > 1, weight_rank = (int)weight->rank + grouped;
        int64_t outputs = transposed ? weight->shape[1] : weight->shape[0] / group;
        int64_t inputs = transposed ? weight->shape[0] / group : weight->shape[1];
        uint64_t volume = weight->element_count / (uint64_t)(weight->shape[0] * weight->shape[1]);
        dnnl_dims_t weight_dims, weight_strides, bias_dims = {y->shape[1]}, bias_strides = {1};
        dnnl_dims_t strides, kernel, gaps, pad_l, pad_r;
        weight_dims[0] = group;
        weight_dims[grouped] = outputs;
        weight_dims[grouped + 1] = inputs;
        for (uint32_t i = 2; i < weight->rank; i++)
            weight_dims[i + grouped] = weight->shape[i];
        onednn_row_major_strides(weight_rank, weight_dims, weight_strides);
        if (transposed) {
            weight_strides[grouped] = (dnnl_dim_t)volume;
            weight_strides[grouped + 1] = (dnnl_dim_t)((uint64_t)outputs * volume);
        }
        /* Multiply-adds: conv sums C/G * volume products per output
         * element; conv_transpose spreads each input element over M/G * volume. */
        double work = transposed ? (double)x->element_count * (double)outputs * (double)volume
                                 : (double)y->element_count * (double)inputs * (double)volume;
        e->threads = onednn_product_threads(call, work);
        dnnl_memory_desc_t x_md, weight_md, bias_md, y_md, y_channels_last, weight_any;
        /*
         * Layouts `any`: oneDNN's blocked convolutions beat its plain ones
         * by about 1.7x here even with x, the weight and y reordered on
         * every run (measured with oneDNN 2.6 on AVX-512). A program
         * weight is reordered on the first run only.
         */
        e->weights_constant = constant_weight;
        bool described = window_dims(window, transposed, x, y, strides, kernel, gaps, pad_l, pad_r) &&
                         describe_in_layout(&x_md, x, x_channels_last) &&
                         onednn_describe(&weight_md, weight_rank, weight_dims, weight_strides) &&
                         onednn_describe(&bias_md, 1, bias_dims, bias_strides) && describe_tensor(&y_md, y) &&
                         describe_channels_last(&y_channels_last, y) &&
                         onednn_describe_any(&weight_any, weight_rank, weight_dims);
        /*
         * A pointwise conv (1x1 kernel, stride 1, no pads, one group) is a
         * matrix product per image on kiln's plain layout: oneDNN then
         * runs it as a GEMM with no reorder in or out: a MobileNetV2 run
         * measured 1.3x faster (its blocked 1x1 convs spent as long in
         * reorders as in products), a ResNet-18 and a small CNN the same.
         * A channels-last x is read as it is, with nothing to reorder.
         */
        bool pointwise = !transposed && group == 1 && volume == 1 && !x_channels_last;
        for (uint32_t a = 0; pointwise && a < window->spatial; a++)
            pointwise = window->strides[a] == 1 && window->pad_begin[a] == 0 && window->pad_end[a] == 0;
        /* oneDNN 2.6's GEMM convolution applies eltwise post-ops in a loop
         * of its own, slower than kiln's activation after it (a fused
         * MobileNetV2 measured 2.7x slower): a pointwise pair runs unfused.
         * swish too, though kiln's silu costs more than relu6: EfficientNet's
         * 1x1 expansions (24 -> 144 channels at 56x56, 40 -> 240 at 28x28,
         * 192 -> 1152 at 7x7) measured 2.7x to 6x slower fused. */
        if (pointwise && activation)
            described = false;
        convolution_desc whole, part;
        const dnnl_memory_desc_t *bias_used = bias ? &bias_md : NULL;
        described = described && describe_convolution(&whole, transposed, pointwise, x, y, &weight_any, bias_used,
                                                      strides, gaps, pad_l, pad_r);
        slice_request slices = {&part, batch_slices(call, e->threads, x->shape[0])};
        if (described && slices.count > 1) {
            kiln_tensor x_part = batch_slice(x, slices.count), y_part = batch_slice(y, slices.count);
            if (!describe_convolution(&part, transposed, pointwise, &x_part, &y_part, &weight_any, bias_used, strides,
                                      gaps, pad_l, pad_r))
                slices.count = 1;
        }
        if (!described)
            e->refused = true;
        else
            KILN_TRY(onednn_build_entry(call->context->onednn, e, &whole, true, what, &x_md, &weight_md, bias_used,
                                        &y_md, y_may_be_channels_last ? &y_channels_last : NULL, &slices, 1.0f, 0.0f,
                                        err));
    }
    return KILN_OK;
}

/*
 * A bound on |y| for entry e's conv of an x with |x| <= x_bound, its fused
 * activation applied; +inf when none is known. The conv's computed result
 * lies within its rounding bound (spec/opset.md) of the exact one, whose
 * magnitude is at most x_bound * row_bound + bias_bound; the factor
 * doubles that slack.
 */
static double conv_result_bound(const primitive_entry *e, double x_bound)
{
    if (!e->bounded || !(x_bound <= FLT_MAX))
        return INFINITY;
    double y = (x_bound * e->row_bound + e->bias_bound) * (1 + ((double)e->terms + 2) * 0x1p-22);
    if (e->activation.kind == KILN_ACTIVATION_LEAKY_RELU)
        y *= fmax(1.0, fabs((double)e->activation.alpha));
    if (e->activation.kind == KILN_ACTIVATION_CLIP)
        y = fmin(y, fmax(fabs((double)e->activation.lo), fabs((double)e->activation.hi)));
    /* |silu(v)| <= max(|v|, 0.27847) for finite v (its least value is
     * -0.27846, at v = -1.2785), and the fused silu is within 8 ulp of
     * silu (spec/opset.md): 8 * 2^-23 of its magnitude. */
    if (e->activation.kind == KILN_ACTIVATION_SILU)
        y = fmax(y, 0.2785) * (1 + 0x1p-20);
    /* |hard_swish(v)| <= max(|v|, 0.375) (its least value is -0.375, at
     * v = -1.5), and the fused one is within 4 ulp of it (spec/opset.md). */
    if (e->activation.kind == KILN_ACTIVATION_HARD_SWISH)
        y = fmax(y, 0.375) * (1 + 0x1p-21);
    return y <= FLT_MAX ? y : INFINITY;
}

/*
 * Run a conv or conv_transpose call through its cached primitive. A conv
 * offered the next node's activation (fusion.h) applies it when the
 * weight and bias are program weights and the conv's result is finite
 * for this x (finite_input_limit): there oneDNN's eltwise computes the
 * op's value, or for silu a value within the bound spec/opset.md states
 * (NaN and infinities, which it handles otherwise, cannot occur).
 * Otherwise the plain primitive runs and the activation node runs after it.
 */
static kiln_status run_convolution(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                                   bool transposed, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!onednn_fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1];
    const kiln_tensor *bias = call->input_count > 2 ? call->inputs[2] : NULL;
    const char *what = transposed ? "conv_transpose" : "conv";
    /*
     * A weight that is an input may change between runs, so it is scanned
     * on each. A program weight never changes: it is scanned once, when
     * its entry is built (a pass over a ResNet-18's weights on every run
     * had cost 6% of a batch-1 run), and one holding a special value
     * leaves the entry refused, to the reference.
     */
    bool constant_weight = onednn_operand_is_constant(call, 1);
    if (!constant_weight && onednn_exceeds(weight, FLT_MAX))
        return KILN_OK;
    primitive_entry *e;
    kiln_fusion_offer *offer = transposed ? NULL : call->context->fusion;
    if (offer && constant_weight && (!bias || onednn_operand_is_constant(call, 2))) {
        KILN_TRY(convolution_entry(call, window, group, false, &offer->activation, offer->output_may_be_channels_last,
                                   &e, err));
        float x_bound = e->refused ? INFINITY : operand_magnitude(call);
        if (x_bound <= e->input_limit) {
            KILN_TRY(onednn_execute_entry(call->context->onednn, e, what, x->data, weight->data,
                                          bias ? bias->data : NULL, offer->output->data, err));
            offer->applied = true;
            report_layout(call, e);
            call->context->result_bound = conv_result_bound(e, x_bound);
            atomic_fetch_add(&fused_runs, 1);
            kiln_call_report_path(call, KILN_PATH_ONEDNN);
            *ran = true;
            return KILN_OK;
        }
    }
    KILN_TRY(convolution_entry(call, window, group, transposed, NULL,
                               !transposed && call->context->result_may_be_channels_last, &e, err));
    if (e->refused)
        return KILN_OK;
    KILN_TRY(onednn_execute_entry(call->context->onednn, e, what, x->data, weight->data, bias ? bias->data : NULL,
                                  call->output->data, err));
    report_layout(call, e);
    call->context->result_bound = conv_result_bound(e, call->context->operand_bound);
    kiln_call_report_path(call, KILN_PATH_ONEDNN);
    *ran = true;
    return KILN_OK;
}

kiln_status kiln_onednn_conv(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group, bool *ran,
                             kiln_error *err)
{
    return run_convolution(call, window, group, false, ran, err);
}

kiln_status kiln_onednn_conv_transpose(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                                       bool *ran, kiln_error *err)
{
    return run_convolution(call, window, group, true, ran, err);
}

/*
 * Whether oneDNN's pooling of these extents is the op's: every window sees
 * at least one input element (the op's max of none is -inf and its
 * average of none NaN, which oneDNN does not reproduce), and with
 * count_include_pad no window passes the declared end pad (the op counts
 * the taps inside the declared pads, oneDNN the whole kernel).
 */
static bool pool_fits(const kiln_window_axes *w, const kiln_tensor *x, const kiln_tensor *y,
                      kiln_onednn_pool_kind kind, const dnnl_dims_t pad_r)
{
    for (uint32_t a = 0; a < w->spatial; a++) {
        if (kind == KILN_ONEDNN_POOL_AVG_INCLUDE_PAD && pad_r[a] > w->pad_end[a])
            return false;
        for (int64_t o = 0; o < y->shape[a + 2]; o++) {
            int64_t first, last;
            kiln_window_taps(o * w->strides[a] - w->pad_begin[a], w->dilations[a], w->kernel[a], x->shape[a + 2],
                             &first, &last);
            if (first == last)
                return false;
        }
    }
    return true;
}

kiln_status kiln_onednn_pool(const kiln_kernel_call *call, const kiln_window_axes *window, kiln_onednn_pool_kind kind,
                             bool *ran, kiln_error *err)
{
    *ran = false;
    if (!onednn_fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *y = call->output;
    /* oneDNN's max pooling may skip a NaN: a bound on |x| shows there is none, else one pass. */
    double x_bound = call->context->operand_bound;
    if (kind == KILN_ONEDNN_POOL_MAX && !(x_bound <= FLT_MAX)) {
        x_bound = magnitude(x);
        if (!(x_bound <= FLT_MAX) && onednn_exceeds(x, INFINITY))
            return KILN_OK;
    }
    bool x_channels_last = source_is_channels_last(call);
    bool y_may_be_channels_last = x_channels_last && call->context->result_may_be_channels_last;
    int64_t key_kind = (KEY_POOL + (int64_t)kind) | (x_channels_last ? KEY_SRC_CHANNELS_LAST : 0) |
                       (y_may_be_channels_last ? KEY_DST_MAY_BE_CHANNELS_LAST : 0);
    double volume = 1;
    for (uint32_t a = 0; a < window->spatial; a++)
        volume *= (double)window->kernel[a];
    primitive_entry *e;
    bool fresh;
    KILN_TRY(onednn_entry_for(call, key_kind, x, NULL, NULL, y, &e, &fresh, err));
    if (fresh) {
        static const dnnl_alg_kind_t algorithms[] = {dnnl_pooling_max, dnnl_pooling_avg_exclude_padding,
                                                     dnnl_pooling_avg_include_padding};
        dnnl_dims_t strides, kernel, gaps, pad_l, pad_r;
        e->threads = onednn_product_threads(call, (double)y->element_count * volume);
        /* A channels-last x is pooled into a channels-last result, reordered
         * to row-major after unless that result may stay channels-last. */
        dnnl_memory_desc_t x_md, y_md, y_pooled, x_part_md, y_part_md;
        dnnl_pooling_v2_desc_t whole, part;
        slice_request slices = {&part, batch_slices(call, e->threads, x->shape[0])};
        kiln_tensor x_part = batch_slice(x, slices.count), y_part = batch_slice(y, slices.count);
        if (!window_dims(window, false, x, y, strides, kernel, gaps, pad_l, pad_r) ||
            !pool_fits(window, x, y, kind, pad_r) || !describe_in_layout(&x_md, x, x_channels_last) ||
            !describe_tensor(&y_md, y) || !describe_in_layout(&y_pooled, y, x_channels_last) ||
            !describe_in_layout(&x_part_md, &x_part, x_channels_last) ||
            !describe_in_layout(&y_part_md, &y_part, x_channels_last) ||
            dnnl_pooling_v2_forward_desc_init(&whole, dnnl_forward_inference, algorithms[kind], &x_md, &y_pooled,
                                              strides, kernel, gaps, pad_l, pad_r) != dnnl_success)
            e->refused = true;
        if (!e->refused && slices.count > 1 &&
            dnnl_pooling_v2_forward_desc_init(&part, dnnl_forward_inference, algorithms[kind], &x_part_md, &y_part_md,
                                              strides, kernel, gaps, pad_l, pad_r) != dnnl_success)
            slices.count = 1;
        if (!e->refused)
            KILN_TRY(onednn_build_entry(call->context->onednn, e, &whole, true, "pooling", &x_md, NULL, NULL, &y_md,
                                        y_may_be_channels_last ? &y_pooled : NULL, &slices, 1.0f, 0.0f, err));
    }
    if (e->refused)
        return KILN_OK;
    KILN_TRY(onednn_execute_entry(call->context->onednn, e, "pooling", x->data, NULL, NULL, y->data, err));
    report_layout(call, e);
    /* A max is one of the x; an average of K of them within its rounding bound (spec/opset.md) of one. */
    double y_bound = kind == KILN_ONEDNN_POOL_MAX ? x_bound : x_bound * (1 + (volume + 2) * 0x1p-22);
    call->context->result_bound = y_bound <= FLT_MAX ? y_bound : INFINITY;
    kiln_call_report_path(call, KILN_PATH_ONEDNN);
    *ran = true;
    return KILN_OK;
}
