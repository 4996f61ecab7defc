/*
 * arithmetic.c — add, sub, mul, div and neg: shape rules and portable
 * reference kernels.
 *
 * Semantics (spec/opset.md): both operands of a binary op have the same
 * dtype (no implicit promotion) and broadcast like NumPy. Integer add, sub,
 * mul and neg wrap modulo 2^bits; integer div truncates toward zero and
 * refuses a zero divisor; floats follow IEEE 754. bool is not arithmetic.
 * f16 and bf16 are computed in f32 and rounded once (half_compute.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "binary_walk.h"
#include "broadcast.h"
#include "elementwise.h"
#include "error.h"
#include "half_compute.h"
#include "arithmetic.h"
#include "op_registry.h"
#include "parallel.h"

/* ---------------------------------------------------------- shape rules */

kiln_status kiln_infer_binary_broadcast(const kiln_shape_context *ctx,
                                        const kiln_value_type *const *inputs, uint32_t input_count,
                                        kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *a = inputs[0], *b = inputs[1];
    (void)input_count;
    KILN_TRY(kiln_require_same_dtype(ctx, a, b, err));
    if (!kiln_dtype_is_arithmetic(a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported",
                         ctx->node_label, kiln_dtype_name(a->dtype));
    out->dtype = a->dtype;
    return kiln_broadcast_shapes(ctx, &a->shape, &b->shape, &out->shape, err);
}

kiln_status kiln_infer_unary_numeric(const kiln_shape_context *ctx,
                                     const kiln_value_type *const *inputs, uint32_t input_count,
                                     kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    if (!kiln_dtype_is_arithmetic(inputs[0]->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported",
                         ctx->node_label, kiln_dtype_name(inputs[0]->dtype));
    *out = *inputs[0];
    return KILN_OK;
}

/* -------------------------------------------------------------- kernels */

#define DEFINE_WRAPPING(CODE, T, U, SUFFIX)                                  \
    DEFINE_UNIT_STEP_ROW(add_##SUFFIX, T, (T)((U)x + (U)y))                 \
    DEFINE_UNIT_STEP_ROW(sub_##SUFFIX, T, (T)((U)x - (U)y))                 \
    DEFINE_UNIT_STEP_ROW(mul_##SUFFIX, T, (T)((U)x * (U)y))
ARITHMETIC_DTYPES(DEFINE_WRAPPING)

/* Division: IEEE for floats; integers truncate toward zero, and the one
 * overflowing case (MIN / -1) wraps like negation. Zero divisors are
 * rejected before the loop runs. */
DEFINE_UNIT_STEP_ROW(div_f32, float, x / y)
DEFINE_UNIT_STEP_ROW(div_f64, double, x / y)
#define SIGNED_DIV(T, U) (y == -1 ? (T)(0u - (U)x) : (T)(x / y))
DEFINE_UNIT_STEP_ROW(div_i8, int8_t, SIGNED_DIV(int8_t, uint32_t))
DEFINE_UNIT_STEP_ROW(div_i16, int16_t, SIGNED_DIV(int16_t, uint32_t))
DEFINE_UNIT_STEP_ROW(div_i32, int32_t, SIGNED_DIV(int32_t, uint32_t))
DEFINE_UNIT_STEP_ROW(div_i64, int64_t, SIGNED_DIV(int64_t, uint64_t))
DEFINE_UNIT_STEP_ROW(div_u8, uint8_t, (uint8_t)(x / y))
DEFINE_UNIT_STEP_ROW(div_u16, uint16_t, (uint16_t)(x / y))
DEFINE_UNIT_STEP_ROW(div_u32, uint32_t, x / y)
DEFINE_UNIT_STEP_ROW(div_u64, uint64_t, x / y)

typedef struct binary_table {
    kiln_dtype dtype;
    kiln_chunk_fn add, sub, mul, div;
} binary_table;

#define TABLE_ROW(CODE, T, U, SUFFIX) \
    {CODE, add_##SUFFIX##_chunk, sub_##SUFFIX##_chunk, mul_##SUFFIX##_chunk, div_##SUFFIX##_chunk},
static const binary_table binary_loops[] = {ARITHMETIC_DTYPES(TABLE_ROW)};

enum binary_op { OP_ADD, OP_SUB, OP_MUL, OP_DIV };

static bool has_zero_integer(const kiln_tensor *t)
{
    const uint8_t *bytes = t->data;
    size_t width = kiln_dtype_size(t->dtype);
    static const uint8_t zero[8] = {0};
    for (uint64_t i = 0; i < t->element_count; i++)
        if (memcmp(bytes + i * width, zero, width) == 0)
            return true;
    return false;
}

static kiln_status run_binary(enum binary_op op, const kiln_tensor *const *inputs, kiln_tensor *output,
                              uint32_t threads, kiln_error *err)
{
    const kiln_tensor *b = inputs[1];
    for (size_t i = 0; i < sizeof binary_loops / sizeof binary_loops[0]; i++) {
        const binary_table *row = &binary_loops[i];
        if (row->dtype != output->dtype)
            continue;
        /* An empty result divides nothing, so a zero divisor is no error. */
        if (output->element_count == 0)
            return KILN_OK;
        if (op == OP_DIV && output->dtype != KILN_F32 && output->dtype != KILN_F64 &&
            has_zero_integer(b))
            return kiln_fail(err, KILN_ERR_RUNTIME, "div: integer division by zero");
        kiln_chunk_fn chunk = op == OP_ADD ? row->add : op == OP_SUB ? row->sub
                            : op == OP_MUL ? row->mul : row->div;
        kiln_walk_rows_by(inputs, 2, output, chunk, threads);
        return KILN_OK;
    }
    return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "no kernel for dtype %s",
                     kiln_dtype_name(output->dtype));
}

kiln_status kiln_kernel_add(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_ADD, inputs, output, 1, err);
}

kiln_status kiln_kernel_sub(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_SUB, inputs, output, 1, err);
}

kiln_status kiln_kernel_mul(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_MUL, inputs, output, 1, err);
}

kiln_status kiln_kernel_div(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_DIV, inputs, output, 1, err);
}

#define DEFINE_NEG(CODE, T, U, SUFFIX, EXPR)                     \
    KILN_VECTOR_CLONES static void neg_##SUFFIX(const void *vin, void *vout, uint64_t n) \
    {                                                           \
        const T *in = vin;                                      \
        T *out = vout;                                          \
        KILN_SIMD for (uint64_t i = 0; i < n; i++)              \
            out[i] = (EXPR);                                    \
    }
/* Floats flip the sign bit (neg 0.0 is -0.0); integers wrap. */
#define DEFINE_FLOAT_NEG(CODE, T, U, SUFFIX) DEFINE_NEG(CODE, T, U, SUFFIX, -in[i])
#define DEFINE_INTEGER_NEG(CODE, T, U, SUFFIX) DEFINE_NEG(CODE, T, U, SUFFIX, (T)((U)0 - (U)in[i]))
FLOAT_DTYPES(DEFINE_FLOAT_NEG)
INTEGER_DTYPES(DEFINE_INTEGER_NEG)

/* One neg loop over a range of elements, for kiln_parallel_chunks. */
typedef struct neg_job {
    void (*loop)(const void *, void *, uint64_t);
    const uint8_t *in;
    uint8_t *out;
    size_t width;
} neg_job;

static void neg_chunk(const void *vjob, uint64_t begin, uint64_t end)
{
    const neg_job *job = vjob;
    job->loop(job->in + begin * job->width, job->out + begin * job->width, end - begin);
}

static kiln_status run_neg(const kiln_tensor *in, kiln_tensor *output, uint32_t threads, kiln_error *err)
{
    neg_job job = {NULL, in->data, output->data, kiln_dtype_size(output->dtype)};
    switch (output->dtype) {
#define NEG_CASE(CODE, T, U, SUFFIX) \
    case CODE:                       \
        job.loop = neg_##SUFFIX;     \
        break;
        ARITHMETIC_DTYPES(NEG_CASE)
    default:
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "neg: no kernel for dtype %s",
                         kiln_dtype_name(output->dtype));
    }
    kiln_parallel_chunks(output->element_count, threads, neg_chunk, &job);
    return KILN_OK;
}

