/*
 * test_ops_topk.c — top_k and top_k_indices against a reference written
 * here differently from the kernel: each element's rank is counted
 * directly (how many elements beat it, ties broken by index), and the
 * element of rank r goes to output slot r. Also symbolic shape rules, a
 * refusal with its counterexample, and both ops run end to end.
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

#include "family_check.h"
#include "prng.h"
#include "tensor_fixture.h"

/* Element i of a tensor as long double (i64/u64 test values stay below 2^63). */
static long double value_at(const kiln_tensor *t, uint64_t i)
{
    switch (t->dtype) {
    case KILN_F32: return ((const float *)t->data)[i];
    case KILN_F64: return ((const double *)t->data)[i];
    case KILN_I8: return ((const int8_t *)t->data)[i];
    case KILN_I32: return ((const int32_t *)t->data)[i];
    case KILN_I64: return (long double)((const int64_t *)t->data)[i];
    case KILN_U8: return ((const uint8_t *)t->data)[i];
    default: return (long double)((const uint64_t *)t->data)[i];
    }
}

static void set_value(kiln_tensor *t, uint64_t i, long double v)
{
    switch (t->dtype) {
    case KILN_F32: ((float *)t->data)[i] = (float)v; break;
    case KILN_F64: ((double *)t->data)[i] = (double)v; break;
    case KILN_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case KILN_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case KILN_I64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    case KILN_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    default: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
    }
}

/* f beats e: NaN above every number, then by value, largest or smallest first. */
static bool beats(long double f, long double e, bool largest)
{
    if (isnan(f) || isnan(e))
        return largest ? (isnan(f) && !isnan(e)) : (!isnan(f) && isnan(e));
    return largest ? f > e : f < e;
}

static kiln_status run(const char *op, const kiln_tensor *x, kiln_tensor *y, int64_t axis, int64_t k, int64_t largest,
                       kiln_error *err)
{
    kiln_node_attribute attributes[] = {
        {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = axis},
        {.name = "k", .type = KILN_ATTRIBUTE_INT, .i = k},
        {.name = "largest", .type = KILN_ATTRIBUTE_INT, .i = largest},
    };
    kiln_kernel_call call = {(const kiln_tensor *[]){x}, 1, y, attributes, 3, NULL};
    return kiln_op_find(op)->run(&call, err);
}

/* Check both ops on x along `axis` against the rank-counting reference. */
static void check_case(const kiln_tensor *x, uint32_t axis, int64_t k, bool largest)
{
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, x->shape, x->rank * sizeof shape[0]);
    shape[axis] = k;
    kiln_tensor *values = new_poisoned_tensor(x->dtype, x->rank, shape);
    kiln_tensor *positions = new_poisoned_tensor(KILN_I64, x->rank, shape);
    kiln_error err;
    assert_int_equal(run("top_k", x, values, (int64_t)axis - (int64_t)x->rank, k, largest, &err), KILN_OK);
    assert_int_equal(run("top_k_indices", x, positions, axis, k, largest, &err), KILN_OK);
    uint64_t n = (uint64_t)x->shape[axis], outer = 1, inner = 1;
    for (uint32_t a = 0; a < axis; a++)
        outer *= (uint64_t)x->shape[a];
    for (uint32_t a = axis + 1; a < x->rank; a++)
        inner *= (uint64_t)x->shape[a];
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++)
            for (uint64_t e = 0; e < n; e++) {
                long double v = value_at(x, (o * n + e) * inner + i);
                uint64_t rank = 0;
                for (uint64_t f = 0; f < n; f++) {
                    long double w = value_at(x, (o * n + f) * inner + i);
                    bool tie = !beats(w, v, largest) && !beats(v, w, largest);
                    rank += beats(w, v, largest) || (tie && f < e);
                }
                if (rank >= (uint64_t)k)
                    continue;
                uint64_t at = (o * (uint64_t)k + rank) * inner + i;
                long double got = value_at(values, at);
                int64_t where = ((const int64_t *)positions->data)[at];
                if (where != (int64_t)e || !(got == v || (isnan(got) && isnan(v))) ||
                    (got == 0 && signbit(got) != signbit(v)))
                    fail_msg("%s axis %u k %lld largest %d: slot %llu holds %Lg at %lld, want %Lg at %llu",
                             kiln_dtype_name(x->dtype), axis, (long long)k, largest, (unsigned long long)rank, got,
                             (long long)where, v, (unsigned long long)e);
            }
    kiln_tensor_free(values);
    kiln_tensor_free(positions);
}

