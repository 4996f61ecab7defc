/*
 * test_value_bound.c — bounds on magnitudes carried from node to node
 * (lib/plan/value_bound.h), which let a fused conv or a max_pool skip the pass
 * over its operand (spec/opset.md "Fast paths").
 *
 * The rules are checked one op at a time; then CNN-like chains run with
 * fast paths and with the reference kernels at several input scales: the
 * outputs must agree, every carried bound must hold for every element of
 * its value (a bound too small would let a fused conv meet an input it
 * cannot compute exactly), and at ordinary scales only the first conv's
 * input is scanned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include <kiln/kiln.h>

#include "onednn.h"
#include "program.h"
#include "program_recipe.h"
#include "session.h"
#include "value_bound.h"

static kiln_value activation(recipe *r, const char *name, kiln_value x, double a, double b)
{
    kiln_attribute attributes[2];
    uint32_t count = 0;
    if (name[0] == 'l')
        attributes[count++] = (kiln_attribute){.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = a};
    if (name[0] == 'c') {
        attributes[count++] = (kiln_attribute){.name = "max", .type = KILN_ATTRIBUTE_FLOAT, .f = b};
        attributes[count++] = (kiln_attribute){.name = "min", .type = KILN_ATTRIBUTE_FLOAT, .f = a};
    }
    return recipe_op(r, name, 1, &x, count, attributes);
}

/* Node n's rule applied to `bounds`, as a run applies it. */
static double bound_after(const kiln_model *m, uint32_t n, const double *bounds)
{
    return kiln_bound_apply(kiln_bound_rule_of(m, n), &m->nodes[n], bounds);
}

static void each_rule(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", "[2, 8, 12, 12]");
    kiln_value outputs[] = {
        recipe_unary(&r, "relu", x),                 /* node 0 */
        activation(&r, "leaky_relu", x, -3.0, 0),    /* 1 */
        activation(&r, "clip", x, -0.5, 0.25),       /* 2 */
        recipe_binary(&r, "add", x, r.other),        /* 3 */
        recipe_binary(&r, "sub", x, r.other),        /* 4 */
        recipe_unary(&r, "sigmoid", x),              /* 5: no rule */
        recipe_op(&r, "concat", 2, (kiln_value[]){x, r.other}, 1,
                  &(kiln_attribute){.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1}), /* 6 */
        recipe_op(&r, "transpose", 1, &x, 1,
                  &(kiln_attribute){.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){0, 2, 3, 1},
                                    .count = 4}), /* 7 */
        recipe_op(&r, "slice", 1, &x, 2,
                  (kiln_attribute[]){{.name = "ends", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){4}, .count = 1},
                                     {.name = "starts", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1},
                                      .count = 1}}), /* 8 */
        recipe_unary(&r, "flatten", x),              /* 9 */
    };
    kiln_program *program = recipe_finish(&r, 10, outputs);
    const kiln_model *m = &program->model;
    double bounds[16];
    for (int i = 0; i < 16; i++)
        bounds[i] = INFINITY;
    /* Nothing known of x: nothing known after. */
    for (uint32_t n = 0; n < 10; n++)
        assert_true(isinf(bound_after(m, n, bounds)));
    bounds[0] = 2.0; /* x */
    assert_true(bound_after(m, 0, bounds) == 2.0);
    double leaky = bound_after(m, 1, bounds);
    assert_true(leaky >= 6.0 && leaky <= 6.0 * (1 + 1e-6));
    double clip = bound_after(m, 2, bounds);
    assert_true(clip >= 0.5 && clip <= 0.5 * (1 + 1e-6));
    assert_true(isinf(bound_after(m, 3, bounds))); /* other unknown */
    assert_true(isinf(bound_after(m, 6, bounds))); /* concat of x and the unknown other */
    /* Moving x's elements keeps x's bound. */
    assert_true(bound_after(m, 7, bounds) == 2.0);
    assert_true(bound_after(m, 8, bounds) == 2.0);
    assert_true(bound_after(m, 9, bounds) == 2.0);
    bounds[1] = 3.0;                                           /* other */
    assert_true(bound_after(m, 6, bounds) == 3.0);           /* the larger operand's */
    double sum = bound_after(m, 3, bounds), difference = bound_after(m, 4, bounds);
    assert_true(sum >= 5.0 && sum <= 5.0 * (1 + 1e-6));
    assert_true(difference == sum);
    assert_true(isinf(bound_after(m, 5, bounds)));
    /* Beyond the f32 range: unknown (the result may have overflowed). */
    bounds[0] = FLT_MAX;
    bounds[1] = FLT_MAX;
    assert_true(isinf(bound_after(m, 3, bounds)));
    kiln_program_free(program);
}

