/* cli.c — message and option helpers shared by the verbs. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cli_error(const char *fmt, ...)
{
    va_list args;
    fputs("kiln: error: ", stderr);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return CLI_FAILED;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list args;
    fputs("kiln: error: ", stderr);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\nTry 'kiln %s --help'.\n", verb);
    return CLI_USAGE;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_take_value(const char *verb, int argc, char **argv, int *index, const char *name,
                   const char **value)
{
    const char *arg = argv[*index];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*index + 1 >= argc) {
        cli_usage_error(verb, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*index];
    return 1;
}
