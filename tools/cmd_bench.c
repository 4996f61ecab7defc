/*
 * cmd_bench.c — `kiln bench FILE`: run a program repeatedly and report its
 * latency (min and median), throughput, arena bytes and peak RSS.
 *
 * Inputs come from .npy files or, for every input not given, are made up
 * inside the contract (sample_inputs.h) at the upper bound of the
 * session's dims: the artifact's largest sizes, or those of the narrowing
 * --dim asks for, so a bench measures the worst case its session allows. Each run is timed on its own
 * (CLOCK_MONOTONIC) around kiln_session_run only: binding inputs is not
 * part of it, and the warm-up runs build whatever a fast path keeps.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "options.h"
#include "json.h"
#include "sample_inputs.h"
#include "session_args.h"
#include "term.h"

static int cmd_bench(int argc, char **argv);

const cli_verb cli_verb_bench = {
    "bench",
    "measure latency, throughput and memory of running a program",
    "usage: kiln bench FILE [--input NAME=PATH.npy]... [--dim NAME=MIN..MAX]...\n"
    "                  [--max-arena SIZE] [--threads N] [--runs N] [--warmup N]\n"
    "                  [--reference] [--json]\n\n"
    "Load FILE, bind its inputs, run it --warmup times untimed, then --runs\n"
    "times, timing each run, and print the minimum and median latency, the\n"
    "throughput (runs per second of the timed runs), the session arena's\n"
    "size and the process's peak resident memory. Inputs not given with\n"
    "--input are random values inside the contract (respecting each input's\n"
    "range, finiteness and categories) at the upper bound of the session's\n"
    "dims: each dim's largest value, or the largest --dim allows (--dim\n"
    "NAME=N runs at N).\n\n"
    "options:\n"
    "  --input NAME=PATH    bind input NAME to the array in PATH (repeatable)\n"
    SESSION_ARGS_USAGE
    "  --threads N          threads per run (default: the runtime default)\n"
    "  --runs N             timed runs (default 100)\n"
    "  --warmup N           untimed runs first (default 5)\n"
    "  --reference          run the portable reference kernels only (no oneDNN)\n"
    "  --json               print one JSON object instead of text\n",
    cmd_bench,
};

/* Bounds of the counts: enough for any real measurement, small enough that
 * the per-run times always fit in memory. */
enum { MAX_RUNS = 100000000, MAX_THREADS = 1024 };

typedef struct bench_args {
    const char *path;
    int input_count;
    const char **input_names, **input_paths;
    session_args session;
    uint32_t threads;
    long runs, warmup;
    bool reference, json;
} bench_args;

/* Parse a count in min..max for option `name`. @return CLI_OK or CLI_USAGE. */
static int parse_count(const char *name, const char *value, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (end == value || *end || errno || n < min || n > max)
        return cli_usage_error("bench", "%s takes a whole number in %ld..%ld, got '%s'", name, min, max, value);
    *out = n;
    return CLI_OK;
}

/* Split NAME=VALUE of option `option`; `name` is allocated. */
static int split_pair(const char *option, const char *value, const char *form, char **name, const char **rest)
{
    const char *equals = strchr(value, '=');
    if (!equals || equals == value || equals[1] == '\0')
        return cli_usage_error("bench", "%s takes %s, got '%s'", option, form, value);
    *name = strndup(value, (size_t)(equals - value));
    if (!*name)
        return cli_error("out of memory");
    *rest = equals + 1;
    return CLI_OK;
}

static bool listed(const char **names, int count, const char *name)
{
    for (int k = 0; k < count; k++)
        if (strcmp(names[k], name) == 0)
            return true;
    return false;
}

/* --input NAME=PATH: each input once. */
static int take_input(void *target, const char *value)
{
    bench_args *args = target;
    char *name;
    int rc = split_pair("--input", value, "NAME=PATH.npy", &name, &value);
    if (rc != CLI_OK)
        return rc;
    args->input_names[args->input_count] = name;
    args->input_paths[args->input_count++] = value;
    if (listed(args->input_names, args->input_count - 1, name))
        return cli_usage_error("bench", "input '%s' is given twice", name);
    return CLI_OK;
}

