/*
 * test_layout.c — results kept channels-last between the nodes that can
 * read that layout (lib/plan/layout.h, spec/opset.md "Fast paths").
 *
 * Each program runs in a session with fast paths and in one with the
 * reference kernels only, and their outputs must agree: a value read in
 * the wrong layout, or converted wrongly, gives other numbers. The plan
 * (which results may stay channels-last) is checked node by node, and on
 * builds with oneDNN the counters show that the layout was kept
 * (kiln_onednn_channels_last_runs) and converted back only where a node
 * needs row-major data (kiln_layout_conversions), on CPUs where oneDNN's
 * convolutions write channels-last (recipe_convs_write_channels_last).
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

#include "channels_last.h"
#include "layout.h"
#include "onednn.h"
#include "program.h"
#include "program_recipe.h"

/* What one fast run did: results left channels-last, and values converted back. */
typedef struct layout_counts {
    uint64_t kept, converted;
} layout_counts;

/* Counters before a fast run, then what the run added. */
static void measure(void *user, bool before)
{
    layout_counts *counts = user;
    uint64_t kept = kiln_onednn_channels_last_runs(), converted = kiln_layout_conversions();
    *counts = before ? (layout_counts){kept, converted}
                     : (layout_counts){kept - counts->kept, converted - counts->converted};
}

/*
 * Run `program` twice (x with `special` in one element when not 0) with
 * fast paths and with the reference kernels; the outputs must agree.
 * @return the counts of the second fast run (the first builds primitives).
 */
static layout_counts check(kiln_program *program, int64_t channels, float special)
{
    recipe_sessions sessions = recipe_sessions_new(program, 2);
    layout_counts counts = {0, 0};
    for (int round = 0; round < 2; round++) {
        kiln_tensor *inputs[2] = {recipe_input(channels, 2.0f, special), recipe_input(channels, 2.0f, 0)};
        recipe_sessions_run(&sessions, program, inputs, measure, &counts);
        for (uint32_t i = 0; i < 2; i++)
            kiln_tensor_free(inputs[i]);
    }
    recipe_sessions_free(&sessions);
    return counts;
}

/* What kiln_layout_plan decided for node n. */
static bool may_stay(const kiln_program *program, uint32_t n)
{
    return program->nodes[n].channels_last_ok;
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
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value a = recipe_unary(&r, "relu", recipe_conv(&r, x, 8, 16, 3, 0.5f));     /* nodes 0, 1 (fused) */
    kiln_value pooled = recipe_pool(&r, "max_pool", a, 2);                          /* 2: [2, 16, 6, 6] */
    kiln_value c = recipe_conv(&r, pooled, 16, 16, 3, 0.5f);                        /* 3 */
    kiln_value sum = recipe_unary(&r, "relu", recipe_binary(&r, "add", c, pooled)); /* 4, 5 */
    kiln_value smooth = recipe_pool(&r, "avg_pool", sum, 3);                        /* 6 */
    kiln_value pointwise = recipe_conv(&r, smooth, 16, 8, 1, 0.5f);                 /* 7 */
    kiln_value global = recipe_unary(&r, "global_avg_pool", pointwise);             /* 8: [2, 8, 1, 1] */
    kiln_value flat = recipe_unary(&r, "flatten", global);                          /* 9 */
    kiln_program *program = recipe_finish(&r, 1, &flat);
    for (uint32_t n = 0; n <= 7; n++)
        assert_true(may_stay(program, n));
    assert_false(may_stay(program, 8)); /* read by flatten */
    assert_false(may_stay(program, 9)); /* the output, and rank 2 */
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last()) {
        /* Written channels-last: the fused conv+relu, max_pool, conv, avg_pool, the pointwise conv. */
        assert_int_equal(counts.kept, 5);
        assert_int_equal(counts.converted, 0);
    }
    kiln_program_free(program);
}

