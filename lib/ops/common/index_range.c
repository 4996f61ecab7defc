/* index_range.c — index tensors read and checked before use (see index_range.h). */
#include "index_range.h"

#include <stdio.h>

#include "error.h"

int64_t kiln_index_at(const kiln_tensor *t, uint64_t i)
{
    return t->dtype == KILN_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

void kiln_format_position(uint64_t flat, uint32_t rank, const int64_t *shape, char *text, size_t size)
{
    int64_t index[KILN_MAX_RANK] = {0};
    for (uint32_t i = rank; i-- > 0;) {
        if (shape[i] > 0) {
            index[i] = (int64_t)(flat % (uint64_t)shape[i]);
            flat /= (uint64_t)shape[i];
        }
    }
    size_t used = (size_t)snprintf(text, size, "[");
    for (uint32_t i = 0; i < rank && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? ", " : "", (long long)index[i]);
    if (used < size)
        snprintf(text + used, size - used, "]");
}

kiln_status kiln_normalise_index(const char *op, const kiln_tensor *indices, uint64_t position, int64_t v,
                                 int64_t extent, int64_t *out, kiln_error *err)
{
    if (v < -extent || v >= extent) {
        char where[160];
        kiln_format_position(position, indices->rank, indices->shape, where, sizeof where);
        return kiln_fail(err, KILN_ERR_RUNTIME, "%s: index %lld at indices position %s is outside %lld..%lld", op,
                         (long long)v, where, (long long)-extent, (long long)(extent - 1));
    }
    if (out)
        *out = v < 0 ? v + extent : v;
    return KILN_OK;
}
