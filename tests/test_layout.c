/*
 * test_layout.c — results kept channels-last between the nodes that can
 * read that layout (lib/layout.h, spec/opset.md "Fast paths").
 *
 * Each program runs in a session with fast paths and in one with the
 * reference kernels only, and their outputs must agree: a value read in
 * the wrong layout, or converted wrongly, gives other numbers. The plan
 * (which results may stay channels-last) is checked node by node, and on
 * builds with oneDNN the counters show that the layout was kept
 * (kiln_onednn_channels_last_runs) and converted back only where a node
 * needs row-major data (kiln_layout_conversions).
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

#include "layout.h"
#include "onednn.h"
#include "program.h"

enum { BATCH = 2, SIDE = 12, MAX_WEIGHTS = 16 };

static uint64_t random_state = 0x13198a2e03707344u;

static float random_unit(void)
{
    random_state = random_state * 6364136223846793005u + 1442695040888963407u;
    return (float)((random_state >> 40) / (double)(1u << 24)) * 2.0f - 1.0f; /* [-1, 1) */
}

/* A program under construction, and the weight data it borrows until it is encoded. */
typedef struct recipe {
    kiln_builder *b;
    kiln_value other; /* the second input, when there is one */
    float *data[MAX_WEIGHTS];
    uint32_t weights;
} recipe;

static kiln_value add_weight(recipe *r, uint32_t rank, const int64_t *shape, float scale)
{
    uint64_t count = 1;
    for (uint32_t i = 0; i < rank; i++)
        count *= (uint64_t)shape[i];
    assert_true(r->weights < MAX_WEIGHTS);
    float *data = malloc(count * sizeof *data);
    assert_non_null(data);
    for (uint64_t i = 0; i < count; i++)
        data[i] = random_unit() * scale;
    r->data[r->weights] = data;
    char name[16];
    snprintf(name, sizeof name, "w%u", r->weights++);
    kiln_value v;
    kiln_error err;
    assert_int_equal(kiln_builder_add_weight(r->b, name, KILN_WEIGHT_PARAMETER, KILN_F32, rank, shape, data, &v, &err),
                     KILN_OK);
    return v;
}

/* conv of x (`in` channels) to `out` channels, a k x k kernel padded to keep the size. */
static kiln_value conv(recipe *r, kiln_value x, int64_t in, int64_t out, int64_t k)
{
    const int64_t weight_shape[] = {out, in, k, k}, bias_shape[] = {out};
    const int64_t pads[] = {k / 2, k / 2, k / 2, k / 2};
    kiln_value operands[3] = {x, add_weight(r, 4, weight_shape, 0.5f), add_weight(r, 1, bias_shape, 0.25f)};
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    kiln_value y;
    kiln_error err;
    assert_int_equal(kiln_builder_add_op_with_attributes(r->b, "conv", 3, operands, 1, attributes, &y, &err), KILN_OK);
    return y;
}

static kiln_value op(recipe *r, const char *name, uint32_t count, const kiln_value *operands)
{
    kiln_value y;
    kiln_error err;
    assert_int_equal(kiln_builder_add_op(r->b, name, count, operands, &y, &err), KILN_OK);
    return y;
}

static kiln_value unary(recipe *r, const char *name, kiln_value x)
{
    return op(r, name, 1, &x);
}

static kiln_value binary(recipe *r, const char *name, kiln_value a, kiln_value b)
{
    return op(r, name, 2, (kiln_value[]){a, b});
}

