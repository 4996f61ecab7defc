/*
 * test_kernels.c — differential tests of the elementwise family (add, sub,
 * mul, div, neg): every kernel is compared bit for bit against a reference
 * implementation written here with a deliberately different algorithm, over
 * every arithmetic dtype and every broadcast pattern; known answers pin the
 * reference itself at IEEE specials and integer edges; and the shape rules
 * are checked for what they accept, what they derive and what they refuse.
 *
 * The reference walks the output one flat index at a time, recovers the
 * multi-index by repeated div/mod, maps it into each operand (index 0 on a
 * size-1 axis) and computes in the widest type: double for floats (rounded
 * once to f32, which is exact for + - * / because double has more than
 * 2*24+2 bits), and 64-bit unsigned wrap-around for integers, truncated to
 * the element width on store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "arithmetic.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

/* ------------------------------------------------------------ dtypes */

static const kiln_dtype arithmetic_dtypes[] = {
    KILN_F32, KILN_F64, KILN_I8, KILN_I16, KILN_I32, KILN_I64,
    KILN_U8,  KILN_U16, KILN_U32, KILN_U64,
};
#define ARITHMETIC_DTYPE_COUNT (sizeof arithmetic_dtypes / sizeof arithmetic_dtypes[0])

static const kiln_dtype integer_dtypes[] = {
    KILN_I8, KILN_I16, KILN_I32, KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64,
};
#define INTEGER_DTYPE_COUNT (sizeof integer_dtypes / sizeof integer_dtypes[0])

/* The test keeps its own width table so the reference does not lean on the
 * library's dtype code it is meant to check. */
static unsigned element_width(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_I8: case KILN_U8: return 1;
    case KILN_I16: case KILN_U16: return 2;
    case KILN_F32: case KILN_I32: case KILN_U32: return 4;
    case KILN_F64: case KILN_I64: case KILN_U64: return 8;
    default: return 0;
    }
}

static bool is_float_dtype(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64;
}

static bool is_signed_integer_dtype(kiln_dtype dtype)
{
    return dtype == KILN_I8 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
}

/* All ones in the low `width` bytes: the mask that truncation keeps. */
static uint64_t width_mask(kiln_dtype dtype)
{
    unsigned bits = 8 * element_width(dtype);
    return bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
}

/* ----------------------------------------------------------- the ops */

typedef enum reference_op { REF_ADD, REF_SUB, REF_MUL, REF_DIV, REF_NEG } reference_op;

typedef struct op_case {
    const char *name;
    reference_op op;
    kiln_tensor_kernel kernel;
} op_case;

static const op_case binary_ops[] = {
    {"add", REF_ADD, kiln_kernel_add},
    {"sub", REF_SUB, kiln_kernel_sub},
    {"mul", REF_MUL, kiln_kernel_mul},
    {"div", REF_DIV, kiln_kernel_div},
};
#define BINARY_OP_COUNT (sizeof binary_ops / sizeof binary_ops[0])
static const op_case neg_op = {"neg", REF_NEG, kiln_kernel_neg};

static const op_case *const op_add = &binary_ops[0];
static const op_case *const op_sub = &binary_ops[1];
static const op_case *const op_mul = &binary_ops[2];
static const op_case *const op_div = &binary_ops[3];

/* ------------------------------------------------- element load/store */

static unsigned char *element_at(void *data, kiln_dtype dtype, uint64_t index)
{
    return (unsigned char *)data + index * element_width(dtype);
}

static const unsigned char *const_element_at(const void *data, kiln_dtype dtype, uint64_t index)
{
    return (const unsigned char *)data + index * element_width(dtype);
}

static double load_float(kiln_dtype dtype, const void *data, uint64_t index)
{
    const unsigned char *p = const_element_at(data, dtype, index);
    if (dtype == KILN_F32) {
        float value;
        memcpy(&value, p, sizeof value);
        return value;
    }
    double value;
    memcpy(&value, p, sizeof value);
    return value;
}

/* Rounds once to f32 when the dtype is f32. */
static void store_float(kiln_dtype dtype, void *data, uint64_t index, double value)
{
    unsigned char *p = element_at(data, dtype, index);
    if (dtype == KILN_F32) {
        float narrow = (float)value;
        memcpy(p, &narrow, sizeof narrow);
    } else {
        memcpy(p, &value, sizeof value);
    }
}

/* Signed element, sign-extended to 64 bits. */
static int64_t load_signed(kiln_dtype dtype, const void *data, uint64_t index)
{
    const unsigned char *p = const_element_at(data, dtype, index);
    switch (dtype) {
    case KILN_I8: { int8_t v; memcpy(&v, p, sizeof v); return v; }
    case KILN_I16: { int16_t v; memcpy(&v, p, sizeof v); return v; }
    case KILN_I32: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    default: { int64_t v; memcpy(&v, p, sizeof v); return v; }
    }
}

static uint64_t load_unsigned(kiln_dtype dtype, const void *data, uint64_t index)
{
    const unsigned char *p = const_element_at(data, dtype, index);
    switch (element_width(dtype)) {
    case 1: { uint8_t v; memcpy(&v, p, sizeof v); return v; }
    case 2: { uint16_t v; memcpy(&v, p, sizeof v); return v; }
    case 4: { uint32_t v; memcpy(&v, p, sizeof v); return v; }
    default: { uint64_t v; memcpy(&v, p, sizeof v); return v; }
    }
}

/* Keep the low bits of `bits`: unsigned narrowing is fully defined in C, and
 * the stored bytes are the two's-complement encoding for signed dtypes. */
static void store_integer_bits(kiln_dtype dtype, void *data, uint64_t index, uint64_t bits)
{
    unsigned char *p = element_at(data, dtype, index);
    switch (element_width(dtype)) {
    case 1: { uint8_t v = (uint8_t)bits; memcpy(p, &v, sizeof v); break; }
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, sizeof v); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, sizeof v); break; }
    default: memcpy(p, &bits, sizeof bits); break;
    }
}

/* ------------------------------------------------ reference arithmetic */

static double reference_float(reference_op op, double x, double y)
{
    switch (op) {
    case REF_ADD: return x + y;
    case REF_SUB: return x - y;
    case REF_MUL: return x * y;
    case REF_DIV: return x / y;
    case REF_NEG: return -x;
    }
    return 0.0;
}

/* Signed: all in uint64 so overflow wraps; the one overflowing quotient
 * (INT64_MIN / -1) is answered directly. Narrower MIN / -1 does not
 * overflow in int64 and wraps on the truncating store. Divisor != 0. */
static uint64_t reference_signed(reference_op op, int64_t x, int64_t y)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case REF_ADD: return ux + uy;
    case REF_SUB: return ux - uy;
    case REF_MUL: return ux * uy;
    case REF_NEG: return (uint64_t)0 - ux;
    case REF_DIV:
        if (x == INT64_MIN && y == -1)
            return (uint64_t)INT64_MIN;
        return (uint64_t)(x / y);
    }
    return 0;
}

static uint64_t reference_unsigned(reference_op op, uint64_t x, uint64_t y)
{
    switch (op) {
    case REF_ADD: return x + y;
    case REF_SUB: return x - y;
    case REF_MUL: return x * y;
    case REF_NEG: return (uint64_t)0 - x;
    case REF_DIV: return x / y;
    }
    return 0;
}

/* out[out_index] = op(a[index_a], b[index_b]); b is ignored for neg. */
static void reference_element(reference_op op, kiln_dtype dtype, const void *a, uint64_t index_a,
                              const void *b, uint64_t index_b, void *out, uint64_t out_index)
{
    bool unary = op == REF_NEG;
    if (is_float_dtype(dtype)) {
        double x = load_float(dtype, a, index_a);
        double y = unary ? 0.0 : load_float(dtype, b, index_b);
        store_float(dtype, out, out_index, reference_float(op, x, y));
    } else if (is_signed_integer_dtype(dtype)) {
        int64_t x = load_signed(dtype, a, index_a);
        int64_t y = unary ? 0 : load_signed(dtype, b, index_b);
        store_integer_bits(dtype, out, out_index, reference_signed(op, x, y));
    } else {
        uint64_t x = load_unsigned(dtype, a, index_a);
        uint64_t y = unary ? 0 : load_unsigned(dtype, b, index_b);
        store_integer_bits(dtype, out, out_index, reference_unsigned(op, x, y));
    }
}

/* ----------------------------------------------- reference broadcasting */

typedef struct test_shape {
    uint32_t rank;
    int64_t extent[KILN_MAX_RANK];
} test_shape;

/* A fresh tensor of `shape` (tensor_fixture.h). */
static kiln_tensor *shaped_tensor(kiln_dtype dtype, const test_shape *shape)
{
    return new_tensor(dtype, shape->rank, shape->extent);
}

static uint64_t shape_element_count(const test_shape *shape)
{
    uint64_t count = 1;
    for (uint32_t i = 0; i < shape->rank; i++)
        count *= (uint64_t)shape->extent[i];
    return count;
}

/* NumPy's rule, written out independently of the library: align from the
 * right, a missing or size-1 axis takes the other side's extent. */
