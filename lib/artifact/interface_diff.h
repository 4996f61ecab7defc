/*
 * interface_diff.h — comparing two artifacts: every difference classed for
 * the consumers of A as spec/compatibility.md §6 says, and the three
 * identities side by side (the public face is kiln_diff in kiln/kiln.h;
 * the change kinds are listed in spec/inspect-json.md §3.2).
 */
#ifndef KILN_LIB_INTERFACE_DIFF_H
#define KILN_LIB_INTERFACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

typedef struct change {
    kiln_change_class class;
    const char *kind; /* stable code, e.g. "dim-narrowed" */
    char *subject;    /* e.g. "input 'x' axis 0" */
    char *message;
} change;

typedef struct change_list {
    change *items;
    size_t count, capacity;
    bool failed;        /* out of memory */
    const char *method; /* while one method of several is compared: subjects start "method 'NAME' " */
} change_list;

typedef struct interface_diff {
    change_list changes;
    kiln_identity_pair identities[3]; /* artifact, program, state */
    const char *verdict;              /* the identities in words (spec/inspect-json.md §3.1) */
    bool compared;                    /* both programs were decoded and their interfaces compared */
} interface_diff;

/*
 * Compare B with A (both opened): every method, or only the one called
 * `only` (non-NULL: both have it, the caller checked). @return false when
 * out of memory (`out` is then released).
 */
bool kiln_interface_diff_run(const kiln_artifact *a, const kiln_artifact *b, const char *only, interface_diff *out);
void kiln_interface_diff_release(interface_diff *result);

/* @return true when B may break consumers of A: a breaking change, or
 * interfaces that could not be compared. */
bool kiln_interface_diff_breaking(const interface_diff *result);

#endif