/* conv, batch_norm, max_pool, batch_norm, global_avg_pool: batch_norm keeps the layout it reads. */
static void batch_norm_keeps_the_layout_of_x(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value c = recipe_conv(&r, x, 8, 24, 3, 0.5f);           /* node 0 (abs of a variance: 1) */
    kiln_value n1 = recipe_batch_norm(&r, c, 24);                /* 2 */
    kiln_value pooled = recipe_pool(&r, "max_pool", n1, 2);      /* 3 (abs: 4) */
    kiln_value n2 = recipe_batch_norm(&r, pooled, 24);           /* 5 */
    kiln_value global = recipe_unary(&r, "global_avg_pool", n2); /* 6 */
    kiln_program *program = recipe_finish(&r, 1, &global);
    assert_true(may_stay(program, 0));
    assert_true(may_stay(program, 2));
    assert_true(may_stay(program, 3));
    assert_true(may_stay(program, 5));
    assert_false(may_stay(program, 1)); /* rank 1 */
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last()) {
        assert_int_equal(counts.kept, 2); /* conv, max_pool */
        assert_int_equal(counts.converted, 0);
    }
    kiln_program_free(program);
}

/*
 * A node that is not run reads nothing: a conv whose other reader is a
 * dead sigmoid (what x * sigmoid(x) -> silu leaves) may stay channels-last.
 */
static void a_dead_reader_does_not_keep_a_result_row_major(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value c = recipe_conv(&r, x, 8, 8, 3, 0.5f);                  /* node 0 */
    kiln_value dead = recipe_unary(&r, "sigmoid", c);                   /* 1: nobody reads it */
    (void)dead;
    kiln_value s = recipe_unary(&r, "silu", c);                         /* 2 */
    kiln_value g = recipe_unary(&r, "global_avg_pool", recipe_conv(&r, s, 8, 8, 3, 0.5f));
    kiln_program *program = recipe_finish(&r, 1, &g);
    assert_false(program->live[1]);
    assert_true(may_stay(program, 0));
    assert_true(may_stay(program, 2));
    check(program, 8, 0);
    kiln_program_free(program);
}

/*
 * An inception-like block: two convs of one x, joined along the channels
 * by concat, read by a pointwise conv: the concat takes its operands
 * channels-last and writes its result so (role CHANNEL_CONCAT), with no
 * conversion, and the outputs agree with the reference kernels. A concat
 * along another axis is row-major only.
 */
static void a_channel_concat_keeps_channels_last(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value a = recipe_conv(&r, x, 8, 16, 3, 0.5f);                 /* node 0 */
    kiln_value b = recipe_conv(&r, x, 8, 8, 3, 0.5f);                  /* 1 */
    kiln_attribute channels = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    kiln_value joined = recipe_op(&r, "concat", 2, (kiln_value[]){a, b}, 1, &channels); /* 2: [2, 24, 12, 12] */
    kiln_value c = recipe_conv(&r, joined, 24, 8, 1, 0.5f);            /* 3 */
    kiln_value pooled = recipe_unary(&r, "global_avg_pool", c);        /* 4 */
    kiln_program *program = recipe_finish(&r, 1, &pooled);
    assert_int_equal(kiln_layout_role_of(&program->model, 2), KILN_LAYOUT_CHANNEL_CONCAT);
    assert_true(may_stay(program, 0));
    assert_true(may_stay(program, 1));
    assert_true(may_stay(program, 2));
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(counts.converted, 0);
    layout_counts special = check(program, 8, NAN);
    (void)special;
    kiln_program_free(program);

    /* One operand channels-last (a conv's), one row-major (the program's
     * input): the concat transposes the second into its channels-last
     * result, converting nothing. */
    recipe mixed;
    kiln_value m = recipe_start(&mixed, "[2, 8, 12, 12]", NULL);
    kiln_value from_conv = recipe_conv(&mixed, m, 8, 16, 3, 0.5f);
    kiln_value both = recipe_op(&mixed, "concat", 2, (kiln_value[]){from_conv, m}, 1, &channels);
    kiln_value after = recipe_unary(&mixed, "global_avg_pool", recipe_conv(&mixed, both, 24, 8, 3, 0.5f));
    kiln_program *mixed_program = recipe_finish(&mixed, 1, &after);
    assert_true(may_stay(mixed_program, 1));
    layout_counts mixed_counts = check(mixed_program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(mixed_counts.converted, 0);
    kiln_program_free(mixed_program);

    /* Along the width: every operand row-major. */
    recipe w;
    kiln_value y = recipe_start(&w, "[2, 8, 12, 12]", NULL);
    kiln_value p = recipe_conv(&w, y, 8, 8, 3, 0.5f);
    kiln_value q = recipe_conv(&w, y, 8, 8, 3, 0.5f);
    kiln_attribute width = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 3};
    kiln_value wide = recipe_op(&w, "concat", 2, (kiln_value[]){p, q}, 1, &width);
    kiln_value g = recipe_unary(&w, "global_avg_pool", recipe_conv(&w, wide, 8, 8, 1, 0.5f));
    kiln_program *other = recipe_finish(&w, 1, &g);
    assert_int_equal(kiln_layout_role_of(&other->model, 2), KILN_LAYOUT_PLAIN_ONLY);
    assert_false(may_stay(other, 0));
    check(other, 8, 0);
    kiln_program_free(other);
}

