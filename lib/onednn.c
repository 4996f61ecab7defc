/*
 * onednn.c — f32 matmul and gemm through oneDNN's matmul primitive, conv
 * and conv_transpose through its convolution and deconvolution, max_pool
 * and avg_pool through its pooling (onednn.h), with primitives cached per
 * node and shape.
 *
 * Why this shape of code: creating a oneDNN primitive costs far more than
 * running a small one (it picks a kernel, may JIT-compile it and sizes a
 * scratchpad), so it must happen once per node and shape, not per run.
 * Each node's slot holds up to CACHE_ENTRIES entries, each with its
 * primitive, the memory objects it reads and writes (their buffers are
 * re-pointed at the operands on every run) and its scratchpad; when the
 * cache is full the least recently used entry is replaced.
 *
 * Shapes: kiln tensors are row-major and contiguous, so every operand is
 * described by dims and row-major strides; a rank-1 matmul operand becomes
 * a 1-row (a) or 1-column (b) matrix, and batch axes are left-padded with
 * 1 to a common rank, which is how oneDNN broadcasts batch axes. Gemm's
 * transposes are strides only: nothing is copied. Pooling reads x and
 * writes y as plain NC(D)(H)W. Conv describes kiln's x, weight and y the
 * same way (a grouped weight [M, C/group, k...] is [group, M/group,
 * C/group, k...] read row-major) but lets oneDNN choose the layouts it
 * computes in: an entry then holds buffers of those layouts and the
 * reorders between them and kiln's (make_inner). A program weight is
 * reordered, or packed for matmul and gemm, once per entry.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "broadcast.h"
#include "format/error.h"
#include "onednn.h"
#include "parallel.h"
#include "window.h"

enum { CACHE_ENTRIES = 8 };

/*
 * Products of fewer multiply-adds than this run on one thread whatever the
 * session allows: waking a second thread costs more than such a product
 * saves. With passive waits (a sleeping thread, tens of microseconds to
 * wake, far more when the cores are busy) that is 2^24, a 256 x 256 x 256
 * product, about 170 µs at 100 GFLOP/s: at 2^21 the 2-thread runs of a
 * 784-512-512-10 MLP at batch 16 (products of 6.4M and 4.2M multiply-adds)
 * on a busy 2-core machine were 10% slower than 1-thread runs, at 2^24
 * equal. With spinning waits (kiln_threads_spin) 2^21: on idle cores the
 * same MLP ran 0.093 ms on 2 threads there against 0.125 ms at 2^24.
 */
static double serial_max_multiply_adds(void)
{
    return kiln_threads_spin() ? (double)(1 << 21) : (double)(1 << 24);
}

/*
 * Key: op kind (1 matmul, 2 gemm, 3 conv, 4 + kiln_onednn_pool_kind
 * pooling, 7 conv_transpose, 8 fused conv) plus the layout bits
 * (KEY_SRC_CHANNELS_LAST, KEY_DST_MAY_BE_CHANNELS_LAST), then (rank,
 * shape) of a, b, c and the output; rank -1 for an absent operand. A
 * cache belongs to one node, whose attributes are fixed, so the shapes
 * decide everything else (SAME pads included).
 */
enum { KEY_OPERANDS = 4, KEY_LENGTH = 1 + KEY_OPERANDS * (1 + KILN_MAX_RANK) };

/* The most batch slices an entry runs as (build_slices): one per thread. */
enum { MAX_SLICES = 16 };

struct kiln_onednn_session {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_stream_t slice_streams[MAX_SLICES]; /* one per batch slice, made when first needed */
};

typedef struct primitive_entry {
    bool used;
    bool refused; /* oneDNN has no implementation for these shapes: run the reference */
    bool prefill; /* gemm: copy C into the output, then accumulate with `sum` */
    uint32_t threads; /* OpenMP threads it was built for and runs with */
    uint64_t last_use;
    int64_t key[KEY_LENGTH];
    dnnl_primitive_t primitive;
    dnnl_memory_t src, weights, bias, dst, scratchpad; /* kiln's buffers, plain row-major */
    /*
     * Where the primitive chose its own layout (conv: oneDNN's blocked
     * formats), a buffer of that layout, allocated with the entry, and the
     * reorder between it and kiln's buffer; NULL where it reads or writes
     * kiln's buffer directly.
     */
    dnnl_memory_t src_inner, weights_inner, dst_inner;
    dnnl_primitive_t src_reorder, weights_reorder, dst_reorder;
    bool weights_constant; /* the weights operand is a program weight (kernel_context.h) */
    bool weights_packed;   /* ... and weights_inner already holds it: no reorder per run */
    /*
     * conv with a fused activation (fusion.h): the eltwise post-op, and
     * the bound on |x| that decides per run whether the fused result is
     * exact (finite_input_limit).
     */
    kiln_fused_activation activation;
    float input_limit; /* the largest |x| it fuses for (finite_input_limit) */
    /* conv with program weights (and bias): conv_bounds, for the bound on |y| (result_bound); 0 when unknown. */
    bool bounded;
    double row_bound, bias_bound;
    uint64_t terms; /* products per result */
    bool dst_channels_last; /* it leaves its result channels-last (layout.h) */
    /*
     * Batch slices (build_slices): when `slices` > 1, `primitive` is built
     * for 1/slices of the batch and runs once per slice, each on a thread
     * of its own, on the slice's memory objects below; the reorders and
     * the memory objects above still cover the whole batch.
     */
    uint32_t slices;
    size_t src_slice_bytes, dst_slice_bytes; /* from one slice to the next */
    dnnl_memory_t slice_src[MAX_SLICES], slice_dst[MAX_SLICES], slice_scratchpad[MAX_SLICES];
} primitive_entry;

typedef struct node_cache {
    uint64_t clock;
    primitive_entry entries[CACHE_ENTRIES];
} node_cache;

static _Atomic uint64_t primitives_built;
static _Atomic uint64_t fused_runs;
static _Atomic uint64_t channels_last_runs;
static _Atomic uint64_t magnitude_scans;
static _Atomic uint64_t sliced_runs;

