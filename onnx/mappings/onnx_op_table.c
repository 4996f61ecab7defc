/*
 * onnx_op_table.c — the table of ONNX ops kiln can express, and how (see
 * onnx_mapping.h).
 *
 * Most ONNX ops are a kiln op under another name whose attributes carry
 * over unchanged (onnx_map_rename). Others take operands ONNX passes as
 * tensors but kiln as attributes — shapes, axes, pads, repeats — which must
 * be constant at import (onnx_node_constant_ints) or symbolic
 * (onnx_map_symbolic.c); others again are decompositions (PRelu,
 * opset < 13 Softmax, Clip with computed bounds, Split, the losses and
 * quantization). Each family lives in its onnx_map_*.c file.
 * Semantics follow the ONNX operator documentation of the opset versions
 * listed in each row.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_mapping.h"

/* ------------------------------------------------------------------ table */

/*
 * A node binds to the newest version of its op not above the model's
 * opset (its since_version), and a mapping whose versions differ reads
 * node->opset. SINCE_1 rows map every version from opset 1: those whose
 * earlier versions compute the same thing (consumed_inputs, a legacy hint,
 * is dropped by onnx_attrs_copy below opset 7), and those whose mapping
 * reads the older forms (Add-1/6's broadcast and axis, Concat-1's default
 * axis, Reshape-1's shape attribute, Cast-1's type name, Tile-1's tiles
 * and axis, BatchNormalization-6's and Dropout-6's is_test; spec/
 * onnx-import.md §4). FROM(v) marks an op ONNX added in opset v > 1:
 * below v the op does not exist, so a model that uses it there is refused
 * as ONNX itself would (a model stamped opset 14 that uses Mish, added in
 * 18). ALL (opset 7 on) is left for PRelu, whose slope before opset 7 is
 * shared per channel rather than broadcast. The first versions were taken
 * from onnx.defs (onnx 1.12; Mish from the opset 18 operator list) and
 * test_onnx_ops.c checks a few of them; tests/onnx-legacy/ has a case per
 * old version.
 *
 * The last field lists the schema versions the row's mapping implements
 * (onnx_mapping.h): every since_version of the op from the row's first
 * opset up to KILN_ONNX_MAX_OPSET, read from onnx.defs (onnx 1.23). The
 * versions up to 17 are those the importer mapped before opset 18; each
 * 18 was added with the change its mapping reads (the reductions' axes
 * input, Split's num_outputs, Pad's axes, Resize's antialias, axes and
 * keep_aspect_ratio_policy, the scatters' max and min, LpPool's
 * ceil_mode and dilations: spec/onnx-import.md §4). The suite's
 * onnx_op_versions test fails when a row misses a version ONNX defines
 * at or below KILN_ONNX_MAX_OPSET, so the next raise of the opset names
 * each row whose op changed.
 */
#define ALL 7, 1000, 0
#define SINCE_1 1, 1000, 1
#define FROM(v) v, 1000, v

