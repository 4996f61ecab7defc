/*
 * test_session_profile.c — a session's profile (kiln_session_options.profile,
 * kiln_session_profile_*, lib/runtime/session_profile.c): per node the op,
 * the calls, the last result shape and which implementation ran it.
 *
 * One small program of known nodes: a conv with the relu after it (fused
 * into the conv by oneDNN builds), a flatten, a gemm, an add, a matmul,
 * and a neg no output reads. With the reference kernels every node runs
 * its portable kernel (the flatten moves data, the add runs the
 * vectorized rows every session runs); with the fast paths in a oneDNN
 * build, the conv, gemm and matmul run oneDNN primitives and the relu is
 * reported fused into the conv.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "onednn.h"
#include "program_recipe.h"

enum { NODE_CONV, NODE_RELU, NODE_FLATTEN, NODE_GEMM, NODE_ADD, NODE_MATMUL, NODE_NEG, NODE_COUNT };
enum { RUNS = 3 };

static float conv_weight[4 * 3 * 3 * 3], conv_bias[4], gemm_weight[144 * 5], gemm_bias[5], matmul_weight[5 * 3];

/* Fill `values` with small numbers of both signs, deterministically. */
static void fill(float *values, size_t count, float scale)
{
    for (size_t i = 0; i < count; i++)
        values[i] = scale * (float)((int)((i * 7919u) % 17u) - 8) / 8.0f;
}

static kiln_value weight(kiln_builder *b, const char *name, uint32_t rank, const int64_t *shape, const float *data)
{
    kiln_error err;
    kiln_value v;
    assert_int_equal(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, rank, shape, data, &v, &err),
                     KILN_OK);
    return v;
}

/* The program of the header comment, its nodes in the order of the enum. */
static kiln_program *make_program(void)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, conv, relu, flat, gemm, one, sum, product, negated;
    fill(conv_weight, sizeof conv_weight / sizeof *conv_weight, 0.5f);
    fill(conv_bias, 4, 0.1f);
    fill(gemm_weight, sizeof gemm_weight / sizeof *gemm_weight, 0.05f);
    fill(gemm_bias, 5, 0.1f);
    fill(matmul_weight, sizeof matmul_weight / sizeof *matmul_weight, 0.5f);
    assert_int_equal(kiln_builder_new("profiled", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[2, 3, 6, 6]", &x, &err), KILN_OK);
    const int64_t pads[] = {1, 1, 1, 1};
    kiln_attribute conv_attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    kiln_value conv_operands[] = {x, weight(b, "w", 4, (int64_t[]){4, 3, 3, 3}, conv_weight),
                                  weight(b, "b", 1, (int64_t[]){4}, conv_bias)};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "conv", 3, conv_operands, 1, conv_attributes, &conv, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &conv, &relu, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "flatten", 1, &relu, &flat, &err), KILN_OK);
    kiln_value gemm_operands[] = {flat, weight(b, "w2", 2, (int64_t[]){144, 5}, gemm_weight),
                                  weight(b, "b2", 1, (int64_t[]){5}, gemm_bias)};
    assert_int_equal(kiln_builder_add_op(b, "gemm", 3, gemm_operands, &gemm, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F32, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){gemm, one}, &sum, &err), KILN_OK);
    kiln_value matmul_operands[] = {sum, weight(b, "w3", 2, (int64_t[]){5, 3}, matmul_weight)};
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, matmul_operands, &product, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "neg", 1, &x, &negated, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", product, &err), KILN_OK);
    kiln_program *program = recipe_seal(b);
    assert_int_equal(kiln_program_node_count(program), NODE_COUNT);
    return program;
}

/* A session over `program` with options.profile set, run RUNS times on x. */
static kiln_session *profiled_session(const kiln_program *program, bool reference, const kiln_tensor *x)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.profile = true;
    options.reference_kernels = reference;
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    for (int r = 0; r < RUNS; r++)
        if (kiln_session_run(session, &err) != KILN_OK)
            fail_msg("run failed: %s", err.message);
    return session;
}

