/*
 * window.h — sliding-window geometry shared by convolution and pooling:
 * the spatial attributes (kernel, strides, pads, dilations, auto_pad,
 * ceil_mode, output_padding, output_shape), the output size of each
 * spatial axis as a
 * shape expression with its preconditions proven over the declared domain
 * (shape rules), and the same sizes and pads on concrete extents (kernels).
 * The rules are stated in spec/ops/conv.md and spec/ops/pool.md.
 */
#ifndef KILN_LIB_WINDOW_H
#define KILN_LIB_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "op_def.h"

/* Spatial axes a windowed op takes: 1d, 2d and 3d. */
#define KILN_WINDOW_MAX_SPATIAL 3
/*
 * Largest kernel extent, stride, dilation, pad and output_padding accepted.
 * Far above any real network; it keeps (k - 1) * d + 1 and the pad sums
 * exact in int64 without a check at every use.
 */
#define KILN_WINDOW_MAX_ATTRIBUTE ((int64_t)1 << 24)

typedef enum kiln_auto_pad {
    KILN_AUTO_PAD_NOTSET,
    KILN_AUTO_PAD_SAME_UPPER,
    KILN_AUTO_PAD_SAME_LOWER,
    KILN_AUTO_PAD_VALID,
} kiln_auto_pad;

/* Which output-size rule applies. */
typedef enum kiln_window_kind {
    KILN_WINDOW_CONV,           /* conv: any pads */
    KILN_WINDOW_POOL,           /* max_pool, avg_pool: pads below the dilated kernel, ceil_mode */
    KILN_WINDOW_CONV_TRANSPOSE, /* conv_transpose: output_padding, SAME gives in * stride */
} kiln_window_kind;

typedef struct kiln_window {
    kiln_window_kind kind;
    uint32_t spatial; /* 1..KILN_WINDOW_MAX_SPATIAL */
    int64_t kernel[KILN_WINDOW_MAX_SPATIAL];
    int64_t strides[KILN_WINDOW_MAX_SPATIAL];
    int64_t dilations[KILN_WINDOW_MAX_SPATIAL];
    int64_t pads_begin[KILN_WINDOW_MAX_SPATIAL]; /* as given; 0 unless auto_pad is NOTSET */
    int64_t pads_end[KILN_WINDOW_MAX_SPATIAL];
    int64_t output_padding[KILN_WINDOW_MAX_SPATIAL]; /* conv_transpose only */
    int64_t output_shape[KILN_WINDOW_MAX_SPATIAL];   /* conv_transpose only; 0 when not given */
    kiln_auto_pad auto_pad;
    bool ceil_mode; /* pools only */
} kiln_window;

/*
 * Read the window attributes of a node whose kernel extents are already in
 * `w->kernel` (from the weight, or from kernel_shape), with `w->kind` and
 * `w->spatial` set. Attributes the op does not accept were refused by the
 * attribute check, so every name is read unconditionally.
 * @return true, or false with the reason in `why` (naming the attribute,
 * the index and the value).
 */
bool kiln_window_resolve(const kiln_node_attribute *attributes, uint32_t count, kiln_window *w, char *why,
                         size_t size);

/* @return (kernel - 1) * dilation + 1 on spatial axis `axis`. */
int64_t kiln_window_dilated_kernel(const kiln_window *w, uint32_t axis);

/*
 * The output size of spatial axis `axis` (x axis `axis + 2`, size
 * expression `in`) as an expression in `*out`, after proving over the
 * whole domain that the window fits (the padded input covers the dilated
 * kernel; the input is non-empty for SAME; a transposed output is
 * non-empty), or refusing with the node, the sizes and a counterexample.
 */
kiln_status kiln_window_infer_size(const kiln_shape_context *ctx, const kiln_window *w, uint32_t axis, uint32_t in,
                                   uint32_t *out, kiln_error *err);

/*
 * The same on a concrete input extent: the output extent and the pads in
 * effect (SAME pads depend on the extent). @return false when the window
 * does not fit this extent, or a size overflows.
 */
bool kiln_window_extent(const kiln_window *w, uint32_t axis, int64_t in, int64_t *out, int64_t *pad_begin,
                        int64_t *pad_end);

/*
 * The kernel taps j in [*first, *last) of a window whose tap 0 sits at
 * input position `start`, taps `dilation` apart, that land in 0..extent-1.
 * Empty (first == last) when none do.
 */
void kiln_window_taps(int64_t start, int64_t dilation, int64_t kernel, int64_t extent, int64_t *first,
                      int64_t *last);

/*
 * A window on concrete extents, axis by axis as the input has them (not
 * lifted to three): what the oneDNN fast path (onednn.h) and the folded
 * signal conv take.
 */
typedef struct kiln_window_axes {
    uint32_t spatial; /* 1..3 */
    int64_t kernel[3], strides[3], dilations[3];
    int64_t pad_begin[3], pad_end[3];
} kiln_window_axes;

/*
 * A window op's geometry on concrete tensors: every spatial axis lifted to
 * three (leading axes of extent 1, so kernels walk one 3-D loop nest), and
 * the same window unlifted for the oneDNN fast path.
 */
typedef struct kiln_window_geometry {
    int64_t in[KILN_WINDOW_MAX_SPATIAL], out[KILN_WINDOW_MAX_SPATIAL], kernel[KILN_WINDOW_MAX_SPATIAL];
    int64_t stride[KILN_WINDOW_MAX_SPATIAL], dilation[KILN_WINDOW_MAX_SPATIAL], pad[KILN_WINDOW_MAX_SPATIAL];
    int64_t padded[KILN_WINDOW_MAX_SPATIAL]; /* in + both pads */
    kiln_window_axes window;
} kiln_window_geometry;

/*
 * Fill `g` for window `w` (resolved) over x [N, C, spatial...] and the
 * output y, checking that the window fits every spatial axis of x and
 * that y has the extents it gives. `op` names the op in messages.
 * @return KILN_OK or KILN_ERR_INVALID_ARGUMENT.
 */
kiln_status kiln_window_geometry_of(const kiln_window *w, const char *op, const kiln_tensor *x, const kiln_tensor *y,
                                    kiln_window_geometry *g, kiln_error *err);

#endif
