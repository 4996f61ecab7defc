/*
 * test_tools_json.c — the tools' JSON writer (tools/json.c): separators
 * from the nesting, the one string escaper, the number formats the
 * verbs' --json outputs rely on byte for byte, and the misuse json_finish
 * reports.
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

/* A writer into memory; finish() returns what was written. */
typedef struct capture {
    char *text;
    size_t size;
    FILE *out;
    json_writer w;
} capture;

static void start(capture *c)
{
    c->text = NULL;
    c->size = 0;
    c->out = open_memstream(&c->text, &c->size);
    assert_non_null(c->out);
    json_init(&c->w, c->out);
}

/* Ends the document; @return its text (newline included), owned by `c`. */
static const char *finish(capture *c, bool *well_formed)
{
    *well_formed = json_finish(&c->w);
    fclose(c->out);
    return c->text;
}

static void expect(capture *c, const char *wanted)
{
    bool well_formed;
    const char *text = finish(c, &well_formed);
    assert_string_equal(text, wanted);
    assert_true(well_formed);
    free(c->text);
}

static void expect_misuse(capture *c)
{
    bool well_formed;
    finish(c, &well_formed);
    assert_false(well_formed);
    free(c->text);
}

static void empty_containers(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_end_object(&c.w);
    expect(&c, "{}\n");
    start(&c);
    json_begin_array(&c.w);
    json_end_array(&c.w);
    expect(&c, "[]\n");
}

static void separators_follow_the_nesting(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_key(&c.w, "a");
    json_begin_array(&c.w);
    json_int(&c.w, 1);
    json_begin_object(&c.w);
    json_key(&c.w, "b");
    json_begin_array(&c.w);
    json_end_array(&c.w);
    json_key(&c.w, "c");
    json_string(&c.w, "x");
    json_end_object(&c.w);
    json_begin_array(&c.w);
    json_bool(&c.w, true);
    json_null(&c.w);
    json_bool(&c.w, false);
    json_end_array(&c.w);
    json_end_array(&c.w);
    json_key(&c.w, "d");
    json_begin_object(&c.w);
    json_end_object(&c.w);
    json_key(&c.w, "e");
    json_uint(&c.w, 2);
    json_end_object(&c.w);
    expect(&c, "{\"a\": [1, {\"b\": [], \"c\": \"x\"}, [true, null, false]], \"d\": {}, \"e\": 2}\n");
}

/* A member after a closed container gets its comma from the level above. */
static void first_member_of_each_level_has_no_comma(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    for (int i = 0; i < 3; i++) {
        json_begin_array(&c.w);
        for (int k = 0; k < i; k++)
            json_int(&c.w, k);
        json_end_array(&c.w);
    }
    json_end_array(&c.w);
    expect(&c, "[[], [0], [0, 1]]\n");
}

static void strings_are_escaped(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_string(&c.w, "say \"hi\"\\now");
    json_string(&c.w, "tab\there\nline\rend");
    json_string(&c.w, "\x01\x1f\x7f");
    json_string(&c.w, "csi \xc2\x9b end \xc2\xa0");
    json_string(&c.w, "caf\xc3\xa9 \xe2\x86\x92");
    json_string(&c.w, "");
    json_end_array(&c.w);
    expect(&c, "[\"say \\\"hi\\\"\\\\now\", \"tab\\there\\nline\\rend\", \"\\u0001\\u001f\\u007f\", "
               "\"csi \\u009b end \xc2\xa0\", \"caf\xc3\xa9 \xe2\x86\x92\", \"\"]\n");
}

static void keys_go_through_the_same_escaper(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_key(&c.w, "a\"b\n");
    json_int(&c.w, 0);
    json_end_object(&c.w);
    expect(&c, "{\"a\\\"b\\n\": 0}\n");
}

static void whole_numbers_in_full(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_int(&c.w, LLONG_MIN);
    json_int(&c.w, -1);
    json_uint(&c.w, ULLONG_MAX);
    json_uint(&c.w, 0);
    json_end_array(&c.w);
    expect(&c, "[-9223372036854775808, -1, 18446744073709551615, 0]\n");
}

/* The shortest text that reads back as the same double (issue 19, point 10):
 * 1e-06, not %.17g's 9.9999999999999995e-07; and every value does read back. */
