/*
 * binary.c — binary (pow, mod), comparison (eq, ne, lt, le, gt, ge),
 * logical (and, or, xor), bit shift (bitshift), ternary (where) and
 * variadic (max, min, sum, mean) elementwise ops: shape rules and portable
 * reference kernels (spec/ops/binary.md).
 *
 * Every op here broadcasts all of its operands together, so the kernels
 * share one N-ary walk (binary_walk.h) and differ only in their row
 * kernels, one per (op, dtype), generated below from the dtype X-macros.
 * Integer arithmetic goes through unsigned types or is guarded so that no
 * input can reach undefined behaviour (MIN % -1, shifts by >= width).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "attribute.h"
#include "elementwise.h"
#include "error.h"
#include "half_compute.h"
#include "op_registry.h"
#include "binary_walk.h"

/* ---------------------------------------------------------- dtype lists */

#define SIGNED_DTYPES(X)                     \
    X(KILN_I8, int8_t, uint32_t, i8)         \
    X(KILN_I16, int16_t, uint32_t, i16)      \
    X(KILN_I32, int32_t, uint32_t, i32)      \
    X(KILN_I64, int64_t, uint64_t, i64)
#define UNSIGNED_DTYPES(X)                   \
    X(KILN_U8, uint8_t, uint32_t, u8)        \
    X(KILN_U16, uint16_t, uint32_t, u16)     \
    X(KILN_U32, uint32_t, uint32_t, u32)     \
    X(KILN_U64, uint64_t, uint64_t, u64)

/* ---------------------------------------------------------- shape rules */

/* The dtypes an op accepts for its value operands. */
typedef enum dtype_class {
    TAKES_FLOAT,      /* f32, f64, f16, bf16 */
    TAKES_ARITHMETIC, /* the arithmetic dtypes */
    TAKES_COMPARABLE, /* the arithmetic dtypes and bool */
    TAKES_BOOL,       /* bool */
    TAKES_UNSIGNED,   /* u8, u16, u32, u64 */
} dtype_class;

static bool is_unsigned(kiln_dtype dtype)
{
    return dtype == KILN_U8 || dtype == KILN_U16 || dtype == KILN_U32 || dtype == KILN_U64;
}

static bool class_has(dtype_class c, kiln_dtype dtype)
{
    switch (c) {
    case TAKES_FLOAT: return kiln_dtype_is_floating(dtype);
    case TAKES_ARITHMETIC: return kiln_dtype_is_arithmetic(dtype);
    case TAKES_COMPARABLE: return kiln_dtype_is_arithmetic(dtype) || dtype == KILN_BOOL;
    case TAKES_BOOL: return dtype == KILN_BOOL;
    case TAKES_UNSIGNED: return is_unsigned(dtype);
    }
    return false;
}

static const char *class_text(dtype_class c)
{
    switch (c) {
    case TAKES_FLOAT: return "f32, f64, f16 or bf16";
    case TAKES_ARITHMETIC: return "an arithmetic dtype (f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64)";
    case TAKES_COMPARABLE: return "an arithmetic dtype or bool";
    case TAKES_BOOL: return "bool";
    case TAKES_UNSIGNED: return "an unsigned integer dtype (u8, u16, u32, u64)";
    }
    return "?";
}

/*
 * Inputs first..count-1 share one dtype (no implicit promotion) of class
 * `c`. The dtype mismatch is reported before the class, as add does.
 */
static kiln_status check_operand_dtypes(const kiln_shape_context *ctx, const char *op,
                                        const kiln_value_type *const *inputs, uint32_t first, uint32_t count,
                                        dtype_class c, kiln_error *err)
{
    kiln_dtype dtype = inputs[first]->dtype;
    for (uint32_t i = first + 1; i < count; i++)
        if (inputs[i]->dtype != dtype)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: op '%s': operand dtypes differ (input %u is %s, input %u is %s); kiln does "
                             "not promote implicitly",
                             ctx->node_label, op, first, kiln_dtype_name(dtype), i,
                             kiln_dtype_name(inputs[i]->dtype));
    if (!class_has(c, dtype))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: op '%s' does not take dtype %s; it takes %s",
                         ctx->node_label, op, kiln_dtype_name(dtype), class_text(c));
    return KILN_OK;
}

