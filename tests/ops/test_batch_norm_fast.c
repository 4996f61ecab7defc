/*
 * test_batch_norm_fast.c — batch_norm's f32 fast path (norm.c,
 * batch_norm_fast_f32; spec/opset.md "Fast paths") against the reference
 * kernel: every element within 1 ulp, NaN where the reference has NaN,
 * infinities exact, in the plain and the channels-last layout, on 1 and 2
 * threads (the same bits on both), over shapes whose channel counts are
 * and are not multiples of the channel block; and the relu it applies
 * when offered (kernel_context.h): the relu kernel's bits on its own
 * result, declined where the layout or the activation does not allow it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "kernel_context.h"
#include "op_registry.h"
#include "tensor.h"

static uint64_t rng = 0x2545F4914F6CDD1Du;

static float random_float(float lo, float hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (float)((double)(rng >> 11) / 9007199254740992.0);
}

static kiln_tensor *tensor(uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, rank, shape, &t, &err), KILN_OK);
    return t;
}

static void run(const kiln_tensor *const *inputs, kiln_tensor *out, kiln_kernel_context *context)
{
    const kiln_op_def *def = kiln_op_find("batch_norm");
    assert_non_null(def);
    kiln_node_attribute eps = {.name = (char *)"epsilon", .type = KILN_ATTRIBUTE_FLOAT, .f = 1e-5};
    memset(out->data, 0x7F, out->byte_size);
    kiln_node_state state = {NULL, NULL};
    if (context)
        context->state = &state;
    kiln_kernel_call call = {inputs, 5, out, &eps, 1, context};
    kiln_error err;
    if (context && !context->reference_only) {
        /* the session's order: the fast path, which takes every f32 call */
        bool ran = false;
        assert_non_null(def->fast);
        assert_int_equal(def->fast(&call, &ran, &err), KILN_OK);
        assert_true(ran);
    } else {
        assert_int_equal(def->run(&call, &err), KILN_OK);
    }
    if (state.release)
        state.release(state.data);
}

/* Ulps between two finite floats of the same sign region. */
static int64_t ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
    if (ia < 0)
        ia = INT32_MIN - ia;
    if (ib < 0)
        ib = INT32_MIN - ib;
    return (int64_t)ia - (int64_t)ib < 0 ? (int64_t)ib - ia : (int64_t)ia - ib;
}

static void check_shape(int64_t n, int64_t c, int64_t h, int64_t w, bool channels_last)
{
    int64_t shape[4] = {n, c, h, w};
    kiln_tensor *x = tensor(4, shape), *params[4];
    for (int i = 0; i < 4; i++)
        params[i] = tensor(1, &c);
    float *xv = x->data;
    for (uint64_t e = 0; e < x->element_count; e++)
        xv[e] = random_float(-50.0f, 50.0f);
    xv[0] = NAN, xv[x->element_count / 2] = INFINITY, xv[x->element_count - 1] = -0.0f;
    for (int64_t k = 0; k < c; k++) {
        ((float *)params[0]->data)[k] = random_float(-3.0f, 3.0f);      /* scale */
        ((float *)params[1]->data)[k] = random_float(-1.0f, 1.0f);      /* bias */
        ((float *)params[2]->data)[k] = random_float(-20.0f, 20.0f);    /* mean */
        ((float *)params[3]->data)[k] = random_float(0.0f, 4.0f);       /* var */
    }
    ((float *)params[3]->data)[0] = 0.0f; /* eps alone */
    const kiln_tensor *inputs[5] = {x, params[0], params[1], params[2], params[3]};
    kiln_tensor *reference = tensor(4, shape), *one = tensor(4, shape), *two = tensor(4, shape);
    kiln_kernel_context reference_context, fast;
    memset(&reference_context, 0, sizeof reference_context);
    reference_context.threads = 1;
    reference_context.reference_only = true;
    reference_context.channels_last_operands = channels_last ? 1u : 0u;
    run(inputs, reference, &reference_context);
    memset(&fast, 0, sizeof fast);
    fast.threads = 1;
    fast.channels_last_operands = channels_last ? 1u : 0u;
    run(inputs, one, &fast);
    assert_int_equal(fast.path, KILN_PATH_VECTOR);
    fast.threads = 2;
    run(inputs, two, &fast);
    const float *r = reference->data, *a = one->data, *b = two->data;
    for (uint64_t e = 0; e < x->element_count; e++) {
        if (isnan(r[e])) {
            if (!isnan(a[e]))
                fail_msg("element %llu: %g where the reference has NaN", (unsigned long long)e, (double)a[e]);
        } else if (isinf(r[e]) || isinf(a[e])) {
            if (a[e] != r[e])
                fail_msg("element %llu: %g where the reference has %g", (unsigned long long)e, (double)a[e],
                         (double)r[e]);
        } else if (ulps(a[e], r[e]) > 1) {
            fail_msg("[%lld, %lld, %lld, %lld]%s element %llu: %.9g, reference %.9g", (long long)n, (long long)c,
                     (long long)h, (long long)w, channels_last ? " channels-last" : "", (unsigned long long)e,
                     (double)a[e], (double)r[e]);
        }
    }
    assert_memory_equal(a, b, x->byte_size); /* threads change no bit */
    kiln_tensor_free(x), kiln_tensor_free(reference), kiln_tensor_free(one), kiln_tensor_free(two);
    for (int i = 0; i < 4; i++)
        kiln_tensor_free(params[i]);
}