static int take_dim(void *target, const char *value)
{
    return session_args_take_dim(&((bench_args *)target)->session, value);
}

static int take_max_arena(void *target, const char *value)
{
    return session_args_take_max_arena(&((bench_args *)target)->session, value);
}

static int take_threads(void *target, const char *value)
{
    long n;
    int rc = parse_count("--threads", value, 1, MAX_THREADS, &n);
    if (rc == CLI_OK)
        ((bench_args *)target)->threads = (uint32_t)n;
    return rc;
}

static int take_runs(void *target, const char *value)
{
    return parse_count("--runs", value, 1, MAX_RUNS, &((bench_args *)target)->runs);
}

static int take_warmup(void *target, const char *value)
{
    return parse_count("--warmup", value, 0, MAX_RUNS, &((bench_args *)target)->warmup);
}

static const cli_option bench_option_list[] = {
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--dim", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_dim},
    {.name = "--max-arena", .arity = CLI_VALUE, .handle = take_max_arena},
    {.name = "--threads", .arity = CLI_VALUE, .handle = take_threads},
    {.name = "--runs", .arity = CLI_VALUE, .handle = take_runs},
    {.name = "--warmup", .arity = CLI_VALUE, .handle = take_warmup},
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(bench_args, json)},
    {.name = "--reference", .arity = CLI_FLAG, .offset = offsetof(bench_args, reference)},
};

static const cli_options bench_options = CLI_OPTIONS("bench", bench_option_list, 1);

/* The inputs and dims are at most one per word of the command line. */
static int parse_args(int argc, char **argv, bench_args *args)
{
    int operands;
    memset(args, 0, sizeof *args);
    args->runs = 100;
    args->warmup = 5;
    args->input_names = calloc((size_t)argc, sizeof *args->input_names);
    args->input_paths = calloc((size_t)argc, sizeof *args->input_paths);
    args->session.verb = "bench";
    if (!args->input_names || !args->input_paths)
        return cli_error("out of memory");
    int rc = cli_parse_options(&bench_options, argc, argv, args, &args->path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!args->path)
        return cli_usage_error("bench", "missing FILE");
    return CLI_OK;
}

static void free_args(bench_args *args)
{
    for (int k = 0; k < args->input_count; k++)
        free((char *)args->input_names[k]);
    free(args->input_names);
    free(args->input_paths);
    session_args_release(&args->session);
}

/*
 * The value of every dim for generated inputs: the largest the session
 * allows (its --dim maximum, else the artifact's), honouring multiple_of.
 * The session has checked the narrowing, so some value fits.
 */
static void choose_dims(const kiln_program *program, const bench_args *args, int64_t *values)
{
    for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        for (uint32_t k = 0; k < args->session.dim_count; k++)
            if (strcmp(dim.name, args->session.dims[k].name) == 0)
                dim.max = args->session.dims[k].max;
        values[d] = sample_dim_last(&dim);
    }
}

