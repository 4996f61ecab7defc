/*
 * cmd_bench.c — `kiln bench FILE`: run a program repeatedly and report
 * what TFLite's benchmark_model and onnxruntime's perf_test report: load
 * and session times, the first (cold) run, then min, median, mean, p90,
 * p99, max and standard deviation of the timed runs, throughput, the
 * arena and this process's peak resident memory.
 *
 * Inputs come from .npy files or, for every input not given, are made up
 * inside the contract (sample_inputs.h) at the sizes bench_sizes.h
 * chooses: --dim's, else the first evidence case's, else each dim's
 * minimum. The session is narrowed to the sizes run, so the arena shown is
 * the one they need, except for dims given a range with --dim, which keep
 * it. Each run is timed on its own (CLOCK_MONOTONIC) around
 * kiln_session_run only: binding inputs is not part of it, and the
 * warm-up runs build whatever a fast path keeps.
 *
 * How many runs: --runs N alone runs N; --duration S alone runs as many
 * as start within S seconds (at most DURATION_RUN_CAP); both stop at
 * whichever comes first; neither is "100 runs or 10 s, whichever comes
 * first", so a slow program still answers in seconds. Warm-up likewise:
 * --warmup N runs N, the default is "5 runs or 1 s".
 *
 * --profile then runs the program again in a session that profiles
 * (kiln_session_options.profile): a warm-up as above, the same number of
 * runs as were timed, and the per-node report of bench_profile.h. The
 * timed runs stay unprofiled, so the latency figures are the program's;
 * the profiled runs' median is printed beside theirs, which shows what
 * profiling cost.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/util.h>

#include "bench_profile.h"
#include "bench_sizes.h"
#include "cli.h"
#include "json.h"
#include "latency_stats.h"
#include "options.h"
#include "peak_rss.h"
#include "progress_bar.h"
#include "sample_inputs.h"
#include "load_args.h"
#include "session_args.h"
#include "term.h"

static int cmd_bench(int argc, char **argv);

const cli_verb cli_verb_bench = {
    "bench",
    "measure latency, throughput and memory of running a program",
    "usage: kiln bench FILE [--input NAME=PATH.npy]... [--dim NAME=MIN..MAX]...\n"
    "                  [--max-arena SIZE] [--threads N] [--runs N] [--duration SECONDS]\n"
    "                  [--warmup N] [--reference] [--method NAME] [--verify full|lazy|none] [--json]\n"
    "                  [--profile [--profile-top N]]\n\n"
    "Load FILE, bind its inputs, run it untimed to warm up, then time each of\n"
    "many runs, and print the load and session times, the first (cold) run,\n"
    "the latency of the timed runs (min, median, mean, p90, p99, max, standard\n"
    "deviation), the throughput, the session arena and the process's peak\n"
    "resident memory. Inputs not given with --input are random values inside\n"
    "the contract (respecting each input's range, finiteness and categories)\n"
    "at small sizes: a dim named by --dim runs at the largest value it allows\n"
    "(--dim NAME=N runs at N), any other at the size of the first evidence case\n"
    "when the artifact has one with small inputs, else at its minimum. The\n"
    "session is narrowed to the sizes run, except for dims given a range.\n\n"
    "options:\n"
    "  --input NAME=PATH    bind input NAME to the array in PATH (repeatable)\n"
    SESSION_ARGS_USAGE
    LOAD_ARGS_METHOD_USAGE
    LOAD_ARGS_USAGE
    "  --threads N          exactly N threads per run (default: every core, fewer\n"
    "                       while other processes hold cores)\n"
    "  --runs N             timed runs (default: 100, or fewer if 10 s pass first)\n"
    "  --duration SECONDS   time runs until SECONDS have passed (at least one run;\n"
    "                       with --runs N, at most N)\n"
    "  --warmup N           untimed runs first (default: 5, or fewer if 1 s passes first)\n"
    "  --reference          run the portable reference kernels only (no oneDNN)\n"
    "  --profile            then profile as many runs again, per node: time, op, output\n"
    "                       shape and the path that ran it (reference, vector, onednn,\n"
    "                       view, fused), longest first, and per op; profiling slows a\n"
    "                       run a little, so the timed runs above are not profiled\n"
    "  --profile-top N      nodes the text shows (default 20; the JSON has them all)\n"
    "  --json               print one JSON object instead of text\n",
    cmd_bench,
};

/* Bounds of the counts: enough for any real measurement, small enough that
 * the per-run times always fit in memory. */
enum { MAX_RUNS = 100000000, MAX_THREADS = 1024 };

/* The nodes --profile shows in text unless --profile-top says otherwise. */
enum { DEFAULT_PROFILE_TOP = 20 };

