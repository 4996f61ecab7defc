/*
 * onnx_mapping.h — the one header of the mappings (onnx/mappings/): the
 * table of ONNX ops kiln can express (onnx_op_table.c), the helpers the
 * mappings share (onnx_map_common.c) and every mapping function, by op
 * family (onnx_map_<family>.c).
 *
 * A row of the table maps (ONNX op name, range of default-domain opset
 * versions) to a function that emits the kiln ops for one node through
 * the services of onnx_node.h. To support a new op, add one row (and a
 * function in the onnx_map_*.c file of its family, declared below, when
 * the translation is more than a rename with copied attributes).
 *
 * The graph walk (onnx/walk/) includes this header for the table; the
 * mappings include it and onnx_node.h, never the importer's own headers.
 */
#ifndef KILN_ONNX_MAPPING_H
#define KILN_ONNX_MAPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx_node.h"

/* --------------------------------------------- the table: onnx_op_table.c */

typedef kiln_status (*onnx_map_fn)(onnx_node *node, const char *kiln_op);

/* The most schema versions one row lists (Gemm, Dropout and BatchNormalization have 6 up to opset 18). */
#define ONNX_SCHEMA_VERSIONS_MAX 8

typedef struct onnx_op_mapping {
    const char *onnx_op;
    int64_t min_opset, max_opset; /* inclusive */
    int64_t onnx_since;           /* the opset ONNX adds the op in, when it is after 7; else 0 (or 1) */
    onnx_map_fn map;
    const char *kiln_op; /* handed to map: the kiln op for simple renames */
    /*
     * The ONNX schema versions (since_version) of the op that `map`
     * implements, ascending, 0 after the last: every version ONNX defines
     * from min_opset up to KILN_ONNX_MAX_OPSET (and any later one the
     * mapping already reads). The importer binds a node by opset alone;
     * this list is what tests/onnx/check_op_versions.py compares with
     * onnx.defs, so raising KILN_ONNX_MAX_OPSET past a schema change that
     * a row does not list fails the suite instead of importing the old
     * meaning under the new version.
     */
    uint8_t versions[ONNX_SCHEMA_VERSIONS_MAX];
} onnx_op_mapping;

/**
 * The mapping of `onnx_op` at `opset`.
 * @return the row, or NULL; then `why` (may be NULL) receives a reason fit
 *         for the unsupported report ("unsupported op Conv (opset 9)"),
 *         truncated to `size` bytes.
 */
const onnx_op_mapping *onnx_find_mapping(const char *onnx_op, int64_t opset, char *why, size_t size);

/** @return the number of rows of the table (for its checks: tests/onnx/dump_op_table.c). */
size_t onnx_mapping_count(void);

/** @return row `index` (< onnx_mapping_count()) of the table, or NULL. */
const onnx_op_mapping *onnx_mapping_at(size_t index);

/**
 * The reason kept for an op the table does not map (control flow,
 * sequences, ...; the list of spec/onnx-import.md §2's report), or NULL.
 */
const char *onnx_known_gap(const char *onnx_op);

/* ------------------------------------------------------ onnx_map_common.c */

/*
 * What the mappings share: a list of kiln attributes with storage for
 * their values, the node's attributes copied over by name, operands read
 * in bulk, and the one-output emit.
 */

#define ONNX_ATTRS_MAX 16
#define ONNX_ATTRS_INT_POOL 128
#define ONNX_ATTRS_FLOAT_POOL 64
#define ONNX_ATTRS_TEXT_MAX 1024 /* a shape text (expand_to, resize_to) of 8 sizes */

/* Attributes for one kiln op, with storage for their values (zero-initialize). */
typedef struct onnx_attrs {
    kiln_attribute items[ONNX_ATTRS_MAX];
    uint32_t count;
    int64_t ints[ONNX_ATTRS_INT_POOL];
    uint32_t ints_used;
    double floats[ONNX_ATTRS_FLOAT_POOL];
    uint32_t floats_used;
    char text[4][ONNX_ATTRS_TEXT_MAX];
    uint32_t text_used;
} onnx_attrs;

