/*
 * ops_elementwise.c — add, sub, mul, div and neg: shape rules and portable
 * reference kernels.
 *
 * Semantics (spec/opset.md): both operands of a binary op have the same
 * dtype (no implicit promotion) and broadcast like NumPy. Integer add, sub,
 * mul and neg wrap modulo 2^bits; integer div truncates toward zero and
 * refuses a zero divisor; floats follow IEEE 754. bool is not arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain_search.h"
#include "format/error.h"
#include "op_registry.h"

/* ---------------------------------------------------------- shape rules */

static bool is_arithmetic(kiln_dtype dtype)
{
    return dtype != KILN_BOOL && dtype != KILN_F16 && dtype != KILN_BF16 &&
           kiln_dtype_is_supported(dtype);
}

typedef struct broadcast_pair {
    uint32_t a, b;
} broadcast_pair;

/* Sizes a and b broadcast at this point: equal, or either is 1. */
static bool sizes_broadcast(const kiln_expr_pool *pool, const int64_t *values, const bool *bound,
                            void *context)
{
    const broadcast_pair *pair = context;
    int64_t va, vb;
    if (kiln_expr_eval(pool, pair->a, values, bound, &va, NULL) != KILN_OK ||
        kiln_expr_eval(pool, pair->b, values, bound, &vb, NULL) != KILN_OK)
        return false;
    return va == vb || va == 1 || vb == 1;
}

/*
 * Look for a domain point where sizes `a` and `b` do not broadcast. Writes
 * "dim=value, ..." for the dims involved into `text` and returns true if
 * one was found.
 */
static bool find_counterexample(const kiln_shape_context *ctx, uint32_t a, uint32_t b, char *text,
                                size_t size)
{
    uint32_t involved[16];
    uint32_t involved_count = 0;
    int64_t *values = malloc((ctx->dim_count + 1) * sizeof *values);
    bool *bound = malloc((ctx->dim_count + 1) * sizeof *bound);
    bool found = false;
    for (uint32_t d = 0; d < ctx->dim_count && involved_count < 16; d++)
        if (kiln_expr_uses_dim(ctx->pool, a, d) || kiln_expr_uses_dim(ctx->pool, b, d))
            involved[involved_count++] = d;
    broadcast_pair pair = {a, b};
    if (values && bound &&
        kiln_domain_find_counterexample(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count,
                                        sizes_broadcast, &pair, values, bound)) {
        size_t used = 0;
        text[0] = '\0';
        for (uint32_t i = 0; i < involved_count && used < size; i++)
            used += (size_t)snprintf(text + used, size - used, "%s%s=%lld", i ? ", " : "",
                                     ctx->dims[involved[i]].name, (long long)values[involved[i]]);
        found = true;
    }
    free(values);
    free(bound);
    return found;
}

static kiln_status broadcast_axis(const kiln_shape_context *ctx, uint32_t a, uint32_t b,
                                  uint32_t out_axis, uint32_t *out, kiln_error *err)
{
    if (a == b || kiln_expr_is_const(ctx->pool, b, 1)) {
        *out = a;
        return KILN_OK;
    }
    if (kiln_expr_is_const(ctx->pool, a, 1)) {
        *out = b;
        return KILN_OK;
    }
    const char **names = malloc(ctx->dim_count ? ctx->dim_count * sizeof *names : 1);
    if (!names)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t d = 0; d < ctx->dim_count; d++)
        names[d] = ctx->dims[d].name;
    char left[128], right[128], example[256];
    kiln_expr_format(ctx->pool, a, names, left, sizeof left);
    kiln_expr_format(ctx->pool, b, names, right, sizeof right);
    free(names);
    if (ctx->pool->items[a].kind == KILN_EXPR_CONST && ctx->pool->items[b].kind == KILN_EXPR_CONST)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: output axis %u: sizes %s and %s do not broadcast", ctx->node_label,
                         out_axis, left, right);
    if (find_counterexample(ctx, a, b, example, sizeof example))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: output axis %u: cannot prove that %s and %s broadcast over the declared "
                         "domain; counterexample: %s. Use the same dim on both sides or a size of 1",
                         ctx->node_label, out_axis, left, right, example);
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                     "%s: output axis %u: cannot prove that %s and %s broadcast over the declared "
                     "domain. Use the same dim on both sides or a size of 1",
                     ctx->node_label, out_axis, left, right);
}

