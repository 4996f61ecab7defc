/* test_shape_expr.c — parsing, printing, interning, evaluation and bounds of shape expressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "shape_parse.h"

static const char *const dim_names[] = {"batch", "n", "seq"};
#define DIM_COUNT 3

/* Parse one-axis `text` and print it back. */
static void parse_and_print(kiln_expr_pool *pool, const char *text, uint32_t *id, char *printed, size_t size)
{
    uint32_t rank, axes[KILN_MAX_RANK];
    kiln_error err;
    kiln_status status = kiln_shape_parse(text, dim_names, DIM_COUNT, pool, &rank, axes, &err);
    if (status != KILN_OK)
        fail_msg("parse of '%s' failed: %s", text, err.message);
    assert_int_equal(rank, 1);
    *id = axes[0];
    kiln_expr_format(pool, axes[0], dim_names, printed, size);
}

static void printing_is_canonical_and_reparses_to_the_same_tree(void **state)
{
    (void)state;
    static const struct {
        const char *text, *printed;
    } cases[] = {
        {"2*n+1", "2*n + 1"},
        {"(n - 1) / 2", "(n - 1) / 2"},
        {"n - (seq - 1)", "n - (seq - 1)"},
        {"n - seq - 1", "n - seq - 1"},
        {"batch * (n * seq)", "batch*(n*seq)"},
        {"((batch))", "batch"},
        {"seq % 8", "seq % 8"},
        {"2 * (n / 2)", "2*(n / 2)"},
        {"7", "7"},
    };
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char printed[128], again[128];
        uint32_t id, id_again;
        parse_and_print(&pool, cases[i].text, &id, printed, sizeof printed);
        assert_string_equal(printed, cases[i].printed);
        parse_and_print(&pool, printed, &id_again, again, sizeof again);
        assert_int_equal(id, id_again); /* interning: same tree, same id */
    }
    kiln_expr_pool_release(&pool);
}

static void shapes_parse_with_and_without_brackets(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    uint32_t rank, axes[KILN_MAX_RANK];
    kiln_error err;
    kiln_expr_pool_init(&pool);
    assert_int_equal(kiln_shape_parse("[batch, 2]", dim_names, DIM_COUNT, &pool, &rank, axes, &err), KILN_OK);
    assert_int_equal(rank, 2);
    assert_true(kiln_expr_is_const(&pool, axes[1], 2));
    assert_int_equal(kiln_shape_parse("batch,2", dim_names, DIM_COUNT, &pool, &rank, axes, &err), KILN_OK);
    assert_int_equal(rank, 2);
    assert_int_equal(kiln_shape_parse("[]", dim_names, DIM_COUNT, &pool, &rank, axes, &err), KILN_OK);
    assert_int_equal(rank, 0);
    assert_int_equal(kiln_shape_parse("", dim_names, DIM_COUNT, &pool, &rank, axes, &err), KILN_OK);
    assert_int_equal(rank, 0);
    kiln_expr_pool_release(&pool);
}

static void malformed_shapes_name_the_column(void **state)
{
    (void)state;
    static const struct {
        const char *text, *expected;
    } cases[] = {
        {"[batch,", "column 8: expected an integer"},
        {"[batch 2]", "column 8: expected ',' or ']'"},
        {"[width]", "'width' is not a declared dim"},
        {"[n / 0]", "positive constant divisor"},
        {"[n % seq]", "positive constant divisor"},
        {"[n / -2]", "column 6: expected an integer"},
        {"[99999999999999999999]", "fits in 64 bits"},
        {"[1,2,3,4,5,6,7,8,9]", "more than 8 axes"},
        {"[(n]", "expected ')'"},
        {"n]", "expected ',' or end of shape"},
    };
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t rank, axes[KILN_MAX_RANK];
        kiln_error err;
        assert_int_not_equal(kiln_shape_parse(cases[i].text, dim_names, DIM_COUNT, &pool, &rank, axes, &err),
                             KILN_OK);
        if (!strstr(err.message, cases[i].expected))
            fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, err.message, cases[i].expected);
    }
    kiln_expr_pool_release(&pool);
}

