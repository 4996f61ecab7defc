/*
 * test_ops_grid_sample.c — grid_sample against an independent reference,
 * hand-checked values, special values, f16 through f32, end to end through
 * the public builder and a session, and the shape rule's refusals.
 *
 * The reference is written here differently from the kernel: in long
 * double, it un-normalises each coordinate explicitly, reflects a
 * coordinate by counting whole bounces (the kernel uses one fmod and an
 * integer formula for indices), fetches every corner of the 2x2 (bilinear)
 * or 4x4 (bicubic) neighbourhood through a padded pixel read, and weights
 * each corner by the product of its two axis weights. The kernel instead
 * builds per-axis tap lists once per grid point and leaves out padding
 * zeros. Nearest must match exactly; bilinear and bicubic within a few
 * ulps of the output dtype.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "half.h"
#include "op_registry.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

static void family_ops_are_registered(void **state)
{
    (void)state;
    assert_family_registered(&kiln_ops_grid_sample, (const char *const[]){"grid_sample"}, 1);
    assert_null(kiln_op_find_version("grid_sample", 2));
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

/* Uniform in [-1, 1), a multiple of 2^-20 (exact in f32 and f64). */
static double random_real(void)
{
    return (double)(int64_t)(xorshift64_star_next(&rng_state) >> 43) / 1048576.0 - 1.0;
}

static void set_real(kiln_tensor *t, uint64_t i, double v)
{
    if (t->dtype == KILN_F32)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = v;
}

static long double element_real(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_F32 ? (long double)((const float *)t->data)[i] : (long double)((const double *)t->data)[i];
}

typedef struct sample_case {
    const char *mode;    /* "bilinear", "nearest", "bicubic" */
    const char *padding; /* "zeros", "border", "reflection" */
    int align_corners;
} sample_case;

static uint32_t case_attributes(const sample_case *c, kiln_node_attribute *attrs)
{
    attrs[0] = (kiln_node_attribute){.name = "align_corners", .type = KILN_ATTRIBUTE_INT, .i = c->align_corners};
    attrs[1] = borrowed_attribute((kiln_attribute){.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = c->mode});
    attrs[2] =
        borrowed_attribute((kiln_attribute){.name = "padding_mode", .type = KILN_ATTRIBUTE_STRING, .s = c->padding});
    return 3;
}

static kiln_status run_grid_sample(const kiln_tensor *x, const kiln_tensor *grid, kiln_tensor *out,
                                   const sample_case *c, kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find("grid_sample");
    assert_non_null(op);
    memset(out->data, 0x7F, out->byte_size); /* poison: a skipped element is caught */
    kiln_node_attribute attrs[3];
    uint32_t count = case_attributes(c, attrs);
    kiln_kernel_call call = {(const kiln_tensor *[]){x, grid}, 2, out, attrs, count, NULL};
    return op->run(&call, err);
}

/* --------------------------------------------------------- the reference */

/* ONNX's un-normalisation of grid value g onto an axis of `size` pixels. */
static long double reference_pixel_coordinate(long double g, int64_t size, int align_corners)
{
    if (align_corners)
        return (g + 1) / 2 * (long double)(size - 1);
    return ((g + 1) * (long double)size - 1) / 2;
}

/* Reflect by the nearer end, counting whole bounces of the span, until inside [low, high]. */
static long double reference_reflect(long double x, long double low, long double high)
{
    long double span = high - low;
    if (span == 0)
        return low;
    if (x < low) {
        long double d = low - x;
        long double bounces = floorl(d / span), rest = d - bounces * span;
        return fmodl(bounces, 2) == 0 ? low + rest : high - rest;
    }
    if (x > high) {
        long double d = x - high;
        long double bounces = floorl(d / span), rest = d - bounces * span;
        return fmodl(bounces, 2) == 0 ? high - rest : low + rest;
    }
    return x;
}

typedef struct image {
    const kiln_tensor *x;
    uint64_t base;
    int64_t height, width;
    const sample_case *c;
} image;

