/* op_test_support.c — helpers op tests share (op_test_support.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/text.h>

#include "op_test_support.h"

double ots_load(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_F32 ? (double)((const float *)t->data)[i] : ((const double *)t->data)[i];
}

void ots_store(kiln_tensor *t, uint64_t i, long double v)
{
    if (t->dtype == KILN_F32)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = (double)v;
}

void ots_fill(kiln_tensor *t, prng *rng, uint64_t special_one_in)
{
    for (uint64_t i = 0; i < t->element_count; i++) {
        double v = -4 + (double)(prng_next(rng) % 65) / 8.0;
        if (special_one_in) {
            uint64_t pick = prng_next(rng) % special_one_in;
            v = pick == 0 ? NAN : pick == 1 ? INFINITY : pick == 2 ? -INFINITY : v;
        }
        ots_store(t, i, v);
    }
}

static bool close_enough(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

void ots_assert_close(const kiln_tensor *actual, const kiln_tensor *expected, const char *what, double f32_tol,
                     double f64_tol)
{
    assert_int_equal(actual->dtype, expected->dtype);
    assert_int_equal(actual->rank, expected->rank);
    for (uint32_t a = 0; a < expected->rank; a++)
        assert_int_equal(actual->shape[a], expected->shape[a]);
    double tol = expected->dtype == KILN_F32 ? f32_tol : f64_tol;
    for (uint64_t i = 0; i < expected->element_count; i++)
        if (!close_enough(ots_load(actual, i), ots_load(expected, i), tol)) {
            print_error("%s (%s): element %llu: got %.17g, expected %.17g\n", what, kiln_dtype_name(expected->dtype),
                        (unsigned long long)i, ots_load(actual, i), ots_load(expected, i));
            fail();
        }
}

static void add_attribute(attribute_set *set, kiln_attribute a)
{
    assert_true(set->count < sizeof set->items / sizeof set->items[0]);
    set->items[set->count++] = borrowed_attribute(a);
}

void add_ints(attribute_set *set, const char *name, int64_t *values, uint32_t count)
{
    add_attribute(set, (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INTS, .ints = values, .count = count});
}

void add_int(attribute_set *set, const char *name, int64_t value)
{
    add_attribute(set, (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INT, .i = value});
}

void add_string(attribute_set *set, const char *name, const char *value)
{
    add_attribute(set, (kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_STRING, .s = value});
}

void ots_assert_text_round_trip(kiln_builder *builder, const char *name, const char *output_shape,
                                const char *const *fragments, size_t fragment_count)
{
    kiln_error err;
    void *bytes, *again;
    size_t size, again_size;
    assert_int_equal(kiln_builder_encode(builder, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(builder);
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    if (output_shape) {
        char shape[128];
        kiln_program_output_shape_text(program, 0, shape, sizeof shape);
        assert_string_equal(shape, output_shape);
    }
    char *text;
    assert_int_equal(kiln_text_disassemble(program, NULL, &text, &err), KILN_OK);
    for (size_t i = 0; i < fragment_count; i++)
        assert_non_null(strstr(text, fragments[i]));
    kiln_status status = kiln_text_assemble(text, strlen(text), name, ".", &builder, &err);
    if (status != KILN_OK)
        print_error("%s\n%s\n", err.message, text);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(kiln_builder_encode(builder, NULL, &again, &again_size, &err), KILN_OK);
    assert_int_equal(again_size, size);
    assert_memory_equal(again, bytes, size);
    kiln_builder_free(builder);
    free(text);
    free(bytes);
    free(again);
    kiln_program_free(program);
}

void ots_assert_refused(kiln_status status, const kiln_error *err, const char *const *fragments, size_t count)
{
    assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
    for (size_t i = 0; i < count; i++)
        if (!strstr(err->message, fragments[i])) {
            print_error("missing \"%s\" in: %s\n", fragments[i], err->message);
            fail();
        }
}
