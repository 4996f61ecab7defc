/*
 * options.h — the command line of a verb, declared as a table.
 *
 * Each verb lists its options once (long name, short name, whether and how
 * it takes a value, what a second use does, where the value goes) and
 * cli_parse_options reads argv against the list. Every verb gets the same
 * rules and the same messages from it:
 *
 *   --name VALUE and --name=VALUE      (short names too: -o OUT, -o=OUT)
 *   --name                             a flag; --name=VALUE is unknown
 *   -x, --bogus                        "unknown option '-x'" (exit 2)
 *   --name at the end                  "option --name needs a value"
 *   a word that is not an option       an operand (FILE, A B); "-" is one
 *   one operand too many               "unexpected argument 'WORD'"
 *
 * A verb that takes no operands (keygen, version) calls every word it does
 * not know an unexpected argument, as it always has. --help and --quiet
 * are every verb's and are taken out before the verb runs (kiln.c).
 *
 *     typedef struct sign_args { const char *key, *output; } sign_args;
 *     static const cli_option sign_options[] = {
 *         {.name = "--key", .arity = CLI_VALUE, .offset = offsetof(sign_args, key)},
 *         {.name = "--output", .short_name = "-o", .arity = CLI_VALUE,
 *          .offset = offsetof(sign_args, output)},
 *     };
 */
#ifndef KILN_TOOLS_OPTIONS_H
#define KILN_TOOLS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* How an option takes its value. */
typedef enum cli_option_arity {
    CLI_FLAG,           /* --name alone */
    CLI_VALUE,          /* --name VALUE or --name=VALUE */
    CLI_OPTIONAL_VALUE, /* --name alone or --name=VALUE; never the next word (asm --compress) */
} cli_option_arity;

/* What a second use of an option does. */
typedef enum cli_option_repeat {
    CLI_LAST_WINS, /* the later value replaces the earlier one */
    CLI_ONCE,      /* a usage error with the option's `twice` message */
    CLI_EACH,      /* every use is taken: the handler collects them (--input, --trust) */
} cli_option_repeat;

/*
 * Takes one use of an option: `args` is the verb's argument struct,
 * `value` the value (NULL for a flag, or an optional value not given).
 * @return CLI_OK, or the exit status after printing the error itself.
 */
typedef int (*cli_option_handler)(void *args, const char *value);

/* One row of a verb's option table. */
typedef struct cli_option {
    const char *name;       /* "--output" */
    const char *short_name; /* "-o", or NULL */
    cli_option_arity arity;
    cli_option_repeat repeat;
    const char *twice;      /* CLI_ONCE: the message when given twice */
    /* Without a handler, where the option lands in the verb's argument
     * struct: a flag sets the bool there, a value is stored as the
     * const char * there. A handler takes every other case. */
    size_t offset;
    cli_option_handler handle;
} cli_option;

/* A verb's whole command line: its options and how many operands it takes. */
typedef struct cli_options {
    const char *verb;         /* for the messages: "Try 'kiln VERB --help'." */
    const cli_option *list;
    size_t count;             /* at most CLI_MAX_OPTIONS */
    int max_operands;         /* FILE: 1, A B: 2, none: 0 */
} cli_options;

#define CLI_MAX_OPTIONS 32

/* The cli_options of `verb` whose rows are the array `rows`. */
#define CLI_OPTIONS(verb_name, rows, operands) \
    {.verb = (verb_name), .list = (rows), .count = sizeof(rows) / sizeof((rows)[0]), .max_operands = (operands)}

/*
 * Read argv[1..argc-1] (argv[0] is the verb) against `spec`: options go
 * to `args`, operands in order to `operands` (room for max_operands) and
 * their number to *operand_count. Stops at the first error, which it
 * prints. Whether enough operands were given is the verb's to say.
 * @return CLI_OK, CLI_USAGE, or a handler's status.
 */
int cli_parse_options(const cli_options *spec, int argc, char **argv, void *args, const char **operands,
                      int *operand_count);

#endif