/* Key kinds, see above. */
enum { KEY_MATMUL = 1, KEY_GEMM = 2, KEY_CONV = 3, KEY_POOL = 4, KEY_CONV_TRANSPOSE = 7, KEY_CONV_FUSED = 8 };
/* Layout bits of a key's kind: x is channels-last; the result may be left so (layout.h). */
enum { KEY_SRC_CHANNELS_LAST = 1 << 8, KEY_DST_MAY_BE_CHANNELS_LAST = 1 << 9 };

bool kiln_onednn_enabled(void)
{
    return true;
}

uint64_t kiln_onednn_primitives_built(void)
{
    return atomic_load(&primitives_built);
}

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

uint64_t kiln_onednn_sliced_runs(void)
{
    return atomic_load(&sliced_runs);
}

/* Tell the session the entry left its result channels-last (kernel_context.h). */
static void report_layout(const kiln_kernel_call *call, const primitive_entry *e)
{
    call->context->wrote_channels_last = e->dst_channels_last;
    if (e->dst_channels_last)
        atomic_fetch_add(&channels_last_runs, 1);
}

kiln_status kiln_onednn_session_new(kiln_onednn_session **out, kiln_error *err)
{
    *out = NULL;
    kiln_onednn_session *s = calloc(1, sizeof *s);
    if (!s)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a oneDNN session");
    if (dnnl_engine_create(&s->engine, dnnl_cpu, 0) != dnnl_success) {
        free(s);
        return kiln_fail(err, KILN_ERR_RUNTIME, "oneDNN: could not create a CPU engine");
    }
    if (dnnl_stream_create(&s->stream, s->engine, dnnl_stream_default_flags) != dnnl_success) {
        dnnl_engine_destroy(s->engine);
        free(s);
        return kiln_fail(err, KILN_ERR_RUNTIME, "oneDNN: could not create a stream");
    }
    *out = s;
    return KILN_OK;
}

void kiln_onednn_session_free(kiln_onednn_session *s)
{
    if (!s)
        return;
    dnnl_stream_destroy(s->stream);
    for (int k = 0; k < MAX_SLICES; k++)
        dnnl_stream_destroy(s->slice_streams[k]);
    dnnl_engine_destroy(s->engine);
    free(s);
}

/* ------------------------------------------------------------- the cache */

static void entry_clear(primitive_entry *e)
{
    /* dnnl_*_destroy accept NULL. */
    dnnl_primitive_destroy(e->primitive);
    dnnl_memory_destroy(e->src);
    dnnl_memory_destroy(e->weights);
    dnnl_memory_destroy(e->bias);
    dnnl_memory_destroy(e->dst);
    dnnl_memory_destroy(e->scratchpad);
    dnnl_primitive_destroy(e->src_reorder);
    dnnl_primitive_destroy(e->weights_reorder);
    dnnl_primitive_destroy(e->dst_reorder);
    dnnl_memory_destroy(e->src_inner);
    dnnl_memory_destroy(e->weights_inner);
    dnnl_memory_destroy(e->dst_inner);
    for (int k = 0; k < MAX_SLICES; k++) {
        dnnl_memory_destroy(e->slice_src[k]);
        dnnl_memory_destroy(e->slice_dst[k]);
        dnnl_memory_destroy(e->slice_scratchpad[k]);
    }
    memset(e, 0, sizeof *e);
}

static void cache_release(void *data)
{
    node_cache *cache = data;
    for (int i = 0; i < CACHE_ENTRIES; i++)
        entry_clear(&cache->entries[i]);
    free(cache);
}

static void key_put(int64_t *key, int slot, const kiln_tensor *t)
{
    int64_t *at = key + 1 + slot * (1 + KILN_MAX_RANK);
    at[0] = t ? (int64_t)t->rank : -1;
    for (uint32_t i = 0; t && i < t->rank; i++)
        at[1 + i] = t->shape[i];
}

/*
 * The entry for `key` in the node's cache: found (*fresh false), or a
 * cleared one to fill (*fresh true), the least recently used when full.
 */
static kiln_status cache_lookup(kiln_node_state *state, const int64_t *key, primitive_entry **out, bool *fresh,
                                kiln_error *err)
{
    if (!state->data) {
        node_cache *cache = calloc(1, sizeof *cache);
        if (!cache)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a oneDNN primitive cache");
        state->data = cache;
        state->release = cache_release;
    }
    node_cache *cache = state->data;
    cache->clock++;
    primitive_entry *victim = &cache->entries[0];
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        primitive_entry *e = &cache->entries[i];
        if (e->used && memcmp(e->key, key, sizeof e->key) == 0) {
            e->last_use = cache->clock;
            *out = e;
            *fresh = false;
            return KILN_OK;
        }
        if (!e->used ? victim->used : (victim->used && e->last_use < victim->last_use))
            victim = e;
    }
    entry_clear(victim);
    victim->used = true;
    victim->last_use = cache->clock;
    memcpy(victim->key, key, sizeof victim->key);
    *out = victim;
    *fresh = true;
    return KILN_OK;
}

/* ------------------------------------------------------ building entries */

/* A row-major f32 memory descriptor of `rank` dims (strides may transpose). */
static bool describe(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims, const dnnl_dims_t strides)
{
    return dnnl_memory_desc_init_by_strides(md, rank, dims, dnnl_f32, strides) == dnnl_success;
}

static void row_major_strides(int rank, const dnnl_dims_t dims, dnnl_dims_t strides)
{
    dnnl_dim_t stride = 1;
    for (int i = rank; i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i] > 0 ? dims[i] : 1;
    }
}

static bool make_memory(dnnl_memory_t *memory, const dnnl_memory_desc_t *md, dnnl_engine_t engine, void *handle)
{
    return dnnl_memory_create(memory, md, engine, handle) == dnnl_success;
}

/*
 * If the primitive chose `chosen` where kiln's buffer is `plain`, allocate
 * a buffer of the chosen layout in *inner and the reorder between the two
 * (plain to chosen for an operand, chosen to plain for the output).
 */
