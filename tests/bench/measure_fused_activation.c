/*
 * measure_fused_activation.c — how far oneDNN's swish and hardswish
 * post-ops (a conv fused with the silu or hard_swish after it,
 * lib/plan/fusion.h) are from kiln's reference silu and hard_swish: the
 * measurement behind the bounds spec/opset.md states for them.
 *
 * The conv is the identity, so that its result is x exactly and the only
 * difference left is the activation's: weight 1 on the centre tap of a
 * channel's own input, 0 elsewhere, bias 0 (a sum of x and zeros is x,
 * but for the sign of a zero). Each shape takes the primitive oneDNN
 * runs for it: `dense` a 3x3 conv of 16 channels, `depthwise` a 3x3 conv
 * of 16 groups, `channels-last` a 1x1 conv reading the channels-last
 * result of an identity 3x3 conv before it (pointwise convs of a
 * row-major x are not fused). x runs through every f32 of [-100, 100]
 * (both signs, zeros and subnormals included), in chunks of 2^24, then
 * through every 64th f32 from 100 to FLT_MAX / 4 (the largest |x| a
 * conv of these weights fuses for) of both signs. Each result is compared
 * with unary_silu(x) (or unary_hard_swish(x)) in double, rounded to f32,
 * the reference kernel's value; the run fails should a chunk not fuse.
 *
 * Reported per range of x: the largest distance in ulp (the count of f32
 * values between the two, +0 and -0 one value) and where, the largest
 * |difference|, and the largest x whose result is a zero where the
 * reference's is not (oneDNN's exp gives 0 below about -87).
 *
 * Usage: measure_fused_activation silu|hard_swish dense|depthwise|channels-last [--quick]
 * (--quick: one chunk in 256, for a smoke run). Run by hand: it takes
 * minutes per shape.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "onednn.h"
#include "unary_math.h"

enum { CHANNELS = 16, SIDE = 1024, CHUNK = CHANNELS * SIDE * SIDE };

/* Every call site has a `kiln_error err` in scope; a failure ends the program. */
#define CHECK(call)                                                   \
    do {                                                              \
        if ((call) != KILN_OK) {                                      \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, err.message); \
            exit(1);                                                  \
        }                                                             \
    } while (0)

typedef enum shape { DENSE, DEPTHWISE, CHANNELS_LAST } shape;

/* The activation measured: "silu" or "hard_swish". */
static bool hard_swish;

/* An identity conv of x, `kernel` x `kernel`, grouped or not. */
static kiln_value identity_conv(kiln_builder *b, kiln_value x, int64_t kernel, bool grouped, const char *name)
{
    kiln_error err;
    static float weight[CHANNELS * CHANNELS * 9], bias[CHANNELS];
    int64_t inputs = grouped ? 1 : CHANNELS, taps = kernel * kernel;
    memset(weight, 0, sizeof weight);
    for (int64_t m = 0; m < CHANNELS; m++)
        weight[(m * inputs + (grouped ? 0 : m)) * taps + taps / 2] = 1.0f;
    const int64_t weight_shape[] = {CHANNELS, inputs, kernel, kernel}, bias_shape[] = {CHANNELS};
    const int64_t pads[] = {kernel / 2, kernel / 2, kernel / 2, kernel / 2};
    char weight_name[32], bias_name[32];
    snprintf(weight_name, sizeof weight_name, "%s_w", name);
    snprintf(bias_name, sizeof bias_name, "%s_b", name);
    kiln_value operands[3] = {x}, y;
    CHECK(kiln_builder_add_weight(b, weight_name, KILN_WEIGHT_PARAMETER, KILN_F32, 4, weight_shape, weight,
                                  &operands[1], &err));
    CHECK(kiln_builder_add_weight(b, bias_name, KILN_WEIGHT_PARAMETER, KILN_F32, 1, bias_shape, bias, &operands[2],
                                  &err));
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
                                   {.name = "group", .type = KILN_ATTRIBUTE_INT, .i = grouped ? CHANNELS : 1}};
    CHECK(kiln_builder_add_op_with_attributes(b, "conv", 3, operands, 2, attributes, &y, &err));
    return y;
}

