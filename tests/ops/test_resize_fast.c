/*
 * test_resize_fast.c — the fast path of resize and resize_to (spec/ops/
 * resize.md, "Fast path") against the reference kernel, bit for bit: each
 * case runs the op's fast kernel with a kernel context (a node state slot,
 * 1 or 2 threads), checks that it ran and said so (KILN_PATH_VECTOR) or
 * declined where it must, and compares every byte of its result with the
 * reference kernel's (called without a context). Cases: nearest (every
 * nearest_mode, dtypes of 1, 2, 4 and 8 bytes) and linear (f32), every
 * coordinate_transformation_mode, scales and sizes, up- and downsampling,
 * odd sizes, ranks 1 to 5, inputs holding NaN, infinities and -0, the
 * node's tables kept across runs of one shape and rebuilt for another,
 * outputs large enough to run on two threads, with the AVX-512, AVX2 and
 * plain C copies of the linear sums (linear_rows.h); a channels-last x
 * (layout.h) of rank 4 into a channels-last result. Declined: cubic, f64
 * and half linear, a resized axis before the last two, a channels-last x
 * of rank 3 or 5 or into a result that must be row-major.
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

#include <kiln/kiln.h>

#include "attribute.h"
#include "linear_rows.h"
#include "op_registry.h"
#include "tensor.h"

#include "borrowed_attribute.h"
#include "prng.h"
#include "tensor_fixture.h"

static prng rng = {0x2545F4914F6CDD1Du};

/* Random elements of any dtype: random bytes, except f32, f64 (values in [-4, 4), with specials). */
static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape, bool specials)
{
    kiln_tensor *t = new_poisoned_tensor(dtype, rank, shape);
    size_t width = kiln_dtype_size(dtype);
    for (uint64_t i = 0; i < t->element_count; i++) {
        uint64_t bits = prng_next(&rng);
        double v = (double)(bits >> 11) / 9007199254740992.0 * 8.0 - 4.0;
        if (specials && bits % 61 == 0)
            v = bits % 4 == 0 ? NAN : bits % 4 == 1 ? INFINITY : bits % 4 == 2 ? -INFINITY : -0.0;
        if (dtype == KILN_F32)
            ((float *)t->data)[i] = (float)v;
        else if (dtype == KILN_F64)
            ((double *)t->data)[i] = v;
        else
            memcpy((uint8_t *)t->data + i * width, &bits, width);
    }
    return t;
}

typedef struct resize_case {
    const char *mode, *coordinates, *nearest; /* NULL: the default */
    bool to;                                  /* resize_to (sizes a shape text) */
    bool by_sizes;                            /* resize with sizes, else scales */
    uint32_t rank;
    int64_t in[5], out[5];
    double scales[5];
    kiln_dtype dtype;
} resize_case;

static uint32_t case_attributes(const resize_case *rc, kiln_node_attribute *a)
{
    uint32_t n = 0;
    if (rc->coordinates)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "coordinate_transformation_mode",
                                                     .type = KILN_ATTRIBUTE_STRING, .s = rc->coordinates});
    if (rc->mode)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = rc->mode});
    if (rc->nearest)
        a[n++] = borrowed_attribute((kiln_attribute){.name = "nearest_mode", .type = KILN_ATTRIBUTE_STRING,
                                                     .s = rc->nearest});
    static int64_t sizes[5];
    static double scales[5];
    if (rc->to) {
        a[n++] = (kiln_node_attribute){.name = "sizes", .type = KILN_ATTRIBUTE_STRING, .s = (char *)"[target]"};
    } else if (rc->by_sizes) {
        memcpy(sizes, rc->out, sizeof sizes);
        a[n++] = (kiln_node_attribute){.name = "sizes", .type = KILN_ATTRIBUTE_INTS, .count = rc->rank,
                                       .ints = sizes};
    } else {
        memcpy(scales, rc->scales, sizeof scales);
        a[n++] = (kiln_node_attribute){.name = "scales", .type = KILN_ATTRIBUTE_FLOATS, .count = rc->rank,
                                       .floats = scales};
    }
    /* sorted by name: coordinate..., mode, nearest_mode, scales / sizes */
    return n;
}