/* The defaults the header comment explains. A --duration alone is capped
 * at a million runs (8 MB of times): a microsecond program still fills
 * seconds, and the percentiles are as good as they get. */
enum { DEFAULT_RUNS = 100, DEFAULT_WARMUP = 5, DURATION_RUN_CAP = 1000000 };
#define DEFAULT_DURATION_SECONDS 10.0
#define DEFAULT_WARMUP_SECONDS 1.0
/* A week: any longer --duration is a typo, not a bench. */
#define MAX_DURATION_SECONDS 604800.0

typedef struct bench_args {
    const char *path;
    int input_count;
    char **input_names; /* allocated */
    const char **input_paths;
    session_args session;
    load_args load;
    uint32_t threads;
    long runs, warmup;
    double duration;                  /* seconds; 0 when not given */
    bool runs_given, warmup_given;
    bool reference, json, profile;
    long profile_top;                 /* 0 when not given */
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

/* Whether `name` is one of the `count` names. */
static bool listed(char *const *names, int count, const char *name)
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

/* --dim NAME=MIN..MAX or NAME=N (session_args.h). */
static int take_dim(void *target, const char *value)
{
    return session_args_take_dim(&((bench_args *)target)->session, value);
}

/* --max-arena SIZE (session_args.h). */
static int take_max_arena(void *target, const char *value)
{
    return session_args_take_max_arena(&((bench_args *)target)->session, value);
}

/* --threads N, 1..MAX_THREADS. */
static int take_threads(void *target, const char *value)
{
    long n;
    int rc = parse_count("--threads", value, 1, MAX_THREADS, &n);
    if (rc == CLI_OK)
        ((bench_args *)target)->threads = (uint32_t)n;
    return rc;
}

/* --runs N, 1..MAX_RUNS. */
static int take_runs(void *target, const char *value)
{
    bench_args *args = target;
    args->runs_given = true;
    return parse_count("--runs", value, 1, MAX_RUNS, &args->runs);
}

/* --warmup N, 0..MAX_RUNS. */
static int take_warmup(void *target, const char *value)
{
    bench_args *args = target;
    args->warmup_given = true;
    return parse_count("--warmup", value, 0, MAX_RUNS, &args->warmup);
}

/* --duration SECONDS: a decimal number above 0, at most a week. */
static int take_duration(void *target, const char *value)
{
    char *end;
    errno = 0;
    double seconds = strtod(value, &end);
    if (end == value || *end || errno || !isfinite(seconds) || seconds <= 0 || seconds > MAX_DURATION_SECONDS)
        return cli_usage_error("bench", "--duration takes a number of seconds above 0 and at most %.0f (e.g. 0.5, "
                                        "30), got '%s'", MAX_DURATION_SECONDS, value);
    ((bench_args *)target)->duration = seconds;
    return CLI_OK;
}

/* --profile-top N, 1..UINT32_MAX. */
static int take_profile_top(void *target, const char *value)
{
    return parse_count("--profile-top", value, 1, UINT32_MAX, &((bench_args *)target)->profile_top);
}

static int take_verify(void *target, const char *value)
{
    return load_args_take_verify(&((bench_args *)target)->load, value);
}

static int take_method(void *target, const char *value)
{
    return load_args_take_method(&((bench_args *)target)->load, value);
}

static const cli_option bench_option_list[] = {
    {.name = "--verify", .arity = CLI_VALUE, .handle = take_verify},
    {.name = "--method", .arity = CLI_VALUE, .handle = take_method},
    {.name = "--input", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_input},
    {.name = "--dim", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_dim},
    {.name = "--max-arena", .arity = CLI_VALUE, .handle = take_max_arena},
    {.name = "--threads", .arity = CLI_VALUE, .handle = take_threads},
    {.name = "--runs", .arity = CLI_VALUE, .handle = take_runs},
    {.name = "--duration", .arity = CLI_VALUE, .handle = take_duration},
    {.name = "--warmup", .arity = CLI_VALUE, .handle = take_warmup},
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(bench_args, json)},
    {.name = "--reference", .arity = CLI_FLAG, .offset = offsetof(bench_args, reference)},
    {.name = "--profile", .arity = CLI_FLAG, .offset = offsetof(bench_args, profile)},
    {.name = "--profile-top", .arity = CLI_VALUE, .handle = take_profile_top},
};

static const cli_options bench_options = CLI_OPTIONS("bench", bench_option_list, 1);