static kiln_tensor *input(void)
{
    kiln_tensor *x;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, (int64_t[]){2, 3, 6, 6}, &x, &err), KILN_OK);
    fill(kiln_tensor_data(x), kiln_tensor_element_count(x), 1.0f);
    return x;
}

static kiln_node_profile node_profile(const kiln_session *session, uint32_t node)
{
    kiln_node_profile p = {.struct_size = sizeof p};
    kiln_error err;
    assert_int_equal(kiln_session_profile_node(session, node, &p, &err), KILN_OK);
    return p;
}

/* Node `node` ran every run along `path`, writing an f32 of `rank` extents `shape`. */
static void assert_ran(const kiln_session *session, uint32_t node, const char *op, kiln_node_path path,
                       uint32_t rank, const int64_t *shape)
{
    kiln_node_profile p = node_profile(session, node);
    assert_string_equal(p.op, op);
    if (p.path != path)
        fail_msg("node %u (%s) ran %s, expected %s", node, op, kiln_node_path_name(p.path),
                 kiln_node_path_name(path));
    assert_int_equal(p.runs, RUNS);
    assert_true(p.min_nanoseconds > 0);
    assert_true(p.min_nanoseconds * RUNS <= p.nanoseconds);
    assert_int_equal(p.fused_runs, 0);
    assert_int_equal(p.fused_into, UINT32_MAX);
    assert_int_equal(p.dtype, KILN_F32);
    assert_int_equal(p.rank, rank);
    assert_memory_equal(p.shape, shape, rank * sizeof *shape);
}

/* The summary covers RUNS runs; the nodes' time is part of the runs'. */
static void assert_summary(const kiln_session *session)
{
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    kiln_error err;
    assert_int_equal(kiln_session_profile_summary(session, &summary, &err), KILN_OK);
    assert_int_equal(summary.node_count, NODE_COUNT);
    assert_int_equal(summary.runs, RUNS);
    assert_true(summary.node_nanoseconds > 0);
    assert_true(summary.node_nanoseconds <= summary.nanoseconds);
    uint64_t sum = 0;
    for (uint32_t n = 0; n < NODE_COUNT; n++)
        sum += node_profile(session, n).nanoseconds;
    assert_int_equal(sum, summary.node_nanoseconds);
}

static const int64_t conv_shape[] = {2, 4, 6, 6}, flat_shape[] = {2, 144}, gemm_shape[] = {2, 5},
                     matmul_shape[] = {2, 3};