/* The padded read of pixel (r, col): zeros outside, the clamped pixel, or the reflected one. */
static long double reference_pixel(const image *im, int64_t r, int64_t col)
{
    if (strcmp(im->c->padding, "zeros") == 0) {
        if (r < 0 || r >= im->height || col < 0 || col >= im->width)
            return 0;
    } else if (strcmp(im->c->padding, "border") == 0) {
        r = r < 0 ? 0 : r >= im->height ? im->height - 1 : r;
        col = col < 0 ? 0 : col >= im->width ? im->width - 1 : col;
    } else {
        long double lo = im->c->align_corners ? 0 : -0.5L;
        col = (int64_t)reference_reflect((long double)col, lo,
                                         im->c->align_corners ? im->width - 1 : im->width - 0.5L);
        r = (int64_t)reference_reflect((long double)r, lo, im->c->align_corners ? im->height - 1 : im->height - 0.5L);
    }
    return element_real(im->x, im->base + (uint64_t)(r * im->width + col));
}

/* The coordinate after ONNX's coordinate padding (applied only outside [low, high]). */
static long double reference_padded_coordinate(const sample_case *c, long double v, int64_t size)
{
    long double low = c->align_corners ? 0 : -0.5L, high = c->align_corners ? size - 1 : size - 0.5L;
    if (v >= low && v <= high)
        return v;
    if (strcmp(c->padding, "border") == 0)
        return v < 0 ? 0 : v > size - 1 ? size - 1 : v;
    if (strcmp(c->padding, "reflection") == 0)
        return reference_reflect(v, low, high);
    return v;
}

static void reference_cubic_coefficients(long double t, long double *w)
{
    const long double a = -0.75L;
    w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    w[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

static long double reference_sample(const image *im, long double gx, long double gy)
{
    const sample_case *c = im->c;
    if (isnan(gx) || isnan(gy))
        return NAN;
    if (strcmp(c->padding, "reflection") == 0 && (isinf(gx) || isinf(gy)))
        return NAN;
    long double x = reference_pixel_coordinate(gx, im->width, c->align_corners);
    long double y = reference_pixel_coordinate(gy, im->height, c->align_corners);
    if (strcmp(c->mode, "nearest") == 0) {
        x = nearbyintl(x);
        y = nearbyintl(y);
    }
    x = reference_padded_coordinate(c, x, im->width);
    y = reference_padded_coordinate(c, y, im->height);
    /* Far outside (zeros padding only): every corner reads 0. */
    if (fabsl(x) > 1e6L || fabsl(y) > 1e6L)
        return 0;
    if (strcmp(c->mode, "nearest") == 0)
        return reference_pixel(im, (int64_t)y, (int64_t)x);
    int64_t x0 = (int64_t)floorl(x), y0 = (int64_t)floorl(y);
    long double tx = x - x0, ty = y - y0;
    if (strcmp(c->mode, "bilinear") == 0) {
        long double wx[2] = {1 - tx, tx}, wy[2] = {1 - ty, ty}, sum = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                long double weight = wy[i] * wx[j];
                if (weight != 0)
                    sum += weight * reference_pixel(im, y0 + i, x0 + j);
            }
        return sum;
    }
    long double wx[4], wy[4], sum = 0;
    reference_cubic_coefficients(tx, wx);
    reference_cubic_coefficients(ty, wy);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            long double weight = wy[i] * wx[j];
            if (weight != 0)
                sum += weight * reference_pixel(im, y0 - 1 + i, x0 - 1 + j);
        }
    return sum;
}

/* A grid value: in range, on an edge, just or far outside (several reflections). */
static double random_grid_value(void)
{
    static const double specials[] = {-1.0, 1.0, 0.0, -1.5, 1.25, 3.75, -4.5, 0.5};
    uint64_t pick = xorshift64_star_next(&rng_state) % 16;
    if (pick < 8)
        return specials[pick];
    if (pick < 12)
        return random_real();
    return random_real() * 4.0;
}