/*
 * Broadcast every operand's shape together by folding the pairwise rule:
 * each step either proves the pair over the whole domain or refuses,
 * naming the axis and a counterexample.
 */
static kiln_status broadcast_operands(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                      uint32_t count, kiln_shape *out, kiln_error *err)
{
    kiln_shape acc = inputs[0]->shape;
    for (uint32_t i = 1; i < count; i++) {
        kiln_shape next;
        KILN_TRY(kiln_broadcast_shapes(ctx, &acc, &inputs[i]->shape, &next, err));
        acc = next;
    }
    *out = acc;
    return KILN_OK;
}

/* Same-dtype operands of class `c`, all broadcast; the output has their
 * dtype, or bool when `bool_output`. */
static kiln_status infer_elementwise(const kiln_shape_context *ctx, const char *op, dtype_class c,
                                     bool bool_output, const kiln_value_type *const *inputs,
                                     uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    KILN_TRY(check_operand_dtypes(ctx, op, inputs, 0, input_count, c, err));
    out->dtype = bool_output ? KILN_BOOL : inputs[0]->dtype;
    return broadcast_operands(ctx, inputs, input_count, &out->shape, err);
}

#define DEFINE_INFER(NAME, OP, CLASS, BOOL_OUTPUT)                                                          \
    static kiln_status NAME(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,           \
                            uint32_t input_count, kiln_value_type *out, kiln_error *err)                  \
    {                                                                                                   \
        return infer_elementwise(ctx, OP, CLASS, BOOL_OUTPUT, inputs, input_count, out, err);           \
    }
DEFINE_INFER(infer_pow, "pow", TAKES_FLOAT, false)
DEFINE_INFER(infer_eq, "eq", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_ne, "ne", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_lt, "lt", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_le, "le", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_gt, "gt", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_ge, "ge", TAKES_COMPARABLE, true)
DEFINE_INFER(infer_and, "and", TAKES_BOOL, false)
DEFINE_INFER(infer_or, "or", TAKES_BOOL, false)
DEFINE_INFER(infer_xor, "xor", TAKES_BOOL, false)
DEFINE_INFER(infer_max, "max", TAKES_ARITHMETIC, false)
DEFINE_INFER(infer_min, "min", TAKES_ARITHMETIC, false)
DEFINE_INFER(infer_sum, "sum", TAKES_ARITHMETIC, false)
DEFINE_INFER(infer_mean, "mean", TAKES_FLOAT, false)

static kiln_status infer_mod(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                             uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_node_attribute *fmod_attribute = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "fmod");
    if (fmod_attribute && fmod_attribute->i != 0 && fmod_attribute->i != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attribute 'fmod' of op 'mod' must be 0 (sign of the divisor) or 1 (sign of the "
                         "dividend), got %lld",
                         ctx->node_label, (long long)fmod_attribute->i);
    return infer_elementwise(ctx, "mod", TAKES_ARITHMETIC, false, inputs, input_count, out, err);
}

/* @return true and *left for a valid direction attribute. */
static bool shift_direction(const kiln_node_attribute *direction, bool *left)
{
    if (!direction || direction->type != KILN_ATTRIBUTE_STRING || !direction->s)
        return false;
    if (strcmp(direction->s, "left") == 0)
        *left = true;
    else if (strcmp(direction->s, "right") == 0)
        *left = false;
    else
        return false;
    return true;
}

static kiln_status infer_bitshift(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                  uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_node_attribute *direction =
        kiln_attribute_find(ctx->attributes, ctx->attribute_count, "direction");
    bool left;
    if (!direction)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: op 'bitshift' needs attribute 'direction' (\"left\" or \"right\")", ctx->node_label);
    if (!shift_direction(direction, &left))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: attribute 'direction' of op 'bitshift' must be \"left\" or \"right\", got \"%.64s\"",
                         ctx->node_label, direction->s ? direction->s : "");
    return infer_elementwise(ctx, "bitshift", TAKES_UNSIGNED, false, inputs, input_count, out, err);
}