/* Read or make every input and bind it. tensors[i] is input i's. */
static int bind_inputs(const kiln_program *program, kiln_session *session, const bench_args *args,
                       const int64_t *dim_values, kiln_tensor **tensors, bool *generated)
{
    kiln_error err;
    uint32_t count = kiln_program_input_count(program);
    for (int k = 0; k < args->input_count; k++) {
        bool found = false;
        for (uint32_t i = 0; i < count && !found; i++) {
            kiln_io_info io;
            kiln_program_input(program, i, &io);
            if (strcmp(io.name, args->input_names[k]) != 0)
                continue;
            found = true;
            if (kiln_npy_read_file(args->input_paths[k], &tensors[i], &err) != KILN_OK)
                return cli_error("%s", err.message);
        }
        if (!found) {
            char known[512] = "";
            size_t used = 0;
            for (uint32_t i = 0; i < count && used < sizeof known; i++) {
                kiln_io_info io;
                kiln_program_input(program, i, &io);
                used += (size_t)snprintf(known + used, sizeof known - used, "%s'%s'", i ? ", " : "", io.name);
            }
            return cli_usage_error("bench", "--input: '%s' is not an input of %s (inputs: %s)",
                                   args->input_names[k], args->path, known);
        }
    }
    uint64_t random_state = 1;
    for (uint32_t i = 0; i < count; i++) {
        kiln_io_info io;
        kiln_program_input(program, i, &io);
        generated[i] = !tensors[i];
        if (!tensors[i]) {
            int64_t shape[KILN_MAX_RANK];
            if (kiln_program_input_shape_at(program, i, dim_values, shape, &err) != KILN_OK ||
                kiln_tensor_new(io.dtype, io.rank, shape, &tensors[i], &err) != KILN_OK)
                return cli_error("input '%s': %s", io.name, err.message);
            sample_fill_input(program, i, tensors[i], &random_state);
        }
        if (kiln_session_set_input(session, io.name, tensors[i], &err) != KILN_OK)
            return cli_error("%s", err.message);
    }
    return CLI_OK;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bench_result {
    double min_ms, median_ms, mean_ms, runs_per_second;
    uint64_t arena_bytes, peak_rss_bytes;
    uint32_t threads;
} bench_result;

/* Warm up, then time each run. */
static int measure(kiln_session *session, const bench_args *args, double *times)
{
    kiln_error err;
    for (long r = 0; r < args->warmup; r++)
        if (kiln_session_run(session, &err) != KILN_OK)
            return cli_error("%s", err.message);
    for (long r = 0; r < args->runs; r++) {
        double start = now_seconds();
        kiln_status status = kiln_session_run(session, &err);
        times[r] = now_seconds() - start;
        if (status != KILN_OK)
            return cli_error("%s", err.message);
    }
    return CLI_OK;
}

static void summarise(const bench_args *args, double *times, bench_result *result)
{
    double total = 0;
    for (long r = 0; r < args->runs; r++)
        total += times[r];
    qsort(times, (size_t)args->runs, sizeof *times, compare_doubles);
    long middle = args->runs / 2;
    double median = args->runs % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
    result->min_ms = times[0] * 1e3;
    result->median_ms = median * 1e3;
    result->mean_ms = total / (double)args->runs * 1e3;
    result->runs_per_second = total > 0 ? (double)args->runs / total : 0;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    result->peak_rss_bytes = (uint64_t)usage.ru_maxrss * 1024; /* Linux reports kB */
}

static void print_shape(FILE *out, const kiln_tensor *t)
{
    fputc('[', out);
    for (uint32_t a = 0; a < kiln_tensor_rank(t); a++)
        fprintf(out, "%s%lld", a ? ", " : "", (long long)kiln_tensor_shape(t)[a]);
    fputc(']', out);
}

/* Times to the microsecond (in ms) and rates to a thousandth: more digits
 * would only be noise of the clock. */
static void print_json(const kiln_program *program, const bench_args *args, const bench_result *r,
                       const int64_t *dim_values, kiln_tensor *const *tensors, const bool *generated)
{
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "file", args->path);
    json_member_int(&w, "runs", args->runs);
    json_member_int(&w, "warmup", args->warmup);
    json_member_uint(&w, "threads", r->threads);
    json_member_string(&w, "waits", kiln_thread_wait_policy());
    json_member_bool(&w, "reference_kernels", args->reference);
    json_key(&w, "min_ms");
    json_fixed(&w, r->min_ms, 6);
    json_key(&w, "median_ms");
    json_fixed(&w, r->median_ms, 6);
    json_key(&w, "mean_ms");
    json_fixed(&w, r->mean_ms, 6);
    json_key(&w, "runs_per_second");
    json_fixed(&w, r->runs_per_second, 3);
    json_member_uint(&w, "arena_bytes", r->arena_bytes);
    json_member_uint(&w, "peak_rss_bytes", r->peak_rss_bytes);
    json_key(&w, "dims");
    json_begin_object(&w);
    for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        json_member_int(&w, dim.name, dim_values[d]);
    }
    json_end_object(&w);
    json_key(&w, "inputs");
    json_begin_array(&w);
    for (uint32_t i = 0; i < kiln_program_input_count(program); i++) {
        kiln_io_info io;
        kiln_program_input(program, i, &io);
        json_begin_object(&w);
        json_member_string(&w, "name", io.name);
        json_member_string(&w, "dtype", kiln_dtype_name(io.dtype));
        json_key(&w, "shape");
        json_begin_array(&w);
        for (uint32_t a = 0; a < kiln_tensor_rank(tensors[i]); a++)
            json_int(&w, kiln_tensor_shape(tensors[i])[a]);
        json_end_array(&w);
        json_member_string(&w, "source", generated[i] ? "random" : "file");
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    json_finish(&w);
}