/* Read the command line. The inputs and dims are at most one per word of it. */
static int parse_args(int argc, char **argv, bench_args *args)
{
    int operands;
    memset(args, 0, sizeof *args);
    args->runs = DEFAULT_RUNS;
    args->warmup = DEFAULT_WARMUP;
    args->input_names = calloc((size_t)argc, sizeof *args->input_names);
    args->input_paths = calloc((size_t)argc, sizeof *args->input_paths);
    args->session.verb = "bench";
    args->load.verb = "bench";
    if (!args->input_names || !args->input_paths)
        return cli_error("out of memory");
    int rc = cli_parse_options(&bench_options, argc, argv, args, &args->path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!args->path)
        return cli_usage_error("bench", "missing FILE");
    if (args->profile_top && !args->profile)
        return cli_usage_error("bench", "--profile-top N says how many nodes --profile shows: add --profile");
    return CLI_OK;
}

/* Free what parse_args allocated. */
static void free_args(bench_args *args)
{
    for (int k = 0; k < args->input_count; k++)
        free(args->input_names[k]);
    free(args->input_names);
    free(args->input_paths);
    session_args_release(&args->session);
}

/* Everything one bench holds, so one function frees it on every path. */
typedef struct bench_state {
    kiln_program *loaded;          /* the artifact's program, owned */
    const kiln_program *program;   /* the method benched (--method; default the first) */
    kiln_session *session;
    uint32_t input_count, dim_count;
    kiln_tensor **tensors;   /* per input */
    bool *generated;         /* per input: made up, not read from a file */
    const char **names;      /* per input, the program's names */
    int64_t *dim_values;     /* per dim: the size run */
    size_source *sources;    /* per dim: where that size came from */
    bool *bound;             /* per dim: some input binds it */
    kiln_dim_bound *narrowing;
    const char *evidence_case;
    double *times;           /* per timed run, seconds */
} bench_state;

/* Allocate the per-input and per-dim arrays of a loaded program. */
static int allocate_state(bench_state *st, const bench_args *args)
{
    st->input_count = kiln_program_input_count(st->program);
    st->dim_count = kiln_program_dim_count(st->program);
    st->tensors = calloc(st->input_count + 1, sizeof *st->tensors);
    st->generated = calloc(st->input_count + 1, sizeof *st->generated);
    st->names = calloc(st->input_count + 1, sizeof *st->names);
    st->dim_values = calloc(st->dim_count + 1, sizeof *st->dim_values);
    st->sources = calloc(st->dim_count + 1, sizeof *st->sources);
    st->bound = calloc(st->dim_count + 1, sizeof *st->bound);
    /* Every program dim, plus the --dim names that are none (the session refuses them). */
    st->narrowing = calloc((size_t)st->dim_count + args->session.dim_count + 1, sizeof *st->narrowing);
    if (!st->tensors || !st->generated || !st->names || !st->dim_values || !st->sources || !st->bound ||
        !st->narrowing)
        return cli_error("out of memory");
    for (uint32_t i = 0; i < st->input_count; i++) {
        kiln_io_info io;
        kiln_program_input(st->program, i, &io);
        st->names[i] = io.name;
    }
    return CLI_OK;
}

/* Free a bench_state (any part may be missing). */
static void free_state(bench_state *st)
{
    for (uint32_t i = 0; st->tensors && i < st->input_count; i++)
        kiln_tensor_free(st->tensors[i]);
    free(st->tensors);
    free(st->generated);
    free(st->names);
    free(st->dim_values);
    free(st->sources);
    free(st->bound);
    free(st->narrowing);
    free(st->times);
    kiln_session_free(st->session);
    kiln_program_free(st->loaded);
}

