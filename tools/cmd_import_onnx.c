/* cmd_import_onnx.c — `kiln import-onnx MODEL.onnx -o OUT.kiln`: an ONNX model into a sealed artifact. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/onnx.h>

#include "arena_report.h"
#include "check_specs.h"
#include "cli.h"
#include "progress_bar.h"
#include "onnx_options.h"
#include "options.h"
#include "term.h"

static int cmd_import_onnx(int argc, char **argv);

const cli_verb cli_verb_import_onnx = {
    "import-onnx",
    "convert an ONNX model into a kiln artifact",
    "usage: kiln import-onnx MODEL.onnx -o OUT.kiln [--dim NAME=MIN..MAX[:K]]... [--allow-external-data DIR]\n"
    "                        [--non-strict] [--check 'NAME: RULE, ...']... [--name NAME]\n"
    "                        [--state [INPUT=]OUTPUT]... [--state-capacity N] [--state-axis A]\n"
    "                        [--state-length-dim NAME]\n\n"
    "Read an ONNX model (IR versions 3..10, default-domain opsets 1..18), translate\n"
    "every node into kiln ops and seal the program. Symbolic input sizes (dim_param)\n"
    "become kiln dims: each needs --dim with its inclusive range, and every\n"
    "undeclared one is listed. Every construct kiln cannot express is listed at\n"
    "once (node, op, reason); then nothing is written. When a shape precondition\n"
    "fails at some point of the declared dims, the --dim flags with a multiple_of\n"
    "under which the model imports are suggested, if there are such.\n\n"
    "options:\n"
    "  -o, --output OUT.kiln        the artifact to write\n"
    "  --name NAME                  the program's name (default: the graph's, which\n"
    "                               PyTorch calls torch_jit, else the file's)\n"
    "  --dim NAME=MIN..MAX[:K]      bounds of the symbolic size NAME, and with :K only\n"
    "                               the multiples of K in them; NAME=N is N..N\n"
    "                               (repeatable)\n"
    "  --allow-external-data DIR    read tensors stored outside the model, from files\n"
    "                               inside DIR only (refused without this option)\n"
    "  --non-strict                 store a precondition that cannot be proven over\n"
    "                               the declared dims as a runtime guard checked before\n"
    "                               every run, instead of refusing the model\n"
    "                               (spec/contract.md section 4.2)\n"
    "  --check 'NAME: RULE, ...'    semantic checks of input NAME (its kiln or ONNX\n"
    "                               name), checked before every run; rules: range\n"
    "                               MIN..MAX, finite, categories A, B, ..., unit TEXT,\n"
    "                               description \"TEXT\" (repeatable, one per input;\n"
    "                               e.g. --check 'x: range 0..1, finite')\n"
    "  --state INPUT=OUTPUT         import the cache the model passes in (INPUT) and\n"
    "                               out (OUTPUT, INPUT concatenated with the new rows)\n"
    "                               as a state kept in the session and appended to in\n"
    "                               place: neither stays an input or output; INPUT's\n"
    "                               growing axis is a --dim its length binds\n"
    "                               (spec/onnx-import.md section 7; repeatable)\n"
    "  --state OUTPUT               a cache this model starts (a prefill): OUTPUT's\n"
    "                               value is the state's first rows\n"
    "  --state-capacity N           the rows each state holds (the context length);\n"
    "                               required with --state\n"
    "  --state-axis A               the axis caches grow along (default -2: [batch,\n"
    "                               heads, past, head_dim])\n"
    "  --state-length-dim NAME      the dim a started state's length binds (default\n"
    "                               past; 0 in this model)\n",
    cmd_import_onnx,
};

typedef struct import_args {
    const char *output;
    const char *name;
    const char *external_dir;
    bool non_strict;
    kiln_onnx_dim *dims;
    char **dim_texts; /* copies of the --dim values, which dims' names point into */
    uint32_t dim_count;
    check_specs checks;
    kiln_onnx_state *states;
    char **state_inputs; /* copies of the INPUT parts of --state, which states' inputs point at */
    uint32_t state_count;
    const char *state_capacity, *state_axis, *state_length_dim;
} import_args;