static bool broadcast_shapes(const test_shape *a, const test_shape *b, test_shape *out)
{
    out->rank = a->rank > b->rank ? a->rank : b->rank;
    for (uint32_t i = 0; i < out->rank; i++) {
        uint32_t from_right = out->rank - 1 - i;
        int64_t ea = from_right < a->rank ? a->extent[a->rank - 1 - from_right] : 1;
        int64_t eb = from_right < b->rank ? b->extent[b->rank - 1 - from_right] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return false;
        out->extent[i] = ea == 1 ? eb : ea;
    }
    return true;
}

/* Multi-index of a flat C-order index, by repeated div/mod. */
static void unravel_index(uint64_t flat, const test_shape *shape, int64_t *index)
{
    for (uint32_t axis = shape->rank; axis-- > 0;) {
        uint64_t extent = (uint64_t)shape->extent[axis];
        index[axis] = (int64_t)(flat % extent);
        flat /= extent;
    }
}

/* Flat index into `operand` of the output position `out_index`. */
static uint64_t operand_flat_index(const kiln_tensor *operand, const int64_t *out_index,
                                   uint32_t out_rank)
{
    uint32_t leading = out_rank - operand->rank;
    uint64_t flat = 0;
    for (uint32_t axis = 0; axis < operand->rank; axis++) {
        int64_t extent = operand->shape[axis];
        int64_t position = extent == 1 ? 0 : out_index[leading + axis];
        flat = flat * (uint64_t)extent + (uint64_t)position;
    }
    return flat;
}

/* ------------------------------------------------------ tensor helpers */

static test_shape tensor_shape(const kiln_tensor *t)
{
    test_shape shape = {.rank = t->rank};
    for (uint32_t i = 0; i < t->rank; i++)
        shape.extent[i] = t->shape[i];
    return shape;
}

static void format_shape(const test_shape *shape, char *text, size_t size)
{
    size_t used = (size_t)snprintf(text, size, "(");
    for (uint32_t i = 0; i < shape->rank && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? "," : "",
                                 (long long)shape->extent[i]);
    if (used < size)
        snprintf(text + used, size - used, ")");
}

static test_shape make_shape(uint32_t rank, const int64_t *extents)
{
    test_shape shape = {.rank = rank};
    for (uint32_t i = 0; i < rank; i++)
        shape.extent[i] = extents[i];
    return shape;
}

/* ------------------------------------------------------ random values */

/* Bit patterns that sit on integer edges for any width once truncated:
 * 0, 1, 2, 7, all ones (-1 / MAX), -2, -7, the sign bit alone (MIN / 2^(w-1)),
 * the sign bit +1, and the sign bit -1 (MAX of the signed type). */
static uint64_t integer_edge_bits(kiln_dtype dtype, uint64_t which)
{
    uint64_t sign_bit = (uint64_t)1 << (8 * element_width(dtype) - 1);
    static const uint64_t plain[] = {0, 1, 2, 7, UINT64_MAX, (uint64_t)0 - 2, (uint64_t)0 - 7};
    size_t plain_count = sizeof plain / sizeof plain[0];
    if (which < plain_count)
        return plain[which];
    switch (which - plain_count) {
    case 0: return sign_bit;
    case 1: return sign_bit + 1;
    default: return sign_bit - 1;
    }
}
#define INTEGER_EDGE_COUNT 10

static double float_special(kiln_dtype dtype, uint64_t which)
{
    bool single = dtype == KILN_F32;
    switch (which) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return NAN;
    case 5: return -NAN;
    case 6: return single ? FLT_TRUE_MIN : DBL_TRUE_MIN;        /* smallest denormal */
    case 7: return single ? -FLT_TRUE_MIN : -DBL_TRUE_MIN;
    case 8: return single ? FLT_MIN / 4 : DBL_MIN / 4;          /* mid-range denormal */
    case 9: return single ? FLT_MIN : DBL_MIN;                  /* smallest normal */
    case 10: return single ? FLT_MAX : DBL_MAX;
    case 11: return single ? -FLT_MAX : -DBL_MAX;
    case 12: return 1.0;
    case 13: return -1.0;
    case 14: return 0.5;
    default: return 3.0;
    }
}
#define FLOAT_SPECIAL_COUNT 16

/* A mix of specials, arbitrary bit patterns (NaN payloads, huge and tiny
 * values) and ordinary values with full mantissas so rounding is exercised. */
static void fill_random_element(kiln_dtype dtype, void *data, uint64_t index, prng *rng)
{
    uint64_t kind = prng_below(rng, 4);
    if (is_float_dtype(dtype)) {
        if (kind == 0) {
            store_float(dtype, data, index, float_special(dtype, prng_below(rng, FLOAT_SPECIAL_COUNT)));
        } else if (kind == 1) {
            store_integer_bits(dtype == KILN_F32 ? KILN_U32 : KILN_U64, data, index, prng_next(rng));
        } else {
            double unit = (double)(prng_next(rng) >> 11) / 9007199254740992.0; /* [0, 1) */
            double value = ldexp(unit * 2.0 - 1.0, (int)prng_below(rng, 41) - 20);
            store_float(dtype, data, index, value);
        }
        return;
    }
    uint64_t bits;
    if (kind == 0)
        bits = integer_edge_bits(dtype, prng_below(rng, INTEGER_EDGE_COUNT));
    else if (kind == 1)
        bits = (uint64_t)((int64_t)prng_below(rng, 19) - 9); /* small, both signs */
    else
        bits = prng_next(rng);
    store_integer_bits(dtype, data, index, bits);
}

static bool integer_element_is_zero(kiln_dtype dtype, const void *data, uint64_t index)
{
    return load_unsigned(dtype, data, index) == 0;
}

/* Fill `t`; integer divisors never contain zero (that case has its own test). */
static void fill_random(kiln_tensor *t, prng *rng, bool nonzero_integers)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        fill_random_element(t->dtype, t->data, i, rng);
        if (nonzero_integers && !is_float_dtype(t->dtype) && integer_element_is_zero(t->dtype, t->data, i))
            store_integer_bits(t->dtype, t->data, i, 1 + prng_below(rng, 5));
    }
}

static void fill_with_three(kiln_tensor *t)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        if (is_float_dtype(t->dtype))
            store_float(t->dtype, t->data, i, 3.0);
        else
            store_integer_bits(t->dtype, t->data, i, 3);
    }
}

/* ------------------------------------------------------ comparisons */

static bool elements_match(kiln_dtype dtype, const void *expected, const void *actual, uint64_t index)
{
    unsigned width = element_width(dtype);
    if (is_float_dtype(dtype)) {
        double e = load_float(dtype, expected, index), a = load_float(dtype, actual, index);
        /* Any NaN matches any NaN: payloads are not part of the contract. */
        if (isnan(e) || isnan(a))
            return isnan(e) && isnan(a);
    }
    return memcmp(const_element_at(expected, dtype, index), const_element_at(actual, dtype, index),
                  width) == 0;
}

static void describe_element(kiln_dtype dtype, const void *data, uint64_t index, char *text, size_t size)
{
    if (is_float_dtype(dtype))
        snprintf(text, size, "%a (bits 0x%llx)", load_float(dtype, data, index),
                 (unsigned long long)(load_unsigned(dtype == KILN_F32 ? KILN_U32 : KILN_U64, data, index)));
    else if (is_signed_integer_dtype(dtype))
        snprintf(text, size, "%lld", (long long)load_signed(dtype, data, index));
    else
        snprintf(text, size, "%llu", (unsigned long long)load_unsigned(dtype, data, index));
}

/*
 * Run `op` on (a, b) — or on a alone for neg — into a fresh output whose
 * bytes start as garbage (so an unwritten element shows), then compare every
 * element with the reference and check the inputs were left alone.
 */
static void check_against_reference(const op_case *op, const kiln_tensor *a, const kiln_tensor *b)
{
    kiln_dtype dtype = a->dtype;
    test_shape shape_a = tensor_shape(a), shape_b = b ? tensor_shape(b) : shape_a, out_shape;
    assert_true(broadcast_shapes(&shape_a, &shape_b, &out_shape));
    kiln_tensor *out = shaped_tensor(dtype, &out_shape);
    memset(out->data, 0xA5, out->byte_size);

    void *saved_a = malloc(a->byte_size + 1), *saved_b = malloc((b ? b->byte_size : 0) + 1);
    assert_non_null(saved_a);
    assert_non_null(saved_b);
    memcpy(saved_a, a->data, a->byte_size);
    if (b)
        memcpy(saved_b, b->data, b->byte_size);

    kiln_error err = {0};
    kiln_status status = b ? op->kernel((const kiln_tensor *const[]){a, b}, 2, out, &err)
                           : op->kernel((const kiln_tensor *const[]){a}, 1, out, &err);
    char ta[96], tb[96];
    format_shape(&shape_a, ta, sizeof ta);
    format_shape(&shape_b, tb, sizeof tb);
    if (status != KILN_OK)
        fail_msg("%s %s %s %s: status %d: %s", op->name, kiln_dtype_name(dtype), ta, tb, (int)status,
                 err.message);

    void *expected = malloc(out->byte_size + 1);
    assert_non_null(expected);
    int64_t index[KILN_MAX_RANK];
    for (uint64_t flat = 0; flat < out->element_count; flat++) {
        unravel_index(flat, &out_shape, index);
        uint64_t ia = operand_flat_index(a, index, out_shape.rank);
        uint64_t ib = b ? operand_flat_index(b, index, out_shape.rank) : 0;
        reference_element(op->op, dtype, a->data, ia, b ? b->data : NULL, ib, expected, flat);
        if (!elements_match(dtype, expected, out->data, flat)) {
            char want[64], got[64], x[64], y[64] = "-";
            describe_element(dtype, expected, flat, want, sizeof want);
            describe_element(dtype, out->data, flat, got, sizeof got);
            describe_element(dtype, a->data, ia, x, sizeof x);
            if (b)
                describe_element(dtype, b->data, ib, y, sizeof y);
            fail_msg("%s %s a%s b%s: output element %llu: %s(%s, %s) expected %s, kernel gave %s",
                     op->name, kiln_dtype_name(dtype), ta, tb, (unsigned long long)flat, op->name, x,
                     y, want, got);
        }
    }
    assert_memory_equal(saved_a, a->data, a->byte_size);
    if (b)
        assert_memory_equal(saved_b, b->data, b->byte_size);
    free(expected);
    free(saved_a);
    free(saved_b);
    kiln_tensor_free(out);
}

