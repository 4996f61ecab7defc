/*
 * cmd_evidence.c — `kiln evidence add FILE --name N --input x=a.npy ...
 * --expect y=b.npy ... [--atol A] [--rtol R] [--exact] [--force] [-o OUT]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load_args.h"
#include "options.h"
#include "term.h"

static int cmd_evidence(int argc, char **argv);

const cli_verb cli_verb_evidence = {
    "evidence",
    "embed a known-input case that kiln verify replays",
    "usage: kiln evidence add FILE --name NAME --input NAME=PATH.npy ... --expect NAME=PATH.npy ...\n"
    "                         [--atol A] [--rtol R] [--exact] [--nan-unequal] [--force] [--method M]\n"
    "                         [-o OUT]\n\n"
    "Add a named evidence case to FILE: every input of the program, and the\n"
    "outputs it must produce. 'kiln verify' replays each case on the runtime at\n"
    "hand and fails if an output falls outside its rule. The case is replayed\n"
    "here when added and must hold: if an output falls outside its rule, nothing\n"
    "is written and the error names each failing output with its figures\n"
    "(--force seals it anyway, with a warning). FILE is replaced atomically\n"
    "unless -o is given; the new\n"
    "file keeps the old one's mode (and its owner and group where allowed), and\n"
    "a symbolic link is written through to the file it points to, which is\n"
    "replaced while the link stays. A signature is removed (the digest\n"
    "changes; said on stderr with its key id), so sign again afterwards.\n\n"
    "options:\n"
    "  --name NAME          the case's name (unique within the artifact)\n"
    "  --input NAME=PATH    an input of the case (repeat for every input)\n"
    "  --expect NAME=PATH   an expected output (repeatable)\n"
    "  --atol A, --rtol R   tolerance for float outputs: |a - e| <= A + R*|e|\n"
    "                       (defaults 1e-6 and 1e-5; integer outputs are exact)\n"
    "  --exact              require equal values instead\n"
    "  --nan-unequal        a NaN never matches (default: NaN matches NaN)\n"
    "  --method M           add the case to method M (default: the artifact's first)\n"
    "  --force              seal a case that fails on this runtime (kiln verify will\n"
    "                       then fail the artifact here)\n"
    "  -o, --output OUT     write the result to OUT instead of replacing FILE\n",
    cmd_evidence,
};

typedef struct named_files {
    int count;
    char **names;
    const char **paths;
    kiln_tensor **tensors;
} named_files;

static int add_named(named_files *set, const char *value, const char *option)
{
    const char *equals = strchr(value, '=');
    if (!equals || equals == value || !equals[1])
        return cli_usage_error("evidence", "%s takes NAME=PATH.npy, got '%s'", option, value);
    char *name = strndup(value, (size_t)(equals - value));
    if (!name)
        return cli_error("out of memory");
    set->names[set->count] = name;
    set->paths[set->count++] = equals + 1;
    return CLI_OK;
}

static int read_all(named_files *set)
{
    for (int i = 0; i < set->count; i++) {
        kiln_error err;
        if (kiln_npy_read_file(set->paths[i], &set->tensors[i], &err) != KILN_OK)
            return cli_error("%s", err.message);
    }
    return CLI_OK;
}

static void release(named_files *set)
{
    for (int i = 0; i < set->count; i++) {
        free(set->names[i]);
        kiln_tensor_free(set->tensors[i]);
    }
    free(set->names);
    free(set->paths);
    free(set->tensors);
}

static bool allocate(named_files *set, int capacity)
{
    set->count = 0;
    set->names = calloc((size_t)capacity, sizeof *set->names);
    set->paths = calloc((size_t)capacity, sizeof *set->paths);
    set->tensors = calloc((size_t)capacity, sizeof *set->tensors);
    return set->names && set->paths && set->tensors;
}

static int parse_number(const char *text, const char *option, double *out)
{
    char *end;
    *out = strtod(text, &end);
    if (end == text || *end || !(*out >= 0))
        return cli_usage_error("evidence", "%s takes a non-negative number, got '%s'", option, text);
    return CLI_OK;
}

typedef struct evidence_args {
    const char *name, *out_path, *method;
    bool force;
    kiln_compare_rule rule;
    named_files inputs, expected;
} evidence_args;

static int take_input(void *args, const char *value)
{
    return add_named(&((evidence_args *)args)->inputs, value, "--input");
}

static int take_expect(void *args, const char *value)
{
    return add_named(&((evidence_args *)args)->expected, value, "--expect");
}

static int take_atol(void *args, const char *value)
{
    return parse_number(value, "--atol", &((evidence_args *)args)->rule.atol);
}

static int take_rtol(void *args, const char *value)
{
    return parse_number(value, "--rtol", &((evidence_args *)args)->rule.rtol);
}

static int take_exact(void *args, const char *value)
{
    (void)value;
    ((evidence_args *)args)->rule.kind = KILN_COMPARE_EXACT;
    return CLI_OK;
}

static int take_nan_unequal(void *args, const char *value)
{
    (void)value;
    ((evidence_args *)args)->rule.nan_equal = false;
    return CLI_OK;
}

static const cli_option evidence_option_list[] = {
    {.name = "--name", .arity = CLI_VALUE, .offset = offsetof(evidence_args, name)},
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--expect", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_expect},
    {.name = "--atol", .arity = CLI_VALUE, .handle = take_atol},
    {.name = "--rtol", .arity = CLI_VALUE, .handle = take_rtol},
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .offset = offsetof(evidence_args, out_path)},
    {.name = "--exact", .arity = CLI_FLAG, .handle = take_exact},
    {.name = "--nan-unequal", .arity = CLI_FLAG, .handle = take_nan_unequal},
    {.name = "--force", .arity = CLI_FLAG, .offset = offsetof(evidence_args, force)},
    {.name = "--method", .arity = CLI_VALUE, .offset = offsetof(evidence_args, method)},
};

static const cli_options evidence_options = CLI_OPTIONS("evidence", evidence_option_list, 1);

/* The rule as the comparison applies it (integer outputs are exact). */
static void describe_rule(const kiln_compare_rule *rule, const kiln_tensor *expected, char *text, size_t size)
{
    kiln_dtype dtype = kiln_tensor_dtype(expected);
    bool floating = dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
    if (rule->kind == KILN_COMPARE_EXACT || !floating)
        snprintf(text, size, "exact");
    else
        snprintf(text, size, "atol %g + rtol %g%s", rule->atol, rule->rtol, rule->nan_equal ? "" : ", NaN unequal");
}

