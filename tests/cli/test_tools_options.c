/*
 * test_tools_options.c — the verbs' option table parser (tools/options.c):
 * both value forms, flags, operands, and the usage errors every verb
 * shares (unknown option, missing value, an option given twice, one
 * operand too many), message for message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "options.h"

/* ------------------------------------------------------------ a test verb */

typedef struct test_args {
    const char *key, *output, *dir;
    bool json;
    int level;           /* --level[=N]: 0 unset, 5 bare */
    const char *inputs[8];
    int input_count;
} test_args;

static int take_input(void *target, const char *value)
{
    test_args *args = target;
    if (strcmp(value, "fail") == 0)
        return cli_error("input refused");
    args->inputs[args->input_count++] = value;
    return CLI_OK;
}

static int take_level(void *target, const char *value)
{
    ((test_args *)target)->level = value ? atoi(value) : 5;
    return CLI_OK;
}

static const cli_option test_option_list[] = {
    {.name = "--key", .arity = CLI_VALUE, .offset = offsetof(test_args, key)},
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .repeat = CLI_ONCE,
     .twice = "the output is given twice", .offset = offsetof(test_args, output)},
    {.name = "--dir", .arity = CLI_VALUE, .repeat = CLI_ONCE, .offset = offsetof(test_args, dir)},
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(test_args, json)},
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--level", .arity = CLI_OPTIONAL_VALUE, .handle = take_level},
};

static const cli_options one_file = CLI_OPTIONS("t", test_option_list, 1);
static const cli_options two_files = CLI_OPTIONS("t", test_option_list, 2);
static const cli_options no_files = CLI_OPTIONS("t", test_option_list, 0);

/* ------------------------------------------------------------ plumbing */

typedef struct outcome {
    char words[512]; /* the command line split in place; values point into it */
    int rc;
    test_args args;
    const char *operands[2];
    int operand_count;
    char err[1024]; /* what went to stderr */
} outcome;

/* Parse the words of `line` (split at spaces) as "t WORDS..." with `spec`. */
static void parse(const cli_options *spec, const char *line, outcome *out)
{
    char *argv[32];
    int argc = 0;
    memset(out, 0, sizeof *out);
    snprintf(out->words, sizeof out->words, "%s", line);
    argv[argc++] = "t";
    for (char *word = strtok(out->words, " "); word; word = strtok(NULL, " "))
        argv[argc++] = word;
    argv[argc] = NULL;

    FILE *captured = tmpfile();
    assert_non_null(captured);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(captured), STDERR_FILENO);
    out->rc = cli_parse_options(spec, argc, argv, &out->args, out->operands, &out->operand_count);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(captured);
    size_t size = fread(out->err, 1, sizeof out->err - 1, captured);
    out->err[size] = '\0';
    fclose(captured);
}

static void expect_usage_error(const cli_options *spec, const char *line, const char *message)
{
    outcome out;
    char wanted[512];
    parse(spec, line, &out);
    snprintf(wanted, sizeof wanted, "kiln: error: %s\nTry 'kiln t --help'.\n", message);
    assert_int_equal(out.rc, CLI_USAGE);
    assert_string_equal(out.err, wanted);
}

/* ------------------------------------------------------------ tests */

