/*
 * onednn_entry.c — the machinery of the oneDNN fast paths (onednn.h,
 * onednn_entry.h): a session's engine and streams, a cache of primitive
 * entries per node and shape, building an entry and running it. The ops
 * are onednn_matmul.c (matmul, gemm) and onednn_window.c (conv,
 * conv_transpose, pools).
 *
 * Why this shape of code: creating a oneDNN primitive costs far more than
 * running a small one (it picks a kernel, may JIT-compile it and sizes a
 * scratchpad), so it must happen once per node and shape, not per run.
 * Each node's slot holds up to CACHE_ENTRIES entries, each with its
 * primitive, the memory objects it reads and writes (their buffers are
 * re-pointed at the operands on every run) and its scratchpad; when the
 * cache is full the least recently used entry is replaced.
 *
 * kiln tensors are row-major and contiguous, so every operand is
 * described by dims and row-major strides (or channels-last ones,
 * layout.h); where a primitive chose layouts of its own, an entry holds
 * buffers of those layouts and the reorders between them and kiln's
 * (make_inner). A program weight is reordered, or packed, once per entry.
 */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (weight_buffer) */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <dnnl.h>

#include "onednn_entry.h"
#include "parallel.h"

enum { CACHE_ENTRIES = 8 };

struct kiln_onednn_session {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_stream_t slice_streams[MAX_SLICES]; /* one per batch slice, made when first needed */
};

typedef struct node_cache {
    uint64_t clock;
    primitive_entry entries[CACHE_ENTRIES];
} node_cache;

static _Atomic uint64_t primitives_built;
static _Atomic uint64_t sliced_runs;

bool kiln_onednn_enabled(void)
{
    return true;
}

uint64_t kiln_onednn_primitives_built(void)
{
    return atomic_load(&primitives_built);
}

