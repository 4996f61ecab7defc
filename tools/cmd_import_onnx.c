/* cmd_import_onnx.c — `kiln import-onnx MODEL.onnx -o OUT.kiln`: an ONNX model into a sealed artifact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/onnx.h>

#include "cli.h"
#include "onnx_options.h"

static int cmd_import_onnx(int argc, char **argv);

const cli_verb cli_verb_import_onnx = {
    "import-onnx",
    "convert an ONNX model into a kiln artifact",
    "usage: kiln import-onnx MODEL.onnx -o OUT.kiln [--dim NAME=MIN..MAX]... [--allow-external-data DIR]\n\n"
    "Read an ONNX model (IR versions 3..10, default-domain opsets 1..17), translate\n"
    "every node into kiln ops and seal the program. Symbolic input sizes (dim_param)\n"
    "become kiln dims: each needs --dim with its inclusive range, and every\n"
    "undeclared one is listed. Every construct kiln cannot express is listed at\n"
    "once (node, op, reason); then nothing is written.\n\n"
    "options:\n"
    "  -o, --output OUT.kiln        the artifact to write\n"
    "  --dim NAME=MIN..MAX          bounds of the symbolic size NAME (repeatable)\n"
    "  --allow-external-data DIR    read tensors stored outside the model, from files\n"
    "                               inside DIR only (refused without this option)\n",
    cmd_import_onnx,
};

typedef struct import_args {
    const char *model;
    const char *output;
    const char *external_dir;
    kiln_onnx_dim *dims;
    uint32_t dim_count;
} import_args;

static int parse_args(int argc, char **argv, import_args *args)
{
    memset(args, 0, sizeof *args);
    args->dims = calloc((size_t)argc, sizeof *args->dims);
    if (!args->dims)
        return cli_error("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *value;
        int taken = cli_take_value("import-onnx", argc, argv, &i, "--dim", &value);
        if (taken < 0)
            return CLI_USAGE;
        if (taken) {
            kiln_onnx_dim bound;
            if (!onnx_options_parse_dim((char *)value, &bound))
                return cli_usage_error("import-onnx", "--dim takes NAME=MIN..MAX with 0 <= MIN <= MAX, got '%s'",
                                       value);
            for (uint32_t d = 0; d < args->dim_count; d++)
                if (strcmp(args->dims[d].name, bound.name) == 0)
                    return cli_usage_error("import-onnx", "--dim %s is given twice", bound.name);
            args->dims[args->dim_count++] = bound;
            continue;
        }
        if ((taken = cli_take_value("import-onnx", argc, argv, &i, "--output", &value)) == 0)
            taken = cli_take_value("import-onnx", argc, argv, &i, "-o", &value);
        if (taken < 0)
            return CLI_USAGE;
        if (taken) {
            args->output = value;
            continue;
        }
        taken = cli_take_value("import-onnx", argc, argv, &i, "--allow-external-data", &value);
        if (taken < 0)
            return CLI_USAGE;
        if (taken) {
            args->external_dir = value;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("import-onnx", "unknown option '%s'", argv[i]);
        if (args->model)
            return cli_usage_error("import-onnx", "unexpected argument '%s'", argv[i]);
        args->model = argv[i];
    }
    if (!args->model)
        return cli_usage_error("import-onnx", "missing MODEL.onnx");
    if (!args->output)
        return cli_usage_error("import-onnx", "missing -o OUT.kiln");
    return CLI_OK;
}

/* The program is named after the graph, else after the model file (kiln_onnx_options.program_name NULL). */
static int cmd_import_onnx(int argc, char **argv)
{
    import_args args;
    kiln_onnx_model *model = NULL;
    kiln_onnx_result *result = NULL;
    kiln_error err;
    int rc = parse_args(argc, argv, &args);
    if (rc != CLI_OK)
        goto done;
    if (kiln_onnx_model_read(args.model, NULL, &model, &err) != KILN_OK) {
        rc = cli_error("%s", err.message);
        goto done;
    }
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    options.dims = args.dims;
    options.dim_count = args.dim_count;
    options.external_data_dir = args.external_dir;
    kiln_status status = kiln_onnx_import(model, &options, &result, &err);
    uint32_t unsupported = kiln_onnx_result_unsupported_count(result);
    if (status == KILN_ERR_UNSUPPORTED_OP && unsupported) {
        rc = cli_error("%s: %u construct%s cannot be imported:", args.model, unsupported, unsupported == 1 ? "" : "s");
        onnx_options_print_report(stderr, result);
        goto done;
    }
    if (status != KILN_OK) {
        rc = cli_error("%s: %s", args.model, err.message);
        goto done;
    }
    if (kiln_builder_save(kiln_onnx_result_builder(result), args.output, &err) != KILN_OK) {
        rc = cli_error("%s: %s", args.output, err.message);
        goto done;
    }
    uint32_t inputs = kiln_onnx_result_input_count(result), outputs = kiln_onnx_model_output_count(model);
    if (!cli_quiet)
        printf("wrote %s (%u input%s, %u output%s)\n", args.output, inputs, inputs == 1 ? "" : "s", outputs,
               outputs == 1 ? "" : "s");
    rc = CLI_OK;
done:
    kiln_onnx_result_free(result);
    kiln_onnx_model_free(model);
    free(args.dims);
    return rc;
}