static const onnx_op_mapping mappings[] = {
    /* elementwise arithmetic and math */
    {"Add", SINCE_1, onnx_map_binary, "add", {1, 6, 7, 13, 14}},
    {"Sub", SINCE_1, onnx_map_binary, "sub", {1, 6, 7, 13, 14}},
    {"Mul", SINCE_1, onnx_map_binary, "mul", {1, 6, 7, 13, 14}},
    {"Div", SINCE_1, onnx_map_binary, "div", {1, 6, 7, 13, 14}},
    {"Neg", SINCE_1, onnx_map_rename, "neg", {1, 6, 13}},
    {"Abs", SINCE_1, onnx_map_rename, "abs", {1, 6, 13}},
    {"Sign", FROM(9), onnx_map_rename, "sign", {9, 13}},
    {"Exp", SINCE_1, onnx_map_rename, "exp", {1, 6, 13}},
    {"Log", SINCE_1, onnx_map_rename, "log", {1, 6, 13}},
    {"Sqrt", SINCE_1, onnx_map_rename, "sqrt", {1, 6, 13}},
    {"Reciprocal", SINCE_1, onnx_map_rename, "reciprocal", {1, 6, 13}},
    {"Erf", FROM(9), onnx_map_rename, "erf", {9, 13}},
    {"Floor", SINCE_1, onnx_map_rename, "floor", {1, 6, 13}},
    {"Ceil", SINCE_1, onnx_map_rename, "ceil", {1, 6, 13}},
    {"Round", FROM(11), onnx_map_rename, "round", {11}},
    {"Sin", FROM(7), onnx_map_rename, "sin", {7}},
    {"Cos", FROM(7), onnx_map_rename, "cos", {7}},
    {"Tan", FROM(7), onnx_map_rename, "tan", {7}},
    {"Asin", FROM(7), onnx_map_rename, "asin", {7}},
    {"Acos", FROM(7), onnx_map_rename, "acos", {7}},
    {"Atan", FROM(7), onnx_map_rename, "atan", {7}},
    {"Sinh", FROM(9), onnx_map_rename, "sinh", {9}},
    {"Cosh", FROM(9), onnx_map_rename, "cosh", {9}},
    {"Asinh", FROM(9), onnx_map_rename, "asinh", {9}},
    {"Acosh", FROM(9), onnx_map_rename, "acosh", {9}},
    {"Atanh", FROM(9), onnx_map_rename, "atanh", {9}},
    {"Tanh", SINCE_1, onnx_map_rename, "tanh", {1, 6, 13}},
    {"Pow", SINCE_1, onnx_map_binary, "pow", {1, 7, 12, 13, 15}},
    {"Mod", FROM(10), onnx_map_rename, "mod", {10, 13}},
    {"BitShift", FROM(11), onnx_map_bitshift, "bitshift", {11}},
    /* activations */
    {"Sigmoid", SINCE_1, onnx_map_rename, "sigmoid", {1, 6, 13}},
    {"HardSigmoid", SINCE_1, onnx_map_rename, "hard_sigmoid", {1, 6}},
    {"HardSwish", FROM(14), onnx_map_rename, "hard_swish", {14}},
    {"Relu", SINCE_1, onnx_map_rename, "relu", {1, 6, 13, 14}},
    {"LeakyRelu", SINCE_1, onnx_map_rename, "leaky_relu", {1, 6, 16}},
    {"Elu", SINCE_1, onnx_map_rename, "elu", {1, 6}},
    {"Selu", SINCE_1, onnx_map_rename, "selu", {1, 6}},
    {"Celu", FROM(12), onnx_map_rename, "celu", {12}},
    {"Softplus", SINCE_1, onnx_map_rename, "softplus", {1}},
    {"Softsign", SINCE_1, onnx_map_rename, "softsign", {1}},
    {"Shrink", FROM(9), onnx_map_rename, "shrink", {9}},
    {"ThresholdedRelu", FROM(10), onnx_map_rename, "thresholded_relu", {10}},
    {"PRelu", ALL, onnx_map_prelu, NULL, {7, 9, 16}},
    {"Mish", FROM(18), onnx_map_rename, "mish", {18}},
    {"Clip", SINCE_1, onnx_map_clip, "clip", {1, 6, 11, 12, 13}},
    /* comparison, logic, selection, variadic */
    {"Equal", SINCE_1, onnx_map_binary, "eq", {1, 7, 11, 13}},
    {"Less", SINCE_1, onnx_map_binary, "lt", {1, 7, 9, 13}},
    {"LessOrEqual", FROM(12), onnx_map_rename, "le", {12, 16}},
    {"Greater", SINCE_1, onnx_map_binary, "gt", {1, 7, 9, 13}},
    {"GreaterOrEqual", FROM(12), onnx_map_rename, "ge", {12, 16}},
    {"And", SINCE_1, onnx_map_binary, "and", {1, 7}},
    {"Or", SINCE_1, onnx_map_binary, "or", {1, 7}},
    {"Xor", SINCE_1, onnx_map_binary, "xor", {1, 7}},
    {"Not", SINCE_1, onnx_map_rename, "not", {1}},
    {"IsNaN", FROM(9), onnx_map_rename, "isnan", {9, 13}},
    {"IsInf", FROM(10), onnx_map_rename, "isinf", {10}},
    {"Where", FROM(9), onnx_map_rename, "where", {9, 16}},
    {"Max", SINCE_1, onnx_map_rename, "max", {1, 6, 8, 12, 13}},
    {"Min", SINCE_1, onnx_map_rename, "min", {1, 6, 8, 12, 13}},
    {"Sum", SINCE_1, onnx_map_rename, "sum", {1, 6, 8, 13}},
    {"Mean", SINCE_1, onnx_map_rename, "mean", {1, 6, 8, 13}},
    /* reductions and softmax */
    {"ReduceSum", SINCE_1, onnx_map_reduce, "reduce_sum", {1, 11, 13}},
    {"ReduceMean", SINCE_1, onnx_map_reduce, "reduce_mean", {1, 11, 13, 18}},
    {"ReduceMax", SINCE_1, onnx_map_reduce, "reduce_max", {1, 11, 12, 13, 18}},
    {"ReduceMin", SINCE_1, onnx_map_reduce, "reduce_min", {1, 11, 12, 13, 18}},
    {"ReduceProd", SINCE_1, onnx_map_reduce, "reduce_prod", {1, 11, 13, 18}},
    {"ReduceL1", SINCE_1, onnx_map_reduce, "reduce_l1", {1, 11, 13, 18}},
    {"ReduceL2", SINCE_1, onnx_map_reduce, "reduce_l2", {1, 11, 13, 18}},
    {"ReduceSumSquare", SINCE_1, onnx_map_reduce, "reduce_sum_square", {1, 11, 13, 18}},
    {"ReduceLogSum", SINCE_1, onnx_map_reduce, "reduce_log_sum", {1, 11, 13, 18}},
    {"ReduceLogSumExp", SINCE_1, onnx_map_reduce, "reduce_log_sum_exp", {1, 11, 13, 18}},
    {"ArgMax", SINCE_1, onnx_map_rename, "argmax", {1, 11, 12, 13}},
    {"ArgMin", SINCE_1, onnx_map_rename, "argmin", {1, 11, 12, 13}},
    {"Softmax", SINCE_1, onnx_map_softmax, "softmax", {1, 11, 13}},
    {"LogSoftmax", SINCE_1, onnx_map_softmax, "log_softmax", {1, 11, 13}},
    {"Hardmax", SINCE_1, onnx_map_softmax, "hardmax", {1, 11, 13}},
    {"NegativeLogLikelihoodLoss", FROM(12), onnx_map_nll_loss, NULL, {12, 13}},
    {"SoftmaxCrossEntropyLoss", FROM(12), onnx_map_softmax_cross_entropy, NULL, {12, 13}},
    {"GlobalAveragePool", SINCE_1, onnx_map_global_pool, "global_avg_pool", {1}},
    {"GlobalMaxPool", SINCE_1, onnx_map_global_pool, "global_max_pool", {1}},
    {"GlobalLpPool", SINCE_1, onnx_map_rename, "global_lp_pool", {1, 2}},
    /* convolution, pooling, resizing */
    {"Conv", SINCE_1, onnx_map_window, "conv", {1, 11}},
    {"ConvTranspose", SINCE_1, onnx_map_window, "conv_transpose", {1, 11}},
    {"MaxPool", SINCE_1, onnx_map_window, "max_pool", {1, 8, 10, 11, 12}},
    {"AveragePool", SINCE_1, onnx_map_window, "avg_pool", {1, 7, 10, 11}},
    {"LpPool", SINCE_1, onnx_map_window, "lp_pool", {1, 2, 11, 18}},
    {"Col2Im", FROM(18), onnx_map_col2im, NULL, {18}},
    {"MaxUnpool", FROM(9), onnx_map_max_unpool, "max_unpool", {9, 11}},
    {"Resize", FROM(10), onnx_map_resize, "resize", {10, 11, 13, 18}},
    {"Upsample", 7, 9, 0, onnx_map_resize, "resize", {7, 9}},
    {"GridSample", FROM(16), onnx_map_grid_sample, "grid_sample", {16, 20}},
    /* matrix products and layout */
    {"MatMul", SINCE_1, onnx_map_matmul, "matmul", {1, 9, 13}},
    {"Gemm", SINCE_1, onnx_map_gemm, "gemm", {1, 6, 7, 9, 11, 13}},
    {"Transpose", SINCE_1, onnx_map_rename, "transpose", {1, 13}},
    {"Flatten", SINCE_1, onnx_map_rename, "flatten", {1, 9, 11, 13}},
    {"Einsum", FROM(12), onnx_map_rename, "einsum", {12}},
    {"Det", FROM(11), onnx_map_rename, "det", {11}},
    /* shape */
    {"Identity", SINCE_1, onnx_map_identity, "identity", {1, 13, 14, 16}},
    {"Dropout", SINCE_1, onnx_map_identity, "identity", {1, 6, 7, 10, 12, 13}},
    {"Constant", SINCE_1, onnx_map_constant, NULL, {1, 9, 11, 12, 13}},
    {"ConstantOfShape", FROM(9), onnx_map_constant_of_shape, "constant_of_shape", {9}},
    {"Cast", SINCE_1, onnx_map_cast, "cast", {1, 6, 9, 13}},
    {"CastLike", FROM(15), onnx_map_cast_like, "cast", {15}},
    {"Shape", SINCE_1, onnx_map_shape, "shape_of", {1, 13, 15}},
    {"Size", SINCE_1, onnx_map_rename, "size_of", {1, 13}},
    {"Reshape", SINCE_1, onnx_map_reshape, "reshape", {1, 5, 13, 14}},
    {"Squeeze", SINCE_1, onnx_map_squeeze, "squeeze", {1, 11, 13}},
    {"Unsqueeze", SINCE_1, onnx_map_unsqueeze, "unsqueeze", {1, 11, 13}},
    {"Concat", SINCE_1, onnx_map_concat, "concat", {1, 4, 11, 13}},
    {"Expand", FROM(8), onnx_map_expand, "expand", {8, 13}},
    {"Tile", SINCE_1, onnx_map_tile, "tile", {1, 6, 13}},
    {"Pad", SINCE_1, onnx_map_pad, "pad", {1, 2, 11, 13, 18}},
    {"CenterCropPad", FROM(18), onnx_map_center_crop_pad, NULL, {18}},
    /* generators */
    {"EyeLike", FROM(9), onnx_map_eye_like, "eye_like", {9}},
    {"Range", FROM(11), onnx_map_range, "range", {11}},
    {"HannWindow", FROM(17), onnx_map_cosine_window, NULL, {17}},
    {"HammingWindow", FROM(17), onnx_map_cosine_window, NULL, {17}},
    {"BlackmanWindow", FROM(17), onnx_map_cosine_window, NULL, {17}},
    {"Split", SINCE_1, onnx_map_split, "slice", {1, 2, 11, 13, 18}},
    {"TopK", SINCE_1, onnx_map_topk, NULL, {1, 10, 11}},
    /* recurrent layers */
    {"RNN", SINCE_1, onnx_map_recurrent, "rnn", {1, 7, 14}},
    {"GRU", SINCE_1, onnx_map_recurrent, "gru", {1, 3, 7, 14}},
    {"LSTM", SINCE_1, onnx_map_recurrent, "lstm", {1, 7, 14}},
    /* indexing */
    {"Gather", SINCE_1, onnx_map_rename, "gather", {1, 11, 13}},
    {"GatherElements", FROM(11), onnx_map_rename, "gather_elements", {11, 13}},
    {"GatherND", FROM(11), onnx_map_rename, "gather_nd", {11, 12, 13}},
    {"Slice", SINCE_1, onnx_map_slice, "slice", {1, 10, 11, 13}},
    {"Scatter", 9, 10, 9, onnx_map_rename, "scatter_elements", {9}},
    {"ScatterElements", FROM(11), onnx_map_scatter, "scatter_elements", {11, 13, 16, 18}},
    {"ScatterND", FROM(11), onnx_map_scatter, "scatter_nd", {11, 13, 16, 18}},
    {"ReverseSequence", FROM(10), onnx_map_rename, "reverse_sequence", {10}},
    {"CumSum", FROM(11), onnx_map_cumsum, "cumsum", {11, 14}},
    {"OneHot", FROM(9), onnx_map_one_hot, "one_hot", {9, 11}},
    {"Trilu", FROM(14), onnx_map_trilu, "trilu", {14}},
    {"DepthToSpace", SINCE_1, onnx_map_rename, "depth_to_space", {1, 11, 13}},
    {"SpaceToDepth", SINCE_1, onnx_map_rename, "space_to_depth", {1, 13}},
    /* normalization */
    {"BatchNormalization", SINCE_1, onnx_map_batch_norm, "batch_norm", {1, 6, 7, 9, 14, 15}},
    {"LayerNormalization", FROM(17), onnx_map_layer_norm, "layer_norm", {17}},
    {"GroupNormalization", FROM(18), onnx_map_group_norm_18, "group_norm", {18}},
    {"InstanceNormalization", SINCE_1, onnx_map_rename, "instance_norm", {1, 6}},
    {"LpNormalization", SINCE_1, onnx_map_rename, "lp_norm", {1}},
    {"MeanVarianceNormalization", FROM(9), onnx_map_rename, "mean_variance_norm", {9, 13}},
    {"LRN", SINCE_1, onnx_map_lrn, NULL, {1, 13}},
    /* quantization */
    {"QuantizeLinear", FROM(10), onnx_map_quantize_linear, NULL, {10, 13}},
    {"DequantizeLinear", FROM(10), onnx_map_dequantize_linear, NULL, {10, 13}},
    {"DynamicQuantizeLinear", FROM(11), onnx_map_dynamic_quantize_linear, NULL, {11}},
    {"MatMulInteger", FROM(10), onnx_map_matmul_integer, NULL, {10}},
    {"ConvInteger", FROM(10), onnx_map_conv_integer, NULL, {10}},
};