static bool make_inner(dnnl_engine_t engine, const dnnl_memory_desc_t *plain, const dnnl_memory_desc_t *chosen,
                       bool to_chosen, dnnl_memory_t *inner, dnnl_primitive_t *reorder)
{
    if (!plain || !chosen || dnnl_memory_desc_equal(plain, chosen))
        return true;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_memory_create(inner, chosen, engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        return false;
    bool ok = dnnl_reorder_primitive_desc_create(&pd, to_chosen ? plain : chosen, engine, to_chosen ? chosen : plain,
                                                 engine, NULL) == dnnl_success;
    ok = ok && dnnl_primitive_create(reorder, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    return ok;
}

/*
 * The eltwise post-op of a fused activation. relu is clip to [0, inf):
 * oneDNN's relu gives 0 * x, a -0.0 for a negative x where the op gives
 * +0.0. On finite values each computes the op's value (leaky_relu's
 * alpha * x is one f32 product either way), but for the sign of a zero
 * result (spec/opset.md, "Fast paths").
 */
static bool append_activation(dnnl_post_ops_t post_ops, const kiln_fused_activation *a)
{
    switch (a->kind) {
    case KILN_ACTIVATION_RELU:
        return dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_clip, 0.0f, INFINITY) == dnnl_success;
    case KILN_ACTIVATION_LEAKY_RELU:
        return dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_relu, a->alpha, 0.0f) == dnnl_success;
    case KILN_ACTIVATION_CLIP:
        return dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_clip, a->lo, a->hi) == dnnl_success;
    case KILN_ACTIVATION_NONE:
        break;
    }
    return false;
}

/*
 * Build e's primitive for the descriptors given (bias_md NULL for none),
 * scaled by `alpha` and with a `sum` post-op of scale `beta` when
 * e->prefill. A refusal by oneDNN (no implementation) marks e refused and
 * is no error; failures to allocate are.
 */
/* The same op over 1/count of the batch, for build_slices; NULL or count 1: none. */
typedef struct slice_request {
    const_dnnl_op_desc_t desc;
    uint32_t count;
} slice_request;

/* Whether md is a strided layout with no blocking or padding (row-major, channels-last, ...). */
static bool plain_strided(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 || md->offset0 != 0)
        return false;
    for (int i = 0; i < md->ndims; i++)
        if (md->padded_dims[i] != md->dims[i] || md->padded_offsets[i] != 0)
            return false;
    return true;
}

/*
 * Batch slices. oneDNN's threads split a conv's or a pool's work their own
 * way, a different way for each primitive, so a result written by one core
 * is often read by the other (measured on a 2-core AMD EPYC machine: a
 * conv of 16 images writing 1 MB for a max_pool ran 0.14 ms on 2 threads
 * and 0.13 ms on 1, and 0.065 ms on 2 when no other primitive read its
 * result; the conv and pool of 8 images took 0.08 ms on one thread, the
 * 16 images 0.23 ms on two). Splitting the batch instead gives each thread
 * the same images in every primitive, so each reads what it wrote. So an
 * entry whose threads divide its batch is built a second time for
 * batch / threads images on one thread, when oneDNN then picks the same
 * layouts (strided, so that a slice is a fixed step into the buffer) and
 * the same weight layout: `primitive` becomes that one, run once per
 * slice, each on its own thread, stream and scratchpad.
 * @return false when out of memory; an entry oneDNN builds differently is
 *         left whole.
 */
static bool build_slices(kiln_onednn_session *s, primitive_entry *e, dnnl_primitive_desc_t whole,
                         const slice_request *request, const_dnnl_primitive_attr_t attr)
{
    const dnnl_memory_desc_t *src = dnnl_primitive_desc_query_md(whole, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *dst = dnnl_primitive_desc_query_md(whole, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *weights = dnnl_primitive_desc_query_md(whole, dnnl_query_weights_md, 0);
    if (!src || !dst || !plain_strided(src) || !plain_strided(dst) || src->dims[0] % request->count != 0)
        return true;
    /* What a slice of each looks like: the same strides over fewer images. */
    dnnl_memory_desc_t src_slice, dst_slice;
    dnnl_dims_t src_dims, dst_dims;
    memcpy(src_dims, src->dims, sizeof src_dims);
    memcpy(dst_dims, dst->dims, sizeof dst_dims);
    src_dims[0] /= request->count;
    dst_dims[0] /= request->count;
    /* The images the outermost axis, so that slices are consecutive blocks of one size. */
    if (!describe(&src_slice, src->ndims, src_dims, src->format_desc.blocking.strides) ||
        !describe(&dst_slice, dst->ndims, dst_dims, dst->format_desc.blocking.strides) ||
        dnnl_memory_desc_get_size(&src_slice) * request->count != dnnl_memory_desc_get_size(src) ||
        dnnl_memory_desc_get_size(&dst_slice) * request->count != dnnl_memory_desc_get_size(dst))
        return true;
    dnnl_primitive_desc_t pd = NULL;
    int previous = kiln_threads_enter(1);
    bool same = dnnl_primitive_desc_create(&pd, request->desc, attr, s->engine, NULL) == dnnl_success;
    if (same) {
        const dnnl_memory_desc_t *weights_chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        same = dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &src_slice) &&
               dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), &dst_slice) &&
               (!weights || (weights_chosen && dnnl_memory_desc_equal(weights, weights_chosen)));
    }
    dnnl_primitive_t primitive = NULL;
    bool ok = true;
    if (same) {
        const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        bool scratch = scratch_md && dnnl_memory_desc_get_size(scratch_md) > 0;
        ok = dnnl_primitive_create(&primitive, pd) == dnnl_success;
        for (uint32_t k = 0; ok && k < request->count; k++)
            ok = (s->slice_streams[k] ||
                  dnnl_stream_create(&s->slice_streams[k], s->engine, dnnl_stream_default_flags) == dnnl_success) &&
                 make_memory(&e->slice_src[k], &src_slice, s->engine, DNNL_MEMORY_NONE) &&
                 make_memory(&e->slice_dst[k], &dst_slice, s->engine, DNNL_MEMORY_NONE) &&
                 (!scratch || make_memory(&e->slice_scratchpad[k], scratch_md, s->engine, DNNL_MEMORY_ALLOCATE));
    }
    kiln_threads_leave(previous);
    dnnl_primitive_desc_destroy(pd);
    if (!same || !ok) {
        dnnl_primitive_destroy(primitive);
        for (int k = 0; k < MAX_SLICES; k++) {
            dnnl_memory_destroy(e->slice_src[k]);
            dnnl_memory_destroy(e->slice_dst[k]);
            dnnl_memory_destroy(e->slice_scratchpad[k]);
            e->slice_src[k] = e->slice_dst[k] = e->slice_scratchpad[k] = NULL;
        }
        return ok;
    }
    dnnl_primitive_destroy(e->primitive);
    dnnl_memory_destroy(e->scratchpad);
    e->scratchpad = NULL;
    e->primitive = primitive;
    e->slices = request->count;
    e->src_slice_bytes = dnnl_memory_desc_get_size(&src_slice);
    e->dst_slice_bytes = dnnl_memory_desc_get_size(&dst_slice);
    return true;
}