static kiln_program *make_program(shape s)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    char x_shape[64];
    snprintf(x_shape, sizeof x_shape, "[1, %d, %d, %d]", CHANNELS, SIDE, SIDE);
    CHECK(kiln_builder_new("fused_activation", &b, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, x_shape, &x, &err));
    if (s == CHANNELS_LAST)
        x = identity_conv(b, x, 3, false, "before");
    y = identity_conv(b, x, s == CHANNELS_LAST ? 1 : 3, s == DEPTHWISE, "conv");
    CHECK(kiln_builder_add_op(b, hard_swish ? "hard_swish" : "silu", 1, &y, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    void *bytes;
    size_t size;
    kiln_program *program;
    CHECK(kiln_builder_encode(b, NULL, &bytes, &size, &err));
    kiln_builder_free(b);
    CHECK(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err));
    free(bytes);
    return program;
}

/* f32 values in an order where neighbours differ by 1, +0 and -0 both 0. */
static int64_t ordered(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits >> 31 ? -(int64_t)(bits & 0x7fffffffu) : (int64_t)bits;
}

static float from_bits(uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* The worst differences within one range of x. */
typedef struct range_stats {
    const char *name;
    float below; /* the range holds the x < below that no range before it holds */
    uint64_t count;
    int64_t max_ulp;
    float max_ulp_x, max_ulp_got, max_ulp_expected;
    double max_error; /* largest |got - expected| */
    float max_error_x;
    float largest_lost_x; /* the largest x whose result is a zero where the reference's is not */
    bool lost;
} range_stats;

enum { RANGES = 4 };

static range_stats silu_stats[RANGES] = {
    {.name = "x < -86.9", .below = -86.9f},
    {.name = "-86.9 <= x < -80", .below = -80.0f},
    {.name = "-80 <= x < 0", .below = 0.0f},
    {.name = "x >= 0", .below = INFINITY},
};

/* hard_swish: 0 (or -0) below -3, a parabola to 3, x itself above. */
static range_stats hard_swish_stats[RANGES] = {
    {.name = "x < -3", .below = -3.0f},
    {.name = "-3 <= x < 0", .below = 0.0f},
    {.name = "0 <= x < 3", .below = 3.0f},
    {.name = "x >= 3", .below = INFINITY},
};

static range_stats *stats = silu_stats;

static void compare(const float *x, const float *got, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        float expected = (float)(hard_swish ? unary_hard_swish((double)x[i]) : unary_silu((double)x[i]));
        range_stats *r = stats;
        while (!(x[i] < r->below))
            r++;
        r->count++;
        int64_t ulp = llabs(ordered(got[i]) - ordered(expected));
        if (ulp > r->max_ulp) {
            r->max_ulp = ulp;
            r->max_ulp_x = x[i];
            r->max_ulp_got = got[i];
            r->max_ulp_expected = expected;
        }
        double error = fabs((double)got[i] - (double)expected);
        if (error > r->max_error) {
            r->max_error = error;
            r->max_error_x = x[i];
        }
        if (got[i] == 0.0f && expected != 0.0f && (!r->lost || x[i] > r->largest_lost_x)) {
            r->largest_lost_x = x[i];
            r->lost = true;
        }
    }
}

/* Run the chunk x through the fused session, check it fused, compare. */
static void run_chunk(kiln_session *session, kiln_tensor *x, uint64_t n)
{
    kiln_error err;
    float *v = kiln_tensor_data(x);
    for (uint64_t i = n; i < CHUNK; i++)
        v[i] = 0.0f; /* the tail of the last chunk */
    uint64_t before = kiln_onednn_fused_runs();
    CHECK(kiln_session_set_input(session, "x", x, &err));
    CHECK(kiln_session_run(session, &err));
    if (kiln_onednn_fused_runs() != before + 1) {
        fprintf(stderr, "a chunk ran unfused\n");
        exit(1);
    }
    compare(v, kiln_tensor_const_data(kiln_session_output(session, 0)), n);
}

