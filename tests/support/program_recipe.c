/* program_recipe.c — conv/pool/elementwise test programs and paired sessions (see program_recipe.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onednn.h"
#include "prng.h"
#include "program_recipe.h"

static uint64_t random_state = 0x13198a2e03707344u;

static float random_unit(void)
{
    uint64_t top24 = lcg_next(&random_state) >> 7; /* the state's top 24 bits */
    return (float)(top24 / (double)(1u << 24)) * 2.0f - 1.0f; /* [-1, 1) */
}

kiln_value recipe_weight(recipe *r, uint32_t rank, const int64_t *shape, float scale)
{
    uint64_t count = 1;
    for (uint32_t i = 0; i < rank; i++)
        count *= (uint64_t)shape[i];
    assert_true(r->weights < RECIPE_MAX_WEIGHTS);
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

kiln_value recipe_op(recipe *r, const char *name, uint32_t count, const kiln_value *operands,
                     uint32_t attribute_count, const kiln_attribute *attributes)
{
    kiln_value y;
    kiln_error err;
    kiln_status status =
        kiln_builder_add_op_with_attributes(r->b, name, count, operands, attribute_count, attributes, &y, &err);
    if (status != KILN_OK)
        fail_msg("%s: %s", name, err.message);
    return y;
}

kiln_value recipe_conv(recipe *r, kiln_value x, int64_t in, int64_t out, int64_t k, float weight_scale)
{
    const int64_t weight_shape[] = {out, in, k, k}, bias_shape[] = {out};
    const int64_t pads[] = {k / 2, k / 2, k / 2, k / 2};
    kiln_value operands[3] = {x, recipe_weight(r, 4, weight_shape, weight_scale),
                              recipe_weight(r, 1, bias_shape, weight_scale / 2)};
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    return recipe_op(r, "conv", 3, operands, 1, attributes);
}

kiln_value recipe_unary(recipe *r, const char *name, kiln_value x)
{
    return recipe_op(r, name, 1, &x, 0, NULL);
}

kiln_value recipe_binary(recipe *r, const char *name, kiln_value a, kiln_value b)
{
    return recipe_op(r, name, 2, (kiln_value[]){a, b}, 0, NULL);
}

kiln_value recipe_pool(recipe *r, const char *name, kiln_value x, int64_t window)
{
    const int64_t kernel[] = {window, window}, strides[] = {4 - window, 4 - window};
    const int64_t pads[] = {window / 3, window / 3, window / 3, window / 3};
    kiln_attribute attributes[] = {
        {.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = kernel, .count = 2},
        {.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4},
        {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides, .count = 2},
    };
    return recipe_op(r, name, 1, &x, 3, attributes);
}

kiln_value recipe_batch_norm(recipe *r, kiln_value x, int64_t channels)
{
    const int64_t shape[] = {channels};
    kiln_value operands[5] = {x, recipe_weight(r, 1, shape, 2.0f), recipe_weight(r, 1, shape, 1.0f),
                              recipe_weight(r, 1, shape, 1.0f), 0};
    operands[4] = recipe_unary(r, "abs", recipe_weight(r, 1, shape, 1.0f));
    return recipe_op(r, "batch_norm", 5, operands, 0, NULL);
}

kiln_value recipe_start(recipe *r, const char *x_shape, const char *other_shape)
{
    kiln_error err;
    kiln_value x;
    memset(r, 0, sizeof *r);
    assert_int_equal(kiln_builder_new("recipe", &r->b, &err), KILN_OK);
    if (strstr(x_shape, "batch"))
        assert_int_equal(kiln_builder_add_dim(r->b, "batch", 1, 16, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(r->b, "x", KILN_F32, x_shape, &x, &err), KILN_OK);
    if (other_shape)
        assert_int_equal(kiln_builder_add_input(r->b, "other", KILN_F32, other_shape, &r->other, &err), KILN_OK);
    return x;
}

kiln_program *recipe_seal(kiln_builder *builder)
{
    kiln_error err;
    void *bytes;
    size_t size;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(builder, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(builder);
    kiln_status status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
    free(bytes);
    if (status != KILN_OK)
        fail_msg("loading the sealed program: %s", err.message);
    return program;
}

kiln_program *recipe_finish(recipe *r, uint32_t output_count, const kiln_value *outputs)
{
    kiln_error err;
    for (uint32_t o = 0; o < output_count; o++) {
        char name[16];
        snprintf(name, sizeof name, "y%u", o);
        assert_int_equal(kiln_builder_add_output(r->b, name, outputs[o], &err), KILN_OK);
    }
    kiln_program *program = recipe_seal(r->b);
    for (uint32_t i = 0; i < r->weights; i++)
        free(r->data[i]);
    return program;
}

kiln_tensor *recipe_input(int64_t channels, float scale, float special)
{
    return recipe_input_of(RECIPE_BATCH, channels, RECIPE_SIDE, scale, special);
}

kiln_tensor *recipe_input_of(int64_t batch, int64_t channels, int64_t side, float scale, float special)
{
    const int64_t shape[] = {batch, channels, side, side};
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, shape, &t, &err), KILN_OK);
    float *v = kiln_tensor_data(t);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        v[i] = random_unit() * scale;
    if (special != 0)
        v[kiln_tensor_element_count(t) / 3] = special;
    return t;
}

void recipe_assert_close(const kiln_tensor *got, const kiln_tensor *expected)
{
    const float *a = kiln_tensor_const_data(got), *e = kiln_tensor_const_data(expected);
    uint64_t count = kiln_tensor_element_count(expected);
    assert_int_equal(kiln_tensor_element_count(got), count);
    /* A sum that cancels keeps an error of the size of its terms, not of
     * its result: the tolerance scales with the largest finite result too. */
    double largest = 0;
    for (uint64_t i = 0; i < count; i++)
        largest = isfinite(e[i]) && fabs((double)e[i]) > largest ? fabs((double)e[i]) : largest;
    for (uint64_t i = 0; i < count; i++) {
        double tolerance = 1e-4 * fabs((double)e[i]) + 1e-6 * largest + 1e-6;
        bool same = isnan(e[i]) ? isnan(a[i])
                                : (isinf(e[i]) ? a[i] == e[i] : fabs((double)a[i] - (double)e[i]) <= tolerance);
        if (!same)
            fail_msg("element %llu is %.9g, the reference %.9g", (unsigned long long)i, (double)a[i], (double)e[i]);
    }
}

recipe_sessions recipe_sessions_new(const kiln_program *program, uint32_t threads)
{
    kiln_session_options fast_options, reference_options;
    kiln_session_options_default(&fast_options);
    fast_options.threads = threads;
    fast_options.thread_policy = KILN_THREADS_FIXED; /* the count asked for, busy machine or not */
    kiln_session_options_default(&reference_options);
    reference_options.reference_kernels = true;
    recipe_sessions s;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &fast_options, &s.fast, &err), KILN_OK);
    assert_int_equal(kiln_session_new(program, &reference_options, &s.reference, &err), KILN_OK);
    return s;
}

