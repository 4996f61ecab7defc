/*
 * test_contract.c — the shape contract at run time and at build time, on
 * the seed example (2*x + 1, x: f64[batch, 2], batch in 2..4) and on small
 * programs made for one rule each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln.h>

#include "seed_program.h"

/* Load an encoded builder into a fresh session. */
static kiln_session *session_from_builder(kiln_builder *b, kiln_program **program)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_session *session;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, program, NULL, &err), KILN_OK);
    free(bytes);
    assert_int_equal(kiln_session_new(*program, NULL, &session, &err), KILN_OK);
    return session;
}

typedef struct scale_fixture {
    kiln_program *program;
    kiln_session *session;
} scale_fixture;

static int scale_setup(void **state)
{
    scale_fixture *f = calloc(1, sizeof *f);
    kiln_builder *b = seed_program_builder(2, 4);
    f->session = session_from_builder(b, &f->program);
    kiln_builder_free(b);
    *state = f;
    return 0;
}

static int scale_teardown(void **state)
{
    scale_fixture *f = *state;
    kiln_session_free(f->session);
    kiln_program_free(f->program);
    free(f);
    return 0;
}

static kiln_tensor *make_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape, double fill)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(dtype, rank, shape, &t, &err), KILN_OK);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++) {
        if (dtype == KILN_F64)
            ((double *)kiln_tensor_data(t))[i] = fill + (double)i;
        else if (dtype == KILN_F32)
            ((float *)kiln_tensor_data(t))[i] = (float)(fill + (double)i);
        else if (dtype == KILN_I32)
            ((int32_t *)kiln_tensor_data(t))[i] = (int32_t)fill;
    }
    return t;
}

/* Run the scale session on one input; on success check y = 2x + 1. */
static kiln_status run_scale(scale_fixture *f, kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                             kiln_error *err)
{
    kiln_tensor *x = make_tensor(dtype, rank, shape, 0.5);
    kiln_status status = kiln_session_set_input(f->session, "x", x, err);
    if (status == KILN_OK)
        status = kiln_session_run(f->session, err);
    if (status == KILN_OK) {
        const kiln_tensor *y = kiln_session_output(f->session, 0);
        assert_non_null(y);
        assert_int_equal(kiln_tensor_rank(y), rank);
        for (uint32_t a = 0; a < rank; a++)
            assert_int_equal(kiln_tensor_shape(y)[a], shape[a]);
        const double *in = kiln_tensor_const_data(x), *out = kiln_tensor_const_data(y);
        for (uint64_t i = 0; i < kiln_tensor_element_count(y); i++)
            assert_true(out[i] == 2.0 * in[i] + 1.0);
    } else {
        assert_null(kiln_session_output(f->session, 0));
    }
    kiln_tensor_free(x);
    return status;
}

static void batch_inside_range_is_accepted(void **state)
{
    kiln_error err;
    for (int64_t batch = 2; batch <= 4; batch++)
        assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){batch, 2}, &err), KILN_OK);
}

static void batch_outside_range_is_rejected(void **state)
{
    kiln_error err;
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){5, 2}, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 0 (batch): 5 is outside 2..4");
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){1, 2}, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 0 (batch): 1 is outside 2..4");
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){0, 2}, &err), KILN_ERR_SHAPE_GUARD);
}

static void wrong_width_is_rejected(void **state)
{
    kiln_error err;
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){3, 3}, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'x' axis 1: 3 is not the declared size 2");
}

static void wrong_rank_is_rejected(void **state)
{
    kiln_error err;
    assert_int_equal(run_scale(*state, KILN_F64, 1, (int64_t[]){3}, &err), KILN_ERR_RANK_MISMATCH);
    assert_non_null(strstr(err.message, "input 'x': rank 1 does not match the declared rank 2"));
    assert_int_equal(run_scale(*state, KILN_F64, 3, (int64_t[]){3, 2, 1}, &err), KILN_ERR_RANK_MISMATCH);
    assert_non_null(strstr(err.message, "rank 3"));
}

static void float32_input_is_rejected(void **state)
{
    kiln_error err;
    assert_int_equal(run_scale(*state, KILN_F32, 2, (int64_t[]){3, 2}, &err), KILN_ERR_DTYPE_MISMATCH);
    assert_string_equal(err.message, "input 'x': dtype f32 does not match the declared f64");
}

static void missing_input_is_rejected(void **state)
{
    scale_fixture *f = *state;
    kiln_error err;
    assert_int_equal(kiln_session_run(f->session, &err), KILN_ERR_MISSING_INPUT);
    assert_non_null(strstr(err.message, "'x'"));
}

static void unknown_input_is_rejected(void **state)
{
    scale_fixture *f = *state;
    kiln_error err;
    kiln_tensor *z = make_tensor(KILN_F64, 2, (int64_t[]){3, 2}, 0);
    assert_int_equal(kiln_session_set_input(f->session, "z", z, &err), KILN_ERR_UNKNOWN_INPUT);
    assert_non_null(strstr(err.message, "'z' is not an input of program 'scale'"));
    kiln_tensor_free(z);
}

static void a_rejected_run_leaves_the_session_usable(void **state)
{
    kiln_error err;
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){5, 2}, &err), KILN_ERR_SHAPE_GUARD);
    assert_int_equal(run_scale(*state, KILN_F64, 2, (int64_t[]){4, 2}, &err), KILN_OK);
}