/*
 * A UNet's decoder step: conv, max_pool, conv, resize (linear, x2),
 * concat with the first conv's result, conv: the resize reads its operand
 * channels-last and writes its result so, and nothing is converted. A
 * 1-D conv's result resized (rank 3, which the resize reads only
 * row-major) is converted once and resized all the same, as is the x of a
 * resize whose result is the program's output.
 */
static void a_resize_keeps_channels_last(void **state)
{
    (void)state;
    recipe r;
    const double twice[] = {1, 1, 2, 2};
    kiln_attribute resize_attributes[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "linear"},
        {.name = "scales", .type = KILN_ATTRIBUTE_FLOATS, .floats = twice, .count = 4},
    };
    kiln_attribute channels = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value skip = recipe_conv(&r, x, 8, 8, 3, 0.5f);                              /* node 0 */
    kiln_value down = recipe_conv(&r, recipe_pool(&r, "max_pool", skip, 2), 8, 16, 3, 0.5f); /* 1, 2: 6x6 */
    kiln_value up = recipe_op(&r, "resize", 1, &down, 2, resize_attributes);          /* 3: [2, 16, 12, 12] */
    kiln_value joined = recipe_op(&r, "concat", 2, (kiln_value[]){up, skip}, 1, &channels); /* 4 */
    kiln_value out = recipe_unary(&r, "global_avg_pool", recipe_conv(&r, joined, 24, 8, 3, 0.5f)); /* 5, 6 */
    kiln_program *program = recipe_finish(&r, 1, &out);
    assert_true(may_stay(program, 2)); /* read by the resize */
    assert_true(may_stay(program, 3)); /* read by the concat */
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(counts.converted, 0);
    check(program, 8, NAN);
    kiln_program_free(program);

    recipe line;
    const double wider[] = {1, 1, 2};
    kiln_attribute line_attributes[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "linear"},
        {.name = "scales", .type = KILN_ATTRIBUTE_FLOATS, .floats = wider, .count = 3},
    };
    kiln_value image = recipe_start(&line, "[2, 8, 12, 12]", NULL);
    const int64_t as_line[] = {2, 8, 144};
    kiln_attribute line_shape = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = as_line, .count = 3};
    kiln_value signal = recipe_op(&line, "reshape", 1, &image, 1, &line_shape);
    const int64_t weight_shape[] = {8, 8, 3}, bias_shape[] = {8}, pads[] = {1, 1};
    kiln_attribute conv_pads = {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 2};
    kiln_value conv_operands[3] = {signal, recipe_weight(&line, 3, weight_shape, 0.5f),
                                   recipe_weight(&line, 1, bias_shape, 0.25f)};
    kiln_value filtered = recipe_op(&line, "conv", 3, conv_operands, 1, &conv_pads);
    kiln_value stretched = recipe_op(&line, "resize", 1, &filtered, 2, line_attributes); /* [2, 8, 288] */
    kiln_value pooled = recipe_unary(&line, "global_avg_pool", stretched);
    kiln_program *line_program = recipe_finish(&line, 1, &pooled);
    assert_true(may_stay(line_program, 1)); /* the conv's */
    layout_counts line_counts = check(line_program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(line_counts.converted, 1);
    kiln_program_free(line_program);

    /* A resize that is the program's output: its small x is converted, its result written row-major. */
    recipe head;
    kiln_value features = recipe_conv(&head, recipe_start(&head, "[2, 8, 12, 12]", NULL), 8, 4, 3, 0.5f);
    kiln_value scores = recipe_op(&head, "resize", 1, &features, 2, resize_attributes);
    kiln_program *head_program = recipe_finish(&head, 1, &scores);
    assert_true(may_stay(head_program, 0));
    assert_false(may_stay(head_program, 1));
    layout_counts head_counts = check(head_program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(head_counts.converted, 1);
    kiln_program_free(head_program);
}

/*
 * A chain of relus ending in a pool: each relu's result may stay because
 * the next one's may (decided from the last node back, in one pass); the
 * same chain ending in the output keeps every relu row-major.
 */
static void a_chain_decides_from_its_end(void **state)
{
    (void)state;
    for (int to_pool = 0; to_pool < 2; to_pool++) {
        recipe r;
        kiln_value v = recipe_start(&r, "[2, 8, 12, 12]", NULL);
        for (int i = 0; i < 50; i++)
            v = recipe_unary(&r, "relu", v); /* nodes 0..49 */
        if (to_pool)
            v = recipe_unary(&r, "global_max_pool", v);
        kiln_program *program = recipe_finish(&r, 1, &v);
        for (uint32_t n = 0; n < 50; n++)
            assert_int_equal(may_stay(program, n), to_pool);
        check(program, 8, 0);
        kiln_program_free(program);
    }
}

/* A result some node reads row-major (here reshape's flatten) is written row-major. */
static void a_result_read_row_major_is_written_row_major(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 4, 12, 12]", NULL);
    kiln_value c = recipe_conv(&r, x, 4, 4, 3, 0.5f); /* 0: read by the next conv and by flatten */
    kiln_value d = recipe_conv(&r, c, 4, 4, 3, 0.5f); /* 1 */
    kiln_value flat = recipe_unary(&r, "flatten", c);   /* 2 */
    kiln_value flat_d = recipe_unary(&r, "flatten", d); /* 3 */
    kiln_value sum = recipe_binary(&r, "add", flat, flat_d);
    kiln_program *program = recipe_finish(&r, 1, &sum);
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
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value c = recipe_conv(&r, x, 8, 16, 3, 0.5f);
    kiln_value global = recipe_unary(&r, "global_max_pool", recipe_pool(&r, "max_pool", c, 2));
    kiln_program *program = recipe_finish(&r, 1, &global);
    assert_true(may_stay(program, 0));
    layout_counts finite = check(program, 8, 0);
    layout_counts nan = check(program, 8, NAN);
    if (recipe_convs_write_channels_last()) {
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
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", "[2, 8, 12, 12]"), other = r.other;
    kiln_value c = recipe_unary(&r, "sigmoid", recipe_conv(&r, x, 8, 8, 3, 0.5f)); /* 0, 1: channels-last */
    kiln_value plain = recipe_unary(&r, "tanh", other);               /* 2: row-major (from an input) */
    kiln_value mixed = recipe_binary(&r, "mul", c, plain);            /* 3: converts node 1's result */
    kiln_value y = recipe_conv(&r, mixed, 8, 8, 1, 0.5f);
    kiln_program *program = recipe_finish(&r, 1, &y);
    for (uint32_t n = 0; n <= 3; n++)
        assert_true(may_stay(program, n));
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last()) {
        assert_int_equal(counts.kept, 1);      /* the first conv */
        assert_int_equal(counts.converted, 1); /* sigmoid's result, for mul */
    }
    kiln_program_free(program);
}