static void evaluation_uses_floor_semantics_and_checks_overflow(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    char printed[64];
    uint32_t id;
    int64_t values[DIM_COUNT] = {3, -7, 0};
    bool bound[DIM_COUNT] = {true, true, false};
    int64_t out;
    kiln_error err;
    parse_and_print(&pool, "n / 2", &id, printed, sizeof printed);
    assert_int_equal(kiln_expr_eval(&pool, id, values, bound, &out, &err), KILN_OK);
    assert_int_equal(out, -4); /* floor, not truncation */
    parse_and_print(&pool, "n % 2", &id, printed, sizeof printed);
    assert_int_equal(kiln_expr_eval(&pool, id, values, bound, &out, &err), KILN_OK);
    assert_int_equal(out, 1);
    parse_and_print(&pool, "seq + 1", &id, printed, sizeof printed);
    assert_int_not_equal(kiln_expr_eval(&pool, id, values, bound, &out, &err), KILN_OK);
    parse_and_print(&pool, "batch * 4611686018427387904", &id, printed, sizeof printed);
    assert_int_not_equal(kiln_expr_eval(&pool, id, values, bound, &out, &err), KILN_OK);
    assert_non_null(strstr(err.message, "overflow"));
    kiln_expr_pool_release(&pool);
}

static void bounds_are_sound_over_the_domain(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    const kiln_interval ranges[DIM_COUNT] = {{2, 4}, {1, 9}, {8, 512}};
    static const struct {
        const char *text;
        int64_t lo, hi;
    } cases[] = {
        {"2*batch + 1", 5, 9}, {"n - batch", -3, 7}, {"batch*n", 2, 36},
        {"(n - 1) / 2", 0, 4}, {"seq % 8", 0, 7},    {"batch % 8", 2, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char printed[64];
        uint32_t id;
        kiln_interval bounds;
        parse_and_print(&pool, cases[i].text, &id, printed, sizeof printed);
        assert_true(kiln_expr_bounds(&pool, id, ranges, &bounds));
        assert_int_equal(bounds.lo, cases[i].lo);
        assert_int_equal(bounds.hi, cases[i].hi);
        /* Soundness: every point of the domain lies inside the bounds. */
        for (int64_t b = 2; b <= 4; b++)
            for (int64_t n = 1; n <= 9; n++)
                for (int64_t s = 8; s <= 512; s += 13) {
                    int64_t values[DIM_COUNT] = {b, n, s}, v;
                    bool bound[DIM_COUNT] = {true, true, true};
                    assert_int_equal(kiln_expr_eval(&pool, id, values, bound, &v, NULL), KILN_OK);
                    assert_true(v >= bounds.lo && v <= bounds.hi);
                }
    }
    kiln_expr_pool_release(&pool);
}

static void deep_trees_and_bad_nodes_are_refused(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_error err;
    uint32_t id, one;
    kiln_expr_pool_init(&pool);
    assert_int_equal(kiln_expr_const(&pool, 1, &one, &err), KILN_OK);
    id = one;
    kiln_status status = KILN_OK;
    int depth = 1;
    while (status == KILN_OK && depth < 200) {
        kiln_expr node = {.kind = KILN_EXPR_ADD, .lhs = id, .rhs = one};
        status = kiln_expr_intern(&pool, &node, 0, &id, &err);
        depth++;
    }
    assert_int_equal(status, KILN_ERR_LIMIT);
    assert_int_equal(depth, KILN_EXPR_MAX_DEPTH + 1);
    kiln_expr bad_kind = {.kind = 9};
    assert_int_equal(kiln_expr_intern(&pool, &bad_kind, 0, &id, &err), KILN_ERR_MALFORMED);
    kiln_expr forward = {.kind = KILN_EXPR_MUL, .lhs = 0, .rhs = pool.count};
    assert_int_equal(kiln_expr_intern(&pool, &forward, 0, &id, &err), KILN_ERR_MALFORMED);
    kiln_expr bad_dim = {.kind = KILN_EXPR_DIM, .dim = 3};
    assert_int_equal(kiln_expr_intern(&pool, &bad_dim, 3, &id, &err), KILN_ERR_MALFORMED);
    kiln_expr_pool_release(&pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printing_is_canonical_and_reparses_to_the_same_tree),
        cmocka_unit_test(shapes_parse_with_and_without_brackets),
        cmocka_unit_test(malformed_shapes_name_the_column),
        cmocka_unit_test(evaluation_uses_floor_semantics_and_checks_overflow),
        cmocka_unit_test(bounds_are_sound_over_the_domain),
        cmocka_unit_test(deep_trees_and_bad_nodes_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
