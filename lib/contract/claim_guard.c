/* claim_guard.c — the list of size claims deferred to run time (claim_guard.h). */
#include "claim_guard.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

static bool same_claim(const kiln_runtime_guard *g, const kiln_runtime_guard *h)
{
    return g->node == h->node && g->kind == h->kind && g->k == h->k && g->a == h->a &&
           (g->kind != KILN_CLAIM_EQUAL || g->b == h->b);
}

kiln_status kiln_guard_list_add(kiln_guard_list *list, const kiln_runtime_guard *guard, const char *text,
                                kiln_error *err)
{
    for (uint32_t i = 0; i < list->count; i++)
        if (same_claim(&list->items[i], guard))
            return KILN_OK;
    if (list->count == KILN_MAX_RUNTIME_GUARDS)
        return kiln_fail(err, KILN_ERR_LIMIT, "more than %d runtime guards", KILN_MAX_RUNTIME_GUARDS);
    if (list->count == list->capacity) {
        uint32_t capacity = list->capacity ? list->capacity * 2 : 8;
        kiln_runtime_guard *items = realloc(list->items, capacity * sizeof *items);
        if (!items)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for runtime guards");
        list->items = items;
        list->capacity = capacity;
    }
    kiln_runtime_guard copy = *guard;
    copy.text = strdup(text ? text : "");
    if (!copy.text)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for runtime guards");
    list->items[list->count++] = copy;
    return KILN_OK;
}

void kiln_guard_list_truncate(kiln_guard_list *list, uint32_t count)
{
    while (list->count > count)
        free(list->items[--list->count].text);
}

void kiln_guard_list_release(kiln_guard_list *list)
{
    kiln_guard_list_truncate(list, 0);
    free(list->items);
    memset(list, 0, sizeof *list);
}
