/* options.c — reading a verb's command line against its option table (options.h). */
#include "options.h"

#include <string.h>

#include "cli.h"

/*
 * Whether `arg` spells option name `name`: exactly, or as NAME=VALUE
 * (then *inline_value points after the '='). "--output-dir" does not
 * spell "--output".
 */
static bool spells(const char *arg, const char *name, const char **inline_value)
{
    size_t length = strlen(name);
    if (strncmp(arg, name, length) != 0)
        return false;
    if (arg[length] == '\0') {
        *inline_value = NULL;
        return true;
    }
    if (arg[length] == '=') {
        *inline_value = arg + length + 1;
        return true;
    }
    return false;
}

/* The row `arg` names, with its spelling and inline value; NULL if none. */
static const cli_option *find_option(const cli_options *spec, const char *arg, const char **spelled,
                                     const char **inline_value)
{
    for (size_t i = 0; i < spec->count; i++) {
        const cli_option *option = &spec->list[i];
        const char *names[2] = {option->name, option->short_name};
        for (int n = 0; n < 2; n++) {
            if (!names[n] || !spells(arg, names[n], inline_value))
                continue;
            /* A flag takes no value: "--json=1" is not --json. */
            if (option->arity == CLI_FLAG && *inline_value)
                return NULL;
            *spelled = names[n];
            return option;
        }
    }
    return NULL;
}

/* Store one use of `option` into `args`, or hand it to the handler. */
static int take(const cli_option *option, void *args, const char *value)
{
    if (option->handle)
        return option->handle(args, value);
    char *field = (char *)args + option->offset;
    if (option->arity == CLI_FLAG)
        *(bool *)(void *)field = true;
    else
        *(const char **)(void *)field = value;
    return CLI_OK;
}

int cli_parse_options(const cli_options *spec, int argc, char **argv, void *args, const char **operands,
                      int *operand_count)
{
    bool given[CLI_MAX_OPTIONS] = {false};
    *operand_count = 0;
    if (spec->count > CLI_MAX_OPTIONS)
        return cli_error("%s: the option table has more than %d rows", spec->verb, CLI_MAX_OPTIONS);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *spelled = NULL, *value = NULL;
        const cli_option *option = find_option(spec, arg, &spelled, &value);
        if (!option) {
            bool looks_like_option = arg[0] == '-' && arg[1] != '\0';
            /* A verb without operands has always called every stray word,
             * option-like or not, an unexpected argument. */
            if (looks_like_option && spec->max_operands > 0)
                return cli_usage_error(spec->verb, "unknown option '%s'", arg);
            if (*operand_count == spec->max_operands)
                return cli_usage_error(spec->verb, "unexpected argument '%s'", arg);
            operands[(*operand_count)++] = arg;
            continue;
        }
        if (option->arity == CLI_VALUE && !value) {
            if (i + 1 >= argc)
                return cli_usage_error(spec->verb, "option %s needs a value", spelled);
            value = argv[++i];
        }
        size_t row = (size_t)(option - spec->list);
        if (option->repeat == CLI_ONCE && given[row])
            return option->twice ? cli_usage_error(spec->verb, "%s", option->twice)
                                 : cli_usage_error(spec->verb, "option %s is given twice", option->name);
        given[row] = true;
        int rc = take(option, args, value);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}
