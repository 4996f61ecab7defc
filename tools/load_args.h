/*
 * load_args.h — how the verbs that load an artifact (run, bench, inspect)
 * load it: `--verify full|lazy|none` (spec/format.md §10.3: full checks
 * every section's CRC and hash now; lazy the program now and the weights
 * when a session first needs them, which opens a 1 GiB artifact in
 * milliseconds; none only the program sections' CRCs), with a progress bar
 * on a terminal while a large artifact is checked.
 */
#ifndef KILN_TOOLS_LOAD_ARGS_H
#define KILN_TOOLS_LOAD_ARGS_H

#include <kiln/kiln.h>

#include "progress_bar.h"

typedef struct load_args {
    const char *verb;          /* for the messages */
    kiln_verify_policy verify; /* default KILN_VERIFY_FULL */
    const char *method;        /* --method NAME; NULL: the artifact's first method */
} load_args;

/* Usage text for the option, to paste into a verb's usage. */
#define LOAD_ARGS_USAGE                                                                                  \
    "  --verify POLICY      full (default: every checksum and hash now), lazy (the program now,\n"      \
    "                       weights when first run) or none (only the program's checksums)\n"

/* Usage text for `--method`, for the verbs that run or describe one method. */
#define LOAD_ARGS_METHOD_USAGE                                                                           \
    "  --method NAME        the artifact's method (entry point) NAME, e.g. decode (default: its first;\n" \
    "                       `kiln inspect` lists them)\n"

/* Take `--method NAME`. @return CLI_OK. */
int load_args_take_method(load_args *args, const char *value);

/* The method --method names of `program` (the program itself without --method); an unknown name is
 * printed with the methods there are. @return CLI_OK or CLI_FAILED. */
int load_args_method(const load_args *args, const kiln_program *program, const kiln_program **out);

/* Take `--verify POLICY`. @return CLI_OK or CLI_USAGE. */
int load_args_take_verify(load_args *args, const char *value);

/* Default load options with the policy and a progress callback drawing `progress` (labelled). */
void load_args_options(const load_args *args, kiln_load_options *options, cli_progress *progress);

/* Load options for a verb that checks an artifact in full and writes it
 * again (evidence add, check add): a bar labelled "verifying", then "writing". */
void load_args_rewrite_options(kiln_load_options *options, cli_progress *progress);

/* kiln_program_load with the policy, drawing progress; the error is printed. @return CLI_OK or CLI_FAILED. */
int load_args_load(const load_args *args, const char *path, kiln_program **out);

#endif
