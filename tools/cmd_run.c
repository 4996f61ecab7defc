/*
 * cmd_run.c — `kiln run FILE --input NAME=PATH.npy ... [--random]
 * [--output-dir DIR] [--summary] [--threads N]`: guard, run, write outputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "sample_inputs.h"
#include "load_args.h"
#include "session_args.h"
#include "term.h"
#include "value_summary.h"

/* The most threads --threads takes: bench's bound, far above any machine's
 * useful count, low enough that a typo is caught. */
#define MAX_THREADS 1024

static int cmd_run(int argc, char **argv);

const cli_verb cli_verb_run = {
    "run",
    "check inputs against the contract, run, and write outputs as .npy",
    "usage: kiln run FILE [--input NAME=PATH.npy]... [--random] [--output-dir DIR]\n"
    "                [--summary] [--threads N] [--dim NAME=MIN..MAX]... [--max-arena SIZE]\n"
    "                [--method NAME] [--verify full|lazy|none]\n\n"
    "Load and verify FILE, read each input from a .npy file, check every input\n"
    "against the declared contract (dtype, rank, each axis against its dim) and\n"
    "its semantic checks, run the program, and print each output's name, dtype\n"
    "and shape (and where it was written). The session's arena is planned for\n"
    "the upper bound of its dims: the artifact's whole domain, or the narrowing\n"
    "--dim asks for.\n\n"
    "options:\n"
    "  --input NAME=PATH    bind input NAME to the array in PATH (repeatable)\n"
    "  --random             generate every input not given by --input: the same\n"
    "                       pseudo-random values each time, inside the input's\n"
    "                       semantic checks, at the smallest size of each dim (the\n"
    "                       --dim minimum if given; a dim a given input's axis names\n"
    "                       takes that axis's size); printed as 'input NAME: random\n"
    "                       DTYPE SHAPE at DIM=N, ...'\n"
    "  --output-dir DIR     also write each output to DIR/NAME.npy (DIR and its\n"
    "                       parents are created)\n"
    "  --summary            after each output, a summary of its values: the first\n"
    "                       few, min, max, and for floats the mean of the finite\n"
    "                       values and the count of NaN and infinite ones\n"
    "  --threads N          exactly N threads per run, 1..1024 (default: every core,\n"
    "                       fewer while other processes hold cores)\n"
    SESSION_ARGS_USAGE
    LOAD_ARGS_METHOD_USAGE
    LOAD_ARGS_USAGE,
    cmd_run,
};

typedef struct run_args {
    const char *path;
    const char *output_dir;
    int input_count;
    char **input_names; /* allocated */
    const char **input_paths;
    bool random;
    bool summary;
    uint32_t threads; /* 0: the runtime default */
    session_args session;
    load_args load;
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

static int take_threads(void *target, const char *value)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (end == value || *end || errno || n < 1 || n > MAX_THREADS)
        return cli_usage_error("run", "--threads takes a whole number in 1..%d, got '%s'", MAX_THREADS, value);
    ((run_args *)target)->threads = (uint32_t)n;
    return CLI_OK;
}

static int take_verify(void *target, const char *value)
{
    return load_args_take_verify(&((run_args *)target)->load, value);
}

static int take_method(void *target, const char *value)
{
    return load_args_take_method(&((run_args *)target)->load, value);
}

static const cli_option run_option_list[] = {
    {.name = "--verify", .arity = CLI_VALUE, .handle = take_verify},
    {.name = "--method", .arity = CLI_VALUE, .handle = take_method},
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--output-dir", .arity = CLI_VALUE, .offset = offsetof(run_args, output_dir)},
    {.name = "--random", .arity = CLI_FLAG, .offset = offsetof(run_args, random)},
    {.name = "--summary", .arity = CLI_FLAG, .offset = offsetof(run_args, summary)},
    {.name = "--threads", .arity = CLI_VALUE, .handle = take_threads},
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
    args->load.verb = "run";
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
        free(args->input_names[k]);
    free(args->input_names);
    free(args->input_paths);
    session_args_release(&args->session);
}

/* The --input given for program input `name`, or -1. */
static int given_input(const run_args *args, const char *name)
{
    for (int k = 0; k < args->input_count; k++)
        if (strcmp(args->input_names[k], name) == 0)
            return k;
    return -1;
}