/* Random operands of the given shapes for one op and dtype. */
static void check_random_case(const op_case *op, kiln_dtype dtype, const test_shape *shape_a,
                              const test_shape *shape_b, prng *rng)
{
    kiln_tensor *a = shaped_tensor(dtype, shape_a);
    kiln_tensor *b = shaped_tensor(dtype, shape_b);
    fill_random(a, rng, false);
    fill_random(b, rng, op->op == REF_DIV);
    check_against_reference(op, a, b);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
}

static void check_all_ops_all_dtypes(const test_shape *shape_a, const test_shape *shape_b, prng *rng)
{
    for (size_t d = 0; d < ARITHMETIC_DTYPE_COUNT; d++)
        for (size_t o = 0; o < BINARY_OP_COUNT; o++)
            check_random_case(&binary_ops[o], arithmetic_dtypes[d], shape_a, shape_b, rng);
}

/* ============================================================ kernels */

static void test_same_shape_every_op_and_dtype(void **state)
{
    (void)state;
    prng rng = {0x9E3779B97F4A7C15ull};
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 1, 7}, {3, 5, 7}, {2, 1, 9}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        test_shape shape = make_shape(3, shapes[s]);
        check_all_ops_all_dtypes(&shape, &shape, &rng);
    }
    test_shape vector = make_shape(1, (const int64_t[]){11});
    check_all_ops_all_dtypes(&vector, &vector, &rng);
}

/* Each named pattern, in both operand orders, so a kernel that handled
 * broadcasting on one side only would show. */
static void test_broadcast_patterns_every_op_and_dtype(void **state)
{
    (void)state;
    prng rng = {0xD1B54A32D192ED03ull};
    static const struct {
        const char *what;
        uint32_t rank_a;
        int64_t a[KILN_MAX_RANK];
        uint32_t rank_b;
        int64_t b[KILN_MAX_RANK];
    } patterns[] = {
        {"scalar vs scalar", 0, {0}, 0, {0}},
        {"scalar vs matrix", 0, {0}, 2, {3, 4}},
        {"scalar vs vector", 0, {0}, 1, {5}},
        {"row vs matrix", 2, {1, 5}, 2, {4, 5}},
        {"column vs matrix", 2, {4, 1}, 2, {4, 5}},
        {"column vs row", 2, {4, 1}, 2, {1, 5}},
        {"rank-3 vs rank-1", 3, {2, 3, 4}, 1, {4}},
        {"rank-3 vs rank-1 of size 1", 3, {2, 3, 4}, 1, {1}},
        {"size-1 axis in the middle", 3, {2, 1, 4}, 3, {2, 3, 4}},
        {"size-1 axes interleaved", 4, {2, 1, 3, 1}, 4, {1, 4, 1, 5}},
        {"rank-2 vs rank-4", 2, {3, 1}, 4, {2, 1, 1, 4}},
        {"all ones vs matrix", 2, {1, 1}, 2, {3, 4}},
        {"rank-8 interleaved", 8, {2, 1, 2, 1, 2, 1, 2, 1}, 8, {1, 2, 1, 2, 1, 2, 1, 2}},
        {"rank-8 vs rank-1", 8, {1, 2, 1, 2, 1, 2, 1, 3}, 1, {3}},
    };
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        test_shape a = make_shape(patterns[p].rank_a, patterns[p].a);
        test_shape b = make_shape(patterns[p].rank_b, patterns[p].b);
        check_all_ops_all_dtypes(&a, &b, &rng);
        check_all_ops_all_dtypes(&b, &a, &rng);
    }
}

/* Random compatible shape pairs up to rank 5, including zero extents, for
 * patterns nobody thought to list. */
static void test_random_broadcast_shapes(void **state)
{
    (void)state;
    prng rng = {0x2545F4914F6CDD1Dull};
    for (int trial = 0; trial < 120; trial++) {
        test_shape full = {.rank = (uint32_t)prng_below(&rng, 6)};
        for (uint32_t i = 0; i < full.rank; i++)
            full.extent[i] = prng_below(&rng, 12) == 0 ? 0 : 1 + (int64_t)prng_below(&rng, 4);
        test_shape side[2];
        for (int s = 0; s < 2; s++) {
            /* Drop leading axes and replace others by 1 at random. */
            uint32_t rank = (uint32_t)prng_below(&rng, full.rank + 1);
            side[s].rank = rank;
            for (uint32_t i = 0; i < rank; i++) {
                int64_t extent = full.extent[full.rank - rank + i];
                side[s].extent[i] = prng_below(&rng, 3) == 0 ? 1 : extent;
            }
        }
        check_all_ops_all_dtypes(&side[0], &side[1], &rng);
    }
}

/* Big enough that any row blocking or vector tail handling would be crossed
 * at an odd boundary (257 = 256 + 1, 129 = 128 + 1). */
static void test_large_tensors_cross_blocking(void **state)
{
    (void)state;
    prng rng = {0xA0761D6478BD642Full};
    test_shape matrix = make_shape(2, (const int64_t[]){257, 129});
    test_shape row = make_shape(1, (const int64_t[]){129});
    test_shape column = make_shape(2, (const int64_t[]){257, 1});
    test_shape row2 = make_shape(2, (const int64_t[]){1, 129});
    test_shape scalar = {.rank = 0};
    check_all_ops_all_dtypes(&matrix, &matrix, &rng);
    check_all_ops_all_dtypes(&row, &matrix, &rng);
    check_all_ops_all_dtypes(&column, &row2, &rng);
    check_all_ops_all_dtypes(&matrix, &scalar, &rng);
}

/*
 * The walk merges axes every operand steps through as one (binary_walk.h):
 * a squeeze-excite scale [N, C, 1, 1] * [N, C, H, W] walks rows of H*W.
 * Patterns where merging joins or must not join axes, compared element by
 * element with the reference in both operand orders; then, large enough
 * for two threads (chunks that start inside a merged row), a session's
 * two-thread call must give the one-thread bits.
 */
static void test_merged_axes_and_threads(void **state)
{
    (void)state;
    prng rng = {0x94D049BB133111EBull};
    static const struct {
        uint32_t rank_a;
        int64_t a[KILN_MAX_RANK];
        uint32_t rank_b;
        int64_t b[KILN_MAX_RANK];
    } patterns[] = {
        {4, {2, 5, 1, 1}, 4, {2, 5, 3, 7}}, /* per channel: [N*C] x [H*W] */
        {4, {1, 5, 1, 1}, 4, {2, 5, 3, 7}}, /* per channel, batch broadcast */
        {4, {2, 1, 3, 7}, 4, {2, 5, 3, 7}}, /* per image plane */
        {4, {2, 5, 3, 1}, 4, {2, 5, 3, 7}}, /* per row */
        {4, {1, 5, 3, 1}, 4, {2, 5, 3, 1}}, /* trailing size-1 axis in the output */
        {5, {2, 1, 1, 1, 4}, 5, {2, 3, 1, 5, 4}},
        {3, {1, 1, 1}, 3, {2, 1, 3}},
    };
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        test_shape a = make_shape(patterns[p].rank_a, patterns[p].a);
        test_shape b = make_shape(patterns[p].rank_b, patterns[p].b);
        check_all_ops_all_dtypes(&a, &b, &rng);
        check_all_ops_all_dtypes(&b, &a, &rng);
    }
    /* [2, 64, 1, 1] * [2, 64, 47, 47]: 282752 elements, rows of 2209. */
    test_shape scale = make_shape(4, (const int64_t[]){2, 64, 1, 1});
    test_shape plane = make_shape(4, (const int64_t[]){2, 64, 47, 47});
    const char *ops[] = {"add", "mul"};
    for (int o = 0; o < 2; o++) {
        kiln_tensor *x = shaped_tensor(KILN_F32, &scale), *y = shaped_tensor(KILN_F32, &plane);
        kiln_tensor *one = shaped_tensor(KILN_F32, &plane), *two = shaped_tensor(KILN_F32, &plane);
        fill_random(x, &rng, false);
        fill_random(y, &rng, false);
        op_case reference = {ops[o], o ? REF_MUL : REF_ADD, o ? kiln_kernel_mul : kiln_kernel_add};
        check_against_reference(&reference, x, y);
        const kiln_op_def *def = kiln_op_find(ops[o]);
        assert_non_null(def);
        kiln_node_state node_state = {NULL, NULL};
        kiln_kernel_context context;
        memset(&context, 0, sizeof context);
        context.state = &node_state;
        kiln_error err;
        for (int threads = 1; threads <= 2; threads++) {
            context.threads = (uint32_t)threads;
            kiln_kernel_call call = {(const kiln_tensor *const[]){x, y}, 2, threads == 1 ? one : two, NULL, 0,
                                     &context};
            assert_int_equal(def->run(&call, &err), KILN_OK);
        }
        assert_memory_equal(one->data, two->data, one->byte_size);
        kiln_tensor_free(x);
        kiln_tensor_free(y);
        kiln_tensor_free(one);
        kiln_tensor_free(two);
    }
}