kiln_status kiln_kernel_neg(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_neg(inputs[0], output, 1, err);
}

/*
 * A node whose operand k of the result's shape [N, C, spatial...] is
 * channels-last (its data [N][spatial][C]) and whose other operand is per
 * channel ([N or 1, C, 1, ...], data [N or 1][C]): the layout plan gives it
 * the role CHANNELWISE or CHANNELWISE_1 (layout.h), and the session hands
 * operand k over channels-last. The result is written channels-last by
 * the same walk over views: [N, S, C] for the full operand and the result
 * (S the spatial size), [N or 1, 1, C] for the other, so each row is C
 * elements against the per-channel row. Why: a squeeze-excite block's
 * scale [N, C, 1, 1] * [N, C, H, W] forced its operand to row-major, and
 * with it the convs around it: in EfficientNet-B0 36 convs a run ran on
 * row-major data through oneDNN's gemm convolution (7.7 of 10.5 ms of its
 * oneDNN time). Results are unchanged: each element is computed from the
 * same two elements by the same operation.
 */
static kiln_status run_per_channel(enum binary_op op, const kiln_kernel_call *call, uint32_t kept, kiln_error *err)
{
    const kiln_tensor *full = call->inputs[kept], *other = call->inputs[1 - kept];
    kiln_tensor *out = call->output;
    uint64_t spatial = full->element_count / ((uint64_t)full->shape[0] * (uint64_t)full->shape[1]);
    int64_t full_shape[3] = {full->shape[0], (int64_t)spatial, full->shape[1]};
    int64_t other_shape[3] = {other->shape[0], 1, other->shape[1]};
    kiln_tensor views[3];
    kiln_tensor_view_init(&views[kept], full->dtype, 3, full_shape, full->data);
    kiln_tensor_view_init(&views[1 - kept], other->dtype, 3, other_shape, other->data);
    kiln_tensor_view_init(&views[2], out->dtype, 3, full_shape, out->data);
    const kiln_tensor *operands[2] = {&views[0], &views[1]};
    KILN_TRY(run_binary(op, operands, &views[2], kiln_call_threads(call), err));
    call->context->wrote_channels_last = true;
    call->context->path = KILN_PATH_VECTOR;
    return KILN_OK;
}

