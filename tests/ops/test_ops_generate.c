/*
 * test_ops_generate.c — eye_like, constant_of_shape and range against
 * references written here from the ONNX definitions (eye: compare j - i
 * with k element by element; range: step a long double until the limit),
 * end to end through the builder, a session and the text format (ops with
 * no operands), and the shape rules' refusals by status and message.
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

#include <kiln/text.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "kernel_call.h"
#include "op_test_support.h"
#include "tensor_fixture.h"

static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"eye_like", "constant_of_shape", "range"};
    assert_family_registered(&kiln_ops_generate, names, 3);
}

/* ------------------------------------------------------------ helpers */

/* Element i as long double, whatever the dtype. */
static long double value_at(const kiln_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case KILN_F32: return ((const float *)t->data)[i];
    case KILN_F64: return ((const double *)t->data)[i];
    case KILN_I8: return ((const int8_t *)t->data)[i];
    case KILN_I16: return ((const int16_t *)t->data)[i];
    case KILN_I32: return ((const int32_t *)t->data)[i];
    case KILN_I64: return (long double)((const int64_t *)t->data)[i];
    case KILN_U8:
    case KILN_BOOL: return ((const uint8_t *)t->data)[i];
    case KILN_U16: return ((const uint16_t *)t->data)[i];
    case KILN_U32: return ((const uint32_t *)t->data)[i];
    default: return (long double)((const uint64_t *)t->data)[i];
    }
}

static kiln_node_attribute string_attr(const char *name, const char *value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_STRING, .s = value});
}

static kiln_node_attribute int_attr(const char *name, int64_t value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_INT, .i = value});
}

static kiln_node_attribute float_attr(const char *name, double value)
{
    return borrowed_attribute((kiln_attribute){.name = name, .type = KILN_ATTRIBUTE_FLOAT, .f = value});
}

/* -------------------------------------------------------------- eye_like */

static void eye_like_matches_reference(void **state)
{
    (void)state;
    static const int64_t shapes[][2] = {{3, 5}, {4, 2}, {3, 3}, {0, 3}, {1, 1}};
    static const kiln_dtype out_dtypes[] = {KILN_F32, KILN_I64, KILN_BOOL, KILN_U8, KILN_F64, KILN_I16};
    static const int64_t ks[] = {0, 1, -1, 2, -3, 4, -5, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof out_dtypes / sizeof out_dtypes[0]; d++)
            for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
                kiln_tensor *x = new_poisoned_tensor(KILN_F32, 2, shapes[s]);
                kiln_tensor *y = new_poisoned_tensor(out_dtypes[d], 2, shapes[s]);
                kiln_node_attribute attrs[] = {string_attr("dtype", kiln_dtype_name(out_dtypes[d])),
                                               int_attr("k", ks[k])};
                kiln_error err;
                assert_int_equal(call_kernel("eye_like", 1, (const kiln_tensor *[]){x}, y, 2, attrs, &err), KILN_OK);
                for (int64_t i = 0; i < shapes[s][0]; i++)
                    for (int64_t j = 0; j < shapes[s][1]; j++) {
                        /* j - i == k, compared without overflow: */
                        bool on = (long double)j - (long double)i == (long double)ks[k];
                        if (value_at(y, (uint64_t)(i * shapes[s][1] + j)) != (on ? 1.0L : 0.0L))
                            fail_msg("eye_like k=%lld [%lld, %lld] %s: wrong element", (long long)ks[k],
                                     (long long)i, (long long)j, kiln_dtype_name(out_dtypes[d]));
                    }
                kiln_tensor_free(x);
                kiln_tensor_free(y);
            }
    /* Without 'dtype', the input's dtype. */
    kiln_tensor *x = new_poisoned_tensor(KILN_I32, 2, (int64_t[]){2, 2});
    kiln_tensor *y = new_poisoned_tensor(KILN_I32, 2, (int64_t[]){2, 2});
    kiln_error err;
    assert_int_equal(call_kernel("eye_like", 1, (const kiln_tensor *[]){x}, y, 0, NULL, &err), KILN_OK);
    static const int32_t identity[] = {1, 0, 0, 1};
    assert_memory_equal(y->data, identity, sizeof identity);
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}

/* ----------------------------------------------------- constant_of_shape */