static void test_neg_every_dtype_and_shape(void **state)
{
    (void)state;
    prng rng = {0xE7037ED1A0B428DBull};
    static const struct {
        uint32_t rank;
        int64_t extent[3];
    } shapes[] = {{0, {0}}, {1, {1}}, {1, {17}}, {2, {257, 129}}, {3, {2, 3, 5}}};
    for (size_t d = 0; d < ARITHMETIC_DTYPE_COUNT; d++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            test_shape shape = make_shape(shapes[s].rank, shapes[s].extent);
            kiln_tensor *a = shaped_tensor(arithmetic_dtypes[d], &shape);
            fill_random(a, &rng, false);
            check_against_reference(&neg_op, a, NULL);
            kiln_tensor_free(a);
        }
    }
}

/*
 * Zero-size operands: the output view points into a canary buffer that
 * must come back untouched, and the inputs are real zero-byte tensors so
 * ASan reports any read.
 */
static void test_zero_size_tensors_write_nothing(void **state)
{
    (void)state;
    static const struct {
        uint32_t rank_a;
        int64_t a[3];
        uint32_t rank_b;
        int64_t b[3];
    } cases[] = {
        {1, {0}, 1, {0}},
        {1, {0}, 0, {0}},          /* empty vs scalar */
        {0, {0}, 1, {0}},          /* scalar vs empty */
        {2, {0, 3}, 1, {3}},
        {2, {3, 0}, 2, {3, 1}},
        {2, {2, 0}, 2, {1, 0}},
        {3, {2, 0, 4}, 3, {1, 1, 4}},
        {1, {1}, 1, {0}},          /* size 1 broadcasts to 0 */
    };
    unsigned char canary[64];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (size_t d = 0; d < ARITHMETIC_DTYPE_COUNT; d++) {
            kiln_dtype dtype = arithmetic_dtypes[d];
            test_shape sa = make_shape(cases[c].rank_a, cases[c].a);
            test_shape sb = make_shape(cases[c].rank_b, cases[c].b);
            test_shape so;
            assert_true(broadcast_shapes(&sa, &sb, &so));
            assert_int_equal(shape_element_count(&so), 0);
            kiln_tensor *a = shaped_tensor(dtype, &sa), *b = shaped_tensor(dtype, &sb);
            /* Non-empty operands hold nonzero values so div has no reason
             * to refuse. */
            fill_with_three(a);
            fill_with_three(b);
            for (size_t o = 0; o <= BINARY_OP_COUNT; o++) {
                const op_case *op = o < BINARY_OP_COUNT ? &binary_ops[o] : &neg_op;
                kiln_tensor out;
                memset(canary, 0xA5, sizeof canary);
                if (op->op == REF_NEG)
                    kiln_tensor_view_init(&out, dtype, sa.rank, sa.extent, canary);
                else
                    kiln_tensor_view_init(&out, dtype, so.rank, so.extent, canary);
                if (out.element_count != 0)
                    continue; /* neg of a non-empty operand: covered elsewhere */
                kiln_error err = {0};
                kiln_status status =
                    op->op == REF_NEG ? op->kernel((const kiln_tensor *const[]){a}, 1, &out, &err)
                                      : op->kernel((const kiln_tensor *const[]){a, b}, 2, &out, &err);
                if (status != KILN_OK)
                    fail_msg("%s %s case %zu: status %d: %s", op->name, kiln_dtype_name(dtype), c,
                             (int)status, err.message);
                for (size_t i = 0; i < sizeof canary; i++)
                    if (canary[i] != 0xA5)
                        fail_msg("%s %s case %zu wrote byte %zu of an empty output", op->name,
                                 kiln_dtype_name(dtype), c, i);
            }
            kiln_tensor_free(a);
            kiln_tensor_free(b);
        }
    }
}

/* ------------------------------------------------------ float specials */

/* Every pair of specials through one kernel call per op: a column of
 * specials against a row of specials broadcasts to the full cross table. */
static void test_float_specials_cross_table(void **state)
{
    (void)state;
    const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};
    for (size_t d = 0; d < 2; d++) {
        kiln_dtype dtype = float_dtypes[d];
        test_shape column = make_shape(2, (const int64_t[]){FLOAT_SPECIAL_COUNT, 1});
        test_shape row = make_shape(2, (const int64_t[]){1, FLOAT_SPECIAL_COUNT});
        kiln_tensor *a = shaped_tensor(dtype, &column), *b = shaped_tensor(dtype, &row);
        for (uint64_t i = 0; i < FLOAT_SPECIAL_COUNT; i++) {
            store_float(dtype, a->data, i, float_special(dtype, i));
            store_float(dtype, b->data, i, float_special(dtype, i));
        }
        for (size_t o = 0; o < BINARY_OP_COUNT; o++)
            check_against_reference(&binary_ops[o], a, b);
        check_against_reference(&neg_op, a, NULL);
        kiln_tensor_free(a);
        kiln_tensor_free(b);
    }
}

/* One rank-0 kernel call: the result as a double (exact for f32). */
static double run_scalar_float(const op_case *op, kiln_dtype dtype, double x, double y)
{
    test_shape scalar = {.rank = 0};
    kiln_tensor *a = shaped_tensor(dtype, &scalar), *b = shaped_tensor(dtype, &scalar);
    kiln_tensor *out = shaped_tensor(dtype, &scalar);
    store_float(dtype, a->data, 0, x);
    store_float(dtype, b->data, 0, y);
    kiln_error err = {0};
    kiln_status status = op->op == REF_NEG
                             ? op->kernel((const kiln_tensor *const[]){a}, 1, out, &err)
                             : op->kernel((const kiln_tensor *const[]){a, b}, 2, out, &err);
    if (status != KILN_OK)
        fail_msg("%s %s: status %d: %s", op->name, kiln_dtype_name(dtype), (int)status, err.message);
    double result = load_float(dtype, out->data, 0);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);
    return result;
}

/* `result` is exactly `expected`, including the sign of zero. */
static void assert_same_double(double result, double expected, const char *what)
{
    if (isnan(expected)) {
        if (!isnan(result))
            fail_msg("%s: expected NaN, got %a", what, result);
        return;
    }
    if (memcmp(&result, &expected, sizeof result) != 0)
        fail_msg("%s: expected %a, got %a", what, expected, result);
}