/* conv+relu, max_pool, conv+clip, avg_pool, conv+leaky_relu, add: each result an output, to be inspected. */
static kiln_program *chain(void)
{
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value y[6];
    y[0] = recipe_unary(&r, "relu", recipe_conv(&r, x, 8, 16, 3, 0.5f));
    y[1] = recipe_pool(&r, "max_pool", y[0], 2);
    y[2] = activation(&r, "clip", recipe_conv(&r, y[1], 16, 16, 3, 0.5f), -1.0, 40.0);
    y[3] = recipe_pool(&r, "avg_pool", y[2], 3);
    y[4] = activation(&r, "leaky_relu", recipe_conv(&r, y[3], 16, 8, 3, 0.5f), 0.5, 0);
    y[5] = recipe_binary(&r, "add", y[4], y[4]);
    return recipe_finish(&r, 6, y);
}

typedef struct scan_count {
    uint64_t before, during;
} scan_count;

static void measure(void *user, bool before)
{
    scan_count *c = user;
    if (before)
        c->before = kiln_onednn_magnitude_scans();
    else
        c->during = kiln_onednn_magnitude_scans() - c->before;
}

/* Every element of every output lies within the bound the fast run carried for it. @return finite bounds. */
static uint32_t assert_bounds_hold(const kiln_program *program, const kiln_session *s)
{
    uint32_t finite = 0;
    for (uint32_t o = 0; o < program->model.output_count; o++) {
        double bound = kiln_session_value_bound(s, program->model.outputs[o].value);
        if (isinf(bound))
            continue;
        finite++;
        const kiln_tensor *t = kiln_session_output(s, o);
        const float *v = kiln_tensor_const_data(t);
        for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
            if (!(fabs((double)v[i]) <= bound))
                fail_msg("output %u element %llu is %g, above its carried bound %g", o, (unsigned long long)i,
                         (double)v[i], bound);
    }
    return finite;
}

static void carried_bounds_hold_and_replace_scans(void **state)
{
    (void)state;
    kiln_program *program = chain();
    recipe_sessions sessions = recipe_sessions_new(program, 2);
    static const float scales[] = {2.0f, 1e30f, 1e36f};
    for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
        for (int round = 0; round < 2; round++) {
            kiln_tensor *x = recipe_input(8, scales[k], 0);
            scan_count scans = {0, 0};
            recipe_sessions_run(&sessions, program, &x, measure, &scans);
            uint32_t finite = assert_bounds_hold(program, sessions.fast);
            if (kiln_onednn_enabled() && k == 0) {
                /* Ordinary values: a bound for every output; only x is scanned (by the first fused conv). */
                assert_int_equal(finite, 6);
                assert_int_equal(scans.during, 1);
            }
            kiln_tensor_free(x);
        }
    }
    /* A NaN in x: nothing is known past it, and the outputs still agree. */
    kiln_tensor *x = recipe_input(8, 2.0f, NAN);
    recipe_sessions_run(&sessions, program, &x, NULL, NULL);
    assert_int_equal(assert_bounds_hold(program, sessions.fast), 0);
    kiln_tensor_free(x);
    recipe_sessions_free(&sessions);
    kiln_program_free(program);
}

/*
 * A SqueezeNet fire module and the pool after it: conv+relu, two convs+relu
 * of its result (1x1 and 3x3, both fused: the 1x1 reads channels-last
 * data), their concat, max_pool, conv+relu. The concat carries the larger
 * of its operands' bounds, so neither the pool nor the last conv scans its
 * operand: only x is scanned, by the first conv.
 */
static void a_concat_carries_its_operands_bounds(void **state)
{
    (void)state;
    recipe r;
    kiln_attribute channels = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value squeezed = recipe_unary(&r, "relu", recipe_conv(&r, x, 8, 4, 3, 0.5f));
    kiln_value wide = recipe_unary(&r, "relu", recipe_conv(&r, squeezed, 4, 8, 1, 0.5f));
    kiln_value around = recipe_unary(&r, "relu", recipe_conv(&r, squeezed, 4, 8, 3, 0.5f));
    kiln_value joined = recipe_op(&r, "concat", 2, (kiln_value[]){wide, around}, 1, &channels);
    kiln_value pooled = recipe_pool(&r, "max_pool", joined, 2);
    kiln_value y[2] = {joined, recipe_unary(&r, "relu", recipe_conv(&r, pooled, 16, 8, 3, 0.5f))};
    kiln_program *program = recipe_finish(&r, 2, y);
    recipe_sessions sessions = recipe_sessions_new(program, 1);
    for (int round = 0; round < 2; round++) {
        kiln_tensor *input = recipe_input(8, 2.0f, 0);
        scan_count scans = {0, 0};
        recipe_sessions_run(&sessions, program, &input, measure, &scans);
        uint32_t finite = assert_bounds_hold(program, sessions.fast);
        if (kiln_onednn_enabled() && recipe_convs_write_channels_last()) {
            assert_int_equal(finite, 2);
            assert_int_equal(scans.during, 1);
        }
        kiln_tensor_free(input);
    }
    recipe_sessions_free(&sessions);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rule),
        cmocka_unit_test(a_concat_carries_its_operands_bounds),
        cmocka_unit_test(carried_bounds_hold_and_replace_scans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