static void constant_of_shape_fills(void **state)
{
    (void)state;
    static const struct {
        const char *dtype; /* NULL: the default, f32 */
        double value;
        bool has_value;
    } cases[] = {
        {NULL, 0.0, false}, {NULL, -0.0, true},      {"f64", 2.5, true},   {"i64", -9007199254740992.0, true},
        {"u8", 255, true},  {"bool", 1, true},       {"i8", -128, true},   {"f32", INFINITY, true},
        {"f64", NAN, true}, {"u64", 9007199254740992.0, true},
    };
    static const int64_t shape[] = {2, 3};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kiln_dtype dtype = KILN_F32;
        if (cases[c].dtype)
            assert_int_equal(kiln_dtype_from_name(cases[c].dtype, &dtype), KILN_OK);
        kiln_tensor *y = new_poisoned_tensor(dtype, 2, shape);
        kiln_node_attribute attrs[3];
        uint32_t n = 0;
        if (cases[c].dtype)
            attrs[n++] = string_attr("dtype", cases[c].dtype);
        attrs[n++] = borrowed_attribute((kiln_attribute){.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape,
                                                         .count = 2});
        if (cases[c].has_value)
            attrs[n++] = float_attr("value", cases[c].value);
        kiln_error err;
        assert_int_equal(call_kernel("constant_of_shape", 0, NULL, y, n, attrs, &err), KILN_OK);
        for (uint64_t e = 0; e < 6; e++) {
            long double got = value_at(y, e), want = cases[c].value;
            if (isnan(want))
                assert_true(isnan(got));
            else
                assert_true(got == want && signbit(got) == signbit(want));
        }
        kiln_tensor_free(y);
    }
    /* A scalar, and an empty tensor. */
    kiln_tensor *scalar = new_poisoned_tensor(KILN_I32, 0, NULL);
    kiln_node_attribute attrs[] = {string_attr("dtype", "i32"),
                                   {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .count = 0},
                                   float_attr("value", 7)};
    int64_t none = 0;
    attrs[1].ints = &none;
    kiln_error err;
    assert_int_equal(call_kernel("constant_of_shape", 0, NULL, scalar, 3, attrs, &err), KILN_OK);
    assert_int_equal(*(int32_t *)scalar->data, 7);
    kiln_tensor_free(scalar);
    int64_t empty_shape[] = {0, 3};
    kiln_tensor *empty = new_poisoned_tensor(KILN_I32, 2, empty_shape);
    attrs[1].ints = empty_shape;
    attrs[1].count = 2;
    assert_int_equal(call_kernel("constant_of_shape", 0, NULL, empty, 3, attrs, &err), KILN_OK);
    kiln_tensor_free(empty);
}

/* ----------------------------------------------------------------- range */

/* The ONNX loop: x = start; while (x < limit) for delta > 0 (x > limit for delta < 0). */
static int64_t reference_range(long double start, long double limit, long double delta, long double *out)
{
    int64_t n = 0;
    for (long double x = start; delta > 0 ? x < limit : x > limit; x = start + (long double)(++n) * delta)
        if (out)
            out[n] = x;
    return n;
}

