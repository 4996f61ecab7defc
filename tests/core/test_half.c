/*
 * test_half.c — f16 and bf16 conversions (lib/core/half.c) against references
 * written differently: values decoded with ldexpl from the field layout, and
 * narrowing by searching the sorted table of every representable value for
 * the nearest one (ties to the even pattern), comparing in long double.
 * Widening and round trips are checked for all 65536 patterns of each type.
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

#include "half.h"

/* ----------------------------------------------------------------- helpers */

static uint32_t bits_of(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float float_of(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* The value of an IEEE-style pattern with `fraction_bits` and `exponent_bits`, from its fields. */
static long double reference_value(uint32_t pattern, unsigned exponent_bits, unsigned fraction_bits)
{
    uint32_t fraction = pattern & ((1u << fraction_bits) - 1);
    uint32_t exponent = (pattern >> fraction_bits) & ((1u << exponent_bits) - 1);
    int bias = (1 << (exponent_bits - 1)) - 1;
    bool negative = (pattern >> (fraction_bits + exponent_bits)) & 1;
    long double magnitude;
    if (exponent == (1u << exponent_bits) - 1)
        magnitude = fraction ? NAN : INFINITY;
    else if (exponent == 0)
        magnitude = ldexpl((long double)fraction, 1 - bias - (int)fraction_bits);
    else
        magnitude = ldexpl((long double)((1u << fraction_bits) + fraction), (int)exponent - bias - (int)fraction_bits);
    return negative ? -magnitude : magnitude;
}

static long double f16_value(uint16_t h)
{
    return reference_value(h, 5, 10);
}

static long double bf16_value(uint16_t b)
{
    return reference_value(b, 8, 7);
}

/*
 * The non-negative values of a 16-bit type in pattern order (which is value
 * order), up to and including the infinity pattern, which stands for the
 * first power of two past the largest finite value: IEEE 754 rounds as if
 * the exponent were unbounded and overflows to infinity what rounds there.
 */
typedef struct value_table {
    long double *values;
    uint32_t infinity; /* pattern of +infinity: the last index */
} value_table;

static value_table make_table(long double (*value)(uint16_t), uint32_t infinity, long double past_largest)
{
    value_table t = {calloc(infinity + 1, sizeof(long double)), infinity};
    assert_non_null(t.values);
    for (uint32_t i = 0; i < infinity; i++)
        t.values[i] = value((uint16_t)i);
    t.values[infinity] = past_largest;
    for (uint32_t i = 0; i < infinity; i++)
        assert_true(t.values[i] < t.values[i + 1]);
    return t;
}

/* Nearest pattern to the finite or infinite, non-NaN `x`, ties to the even pattern. */
static uint16_t reference_round(const value_table *t, float x)
{
    long double a = fabsl((long double)x);
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (a >= t->values[t->infinity])
        return (uint16_t)(sign | t->infinity);
    uint32_t lo = 0, hi = t->infinity; /* values[lo] <= a < values[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->values[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    /* The midpoint of two neighbours needs one bit more than they do: exact in long double. */
    long double midpoint = (t->values[lo] + t->values[hi]) / 2;
    uint32_t nearest;
    if (a < midpoint)
        nearest = lo;
    else if (a > midpoint)
        nearest = hi;
    else
        nearest = (lo % 2 == 0) ? lo : hi;
    return (uint16_t)(sign | nearest);
}

/*
 * Narrowing inputs: a stride through every f32 pattern, and around every
 * midpoint between neighbouring values of the table (the ties and the
 * values one f32 ulp either side of them), both signs.
 */
static size_t narrowing_inputs(const value_table *t, float **out)
{
    size_t cap = (UINT64_C(1) << 32) / 4093 + 1 + 6 * (size_t)t->infinity + 16;
    float *in = malloc(cap * sizeof *in);
    assert_non_null(in);
    size_t n = 0;
    for (uint64_t bits = 0; bits < (UINT64_C(1) << 32); bits += 4093) {
        float x = float_of((uint32_t)bits);
        if (!isnan(x))
            in[n++] = x;
    }
    for (uint32_t i = 0; i < t->infinity; i++) {
        float midpoint = (float)((t->values[i] + t->values[i + 1]) / 2);
        assert_true((long double)midpoint == (t->values[i] + t->values[i + 1]) / 2);
        float around[3] = {midpoint, nextafterf(midpoint, 0.0f), nextafterf(midpoint, INFINITY)};
        for (int k = 0; k < 3; k++) {
            in[n++] = around[k];
            in[n++] = -around[k];
        }
    }
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, FLT_TRUE_MIN,
                             -FLT_TRUE_MIN, 1.0f, 65504.0f, 65520.0f, 65536.0f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        in[n++] = special[i];
    assert_true(n <= cap);
    *out = in;
    return n;
}

static bool is_f16_nan(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

static bool is_bf16_nan(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
}

/* ------------------------------------------------------------------- tests */

static void every_f16_widens_to_its_value(void **state)
{
    (void)state;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float got = kiln_f16_to_f32((uint16_t)h);
        long double want = f16_value((uint16_t)h);
        if (isnan(want)) {
            if (!isnan(got) || !signbit(got) != !signbit(want) || ((bits_of(got) >> 13) & 0x3ff) != (h & 0x3ff))
                fail_msg("f16 0x%04x: NaN widened to f32 bits 0x%08x", h, bits_of(got));
        } else if ((long double)got != want || !signbit(got) != !signbit(want)) {
            fail_msg("f16 0x%04x: widened to %.9g, expected %.9Lg", h, (double)got, want);
        }
    }
}

static void every_bf16_widens_to_its_value(void **state)
{
    (void)state;
    for (uint32_t b = 0; b <= 0xffff; b++) {
        float got = kiln_bf16_to_f32((uint16_t)b);
        long double want = bf16_value((uint16_t)b);
        if (isnan(want)) {
            if (!isnan(got) || bits_of(got) != b << 16)
                fail_msg("bf16 0x%04x: NaN widened to f32 bits 0x%08x", b, bits_of(got));
        } else if ((long double)got != want || !signbit(got) != !signbit(want)) {
            fail_msg("bf16 0x%04x: widened to %.9g, expected %.9Lg", b, (double)got, want);
        }
    }
}

/* Every pattern survives widening and narrowing; a NaN comes back quiet with its sign and payload. */
static void every_pattern_round_trips(void **state)
{
    (void)state;
    for (uint32_t p = 0; p <= 0xffff; p++) {
        uint16_t h = (uint16_t)p;
        uint16_t want = is_f16_nan(h) ? (uint16_t)(h | 0x200) : h;
        uint16_t got = kiln_f32_to_f16(kiln_f16_to_f32(h));
        if (got != want)
            fail_msg("f16 0x%04x: round trip gave 0x%04x, expected 0x%04x", h, got, want);
        want = is_bf16_nan(h) ? (uint16_t)(h | 0x40) : h;
        got = kiln_f32_to_bf16(kiln_bf16_to_f32(h));
        if (got != want)
            fail_msg("bf16 0x%04x: round trip gave 0x%04x, expected 0x%04x", h, got, want);
    }
}

static void f32_narrows_to_the_nearest_f16(void **state)
{
    (void)state;
    value_table t = make_table(f16_value, 0x7c00, 65536.0L);
    float *in;
    size_t n = narrowing_inputs(&t, &in);
    for (size_t i = 0; i < n; i++) {
        uint16_t got = kiln_f32_to_f16(in[i]);
        uint16_t want = reference_round(&t, in[i]);
        if (got != want)
            fail_msg("f32 %a (0x%08x): narrowed to f16 0x%04x, expected 0x%04x", (double)in[i], bits_of(in[i]), got,
                     want);
    }
    free(in);
    free(t.values);
}

static void f32_narrows_to_the_nearest_bf16(void **state)
{
    (void)state;
    value_table t = make_table(bf16_value, 0x7f80, ldexpl(1.0L, 128));
    float *in;
    size_t n = narrowing_inputs(&t, &in);
    for (size_t i = 0; i < n; i++) {
        uint16_t got = kiln_f32_to_bf16(in[i]);
        uint16_t want = reference_round(&t, in[i]);
        if (got != want)
            fail_msg("f32 %a (0x%08x): narrowed to bf16 0x%04x, expected 0x%04x", (double)in[i], bits_of(in[i]),
                     got, want);
    }
    free(in);
    free(t.values);
}

/* Known answers a reader can check by hand. */
static void narrowing_edges(void **state)
{
    (void)state;
    assert_int_equal(kiln_f32_to_f16(65504.0f), 0x7bff);            /* largest finite f16 */
    assert_int_equal(kiln_f32_to_f16(65519.996f), 0x7bff);          /* just under the tie */
    assert_int_equal(kiln_f32_to_f16(65520.0f), 0x7c00);            /* the tie overflows (65504 is odd) */
    assert_int_equal(kiln_f32_to_f16(-1e10f), 0xfc00);              /* overflow keeps the sign */
    assert_int_equal(kiln_f32_to_f16(0x1p-24f), 0x0001);            /* smallest subnormal */
    assert_int_equal(kiln_f32_to_f16(0x1p-25f), 0x0000);            /* tie between 0 and it: to 0 */
    assert_int_equal(kiln_f32_to_f16(0x1.000002p-25f), 0x0001);     /* just past the tie */
    assert_int_equal(kiln_f32_to_f16(-0x1p-26f), 0x8000);           /* underflow keeps the sign */
    /* the tie above the largest subnormal (odd mantissa) goes up, into the normals */
    assert_int_equal(kiln_f32_to_f16(0x1.ffcp-15f), 0x0400);
    assert_int_equal(kiln_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);     /* tie to even: down */
    assert_int_equal(kiln_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie to even: up */
    assert_int_equal(kiln_f32_to_bf16(FLT_MAX), 0x7f80);            /* overflow to infinity */
    assert_int_equal(kiln_f32_to_bf16(float_of(0x7f7f7fff)), 0x7f7f);
    assert_int_equal(kiln_f32_to_bf16(float_of(0x3f808000)), 0x3f80); /* tie to even: down */
    assert_int_equal(kiln_f32_to_bf16(float_of(0x3f818000)), 0x3f82); /* tie to even: up */
    assert_int_equal(kiln_f32_to_bf16(FLT_TRUE_MIN), 0x0000);
    assert_int_equal(kiln_f32_to_bf16(-INFINITY), 0xff80);
}

/* A NaN narrows to a NaN of the same sign whatever its payload, even one that lies only in dropped bits. */
static void nan_stays_nan(void **state)
{
    (void)state;
    const uint32_t payloads[] = {0x1, 0x2, 0xfff, 0x1000, 0x1fff, 0x2000, 0xffff, 0x10000, 0x200000, 0x3fffff, 0x400000,
                                 0x400001, 0x7fffff, 0x555555, 0x2aaaaa};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        for (uint32_t sign = 0; sign <= 1; sign++) {
            uint32_t bits = (sign << 31) | UINT32_C(0x7f800000) | payloads[i];
            uint16_t h = kiln_f32_to_f16(float_of(bits));
            uint16_t b = kiln_f32_to_bf16(float_of(bits));
            if (!is_f16_nan(h) || (h >> 15) != sign || (h & 0x1ff) != ((bits >> 13) & 0x1ff))
                fail_msg("f32 NaN 0x%08x: narrowed to f16 0x%04x", bits, h);
            if (!is_bf16_nan(b) || (b >> 15) != sign || (b & 0x3f) != ((bits >> 16) & 0x3f))
                fail_msg("f32 NaN 0x%08x: narrowed to bf16 0x%04x", bits, b);
        }
    }
}

/* The array forms agree with the scalar ones, element by element. */
static void arrays_match_scalars(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint16_t *patterns = malloc(N * sizeof *patterns);
    uint16_t *narrowed = malloc(N * sizeof *narrowed);
    float *wide = malloc(N * sizeof *wide);
    assert_true(patterns && narrowed && wide);
    for (uint32_t i = 0; i < N; i++)
        patterns[i] = (uint16_t)i;
    kiln_f16_to_f32_array(patterns, wide, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(bits_of(wide[i]), bits_of(kiln_f16_to_f32(patterns[i])));
    kiln_f32_to_f16_array(wide, narrowed, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(narrowed[i], kiln_f32_to_f16(wide[i]));
    kiln_bf16_to_f32_array(patterns, wide, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(bits_of(wide[i]), bits_of(kiln_bf16_to_f32(patterns[i])));
    for (uint32_t i = 0; i < N; i++)
        wide[i] = float_of(i * UINT32_C(65537) + 12345u); /* low halves that are not zero */
    kiln_f32_to_bf16_array(wide, narrowed, N);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(narrowed[i], kiln_f32_to_bf16(wide[i]));
    kiln_f16_to_f32_array(patterns, wide, 0); /* an empty array touches nothing */
    free(patterns);
    free(narrowed);
    free(wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_f16_widens_to_its_value),
        cmocka_unit_test(every_bf16_widens_to_its_value),
        cmocka_unit_test(every_pattern_round_trips),
        cmocka_unit_test(f32_narrows_to_the_nearest_f16),
        cmocka_unit_test(f32_narrows_to_the_nearest_bf16),
        cmocka_unit_test(narrowing_edges),
        cmocka_unit_test(nan_stays_nan),
        cmocka_unit_test(arrays_match_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