/* Known answers, independent of the reference: they pin the reference too. */
static void test_float_known_answers(void **state)
{
    (void)state;
    const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};
    for (size_t d = 0; d < 2; d++) {
        kiln_dtype t = float_dtypes[d];
        bool single = t == KILN_F32;
        double denorm_min = single ? FLT_TRUE_MIN : DBL_TRUE_MIN;
        double normal_min = single ? FLT_MIN : DBL_MIN;
        double largest = single ? FLT_MAX : DBL_MAX;

        double negated_zero = run_scalar_float(&neg_op, t, 0.0, 0.0);
        assert_true(negated_zero == 0.0);
        assert_true(signbit(negated_zero)); /* neg(0.0) is -0.0, not 0 - 0.0 */
        assert_same_double(negated_zero, -0.0, "neg(+0)");
        assert_same_double(run_scalar_float(&neg_op, t, -0.0, 0), 0.0, "neg(-0)");
        assert_same_double(run_scalar_float(&neg_op, t, INFINITY, 0), -INFINITY, "neg(inf)");
        assert_same_double(run_scalar_float(&neg_op, t, denorm_min, 0), -denorm_min, "neg(denorm)");
        assert_true(isnan(run_scalar_float(&neg_op, t, NAN, 0)));

        assert_same_double(run_scalar_float(op_div, t, 1.0, 0.0), INFINITY, "1/0");
        assert_same_double(run_scalar_float(op_div, t, -1.0, 0.0), -INFINITY, "-1/0");
        assert_same_double(run_scalar_float(op_div, t, 1.0, -0.0), -INFINITY, "1/-0");
        assert_same_double(run_scalar_float(op_div, t, 0.0, 0.0), NAN, "0/0");
        assert_same_double(run_scalar_float(op_div, t, INFINITY, INFINITY), NAN, "inf/inf");
        assert_same_double(run_scalar_float(op_div, t, 1.0, INFINITY), 0.0, "1/inf");
        assert_same_double(run_scalar_float(op_div, t, -1.0, INFINITY), -0.0, "-1/inf");
        assert_same_double(run_scalar_float(op_div, t, -7.0, 2.0), -3.5, "-7/2");

        assert_same_double(run_scalar_float(op_add, t, INFINITY, -INFINITY), NAN, "inf + -inf");
        assert_same_double(run_scalar_float(op_sub, t, INFINITY, INFINITY), NAN, "inf - inf");
        assert_same_double(run_scalar_float(op_mul, t, 0.0, INFINITY), NAN, "0 * inf");
        assert_same_double(run_scalar_float(op_add, t, NAN, 1.0), NAN, "NaN + 1");
        assert_same_double(run_scalar_float(op_mul, t, 1.0, NAN), NAN, "1 * NaN");

        assert_same_double(run_scalar_float(op_add, t, -0.0, -0.0), -0.0, "-0 + -0");
        assert_same_double(run_scalar_float(op_add, t, 0.0, -0.0), 0.0, "0 + -0");
        assert_same_double(run_scalar_float(op_sub, t, -0.0, 0.0), -0.0, "-0 - 0");
        assert_same_double(run_scalar_float(op_sub, t, 0.0, 0.0), 0.0, "0 - 0");
        assert_same_double(run_scalar_float(op_mul, t, -0.0, 5.0), -0.0, "-0 * 5");
        assert_same_double(run_scalar_float(op_mul, t, -2.0, 0.0), -0.0, "-2 * 0");

        /* Denormals must be neither flushed nor treated as zero. */
        assert_same_double(run_scalar_float(op_add, t, denorm_min, denorm_min), 2 * denorm_min,
                           "denorm + denorm");
        assert_same_double(run_scalar_float(op_mul, t, normal_min, 0.25), normal_min / 4,
                           "normal_min * 0.25");
        assert_same_double(run_scalar_float(op_div, t, 1.0, largest), single ? 0x1p-128 : 0x1p-1024,
                           "1 / max (denormal quotient)");
        assert_same_double(run_scalar_float(op_sub, t, normal_min, denorm_min),
                           normal_min - denorm_min, "normal_min - denorm");
        /* denorm_min / 2 is a tie between 0 and denorm_min: even wins. */
        assert_same_double(run_scalar_float(op_div, t, denorm_min, 2.0), 0.0, "denorm / 2");
        assert_same_double(run_scalar_float(op_mul, t, denorm_min, 1.5), 2 * denorm_min,
                           "denorm * 1.5 rounds to even");

        /* Results round to the dtype, with no extra precision or range. */
        assert_same_double(run_scalar_float(op_mul, t, largest, 2.0), INFINITY, "max * 2");
        assert_same_double(run_scalar_float(op_add, t, largest, largest), INFINITY, "max + max");
        if (single) {
            assert_same_double(run_scalar_float(op_add, t, 1.0, 0x1p-30), 1.0, "f32 1 + 2^-30");
            assert_same_double(run_scalar_float(op_div, t, 1.0, 3.0), (double)(1.0f / 3.0f), "f32 1/3");
        } else {
            assert_same_double(run_scalar_float(op_add, t, 1.0, 0x1p-60), 1.0, "f64 1 + 2^-60");
            assert_same_double(run_scalar_float(op_div, t, 1.0, 3.0), 1.0 / 3.0, "f64 1/3");
        }
    }
}

/* ---------------------------------------------------- integer edges */

/* Every pair of edge values per width in one broadcast call per op. */
static void test_integer_edges_cross_table(void **state)
{
    (void)state;
    for (size_t d = 0; d < INTEGER_DTYPE_COUNT; d++) {
        kiln_dtype dtype = integer_dtypes[d];
        test_shape column = make_shape(2, (const int64_t[]){INTEGER_EDGE_COUNT, 1});
        test_shape row = make_shape(2, (const int64_t[]){1, INTEGER_EDGE_COUNT - 1});
        kiln_tensor *a = shaped_tensor(dtype, &column), *b = shaped_tensor(dtype, &row);
        for (uint64_t i = 0; i < INTEGER_EDGE_COUNT; i++)
            store_integer_bits(dtype, a->data, i, integer_edge_bits(dtype, i));
        /* Divisors: every edge except 0 (entry 0 of the edge list). */
        for (uint64_t i = 1; i < INTEGER_EDGE_COUNT; i++)
            store_integer_bits(dtype, b->data, i - 1, integer_edge_bits(dtype, i));
        for (size_t o = 0; o < BINARY_OP_COUNT; o++)
            check_against_reference(&binary_ops[o], a, b);
        check_against_reference(&neg_op, a, NULL);
        kiln_tensor_free(a);
        kiln_tensor_free(b);
    }
}

/* One rank-0 integer kernel call on bit patterns; result masked to width. */
static uint64_t run_scalar_integer(const op_case *op, kiln_dtype dtype, uint64_t x, uint64_t y)
{
    test_shape scalar = {.rank = 0};
    kiln_tensor *a = shaped_tensor(dtype, &scalar), *b = shaped_tensor(dtype, &scalar);
    kiln_tensor *out = shaped_tensor(dtype, &scalar);
    store_integer_bits(dtype, a->data, 0, x);
    store_integer_bits(dtype, b->data, 0, y);
    kiln_error err = {0};
    kiln_status status = op->op == REF_NEG
                             ? op->kernel((const kiln_tensor *const[]){a}, 1, out, &err)
                             : op->kernel((const kiln_tensor *const[]){a, b}, 2, out, &err);
    if (status != KILN_OK)
        fail_msg("%s %s: status %d: %s", op->name, kiln_dtype_name(dtype), (int)status, err.message);
    uint64_t result = load_unsigned(dtype, out->data, 0);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);
    return result;
}

static void expect_integer(const op_case *op, kiln_dtype dtype, uint64_t x, uint64_t y,
                           uint64_t expected, const char *what)
{
    uint64_t mask = width_mask(dtype);
    uint64_t got = run_scalar_integer(op, dtype, x, y) & mask;
    if (got != (expected & mask))
        fail_msg("%s %s (%s): expected 0x%llx, got 0x%llx", op->name, kiln_dtype_name(dtype), what,
                 (unsigned long long)(expected & mask), (unsigned long long)got);
}

/* Signed values are passed as their two's-complement bits. */
#define S(v) ((uint64_t)(int64_t)(v))

static void test_signed_integer_known_answers(void **state)
{
    (void)state;
    const kiln_dtype dtypes[] = {KILN_I8, KILN_I16, KILN_I32, KILN_I64};
    for (size_t d = 0; d < 4; d++) {
        kiln_dtype t = dtypes[d];
        unsigned bits = 8 * element_width(t);
        int64_t min = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        int64_t max = -(min + 1);

        expect_integer(op_add, t, S(max), S(1), S(min), "MAX + 1 wraps to MIN");
        expect_integer(op_add, t, S(min), S(-1), S(max), "MIN + -1 wraps to MAX");
        expect_integer(op_add, t, S(min), S(min), 0, "MIN + MIN");
        expect_integer(op_add, t, S(-3), S(5), S(2), "-3 + 5");
        expect_integer(op_sub, t, S(min), S(1), S(max), "MIN - 1 wraps to MAX");
        expect_integer(op_sub, t, S(max), S(-1), S(min), "MAX - -1 wraps to MIN");
        expect_integer(op_sub, t, S(0), S(min), S(min), "0 - MIN");
        expect_integer(op_mul, t, S(max), S(2), S(-2), "MAX * 2");
        expect_integer(op_mul, t, S(min), S(-1), S(min), "MIN * -1");
        expect_integer(op_mul, t, S(min), S(min), 0, "MIN * MIN");
        expect_integer(op_mul, t, S(max), S(max), S(1), "MAX * MAX");
        expect_integer(op_mul, t, S(-7), S(3), S(-21), "-7 * 3");
        expect_integer(op_div, t, S(min), S(-1), S(min), "MIN / -1 wraps to MIN");
        expect_integer(op_div, t, S(min), S(1), S(min), "MIN / 1");
        expect_integer(op_div, t, S(max), S(-1), S(-max), "MAX / -1");
        expect_integer(op_div, t, S(min), S(2), S(min / 2), "MIN / 2");
        expect_integer(op_div, t, S(min), S(max), S(-1), "MIN / MAX truncates");
        expect_integer(op_div, t, S(-7), S(2), S(-3), "-7 / 2 truncates toward zero");
        expect_integer(op_div, t, S(7), S(-2), S(-3), "7 / -2 truncates toward zero");
        expect_integer(op_div, t, S(-7), S(-2), S(3), "-7 / -2");
        expect_integer(op_div, t, S(7), S(2), S(3), "7 / 2");
        expect_integer(op_div, t, S(-1), S(2), S(0), "-1 / 2 is 0, not -1");
        expect_integer(op_div, t, S(0), S(-5), S(0), "0 / -5");
        expect_integer(&neg_op, t, S(min), 0, S(min), "neg MIN wraps to MIN");
        expect_integer(&neg_op, t, S(max), 0, S(-max), "neg MAX");
        expect_integer(&neg_op, t, S(-7), 0, S(7), "neg -7");
        expect_integer(&neg_op, t, S(0), 0, S(0), "neg 0");
    }
}

