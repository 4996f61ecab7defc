/* evidence_check.h — evidence cases judged against the program they are stored with. */
#ifndef KILN_LIB_EVIDENCE_CHECK_H
#define KILN_LIB_EVIDENCE_CHECK_H

#include "model.h"

/*
 * Check every case against the typed model: each declared input given
 * once by name with its dtype and rank, each expected output a declared
 * output (once) with its dtype and rank, case names unique, rules sane.
 */
kiln_status kiln_evidence_check(const kiln_model *m, kiln_error *err);

/* How a case names the rows a state holds when it starts: "state:NAME" (format 1.3, spec/format.md §7.8.3). */
#define KILN_EVIDENCE_STATE_PREFIX "state:"

/* The state of `m` that evidence tensor name `name` ("state:NAME") stands for, or NULL. */
const kiln_state_decl *kiln_evidence_state_input(const kiln_model *m, const char *name);

/*
 * Check the generation cases of `root` (a program's first method, holding
 * its further ones): names unique, each naming two different methods of
 * the program, every token of its prompt and of what it must make >= 0
 * (spec/format.md §7.15). INVALID_PROGRAM otherwise.
 */
kiln_status kiln_generation_check(const kiln_model *root, kiln_error *err);

#endif