/* --dim NAME=MIN..MAX[:K], once per name. */
static int take_dim(void *vargs, const char *value)
{
    import_args *args = vargs;
    kiln_onnx_dim bound;
    char *text = strdup(value); /* parsing cuts it at the '=' */
    if (!text)
        return cli_error("out of memory");
    int rc = CLI_OK;
    if (!onnx_options_parse_dim(text, &bound))
        rc = cli_usage_error("import-onnx",
                             "--dim takes NAME=MIN..MAX or NAME=MIN..MAX:K with 0 <= MIN <= MAX and K >= 1 "
                             "(or NAME=N for N..N), got '%s'",
                             value);
    for (uint32_t d = 0; rc == CLI_OK && d < args->dim_count; d++)
        if (strcmp(args->dims[d].name, bound.name) == 0)
            rc = cli_usage_error("import-onnx", "--dim %s is given twice", bound.name);
    if (rc != CLI_OK) {
        free(text);
        return rc;
    }
    args->dim_texts[args->dim_count] = text;
    args->dims[args->dim_count++] = bound;
    return CLI_OK;
}

static int take_check(void *vargs, const char *value)
{
    return check_specs_take(&((import_args *)vargs)->checks, "import-onnx", value);
}

/* --state INPUT=OUTPUT or --state OUTPUT; the texts stay argv's. */
static int take_state(void *vargs, const char *value)
{
    import_args *args = vargs;
    const char *equals = strchr(value, '=');
    kiln_onnx_state state = {.output = equals ? equals + 1 : value};
    char *input = NULL;
    if (equals && !(input = strndup(value, (size_t)(equals - value))))
        return cli_error("out of memory");
    state.input = input;
    if (!state.output[0] || (input && !input[0])) {
        free(input);
        return cli_usage_error("import-onnx", "--state takes INPUT=OUTPUT or OUTPUT (graph value names), got '%s'",
                               value);
    }
    args->state_inputs[args->state_count] = input;
    args->states[args->state_count++] = state;
    return CLI_OK;
}

static const cli_option import_option_list[] = {
    {.name = "--output", .short_name = "-o", .arity = CLI_VALUE, .offset = offsetof(import_args, output)},
    {.name = "--dim", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_dim},
    {.name = "--allow-external-data", .arity = CLI_VALUE, .offset = offsetof(import_args, external_dir)},
    {.name = "--non-strict", .arity = CLI_FLAG, .offset = offsetof(import_args, non_strict)},
    {.name = "--name", .arity = CLI_VALUE, .offset = offsetof(import_args, name)},
    {.name = "--check", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_check},
    {.name = "--state", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_state},
    {.name = "--state-capacity", .arity = CLI_VALUE, .offset = offsetof(import_args, state_capacity)},
    {.name = "--state-axis", .arity = CLI_VALUE, .offset = offsetof(import_args, state_axis)},
    {.name = "--state-length-dim", .arity = CLI_VALUE, .offset = offsetof(import_args, state_length_dim)},
};

static const cli_options import_options = CLI_OPTIONS("import-onnx", import_option_list, 1);

static int parse_args(int argc, char **argv, import_args *args, const char **model)
{
    memset(args, 0, sizeof *args);
    *model = NULL;
    /* Every --dim takes two words at least, so argc bounds their number. */
    args->dims = calloc((size_t)argc, sizeof *args->dims);
    args->dim_texts = calloc((size_t)argc, sizeof *args->dim_texts);
    args->states = calloc((size_t)argc, sizeof *args->states);
    args->state_inputs = calloc((size_t)argc, sizeof *args->state_inputs);
    if (!args->dims || !args->dim_texts || !args->states || !args->state_inputs)
        return cli_error("out of memory");
    int operands = 0;
    int rc = cli_parse_options(&import_options, argc, argv, args, model, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!*model)
        return cli_usage_error("import-onnx", "missing MODEL.onnx");
    if (!args->output)
        return cli_usage_error("import-onnx", "missing -o OUT.kiln");
    return CLI_OK;
}

