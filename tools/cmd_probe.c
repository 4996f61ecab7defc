/*
 * cmd_probe.c — `kiln probe FILE`: exercise the declared domain. Runs the
 * program at the domain's corners and a few interior points with random
 * inputs that satisfy the semantic checks, checks every output's shape and
 * dtype against the declaration, and checks that sizes just outside each
 * dim's domain are refused by a guard.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load_args.h"
#include "options.h"
#include "sample_inputs.h"
#include "session_args.h"
#include "term.h"

static int cmd_probe(int argc, char **argv);

const cli_verb cli_verb_probe = {
    "probe",
    "run the declared domain's corners and just-outside sizes",
    "usage: kiln probe FILE [--seed N] [--dim NAME=MIN..MAX]... [--max-arena SIZE]\n"
    "                  [--method NAME] [--quiet]\n\n"
    "Run FILE at every corner of its declared domain (each dim at its first\n"
    "and last value; at most 256 corners, else the all-min and all-max ones\n"
    "plus each dim flipped alone) and at 3 random interior points, with random\n"
    "inputs that satisfy the semantic checks. Every output must have its\n"
    "declared shape and dtype. Then, for each dim, sizes just outside its\n"
    "domain (one below, one above, one off its multiple) must be refused by a\n"
    "guard. With --dim, the domain probed is the session's narrowing of the\n"
    "artifact's, and sizes just outside it must be refused by the session.\n"
    "Exit 0 if all of this holds, 1 otherwise.\n\n"
    "options:\n"
    "  --seed N             seed of the random inputs and interior points (default 1)\n"
    SESSION_ARGS_USAGE
    LOAD_ARGS_METHOD_USAGE
    "  --quiet              print only failures and the summary\n",
    cmd_probe,
};

typedef struct probe {
    const char *method;   /* --method NAME; NULL: the first */
    const kiln_program *program;
    kiln_session *session;
    uint32_t dim_count;
    kiln_dim_info *dims;
    uint64_t random_state;
    bool quiet;
    unsigned valid_ok, valid_failed, outside_ok, outside_failed, skipped;
    unsigned valid_guarded; /* non-strict programs: valid points their runtime guards refuse */
    session_args session_args;
} probe;

static uint64_t next_random(probe *p)
{
    return sample_random(&p->random_state);
}

static int64_t dim_first(const kiln_dim_info *d)
{
    return sample_dim_first(d);
}

static int64_t dim_last(const kiln_dim_info *d)
{
    return sample_dim_last(d);
}

static void describe_point(const probe *p, const int64_t *values, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t d = 0; d < p->dim_count && used < size; d++)
        used += (size_t)snprintf(text + used, size - used, "%s%s=%lld", d ? " " : "", p->dims[d].name,
                                 (long long)values[d]);
    if (!p->dim_count)
        snprintf(text, size, "(no dims)");
}

/*
 * Build inputs for the dims at `values` and run. @return the run's status;
 * KILN_ERR_INVALID_ARGUMENT (with *formed false) when a shape cannot be
 * formed (a negative or overflowing extent).
 */
static kiln_status run_point(probe *p, const int64_t *values, bool *formed, kiln_error *err)
{
    uint32_t inputs = kiln_program_input_count(p->program);
    kiln_tensor **tensors = calloc(inputs + 1, sizeof *tensors);
    kiln_status status = tensors ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
    *formed = sample_state_lengths(p->program, p->session, values, err) == KILN_OK;
    if (!*formed)
        status = KILN_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; status == KILN_OK && i < inputs; i++) {
        kiln_io_info io;
        int64_t shape[KILN_MAX_RANK];
        kiln_program_input(p->program, i, &io);
        status = kiln_program_input_shape_at(p->program, i, values, shape, err);
        if (status == KILN_OK)
            status = kiln_tensor_new(io.dtype, io.rank, shape, &tensors[i], err);
        if (status != KILN_OK) {
            *formed = false;
            break;
        }
        sample_fill_input(p->program, i, tensors[i], &p->random_state);
        status = kiln_session_set_input(p->session, io.name, tensors[i], err);
    }
    if (status == KILN_OK)
        status = kiln_session_run(p->session, err);
    for (uint32_t i = 0; tensors && i < inputs; i++)
        kiln_tensor_free(tensors[i]);
    free(tensors);
    return status;
}

/* Every output has the declared dtype and the shape its expressions give here. */
static bool outputs_match(probe *p, const int64_t *values, char *problem, size_t size)
{
    for (uint32_t o = 0; o < kiln_program_output_count(p->program); o++) {
        kiln_io_info io;
        int64_t expected[KILN_MAX_RANK];
        kiln_error err;
        kiln_program_output(p->program, o, &io);
        const kiln_tensor *t = kiln_session_output(p->session, o);
        if (kiln_program_output_shape_at(p->program, o, values, expected, &err) != KILN_OK) {
            snprintf(problem, size, "output '%s': %s", io.name, err.message);
            return false;
        }
        bool same = t && kiln_tensor_dtype(t) == io.dtype && kiln_tensor_rank(t) == io.rank;
        for (uint32_t a = 0; same && a < io.rank; a++)
            same = kiln_tensor_shape(t)[a] == expected[a];
        if (!same) {
            char got[128];
            if (t)
                kiln_tensor_format_shape(t, got, sizeof got);
            snprintf(problem, size, "output '%s' is %s %s, not the declared shape", io.name,
                     t ? kiln_dtype_name(kiln_tensor_dtype(t)) : "missing", t ? got : "");
            return false;
        }
    }
    return true;
}

