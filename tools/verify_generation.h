/*
 * verify_generation.h — `kiln verify`'s replay of an artifact's generation
 * cases (prompts and the tokens they must make, spec/format.md §7.15):
 * the outcomes, their lines of the report and their JSON array.
 */
#ifndef KILN_TOOLS_VERIFY_GENERATION_H
#define KILN_TOOLS_VERIFY_GENERATION_H

#include <stdio.h>

#include <kiln/kiln.h>

#include "json.h"

typedef struct generation_outcomes {
    uint32_t case_count;               /* replayed: every case, or those of --method */
    uint32_t *index;                   /* per replayed case: its index in the artifact */
    kiln_generation_result *results;
    kiln_status *status;               /* could it run */
    char (*message)[KILN_ERROR_MESSAGE_SIZE];
    uint32_t failed;                   /* cases that did not run or did not pass */
} generation_outcomes;

/* Replay the cases of `program` (those that use method `only` when not NULL) into *out. */
void verify_generation_replay(const kiln_program *program, const char *only, generation_outcomes *out);

void verify_generation_release(generation_outcomes *out);

/* The report's lines ("generation N cases, N failed", one per case); names from the artifact escaped. */
void verify_generation_print(FILE *f, const kiln_program *program, const generation_outcomes *out);

/* The JSON array's items, one object per replayed case. */
void verify_generation_json(json_writer *w, const kiln_program *program, const generation_outcomes *out);

#endif
