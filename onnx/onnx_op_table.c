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
 * Opset 7 is where ONNX settled broadcasting, Dropout's and
 * BatchNormalization's test mode and the other semantics every mapping
 * was written against: a row covers opsets 7.. unless it says otherwise.
 * SINCE_1 marks the ops whose every earlier version computes the same
 * thing (the only difference being consumed_inputs, a legacy hint that
 * onnx_map_rename drops). FROM(v) marks an op ONNX added in opset v > 7:
 * below v the op does not exist, so a model that uses it there is refused
 * as ONNX itself would (a model stamped opset 14 that uses Mish, added in
 * 18). A node binds to the newest version of its op not above the model's
 * opset; a mapping that differs between versions reads node->opset. The
 * first versions were taken from onnx.defs (onnx 1.12; Mish from the
 * opset 18 operator list) and test_onnx_ops.c checks a few of them.
 */
#define ALL 7, 1000, 0
#define SINCE_1 1, 1000, 1
#define FROM(v) v, 1000, v

static const onnx_op_mapping mappings[] = {
    /* elementwise arithmetic and math */
    {"Add", ALL, onnx_map_rename, "add"},
    {"Sub", ALL, onnx_map_rename, "sub"},
    {"Mul", ALL, onnx_map_rename, "mul"},
    {"Div", ALL, onnx_map_rename, "div"},
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
    {"Sin", ALL, onnx_map_rename, "sin"},
    {"Cos", ALL, onnx_map_rename, "cos"},
    {"Tan", ALL, onnx_map_rename, "tan"},
    {"Asin", ALL, onnx_map_rename, "asin"},
    {"Acos", ALL, onnx_map_rename, "acos"},
    {"Atan", ALL, onnx_map_rename, "atan"},
    {"Sinh", FROM(9), onnx_map_rename, "sinh"},
    {"Cosh", FROM(9), onnx_map_rename, "cosh"},
    {"Asinh", FROM(9), onnx_map_rename, "asinh"},
    {"Acosh", FROM(9), onnx_map_rename, "acosh"},
    {"Atanh", FROM(9), onnx_map_rename, "atanh"},
    {"Tanh", SINCE_1, onnx_map_rename, "tanh"},
    {"Pow", ALL, onnx_map_pow, "pow"},
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
    {"Clip", ALL, onnx_map_clip, "clip"},
    /* comparison, logic, selection, variadic */
    {"Equal", ALL, onnx_map_rename, "eq"},
    {"Less", ALL, onnx_map_rename, "lt"},
    {"LessOrEqual", FROM(12), onnx_map_rename, "le"},
    {"Greater", ALL, onnx_map_rename, "gt"},
    {"GreaterOrEqual", FROM(12), onnx_map_rename, "ge"},
    {"And", ALL, onnx_map_rename, "and"},
    {"Or", ALL, onnx_map_rename, "or"},
    {"Xor", ALL, onnx_map_rename, "xor"},
    {"Not", SINCE_1, onnx_map_rename, "not"},
    {"IsNaN", FROM(9), onnx_map_rename, "isnan"},
    {"IsInf", FROM(10), onnx_map_rename, "isinf"},
    {"Where", FROM(9), onnx_map_rename, "where"},
    {"Max", ALL, onnx_map_rename, "max"},
    {"Min", ALL, onnx_map_rename, "min"},
    {"Sum", ALL, onnx_map_rename, "sum"},
    {"Mean", ALL, onnx_map_rename, "mean"},
    /* reductions and softmax */
    {"ReduceSum", ALL, onnx_map_reduce, "reduce_sum"},
    {"ReduceMean", ALL, onnx_map_reduce, "reduce_mean"},
    {"ReduceMax", ALL, onnx_map_reduce, "reduce_max"},
    {"ReduceMin", ALL, onnx_map_reduce, "reduce_min"},
    {"ReduceProd", ALL, onnx_map_reduce, "reduce_prod"},
    {"ReduceL1", ALL, onnx_map_reduce, "reduce_l1"},
    {"ReduceL2", ALL, onnx_map_reduce, "reduce_l2"},
    {"ReduceSumSquare", ALL, onnx_map_reduce, "reduce_sum_square"},
    {"ReduceLogSum", ALL, onnx_map_reduce, "reduce_log_sum"},
    {"ReduceLogSumExp", ALL, onnx_map_reduce, "reduce_log_sum_exp"},
    {"ArgMax", ALL, onnx_map_rename, "argmax"},
    {"ArgMin", ALL, onnx_map_rename, "argmin"},
    {"Softmax", ALL, onnx_map_softmax, "softmax"},
    {"LogSoftmax", ALL, onnx_map_softmax, "log_softmax"},
    {"Hardmax", ALL, onnx_map_softmax, "hardmax"},
    {"NegativeLogLikelihoodLoss", FROM(12), onnx_map_nll_loss, NULL},
    {"SoftmaxCrossEntropyLoss", FROM(12), onnx_map_softmax_cross_entropy, NULL},
    {"GlobalAveragePool", SINCE_1, onnx_map_global_pool, "global_avg_pool"},
    {"GlobalMaxPool", SINCE_1, onnx_map_global_pool, "global_max_pool"},
    {"GlobalLpPool", ALL, onnx_map_rename, "global_lp_pool"},
    /* convolution, pooling, resizing */
    {"Conv", ALL, onnx_map_window, "conv"},
    {"ConvTranspose", ALL, onnx_map_window, "conv_transpose"},
    {"MaxPool", ALL, onnx_map_window, "max_pool"},
    {"AveragePool", ALL, onnx_map_window, "avg_pool"},
    {"LpPool", ALL, onnx_map_window, "lp_pool"},
    {"MaxUnpool", FROM(9), onnx_map_max_unpool, "max_unpool"},
    {"Resize", FROM(10), onnx_map_resize, "resize"},
    {"Upsample", 9, 9, 0, onnx_map_resize, "resize"},
    {"GridSample", FROM(16), onnx_map_grid_sample, "grid_sample"},
    /* matrix products and layout */
    {"MatMul", ALL, onnx_map_rename, "matmul"},
    {"Gemm", ALL, onnx_map_gemm, "gemm"},
    {"Transpose", ALL, onnx_map_rename, "transpose"},
    {"Flatten", ALL, onnx_map_rename, "flatten"},
    {"Einsum", FROM(12), onnx_map_rename, "einsum"},
    {"Det", FROM(11), onnx_map_rename, "det"},
    /* shape */
    {"Identity", SINCE_1, onnx_map_identity, "identity"},
    {"Dropout", ALL, onnx_map_identity, "identity"},
    {"Constant", ALL, onnx_map_constant, NULL},
    {"ConstantOfShape", FROM(9), onnx_map_constant_of_shape, "constant_of_shape"},
    {"Cast", ALL, onnx_map_cast, "cast"},
    {"CastLike", FROM(15), onnx_map_cast_like, "cast"},
    {"Shape", ALL, onnx_map_shape, "shape_of"},
    {"Size", ALL, onnx_map_rename, "size_of"},
    {"Reshape", ALL, onnx_map_reshape, "reshape"},
    {"Squeeze", ALL, onnx_map_squeeze, "squeeze"},
    {"Unsqueeze", ALL, onnx_map_unsqueeze, "unsqueeze"},
    {"Concat", ALL, onnx_map_rename, "concat"},
    {"Expand", FROM(8), onnx_map_expand, "expand"},
    {"Tile", ALL, onnx_map_tile, "tile"},
    {"Pad", ALL, onnx_map_pad, "pad"},
    /* generators */
    {"EyeLike", FROM(9), onnx_map_eye_like, "eye_like"},
    {"Range", FROM(11), onnx_map_range, "range"},
    {"HannWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"HammingWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"BlackmanWindow", FROM(17), onnx_map_cosine_window, NULL},
    {"Split", ALL, onnx_map_split, "slice"},
    {"TopK", SINCE_1, onnx_map_topk, NULL},
    /* recurrent layers */
    {"RNN", ALL, onnx_map_recurrent, "rnn"},
    {"GRU", ALL, onnx_map_recurrent, "gru"},
    {"LSTM", ALL, onnx_map_recurrent, "lstm"},
    /* indexing */
    {"Gather", ALL, onnx_map_rename, "gather"},
    {"GatherElements", FROM(11), onnx_map_rename, "gather_elements"},
    {"GatherND", FROM(11), onnx_map_rename, "gather_nd"},
    {"Slice", ALL, onnx_map_slice, "slice"},
    {"Scatter", 9, 10, 9, onnx_map_rename, "scatter_elements"},
    {"ScatterElements", FROM(11), onnx_map_rename, "scatter_elements"},
    {"ScatterND", FROM(11), onnx_map_rename, "scatter_nd"},
    {"ReverseSequence", FROM(10), onnx_map_rename, "reverse_sequence"},
    {"CumSum", FROM(11), onnx_map_cumsum, "cumsum"},
    {"OneHot", FROM(9), onnx_map_one_hot, "one_hot"},
    {"Trilu", FROM(14), onnx_map_trilu, "trilu"},
    {"DepthToSpace", ALL, onnx_map_rename, "depth_to_space"},
    {"SpaceToDepth", ALL, onnx_map_rename, "space_to_depth"},
    /* normalization */
    {"BatchNormalization", ALL, onnx_map_batch_norm, "batch_norm"},
    {"LayerNormalization", FROM(17), onnx_map_layer_norm, "layer_norm"},
    {"InstanceNormalization", SINCE_1, onnx_map_rename, "instance_norm"},
    {"LpNormalization", ALL, onnx_map_rename, "lp_norm"},
    {"MeanVarianceNormalization", FROM(9), onnx_map_rename, "mean_variance_norm"},
    {"LRN", ALL, onnx_map_lrn, NULL},
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