int main(int argc, char **argv)
{
    shape s;
    bool known = argc >= 3 && (strcmp(argv[1], "silu") == 0 || strcmp(argv[1], "hard_swish") == 0);
    hard_swish = known && strcmp(argv[1], "hard_swish") == 0;
    stats = hard_swish ? hard_swish_stats : silu_stats;
    if (known && strcmp(argv[2], "dense") == 0)
        s = DENSE;
    else if (known && strcmp(argv[2], "depthwise") == 0)
        s = DEPTHWISE;
    else if (known && strcmp(argv[2], "channels-last") == 0)
        s = CHANNELS_LAST;
    else {
        fprintf(stderr, "usage: measure_fused_activation silu|hard_swish dense|depthwise|channels-last [--quick]\n");
        return 2;
    }
    bool quick = argc >= 4 && strcmp(argv[3], "--quick") == 0;
    if (!kiln_onednn_enabled()) {
        fprintf(stderr, "this build has no oneDNN: nothing to measure\n");
        return 1;
    }
    kiln_error err;
    kiln_program *program = make_program(s);
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = 1;
    kiln_session *session;
    CHECK(kiln_session_new(program, &options, &session, &err));
    const int64_t x_shape[] = {1, CHANNELS, SIDE, SIDE};
    kiln_tensor *x;
    CHECK(kiln_tensor_new(KILN_F32, 4, x_shape, &x, &err));
    float *v = kiln_tensor_data(x);
    /* Every f32 of [0, 100], then of [-100, -0]: bit patterns up to 100's. */
    /* 100; FLT_MAX / 4 rounded down, or a little less where the first conv's
     * bound on its result (with slack for its rounding) must stay within it. */
    const uint32_t hundred = 0x42c80000u, limit = s == CHANNELS_LAST ? 0x7e7ff000u : 0x7e7fffffu;
    uint64_t chunk = 0;
    for (uint32_t sign = 0; sign < 2; sign++) {
        for (uint64_t start = 0; start <= hundred; start += CHUNK, chunk++) {
            if (quick && chunk % 256 != 0)
                continue;
            uint64_t n = hundred + 1 - start < CHUNK ? hundred + 1 - start : CHUNK;
            for (uint64_t i = 0; i < n; i++)
                v[i] = from_bits((uint32_t)(start + i) | sign << 31);
            run_chunk(session, x, n);
        }
        /* Beyond 100: every 64th f32 up to FLT_MAX / 4. */
        uint64_t n = 0;
        for (uint64_t bits = hundred + 1; bits <= limit; bits += quick ? 64 * 256 : 64) {
            v[n++] = from_bits((uint32_t)bits | sign << 31);
            if (n == CHUNK || bits + (quick ? 64 * 256 : 64) > limit) {
                run_chunk(session, x, n);
                n = 0;
            }
        }
    }
    static const char *const names[] = {"dense 3x3", "depthwise 3x3", "1x1 of a channels-last x"};
    const char *op = hard_swish ? "hard_swish" : "silu";
    printf("fused conv + %s (%s) against unary_%s rounded to f32\n", op, names[s], op);
    for (int r = 0; r < RANGES; r++) {
        printf("  %-17s %11" PRIu64 " values: max %" PRId64 " ulp (x = %.9g: %.9g, reference %.9g); "
               "max |error| %.3g (x = %.9g)",
               stats[r].name, stats[r].count, stats[r].max_ulp, (double)stats[r].max_ulp_x,
               (double)stats[r].max_ulp_got, (double)stats[r].max_ulp_expected, stats[r].max_error,
               (double)stats[r].max_error_x);
        if (stats[r].lost)
            printf("; zero for a nonzero %s up to x = %.9g", op, (double)stats[r].largest_lost_x);
        printf("\n");
    }
    kiln_tensor_free(x);
    kiln_session_free(session);
    kiln_program_free(program);
    return 0;
}