/* A 2x2 pool of stride 2 (`window` 2), or 3x3 of stride 1 padded (`window` 3). */
static kiln_value pool(recipe *r, const char *name, kiln_value x, int64_t window)
{
    const int64_t kernel[] = {window, window}, strides[] = {4 - window, 4 - window};
    const int64_t pads[] = {window / 3, window / 3, window / 3, window / 3};
    kiln_attribute attributes[] = {
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    kiln_value y;
    kiln_error err;
    assert_int_equal(kiln_builder_add_op_with_attributes(r->b, name, 1, &x, 3, attributes, &y, &err), KILN_OK);
    return y;
}

static kiln_value start(recipe *r, const char *x_shape, const char *other_shape)
{
    kiln_error err;
    kiln_value x;
    memset(r, 0, sizeof *r);
    assert_int_equal(kiln_builder_new("layout", &r->b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(r->b, "x", KILN_F32, x_shape, &x, &err), KILN_OK);
    if (other_shape)
        assert_int_equal(kiln_builder_add_input(r->b, "other", KILN_F32, other_shape, &r->other, &err), KILN_OK);
    return x;
}

static kiln_program *finish(recipe *r, kiln_value y)
{
    kiln_error err;
    void *bytes;
    size_t size;
    kiln_program *program;
    assert_int_equal(kiln_builder_add_output(r->b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(r->b, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(r->b);
    for (uint32_t i = 0; i < r->weights; i++)
        free(r->data[i]);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, &err), KILN_OK);
    free(bytes);
    return program;
}

static void assert_close(const kiln_tensor *got, const kiln_tensor *expected)
{
    const float *a = kiln_tensor_const_data(got), *e = kiln_tensor_const_data(expected);
    assert_int_equal(kiln_tensor_element_count(got), kiln_tensor_element_count(expected));
    for (uint64_t i = 0; i < kiln_tensor_element_count(got); i++) {
        bool same = isnan(e[i]) ? isnan(a[i])
                                : (isinf(e[i]) ? a[i] == e[i] : fabsf(a[i] - e[i]) <= 1e-4f * (1 + fabsf(e[i])));
        if (!same)
            fail_msg("element %llu is %.9g, the reference %.9g", (unsigned long long)i, (double)a[i], (double)e[i]);
    }
}

/* Every input of these programs is [BATCH, channels, SIDE, SIDE]. */
static kiln_tensor *random_tensor(int64_t channels, float special)
{
    const int64_t shape[] = {BATCH, channels, SIDE, SIDE};
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, shape, &t, &err), KILN_OK);
    float *v = kiln_tensor_data(t);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        v[i] = random_unit() * 2;
    if (special != 0)
        v[kiln_tensor_element_count(t) / 3] = special;
    return t;
}

/* What one fast run did: results left channels-last, and values converted back. */
typedef struct layout_counts {
    uint64_t kept, converted;
} layout_counts;

/*
 * Run `program` twice (x with `special` in one element when not 0) with
 * fast paths and with the reference kernels; the outputs must agree.
 * @return the counts of the second fast run (the first builds primitives).
 */
static layout_counts check(kiln_program *program, int64_t channels, float special)
{
    kiln_session_options fast_options, reference_options;
    kiln_session_options_default(&fast_options);
    kiln_session_options_default(&reference_options);
    reference_options.reference_kernels = true;
    kiln_session *fast, *reference;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &fast_options, &fast, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, &reference_options, &reference, &err), KILN_OK);
    layout_counts counts = {0, 0};
    for (int round = 0; round < 2; round++) {
        kiln_tensor *inputs[2] = {NULL, NULL};
        for (uint32_t i = 0; i < program->model.input_count; i++) {
            inputs[i] = random_tensor(channels, i == 0 ? special : 0);
            assert_int_equal(kiln_session_set_input(fast, program->model.inputs[i].name, inputs[i], &err), KILN_OK);
            assert_int_equal(kiln_session_set_input(reference, program->model.inputs[i].name, inputs[i], &err),
                             KILN_OK);
        }
        uint64_t kept = kiln_onednn_channels_last_runs(), converted = kiln_layout_conversions();
        if (kiln_session_run(fast, &err) != KILN_OK)
            fail_msg("fast run: %s", err.message);
        counts = (layout_counts){kiln_onednn_channels_last_runs() - kept, kiln_layout_conversions() - converted};
        if (kiln_session_run(reference, &err) != KILN_OK)
            fail_msg("reference run: %s", err.message);
        assert_close(kiln_session_output(fast, 0), kiln_session_output(reference, 0));
        for (uint32_t i = 0; i < 2; i++)
            kiln_tensor_free(inputs[i]);
    }
    kiln_session_free(fast);
    kiln_session_free(reference);
    return counts;
}