kiln_status kiln_infer_binary_broadcast(const kiln_shape_context *ctx,
                                        const kiln_value_type *const *inputs, uint32_t input_count,
                                        kiln_value_type *out, kiln_error *err)
{
    const kiln_value_type *a = inputs[0], *b = inputs[1];
    (void)input_count;
    if (a->dtype != b->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: operand dtypes differ (%s and %s); kiln does not promote implicitly",
                         ctx->node_label, kiln_dtype_name(a->dtype), kiln_dtype_name(b->dtype));
    if (!is_arithmetic(a->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported",
                         ctx->node_label, kiln_dtype_name(a->dtype));
    uint32_t rank = a->shape.rank > b->shape.rank ? a->shape.rank : b->shape.rank;
    out->dtype = a->dtype;
    out->shape.rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        /* Align from the right, as NumPy does; missing axes act as size 1. */
        uint32_t ai = i + a->shape.rank, bi = i + b->shape.rank;
        bool has_a = ai >= rank, has_b = bi >= rank;
        if (has_a && has_b)
            KILN_TRY(broadcast_axis(ctx, a->shape.axes[ai - rank], b->shape.axes[bi - rank], i,
                                    &out->shape.axes[i], err));
        else
            out->shape.axes[i] = has_a ? a->shape.axes[ai - rank] : b->shape.axes[bi - rank];
    }
    return KILN_OK;
}