/*
 * The size of every dim for generated inputs: the --dim minimum where the
 * session is narrowed, else the size a given input's axis binds where that
 * axis is the dim itself (so generated inputs agree with given ones), else
 * the dim's smallest size: the cheapest run the contract allows.
 */
static void choose_dims(const kiln_program *program, const run_args *args, kiln_tensor *const *given,
                        int64_t *values)
{
    for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        bool chosen = false;
        for (uint32_t k = 0; k < args->session.dim_count; k++)
            if (strcmp(dim.name, args->session.dims[k].name) == 0) {
                dim.min = args->session.dims[k].min;
                dim.max = args->session.dims[k].max;
            }
        for (uint32_t i = 0; i < kiln_program_input_count(program) && !chosen; i++) {
            kiln_io_info io;
            kiln_program_input(program, i, &io);
            int k = given_input(args, io.name);
            for (uint32_t axis = 0; k >= 0 && axis < io.rank && !chosen; axis++) {
                char text[256];
                int length = kiln_program_input_axis_text(program, i, axis, text, sizeof text);
                if (length > 0 && (size_t)length < sizeof text && strcmp(text, dim.name) == 0 &&
                    axis < kiln_tensor_rank(given[k])) {
                    values[d] = kiln_tensor_shape(given[k])[axis];
                    chosen = true;
                }
            }
        }
        if (!chosen)
            values[d] = sample_dim_first(&dim);
    }
}

/* "batch=2, seq=4" for the dims' chosen values ("" without dims). */
static void format_dims(const kiln_program *program, const int64_t *values, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t d = 0; d < kiln_program_dim_count(program) && used < size; d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        int n = snprintf(text + used, size - used, "%s%s=%lld", d ? ", " : "", dim.name, (long long)values[d]);
        used = n < 0 ? size : used + (size_t)n;
    }
}

/* Make input `index` (not given) at the chosen dims, fill it with values
 * its checks accept, and say so. */
static int generate_input(const kiln_program *program, uint32_t index, const int64_t *dim_values,
                          const char *dims_text, uint64_t *random_state, kiln_tensor **out)
{
    kiln_io_info io;
    kiln_error err;
    int64_t shape[KILN_MAX_RANK];
    kiln_program_input(program, index, &io);
    if (kiln_program_input_shape_at(program, index, dim_values, shape, &err) != KILN_OK ||
        kiln_tensor_new(io.dtype, io.rank, shape, out, &err) != KILN_OK)
        return cli_error("input '%s': %s", io.name, err.message);
    sample_fill_input(program, index, *out, random_state);
    if (!cli_quiet) {
        char shape_text[128];
        kiln_tensor_format_shape(*out, shape_text, sizeof shape_text);
        term_printf(stdout, "input %s: random %s %s%s%s\n", io.name, kiln_dtype_name(io.dtype), shape_text,
                    dims_text[0] ? " at " : "", dims_text);
    }
    return CLI_OK;
}

/*
 * Read every --input and bind it; with --random, generate and bind every
 * input not given. given[k] is --input k's tensor, generated[i] program
 * input i's if it was made here. Without --random a missing input is left
 * for kiln_session_run to name.
 */
static int bind_inputs(const kiln_program *program, kiln_session *session, const run_args *args,
                       kiln_tensor **given, kiln_tensor **generated)
{
    kiln_error err;
    for (int k = 0; k < args->input_count; k++)
        if (kiln_npy_read_file(args->input_paths[k], &given[k], &err) != KILN_OK ||
            kiln_session_set_input(session, args->input_names[k], given[k], &err) != KILN_OK)
            return cli_error("%s", err.message);
    if (!args->random)
        return CLI_OK;
    uint32_t dim_count = kiln_program_dim_count(program);
    int64_t *dim_values = calloc((size_t)dim_count + 1, sizeof *dim_values);
    char dims_text[512];
    if (!dim_values)
        return cli_error("out of memory");
    choose_dims(program, args, given, dim_values);
    format_dims(program, dim_values, dims_text, sizeof dims_text);
    uint64_t random_state = 1; /* fixed: the same inputs on every run */
    int rc = CLI_OK;
    for (uint32_t i = 0; rc == CLI_OK && i < kiln_program_input_count(program); i++) {
        kiln_io_info io;
        kiln_program_input(program, i, &io);
        if (given_input(args, io.name) >= 0)
            continue;
        rc = generate_input(program, i, dim_values, dims_text, &random_state, &generated[i]);
        if (rc == CLI_OK && kiln_session_set_input(session, io.name, generated[i], &err) != KILN_OK)
            rc = cli_error("%s", err.message);
    }
    free(dim_values);
    return rc;
}