/* What kiln_layout_plan decided for node n. */
static bool may_stay(const kiln_program *program, uint32_t n)
{
    return program->channels_last_ok[n];
}

/*
 * conv, relu, max_pool, conv, add (a residual), relu, avg_pool, a
 * pointwise conv, global_avg_pool, flatten: every result between the
 * first conv and the global pool may stay channels-last, and does.
 */
static void a_cnn_keeps_channels_last_between_its_nodes(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value a = unary(&r, "relu", conv(&r, x, 8, 16, 3));        /* nodes 0, 1 (fused) */
    kiln_value pooled = pool(&r, "max_pool", a, 2);                  /* 2: [2, 16, 6, 6] */
    kiln_value c = conv(&r, pooled, 16, 16, 3);                      /* 3 */
    kiln_value sum = unary(&r, "relu", binary(&r, "add", c, pooled)); /* 4, 5 */
    kiln_value smooth = pool(&r, "avg_pool", sum, 3);                /* 6 */
    kiln_value pointwise = conv(&r, smooth, 16, 8, 1);               /* 7 */
    kiln_value global = unary(&r, "global_avg_pool", pointwise);     /* 8: [2, 8, 1, 1] */
    kiln_program *program = finish(&r, unary(&r, "flatten", global)); /* 9 */
    for (uint32_t n = 0; n <= 7; n++)
        assert_true(may_stay(program, n));
    assert_false(may_stay(program, 8)); /* read by flatten */
    assert_false(may_stay(program, 9)); /* the output, and rank 2 */
    layout_counts counts = check(program, 8, 0);
    if (kiln_onednn_enabled()) {
        /* Written channels-last: the fused conv+relu, max_pool, conv, avg_pool, the pointwise conv. */
        assert_int_equal(counts.kept, 5);
        assert_int_equal(counts.converted, 0);
    }
    kiln_program_free(program);
}

/* batch_norm of x with random per-channel parameters (a variance made non-negative by abs). */
static kiln_value batch_norm(recipe *r, kiln_value x, int64_t channels)
{
    const int64_t shape[] = {channels};
    kiln_value operands[5] = {x, add_weight(r, 1, shape, 2.0f), add_weight(r, 1, shape, 1.0f),
                              add_weight(r, 1, shape, 1.0f), 0};
    operands[4] = unary(r, "abs", add_weight(r, 1, shape, 1.0f));
    kiln_value y;
    kiln_error err;
    assert_int_equal(kiln_builder_add_op(r->b, "batch_norm", 5, operands, &y, &err), KILN_OK);
    return y;
}

/* conv, batch_norm, max_pool, batch_norm, global_avg_pool: batch_norm keeps the layout it reads. */
static void batch_norm_keeps_the_layout_of_x(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value c = conv(&r, x, 8, 24, 3);                         /* node 0 (abs of a variance: 1) */
    kiln_value n1 = batch_norm(&r, c, 24);                        /* 2 */
    kiln_value pooled = pool(&r, "max_pool", n1, 2);              /* 3 (abs: 4) */
    kiln_value n2 = batch_norm(&r, pooled, 24);                   /* 5 */
    kiln_program *program = finish(&r, unary(&r, "global_avg_pool", n2)); /* 6 */
    assert_true(may_stay(program, 0));
    assert_true(may_stay(program, 2));
    assert_true(may_stay(program, 3));
    assert_true(may_stay(program, 5));
    assert_false(may_stay(program, 1)); /* rank 1 */
    layout_counts counts = check(program, 8, 0);
    if (kiln_onednn_enabled()) {
        assert_int_equal(counts.kept, 2); /* conv, max_pool */
        assert_int_equal(counts.converted, 0);
    }
    kiln_program_free(program);
}

/* A result some node reads row-major (here reshape's flatten) is written row-major. */
static void a_result_read_row_major_is_written_row_major(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = start(&r, "[2, 4, 12, 12]", NULL);
    kiln_value c = conv(&r, x, 4, 4, 3);         /* 0: read by the next conv and by flatten */
    kiln_value d = conv(&r, c, 4, 4, 3);         /* 1 */
    kiln_value flat = unary(&r, "flatten", c);   /* 2 */
    kiln_value flat_d = unary(&r, "flatten", d); /* 3 */
    kiln_program *program = finish(&r, binary(&r, "add", flat, flat_d));
    assert_false(may_stay(program, 0));
    assert_false(may_stay(program, 1));
    layout_counts counts = check(program, 4, 0);
    assert_int_equal(counts.kept, 0);
    assert_int_equal(counts.converted, 0);
    kiln_program_free(program);
}