static void both_ops_match_the_reference(void **state)
{
    (void)state;
    static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64, KILN_I8, KILN_I32, KILN_I64, KILN_U8, KILN_U64};
    static const int64_t shapes[][3] = {{7, 1, 1}, {2, 5, 3}, {4, 1, 6}};
    static const uint32_t ranks[] = {1, 3, 3};
    uint64_t rng = 7;
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
        for (size_t s = 0; s < 3; s++) {
            kiln_tensor *x = new_poisoned_tensor(dtypes[d], ranks[s], shapes[s]);
            bool is_float = dtypes[d] == KILN_F32 || dtypes[d] == KILN_F64;
            for (uint64_t e = 0; e < x->element_count; e++) {
                uint64_t r = lcg_next(&rng) % 12;
                /* Few distinct values, so ties are common; floats add NaN, infinities and both zeros. */
                long double v = (long double)(r % 5);
                if (is_float && r == 10)
                    v = (lcg_next(&rng) % 2) ? NAN : -NAN;
                else if (is_float && r == 11)
                    v = (lcg_next(&rng) % 2) ? INFINITY : -INFINITY;
                else if (is_float && r % 5 == 0)
                    v = (lcg_next(&rng) % 2) ? 0.0L : -0.0L;
                set_value(x, e, v);
            }
            for (uint32_t axis = 0; axis < x->rank; axis++)
                for (int64_t k = 0; k <= x->shape[axis]; k++) {
                    check_case(x, axis, k, true);
                    check_case(x, axis, k, false);
                }
            kiln_tensor_free(x);
        }
}

/* f16/bf16 rank by the f32 value they stand for and move bit patterns: the same choice as on the widened f32 tensor. */
static void half_values_rank_as_their_f32_values(void **state)
{
    (void)state;
    static const kiln_dtype halves[] = {KILN_F16, KILN_BF16};
    uint64_t rng = 11;
    for (int h = 0; h < 2; h++) {
        const int64_t shape[2] = {3, 9};
        kiln_tensor *x = new_poisoned_tensor(halves[h], 2, shape), *wide = new_poisoned_tensor(KILN_F32, 2, shape);
        uint16_t *bits = x->data;
        for (uint64_t e = 0; e < x->element_count; e++) {
            static const uint16_t f16_specials[] = {0x7e00, 0x8000, 0x0000, 0x7c00, 0xfc00, 0x3c00};
            static const uint16_t bf16_specials[] = {0x7fc0, 0x8000, 0x0000, 0x7f80, 0xff80, 0x3f80};
            uint64_t r = lcg_next(&rng);
            bits[e] = r % 3 == 0 ? (h ? bf16_specials : f16_specials)[r % 6] : (uint16_t)(r >> 8);
            ((float *)wide->data)[e] = h ? kiln_bf16_to_f32(bits[e]) : kiln_f16_to_f32(bits[e]);
        }
        for (int64_t k = 0; k <= 9; k++)
            for (int largest = 0; largest < 2; largest++) {
                const int64_t out_shape[2] = {3, k};
                kiln_tensor *v = new_poisoned_tensor(halves[h], 2, out_shape);
                kiln_tensor *i = new_poisoned_tensor(KILN_I64, 2, out_shape);
                kiln_tensor *wi = new_poisoned_tensor(KILN_I64, 2, out_shape);
                kiln_error err;
                assert_int_equal(run("top_k", x, v, 1, k, largest, &err), KILN_OK);
                assert_int_equal(run("top_k_indices", x, i, 1, k, largest, &err), KILN_OK);
                assert_int_equal(run("top_k_indices", wide, wi, 1, k, largest, &err), KILN_OK);
                for (uint64_t e = 0; e < v->element_count; e++) {
                    int64_t at = ((const int64_t *)i->data)[e];
                    assert_int_equal(at, ((const int64_t *)wi->data)[e]);
                    assert_int_equal(((const uint16_t *)v->data)[e], bits[(e / (uint64_t)k) * 9 + (uint64_t)at]);
                }
                kiln_tensor_free(v);
                kiln_tensor_free(i);
                kiln_tensor_free(wi);
            }
        kiln_tensor_free(x);
        kiln_tensor_free(wide);
    }
}