static void doubles_round_trip(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_double(&c.w, 0.1);
    json_double(&c.w, 1.0);
    json_double(&c.w, -0.0);
    json_double(&c.w, 1e-6);
    json_double(&c.w, 1e300);
    json_double(&c.w, -1.0);
    json_double(&c.w, 2.0 / 3.0);
    json_double(&c.w, 5e-324);
    json_double(&c.w, 1.7976931348623157e308);
    json_end_array(&c.w);
    expect(&c, "[0.1, 1, -0, 1e-06, 1e+300, -1, 0.6666666666666666, 5e-324, "
               "1.7976931348623157e+308]\n");
    const double values[] = {0.1, 1e-6, 2.0 / 3.0, 5e-324, 1.7976931348623157e308, 3.14159, 123456789.125};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        bool well_formed;
        start(&c);
        json_double(&c.w, values[i]);
        assert_true(strtod(finish(&c, &well_formed), NULL) == values[i]);
        free(c.text);
    }
}

static void fixed_decimals(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_fixed(&c.w, 1.5, 6);
    json_fixed(&c.w, 2.0 / 3.0, 3);
    json_fixed(&c.w, 1234.0, 0);
    json_end_array(&c.w);
    expect(&c, "[1.500000, 0.667, 1234]\n");
}

/* JSON has no NaN or infinity. */
static void non_finite_numbers_are_null(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_double(&c.w, NAN);
    json_double(&c.w, INFINITY);
    json_fixed(&c.w, -INFINITY, 3);
    json_end_array(&c.w);
    expect(&c, "[null, null, null]\n");
}

static void members_in_one_call(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_member_string(&c.w, "s", "a\"b");
    json_member_int(&c.w, "i", -3);
    json_member_uint(&c.w, "u", 3);
    json_member_double(&c.w, "d", 0.5);
    json_member_bool(&c.w, "b", false);
    json_end_object(&c.w);
    expect(&c, "{\"s\": \"a\\\"b\", \"i\": -3, \"u\": 3, \"d\": 0.5, \"b\": false}\n");
}

static void value_without_key_is_misuse(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_int(&c.w, 1);
    json_end_object(&c.w);
    expect_misuse(&c);
}

static void key_in_array_is_misuse(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_array(&c.w);
    json_key(&c.w, "k");
    json_int(&c.w, 1);
    json_end_array(&c.w);
    expect_misuse(&c);
}

static void key_without_value_is_misuse(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    json_key(&c.w, "k");
    json_end_object(&c.w);
    expect_misuse(&c);
}

static void unbalanced_is_misuse(void **state)
{
    (void)state;
    capture c;
    start(&c);
    json_begin_object(&c.w);
    expect_misuse(&c);
    start(&c);
    json_begin_array(&c.w);
    json_end_object(&c.w);
    expect_misuse(&c);
    start(&c);
    json_end_array(&c.w);
    expect_misuse(&c);
}

static void too_deep_is_misuse(void **state)
{
    (void)state;
    capture c;
    start(&c);
    for (int i = 0; i <= JSON_MAX_DEPTH; i++)
        json_begin_array(&c.w);
    for (int i = 0; i <= JSON_MAX_DEPTH; i++)
        json_end_array(&c.w);
    expect_misuse(&c);
}

/* The deepest tracked nesting is still exact. */
static void deepest_tracked_nesting_is_exact(void **state)
{
    (void)state;
    capture c;
    char wanted[8 * JSON_MAX_DEPTH + 8]; /* ", [NN" and "]" per level */
    size_t used = 0;
    start(&c);
    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        json_begin_array(&c.w);
        json_int(&c.w, i);
        used += (size_t)snprintf(wanted + used, sizeof wanted - used, i ? ", [%d" : "[%d", i);
    }
    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        json_end_array(&c.w);
        wanted[used++] = ']';
    }
    wanted[used++] = '\n';
    wanted[used] = '\0';
    expect(&c, wanted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_containers),
        cmocka_unit_test(separators_follow_the_nesting),
        cmocka_unit_test(first_member_of_each_level_has_no_comma),
        cmocka_unit_test(strings_are_escaped),
        cmocka_unit_test(keys_go_through_the_same_escaper),
        cmocka_unit_test(whole_numbers_in_full),
        cmocka_unit_test(doubles_round_trip),
        cmocka_unit_test(fixed_decimals),
        cmocka_unit_test(non_finite_numbers_are_null),
        cmocka_unit_test(members_in_one_call),
        cmocka_unit_test(value_without_key_is_misuse),
        cmocka_unit_test(key_in_array_is_misuse),
        cmocka_unit_test(key_without_value_is_misuse),
        cmocka_unit_test(unbalanced_is_misuse),
        cmocka_unit_test(too_deep_is_misuse),
        cmocka_unit_test(deepest_tracked_nesting_is_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