static void probe_outside(probe *p, const int64_t *values, const char *kind);

static void probe_valid(probe *p, const int64_t *values, const char *kind)
{
    char where[512], problem[KILN_ERROR_MESSAGE_SIZE + 64];
    kiln_error err;
    bool formed;
    /* A point of the dims' box where a declared relation does not hold lies outside the domain. */
    if (kiln_program_relations_hold(p->program, values, &err) != KILN_OK) {
        probe_outside(p, values, kind);
        return;
    }
    describe_point(p, values, where, sizeof where);
    kiln_status status = run_point(p, values, &formed, &err);
    if (status == KILN_OK && outputs_match(p, values, problem, sizeof problem)) {
        p->valid_ok++;
        if (!p->quiet)
            term_printf(stdout, "ok      %-8s %s: ran, outputs as declared\n", kind, where);
        return;
    }
    if (status == KILN_ERR_SHAPE_GUARD && !kiln_program_is_strict(p->program)) {
        /* A point of the domain no input guard refuses: one of the runtime
         * guards the artifact declares did, as a non-strict program may. */
        p->valid_guarded++;
        if (!p->quiet)
            term_printf(stdout, "guarded %-8s %s: %s\n", kind, where, err.message);
        return;
    }
    if (status != KILN_OK)
        snprintf(problem, sizeof problem, "%s", err.message);
    p->valid_failed++;
    term_printf(stdout, "FAIL    %-8s %s: %s\n", kind, where, problem);
}

static void probe_outside(probe *p, const int64_t *values, const char *kind)
{
    char where[512];
    kiln_error err;
    bool formed;
    describe_point(p, values, where, sizeof where);
    kiln_status status = run_point(p, values, &formed, &err);
    if (!formed) {
        p->skipped++;
        if (!p->quiet)
            term_printf(stdout, "skip    %-8s %s: no input shape can be formed\n", kind, where);
    } else if (status == KILN_ERR_SHAPE_GUARD) {
        p->outside_ok++;
        if (!p->quiet)
            term_printf(stdout, "ok      %-8s %s: refused: %s\n", kind, where, err.message);
    } else {
        p->outside_failed++;
        term_printf(stdout, "FAIL    %-8s %s: %s\n", kind, where,
                    status == KILN_OK ? "ran, but it lies outside the declared domain" : err.message);
    }
}

static void probe_domain(probe *p)
{
    int64_t *values = calloc(p->dim_count + 1, sizeof *values);
    if (!values)
        return;
    /* Corners: all of them when few, else all-min, all-max and single flips. */
    if (p->dim_count <= 8) {
        for (uint32_t mask = 0; mask < (1u << p->dim_count); mask++) {
            for (uint32_t d = 0; d < p->dim_count; d++)
                values[d] = mask >> d & 1 ? dim_last(&p->dims[d]) : dim_first(&p->dims[d]);
            probe_valid(p, values, "corner");
        }
    } else {
        for (uint32_t flip = 0; flip <= p->dim_count + 1; flip++) {
            for (uint32_t d = 0; d < p->dim_count; d++) {
                bool high = flip == p->dim_count + 1 || d == flip;
                values[d] = high ? dim_last(&p->dims[d]) : dim_first(&p->dims[d]);
            }
            probe_valid(p, values, "corner");
        }
    }
    /* Interior points: random, but never a point where every dim is at its
     * first or last value (a corner, run above under that name) nor one
     * already run; a domain whose every dim has at most two values has none.
     * A few draws each. */
    int64_t *chosen = calloc(3 * (size_t)p->dim_count + 1, sizeof *chosen);
    for (int i = 0, draws = 0; chosen && i < 3 && p->dim_count && draws < 30; draws++) {
        bool corner = true, repeated = false;
        for (uint32_t d = 0; d < p->dim_count; d++) {
            const kiln_dim_info *dim = &p->dims[d];
            uint64_t steps = (uint64_t)((dim_last(dim) - dim_first(dim)) / dim->multiple_of) + 1;
            values[d] = dim_first(dim) + (int64_t)(next_random(p) % steps) * dim->multiple_of;
            corner = corner && (values[d] == dim_first(dim) || values[d] == dim_last(dim));
        }
        for (int k = 0; k < i && !repeated; k++)
            repeated = memcmp(&chosen[(size_t)k * p->dim_count], values, p->dim_count * sizeof *values) == 0;
        if (corner || repeated)
            continue;
        memcpy(&chosen[(size_t)i * p->dim_count], values, p->dim_count * sizeof *values);
        probe_valid(p, values, "interior");
        i++;
    }
    free(chosen);
    /* Just outside, one dim at a time, the others at their first value. */
    for (uint32_t d = 0; d < p->dim_count; d++) {
        const kiln_dim_info *dim = &p->dims[d];
        for (uint32_t e = 0; e < p->dim_count; e++)
            values[e] = dim_first(&p->dims[e]);
        int64_t candidates[3] = {dim_first(dim) - dim->multiple_of, dim_last(dim) + dim->multiple_of,
                                 dim_first(dim) + 1};
        for (int c = 0; c < 3; c++) {
            if (c == 2 && (dim->multiple_of == 1 || candidates[2] > dim->max))
                continue;
            if (candidates[c] < 0)
                continue;
            if (c == 0 && dim->multiple_of > 1 && dim->min > 0)
                candidates[0] = dim->min - 1 >= 0 ? dim->min - 1 : -1;
            if (c == 1 && dim->multiple_of > 1)
                candidates[1] = dim->max + 1;
            if (candidates[c] < 0)
                continue;
            values[d] = candidates[c];
            probe_outside(p, values, "outside");
        }
    }
    free(values);
}