/* --state-capacity N (N >= 1) and --state-axis A (an integer, negative from the end) into `options`. */
static int apply_state_numbers(const import_args *args, kiln_onnx_options *options)
{
    if (args->state_capacity) {
        const char *text = args->state_capacity;
        if (!cli_parse_whole(text, text + strlen(text), &options->state_capacity) || options->state_capacity < 1)
            return cli_usage_error("import-onnx", "--state-capacity takes a whole number of rows >= 1, got '%s'", text);
    }
    if (args->state_axis) {
        const char *text = args->state_axis;
        bool negative = text[0] == '-';
        int64_t axis;
        if (!cli_parse_whole(text + negative, text + strlen(text), &axis) || axis > KILN_MAX_RANK)
            return cli_usage_error("import-onnx", "--state-axis takes an axis (-%d..%d), got '%s'", KILN_MAX_RANK,
                                   KILN_MAX_RANK - 1, text);
        options->state_axis = (int32_t)(negative ? -axis : axis);
    }
    if (!args->state_count && (args->state_capacity || args->state_axis || args->state_length_dim))
        return cli_usage_error("import-onnx", "--state-capacity, --state-axis and --state-length-dim describe "
                               "--state caches: give --state too");
    return CLI_OK;
}

/* The kiln name of the input `name` names, by its kiln or its ONNX name; NULL if none. */
static const char *imported_input(kiln_onnx_result *result, const char *name)
{
    uint32_t count = kiln_onnx_result_input_count(result);
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(kiln_onnx_result_input_kiln_name(result, i), name) == 0)
            return kiln_onnx_result_input_kiln_name(result, i);
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(kiln_onnx_result_input_onnx_name(result, i), name) == 0)
            return kiln_onnx_result_input_kiln_name(result, i);
    return NULL;
}

/* "a, b (ONNX 'b:0')": what --check may name. */
static void print_inputs(kiln_onnx_result *result)
{
    uint32_t count = kiln_onnx_result_input_count(result);
    for (uint32_t i = 0; i < count; i++) {
        const char *kiln_name = kiln_onnx_result_input_kiln_name(result, i);
        const char *onnx_name = kiln_onnx_result_input_onnx_name(result, i);
        term_printf(stderr, "%s%s", i ? ", " : "", kiln_name);
        if (strcmp(kiln_name, onnx_name) != 0)
            term_printf(stderr, " (ONNX '%s')", onnx_name);
    }
    fputs(count ? "\n" : "none\n", stderr);
}

/* Set every --check on the imported program before it is sealed. */
static int apply_checks(kiln_onnx_result *result, const check_specs *checks)
{
    kiln_builder *builder = kiln_onnx_result_builder(result);
    for (uint32_t i = 0; i < checks->count; i++) {
        const char *input = imported_input(result, checks->inputs[i]);
        kiln_error err;
        if (!input) {
            int rc = cli_error("--check: '%s' is not an input of the model; its inputs are:", checks->inputs[i]);
            print_inputs(result);
            return rc;
        }
        if (kiln_builder_set_input_check(builder, input, &checks->checks[i], &err) != KILN_OK)
            return cli_error("--check '%s: ...': %s", checks->inputs[i], err.message);
    }
    return CLI_OK;
}

/* Say which inputs kiln calls by another name than the model does (ONNX
 * allows any string; kiln names are identifiers: in:0 becomes in_0), so
 * that a user feeding `--input` or `--check` knows which to use. */