/* Which operand of a two-operand call is channels-last against a per-channel other, or 2 for none. */
static uint32_t per_channel_operand(const kiln_kernel_call *call)
{
    if (!call->context || call->input_count != 2 || call->output->dtype != KILN_F32)
        return 2;
    uint32_t bits = call->context->channels_last_operands & 3u;
    if (bits != 1u && bits != 2u)
        return 2;
    uint32_t kept = bits == 1u ? 0 : 1;
    const kiln_tensor *full = call->inputs[kept], *other = call->inputs[1 - kept];
    if (full->rank < 3 || other->rank != full->rank || full->element_count != call->output->element_count ||
        full->element_count == 0 || other->shape[1] != full->shape[1] ||
        (other->shape[0] != full->shape[0] && other->shape[0] != 1))
        return 2;
    for (uint32_t a = 2; a < other->rank; a++)
        if (other->shape[a] != 1)
            return 2;
    return kept;
}

/* Registry entry points: these ops take no attributes; a session's call
 * brings its thread count (and, for a per-channel node, its layouts).
 * Their rows are the vectorized ones of elementwise.h in every session
 * (reference_kernels too): a profile says so, unlike f16 and bf16, which
 * go through the f32 copies of half_compute.h. */
#define REGISTRY_ENTRY(OP, ID)                                                                 \
    kiln_status kiln_run_##OP(const kiln_kernel_call *call, kiln_error *err)                   \
    {                                                                                          \
        KILN_HALF_IN_F32(call, kiln_run_##OP, err);                                            \
        kiln_call_report_path(call, KILN_PATH_VECTOR);                                         \
        uint32_t kept = per_channel_operand(call);                                             \
        if (kept < 2)                                                                          \
            return run_per_channel(ID, call, kept, err);                                       \
        return run_binary(ID, call->inputs, call->output, kiln_call_threads(call), err);       \
    }
REGISTRY_ENTRY(add, OP_ADD)
REGISTRY_ENTRY(sub, OP_SUB)
REGISTRY_ENTRY(mul, OP_MUL)
REGISTRY_ENTRY(div, OP_DIV)

kiln_status kiln_run_neg(const kiln_kernel_call *call, kiln_error *err)
{
    KILN_HALF_IN_F32(call, kiln_run_neg, err);
    kiln_call_report_path(call, KILN_PATH_VECTOR);
    return run_neg(call->inputs[0], call->output, kiln_call_threads(call), err);
}

static const kiln_op_def elementwise_ops[] = {
    {.name = "add", .versions = {1, 1}, .inputs = {2, 2},
     .infer = kiln_infer_binary_broadcast, .run = kiln_run_add,
     .traits = {.layout = KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL, .magnitude = KILN_MAGNITUDE_SUM}},
    {.name = "sub", .versions = {1, 1}, .inputs = {2, 2},
     .infer = kiln_infer_binary_broadcast, .run = kiln_run_sub,
     .traits = {.layout = KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL, .magnitude = KILN_MAGNITUDE_SUM}},
    {.name = "mul", .versions = {1, 1}, .inputs = {2, 2},
     .infer = kiln_infer_binary_broadcast, .run = kiln_run_mul,
     .traits = {.layout = KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL}},
    {.name = "div", .versions = {1, 1}, .inputs = {2, 2},
     .infer = kiln_infer_binary_broadcast, .run = kiln_run_div,
     .traits = {.layout = KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL}},
    {.name = "neg", .versions = {1, 1}, .inputs = {1, 1},
     .infer = kiln_infer_unary_numeric, .run = kiln_run_neg, .traits = {.layout = KILN_LAYOUT_ELEMENTWISE}},
};

const kiln_op_family kiln_ops_elementwise = KILN_OP_FAMILY(elementwise_ops, "spec/opset.md");