/** Append INT attribute `name` (dropped when the list is full: onnx_attrs_copy reports a full list). */
void onnx_attrs_int(onnx_attrs *list, const char *name, int64_t value);

/** Append FLOAT attribute `name` (dropped when the list is full). */
void onnx_attrs_float(onnx_attrs *list, const char *name, double value);

/** Append INTS attribute `name`. @return false if the list or its pool is full (the caller reports it). */
bool onnx_attrs_ints(onnx_attrs *list, const char *name, const int64_t *values, uint32_t count);

/** Append FLOATS attribute `name`. @return false if the list or its pool is full. */
bool onnx_attrs_floats(onnx_attrs *list, const char *name, const float *values, uint32_t count);

/** Append FLOATS attribute `name` from doubles (kept as they are). @return false if the list or its pool is full. */
bool onnx_attrs_doubles(onnx_attrs *list, const char *name, const double *values, uint32_t count);

/**
 * "[a, b, c]" of the size texts `sizes`: the target of expand_to and
 * resize_to, a shape over the dims. @return false if it does not fit.
 */
bool onnx_shape_text(const char *const *sizes, uint32_t count, char *text, size_t size);

/** Append STRING attribute `name` (`length` bytes of `text`). @return false if it does not fit. */
bool onnx_attrs_string(onnx_attrs *list, const char *name, const char *text, size_t length);

/**
 * Copy every attribute of the node but those in `skip` (NULL-terminated)
 * to `list` under the same name: kiln's ops take ONNX's attribute names
 * where they mean the same thing, and kiln refuses (by name) any it does
 * not take.
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_OP (reported) for an attribute
 *         kiln attributes cannot hold.
 */
kiln_status onnx_attrs_copy(onnx_node *node, onnx_attrs *list, const char *const *skip);

/** Inputs `first` .. `first + count - 1` as kiln values. @return the first failure of onnx_node_input. */
kiln_status onnx_map_inputs(onnx_node *node, uint32_t first, uint32_t count, kiln_value *values);

/** @return the number of inputs, without trailing omitted ones. */
uint32_t onnx_map_present_inputs(const onnx_node *node);

/**
 * Report outputs from `kept` on that the node names but kiln has no value for.
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_OP (reported).
 */
kiln_status onnx_map_refuse_extra_outputs(onnx_node *node, uint32_t kept);

/** Emit kiln op `op` (attributes `list`, may be NULL) and bind it to output 0. @return as onnx_node_emit. */
kiln_status onnx_map_emit_output(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                                 const onnx_attrs *list);

/** A constant scalar operand (any numeric dtype, one element) as a double. @return KILN_OK or the reported refusal. */
kiln_status onnx_map_constant_scalar(onnx_node *node, uint32_t index, double *out);

/**
 * Integer list from attribute `name` (opset < `input_from`) or from
 * constant input `index` (later opsets); *present says whether either is given.
 * @return KILN_OK or the reported refusal (too many values, not constant).
 */
kiln_status onnx_map_ints_operand(onnx_node *node, const char *name, int64_t input_from, uint32_t index,
                                  int64_t *values, uint32_t max, uint32_t *count, bool *present);

/** Cast `*value` to `dtype` unless it has it already. @return as onnx_node_emit. */
kiln_status onnx_map_cast_to(onnx_node *node, kiln_value *value, kiln_dtype dtype);

/** The kiln dtype of ONNX attribute `name` (an element type code), or `fallback` when absent. @return KILN_OK or the reported refusal. */
kiln_status onnx_map_dtype_attribute(onnx_node *node, const char *name, kiln_dtype fallback, kiln_dtype *out);

