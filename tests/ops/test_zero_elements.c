/*
 * test_zero_elements.c — every kernel's work is bounded by its elements
 * (issue 20, point 2).
 *
 * A shape like (INT64_MAX, 0) has no elements and needs no memory, so a
 * crafted artifact can hand one to any kernel cheaply; a kernel that loops
 * over its huge extent (for each of 2^63 rows, nothing) hangs the session.
 * Before the fix this test found such loops in depth_to_space and
 * space_to_depth (blocksize 3037000499: b*b steps per channel), all seven
 * rnn/gru/lstm ops (2^63 steps of batch 0), softmax, log_softmax, hardmax,
 * top_k and top_k_indices along axis 0 of (0, INT64_MAX), concat along
 * axis 1 of (INT64_MAX, 0), batch_norm of (INT64_MAX, 0, 2), one_hot of
 * depth INT64_MAX along axis 0 of (0) and gather_nd of indices
 * (INT64_MAX, 0); and, in the sanitizer build, signed overflow in the
 * stride and size arithmetic of cumsum, trilu, pad, reductions, transpose,
 * slice, gather_nd and matmul on (0, INT64_MAX, INT64_MAX).
 *
 * For every op of the registry, the table below gives calls whose operands
 * have no elements and one huge extent, as far as the op's shape rule admits
 * them (the rule itself derives the output shape here, so a recipe the rule
 * refuses fails the test instead of testing nothing). Each call runs the
 * fast path (without a context, then with one holding a oneDNN session) and
 * the reference kernel (without a context, then with two threads and a
 * state slot), each under a watchdog: a kernel still running after
 * WATCHDOG_SECONDS ends the test with the op's name. An op added to the
 * registry without a recipe fails the test. Recipes whose output has
 * elements although an input is empty (a full reduction of an empty
 * tensor, global pools of an empty plane, concat with an empty operand,
 * det of a 0x0 matrix) also check that every output element was written,
 * and where the spec names the value (an empty sum is 0, an empty product
 * 1, det of 0x0 is 1), that value. f32 recipes are run again in f16, which
 * goes through the half-precision widening (half_compute.h), where the
 * shape rule takes f16.
 *
 * The kernels are built at -O2 in the plain build and unoptimized in the
 * sanitizer build, and the test runs in both: an empty loop the optimizer
 * removes in one build still runs in the other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribute.h"
#include "onednn.h"
#include "op_registry.h"
#include "shape_expr.h"
#include "tensor.h"

#include "tensor_fixture.h"

#define WATCHDOG_SECONDS 2
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
/* Recipes keep their non-empty operands and outputs small. */
#define MAX_SMALL_ELEMENTS 4096
/* An extent at least this large counts as huge. */
#define HUGE_EXTENT ((int64_t)1 << 40)
#define MAX_OPERANDS 8
#define MAX_ATTRIBUTES 8

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/*
 * One call: `operands` is a space-separated list of dtype[extents]
 * ("f32[H,0] i64[0]"); `attributes` a ';'-separated list of name=value, the
 * value read as the op's attribute spec types it (INTS and FLOATS as
 * comma-separated lists). In both, H is INT64_MAX, B is 3037000499 (the
 * largest b with b*b in int64) and BB is B*B. `expect` is the value every
 * output element must hold when the output has elements (NAN: any written
 * value).
 */
typedef struct recipe {
    const char *op;
    const char *operands;
    const char *attributes;
    double expect;
} recipe;

#define ANY NAN

/* Elementwise ops of one operand: each runs on the three shapes below. */
static const struct {
    const char *op;
    const char *dtype;
    const char *attributes;
} unary_like[] = {
    {"neg", "f32", ""}, {"abs", "f32", ""}, {"sign", "f32", ""}, {"exp", "f32", ""}, {"log", "f32", ""},
    {"sqrt", "f32", ""}, {"rsqrt", "f32", ""}, {"reciprocal", "f32", ""}, {"sin", "f32", ""},
    {"cos", "f32", ""}, {"tan", "f32", ""}, {"asin", "f32", ""}, {"acos", "f32", ""}, {"atan", "f32", ""},
    {"sinh", "f32", ""}, {"cosh", "f32", ""}, {"asinh", "f32", ""}, {"acosh", "f32", ""},
    {"atanh", "f32", ""}, {"tanh", "f32", ""}, {"sigmoid", "f32", ""},
    {"hard_sigmoid", "f32", "alpha=0.2;beta=0.5"}, {"hard_swish", "f32", ""}, {"relu", "f32", ""},
    {"relu", "i32", ""}, {"leaky_relu", "f32", "alpha=0.1"}, {"elu", "f32", "alpha=1"},
    {"selu", "f32", ""}, {"celu", "f32", "alpha=1"}, {"gelu", "f32", ""}, {"silu", "f32", ""},
    {"softplus", "f32", ""}, {"mish", "f32", ""}, {"softsign", "f32", ""}, {"shrink", "f32", "bias=0;lambd=0.5"},
    {"thresholded_relu", "f32", "alpha=1"}, {"erf", "f32", ""}, {"floor", "f32", ""}, {"ceil", "f32", ""},
    {"round", "f32", ""}, {"clip", "f32", "min=-1;max=1"}, {"clip", "i8", "min=-1;max=1"},
    {"not", "bool", ""}, {"isnan", "f32", ""}, {"isinf", "f32", ""}, {"identity", "f32", ""},
    {"cast", "f32", "to=f64"}, {"cast", "i64", "to=f16"}, {"lp_norm", "f32", "axis=1;p=2"},
    {"lp_norm", "f32", "axis=0;p=1"}, {"cumsum", "f32", "axis=0"}, {"cumsum", "f32", "axis=1;reverse=1"},
    {"softmax", "f32", "axis=0"}, {"softmax", "f32", "axis=1"}, {"log_softmax", "f32", "axis=0"},
    {"log_softmax", "f32", "axis=1"}, {"hardmax", "f32", "axis=0"}, {"hardmax", "f32", "axis=1"},
    {"trilu", "f32", "upper=1"}, {"trilu", "f32", "upper=0;k=-3"},
};
static const char *const unary_shapes[] = {"[H,0]", "[0,H]", "[0,H,2]", "[0,H,H]", "[H,H,0]", "[H,0,H]"};

