/* test_shape_expr.c — parsing, printing, interning, evaluation and bounds of shape expressions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "shape_canon.h"
#include "shape_parse.h"

#include "prng.h"

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

static void parsing_gives_the_canonical_form_which_reparses_to_the_same_tree(void **state)
{
    (void)state;
    static const struct {
        const char *text, *printed;
    } cases[] = {
        {"2*n+1", "2*n + 1"},
        {"n*2 + 1", "2*n + 1"},
        {"1 + n + n", "2*n + 1"},
        {"(n - 1) / 2", "(n + 1) / 2 - 1"}, /* the constant inside is reduced to 0..divisor-1 */
        {"n - (seq - 1)", "n - seq + 1"},
        {"n - seq - 1", "n - seq - 1"},
        {"seq - n", "seq - n"}, /* positive terms first, whatever the dims' order */
        {"batch * (n * seq)", "batch*n*seq"},
        {"seq * n * batch", "batch*n*seq"},
        {"(n + 1) * (n - 1)", "n*n - 1"},
        {"((batch))", "batch"},
        {"seq % 8", "seq % 8"},
        {"(seq + 8) % 8", "seq % 8"},
        {"(9*seq + 3) % 8", "(seq + 3) % 8"},
        {"(8*seq + 5) / 4", "2*seq + 1"},
        {"(n / 2) / 3", "n / 6"},
        {"2 * (n / 2)", "2*(n / 2)"},
        {"n - n", "0"},
        {"0 - n", "0 - n"},
        {"0 - 2*n - seq", "0 - 2*n - seq"},
        {"0 - 3*n + seq", "seq - 3*n"},
        {"n - n - 3", "0 - 3"},
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

/* A random tree of depth <= `depth` over the DIM_COUNT dims, built without canonicalizing. */
static uint32_t random_tree(kiln_expr_pool *pool, uint64_t *rng, int depth)
{
    kiln_error err;
    uint32_t id;
    uint64_t pick = lcg_next(rng) % (depth > 0 ? 8 : 2);
    if (pick == 0) {
        assert_int_equal(kiln_expr_const(pool, (int64_t)(lcg_next(rng) % 9) - 3, &id, &err), KILN_OK);
        return id;
    }
    if (pick == 1) {
        assert_int_equal(kiln_expr_dim(pool, (uint32_t)(lcg_next(rng) % DIM_COUNT), DIM_COUNT, &id, &err), KILN_OK);
        return id;
    }
    static const uint8_t kinds[] = {KILN_EXPR_ADD, KILN_EXPR_SUB, KILN_EXPR_MUL, KILN_EXPR_ADD,
                                    KILN_EXPR_FLOORDIV, KILN_EXPR_MOD};
    kiln_expr node = {.kind = kinds[pick - 2]};
    node.lhs = random_tree(pool, rng, depth - 1);
    if (node.kind == KILN_EXPR_FLOORDIV || node.kind == KILN_EXPR_MOD)
        assert_int_equal(kiln_expr_const(pool, (int64_t)(lcg_next(rng) % 4) + 1, &node.rhs, &err), KILN_OK);
    else
        node.rhs = random_tree(pool, rng, depth - 1);
    assert_int_equal(kiln_expr_intern(pool, &node, DIM_COUNT, &id, &err), KILN_OK);
    return id;
}

static uint32_t make_binary(kiln_expr_pool *pool, uint8_t kind, uint32_t lhs, uint32_t rhs)
{
    kiln_error err;
    kiln_expr node = {.kind = kind, .lhs = lhs, .rhs = rhs};
    uint32_t id;
    assert_int_equal(kiln_expr_intern(pool, &node, DIM_COUNT, &id, &err), KILN_OK);
    return id;
}

static uint32_t canonical(kiln_expr_pool *pool, uint32_t id)
{
    kiln_error err;
    uint32_t out;
    assert_int_equal(kiln_expr_canonical(pool, id, &out, &err), KILN_OK);
    return out;
}

/*
 * Property test: for random trees, the canonical form has the same value
 * at every point (negative dim values too, where floor semantics matter),
 * is a fixed point, prints to text that parses back to it, and equal
 * rewrites (commuted, distributed) reach the same id.
 */
static void canonical_form_keeps_values_and_unifies_equal_expressions(void **state)
{
    (void)state;
    kiln_expr_pool pool;
    kiln_expr_pool_init(&pool);
    uint64_t rng = 42;
    uint32_t unified = 0;
    for (int round = 0; round < 3000; round++) {
        uint32_t a = random_tree(&pool, &rng, 4), b = random_tree(&pool, &rng, 2), c = random_tree(&pool, &rng, 2);
        uint32_t ca = canonical(&pool, a);
        assert_int_equal(canonical(&pool, ca), ca);
        for (int point = 0; point < 20; point++) {
            int64_t values[DIM_COUNT];
            bool bound[DIM_COUNT] = {true, true, true};
            for (int d = 0; d < DIM_COUNT; d++)
                values[d] = (int64_t)(lcg_next(&rng) % 25) - 8;
            int64_t want, got;
            assert_int_equal(kiln_expr_eval(&pool, a, values, bound, &want, NULL), KILN_OK);
            assert_int_equal(kiln_expr_eval(&pool, ca, values, bound, &got, NULL), KILN_OK);
            if (want != got) {
                char text[512], text_c[512];
                kiln_expr_format(&pool, a, dim_names, text, sizeof text);
                kiln_expr_format(&pool, ca, dim_names, text_c, sizeof text_c);
                fail_msg("%s = %lld but its canonical form %s = %lld at (%lld, %lld, %lld)", text, (long long)want,
                         text_c, (long long)got, (long long)values[0], (long long)values[1], (long long)values[2]);
            }
        }
        char printed[1024], again[1024];
        uint32_t reparsed;
        if (kiln_expr_format(&pool, ca, dim_names, printed, sizeof printed) < (int)sizeof printed) {
            parse_and_print(&pool, printed, &reparsed, again, sizeof again);
            assert_int_equal(reparsed, ca);
        }
        uint32_t ab = make_binary(&pool, KILN_EXPR_MUL, a, make_binary(&pool, KILN_EXPR_ADD, b, c));
        uint32_t distributed = make_binary(&pool, KILN_EXPR_ADD, make_binary(&pool, KILN_EXPR_MUL, c, a),
                                           make_binary(&pool, KILN_EXPR_MUL, b, a));
        uint32_t cab = canonical(&pool, ab), cdistributed = canonical(&pool, distributed);
        if (cab != ab) { /* within the limits: then the rewrite must agree */
            assert_int_equal(cab, cdistributed);
            unified++;
        }
    }
    assert_true(unified > 2000); /* the limits rarely apply at this size */
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
        cmocka_unit_test(parsing_gives_the_canonical_form_which_reparses_to_the_same_tree),
        cmocka_unit_test(shapes_parse_with_and_without_brackets),
        cmocka_unit_test(malformed_shapes_name_the_column),
        cmocka_unit_test(evaluation_uses_floor_semantics_and_checks_overflow),
        cmocka_unit_test(bounds_are_sound_over_the_domain),
        cmocka_unit_test(canonical_form_keeps_values_and_unifies_equal_expressions),
        cmocka_unit_test(deep_trees_and_bad_nodes_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