/* Read every --input file into the slot of its input. */
static int read_input_files(bench_state *st, const bench_args *args)
{
    kiln_error err;
    for (int k = 0; k < args->input_count; k++) {
        bool found = false;
        for (uint32_t i = 0; i < st->input_count && !found; i++) {
            if (strcmp(st->names[i], args->input_names[k]) != 0)
                continue;
            found = true;
            if (kiln_npy_read_file(args->input_paths[k], &st->tensors[i], &err) != KILN_OK)
                return cli_error("%s", err.message);
        }
        if (!found) {
            char known[512] = "";
            size_t used = 0;
            for (uint32_t i = 0; i < st->input_count && used < sizeof known; i++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s'%s'", i ? ", " : "", st->names[i]);
            return cli_usage_error("bench", "--input: '%s' is not an input of %s (inputs: %s)",
                                   args->input_names[k], args->path, known);
        }
    }
    return CLI_OK;
}

/* Seconds on the monotonic clock. */
static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The session's dims: those named by --dim keep the bound given (a range
 * is the user's to choose); every other is pinned to its value in
 * st->dim_values, so the arena is the one those sizes need. Names --dim
 * gives that are no dim are passed on for the session to refuse. */
static uint32_t build_narrowing(bench_state *st, const bench_args *args)
{
    uint32_t count = 0;
    for (uint32_t d = 0; d < st->dim_count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        st->narrowing[count++] = (kiln_dim_bound){dim.name, st->dim_values[d], st->dim_values[d]};
        for (uint32_t k = 0; k < args->session.dim_count; k++)
            if (strcmp(args->session.dims[k].name, dim.name) == 0)
                st->narrowing[count - 1] = args->session.dims[k];
    }
    for (uint32_t k = 0; k < args->session.dim_count; k++) {
        bool known = false;
        for (uint32_t d = 0; d < st->dim_count; d++)
            known = known || strcmp(args->session.dims[k].name, st->narrowing[d].name) == 0;
        if (!known)
            st->narrowing[count++] = args->session.dims[k];
    }
    return count;
}

/* Open the session over build_narrowing's dims, timing it into *ms.
 * @return CLI_OK, or CLI_FAILED after session_args_new_session's report. */
static int open_session(bench_state *st, const bench_args *args, bool profile, double *ms)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = args->threads;
    /* Threads asked for are used; by default, fewer while other processes hold cores. */
    options.thread_policy = args->threads ? KILN_THREADS_FIXED : KILN_THREADS_ADAPTIVE;
    options.reference_kernels = args->reference;
    options.profile = profile;
    session_args_apply(&args->session, &options);
    options.dims = st->narrowing;
    options.dim_count = build_narrowing(st, args);
    double start = now_seconds();
    int rc = session_args_new_session(&args->session, st->program, &options, &st->session);
    *ms = (now_seconds() - start) * 1e3;
    return rc;
}

/*
 * Whether the shape of input `index` depends on dim `d` near `values`:
 * its shape changes when d moves (by one, and to twice plus one, so that
 * a division like d/2 moves too). Used only to say where a size came from.
 */
static bool input_depends_on_dim(const kiln_program *program, uint32_t index, const int64_t *values, uint32_t d,
                                 int64_t *moved)
{
    kiln_error err;
    int64_t shape[KILN_MAX_RANK], shape_moved[KILN_MAX_RANK];
    kiln_io_info io;
    kiln_program_input(program, index, &io);
    if (kiln_program_input_shape_at(program, index, values, shape, &err) != KILN_OK)
        return true;
    memcpy(moved, values, kiln_program_dim_count(program) * sizeof *moved);
    int64_t steps[2] = {1, values[d] + 1};
    for (int s = 0; s < 2; s++) {
        if (values[d] > INT64_MAX - steps[s])
            return true;
        moved[d] = values[d] + steps[s];
        if (kiln_program_input_shape_at(program, index, moved, shape_moved, &err) != KILN_OK ||
            memcmp(shape, shape_moved, io.rank * sizeof *shape) != 0)
            return true;
    }
    return false;
}

/* Make every input not read from a file, at the sizes in st->dim_values. */
static int make_inputs(bench_state *st)
{
    kiln_error err;
    uint64_t random_state = 1;
    for (uint32_t i = 0; i < st->input_count; i++) {
        st->generated[i] = !st->tensors[i];
        if (st->tensors[i])
            continue;
        kiln_io_info io;
        int64_t shape[KILN_MAX_RANK];
        kiln_program_input(st->program, i, &io);
        if (kiln_program_input_shape_at(st->program, i, st->dim_values, shape, &err) != KILN_OK ||
            kiln_tensor_new(io.dtype, io.rank, shape, &st->tensors[i], &err) != KILN_OK)
            return cli_error("input '%s': %s", io.name, err.message);
        sample_fill_input(st->program, i, st->tensors[i], &random_state);
    }
    return CLI_OK;
}

/*
 * Inputs that do not fit together: when --dim was given, the session is
 * asked first, since a --dim outside the artifact's range (which made the
 * inputs wrong) is the mistake to name; otherwise the binding's error,
 * with how to make the generated inputs match files.
 */
static int explain_bad_sizes(bench_state *st, const bench_args *args, const kiln_error *err)
{
    double unused_ms;
    if (args->session.dim_count > 0 && open_session(st, args, false, &unused_ms) != CLI_OK)
        return CLI_FAILED;
    cli_error("%s", err->message);
    if (args->input_count > 0 && (uint32_t)args->input_count < st->input_count)
        fprintf(stderr, "kiln: hint: inputs not given with --input are made at small sizes (kiln bench --help), "
                        "which files sharing a dim must agree with: give their size with --dim NAME=N\n");
    return CLI_FAILED;
}

/*
 * The sizes to run and the inputs at them: when every input is a file,
 * the sizes they bind (a dim none binds at its minimum); otherwise
 * bench_sizes_choose's, at which the missing inputs are made. Either way
 * the sizes kept are those all the inputs bind together, and a dim a file
 * input's shape depends on is said to come from the files.
 */