/*
 * A squeeze-excite block: conv, sigmoid, global_avg_pool, sigmoid (the
 * scale, [2, 16, 1, 1]), mul(scale, x) with x the sigmoid's channels-last
 * result (operand 1: CHANNELWISE_1), sub(that, scale) (operand 0:
 * CHANNELWISE, and not commutative), a pointwise conv. The full operands
 * stay channels-last through the per-channel ops; nothing is converted;
 * the outputs agree with the reference kernels, also with a NaN in x.
 */
static void per_channel_scales_keep_the_layout(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value a = recipe_unary(&r, "sigmoid", recipe_conv(&r, x, 8, 16, 3, 0.5f)); /* 0, 1 */
    kiln_value g = recipe_unary(&r, "global_avg_pool", a);                          /* 2: [2, 16, 1, 1] */
    kiln_value scale = recipe_unary(&r, "sigmoid", g);                              /* 3 */
    kiln_value scaled = recipe_binary(&r, "mul", scale, a);                         /* 4 */
    kiln_value shifted = recipe_binary(&r, "sub", scaled, scale);                   /* 5 */
    kiln_value y = recipe_conv(&r, shifted, 16, 8, 1, 0.5f);                        /* 6 */
    kiln_program *program = recipe_finish(&r, 1, &y);
    assert_int_equal(program->nodes[4].layout_role, KILN_LAYOUT_CHANNELWISE_1);
    assert_int_equal(program->nodes[5].layout_role, KILN_LAYOUT_CHANNELWISE);
    assert_true(may_stay(program, 0));
    assert_true(may_stay(program, 1));
    assert_true(may_stay(program, 4));
    assert_true(may_stay(program, 5));
    assert_false(may_stay(program, 3)); /* read as the per-channel operand: row-major */
    layout_counts counts = check(program, 8, 0);
    if (recipe_convs_write_channels_last())
        assert_int_equal(counts.converted, 0);
    check(program, 8, NAN);
    kiln_program_free(program);
}