kiln_status kiln_infer_unary_numeric(const kiln_shape_context *ctx,
                                     const kiln_value_type *const *inputs, uint32_t input_count,
                                     kiln_value_type *out, kiln_error *err)
{
    (void)input_count;
    if (!is_arithmetic(inputs[0]->dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: dtype %s is not supported",
                         ctx->node_label, kiln_dtype_name(inputs[0]->dtype));
    *out = *inputs[0];
    return KILN_OK;
}

/* -------------------------------------------------------------- kernels */

/* Element strides of both operands over the output, 0 on broadcast axes. */
typedef struct broadcast_plan {
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    int64_t stride_a[KILN_MAX_RANK];
    int64_t stride_b[KILN_MAX_RANK];
    int64_t inner;     /* extent of the last axis (1 for rank 0) */
    uint64_t rows;     /* element count / inner */
} broadcast_plan;

static void operand_strides(const kiln_tensor *t, const kiln_tensor *out, int64_t *strides)
{
    int64_t stride = 1;
    for (uint32_t i = out->rank; i-- > 0;) {
        uint32_t offset = out->rank - t->rank;
        if (i < offset) {
            strides[i] = 0;
            continue;
        }
        int64_t extent = t->shape[i - offset];
        strides[i] = (extent == 1 && out->shape[i] != 1) ? 0 : stride;
        stride *= extent;
    }
}

static void plan_broadcast(const kiln_tensor *a, const kiln_tensor *b, const kiln_tensor *out,
                           broadcast_plan *p)
{
    memset(p, 0, sizeof *p);
    p->rank = out->rank;
    memcpy(p->shape, out->shape, sizeof p->shape);
    operand_strides(a, out, p->stride_a);
    operand_strides(b, out, p->stride_b);
    p->inner = out->rank ? out->shape[out->rank - 1] : 1;
    p->rows = p->inner ? out->element_count / (uint64_t)p->inner : 0;
}

/* Step the outer-axis odometer by one row, keeping operand offsets in sync. */
static void advance_row(const broadcast_plan *p, int64_t *index, int64_t *ia, int64_t *ib)
{
    for (uint32_t axis = p->rank - 1; axis-- > 0;) {
        index[axis]++;
        *ia += p->stride_a[axis];
        *ib += p->stride_b[axis];
        if (index[axis] < p->shape[axis])
            return;
        *ia -= p->stride_a[axis] * p->shape[axis];
        *ib -= p->stride_b[axis] * p->shape[axis];
        index[axis] = 0;
    }
}

#define DEFINE_BINARY_LOOP(NAME, T, U, EXPR)                                                     \
    static void NAME(const broadcast_plan *p, const void *va, const void *vb, void *vo)          \
    {                                                                                            \
        const T *a = va;                                                                         \
        const T *b = vb;                                                                         \
        T *o = vo;                                                                               \
        int64_t index[KILN_MAX_RANK] = {0};                                                      \
        int64_t ia = 0, ib = 0;                                                                  \
        int64_t sa = p->rank ? p->stride_a[p->rank - 1] : 0;                                     \
        int64_t sb = p->rank ? p->stride_b[p->rank - 1] : 0;                                     \
        for (uint64_t row = 0; row < p->rows; row++) {                                           \
            T *orow = o + row * (uint64_t)p->inner;                                              \
            for (int64_t k = 0; k < p->inner; k++) {                                             \
                T x = a[ia + k * sa];                                                            \
                T y = b[ib + k * sb];                                                            \
                orow[k] = (EXPR);                                                                \
            }                                                                                    \
            if (p->rank > 1)                                                                     \
                advance_row(p, index, &ia, &ib);                                                 \
        }                                                                                        \
    }

/* U is the type arithmetic happens in: the float itself, or an unsigned
 * type at least as wide as int so that wrap-around is defined behaviour. */
#define FLOAT_DTYPES(X)                      \
    X(KILN_F32, float, float, f32)           \
    X(KILN_F64, double, double, f64)
#define INTEGER_DTYPES(X)                    \
    X(KILN_I8, int8_t, uint32_t, i8)         \
    X(KILN_I16, int16_t, uint32_t, i16)      \
    X(KILN_I32, int32_t, uint32_t, i32)      \
    X(KILN_I64, int64_t, uint64_t, i64)      \
    X(KILN_U8, uint8_t, uint32_t, u8)        \
    X(KILN_U16, uint16_t, uint32_t, u16)     \
    X(KILN_U32, uint32_t, uint32_t, u32)     \
    X(KILN_U64, uint64_t, uint64_t, u64)
#define ARITHMETIC_DTYPES(X) FLOAT_DTYPES(X) INTEGER_DTYPES(X)

#define DEFINE_WRAPPING(CODE, T, U, SUFFIX)                                  \
    DEFINE_BINARY_LOOP(add_##SUFFIX, T, U, (T)((U)x + (U)y))                \
    DEFINE_BINARY_LOOP(sub_##SUFFIX, T, U, (T)((U)x - (U)y))                \
    DEFINE_BINARY_LOOP(mul_##SUFFIX, T, U, (T)((U)x * (U)y))
ARITHMETIC_DTYPES(DEFINE_WRAPPING)

/* Division: IEEE for floats; integers truncate toward zero, and the one
 * overflowing case (MIN / -1) wraps like negation. Zero divisors are
 * rejected before the loop runs. */
DEFINE_BINARY_LOOP(div_f32, float, float, x / y)
DEFINE_BINARY_LOOP(div_f64, double, double, x / y)
#define SIGNED_DIV(T, U) (y == -1 ? (T)(0u - (U)x) : (T)(x / y))
DEFINE_BINARY_LOOP(div_i8, int8_t, uint32_t, SIGNED_DIV(int8_t, uint32_t))
DEFINE_BINARY_LOOP(div_i16, int16_t, uint32_t, SIGNED_DIV(int16_t, uint32_t))
DEFINE_BINARY_LOOP(div_i32, int32_t, uint32_t, SIGNED_DIV(int32_t, uint32_t))
DEFINE_BINARY_LOOP(div_i64, int64_t, uint64_t, SIGNED_DIV(int64_t, uint64_t))
DEFINE_BINARY_LOOP(div_u8, uint8_t, uint32_t, (uint8_t)(x / y))
DEFINE_BINARY_LOOP(div_u16, uint16_t, uint32_t, (uint16_t)(x / y))
DEFINE_BINARY_LOOP(div_u32, uint32_t, uint32_t, x / y)
DEFINE_BINARY_LOOP(div_u64, uint64_t, uint64_t, x / y)

typedef void (*binary_loop)(const broadcast_plan *, const void *, const void *, void *);

typedef struct binary_table {
    kiln_dtype dtype;
    binary_loop add, sub, mul, div;
} binary_table;

#define TABLE_ROW(CODE, T, U, SUFFIX) {CODE, add_##SUFFIX, sub_##SUFFIX, mul_##SUFFIX, div_##SUFFIX},
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

static kiln_status run_binary(enum binary_op op, const kiln_tensor *const *inputs,
                              kiln_tensor *output, kiln_error *err)
{
    const kiln_tensor *a = inputs[0], *b = inputs[1];
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
        broadcast_plan plan;
        plan_broadcast(a, b, output, &plan);
        binary_loop loop = op == OP_ADD ? row->add : op == OP_SUB ? row->sub
                         : op == OP_MUL ? row->mul : row->div;
        loop(&plan, a->data, b->data, output->data);
        return KILN_OK;
    }
    return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "no kernel for dtype %s",
                     kiln_dtype_name(output->dtype));
}

kiln_status kiln_kernel_add(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_ADD, inputs, output, err);
}

kiln_status kiln_kernel_sub(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_SUB, inputs, output, err);
}