static int choose_sizes(bench_state *st, const bench_args *args)
{
    kiln_error err;
    bool all_files = (uint32_t)args->input_count == st->input_count;
    int rc = CLI_OK;
    for (uint32_t d = 0; all_files && d < st->dim_count; d++) {
        /* What explain_bad_sizes pins the dims to if the files do not fit. */
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        st->dim_values[d] = sample_dim_first(&dim);
    }
    if (!all_files && ((rc = bench_sizes_choose(st->program, &args->session, st->dim_values, st->sources,
                                                &st->evidence_case)) != CLI_OK ||
                       (rc = make_inputs(st)) != CLI_OK))
        return rc;
    int64_t *bound_values = calloc(2 * ((size_t)st->dim_count + 1), sizeof *bound_values);
    if (!bound_values)
        return cli_error("out of memory");
    if (kiln_program_bind_dims(st->program, st->input_count, st->names, (const kiln_tensor *const *)st->tensors,
                               bound_values, st->bound, &err) != KILN_OK) {
        free(bound_values);
        return explain_bad_sizes(st, args, &err);
    }
    for (uint32_t d = 0; d < st->dim_count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        if (all_files) {
            st->sources[d] = st->bound[d] ? SIZE_FROM_FILES : SIZE_FROM_MINIMUM;
            st->dim_values[d] = st->bound[d] ? bound_values[d] : sample_dim_first(&dim);
            continue;
        }
        if (st->bound[d])
            st->dim_values[d] = bound_values[d];
        for (uint32_t i = 0; i < st->input_count; i++)
            if (!st->generated[i] &&
                input_depends_on_dim(st->program, i, st->dim_values, d, bound_values + st->dim_count + 1))
                st->sources[d] = SIZE_FROM_FILES;
    }
    free(bound_values);
    bool from_evidence = false;
    for (uint32_t d = 0; d < st->dim_count; d++)
        from_evidence = from_evidence || st->sources[d] == SIZE_FROM_EVIDENCE;
    if (!from_evidence)
        st->evidence_case = NULL;
    return CLI_OK;
}

/* Bind every input to the session. */
static int bind_inputs(bench_state *st)
{
    kiln_error err;
    for (uint32_t i = 0; i < st->input_count; i++)
        if (kiln_session_set_input(st->session, st->names[i], st->tensors[i], &err) != KILN_OK)
            return cli_error("%s", err.message);
    return CLI_OK;
}

/* How many runs of a phase, and for how long at most. */
typedef struct run_plan {
    long max_runs;
    double max_seconds; /* INFINITY: no time limit */
    /* Before each run, untimed, the states hold the rows these sizes give their length dims
     * (sample_inputs.h): every run of a decode step at past = 512 meets a cache of 512 rows. */
    const kiln_program *program;
    const int64_t *dim_values;
} run_plan;

/* The runs the header comment promises for the flags given. */
static void plan_runs(const bench_args *args, run_plan *warmup, run_plan *timed)
{
    warmup->max_runs = args->warmup;
    warmup->max_seconds = args->warmup_given ? INFINITY : DEFAULT_WARMUP_SECONDS;
    timed->max_runs = args->runs_given ? args->runs : args->duration > 0 ? DURATION_RUN_CAP : DEFAULT_RUNS;
    timed->max_seconds = args->duration > 0 ? args->duration : args->runs_given ? INFINITY
                                                                                 : DEFAULT_DURATION_SECONDS;
}

/* What the runs measured. */
typedef struct bench_result {
    double load_ms, session_ms, first_run_ms;
    long warmup_runs, timed_runs;
    bool stopped_by_time;
    latency_stats latency; /* seconds */
    double runs_per_second;
    uint64_t arena_bytes, peak_rss_bytes;
    const char *peak_rss_source;
    uint32_t threads;     /* the most a run may use */
    uint32_t run_threads; /* what the last run used (fewer while other processes held cores) */
} bench_result;

/*
 * Run one phase (warm-up when `times` is NULL): up to plan->max_runs
 * runs, starting none after plan->max_seconds (but always the first), each
 * timed; the first run of the whole bench is the cold one. *done is the
 * count run; *stopped_by_time says the time limit ended the phase.
 */
