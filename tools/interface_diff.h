/*
 * interface_diff.h — comparing two artifacts for `kiln diff`: every
 * difference classed for the consumers of A as spec/compatibility.md §6
 * says, and the three identities side by side. The change kinds are
 * listed in spec/inspect-json.md §3.2.
 */
#ifndef KILN_TOOLS_INTERFACE_DIFF_H
#define KILN_TOOLS_INTERFACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "artifact_view.h"

typedef enum change_class { BREAKING = 0, COMPATIBLE = 1 } change_class;

typedef struct change {
    change_class class;
    const char *kind; /* stable code, e.g. "dim-narrowed" */
    char *subject;    /* e.g. "input 'x' axis 0" */
    char *message;
} change;

typedef struct change_list {
    change *items;
    size_t count, capacity;
    bool failed; /* out of memory */
} change_list;

/* One identity of A and of B; a side is unknown when its program cannot be decoded. */
typedef struct identity_pair {
    const char *name;
    bool known;          /* both digests are known */
    uint8_t a[32], b[32];
    bool known_a, known_b;
} identity_pair;

/* @return true if both sides are known and equal. */
bool identity_pair_equal(const identity_pair *pair);

typedef struct interface_diff {
    change_list changes;
    identity_pair identities[3]; /* artifact, program, state */
    const char *verdict;         /* the identities in words (spec/inspect-json.md §3.1) */
    bool compared;               /* both programs were decoded and their interfaces compared */
} interface_diff;

/*
 * Compare B with A (both readable). @return false when out of memory
 * (`out` is then released).
 */
bool interface_diff_run(const artifact_view *a, const artifact_view *b, interface_diff *out);
void interface_diff_release(interface_diff *diff);

/* @return the number of changes of `class`. */
size_t change_count(const change_list *list, change_class class);

/* @return true when B may break consumers of A: a breaking change, or
 * interfaces that could not be compared. */
bool interface_diff_breaking(const interface_diff *diff);

#endif
