/*
 * cmd_evidence.c — `kiln evidence add FILE --name N --input x=a.npy ...
 * --expect y=b.npy ... [--atol A] [--rtol R] [--exact] [-o OUT]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int cmd_evidence(int argc, char **argv);

const cli_verb cli_verb_evidence = {
    "evidence",
    "embed a known-input case that kiln verify replays",
    "usage: kiln evidence add FILE --name NAME --input NAME=PATH.npy ... --expect NAME=PATH.npy ...\n"
    "                         [--atol A] [--rtol R] [--exact] [--nan-unequal] [-o OUT]\n\n"
    "Add a named evidence case to FILE: every input of the program, and the\n"
    "outputs it must produce. 'kiln verify' replays each case on the runtime at\n"
    "hand and fails if an output falls outside its rule. The case must run\n"
    "here when added. FILE is replaced atomically unless -o is given; a\n"
    "signature is dropped (the digest changes), so sign again afterwards.\n\n"
    "options:\n"
    "  --name NAME          the case's name (unique within the artifact)\n"
    "  --input NAME=PATH    an input of the case (repeat for every input)\n"
    "  --expect NAME=PATH   an expected output (repeatable)\n"
    "  --atol A, --rtol R   tolerance for float outputs: |a - e| <= A + R*|e|\n"
    "                       (defaults 1e-6 and 1e-5; integer outputs are exact)\n"
    "  --exact              require equal values instead\n"
    "  --nan-unequal        a NaN never matches (default: NaN matches NaN)\n"
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

static int cmd_evidence(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "add") != 0)
        return cli_usage_error("evidence", "expected 'kiln evidence add FILE ...'");
    const char *path = NULL, *name = NULL, *out_path = NULL;
    kiln_compare_rule rule = {KILN_COMPARE_TOLERANCE, 1e-6, 1e-5, true};
    named_files inputs, expected;
    int rc = allocate(&inputs, argc) && allocate(&expected, argc) ? CLI_OK : cli_error("out of memory");
    for (int i = 2; i < argc && rc == CLI_OK; i++) {
        const char *value;
        int taken;
        if ((taken = cli_take_value("evidence", argc, argv, &i, "--name", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : (name = value, CLI_OK);
        else if ((taken = cli_take_value("evidence", argc, argv, &i, "--input", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : add_named(&inputs, value, "--input");
        else if ((taken = cli_take_value("evidence", argc, argv, &i, "--expect", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : add_named(&expected, value, "--expect");
        else if ((taken = cli_take_value("evidence", argc, argv, &i, "--atol", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : parse_number(value, "--atol", &rule.atol);
        else if ((taken = cli_take_value("evidence", argc, argv, &i, "--rtol", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : parse_number(value, "--rtol", &rule.rtol);
        else if ((taken = cli_take_value("evidence", argc, argv, &i, "-o", &value)) != 0 ||
                 (taken = cli_take_value("evidence", argc, argv, &i, "--output", &value)) != 0)
            rc = taken < 0 ? CLI_USAGE : (out_path = value, CLI_OK);
        else if (strcmp(argv[i], "--exact") == 0)
            rule.kind = KILN_COMPARE_EXACT;
        else if (strcmp(argv[i], "--nan-unequal") == 0)
            rule.nan_equal = false;
        else if (argv[i][0] == '-' && argv[i][1])
            rc = cli_usage_error("evidence", "unknown option '%s'", argv[i]);
        else if (path)
            rc = cli_usage_error("evidence", "unexpected argument '%s'", argv[i]);
        else
            path = argv[i];
    }
    if (rc == CLI_OK && (!path || !name || !expected.count))
        rc = cli_usage_error("evidence", "FILE, --name and at least one --expect are required");
    kiln_compare_rule *rules = calloc((size_t)argc, sizeof *rules);
    if (rc == CLI_OK && !rules)
        rc = cli_error("out of memory");
    for (int i = 0; rc == CLI_OK && i < expected.count; i++)
        rules[i] = rule;
    if (rc == CLI_OK)
        rc = read_all(&inputs);
    if (rc == CLI_OK)
        rc = read_all(&expected);
    if (rc == CLI_OK) {
        kiln_error err;
        if (kiln_artifact_add_evidence(path, out_path, name, (uint32_t)inputs.count,
                                       (const char *const *)inputs.names, (const kiln_tensor *const *)inputs.tensors,
                                       (uint32_t)expected.count, (const char *const *)expected.names,
                                       (const kiln_tensor *const *)expected.tensors, rules, &err) != KILN_OK)
            rc = cli_error("%s: %s", path, err.message);
        else if (!cli_quiet)
            printf("added evidence '%s' to %s\n", name, out_path ? out_path : path);
    }
    free(rules);
    release(&inputs);
    release(&expected);
    return rc;
}