/* Fast against reference on x, in the given slot; @return whether the fast path ran. */
static bool run_both(const resize_case *rc, const kiln_tensor *x, kiln_node_state *slot, uint32_t threads)
{
    const char *op = rc->to ? "resize_to" : "resize";
    const kiln_op_def *def = kiln_op_find(op);
    kiln_node_attribute attributes[4];
    uint32_t attribute_count = case_attributes(rc, attributes);
    kiln_tensor *fast = new_poisoned_tensor(rc->dtype, rc->rank, rc->out);
    kiln_tensor *reference = new_poisoned_tensor(rc->dtype, rc->rank, rc->out);
    kiln_kernel_context context = {.threads = threads, .state = slot, .path = KILN_PATH_REFERENCE};
    const kiln_tensor *inputs[] = {x};
    kiln_kernel_call call = {inputs, 1, fast, attributes, attribute_count, &context};
    kiln_error err;
    bool ran = false;
    assert_int_equal(def->fast(&call, &ran, &err), KILN_OK);
    assert_int_equal(context.path, ran ? KILN_PATH_VECTOR : KILN_PATH_REFERENCE);
    call.output = reference;
    call.context = NULL;
    assert_int_equal(def->run(&call, &err), KILN_OK);
    if (ran && memcmp(fast->data, reference->data, fast->element_count * kiln_dtype_size(rc->dtype)) != 0) {
        size_t width = kiln_dtype_size(rc->dtype);
        for (uint64_t i = 0; i < fast->element_count; i++)
            if (memcmp((uint8_t *)fast->data + i * width, (uint8_t *)reference->data + i * width, width) != 0)
                fail_msg("%s mode %s coordinates %s rank %u out [%lld, %lld]: element %llu differs (%.9g, reference "
                         "%.9g)",
                         op, rc->mode ? rc->mode : "nearest", rc->coordinates ? rc->coordinates : "half_pixel",
                         rc->rank, (long long)rc->out[rc->rank > 1 ? rc->rank - 2 : 0],
                         (long long)rc->out[rc->rank - 1], (unsigned long long)i,
                         rc->dtype == KILN_F32 ? (double)((float *)fast->data)[i] : 0.0,
                         rc->dtype == KILN_F32 ? (double)((float *)reference->data)[i] : 0.0);
    }
    kiln_tensor_free(fast);
    kiln_tensor_free(reference);
    return ran;
}

/* Run the case twice in one slot (tables kept), with x holding specials for floats. */
static bool check(const resize_case *rc, uint32_t threads)
{
    kiln_node_state slot = {NULL, NULL};
    bool ran = false;
    for (int run = 0; run < 2; run++) {
        kiln_tensor *x = random_tensor(rc->dtype, rc->rank, rc->in, run == 1);
        bool this_ran = run_both(rc, x, &slot, threads);
        assert_true(run == 0 || this_ran == ran);
        ran = this_ran;
        kiln_tensor_free(x);
    }
    if (slot.release)
        slot.release(slot.data);
    return ran;
}

/* An NCHW case of [n, c, h, w] -> [n, c, oh, ow]. */
static resize_case planes(const char *mode, const char *coordinates, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t oh, int64_t ow)
{
    resize_case rc = {.mode = mode, .coordinates = coordinates, .by_sizes = true, .rank = 4,
                      .in = {n, c, h, w}, .out = {n, c, oh, ow}, .dtype = KILN_F32};
    return rc;
}

