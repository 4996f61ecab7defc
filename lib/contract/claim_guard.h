/*
 * claim_guard.h — a size claim deferred to run time: what a non-strict
 * program stores instead of a proof (spec/contract.md §4.2), and the list
 * shape rules add them to while a program is checked.
 */
#ifndef KILN_LIB_CLAIM_GUARD_H
#define KILN_LIB_CLAIM_GUARD_H

#include <kiln/kiln.h>

#include "claim.h"

/* Most runtime guards one program may store. */
#define KILN_MAX_RUNTIME_GUARDS 4096
/* Longest description of one guard, in bytes. */
#define KILN_MAX_GUARD_TEXT 512

/*
 * A precondition a non-strict program could not prove when it was built:
 * stored in the artifact and checked before every run (spec/contract.md §4.2).
 */
typedef struct kiln_runtime_guard {
    uint32_t node;             /* the node whose shape rule needs it */
    kiln_size_claim_kind kind;
    uint32_t a, b;             /* expression ids; b only for KILN_CLAIM_EQUAL */
    int64_t k;
    char *text;                /* the claim in words: "x axis 1 size k equals w axis 0 size 4" */
} kiln_runtime_guard;

typedef struct kiln_guard_list {
    kiln_runtime_guard *items;
    uint32_t count;
    uint32_t capacity;
} kiln_guard_list;

/* Append a copy of `guard` with a copy of `text` as its text (guard->text
 * is not read) unless an equal one is listed. */
kiln_status kiln_guard_list_add(kiln_guard_list *list, const kiln_runtime_guard *guard, const char *text,
                                kiln_error *err);
/* Drop the entries from `count` on. */
void kiln_guard_list_truncate(kiln_guard_list *list, uint32_t count);
void kiln_guard_list_release(kiln_guard_list *list);

#endif
