/*
 * test_liveness.c — nodes whose results reach no output are not run and
 * get no arena bytes (lib/plan/liveness.h), while the artifact keeps them.
 *
 * The dead node here would fail if it ran (an integer division by zero),
 * so a run that succeeds shows it was skipped, without timing anything;
 * and the arena holds only the live results.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "program_recipe.h"

/* y = x + 1 (the output); dead = x / 0 and dead2 = dead * dead, read by nothing live. */
static kiln_program *program_with_dead_nodes(bool dead_is_output)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, one, zero, y, dead, dead2;
    assert_int_equal(kiln_builder_new("dead", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 1024, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_I32, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I32, 1, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_I32, 0, &zero, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "div", 2, (kiln_value[]){x, zero}, &dead, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){dead, dead}, &dead2, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    if (dead_is_output)
        assert_int_equal(kiln_builder_add_output(b, "d", dead2, &err), KILN_OK);
    kiln_program *program = recipe_seal(b);
    return program;
}

static kiln_status run_ones(kiln_program *program, kiln_error *err)
{
    kiln_session *session;
    kiln_tensor *x;
    assert_int_equal(kiln_session_new(program, NULL, &session, err), KILN_OK);
    assert_int_equal(kiln_tensor_new(KILN_I32, 1, (int64_t[]){4}, &x, err), KILN_OK);
    for (int i = 0; i < 4; i++)
        ((int32_t *)kiln_tensor_data(x))[i] = i;
    assert_int_equal(kiln_session_set_input(session, "x", x, err), KILN_OK);
    kiln_status status = kiln_session_run(session, err);
    if (status == KILN_OK) {
        const int32_t *y = kiln_tensor_const_data(kiln_session_output(session, 0));
        for (int i = 0; i < 4; i++)
            assert_int_equal(y[i], i + 1);
    }
    kiln_tensor_free(x);
    kiln_session_free(session);
    return status;
}

static void dead_nodes_are_not_run_and_take_no_bytes(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program = program_with_dead_nodes(false);
    assert_int_equal(kiln_program_node_count(program), 3); /* the artifact keeps them */
    assert_int_equal(run_ones(program, &err), KILN_OK);
    /* Only y's slot: i32[1024], 4 KiB. */
    assert_int_equal(kiln_program_arena_bytes(program), 1024 * 4);
    kiln_program_free(program);
}

/* The same nodes, once an output reads them, run (and fail as they must). */
static void the_same_nodes_run_when_an_output_needs_them(void **state)
{
    (void)state;
    kiln_error err;
    kiln_program *program = program_with_dead_nodes(true);
    assert_int_equal(run_ones(program, &err), KILN_ERR_RUNTIME);
    assert_non_null(strstr(err.message, "integer division by zero"));
    assert_true(kiln_program_arena_bytes(program) >= 3 * 1024 * 4 - 1024 * 4); /* two live results at once */
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dead_nodes_are_not_run_and_take_no_bytes),
        cmocka_unit_test(the_same_nodes_run_when_an_output_needs_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
