/*
 * cmd_check.c — `kiln check add FILE --check 'x: range 0..1, finite' ...
 * [--force] [-o OUT]`: semantic input checks set on an existing artifact.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check_specs.h"
#include "cli.h"
#include "load_args.h"
#include "options.h"
#include "term.h"

static int cmd_check(int argc, char **argv);

const cli_verb cli_verb_check = {
    "check",
    "set semantic input checks (range, finite, categories, unit) on an artifact",
    "usage: kiln check add FILE --check 'NAME: RULE, ...' ... [--force] [--method M] [-o OUT]\n\n"
    "Set the semantic checks of inputs of FILE, checked before every run: a value\n"
    "range, finite values only (float inputs), a set of allowed categories\n"
    "(integer inputs), a unit and a description. Each --check gives all rules of\n"
    "one input, in the grammar of the text format's check statement:\n\n"
    "  --check 'x: range 0..1, finite'\n"
    "  --check 'ids: categories 0, 1, 2'\n"
    "  --check 'v: range -10..10, unit m/s, description \"wind speed\"'\n\n"
    "Checks of other inputs are kept; an input that already has a check gets the\n"
    "new one instead (said on stderr). Every evidence case stored in FILE must\n"
    "satisfy the new checks, else nothing is written and the error names the case\n"
    "and the offending element. FILE is replaced atomically unless -o is given;\n"
    "the new file keeps the old one's mode (and its owner and group where\n"
    "allowed), and a symbolic link is written through to the file it points to.\n"
    "A signature no longer covers the new digest and is removed (said on stderr\n"
    "with its key id): sign again afterwards.\n\n"
    "options:\n"
    "  --check SPEC         the checks of one input, NAME: RULE, ... (repeatable;\n"
    "                       rules: range MIN..MAX, finite, categories A, B, ...,\n"
    "                       unit TEXT, description \"TEXT\")\n"
    "  --method M           check inputs of method M (default: the artifact's first)\n"
    "  --force              keep evidence cases that break a new check (kiln verify\n"
    "                       will then fail them)\n"
    "  -o, --output OUT     write the result to OUT instead of replacing FILE\n",
    cmd_check,
};

typedef struct check_args {
    const char *out_path, *method;
    bool force;
    check_specs specs;
} check_args;

static int take_check(void *args, const char *value)
{
    return check_specs_take(&((check_args *)args)->specs, "check", value);
}

static const cli_option check_option_list[] = {
    {.name = "--check", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_check},
    {.name = "--force", .arity = CLI_FLAG, .offset = offsetof(check_args, force)},
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .offset = offsetof(check_args, out_path)},
    {.name = "--method", .arity = CLI_VALUE, .offset = offsetof(check_args, method)},
};

static const cli_options check_options = CLI_OPTIONS("check", check_option_list, 1);

static int add_checks(const char *path, const check_args *args)
{
    const check_specs *specs = &args->specs;
    bool *replaced = calloc(specs->count, sizeof *replaced);
    if (!replaced)
        return cli_error("out of memory");
    kiln_signature_info removed;
    kiln_error err, kept;
    int rc = CLI_OK;
    /* A bar while a large artifact is checked, then written again. */
    kiln_load_options options;
    cli_progress progress;
    load_args_rewrite_options(&options, &progress);
    kiln_edit_options edit;
    kiln_edit_options_default(&edit);
    edit.force = args->force;
    edit.load = &options;
    edit.method = args->method;
    kiln_status status = kiln_artifact_add_input_checks(path, args->out_path, specs->count, specs->inputs, specs->checks,
                                                        &edit, replaced, &removed, &kept, &err);
    cli_progress_finish(&progress);
    if (status != KILN_OK) {
        rc = cli_load_error(path, &err);
    } else {
        for (uint32_t i = 0; i < specs->count; i++)
            if (replaced[i])
                cli_warning("input '%s' had a check; it is replaced by the new one", specs->inputs[i]);
        if (kept.code != KILN_OK)
            cli_warning("kept because of --force: %s", kept.message);
        cli_warn_signature_removed(&removed);
        if (!cli_quiet)
            term_printf(stdout, "set the checks of %u input%s in %s\n", specs->count, specs->count == 1 ? "" : "s",
                        args->out_path ? args->out_path : path);
    }
    free(replaced);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "add") != 0)
        return cli_usage_error("check", "expected 'kiln check add FILE --check SPEC ...'");
    check_args args = {0};
    const char *path = NULL;
    int operands;
    /* "add" stands where the parser expects the verb. */
    int rc = cli_parse_options(&check_options, argc - 1, argv + 1, &args, &path, &operands);
    if (rc == CLI_OK && (!path || !args.specs.count))
        rc = cli_usage_error("check", "FILE and at least one --check are required");
    if (rc == CLI_OK)
        rc = add_checks(path, &args);
    check_specs_release(&args.specs);
    return rc;
}
