/* state_decl.c — see state_decl.h. */
#include "state_decl.h"

#include <stdint.h>
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

void kiln_state_decl_geometry(const kiln_state_decl *decl, size_t *outer, size_t *row_bytes)
{
    size_t blocks = 1, row = kiln_dtype_size(decl->dtype);
    for (uint32_t a = 0; a < decl->rank; a++)
        if (a < decl->axis)
            blocks *= (size_t)decl->shape[a];
        else if (a > decl->axis)
            row *= (size_t)decl->shape[a];
    *outer = blocks;
    *row_bytes = row;
}

void kiln_state_decl_copy_rows(const kiln_state_decl *decl, const void *data, int64_t rows, void *out)
{
    size_t outer, row_bytes, count = (size_t)rows, capacity = (size_t)decl->shape[decl->axis];
    kiln_state_decl_geometry(decl, &outer, &row_bytes);
    for (size_t o = 0; o < outer && count; o++)
        memcpy((uint8_t *)out + o * count * row_bytes, (const uint8_t *)data + o * capacity * row_bytes,
               count * row_bytes);
}

void kiln_state_decl_write_rows(const kiln_state_decl *decl, const void *in, int64_t rows, void *data)
{
    size_t outer, row_bytes, count = (size_t)rows, capacity = (size_t)decl->shape[decl->axis];
    kiln_state_decl_geometry(decl, &outer, &row_bytes);
    for (size_t o = 0; o < outer && count; o++)
        memcpy((uint8_t *)data + o * capacity * row_bytes, (const uint8_t *)in + o * count * row_bytes,
               count * row_bytes);
}

void kiln_state_decl_release(kiln_state_decl *decl)
{
    free(decl->name);
    free(decl->length_dim);
    decl->name = decl->length_dim = NULL;
}
