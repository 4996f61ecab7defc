/*
 * onnx_op_table.c — the table of ONNX ops kiln can express, and how (see
 * onnx_mapping.h).
 *
 * Most ONNX ops are a kiln op under another name whose attributes carry
 * over unchanged (onnx_map_rename). Others take operands ONNX passes as
 * tensors but kiln as attributes — shapes, axes, pads, repeats — which must
 * be constant at import (onnx_node_constant_ints) or symbolic
 * (onnx_map_symbolic.c); others again are decompositions (PRelu, Mish,
 * opset < 13 Softmax, Clip with computed bounds, Split, the losses and
 * quantization). Each family lives in its onnx_map_*.c file.
 * Semantics follow the ONNX operator documentation of the opset versions
 * listed in each row.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_map_elementwise.h"
#include "onnx_map_generate.h"
#include "onnx_map_loss.h"
#include "onnx_map_nn.h"
#include "onnx_map_quantize.h"
#include "onnx_map_shape.h"
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
 */
#define ALL 7, 1000, 0
#define SINCE_1 1, 1000, 1
#define FROM(v) v, 1000, v

static const onnx_op_mapping mappings[] = {
    /* elementwise arithmetic and math */
    {"Add", SINCE_1, onnx_map_binary, "add"},
    {"Sub", SINCE_1, onnx_map_binary, "sub"},
    {"Mul", SINCE_1, onnx_map_binary, "mul"},
    {"Div", SINCE_1, onnx_map_binary, "div"},
    {"Neg", SINCE_1, onnx_map_rename, "neg"},
    {"Abs", SINCE_1, onnx_map_rename, "abs"},
    {"Sign", FROM(9), onnx_map_rename, "sign"},
    {"Exp", SINCE_1, onnx_map_rename, "exp"},
    {"Log", SINCE_1, onnx_map_rename, "log"},
    {"Sqrt", SINCE_1, onnx_map_rename, "sqrt"},
    {"Reciprocal", SINCE_1, onnx_map_rename, "reciprocal"},
    {"Erf", FROM(9), onnx_map_rename, "erf"},
    {"Floor", SINCE_1, onnx_map_rename, "floor"},
    {"Ceil", SINCE_1, onnx_map_rename, "ceil"},
    {"Round", FROM(11), onnx_map_rename, "round"},
    {"Sin", FROM(7), onnx_map_rename, "sin"},
    {"Cos", FROM(7), onnx_map_rename, "cos"},
    {"Tan", FROM(7), onnx_map_rename, "tan"},
    {"Asin", FROM(7), onnx_map_rename, "asin"},
    {"Acos", FROM(7), onnx_map_rename, "acos"},
    {"Atan", FROM(7), onnx_map_rename, "atan"},
    {"Sinh", FROM(9), onnx_map_rename, "sinh"},
    {"Cosh", FROM(9), onnx_map_rename, "cosh"},
    {"Asinh", FROM(9), onnx_map_rename, "asinh"},
    {"Acosh", FROM(9), onnx_map_rename, "acosh"},
    {"Atanh", FROM(9), onnx_map_rename, "atanh"},
    {"Tanh", SINCE_1, onnx_map_rename, "tanh"},
    {"Pow", SINCE_1, onnx_map_binary, "pow"},
    {"Mod", FROM(10), onnx_map_rename, "mod"},
    {"BitShift", FROM(11), onnx_map_bitshift, "bitshift"},
    /* activations */
    {"Sigmoid", SINCE_1, onnx_map_rename, "sigmoid"},
    {"HardSigmoid", SINCE_1, onnx_map_rename, "hard_sigmoid"},
    {"HardSwish", FROM(14), onnx_map_rename, "hard_swish"},
    {"Relu", SINCE_1, onnx_map_rename, "relu"},
    {"LeakyRelu", SINCE_1, onnx_map_rename, "leaky_relu"},
    {"Elu", SINCE_1, onnx_map_rename, "elu"},
    {"Selu", SINCE_1, onnx_map_rename, "selu"},
    {"Celu", FROM(12), onnx_map_rename, "celu"},
    {"Softplus", SINCE_1, onnx_map_rename, "softplus"},
    {"Softsign", SINCE_1, onnx_map_rename, "softsign"},
    {"Shrink", FROM(9), onnx_map_rename, "shrink"},
    {"ThresholdedRelu", FROM(10), onnx_map_rename, "thresholded_relu"},
    {"PRelu", ALL, onnx_map_prelu, NULL},
    {"Mish", FROM(18), onnx_map_mish, NULL},
    {"Clip", SINCE_1, onnx_map_clip, "clip"},
    /* comparison, logic, selection, variadic */
    {"Equal", SINCE_1, onnx_map_binary, "eq"},
    {"Less", SINCE_1, onnx_map_binary, "lt"},
    {"LessOrEqual", FROM(12), onnx_map_rename, "le"},
    {"Greater", SINCE_1, onnx_map_binary, "gt"},
    {"GreaterOrEqual", FROM(12), onnx_map_rename, "ge"},
    {"And", SINCE_1, onnx_map_binary, "and"},
    {"Or", SINCE_1, onnx_map_binary, "or"},
    {"Xor", SINCE_1, onnx_map_binary, "xor"},
    {"Not", SINCE_1, onnx_map_rename, "not"},
    {"IsNaN", FROM(9), onnx_map_rename, "isnan"},
    {"IsInf", FROM(10), onnx_map_rename, "isinf"},
    {"Where", FROM(9), onnx_map_rename, "where"},
    {"Max", SINCE_1, onnx_map_rename, "max"},
    {"Min", SINCE_1, onnx_map_rename, "min"},
    {"Sum", SINCE_1, onnx_map_rename, "sum"},
    {"Mean", SINCE_1, onnx_map_rename, "mean"},
    /* reductions and softmax */
    {"ReduceSum", SINCE_1, onnx_map_reduce, "reduce_sum"},
    {"ReduceMean", SINCE_1, onnx_map_reduce, "reduce_mean"},
    {"ReduceMax", SINCE_1, onnx_map_reduce, "reduce_max"},
    {"ReduceMin", SINCE_1, onnx_map_reduce, "reduce_min"},
    {"ReduceProd", SINCE_1, onnx_map_reduce, "reduce_prod"},
    {"ReduceL1", SINCE_1, onnx_map_reduce, "reduce_l1"},
    {"ReduceL2", SINCE_1, onnx_map_reduce, "reduce_l2"},
    {"ReduceSumSquare", SINCE_1, onnx_map_reduce, "reduce_sum_square"},
    {"ReduceLogSum", SINCE_1, onnx_map_reduce, "reduce_log_sum"},
    {"ReduceLogSumExp", SINCE_1, onnx_map_reduce, "reduce_log_sum_exp"},
    {"ArgMax", SINCE_1, onnx_map_rename, "argmax"},
    {"ArgMin", SINCE_1, onnx_map_rename, "argmin"},
    {"Softmax", SINCE_1, onnx_map_softmax, "softmax"},
    {"LogSoftmax", SINCE_1, onnx_map_softmax, "log_softmax"},
    {"Hardmax", SINCE_1, onnx_map_softmax, "hardmax"},
    {"NegativeLogLikelihoodLoss", FROM(12), onnx_map_nll_loss, NULL},
    {"SoftmaxCrossEntropyLoss", FROM(12), onnx_map_softmax_cross_entropy, NULL},
    {"GlobalAveragePool", SINCE_1, onnx_map_global_pool, "global_avg_pool"},
    {"GlobalMaxPool", SINCE_1, onnx_map_global_pool, "global_max_pool"},
    {"GlobalLpPool", SINCE_1, onnx_map_rename, "global_lp_pool"},
    /* convolution, pooling, resizing */
    {"Conv", SINCE_1, onnx_map_window, "conv"},
    {"ConvTranspose", SINCE_1, onnx_map_window, "conv_transpose"},
    {"MaxPool", SINCE_1, onnx_map_window, "max_pool"},
    {"AveragePool", SINCE_1, onnx_map_window, "avg_pool"},
    {"LpPool", SINCE_1, onnx_map_window, "lp_pool"},
    {"MaxUnpool", FROM(9), onnx_map_max_unpool, "max_unpool"},
    {"Resize", FROM(10), onnx_map_resize, "resize"},
    {"Upsample", 7, 9, 0, onnx_map_resize, "resize"},
    {"GridSample", FROM(16), onnx_map_grid_sample, "grid_sample"},
    /* matrix products and layout */
    {"MatMul", SINCE_1, onnx_map_rename, "matmul"},
    {"Gemm", SINCE_1, onnx_map_gemm, "gemm"},
    {"Transpose", SINCE_1, onnx_map_rename, "transpose"},
    {"Flatten", SINCE_1, onnx_map_rename, "flatten"},
    {"Einsum", FROM(12), onnx_map_rename, "einsum"},
    {"Det", FROM(11), onnx_map_rename, "det"},
    /* shape */
    {"Identity", SINCE_1, onnx_map_identity, "identity"},
    {"Dropout", SINCE_1, onnx_map_identity, "identity"},
    {"Constant", SINCE_1, onnx_map_constant, NULL},
    {"ConstantOfShape", FROM(9), onnx_map_constant_of_shape, "constant_of_shape"},
    {"Cast", SINCE_1, onnx_map_cast, "cast"},
    {"CastLike", FROM(15), onnx_map_cast_like, "cast"},
    {"Shape", SINCE_1, onnx_map_shape, "shape_of"},
    {"Size", SINCE_1, onnx_map_rename, "size_of"},
    {"Reshape", SINCE_1, onnx_map_reshape, "reshape"},
    {"Squeeze", SINCE_1, onnx_map_squeeze, "squeeze"},
    {"Unsqueeze", SINCE_1, onnx_map_unsqueeze, "unsqueeze"},
    {"Concat", SINCE_1, onnx_map_concat, "concat"},
    {"Expand", FROM(8), onnx_map_expand, "expand"},
    {"Tile", SINCE_1, onnx_map_tile, "tile"},
    {"Pad", SINCE_1, onnx_map_pad, "pad"},
    /* generators */
    {"EyeLike", FROM(9), onnx_map_eye_like, "eye_like"},
    {"Range", FROM(11), onnx_map_range, "range"},
    {"HannWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"HammingWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"BlackmanWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"Split", SINCE_1, onnx_map_split, "slice"},
    {"TopK", SINCE_1, onnx_map_topk, NULL},
    /* recurrent layers */
    {"RNN", SINCE_1, onnx_map_recurrent, "rnn"},
    {"GRU", SINCE_1, onnx_map_recurrent, "gru"},
    {"LSTM", SINCE_1, onnx_map_recurrent, "lstm"},
    /* indexing */
    {"Gather", SINCE_1, onnx_map_rename, "gather"},
    {"GatherElements", FROM(11), onnx_map_rename, "gather_elements"},
    {"GatherND", FROM(11), onnx_map_rename, "gather_nd"},
    {"Slice", SINCE_1, onnx_map_slice, "slice"},
    {"Scatter", 9, 10, 9, onnx_map_rename, "scatter_elements"},
    {"ScatterElements", FROM(11), onnx_map_rename, "scatter_elements"},
    {"ScatterND", FROM(11), onnx_map_rename, "scatter_nd"},
    {"ReverseSequence", FROM(10), onnx_map_rename, "reverse_sequence"},
    {"CumSum", FROM(11), onnx_map_cumsum, "cumsum"},
    {"OneHot", FROM(9), onnx_map_one_hot, "one_hot"},
    {"Trilu", FROM(14), onnx_map_trilu, "trilu"},
    {"DepthToSpace", SINCE_1, onnx_map_rename, "depth_to_space"},
    {"SpaceToDepth", SINCE_1, onnx_map_rename, "space_to_depth"},
    /* normalization */
    {"BatchNormalization", SINCE_1, onnx_map_batch_norm, "batch_norm"},
    {"LayerNormalization", FROM(17), onnx_map_layer_norm, "layer_norm"},
    {"InstanceNormalization", SINCE_1, onnx_map_rename, "instance_norm"},
    {"LpNormalization", SINCE_1, onnx_map_rename, "lp_norm"},
    {"MeanVarianceNormalization", FROM(9), onnx_map_rename, "mean_variance_norm"},
    {"LRN", SINCE_1, onnx_map_lrn, NULL},
    /* quantization */
    {"QuantizeLinear", FROM(10), onnx_map_quantize_linear, NULL},
    {"DequantizeLinear", FROM(10), onnx_map_dequantize_linear, NULL},
    {"DynamicQuantizeLinear", FROM(11), onnx_map_dynamic_quantize_linear, NULL},
    {"MatMulInteger", FROM(10), onnx_map_matmul_integer, NULL},
    {"ConvInteger", FROM(10), onnx_map_conv_integer, NULL},
};

/* Why an op kiln lacks cannot be imported, for the classes of ops that never will be one by one. */
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
};

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
        const char *gap = NULL;
        for (size_t i = 0; i < sizeof known_gaps / sizeof known_gaps[0]; i++)
            if (strcmp(known_gaps[i].op, onnx_op) == 0)
                gap = known_gaps[i].reason;
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