static void fast_batch_norm_is_within_one_ulp(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {{1, 1, 1, 1},   {1, 3, 5, 7},    {2, 64, 8, 8},  {1, 65, 9, 11},
                                        {3, 130, 4, 4}, {1, 256, 24, 24}, {2, 17, 33, 33}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int layout = 0; layout < 2; layout++)
            check_shape(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], layout == 1);
}

/* Run the relu kernel on `in` into `out` (same shape). */
static void run_relu(const kiln_tensor *in, kiln_tensor *out)
{
    const kiln_op_def *def = kiln_op_find("relu");
    assert_non_null(def);
    kiln_kernel_context context;
    memset(&context, 0, sizeof context);
    context.threads = 1;
    kiln_node_state state = {NULL, NULL};
    context.state = &state;
    const kiln_tensor *inputs[1] = {in};
    kiln_kernel_call call = {inputs, 1, out, NULL, 0, &context};
    kiln_error err;
    assert_int_equal(def->run(&call, &err), KILN_OK);
}

/*
 * batch_norm offered the relu after it writes relu(batch_norm(x)) into
 * the offer's output, bit for bit what the relu kernel makes of its own
 * result, on 1 and 2 threads and in both layouts; it declines a
 * leaky_relu, and a channels-last result the relu's slot may not hold.
 */
static void fast_batch_norm_applies_an_offered_relu(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {{1, 3, 5, 7}, {2, 65, 9, 11}, {1, 256, 24, 24}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int layout = 0; layout < 2; layout++) {
            const int64_t *shape = shapes[i];
            int64_t c = shape[1];
            kiln_tensor *x = tensor(4, shape), *params[4];
            for (int k = 0; k < 4; k++)
                params[k] = tensor(1, &c);
            float *xv = x->data;
            for (uint64_t e = 0; e < x->element_count; e++)
                xv[e] = random_float(-50.0f, 50.0f);
            xv[0] = NAN, xv[1] = -INFINITY, xv[x->element_count - 1] = -0.0f;
            for (int64_t k = 0; k < c; k++) {
                ((float *)params[0]->data)[k] = random_float(-3.0f, 3.0f);
                ((float *)params[1]->data)[k] = k == 0 ? 0.0f : random_float(-1.0f, 1.0f);
                ((float *)params[2]->data)[k] = random_float(-20.0f, 20.0f);
                ((float *)params[3]->data)[k] = random_float(0.0f, 4.0f);
            }
            const kiln_tensor *inputs[5] = {x, params[0], params[1], params[2], params[3]};
            kiln_tensor *plain = tensor(4, shape), *expected = tensor(4, shape), *unused = tensor(4, shape);
            kiln_tensor *fused = tensor(4, shape);
            kiln_kernel_context context;
            memset(&context, 0, sizeof context);
            context.threads = 1;
            context.channels_last_operands = layout ? 1u : 0u;
            run(inputs, plain, &context);
            run_relu(plain, expected);
            for (uint32_t threads = 1; threads <= 2; threads++) {
                kiln_fusion_offer offer = {{KILN_ACTIVATION_RELU, 0.0f, 0.0f, INFINITY}, fused, true, false};
                context.threads = threads;
                context.fusion = &offer;
                memset(fused->data, 0x7F, fused->byte_size);
                run(inputs, unused, &context);
                assert_true(offer.applied);
                assert_memory_equal(fused->data, expected->data, x->byte_size);
                /* A leaky_relu is not applied; nor, channels-last, into a slot that must be row-major. */
                kiln_fusion_offer leaky = {{KILN_ACTIVATION_LEAKY_RELU, 0.1f, 0.0f, INFINITY}, fused, true, false};
                context.fusion = &leaky;
                run(inputs, unused, &context);
                assert_false(leaky.applied);
                assert_memory_equal(unused->data, plain->data, x->byte_size);
                kiln_fusion_offer row_major = {{KILN_ACTIVATION_RELU, 0.0f, 0.0f, INFINITY}, fused, false, false};
                context.fusion = &row_major;
                run(inputs, unused, &context);
                assert_int_equal(row_major.applied, layout == 0);
                /* In place: the relu's result written over x itself (the session's plan may put it there). */
                kiln_tensor *in_place = tensor(4, shape);
                memcpy(in_place->data, x->data, x->byte_size);
                const kiln_tensor *own[5] = {in_place, params[0], params[1], params[2], params[3]};
                kiln_fusion_offer over_x = {{KILN_ACTIVATION_RELU, 0.0f, 0.0f, INFINITY}, in_place, true, false};
                context.fusion = &over_x;
                run(own, unused, &context);
                assert_true(over_x.applied);
                assert_memory_equal(in_place->data, expected->data, x->byte_size);
                kiln_tensor_free(in_place);
                context.fusion = NULL;
            }
            kiln_tensor_free(x), kiln_tensor_free(plain), kiln_tensor_free(expected), kiln_tensor_free(unused);
            kiln_tensor_free(fused);
            for (int k = 0; k < 4; k++)
                kiln_tensor_free(params[k]);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_batch_norm_is_within_one_ulp),
        cmocka_unit_test(fast_batch_norm_applies_an_offered_relu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
