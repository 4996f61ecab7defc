/* session_args.c — a session's bound and arena limit from the command line (see session_args.h). */
#include "session_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int session_args_take_dim(session_args *args, const char *value)
{
    const char *equals = strchr(value, '=');
    if (!equals || equals == value)
        return cli_usage_error(args->verb, "--dim takes NAME=MIN..MAX or NAME=N, got '%s'", value);
    const char *sizes = equals + 1, *dots = strstr(sizes, "..");
    int64_t min, max;
    bool ok = dots ? cli_parse_whole(sizes, dots, &min) && cli_parse_whole(dots + 2, dots + 2 + strlen(dots + 2), &max)
                   : cli_parse_whole(sizes, sizes + strlen(sizes), &min);
    if (!dots)
        max = min;
    if (!ok)
        return cli_usage_error(args->verb, "--dim %.*s takes MIN..MAX or N, whole numbers >= 0, got '%s'",
                               (int)(equals - value), value, sizes);
    if (min > max)
        return cli_usage_error(args->verb, "--dim %s: the minimum is above the maximum", value);
    for (uint32_t d = 0; d < args->dim_count; d++)
        if (strncmp(args->dims[d].name, value, (size_t)(equals - value)) == 0 &&
            args->dims[d].name[equals - value] == '\0')
            return cli_usage_error(args->verb, "--dim %.*s is given twice", (int)(equals - value), value);
    if (args->dim_count == args->dim_capacity) {
        uint32_t capacity = args->dim_capacity ? 2 * args->dim_capacity : 4;
        kiln_dim_bound *grown = realloc(args->dims, capacity * sizeof *grown);
        if (grown)
            args->dims = grown;
        char **grown_names = realloc(args->dim_names, capacity * sizeof *grown_names);
        if (grown_names)
            args->dim_names = grown_names;
        if (!grown || !grown_names)
            return cli_error("out of memory");
        args->dim_capacity = capacity;
    }
    char *name = strndup(value, (size_t)(equals - value));
    if (!name)
        return cli_error("out of memory");
    args->dim_names[args->dim_count] = name;
    args->dims[args->dim_count++] = (kiln_dim_bound){name, min, max};
    return CLI_OK;
}

int session_args_take_max_arena(session_args *args, const char *value)
{
    static const struct {
        const char *suffix;
        uint64_t scale;
    } units[] = {
        {"", 1},
        {"K", UINT64_C(1) << 10}, {"KiB", UINT64_C(1) << 10}, {"KB", UINT64_C(1000)},
        {"M", UINT64_C(1) << 20}, {"MiB", UINT64_C(1) << 20}, {"MB", UINT64_C(1000000)},
        {"G", UINT64_C(1) << 30}, {"GiB", UINT64_C(1) << 30}, {"GB", UINT64_C(1000000000)},
        {"T", UINT64_C(1) << 40}, {"TiB", UINT64_C(1) << 40}, {"TB", UINT64_C(1000000000000)},
    };
    const char *end = value;
    while (*end >= '0' && *end <= '9')
        end++;
    int64_t number;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strcmp(end, units[u].suffix) != 0 || !cli_parse_whole(value, end, &number))
            continue;
        if (number == 0)
            break;
        if ((uint64_t)number > UINT64_MAX / units[u].scale)
            return cli_usage_error(args->verb, "--max-arena %s does not fit 64 bits", value);
        args->max_arena_bytes = (uint64_t)number * units[u].scale;
        return CLI_OK;
    }
    return cli_usage_error(args->verb,
                           "--max-arena takes a size above 0 in bytes, or with a unit (512M, 8G, 8GiB, 10GB), "
                           "got '%s'", value);
}

void session_args_apply(const session_args *args, kiln_session_options *options)
{
    options->dims = args->dims;
    options->dim_count = args->dim_count;
    options->max_arena_bytes = args->max_arena_bytes;
}

/* Whether `options` pins every dim of `program` to one value, so that
 * narrowing cannot shrink the arena any further. */
static bool every_dim_pinned(const kiln_program *program, const kiln_session_options *options)
{
    for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        bool pinned = dim.min == dim.max;
        for (uint32_t k = 0; k < options->dim_count; k++)
            if (strcmp(options->dims[k].name, dim.name) == 0)
                pinned = options->dims[k].min == options->dims[k].max;
        if (!pinned)
            return false;
    }
    return true;
}

int session_args_new_session(const session_args *args, const kiln_program *program,
                             const kiln_session_options *options, kiln_session **out)
{
    kiln_error err;
    kiln_status status = kiln_session_new(program, options, out, &err);
    if (status == KILN_OK)
        return CLI_OK;
    cli_error("%s", err.message);
    if (status == KILN_ERR_LIMIT && every_dim_pinned(program, options))
        fprintf(stderr, "kiln: hint: raise the limit with --max-arena SIZE\n");
    else if (status == KILN_ERR_LIMIT)
        fprintf(stderr, "kiln: hint: narrow a dim with 'kiln %s ... --dim NAME=MIN..MAX', or raise the limit with "
                        "--max-arena SIZE ('kiln inspect' shows how the arena grows with each dim)\n", args->verb);
    return CLI_FAILED;
}

void session_args_release(session_args *args)
{
    for (uint32_t d = 0; d < args->dim_count; d++)
        free(args->dim_names[d]);
    free(args->dim_names);
    free(args->dims);
    args->dims = NULL;
    args->dim_names = NULL;
    args->dim_count = args->dim_capacity = 0;
}