/* --seed N: 0 would stall xorshift, so it means 1. */
static int take_seed(void *args, const char *value)
{
    probe *p = args;
    char *end;
    unsigned long long seed = strtoull(value, &end, 10);
    if (end == value || *end)
        return cli_usage_error("probe", "--seed takes a number, got '%s'", value);
    p->random_state = seed ? seed : 1;
    return CLI_OK;
}

static int take_dim(void *args, const char *value)
{
    return session_args_take_dim(&((probe *)args)->session_args, value);
}

static int take_max_arena(void *args, const char *value)
{
    return session_args_take_max_arena(&((probe *)args)->session_args, value);
}

static const cli_option probe_option_list[] = {
    {.name = "--seed", .arity = CLI_VALUE, .handle = take_seed},
    {.name = "--dim", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_dim},
    {.name = "--max-arena", .arity = CLI_VALUE, .handle = take_max_arena},
    {.name = "--method", .arity = CLI_VALUE, .offset = offsetof(probe, method)},
};

static const cli_options probe_options = CLI_OPTIONS("probe", probe_option_list, 1);

static int cmd_probe(int argc, char **argv)
{
    const char *path = NULL;
    probe p = {0};
    p.random_state = 1;
    p.quiet = cli_quiet;
    p.session_args.verb = "probe";
    int operands;
    kiln_program *program = NULL;
    int rc = cli_parse_options(&probe_options, argc, argv, &p, &path, &operands);
    if (rc == CLI_OK && !path)
        rc = cli_usage_error("probe", "missing FILE");
    const load_args full = {.verb = "probe", .verify = KILN_VERIFY_FULL, .method = p.method};
    if (rc == CLI_OK)
        rc = load_args_load(&full, path, &program);
    if (rc == CLI_OK)
        rc = load_args_method(&full, program, &p.program);
    if (rc != CLI_OK) {
        kiln_program_free(program);
        session_args_release(&p.session_args);
        return rc;
    }
    const kiln_program *method = p.program;
    p.dim_count = kiln_program_dim_count(method);
    p.dims = calloc(p.dim_count + 1, sizeof *p.dims);
    if (!p.dims)
        rc = cli_error("out of memory");
    kiln_session_options options;
    kiln_session_options_default(&options);
    session_args_apply(&p.session_args, &options);
    if (rc == CLI_OK)
        rc = session_args_new_session(&p.session_args, method, &options, &p.session);
    /* The domain probed: the session's, the artifact's narrowed as --dim says (checked by the session). */
    for (uint32_t d = 0; rc == CLI_OK && d < p.dim_count; d++) {
        kiln_program_dim(method, d, &p.dims[d]);
        for (uint32_t k = 0; k < p.session_args.dim_count; k++)
            if (strcmp(p.dims[d].name, p.session_args.dims[k].name) == 0) {
                p.dims[d].min = p.session_args.dims[k].min;
                p.dims[d].max = p.session_args.dims[k].max;
            }
    }
    if (rc == CLI_OK) {
        probe_domain(&p);
        printf("probe: %u valid points ran as declared, %u outside points refused, %u failed, %u skipped",
               p.valid_ok, p.outside_ok, p.valid_failed + p.outside_failed, p.skipped);
        if (!kiln_program_is_strict(method))
            printf(", %u valid points refused by runtime guards (non-strict)", p.valid_guarded);
        printf("\n");
        rc = p.valid_failed + p.outside_failed ? CLI_FAILED : CLI_OK;
    }
    kiln_session_free(p.session);
    free(p.dims);
    kiln_program_free(program);
    session_args_release(&p.session_args);
    return rc;
}