/**
 * The one element of constant tensor `t` as a double (`what` names it in
 * a report). @return KILN_OK, or the reported refusal (not one element, a
 * 64-bit integer beyond 2^53, a dtype without numbers).
 */
kiln_status onnx_map_tensor_scalar(onnx_node *node, const kiln_tensor *t, const char *what, double *value);

/* ------------------------------------------------- onnx_map_elementwise.c */

/*
 * Elementwise ops: renames with copied attributes and the decompositions
 * (Clip with computed bounds, PRelu, Mish, Pow, BitShift, Cast, CastLike).
 */

/** Same inputs, same attributes, another name (`kiln_op`): most ONNX ops. */
kiln_status onnx_map_rename(onnx_node *node, const char *kiln_op);

/* MatMul; over Transpose(W) swapping W's last two axes, an einsum reading W in place (onnx_map_matmul.c). */
kiln_status onnx_map_matmul(onnx_node *node, const char *kiln_op);

/**
 * Add, Sub, Mul, Div, Pow, Equal, Less, Greater, And, Or, Xor. From opset 7
 * NumPy broadcasting (Pow: onnx_map_pow); before it, the `broadcast` and
 * `axis` attributes: B of A's shape, or (broadcast = 1) B aligned with A at
 * `axis` or at A's last axes, the result always of A's shape.
 */
kiln_status onnx_map_binary(onnx_node *node, const char *kiln_op);

/** Cast: attribute `to` as a kiln dtype name (before opset 6, the name of an ONNX element type). */
kiln_status onnx_map_cast(onnx_node *node, const char *kiln_op);

/** Clip: bounds from attributes (opset < 11) or constant inputs; computed bounds become max/min. */
kiln_status onnx_map_clip(onnx_node *node, const char *kiln_op);

/** BitShift: direction as kiln's attribute. */
kiln_status onnx_map_bitshift(onnx_node *node, const char *kiln_op);

/** Pow: the exponent cast to the base's dtype. */
kiln_status onnx_map_pow(onnx_node *node, const char *kiln_op);

/** CastLike: a cast to the second operand's dtype. */
kiln_status onnx_map_cast_like(onnx_node *node, const char *kiln_op);

/** PRelu: where(x < 0, slope * x, x). */
kiln_status onnx_map_prelu(onnx_node *node, const char *kiln_op);

/* ---------------------------------------------------- onnx_map_generate.c */

/*
 * Ops that generate values (Range, EyeLike, OneHot, the cosine windows)
 * or take a scalar operand kiln holds as an attribute (CumSum, Trilu).
 */

/** CumSum: the constant axis as kiln's attribute. */
kiln_status onnx_map_cumsum(onnx_node *node, const char *kiln_op);

/** Trilu: the constant k as kiln's attribute. */
kiln_status onnx_map_trilu(onnx_node *node, const char *kiln_op);

/** OneHot: constant depth and values as kiln's attributes. */
kiln_status onnx_map_one_hot(onnx_node *node, const char *kiln_op);

/** EyeLike: eye_like with the ONNX element type code of `dtype` as a kiln dtype name. */
kiln_status onnx_map_eye_like(onnx_node *node, const char *kiln_op);

/** Range: its three scalar operands folded into range's attributes (a symbolic limit: onnx_map_symbolic_range). */
kiln_status onnx_map_range(onnx_node *node, const char *kiln_op);

/** HannWindow, HammingWindow, BlackmanWindow (opset 17). */
kiln_status onnx_map_cosine_window(onnx_node *node, const char *kiln_op);

/* -------------------------------------------------------- onnx_map_loss.c */

/* The loss ops as compositions of kiln ops. */

/** NegativeLogLikelihoodLoss (opsets 12, 13): gather, weights, ignore_index, reduction. */
kiln_status onnx_map_nll_loss(onnx_node *node, const char *kiln_op);

