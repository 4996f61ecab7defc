/*
 * test_ops_shape.c — the shape and layout family (identity, cast, squeeze,
 * unsqueeze, reshape, concat, expand, expand_to, tile, pad, shape_of, size_of) against
 * an independent reference, end to end through the public builder and a
 * session with a symbolic dim, and the shape rules' static refusals.
 *
 * The references here map every output element to its source by flat
 * index and div/mod (the kernels walk odometers), build pad's index maps
 * by explicit construction, and check cast against hand-written answers.
 * Data movement must match bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "op_registry.h"
#include "tensor.h"

#include "family_check.h"
#include "borrowed_attribute.h"
#include "kernel_call.h"
#include "prng.h"
#include "tensor_fixture.h"

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"identity", "cast", "squeeze", "unsqueeze", "reshape", "concat",
                                        "expand", "expand_to", "tile", "pad", "shape_of", "size_of"};
    assert_family_registered(&kiln_ops_shape, names, sizeof names / sizeof names[0]);
    assert_int_equal(kiln_ops_shape.count, sizeof names / sizeof names[0]);
}

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

/* Random bytes: data movement must not care about values. */
static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_tensor(dtype, rank, shape);
    for (size_t i = 0; i < t->byte_size; i++)
        ((uint8_t *)t->data)[i] = (uint8_t)xorshift64_star_next(&rng_state);
    return t;
}

static void poison(kiln_tensor *t)
{
    memset(t->data, 0x7F, t->byte_size);
}

static void unflatten(uint64_t flat, uint32_t rank, const int64_t *shape, int64_t *index)
{
    for (uint32_t i = rank; i-- > 0;) {
        index[i] = (int64_t)(flat % (uint64_t)shape[i]);
        flat /= (uint64_t)shape[i];
    }
}

static uint64_t flat_of(uint32_t rank, const int64_t *shape, const int64_t *index)
{
    uint64_t flat = 0;
    for (uint32_t i = 0; i < rank; i++)
        flat = flat * (uint64_t)shape[i] + (uint64_t)index[i];
    return flat;
}

static void assert_element(const kiln_tensor *got, uint64_t e, const kiln_tensor *src, uint64_t s)
{
    size_t w = kiln_dtype_size(got->dtype);
    if (memcmp((const uint8_t *)got->data + e * w, (const uint8_t *)src->data + s * w, w) != 0) {
        print_error("element %llu differs from source element %llu\n", (unsigned long long)e, (unsigned long long)s);
        fail();
    }
}

#define INTS(name_, ...)                                                                                     \
    {                                                                                                        \
        .name = (char *)(name_), .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){__VA_ARGS__},              \
        .count = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)                                          \
    }

/* ------------------------------------------------------ byte-copy ops */