static int run_phase(kiln_session *session, const char *label, const run_plan *plan, double *times,
                     bench_result *result, long *done, bool *stopped_by_time)
{
    kiln_error err;
    cli_progress progress;
    cli_progress_init(&progress, label);
    double phase_start = now_seconds();
    *done = 0;
    *stopped_by_time = false;
    for (long r = 0; r < plan->max_runs; r++) {
        double start = now_seconds();
        if (r > 0 && start - phase_start >= plan->max_seconds) {
            *stopped_by_time = true;
            break;
        }
        kiln_status status = sample_state_lengths(plan->program, session, plan->dim_values, &err);
        start = now_seconds();
        if (status == KILN_OK)
            status = kiln_session_run(session, &err);
        double seconds = now_seconds() - start;
        if (status != KILN_OK) {
            cli_progress_finish(&progress);
            return cli_error("%s", err.message);
        }
        if (result->first_run_ms < 0)
            result->first_run_ms = seconds * 1e3;
        if (times)
            times[r] = seconds;
        *done = r + 1;
        double by_count = (double)*done / (double)plan->max_runs;
        double by_time = isfinite(plan->max_seconds) ? (now_seconds() - phase_start) / plan->max_seconds : 0;
        /* Say whichever limit is nearer, so a --duration bench does not
         * show "5 of 1000000 runs". */
        char detail[64];
        if (by_time > by_count)
            snprintf(detail, sizeof detail, "%ld runs, %.1f of %g s", *done, now_seconds() - phase_start,
                     plan->max_seconds);
        else
            snprintf(detail, sizeof detail, "%ld of %ld runs", *done, plan->max_runs);
        cli_progress_step(&progress, by_count > by_time ? by_count : by_time, detail);
    }
    cli_progress_finish(&progress);
    return CLI_OK;
}

/* Warm up, time the runs and summarise them. */
static int measure(bench_state *st, const bench_args *args, bench_result *result)
{
    run_plan warmup, timed;
    plan_runs(args, &warmup, &timed);
    warmup.program = timed.program = st->program;
    warmup.dim_values = timed.dim_values = st->dim_values;
    st->times = calloc((size_t)timed.max_runs, sizeof *st->times);
    if (!st->times)
        return cli_error("out of memory");
    bool warmup_stopped;
    int rc = run_phase(st->session, "warm-up", &warmup, NULL, result, &result->warmup_runs, &warmup_stopped);
    if (rc == CLI_OK)
        rc = run_phase(st->session, "timing", &timed, st->times, result, &result->timed_runs,
                       &result->stopped_by_time);
    if (rc != CLI_OK)
        return rc;
    latency_stats_compute(st->times, (size_t)result->timed_runs, &result->latency);
    result->runs_per_second = result->latency.total > 0 ? (double)result->timed_runs / result->latency.total : 0;
    result->peak_rss_bytes = peak_rss_bytes(&result->peak_rss_source);
    return CLI_OK;
}

/*
 * --profile: the timed session replaced by one that profiles, warmed up as
 * it was (the warm-up left out of the profile), then as many runs as were
 * timed, themselves timed as before; their median goes beside the
 * unprofiled one.
 */
static int profile_runs(bench_state *st, const bench_args *args, const bench_result *timed, bench_profile *profile)
{
    double unused_ms;
    kiln_session_free(st->session);
    st->session = NULL;
    int rc = open_session(st, args, true, &unused_ms);
    if (rc == CLI_OK)
        rc = bind_inputs(st);
    if (rc != CLI_OK)
        return rc;
    run_plan warmup, runs;
    plan_runs(args, &warmup, &runs);
    warmup.program = runs.program = st->program;
    warmup.dim_values = runs.dim_values = st->dim_values;
    runs.max_runs = timed->timed_runs;
    runs.max_seconds = INFINITY;
    bench_result scratch = *timed; /* the cold run stays the timed session's */
    long done;
    bool stopped;
    rc = run_phase(st->session, "profile warm-up", &warmup, NULL, &scratch, &profile->warmup_runs, &stopped);
    if (rc != CLI_OK)
        return rc;
    kiln_session_profile_reset(st->session);
    if ((rc = run_phase(st->session, "profiling", &runs, st->times, &scratch, &done, &stopped)) != CLI_OK)
        return rc;
    latency_stats stats;
    latency_stats_compute(st->times, (size_t)done, &stats);
    profile->median_ms = stats.median * 1e3;
    profile->unprofiled_median_ms = timed->latency.median * 1e3;
    return bench_profile_collect(st->session, profile);
}

/* A shape as "[3, 2]". */
static void print_shape(FILE *out, const kiln_tensor *t)
{
    fputc('[', out);
    for (uint32_t a = 0; a < kiln_tensor_rank(t); a++)
        fprintf(out, "%s%lld", a ? ", " : "", (long long)kiln_tensor_shape(t)[a]);
    fputc(']', out);
}

/* A member holding milliseconds, to the nanosecond (the clock's unit):
 * more digits would only be noise. */