static kiln_status build_entry(kiln_onednn_session *s, primitive_entry *e, const_dnnl_op_desc_t desc, bool described,
                               const char *what, const dnnl_memory_desc_t *src_md,
                               const dnnl_memory_desc_t *weights_md, const dnnl_memory_desc_t *bias_md,
                               const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *dst_channels_last,
                               const slice_request *slices, float alpha, float beta, kiln_error *err)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t post_ops = NULL;
    dnnl_primitive_desc_t pd = NULL;
    bool ok = described && dnnl_primitive_attr_create(&attr) == dnnl_success &&
              /* The scratchpad is ours, made once per entry: oneDNN then
               * allocates nothing per execution for it. */
              dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success;
    if (ok && alpha != 1.0f)
        ok = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) == dnnl_success;
    if (ok && (e->prefill || e->activation.kind != KILN_ACTIVATION_NONE))
        ok = dnnl_post_ops_create(&post_ops) == dnnl_success &&
             (!e->prefill || dnnl_post_ops_append_sum(post_ops, beta) == dnnl_success) &&
             (e->activation.kind == KILN_ACTIVATION_NONE || append_activation(post_ops, &e->activation)) &&
             dnnl_primitive_attr_set_post_ops(attr, post_ops) == dnnl_success;
    /*
     * oneDNN sizes its blocking, and a reorder its thread count, for the
     * thread count it sees when the primitive is made: so the primitive
     * and its reorders are all made under the entry's. (Reorders made
     * under the session's count ran on 2 threads inside a 1-thread conv,
     * and a small CNN measured 10% slower on 2 threads than on 1.)
     */
    int previous = kiln_threads_enter(e->threads);
    if (ok && dnnl_primitive_desc_create(&pd, desc, attr, s->engine, NULL) != dnnl_success) {
        pd = NULL;
        e->refused = true;
    }
    dnnl_post_ops_destroy(post_ops);
    if (!ok || e->refused) {
        dnnl_primitive_attr_destroy(attr);
        kiln_threads_leave(previous);
        if (!ok)
            return kiln_fail(err, KILN_ERR_RUNTIME, "oneDNN: could not describe a %s primitive", what);
        return KILN_OK;
    }
    const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    /* A result that may stay channels-last does when the primitive writes that layout: no reorder out. */
    const dnnl_memory_desc_t *chosen_dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (dst_channels_last && chosen_dst && dnnl_memory_desc_equal(chosen_dst, dst_channels_last)) {
        dst_md = dst_channels_last;
        e->dst_channels_last = true;
    }
    /* A descriptor made with format `any` lets oneDNN pick its layouts. */
    ok = make_inner(s->engine, src_md, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), true, &e->src_inner,
                    &e->src_reorder) &&
         make_inner(s->engine, weights_md, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), true,
                    &e->weights_inner, &e->weights_reorder) &&
         make_inner(s->engine, dst_md, chosen_dst, false, &e->dst_inner, &e->dst_reorder) &&
         dnnl_primitive_create(&e->primitive, pd) == dnnl_success &&
         make_memory(&e->src, src_md, s->engine, DNNL_MEMORY_NONE) &&
         (!weights_md || make_memory(&e->weights, weights_md, s->engine, DNNL_MEMORY_NONE)) &&
         make_memory(&e->dst, dst_md, s->engine, DNNL_MEMORY_NONE) &&
         (!bias_md || make_memory(&e->bias, bias_md, s->engine, DNNL_MEMORY_NONE)) &&
         (!scratch_md || dnnl_memory_desc_get_size(scratch_md) == 0 ||
          make_memory(&e->scratchpad, scratch_md, s->engine, DNNL_MEMORY_ALLOCATE));
    kiln_threads_leave(previous);
    if (ok && slices && slices->count > 1)
        ok = build_slices(s, e, pd, slices, attr);
    dnnl_primitive_attr_destroy(attr);
    dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        entry_clear(e);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "oneDNN: out of memory for a %s primitive", what);
    }
    atomic_fetch_add(&primitives_built, 1);
    return KILN_OK;
}

/* Queue one reorder, if there is one. */
static bool run_reorder(kiln_onednn_session *s, dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to)
{
    if (!reorder)
        return true;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    return dnnl_primitive_execute(reorder, s->stream, 2, args) == dnnl_success;
}

/*
 * Run a sliced entry's primitive (build_slices) once per slice, each on
 * its own thread and stream, over the whole batch's buffers `src` and
 * `dst` (its inner ones where it reorders).
 */
