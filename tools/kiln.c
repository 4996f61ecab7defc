/* kiln.c — the kiln command: dispatches to one verb per file. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "term.h"

static const cli_verb *const verbs[] = {
    &cli_verb_inspect,
    &cli_verb_run,
    &cli_verb_verify,
    &cli_verb_keygen,
    &cli_verb_sign,
    &cli_verb_version,
    &cli_verb_evidence,
    &cli_verb_check,
    &cli_verb_probe,
    &cli_verb_bench,
    &cli_verb_generate,
    &cli_verb_asm,
    &cli_verb_disasm,
    &cli_verb_dot,
    &cli_verb_diff,
#ifdef KILN_HAVE_ONNX
    &cli_verb_import_onnx,
    &cli_verb_onnx_test,
#endif
};
#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

static void print_help(FILE *out)
{
    fprintf(out, "usage: kiln VERB [OPTIONS] ...\n\n"
                 "Build, inspect and run sealed kiln tensor-program artifacts.\n\nverbs:\n");
    for (size_t i = 0; i < VERB_COUNT; i++)
        fprintf(out, "  %-10s %s\n", verbs[i]->name, verbs[i]->summary);
    fprintf(out, "\noptions:\n  --help     show this help\n  --version  show the kiln version\n"
                 "  -q, --quiet  (any verb) print only errors and results, no progress\n"
                 "\nRun 'kiln VERB --help' for a verb's options. Exit status: 0 success,\n"
                 "1 check failed or input rejected, 2 usage error.\n");
}

static bool is_quiet(const char *arg)
{
    return strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0;
}

/*
 * -q/--quiet before the verb ("kiln -q run ...") is the global option the
 * help lists: move it after the verb, where every verb takes it, so that
 * argv[1] is the verb. @return false if there is nothing but -q (no verb).
 */
static bool move_global_options(int argc, char **argv)
{
    int verb = 1;
    while (verb < argc && is_quiet(argv[verb]))
        verb++;
    if (verb == argc)
        return verb == 1; /* "kiln -q" alone has no verb */
    char *name = argv[verb];
    memmove(argv + 2, argv + 1, (size_t)(verb - 1) * sizeof *argv);
    argv[1] = name;
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !move_global_options(argc, argv)) {
        print_help(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        print_help(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("kiln %s\n", kiln_version());
        return CLI_OK;
    }
    for (size_t i = 0; i < VERB_COUNT; i++) {
        if (strcmp(argv[1], verbs[i]->name) != 0)
            continue;
        /* --help anywhere shows the verb's usage; --quiet/-q anywhere (before
         * "--") is every verb's, so it is taken out here for all of them. */
        int kept = 2;
        bool options_end = false;
        for (int a = 2; a < argc; a++) {
            options_end = options_end || strcmp(argv[a], "--") == 0;
            if (!options_end && cli_is_help(argv[a])) {
                printf("%s", verbs[i]->usage);
                return CLI_OK;
            }
            if (!options_end && (strcmp(argv[a], "--quiet") == 0 || strcmp(argv[a], "-q") == 0))
                cli_quiet = true;
            else
                argv[kept++] = argv[a];
        }
        argv[kept] = NULL;
        return verbs[i]->main(kept - 1, argv + 1);
    }
    term_printf(stderr, "kiln: error: unknown verb '%s'\n", argv[1]);
    fprintf(stderr, "Try 'kiln --help'.\n");
    return CLI_USAGE;
}
