/* cmd_run.c — `kiln run FILE --input NAME=PATH.npy ...`: guard, run, write outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "session_args.h"
#include "term.h"

static int cmd_run(int argc, char **argv);

const cli_verb cli_verb_run = {
    "run",
    "check inputs against the contract, run, and write outputs as .npy",
    "usage: kiln run FILE --input NAME=PATH.npy ... [--output-dir DIR]\n"
    "                [--dim NAME=MIN..MAX]... [--max-arena SIZE]\n\n"
    "Load and verify FILE, read each input from a .npy file, check every input\n"
    "against the declared contract (dtype, rank, each axis against its dim) and\n"
    "its semantic checks, run the program, and print each output's name, dtype\n"
    "and shape. The session's arena is planned for the upper bound of its dims:\n"
    "the artifact's whole domain, or the narrowing --dim asks for.\n\n"
    "options:\n"
    "  --input NAME=PATH    bind input NAME to the array in PATH (repeatable)\n"
    "  --output-dir DIR     also write each output to DIR/NAME.npy (DIR is created)\n"
    SESSION_ARGS_USAGE,
    cmd_run,
};

typedef struct run_args {
    const char *path;
    const char *output_dir;
    int input_count;
    const char **input_names;
    const char **input_paths;
    session_args session;
} run_args;

/* --input NAME=PATH: each input once. */
static int take_input(void *target, const char *value)
{
    run_args *args = target;
    const char *equals = strchr(value, '=');
    if (!equals || equals == value || equals[1] == '\0')
        return cli_usage_error("run", "--input takes NAME=PATH.npy, got '%s'", value);
    for (int k = 0; k < args->input_count; k++)
        if (strncmp(args->input_names[k], value, (size_t)(equals - value)) == 0 &&
            args->input_names[k][equals - value] == '\0')
            return cli_usage_error("run", "input '%.*s' is given twice", (int)(equals - value), value);
    char *name = strndup(value, (size_t)(equals - value));
    if (!name)
        return cli_error("out of memory");
    args->input_names[args->input_count] = name;
    args->input_paths[args->input_count++] = equals + 1;
    return CLI_OK;
}

static int take_dim(void *target, const char *value)
{
    return session_args_take_dim(&((run_args *)target)->session, value);
}

static int take_max_arena(void *target, const char *value)
{
    return session_args_take_max_arena(&((run_args *)target)->session, value);
}

static const cli_option run_option_list[] = {
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--output-dir", .arity = CLI_VALUE, .offset = offsetof(run_args, output_dir)},
    {.name = "--dim", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_dim},
    {.name = "--max-arena", .arity = CLI_VALUE, .handle = take_max_arena},
};

static const cli_options run_options = CLI_OPTIONS("run", run_option_list, 1);

/* The inputs are at most one per word of the command line. */
static int parse_args(int argc, char **argv, run_args *args)
{
    int operands;
    memset(args, 0, sizeof *args);
    args->session.verb = "run";
    args->input_names = calloc((size_t)argc, sizeof *args->input_names);
    args->input_paths = calloc((size_t)argc, sizeof *args->input_paths);
    if (!args->input_names || !args->input_paths)
        return cli_error("out of memory");
    int rc = cli_parse_options(&run_options, argc, argv, args, &args->path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!args->path)
        return cli_usage_error("run", "missing FILE");
    return CLI_OK;
}

static void free_args(run_args *args)
{
    for (int k = 0; k < args->input_count; k++)
        free((char *)args->input_names[k]);
    free(args->input_names);
    free(args->input_paths);
    session_args_release(&args->session);
}

static int write_outputs(const kiln_session *session, const char *dir)
{
    if (dir && cli_make_directory(dir) != CLI_OK)
        return CLI_FAILED;
    for (uint32_t i = 0; i < kiln_session_output_count(session); i++) {
        const kiln_tensor *out = kiln_session_output(session, i);
        const char *name = kiln_session_output_name(session, i);
        char shape[128];
        kiln_tensor_format_shape(out, shape, sizeof shape);
        if (!cli_quiet)
            term_printf(stdout, "%s: %s %s\n", name, kiln_dtype_name(kiln_tensor_dtype(out)), shape);
        if (!dir)
            continue;
        size_t length = strlen(dir) + strlen(name) + 6;
        char *path = malloc(length);
        if (!path)
            return cli_error("out of memory");
        snprintf(path, length, "%s/%s.npy", dir, name);
        kiln_error err;
        kiln_status status = kiln_npy_write_file(path, out, &err);
        free(path);
        if (status != KILN_OK)
            return cli_error("%s", err.message);
    }
    return CLI_OK;
}

static int cmd_run(int argc, char **argv)
{
    run_args args;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_tensor **tensors = NULL;
    kiln_error err;
    int rc = parse_args(argc, argv, &args);
    if (rc != CLI_OK)
        goto done;
    if (kiln_program_load(args.path, NULL, &program, &err) != KILN_OK) {
        rc = cli_error("%s: %s", args.path, err.message);
        goto done;
    }
    kiln_session_options options;
    kiln_session_options_default(&options);
    session_args_apply(&args.session, &options);
    if ((rc = session_args_new_session(&args.session, program, &options, &session)) != CLI_OK)
        goto done;
    tensors = calloc((size_t)args.input_count + 1, sizeof *tensors);
    if (!tensors) {
        rc = cli_error("out of memory");
        goto done;
    }
    for (int k = 0; k < args.input_count; k++) {
        if (kiln_npy_read_file(args.input_paths[k], &tensors[k], &err) != KILN_OK ||
            kiln_session_set_input(session, args.input_names[k], tensors[k], &err) != KILN_OK) {
            rc = cli_error("%s", err.message);
            goto done;
        }
    }
    if (kiln_session_run(session, &err) != KILN_OK) {
        rc = cli_error("%s", err.message);
        goto done;
    }
    rc = write_outputs(session, args.output_dir);
done:
    if (tensors)
        for (int k = 0; k < args.input_count; k++)
            kiln_tensor_free(tensors[k]);
    free(tensors);
    kiln_session_free(session);
    kiln_program_free(program);
    free_args(&args);
    return rc;
}