static bool run_slices(kiln_onednn_session *s, primitive_entry *e, dnnl_memory_t src, dnnl_memory_t dst)
{
    void *src_base = NULL, *dst_base = NULL;
    if (dnnl_memory_get_data_handle(src, &src_base) != dnnl_success ||
        dnnl_memory_get_data_handle(dst, &dst_base) != dnnl_success)
        return false;
    dnnl_memory_t weights = e->weights_inner ? e->weights_inner : e->weights;
    int failures = 0;
    atomic_fetch_add(&sliced_runs, 1);
    int slices = (int)e->slices;
#ifdef _OPENMP
#pragma omp parallel for num_threads(slices) schedule(static, 1) reduction(+ : failures)
#endif
    for (int k = 0; k < slices; k++) {
        dnnl_exec_arg_t args[5];
        int count = 0;
        bool ok = dnnl_memory_set_data_handle(e->slice_src[k], (uint8_t *)src_base + (size_t)k * e->src_slice_bytes) ==
                      dnnl_success &&
                  dnnl_memory_set_data_handle(e->slice_dst[k], (uint8_t *)dst_base + (size_t)k * e->dst_slice_bytes) ==
                      dnnl_success;
        args[count++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, e->slice_src[k]};
        if (weights)
            args[count++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, weights};
        args[count++] = (dnnl_exec_arg_t){DNNL_ARG_DST, e->slice_dst[k]};
        if (e->bias)
            args[count++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias};
        if (e->slice_scratchpad[k])
            args[count++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, e->slice_scratchpad[k]};
        ok = ok && dnnl_primitive_execute(e->primitive, s->slice_streams[k], count, args) == dnnl_success &&
             dnnl_stream_wait(s->slice_streams[k]) == dnnl_success;
        failures += !ok;
    }
    return failures == 0;
}

/* Point e's memory objects at this call's buffers and run it to completion. */
static kiln_status execute_entry(kiln_onednn_session *s, primitive_entry *e, const char *what, const void *src,
                                 const void *weights, const void *bias, void *dst, kiln_error *err)
{
    dnnl_exec_arg_t args[5];
    int count = 0;
    /* oneDNN takes void * handles; it only reads src, weights and bias. */
    bool ok = dnnl_memory_set_data_handle(e->src, (void *)(uintptr_t)src) == dnnl_success &&
              (!e->weights || dnnl_memory_set_data_handle(e->weights, (void *)(uintptr_t)weights) == dnnl_success) &&
              dnnl_memory_set_data_handle(e->dst, dst) == dnnl_success &&
              (!e->bias || dnnl_memory_set_data_handle(e->bias, (void *)(uintptr_t)bias) == dnnl_success);
    if (!ok)
        return kiln_fail(err, KILN_ERR_RUNTIME, "oneDNN: could not bind the operands");
    args[count++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, e->src_inner ? e->src_inner : e->src};
    if (e->weights)
        args[count++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, e->weights_inner ? e->weights_inner : e->weights};
    args[count++] = (dnnl_exec_arg_t){DNNL_ARG_DST, e->dst_inner ? e->dst_inner : e->dst};
    if (e->bias)
        args[count++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias};
    if (e->scratchpad)
        args[count++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, e->scratchpad};
    int previous = kiln_threads_enter(e->threads);
    /* The stream runs in order: operands reordered in, the primitive, the output reordered out. */
    bool ran = run_reorder(s, e->src_reorder, e->src, e->src_inner) &&
               (e->weights_packed || run_reorder(s, e->weights_reorder, e->weights, e->weights_inner));
    if (e->slices > 1)
        ran = ran && dnnl_stream_wait(s->stream) == dnnl_success &&
              run_slices(s, e, e->src_inner ? e->src_inner : e->src, e->dst_inner ? e->dst_inner : e->dst);
    else
        ran = ran && dnnl_primitive_execute(e->primitive, s->stream, count, args) == dnnl_success;
    ran = ran && run_reorder(s, e->dst_reorder, e->dst_inner, e->dst) && dnnl_stream_wait(s->stream) == dnnl_success;
    kiln_threads_leave(previous);
    if (!ran)
        return kiln_fail(err, KILN_ERR_RUNTIME, "oneDNN: the %s primitive failed to run", what);
    /* A program weight is the same bytes at the same address on every run. */
    e->weights_packed = e->weights_constant && e->weights_reorder;
    return KILN_OK;
}

/* The threads a product of `multiply_adds` runs on in `call`'s session. */
static uint32_t product_threads(const kiln_kernel_call *call, double multiply_adds)
{
    return multiply_adds < serial_max_multiply_adds() ? 1 : kiln_call_threads(call);
}

/* Whether operand i of the call is a program weight (kernel_context.h). */
static bool operand_is_constant(const kiln_kernel_call *call, uint32_t i)
{
    return i < 32 && (call->context->constant_operands >> i & 1u);
}

/* A descriptor of layout `any`: the primitive picks it (and we reorder into it). */
static bool describe_any(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims)
{
    return dnnl_memory_desc_init_by_tag(md, rank, dims, dnnl_f32, dnnl_format_tag_any) == dnnl_success;
}

/* Whether a call may take the fast path at all. */
static bool fast_path_allowed(const kiln_kernel_call *call)
{
    const kiln_kernel_context *context = call->context;
    if (!context || context->reference_only || !context->onednn || !context->state)
        return false;
    for (uint32_t i = 0; i < call->input_count; i++)
        if (call->inputs[i]->dtype != KILN_F32 || call->inputs[i]->element_count == 0)
            return false;
    return call->output->dtype == KILN_F32 && call->output->element_count > 0;
}

/* ---------------------------------------------------------------- matmul */

