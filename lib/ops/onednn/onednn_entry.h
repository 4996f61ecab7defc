/*
 * onednn_entry.h — what the oneDNN fast paths share (onednn_entry.c): a cache
 * of primitive entries per node and shape, building an entry (its
 * primitive, the reorders to the layouts it chose, its batch slices) and
 * running it. onednn_matmul.c and onednn_window.c describe their ops and
 * call these. Internal to those three files.
 */
#ifndef KILN_LIB_ONEDNN_ENTRY_H
#define KILN_LIB_ONEDNN_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include <dnnl.h>

#include "error.h"
#include "kernel_context.h"
#include "onednn.h"
#include "op_def.h"

/*
 * Key: op kind (1 matmul, 2 gemm, 3 conv, 4 + kiln_onednn_pool_kind
 * pooling, 7 conv_transpose, 8 fused conv) plus the layout bits
 * (KEY_SRC_CHANNELS_LAST, KEY_DST_MAY_BE_CHANNELS_LAST), then (rank,
 * shape) of a, b, c and the output; rank -1 for an absent operand; last
 * the run's thread count, since a oneDNN primitive keeps the count it was
 * built for (a session under KILN_THREADS_ADAPTIVE runs on fewer threads
 * while the cores are busy, and must not start more). A cache belongs to
 * one node, whose attributes are fixed, so the shapes decide everything
 * else (SAME pads included).
 */
enum { KEY_OPERANDS = 4, KEY_LENGTH = 2 + KEY_OPERANDS * (1 + KILN_MAX_RANK) };

/* The most batch slices an entry runs as (build_slices): one per thread. */
enum { MAX_SLICES = 16 };

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
    void *weights_pages; /* weights_inner's buffer when kiln allocated it (weight_buffer), else NULL */
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

/* Key kinds, see above. */
enum { KEY_MATMUL = 1, KEY_GEMM = 2, KEY_CONV = 3, KEY_POOL = 4, KEY_CONV_TRANSPOSE = 7, KEY_CONV_FUSED = 8,
       KEY_STRIDED_PRODUCT = 9 };
/* Layout bits of a key's kind: x is channels-last; the result may be left so (layout.h). */
enum { KEY_SRC_CHANNELS_LAST = 1 << 8, KEY_DST_MAY_BE_CHANNELS_LAST = 1 << 9 };

/* The same op over 1/count of the batch, for build_slices; NULL or count 1: none. */
typedef struct slice_request {
    const_dnnl_op_desc_t desc;
    uint32_t count;
} slice_request;

/*
 * The node's entry for an op of key kind `kind` (with its layout bits) on
 * operands a, b, c and output y (NULL where absent), keyed by their
 * shapes: found (*fresh false), or a cleared one to fill (*fresh true),
 * the least recently used when the node's cache is full.
 */
kiln_status onednn_entry_for(const kiln_kernel_call *call, int64_t kind, const kiln_tensor *a, const kiln_tensor *b,
                             const kiln_tensor *c, const kiln_tensor *y, primitive_entry **out, bool *fresh,
                             kiln_error *err);

/* An f32 descriptor of dims and strides. */
bool onednn_describe(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims, const dnnl_dims_t strides);

/* Row-major strides of dims. */
void onednn_row_major_strides(int rank, const dnnl_dims_t dims, dnnl_dims_t strides);

/* A descriptor of layout `any`: the primitive picks it (and the entry reorders into it). */
bool onednn_describe_any(dnnl_memory_desc_t *md, int rank, const dnnl_dims_t dims);

/*
 * Build e's primitive for `desc` and kiln's descriptors of its operands
 * (bias_md, weights_md NULL when absent): the reorders to the layouts it
 * chose, its memory objects and scratchpad; a result that may stay
 * channels-last (dst_channels_last not NULL) does when the primitive
 * writes that layout; `slices`, when it asks for more than one, splits
 * the batch (onednn_entry.c, build_slices). A refusal by oneDNN marks e refused
 * and is no error.
 */
kiln_status onednn_build_entry(kiln_onednn_session *s, primitive_entry *e, const_dnnl_op_desc_t desc, bool described,
                               const char *what, const dnnl_memory_desc_t *src_md,
                               const dnnl_memory_desc_t *weights_md, const dnnl_memory_desc_t *bias_md,
                               const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *dst_channels_last,
                               const slice_request *slices, float alpha, float beta, kiln_error *err);

/* Point e's memory objects at this call's buffers and run it to completion. */
kiln_status onednn_execute_entry(kiln_onednn_session *s, primitive_entry *e, const char *what, const void *src,
                                 const void *weights, const void *bias, void *dst, kiln_error *err);

/* The threads a product of `multiply_adds` runs on in `call`'s session. */
uint32_t onednn_product_threads(const kiln_kernel_call *call, double multiply_adds);

/* Whether operand i of the call is a program weight (kernel_context.h). */
bool onednn_operand_is_constant(const kiln_kernel_call *call, uint32_t i);

/* Whether a call may take the fast path at all. */
bool onednn_fast_path_allowed(const kiln_kernel_call *call);

/*
 * Scans of f32 operands run in blocks of this many values with no branch
 * inside, so that the compiler vectorizes them at -O2 (a loop of unknown
 * length it left scalar, and the scan of a max_pool input cost 11% of a
 * small CNN's run).
 */
enum { ONEDNN_SCAN_BLOCK = 64 };

/*
 * Whether an f32 tensor holds a NaN or a value of magnitude above `limit`:
 * with limit +inf it finds NaNs (max_pool's concern), with FLT_MAX also
 * infinities (a conv weight's, a gemm C that beta = 0 must still read),
 * with a fused conv's input limit the inputs that could overflow its sums.
 */
bool onednn_exceeds(const kiln_tensor *t, float limit);

#endif