/* Why an op kiln lacks cannot be imported: the classes of ops that never will be one by one, and ops of a kind kiln has none of. */
static const struct {
    const char *op;
    const char *reason;
} known_gaps[] = {
    {"If", "control flow is not supported"},
    {"Loop", "control flow is not supported"},
    {"Scan", "control flow is not supported"},
    {"SequenceAt", "sequences are not supported"},
    {"SequenceConstruct", "sequences are not supported"},
    {"SequenceEmpty", "sequences are not supported"},
    {"SequenceErase", "sequences are not supported"},
    {"SequenceInsert", "sequences are not supported"},
    {"SequenceLength", "sequences are not supported"},
    {"SequenceMap", "sequences are not supported"},
    {"SplitToSequence", "sequences are not supported"},
    {"ConcatFromSequence", "sequences are not supported"},
    {"Optional", "optional values are not supported"},
    {"OptionalGetElement", "optional values are not supported"},
    {"OptionalHasElement", "optional values are not supported"},
    {"StringNormalizer", "strings are not supported"},
    {"TfIdfVectorizer", "strings are not supported"},
    {"NonZero", "its output shape depends on the data"},
    {"Unique", "its output shape depends on the data"},
    {"Compress", "its output shape depends on the data"},
    {"NonMaxSuppression", "its output shape depends on the data"},
    {"RandomNormal", "random generators are not supported"},
    {"RandomUniform", "random generators are not supported"},
    {"RandomNormalLike", "random generators are not supported"},
    {"RandomUniformLike", "random generators are not supported"},
    {"Multinomial", "random generators are not supported"},
    {"Bernoulli", "random generators are not supported"},
    /* Opset 18's bitwise ops take integers; kiln's and, or, xor and not take bool only. */
    {"BitwiseAnd", "kiln has no bitwise integer ops (its and, or, xor, not take bool)"},
    {"BitwiseOr", "kiln has no bitwise integer ops (its and, or, xor, not take bool)"},
    {"BitwiseXor", "kiln has no bitwise integer ops (its and, or, xor, not take bool)"},
    {"BitwiseNot", "kiln has no bitwise integer ops (its and, or, xor, not take bool)"},
};