/* DIR/NAME.npy, without doubling a separator DIR already ends with. */
static char *output_path(const char *dir, const char *name)
{
    size_t dir_length = strlen(dir);
    const char *separator = dir_length && dir[dir_length - 1] == '/' ? "" : "/";
    size_t length = dir_length + strlen(name) + 6;
    char *path = malloc(length);
    if (path)
        snprintf(path, length, "%s%s%s.npy", dir, separator, name);
    return path;
}

/* Write one output (when dir is set), then say what it is and where it went. */
static int report_output(const kiln_session *session, uint32_t index, const run_args *args)
{
    const kiln_tensor *out = kiln_session_output(session, index);
    const char *name = kiln_session_output_name(session, index);
    char *path = NULL;
    if (args->output_dir) {
        kiln_error err;
        if (!(path = output_path(args->output_dir, name)))
            return cli_error("out of memory");
        if (kiln_npy_write_file(path, out, &err) != KILN_OK) {
            free(path);
            return cli_error("%s", err.message);
        }
    }
    if (!cli_quiet) {
        char shape[128];
        kiln_tensor_format_shape(out, shape, sizeof shape);
        term_printf(stdout, "%s: %s %s%s%s\n", name, kiln_dtype_name(kiln_tensor_dtype(out)), shape,
                    path ? " -> " : "", path ? path : "");
        if (args->summary) {
            char summary[512];
            value_summary_format(out, summary, sizeof summary);
            term_printf(stdout, "  %s\n", summary);
        }
    }
    free(path);
    return CLI_OK;
}

static int report_outputs(const kiln_session *session, const run_args *args)
{
    for (uint32_t i = 0; i < kiln_session_output_count(session); i++) {
        int rc = report_output(session, i, args);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

static int cmd_run(int argc, char **argv)
{
    run_args args;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_tensor **given = NULL, **generated = NULL;
    uint32_t input_count = 0;
    kiln_error err;
    int rc = parse_args(argc, argv, &args);
    if (rc != CLI_OK)
        goto done;
    const kiln_program *method = NULL;
    if ((rc = load_args_load(&args.load, args.path, &program)) != CLI_OK ||
        (rc = load_args_method(&args.load, program, &method)) != CLI_OK)
        goto done;
    kiln_session_options options;
    kiln_session_options_default(&options);
    session_args_apply(&args.session, &options);
    options.threads = args.threads;
    /* Threads asked for are used; by default, fewer while other processes hold cores. */
    options.thread_policy = args.threads ? KILN_THREADS_FIXED : KILN_THREADS_ADAPTIVE;
    if ((rc = session_args_new_session(&args.session, method, &options, &session)) != CLI_OK)
        goto done;
    input_count = kiln_program_input_count(method);
    given = calloc((size_t)args.input_count + 1, sizeof *given);
    generated = calloc((size_t)input_count + 1, sizeof *generated);
    if (!given || !generated) {
        rc = cli_error("out of memory");
        goto done;
    }
    if ((rc = bind_inputs(method, session, &args, given, generated)) != CLI_OK)
        goto done;
    /* Before the run, which may be long: a DIR that cannot be made fails now. */
    if (args.output_dir && (rc = cli_make_directories(args.output_dir)) != CLI_OK)
        goto done;
    if (kiln_session_run(session, &err) != KILN_OK) {
        rc = cli_error("%s", err.message);
        goto done;
    }
    rc = report_outputs(session, &args);
done:
    for (int k = 0; given && k < args.input_count; k++)
        kiln_tensor_free(given[k]);
    for (uint32_t i = 0; generated && i < input_count; i++)
        kiln_tensor_free(generated[i]);
    free(given);
    free(generated);
    kiln_session_free(session);
    kiln_program_free(program);
    free_args(&args);
    return rc;
}