/* A case sealed by --force although it fails here: one warning per failing
 * output, with the figures the refusal would have given. */
static void warn_forced(const char *name, const named_files *expected, const kiln_evidence_result *results)
{
    for (int o = 0; o < expected->count; o++) {
        const kiln_evidence_result *r = &results[o];
        if (r->passed)
            continue;
        char rule[96];
        describe_rule(&r->rule, expected->tensors[o], rule, sizeof rule);
        cli_warning("sealed because of --force: evidence '%s' does not hold on this runtime: output '%s': %llu of "
                    "%llu elements outside %s (max abs error %.3g, max rel error %.3g); kiln verify will fail it here",
                    name, expected->names[o], (unsigned long long)r->mismatches, (unsigned long long)r->elements, rule,
                    r->max_abs_error, r->max_rel_error);
    }
}

static int add_case(const char *path, const evidence_args *args, const kiln_compare_rule *rules)
{
    const named_files *inputs = &args->inputs, *expected = &args->expected;
    kiln_evidence_result *results = calloc((size_t)expected->count, sizeof *results);
    if (!results)
        return cli_error("out of memory");
    kiln_signature_info removed;
    kiln_error err;
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
    const kiln_evidence_case evidence = {
        .name = args->name,
        .input_count = (uint32_t)inputs->count,
        .input_names = (const char *const *)inputs->names,
        .inputs = (const kiln_tensor *const *)inputs->tensors,
        .output_count = (uint32_t)expected->count,
        .output_names = (const char *const *)expected->names,
        .expected = (const kiln_tensor *const *)expected->tensors,
        .rules = rules,
    };
    kiln_status status = kiln_artifact_add_evidence(path, args->out_path, &evidence, &edit, results, &removed, &err);
    cli_progress_finish(&progress);
    if (status != KILN_OK) {
        rc = cli_load_error(path, &err);
    } else {
        warn_forced(args->name, expected, results);
        cli_warn_signature_removed(&removed);
        if (!cli_quiet)
            term_printf(stdout, "added evidence '%s' to %s\n", args->name, args->out_path ? args->out_path : path);
    }
    free(results);
    return rc;
}

static int cmd_evidence(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "add") != 0)
        return cli_usage_error("evidence", "expected 'kiln evidence add FILE ...'");
    evidence_args args = {.rule = {KILN_COMPARE_TOLERANCE, 1e-6, 1e-5, true}};
    named_files *inputs = &args.inputs, *expected = &args.expected;
    const char *path = NULL;
    int operands;
    int rc = allocate(inputs, argc) && allocate(expected, argc) ? CLI_OK : cli_error("out of memory");
    /* "add" stands where the parser expects the verb. */
    if (rc == CLI_OK)
        rc = cli_parse_options(&evidence_options, argc - 1, argv + 1, &args, &path, &operands);
    if (rc == CLI_OK && (!path || !args.name || !expected->count))
        rc = cli_usage_error("evidence", "FILE, --name and at least one --expect are required");
    kiln_compare_rule rule = args.rule;
    kiln_compare_rule *rules = calloc((size_t)argc, sizeof *rules);
    if (rc == CLI_OK && !rules)
        rc = cli_error("out of memory");
    for (int i = 0; rc == CLI_OK && i < expected->count; i++)
        rules[i] = rule;
    if (rc == CLI_OK)
        rc = read_all(inputs);
    if (rc == CLI_OK)
        rc = read_all(expected);
    if (rc == CLI_OK)
        rc = add_case(path, &args, rules);
    free(rules);
    release(inputs);
    release(expected);
    return rc;
}
