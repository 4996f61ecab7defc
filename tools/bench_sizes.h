/*
 * bench_sizes.h — the sizes `kiln bench` runs a program at when it makes
 * up inputs: each dim's value and where it came from.
 *
 * A dim named by --dim runs at the largest value that option allows; any
 * other at the size the program's first evidence case gives it
 * (kiln_program_evidence_input), else at its smallest value (multiple_of
 * respected). Small
 * sizes first because a bench is often someone's first run of a program:
 * the largest sizes made ResNet-18 run at batch 64, silently, for minutes.
 */
#ifndef KILN_TOOLS_BENCH_SIZES_H
#define KILN_TOOLS_BENCH_SIZES_H

#include <kiln/kiln.h>

#include "session_args.h"

typedef enum size_source {
    SIZE_FROM_MINIMUM,  /* the dim's smallest value */
    SIZE_FROM_EVIDENCE, /* the first evidence case's inputs */
    SIZE_FROM_OPTION,   /* --dim */
    SIZE_FROM_FILES,    /* the shapes of the --input files */
} size_source;

/* The JSON word for `source`: "minimum", "evidence", "option", "files". */
const char *size_source_name(size_source source);

/* How the text output says it: "the dims' minimum", "--dim", ... (the
 * evidence case is named by the caller). */
const char *size_source_phrase(size_source source);

/*
 * Each dim's value for made-up inputs (kiln_program_dim order) and its
 * source, as the header comment says; `session` holds the --dim bounds
 * (unknown names are ignored here: the session refuses them). *evidence_case
 * is the case's name when some dim came from it, else NULL.
 * @return CLI_OK, or CLI_FAILED when out of memory.
 */
int bench_sizes_choose(const kiln_program *program, const session_args *session, int64_t *values,
                       size_source *sources, const char **evidence_case);

#endif