/* Elementwise ops of two operands (broadcasting): each runs on the pairs below. */
static const struct {
    const char *op;
    const char *dtype;
    const char *attributes;
} binary_like[] = {
    {"add", "f32", ""}, {"sub", "f32", ""}, {"mul", "f32", ""}, {"div", "f32", ""}, {"div", "i32", ""},
    {"pow", "f32", ""}, {"mod", "f32", "fmod=1"}, {"mod", "i32", ""}, {"eq", "f32", ""}, {"ne", "f32", ""},
    {"lt", "f32", ""}, {"le", "f32", ""}, {"gt", "f32", ""}, {"ge", "f32", ""}, {"and", "bool", ""},
    {"or", "bool", ""}, {"xor", "bool", ""}, {"bitshift", "u8", "direction=left"}, {"max", "f32", ""},
    {"min", "f32", ""}, {"sum", "f32", ""}, {"mean", "f32", ""},
};
static const char *const binary_shapes[][2] = {
    {"[H,0]", "[H,0]"}, {"[H,0]", "[1,0]"}, {"[0,H,2]", "[0,1,2]"}, {"[0,H]", "[]"}, {"[2,0,H]", "[1,0,1]"}, {"[0,H,H]", "[0,1,H]"},
    {"[H,H,0]", "[1,H,0]"}, {"[H,0,H]", "[H,0,1]"}};