static void print_text(const kiln_program *program, const bench_args *args, const bench_result *r,
                       kiln_tensor *const *tensors, const bool *generated)
{
    term_printf(stdout, "bench: %s, %ld runs after %ld warm-up, %u thread%s (%s waits)%s\n", args->path, args->runs,
                args->warmup, r->threads, r->threads == 1 ? "" : "s", kiln_thread_wait_policy(),
                args->reference ? ", reference kernels" : "");
    for (uint32_t i = 0; i < kiln_program_input_count(program); i++) {
        kiln_io_info io;
        kiln_program_input(program, i, &io);
        term_printf(stdout, "input      %s: %s ", io.name, kiln_dtype_name(io.dtype));
        print_shape(stdout, tensors[i]);
        printf(" (%s)\n", generated[i] ? "random" : "file");
    }
    printf("latency    min %.6g ms, median %.6g ms\n", r->min_ms, r->median_ms);
    printf("throughput %.1f runs/s\n", r->runs_per_second);
    printf("arena      %llu bytes\n", (unsigned long long)r->arena_bytes);
    printf("peak RSS   %llu bytes\n", (unsigned long long)r->peak_rss_bytes);
}

static int cmd_bench(int argc, char **argv)
{
    bench_args args;
    kiln_program *program = NULL;
    kiln_session *session = NULL;
    kiln_tensor **tensors = NULL;
    bool *generated = NULL;
    int64_t *dim_values = NULL;
    double *times = NULL;
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
    options.threads = args.threads;
    options.reference_kernels = args.reference;
    session_args_apply(&args.session, &options);
    if ((rc = session_args_new_session(&args.session, program, &options, &session)) != CLI_OK)
        goto done;
    uint32_t inputs = kiln_program_input_count(program);
    tensors = calloc(inputs + 1, sizeof *tensors);
    generated = calloc(inputs + 1, sizeof *generated);
    dim_values = calloc(kiln_program_dim_count(program) + 1, sizeof *dim_values);
    times = calloc((size_t)args.runs, sizeof *times);
    if (!tensors || !generated || !dim_values || !times) {
        rc = cli_error("out of memory");
        goto done;
    }
    choose_dims(program, &args, dim_values);
    if ((rc = bind_inputs(program, session, &args, dim_values, tensors, generated)) != CLI_OK ||
        (rc = measure(session, &args, times)) != CLI_OK)
        goto done;
    bench_result result = {0};
    summarise(&args, times, &result);
    result.arena_bytes = kiln_session_arena_bytes(session);
    result.threads = kiln_session_threads(session);
    if (args.json)
        print_json(program, &args, &result, dim_values, tensors, generated);
    else
        print_text(program, &args, &result, tensors, generated);
done:
    if (tensors)
        for (uint32_t i = 0; i < kiln_program_input_count(program); i++)
            kiln_tensor_free(tensors[i]);
    free(tensors);
    free(generated);
    free(dim_values);
    free(times);
    kiln_session_free(session);
    kiln_program_free(program);
    free_args(&args);
    return rc;
}