static void check_case(kiln_dtype dtype, const int64_t *x_shape, int64_t out_h, int64_t out_w, const sample_case *c)
{
    int64_t grid_shape[4] = {x_shape[0], out_h, out_w, 2};
    int64_t out_shape[4] = {x_shape[0], x_shape[1], out_h, out_w};
    kiln_tensor *x = new_poisoned_tensor(dtype, 4, x_shape), *grid = new_poisoned_tensor(dtype, 4, grid_shape);
    kiln_tensor *y = new_poisoned_tensor(dtype, 4, out_shape);
    for (uint64_t i = 0; i < x->element_count; i++)
        set_real(x, i, random_real());
    for (uint64_t i = 0; i < grid->element_count; i++)
        set_real(grid, i, random_grid_value());
    kiln_error err;
    if (run_grid_sample(x, grid, y, c, &err) != KILN_OK)
        fail_msg("grid_sample failed: %s", err.message);
    int64_t channels = x_shape[1];
    for (int64_t n = 0; n < x_shape[0]; n++)
        for (int64_t ch = 0; ch < channels; ch++)
            for (int64_t h = 0; h < out_h; h++)
                for (int64_t w = 0; w < out_w; w++) {
                    image im = {x, (uint64_t)((n * channels + ch) * x_shape[2] * x_shape[3]), x_shape[2], x_shape[3],
                                c};
                    uint64_t g = (uint64_t)(((n * out_h + h) * out_w + w) * 2);
                    long double want = reference_sample(&im, element_real(grid, g), element_real(grid, g + 1));
                    uint64_t e = (uint64_t)(((n * channels + ch) * out_h + h) * out_w + w);
                    long double got = element_real(y, e);
                    long double tolerance = strcmp(c->mode, "nearest") == 0 ? 0 : dtype == KILN_F32 ? 4e-7L : 1e-13L;
                    if (!(fabsl(got - want) <= tolerance * (1 + fabsl(want))))
                        fail_msg("%s/%s/align_corners=%d %s x [%lld,%lld,%lld,%lld]: element %llu is %.17Lg, "
                                 "expected %.17Lg (grid %.17Lg, %.17Lg)",
                                 c->mode, c->padding, c->align_corners, kiln_dtype_name(dtype),
                                 (long long)x_shape[0], (long long)x_shape[1], (long long)x_shape[2],
                                 (long long)x_shape[3], (unsigned long long)e, got, want, element_real(grid, g),
                                 element_real(grid, g + 1));
                }
    kiln_tensor_free(x);
    kiln_tensor_free(grid);
    kiln_tensor_free(y);
}

static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
static const char *const paddings[] = {"zeros", "border", "reflection"};

/* Every mode x padding x align_corners, f32 and f64, on images down to 1x1. */
static void matches_reference(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {{2, 3, 4, 5}, {1, 2, 1, 3}, {1, 1, 3, 1}, {1, 1, 1, 1}, {2, 1, 2, 2},
                                        {1, 2, 7, 6}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t m = 0; m < 3; m++)
            for (size_t p = 0; p < 3; p++)
                for (int align = 0; align < 2; align++) {
                    sample_case c = {modes[m], paddings[p], align};
                    check_case(KILN_F32, shapes[s], 3, 4, &c);
                    check_case(KILN_F64, shapes[s], 5, 2, &c);
                }
}

/* ---------------------------------------------------- hand-checked values */

/* One sample of a 1 x 1 x H x W image at grid point (gx, gy). */
static double sample_one(const double *pixels, int64_t height, int64_t width, double gx, double gy,
                         const sample_case *c)
{
    kiln_tensor *x = new_poisoned_tensor(KILN_F64, 4, (int64_t[]){1, 1, height, width});
    kiln_tensor *grid = new_poisoned_tensor(KILN_F64, 4, (int64_t[]){1, 1, 1, 2});
    kiln_tensor *y = new_poisoned_tensor(KILN_F64, 4, (int64_t[]){1, 1, 1, 1});
    memcpy(x->data, pixels, x->byte_size);
    ((double *)grid->data)[0] = gx;
    ((double *)grid->data)[1] = gy;
    kiln_error err;
    if (run_grid_sample(x, grid, y, c, &err) != KILN_OK)
        fail_msg("grid_sample failed: %s", err.message);
    double result = ((double *)y->data)[0];
    kiln_tensor_free(x);
    kiln_tensor_free(grid);
    kiln_tensor_free(y);
    return result;
}