/* Everything else, one call per line. */
static const recipe recipes[] = {
    {"where", "bool[H,0] f32[H,0] f32[1,0]", "", ANY},
    {"where", "bool[0,1] f32[] f32[0,H]", "", ANY},
    {"max", "f32[H,0] f32[1,0] f32[H,0]", "", ANY},
    {"sum", "f32[0,H] f32[0,1] f32[1,1] f32[]", "", ANY},

    /* Reductions: zero-element outputs, and full reductions of an empty tensor. */
    {"reduce_sum", "f32[H,0]", "axes=0;keepdims=0", ANY},
    {"reduce_sum", "f32[0,H]", "axes=1", ANY},
    {"reduce_sum", "f32[H,0]", "keepdims=0", 0},
    {"reduce_sum", "f32[H,0,3]", "axes=0,1;keepdims=1", 0},
    {"reduce_mean", "f32[H,0]", "axes=0;keepdims=0", ANY},
    {"reduce_mean", "f32[0,H]", "axes=1", ANY},
    {"reduce_max", "f32[H,0]", "axes=0;keepdims=0", ANY},
    {"reduce_max", "f32[0,H]", "axes=1", ANY},
    {"reduce_min", "f32[H,0]", "axes=0;keepdims=0", ANY},
    {"reduce_min", "f32[0,H]", "axes=1", ANY},
    {"reduce_prod", "f32[H,0]", "axes=0;keepdims=0", ANY},
    {"reduce_prod", "f32[0,H]", "keepdims=0", 1},
    {"reduce_l1", "f32[H,0]", "keepdims=0", 0},
    {"reduce_l1", "f32[0,H]", "axes=1", ANY},
    {"reduce_l2", "f32[H,0]", "keepdims=0", 0},
    {"reduce_l2", "f32[0,H]", "axes=1", ANY},
    {"reduce_sum_square", "f32[H,0]", "keepdims=0", 0},
    {"reduce_sum_square", "f32[0,H]", "axes=1", ANY},
    {"reduce_log_sum", "f32[H,0]", "keepdims=0", -INFINITY},
    {"reduce_log_sum", "f32[0,H]", "axes=1", ANY},
    {"reduce_log_sum_exp", "f32[H,0]", "keepdims=0", -INFINITY},
    {"reduce_log_sum_exp", "f32[0,H]", "axes=1", ANY},
    {"argmax", "f32[0,H]", "axis=1", ANY},
    {"argmax", "f32[H,0]", "axis=0", ANY},
    {"argmin", "f32[0,H]", "axis=1;keepdims=0", ANY},
    {"argmin", "f32[H,0]", "axis=0", ANY},

    /* Two huge extents: row-major strides of these overflow int64. */
    {"reduce_sum", "f32[0,H,H]", "axes=1", ANY},
    {"reduce_max", "f32[0,H,H]", "axes=2", ANY},
    {"argmax", "f32[0,H,H]", "axis=2", ANY},
    {"mean_variance_norm", "f32[0,H,H]", "axes=1", ANY},
    {"layer_norm", "f32[0,H,H,2] f32[2]", "axis=3", ANY},
    {"instance_norm", "f32[0,2,H,H] f32[2] f32[2]", "", ANY},
    {"transpose", "f32[0,H,H]", "perm=2,0,1", ANY},
    {"concat", "f32[0,H,H] f32[0,H,H]", "axis=0", ANY},
    {"expand", "f32[0,1,1]", "shape=0,H,H", ANY},
    {"tile", "f32[0,1,1]", "repeats=1,H,H", ANY},
    {"pad", "f32[0,H,H]", "pads=0,0,0,0,0,0", ANY},
    {"slice", "f32[0,H,H]", "starts=1;ends=H;axes=2", ANY},
    {"gather", "f32[0,H,H] i64[2]", "axis=1", ANY},
    {"gather_elements", "f32[0,H,H] i64[0,H,H]", "axis=2", ANY},
    {"gather_nd", "f32[0,H,H] i64[0,H,1]", "", ANY},
    {"scatter_elements", "f32[0,H,H] i64[0,H,H] f32[0,H,H]", "axis=1", ANY},
    {"top_k", "f32[0,H,H]", "axis=1;k=2", ANY},
    {"matmul", "f32[0,H,H] f32[0,H,0]", "", ANY},
    {"einsum", "f32[0,H,H]", "equation=bij->bji", ANY},
    {"einsum", "f32[0,H,H] f32[0,H,H]", "equation=bij,bij->b", ANY},
    {"reverse_sequence", "f32[0,H,H] i64[0]", "batch_axis=0;time_axis=1", ANY},
    {"max_pool", "f32[0,2,H,H]", "kernel_shape=1,1", ANY},
    {"avg_pool", "f32[0,2,H,H]", "kernel_shape=1,1", ANY},
    {"global_avg_pool", "f32[0,2,H,H]", "", ANY},
    {"conv", "f32[0,2,H,H] f32[3,2,1,1]", "", ANY},
    {"resize", "f32[0,1,H,H]", "scales=1,1,1,1", ANY},
    {"depth_to_space", "f32[0,4,H,H]", "blocksize=1", ANY},
    {"cumsum", "f32[0,H,H]", "axis=2", ANY},
    {"one_hot", "i64[0,H]", "depth=H", ANY},
    {"one_hot", "i64[0]", "depth=H;axis=0", ANY},
    {"gather_nd", "f32[0] i64[H,0]", "", ANY},
    {"det", "f32[0,H,H,2,2]", "", ANY},

    /* linalg */
    {"matmul", "f32[0,H] f32[H,0]", "", ANY},
    {"matmul", "f32[H,0] f32[0,0]", "", ANY},
    {"matmul", "f32[2,0] f32[0,3]", "", 0},
    {"matmul", "f32[H,0,2] f32[1,2,3]", "", ANY},
    {"gemm", "f32[0,H] f32[H,0]", "", ANY},
    {"gemm", "f32[H,0] f32[H,0] f32[0]", "transA=1;transB=0", ANY},
    {"gemm", "f32[2,0] f32[0,3] f32[3]", "", ANY},
    {"transpose", "f32[H,0,2]", "perm=2,0,1", ANY},
    {"transpose", "f32[0,H]", "", ANY},
    {"flatten", "f32[H,0,2]", "axis=1", ANY},
    {"flatten", "f32[0,H,2]", "axis=2", ANY},

    /* shape */
    {"squeeze", "f32[H,0,1]", "axes=2", ANY},
    {"unsqueeze", "f32[H,0]", "axes=0", ANY},
    {"reshape", "f32[H,0]", "shape=1,0,H", ANY},
    {"reshape", "f32[0,H]", "shape=H,-1", ANY},
    {"concat", "f32[H,0] f32[H,0]", "axis=1", ANY},
    {"concat", "f32[0,H] f32[0,H]", "axis=0", ANY},
    {"concat", "f32[2,0] f32[2,3] f32[2,0]", "axis=1", ANY},
    {"expand", "f32[1,0]", "shape=H,0", ANY},
    {"expand", "f32[0,1]", "shape=0,H", ANY},
    {"expand_to", "f32[1,0]", "shape=[9223372036854775807, 0]", ANY},
    {"expand_to", "f32[0,1,1]", "shape=[0, 9223372036854775807, 9223372036854775807]", ANY},
    {"tile", "f32[1,0]", "repeats=H,1", ANY},
    {"tile", "f32[0,1]", "repeats=1,H", ANY},
    {"pad", "f32[0,H]", "pads=0,0,0,0", ANY},
    {"pad", "f32[0,0,H]", "pads=0,2,0,0,3,0", ANY},
    {"pad", "f32[H,0,2]", "pads=0,0,1,0,0,1;mode=edge", ANY},
    {"pad", "f32[0,H,2]", "pads=0,0,1,0,0,1;mode=reflect", ANY},
    {"shape_of", "f32[H,0]", "", ANY},
    {"size_of", "f32[H,0]", "", 0},

    /* gather */
    {"gather", "f32[0,H] i64[0]", "axis=0", ANY},
    {"gather", "f32[H,0] i64[3]", "axis=0", ANY},
    {"gather", "f32[H,0] i64[0,H]", "axis=0", ANY},
    {"gather_elements", "f32[H,0] i64[H,0]", "axis=0", ANY},
    {"gather_elements", "f32[0,H] i64[0,H]", "axis=1", ANY},
    {"gather_nd", "f32[H,0] i64[0,1]", "", ANY},
    {"gather_nd", "f32[H,0] i64[H,0,1]", "", ANY},
    {"slice", "f32[H,0]", "starts=0;ends=H;axes=0", ANY},
    {"slice", "f32[0,H]", "starts=1;ends=H;axes=1;steps=2", ANY},
    {"one_hot", "i64[0]", "depth=H", ANY},
    {"one_hot", "i64[H,0]", "depth=3", ANY},
    {"depth_to_space", "f32[1,BB,0,1]", "blocksize=B", ANY},
    {"depth_to_space", "f32[1,BB,0,1]", "blocksize=B;mode=CRD", ANY},
    {"space_to_depth", "f32[1,1,0,B]", "blocksize=B", ANY},

    /* norm */
    {"batch_norm", "f32[H,0,2] f32[0] f32[0] f32[0] f32[0]", "", ANY},
    {"batch_norm", "f32[0,3,H] f32[3] f32[3] f32[3] f32[3]", "", ANY},
    {"layer_norm", "f32[H,0,2] f32[2]", "axis=2", ANY},
    {"layer_norm", "f32[0,H,2] f32[2] f32[2]", "axis=-1", ANY},
    {"group_norm", "f32[H,2,0] f32[2] f32[2]", "num_groups=1", ANY},
    {"group_norm", "f32[0,2,H] f32[2] f32[2]", "num_groups=2", ANY},
    {"instance_norm", "f32[H,2,0] f32[2] f32[2]", "", ANY},
    {"instance_norm", "f32[0,2,H] f32[2] f32[2]", "", ANY},
    {"mean_variance_norm", "f32[H,0,2]", "axes=0,2", ANY},
    {"mean_variance_norm", "f32[0,H]", "axes=0", ANY},

    /* conv and pools */
    {"conv", "f32[0,2,H] f32[3,2,1]", "", ANY},
    {"conv", "f32[H,0,5] f32[0,0,1] f32[0]", "", ANY},
    {"conv", "f32[0,2,H,1] f32[3,2,1,1] f32[3]", "", ANY},
    {"conv_transpose", "f32[0,2,H] f32[2,3,1]", "", ANY},
    {"conv_transpose", "f32[H,0,5] f32[0,0,1]", "", ANY},
    {"max_pool", "f32[0,2,H]", "kernel_shape=1", ANY},
    {"max_pool", "f32[H,0,5]", "kernel_shape=2", ANY},
    {"max_pool", "f32[H,0,5,5]", "kernel_shape=2,2", ANY},
    {"avg_pool", "f32[0,2,H]", "kernel_shape=1", ANY},
    {"avg_pool", "f32[H,0,5]", "kernel_shape=2", ANY},
    {"avg_pool", "f32[H,0,5,5]", "kernel_shape=2,2", ANY},
    {"lp_pool", "f32[0,2,H]", "kernel_shape=1;p=2", ANY},
    {"lp_pool", "f32[H,0,5]", "kernel_shape=2;p=2", ANY},
    {"global_max_pool", "f32[H,0,5]", "", ANY},
    {"global_max_pool", "f32[0,2,H]", "", ANY},
    {"global_max_pool", "f32[H,0,5,5]", "", ANY},
    {"global_avg_pool", "f32[H,0,5]", "", ANY},
    {"global_avg_pool", "f32[0,2,H]", "", ANY},
    {"global_avg_pool", "f32[H,0,5,5]", "", ANY},
    {"global_lp_pool", "f32[H,0,5]", "p=2", ANY},
    {"global_lp_pool", "f32[0,2,H]", "p=2", ANY},
    {"resize", "f32[H,0]", "scales=1,2", ANY},
    {"resize", "f32[0,H]", "scales=2,1;mode=linear", ANY},
    {"resize", "f32[1,1,0,H]", "scales=1,1,2,1;mode=cubic", ANY},
    /* resize_to: its sizes and its input axes are proven >= 1, so it has no empty operand (exempt below). */
    {"resize_to", "f32[1,2]", "sizes=[2, 3]", ANY},
    {"max_unpool", "f32[0,2,H] i64[0,2,H]", "kernel_shape=1", ANY},
    {"max_unpool", "f32[H,0,3] i64[H,0,3]", "kernel_shape=2;strides=2", ANY},
    {"grid_sample", "f32[H,0,2,2] f32[H,0,1,2]", "", ANY},
    {"grid_sample", "f32[0,1,H,1] f32[0,H,1,2]", "mode=nearest", ANY},

    /* einsum */
    {"einsum", "f32[H,0]", "equation=ij->ji", ANY},
    {"einsum", "f32[0,H] f32[H,0]", "equation=ij,jk->ik", ANY},
    {"einsum", "f32[H,0]", "equation=ij->", 0},
    {"einsum", "f32[H,0] f32[0,H]", "equation=ij,kl->", 0},
    {"einsum", "f32[H,0] f32[2,3]", "equation=ij,kl->kl", 0},
    {"einsum", "f32[H,0,0]", "equation=kii->ki", ANY},

    /* generate */
    {"constant_of_shape", "", "shape=H,0;value=1", ANY},
    {"constant_of_shape", "", "shape=0,H", ANY},
    {"range", "", "start=0;limit=0;delta=1", ANY},
    {"range", "", "start=5;limit=0;delta=1", ANY},

    /* top_k */
    {"top_k", "f32[0,H]", "axis=0;k=0", ANY},
    {"top_k", "f32[H,0]", "axis=1;k=0", ANY},
    {"top_k", "f32[H,0]", "axis=0;k=H", ANY},
    {"top_k_indices", "f32[0,H]", "axis=0;k=0", ANY},
    {"top_k_indices", "f32[H,0]", "axis=1;k=0", ANY},

    /* scatter */
    {"scatter_elements", "f32[H,0] i64[H,0] f32[H,0]", "axis=0", ANY},
    {"scatter_elements", "f32[0,H] i64[0,H] f32[0,H]", "axis=1;reduction=add", ANY},
    {"scatter_nd", "f32[H,0] i64[0,1] f32[0,0]", "", ANY},
    {"scatter_nd", "f32[0,H] i64[H,0,1] f32[H,0,H]", "", ANY},

    {"eye_like", "f32[H,0]", "", ANY},
    {"eye_like", "f32[0,H]", "k=-5", ANY},

    /* reverse_sequence, det */
    {"reverse_sequence", "f32[H,0] i64[0]", "batch_axis=1;time_axis=0", ANY},
    {"reverse_sequence", "f32[0,H,2] i64[0]", "batch_axis=0;time_axis=1", ANY},
    {"det", "f32[0,H,H]", "", ANY},
    {"det", "f32[0,0]", "", 1},
    {"det", "f32[3,0,0]", "", 1},

    /* recurrent: batch 0 with a huge sequence, and a huge batch of an empty sequence */
    {"rnn", "f32[H,0,2] f32[1,3,2] f32[1,3,3]", "hidden_size=3", ANY},
    {"rnn", "f32[0,H,2] f32[1,3,2] f32[1,3,3]", "hidden_size=3", ANY},
    {"rnn_last_hidden", "f32[H,0,2] f32[2,3,2] f32[2,3,3]", "hidden_size=3;direction=bidirectional", ANY},
    {"gru", "f32[H,0,2] f32[1,9,2] f32[1,9,3]", "hidden_size=3", ANY},
    {"gru", "f32[0,H,2] f32[1,9,2] f32[1,9,3]", "hidden_size=3", ANY},
    {"gru_last_hidden", "f32[H,0,2] f32[1,9,2] f32[1,9,3]", "hidden_size=3;direction=reverse", ANY},
    {"lstm", "f32[H,0,2] f32[1,12,2] f32[1,12,3]", "hidden_size=3", ANY},
    {"lstm", "f32[0,H,2] f32[1,12,2] f32[1,12,3]", "hidden_size=3", ANY},
    {"lstm_last_hidden", "f32[H,0,2] f32[1,12,2] f32[1,12,3]", "hidden_size=3", ANY},
    {"lstm_last_cell", "f32[H,0,2] f32[1,12,2] f32[1,12,3]", "hidden_size=3", ANY},
    {"lstm_last_cell", "f32[0,H,2] f32[1,12,2] f32[1,12,3]", "hidden_size=3;layout=1", ANY},
};