static void note_renamed_inputs(const kiln_onnx_result *result)
{
    for (uint32_t i = 0; i < kiln_onnx_result_input_count(result); i++) {
        const char *onnx_name = kiln_onnx_result_input_onnx_name(result, i);
        const char *kiln_name = kiln_onnx_result_input_kiln_name(result, i);
        if (strcmp(onnx_name, kiln_name) != 0)
            term_printf(stderr, "kiln: note: input '%s' is called '%s' in the artifact (kiln names are identifiers)\n",
                        onnx_name, kiln_name);
    }
}

/* The program is named --name, else after the graph, else after the model file (kiln_onnx_options.program_name NULL). */
static int cmd_import_onnx(int argc, char **argv)
{
    import_args args;
    const char *model_path;
    kiln_onnx_model *model = NULL;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    int rc = parse_args(argc, argv, &args, &model_path);
    if (rc != CLI_OK)
        goto done;
    if (kiln_onnx_model_read(model_path, NULL, &model, &err) != KILN_OK) {
        rc = cli_error("%s", err.message);
        goto done;
    }
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    options.dims = args.dims;
    options.dim_count = args.dim_count;
    options.external_data_dir = args.external_dir;
    options.non_strict = args.non_strict;
    options.program_name = args.name;
    options.states = args.states;
    options.state_count = args.state_count;
    options.state_length_dim = args.state_length_dim;
    rc = apply_state_numbers(&args, &options);
    if (rc != CLI_OK)
        goto done;
    kiln_status status = kiln_onnx_import(model, &options, &result, &err);
    uint32_t unsupported = kiln_onnx_result_unsupported_count(result);
    if (status == KILN_ERR_UNSUPPORTED_OP && unsupported) {
        rc = cli_error("%s: %u construct%s cannot be imported:", model_path, unsupported, unsupported == 1 ? "" : "s");
        onnx_options_print_report(stderr, result);
        onnx_options_suggest_multiple_of(stderr, model, &options, result);
        goto done;
    }
    if (status != KILN_OK) {
        rc = cli_file_error(model_path, err.message);
        /* The declarations are missing, and some ops are too: both at once. */
        if (unsupported) {
            cli_error("%s: also, %u construct%s cannot be imported:", model_path, unsupported,
                      unsupported == 1 ? "" : "s");
            onnx_options_print_report(stderr, result);
        }
        goto done;
    }
    if (!cli_quiet)
        note_renamed_inputs(result);
    rc = apply_checks(result, &args.checks);
    if (rc != CLI_OK)
        goto done;
    kiln_save_options save_options;
    cli_progress progress;
    kiln_save_options_default(&save_options);
    cli_progress_init(&progress, "sealing");
    save_options.progress = cli_progress_update;
    save_options.progress_user = &progress;
    status = kiln_builder_save(kiln_onnx_result_builder(result), args.output, &save_options, &err);
    cli_progress_finish(&progress);
    if (status != KILN_OK) {
        /* A write error names the output itself; the rest is about the program. */
        rc = err.code == KILN_ERR_IO ? cli_error("%s", err.message) : cli_file_error(args.output, err.message);
        goto done;
    }
    /* A cache imported as state is neither an input nor an output. */
    uint32_t inputs = kiln_onnx_result_input_count(result),
             outputs = kiln_onnx_model_output_count(model) - args.state_count;
    if (!cli_quiet)
        term_printf(stdout, "wrote %s (%u input%s, %u output%s)\n", args.output, inputs, inputs == 1 ? "" : "s",
                    outputs, outputs == 1 ? "" : "s");
    arena_report_after_write(args.output);
    rc = CLI_OK;
done:
    kiln_onnx_result_free(result);
    kiln_onnx_model_free(model);
    free(args.dims);
    for (uint32_t d = 0; d < args.dim_count; d++)
        free(args.dim_texts[d]);
    free(args.dim_texts);
    for (uint32_t s = 0; s < args.state_count; s++)
        free(args.state_inputs[s]);
    free(args.state_inputs);
    free(args.states);
    check_specs_release(&args.checks);
    return rc;
}