static void json_member_ms(json_writer *w, const char *key, double ms)
{
    json_key(w, key);
    json_fixed(w, ms, 6);
}

/* The JSON object the man page documents, field for field. */
static void print_json(const bench_state *st, const bench_args *args, const bench_result *r,
                       const bench_profile *profile)
{
    const latency_stats *l = &r->latency;
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "file", args->path);
    json_member_string(&w, "method", kiln_program_method_name(st->program));
    json_member_int(&w, "runs", r->timed_runs);
    json_member_int(&w, "warmup", r->warmup_runs);
    json_member_string(&w, "stopped_by", r->stopped_by_time ? "duration" : "runs");
    json_member_uint(&w, "threads", r->threads);
    json_member_uint(&w, "last_run_threads", r->run_threads);
    json_member_string(&w, "waits", kiln_thread_wait_policy());
    json_member_bool(&w, "reference_kernels", args->reference);
    json_member_ms(&w, "load_ms", r->load_ms);
    json_member_ms(&w, "session_ms", r->session_ms);
    json_member_ms(&w, "first_run_ms", r->first_run_ms);
    json_member_ms(&w, "min_ms", l->min * 1e3);
    json_member_ms(&w, "median_ms", l->median * 1e3);
    json_member_ms(&w, "mean_ms", l->mean * 1e3);
    json_member_ms(&w, "p90_ms", l->p90 * 1e3);
    json_member_ms(&w, "p99_ms", l->p99 * 1e3);
    json_member_ms(&w, "max_ms", l->max * 1e3);
    json_member_ms(&w, "stddev_ms", l->stddev * 1e3);
    json_key(&w, "runs_per_second");
    json_fixed(&w, r->runs_per_second, 3);
    json_member_uint(&w, "arena_bytes", r->arena_bytes);
    json_member_uint(&w, "peak_rss_bytes", r->peak_rss_bytes);
    json_member_string(&w, "peak_rss_source", r->peak_rss_source);
    json_key(&w, "dims");
    json_begin_object(&w);
    for (uint32_t d = 0; d < st->dim_count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        json_member_int(&w, dim.name, st->dim_values[d]);
    }
    json_end_object(&w);
    json_key(&w, "sizes_from");
    json_begin_object(&w);
    for (uint32_t d = 0; d < st->dim_count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        json_member_string(&w, dim.name, size_source_name(st->sources[d]));
    }
    json_end_object(&w);
    json_key(&w, "evidence_case");
    if (st->evidence_case)
        json_string(&w, st->evidence_case);
    else
        json_null(&w);
    json_key(&w, "inputs");
    json_begin_array(&w);
    for (uint32_t i = 0; i < st->input_count; i++) {
        kiln_io_info io;
        kiln_program_input(st->program, i, &io);
        json_begin_object(&w);
        json_member_string(&w, "name", io.name);
        json_member_string(&w, "dtype", kiln_dtype_name(io.dtype));
        json_key(&w, "shape");
        json_begin_array(&w);
        for (uint32_t a = 0; a < kiln_tensor_rank(st->tensors[i]); a++)
            json_int(&w, kiln_tensor_shape(st->tensors[i])[a]);
        json_end_array(&w);
        json_member_string(&w, "source", st->generated[i] ? "random" : "file");
        json_end_object(&w);
    }
    json_end_array(&w);
    if (args->profile) {
        json_key(&w, "profile");
        bench_profile_write_json(profile, &w);
    }
    json_end_object(&w);
    json_finish(&w);
}

/* "sizes      batch=1, seq=8 (the dims' minimum)": each run of dims with
 * one source, then that source. */
static void print_sizes(const bench_state *st)
{
    if (st->dim_count == 0)
        return;
    term_printf(stdout, "sizes      ");
    for (uint32_t d = 0; d < st->dim_count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(st->program, d, &dim);
        term_printf(stdout, "%s%s=%lld", d ? ", " : "", dim.name, (long long)st->dim_values[d]);
        if (d + 1 < st->dim_count && st->sources[d + 1] == st->sources[d])
            continue;
        if (st->sources[d] == SIZE_FROM_EVIDENCE)
            term_printf(stdout, " (evidence case '%s')", st->evidence_case);
        else
            term_printf(stdout, " (%s)", size_source_phrase(st->sources[d]));
    }
    fputc('\n', stdout);
}

/* "1.0 MiB (1048576 bytes)", or "128 bytes" where the two would repeat. */
static void print_bytes(const char *label, uint64_t bytes, const char *note)
{
    char human[32];
    kiln_format_bytes(bytes, human, sizeof human);
    if (bytes < 1024)
        printf("%-10s %s%s%s%s\n", label, human, note ? " (" : "", note ? note : "", note ? ")" : "");
    else
        printf("%-10s %s (%llu bytes%s%s)\n", label, human, (unsigned long long)bytes, note ? ", " : "",
               note ? note : "");
}