kiln_status kiln_kernel_mul(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_MUL, inputs, output, err);
}

kiln_status kiln_kernel_div(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    return run_binary(OP_DIV, inputs, output, err);
}

#define DEFINE_NEG(CODE, T, U, SUFFIX, EXPR)                     \
    static void neg_##SUFFIX(const void *vin, void *vout, uint64_t n) \
    {                                                           \
        const T *in = vin;                                      \
        T *out = vout;                                          \
        for (uint64_t i = 0; i < n; i++)                        \
            out[i] = (EXPR);                                    \
    }
/* Floats flip the sign bit (neg 0.0 is -0.0); integers wrap. */
#define DEFINE_FLOAT_NEG(CODE, T, U, SUFFIX) DEFINE_NEG(CODE, T, U, SUFFIX, -in[i])
#define DEFINE_INTEGER_NEG(CODE, T, U, SUFFIX) DEFINE_NEG(CODE, T, U, SUFFIX, (T)((U)0 - (U)in[i]))
FLOAT_DTYPES(DEFINE_FLOAT_NEG)
INTEGER_DTYPES(DEFINE_INTEGER_NEG)

kiln_status kiln_kernel_neg(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err)
{
    (void)input_count;
    const kiln_tensor *in = inputs[0];
    switch (output->dtype) {
#define NEG_CASE(CODE, T, U, SUFFIX)                                  \
    case CODE:                                                        \
        neg_##SUFFIX(in->data, output->data, output->element_count); \
        return KILN_OK;
        ARITHMETIC_DTYPES(NEG_CASE)
    default:
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "neg: no kernel for dtype %s",
                         kiln_dtype_name(output->dtype));
    }
}

/* Registry entry points: these ops take no attributes. */
#define REGISTRY_ENTRY(OP)                                                         \
    kiln_status kiln_run_##OP(const kiln_kernel_call *call, kiln_error *err)     \
    {                                                                            \
        return kiln_kernel_##OP(call->inputs, call->input_count, call->output, err); \
    }
REGISTRY_ENTRY(add)
REGISTRY_ENTRY(sub)
REGISTRY_ENTRY(mul)
REGISTRY_ENTRY(div)
REGISTRY_ENTRY(neg)