static void linear_is_the_reference_bit_for_bit(void **state)
{
    (void)state;
    static const char *const coordinates[] = {NULL, "pytorch_half_pixel", "align_corners", "asymmetric"};
    static const int64_t sizes[][4] = {
        {32, 32, 64, 64}, {7, 5, 13, 11}, {9, 9, 4, 3}, {1, 1, 5, 7}, {5, 1, 1, 9}, {3, 17, 3, 17}, {6, 6, 1, 1},
        {8, 8, 31, 8}, {2, 3, 64, 65},
    };
    for (size_t c = 0; c < 4; c++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            resize_case rc = planes("linear", coordinates[c], 1 + s % 2, 3, sizes[s][0], sizes[s][1], sizes[s][2],
                                    sizes[s][3]);
            rc.to = s % 3 == 1;
            assert_true(check(&rc, 1 + (uint32_t)(s % 2)));
        }
    /* scales, which the kernel reads as exact ratios */
    resize_case scaled = {.mode = "linear", .rank = 4, .in = {1, 2, 10, 10}, .out = {1, 2, 3, 15},
                          .scales = {1, 1, 0.3, 1.5}, .dtype = KILN_F32};
    assert_true(check(&scaled, 1));
    scaled.coordinates = "align_corners";
    assert_true(check(&scaled, 2));
    /* large enough for two threads (2^18 output elements and more) */
    resize_case large = planes("linear", NULL, 1, 64, 32, 32, 64, 64);
    assert_true(check(&large, 2));
    large.coordinates = "align_corners";
    large.out[1] = large.in[1] = 70;
    assert_true(check(&large, 2));
}

/* The channels-last copy of row-major [N, C, spatial...] t, or the row-major copy of channels-last t when `back`. */
static kiln_tensor *transposed(const kiln_tensor *t, bool back)
{
    kiln_tensor *r = new_poisoned_tensor(t->dtype, t->rank, t->shape);
    uint64_t n = (uint64_t)t->shape[0], c = (uint64_t)t->shape[1], p = t->element_count / (n * c);
    const float *from = t->data;
    float *to = r->data;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < c; k++)
            for (uint64_t q = 0; q < p; q++) {
                uint64_t plain = (i * c + k) * p + q, last = (i * p + q) * c + k;
                to[back ? plain : last] = from[back ? last : plain];
            }
    return r;
}

/*
 * rc on a channels-last x: with `keep` (result_may_be_channels_last) the
 * fast path runs and writes its result channels-last, holding the
 * reference's bits on the row-major x; without, it declines.
 */
static void check_channels_last(const resize_case *rc, bool keep, uint32_t threads)
{
    const kiln_op_def *def = kiln_op_find("resize");
    kiln_node_attribute attributes[4];
    uint32_t attribute_count = case_attributes(rc, attributes);
    kiln_node_state slot = {NULL, NULL};
    for (int run = 0; run < 2; run++) {
        kiln_tensor *x = random_tensor(rc->dtype, rc->rank, rc->in, run == 1), *x_last = transposed(x, false);
        kiln_tensor *fast = new_poisoned_tensor(rc->dtype, rc->rank, rc->out);
        kiln_tensor *reference = new_poisoned_tensor(rc->dtype, rc->rank, rc->out);
        kiln_kernel_context context = {.threads = threads, .state = &slot, .path = KILN_PATH_REFERENCE,
                                       .channels_last_operands = 1u, .result_may_be_channels_last = keep};
        const kiln_tensor *inputs[] = {x_last};
        kiln_kernel_call call = {inputs, 1, fast, attributes, attribute_count, &context};
        kiln_error err;
        bool ran = false;
        assert_int_equal(def->fast(&call, &ran, &err), KILN_OK);
        assert_int_equal(ran, keep);
        if (!keep) {
            kiln_tensor_free(x), kiln_tensor_free(x_last), kiln_tensor_free(fast), kiln_tensor_free(reference);
            continue;
        }
        assert_true(context.wrote_channels_last);
        inputs[0] = x;
        call.output = reference;
        call.context = NULL;
        assert_int_equal(def->run(&call, &err), KILN_OK);
        kiln_tensor *plain = transposed(fast, true);
        if (memcmp(plain->data, reference->data, reference->byte_size) != 0)
            fail_msg("channels-last %s rank %u [%lld -> %lld], %u threads: differs from the reference",
                     rc->mode ? rc->mode : "nearest", rc->rank, (long long)rc->in[rc->rank - 1],
                     (long long)rc->out[rc->rank - 1], threads);
        kiln_tensor_free(plain);
        kiln_tensor_free(x), kiln_tensor_free(x_last), kiln_tensor_free(fast), kiln_tensor_free(reference);
    }
    if (slot.release)
        slot.release(slot.data);
}