static void test_unsigned_integer_known_answers(void **state)
{
    (void)state;
    const kiln_dtype dtypes[] = {KILN_U8, KILN_U16, KILN_U32, KILN_U64};
    for (size_t d = 0; d < 4; d++) {
        kiln_dtype t = dtypes[d];
        uint64_t max = width_mask(t);
        uint64_t high = (max >> 1) + 1; /* top bit alone */

        expect_integer(op_add, t, max, 1, 0, "MAX + 1 wraps to 0");
        expect_integer(op_add, t, max, max, max - 1, "MAX + MAX");
        expect_integer(op_sub, t, 0, 1, max, "0 - 1 wraps to MAX");
        expect_integer(op_sub, t, 1, 2, max, "1 - 2 wraps to MAX");
        expect_integer(op_sub, t, high, 1, high - 1, "high - 1");
        expect_integer(op_mul, t, max, max, 1, "MAX * MAX");
        expect_integer(op_mul, t, high, 2, 0, "2^(w-1) * 2 wraps to 0");
        expect_integer(op_mul, t, 15, 17, 255, "15 * 17");
        expect_integer(op_div, t, max, 2, max >> 1, "MAX / 2");
        expect_integer(op_div, t, 7, 2, 3, "7 / 2");
        expect_integer(op_div, t, 1, max, 0, "1 / MAX");
        expect_integer(op_div, t, max, max, 1, "MAX / MAX");
        expect_integer(op_div, t, high, max, 0, "high / MAX (no signed reading)");
        expect_integer(op_div, t, max, high, 1, "MAX / high (no signed reading)");
        expect_integer(&neg_op, t, 1, 0, max, "neg 1 wraps to MAX");
        expect_integer(&neg_op, t, 0, 0, 0, "neg 0");
        expect_integer(&neg_op, t, high, 0, high, "neg 2^(w-1)");
        expect_integer(&neg_op, t, max, 0, 1, "neg MAX");
    }
}

static void assert_message_contains(const kiln_error *err, const char *text)
{
    if (!strstr(err->message, text))
        fail_msg("message \"%s\" does not contain \"%s\"", err->message, text);
}

/* A zero anywhere in the divisor, including a broadcast scalar, is refused
 * as a runtime error; the sanitizers check no trap or UB happens first. */
static void test_integer_division_by_zero_is_refused(void **state)
{
    (void)state;
    prng rng = {0x5851F42D4C957F2Dull};
    for (size_t d = 0; d < INTEGER_DTYPE_COUNT; d++) {
        kiln_dtype dtype = integer_dtypes[d];
        test_shape matrix = make_shape(2, (const int64_t[]){4, 3});
        test_shape row = make_shape(1, (const int64_t[]){3});
        test_shape scalar = {.rank = 0};
        const test_shape *divisor_shapes[] = {&matrix, &row, &scalar};
        for (size_t s = 0; s < 3; s++) {
            const test_shape *divisor_shape = divisor_shapes[s];
            kiln_tensor *a = shaped_tensor(dtype, &matrix), *b = shaped_tensor(dtype, divisor_shape);
            fill_random(a, &rng, false);
            fill_random(b, &rng, true);
            /* The zero sits last so a check that stopped early would miss it. */
            store_integer_bits(dtype, b->data, b->element_count - 1, 0);
            /* MIN / -1 elsewhere must not trap before the zero is seen. */
            store_integer_bits(dtype, a->data, 0, integer_edge_bits(dtype, 7));
            if (b->element_count > 1)
                store_integer_bits(dtype, b->data, 0, UINT64_MAX);
            kiln_tensor *out = shaped_tensor(dtype, &matrix);
            kiln_error err = {0};
            kiln_status status =
                kiln_kernel_div((const kiln_tensor *const[]){a, b}, 2, out, &err);
            assert_int_equal(status, KILN_ERR_RUNTIME);
            assert_int_equal(err.code, KILN_ERR_RUNTIME);
            assert_message_contains(&err, "division by zero");
            kiln_tensor_free(a);
            kiln_tensor_free(b);
            kiln_tensor_free(out);
        }
        /* A zero dividend is fine. */
        assert_int_equal(run_scalar_integer(op_div, dtype, 0, 3), 0);
    }
    /* Floats divide by zero under IEEE rules, without an error. */
    assert_same_double(run_scalar_float(op_div, KILN_F32, 2.0, 0.0), INFINITY, "f32 2/0");
    assert_same_double(run_scalar_float(op_div, KILN_F64, -2.0, 0.0), -INFINITY, "f64 -2/0");
}

/* An empty output with a zero scalar divisor performs no division, so it
 * succeeds (as NumPy does) and writes nothing. */
static void test_integer_division_by_zero_on_empty_output(void **state)
{
    (void)state;
    for (size_t d = 0; d < INTEGER_DTYPE_COUNT; d++) {
        kiln_dtype dtype = integer_dtypes[d];
        test_shape empty = make_shape(2, (const int64_t[]){0, 3});
        test_shape scalar = {.rank = 0};
        kiln_tensor *a = shaped_tensor(dtype, &empty), *b = shaped_tensor(dtype, &scalar);
        unsigned char canary[16];
        memset(canary, 0xA5, sizeof canary);
        kiln_tensor out;
        kiln_tensor_view_init(&out, dtype, empty.rank, empty.extent, canary);
        kiln_error err = {0};
        kiln_status status = kiln_kernel_div((const kiln_tensor *const[]){a, b}, 2, &out, &err);
        assert_int_equal(status, KILN_OK);
        for (size_t i = 0; i < sizeof canary; i++)
            assert_int_equal(canary[i], 0xA5);
        kiln_tensor_free(a);
        kiln_tensor_free(b);
    }
}

/* Kernels dispatch on the output dtype; non-arithmetic ones are refused
 * rather than run with the wrong element size. */
static void test_kernels_refuse_non_arithmetic_dtypes(void **state)
{
    (void)state;
    const kiln_dtype refused[] = {KILN_BOOL, KILN_F16, KILN_BF16};
    test_shape vector = make_shape(1, (const int64_t[]){4});
    for (size_t d = 0; d < 3; d++) {
        kiln_tensor *a = shaped_tensor(refused[d], &vector), *b = shaped_tensor(refused[d], &vector);
        kiln_tensor *out = shaped_tensor(refused[d], &vector);
        for (size_t o = 0; o <= BINARY_OP_COUNT; o++) {
            const op_case *op = o < BINARY_OP_COUNT ? &binary_ops[o] : &neg_op;
            kiln_error err = {0};
            kiln_status status =
                op->op == REF_NEG ? op->kernel((const kiln_tensor *const[]){a}, 1, out, &err)
                                  : op->kernel((const kiln_tensor *const[]){a, b}, 2, out, &err);
            assert_int_equal(status, KILN_ERR_UNSUPPORTED_DTYPE);
            assert_message_contains(&err, kiln_dtype_name(refused[d]));
        }
        kiln_tensor_free(a);
        kiln_tensor_free(b);
        kiln_tensor_free(out);
    }
}

/* The registry routes each op name to the kernel and rule tested here. */
static void test_registry_routes_to_these_kernels(void **state)
{
    (void)state;
    for (size_t o = 0; o < BINARY_OP_COUNT; o++) {
        const kiln_op_def *def = kiln_op_find(binary_ops[o].name);
        assert_non_null(def);
        static const kiln_kernel entry_points[] = {kiln_run_add, kiln_run_sub, kiln_run_mul, kiln_run_div};
        assert_true(def->run == entry_points[o]);
        assert_true(def->infer == kiln_infer_binary_broadcast);
        assert_int_equal(def->inputs.min, 2);
        assert_int_equal(def->inputs.max, 2);
    }
    const kiln_op_def *neg = kiln_op_find("neg");
    assert_non_null(neg);
    assert_true(neg->run == kiln_run_neg);
    assert_true(neg->infer == kiln_infer_unary_numeric);
}

/* ========================================================= shape rules */

enum { DIM_N, DIM_M, DIM_K, DIM_L, DIM_P, DIM_Q, DIM_R, DIM_S, DIM_T, DIM_COUNT };

/* N 1..4 and M 5..8 never agree; K and L share 2..8 so they agree at some
 * points and not at others; P 1..8 meets every small constant; Q and R are
 * too large to enumerate; S is fixed at 3; T 1..3 meets 3 only at T=2. */
typedef struct shape_fixture {
    kiln_expr_pool pool;
    kiln_dim_decl dims[DIM_COUNT];
    kiln_shape_context ctx;
} shape_fixture;

static void fixture_init(shape_fixture *f)
{
    kiln_expr_pool_init(&f->pool);
    static const struct {
        char *name; /* kiln_dim_decl holds a mutable pointer */
        int64_t min, max;
    } decls[DIM_COUNT] = {{"N", 1, 4}, {"M", 5, 8}, {"K", 2, 8}, {"L", 2, 8}, {"P", 1, 8},
                         {"Q", 1, 1000000}, {"R", 1, 1000000}, {"S", 3, 3},
                         {"T", 1, 3}};
    for (int d = 0; d < DIM_COUNT; d++) {
        f->dims[d].name = decls[d].name;
        f->dims[d].min = decls[d].min;
        f->dims[d].max = decls[d].max;
        f->dims[d].multiple_of = 1;
    }
    f->ctx.pool = &f->pool;
    f->ctx.dims = f->dims;
    f->ctx.dim_count = DIM_COUNT;
    f->ctx.node_label = "node 7 (add)";
    f->ctx.attributes = NULL;
    f->ctx.attribute_count = 0;
    f->ctx.deferred = NULL; /* strict */
    f->ctx.node = 7;
    f->ctx.budget = NULL; /* a default budget per claim */
}