/** SoftmaxCrossEntropyLoss (opsets 12, 13): log_softmax over axis 1, then as NegativeLogLikelihoodLoss. */
kiln_status onnx_map_softmax_cross_entropy(onnx_node *node, const char *kiln_op);

/* ---------------------------------------------------------- onnx_map_nn.c */

/*
 * Neural-network ops: reductions and softmax, Gemm, normalizations, LRN,
 * pooling, convolution windows, TopK, the recurrent layers, Resize,
 * GridSample, Col2Im, MaxUnpool.
 */

/** ReduceX: axes as an attribute, or (ReduceSum from opset 13) as input 1. */
kiln_status onnx_map_reduce(onnx_node *node, const char *kiln_op);

/** Softmax, LogSoftmax, Hardmax (before opset 13 on the input flattened to 2-D at `axis`). */
kiln_status onnx_map_softmax(onnx_node *node, const char *kiln_op);

/** Gemm: kiln's gemm with the same attributes. */
kiln_status onnx_map_gemm(onnx_node *node, const char *kiln_op);

/** BatchNormalization in inference. */
kiln_status onnx_map_batch_norm(onnx_node *node, const char *kiln_op);

/** LayerNormalization (opset 17). */
kiln_status onnx_map_layer_norm(onnx_node *node, const char *kiln_op);

/** GroupNormalization-18 (scale and bias per group): group_norm with them repeated per channel. */
kiln_status onnx_map_group_norm_18(onnx_node *node, const char *kiln_op);

/** LRN as a composition of kiln ops. */
kiln_status onnx_map_lrn(onnx_node *node, const char *kiln_op);

/** GlobalAveragePool, GlobalMaxPool. */
kiln_status onnx_map_global_pool(onnx_node *node, const char *kiln_op);

/** TopK: k from the attribute (opset < 10) or a constant input. */
kiln_status onnx_map_topk(onnx_node *node, const char *kiln_op);

/** RNN, GRU, LSTM. */
kiln_status onnx_map_recurrent(onnx_node *node, const char *kiln_op);

/** Conv, ConvTranspose, MaxPool, AveragePool, LpPool. */
kiln_status onnx_map_window(onnx_node *node, const char *kiln_op);

/** Resize (opset 10+) and Upsample (opset 9). */
kiln_status onnx_map_resize(onnx_node *node, const char *kiln_op);

/** GridSample (opset 16+). */
kiln_status onnx_map_grid_sample(onnx_node *node, const char *kiln_op);

/** Col2Im (opset 18): gather of the taps inside the image, scatter_elements adding them. */
kiln_status onnx_map_col2im(onnx_node *node, const char *kiln_op);

/** MaxUnpool (opset 9+). */
kiln_status onnx_map_max_unpool(onnx_node *node, const char *kiln_op);

/* ---------------------------------------------------- onnx_map_quantize.c */

/* Linear quantization and the integer product ops as compositions of kiln ops. */

/** QuantizeLinear (opsets 10, 13): f32 to u8 or i8, per tensor or (13) per axis. */
kiln_status onnx_map_quantize_linear(onnx_node *node, const char *kiln_op);

/** DequantizeLinear (opsets 10, 13): i8, u8 or i32 to f32, per tensor or (13) per axis. */
kiln_status onnx_map_dequantize_linear(onnx_node *node, const char *kiln_op);

/** DynamicQuantizeLinear (opset 11): the scale and zero point from the data's range, then QuantizeLinear. */
kiln_status onnx_map_dynamic_quantize_linear(onnx_node *node, const char *kiln_op);

/** MatMulInteger (opset 10): u8 or i8 operands less their zero points, multiplied exactly, as i32. */
kiln_status onnx_map_matmul_integer(onnx_node *node, const char *kiln_op);

/** ConvInteger (opset 10): u8 or i8 operands less their zero points, convolved exactly, as i32. */
kiln_status onnx_map_conv_integer(onnx_node *node, const char *kiln_op);

/* ------------------------------------------------------- onnx_map_shape.c */

