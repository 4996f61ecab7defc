/* load_args.c — the verify policy of a load, from the command line (see load_args.h). */
#include "load_args.h"

#include <string.h>

#include "cli.h"

int load_args_take_verify(load_args *args, const char *value)
{
    static const struct {
        const char *name;
        kiln_verify_policy policy;
    } policies[] = {{"full", KILN_VERIFY_FULL}, {"lazy", KILN_VERIFY_LAZY}, {"none", KILN_VERIFY_NONE}};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        if (strcmp(value, policies[i].name) == 0) {
            args->verify = policies[i].policy;
            return CLI_OK;
        }
    }
    return cli_usage_error(args->verb, "--verify takes full, lazy or none, got '%s'", value);
}

int load_args_take_method(load_args *args, const char *value)
{
    args->method = value;
    return CLI_OK;
}

int load_args_method(const load_args *args, const kiln_program *program, const kiln_program **out)
{
    kiln_error err;
    *out = program;
    if (!args->method)
        return CLI_OK;
    if (kiln_program_method(program, args->method, out, &err) != KILN_OK)
        return cli_error("%s", err.message);
    return CLI_OK;
}

void load_args_options(const load_args *args, kiln_load_options *options, cli_progress *progress)
{
    kiln_load_options_default(options);
    options->verify = args->verify;
    cli_progress_init(progress, "verifying");
    options->progress = cli_progress_update;
    options->progress_user = progress;
}

void load_args_rewrite_options(kiln_load_options *options, cli_progress *progress)
{
    const load_args full = {.verb = "rewrite", .verify = KILN_VERIFY_FULL};
    load_args_options(&full, options, progress);
    cli_progress_then(progress, "writing");
}

int load_args_load(const load_args *args, const char *path, kiln_program **out)
{
    kiln_load_options options;
    cli_progress progress;
    kiln_error err;
    load_args_options(args, &options, &progress);
    kiln_status status = kiln_program_load(path, &options, out, NULL, &err);
    cli_progress_finish(&progress);
    if (status != KILN_OK)
        return cli_load_error(path, &err);
    return CLI_OK;
}