/* A broadcast that is not per channel ([2, 1, 12, 12]) or an op without the trait (max) converts. */
static void other_broadcasts_convert(void **state)
{
    (void)state;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value a = recipe_conv(&r, x, 8, 8, 3, 0.5f);                  /* 0: [2, 8, 10, 10] */
    kiln_value g = recipe_unary(&r, "global_avg_pool", a);             /* 1: [2, 8, 1, 1] */
    kiln_value highest = recipe_binary(&r, "max", a, g);               /* 2: max has no per-channel trait */
    kiln_value y = recipe_conv(&r, highest, 8, 8, 1, 0.5f);            /* 3 */
    kiln_program *program = recipe_finish(&r, 1, &y);
    assert_int_equal(program->nodes[2].layout_role, KILN_LAYOUT_PLAIN_ONLY);
    assert_false(may_stay(program, 0)); /* read row-major by max */
    check(program, 8, 0);
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
        cmocka_unit_test(a_chain_decides_from_its_end),
        cmocka_unit_test(a_channel_concat_keeps_channels_last),
        cmocka_unit_test(a_resize_keeps_channels_last),
        cmocka_unit_test(a_dead_reader_does_not_keep_a_result_row_major),
        cmocka_unit_test(a_kernel_that_needs_row_major_gets_it),
        cmocka_unit_test(elementwise_ops_follow_their_operands),
        cmocka_unit_test(per_channel_scales_keep_the_layout),
        cmocka_unit_test(other_broadcasts_convert),
        cmocka_unit_test(to_plain_transposes_each_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