/*
 * Ops on shapes and layout whose shape-like operands (shapes, axes, pads,
 * repeats) kiln takes as attributes: Identity, Dropout, Constant, Shape,
 * Reshape, Expand, Tile, Concat, Squeeze, Unsqueeze, Slice, Pad, Split,
 * ConstantOfShape, ScatterElements, ScatterND, CenterCropPad. Symbolic
 * operands go to onnx_map_symbolic.c.
 */

/** Identity, and Dropout in inference (its optional mask all true). */
kiln_status onnx_map_identity(onnx_node *node, const char *kiln_op);

/** Constant: its value attribute becomes a constant output (no op). */
kiln_status onnx_map_constant(onnx_node *node, const char *kiln_op);

/** Shape: folded to a constant when every size is known, else shape_of (and a slice for start/end). */
kiln_status onnx_map_shape(onnx_node *node, const char *kiln_op);

/** ConstantOfShape: a constant or symbolic shape filled with attribute `value`. */
kiln_status onnx_map_constant_of_shape(onnx_node *node, const char *kiln_op);

/** Reshape: a constant target as kiln's attribute, a symbolic one through onnx_map_symbolic_reshape. */
kiln_status onnx_map_reshape(onnx_node *node, const char *kiln_op);

/** Expand: a constant target as kiln's attribute, a symbolic one through onnx_map_symbolic_expand. */
kiln_status onnx_map_expand(onnx_node *node, const char *kiln_op);

/** Tile: constant repeats as kiln's attribute. */
kiln_status onnx_map_tile(onnx_node *node, const char *kiln_op);

/** Concat; before opset 4 `axis` defaults to 1. */
kiln_status onnx_map_concat(onnx_node *node, const char *kiln_op);

/** Unsqueeze: axes from the attribute (opset < 13) or a constant input. */
kiln_status onnx_map_unsqueeze(onnx_node *node, const char *kiln_op);

/** Squeeze: axes from the attribute (opset < 13) or a constant input; none: every axis of size 1. */
kiln_status onnx_map_squeeze(onnx_node *node, const char *kiln_op);

/** Slice: constant bounds as kiln's attributes, symbolic ones through onnx_map_symbolic_slice. */
kiln_status onnx_map_slice(onnx_node *node, const char *kiln_op);

/** Pad: constant pads and value as kiln's attributes. */
kiln_status onnx_map_pad(onnx_node *node, const char *kiln_op);

/** Split: one kiln slice per output. */
kiln_status onnx_map_split(onnx_node *node, const char *kiln_op);

/** ScatterElements, ScatterND: the reductions each version defines. */
kiln_status onnx_map_scatter(onnx_node *node, const char *kiln_op);

/** CenterCropPad (opset 18): a slice and a pad of constant sizes. */
kiln_status onnx_map_center_crop_pad(onnx_node *node, const char *kiln_op);

/* ---------------------------------------------------- onnx_map_symbolic.c */

/*
 * Ops whose shape-like operand is symbolic: sizes computed from kiln dims
 * (symbolic folding, spec/onnx-import.md §3), held as canonical size
 * texts ("batch", "4*batch"). kiln's ops take constant attributes, so
 * each target is met with ops whose result has the named sizes by
 * construction.
 */

/** Reshape to a symbolic target (input 1 symbolic). */
kiln_status onnx_map_symbolic_reshape(onnx_node *node, const char *kiln_op);

/** Expand to a symbolic target (input 1 symbolic). */
kiln_status onnx_map_symbolic_expand(onnx_node *node, const char *kiln_op);

/** Slice (opset 10+) whose starts or ends are symbolic. */
kiln_status onnx_map_symbolic_slice(onnx_node *node, const char *kiln_op);

/** Range with a symbolic limit, a constant integer start and delta 1. */
kiln_status onnx_map_symbolic_range(onnx_node *node);

#endif