kiln_status kiln_onednn_matmul(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    kiln_tensor *out = call->output;
    int64_t key[KEY_LENGTH] = {KEY_MATMUL};
    key_put(key, 0, a);
    key_put(key, 1, b);
    key_put(key, 2, NULL);
    key_put(key, 3, out);
    primitive_entry *e;
    bool fresh;
    KILN_TRY(cache_lookup(call->context->state, key, &e, &fresh, err));
    if (fresh) {
        /* All three as matrices with batch axes padded to one rank. */
        uint32_t matrix_axes = (a->rank >= 2) + (b->rank >= 2);
        uint32_t batch_rank = out->rank - matrix_axes;
        /*
         * A weight-like b (one matrix) shared by every batch of a: a's
         * batch axes and rows are one [batch * m, k] matrix in the same
         * row-major bytes, and so are the output's, so the product is one
         * 2-D matmul instead of a batch of small ones sharing b (measured
         * faster with oneDNN 2.6 for the [2, 64, 256] x [256, 256]
         * projections of an encoder layer). Each output element is the
         * same sum of the same products.
         */
        bool fold_batch = b->rank == 2 && a->rank > 2;
        if (fold_batch)
            batch_rank = 0;
        int rank = (int)batch_rank + 2;
        /* dnnl_dims_t holds DNNL_MAX_NDIMS (12) >= KILN_MAX_RANK + 2 dims. */
        dnnl_dims_t a_dims, b_dims, o_dims, a_strides, b_strides, o_strides;
        uint32_t a_batch = a->rank > 2 ? a->rank - 2 : 0, b_batch = b->rank > 2 ? b->rank - 2 : 0;
        for (uint32_t i = 0; i < batch_rank; i++) {
            a_dims[i] = i < batch_rank - a_batch ? 1 : a->shape[i - (batch_rank - a_batch)];
            b_dims[i] = i < batch_rank - b_batch ? 1 : b->shape[i - (batch_rank - b_batch)];
            o_dims[i] = out->shape[i];
        }
        int64_t m = a->rank >= 2 ? a->shape[a->rank - 2] : 1, k = a->shape[a->rank - 1];
        if (fold_batch)
            m = (int64_t)(a->element_count / (uint64_t)k);
        int64_t n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
        a_dims[batch_rank] = m, a_dims[batch_rank + 1] = k;
        b_dims[batch_rank] = k, b_dims[batch_rank + 1] = n;
        o_dims[batch_rank] = m, o_dims[batch_rank + 1] = n;
        e->threads = product_threads(call, (double)out->element_count * (double)k);
        row_major_strides(rank, a_dims, a_strides);
        row_major_strides(rank, b_dims, b_strides);
        row_major_strides(rank, o_dims, o_strides);
        dnnl_memory_desc_t a_md, b_md, o_md, b_any;
        /* A program weight b is packed once into the layout oneDNN prefers
         * (measured 1.3x on a [16, 784] x [784, 512] product). */
        e->weights_constant = operand_is_constant(call, 1);
        if (!describe(&a_md, rank, a_dims, a_strides) || !describe(&b_md, rank, b_dims, b_strides) ||
            !describe(&o_md, rank, o_dims, o_strides) || !describe_any(&b_any, rank, b_dims))
            e->refused = true;
        else {
            dnnl_matmul_desc_t desc;
            bool described =
                dnnl_matmul_desc_init(&desc, &a_md, e->weights_constant ? &b_any : &b_md, NULL, &o_md) == dnnl_success;
            KILN_TRY(build_entry(call->context->onednn, e, &desc, described, "matmul", &a_md, &b_md, NULL, &o_md, NULL, NULL,
                                 1.0f, 0.0f, err));
        }
    }
    if (e->refused)
        return KILN_OK;
    KILN_TRY(execute_entry(call->context->onednn, e, "matmul", a->data, b->data, NULL, out->data, err));
    *ran = true;
    return KILN_OK;
}

/* ------------------------------------------------------------------ gemm */

/* out[i, j] = C broadcast to [M, N]: the accumulator a `sum` post-op reads. */
static void copy_broadcast(const kiln_tensor *c, kiln_tensor *out)
{
    int64_t strides[KILN_MAX_RANK] = {0};
    kiln_broadcast_strides(c, out, strides);
    const float *from = c->data;
    float *to = out->data;
    int64_t m = out->shape[0], n = out->shape[1];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            to[i * n + j] = from[i * strides[0] + j * strides[1]];
}

/* Whether C is one row of N values: oneDNN's bias shape. */
static bool is_row_bias(const kiln_tensor *c, int64_t n)
{
    return c && ((c->rank == 1 && c->shape[0] == n) || (c->rank == 2 && c->shape[0] == 1 && c->shape[1] == n));
}