static void known_values(void **state)
{
    (void)state;
    static const double square[] = {1, 2, 3, 4}; /* 2x2 */
    sample_case c = {"bilinear", "zeros", 1};
    /* align_corners 1: the corners are the centres of the corner pixels. */
    assert_true(sample_one(square, 2, 2, 0, 0, &c) == 2.5);
    assert_true(sample_one(square, 2, 2, -1, -1, &c) == 1);
    assert_true(sample_one(square, 2, 2, 1, -1, &c) == 2);
    /* align_corners 0: (-1, -1) is the outer corner, x = y = -0.5: one quarter of pixel 1, the rest zeros. */
    c.align_corners = 0;
    assert_true(sample_one(square, 2, 2, -1, -1, &c) == 0.25);
    assert_true(sample_one(square, 2, 2, 0, 0, &c) == 2.5);
    /* border and reflection read pixel 1 for the missing corners. */
    c.padding = "border";
    assert_true(sample_one(square, 2, 2, -1, -1, &c) == 1);
    c.padding = "reflection";
    assert_true(sample_one(square, 2, 2, -1, -1, &c) == 1);
    /* x = ((3 + 1) * 2 - 1) / 2 = 3.5 reflects about 1.5 to -0.5 -> pixel 0 (value 1 on row 0). */
    assert_true(sample_one(square, 2, 2, 3, -1, &c) == 1);
    /* border clamps the coordinate: x = 3.5 -> 1. */
    c.padding = "border";
    assert_true(sample_one(square, 2, 2, 3, -1, &c) == 2);

    /* nearest rounds half to even: align_corners 1 on [10, 20, 30, 40]: g = 0 is x = 1.5 -> 2. */
    static const double row[] = {10, 20, 30, 40};
    sample_case nearest = {"nearest", "zeros", 1};
    assert_true(sample_one(row, 1, 4, 0, 0, &nearest) == 30);
    /* On [10, 20], g = 0 is x = 0.5 -> 0. */
    assert_true(sample_one(row, 1, 2, 0, 0, &nearest) == 10);
    /* zeros: x = -0.5 rounds to -0, inside; x = -1.5 rounds to -2, outside. */
    nearest.align_corners = 0;
    assert_true(sample_one(row, 1, 4, -1, 0, &nearest) == 10);
    assert_true(sample_one(row, 1, 4, -1.5, 0, &nearest) == 0);

    /* bicubic at a pixel centre is that pixel (weights 0, 1, 0, 0). */
    static const double ramp[] = {0, 1, 4, 9, 16, 25, 36, 49, 64}; /* 3x3 */
    sample_case cubic = {"bicubic", "zeros", 1};
    assert_true(sample_one(ramp, 3, 3, 0, 0, &cubic) == 16);
    /* Halfway between columns 0 and 1 of row 0 with zeros outside:
     * weights at t = 0.5 are -0.09375, 0.59375, 0.59375, -0.09375 over columns -1..2. */
    double want = 0.59375 * 0 + 0.59375 * 1 - 0.09375 * 4;
    assert_true(fabs(sample_one(ramp, 3, 3, -0.5, -1, &cubic) - want) < 1e-15);
}

/* NaN in the grid, infinities in the grid, NaN in the image. */
static void special_values(void **state)
{
    (void)state;
    static const double square[] = {1, 2, 3, 4};
    for (size_t m = 0; m < 3; m++)
        for (size_t p = 0; p < 3; p++)
            for (int align = 0; align < 2; align++) {
                sample_case c = {modes[m], paddings[p], align};
                /* A NaN coordinate has no position: NaN, whatever the padding. */
                assert_true(isnan(sample_one(square, 2, 2, NAN, 0, &c)));
                assert_true(isnan(sample_one(square, 2, 2, 0, NAN, &c)));
                double far = sample_one(square, 2, 2, INFINITY, -INFINITY, &c);
                if (p == 0)
                    assert_true(far == 0); /* every tap outside */
                else if (p == 1)
                    assert_true(far == 2); /* clamped to the corner (row 0, last column) */
                else
                    assert_true(isnan(far)); /* no reflected position */
                double huge = sample_one(square, 2, 2, 1e300, 0, &c);
                if (p == 0)
                    assert_true(huge == 0);
                else
                    assert_true(isfinite(huge));
            }
    /* A NaN pixel with weight 0 is not read; with weight it propagates. */
    static const double holes[] = {1, NAN, 3, 4};
    sample_case c = {"bilinear", "zeros", 1};
    assert_true(sample_one(holes, 2, 2, -1, -1, &c) == 1);
    assert_true(sample_one(holes, 2, 2, -1, 1, &c) == 3);
    assert_true(isnan(sample_one(holes, 2, 2, 0, 0, &c)));
}