static kiln_status infer_where(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                               uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    if (inputs[0]->dtype != KILN_BOOL)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: op 'where': the condition (input 0) must be bool, not %s", ctx->node_label,
                         kiln_dtype_name(inputs[0]->dtype));
    KILN_TRY(check_operand_dtypes(ctx, "where", inputs, 1, input_count, TAKES_COMPARABLE, err));
    out->dtype = inputs[1]->dtype;
    return broadcast_operands(ctx, inputs, input_count, &out->shape, err);
}

/* ---------------------------------------------------------- row kernels */

/* Operand j's element k of the current row. */
#define ELEMENT(T, j, k) (((const T *)bases[j])[offsets[j] + (k) * steps[j]])

/* out[k] = EXPR of x (operand 0) and y (operand 1), written as R. */
#define DEFINE_BINARY_ROW(NAME, T, R, EXPR)                                                            \
    static void NAME(const void *const *bases, const int64_t *offsets, const int64_t *steps,           \
                     uint32_t count, void *out, int64_t n)                                             \
    {                                                                                                  \
        R *o = out;                                                                                    \
        (void)count;                                                                                   \
        for (int64_t k = 0; k < n; k++) {                                                              \
            T x = ELEMENT(T, 0, k);                                                                    \
            T y = ELEMENT(T, 1, k);                                                                    \
            o[k] = (EXPR);                                                                             \
        }                                                                                              \
    }

/*
 * pow: C's pow / powf, special cases and all (C11 Annex F.10.4.4), but
 * for y = 2 the product x * x: the correctly rounded square, with the
 * same special values, and no library call per element (an exported
 * LayerNorm squares through pow: a call per element was 18% of a small
 * encoder's run). In f32, y = 3 is the cube in double, rounded once to
 * f32: x * x is exact in double and the third factor rounds once there,
 * so the f32 result is within 1 ulp (the correctly rounded cube but for a
 * double rounding), no f32 cube overflows or underflows in double, and
 * the special values are pow's (GPT-2's gelu cubes through pow: two
 * calls per element were 37% of its run).
 */
static inline float cube_f32(float x)
{
    double d = (double)x;
    return (float)(d * d * d);
}
DEFINE_BINARY_ROW(pow_f32, float, float, y == 2.0f ? x * x : y == 3.0f ? cube_f32(x) : powf(x, y))
DEFINE_BINARY_ROW(pow_f64, double, double, y == 2.0 ? x * x : pow(x, y))

/*
 * mod, floored (fmod = 0): the remainder takes the divisor's sign, as
 * Python's % does. fmod is exact, and adding the divisor back is the one
 * rounding step; a zero remainder takes the divisor's sign too.
 */