size_t onnx_mapping_count(void)
{
    return sizeof mappings / sizeof mappings[0];
}

const onnx_op_mapping *onnx_mapping_at(size_t index)
{
    return index < onnx_mapping_count() ? &mappings[index] : NULL;
}

const char *onnx_known_gap(const char *onnx_op)
{
    for (size_t i = 0; i < sizeof known_gaps / sizeof known_gaps[0]; i++)
        if (strcmp(known_gaps[i].op, onnx_op) == 0)
            return known_gaps[i].reason;
    return NULL;
}

const onnx_op_mapping *onnx_find_mapping(const char *onnx_op, int64_t opset, char *why, size_t size)
{
    const onnx_op_mapping *other_version = NULL;
    for (size_t i = 0; i < sizeof mappings / sizeof mappings[0]; i++) {
        if (strcmp(mappings[i].onnx_op, onnx_op) != 0)
            continue;
        if (opset >= mappings[i].min_opset && opset <= mappings[i].max_opset)
            return &mappings[i];
        other_version = &mappings[i];
    }
    if (why) {
        const char *gap = onnx_known_gap(onnx_op);
        if (other_version && opset < other_version->onnx_since)
            snprintf(why, size, "unsupported op %s (opset %lld): ONNX defines it from opset %lld", onnx_op,
                     (long long)opset, (long long)other_version->onnx_since);
        else if (other_version)
            snprintf(why, size, "unsupported op %s (opset %lld): mapped for opsets %lld.. only", onnx_op,
                     (long long)opset, (long long)other_version->min_opset);
        else if (gap)
            snprintf(why, size, "unsupported op %s (opset %lld): %s", onnx_op, (long long)opset, gap);
        else
            snprintf(why, size, "unsupported op %s (opset %lld)", onnx_op, (long long)opset);
    }
    return NULL;
}