static void copies_match_reference(void **state)
{
    (void)state;
    kiln_tensor *in = random_tensor(KILN_I16, 3, (int64_t[]){2, 1, 6});
    struct {
        const char *op;
        uint32_t rank;
        int64_t shape[4];
        kiln_node_attribute attribute;
        uint32_t attribute_count;
    } cases[] = {
        {"identity", 3, {2, 1, 6}, {0}, 0},
        {"squeeze", 2, {2, 6}, INTS("axes", 1), 1},
        {"unsqueeze", 4, {1, 2, 1, 6}, INTS("axes", 0), 1},
        {"reshape", 2, {3, 4}, INTS("shape", 3, -1), 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_tensor *out = new_tensor(KILN_I16, cases[i].rank, cases[i].shape);
        poison(out);
        kiln_error err;
        assert_int_equal(call_kernel(cases[i].op, 1, (const kiln_tensor *[]){in}, out, cases[i].attribute_count,
                                &cases[i].attribute, &err),
                         KILN_OK);
        assert_memory_equal(out->data, in->data, in->byte_size);
        kiln_tensor_free(out);
    }
    /* A kernel refuses an output of the wrong size. */
    kiln_tensor *bad = new_tensor(KILN_I16, 1, (int64_t[]){5});
    kiln_error err;
    assert_int_equal(call_kernel("identity", 1, (const kiln_tensor *[]){in}, bad, 0, NULL, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(bad);
    kiln_tensor_free(in);
}

/* ----------------------------------------------------------------- cast */

static kiln_node_attribute to_attribute(const char *name)
{
    return borrowed_attribute((kiln_attribute){.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = name});
}

static kiln_status cast_values(kiln_dtype from, const void *values, uint32_t n, kiln_dtype to, void *result,
                               kiln_error *err)
{
    kiln_tensor *in = new_tensor(from, 1, (int64_t[]){n});
    kiln_tensor *out = new_tensor(to, 1, (int64_t[]){n});
    memcpy(in->data, values, in->byte_size);
    kiln_node_attribute attr = to_attribute(kiln_dtype_name(to));
    kiln_status status = call_kernel("cast", 1, (const kiln_tensor *[]){in}, out, 1, &attr, err);
    if (status == KILN_OK)
        memcpy(result, out->data, out->byte_size);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
    return status;
}

static void cast_known_answers(void **state)
{
    (void)state;
    kiln_error err;
    {
        float in[] = {2.75f, -2.75f, 0.5f, -0.5f, 2147483520.0f, -2147483648.0f};
        int32_t out[6], expected[] = {2, -2, 0, 0, 2147483520, INT32_MIN};
        assert_int_equal(cast_values(KILN_F32, in, 6, KILN_I32, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        double in[] = {1.0 + 0x1p-30, 0.1, 0x1.ffffffp127, 0x1.fffffefffffffp127, -1e300, 1e-50};
        float out[6];
        float expected[] = {1.0f, 0.1f, INFINITY, FLT_MAX, -INFINITY, 0.0f};
        assert_int_equal(cast_values(KILN_F64, in, 6, KILN_F32, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        int64_t in[] = {0, 5, -1, 256};
        uint8_t out[4], expected[] = {0, 1, 1, 1};
        assert_int_equal(cast_values(KILN_I64, in, 4, KILN_BOOL, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        uint8_t in[] = {0, 1, 1};
        float out[3], expected[] = {0.0f, 1.0f, 1.0f};
        assert_int_equal(cast_values(KILN_BOOL, in, 3, KILN_F32, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
        int32_t iout[3], iexpected[] = {0, 1, 1};
        assert_int_equal(cast_values(KILN_BOOL, in, 3, KILN_I32, iout, &err), KILN_OK);
        assert_memory_equal(iout, iexpected, sizeof iout);
    }
    {
        double in[] = {0.0, -0.0, NAN, 0.25};
        uint8_t out[4], expected[] = {0, 0, 1, 1};
        assert_int_equal(cast_values(KILN_F64, in, 4, KILN_BOOL, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        uint8_t in[] = {200, 127, 0};
        int8_t out[3], expected[] = {-56, 127, 0};
        assert_int_equal(cast_values(KILN_U8, in, 3, KILN_I8, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        int64_t in[] = {-3, 9007199254740993};
        double out[2], expected[] = {-3.0, 9007199254740992.0};
        assert_int_equal(cast_values(KILN_I64, in, 2, KILN_F64, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
    {
        double in[] = {-0.75, 255.9};
        uint8_t out[2], expected[] = {0, 255};
        assert_int_equal(cast_values(KILN_F64, in, 2, KILN_U8, out, &err), KILN_OK);
        assert_memory_equal(out, expected, sizeof out);
    }
}

static void cast_refuses_unconvertible_elements(void **state)
{
    (void)state;
    kiln_error err;
    int32_t out[3];
    float nan_in[] = {1.0f, NAN, 2.0f};
    assert_int_equal(cast_values(KILN_F32, nan_in, 3, KILN_I32, out, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "element 1"));
    float big[] = {3e9f, 0, 0};
    assert_int_equal(cast_values(KILN_F32, big, 3, KILN_I32, out, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "element 0"));
    double neg[] = {0.0, 2.0, -1.0};
    uint8_t u8[3];
    assert_int_equal(cast_values(KILN_F64, neg, 3, KILN_U8, u8, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "element 2"));
    double huge[] = {0x1p63};
    int64_t i64[1];
    assert_int_equal(cast_values(KILN_F64, huge, 1, KILN_I64, i64, &err), KILN_ERR_RUNTIME);
    double inf[] = {INFINITY};
    uint64_t u64[1];
    assert_int_equal(cast_values(KILN_F64, inf, 1, KILN_U64, u64, &err), KILN_ERR_RUNTIME);
}

/* The typed loops of the common pairs give the values of C's own conversions
 * (truncation toward zero, one rounding, wrapping, nonzero is true), and a
 * float they cannot convert is still named by its element. */
static void cast_common_pairs_as_c_converts(void **state)
{
    (void)state;
    kiln_error err;
    {
        float in[] = {-0.0f, 2.99f, -2.99f, 16777216.0f, -9.2233715e18f, 1e-30f};
        int64_t out[6], want[6];
        int32_t out32[5], want32[5];
        for (int i = 0; i < 6; i++)
            want[i] = (int64_t)in[i];
        for (int i = 0; i < 5; i++)
            want32[i] = i == 4 ? 0 : (int32_t)in[i];
        assert_int_equal(cast_values(KILN_F32, in, 6, KILN_I64, out, &err), KILN_OK);
        assert_memory_equal(out, want, sizeof out);
        float in32[] = {-0.0f, 2.99f, -2.99f, 16777216.0f, 0.0f};
        assert_int_equal(cast_values(KILN_F32, in32, 5, KILN_I32, out32, &err), KILN_OK);
        assert_memory_equal(out32, want32, sizeof out32);
        float bad[] = {1.0f, 2.0f, NAN, 3.0f};
        assert_int_equal(cast_values(KILN_F32, bad, 4, KILN_I64, out, &err), KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "element 2"));
        float big[] = {0.0f, 9.3e18f};
        assert_int_equal(cast_values(KILN_F32, big, 2, KILN_I64, out, &err), KILN_ERR_RUNTIME);
        assert_non_null(strstr(err.message, "element 1"));
    }
    {
        int64_t in[] = {0, -1, 16777217, INT64_MAX, INT64_MIN, 0x100000001};
        float f[6], want_f[6];
        double d[6], want_d[6];
        int32_t narrow[6], want_narrow[] = {0, -1, 16777217, -1, 0, 1};
        uint8_t truth[6], want_truth[] = {0, 1, 1, 1, 1, 1};
        for (int i = 0; i < 6; i++) {
            want_f[i] = (float)in[i];
            want_d[i] = (double)in[i];
        }
        assert_int_equal(cast_values(KILN_I64, in, 6, KILN_F32, f, &err), KILN_OK);
        assert_memory_equal(f, want_f, sizeof f);
        assert_int_equal(cast_values(KILN_I64, in, 6, KILN_F64, d, &err), KILN_OK);
        assert_memory_equal(d, want_d, sizeof d);
        assert_int_equal(cast_values(KILN_I64, in, 6, KILN_I32, narrow, &err), KILN_OK);
        assert_memory_equal(narrow, want_narrow, sizeof narrow);
        assert_int_equal(cast_values(KILN_I64, in, 6, KILN_BOOL, truth, &err), KILN_OK);
        assert_memory_equal(truth, want_truth, sizeof truth);
    }
    {
        uint8_t in[] = {0, 1, 7}; /* a bool byte other than 1 is true */
        float f[3], want_f[] = {0.0f, 1.0f, 1.0f};
        int64_t i64[3], want_i64[] = {0, 1, 1};
        assert_int_equal(cast_values(KILN_BOOL, in, 3, KILN_F32, f, &err), KILN_OK);
        assert_memory_equal(f, want_f, sizeof f);
        assert_int_equal(cast_values(KILN_BOOL, in, 3, KILN_I64, i64, &err), KILN_OK);
        assert_memory_equal(i64, want_i64, sizeof i64);
        float mask[] = {0.0f, -0.0f, NAN, 0.5f};
        uint8_t truth[4], want_truth[] = {0, 0, 1, 1};
        assert_int_equal(cast_values(KILN_F32, mask, 4, KILN_BOOL, truth, &err), KILN_OK);
        assert_memory_equal(truth, want_truth, sizeof truth);
        int32_t small[] = {-5, 0, 16777217};
        int64_t wide[3], want_wide[] = {-5, 0, 16777217};
        float sf[3], want_sf[] = {-5.0f, 0.0f, 16777216.0f};
        assert_int_equal(cast_values(KILN_I32, small, 3, KILN_I64, wide, &err), KILN_OK);
        assert_memory_equal(wide, want_wide, sizeof wide);
        assert_int_equal(cast_values(KILN_I32, small, 3, KILN_F32, sf, &err), KILN_OK);
        assert_memory_equal(sf, want_sf, sizeof sf);
    }
}

/* ----------------------------------------------------- concat, expand, tile */

static void concat_matches_reference(void **state)
{
    (void)state;
    for (int64_t axis = -3; axis < 3; axis++) {
        uint32_t a = (uint32_t)(axis < 0 ? axis + 3 : axis);
        int64_t shapes[3][3] = {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}};
        shapes[0][a] = 1;
        shapes[1][a] = 0;
        shapes[2][a] = 3;
        kiln_tensor *in[3];
        for (int k = 0; k < 3; k++)
            in[k] = random_tensor(KILN_U32, 3, shapes[k]);
        int64_t out_shape[3] = {2, 3, 4};
        out_shape[a] = 4;
        kiln_tensor *out = new_tensor(KILN_U32, 3, out_shape);
        poison(out);
        kiln_node_attribute attr = {.name = (char *)"axis", .type = KILN_ATTRIBUTE_INT, .i = axis};
        kiln_error err;
        assert_int_equal(call_kernel("concat", 3, (const kiln_tensor *[]){in[0], in[1], in[2]}, out, 1, &attr, &err),
                         KILN_OK);
        for (uint64_t e = 0; e < out->element_count; e++) {
            int64_t index[3];
            unflatten(e, 3, out_shape, index);
            int k = 0;
            while (index[a] >= shapes[k][a]) {
                index[a] -= shapes[k][a];
                k++;
            }
            assert_element(out, e, in[k], flat_of(3, shapes[k], index));
        }
        for (int k = 0; k < 3; k++)
            kiln_tensor_free(in[k]);
        kiln_tensor_free(out);
    }
}

static void expand_matches_reference(void **state)
{
    (void)state;
    struct {
        uint32_t in_rank;
        int64_t in[3];
        uint32_t out_rank;
        int64_t out[4];
    } cases[] = {
        {2, {1, 3}, 3, {2, 4, 3}},
        {3, {2, 1, 1}, 3, {2, 3, 5}},
        {1, {1}, 4, {2, 1, 3, 2}},
        {0, {0}, 2, {3, 2}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kiln_tensor *in = random_tensor(KILN_F64, cases[c].in_rank, cases[c].in);
        kiln_tensor *out = new_tensor(KILN_F64, cases[c].out_rank, cases[c].out);
        poison(out);
        kiln_error err;
        assert_int_equal(call_kernel("expand", 1, (const kiln_tensor *[]){in}, out, 0, NULL, &err), KILN_OK);
        uint32_t offset = cases[c].out_rank - cases[c].in_rank;
        for (uint64_t e = 0; e < out->element_count; e++) {
            int64_t index[4], source[3];
            unflatten(e, cases[c].out_rank, cases[c].out, index);
            for (uint32_t i = 0; i < cases[c].in_rank; i++)
                source[i] = cases[c].in[i] == 1 ? 0 : index[offset + i];
            assert_element(out, e, in, flat_of(cases[c].in_rank, cases[c].in, source));
        }
        kiln_tensor_free(in);
        kiln_tensor_free(out);
    }
}

static void tile_matches_reference(void **state)
{
    (void)state;
    int64_t in_shape[3] = {2, 3, 1};
    int64_t repeats[][3] = {{1, 1, 1}, {2, 3, 4}, {3, 1, 2}, {1, 0, 2}};
    kiln_tensor *in = random_tensor(KILN_I8, 3, in_shape);
    for (size_t c = 0; c < sizeof repeats / sizeof repeats[0]; c++) {
        int64_t out_shape[3];
        for (int i = 0; i < 3; i++)
            out_shape[i] = in_shape[i] * repeats[c][i];
        kiln_tensor *out = new_tensor(KILN_I8, 3, out_shape);
        poison(out);
        kiln_node_attribute attr = {.name = (char *)"repeats", .type = KILN_ATTRIBUTE_INTS, .ints = repeats[c],
                                    .count = 3};
        kiln_error err;
        assert_int_equal(call_kernel("tile", 1, (const kiln_tensor *[]){in}, out, 1, &attr, &err), KILN_OK);
        for (uint64_t e = 0; e < out->element_count; e++) {
            int64_t index[3];
            unflatten(e, 3, out_shape, index);
            for (int i = 0; i < 3; i++)
                index[i] %= in_shape[i];
            assert_element(out, e, in, flat_of(3, in_shape, index));
        }
        kiln_tensor_free(out);
    }
    kiln_tensor_free(in);
}

/* ------------------------------------------------------------------ pad */

/* Source index of each padded position of one axis, -1 for the fill value, built by concatenation. */
static int64_t build_pad_map(const char *mode, int64_t n, int64_t begin, int64_t end, int64_t *map)
{
    int64_t k = 0;
    for (int64_t i = begin; i >= 1; i--)
        map[k++] = strcmp(mode, "reflect") == 0 ? i : strcmp(mode, "edge") == 0 ? 0 : -1;
    for (int64_t i = 0; i < n; i++)
        map[k++] = i;
    for (int64_t i = 1; i <= end; i++)
        map[k++] = strcmp(mode, "reflect") == 0 ? n - 1 - i : strcmp(mode, "edge") == 0 ? n - 1 : -1;
    return k;
}

static void pad_matches_reference(void **state)
{
    (void)state;
    static const char *const modes[] = {"constant", "reflect", "edge"};
    int64_t in_shape[2] = {3, 4};
    int64_t pads[][4] = {{0, 0, 0, 0}, {1, 2, 2, 1}, {2, 0, 0, 3}, {0, 1, 1, 0}};
    kiln_tensor *in = random_tensor(KILN_F32, 2, in_shape);
    for (int m = 0; m < 3; m++)
        for (size_t c = 0; c < sizeof pads / sizeof pads[0]; c++) {
            int64_t out_shape[2] = {in_shape[0] + pads[c][0] + pads[c][2], in_shape[1] + pads[c][1] + pads[c][3]};
            int64_t map0[16], map1[16];
            assert_int_equal(build_pad_map(modes[m], 3, pads[c][0], pads[c][2], map0), out_shape[0]);
            assert_int_equal(build_pad_map(modes[m], 4, pads[c][1], pads[c][3], map1), out_shape[1]);
            kiln_tensor *out = new_tensor(KILN_F32, 2, out_shape);
            poison(out);
            kiln_node_attribute attrs[] = {
                borrowed_attribute((kiln_attribute){.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = modes[m]}),
                {.name = (char *)"pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads[c], .count = 4},
                {.name = (char *)"value", .type = KILN_ATTRIBUTE_FLOAT, .f = -1.5},
            };
            kiln_error err;
            assert_int_equal(call_kernel("pad", 1, (const kiln_tensor *[]){in}, out, 3, attrs, &err), KILN_OK);
            const float *o = out->data;
            for (int64_t i = 0; i < out_shape[0]; i++)
                for (int64_t j = 0; j < out_shape[1]; j++) {
                    uint64_t e = (uint64_t)(i * out_shape[1] + j);
                    if (map0[i] < 0 || map1[j] < 0)
                        assert_true(o[e] == -1.5f);
                    else
                        assert_element(out, e, in, (uint64_t)(map0[i] * 4 + map1[j]));
                }
            kiln_tensor_free(out);
        }
    kiln_tensor_free(in);
}

/* ------------------------------------------------------ shape_of, size_of */

static void shape_and_size_of(void **state)
{
    (void)state;
    kiln_tensor *in = random_tensor(KILN_BOOL, 3, (int64_t[]){2, 0, 5});
    kiln_tensor *shape = new_tensor(KILN_I64, 1, (int64_t[]){3});
    kiln_tensor *size = new_tensor(KILN_I64, 0, NULL);
    kiln_error err;
    assert_int_equal(call_kernel("shape_of", 1, (const kiln_tensor *[]){in}, shape, 0, NULL, &err), KILN_OK);
    assert_int_equal(call_kernel("size_of", 1, (const kiln_tensor *[]){in}, size, 0, NULL, &err), KILN_OK);
    const int64_t *s = shape->data;
    assert_int_equal(s[0], 2);
    assert_int_equal(s[1], 0);
    assert_int_equal(s[2], 5);
    assert_int_equal(*(const int64_t *)size->data, 0);
    kiln_tensor_free(in);
    kiln_tensor_free(shape);
    kiln_tensor_free(size);
}

/* ------------------------------------------------- builder and session */

typedef struct built {
    kiln_builder *builder;
    kiln_program *program;
    kiln_session *session;
} built;

/* A program: dim batch in 1..4, input x of `dtype` and `shape`, one node `op`, output y. */
static void build_unary(built *p, const char *op, kiln_dtype dtype, const char *shape, uint32_t attribute_count,
                        const kiln_attribute *attributes)
{
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("shape", &p->builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(p->builder, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p->builder, "x", dtype, shape, &x, &err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(p->builder, op, 1, &x, attribute_count, attributes, &y, &err);
    if (status != KILN_OK)
        print_error("build: %s\n", err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(kiln_builder_add_output(p->builder, "y", y, &err), KILN_OK);
}

static void open_session(built *p)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_status status = kiln_builder_encode(p->builder, NULL, &bytes, &size, &err);
    if (status != KILN_OK)
        print_error("encode: %s\n", err.message);
    assert_int_equal(status, KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &p->program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(p->program, NULL, &p->session, &err), KILN_OK);
}

static void close_built(built *p)
{
    kiln_session_free(p->session);
    kiln_program_free(p->program);
    kiln_builder_free(p->builder);
}

static void assert_output_text(const kiln_program *program, const char *expected)
{
    char text[128];
    kiln_program_output_shape_text(program, 0, text, sizeof text);
    if (strcmp(text, expected) != 0)
        print_error("output shape %s, expected %s\n", text, expected);
    assert_string_equal(text, expected);
}

static const kiln_tensor *run_session(built *p, uint32_t count, const char *const *names,
                                      kiln_tensor *const *inputs)
{
    kiln_error err;
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(kiln_session_set_input(p->session, names[i], inputs[i], &err), KILN_OK);
    kiln_status status = kiln_session_run(p->session, &err);
    if (status != KILN_OK)
        print_error("run: %s\n", err.message);
    assert_int_equal(status, KILN_OK);
    return kiln_session_output(p->session, 0);
}

static void assert_shape(const kiln_tensor *t, uint32_t rank, const int64_t *shape)
{
    assert_int_equal(kiln_tensor_rank(t), rank);
    for (uint32_t i = 0; i < rank; i++)
        assert_int_equal(kiln_tensor_shape(t)[i], shape[i]);
}

#define PUB_INTS(name_, ...)                                                                                 \
    {                                                                                                        \
        .name = (name_), .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){__VA_ARGS__},                      \
        .count = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)                                          \
    }

/* Ops whose output is the input's bytes: the shapes are symbolic, the data unchanged. */
static void end_to_end_copies(void **state)
{
    (void)state;
    struct {
        const char *op;
        const char *in_shape;
        kiln_attribute attribute;
        uint32_t attribute_count;
        const char *out_shape;
        uint32_t rank;
        int64_t at3[4]; /* the output shape at batch = 3 */
    } cases[] = {
        {"identity", "[batch, 2]", {0}, 0, "[batch, 2]", 2, {3, 2}},
        {"squeeze", "[batch, 1, 6, 1]", PUB_INTS("axes", 1, -1), 1, "[batch, 6]", 2, {3, 6}},
        {"unsqueeze", "[batch, 6]", PUB_INTS("axes", 0, 2), 1, "[1, batch, 1, 6]", 4, {1, 3, 1, 6}},
        {"unsqueeze", "[batch, 6]", PUB_INTS("axes", -1), 1, "[batch, 6, 1]", 3, {3, 6, 1}},
        {"reshape", "[batch, 4, 6]", PUB_INTS("shape", 0, -1), 1, "[batch, 24]", 2, {3, 24}},
        {"reshape", "[batch, 4, 6]", PUB_INTS("shape", -1, 6), 1, "[4*batch, 6]", 2, {12, 6}},
        {"reshape", "[batch, 4, 6]", PUB_INTS("shape", 0, 2, 12), 1, "[batch, 2, 12]", 3, {3, 2, 12}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        built p = {0};
        build_unary(&p, cases[i].op, KILN_I32, cases[i].in_shape, cases[i].attribute_count, &cases[i].attribute);
        open_session(&p);
        assert_output_text(p.program, cases[i].out_shape);
        int64_t in_shape[4] = {3, 0, 0, 0};
        uint32_t in_rank = 0;
        /* Input shapes at batch = 3. */
        if (strcmp(cases[i].in_shape, "[batch, 2]") == 0) {
            in_rank = 2;
            in_shape[1] = 2;
        } else if (strcmp(cases[i].in_shape, "[batch, 1, 6, 1]") == 0) {
            in_rank = 4;
            in_shape[1] = 1;
            in_shape[2] = 6;
            in_shape[3] = 1;
        } else if (strcmp(cases[i].in_shape, "[batch, 6]") == 0) {
            in_rank = 2;
            in_shape[1] = 6;
        } else {
            in_rank = 3;
            in_shape[1] = 4;
            in_shape[2] = 6;
        }
        kiln_tensor *tx = random_tensor(KILN_I32, in_rank, in_shape);
        const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
        assert_shape(out, cases[i].rank, cases[i].at3);
        assert_memory_equal(kiln_tensor_const_data(out), tx->data, tx->byte_size);
        kiln_tensor_free(tx);
        close_built(&p);
    }
}

/* The -1 axis divides by a constant that does not divide the rest: floor-div, accepted when exact everywhere. */
static void end_to_end_reshape_floordiv(void **state)
{
    (void)state;
    built p = {0};
    kiln_error err;
    kiln_value x, y, anchor;
    assert_int_equal(kiln_builder_new("shape", &p.builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(p.builder, "pairs", 1, 3, &err), KILN_OK);
    /* Some input axis must be exactly 'pairs' so that a run can bind it. */
    assert_int_equal(kiln_builder_add_input(p.builder, "anchor", KILN_U8, "[pairs]", &anchor, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "x", KILN_F32, "[2*pairs + 2, 3]", &x, &err), KILN_OK);
    kiln_attribute shape = PUB_INTS("shape", 2, -1);
    assert_int_equal(kiln_builder_add_op_with_attributes(p.builder, "reshape", 1, &x, 1, &shape, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
    open_session(&p);
    assert_output_text(p.program, "[2, 3*pairs + 3]");
    kiln_tensor *tx = random_tensor(KILN_F32, 2, (int64_t[]){8, 3});
    kiln_tensor *ta = random_tensor(KILN_U8, 1, (int64_t[]){3});
    const kiln_tensor *out = run_session(&p, 2, (const char *[]){"anchor", "x"}, (kiln_tensor *[]){ta, tx});
    assert_shape(out, 2, (int64_t[]){2, 12});
    assert_memory_equal(kiln_tensor_const_data(out), tx->data, tx->byte_size);
    kiln_tensor_free(tx);
    kiln_tensor_free(ta);
    close_built(&p);
}

static void end_to_end_cast(void **state)
{
    (void)state;
    built p = {0};
    kiln_attribute to = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = "i16"};
    build_unary(&p, "cast", KILN_F64, "[batch, 2]", 1, &to);
    open_session(&p);
    assert_output_text(p.program, "[batch, 2]");
    kiln_tensor *tx = new_tensor(KILN_F64, 2, (int64_t[]){2, 2});
    double *v = tx->data;
    v[0] = 1.9;
    v[1] = -1.9;
    v[2] = 32767.5;
    v[3] = -32768.9;
    const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
    assert_shape(out, 2, (int64_t[]){2, 2});
    const int16_t *o = kiln_tensor_const_data(out);
    assert_int_equal(o[0], 1);
    assert_int_equal(o[1], -1);
    assert_int_equal(o[2], 32767);
    assert_int_equal(o[3], -32768);
    /* An out-of-range element fails the run. */
    v[1] = 40000.0;
    kiln_error err;
    assert_int_equal(kiln_session_set_input(p.session, "x", tx, &err), KILN_OK);
    assert_int_equal(kiln_session_run(p.session, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "element 1"));
    kiln_tensor_free(tx);
    close_built(&p);
}

static void end_to_end_concat(void **state)
{
    (void)state;
    built p = {0};
    kiln_error err;
    kiln_value a, b, c, y;
    assert_int_equal(kiln_builder_new("shape", &p.builder, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(p.builder, "seq", 1, 5, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "a", KILN_U16, "[batch, seq]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "b", KILN_U16, "[batch, 2]", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(p.builder, "c", KILN_U16, "[batch, 1]", &c, &err), KILN_OK);
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    assert_int_equal(
        kiln_builder_add_op_with_attributes(p.builder, "concat", 3, (kiln_value[]){a, b, c}, 1, &axis, &y, &err),
        KILN_OK);
    assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
    open_session(&p);
    assert_output_text(p.program, "[batch, seq + 3]");
    kiln_tensor *ta = random_tensor(KILN_U16, 2, (int64_t[]){2, 4});
    kiln_tensor *tb = random_tensor(KILN_U16, 2, (int64_t[]){2, 2});
    kiln_tensor *tc = random_tensor(KILN_U16, 2, (int64_t[]){2, 1});
    const kiln_tensor *out =
        run_session(&p, 3, (const char *[]){"a", "b", "c"}, (kiln_tensor *[]){ta, tb, tc});
    assert_shape(out, 2, (int64_t[]){2, 7});
    const uint16_t *o = kiln_tensor_const_data(out), *va = ta->data, *vb = tb->data, *vc = tc->data;
    for (int r = 0; r < 2; r++) {
        for (int j = 0; j < 4; j++)
            assert_int_equal(o[r * 7 + j], va[r * 4 + j]);
        for (int j = 0; j < 2; j++)
            assert_int_equal(o[r * 7 + 4 + j], vb[r * 2 + j]);
        assert_int_equal(o[r * 7 + 6], vc[r]);
    }
    kiln_tensor_free(ta);
    kiln_tensor_free(tb);
    kiln_tensor_free(tc);
    close_built(&p);
}

static void end_to_end_expand_tile(void **state)
{
    (void)state;
    {
        built p = {0};
        kiln_attribute shape = PUB_INTS("shape", 2, 1, 5);
        build_unary(&p, "expand", KILN_I64, "[batch, 1]", 1, &shape);
        open_session(&p);
        assert_output_text(p.program, "[2, batch, 5]");
        kiln_tensor *tx = random_tensor(KILN_I64, 2, (int64_t[]){3, 1});
        const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
        assert_shape(out, 3, (int64_t[]){2, 3, 5});
        const int64_t *o = kiln_tensor_const_data(out), *v = tx->data;
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < 5; j++)
                    assert_int_equal(o[(i * 3 + b) * 5 + j], v[b]);
        kiln_tensor_free(tx);
        close_built(&p);
    }
    {
        built p = {0};
        kiln_attribute repeats = PUB_INTS("repeats", 3, 2);
        build_unary(&p, "tile", KILN_U8, "[batch, 2]", 1, &repeats);
        open_session(&p);
        assert_output_text(p.program, "[3*batch, 4]");
        kiln_tensor *tx = random_tensor(KILN_U8, 2, (int64_t[]){2, 2});
        const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
        assert_shape(out, 2, (int64_t[]){6, 4});
        const uint8_t *o = kiln_tensor_const_data(out), *v = tx->data;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++)
                assert_int_equal(o[i * 4 + j], v[(i % 2) * 2 + j % 2]);
        kiln_tensor_free(tx);
        close_built(&p);
    }
}

/*
 * expand_to: a target over the dims broadcasts a 1 to a symbolic size.
 * Input t only binds batch and seq; the outputs are expand_to of x [1, 1, 4]
 * to "[batch, 1, 1]" (ViT's class token) and of a scalar 7 to "[seq, seq]"
 * (ConstantOfShape over symbolic sizes).
 */
static void end_to_end_expand_to(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    kiln_value x, t, seven, y[2];
    assert_int_equal(kiln_builder_new("expand_to", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 1, 6, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[1, 1, 4]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "t", KILN_F32, "[batch, seq]", &t, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I64, 7, &seven, &err), KILN_OK);
    kiln_attribute cls = {.name = "shape", .type = KILN_ATTRIBUTE_STRING, .s = "[batch, 1, 1]"};
    kiln_attribute square = {.name = "shape", .type = KILN_ATTRIBUTE_STRING, .s = "[seq, seq]"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "expand_to", 1, &x, 1, &cls, &y[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "expand_to", 1, &seven, 1, &square, &y[1], &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "cls", y[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "mask", y[1], &err), KILN_OK);
    built p = {.builder = b};
    open_session(&p);
    assert_output_text(p.program, "[batch, 1, 4]");
    char text[64];
    kiln_program_output_shape_text(p.program, 1, text, sizeof text);
    assert_string_equal(text, "[seq, seq]");
    for (int64_t batch = 1; batch <= 4; batch += 3)
        for (int64_t seq = 1; seq <= 6; seq += 5) {
            kiln_tensor *tx = random_tensor(KILN_F32, 3, (int64_t[]){1, 1, 4});
            kiln_tensor *tt = random_tensor(KILN_F32, 2, (int64_t[]){batch, seq});
            const kiln_tensor *out = run_session(&p, 2, (const char *[]){"x", "t"}, (kiln_tensor *[]){tx, tt});
            assert_shape(out, 3, (int64_t[]){batch, 1, 4});
            for (int64_t e = 0; e < batch * 4; e++)
                assert_element(out, (uint64_t)e, tx, (uint64_t)(e % 4));
            const kiln_tensor *mask = kiln_session_output(p.session, 1);
            assert_shape(mask, 2, (int64_t[]){seq, seq});
            for (int64_t e = 0; e < seq * seq; e++)
                assert_int_equal(((const int64_t *)kiln_tensor_const_data(mask))[e], 7);
            kiln_tensor_free(tx);
            kiln_tensor_free(tt);
        }
    close_built(&p);
}

static void end_to_end_pad(void **state)
{
    (void)state;
    static const char *const modes[] = {"constant", "reflect", "edge"};
    for (int m = 0; m < 3; m++) {
        built p = {0};
        kiln_error err;
        kiln_value x, y;
        assert_int_equal(kiln_builder_new("shape", &p.builder, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_dim(p.builder, "batch", 3, 6, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(p.builder, "x", KILN_I32, "[2, batch]", &x, &err), KILN_OK);
        kiln_attribute attrs[] = {
            {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = modes[m]},
            PUB_INTS("pads", 0, 2, 0, 1),
            {.name = "value", .type = KILN_ATTRIBUTE_INT, .i = 7}, /* coerced to FLOAT */
        };
        assert_int_equal(kiln_builder_add_op_with_attributes(p.builder, "pad", 1, &x, 3, attrs, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(p.builder, "y", y, &err), KILN_OK);
        open_session(&p);
        assert_output_text(p.program, "[2, batch + 3]");
        kiln_tensor *tx = random_tensor(KILN_I32, 2, (int64_t[]){2, 4});
        const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
        assert_shape(out, 2, (int64_t[]){2, 7});
        int64_t map[16];
        assert_int_equal(build_pad_map(modes[m], 4, 2, 1, map), 7);
        const int32_t *o = kiln_tensor_const_data(out), *v = tx->data;
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 7; j++)
                assert_int_equal(o[r * 7 + j], map[j] < 0 ? 7 : v[r * 4 + map[j]]);
        kiln_tensor_free(tx);
        close_built(&p);
    }
}

static void end_to_end_shape_of_size_of(void **state)
{
    (void)state;
    static const char *const ops[] = {"shape_of", "size_of"};
    for (int k = 0; k < 2; k++) {
        built p = {0};
        build_unary(&p, ops[k], KILN_F32, "[batch, 3, 2]", 0, NULL);
        open_session(&p);
        assert_output_text(p.program, k == 0 ? "[3]" : "[]");
        for (int64_t batch = 1; batch <= 4; batch += 3) {
            kiln_tensor *tx = random_tensor(KILN_F32, 3, (int64_t[]){batch, 3, 2});
            const kiln_tensor *out = run_session(&p, 1, (const char *[]){"x"}, (kiln_tensor *[]){tx});
            assert_int_equal(kiln_tensor_dtype(out), KILN_I64);
            const int64_t *o = kiln_tensor_const_data(out);
            if (k == 0) {
                assert_shape(out, 1, (int64_t[]){3});
                assert_int_equal(o[0], batch);
                assert_int_equal(o[1], 3);
                assert_int_equal(o[2], 2);
            } else {
                assert_int_equal(kiln_tensor_rank(out), 0);
                assert_int_equal(o[0], batch * 6);
            }
            kiln_tensor_free(tx);
        }
        close_built(&p);
    }
}

/* ----------------------------------------------------- static refusals */

typedef struct dim_spec {
    const char *name;
    int64_t min, max;
} dim_spec;

static kiln_status try_build(const char *op, uint32_t dim_count, const dim_spec *dims, uint32_t input_count,
                             kiln_dtype dtype, const char *const *shapes, uint32_t attribute_count,
                             const kiln_attribute *attributes, kiln_error *err)
{
    kiln_builder *b;
    assert_int_equal(kiln_builder_new("shape", &b, err), KILN_OK);
    kiln_value values[3], y;
    for (uint32_t i = 0; i < dim_count; i++)
        assert_int_equal(kiln_builder_add_dim(b, dims[i].name, dims[i].min, dims[i].max, err), KILN_OK);
    static const char *const names[] = {"a", "b", "c"};
    for (uint32_t i = 0; i < input_count; i++)
        assert_int_equal(kiln_builder_add_input(b, names[i], dtype, shapes[i], &values[i], err), KILN_OK);
    kiln_status status =
        kiln_builder_add_op_with_attributes(b, op, input_count, values, attribute_count, attributes, &y, err);
    kiln_builder_free(b);
    return status;
}

static void expect_refusal(kiln_status status, const kiln_error *err, const char *needle1, const char *needle2)
{
    assert_int_equal(status, KILN_ERR_INVALID_PROGRAM);
    if ((needle1 && !strstr(err->message, needle1)) || (needle2 && !strstr(err->message, needle2))) {
        print_error("message: %s\n", err->message);
        fail();
    }
}

static const dim_spec n_dim[] = {{"n", 2, 8}};
static const dim_spec batch_dim[] = {{"batch", 1, 4}};

static void reshape_refusals(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute four = PUB_INTS("shape", 4);
    expect_refusal(try_build("reshape", 1, n_dim, 1, KILN_F32, (const char *[]){"[n]"}, 1, &four, &err), &err,
                   "counterexample: n=2", "element count");
    /* -1 by a constant that does not always divide: floor-div loses elements at n = 3. */
    kiln_attribute split = PUB_INTS("shape", 2, -1);
    expect_refusal(try_build("reshape", 1, n_dim, 1, KILN_F32, (const char *[]){"[n, 3]"}, 1, &split, &err), &err,
                   "counterexample: n=3", NULL);
    kiln_attribute two_inferred = PUB_INTS("shape", -1, -1);
    expect_refusal(try_build("reshape", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &two_inferred, &err),
                   &err, "more than one -1", NULL);
    kiln_attribute copy_missing = PUB_INTS("shape", 6, 0);
    expect_refusal(try_build("reshape", 0, NULL, 1, KILN_F32, (const char *[]){"[6]"}, 1, &copy_missing, &err),
                   &err, "copies an input axis", NULL);
    kiln_attribute negative = PUB_INTS("shape", -2, 3);
    expect_refusal(try_build("reshape", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &negative, &err),
                   &err, "-2", NULL);
    /* Domains too large to enumerate are decided by the polynomial procedure (spec/contract.md §4.1). */
    static const dim_spec wide[] = {{"u", 1, 1000}, {"v", 1, 1000}};
    kiln_attribute swap = PUB_INTS("shape", -1);
    assert_int_equal(try_build("reshape", 2, wide, 1, KILN_F32, (const char *[]){"[u, v]"}, 1, &swap, &err),
                     KILN_OK);
    kiln_attribute uv = PUB_INTS("shape", 0, 0, 1);
    assert_int_equal(try_build("reshape", 2, wide, 1, KILN_F32, (const char *[]){"[u, v]"}, 1, &uv, &err),
                     KILN_OK);
    static const dim_spec wide3[] = {{"u", 1, 1000}, {"v", 1, 1000}, {"w", 1, 1000}};
    kiln_attribute keep = PUB_INTS("shape", 0, 0);
    expect_refusal(try_build("reshape", 3, wide3, 1, KILN_F32, (const char *[]){"[u, v, w]"}, 1, &keep, &err),
                   &err, "keeps the element count (input u*v*w, output u*v)", "counterexample: u=1, v=1, w=2");
}

static void squeeze_unsqueeze_refusals(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute axes0 = PUB_INTS("axes", 0);
    expect_refusal(try_build("squeeze", 1, batch_dim, 1, KILN_F32, (const char *[]){"[batch, 1]"}, 1, &axes0, &err),
                   &err, "axis 0", "not provably 1");
    kiln_attribute axes3 = PUB_INTS("axes", 2);
    expect_refusal(try_build("squeeze", 0, NULL, 1, KILN_F32, (const char *[]){"[1, 1]"}, 1, &axes3, &err), &err,
                   "axis 2", NULL);
    kiln_attribute repeated = PUB_INTS("axes", 0, -2);
    expect_refusal(try_build("squeeze", 0, NULL, 1, KILN_F32, (const char *[]){"[1, 1]"}, 1, &repeated, &err),
                   &err, "repeated", NULL);
    expect_refusal(try_build("squeeze", 0, NULL, 1, KILN_F32, (const char *[]){"[1, 1]"}, 0, NULL, &err), &err,
                   "'axes' is required", NULL);
    kiln_attribute far = PUB_INTS("axes", 3);
    expect_refusal(try_build("unsqueeze", 0, NULL, 1, KILN_F32, (const char *[]){"[2]"}, 1, &far, &err), &err,
                   "axis 3", NULL);
    kiln_attribute many = PUB_INTS("axes", 0, 1, 2, 3, 4, 5, 6, 7);
    expect_refusal(try_build("unsqueeze", 0, NULL, 1, KILN_F32, (const char *[]){"[2]"}, 1, &many, &err), &err,
                   "rank", NULL);
}

static void concat_refusals(void **state)
{
    (void)state;
    kiln_error err;
    static const dim_spec mn[] = {{"m", 1, 4}, {"n", 1, 4}};
    kiln_attribute axis0 = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
    expect_refusal(try_build("concat", 2, mn, 2, KILN_F32, (const char *[]){"[m, 3]", "[n, 3]"}, 1,
                             &(kiln_attribute){.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1}, &err),
                   &err, "axis 0", "counterexample: m=2, n=1");
    expect_refusal(try_build("concat", 0, NULL, 2, KILN_F32, (const char *[]){"[2, 3]", "[2, 4]"}, 1, &axis0, &err),
                   &err, "axis 1", NULL);
    expect_refusal(try_build("concat", 0, NULL, 2, KILN_F32, (const char *[]){"[2, 3]", "[2]"}, 1, &axis0, &err),
                   &err, "rank", NULL);
    kiln_attribute axis2 = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 2};
    expect_refusal(try_build("concat", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &axis2, &err), &err,
                   "axis 2", NULL);
    expect_refusal(try_build("concat", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 0, NULL, &err), &err,
                   "'axis' is required", NULL);
}

static void pad_refusals(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute reflect[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "reflect"},
        PUB_INTS("pads", 0, 2, 0, 0),
    };
    expect_refusal(try_build("pad", 1, batch_dim, 1, KILN_F32, (const char *[]){"[3, batch]"}, 2, reflect, &err),
                   &err, "axis 1", "counterexample: batch=1");
    /* Constant size too small: no dims involved. */
    expect_refusal(try_build("pad", 0, NULL, 1, KILN_F32, (const char *[]){"[3, 2]"}, 2, reflect, &err), &err,
                   "axis 1", "reflect");
    kiln_attribute edge[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "edge"},
        PUB_INTS("pads", 1, 0),
    };
    static const dim_spec may_be_empty[] = {{"n", 0, 3}};
    expect_refusal(try_build("pad", 1, may_be_empty, 1, KILN_F32, (const char *[]){"[n]"}, 2, edge, &err), &err,
                   "edge", "counterexample: n=0");
    kiln_attribute bad_mode[] = {
        {.name = "mode", .type = KILN_ATTRIBUTE_STRING, .s = "wrap"},
        PUB_INTS("pads", 1, 0),
    };
    expect_refusal(try_build("pad", 0, NULL, 1, KILN_F32, (const char *[]){"[3]"}, 2, bad_mode, &err), &err,
                   "wrap", NULL);
    kiln_attribute short_pads = PUB_INTS("pads", 1);
    expect_refusal(try_build("pad", 0, NULL, 1, KILN_F32, (const char *[]){"[3]"}, 1, &short_pads, &err), &err,
                   "2*rank", NULL);
    kiln_attribute fraction[] = {
        PUB_INTS("pads", 1, 0),
        {.name = "value", .type = KILN_ATTRIBUTE_FLOAT, .f = 0.5},
    };
    expect_refusal(try_build("pad", 0, NULL, 1, KILN_I32, (const char *[]){"[3]"}, 2, fraction, &err), &err,
                   "representable", NULL);
}

static void cast_expand_tile_refusals(void **state)
{
    (void)state;
    kiln_error err;
    kiln_attribute unknown = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = "f128"};
    expect_refusal(try_build("cast", 0, NULL, 1, KILN_F32, (const char *[]){"[2]"}, 1, &unknown, &err), &err,
                   "f128", "not a supported dtype");
    kiln_attribute half = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = "f16"};
    assert_int_equal(try_build("cast", 0, NULL, 1, KILN_F32, (const char *[]){"[2]"}, 1, &half, &err), KILN_OK);
    expect_refusal(try_build("cast", 0, NULL, 1, KILN_F32, (const char *[]){"[2]"}, 0, NULL, &err), &err,
                   "'to'", NULL);
    kiln_attribute target = PUB_INTS("shape", 4, 3);
    assert_int_equal(try_build("expand", 1, batch_dim, 1, KILN_F32, (const char *[]){"[batch, 3]"}, 1, &target, &err),
                     KILN_ERR_INVALID_PROGRAM);
    kiln_attribute bad_target = PUB_INTS("shape", 2, 2);
    expect_refusal(try_build("expand", 0, NULL, 1, KILN_F32, (const char *[]){"[3]"}, 1, &bad_target, &err), &err,
                   NULL, NULL);
    /* expand_to: the target's names must be declared dims, its sizes provably >= 0, and it must broadcast. */
    kiln_attribute undeclared = {.name = "shape", .type = KILN_ATTRIBUTE_STRING, .s = "[seq, 3]"};
    expect_refusal(try_build("expand_to", 1, batch_dim, 1, KILN_F32, (const char *[]){"[batch, 3]"}, 1, &undeclared,
                             &err),
                   &err, "'shape' \"[seq, 3]\" is not a shape over the declared dims", NULL);
    kiln_attribute shrinking = {.name = "shape", .type = KILN_ATTRIBUTE_STRING, .s = "[batch - 2, 3]"};
    expect_refusal(try_build("expand_to", 1, batch_dim, 1, KILN_F32, (const char *[]){"[1, 3]"}, 1, &shrinking,
                             &err),
                   &err, "counterexample: batch=1", NULL);
    kiln_attribute other = {.name = "shape", .type = KILN_ATTRIBUTE_STRING, .s = "[batch, 3]"};
    expect_refusal(try_build("expand_to", 1, batch_dim, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &other, &err),
                   &err, NULL, NULL);
    expect_refusal(try_build("expand_to", 1, batch_dim, 1, KILN_F32, (const char *[]){"[2, 3]"}, 0, NULL, &err),
                   &err, "'shape'", NULL);
    kiln_attribute repeats = PUB_INTS("repeats", 2);
    expect_refusal(try_build("tile", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &repeats, &err), &err,
                   "one entry per axis", NULL);
    kiln_attribute negative = PUB_INTS("repeats", 2, -1);
    expect_refusal(try_build("tile", 0, NULL, 1, KILN_F32, (const char *[]){"[2, 3]"}, 1, &negative, &err), &err,
                   "negative", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(copies_match_reference),
        cmocka_unit_test(cast_known_answers),
        cmocka_unit_test(cast_refuses_unconvertible_elements),
        cmocka_unit_test(cast_common_pairs_as_c_converts),
        cmocka_unit_test(concat_matches_reference),
        cmocka_unit_test(expand_matches_reference),
        cmocka_unit_test(tile_matches_reference),
        cmocka_unit_test(pad_matches_reference),
        cmocka_unit_test(shape_and_size_of),
        cmocka_unit_test(end_to_end_copies),
        cmocka_unit_test(end_to_end_reshape_floordiv),
        cmocka_unit_test(end_to_end_cast),
        cmocka_unit_test(end_to_end_concat),
        cmocka_unit_test(end_to_end_expand_tile),
        cmocka_unit_test(end_to_end_expand_to),
        cmocka_unit_test(end_to_end_pad),
        cmocka_unit_test(end_to_end_shape_of_size_of),
        cmocka_unit_test(reshape_refusals),
        cmocka_unit_test(squeeze_unsqueeze_refusals),
        cmocka_unit_test(concat_refusals),
        cmocka_unit_test(pad_refusals),
        cmocka_unit_test(cast_expand_tile_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