#define DEFINE_FLOAT_MOD(CODE, T, U, SUFFIX, FMOD, COPYSIGN)                         \
    static inline T mod_floor_value_##SUFFIX(T x, T y)                              \
    {                                                                               \
        T r = FMOD(x, y);                                                           \
        if (r != 0) {                                                               \
            if ((y < 0) != (r < 0))                                                 \
                r += y;                                                             \
        } else {                                                                    \
            r = COPYSIGN(0, y);                                                     \
        }                                                                           \
        return r;                                                                   \
    }                                                                               \
    DEFINE_BINARY_ROW(mod_floor_##SUFFIX, T, T, mod_floor_value_##SUFFIX(x, y))     \
    DEFINE_BINARY_ROW(mod_trunc_##SUFFIX, T, T, FMOD(x, y))
DEFINE_FLOAT_MOD(KILN_F32, float, float, f32, fmodf, copysignf)
DEFINE_FLOAT_MOD(KILN_F64, double, double, f64, fmod, copysign)

/* Signed integers: x % -1 is 0 by definition here, never the C operation
 * (MIN % -1 is undefined behaviour in C). Zero divisors were refused
 * before the walk. |r| < |y| with opposite signs, so r + y cannot overflow. */
#define DEFINE_SIGNED_MOD(CODE, T, U, SUFFIX)                                        \
    static inline T mod_trunc_value_##SUFFIX(T x, T y)                              \
    {                                                                               \
        return y == -1 ? (T)0 : (T)(x % y);                                         \
    }                                                                               \
    static inline T mod_floor_value_##SUFFIX(T x, T y)                              \
    {                                                                               \
        T r = mod_trunc_value_##SUFFIX(x, y);                                       \
        if (r != 0 && ((r < 0) != (y < 0)))                                         \
            r = (T)(r + y);                                                         \
        return r;                                                                   \
    }                                                                               \
    DEFINE_BINARY_ROW(mod_floor_##SUFFIX, T, T, mod_floor_value_##SUFFIX(x, y))     \
    DEFINE_BINARY_ROW(mod_trunc_##SUFFIX, T, T, mod_trunc_value_##SUFFIX(x, y))
SIGNED_DTYPES(DEFINE_SIGNED_MOD)

/* Unsigned: both conventions agree. */
#define DEFINE_UNSIGNED_MOD(CODE, T, U, SUFFIX)                                      \
    DEFINE_BINARY_ROW(mod_floor_##SUFFIX, T, T, (T)((U)x % (U)y))                   \
    DEFINE_BINARY_ROW(mod_trunc_##SUFFIX, T, T, (T)((U)x % (U)y))
UNSIGNED_DTYPES(DEFINE_UNSIGNED_MOD)

/* Comparisons write bool (0 or 1). C's operators already make every
 * comparison with a NaN false (and ne true). A bool operand compares by
 * truth (any non-zero byte is true, and false < true). */
#define AS_IS(v) (v)
#define TRUTH(v) ((v) != 0)
#define DEFINE_COMPARISONS(SUFFIX, T, VIEW)                                                 \
    DEFINE_BINARY_ROW(eq_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) == VIEW(y)))              \
    DEFINE_BINARY_ROW(ne_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) != VIEW(y)))              \
    DEFINE_BINARY_ROW(lt_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) < VIEW(y)))               \
    DEFINE_BINARY_ROW(le_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) <= VIEW(y)))              \
    DEFINE_BINARY_ROW(gt_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) > VIEW(y)))               \
    DEFINE_BINARY_ROW(ge_##SUFFIX, T, uint8_t, (uint8_t)(VIEW(x) >= VIEW(y)))
#define DEFINE_NUMERIC_COMPARISONS(CODE, T, U, SUFFIX) DEFINE_COMPARISONS(SUFFIX, T, AS_IS)
ARITHMETIC_DTYPES(DEFINE_NUMERIC_COMPARISONS)
DEFINE_COMPARISONS(bool, uint8_t, TRUTH)

/* Logical ops read bools by truth and write 0 or 1. */
DEFINE_BINARY_ROW(and_bool, uint8_t, uint8_t, (uint8_t)(TRUTH(x) & TRUTH(y)))
DEFINE_BINARY_ROW(or_bool, uint8_t, uint8_t, (uint8_t)(TRUTH(x) | TRUTH(y)))
DEFINE_BINARY_ROW(xor_bool, uint8_t, uint8_t, (uint8_t)(TRUTH(x) ^ TRUTH(y)))

/* Shifts: a count of the width or more shifts every bit out (C leaves it
 * undefined). U is at least as wide as int, so the left shift is defined. */
#define DEFINE_SHIFTS(CODE, T, U, SUFFIX)                                                   \
    DEFINE_BINARY_ROW(shl_##SUFFIX, T, T, (uint64_t)y >= 8u * sizeof(T) ? (T)0 : (T)((U)x << y)) \
    DEFINE_BINARY_ROW(shr_##SUFFIX, T, T, (uint64_t)y >= 8u * sizeof(T) ? (T)0 : (T)((U)x >> y))
UNSIGNED_DTYPES(DEFINE_SHIFTS)

/*
 * where: operand 0 is the bool condition (true when non-zero); the chosen
 * element is copied unchanged (NaN payloads and -0.0 included). A row whose
 * condition and values step by 1, or a value broadcast as one element (a
 * causal mask: where(mask, scores, -inf)), runs as a loop of plain loads
 * the compiler vectorizes: a 512-token prefill's four where over [1, 4, 512,
 * 512] took 3.3 ms of its 51 on one thread through the general steps, 2.8 so.
 */
#define WHERE_LOOP(X, Y)                                                                    \
    do {                                                                                    \
        KILN_SIMD                                                                           \
        for (int64_t k = 0; k < n; k++)                                                     \
            o[k] = c[k] ? (X) : (Y);                                                        \
    } while (0)
#define DEFINE_WHERE(CODE, T, U, SUFFIX)                                                    \
    static void where_##SUFFIX(const void *const *bases, const int64_t *offsets,           \
                               const int64_t *steps, uint32_t count, void *out, int64_t n) \
    {                                                                                       \
        T *o = out;                                                                         \
        (void)count;                                                                        \
        if (n > 0 && steps[0] == 1 && (steps[1] == 0 || steps[1] == 1) && (steps[2] == 0 || steps[2] == 1)) { \
            const uint8_t *c = (const uint8_t *)bases[0] + offsets[0];                      \
            const T *x = (const T *)bases[1] + offsets[1], *y = (const T *)bases[2] + offsets[2]; \
            T x0 = x[0], y0 = y[0];                                                         \
            if (steps[1] && steps[2])                                                       \
                WHERE_LOOP(x[k], y[k]);                                                     \
            else if (steps[1])                                                              \
                WHERE_LOOP(x[k], y0);                                                       \
            else if (steps[2])                                                              \
                WHERE_LOOP(x0, y[k]);                                                       \
            else                                                                            \
                WHERE_LOOP(x0, y0);                                                         \
            return;                                                                         \
        }                                                                                   \
        for (int64_t k = 0; k < n; k++)                                                     \
            o[k] = ELEMENT(uint8_t, 0, k) ? ELEMENT(T, 1, k) : ELEMENT(T, 2, k);            \
    }
ARITHMETIC_DTYPES(DEFINE_WHERE)
DEFINE_WHERE(KILN_BOOL, uint8_t, uint32_t, bool)

/*
 * Variadic: acc = START(operand 0), then acc = COMBINE(acc, y) for each
 * further operand in input order, and out = FINISH(acc, count).
 */
#define DEFINE_VARIADIC_ROW(NAME, T, ACC, START, COMBINE, FINISH)                               \
    static void NAME(const void *const *bases, const int64_t *offsets, const int64_t *steps,    \
                     uint32_t count, void *out, int64_t n)                                      \
    {                                                                                           \
        T *o = out;                                                                             \
        for (int64_t k = 0; k < n; k++) {                                                       \
            ACC acc = START(ELEMENT(T, 0, k));                                                  \
            for (uint32_t j = 1; j < count; j++) {                                              \
                T y = ELEMENT(T, j, k);                                                         \
                acc = COMBINE(acc, y);                                                          \
            }                                                                                   \
            o[k] = (T)FINISH(acc, count);                                                       \
        }                                                                                       \
    }

#define KEEP(v) (v)
#define KEEP_ACC(acc, count) (acc)
#define LARGER(acc, y) ((y) > (acc) ? (y) : (acc))
#define SMALLER(acc, y) ((y) < (acc) ? (y) : (acc))
#define FLOAT_ADD(acc, y) ((acc) + (y))
#define TO_DOUBLE(v) ((double)(v))
#define DIVIDE_BY_COUNT(acc, count) ((acc) / (double)(count))

/* Float max / min: the first NaN met (in input order) wins; otherwise the
 * IEEE 754-2019 maximum / minimum, which orders -0.0 below +0.0. */
#define DEFINE_FLOAT_EXTREMES(CODE, T, U, SUFFIX)                                         \
    static inline T float_max_##SUFFIX(T acc, T y)                                       \
    {                                                                                     \
        if (isnan(acc))                                                                   \
            return acc;                                                                   \
        if (isnan(y) || y > acc || (y == acc && signbit(acc) && !signbit(y)))             \
            return y;                                                                     \
        return acc;                                                                       \
    }                                                                                     \
    static inline T float_min_##SUFFIX(T acc, T y)                                       \
    {                                                                                     \
        if (isnan(acc))                                                                   \
            return acc;                                                                   \
        if (isnan(y) || y < acc || (y == acc && !signbit(acc) && signbit(y)))             \
            return y;                                                                     \
        return acc;                                                                       \
    }                                                                                     \
    DEFINE_VARIADIC_ROW(max_##SUFFIX, T, T, KEEP, float_max_##SUFFIX, KEEP_ACC)           \
    DEFINE_VARIADIC_ROW(min_##SUFFIX, T, T, KEEP, float_min_##SUFFIX, KEEP_ACC)           \
    DEFINE_VARIADIC_ROW(sum_##SUFFIX, T, T, KEEP, FLOAT_ADD, KEEP_ACC)                    \
    DEFINE_VARIADIC_ROW(mean_##SUFFIX, T, double, TO_DOUBLE, FLOAT_ADD, DIVIDE_BY_COUNT)
FLOAT_DTYPES(DEFINE_FLOAT_EXTREMES)

/* Integer sums wrap modulo 2^bits like add: accumulate in U. */
#define DEFINE_INTEGER_VARIADIC(CODE, T, U, SUFFIX)                                       \
    DEFINE_VARIADIC_ROW(max_##SUFFIX, T, T, KEEP, LARGER, KEEP_ACC)                       \
    DEFINE_VARIADIC_ROW(min_##SUFFIX, T, T, KEEP, SMALLER, KEEP_ACC)                      \
    static inline U wrap_start_##SUFFIX(T v)                                              \
    {                                                                                     \
        return (U)v;                                                                      \
    }                                                                                     \
    static inline U wrap_add_##SUFFIX(U acc, T y)                                         \
    {                                                                                     \
        return (U)(acc + (U)y);                                                           \
    }                                                                                     \
    DEFINE_VARIADIC_ROW(sum_##SUFFIX, T, U, wrap_start_##SUFFIX, wrap_add_##SUFFIX, KEEP_ACC)
INTEGER_DTYPES(DEFINE_INTEGER_VARIADIC)

/* ------------------------------------------------------- kernel tables */

typedef enum kernel_id {
    K_POW, K_MOD_FLOOR, K_MOD_TRUNC,
    K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE,
    K_AND, K_OR, K_XOR,
    K_SHL, K_SHR,
    K_WHERE,
    K_MAX, K_MIN, K_SUM, K_MEAN,
    K_COUNT
} kernel_id;

typedef struct dtype_kernels {
    kiln_dtype dtype;
    kiln_row_kernel row[K_COUNT]; /* NULL: the op does not take this dtype */
} dtype_kernels;

#define NUMERIC_KERNELS(S)                                                                     \
    [K_MOD_FLOOR] = mod_floor_##S, [K_MOD_TRUNC] = mod_trunc_##S, [K_EQ] = eq_##S,              \
    [K_NE] = ne_##S, [K_LT] = lt_##S, [K_LE] = le_##S, [K_GT] = gt_##S, [K_GE] = ge_##S,         \
    [K_WHERE] = where_##S, [K_MAX] = max_##S, [K_MIN] = min_##S, [K_SUM] = sum_##S
#define FLOAT_KERNELS(CODE, T, U, S) {CODE, {NUMERIC_KERNELS(S), [K_POW] = pow_##S, [K_MEAN] = mean_##S}},
#define SIGNED_KERNELS(CODE, T, U, S) {CODE, {NUMERIC_KERNELS(S)}},
#define UNSIGNED_KERNELS(CODE, T, U, S) {CODE, {NUMERIC_KERNELS(S), [K_SHL] = shl_##S, [K_SHR] = shr_##S}},

static const dtype_kernels kernel_table[] = {
    FLOAT_DTYPES(FLOAT_KERNELS)
    SIGNED_DTYPES(SIGNED_KERNELS)
    UNSIGNED_DTYPES(UNSIGNED_KERNELS)
    {KILN_BOOL, {[K_EQ] = eq_bool, [K_NE] = ne_bool, [K_LT] = lt_bool, [K_LE] = le_bool, [K_GT] = gt_bool,
                 [K_GE] = ge_bool, [K_AND] = and_bool, [K_OR] = or_bool, [K_XOR] = xor_bool,
                 [K_WHERE] = where_bool}},
};

static kiln_row_kernel find_row_kernel(kernel_id id, kiln_dtype dtype)
{
    for (size_t i = 0; i < sizeof kernel_table / sizeof kernel_table[0]; i++)
        if (kernel_table[i].dtype == dtype)
            return kernel_table[i].row[id];
    return NULL;
}

/* ------------------------------------------------------------- kernels */

/*
 * Run kernel `id` over the call. Value operands start at `first` (1 for
 * where, whose input 0 is the condition). The shape rules proved dtypes
 * and shapes when the program was built or loaded; the dtypes are checked
 * again here because tests and tools call kernels directly.
 */
static kiln_status run_rows(const char *op, kernel_id id, uint32_t first, bool bool_output,
                            const kiln_kernel_call *call, kiln_error *err)
{
    if (call->input_count <= first || call->input_count > KILN_WALK_MAX_OPERANDS)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s: wrong number of inputs (%u)", op,
                         call->input_count);
    kiln_dtype dtype = call->inputs[first]->dtype;
    bool consistent = call->output->dtype == (bool_output ? KILN_BOOL : dtype) &&
                      (first == 0 || call->inputs[0]->dtype == KILN_BOOL);
    for (uint32_t i = first; i < call->input_count; i++)
        consistent = consistent && call->inputs[i]->dtype == dtype && call->inputs[i]->rank <= call->output->rank;
    kiln_row_kernel row = consistent ? find_row_kernel(id, dtype) : NULL;
    if (!row)
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "%s: no kernel for dtype %s", op, kiln_dtype_name(dtype));
    kiln_walk_rows(call->inputs, call->input_count, call->output, row, kiln_call_threads(call));
    return KILN_OK;
}

#define DEFINE_RUN(NAME, OP, ID, FIRST, BOOL_OUTPUT)                                   \
    static kiln_status NAME(const kiln_kernel_call *call, kiln_error *err)            \
    {                                                                                 \
        KILN_HALF_IN_F32(call, NAME, err);                                            \
        return run_rows(OP, ID, FIRST, BOOL_OUTPUT, call, err);                       \
    }
DEFINE_RUN(run_pow, "pow", K_POW, 0, false)
DEFINE_RUN(run_eq, "eq", K_EQ, 0, true)
DEFINE_RUN(run_ne, "ne", K_NE, 0, true)
DEFINE_RUN(run_lt, "lt", K_LT, 0, true)
DEFINE_RUN(run_le, "le", K_LE, 0, true)
DEFINE_RUN(run_gt, "gt", K_GT, 0, true)
DEFINE_RUN(run_ge, "ge", K_GE, 0, true)
DEFINE_RUN(run_and, "and", K_AND, 0, false)
DEFINE_RUN(run_or, "or", K_OR, 0, false)
DEFINE_RUN(run_xor, "xor", K_XOR, 0, false)
DEFINE_RUN(run_where, "where", K_WHERE, 1, false)
DEFINE_RUN(run_max, "max", K_MAX, 0, false)
DEFINE_RUN(run_min, "min", K_MIN, 0, false)
DEFINE_RUN(run_sum, "sum", K_SUM, 0, false)
DEFINE_RUN(run_mean, "mean", K_MEAN, 0, false)

static bool has_zero_element(const kiln_tensor *t)
{
    const unsigned char *bytes = t->data;
    size_t width = kiln_dtype_size(t->dtype);
    static const unsigned char zero[8] = {0};
    for (uint64_t i = 0; i < t->element_count; i++)
        if (memcmp(bytes + i * width, zero, width) == 0)
            return true;
    return false;
}

static kiln_status run_mod(const kiln_kernel_call *call, kiln_error *err)
{
    int64_t mode = kiln_attribute_int(call->attributes, call->attribute_count, "fmod", 0);
    if (mode != 0 && mode != 1)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "mod: attribute 'fmod' must be 0 or 1, got %lld",
                         (long long)mode);
    KILN_HALF_IN_F32(call, run_mod, err);
    /* Every divisor element reaches some output element unless the output
     * is empty (broadcasting only repeats), so one zero anywhere fails. */
    if (call->input_count == 2 && call->output->element_count != 0 && kiln_dtype_is_arithmetic(call->inputs[1]->dtype) &&
        !kiln_dtype_is_floating(call->inputs[1]->dtype) && has_zero_element(call->inputs[1]))
        return kiln_fail(err, KILN_ERR_RUNTIME, "mod: integer division by zero");
    return run_rows("mod", mode ? K_MOD_TRUNC : K_MOD_FLOOR, 0, false, call, err);
}

static kiln_status run_bitshift(const kiln_kernel_call *call, kiln_error *err)
{
    bool left;
    if (!shift_direction(kiln_attribute_find(call->attributes, call->attribute_count, "direction"), &left))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "bitshift: attribute 'direction' must be \"left\" or \"right\"");
    return run_rows("bitshift", left ? K_SHL : K_SHR, 0, false, call, err);
}

/* ------------------------------------------------------------- registry */

static const kiln_attribute_spec mod_attributes[] = {
    {"fmod", KILN_ATTRIBUTE_INT},
    {NULL, (kiln_attribute_type)0},
};

static const kiln_attribute_spec bitshift_attributes[] = {
    {"direction", KILN_ATTRIBUTE_STRING},
    {NULL, (kiln_attribute_type)0},
};

static const kiln_op_def binary_ops[] = {
    {.name = "pow", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_pow, .run = run_pow},
    {.name = "mod", .versions = {1, 1}, .inputs = {2, 2}, .attributes = mod_attributes,
     .infer = infer_mod, .run = run_mod},
    {.name = "eq", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_eq, .run = run_eq},
    {.name = "ne", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_ne, .run = run_ne},
    {.name = "lt", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_lt, .run = run_lt},
    {.name = "le", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_le, .run = run_le},
    {.name = "gt", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_gt, .run = run_gt},
    {.name = "ge", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_ge, .run = run_ge},
    {.name = "and", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_and, .run = run_and},
    {.name = "or", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_or, .run = run_or},
    {.name = "xor", .versions = {1, 1}, .inputs = {2, 2}, .infer = infer_xor, .run = run_xor},
    {.name = "bitshift", .versions = {1, 1}, .inputs = {2, 2}, .attributes = bitshift_attributes,
     .infer = infer_bitshift, .run = run_bitshift},
    {.name = "where", .versions = {1, 1}, .inputs = {3, 3}, .infer = infer_where, .run = run_where},
    {.name = "max", .versions = {1, 1}, .inputs = {1, KILN_WALK_MAX_OPERANDS},
     .infer = infer_max, .run = run_max, .traits = {.layout = KILN_LAYOUT_ELEMENTWISE}},
    {.name = "min", .versions = {1, 1}, .inputs = {1, KILN_WALK_MAX_OPERANDS},
     .infer = infer_min, .run = run_min, .traits = {.layout = KILN_LAYOUT_ELEMENTWISE}},
    {.name = "sum", .versions = {1, 1}, .inputs = {1, KILN_WALK_MAX_OPERANDS}, .infer = infer_sum, .run = run_sum},
    {.name = "mean", .versions = {1, 1}, .inputs = {1, KILN_WALK_MAX_OPERANDS}, .infer = infer_mean, .run = run_mean},
};

const kiln_op_family kiln_ops_binary = KILN_OP_FAMILY(binary_ops, "spec/ops/binary.md");