void recipe_sessions_free(recipe_sessions *s)
{
    kiln_session_free(s->fast);
    kiln_session_free(s->reference);
}

void recipe_sessions_run(recipe_sessions *s, const kiln_program *program, kiln_tensor *const *inputs,
                         void (*measure)(void *user, bool before), void *user)
{
    kiln_error err;
    for (uint32_t i = 0; i < kiln_program_input_count(program); i++) {
        kiln_io_info info;
        kiln_program_input(program, i, &info);
        assert_int_equal(kiln_session_set_input(s->fast, info.name, inputs[i], &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(s->reference, info.name, inputs[i], &err), KILN_OK);
    }
    if (kiln_session_run(s->reference, &err) != KILN_OK)
        fail_msg("reference run: %s", err.message);
    if (measure)
        measure(user, true);
    if (kiln_session_run(s->fast, &err) != KILN_OK)
        fail_msg("fast run: %s", err.message);
    if (measure)
        measure(user, false);
    for (uint32_t o = 0; o < kiln_session_output_count(s->fast); o++)
        recipe_assert_close(kiln_session_output(s->fast, o), kiln_session_output(s->reference, o));
}

bool recipe_convs_write_channels_last(void)
{
    static int known = -1;
    if (known >= 0)
        return known;
    recipe r;
    kiln_value x = recipe_start(&r, "[2, 8, 12, 12]", NULL);
    kiln_value y = recipe_pool(&r, "max_pool", recipe_conv(&r, x, 8, 16, 3, 0.5f), 2);
    kiln_program *program = recipe_finish(&r, 1, &y);
    recipe_sessions sessions = recipe_sessions_new(program, 1);
    kiln_tensor *input = recipe_input(8, 1.0f, 0);
    uint64_t before = kiln_onednn_channels_last_runs();
    recipe_sessions_run(&sessions, program, &input, NULL, NULL);
    known = kiln_onednn_channels_last_runs() > before;
    kiln_tensor_free(input);
    recipe_sessions_free(&sessions);
    kiln_program_free(program);
    return known;
}