static void range_matches_reference(void **state)
{
    (void)state;
    static const struct {
        const char *dtype;
        double start, limit, delta;
    } cases[] = {
        {"i64", 3, 9, 3},       {"i32", 10, 4, -2},   {"i16", -5, 5, 3},   {"i64", 0, 0, 1},   {"i32", 5, 1, 1},
        {"f32", 0, 1, 0.1},     {"f64", 1, -1, -0.25}, {"f64", 0.5, 10, 1.5}, {"f32", 2, 2.5, 1},
        {"i64", -9007199254740992.0, -9007199254740990.0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        long double expected[64];
        int64_t n = reference_range(cases[c].start, cases[c].limit, cases[c].delta, expected);
        assert_true(n < 64);
        kiln_dtype dtype;
        assert_int_equal(kiln_dtype_from_name(cases[c].dtype, &dtype), KILN_OK);
        kiln_tensor *y = new_poisoned_tensor(dtype, 1, (int64_t[]){n});
        kiln_node_attribute attrs[] = {float_attr("delta", cases[c].delta), string_attr("dtype", cases[c].dtype),
                                       float_attr("limit", cases[c].limit), float_attr("start", cases[c].start)};
        kiln_error err;
        kiln_status status = call_kernel("range", 0, NULL, y, 4, attrs, &err);
        if (status != KILN_OK)
            fail_msg("range case %zu: %s", c, err.message);
        for (int64_t i = 0; i < n; i++) {
            long double want = dtype == KILN_F32 ? (long double)(float)(double)expected[i] : expected[i];
            if (fabsl(value_at(y, (uint64_t)i) - want) > (dtype == KILN_F32 ? 1e-7L : 1e-15L) * (1 + fabsl(want)))
                fail_msg("range case %zu element %lld: %.17Lg, expected %.17Lg", c, (long long)i,
                         value_at(y, (uint64_t)i), want);
        }
        kiln_tensor_free(y);
    }
}

/* ------------------------------------------------- builder and session */

static kiln_status add_op(kiln_builder *b, const char *op, uint32_t count, const kiln_value *inputs,
                          uint32_t attribute_count, const kiln_attribute *attributes, kiln_value *out, kiln_error *err)
{
    return kiln_builder_add_op_with_attributes(b, op, count, inputs, attribute_count, attributes, out, err);
}

static void end_to_end(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("generate", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 5, &err), KILN_OK);
    kiln_value x, eye, ones, steps, sum;
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n, 3]", &x, &err), KILN_OK);
    kiln_attribute k = {.name = "k", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(add_op(b, "eye_like", 1, &x, 1, &k, &eye, &err), KILN_OK);
    int64_t shape[] = {1, 3};
    kiln_attribute constant[] = {{.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape, .count = 2},
                                 {.name = "value", .type = KILN_ATTRIBUTE_INT, .i = 2}}; /* INT -> FLOAT */
    assert_int_equal(add_op(b, "constant_of_shape", 0, NULL, 2, constant, &ones, &err), KILN_OK);
    kiln_attribute range[] = {{.name = "start", .type = KILN_ATTRIBUTE_INT, .i = 0},
                              {.name = "limit", .type = KILN_ATTRIBUTE_FLOAT, .f = 1.5},
                              {.name = "delta", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.5}};
    assert_int_equal(add_op(b, "range", 0, NULL, 3, range, &steps, &err), KILN_OK);
    kiln_value operands[] = {eye, ones};
    assert_int_equal(kiln_builder_add_op(b, "add", 2, operands, &sum, &err), KILN_OK);
    operands[0] = sum;
    operands[1] = steps;
    assert_int_equal(kiln_builder_add_op(b, "add", 2, operands, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", sum, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    char text[64];
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    assert_string_equal(text, "[n, 3]");
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    kiln_tensor *in = new_poisoned_tensor(KILN_F32, 2, (int64_t[]){4, 3});
    assert_int_equal(kiln_session_set_input(session, "x", in, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *y = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            assert_true(y[i * 3 + j] == (j - i == 1 ? 1.0f : 0.0f) + 2.0f + 0.5f * (float)j);
    kiln_tensor_free(in);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* Ops without operands survive asm -> artifact -> disasm -> asm byte for byte. */
static void text_round_trip(void **state)
{
    (void)state;
    static const char text[] = "kiln 1.0\n"
                               "program \"g\"\n"
                               "dim n in 1..8\n"
                               "input x: i64[n, n]\n"
                               "%e = eye_like(x, k=-1)\n"
                               "%r = range(start=0, limit=3, delta=1, dtype=\"i64\")\n"
                               "%c = constant_of_shape(shape=[1, 3], value=4, dtype=\"i64\")\n"
                               "%s = add(%r, %c)\n"
                               "output e = %e\n"
                               "output s = %s\n";
    kiln_builder *b;
    kiln_error err;
    if (kiln_text_assemble(text, strlen(text), "g.ktxt", NULL, &b, &err) != KILN_OK)
        fail_msg("assemble: %s", err.message);
    static const char *const expected[] = {"range(", "constant_of_shape("};
    ots_assert_text_round_trip(b, "g.ktxt", NULL, expected, OTS_COUNT(expected));
}

/* ----------------------------------------------------- static refusals */

static void expect_refusal(const char *op, const char *x_shape, uint32_t count, const kiln_attribute *attributes,
                           const char *const *fragments)
{
    kiln_error err;
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("generate", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 5, &err), KILN_OK);
    kiln_value x, out;
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, x_shape ? x_shape : "[n]", &x, &err), KILN_OK);
    assert_int_equal(add_op(b, op, x_shape ? 1 : 0, &x, count, attributes, &out, &err), KILN_ERR_INVALID_PROGRAM);
    kiln_builder_free(b);
    char label[64];
    snprintf(label, sizeof label, "node 0 (%s)", op);
    assert_non_null(strstr(err.message, label));
    for (size_t i = 0; fragments[i]; i++)
        if (!strstr(err.message, fragments[i]))
            fail_msg("expected \"%s\" in: %s", fragments[i], err.message);
}

static void refusals(void **state)
{
    (void)state;
    /* eye_like */
    expect_refusal("eye_like", "[n]", 0, NULL, (const char *[]){"rank 1; eye_like needs rank 2", NULL});
    kiln_attribute dtype = {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "c64"};
    expect_refusal("eye_like", "[n, n]", 1, &dtype, (const char *[]){"attribute 'dtype' is \"c64\"", NULL});
    dtype.s = "float";
    expect_refusal("eye_like", "[n, n]", 1, &dtype, (const char *[]){"\"float\"", NULL});

    /* constant_of_shape */
    expect_refusal("constant_of_shape", NULL, 0, NULL, (const char *[]){"attribute 'shape' is required", NULL});
    int64_t bad_shape[] = {2, -1};
    kiln_attribute shape = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = bad_shape, .count = 2};
    expect_refusal("constant_of_shape", NULL, 1, &shape, (const char *[]){"shape [2, -1]: -1 is not a size", NULL});
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    shape.ints = nine;
    shape.count = 9;
    expect_refusal("constant_of_shape", NULL, 1, &shape, (const char *[]){"more than 8 axes", NULL});
    int64_t good[] = {2};
    shape.ints = good;
    shape.count = 1;
    static const struct {
        const char *dtype;
        double value;
    } unfit[] = {{"i32", 1.5}, {"u8", 256}, {"u8", -1}, {"bool", 2}, {"f32", 1e300}, {"i64", 9007199254740994.0}};
    for (size_t i = 0; i < sizeof unfit / sizeof unfit[0]; i++) {
        kiln_attribute attrs[] = {{.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = unfit[i].dtype},
                                  shape,
                                  {.name = "value", .type = KILN_ATTRIBUTE_FLOAT, .f = unfit[i].value}};
        char dtype_text[48];
        snprintf(dtype_text, sizeof dtype_text, "is not a value of dtype %s", unfit[i].dtype);
        expect_refusal("constant_of_shape", NULL, 3, attrs, (const char *[]){"value ", dtype_text, NULL});
    }
    /* constant_of_shape takes no operand */
    kiln_error err;
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("generate", &b, &err), KILN_OK);
    kiln_value x, out;
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    assert_int_equal(add_op(b, "constant_of_shape", 1, &x, 1, &shape, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "takes 0..0 inputs, got 1"));
    kiln_builder_free(b);

    /* range */
    kiln_attribute range[] = {{.name = "delta", .type = KILN_ATTRIBUTE_FLOAT, .f = 0},
                              {.name = "dtype", .type = KILN_ATTRIBUTE_STRING, .s = "i32"},
                              {.name = "limit", .type = KILN_ATTRIBUTE_FLOAT, .f = 5},
                              {.name = "start", .type = KILN_ATTRIBUTE_FLOAT, .f = 0}};
    expect_refusal("range", NULL, 4, range, (const char *[]){"delta is 0", NULL});
    range[0].f = 1;
    expect_refusal("range", NULL, 3, range, (const char *[]){"attribute 'start' is required", NULL});
    range[3].f = 0.5;
    expect_refusal("range", NULL, 4, range, (const char *[]){"start 0.5 is not a finite value of dtype i32", NULL});
    range[3].f = 0;
    range[2].f = NAN;
    expect_refusal("range", NULL, 4, range, (const char *[]){"limit nan is not a finite value", NULL});
    range[2].f = 3e9;
    expect_refusal("range", NULL, 4, range, (const char *[]){"limit 3000000000 is not a finite value of dtype i32",
                                                             NULL});
    range[1].s = "i64";
    expect_refusal("range", NULL, 4, range, (const char *[]){"more than 2147483647 elements", NULL});
    range[1].s = "f64";
    range[0].f = 1e-300;
    range[2].f = 1;
    expect_refusal("range", NULL, 4, range, (const char *[]){"more than 2147483647 elements", NULL});
    range[1].s = "u8";
    expect_refusal("range", NULL, 4, range,
                   (const char *[]){"attribute 'dtype' is \"u8\"; expected f32, f64, i16, i32 or i64", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(eye_like_matches_reference),
        cmocka_unit_test(constant_of_shape_fills),
        cmocka_unit_test(range_matches_reference),
        cmocka_unit_test(end_to_end),
        cmocka_unit_test(text_round_trip),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