/* The text report: what ran, at which sizes, then the figures. */
static void print_text(const bench_state *st, const bench_args *args, const bench_result *r)
{
    const latency_stats *l = &r->latency;
    term_printf(stdout, "bench: %s, %ld runs after %ld warm-up, %u thread%s (%s waits)%s\n", args->path,
                r->timed_runs, r->warmup_runs, r->threads, r->threads == 1 ? "" : "s", kiln_thread_wait_policy(),
                args->reference ? ", reference kernels" : "");
    if (r->run_threads < r->threads)
        printf("threads    the last run used %u: other processes held cores (--threads N uses N whatever the load)\n",
               r->run_threads);
    if (r->stopped_by_time && args->duration > 0)
        printf("stopped    at the %g s of --duration\n", args->duration);
    else if (r->stopped_by_time)
        printf("stopped    at the default limit of %g s (--runs N runs N, --duration S runs S seconds)\n",
               DEFAULT_DURATION_SECONDS);
    print_sizes(st);
    for (uint32_t i = 0; i < st->input_count; i++) {
        kiln_io_info io;
        kiln_program_input(st->program, i, &io);
        term_printf(stdout, "input      %s: %s ", io.name, kiln_dtype_name(io.dtype));
        print_shape(stdout, st->tensors[i]);
        printf(" (%s)\n", st->generated[i] ? "random" : "file");
    }
    char a[32], b[32], c[32], d[32];
    printf("load       %s\n", latency_text(r->load_ms, a, sizeof a));
    printf("session    %s\n", latency_text(r->session_ms, a, sizeof a));
    printf("first run  %s (cold)\n", latency_text(r->first_run_ms, a, sizeof a));
    printf("latency    min %s, median %s, mean %s, max %s\n", latency_text(l->min * 1e3, a, sizeof a),
           latency_text(l->median * 1e3, b, sizeof b), latency_text(l->mean * 1e3, c, sizeof c),
           latency_text(l->max * 1e3, d, sizeof d));
    printf("           p90 %s, p99 %s, stddev %s\n", latency_text(l->p90 * 1e3, a, sizeof a),
           latency_text(l->p99 * 1e3, b, sizeof b), latency_text(l->stddev * 1e3, c, sizeof c));
    printf("throughput %.1f runs/s\n", r->runs_per_second);
    print_bytes("arena", r->arena_bytes, NULL);
    print_bytes("peak RSS", r->peak_rss_bytes, r->peak_rss_source);
}

/* Load, choose the sizes, open a session narrowed to them, bind and
 * measure; the load and session times are part of the result. */
static int bench(bench_state *st, const bench_args *args, bench_result *result, bench_profile *profile)
{
    double start = now_seconds();
    if (load_args_load(&args->load, args->path, &st->loaded) != CLI_OK ||
        load_args_method(&args->load, st->loaded, &st->program) != CLI_OK)
        return CLI_FAILED;
    result->load_ms = (now_seconds() - start) * 1e3;
    int rc;
    if ((rc = allocate_state(st, args)) != CLI_OK || (rc = read_input_files(st, args)) != CLI_OK ||
        (rc = choose_sizes(st, args)) != CLI_OK || (rc = open_session(st, args, false, &result->session_ms)) != CLI_OK)
        return rc;
    result->first_run_ms = -1;
    if ((rc = bind_inputs(st)) != CLI_OK || (rc = measure(st, args, result)) != CLI_OK)
        return rc;
    result->arena_bytes = kiln_session_arena_bytes(st->session);
    result->threads = kiln_session_threads(st->session);
    result->run_threads = kiln_session_run_threads(st->session);
    return args->profile ? profile_runs(st, args, result, profile) : CLI_OK;
}

/* kiln bench: see the header comment and the usage. */
static int cmd_bench(int argc, char **argv)
{
    bench_args args;
    bench_state state = {0};
    bench_result result = {0};
    bench_profile profile = {0};
    int rc = parse_args(argc, argv, &args);
    if (rc == CLI_OK)
        rc = bench(&state, &args, &result, &profile);
    if (rc == CLI_OK && args.json)
        print_json(&state, &args, &result, &profile);
    else if (rc == CLI_OK)
        print_text(&state, &args, &result);
    if (rc == CLI_OK && args.profile && !args.json)
        bench_profile_print_text(&profile, args.profile_top ? (uint32_t)args.profile_top : DEFAULT_PROFILE_TOP,
                                 stdout);
    bench_profile_release(&profile);
    free_state(&state);
    free_args(&args);
    return rc;
}