/* x: f32[n, 2] and w: f32[n, 2] share n, so their sizes must agree. */
static void shared_dim_requires_equal_sizes(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value x, w, sum;
    assert_int_equal(kiln_builder_new("pair", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "n, 2", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "w", KILN_F32, "n, 2", &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, w}, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "sum", sum, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);

    kiln_tensor *x3 = make_tensor(KILN_F32, 2, (int64_t[]){3, 2}, 1);
    kiln_tensor *w3 = make_tensor(KILN_F32, 2, (int64_t[]){3, 2}, 1);
    kiln_tensor *w4 = make_tensor(KILN_F32, 2, (int64_t[]){4, 2}, 1);
    assert_int_equal(kiln_session_set_input(s, "x", x3, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "w", w3, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "w", w4, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message,
                        "input 'w' axis 0 (n): 4 differs from 3, the size of n at input 'x' axis 0");
    kiln_tensor_free(x3);
    kiln_tensor_free(w3);
    kiln_tensor_free(w4);
    kiln_session_free(s);
    kiln_program_free(program);
}

/* An axis declared as an expression (2*n) is checked once n is bound. */
static void expression_axis_is_checked(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value a, pair, out_a, out_pair;
    assert_int_equal(kiln_builder_new("derived", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[n]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "pair", KILN_F32, "[2*n]", &pair, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &a, &out_a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &pair, &out_pair, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "na", out_a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "npair", out_pair, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);

    kiln_tensor *a4 = make_tensor(KILN_F32, 1, (int64_t[]){4}, 1);
    kiln_tensor *p8 = make_tensor(KILN_F32, 1, (int64_t[]){8}, 1);
    kiln_tensor *p7 = make_tensor(KILN_F32, 1, (int64_t[]){7}, 1);
    assert_int_equal(kiln_session_set_input(s, "a", a4, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "pair", p8, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    assert_int_equal(kiln_tensor_shape(kiln_session_output(s, 1))[0], 8);
    assert_int_equal(kiln_session_set_input(s, "pair", p7, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'pair' axis 0 (2*n): 7 is not 2*n = 8");
    kiln_tensor_free(a4);
    kiln_tensor_free(p8);
    kiln_tensor_free(p7);
    kiln_session_free(s);
    kiln_program_free(program);
}

/* Guard verdict on a one-input program whose only axis is `shape`. */
static kiln_status guard_single_axis(kiln_session *s, int64_t size, kiln_error *err)
{
    kiln_tensor *t = make_tensor(KILN_F32, 1, (int64_t[]){size}, 1);
    kiln_status status = kiln_session_set_input(s, "x", t, err);
    if (status == KILN_OK)
        status = kiln_session_run(s, err);
    kiln_tensor_free(t);
    return status;
}

static kiln_session *single_axis_session(const char *shape, int64_t multiple_of, kiln_program **program)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("solved", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    if (multiple_of > 1)
        assert_int_equal(kiln_builder_set_dim_multiple_of(b, "n", multiple_of, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, shape, &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, program);
    kiln_builder_free(b);
    return s;
}

/* A dim that appears only as `c*n + k` is solved from the size: sizes of
 * that form with n in range run, every other size names the rule it broke. */
static void affine_axis_binds_its_dim(void **state)
{
    (void)state;
    static const struct {
        const char *shape;
        int64_t multiple_of, size;
        kiln_status status;
        const char *message;
    } cases[] = {
        {"[2*n]", 1, 2, KILN_OK, NULL},
        {"[2*n]", 1, 16, KILN_OK, NULL},
        {"[2*n]", 1, 7, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (2*n): 7 is not of the form 2*n"},
        {"[2*n]", 1, 0, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (2*n): 0 gives n = 0, outside 1..8"},
        {"[2*n]", 1, 18, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (2*n): 18 gives n = 9, outside 1..8"},
        {"[n*3 + 1]", 1, 4, KILN_OK, NULL},
        {"[n*3 + 1]", 1, 25, KILN_OK, NULL},
        {"[n*3 + 1]", 1, 1, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (3*n + 1): 1 gives n = 0, outside 1..8"},
        {"[n*3 + 1]", 1, 0, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (3*n + 1): 0 is not of the form 3*n + 1"},
        {"[n*3 + 1]", 1, 5, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (3*n + 1): 5 is not of the form 3*n + 1"},
        {"[1 + 2*n]", 1, 17, KILN_OK, NULL},
        {"[1 + 2*n]", 1, 19, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (2*n + 1): 19 gives n = 9, outside 1..8"},
        {"[4*n - 2]", 2, 6, KILN_OK, NULL},
        {"[4*n - 2]", 2, 30, KILN_OK, NULL},
        {"[4*n - 2]", 2, 10, KILN_ERR_SHAPE_GUARD,
         "input 'x' axis 0 (4*n - 2): 10 gives n = 3, not a multiple of 2 (n in 1..8 multiple_of 2)"},
        {"[4*n - 2]", 2, 34, KILN_ERR_SHAPE_GUARD, "input 'x' axis 0 (4*n - 2): 34 gives n = 9, outside 1..8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_program *program;
        kiln_error err;
        kiln_session *s = single_axis_session(cases[i].shape, cases[i].multiple_of, &program);
        kiln_status status = guard_single_axis(s, cases[i].size, &err);
        if (status != cases[i].status)
            fail_msg("%s with size %lld: status %d (%s)", cases[i].shape, (long long)cases[i].size, status,
                     err.message);
        if (cases[i].message)
            assert_string_equal(err.message, cases[i].message);
        else
            assert_int_equal(kiln_tensor_shape(kiln_session_output(s, 0))[0], cases[i].size);
        kiln_session_free(s);
        kiln_program_free(program);
    }
}

/* A second axis in the same dim is checked against the solved value. */
static void solved_dim_is_shared_with_other_axes(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value x, z, sum;
    assert_int_equal(kiln_builder_new("solved2", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2*n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "z", KILN_F32, "[2*n]", &z, &err), KILN_OK);
    kiln_value operands[2] = {x, z};
    assert_int_equal(kiln_builder_add_op(b, "add", 2, operands, &sum, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", sum, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    kiln_tensor *x6 = make_tensor(KILN_F32, 1, (int64_t[]){6}, 1);
    kiln_tensor *z8 = make_tensor(KILN_F32, 1, (int64_t[]){8}, 1);
    assert_int_equal(kiln_session_set_input(s, "x", x6, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "z", x6, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "z", z8, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'z' axis 0 (2*n): 8 is not 2*n = 6");
    kiln_tensor_free(x6);
    kiln_tensor_free(z8);
    kiln_session_free(s);
    kiln_program_free(program);
}

/* Inner sizes n + n and 2*n are different expressions but equal at every
 * point; enumeration proves it, and the guard still checks each input. */
static void matmul_inner_sizes_equal_by_enumeration_are_accepted(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value a, w, y;
    assert_int_equal(kiln_builder_new("inner", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 8, &err), KILN_OK);
    /* n % 16 and n are different expressions, equal only over the declared domain. */
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[3, n % 16]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "w", KILN_F32, "[n, 5]", &w, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){a, w}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    kiln_tensor *a4 = make_tensor(KILN_F32, 2, (int64_t[]){3, 4}, 1);
    kiln_tensor *w4 = make_tensor(KILN_F32, 2, (int64_t[]){4, 5}, 2);
    kiln_tensor *w6 = make_tensor(KILN_F32, 2, (int64_t[]){6, 5}, 2);
    assert_int_equal(kiln_session_set_input(s, "a", a4, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "w", w4, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    const kiln_tensor *out = kiln_session_output(s, 0);
    assert_int_equal(kiln_tensor_shape(out)[0], 3);
    assert_int_equal(kiln_tensor_shape(out)[1], 5);
    /* a row 0 is 1 2 3 4, w column 0 is 2 7 12 17 (make_tensor fills fill + i). */
    assert_float_equal(((const float *)kiln_tensor_const_data(out))[0], 1 * 2 + 2 * 7 + 3 * 12 + 4 * 17, 0.0);
    assert_int_equal(kiln_session_set_input(s, "w", w6, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "input 'a' axis 1 (n % 16): 4 is not n % 16 = 6");
    kiln_tensor_free(a4);
    kiln_tensor_free(w4);
    kiln_tensor_free(w6);
    kiln_session_free(s);
    kiln_program_free(program);
}

/* A claim over more dims than the domain search can walk is never taken as
 * proven: 25 dims fixed at 1 give a channel size of 25, not 26. */
static void a_claim_over_too_many_dims_is_refused(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value v, x, scale, y;
    char name[16], shape[64], sum[256] = "[2, ";
    assert_int_equal(kiln_builder_new("wide", &b, &err), KILN_OK);
    for (int d = 0; d < 25; d++) {
        snprintf(name, sizeof name, "d%d", d);
        assert_int_equal(kiln_builder_add_dim(b, name, 1, 1, &err), KILN_OK);
        snprintf(sum + strlen(sum), sizeof sum - strlen(sum), "%s%s", d ? " + " : "", name);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "bind%d", i);
        snprintf(shape, sizeof shape, "[d%d, d%d, d%d, d%d, d%d]", 5 * i, 5 * i + 1, 5 * i + 2, 5 * i + 3, 5 * i + 4);
        assert_int_equal(kiln_builder_add_input(b, name, KILN_F32, shape, &v, &err), KILN_OK);
    }
    strcat(sum, ", 3]");
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, sum, &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "scale", KILN_F32, "[26]", &scale, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "instance_norm", 3, (kiln_value[]){x, scale, scale}, &y, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "cannot prove that scale (input 1) size 26 equals x axis 1 size d0 + d1"));
    assert_null(strstr(err.message, "counterexample")); /* nothing was searched */
    kiln_builder_free(b);
}

/*
 * Build and seal a program with inputs s: [p, q] (which binds the dims)
 * and x: x_shape, then `op` on x (and input w: second_shape, if given).
 */
static kiln_status build_claim(int64_t p_max, int64_t q_max, const char *x_shape, const char *second_shape,
                               const char *op, uint32_t attribute_count, const kiln_attribute *attributes,
                               kiln_error *err)
{
    kiln_builder *b;
    kiln_value s, x, w, y;
    assert_int_equal(kiln_builder_new("claims", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "p", 0, p_max, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "q", 1, q_max, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F32, "[p, q]", &s, err), KILN_OK);
    kiln_status status = kiln_builder_add_input(b, "x", KILN_F32, x_shape, &x, err);
    if (status == KILN_OK && second_shape)
        status = kiln_builder_add_input(b, "w", KILN_F32, second_shape, &w, err);
    if (status == KILN_OK)
        status = kiln_builder_add_op_with_attributes(b, op, second_shape ? 2 : 1, (kiln_value[]){x, w},
                                                     attribute_count, attributes, &y, err);
    if (status == KILN_OK)
        status = kiln_builder_add_output(b, "y", y, err);
    void *bytes = NULL;
    size_t size;
    if (status == KILN_OK) /* sealing checks the whole program again, input axes included */
        status = kiln_builder_encode(b, NULL, &bytes, &size, err);
    free(bytes);
    kiln_builder_free(b);
    return status;
}

/*
 * Domains far beyond enumeration (10^5 points): each claim kind is decided
 * exactly by the polynomial procedure of spec/contract.md §4.1, proven or
 * refused with a counterexample. Each accepted case here was refused as
 * "too many to be checked point by point" before that procedure existed.
 */
static void claims_are_decided_beyond_enumeration(void **state)
{
    (void)state;
    kiln_error err;
    /* Equal inner sizes: p*p + q == p + q holds when p only takes 0 and 1. */
    assert_int_equal(build_claim(1, 200000, "[3, p*p + q]", "[p + q, 5]", "matmul", 0, NULL, &err), KILN_OK);
    assert_int_equal(build_claim(2, 200000, "[3, p*p + q]", "[p + q, 5]", "matmul", 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: p=2, q=1"));

    /* Divisibility: q*q + q is always even, q*q is not. */
    kiln_attribute block = {.name = "blocksize", .type = KILN_ATTRIBUTE_INT, .i = 2};
    assert_int_equal(build_claim(1, 200000, "[1, 1, q*q + q, 2]", NULL, "space_to_depth", 1, &block, &err),
                     KILN_OK);
    assert_int_equal(build_claim(1, 200000, "[1, 1, q*q, 2]", NULL, "space_to_depth", 1, &block, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "is a multiple of 2"));
    assert_non_null(strstr(err.message, "counterexample: q=1"));

    /* Minimum size: p*q - p + 2 >= 2 (its interval reaches far below). */
    const int64_t starts[] = {2}, ends[] = {INT64_MAX}, axes[] = {0};
    kiln_attribute slice[] = {
        {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = axes, .count = 1},
        {.name = "ends", .type = KILN_ATTRIBUTE_INTS, .ints = ends, .count = 1},
        {.name = "starts", .type = KILN_ATTRIBUTE_INTS, .ints = starts, .count = 1},
    };
    assert_int_equal(build_claim(1000, 1000, "[p*q - p + 2]", NULL, "slice", 3, slice, &err), KILN_OK);
    assert_int_equal(build_claim(1000, 1000, "[p*q - p + 1]", NULL, "slice", 3, slice, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "is >= 2"));
    assert_non_null(strstr(err.message, "counterexample: p=0, q=1"));

    /* Divisions and remainders: decided per residue class (q = r + 2t), beyond enumeration. */
    assert_int_equal(build_claim(1, 1000000, "[3, 2*(q/2) + q % 2]", "[q, 5]", "matmul", 0, NULL, &err), KILN_OK);
    assert_int_equal(build_claim(1, 1000000, "[3, 2*(q/2)]", "[q, 5]", "matmul", 0, NULL, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: q=1"));
    assert_int_equal(build_claim(1, 1000000, "[1, 1, q + q % 2, 2]", NULL, "space_to_depth", 1, &block, &err),
                     KILN_OK);
    assert_int_equal(build_claim(1, 1000000, "[1, 1, q + q % 3, 2]", NULL, "space_to_depth", 1, &block, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: q=3"));
    assert_int_equal(build_claim(1000000, 1, "[p - 2*(p/2) + 2]", NULL, "slice", 3, slice, &err), KILN_OK);
    assert_int_equal(build_claim(1000000, 1, "[p - 2*(p/2) + 1]", NULL, "slice", 3, slice, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: p=0"));

    /* An input axis that is never negative, though its interval is. */
    assert_int_equal(build_claim(1000, 1000, "[p*q - p]", NULL, "neg", 0, NULL, &err), KILN_OK);
    assert_int_equal(build_claim(1000, 1000, "[p*q - 2*p]", NULL, "neg", 0, NULL, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "input 'x' axis 0"));
    assert_non_null(strstr(err.message, "counterexample: p=1000, q=1"));
}

/*
 * Issue 20, point 1: `dims` dims d_i in 0..10, bound by rank-8 inputs, and
 * an input x whose one axis is the sum over i of `term` with d_i for each
 * %s (e.g. "%s*%s - %s"), then neg(x). Encoding seals it, which checks the
 * whole program with the builder's default proof budget.
 */
static kiln_status build_sum_of_terms(int dims, const char *term, void **bytes, size_t *size, kiln_error *err)
{
    kiln_builder *b;
    kiln_value v, y;
    char name[16], shape[256], axis[4096] = "[";
    assert_int_equal(kiln_builder_new("prover_budget", &b, err), KILN_OK);
    for (int d = 0; d < dims; d++) {
        snprintf(name, sizeof name, "d%d", d);
        assert_int_equal(kiln_builder_add_dim(b, name, 0, 10, err), KILN_OK);
        size_t used = strlen(axis);
        used += (size_t)snprintf(axis + used, sizeof axis - used, "%s", d ? " + " : "");
        /* the term names the dim up to five times */
        snprintf(axis + used, sizeof axis - used, term, name, name, name, name, name);
    }
    strcat(axis, "]");
    for (int i = 0; i * 8 < dims; i++) {
        size_t used = (size_t)snprintf(shape, sizeof shape, "[");
        for (int a = 0; a < 8; a++)
            used += (size_t)snprintf(shape + used, sizeof shape - used, "%sd%d", a ? ", " : "",
                                     8 * i + a < dims ? 8 * i + a : dims - 1);
        strcat(shape, "]");
        snprintf(name, sizeof name, "bind%d", i);
        assert_int_equal(kiln_builder_add_input(b, name, KILN_F32, shape, &v, err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, axis, &v, err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &v, &y, err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, err), KILN_OK);
    *bytes = NULL;
    kiln_status status = kiln_builder_encode(b, NULL, bytes, size, err);
    kiln_builder_free(b);
    return status;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * Issue 20, point 1. sum(d_i*d_i - d_i) is never negative, but its
 * interval reaches below 0, so "the size is not negative" goes to the
 * prover. It used to be undecided (a squared variable) and the
 * counterexample search walked all 4^N sample points (N = 24: hours);
 * each square of one dim alone is now minimised exactly (spec/contract.md
 * §4.1), so it is decided on one point, and what is still undecided
 * stops at the proof budget.
 */
static void sums_of_squares_are_decided_and_searches_are_bounded(void **state)
{
    (void)state;
    kiln_error err;
    void *bytes;
    size_t size;
    struct timespec start;
    /* Decided exactly: accepted (refused as too many points before), and refused at the real minimum. */
    assert_int_equal(build_sum_of_terms(10, "%s*%s - %s", &bytes, &size, &err), KILN_OK);
    free(bytes);
    assert_int_equal(build_sum_of_terms(3, "%s*(%s - 1)", &bytes, &size, &err), KILN_OK);
    free(bytes);
    assert_int_equal(build_sum_of_terms(10, "%s*%s - 2*%s", &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "input 'x' axis 0: cannot prove that the size is not negative"));
    assert_non_null(strstr(err.message, "counterexample: d0=1, d1=1, d2=1"));
    assert_int_equal(build_sum_of_terms(2, "7*%s - %s*%s", &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: d0=10, d1=0")); /* concave: at an end */

    /* The artifact of the issue: 24 dims; built, loaded and checked again in well under a second. */
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(build_sum_of_terms(24, "%s*%s - %s", &bytes, &size, &err), KILN_OK);
    kiln_program *program;
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    kiln_program_free(program);
    free(bytes);
    assert_true(seconds_since(&start) < 10);

    /* Cubes are still undecided: the search stops at the budget, with a message naming the limit. */
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(build_sum_of_terms(24, "%s*%s*%s - %s*%s", &bytes, &size, &err), KILN_ERR_LIMIT);
    assert_non_null(strstr(err.message, "input 'x' axis 0: cannot decide within the proof budget (100000000 steps; "
                                        "kiln_limits.max_proof_steps) whether the size is not negative over the "
                                        "declared domain (dims: d0 in 0..10, "));
    assert_true(seconds_since(&start) < 10);
}

/* The proof budget is a load limit: a program whose check needs a search loads only with the steps it needs. */
static void the_proof_budget_is_a_load_limit(void **state)
{
    (void)state;
    kiln_error err;
    kiln_builder *b;
    kiln_value s, x, y;
    void *bytes;
    size_t size;
    kiln_program *program = NULL;
    assert_int_equal(kiln_builder_new("budget", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "p", 0, 1000, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "q", 1, 1000, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F32, "[p, q]", &s, &err), KILN_OK);
    /* never negative, though its interval is: decided on the 4 corners */
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[p*q - p]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);

    kiln_load_options options;
    kiln_load_options_default(&options);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    assert_int_equal(limits.max_proof_steps, 100000000);
    limits.max_proof_steps = 3; /* less than one corner costs (the tree p*q - p) */
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_ERR_LIMIT);
    assert_null(program);
    assert_non_null(strstr(err.message, "input 'x' axis 0: cannot decide within the proof budget (3 steps; "
                                        "kiln_limits.max_proof_steps) whether the size is not negative"));
    limits.max_proof_steps = 100; /* four corners of 5 steps, and the one residue class */
    assert_int_equal(kiln_program_load_memory(bytes, size, &options, &program, NULL, &err), KILN_OK);
    kiln_program_free(program);
    free(bytes);
}

/* matmul of a: [3, k] by w: [4, 5] for k in 2..8, strict or not. */
static kiln_status build_inner_k(bool strict, kiln_program **program, kiln_error *err)
{
    kiln_builder *b;
    kiln_value a, w, y;
    void *bytes = NULL;
    size_t size;
    assert_int_equal(kiln_builder_new("inner_k", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_set_strict(b, strict, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "k", 2, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[3, k]", &a, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "w", KILN_F32, "[4, 5]", &w, err), KILN_OK);
    kiln_status status = kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){a, w}, &y, err);
    if (status == KILN_OK)
        status = kiln_builder_add_output(b, "y", y, err);
    if (status == KILN_OK)
        status = kiln_builder_encode(b, NULL, &bytes, &size, err);
    kiln_builder_free(b);
    if (status == KILN_OK)
        status = kiln_program_load_memory(bytes, size, NULL, program, NULL, err);
    free(bytes);
    return status;
}

/*
 * Strictness is explicit (spec/contract.md §4.2): strict refuses what it
 * cannot prove; non-strict stores it as a runtime guard, recorded in the
 * artifact, checked before every run with a message naming the node.
 */
static void non_strict_programs_guard_what_they_cannot_prove(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program = NULL;
    assert_int_equal(build_inner_k(true, &program, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: k=2"));

    assert_int_equal(build_inner_k(false, &program, &err), KILN_OK);
    assert_false(kiln_program_is_strict(program));
    uint16_t major, minor;
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(minor, 1); /* runtime guards arrived in format 1.1 */
    assert_int_equal(kiln_program_runtime_guard_count(program), 1);
    uint32_t node = 99;
    const char *text = kiln_program_runtime_guard(program, 0, &node);
    assert_int_equal(node, 0);
    assert_string_equal(text, "inner sizes k (a axis 1) and 4 (b axis 0) are equal");
    assert_null(kiln_program_runtime_guard(program, 1, &node));

    kiln_session *s;
    assert_int_equal(kiln_session_new(program, NULL, &s, &err), KILN_OK);
    kiln_tensor *a4 = make_tensor(KILN_F32, 2, (int64_t[]){3, 4}, 1);
    kiln_tensor *a3 = make_tensor(KILN_F32, 2, (int64_t[]){3, 3}, 1);
    kiln_tensor *w = make_tensor(KILN_F32, 2, (int64_t[]){4, 5}, 2);
    assert_int_equal(kiln_session_set_input(s, "a", a4, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "w", w, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    /* a row 0 is 1 2 3 4, w column 0 is 2 7 12 17 */
    assert_float_equal(((const float *)kiln_tensor_const_data(kiln_session_output(s, 0)))[0],
                       1 * 2 + 2 * 7 + 3 * 12 + 4 * 17, 0.0);
    assert_int_equal(kiln_session_set_input(s, "a", a3, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message, "node 0 (matmul): runtime guard: inner sizes k (a axis 1) and 4 (b axis 0) are "
                                     "equal; it does not hold at k=3");
    kiln_tensor_free(a4);
    kiln_tensor_free(a3);
    kiln_tensor_free(w);
    kiln_session_free(s);
    kiln_program_free(program);

    /* A strict program says so, and stays at format 1.0. */
    kiln_builder *b;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("strict", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
    /* Strictness is chosen before the first op. */
    assert_int_equal(kiln_builder_set_strict(b, false, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "before the first op"));
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_session *strict_session = session_from_builder(b, &program);
    kiln_builder_free(b);
    assert_true(kiln_program_is_strict(program));
    assert_int_equal(kiln_program_runtime_guard_count(program), 0);
    kiln_program_format_version(program, &major, &minor);
    assert_int_equal(minor, 0);
    kiln_session_free(strict_session);
    kiln_program_free(program);
}

/* Non-strict broadcasting checks equal sizes at run time; constants are still decided at build. */
static void non_strict_broadcast_and_constant_claims(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value p, q, sum, c3, c4, bad;
    assert_int_equal(kiln_builder_new("ns_add", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_strict(b, false, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "p", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "q", 1, 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[p]", &p, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "c", KILN_F32, "[q]", &q, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){p, q}, &sum, &err), KILN_OK);
    /* [3, 5] @ [4, 5]: false at every point, so refused even here, and adds no guard. */
    assert_int_equal(kiln_builder_add_input(b, "m", KILN_F32, "[3, 5]", &c3, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "n", KILN_F32, "[4, 5]", &c4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){c3, c4}, &bad, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(kiln_builder_add_output(b, "sum", sum, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_runtime_guard_count(program), 1);
    uint32_t node;
    assert_string_equal(kiln_program_runtime_guard(program, 0, &node), "output axis 0: sizes p and q are equal");
    kiln_tensor *three = make_tensor(KILN_F32, 1, (int64_t[]){3}, 1);
    kiln_tensor *four = make_tensor(KILN_F32, 1, (int64_t[]){4}, 1);
    kiln_tensor *m = make_tensor(KILN_F32, 2, (int64_t[]){3, 5}, 1);
    kiln_tensor *n = make_tensor(KILN_F32, 2, (int64_t[]){4, 5}, 1);
    assert_int_equal(kiln_session_set_input(s, "a", three, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "c", three, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "m", m, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "n", n, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "c", four, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_SHAPE_GUARD);
    assert_string_equal(err.message,
                        "node 0 (add): runtime guard: output axis 0: sizes p and q are equal; it does not hold at "
                        "p=3, q=4");
    kiln_tensor_free(three);
    kiln_tensor_free(four);
    kiln_tensor_free(m);
    kiln_tensor_free(n);
    kiln_session_free(s);
    kiln_program_free(program);
}

static kiln_status add_two_inputs(const char *shape_a, const char *shape_b, kiln_error *err)
{
    kiln_builder *b;
    kiln_value a, c, sum;
    assert_int_equal(kiln_builder_new("broadcast", &b, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "p", 1, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "q", 1, 8, err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, shape_a, &a, err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "c", KILN_F32, shape_b, &c, err), KILN_OK);
    kiln_status status = kiln_builder_add_op(b, "add", 2, (kiln_value[]){a, c}, &sum, err);
    kiln_builder_free(b);
    return status;
}

static void unprovable_broadcast_is_refused_at_build(void **state)
{
    (void)state;
    kiln_error err;
    assert_int_equal(add_two_inputs("[p]", "[q]", &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "node 0 (add)"));
    assert_non_null(strstr(err.message, "cannot prove that p and q broadcast"));
    assert_non_null(strstr(err.message, "counterexample"));
    assert_int_equal(add_two_inputs("[batch, 2]", "[3]", &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "sizes 2 and 3 do not broadcast"));
    assert_int_equal(add_two_inputs("[batch]", "[2]", &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "counterexample: batch=3"));
    /* Provable cases. */
    assert_int_equal(add_two_inputs("[p, 3]", "[1, 3]", &err), KILN_OK);
    assert_int_equal(add_two_inputs("[p, 3]", "[3]", &err), KILN_OK);
    assert_int_equal(add_two_inputs("[p, q]", "[p, 1]", &err), KILN_OK);
}

static void builder_refuses_bad_programs(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, i, out;
    assert_int_equal(kiln_builder_new("bad", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 3, 2, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_dim(b, "2n", 1, 2, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[m]", &x, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "'m' is not a declared dim"));
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n, ]", &x, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "column 5"));
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n]", &x, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_input(b, "i", KILN_I32, "[n]", &i, &err), KILN_OK);
    /* No outputs yet: sealing must fail. */
    void *bytes;
    size_t size;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "no outputs"));
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, i}, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "dtypes differ (f32 and i32)"));
    assert_int_equal(kiln_builder_add_op(b, "ad", 2, (kiln_value[]){x, x}, &out, &err), KILN_ERR_UNSUPPORTED_OP);
    assert_int_equal(kiln_builder_add_op(b, "add", 1, &x, &out, &err), KILN_ERR_INVALID_PROGRAM);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, (kiln_value[]){99}, &out, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I8, 300, &out, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I32, 1.5, &out, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_builder_free(b);
}

static void integer_division_by_zero_is_a_runtime_error(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value a, d, q;
    assert_int_equal(kiln_builder_new("intdiv", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_I32, "[2]", &a, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "d", KILN_I32, "[2]", &d, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "div", 2, (kiln_value[]){a, d}, &q, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "q", q, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    kiln_tensor *seven = make_tensor(KILN_I32, 1, (int64_t[]){2}, 7);
    kiln_tensor *zero = make_tensor(KILN_I32, 1, (int64_t[]){2}, 0);
    assert_int_equal(kiln_session_set_input(s, "a", seven, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "d", zero, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "node 0 (div)"));
    assert_non_null(strstr(err.message, "division by zero"));
    kiln_tensor_free(seven);
    kiln_tensor_free(zero);
    kiln_session_free(s);
    kiln_program_free(program);
}

static void multiple_of_and_derived_dims_are_guarded(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value s, pair, n_s, n_pair;
    assert_int_equal(kiln_builder_new("tour", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "seq", 8, 32, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "seq", 64, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no value in 8..32 is a multiple of 64"));
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "nope", 8, &err), KILN_ERR_INVALID_ARGUMENT);
    /* Near 2^63 the first multiple at or above min would overflow: no value, refused (found by fuzzing). */
    assert_int_equal(kiln_builder_add_dim(b, "huge", INT64_C(7382525689167085569), INT64_MAX, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "huge", INT64_C(7242020089500057287), &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no value in 7382525689167085569..9223372036854775807 is a multiple of"));
    assert_int_equal(kiln_builder_set_dim_multiple_of(b, "seq", 8, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_derived_dim(b, "two_seq", "2*seq", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_derived_dim(b, "seq", "2", &err), KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_input(b, "s", KILN_F32, "[seq]", &s, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "pair", KILN_F32, "[two_seq]", &pair, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &s, &n_s, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &pair, &n_pair, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "a", n_s, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "b", n_pair, &err), KILN_OK);
    kiln_session *session = session_from_builder(b, &program);
    kiln_builder_free(b);

    kiln_dim_info dim;
    kiln_program_dim(program, 0, &dim);
    assert_int_equal(dim.multiple_of, 8);
    char text[64];
    const char *name;
    assert_int_equal(kiln_program_derived_dim_count(program), 1);
    kiln_program_derived_dim(program, 0, &name, text, sizeof text);
    assert_string_equal(name, "two_seq");
    assert_string_equal(text, "2*seq");

    static const struct {
        int64_t seq, pair;
        kiln_status status;
        const char *message;
    } cases[] = {
        {8, 16, KILN_OK, NULL},
        {32, 64, KILN_OK, NULL},
        {16, 32, KILN_OK, NULL},
        {12, 24, KILN_ERR_SHAPE_GUARD, "input 's' axis 0 (seq): 12 is not a multiple of 8 (seq in 8..32 multiple_of 8)"},
        {40, 80, KILN_ERR_SHAPE_GUARD, "input 's' axis 0 (seq): 40 is outside 8..32"},
        {0, 0, KILN_ERR_SHAPE_GUARD, "input 's' axis 0 (seq): 0 is outside 8..32"},
        {16, 31, KILN_ERR_SHAPE_GUARD, "input 'pair' axis 0 (2*seq): 31 is not 2*seq = 32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_tensor *a = make_tensor(KILN_F32, 1, (int64_t[]){cases[i].seq}, 0);
        kiln_tensor *p = make_tensor(KILN_F32, 1, (int64_t[]){cases[i].pair}, 0);
        assert_int_equal(kiln_session_set_input(session, "s", a, &err), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "pair", p, &err), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), cases[i].status);
        if (cases[i].message)
            assert_string_equal(err.message, cases[i].message);
        kiln_tensor_free(a);
        kiln_tensor_free(p);
    }
    kiln_session_free(session);
    kiln_program_free(program);
}

/* Regression: y = f(y), the same variable as input and output, once stored
 * the new value as its own operand. */
static void an_op_may_overwrite_its_input_variable(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value y;
    assert_int_equal(kiln_builder_new("alias", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &y, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &y, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &y, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_session *s = session_from_builder(b, &program);
    kiln_builder_free(b);
    kiln_tensor *x = make_tensor(KILN_F32, 1, (int64_t[]){2}, 3);
    assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(s, &err), KILN_OK);
    const float *out = kiln_tensor_const_data(kiln_session_output(s, 0));
    assert_true(out[0] == -3.0f && out[1] == -4.0f);
    kiln_tensor_free(x);
    kiln_session_free(s);
    kiln_program_free(program);
}

static void ops_refuse_attributes_they_do_not_take(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    assert_int_equal(kiln_builder_new("attrs", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "neg", 1, &x, 1, &axis, &y, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_string_equal(err.message, "node 0 (neg): op 'neg' takes no attribute 'axis'");
    kiln_attribute twice[2] = {axis, axis};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "neg", 1, &x, 2, twice, &y, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "attribute 'axis' is given twice"));
    kiln_attribute untyped = {.name = "axis", .type = (kiln_attribute_type)9};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "neg", 1, &x, 1, &untyped, &y, &err),
                     KILN_ERR_INVALID_ARGUMENT);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "neg", 1, &x, 0, NULL, &y, &err), KILN_OK);
    /* An integer given for a float attribute is taken as that float. */
    kiln_attribute bounds[2] = {{.name = "min", .type = KILN_ATTRIBUTE_INT, .i = -1},
                                {.name = "max", .type = KILN_ATTRIBUTE_INT, .i = 1}};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "clip", 1, &x, 2, bounds, &y, &err), KILN_OK);
    kiln_attribute text = {.name = "max", .type = KILN_ATTRIBUTE_STRING, .s = "1"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "clip", 1, &x, 1, &text, &y, &err),
                     KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "wrong type"));
    kiln_builder_free(b);
}

/* x: f64[n] in -1..1 and finite, unit "m/s"; k: i32[n] one of {0, 2, 5}; y = x + x, z = k + k. */
static kiln_builder *build_checked(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, k, y, z;
    assert_int_equal(kiln_builder_new("checked", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F64, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "k", KILN_I32, "[n]", &k, &err), KILN_OK);
    kiln_input_check check;
    kiln_input_check_default(&check);
    check.has_range = true;
    check.min = -1;
    check.max = 1;
    check.finite_only = true;
    check.unit = "m/s";
    check.description = "speed";
    assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_OK);
    kiln_input_check_default(&check);
    check.category_count = 4;
    check.categories = (const int64_t[]){5, 0, 2, 0}; /* stored sorted and unique */
    assert_int_equal(kiln_builder_set_input_check(b, "k", &check, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, x}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){k, k}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    return b;
}

static kiln_status run_checked(kiln_session *s, const double *x_values, const int32_t *k_values, kiln_error *err)
{
    kiln_tensor *x = make_tensor(KILN_F64, 1, (int64_t[]){3}, 0), *k = make_tensor(KILN_I32, 1, (int64_t[]){3}, 0);
    memcpy(kiln_tensor_data(x), x_values, 3 * sizeof *x_values);
    memcpy(kiln_tensor_data(k), k_values, 3 * sizeof *k_values);
    kiln_status status = kiln_session_set_input(s, "x", x, err);
    if (status == KILN_OK)
        status = kiln_session_set_input(s, "k", k, err);
    if (status == KILN_OK)
        status = kiln_session_run(s, err);
    kiln_tensor_free(x);
    kiln_tensor_free(k);
    return status;
}

static void semantic_checks_guard_values(void **state)
{
    (void)state;
    kiln_builder *b = build_checked();
    kiln_program *program;
    kiln_session *session = session_from_builder(b, &program);
    kiln_builder_free(b);
    kiln_error err;
    const int32_t good_k[3] = {0, 2, 5};
    assert_int_equal(run_checked(session, (double[]){-1, 0, 1}, good_k, &err), KILN_OK);
    assert_int_equal(run_checked(session, (double[]){0, 1.5, 0}, good_k, &err), KILN_ERR_INPUT_CHECK);
    assert_string_equal(err.message, "input 'x' element [1]: 1.5 is outside the range -1..1");
    assert_int_equal(run_checked(session, (double[]){0, 0, NAN}, good_k, &err), KILN_ERR_INPUT_CHECK);
    assert_string_equal(err.message, "input 'x' element [2]: nan is not finite");
    assert_int_equal(run_checked(session, (double[]){0, 0, 0}, (int32_t[]){0, 3, 5}, &err), KILN_ERR_INPUT_CHECK);
    assert_string_equal(err.message, "input 'k' element [1]: 3 is not one of the declared categories");

    /* The checks survive the file, and describe themselves. */
    kiln_input_check check;
    kiln_input_check_default(&check);
    assert_true(kiln_program_input_check(program, 0, &check));
    assert_true(check.has_range && check.finite_only);
    assert_string_equal(check.unit, "m/s");
    assert_string_equal(check.description, "speed");
    assert_true(kiln_program_input_check(program, 1, &check));
    assert_int_equal(check.category_count, 3);
    assert_int_equal(check.categories[2], 5);
    kiln_session_free(session);

    /* A session may switch them off. */
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.skip_input_checks = true;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(run_checked(session, (double[]){0, 7, 0}, (int32_t[]){9, 9, 9}, &err), KILN_OK);
    kiln_session_free(session);
    kiln_program_free(program);
}

/* Checks are part of the contract, so they are part of the program identity. */
/* A session over identity(v), v: dtype[1], with the range min..max on v. */
static kiln_session *range_checked_session(kiln_dtype dtype, double min, double max, kiln_program **program)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value v, y;
    assert_int_equal(kiln_builder_new("range", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "v", dtype, "[1]", &v, &err), KILN_OK);
    kiln_input_check check;
    kiln_input_check_default(&check);
    check.has_range = true;
    check.min = min;
    check.max = max;
    assert_int_equal(kiln_builder_set_input_check(b, "v", &check, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "identity", 1, &v, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    kiln_session *session = session_from_builder(b, program);
    kiln_builder_free(b);
    return session;
}

/* Run with v = the 8 bytes at `value` (an int64_t or a uint64_t). */
static kiln_status run_with(kiln_session *session, kiln_dtype dtype, const void *value, kiln_error *err)
{
    kiln_tensor *v = make_tensor(dtype, 1, (int64_t[]){1}, 0);
    memcpy(kiln_tensor_data(v), value, 8);
    kiln_status status = kiln_session_set_input(session, "v", v, err);
    if (status == KILN_OK)
        status = kiln_session_run(session, err);
    kiln_tensor_free(v);
    return status;
}

static void expect_i64(kiln_session *session, int64_t value, bool inside)
{
    kiln_error err;
    kiln_status status = run_with(session, KILN_I64, &value, &err);
    if (status != (inside ? KILN_OK : KILN_ERR_INPUT_CHECK))
        fail_msg("i64 %lld: expected %s, got %d (%s)", (long long)value, inside ? "inside" : "outside", (int)status,
                 status ? err.message : "");
}

static void expect_u64(kiln_session *session, uint64_t value, bool inside)
{
    kiln_error err;
    kiln_status status = run_with(session, KILN_U64, &value, &err);
    if (status != (inside ? KILN_OK : KILN_ERR_INPUT_CHECK))
        fail_msg("u64 %llu: expected %s, got %d (%s)", (unsigned long long)value, inside ? "inside" : "outside",
                 (int)status, status ? err.message : "");
}

/*
 * Issue 20, point 9: integer values are compared with the range exactly,
 * not through double (where 2^53 + 1 rounds to 2^53 and passed 0..2^53),
 * at the boundaries of i64 and u64 and past them.
 */
static void integer_ranges_are_compared_exactly(void **state)
{
    (void)state;
    kiln_program *program;
    kiln_error err;
    const int64_t two_53 = INT64_C(1) << 53;
    kiln_session *s = range_checked_session(KILN_I64, 0, 9007199254740992.0, &program); /* 0..2^53 */
    expect_i64(s, two_53, true);
    expect_i64(s, 0, true);
    expect_i64(s, two_53 + 1, false);
    int64_t value = two_53 + 1;
    assert_int_equal(run_with(s, KILN_I64, &value, &err), KILN_ERR_INPUT_CHECK);
    assert_string_equal(err.message, "input 'v' element [0]: 9007199254740993 is outside the range 0..9007199254740992");
    expect_i64(s, -1, false);
    expect_i64(s, INT64_MAX, false);
    expect_i64(s, INT64_MIN, false);
    kiln_session_free(s);
    kiln_program_free(program);

    /* -2^53..2^63 - 1024 (the largest double below 2^63), fractional bounds, the whole of i64. */
    s = range_checked_session(KILN_I64, -9007199254740992.0, 9223372036854774784.0, &program);
    expect_i64(s, -two_53, true);
    expect_i64(s, -two_53 - 1, false); /* rounds to -2^53 in double */
    expect_i64(s, INT64_C(9223372036854774784), true);
    expect_i64(s, INT64_C(9223372036854774785), false); /* rounds to the bound in double */
    expect_i64(s, INT64_MAX, false);
    kiln_session_free(s);
    kiln_program_free(program);
    s = range_checked_session(KILN_I64, -0.5, 10.5, &program);
    expect_i64(s, -1, false);
    expect_i64(s, 0, true);
    expect_i64(s, 10, true);
    expect_i64(s, 11, false);
    kiln_session_free(s);
    kiln_program_free(program);
    s = range_checked_session(KILN_I64, -INFINITY, 9223372036854775808.0, &program); /* ..2^63: all of i64 */
    expect_i64(s, INT64_MIN, true);
    expect_i64(s, INT64_MAX, true);
    kiln_session_free(s);
    kiln_program_free(program);

    /* u64 past INT64_MAX: 0..2^63 refuses 2^63 + 1; 2^63 + 2048.. refuses 2^63 + 2047; ..2^64 takes all. */
    s = range_checked_session(KILN_U64, 0, 9223372036854775808.0, &program);
    expect_u64(s, UINT64_C(1) << 63, true);
    expect_u64(s, (UINT64_C(1) << 63) + 1, false);
    uint64_t big = (UINT64_C(1) << 63) + 1;
    assert_int_equal(run_with(s, KILN_U64, &big, &err), KILN_ERR_INPUT_CHECK);
    assert_string_equal(err.message,
                        "input 'v' element [0]: 9223372036854775809 is outside the range 0..9.2233720368547758e+18");
    expect_u64(s, UINT64_MAX, false);
    kiln_session_free(s);
    kiln_program_free(program);
    s = range_checked_session(KILN_U64, 9223372036854777856.0, 18446744073709551616.0, &program);
    expect_u64(s, (UINT64_C(1) << 63) + 2047, false); /* rounds up to the bound in double */
    expect_u64(s, (UINT64_C(1) << 63) + 2048, true);
    expect_u64(s, UINT64_MAX, true);
    expect_u64(s, 0, false);
    kiln_session_free(s);
    kiln_program_free(program);
    s = range_checked_session(KILN_U64, -1e300, 18446744073709549568.0, &program); /* ..the largest double below 2^64 */
    expect_u64(s, 0, true);
    expect_u64(s, UINT64_C(18446744073709549568), true);
    expect_u64(s, UINT64_C(18446744073709549569), false); /* rounds to 2^64 in double: was refused, still is */
    kiln_session_free(s);
    kiln_program_free(program);
}

static void semantic_checks_change_the_program_identity(void **state)
{
    (void)state;
    uint8_t identity[2][32];
    for (int with_check = 0; with_check < 2; with_check++) {
        kiln_builder *b;
        kiln_error err;
        kiln_value x, y;
        kiln_program *program;
        assert_int_equal(kiln_builder_new("identity", &b, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &y, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
        if (with_check) {
            kiln_input_check check;
            kiln_input_check_default(&check);
            check.finite_only = true;
            assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_OK);
        }
        kiln_session *s = session_from_builder(b, &program);
        kiln_program_identity(program, KILN_IDENTITY_PROGRAM, identity[with_check]);
        kiln_session_free(s);
        kiln_program_free(program);
        kiln_builder_free(b);
    }
    assert_memory_not_equal(identity[0], identity[1], 32);
}

static void bad_semantic_checks_are_refused(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, k;
    kiln_input_check check;
    assert_int_equal(kiln_builder_new("bad", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "k", KILN_I64, "[2]", &k, &err), KILN_OK);
    kiln_input_check_default(&check);
    check.has_range = true;
    check.min = 2;
    check.max = 1;
    assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "range 2..1 is empty"));
    kiln_input_check_default(&check);
    check.finite_only = true;
    assert_int_equal(kiln_builder_set_input_check(b, "k", &check, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "needs a float input"));
    kiln_input_check_default(&check);
    check.category_count = 1;
    check.categories = (const int64_t[]){1};
    assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "categories need an integer input"));
    assert_int_equal(kiln_builder_set_input_check(b, "nope", &check, &err), KILN_ERR_INVALID_ARGUMENT);
    check.struct_size = 1;
    assert_int_equal(kiln_builder_set_input_check(b, "k", &check, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(batch_inside_range_is_accepted, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(batch_outside_range_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(wrong_width_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(wrong_rank_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(float32_input_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(missing_input_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(unknown_input_is_rejected, scale_setup, scale_teardown),
        cmocka_unit_test_setup_teardown(a_rejected_run_leaves_the_session_usable, scale_setup, scale_teardown),
        cmocka_unit_test(shared_dim_requires_equal_sizes),
        cmocka_unit_test(expression_axis_is_checked),
        cmocka_unit_test(affine_axis_binds_its_dim),
        cmocka_unit_test(solved_dim_is_shared_with_other_axes),
        cmocka_unit_test(matmul_inner_sizes_equal_by_enumeration_are_accepted),
        cmocka_unit_test(a_claim_over_too_many_dims_is_refused),
        cmocka_unit_test(claims_are_decided_beyond_enumeration),
        cmocka_unit_test(sums_of_squares_are_decided_and_searches_are_bounded),
        cmocka_unit_test(the_proof_budget_is_a_load_limit),
        cmocka_unit_test(non_strict_programs_guard_what_they_cannot_prove),
        cmocka_unit_test(non_strict_broadcast_and_constant_claims),
        cmocka_unit_test(unprovable_broadcast_is_refused_at_build),
        cmocka_unit_test(builder_refuses_bad_programs),
        cmocka_unit_test(integer_division_by_zero_is_a_runtime_error),
        cmocka_unit_test(multiple_of_and_derived_dims_are_guarded),
        cmocka_unit_test(ops_refuse_attributes_they_do_not_take),
        cmocka_unit_test(an_op_may_overwrite_its_input_variable),
        cmocka_unit_test(semantic_checks_guard_values),
        cmocka_unit_test(bad_semantic_checks_are_refused),
        cmocka_unit_test(integer_ranges_are_compared_exactly),
        cmocka_unit_test(semantic_checks_change_the_program_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