/* f16: the f32 kernel on the widened values, rounded once. */
static void half_through_f32(void **state)
{
    (void)state;
    const int64_t x_shape[] = {1, 2, 3, 4}, grid_shape[] = {1, 2, 3, 2}, out_shape[] = {1, 2, 2, 3};
    kiln_tensor *x16 = new_poisoned_tensor(KILN_F16, 4, x_shape), *g16 = new_poisoned_tensor(KILN_F16, 4, grid_shape);
    kiln_tensor *x32 = new_poisoned_tensor(KILN_F32, 4, x_shape), *g32 = new_poisoned_tensor(KILN_F32, 4, grid_shape);
    kiln_tensor *y16 = new_poisoned_tensor(KILN_F16, 4, out_shape), *y32 = new_poisoned_tensor(KILN_F32, 4, out_shape);
    for (uint64_t i = 0; i < x16->element_count; i++) {
        ((uint16_t *)x16->data)[i] = kiln_f32_to_f16((float)random_real());
        ((float *)x32->data)[i] = kiln_f16_to_f32(((uint16_t *)x16->data)[i]);
    }
    for (uint64_t i = 0; i < g16->element_count; i++) {
        ((uint16_t *)g16->data)[i] = kiln_f32_to_f16((float)(random_real() * 1.5));
        ((float *)g32->data)[i] = kiln_f16_to_f32(((uint16_t *)g16->data)[i]);
    }
    for (size_t m = 0; m < 3; m++) {
        sample_case c = {modes[m], "reflection", 0};
        kiln_error err;
        assert_int_equal(run_grid_sample(x16, g16, y16, &c, &err), KILN_OK);
        assert_int_equal(run_grid_sample(x32, g32, y32, &c, &err), KILN_OK);
        for (uint64_t i = 0; i < y16->element_count; i++)
            assert_int_equal(((uint16_t *)y16->data)[i], kiln_f32_to_f16(((float *)y32->data)[i]));
    }
    kiln_tensor_free(x16);
    kiln_tensor_free(g16);
    kiln_tensor_free(x32);
    kiln_tensor_free(g32);
    kiln_tensor_free(y16);
    kiln_tensor_free(y32);
}

/* ------------------------------------------------- builder and session */

static kiln_status try_build(const char *x_shape, const char *grid_shape, kiln_dtype x_dtype, kiln_dtype grid_dtype,
                             uint32_t attribute_count, const kiln_attribute *attributes, kiln_program **program,
                             kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("grid_sample", &b, err), KILN_OK);
    kiln_value in[2], y;
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "m", 1, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "h", 1, 16, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "w", 1, 16, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "e", 0, 3, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", x_dtype, x_shape, &in[0], err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "grid", grid_dtype, grid_shape, &in[1], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, "grid_sample", 2, in, attribute_count, attributes, &y, err);
    if (status == KILN_OK && program) {
        assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
        void *bytes;
        size_t size;
        assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, err), KILN_OK);
        assert_int_equal(kiln_program_load_memory(bytes, size, NULL, program, NULL, err), KILN_OK);
        free(bytes);
    }
    kiln_builder_free(b);
    return status;
}

/* Symbolic H_out and W_out, run at several points of the domain against the reference. */
static void end_to_end_symbolic(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program;
    kiln_attribute attrs[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "bicubic"},
        {.name = "padding_mode", .type = KILN_ATTRIBUTE_STRING, .s = "reflection"},
    };
    assert_int_equal(try_build("[n, 2, 3, 4]", "[n, h, w, 2]", KILN_F32, KILN_F32, 2, attrs, &program, &err),
                     KILN_OK);
    char shape[64];
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[n, 2, h, w]");
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    sample_case c = {"bicubic", "reflection", 0};
    for (int64_t h = 1; h <= 5; h += 2) {
        kiln_tensor *x = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, 2, 3, 4});
        kiln_tensor *grid = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){2, h, 7 - h, 2});
        for (uint64_t i = 0; i < x->element_count; i++)
            set_real(x, i, random_real());
        for (uint64_t i = 0; i < grid->element_count; i++)
            set_real(grid, i, random_grid_value());
        assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "grid", grid, &err), KILN_OK);
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run: %s", err.message);
        const kiln_tensor *out = kiln_session_output(session, 0);
        assert_int_equal(kiln_tensor_shape(out)[2], h);
        assert_int_equal(kiln_tensor_shape(out)[3], 7 - h);
        const float *o = kiln_tensor_const_data(out);
        for (int64_t n = 0; n < 2; n++)
            for (int64_t ch = 0; ch < 2; ch++)
                for (int64_t p = 0; p < h * (7 - h); p++) {
                    image im = {x, (uint64_t)((n * 2 + ch) * 12), 3, 4, &c};
                    uint64_t g = (uint64_t)((n * h * (7 - h) + p) * 2);
                    long double want = reference_sample(&im, element_real(grid, g), element_real(grid, g + 1));
                    long double got = o[(n * 2 + ch) * h * (7 - h) + p];
                    assert_true(fabsl(got - want) <= 4e-7L * (1 + fabsl(want)));
                }
        kiln_tensor_free(x);
        kiln_tensor_free(grid);
    }
    kiln_session_free(session);
    kiln_program_free(program);
}

