/*
 * test_tools_term.c — the tools' terminal escaper (tools/term.c): the one
 * escaping function every verb's human output goes through (issue 20,
 * point 5), and term_printf, which escapes its string arguments but not
 * its format, with the widths and number formats the verbs use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "term.h"

/* A stream into memory and what was written to it. */
typedef struct capture {
    char *text;
    size_t size;
    FILE *out;
} capture;

static void start(capture *c)
{
    c->text = NULL;
    c->size = 0;
    c->out = open_memstream(&c->text, &c->size);
    assert_non_null(c->out);
}

static void expect(capture *c, const char *wanted)
{
    fclose(c->out);
    assert_string_equal(c->text, wanted);
    free(c->text);
}

static void control_characters_become_visible(void **state)
{
    (void)state;
    capture c;
    start(&c);
    term_plain(c.out, "a\033[2J\007\rb\n\t\x7f\x01 \"q\" \\ caf\xc3\xa9 \xc2\x9b" "1m \xc2\xa0");
    expect(&c, "a\\x1b[2J\\x07\\rb\\n\\t\\x7f\\x01 \"q\" \\ caf\xc3\xa9 \\xc2\\x9b1m \xc2\xa0");
}

static void quoted_text_escapes_quotes_and_backslashes(void **state)
{
    (void)state;
    capture c;
    start(&c);
    term_quoted(c.out, "say \"hi\" \\ \033");
    expect(&c, "\"say \\\"hi\\\" \\\\ \\x1b\"");
}

static void the_escaped_copy_matches_the_stream(void **state)
{
    (void)state;
    char *copy = term_escape_dup("x\ry\xc2\x85", 0);
    assert_non_null(copy);
    assert_string_equal(copy, "x\\ry\\xc2\\x85");
    free(copy);
}

/* A byte limit that cuts a C1 pair leaves its first byte as it is. */
static void a_byte_limit_is_respected(void **state)
{
    (void)state;
    capture c;
    char unterminated[4] = {'a', '\033', (char)0xc2, (char)0x9b};
    start(&c);
    assert_int_equal(term_escape(c.out, unterminated, 3, 0), 6);
    expect(&c, "a\\x1b\xc2");
}

/* The format is the tool's: its newlines stay. Arguments are the artifact's. */
static void printf_escapes_arguments_not_the_format(void **state)
{
    (void)state;
    capture c;
    start(&c);
    term_printf(c.out, "line\n%s|%c|%%\n", "evil\nline\r", '\033');
    expect(&c, "line\nevil\\nline\\r|\\x1b|%\n");
}

static void printf_pads_the_escaped_text(void **state)
{
    (void)state;
    capture c;
    start(&c);
    term_printf(c.out, "[%-8s][%6s][%.3s][%-*s][%*s][%.*s]", "a\007", "b", "abcdef", 4, "c", -4, "d", 2, "\033z");
    expect(&c, "[a\\x07   ][     b][abc][c   ][d   ][\\x1bz]");
}

static void printf_formats_numbers_as_fprintf(void **state)
{
    (void)state;
    capture c;
    start(&c);
    term_printf(c.out, "%d %u %ld %lld %llu %zu %x %05.1f %.3g %g %+d %3d|%-3d|%jd", -1, 7u, -2L, -3LL,
                18446744073709551615ULL, (size_t)42, 255u, 3.14159, 0.000123456, 1e300, 5, 9, 9, (intmax_t)-9);
    expect(&c, "-1 7 -2 -3 18446744073709551615 42 ff 003.1 0.000123 1e+300 +5   9|9  |-9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(control_characters_become_visible),
        cmocka_unit_test(quoted_text_escapes_quotes_and_backslashes),
        cmocka_unit_test(the_escaped_copy_matches_the_stream),
        cmocka_unit_test(a_byte_limit_is_respected),
        cmocka_unit_test(printf_escapes_arguments_not_the_format),
        cmocka_unit_test(printf_pads_the_escaped_text),
        cmocka_unit_test(printf_formats_numbers_as_fprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
