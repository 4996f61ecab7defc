/* state_decl.c — see state_decl.h. */
#include "state_decl.h"

#include <stdlib.h>
#include <string.h>

const kiln_state_decl *kiln_state_decl_find(const kiln_state_decl *states, uint32_t count, const char *name)
{
    for (uint32_t i = 0; name && i < count; i++)
        if (strcmp(states[i].name, name) == 0)
            return &states[i];
    return NULL;
}

bool kiln_state_decl_equal(const kiln_state_decl *a, const kiln_state_decl *b)
{
    if (strcmp(a->name, b->name) != 0 || a->dtype != b->dtype || a->rank != b->rank || a->axis != b->axis ||
        strcmp(a->length_dim, b->length_dim) != 0)
        return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

void kiln_state_decl_release(kiln_state_decl *decl)
{
    free(decl->name);
    free(decl->length_dim);
    decl->name = decl->length_dim = NULL;
}