static void values_in_both_forms(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--key K -o=O file.kiln", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_string_equal(out.args.key, "K");
    assert_string_equal(out.args.output, "O");
    assert_int_equal(out.operand_count, 1);
    assert_string_equal(out.operands[0], "file.kiln");
    parse(&one_file, "file.kiln --key=a=b --output P", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_string_equal(out.args.key, "a=b");
    assert_string_equal(out.args.output, "P");
    assert_string_equal(out.err, "");
}

/* The next word is the value even when it looks like an option. */
static void value_may_look_like_an_option(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--key --json", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_string_equal(out.args.key, "--json");
    assert_false(out.args.json);
}

static void flags_take_no_value(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--json f", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_true(out.args.json);
    expect_usage_error(&one_file, "--json=1 f", "unknown option '--json=1'");
}

static void optional_value_only_inline(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--level", &out);
    assert_int_equal(out.args.level, 5);
    parse(&one_file, "--level=3", &out);
    assert_int_equal(out.args.level, 3);
    parse(&one_file, "--level 3", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_int_equal(out.args.level, 5);
    assert_string_equal(out.operands[0], "3");
}

static void unknown_options(void **state)
{
    (void)state;
    expect_usage_error(&one_file, "f --bogus", "unknown option '--bogus'");
    expect_usage_error(&one_file, "-x f", "unknown option '-x'");
    /* A longer name is another option, not the shorter one with a suffix. */
    expect_usage_error(&one_file, "--output-dir d f", "unknown option '--output-dir'");
    expect_usage_error(&one_file, "-ofile", "unknown option '-ofile'");
    expect_usage_error(&one_file, "--", "unknown option '--'");
}

/* The first error wins, and nothing after it is taken. */
static void first_error_stops_the_parse(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--bogus --key K", &out);
    assert_int_equal(out.rc, CLI_USAGE);
    assert_null(out.args.key);
    parse(&one_file, "--input a --input fail --input b", &out);
    assert_int_equal(out.rc, CLI_FAILED);
    assert_string_equal(out.err, "kiln: error: input refused\n");
    assert_int_equal(out.args.input_count, 1);
}

static void missing_value(void **state)
{
    (void)state;
    expect_usage_error(&one_file, "f --key", "option --key needs a value");
    /* The message names the option as it was spelled. */
    expect_usage_error(&one_file, "f -o", "option -o needs a value");
    expect_usage_error(&one_file, "f --output", "option --output needs a value");
}

static void repeated_values(void **state)
{
    (void)state;
    outcome out;
    parse(&one_file, "--key a --key=b f", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_string_equal(out.args.key, "b");
    parse(&one_file, "--input a --input=b --input c", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_int_equal(out.args.input_count, 3);
    assert_string_equal(out.args.inputs[0], "a");
    assert_string_equal(out.args.inputs[2], "c");
    expect_usage_error(&one_file, "-o a --output b", "the output is given twice");
    expect_usage_error(&one_file, "--dir a --dir b", "option --dir is given twice");
    parse(&one_file, "--json --json", &out);
    assert_int_equal(out.rc, CLI_OK);
}

static void operands(void **state)
{
    (void)state;
    outcome out;
    parse(&two_files, "a --json b", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_int_equal(out.operand_count, 2);
    assert_string_equal(out.operands[0], "a");
    assert_string_equal(out.operands[1], "b");
    parse(&one_file, "-", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_string_equal(out.operands[0], "-");
    parse(&one_file, "", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_int_equal(out.operand_count, 0);
    expect_usage_error(&one_file, "a b", "unexpected argument 'b'");
    expect_usage_error(&two_files, "a b c", "unexpected argument 'c'");
}

/* keygen and version: every stray word is an unexpected argument. */
static void verb_without_operands(void **state)
{
    (void)state;
    expect_usage_error(&no_files, "x", "unexpected argument 'x'");
    expect_usage_error(&no_files, "--bogus", "unexpected argument '--bogus'");
    expect_usage_error(&no_files, "--json=1", "unexpected argument '--json=1'");
    outcome out;
    parse(&no_files, "--json --key k", &out);
    assert_int_equal(out.rc, CLI_OK);
    assert_true(out.args.json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_in_both_forms),
        cmocka_unit_test(value_may_look_like_an_option),
        cmocka_unit_test(flags_take_no_value),
        cmocka_unit_test(optional_value_only_inline),
        cmocka_unit_test(unknown_options),
        cmocka_unit_test(first_error_stops_the_parse),
        cmocka_unit_test(missing_value),
        cmocka_unit_test(repeated_values),
        cmocka_unit_test(operands),
        cmocka_unit_test(verb_without_operands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