kiln_status kiln_onednn_gemm(const kiln_kernel_call *call, bool trans_a, bool trans_b, float alpha, float beta,
                             bool *ran, kiln_error *err)
{
    *ran = false;
    if (!fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *a = call->inputs[0], *b = call->inputs[1];
    const kiln_tensor *c = call->input_count > 2 ? call->inputs[2] : NULL;
    kiln_tensor *out = call->output;
    int64_t m = out->shape[0], n = out->shape[1], k = trans_a ? a->shape[0] : a->shape[1];
    /* beta = 0 still reads C in the reference (0 * NaN is NaN): keep that. */
    bool fuse_bias = is_row_bias(c, n) && alpha == 1.0f && beta == 1.0f;
    int64_t key[KEY_LENGTH] = {KEY_GEMM};
    key_put(key, 0, a);
    key_put(key, 1, b);
    key_put(key, 2, c);
    key_put(key, 3, out);
    primitive_entry *e;
    bool fresh;
    KILN_TRY(cache_lookup(call->context->state, key, &e, &fresh, err));
    if (fresh) {
        dnnl_dims_t a_dims = {m, k}, b_dims = {k, n}, o_dims = {m, n}, bias_dims = {1, n};
        /* A' and B' by strides: a transposed operand is read column-wise. */
        dnnl_dims_t a_strides = {trans_a ? 1 : k, trans_a ? m : 1};
        dnnl_dims_t b_strides = {trans_b ? 1 : n, trans_b ? k : 1};
        dnnl_dims_t o_strides = {n, 1}, bias_strides = {n, 1};
        dnnl_memory_desc_t a_md, b_md, o_md, bias_md;
        dnnl_memory_desc_t b_any;
        e->prefill = c && !fuse_bias;
        e->threads = product_threads(call, (double)m * (double)n * (double)k);
        e->weights_constant = operand_is_constant(call, 1); /* packed once, as for matmul */
        if (!describe(&a_md, 2, a_dims, a_strides) || !describe(&b_md, 2, b_dims, b_strides) ||
            !describe(&o_md, 2, o_dims, o_strides) || !describe(&bias_md, 2, bias_dims, bias_strides) ||
            !describe_any(&b_any, 2, b_dims))
            e->refused = true;
        else {
            dnnl_matmul_desc_t desc;
            bool described = dnnl_matmul_desc_init(&desc, &a_md, e->weights_constant ? &b_any : &b_md,
                                                   fuse_bias ? &bias_md : NULL, &o_md) == dnnl_success;
            KILN_TRY(build_entry(call->context->onednn, e, &desc, described, "matmul", &a_md, &b_md,
                                 fuse_bias ? &bias_md : NULL, &o_md, NULL, NULL, alpha, beta, err));
        }
    }
    if (e->refused)
        return KILN_OK;
    if (e->prefill)
        copy_broadcast(c, out);
    KILN_TRY(execute_entry(call->context->onednn, e, "matmul", a->data, b->data, fuse_bias ? c->data : NULL,
                           out->data, err));
    *ran = true;
    return KILN_OK;
}

/* ------------------------------------------------------ conv and pooling */

/*
 * Whether an f32 tensor holds a NaN or a value of magnitude above `limit`:
 * with limit +inf it finds NaNs (max_pool's concern), with FLT_MAX also
 * infinities (a conv weight's), with a fused conv's input limit the inputs
 * that could overflow its sums. Blocks of a fixed size, with no branch
 * inside, so that the compiler vectorizes them at -O2 (a loop of unknown
 * length it left scalar, and the scan of a max_pool input cost 11% of a
 * small CNN's run).
 */
enum { SCAN_BLOCK = 64 };

static bool block_exceeds(const float *v, float limit)
{
    int found = 0;
    for (int i = 0; i < SCAN_BLOCK; i++)
        found |= !(fabsf(v[i]) <= limit); /* a NaN compares false */
    return found;
}

/*
 * The largest |v| of an f32 tensor, or +inf if it holds an infinity or a
 * NaN: the one pass that finds both what `exceeds` finds and a bound to
 * carry to the nodes after (kernel_context.h, operand_bound). Blocks of a
 * fixed size with a max reduction the compiler vectorizes (1 MB: about
 * 1.4 times an `exceeds` pass).
 */
static float block_magnitude(const float *v, int *special)
{
    float m = 0.0f;
    int found = 0;
#ifdef _OPENMP
#pragma omp simd reduction(max : m) reduction(| : found)
#endif
    for (int i = 0; i < SCAN_BLOCK; i++) {
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
    for (; n - i >= SCAN_BLOCK; i += SCAN_BLOCK) {
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

static bool exceeds(const kiln_tensor *t, float limit)
{
    const float *v = t->data;
    uint64_t n = t->element_count, i = 0;
    for (; n - i >= SCAN_BLOCK; i += SCAN_BLOCK)
        if (block_exceeds(v + i, limit))
            return true;
    bool found = false;
    for (; i < n; i++)
        found |= !(fabsf(v[i]) <= limit);
    return found;
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
static bool window_dims(const kiln_onednn_window *w, bool transposed, const kiln_tensor *x, const kiln_tensor *y,
                        dnnl_dims_t strides, dnnl_dims_t kernel, dnnl_dims_t gaps, dnnl_dims_t pad_l,
                        dnnl_dims_t pad_r)
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
    row_major_strides((int)t->rank, dims, strides);
    return describe(md, (int)t->rank, dims, strides);
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
    return describe(md, (int)t->rank, dims, strides);
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
    bool large = (x->element_count > y->element_count ? x->element_count : y->element_count) * sizeof(float) >=
                 SLICE_MIN_BYTES;
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
                        : describe_any(&x_md, (int)x->rank, x_dims) && describe_any(&y_md, (int)y->rank, y_dims);
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
static kiln_status convolution_entry(const kiln_kernel_call *call, const kiln_onednn_window *window, int64_t group,
                                     bool transposed, const kiln_fused_activation *activation,
                                     bool y_may_be_channels_last, primitive_entry **out, kiln_error *err)
{
    const kiln_tensor *x = call->inputs[0], *weight = call->inputs[1];
    const kiln_tensor *bias = call->input_count > 2 ? call->inputs[2] : NULL;
    kiln_tensor *y = call->output;
    const char *what = transposed ? "conv_transpose" : "conv";
    /* A program weight is scanned once, here; a weight that is an input
     * on every run, by the caller (run_convolution). */
    bool constant_weight = operand_is_constant(call, 1);
    bool x_channels_last = source_is_channels_last(call);
    int64_t key[KEY_LENGTH] = {(transposed ? KEY_CONV_TRANSPOSE : activation ? KEY_CONV_FUSED : KEY_CONV) |
                               (x_channels_last ? KEY_SRC_CHANNELS_LAST : 0) |
                               (y_may_be_channels_last ? KEY_DST_MAY_BE_CHANNELS_LAST : 0)};
    key_put(key, 0, x);
    key_put(key, 1, weight);
    key_put(key, 2, bias);
    key_put(key, 3, y);
    primitive_entry *e;
    bool fresh;
    KILN_TRY(cache_lookup(call->context->state, key, &e, &fresh, err));
    *out = e;
    if (fresh && constant_weight && exceeds(weight, FLT_MAX)) {
        e->refused = true;
    } else if (fresh) {
        /* Program weights and bias: bounds on |y| follow from one on |x| (conv_result_bound). */
        if (!transposed && constant_weight && (!bias || operand_is_constant(call, 2))) {
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
        row_major_strides(weight_rank, weight_dims, weight_strides);
        if (transposed) {
            weight_strides[grouped] = (dnnl_dim_t)volume;
            weight_strides[grouped + 1] = (dnnl_dim_t)((uint64_t)outputs * volume);
        }
        /* Multiply-adds: conv sums C/G * volume products per output
         * element; conv_transpose spreads each input element over M/G * volume. */
        double work = transposed ? (double)x->element_count * (double)outputs * (double)volume
                                 : (double)y->element_count * (double)inputs * (double)volume;
        e->threads = product_threads(call, work);
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
                         describe(&weight_md, weight_rank, weight_dims, weight_strides) &&
                         describe(&bias_md, 1, bias_dims, bias_strides) && describe_tensor(&y_md, y) &&
                         describe_channels_last(&y_channels_last, y) &&
                         describe_any(&weight_any, weight_rank, weight_dims);
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
         * MobileNetV2 measured 2.7x slower): a pointwise pair runs unfused. */
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
            KILN_TRY(build_entry(call->context->onednn, e, &whole, true, what, &x_md, &weight_md, bias_used, &y_md,
                                 y_may_be_channels_last ? &y_channels_last : NULL, &slices, 1.0f, 0.0f, err));
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
    return y <= FLT_MAX ? y : INFINITY;
}

/*
 * Run a conv or conv_transpose call through its cached primitive. A conv
 * offered the next node's activation (fusion.h) applies it when the
 * weight and bias are program weights and the fused result is exact: the
 * conv's result finite for this x (finite_input_limit), where oneDNN's
 * eltwise computes the op's value. Otherwise the plain primitive runs and
 * the activation node runs after it.
 */
static kiln_status run_convolution(const kiln_kernel_call *call, const kiln_onednn_window *window, int64_t group,
                                   bool transposed, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!fast_path_allowed(call))
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
    bool constant_weight = operand_is_constant(call, 1);
    if (!constant_weight && exceeds(weight, FLT_MAX))
        return KILN_OK;
    primitive_entry *e;
    kiln_fusion_offer *offer = transposed ? NULL : call->context->fusion;
    if (offer && constant_weight && (!bias || operand_is_constant(call, 2))) {
        KILN_TRY(convolution_entry(call, window, group, false, &offer->activation,
                                   offer->output_may_be_channels_last, &e, err));
        float x_bound = e->refused ? INFINITY : operand_magnitude(call);
        if (x_bound <= e->input_limit) {
            KILN_TRY(execute_entry(call->context->onednn, e, what, x->data, weight->data, bias ? bias->data : NULL,
                                   offer->output->data, err));
            offer->applied = true;
            report_layout(call, e);
            call->context->result_bound = conv_result_bound(e, x_bound);
            atomic_fetch_add(&fused_runs, 1);
            *ran = true;
            return KILN_OK;
        }
    }
    KILN_TRY(convolution_entry(call, window, group, transposed, NULL,
                               !transposed && call->context->result_may_be_channels_last, &e, err));
    if (e->refused)
        return KILN_OK;
    KILN_TRY(execute_entry(call->context->onednn, e, what, x->data, weight->data, bias ? bias->data : NULL,
                           call->output->data, err));
    report_layout(call, e);
    call->context->result_bound = conv_result_bound(e, call->context->operand_bound);
    *ran = true;
    return KILN_OK;
}

kiln_status kiln_onednn_conv(const kiln_kernel_call *call, const kiln_onednn_window *window, int64_t group,
                             bool *ran, kiln_error *err)
{
    return run_convolution(call, window, group, false, ran, err);
}

kiln_status kiln_onednn_conv_transpose(const kiln_kernel_call *call, const kiln_onednn_window *window, int64_t group,
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
static bool pool_fits(const kiln_onednn_window *w, const kiln_tensor *x, const kiln_tensor *y,
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

kiln_status kiln_onednn_pool(const kiln_kernel_call *call, const kiln_onednn_window *window,
                             kiln_onednn_pool_kind kind, bool *ran, kiln_error *err)
{
    *ran = false;
    if (!fast_path_allowed(call))
        return KILN_OK;
    const kiln_tensor *x = call->inputs[0];
    kiln_tensor *y = call->output;
    /* oneDNN's max pooling may skip a NaN: a bound on |x| shows there is none, else one pass. */
    double x_bound = call->context->operand_bound;
    if (kind == KILN_ONEDNN_POOL_MAX && !(x_bound <= FLT_MAX)) {
        x_bound = magnitude(x);
        if (!(x_bound <= FLT_MAX) && exceeds(x, INFINITY))
            return KILN_OK;
    }
    bool x_channels_last = source_is_channels_last(call);
    bool y_may_be_channels_last = x_channels_last && call->context->result_may_be_channels_last;
    int64_t key[KEY_LENGTH] = {(KEY_POOL + (int64_t)kind) | (x_channels_last ? KEY_SRC_CHANNELS_LAST : 0) |
                               (y_may_be_channels_last ? KEY_DST_MAY_BE_CHANNELS_LAST : 0)};
    key_put(key, 0, x);
    key_put(key, 1, NULL);
    key_put(key, 2, NULL);
    key_put(key, 3, y);
    primitive_entry *e;
    bool fresh;
    KILN_TRY(cache_lookup(call->context->state, key, &e, &fresh, err));
    if (fresh) {
        static const dnnl_alg_kind_t algorithms[] = {dnnl_pooling_max, dnnl_pooling_avg_exclude_padding,
                                                     dnnl_pooling_avg_include_padding};
        dnnl_dims_t strides, kernel, gaps, pad_l, pad_r;
        double volume = 1;
        for (uint32_t a = 0; a < window->spatial; a++)
            volume *= (double)window->kernel[a];
        e->threads = product_threads(call, (double)y->element_count * volume);
        /* A channels-last x is pooled into a channels-last result, reordered
         * to row-major after unless that result may stay channels-last. */
        dnnl_memory_desc_t x_md, y_md, y_pooled, x_part_md, y_part_md;
        dnnl_pooling_v2_desc_t whole, part;
        kiln_tensor x_part = batch_slice(x, 1), y_part = batch_slice(y, 1);
        slice_request slices = {&part, batch_slices(call, e->threads, x->shape[0])};
        if (slices.count > 1) {
            x_part = batch_slice(x, slices.count);
            y_part = batch_slice(y, slices.count);
        }
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
            KILN_TRY(build_entry(call->context->onednn, e, &whole, true, "pooling", &x_md, NULL, NULL, &y_md,
                                 y_may_be_channels_last ? &y_pooled : NULL, &slices, 1.0f, 0.0f, err));
    }
    if (e->refused)
        return KILN_OK;
    KILN_TRY(execute_entry(call->context->onednn, e, "pooling", x->data, NULL, NULL, y->data, err));
    report_layout(call, e);
    /* A max is one of the x; an average of K of them within its rounding bound (spec/opset.md) of one. */
    double volume = 1;
    for (uint32_t a = 0; a < window->spatial; a++)
        volume *= (double)window->kernel[a];
    double y_bound = kind == KILN_ONEDNN_POOL_MAX ? x_bound : x_bound * (1 + (volume + 2) * 0x1p-22);
    call->context->result_bound = y_bound <= FLT_MAX ? y_bound : INFINITY;
    *ran = true;
    return KILN_OK;
}