/* Ops whose every call necessarily lacks a huge extent: range's output is
 * as long as its attributes say, and an empty range has no extent at all;
 * resize_to's shape rule proves every input and output size >= 1, so
 * nothing it runs on is empty. */
static const char *const no_huge_extent[] = {"range", "resize_to"};

static bool exempt_from_huge(const char *op)
{
    for (size_t e = 0; e < COUNT(no_huge_extent); e++)
        if (strcmp(no_huge_extent[e], op) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------ parsing */

static int64_t parse_extent(const char *text, const char **end)
{
    if (strncmp(text, "BB", 2) == 0) {
        *end = text + 2;
        return (int64_t)3037000499 * 3037000499;
    }
    if (*text == 'B') {
        *end = text + 1;
        return 3037000499;
    }
    if (*text == 'H') {
        *end = text + 1;
        return INT64_MAX;
    }
    char *stop;
    long long value = strtoll(text, &stop, 10);
    if (stop == text)
        fail_msg("bad extent in '%s'", text);
    *end = stop;
    return value;
}

typedef struct operand {
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
} operand;

/* "f32[H,0] i64[0]" -> operands; @return their count. */
static uint32_t parse_operands(const char *text, operand *out)
{
    uint32_t count = 0;
    while (*text) {
        while (*text == ' ')
            text++;
        if (!*text)
            break;
        assert_true(count < MAX_OPERANDS);
        const char *open = strchr(text, '[');
        assert_non_null(open);
        char name[16];
        assert_true((size_t)(open - text) < sizeof name);
        memcpy(name, text, (size_t)(open - text));
        name[open - text] = '\0';
        operand *o = &out[count++];
        memset(o, 0, sizeof *o);
        assert_int_equal(kiln_dtype_from_name(name, &o->dtype), KILN_OK);
        text = open + 1;
        while (*text != ']') {
            assert_true(o->rank < KILN_MAX_RANK);
            o->shape[o->rank++] = parse_extent(text, &text);
            if (*text == ',')
                text++;
        }
        text++;
    }
    return count;
}

/* Storage for one call's parsed attributes. */
typedef struct attribute_store {
    kiln_node_attribute items[MAX_ATTRIBUTES];
    char names[MAX_ATTRIBUTES][128];
    char strings[MAX_ATTRIBUTES][128];
    int64_t ints[MAX_ATTRIBUTES][2 * KILN_MAX_RANK];
    double floats[MAX_ATTRIBUTES][2 * KILN_MAX_RANK];
    uint32_t count;
} attribute_store;

static kiln_attribute_type spec_type(const kiln_op_def *def, const char *name)
{
    for (const kiln_attribute_spec *s = def->attributes; s && s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s->type;
    fail_msg("%s takes no attribute '%s'", def->name, name);
    return 0;
}

static int compare_attributes(const void *a, const void *b)
{
    return strcmp(((const kiln_node_attribute *)a)->name, ((const kiln_node_attribute *)b)->name);
}

/* "axis=1;axes=0,1;mode=CRD" -> attributes sorted by name, typed by the op's spec. */
static void parse_attributes(const kiln_op_def *def, const char *text, attribute_store *store)
{
    memset(store, 0, sizeof *store);
    while (*text) {
        const char *end = strchr(text, ';');
        size_t length = end ? (size_t)(end - text) : strlen(text);
        char item[128];
        assert_true(length < sizeof item);
        memcpy(item, text, length);
        item[length] = '\0';
        text += length + (end ? 1 : 0);
        char *equals = strchr(item, '=');
        assert_non_null(equals);
        *equals = '\0';
        const char *value = equals + 1;
        uint32_t k = store->count++;
        assert_true(k < MAX_ATTRIBUTES);
        kiln_node_attribute *a = &store->items[k];
        snprintf(store->names[k], sizeof store->names[k], "%s", item);
        a->name = store->names[k];
        a->type = spec_type(def, item);
        switch (a->type) {
        case KILN_ATTRIBUTE_INT: a->i = parse_extent(value, &value); break;
        case KILN_ATTRIBUTE_FLOAT: a->f = strtod(value, NULL); break;
        case KILN_ATTRIBUTE_STRING:
            snprintf(store->strings[k], sizeof store->strings[k], "%s", value);
            a->s = store->strings[k];
            break;
        case KILN_ATTRIBUTE_INTS:
        case KILN_ATTRIBUTE_FLOATS:
            a->ints = store->ints[k];
            a->floats = store->floats[k];
            while (*value) {
                assert_true(a->count < 2 * KILN_MAX_RANK);
                if (a->type == KILN_ATTRIBUTE_INTS) {
                    bool negative = *value == '-';
                    int64_t v = parse_extent(value + negative, &value);
                    a->ints[a->count++] = negative ? -v : v;
                } else {
                    char *stop;
                    a->floats[a->count++] = strtod(value, &stop);
                    value = stop;
                }
                if (*value == ',')
                    value++;
            }
            if (a->type == KILN_ATTRIBUTE_INTS)
                a->floats = NULL;
            else
                a->ints = NULL;
            break;
        default: fail_msg("attribute type %d", (int)a->type);
        }
    }
    qsort(store->items, store->count, sizeof store->items[0], compare_attributes);
}

/* ------------------------------------------------------------ watchdog */

static char running[512];

static void on_alarm(int signal_number)
{
    (void)signal_number;
    static const char prefix[] = "watchdog: kernel still running after " STRINGIFY(WATCHDOG_SECONDS) " s: ";
    ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
    ignored = write(STDERR_FILENO, running, strlen(running));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    _exit(1);
}

/* ------------------------------------------------------------ one call */

typedef struct harness {
    kiln_onednn_session *onednn;
    uint32_t *runs;      /* per registry index: calls run */
    uint32_t *huge_runs; /* per registry index: calls run with an empty operand of a huge extent */
} harness;

static bool is_huge(const operand *o)
{
    for (uint32_t a = 0; a < o->rank; a++)
        if (o->shape[a] >= HUGE_EXTENT)
            return true;
    return false;
}

static uint64_t element_count(const operand *o)
{
    uint64_t count = 1;
    /* A zero extent empties the operand whatever the others (H * H would overflow first). */
    for (uint32_t a = 0; a < o->rank; a++)
        if (o->shape[a] == 0)
            return 0;
    for (uint32_t a = 0; a < o->rank; a++)
        if (__builtin_mul_overflow(count, (uint64_t)o->shape[a], &count))
            return UINT64_MAX;
    return count;
}

/* The output type the op's shape rule derives for `in`; false if it refuses (message in err). */
static bool infer_output(const kiln_op_def *def, const operand *in, uint32_t count, const attribute_store *attributes,
                         operand *out, kiln_error *err)
{
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_value_type types[MAX_OPERANDS];
    const kiln_value_type *pointers[MAX_OPERANDS];
    for (uint32_t i = 0; i < count; i++) {
        types[i].dtype = in[i].dtype;
        types[i].shape.rank = in[i].rank;
        for (uint32_t a = 0; a < in[i].rank; a++)
            assert_int_equal(kiln_expr_const(&pool, in[i].shape[a], &types[i].shape.axes[a], err), KILN_OK);
        pointers[i] = &types[i];
    }
    kiln_shape_context ctx = {&pool, NULL, 0, "node 0 (zero elements)", attributes->items, attributes->count, NULL, 0,
                              NULL, NULL, 0, NULL, 0};
    kiln_value_type type;
    bool ok = def->infer(&ctx, pointers, count, &type, err) == KILN_OK;
    if (ok) {
        out->dtype = type.dtype;
        out->rank = type.shape.rank;
        for (uint32_t a = 0; a < type.shape.rank; a++)
            if (kiln_expr_eval(&pool, type.shape.axes[a], NULL, NULL, &out->shape[a], err) != KILN_OK)
                fail_msg("%s: output axis %u is not constant: %s", def->name, a, err->message);
    }
    kiln_expr_pool_release(&pool);
    return ok;
}

/* Every element of a non-empty output was written and, where given, holds `expect`. */
static void check_written(const char *what, const kiln_tensor *out, double expect)
{
    size_t width = kiln_dtype_size(out->dtype);
    for (uint64_t i = 0; i < out->element_count; i++) {
        const uint8_t *bytes = (const uint8_t *)out->data + i * width;
        bool poisoned = width > 1 || out->dtype == KILN_BOOL;
        for (size_t b = 0; b < width && poisoned; b++)
            poisoned = bytes[b] == 0x7F;
        if (poisoned)
            fail_msg("%s: output element %llu was not written", what, (unsigned long long)i);
        if (isnan(expect))
            continue;
        double value;
        switch (out->dtype) {
        case KILN_F32: value = ((const float *)out->data)[i]; break;
        case KILN_F64: value = ((const double *)out->data)[i]; break;
        case KILN_I64: value = (double)((const int64_t *)out->data)[i]; break;
        default: continue; /* half results: the f32 run checked the value */
        }
        if (!(value == expect))
            fail_msg("%s: output element %llu is %g, expected %g", what, (unsigned long long)i, value, expect);
    }
}

typedef enum call_kind { FAST_NO_CONTEXT, FAST_SESSION, REFERENCE_NO_CONTEXT, REFERENCE_SESSION } call_kind;
static const char *const call_names[] = {"fast path, no context", "fast path, session context",
                                         "reference kernel, no context", "reference kernel, two threads"};

static void run_one(const harness *h, const kiln_op_def *def, call_kind kind, const kiln_tensor *const *inputs,
                    uint32_t count, kiln_tensor *out, const attribute_store *attributes, const char *what,
                    double expect)
{
    if ((kind == FAST_NO_CONTEXT || kind == FAST_SESSION) && !def->fast)
        return;
    kiln_node_state state = {NULL, NULL};
    kiln_kernel_context context;
    memset(&context, 0, sizeof context);
    context.threads = 2;
    context.onednn = h->onednn;
    context.state = &state;
    context.operand_bound = INFINITY;
    context.result_bound = INFINITY;
    bool with_context = kind == FAST_SESSION || kind == REFERENCE_SESSION;
    kiln_kernel_call call = {inputs, count, out, attributes->items, attributes->count, with_context ? &context : NULL};
    if (out->byte_size)
        memset(out->data, 0x7F, out->byte_size);
    snprintf(running, sizeof running, "%s (%s)", what, call_names[kind]);
    kiln_error err = {0};
    kiln_status status;
    bool ran = true;
    alarm(WATCHDOG_SECONDS);
    if (kind == FAST_NO_CONTEXT || kind == FAST_SESSION)
        status = def->fast(&call, &ran, &err);
    else
        status = def->run(&call, &err);
    alarm(0);
    if (state.release)
        state.release(state.data);
    if (status != KILN_OK)
        fail_msg("%s (%s): %s", what, call_names[kind], err.message);
    if (kind == FAST_NO_CONTEXT && ran)
        fail_msg("%s: the fast path ran without a context", what);
    if (ran)
        check_written(what, out, expect);
}

/* Run one recipe (operands text may differ from r->operands: the f16 variant). */
static bool run_recipe(const harness *h, const recipe *r, const char *operand_text, bool required)
{
    const kiln_op_def *def = kiln_op_find(r->op);
    if (!def)
        fail_msg("recipe for unknown op '%s'", r->op);
    operand in[MAX_OPERANDS], out;
    uint32_t count = parse_operands(operand_text, in);
    attribute_store attributes;
    parse_attributes(def, r->attributes, &attributes);
    char what[256];
    snprintf(what, sizeof what, "%s(%s; %s)", r->op, operand_text, r->attributes);
    kiln_error err = {0};
    if (!infer_output(def, in, count, &attributes, &out, &err)) {
        if (required)
            fail_msg("%s: the shape rule refuses the recipe: %s", what, err.message);
        return false;
    }
    /* The recipe is what this test is about: nothing to allocate beyond a few
     * elements, and a huge extent somewhere. */
    bool huge = is_huge(&out) && element_count(&out) == 0;
    for (uint32_t i = 0; i < count; i++) {
        if (element_count(&in[i]) > MAX_SMALL_ELEMENTS)
            fail_msg("%s: operand %u is not small", what, i);
        huge = huge || (is_huge(&in[i]) && element_count(&in[i]) == 0);
    }
    if (element_count(&out) > MAX_SMALL_ELEMENTS)
        fail_msg("%s: the output is not small", what);
    bool empty_input = false;
    for (uint32_t i = 0; i < count; i++)
        empty_input = empty_input || element_count(&in[i]) == 0;
    if (!huge && !(empty_input && element_count(&out) > 0) && !exempt_from_huge(r->op))
        fail_msg("%s: no empty operand has a huge extent, and the output is not computed from an empty one", what);

    kiln_tensor *tensors[MAX_OPERANDS];
    for (uint32_t i = 0; i < count; i++)
        tensors[i] = new_tensor(in[i].dtype, in[i].rank, in[i].shape);
    kiln_tensor *result = new_tensor(out.dtype, out.rank, out.shape);
    for (call_kind kind = FAST_NO_CONTEXT; kind <= REFERENCE_SESSION; kind++)
        run_one(h, def, kind, (const kiln_tensor *const *)tensors, count, result, &attributes, what, r->expect);
    kiln_tensor_free(result);
    for (uint32_t i = 0; i < count; i++)
        kiln_tensor_free(tensors[i]);
    for (uint32_t i = 0; i < kiln_op_count(); i++)
        if (kiln_op_at(i) == def) {
            h->runs[i]++;
            h->huge_runs[i] += huge;
        }
    return true;
}

/* The recipe as written, then (where the op's rule takes f16) with every f32 operand in f16. */
static void run_with_variants(const harness *h, const recipe *r)
{
    run_recipe(h, r, r->operands, true);
    if (!strstr(r->operands, "f32"))
        return;
    char half[512];
    size_t used = 0;
    for (const char *p = r->operands; *p; p++) {
        assert_true(used + 2 < sizeof half);
        if (strncmp(p, "f32", 3) == 0) {
            memcpy(half + used, "f16", 3);
            used += 3;
            p += 2;
        } else {
            half[used++] = *p;
        }
    }
    half[used] = '\0';
    run_recipe(h, r, half, false);
}

static void test_every_op_on_empty_huge_operands(void **state)
{
    (void)state;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    sigemptyset(&action.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &action, NULL), 0);

    harness h = {NULL, calloc(kiln_op_count(), sizeof(uint32_t)), calloc(kiln_op_count(), sizeof(uint32_t))};
    assert_non_null(h.runs);
    assert_non_null(h.huge_runs);
    kiln_error err = {0};
    assert_int_equal(kiln_onednn_session_new(&h.onednn, &err), KILN_OK);

    for (size_t u = 0; u < COUNT(unary_like); u++)
        for (size_t s = 0; s < COUNT(unary_shapes); s++) {
            char operands[64];
            snprintf(operands, sizeof operands, "%s%s", unary_like[u].dtype, unary_shapes[s]);
            recipe r = {unary_like[u].op, operands, unary_like[u].attributes, ANY};
            run_with_variants(&h, &r);
        }
    for (size_t b = 0; b < COUNT(binary_like); b++)
        for (size_t s = 0; s < COUNT(binary_shapes); s++) {
            char operands[64];
            snprintf(operands, sizeof operands, "%s%s %s%s", binary_like[b].dtype, binary_shapes[s][0],
                     binary_like[b].dtype, binary_shapes[s][1]);
            recipe r = {binary_like[b].op, operands, binary_like[b].attributes, ANY};
            run_with_variants(&h, &r);
        }
    for (size_t r = 0; r < COUNT(recipes); r++)
        run_with_variants(&h, &recipes[r]);

    /* An op without a recipe is an op nobody checked. */
    uint32_t missing = 0;
    for (uint32_t i = 0; i < kiln_op_count(); i++)
        if (kiln_op_at(i)->traits.state_access != KILN_STATE_NONE) {
            /* Its kernel needs a session's state tensors, which a direct call has not:
             * tests/runtime/test_state.c runs the state ops in sessions. */
        } else if (h.runs[i] == 0) {
            print_error("op '%s' has no zero-element recipe in test_zero_elements.c\n", kiln_op_at(i)->name);
            missing++;
        } else if (h.huge_runs[i] == 0 && !exempt_from_huge(kiln_op_at(i)->name)) {
            print_error("op '%s' has no recipe with an empty operand of a huge extent\n", kiln_op_at(i)->name);
            missing++;
        }
    kiln_onednn_session_free(h.onednn);
    free(h.runs);
    free(h.huge_runs);
    assert_int_equal(missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_on_empty_huge_operands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