static kiln_status infer(const char *op, kiln_expr_pool *pool, const kiln_dim_decl *dims, uint32_t dim_count,
                         const kiln_value_type *x, int64_t k, kiln_value_type *out, kiln_error *err)
{
    kiln_node_attribute attributes[] = {
        {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
        {.name = "k", .type = KILN_ATTRIBUTE_INT, .i = k},
    };
    kiln_shape_context ctx = {pool, dims, dim_count, "node 4 (top_k)", attributes, 2, NULL, 0, NULL, NULL, 0, NULL, 0};
    return kiln_op_find(op)->infer(&ctx, (const kiln_value_type *const[]){x}, 1, out, err);
}

/* The output axis is the constant k; k must be provably at most the axis size. */
static void shape_rules_prove_k_fits(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    kiln_dim_decl dims[] = {{.name = "n", .min = 3, .max = 8, .multiple_of = 1}};
    kiln_error err;
    kiln_value_type x = {.dtype = KILN_F32, .shape = {.rank = 2}}, out;
    assert_int_equal(kiln_expr_const(&pool, 2, &x.shape.axes[0], &err), KILN_OK);
    assert_int_equal(kiln_expr_dim(&pool, 0, 1, &x.shape.axes[1], &err), KILN_OK);
    assert_int_equal(infer("top_k", &pool, dims, 1, &x, 3, &out, &err), KILN_OK);
    assert_int_equal(out.dtype, KILN_F32);
    assert_true(kiln_expr_is_const(&pool, out.shape.axes[1], 3));
    assert_int_equal(out.shape.axes[0], x.shape.axes[0]);
    assert_int_equal(infer("top_k_indices", &pool, dims, 1, &x, 3, &out, &err), KILN_OK);
    assert_int_equal(out.dtype, KILN_I64);
    assert_int_equal(infer("top_k", &pool, dims, 1, &x, 4, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 4 (top_k): cannot prove that x axis 1 size n is >= k = 4"));
    assert_non_null(strstr(err.message, "counterexample: n=3"));
    assert_int_equal(infer("top_k", &pool, dims, 1, &x, -1, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "k = -1 is negative"));
    kiln_value_type b = {.dtype = KILN_BOOL, .shape = x.shape};
    assert_int_equal(infer("top_k", &pool, dims, 1, &b, 1, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "does not support dtype bool"));
    kiln_expr_pool_release(&pool);
}

/* A session runs both ops of one program (ONNX TopK's two outputs). */
static void a_program_uses_both(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, v, i;
    kiln_attribute attributes[] = {{.name = "k", .type = KILN_ATTRIBUTE_INT, .i = 2}};
    assert_int_equal(kiln_builder_new("topk", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 2, 9, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "top_k", 1, &x, 1, attributes, &v, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "top_k_indices", 1, &x, 1, attributes, &i, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "values", v, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "indices", i, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(program, NULL, &session, &err), KILN_OK);
    kiln_tensor *in = new_poisoned_tensor(KILN_F32, 1, (int64_t[]){5});
    const float data[5] = {1.5f, 9.0f, -2.0f, 9.0f, 3.0f};
    memcpy(in->data, data, sizeof data);
    assert_int_equal(kiln_session_set_input(session, "x", in, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *values = kiln_tensor_const_data(kiln_session_output(session, 0));
    const int64_t *indices = kiln_tensor_const_data(kiln_session_output(session, 1));
    assert_true(values[0] == 9.0f && values[1] == 9.0f);
    assert_int_equal(indices[0], 1); /* equal values keep their input order */
    assert_int_equal(indices[1], 3);
    kiln_tensor_free(in);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* The family is exactly these ops, each served by the registry. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    static const char *const names[] = {"top_k", "top_k_indices"};
    assert_family_registered(&kiln_ops_topk, names, 2);
    assert_int_equal(kiln_ops_topk.count, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
        cmocka_unit_test(both_ops_match_the_reference),
        cmocka_unit_test(half_values_rank_as_their_f32_values),
        cmocka_unit_test(shape_rules_prove_k_fits),
        cmocka_unit_test(a_program_uses_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