/*
 * Where the fast path declines at run time, the session converts: a NaN
 * in max_pool's x sends it to the reference kernel, which reads row-major
 * (and a NaN must come out where the reference puts it).
 */
static void a_kernel_that_needs_row_major_gets_it(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value c = conv(&r, x, 8, 16, 3);
    kiln_program *program = finish(&r, unary(&r, "global_max_pool", pool(&r, "max_pool", c, 2)));
    assert_true(may_stay(program, 0));
    layout_counts finite = check(program, 8, 0);
    layout_counts nan = check(program, 8, NAN);
    if (kiln_onednn_enabled()) {
        assert_int_equal(finite.kept, 2); /* the conv and the max_pool */
        assert_int_equal(finite.converted, 0);
        assert_int_equal(nan.kept, 1);      /* the conv */
        assert_int_equal(nan.converted, 1); /* its result, for the reference max_pool */
    }
    kiln_program_free(program);
}

/*
 * A binary elementwise op whose operands come in two layouts: the
 * channels-last one is converted and the op runs row-major. Its
 * elementwise neighbours keep the layout of what they read.
 */
static void elementwise_ops_follow_their_operands(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = start(&r, "[2, 8, 12, 12]", "[2, 8, 12, 12]"), other = r.other;
    kiln_value c = unary(&r, "sigmoid", conv(&r, x, 8, 8, 3)); /* 0, 1: channels-last */
    kiln_value plain = unary(&r, "tanh", other);               /* 2: row-major (from an input) */
    kiln_value mixed = binary(&r, "mul", c, plain);            /* 3: converts node 1's result */
    kiln_program *program = finish(&r, conv(&r, mixed, 8, 8, 1));
    for (uint32_t n = 0; n <= 3; n++)
        assert_true(may_stay(program, n));
    layout_counts counts = check(program, 8, 0);
    if (kiln_onednn_enabled()) {
        assert_int_equal(counts.kept, 1);      /* the first conv */
        assert_int_equal(counts.converted, 1); /* sigmoid's result, for mul */
    }
    kiln_program_free(program);
}

/* Converting back is a transpose of [positions, channels] per image. */
static void to_plain_transposes_each_image(void **state)
{
    (void)state;
    const int64_t shape[] = {2, 3, 2, 2};
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, shape, &t, &err), KILN_OK);
    float *v = kiln_tensor_data(t), scratch[24];
    /* Channels-last: element (n, c, p) at n*12 + p*3 + c holds 100n + 10c + p. */
    for (int n = 0; n < 2; n++)
        for (int p = 0; p < 4; p++)
            for (int c = 0; c < 3; c++)
                v[n * 12 + p * 3 + c] = (float)(100 * n + 10 * c + p);
    kiln_layout_to_plain(t, scratch);
    for (int i = 0; i < 24; i++)
        assert_true(v[i] == (float)(100 * (i / 12) + 10 * (i % 12 / 4) + i % 4));
    /* One position per channel: both layouts are one order, nothing moves. */
    const int64_t flat_shape[] = {2, 3, 1, 1};
    kiln_tensor *flat;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, flat_shape, &flat, &err), KILN_OK);
    assert_true(kiln_layout_is_trivial(flat));
    assert_false(kiln_layout_is_trivial(t));
    kiln_tensor_free(flat);
    kiln_tensor_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cnn_keeps_channels_last_between_its_nodes),
        cmocka_unit_test(a_result_read_row_major_is_written_row_major),
        cmocka_unit_test(batch_norm_keeps_the_layout_of_x),
        cmocka_unit_test(a_kernel_that_needs_row_major_gets_it),
        cmocka_unit_test(elementwise_ops_follow_their_operands),
        cmocka_unit_test(to_plain_transposes_each_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