static void channels_last_is_the_reference_bit_for_bit(void **state)
{
    (void)state;
    static const char *const modes[] = {"linear", NULL};
    static const char *const coordinates[] = {NULL, "align_corners", "asymmetric"};
    for (size_t m = 0; m < 2; m++)
        for (size_t c = 0; c < 3; c++)
            for (int keep = 0; keep < 2; keep++) {
                resize_case rc = planes(modes[m], coordinates[c], 2, 5, 7, 9, 14, 13);
                check_channels_last(&rc, keep, 1);
            }
    /* a UNet's upsample, large enough for two threads */
    resize_case large = planes("linear", NULL, 1, 32, 32, 32, 64, 64);
    check_channels_last(&large, true, 2);
    check_channels_last(&large, false, 2);
    /* rank 3 and 5 channels-last: declined, for the session to convert */
    resize_case declined[2] = {{.mode = "linear", .by_sizes = true, .rank = 3, .in = {1, 3, 9}, .out = {1, 3, 20},
                                .dtype = KILN_F32},
                               {.mode = "linear", .by_sizes = true, .rank = 5, .in = {1, 2, 3, 4, 5},
                                .out = {1, 2, 3, 8, 10}, .dtype = KILN_F32}};
    kiln_node_state slot = {NULL, NULL};
    for (int d = 0; d < 2; d++) {
        kiln_node_attribute attributes[4];
        uint32_t attribute_count = case_attributes(&declined[d], attributes);
        kiln_tensor *x = random_tensor(KILN_F32, declined[d].rank, declined[d].in, false);
        kiln_tensor *y = new_poisoned_tensor(KILN_F32, declined[d].rank, declined[d].out);
        kiln_kernel_context context = {.threads = 1, .state = &slot, .channels_last_operands = 1u,
                                       .result_may_be_channels_last = true};
        const kiln_tensor *inputs[] = {x};
        kiln_kernel_call call = {inputs, 1, y, attributes, attribute_count, &context};
        kiln_error err;
        bool ran = true;
        assert_int_equal(kiln_op_find("resize")->fast(&call, &ran, &err), KILN_OK);
        assert_false(ran);
        kiln_tensor_free(x), kiln_tensor_free(y);
    }
    if (slot.release)
        slot.release(slot.data);
}

static void nearest_is_the_reference_bit_for_bit(void **state)
{
    (void)state;
    static const char *const roundings[] = {NULL, "round_prefer_ceil", "floor", "ceil"};
    static const char *const coordinates[] = {NULL, "pytorch_half_pixel", "align_corners", "asymmetric"};
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_U8, KILN_F16, KILN_I64, KILN_F64, KILN_BF16, KILN_I32};
    uint32_t n = 0;
    for (size_t r = 0; r < 4; r++)
        for (size_t c = 0; c < 4; c++)
            for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++, n++) {
                int64_t h = 3 + n % 7, w = 2 + n % 11;
                resize_case rc = planes(NULL, coordinates[c], 1, 1 + n % 3, h, w, (h * (2 + n % 3)) / 2,
                                        (w * (1 + n % 4) + 1) / 2);
                rc.nearest = roundings[r];
                rc.dtype = dtypes[d];
                rc.to = n % 5 == 0;
                assert_true(check(&rc, 1 + n % 2));
            }
    resize_case large = planes(NULL, NULL, 2, 32, 32, 32, 64, 64);
    assert_true(check(&large, 2));
}

/* Ranks 1, 2, 3 and 5: the last two axes (one for rank 1) resized, the others kept. */
static void every_rank_is_the_reference(void **state)
{
    (void)state;
    resize_case one = {.mode = "linear", .by_sizes = true, .rank = 1, .in = {9}, .out = {20}, .dtype = KILN_F32};
    assert_true(check(&one, 1));
    one.mode = NULL;
    assert_true(check(&one, 1));
    resize_case two = {.mode = "linear", .by_sizes = true, .rank = 2, .in = {5, 6}, .out = {9, 4},
                       .dtype = KILN_F32};
    assert_true(check(&two, 1));
    resize_case three = {.mode = "linear", .rank = 3, .in = {4, 6, 8}, .out = {4, 12, 4}, .scales = {1, 2, 0.5},
                         .dtype = KILN_F32};
    assert_true(check(&three, 2));
    resize_case five = {.mode = "linear", .by_sizes = true, .rank = 5, .in = {2, 2, 3, 5, 6},
                        .out = {2, 2, 3, 11, 7}, .dtype = KILN_F32};
    assert_true(check(&five, 1));
}