static uint32_t constant_axis(shape_fixture *f, int64_t value)
{
    uint32_t id;
    kiln_error err = {0};
    assert_int_equal(kiln_expr_const(&f->pool, value, &id, &err), KILN_OK);
    return id;
}

static uint32_t dim_axis(shape_fixture *f, uint32_t dim)
{
    uint32_t id;
    kiln_error err = {0};
    assert_int_equal(kiln_expr_dim(&f->pool, dim, DIM_COUNT, &id, &err), KILN_OK);
    return id;
}

static kiln_value_type value_type(kiln_dtype dtype, uint32_t rank, const uint32_t *axes)
{
    kiln_value_type type = {.dtype = dtype, .shape = {.rank = rank}};
    for (uint32_t i = 0; i < rank; i++)
        type.shape.axes[i] = axes[i];
    return type;
}

static kiln_status infer_binary(shape_fixture *f, const kiln_value_type *a, const kiln_value_type *b,
                                kiln_value_type *out, kiln_error *err)
{
    memset(out, 0, sizeof *out);
    return kiln_infer_binary_broadcast(&f->ctx, (const kiln_value_type *const[]){a, b}, 2, out, err);
}

/* Infer (a, b) and require success with exactly `expected_axes`. */
static void expect_broadcast(shape_fixture *f, kiln_dtype dtype, uint32_t rank_a,
                             const uint32_t *axes_a, uint32_t rank_b, const uint32_t *axes_b,
                             uint32_t expected_rank, const uint32_t *expected_axes)
{
    kiln_value_type a = value_type(dtype, rank_a, axes_a), b = value_type(dtype, rank_b, axes_b), out;
    kiln_error err = {0};
    kiln_status status = infer_binary(f, &a, &b, &out, &err);
    if (status != KILN_OK)
        fail_msg("expected a broadcast, got status %d: %s", (int)status, err.message);
    assert_int_equal(out.dtype, dtype);
    assert_int_equal(out.shape.rank, expected_rank);
    for (uint32_t i = 0; i < expected_rank; i++)
        assert_int_equal(out.shape.axes[i], expected_axes[i]);
}

/* Infer (a, b) and require KILN_ERR_INVALID_PROGRAM naming the node. */
static void expect_refusal(shape_fixture *f, kiln_dtype dtype_a, uint32_t rank_a,
                           const uint32_t *axes_a, kiln_dtype dtype_b, uint32_t rank_b,
                           const uint32_t *axes_b, kiln_error *err)
{
    kiln_value_type a = value_type(dtype_a, rank_a, axes_a), b = value_type(dtype_b, rank_b, axes_b), out;
    kiln_status status = infer_binary(f, &a, &b, &out, err);
    if (status != KILN_ERR_INVALID_PROGRAM)
        fail_msg("expected KILN_ERR_INVALID_PROGRAM, got %d: %s", (int)status, err->message);
    assert_int_equal(err->code, KILN_ERR_INVALID_PROGRAM);
    assert_message_contains(err, "node 7 (add)");
}

static void test_shape_rule_accepts_every_arithmetic_dtype(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t three = constant_axis(&f, 3);
    for (size_t d = 0; d < ARITHMETIC_DTYPE_COUNT; d++)
        expect_broadcast(&f, arithmetic_dtypes[d], 1, &three, 1, &three, 1, &three);
    kiln_expr_pool_release(&f.pool);
}

/* f16 and bf16 are arithmetic, computed in f32 (test_half_compute.c). */
static void test_shape_rule_refuses_bool_and_invalid(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t three = constant_axis(&f, 3);
    const kiln_dtype refused[] = {KILN_BOOL, KILN_DTYPE_INVALID};
    for (size_t d = 0; d < 2; d++) {
        kiln_error err = {0};
        expect_refusal(&f, refused[d], 1, &three, refused[d], 1, &three, &err);
        assert_message_contains(&err, kiln_dtype_name(refused[d]));
    }
    kiln_expr_pool_release(&f.pool);
}

static void test_shape_rule_refuses_mismatched_dtypes(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t three = constant_axis(&f, 3);
    const kiln_dtype pairs[][2] = {
        {KILN_F32, KILN_F64}, {KILN_I32, KILN_U32}, {KILN_I8, KILN_I16},
        {KILN_F32, KILN_I32}, {KILN_U64, KILN_I64}, {KILN_F32, KILN_BOOL},
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        for (int order = 0; order < 2; order++) {
            kiln_error err = {0};
            kiln_dtype left = pairs[p][order], right = pairs[p][1 - order];
            expect_refusal(&f, left, 1, &three, right, 1, &three, &err);
            assert_message_contains(&err, kiln_dtype_name(left));
            assert_message_contains(&err, kiln_dtype_name(right));
        }
    }
    kiln_expr_pool_release(&f.pool);
}

static void test_shape_rule_constant_axes(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t zero = constant_axis(&f, 0), one = constant_axis(&f, 1);
    uint32_t two = constant_axis(&f, 2), three = constant_axis(&f, 3);

    kiln_error err = {0};
    expect_refusal(&f, KILN_F32, 1, &two, KILN_F32, 1, &three, &err);
    assert_message_contains(&err, "do not broadcast");
    assert_message_contains(&err, "2");
    assert_message_contains(&err, "3");
    expect_refusal(&f, KILN_F32, 1, &three, KILN_F32, 1, &two, &err);
    expect_refusal(&f, KILN_F32, 1, &zero, KILN_F32, 1, &three, &err);

    expect_broadcast(&f, KILN_F32, 1, &three, 1, &three, 1, &three);
    expect_broadcast(&f, KILN_F32, 1, &one, 1, &three, 1, &three);
    expect_broadcast(&f, KILN_F32, 1, &three, 1, &one, 1, &three);
    expect_broadcast(&f, KILN_F32, 1, &one, 1, &one, 1, &one);
    expect_broadcast(&f, KILN_F32, 1, &zero, 1, &one, 1, &zero);
    expect_broadcast(&f, KILN_F32, 1, &one, 1, &zero, 1, &zero);
    expect_broadcast(&f, KILN_F32, 1, &zero, 1, &zero, 1, &zero);
    kiln_expr_pool_release(&f.pool);
}

static void test_shape_rule_dim_against_one_and_itself(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t one = constant_axis(&f, 1);
    uint32_t n = dim_axis(&f, DIM_N), m = dim_axis(&f, DIM_M), k = dim_axis(&f, DIM_K);
    /* Interning makes a second reference to N the same id. */
    assert_int_equal(dim_axis(&f, DIM_N), n);

    expect_broadcast(&f, KILN_I32, 1, &n, 1, &one, 1, &n);
    expect_broadcast(&f, KILN_I32, 1, &one, 1, &n, 1, &n);
    expect_broadcast(&f, KILN_I32, 1, &n, 1, &n, 1, &n);
    const uint32_t nmk[] = {n, m, k}, n1k[] = {n, one, k}, one_m_one[] = {one, m, one};
    expect_broadcast(&f, KILN_F64, 3, nmk, 3, nmk, 3, nmk);
    expect_broadcast(&f, KILN_F64, 3, n1k, 3, one_m_one, 3, nmk);
    expect_broadcast(&f, KILN_F64, 3, one_m_one, 3, n1k, 3, nmk);
    kiln_expr_pool_release(&f.pool);
}

/*
 * The value the refusal's counterexample gives dim `name`. The tests check
 * that the point is genuine (inside the ranges, sizes really disagree)
 * rather than which point the search happens to find first.
 */
static int64_t counterexample_value(const kiln_error *err, const char *name)
{
    const char *marker = "counterexample: ";
    const char *start = strstr(err->message, marker);
    if (!start)
        fail_msg("refusal has no counterexample: \"%s\"", err->message);
    char list[KILN_ERROR_MESSAGE_SIZE];
    snprintf(list, sizeof list, "%s", start + strlen(marker));
    list[strcspn(list, ".")] = '\0'; /* the list ends at the sentence's period */
    size_t length = strlen(name);
    for (const char *entry = list; entry; entry = strstr(entry, ", ")) {
        if (entry != list)
            entry += 2;
        if (strncmp(entry, name, length) == 0 && entry[length] == '=')
            return strtoll(entry + length + 1, NULL, 10);
    }
    fail_msg("counterexample \"%s\" does not name %s", list, name);
    return 0;
}

static void assert_dim_value_in_range(const shape_fixture *f, uint32_t dim, int64_t value)
{
    if (value < f->dims[dim].min || value > f->dims[dim].max)
        fail_msg("counterexample %s=%lld is outside %lld..%lld", f->dims[dim].name, (long long)value,
                 (long long)f->dims[dim].min, (long long)f->dims[dim].max);
}

static void assert_sizes_do_not_broadcast(int64_t a, int64_t b)
{
    if (a == b || a == 1 || b == 1)
        fail_msg("counterexample sizes %lld and %lld do broadcast", (long long)a, (long long)b);
}