uint64_t kiln_onednn_sliced_runs(void)
{
    return atomic_load(&sliced_runs);
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
    free(e->weights_pages);
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

kiln_status onednn_entry_for(const kiln_kernel_call *call, int64_t kind, const kiln_tensor *a, const kiln_tensor *b,
                             const kiln_tensor *c, const kiln_tensor *y, primitive_entry **out, bool *fresh,
                             kiln_error *err)
{
    int64_t key[KEY_LENGTH] = {kind};
    key_put(key, 0, a);
    key_put(key, 1, b);
    key_put(key, 2, c);
    key_put(key, 3, y);
    key[KEY_LENGTH - 1] = kiln_call_threads(call);
    return cache_lookup(call->context->state, key, out, fresh, err);
}

/* ------------------------------------------------------ building entries */

/* A row-major f32 memory descriptor of `rank` dims (strides may transpose). */
bool onednn_describe(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims, const dnnl_dims_t strides)
{
    return dnnl_memory_desc_init_by_strides(md, rank, dims, dnnl_f32, strides) == dnnl_success;
}

void onednn_row_major_strides(int rank, const dnnl_dims_t dims, dnnl_dims_t strides)
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
 * Packed weights of at least this size live on 2 MiB pages where the
 * kernel gives them (Linux transparent huge pages, asked for with
 * madvise): a run streams every weight of a large model once, and with 4
 * KiB pages a 9 MiB conv weight costs some 2300 TLB misses a pass.
 * Measured on one thread, medians of 5 interleaved runs (the same effect
 * through glibc's hugetlb tunable): ResNet-18 6.36 -> 6.21 ms, FCN
 * ResNet-50 21.2 -> 20.7 ms, AlexNet 11.7 -> 11.4 ms. Smaller buffers keep
 * oneDNN's own allocation.
 */
enum { HUGE_PAGE_BYTES = 2 << 20 };

/*
 * A buffer of `size` bytes for packed weights, on huge pages where the
 * kernel has them: *pages is the allocation (free()), NULL when the size is
 * too small to gain (the caller lets oneDNN allocate) or memory ran out.
 */
static void weight_buffer(size_t size, void **pages)
{
    *pages = NULL;
    size_t rounded = (size + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if (size < HUGE_PAGE_BYTES || rounded < size || posix_memalign(pages, HUGE_PAGE_BYTES, rounded) != 0) {
        *pages = NULL;
        return;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(*pages, rounded, MADV_HUGEPAGE); /* advice: a kernel without huge pages keeps small ones */
#endif
}

/*
 * If the primitive chose `chosen` where kiln's buffer is `plain`, allocate
 * a buffer of the chosen layout in *inner and the reorder between the two
 * (plain to chosen for an operand, chosen to plain for the output). For
 * weights (`pages` not NULL) a large buffer is kiln's (weight_buffer),
 * kept in *pages.
 */
static bool make_inner(dnnl_engine_t engine, const dnnl_memory_desc_t *plain, const dnnl_memory_desc_t *chosen,
                       bool to_chosen, dnnl_memory_t *inner, dnnl_primitive_t *reorder, void **pages)
{
    if (!plain || !chosen || dnnl_memory_desc_equal(plain, chosen))
        return true;
    dnnl_primitive_desc_t pd = NULL;
    if (pages)
        weight_buffer(dnnl_memory_desc_get_size(chosen), pages);
    void *handle = pages && *pages ? *pages : DNNL_MEMORY_ALLOCATE;
    if (dnnl_memory_create(inner, chosen, engine, handle) != dnnl_success)
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
 * result. silu is swish with alpha 1, x * sigmoid(x) in f32 with oneDNN's
 * own exp, and hard_swish oneDNN's hardswish, x * relu6(x + 3) / 6 in f32
 * (the op's x * clamp((x + 3) / 6) in double, rounded once): not the
 * op's values, but within the few ulp of them that spec/opset.md ("Fast
 * paths") states.
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
    case KILN_ACTIVATION_SILU:
        return dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f) == dnnl_success;
    case KILN_ACTIVATION_HARD_SWISH:
        return dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f) == dnnl_success;
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
    if (!onednn_describe(&src_slice, src->ndims, src_dims, src->format_desc.blocking.strides) ||
        !onednn_describe(&dst_slice, dst->ndims, dst_dims, dst->format_desc.blocking.strides) ||
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

kiln_status onednn_build_entry(kiln_onednn_session *s, primitive_entry *e, const_dnnl_op_desc_t desc, bool described,
                               const char *what, const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *weights_md,
                               const dnnl_memory_desc_t *bias_md, const dnnl_memory_desc_t *dst_md,
                               const dnnl_memory_desc_t *dst_channels_last, const slice_request *slices, float alpha,
                               float beta, kiln_error *err)
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
                    &e->src_reorder, NULL) &&
         make_inner(s->engine, weights_md, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), true,
                    &e->weights_inner, &e->weights_reorder, &e->weights_pages) &&
         make_inner(s->engine, dst_md, chosen_dst, false, &e->dst_inner, &e->dst_reorder, NULL) &&
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
kiln_status onednn_execute_entry(kiln_onednn_session *s, primitive_entry *e, const char *what, const void *src,
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
uint32_t onednn_product_threads(const kiln_kernel_call *call, double multiply_adds)
{
    return multiply_adds < (double)kiln_parallel_min_multiply_adds() ? 1 : kiln_call_threads(call);
}

/* Whether operand i of the call is a program weight (kernel_context.h). */
bool onednn_operand_is_constant(const kiln_kernel_call *call, uint32_t i)
{
    return i < 32 && (call->context->constant_operands >> i & 1u);
}

/* A descriptor of layout `any`: the primitive picks it (and we reorder into it). */
bool onednn_describe_any(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims)
{
    return dnnl_memory_desc_init_by_tag(md, rank, dims, dnnl_f32, dnnl_format_tag_any) == dnnl_success;
}

/* Whether a call may take the fast path at all. */
bool onednn_fast_path_allowed(const kiln_kernel_call *call)
{
    const kiln_kernel_context *context = call->context;
    if (!context || context->reference_only || !context->onednn || !context->state)
        return false;
    for (uint32_t i = 0; i < call->input_count; i++)
        if (call->inputs[i]->dtype != KILN_F32 || call->inputs[i]->element_count == 0)
            return false;
    return call->output->dtype == KILN_F32 && call->output->element_count > 0;
}

static bool block_exceeds(const float *v, float limit)
{
    int found = 0;
    for (int i = 0; i < ONEDNN_SCAN_BLOCK; i++)
        found |= !(fabsf(v[i]) <= limit); /* a NaN compares false */
    return found;
}

bool onednn_exceeds(const kiln_tensor *t, float limit)
{
    const float *v = t->data;
    uint64_t n = t->element_count, i = 0;
    for (; n - i >= ONEDNN_SCAN_BLOCK; i += ONEDNN_SCAN_BLOCK)
        if (block_exceeds(v + i, limit))
            return true;
    bool found = false;
    for (; i < n; i++)
        found |= !(fabsf(v[i]) <= limit);
    return found;
}