/* What the fast path leaves to the reference (which then computes it). */
static void declines_the_rest(void **state)
{
    (void)state;
    resize_case cubic = planes("cubic", NULL, 1, 2, 5, 5, 9, 9);
    assert_false(check(&cubic, 1));
    resize_case f64 = planes("linear", NULL, 1, 2, 5, 5, 9, 9);
    f64.dtype = KILN_F64;
    assert_false(check(&f64, 1));
    resize_case half = f64;
    half.dtype = KILN_F16;
    assert_false(check(&half, 1));
    resize_case channel_resized = planes("linear", NULL, 1, 2, 5, 5, 9, 9);
    channel_resized.out[1] = 4; /* an axis before the last two resized */
    assert_false(check(&channel_resized, 1));
    /* a scale that keeps the size of an earlier axis without being 1 (floor(4 * 1.2) = 4) */
    resize_case kept_size = {.mode = "linear", .rank = 3, .in = {4, 5, 5}, .out = {4, 10, 10},
                             .scales = {1.2, 2, 2}, .dtype = KILN_F32};
    assert_false(check(&kept_size, 1));
    /* no context: the reference */
    kiln_tensor *x = random_tensor(KILN_F32, 4, (int64_t[]){1, 1, 2, 2}, false);
    kiln_tensor *y = new_poisoned_tensor(KILN_F32, 4, (int64_t[]){1, 1, 4, 4});
    kiln_node_attribute sizes = {.name = "sizes", .type = KILN_ATTRIBUTE_INTS, .count = 4,
                                 .ints = (int64_t[]){1, 1, 4, 4}};
    const kiln_tensor *inputs[] = {x};
    kiln_kernel_call call = {inputs, 1, y, &sizes, 1, NULL};
    kiln_error err;
    bool ran = true;
    assert_int_equal(kiln_op_find("resize")->fast(&call, &ran, &err), KILN_OK);
    assert_false(ran);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* One slot across shapes: tables rebuilt for a new shape, and right for each. */
static void tables_follow_the_shape(void **state)
{
    (void)state;
    kiln_node_state slot = {NULL, NULL};
    static const int64_t shapes[][4] = {{4, 4, 8, 8}, {5, 7, 9, 3}, {4, 4, 8, 8}, {30, 30, 61, 59}, {2, 2, 3, 3}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        resize_case rc = planes("linear", "align_corners", 1, 3, shapes[i][0], shapes[i][1], shapes[i][2],
                                shapes[i][3]);
        rc.to = true;
        kiln_tensor *x = random_tensor(KILN_F32, 4, rc.in, true);
        assert_true(run_both(&rc, x, &slot, 1));
        kiln_tensor_free(x);
    }
    slot.release(slot.data);
}

/* `kiln version` names the path. */
static void features_name_the_path(void **state)
{
    (void)state;
    bool listed = false;
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        listed = listed || strcmp(*f, "resize-tables") == 0;
    assert_true(listed);
}

/* The AVX2 and plain C copies of the linear sums, on a machine that has wider ones: the same checks. */
static void narrower_copies_match_too(void **state)
{
    for (unsigned bits = 256; bits >= 128; bits /= 2) {
        kiln_linear_rows_limit_width(bits);
        linear_is_the_reference_bit_for_bit(state);
        every_rank_is_the_reference(state);
        tables_follow_the_shape(state);
    }
    kiln_linear_rows_limit_width(512);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_is_the_reference_bit_for_bit),
        cmocka_unit_test(nearest_is_the_reference_bit_for_bit),
        cmocka_unit_test(channels_last_is_the_reference_bit_for_bit),
        cmocka_unit_test(every_rank_is_the_reference),
        cmocka_unit_test(declines_the_rest),
        cmocka_unit_test(tables_follow_the_shape),
        cmocka_unit_test(features_name_the_path),
        cmocka_unit_test(narrower_copies_match_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