static void test_shape_rule_dim_against_other_constant(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t three = constant_axis(&f, 3), p = dim_axis(&f, DIM_P);
    for (int order = 0; order < 2; order++) {
        kiln_error err = {0};
        if (order == 0)
            expect_refusal(&f, KILN_F32, 1, &p, KILN_F32, 1, &three, &err);
        else
            expect_refusal(&f, KILN_F32, 1, &three, KILN_F32, 1, &p, &err);
        int64_t value = counterexample_value(&err, "P");
        assert_dim_value_in_range(&f, DIM_P, value);
        assert_sizes_do_not_broadcast(value, 3);
    }
    /* T against 3 holds at both ends of 1..3 (1 broadcasts, 3 matches):
     * the only counterexample is the interior point T=2. */
    uint32_t t = dim_axis(&f, DIM_T);
    kiln_error err = {0};
    expect_refusal(&f, KILN_F32, 1, &t, KILN_F32, 1, &three, &err);
    assert_int_equal(counterexample_value(&err, "T"), 2);
    kiln_expr_pool_release(&f.pool);
}

/* Different dims whose ranges never meet: every point is a counterexample. */
static void test_shape_rule_different_dims_disjoint_ranges(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t n = dim_axis(&f, DIM_N), m = dim_axis(&f, DIM_M);
    kiln_error err = {0};
    expect_refusal(&f, KILN_F32, 1, &n, KILN_F32, 1, &m, &err);
    int64_t vn = counterexample_value(&err, "N"), vm = counterexample_value(&err, "M");
    assert_dim_value_in_range(&f, DIM_N, vn);
    assert_dim_value_in_range(&f, DIM_M, vm);
    assert_sizes_do_not_broadcast(vn, vm);
    /* Only the dims of the two sizes are named. */
    if (strstr(err.message, "K=") || strstr(err.message, "P="))
        fail_msg("counterexample names an unrelated dim: %s", err.message);
    kiln_expr_pool_release(&f.pool);
}

/* K and L both range over 2..8: they agree at both corners (2,2) and (8,8),
 * so only an interior point such as K=2, L=3 shows the refusal is needed. */
static void test_shape_rule_different_dims_overlapping_ranges(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t k = dim_axis(&f, DIM_K), l = dim_axis(&f, DIM_L);
    kiln_error err = {0};
    expect_refusal(&f, KILN_F32, 1, &k, KILN_F32, 1, &l, &err);
    int64_t vk = counterexample_value(&err, "K"), vl = counterexample_value(&err, "L");
    assert_dim_value_in_range(&f, DIM_K, vk);
    assert_dim_value_in_range(&f, DIM_L, vl);
    assert_sizes_do_not_broadcast(vk, vl);
    kiln_expr_pool_release(&f.pool);
}

/* Ranges too large to enumerate still yield a genuine counterexample. */
static void test_shape_rule_different_dims_huge_ranges(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t q = dim_axis(&f, DIM_Q), r = dim_axis(&f, DIM_R);
    kiln_error err = {0};
    expect_refusal(&f, KILN_I64, 1, &q, KILN_I64, 1, &r, &err);
    int64_t vq = counterexample_value(&err, "Q"), vr = counterexample_value(&err, "R");
    assert_dim_value_in_range(&f, DIM_Q, vq);
    assert_dim_value_in_range(&f, DIM_R, vr);
    assert_sizes_do_not_broadcast(vq, vr);
    kiln_expr_pool_release(&f.pool);
}

/* S is always 3, so S against 3 has no counterexample. The rule may accept
 * or conservatively refuse, but a refusal must not invent one. */
static void test_shape_rule_never_invents_a_counterexample(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t s = dim_axis(&f, DIM_S), three = constant_axis(&f, 3);
    kiln_value_type a = value_type(KILN_F32, 1, &s), b = value_type(KILN_F32, 1, &three), out;
    kiln_error err = {0};
    kiln_status status = infer_binary(&f, &a, &b, &out, &err);
    if (status != KILN_OK) {
        assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
        if (strstr(err.message, "counterexample"))
            fail_msg("refusal claims a counterexample that cannot exist: %s", err.message);
    }
    kiln_expr_pool_release(&f.pool);
}

static void test_shape_rule_aligns_ranks_from_the_right(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    uint32_t one = constant_axis(&f, 1), two = constant_axis(&f, 2), three = constant_axis(&f, 3);
    uint32_t n = dim_axis(&f, DIM_N), m = dim_axis(&f, DIM_M);

    const uint32_t nm3[] = {n, m, three};
    expect_broadcast(&f, KILN_F32, 3, nm3, 1, &three, 3, nm3);
    expect_broadcast(&f, KILN_F32, 1, &three, 3, nm3, 3, nm3);
    expect_broadcast(&f, KILN_F32, 3, nm3, 0, NULL, 3, nm3);
    expect_broadcast(&f, KILN_F32, 0, NULL, 3, nm3, 3, nm3);
    expect_broadcast(&f, KILN_F32, 0, NULL, 0, NULL, 0, NULL);

    /* (M, 1) against (N, 1, 3) gives (N, M, 3). */
    const uint32_t m1[] = {m, one}, n13[] = {n, one, three};
    expect_broadcast(&f, KILN_I64, 2, m1, 3, n13, 3, nm3);
    expect_broadcast(&f, KILN_I64, 3, n13, 2, m1, 3, nm3);

    /* Left alignment would pair 3 with 3 and accept; right alignment pairs
     * 2 with 3 and must refuse, on output axis 1. */
    const uint32_t three_two[] = {three, two};
    kiln_error err = {0};
    expect_refusal(&f, KILN_F32, 2, three_two, KILN_F32, 1, &three, &err);
    assert_message_contains(&err, "axis 1");
    kiln_expr_pool_release(&f.pool);
}

static void test_unary_rule_copies_type_and_refuses_non_arithmetic(void **state)
{
    (void)state;
    shape_fixture f;
    fixture_init(&f);
    const uint32_t axes[] = {dim_axis(&f, DIM_N), constant_axis(&f, 3)};
    for (size_t d = 0; d < ARITHMETIC_DTYPE_COUNT; d++) {
        kiln_value_type in = value_type(arithmetic_dtypes[d], 2, axes), out;
        memset(&out, 0, sizeof out);
        kiln_error err = {0};
        assert_int_equal(kiln_infer_unary_numeric(&f.ctx, (const kiln_value_type *const[]){&in}, 1,
                                                  &out, &err),
                         KILN_OK);
        assert_int_equal(out.dtype, in.dtype);
        assert_int_equal(out.shape.rank, 2);
        assert_int_equal(out.shape.axes[0], axes[0]);
        assert_int_equal(out.shape.axes[1], axes[1]);
    }
    const kiln_dtype refused[] = {KILN_BOOL, KILN_DTYPE_INVALID};
    for (size_t d = 0; d < 2; d++) {
        kiln_value_type in = value_type(refused[d], 2, axes), out;
        kiln_error err = {0};
        assert_int_equal(kiln_infer_unary_numeric(&f.ctx, (const kiln_value_type *const[]){&in}, 1,
                                                  &out, &err),
                         KILN_ERR_INVALID_PROGRAM);
        assert_message_contains(&err, kiln_dtype_name(refused[d]));
    }
    kiln_expr_pool_release(&f.pool);
}

/* The family is exactly these ops, each served by the registry. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"add", "sub", "mul", "div", "neg"};
    assert_family_registered(&kiln_ops_elementwise, names, 5);
    assert_int_equal(kiln_ops_elementwise.count, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(test_same_shape_every_op_and_dtype),
        cmocka_unit_test(test_broadcast_patterns_every_op_and_dtype),
        cmocka_unit_test(test_random_broadcast_shapes),
        cmocka_unit_test(test_large_tensors_cross_blocking),
        cmocka_unit_test(test_merged_axes_and_threads),
        cmocka_unit_test(test_neg_every_dtype_and_shape),
        cmocka_unit_test(test_zero_size_tensors_write_nothing),
        cmocka_unit_test(test_float_specials_cross_table),
        cmocka_unit_test(test_float_known_answers),
        cmocka_unit_test(test_integer_edges_cross_table),
        cmocka_unit_test(test_signed_integer_known_answers),
        cmocka_unit_test(test_unsigned_integer_known_answers),
        cmocka_unit_test(test_integer_division_by_zero_is_refused),
        cmocka_unit_test(test_integer_division_by_zero_on_empty_output),
        cmocka_unit_test(test_kernels_refuse_non_arithmetic_dtypes),
        cmocka_unit_test(test_registry_routes_to_these_kernels),
        cmocka_unit_test(test_shape_rule_accepts_every_arithmetic_dtype),
        cmocka_unit_test(test_shape_rule_refuses_bool_and_invalid),
        cmocka_unit_test(test_shape_rule_refuses_mismatched_dtypes),
        cmocka_unit_test(test_shape_rule_constant_axes),
        cmocka_unit_test(test_shape_rule_dim_against_one_and_itself),
        cmocka_unit_test(test_shape_rule_dim_against_other_constant),
        cmocka_unit_test(test_shape_rule_different_dims_disjoint_ranges),
        cmocka_unit_test(test_shape_rule_different_dims_overlapping_ranges),
        cmocka_unit_test(test_shape_rule_different_dims_huge_ranges),
        cmocka_unit_test(test_shape_rule_never_invents_a_counterexample),
        cmocka_unit_test(test_shape_rule_aligns_ranks_from_the_right),
        cmocka_unit_test(test_unary_rule_copies_type_and_refuses_non_arithmetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