/* ----------------------------------------------------- static refusals */

static void expect_refusal(const char *x_shape, const char *grid_shape, kiln_dtype x_dtype, kiln_dtype grid_dtype,
                           uint32_t count, const kiln_attribute *attributes, const char *const *fragments)
{
    kiln_error err;
    assert_int_equal(try_build(x_shape, grid_shape, x_dtype, grid_dtype, count, attributes, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (grid_sample)"));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void refusals(void **state)
{
    (void)state;
    kiln_attribute attr = {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "linear"};
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 1, &attr,
                   (const char *[]){"attribute 'mode' is \"linear\"", "bilinear, nearest or bicubic", NULL});
    attr = (kiln_attribute){.name = "padding_mode", .type = KILN_ATTRIBUTE_STRING, .s = "edge"};
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 1, &attr,
                   (const char *[]){"attribute 'padding_mode' is \"edge\"", "zeros, border or reflection", NULL});
    attr = (kiln_attribute){.name = "align_corners", .type = KILN_ATTRIBUTE_INT, .i = 2};
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 1, &attr,
                   (const char *[]){"attribute 'align_corners' is 2; expected 0 or 1", NULL});
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 2]", KILN_I32, KILN_I32, 0, NULL,
                   (const char *[]){"x has dtype i32", "f32, f64, f16 or bf16", NULL});
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 2]", KILN_F32, KILN_F64, 0, NULL, (const char *[]){"f64", NULL});
    expect_refusal("[n, 3, h]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"x must have rank 4", "got rank 3", NULL});
    expect_refusal("[n, 3, h, w]", "[n, 4, 2]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"grid must have rank 4", "got rank 3", NULL});
    expect_refusal("[n, 3, h, w]", "[m, 4, 4, 2]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"grid axis 0 size m equals x axis 0 size n", "counterexample", NULL});
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, 3]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"grid axis 3 size 3 equals 2", NULL});
    expect_refusal("[n, 3, h, w]", "[n, 4, 4, h]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"grid axis 3 size h equals 2", "counterexample", NULL});
    expect_refusal("[n, 3, e, w]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"x axis 2 size e is >= 1", "counterexample: e=0", NULL});
    expect_refusal("[n, 3, h, 0]", "[n, 4, 4, 2]", KILN_F32, KILN_F32, 0, NULL,
                   (const char *[]){"x axis 3 size 0 is >= 1", NULL});
    /* Accepted: an empty channel axis or an empty grid. */
    kiln_error err;
    assert_int_equal(try_build("[n, e, h, w]", "[n, e, 4, 2]", KILN_F32, KILN_F32, 0, NULL, NULL, &err), KILN_OK);
}

/* A kernel called with operands that do not fit the shape rule fails cleanly. */
static void kernel_mismatch(void **state)
{
    (void)state;
    kiln_tensor *x = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 2, 2});
    kiln_tensor *grid = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 1, 3});
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 1, 1});
    sample_case c = {"bilinear", "zeros", 0};
    kiln_error err;
    assert_int_equal(run_grid_sample(x, grid, y, &c, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "grid_sample"));
    kiln_tensor_free(x);
    kiln_tensor_free(grid);
    kiln_tensor_free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(matches_reference),
        cmocka_unit_test(known_values),
        cmocka_unit_test(special_values),
        cmocka_unit_test(half_through_f32),
        cmocka_unit_test(end_to_end_symbolic),
        cmocka_unit_test(refusals),
        cmocka_unit_test(kernel_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
