/*
 * test_ops_binary.c — the binary op family (pow, mod, eq, ne, lt, le, gt,
 * ge, and, or, xor, bitshift, where, max, min, sum, mean) against a
 * reference written here with a different algorithm, over every dtype each
 * op takes and every broadcast pattern; known answers pin the reference at
 * IEEE specials and integer edges; end-to-end runs go through the public
 * builder, the artifact loader and a session; and the shape rules are
 * checked for what they refuse.
 *
 * The reference walks the output one flat index at a time, recovers the
 * multi-index by repeated div/mod and maps it into every operand (index 0
 * on a size-1 axis), where the kernels step row by row with strides. It
 * computes in the widest type (double, int64, uint64) and narrows on store;
 * shifts go one bit at a time; maxima and where select an element and copy
 * its bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

/* ------------------------------------------------------------ dtypes */

static const kiln_dtype float_dtypes[] = {KILN_F32, KILN_F64};
static const kiln_dtype arithmetic_dtypes[] = {
    KILN_F32, KILN_F64, KILN_I8, KILN_I16, KILN_I32, KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64,
};
static const kiln_dtype comparable_dtypes[] = {
    KILN_F32, KILN_F64, KILN_I8, KILN_I16, KILN_I32, KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64, KILN_BOOL,
};
static const kiln_dtype integer_dtypes[] = {
    KILN_I8, KILN_I16, KILN_I32, KILN_I64, KILN_U8, KILN_U16, KILN_U32, KILN_U64,
};
static const kiln_dtype unsigned_dtypes[] = {KILN_U8, KILN_U16, KILN_U32, KILN_U64};
static const kiln_dtype bool_dtypes[] = {KILN_BOOL};
#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* The test's own width table, independent of the library's dtype code. */
static unsigned element_width(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_I8: case KILN_U8: case KILN_BOOL: return 1;
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

static bool is_signed_dtype(kiln_dtype dtype)
{
    return dtype == KILN_I8 || dtype == KILN_I16 || dtype == KILN_I32 || dtype == KILN_I64;
}

static unsigned dtype_bits(kiln_dtype dtype)
{
    return 8 * element_width(dtype);
}

/* ----------------------------------------------------------- the ops */

typedef enum reference_op {
    R_POW, R_MOD_FLOOR, R_MOD_TRUNC, R_EQ, R_NE, R_LT, R_LE, R_GT, R_GE,
    R_AND, R_OR, R_XOR, R_SHL, R_SHR, R_WHERE, R_MAX, R_MIN, R_SUM, R_MEAN,
} reference_op;

/* What values the operands get, so the case is meaningful. */
typedef enum value_kind { VALUES_ANY, VALUES_NONZERO_DIVISOR, VALUES_SHIFT_COUNT } value_kind;

typedef struct op_case {
    const char *name;
    reference_op ref;
    const char *attribute; /* "fmod", "direction" or NULL */
    int64_t int_value;
    const char *string_value;
    const kiln_dtype *dtypes;
    size_t dtype_count;
    uint32_t arity; /* 0 for variadic */
    bool bool_output;
    value_kind values;
} op_case;

#define DTYPES(list) list, COUNT_OF(list)
static const op_case op_cases[] = {
    {"pow", R_POW, NULL, 0, NULL, DTYPES(float_dtypes), 2, false, VALUES_ANY},
    {"mod", R_MOD_FLOOR, NULL, 0, NULL, DTYPES(arithmetic_dtypes), 2, false, VALUES_NONZERO_DIVISOR},
    {"mod", R_MOD_FLOOR, "fmod", 0, NULL, DTYPES(arithmetic_dtypes), 2, false, VALUES_NONZERO_DIVISOR},
    {"mod", R_MOD_TRUNC, "fmod", 1, NULL, DTYPES(arithmetic_dtypes), 2, false, VALUES_NONZERO_DIVISOR},
    {"eq", R_EQ, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"ne", R_NE, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"lt", R_LT, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"le", R_LE, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"gt", R_GT, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"ge", R_GE, NULL, 0, NULL, DTYPES(comparable_dtypes), 2, true, VALUES_ANY},
    {"and", R_AND, NULL, 0, NULL, DTYPES(bool_dtypes), 2, false, VALUES_ANY},
    {"or", R_OR, NULL, 0, NULL, DTYPES(bool_dtypes), 2, false, VALUES_ANY},
    {"xor", R_XOR, NULL, 0, NULL, DTYPES(bool_dtypes), 2, false, VALUES_ANY},
    {"bitshift", R_SHL, "direction", 0, "left", DTYPES(unsigned_dtypes), 2, false, VALUES_SHIFT_COUNT},
    {"bitshift", R_SHR, "direction", 0, "right", DTYPES(unsigned_dtypes), 2, false, VALUES_SHIFT_COUNT},
    {"where", R_WHERE, NULL, 0, NULL, DTYPES(comparable_dtypes), 3, false, VALUES_ANY},
    {"max", R_MAX, NULL, 0, NULL, DTYPES(arithmetic_dtypes), 0, false, VALUES_ANY},
    {"min", R_MIN, NULL, 0, NULL, DTYPES(arithmetic_dtypes), 0, false, VALUES_ANY},
    {"sum", R_SUM, NULL, 0, NULL, DTYPES(arithmetic_dtypes), 0, false, VALUES_ANY},
    {"mean", R_MEAN, NULL, 0, NULL, DTYPES(float_dtypes), 0, false, VALUES_ANY},
};

/* ------------------------------------------------- element load/store */

static const unsigned char *element_bytes(const void *data, kiln_dtype dtype, uint64_t index)
{
    return (const unsigned char *)data + index * element_width(dtype);
}

static double load_float(kiln_dtype dtype, const void *data, uint64_t index)
{
    if (dtype == KILN_F32) {
        float v;
        memcpy(&v, element_bytes(data, dtype, index), sizeof v);
        return v;
    }
    double v;
    memcpy(&v, element_bytes(data, dtype, index), sizeof v);
    return v;
}

static void store_float(kiln_dtype dtype, void *data, uint64_t index, double value)
{
    unsigned char *p = (unsigned char *)data + index * element_width(dtype);
    if (dtype == KILN_F32) {
        float narrow = (float)value;
        memcpy(p, &narrow, sizeof narrow);
    } else {
        memcpy(p, &value, sizeof value);
    }
}

/* The element's bits, zero-extended. */
static uint64_t load_bits(kiln_dtype dtype, const void *data, uint64_t index)
{
    const unsigned char *p = element_bytes(data, dtype, index);
    uint64_t bits = 0;
    for (unsigned i = element_width(dtype); i-- > 0;)
        bits = (bits << 8) | p[i]; /* little-endian, byte by byte */
    return bits;
}

static int64_t load_signed(kiln_dtype dtype, const void *data, uint64_t index)
{
    uint64_t bits = load_bits(dtype, data, index);
    unsigned width = dtype_bits(dtype);
    if (width < 64 && (bits >> (width - 1)) & 1)
        bits |= ~(uint64_t)0 << width; /* sign-extend */
    int64_t value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void store_bits(kiln_dtype dtype, void *data, uint64_t index, uint64_t bits)
{
    unsigned char *p = (unsigned char *)data + index * element_width(dtype);
    for (unsigned i = 0; i < element_width(dtype); i++, bits >>= 8)
        p[i] = (unsigned char)bits;
}

static uint64_t width_mask(kiln_dtype dtype)
{
    unsigned bits = dtype_bits(dtype);
    return bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
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

static test_shape shape_of(uint32_t rank, const int64_t *extents)
{
    test_shape s = {.rank = rank};
    for (uint32_t i = 0; i < rank; i++)
        s.extent[i] = extents[i];
    return s;
}
#define SHAPE(...) shape_of(COUNT_OF(((int64_t[]){__VA_ARGS__})), (int64_t[]){__VA_ARGS__})
#define SCALAR() shape_of(0, NULL)

/* NumPy's rule over any number of shapes. */
static bool broadcast_all(const test_shape *shapes, uint32_t count, test_shape *out)
{
    out->rank = 0;
    for (uint32_t j = 0; j < count; j++)
        if (shapes[j].rank > out->rank)
            out->rank = shapes[j].rank;
    for (uint32_t i = 0; i < out->rank; i++) {
        uint32_t from_right = out->rank - 1 - i;
        int64_t extent = 1;
        for (uint32_t j = 0; j < count; j++) {
            int64_t e = from_right < shapes[j].rank ? shapes[j].extent[shapes[j].rank - 1 - from_right] : 1;
            if (e == 1)
                continue;
            if (extent != 1 && extent != e)
                return false;
            extent = e;
        }
        out->extent[i] = extent;
    }
    return true;
}

static void unravel_index(uint64_t flat, const test_shape *shape, int64_t *index)
{
    for (uint32_t axis = shape->rank; axis-- > 0;) {
        uint64_t extent = (uint64_t)shape->extent[axis];
        index[axis] = (int64_t)(flat % extent);
        flat /= extent;
    }
}

static uint64_t operand_flat_index(const kiln_tensor *operand, const int64_t *out_index, uint32_t out_rank)
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

static uint64_t shape_count(const test_shape *s)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < s->rank; i++)
        n *= (uint64_t)s->extent[i];
    return n;
}

/* ------------------------------------------------ reference semantics */

/* Floored remainder (Python's %), by a different route from the kernel:
 * the truncated remainder moved into the divisor's half-line. */
static double reference_mod_floor_float(double x, double y)
{
    double r = fmod(x, y);
    if (r == 0)
        return copysign(0.0, y);
    if (signbit(r) != signbit(y))
        r += y;
    return r;
}

static int64_t reference_mod_signed(int64_t x, int64_t y, bool floored, unsigned bits)
{
    if (y == -1)
        return 0;
    if (bits < 64 && floored)
        return ((x % y) + y) % y; /* no overflow: |x|, |y| < 2^31 */
    int64_t r = x % y;
    if (floored && r != 0 && ((r ^ y) < 0))
        r += y;
    return r;
}

/* One bit per step, so the width rule falls out of the loop. */
static uint64_t reference_shift(uint64_t x, uint64_t count, bool left, uint64_t mask)
{
    for (uint64_t i = 0; i < count && i <= 64; i++)
        x = left ? (x << 1) & mask : x >> 1;
    return x;
}

static bool truth(kiln_dtype dtype, const void *data, uint64_t index)
{
    return load_bits(dtype, data, index) != 0;
}

/* -1, 0 or 1 for ordered operands; 2 when unordered (a NaN). */
static int reference_order(kiln_dtype dtype, const void *a, uint64_t ia, const void *b, uint64_t ib)
{
    if (is_float_dtype(dtype)) {
        double x = load_float(dtype, a, ia), y = load_float(dtype, b, ib);
        if (isnan(x) || isnan(y))
            return 2;
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (dtype == KILN_BOOL) {
        bool x = truth(dtype, a, ia), y = truth(dtype, b, ib);
        return x == y ? 0 : x ? 1 : -1;
    }
    if (is_signed_dtype(dtype)) {
        int64_t x = load_signed(dtype, a, ia), y = load_signed(dtype, b, ib);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    uint64_t x = load_bits(dtype, a, ia), y = load_bits(dtype, b, ib);
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Does candidate (c) beat the best so far (b) for max (sign 1) or min (-1)? */
static bool reference_beats(kiln_dtype dtype, const void *c, uint64_t ic, const void *b, uint64_t ib, int sign)
{
    if (is_float_dtype(dtype)) {
        double x = load_float(dtype, c, ic), best = load_float(dtype, b, ib);
        if (isnan(best))
            return false;
        if (isnan(x))
            return true;
        if (x == 0 && best == 0)
            return sign > 0 ? (signbit(best) && !signbit(x)) : (!signbit(best) && signbit(x));
    }
    return reference_order(dtype, c, ic, b, ib) == sign;
}

/* Compute output element `out_index` from operand elements at src[j]. */
static void reference_element(const op_case *op, kiln_dtype dtype, const kiln_tensor *const *in, uint32_t count,
                              const uint64_t *src, kiln_dtype out_dtype, void *out, uint64_t out_index)
{
    const void *a = in[0]->data, *b = count > 1 ? in[1]->data : NULL;
    int order;
    switch (op->ref) {
    case R_EQ: case R_NE: case R_LT: case R_LE: case R_GT: case R_GE: {
        order = reference_order(dtype, a, src[0], b, src[1]);
        bool r = op->ref == R_EQ ? order == 0 : op->ref == R_NE ? order != 0
               : op->ref == R_LT ? order == -1 : op->ref == R_LE ? (order == -1 || order == 0)
               : op->ref == R_GT ? order == 1 : (order == 1 || order == 0);
        store_bits(out_dtype, out, out_index, r);
        return;
    }
    case R_AND: case R_OR: case R_XOR: {
        bool x = truth(dtype, a, src[0]), y = truth(dtype, b, src[1]);
        bool r = op->ref == R_AND ? (x && y) : op->ref == R_OR ? (x || y) : (x != y);
        store_bits(out_dtype, out, out_index, r);
        return;
    }
    case R_SHL: case R_SHR:
        store_bits(dtype, out, out_index,
                   reference_shift(load_bits(dtype, a, src[0]), load_bits(dtype, b, src[1]), op->ref == R_SHL,
                                   width_mask(dtype)));
        return;
    case R_WHERE: {
        uint32_t pick = truth(KILN_BOOL, a, src[0]) ? 1 : 2;
        memcpy((unsigned char *)out + out_index * element_width(dtype),
               element_bytes(in[pick]->data, dtype, src[pick]), element_width(dtype));
        return;
    }
    case R_MAX: case R_MIN: {
        uint32_t best = 0;
        for (uint32_t j = 1; j < count; j++)
            if (reference_beats(dtype, in[j]->data, src[j], in[best]->data, src[best], op->ref == R_MAX ? 1 : -1))
                best = j;
        memcpy((unsigned char *)out + out_index * element_width(dtype),
               element_bytes(in[best]->data, dtype, src[best]), element_width(dtype));
        return;
    }
    case R_SUM:
        if (is_float_dtype(dtype)) {
            /* Each partial sum rounded to the dtype, as a chain of adds. */
            double s = load_float(dtype, a, src[0]);
            for (uint32_t j = 1; j < count; j++) {
                s += load_float(dtype, in[j]->data, src[j]);
                if (dtype == KILN_F32)
                    s = (float)s;
            }
            store_float(dtype, out, out_index, s);
        } else {
            uint64_t s = 0;
            for (uint32_t j = 0; j < count; j++)
                s += load_bits(dtype, in[j]->data, src[j]);
            store_bits(dtype, out, out_index, s);
        }
        return;
    case R_MEAN: {
        double s = load_float(dtype, a, src[0]); /* not 0 + ...: keeps a lone -0.0 */
        for (uint32_t j = 1; j < count; j++)
            s += load_float(dtype, in[j]->data, src[j]);
        store_float(dtype, out, out_index, s / count);
        return;
    }
    case R_POW:
        store_float(dtype, out, out_index, pow(load_float(dtype, a, src[0]), load_float(dtype, b, src[1])));
        return;
    case R_MOD_FLOOR: case R_MOD_TRUNC: {
        bool floored = op->ref == R_MOD_FLOOR;
        if (is_float_dtype(dtype)) {
            double x = load_float(dtype, a, src[0]), y = load_float(dtype, b, src[1]);
            store_float(dtype, out, out_index, floored ? reference_mod_floor_float(x, y) : fmod(x, y));
        } else if (is_signed_dtype(dtype)) {
            int64_t r = reference_mod_signed(load_signed(dtype, a, src[0]), load_signed(dtype, b, src[1]), floored,
                                             dtype_bits(dtype));
            store_bits(dtype, out, out_index, (uint64_t)r);
        } else {
            store_bits(dtype, out, out_index, load_bits(dtype, a, src[0]) % load_bits(dtype, b, src[1]));
        }
        return;
    }
    }
}

/* --------------------------------------------------------- test values */

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
    case 6: return single ? FLT_TRUE_MIN : DBL_TRUE_MIN;
    case 7: return single ? FLT_MAX : DBL_MAX;
    case 8: return single ? -FLT_MAX : -DBL_MAX;
    case 9: return 1.0;
    case 10: return -1.0;
    case 11: return 0.5;
    case 12: return 2.0;
    case 13: return -3.0;
    case 14: return 7.0;
    default: return -2.5;
    }
}
#define FLOAT_SPECIAL_COUNT 16

static uint64_t integer_edge_bits(kiln_dtype dtype, uint64_t which)
{
    uint64_t sign_bit = (uint64_t)1 << (dtype_bits(dtype) - 1);
    static const uint64_t plain[] = {0, 1, 2, 3, 7, UINT64_MAX, (uint64_t)0 - 2, (uint64_t)0 - 7};
    if (which < COUNT_OF(plain))
        return plain[which];
    switch (which - COUNT_OF(plain)) {
    case 0: return sign_bit;       /* MIN */
    case 1: return sign_bit + 1;
    default: return sign_bit - 1;  /* MAX */
    }
}
#define INTEGER_EDGE_COUNT 11

static void fill_element(kiln_dtype dtype, void *data, uint64_t index, prng *rng, value_kind kind)
{
    if (kind == VALUES_SHIFT_COUNT) {
        /* Mostly in range, often at and past the width. */
        uint64_t bits = dtype_bits(dtype);
        uint64_t choice = prng_below(rng, 8);
        uint64_t v = choice == 0 ? bits : choice == 1 ? bits + 1 + prng_below(rng, 3)
                   : choice == 2 ? (prng_next(rng) & width_mask(dtype)) : prng_below(rng, bits);
        store_bits(dtype, data, index, v);
        return;
    }
    if (dtype == KILN_BOOL) {
        /* Mostly canonical, sometimes a non-zero byte other than 1. */
        uint64_t choice = prng_below(rng, 8);
        store_bits(dtype, data, index, choice < 3 ? 0 : choice < 7 ? 1 : 2 + prng_below(rng, 250));
        return;
    }
    if (is_float_dtype(dtype)) {
        uint64_t choice = prng_below(rng, 4);
        double v;
        if (choice == 0)
            v = float_special(dtype, prng_below(rng, FLOAT_SPECIAL_COUNT));
        else if (choice == 1)
            v = (double)((int64_t)prng_below(rng, 21) - 10); /* small integers: ties, equal values */
        else
            v = ((double)(prng_next(rng) >> 11) / 9007199254740992.0 - 0.5) * 200.0;
        if (kind == VALUES_NONZERO_DIVISOR && prng_below(rng, 16) == 0)
            v = 0.0; /* float divisors may be zero: NaN, not an error */
        store_float(dtype, data, index, v);
        return;
    }
    uint64_t choice = prng_below(rng, 3);
    uint64_t bits = choice == 0 ? integer_edge_bits(dtype, prng_below(rng, INTEGER_EDGE_COUNT))
                  : choice == 1 ? (uint64_t)((int64_t)prng_below(rng, 21) - 10)
                  : prng_next(rng);
    bits &= width_mask(dtype);
    if (kind == VALUES_NONZERO_DIVISOR && bits == 0)
        bits = 3;
    store_bits(dtype, data, index, bits);
}

/* ------------------------------------------------------- running a case */

typedef struct attribute_holder {
    char name[16];
    char text[16];
    kiln_node_attribute attribute;
    uint32_t count;
} attribute_holder;

static void attributes_for(const op_case *op, attribute_holder *h)
{
    memset(h, 0, sizeof *h);
    if (!op->attribute)
        return;
    snprintf(h->name, sizeof h->name, "%s", op->attribute);
    h->attribute.name = h->name;
    if (op->string_value) {
        snprintf(h->text, sizeof h->text, "%s", op->string_value);
        h->attribute.type = KILN_ATTRIBUTE_STRING;
        h->attribute.s = h->text;
    } else {
        h->attribute.type = KILN_ATTRIBUTE_INT;
        h->attribute.i = op->int_value;
    }
    h->count = 1;
}

static kiln_status run_registry_kernel(const op_case *op, const kiln_tensor *const *inputs, uint32_t count,
                                       kiln_tensor *out, kiln_error *err)
{
    const kiln_op_def *def = kiln_op_find(op->name);
    assert_non_null(def);
    attribute_holder h;
    attributes_for(op, &h);
    kiln_kernel_call call = {inputs, count, out, h.count ? &h.attribute : NULL, h.count, NULL};
    return def->run(&call, err);
}

static void describe(kiln_dtype dtype, const void *data, uint64_t index, char *text, size_t size)
{
    if (is_float_dtype(dtype))
        snprintf(text, size, "%a", load_float(dtype, data, index));
    else
        snprintf(text, size, "0x%llx", (unsigned long long)load_bits(dtype, data, index));
}

/* Distance in units in the last place between two finite floats of the
 * same sign (or both zero). */
static uint64_t ulp_distance_f32(float x, float y)
{
    uint32_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx > by ? bx - by : by - bx;
}

static bool results_agree(const op_case *op, kiln_dtype dtype, const void *got, const void *want, uint64_t i)
{
    if (!is_float_dtype(dtype) || op->bool_output)
        return load_bits(dtype, got, i) == load_bits(dtype, want, i);
    double g = load_float(dtype, got, i), w = load_float(dtype, want, i);
    /* Selections copy bytes, so they match bit for bit (NaN payloads too). */
    if (op->ref == R_WHERE || op->ref == R_MAX || op->ref == R_MIN)
        return load_bits(dtype, got, i) == load_bits(dtype, want, i);
    if (isnan(g) || isnan(w))
        return isnan(g) && isnan(w);
    if (op->ref == R_POW && dtype == KILN_F32 && !isinf(w) && signbit(g) == signbit(w))
        return ulp_distance_f32((float)g, (float)w) <= 1; /* powf need not round correctly */
    return load_bits(dtype, got, i) == load_bits(dtype, want, i);
}

/* Kernel vs reference on given input tensors (already filled). */
static void check_tensors(const op_case *op, kiln_dtype dtype, kiln_tensor *const *inputs, uint32_t count)
{
    test_shape shapes[KILN_MAX_RANK * 8];
    for (uint32_t j = 0; j < count; j++)
        shapes[j] = shape_of(inputs[j]->rank, inputs[j]->shape);
    test_shape out_shape;
    assert_true(broadcast_all(shapes, count, &out_shape));
    kiln_dtype out_dtype = op->bool_output ? KILN_BOOL : dtype;
    kiln_tensor *got = shaped_tensor(out_dtype, &out_shape);
    kiln_tensor *want = shaped_tensor(out_dtype, &out_shape);
    memset(got->data, 0xA5, got->byte_size); /* so unwritten elements show */
    kiln_error err = {0};
    kiln_status status = run_registry_kernel(op, (const kiln_tensor *const *)inputs, count, got, &err);
    if (status != KILN_OK)
        fail_msg("%s (%s): %s", op->name, kiln_dtype_name(dtype), err.message);
    int64_t index[KILN_MAX_RANK];
    uint64_t src[64];
    uint64_t n = shape_count(&out_shape);
    for (uint64_t flat = 0; flat < n; flat++) {
        unravel_index(flat, &out_shape, index);
        for (uint32_t j = 0; j < count; j++)
            src[j] = operand_flat_index(inputs[j], index, out_shape.rank);
        reference_element(op, dtype, (const kiln_tensor *const *)inputs, count, src, out_dtype, want->data, flat);
        if (!results_agree(op, out_dtype, got->data, want->data, flat)) {
            char g[64], w[64], x[64], y[64] = "-";
            describe(out_dtype, got->data, flat, g, sizeof g);
            describe(out_dtype, want->data, flat, w, sizeof w);
            describe(inputs[0]->dtype, inputs[0]->data, src[0], x, sizeof x);
            if (count > 1)
                describe(inputs[1]->dtype, inputs[1]->data, src[1], y, sizeof y);
            fail_msg("%s%s%s (%s) element %llu: got %s, want %s (operands %s, %s)", op->name,
                     op->attribute ? " " : "", op->attribute ? op->attribute : "", kiln_dtype_name(dtype),
                     (unsigned long long)flat, g, w, x, y);
        }
    }
    kiln_tensor_free(got);
    kiln_tensor_free(want);
}

/* Random operands of the given shapes, then kernel vs reference. */
static void check_random(const op_case *op, kiln_dtype dtype, const test_shape *shapes, uint32_t count, prng *rng)
{
    kiln_tensor *inputs[64] = {0};
    for (uint32_t j = 0; j < count; j++) {
        kiln_dtype operand_dtype = op->ref == R_WHERE && j == 0 ? KILN_BOOL : dtype;
        value_kind kind = j == 1 ? op->values : VALUES_ANY;
        inputs[j] = shaped_tensor(operand_dtype, &shapes[j]);
        for (uint64_t i = 0; i < inputs[j]->element_count; i++)
            fill_element(operand_dtype, inputs[j]->data, i, rng, kind);
    }
    check_tensors(op, dtype, inputs, count);
    for (uint32_t j = 0; j < count; j++)
        kiln_tensor_free(inputs[j]);
}

/* ---------------------------------------------------- broadcast patterns */

typedef struct pattern {
    test_shape shape[5];
} pattern;

/* Shapes for up to five operands; binary ops use the first two, where the
 * first three, variadic ops 1, 2 or 5. */
static pattern patterns[16];
static size_t pattern_count;

static void make_patterns(void)
{
    if (pattern_count)
        return;
    pattern p[] = {
        {{SHAPE(2, 3), SHAPE(2, 3), SHAPE(2, 3), SHAPE(2, 3), SHAPE(2, 3)}},               /* same */
        {{SCALAR(), SHAPE(2, 3), SHAPE(3), SCALAR(), SHAPE(2, 1)}},                        /* scalar left */
        {{SHAPE(2, 3), SCALAR(), SCALAR(), SHAPE(1, 3), SCALAR()}},                        /* scalar right */
        {{SHAPE(1, 5), SHAPE(4, 5), SHAPE(4, 1), SHAPE(5), SHAPE(1, 1)}},                   /* row */
        {{SHAPE(4, 1), SHAPE(4, 5), SHAPE(1, 5), SHAPE(4, 5), SCALAR()}},                   /* column */
        {{SHAPE(4, 1), SHAPE(1, 5), SHAPE(5), SHAPE(4, 1), SHAPE(1, 5)}},                   /* outer */
        {{SHAPE(3), SHAPE(2, 4, 3), SHAPE(4, 1), SHAPE(1, 1, 3), SHAPE(2, 1, 1)}},          /* rank mismatch */
        {{SHAPE(2, 1, 3, 1), SHAPE(5, 1, 4), SHAPE(1, 5, 3, 1), SHAPE(4), SCALAR()}},       /* rank 4 */
        {{SCALAR(), SCALAR(), SCALAR(), SCALAR(), SCALAR()}},                              /* rank 0 */
        {{SHAPE(0, 3), SHAPE(1, 3), SHAPE(3), SHAPE(0, 1), SCALAR()}},                      /* zero-size */
        {{SHAPE(2, 0), SCALAR(), SHAPE(1, 0), SHAPE(0), SHAPE(2, 1)}},                      /* zero-size last axis */
        {{SHAPE(7, 33), SHAPE(7, 1), SHAPE(33), SHAPE(1, 33), SHAPE(7, 33)}},               /* longer rows */
    };
    pattern_count = COUNT_OF(p);
    memcpy(patterns, p, sizeof p);
}

static uint32_t operand_counts(const op_case *op, uint32_t *counts)
{
    if (op->arity) {
        counts[0] = op->arity;
        return 1;
    }
    counts[0] = 1;
    counts[1] = 2;
    counts[2] = 5;
    return 3;
}

static void every_op_every_dtype_every_pattern(void **state)
{
    (void)state;
    make_patterns();
    prng rng = {0x9E3779B97F4A7C15ull};
    for (size_t o = 0; o < COUNT_OF(op_cases); o++) {
        const op_case *op = &op_cases[o];
        uint32_t counts[3];
        uint32_t count_variants = operand_counts(op, counts);
        for (size_t d = 0; d < op->dtype_count; d++)
            for (size_t p = 0; p < pattern_count; p++)
                for (uint32_t c = 0; c < count_variants; c++)
                    for (int repeat = 0; repeat < 3; repeat++)
                        check_random(op, op->dtypes[d], patterns[p].shape, counts[c], &rng);
    }
}

/* Random output shapes, each operand a random broadcastable reduction of it. */
static void random_broadcast_shapes(void **state)
{
    (void)state;
    prng rng = {0xD1B54A32D192ED03ull};
    for (int trial = 0; trial < 300; trial++) {
        const op_case *op = &op_cases[prng_below(&rng, COUNT_OF(op_cases))];
        kiln_dtype dtype = op->dtypes[prng_below(&rng, op->dtype_count)];
        uint32_t count = op->arity ? op->arity : 1 + (uint32_t)prng_below(&rng, 7);
        test_shape out = {.rank = (uint32_t)prng_below(&rng, 6)};
        for (uint32_t i = 0; i < out.rank; i++)
            out.extent[i] = 1 + (int64_t)prng_below(&rng, 4);
        test_shape shapes[8];
        for (uint32_t j = 0; j < count; j++) {
            uint32_t drop = out.rank ? (uint32_t)prng_below(&rng, out.rank + 1) : 0;
            shapes[j].rank = out.rank - drop;
            for (uint32_t i = 0; i < shapes[j].rank; i++)
                shapes[j].extent[i] = prng_below(&rng, 3) == 0 ? 1 : out.extent[drop + i];
        }
        check_random(op, dtype, shapes, count, &rng);
    }
}

/* Many operands: the largest count a node may have. */
static void variadic_sixty_four_inputs(void **state)
{
    (void)state;
    prng rng = {42};
    test_shape shapes[64];
    for (uint32_t j = 0; j < 64; j++)
        shapes[j] = j % 3 == 0 ? SHAPE(2, 3) : j % 3 == 1 ? SHAPE(3) : SCALAR();
    for (size_t o = 0; o < COUNT_OF(op_cases); o++)
        if (op_cases[o].arity == 0)
            for (size_t d = 0; d < op_cases[o].dtype_count; d++)
                check_random(&op_cases[o], op_cases[o].dtypes[d], shapes, 64, &rng);
}

/* Every pair of specials (floats) or edges (integers) on every op. */
static void specials_cross_table(void **state)
{
    (void)state;
    for (size_t o = 0; o < COUNT_OF(op_cases); o++) {
        const op_case *op = &op_cases[o];
        for (size_t d = 0; d < op->dtype_count; d++) {
            kiln_dtype dtype = op->dtypes[d];
            uint64_t n = is_float_dtype(dtype) ? FLOAT_SPECIAL_COUNT : dtype == KILN_BOOL ? 3 : INTEGER_EDGE_COUNT;
            if (op->ref == R_SHL || op->ref == R_SHR)
                n = INTEGER_EDGE_COUNT;
            test_shape column = SHAPE((int64_t)n, 1), row = SHAPE((int64_t)n);
            kiln_tensor *x = shaped_tensor(dtype, &column), *y = shaped_tensor(dtype, &row);
            for (uint64_t i = 0; i < n; i++) {
                if (is_float_dtype(dtype)) {
                    store_float(dtype, x->data, i, float_special(dtype, i));
                    store_float(dtype, y->data, i, float_special(dtype, i));
                } else if (dtype == KILN_BOOL) {
                    store_bits(dtype, x->data, i, i); /* 0, 1 and 2 (a non-canonical true) */
                    store_bits(dtype, y->data, i, i);
                } else {
                    store_bits(dtype, x->data, i, integer_edge_bits(dtype, i) & width_mask(dtype));
                    uint64_t yb = integer_edge_bits(dtype, i) & width_mask(dtype);
                    if (op->ref == R_SHL || op->ref == R_SHR)
                        yb = i < 8 ? (uint64_t[]){0, 1, 7, 8, 15, 16, 31, 32}[i] : dtype_bits(dtype) - 1 + (i - 8);
                    if ((op->ref == R_MOD_FLOOR || op->ref == R_MOD_TRUNC) && yb == 0)
                        yb = 1;
                    store_bits(dtype, y->data, i, yb & width_mask(dtype));
                }
            }
            if (op->ref == R_WHERE) {
                test_shape cond_shape = SHAPE(2, 1, 1);
                kiln_tensor *cond = shaped_tensor(KILN_BOOL, &cond_shape);
                store_bits(KILN_BOOL, cond->data, 0, 1);
                kiln_tensor *operands[3] = {cond, x, y};
                check_tensors(op, dtype, operands, 3);
                kiln_tensor_free(cond);
            } else if (op->arity == 0) {
                kiln_tensor *operands[3] = {x, y, x};
                check_tensors(op, dtype, operands, 2);
                check_tensors(op, dtype, operands, 3);
            } else {
                kiln_tensor *operands[2] = {x, y};
                check_tensors(op, dtype, operands, 2);
            }
            kiln_tensor_free(x);
            kiln_tensor_free(y);
        }
    }
}

/* ------------------------------------------------------- known answers */

/* Run op on two one-element operands and return the output tensor. */
static kiln_tensor *run_pair(const op_case *op, kiln_dtype dtype, const void *x, const void *y)
{
    test_shape one = SCALAR();
    kiln_tensor *a = shaped_tensor(dtype, &one), *b = shaped_tensor(dtype, &one);
    memcpy(a->data, x, element_width(dtype));
    memcpy(b->data, y, element_width(dtype));
    kiln_tensor *out = shaped_tensor(op->bool_output ? KILN_BOOL : dtype, &one);
    kiln_error err;
    const kiln_tensor *operands[2] = {a, b};
    assert_int_equal(run_registry_kernel(op, operands, 2, out, &err), KILN_OK);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    return out;
}

static const op_case *find_case(const char *name, reference_op ref, bool with_attribute)
{
    for (size_t i = 0; i < COUNT_OF(op_cases); i++)
        if (strcmp(op_cases[i].name, name) == 0 && op_cases[i].ref == ref &&
            (op_cases[i].attribute != NULL) == with_attribute)
            return &op_cases[i];
    fail_msg("no case %s", name);
    return NULL;
}

static void expect_double(const op_case *op, double x, double y, double want)
{
    kiln_tensor *out = run_pair(op, KILN_F64, &x, &y);
    double got = load_float(KILN_F64, out->data, 0);
    bool same = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
    if (!same)
        fail_msg("%s(%a, %a) = %a, want %a", op->name, x, y, got, want);
    kiln_tensor_free(out);
    float xf = (float)x, yf = (float)y;
    out = run_pair(op, KILN_F32, &xf, &yf);
    float gotf = (float)load_float(KILN_F32, out->data, 0);
    float wantf = (float)want;
    same = isnan(wantf) ? isnan(gotf) : (gotf == wantf && signbit(gotf) == signbit(wantf));
    if (!same)
        fail_msg("%s f32(%a, %a) = %a, want %a", op->name, x, y, (double)gotf, (double)wantf);
    kiln_tensor_free(out);
}

static void pow_known_answers(void **state)
{
    (void)state;
    const op_case *p = find_case("pow", R_POW, false);
    expect_double(p, 2, 10, 1024);
    expect_double(p, 2, -1, 0.5);
    expect_double(p, NAN, 0, 1);          /* x^0 is 1 even for NaN */
    expect_double(p, NAN, -0.0, 1);
    expect_double(p, 1, NAN, 1);          /* 1^y is 1 even for NaN */
    expect_double(p, -1, INFINITY, 1);
    expect_double(p, -8, 1.0 / 3.0, NAN); /* negative base, non-integer exponent */
    expect_double(p, -0.0, -1, -INFINITY);
    expect_double(p, 0.0, -1, INFINITY);
    expect_double(p, -0.0, 3, -0.0);
    expect_double(p, -INFINITY, 3, -INFINITY);
    expect_double(p, -INFINITY, -3, -0.0);
    expect_double(p, 2, INFINITY, INFINITY);
    expect_double(p, 0.5, INFINITY, 0);
    expect_double(p, 2, NAN, NAN);
    expect_double(p, -2, 3, -8);
    /* y = 2 is x * x: the correctly rounded square, special values as pow's. */
    expect_double(p, -3, 2, 9);
    expect_double(p, -0.0, 2, 0.0);
    expect_double(p, -INFINITY, 2, INFINITY);
    expect_double(p, NAN, 2, NAN);
    expect_double(p, 1e200, 2, INFINITY);
    /* A tie in f32: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds to even, 1 + 2^-11. */
    const op_case *square = p;
    float tie = 1.0f + 0x1p-12f, two = 2.0f;
    kiln_tensor *out = run_pair(square, KILN_F32, &tie, &two);
    assert_true(((const float *)out->data)[0] == 1.0f + 0x1p-11f);
    kiln_tensor_free(out);
    /* f32 y = 3 is the cube in double rounded once: exact where the cube is a float, pow's
     * special values, overflow to inf, and within 1 ulp of powf everywhere else. */
    static const float cube_in[] = {3.0f, -2.0f, -0.0f, 0.0f, INFINITY, -INFINITY, NAN, 1e13f, -1e13f, 0x1p-50f,
                                    1.0f + 0x1p-23f};
    static const float cube_want[] = {27.0f, -8.0f, -0.0f, 0.0f, INFINITY, -INFINITY, NAN, INFINITY, -INFINITY, 0.0f,
                                      1.0f + 0x1p-22f + 0x1p-23f};
    float three = 3.0f;
    for (size_t i = 0; i < sizeof cube_in / sizeof cube_in[0]; i++) {
        out = run_pair(p, KILN_F32, &cube_in[i], &three);
        float got = ((const float *)out->data)[0];
        kiln_tensor_free(out);
        if (isnan(cube_want[i])) {
            assert_true(isnan(got));
        } else {
            assert_true(got == cube_want[i] && signbit(got) == signbit(cube_want[i]));
        }
    }
    uint32_t seed = 20261207u;
    for (int i = 0; i < 2000; i++) {
        seed = seed * 1664525u + 1013904223u;
        float x = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 64.0f; /* [-32, 32): gelu's cubes */
        out = run_pair(p, KILN_F32, &x, &three);
        float got = ((const float *)out->data)[0];
        kiln_tensor_free(out);
        float want = powf(x, 3.0f);
        float ulp = fmaxf(fabsf(nextafterf(want, INFINITY) - want), fabsf(nextafterf(want, -INFINITY) - want));
        assert_true(fabsf(got - want) <= ulp);
    }
}

static void mod_float_sign_conventions(void **state)
{
    (void)state;
    const op_case *floor_mod = find_case("mod", R_MOD_FLOOR, false);
    const op_case *floor_explicit = find_case("mod", R_MOD_FLOOR, true);
    const op_case *c_mod = find_case("mod", R_MOD_TRUNC, true);
    for (int k = 0; k < 2; k++) {
        const op_case *py = k ? floor_explicit : floor_mod;
        /* Python's %: the divisor's sign. */
        expect_double(py, 7, 3, 1);
        expect_double(py, -7, 3, 2);
        expect_double(py, 7, -3, -2);
        expect_double(py, -7, -3, -1);
        expect_double(py, 5.5, 2, 1.5);
        expect_double(py, -5.5, 2, 0.5);
        expect_double(py, 6, 3, 0);
        expect_double(py, -6, 3, 0);      /* zero takes the divisor's sign: +0 */
        expect_double(py, 6, -3, -0.0);
        expect_double(py, -0.0, 3, 0);
        expect_double(py, 0.0, -3, -0.0);
        expect_double(py, 5, INFINITY, 5);
        expect_double(py, 5, -INFINITY, -INFINITY);
        expect_double(py, -5, INFINITY, INFINITY);
        expect_double(py, INFINITY, 3, NAN);
        expect_double(py, 3, 0.0, NAN);   /* float zero divisor: NaN, not an error */
        expect_double(py, NAN, 3, NAN);
        expect_double(py, 3, NAN, NAN);
    }
    /* C fmod: the dividend's sign. */
    expect_double(c_mod, 7, 3, 1);
    expect_double(c_mod, -7, 3, -1);
    expect_double(c_mod, 7, -3, 1);
    expect_double(c_mod, -7, -3, -1);
    expect_double(c_mod, -6, 3, -0.0);
    expect_double(c_mod, -0.0, 3, -0.0);
    expect_double(c_mod, 5, -INFINITY, 5);
    expect_double(c_mod, 3, 0.0, NAN);
}

static void expect_integer(const op_case *op, kiln_dtype dtype, int64_t x, int64_t y, int64_t want)
{
    uint64_t xb = (uint64_t)x & width_mask(dtype), yb = (uint64_t)y & width_mask(dtype);
    unsigned char xs[8] = {0}, ys[8] = {0};
    store_bits(dtype, xs, 0, xb);
    store_bits(dtype, ys, 0, yb);
    kiln_tensor *out = run_pair(op, dtype, xs, ys);
    uint64_t got = load_bits(op->bool_output ? KILN_BOOL : dtype, out->data, 0);
    uint64_t expected = (uint64_t)want & width_mask(op->bool_output ? KILN_BOOL : dtype);
    if (got != expected)
        fail_msg("%s %s(%lld, %lld) = 0x%llx, want 0x%llx", op->name, kiln_dtype_name(dtype), (long long)x,
                 (long long)y, (unsigned long long)got, (unsigned long long)expected);
    kiln_tensor_free(out);
}

static void mod_integer_sign_conventions(void **state)
{
    (void)state;
    const op_case *py = find_case("mod", R_MOD_FLOOR, false);
    const op_case *c = find_case("mod", R_MOD_TRUNC, true);
    static const kiln_dtype signed_dtypes[] = {KILN_I8, KILN_I16, KILN_I32, KILN_I64};
    static const int64_t mins[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    static const int64_t maxs[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    for (size_t d = 0; d < COUNT_OF(signed_dtypes); d++) {
        kiln_dtype t = signed_dtypes[d];
        expect_integer(py, t, 7, 3, 1);
        expect_integer(py, t, -7, 3, 2);
        expect_integer(py, t, 7, -3, -2);
        expect_integer(py, t, -7, -3, -1);
        expect_integer(c, t, 7, 3, 1);
        expect_integer(c, t, -7, 3, -1);
        expect_integer(c, t, 7, -3, 1);
        expect_integer(c, t, -7, -3, -1);
        /* MIN % -1 is 0 (undefined behaviour in C, never reached). */
        expect_integer(py, t, mins[d], -1, 0);
        expect_integer(c, t, mins[d], -1, 0);
        expect_integer(py, t, mins[d], 3, (mins[d] % 3 + 3) % 3);
        expect_integer(c, t, mins[d], 3, mins[d] % 3);
        expect_integer(py, t, maxs[d], mins[d], -1);   /* MAX - (MIN + 1)... floored: -1 */
        expect_integer(c, t, maxs[d], mins[d], maxs[d]);
        expect_integer(py, t, -1, mins[d], -1);
        expect_integer(py, t, 1, mins[d], mins[d] + 1);
    }
    for (size_t d = 0; d < COUNT_OF(unsigned_dtypes); d++) {
        kiln_dtype t = unsigned_dtypes[d];
        expect_integer(py, t, 7, 3, 1);
        expect_integer(c, t, 7, 3, 1);
        expect_integer(py, t, -1, 2, 1); /* MAX is odd */
        expect_integer(py, t, -1, -1, 0);
    }
}

static void integer_zero_divisor_is_refused(void **state)
{
    (void)state;
    const op_case *cases[2] = {find_case("mod", R_MOD_FLOOR, false), find_case("mod", R_MOD_TRUNC, true)};
    for (int k = 0; k < 2; k++)
        for (size_t d = 0; d < COUNT_OF(integer_dtypes); d++) {
            kiln_dtype t = integer_dtypes[d];
            test_shape row = SHAPE(3), column = SHAPE(2, 1), empty = SHAPE(0, 3), out_shape = SHAPE(2, 3);
            test_shape zeros_shape = SHAPE(3);
            kiln_tensor *a = shaped_tensor(t, &row), *b = shaped_tensor(t, &column);
            store_bits(t, a->data, 0, 5);
            store_bits(t, b->data, 0, 2); /* b[1] stays 0 */
            kiln_tensor *out = shaped_tensor(t, &out_shape);
            memset(out->data, 0x5A, out->byte_size);
            kiln_error err = {0};
            const kiln_tensor *operands[2] = {a, b};
            assert_int_equal(run_registry_kernel(cases[k], operands, 2, out, &err), KILN_ERR_RUNTIME);
            assert_string_equal(err.message, "mod: integer division by zero");
            for (size_t i = 0; i < out->byte_size; i++) /* nothing computed */
                assert_int_equal(((unsigned char *)out->data)[i], 0x5A);
            kiln_tensor_free(out);
            /* An empty result divides nothing: no error. */
            kiln_tensor *a_empty = shaped_tensor(t, &empty), *zero = shaped_tensor(t, &zeros_shape);
            kiln_tensor *out_empty = shaped_tensor(t, &empty);
            const kiln_tensor *empty_operands[2] = {a_empty, zero};
            assert_int_equal(run_registry_kernel(cases[k], empty_operands, 2, out_empty, &err), KILN_OK);
            kiln_tensor_free(a);
            kiln_tensor_free(b);
            kiln_tensor_free(a_empty);
            kiln_tensor_free(zero);
            kiln_tensor_free(out_empty);
        }
}

static void comparisons_known_answers(void **state)
{
    (void)state;
    const op_case *eq = find_case("eq", R_EQ, false), *ne = find_case("ne", R_NE, false);
    const op_case *lt = find_case("lt", R_LT, false), *le = find_case("le", R_LE, false);
    const op_case *gt = find_case("gt", R_GT, false), *ge = find_case("ge", R_GE, false);
    /* NaN compares unequal to everything, itself included. */
    double nan = NAN;
    const op_case *all[] = {eq, ne, lt, le, gt, ge};
    const int nan_answers[] = {0, 1, 0, 0, 0, 0};
    const int zero_answers[] = {1, 0, 0, 1, 0, 1}; /* -0.0 vs 0.0: equal */
    for (int k = 0; k < 6; k++) {
        kiln_tensor *out = run_pair(all[k], KILN_F64, &nan, &nan);
        assert_int_equal(((uint8_t *)out->data)[0], nan_answers[k]);
        kiln_tensor_free(out);
        double mz = -0.0, pz = 0.0;
        out = run_pair(all[k], KILN_F64, &mz, &pz);
        assert_int_equal(((uint8_t *)out->data)[0], zero_answers[k]);
        kiln_tensor_free(out);
    }
    /* Signed and unsigned orders differ on the same bits. */
    expect_integer(lt, KILN_I32, -1, 1, 1);
    expect_integer(lt, KILN_U32, -1, 1, 0);
    expect_integer(lt, KILN_I64, INT64_MIN, INT64_MAX, 1);
    expect_integer(gt, KILN_U8, 255, 0, 1);
    /* bool compares by truth: 2 is true, equal to 1, and true > false. */
    expect_integer(eq, KILN_BOOL, 2, 1, 1);
    expect_integer(gt, KILN_BOOL, 1, 0, 1);
    expect_integer(ne, KILN_BOOL, 0, 2, 1);
}

static void logical_and_shift_known_answers(void **state)
{
    (void)state;
    const op_case *and_op = find_case("and", R_AND, false), *or_op = find_case("or", R_OR, false);
    const op_case *xor_op = find_case("xor", R_XOR, false);
    expect_integer(and_op, KILN_BOOL, 2, 1, 1); /* outputs are 0 or 1 */
    expect_integer(or_op, KILN_BOOL, 0, 7, 1);
    expect_integer(xor_op, KILN_BOOL, 2, 1, 0);
    expect_integer(xor_op, KILN_BOOL, 0, 1, 1);
    const op_case *left = find_case("bitshift", R_SHL, true), *right = find_case("bitshift", R_SHR, true);
    for (size_t d = 0; d < COUNT_OF(unsigned_dtypes); d++) {
        kiln_dtype t = unsigned_dtypes[d];
        int64_t bits = (int64_t)dtype_bits(t);
        expect_integer(left, t, 1, 0, 1);
        expect_integer(left, t, 1, bits - 1, (int64_t)((uint64_t)1 << (bits - 1)));
        expect_integer(left, t, 1, bits, 0);        /* width or more: 0 */
        expect_integer(left, t, -1, bits + 1, 0);
        expect_integer(left, t, 3, bits - 1, (int64_t)((uint64_t)1 << (bits - 1)));
        expect_integer(right, t, -1, bits - 1, 1);
        expect_integer(right, t, -1, bits, 0);
        expect_integer(right, t, -1, -1, 0);        /* the largest count */
        expect_integer(right, t, 12, 2, 3);
    }
}

static void variadic_known_answers(void **state)
{
    (void)state;
    const op_case *max_op = find_case("max", R_MAX, false), *min_op = find_case("min", R_MIN, false);
    const op_case *sum_op = find_case("sum", R_SUM, false), *mean_op = find_case("mean", R_MEAN, false);
    /* NaN propagates; -0.0 < 0.0 for max and min. */
    expect_double(max_op, 1, NAN, NAN);
    expect_double(max_op, NAN, 1, NAN);
    expect_double(min_op, NAN, -INFINITY, NAN);
    expect_double(max_op, -0.0, 0.0, 0.0);
    expect_double(max_op, 0.0, -0.0, 0.0);
    expect_double(min_op, 0.0, -0.0, -0.0);
    expect_double(min_op, -0.0, 0.0, -0.0);
    expect_double(max_op, -INFINITY, -FLT_MAX, -FLT_MAX);
    expect_double(sum_op, INFINITY, -INFINITY, NAN);
    expect_double(sum_op, -0.0, -0.0, -0.0);
    expect_double(sum_op, -0.0, 0.0, 0.0);
    expect_double(mean_op, 1, 2, 1.5);
    expect_double(mean_op, -0.0, -0.0, -0.0);
    /* Integers: sums wrap, extremes reach MIN and MAX. */
    expect_integer(sum_op, KILN_I8, 127, 1, -128);
    expect_integer(sum_op, KILN_U16, 65535, 2, 1);
    expect_integer(sum_op, KILN_I64, INT64_MAX, 1, INT64_MIN);
    expect_integer(max_op, KILN_I32, INT32_MIN, -1, -1);
    expect_integer(min_op, KILN_U64, -1, 0, 0);
    expect_integer(max_op, KILN_U64, -1, 0, -1);
}

/* f32 mean of large values does not overflow on the way (sum in f64). */
static void mean_of_large_f32_does_not_overflow(void **state)
{
    (void)state;
    const op_case *mean_op = find_case("mean", R_MEAN, false);
    float big = FLT_MAX;
    kiln_tensor *out = run_pair(mean_op, KILN_F32, &big, &big);
    assert_true(((float *)out->data)[0] == FLT_MAX);
    kiln_tensor_free(out);
}

static void kernels_refuse_wrong_dtypes(void **state)
{
    (void)state;
    test_shape one = SCALAR();
    kiln_error err;
    /* pow on integers, and on bool, has no kernel. */
    kiln_tensor *a = shaped_tensor(KILN_I32, &one), *b = shaped_tensor(KILN_I32, &one);
    kiln_tensor *out = shaped_tensor(KILN_I32, &one);
    const kiln_tensor *operands[2] = {a, b};
    assert_int_equal(run_registry_kernel(find_case("pow", R_POW, false), operands, 2, out, &err),
                     KILN_ERR_UNSUPPORTED_DTYPE);
    assert_int_equal(run_registry_kernel(find_case("and", R_AND, false), operands, 2, out, &err),
                     KILN_ERR_UNSUPPORTED_DTYPE);
    kiln_tensor_free(a);
    kiln_tensor_free(b);
    kiln_tensor_free(out);
}

/* --------------------------------------------------------- end to end */

/* Encode, load (re-running every shape rule), open a session. */
static kiln_session *session_from_builder(kiln_builder *b, kiln_program **program)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    if (kiln_program_load_memory(bytes, size, NULL, program, NULL, &err) != KILN_OK)
        fail_msg("load: %s", err.message);
    free(bytes);
    assert_int_equal(kiln_session_new(*program, NULL, &session, &err), KILN_OK);
    return session;
}

static kiln_tensor *tensor_from(kiln_dtype dtype, test_shape shape, const void *data)
{
    kiln_tensor *t = shaped_tensor(dtype, &shape);
    memcpy(t->data, data, t->byte_size);
    return t;
}

typedef struct e2e_case {
    const char *op;
    kiln_attribute attribute; /* name NULL: none */
    uint32_t input_count;
    const char *shapes[5];
    kiln_tensor *values[5];
    kiln_dtype out_dtype;
    const void *expected;
    size_t expected_bytes;
} e2e_case;

/* Build a one-op program over inputs in0.., run it and compare bytes. */
static kiln_status run_end_to_end(const e2e_case *c, kiln_error *err)
{
    kiln_builder *b;
    kiln_value in[5], out;
    assert_int_equal(kiln_builder_new("binary", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, err), KILN_OK);
    for (uint32_t i = 0; i < c->input_count; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%u", i);
        assert_int_equal(kiln_builder_add_input(b, name, kiln_tensor_dtype(c->values[i]), c->shapes[i], &in[i], err),
                         KILN_OK);
    }
    kiln_status status = kiln_builder_add_op_with_attributes(b, c->op, c->input_count, in, c->attribute.name ? 1 : 0,
                                                             &c->attribute, &out, err);
    if (status != KILN_OK)
        fail_msg("%s: %s", c->op, err->message);
    assert_int_equal(kiln_builder_add_output(b, "out", out, err), KILN_OK);
    kiln_program *program;
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    for (uint32_t i = 0; i < c->input_count && status == KILN_OK; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%u", i);
        status = kiln_session_set_input(s, name, c->values[i], err);
    }
    if (status == KILN_OK)
        status = kiln_session_run(s, err);
    if (status == KILN_OK) {
        const kiln_tensor *result = kiln_session_output(s, 0);
        assert_int_equal(kiln_tensor_dtype(result), c->out_dtype);
        assert_int_equal(kiln_tensor_byte_size(result), c->expected_bytes);
        if (memcmp(kiln_tensor_const_data(result), c->expected, c->expected_bytes) != 0)
            fail_msg("%s: end-to-end result differs", c->op);
    }
    kiln_session_free(s);
    kiln_program_free(program);
    for (uint32_t i = 0; i < c->input_count; i++)
        kiln_tensor_free(c->values[i]);
    return status;
}

static void expect_end_to_end(const e2e_case *c)
{
    kiln_error err;
    kiln_status status = run_end_to_end(c, &err);
    if (status != KILN_OK)
        fail_msg("%s: %s", c->op, err.message);
}

#define E2E_BYTES(dtype, ...) (const void *)(dtype[]){__VA_ARGS__}, sizeof((dtype[]){__VA_ARGS__})

static void end_to_end_ops(void **state)
{
    (void)state;
    expect_end_to_end(&(e2e_case){
        "pow", {0}, 2, {"[n, 2]", "[2]"},
        {tensor_from(KILN_F64, SHAPE(2, 2), (double[]){2, 4, 4, 9}), tensor_from(KILN_F64, SHAPE(2), (double[]){3, 0.5})},
        KILN_F64, E2E_BYTES(double, 8, 2, 64, 3)});
    expect_end_to_end(&(e2e_case){
        "mod", {0}, 2, {"[n]", "[]"},
        {tensor_from(KILN_I32, SHAPE(4), (int32_t[]){7, -7, 6, INT32_MIN}), tensor_from(KILN_I32, SCALAR(), (int32_t[]){-3})},
        KILN_I32, E2E_BYTES(int32_t, -2, -1, 0, -2)});
    expect_end_to_end(&(e2e_case){
        "mod", {.name = "fmod", .type = KILN_ATTRIBUTE_INT, .i = 1}, 2, {"[n]", "[]"},
        {tensor_from(KILN_I32, SHAPE(4), (int32_t[]){7, -7, 6, INT32_MIN}), tensor_from(KILN_I32, SCALAR(), (int32_t[]){-3})},
        KILN_I32, E2E_BYTES(int32_t, 1, -1, 0, -2)});
    expect_end_to_end(&(e2e_case){
        "mod", {.name = "fmod", .type = KILN_ATTRIBUTE_INT, .i = 0}, 2, {"[n]", "[n]"},
        {tensor_from(KILN_F32, SHAPE(2), (float[]){-7, 7}), tensor_from(KILN_F32, SHAPE(2), (float[]){3, -3})},
        KILN_F32, E2E_BYTES(float, 2, -2)});
    static const char *const comparisons[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    static const uint8_t answers[6][3] = {{0, 1, 0}, {1, 0, 1}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}, {0, 1, 1}};
    for (int k = 0; k < 6; k++)
        expect_end_to_end(&(e2e_case){
            comparisons[k], {0}, 2, {"[n]", "[1]"},
            {tensor_from(KILN_F32, SHAPE(3), (float[]){1, 2, 3}), tensor_from(KILN_F32, SHAPE(1), (float[]){2})},
            KILN_BOOL, answers[k], 3});
    expect_end_to_end(&(e2e_case){
        "and", {0}, 2, {"[n, 1]", "[2]"},
        {tensor_from(KILN_BOOL, SHAPE(2, 1), (uint8_t[]){0, 1}), tensor_from(KILN_BOOL, SHAPE(2), (uint8_t[]){0, 1})},
        KILN_BOOL, E2E_BYTES(uint8_t, 0, 0, 0, 1)});
    expect_end_to_end(&(e2e_case){
        "or", {0}, 2, {"[n, 1]", "[2]"},
        {tensor_from(KILN_BOOL, SHAPE(2, 1), (uint8_t[]){0, 1}), tensor_from(KILN_BOOL, SHAPE(2), (uint8_t[]){0, 1})},
        KILN_BOOL, E2E_BYTES(uint8_t, 0, 1, 1, 1)});
    expect_end_to_end(&(e2e_case){
        "xor", {0}, 2, {"[n, 1]", "[2]"},
        {tensor_from(KILN_BOOL, SHAPE(2, 1), (uint8_t[]){0, 1}), tensor_from(KILN_BOOL, SHAPE(2), (uint8_t[]){0, 1})},
        KILN_BOOL, E2E_BYTES(uint8_t, 0, 1, 1, 0)});
    expect_end_to_end(&(e2e_case){
        "bitshift", {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = "left"}, 2, {"[n]", "[n]"},
        {tensor_from(KILN_U8, SHAPE(4), (uint8_t[]){1, 3, 255, 1}), tensor_from(KILN_U8, SHAPE(4), (uint8_t[]){1, 7, 8, 200})},
        KILN_U8, E2E_BYTES(uint8_t, 2, 128, 0, 0)});
    expect_end_to_end(&(e2e_case){
        "bitshift", {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = "right"}, 2, {"[n]", "[]"},
        {tensor_from(KILN_U64, SHAPE(2), (uint64_t[]){UINT64_MAX, 8}), tensor_from(KILN_U64, SCALAR(), (uint64_t[]){63})},
        KILN_U64, E2E_BYTES(uint64_t, 1, 0)});
    expect_end_to_end(&(e2e_case){
        "where", {0}, 3, {"[n, 1]", "[3]", "[]"},
        {tensor_from(KILN_BOOL, SHAPE(2, 1), (uint8_t[]){1, 0}), tensor_from(KILN_I16, SHAPE(3), (int16_t[]){1, 2, 3}),
         tensor_from(KILN_I16, SCALAR(), (int16_t[]){-9})},
        KILN_I16, E2E_BYTES(int16_t, 1, 2, 3, -9, -9, -9)});
    expect_end_to_end(&(e2e_case){
        "max", {0}, 5, {"[n]", "[]", "[1]", "[n]", "[n]"},
        {tensor_from(KILN_I64, SHAPE(2), (int64_t[]){1, 9}), tensor_from(KILN_I64, SCALAR(), (int64_t[]){4}),
         tensor_from(KILN_I64, SHAPE(1), (int64_t[]){-3}), tensor_from(KILN_I64, SHAPE(2), (int64_t[]){0, 0}),
         tensor_from(KILN_I64, SHAPE(2), (int64_t[]){2, 10})},
        KILN_I64, E2E_BYTES(int64_t, 4, 10)});
    expect_end_to_end(&(e2e_case){
        "min", {0}, 2, {"[n]", "[]"},
        {tensor_from(KILN_F64, SHAPE(3), (double[]){1, -0.0, 5}), tensor_from(KILN_F64, SCALAR(), (double[]){0.0})},
        KILN_F64, E2E_BYTES(double, 0.0, -0.0, 0.0)});
    expect_end_to_end(&(e2e_case){
        "sum", {0}, 1, {"[n]"}, {tensor_from(KILN_U8, SHAPE(2), (uint8_t[]){200, 7})}, KILN_U8, E2E_BYTES(uint8_t, 200, 7)});
    expect_end_to_end(&(e2e_case){
        "sum", {0}, 3, {"[n]", "[n]", "[]"},
        {tensor_from(KILN_U8, SHAPE(2), (uint8_t[]){200, 7}), tensor_from(KILN_U8, SHAPE(2), (uint8_t[]){100, 1}),
         tensor_from(KILN_U8, SCALAR(), (uint8_t[]){1})},
        KILN_U8, E2E_BYTES(uint8_t, 45, 9)});
    expect_end_to_end(&(e2e_case){
        "mean", {0}, 2, {"[n]", "[1]"},
        {tensor_from(KILN_F32, SHAPE(2), (float[]){1, 2}), tensor_from(KILN_F32, SHAPE(1), (float[]){4})},
        KILN_F32, E2E_BYTES(float, 2.5f, 3)});
}

static void end_to_end_mod_zero_divisor(void **state)
{
    (void)state;
    kiln_error err;
    kiln_status status = run_end_to_end(
        &(e2e_case){"mod", {0}, 2, {"[n]", "[n]"},
                    {tensor_from(KILN_I32, SHAPE(2), (int32_t[]){1, 2}), tensor_from(KILN_I32, SHAPE(2), (int32_t[]){1, 0})},
                    KILN_I32, NULL, 0},
        &err);
    assert_int_equal(status, KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "node 0 (mod): mod: integer division by zero"));
}

/* ------------------------------------------------------------ refusals */

/* Try to add `op` over inputs of the given dtypes and shapes; return the status. */
static kiln_status try_build(const char *op, uint32_t count, const kiln_dtype *dtypes, const char *const *shapes,
                             uint32_t attribute_count, const kiln_attribute *attributes, kiln_error *err)
{
    kiln_builder *b;
    kiln_value in[70], out;
    assert_int_equal(kiln_builder_new("refuse", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "p", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "q", 1, 4, err), KILN_OK);
    for (uint32_t i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%u", i);
        assert_int_equal(kiln_builder_add_input(b, name, dtypes[i], shapes[i], &in[i], err), KILN_OK);
    }
    kiln_status status = kiln_builder_add_op_with_attributes(b, op, count, in, attribute_count, attributes, &out, err);
    kiln_builder_free(b);
    return status;
}

static void expect_refusal(const char *op, uint32_t count, const kiln_dtype *dtypes, const char *const *shapes,
                           uint32_t attribute_count, const kiln_attribute *attributes, const char *const *fragments)
{
    kiln_error err = {0};
    kiln_status status = try_build(op, count, dtypes, shapes, attribute_count, attributes, &err);
    if (status != KILN_ERR_INVALID_PROGRAM)
        fail_msg("%s: expected a refusal, got status %d (%s)", op, (int)status, err.message);
    for (const char *const *f = fragments; *f; f++)
        if (!strstr(err.message, *f))
            fail_msg("%s: message '%s' lacks '%s'", op, err.message, *f);
}

#define DT(...) ((const kiln_dtype[]){__VA_ARGS__})
#define SH(...) ((const char *const[]){__VA_ARGS__})
#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void refuses_dtype_mismatch(void **state)
{
    (void)state;
    expect_refusal("eq", 2, DT(KILN_F32, KILN_F64), SH("[2]", "[2]"), 0, NULL,
                   WANT("node 0 (eq)", "'eq'", "f32", "f64", "promote"));
    expect_refusal("pow", 2, DT(KILN_F64, KILN_F32), SH("[2]", "[2]"), 0, NULL, WANT("node 0 (pow)", "f64", "f32"));
    expect_refusal("sum", 3, DT(KILN_I32, KILN_I32, KILN_I64), SH("[2]", "[2]", "[2]"), 0, NULL,
                   WANT("node 0 (sum)", "input 2 is i64"));
    expect_refusal("where", 3, DT(KILN_BOOL, KILN_F32, KILN_F64), SH("[2]", "[2]", "[2]"), 0, NULL,
                   WANT("node 0 (where)", "f32", "f64"));
    expect_refusal("where", 3, DT(KILN_U8, KILN_F32, KILN_F32), SH("[2]", "[2]", "[2]"), 0, NULL,
                   WANT("node 0 (where)", "condition", "must be bool", "u8"));
}

static void refuses_dtypes_the_op_does_not_take(void **state)
{
    (void)state;
    const kiln_attribute left = {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = "left"};
    expect_refusal("mod", 2, DT(KILN_BOOL, KILN_BOOL), SH("[2]", "[2]"), 0, NULL,
                   WANT("node 0 (mod)", "'mod'", "does not take dtype bool"));
    expect_refusal("max", 2, DT(KILN_BOOL, KILN_BOOL), SH("[2]", "[2]"), 0, NULL, WANT("dtype bool"));
    expect_refusal("sum", 1, DT(KILN_BOOL), SH("[2]"), 0, NULL, WANT("dtype bool"));
    expect_refusal("pow", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 0, NULL,
                   WANT("dtype i32", "f32, f64, f16 or bf16"));
    expect_refusal("mean", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 0, NULL, WANT("dtype i32"));
    expect_refusal("and", 2, DT(KILN_U8, KILN_U8), SH("[2]", "[2]"), 0, NULL, WANT("'and'", "dtype u8"));
    expect_refusal("bitshift", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 1, &left, WANT("dtype i32", "unsigned"));
    expect_refusal("bitshift", 2, DT(KILN_BOOL, KILN_BOOL), SH("[2]", "[2]"), 1, &left, WANT("dtype bool"));
}

static void refuses_unprovable_broadcast(void **state)
{
    (void)state;
    expect_refusal("eq", 2, DT(KILN_F32, KILN_F32), SH("[p]", "[q]"), 0, NULL,
                   WANT("node 0 (eq)", "output axis 0", "counterexample"));
    expect_refusal("max", 5, DT(KILN_F32, KILN_F32, KILN_F32, KILN_F32, KILN_F32),
                   SH("[p]", "[1]", "[]", "[p]", "[q]"), 0, NULL, WANT("node 0 (max)", "counterexample"));
    expect_refusal("where", 3, DT(KILN_BOOL, KILN_I8, KILN_I8), SH("[p, 1]", "[3]", "[q, 3]"), 0, NULL,
                   WANT("node 0 (where)", "counterexample"));
    expect_refusal("mod", 2, DT(KILN_I32, KILN_I32), SH("[p, 2]", "[3]"), 0, NULL, WANT("do not broadcast"));
    /* The same dim, 1 and missing axes are proved. */
    kiln_error err;
    assert_int_equal(try_build("where", 3, DT(KILN_BOOL, KILN_I8, KILN_I8), SH("[p, 1]", "[3]", "[p, 3]"), 0, NULL,
                               &err),
                     KILN_OK);
    assert_int_equal(try_build("sum", 3, DT(KILN_F64, KILN_F64, KILN_F64), SH("[p, q]", "[q]", "[p, 1]"), 0, NULL,
                               &err),
                     KILN_OK);
}

static void refuses_bad_attributes(void **state)
{
    (void)state;
    /* bitshift: direction is required, a string, "left" or "right". */
    expect_refusal("bitshift", 2, DT(KILN_U8, KILN_U8), SH("[2]", "[2]"), 0, NULL,
                   WANT("node 0 (bitshift)", "needs attribute 'direction'"));
    const kiln_attribute up = {.name = "direction", .type = KILN_ATTRIBUTE_STRING, .s = "up"};
    expect_refusal("bitshift", 2, DT(KILN_U8, KILN_U8), SH("[2]", "[2]"), 1, &up,
                   WANT("node 0 (bitshift)", "\"left\" or \"right\"", "\"up\""));
    const kiln_attribute as_int = {.name = "direction", .type = KILN_ATTRIBUTE_INT, .i = 1};
    expect_refusal("bitshift", 2, DT(KILN_U8, KILN_U8), SH("[2]", "[2]"), 1, &as_int, WANT("wrong type"));
    /* mod: fmod is 0 or 1. */
    const kiln_attribute two = {.name = "fmod", .type = KILN_ATTRIBUTE_INT, .i = 2};
    expect_refusal("mod", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 1, &two,
                   WANT("node 0 (mod)", "'fmod'", "got 2"));
    const kiln_attribute minus = {.name = "fmod", .type = KILN_ATTRIBUTE_INT, .i = -1};
    expect_refusal("mod", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 1, &minus, WANT("got -1"));
    const kiln_attribute as_float = {.name = "fmod", .type = KILN_ATTRIBUTE_FLOAT, .f = 1};
    expect_refusal("mod", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 1, &as_float, WANT("wrong type"));
    /* Ops without attributes take none. */
    const kiln_attribute stray = {.name = "fmod", .type = KILN_ATTRIBUTE_INT, .i = 0};
    expect_refusal("eq", 2, DT(KILN_I32, KILN_I32), SH("[2]", "[2]"), 1, &stray, WANT("takes no attribute 'fmod'"));
}

static void refuses_wrong_input_counts(void **state)
{
    (void)state;
    kiln_dtype dtypes[65];
    const char *shapes[65];
    for (int i = 0; i < 65; i++) {
        dtypes[i] = KILN_F32;
        shapes[i] = "[2]";
    }
    kiln_error err;
    assert_int_equal(try_build("max", 0, dtypes, shapes, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("sum", 64, dtypes, shapes, 0, NULL, &err), KILN_OK);
    assert_int_equal(try_build("sum", 65, dtypes, shapes, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("where", 2, DT(KILN_BOOL, KILN_F32), SH("[2]", "[2]"), 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(try_build("pow", 3, dtypes, shapes, 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
}

/* ------------------------------------------------------------ registry */

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"pow", "mod", "eq", "ne", "lt", "le", "gt", "ge", "and",
                                        "or", "xor", "bitshift", "where", "max", "min", "sum", "mean"};
    assert_family_registered(&kiln_ops_binary, names, COUNT_OF(names));
    assert_int_equal(kiln_ops_binary.count, COUNT_OF(names));
    for (size_t i = 0; i < COUNT_OF(names); i++)
        assert_null(kiln_op_find_version(names[i], 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(every_op_every_dtype_every_pattern),
        cmocka_unit_test(random_broadcast_shapes),
        cmocka_unit_test(variadic_sixty_four_inputs),
        cmocka_unit_test(specials_cross_table),
        cmocka_unit_test(pow_known_answers),
        cmocka_unit_test(mod_float_sign_conventions),
        cmocka_unit_test(mod_integer_sign_conventions),
        cmocka_unit_test(integer_zero_divisor_is_refused),
        cmocka_unit_test(comparisons_known_answers),
        cmocka_unit_test(logical_and_shift_known_answers),
        cmocka_unit_test(variadic_known_answers),
        cmocka_unit_test(mean_of_large_f32_does_not_overflow),
        cmocka_unit_test(kernels_refuse_wrong_dtypes),
        cmocka_unit_test(end_to_end_ops),
        cmocka_unit_test(end_to_end_mod_zero_divisor),
        cmocka_unit_test(refuses_dtype_mismatch),
        cmocka_unit_test(refuses_dtypes_the_op_does_not_take),
        cmocka_unit_test(refuses_unprovable_broadcast),
        cmocka_unit_test(refuses_bad_attributes),
        cmocka_unit_test(refuses_wrong_input_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