/* Reference kernels: every node its portable kernel; the neg no output reads never runs. */
static void reference_session_profiles_every_node(void **state)
{
    (void)state;
    kiln_program *program = make_program();
    kiln_tensor *x = input();
    kiln_session *session = profiled_session(program, true, x);
    assert_summary(session);
    assert_ran(session, NODE_CONV, "conv", KILN_NODE_PATH_REFERENCE, 4, conv_shape);
    assert_ran(session, NODE_RELU, "relu", KILN_NODE_PATH_REFERENCE, 4, conv_shape);
    assert_ran(session, NODE_FLATTEN, "flatten", KILN_NODE_PATH_VIEW, 2, flat_shape);
    assert_ran(session, NODE_GEMM, "gemm", KILN_NODE_PATH_REFERENCE, 2, gemm_shape);
    assert_ran(session, NODE_ADD, "add", KILN_NODE_PATH_VECTOR, 2, gemm_shape);
    assert_ran(session, NODE_MATMUL, "matmul", KILN_NODE_PATH_REFERENCE, 2, matmul_shape);
    assert_false(node_profile(session, NODE_CONV).applied_activation);
    kiln_node_profile neg = node_profile(session, NODE_NEG);
    assert_string_equal(neg.op, "neg");
    assert_int_equal(neg.path, KILN_NODE_PATH_NOT_RUN);
    assert_int_equal(neg.runs, 0);
    assert_int_equal(neg.nanoseconds, 0);
    kiln_session_free(session);
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/* Fast paths: oneDNN's conv applies the relu, which is reported fused into it, and runs gemm and matmul. */
static void fast_session_reports_onednn_and_fusion(void **state)
{
    (void)state;
    if (!kiln_onednn_enabled())
        skip();
    kiln_program *program = make_program();
    kiln_tensor *x = input();
    kiln_session *session = profiled_session(program, false, x);
    assert_summary(session);
    assert_ran(session, NODE_CONV, "conv", KILN_NODE_PATH_ONEDNN, 4, conv_shape);
    assert_true(node_profile(session, NODE_CONV).applied_activation);
    kiln_node_profile relu = node_profile(session, NODE_RELU);
    assert_string_equal(relu.op, "relu");
    assert_int_equal(relu.path, KILN_NODE_PATH_FUSED);
    assert_int_equal(relu.fused_into, NODE_CONV);
    assert_int_equal(relu.fused_runs, RUNS);
    assert_int_equal(relu.runs, 0);
    assert_int_equal(relu.nanoseconds, 0);
    assert_int_equal(relu.min_nanoseconds, 0);
    assert_int_equal(relu.rank, 4);
    assert_memory_equal(relu.shape, conv_shape, sizeof conv_shape);
    assert_ran(session, NODE_FLATTEN, "flatten", KILN_NODE_PATH_VIEW, 2, flat_shape);
    assert_ran(session, NODE_GEMM, "gemm", KILN_NODE_PATH_ONEDNN, 2, gemm_shape);
    assert_ran(session, NODE_MATMUL, "matmul", KILN_NODE_PATH_ONEDNN, 2, matmul_shape);
    kiln_session_free(session);
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/* A reset forgets every run: the warm-up a bench leaves out. */
static void reset_forgets_the_runs(void **state)
{
    (void)state;
    kiln_program *program = make_program();
    kiln_tensor *x = input();
    kiln_session *session = profiled_session(program, true, x);
    kiln_session_profile_reset(session);
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    kiln_error err;
    assert_int_equal(kiln_session_profile_summary(session, &summary, &err), KILN_OK);
    assert_int_equal(summary.runs, 0);
    assert_int_equal(summary.nanoseconds, 0);
    assert_int_equal(summary.node_nanoseconds, 0);
    for (uint32_t n = 0; n < NODE_COUNT; n++) {
        kiln_node_profile p = node_profile(session, n);
        assert_int_equal(p.runs, 0);
        assert_int_equal(p.path, KILN_NODE_PATH_NOT_RUN);
        assert_non_null(p.op);
    }
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    assert_int_equal(kiln_session_profile_summary(session, &summary, &err), KILN_OK);
    assert_int_equal(summary.runs, 1);
    assert_int_equal(node_profile(session, NODE_MATMUL).runs, 1);
    kiln_session_free(session);
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/* Asking a session that does not profile, a node out of range or with a wrong struct_size is refused, saying why. */
static void misuse_is_refused(void **state)
{
    (void)state;
    kiln_program *program = make_program();
    kiln_tensor *x = input();
    kiln_session *plain, *profiled = profiled_session(program, true, x);
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &plain, &err), KILN_OK);
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    kiln_node_profile p = {.struct_size = sizeof p};
    assert_int_equal(kiln_session_profile_summary(plain, &summary, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "options.profile"));
    assert_int_equal(kiln_session_profile_node(plain, 0, &p, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_session_profile_reset(plain); /* a no-op */
    assert_int_equal(kiln_session_profile_node(profiled, NODE_COUNT, &p, &err), KILN_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "7 nodes"));
    p.struct_size = sizeof p - 1;
    assert_int_equal(kiln_session_profile_node(profiled, 0, &p, &err), KILN_ERR_INVALID_ARGUMENT);
    summary.struct_size = 0;
    assert_int_equal(kiln_session_profile_summary(profiled, &summary, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_session_free(plain);
    kiln_session_free(profiled);
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/*
 * Options built against the header before `profile` (struct_size its
 * offset, and no bytes beyond it: a heap block of that size, so that ASan
 * sees any read past it) are taken, and do not profile.
 */
static void options_from_before_profile_are_taken(void **state)
{
    (void)state;
    kiln_program *program = make_program();
    kiln_tensor *x = input();
    size_t old_size = offsetof(kiln_session_options, profile);
    kiln_session_options current;
    kiln_session_options_default(&current);
    current.struct_size = old_size;
    kiln_session_options *old = malloc(old_size);
    assert_non_null(old);
    memcpy(old, &current, old_size);
    kiln_session *session;
    kiln_error err;
    kiln_profile_summary summary = {.struct_size = sizeof summary};
    assert_int_equal(kiln_session_new(program, old, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_profile_summary(session, &summary, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_session_free(session);
    const char *names[] = {"x"};
    const kiln_tensor *tensors[] = {x};
    assert_int_equal(kiln_session_new_for_inputs(program, old, 1, names, tensors, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", x, &err), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    kiln_session_free(session);
    free(old);
    current.struct_size = old_size - 1;
    assert_int_equal(kiln_session_new(program, &current, &session, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_tensor_free(x);
    kiln_program_free(program);
}

/* top_k and top_k_indices of one x run as one group (result_groups.h): the second is recorded fused into the first. */
static void grouped_nodes_are_fused_into_the_first(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_program *program;
    kiln_error err;
    kiln_value x, values, indices;
    assert_int_equal(kiln_builder_new("grouped", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[4, 9]", &x, &err), KILN_OK);
    kiln_attribute attributes[] = {{.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
                                   {.name = "k", .type = KILN_ATTRIBUTE_INT, .i = 3}};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "top_k", 1, &x, 2, attributes, &values, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "top_k_indices", 1, &x, 2, attributes, &indices, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "values", values, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "indices", indices, &err), KILN_OK);
    program = recipe_seal(b);
    kiln_tensor *t;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){4, 9}, &t, &err), KILN_OK);
    fill(kiln_tensor_data(t), 36, 1.0f);
    kiln_session *session = profiled_session(program, false, t);
    kiln_node_profile first = node_profile(session, 0), second = node_profile(session, 1);
    assert_int_equal(first.runs, RUNS);
    assert_int_equal(first.path, KILN_NODE_PATH_REFERENCE);
    assert_string_equal(second.op, "top_k_indices");
    assert_int_equal(second.path, KILN_NODE_PATH_FUSED);
    assert_int_equal(second.fused_into, 0);
    assert_int_equal(second.fused_runs, RUNS);
    assert_int_equal(second.runs, 0);
    assert_int_equal(second.dtype, KILN_I64);
    assert_int_equal(second.rank, 2);
    assert_int_equal(second.shape[1], 3);
    kiln_session_free(session);
    kiln_tensor_free(t);
    kiln_program_free(program);
}

static void path_names(void **state)
{
    (void)state;
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_REFERENCE), "reference");
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_VECTOR), "vector");
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_ONEDNN), "onednn");
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_VIEW), "view");
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_FUSED), "fused");
    assert_string_equal(kiln_node_path_name(KILN_NODE_PATH_NOT_RUN), "not-run");
    assert_string_equal(kiln_node_path_name((kiln_node_path)99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_session_profiles_every_node),
        cmocka_unit_test(fast_session_reports_onednn_and_fusion),
        cmocka_unit_test(reset_forgets_the_runs),
        cmocka_unit_test(misuse_is_refused),
        cmocka_unit_test(options_from_before_profile_are_taken),
        cmocka_unit_test(grouped_nodes_are_fused_into_the_first),
        cmocka_unit_test(path_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
