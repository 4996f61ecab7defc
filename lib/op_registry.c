/* op_registry.c — the table of implemented ops and their version ranges. */
#include "op_registry.h"

#include <string.h>

static const kiln_op_def registry[] = {
    {"add", NULL, 1, 1, 2, 2, kiln_infer_binary_broadcast, kiln_run_add},
    {"sub", NULL, 1, 1, 2, 2, kiln_infer_binary_broadcast, kiln_run_sub},
    {"mul", NULL, 1, 1, 2, 2, kiln_infer_binary_broadcast, kiln_run_mul},
    {"div", NULL, 1, 1, 2, 2, kiln_infer_binary_broadcast, kiln_run_div},
    {"neg", NULL, 1, 1, 1, 1, kiln_infer_unary_numeric, kiln_run_neg},
};

#define REGISTRY_COUNT ((uint32_t)(sizeof registry / sizeof registry[0]))

const kiln_op_def *kiln_op_find(const char *name)
{
    for (uint32_t i = 0; i < REGISTRY_COUNT; i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

const kiln_op_def *kiln_op_find_version(const char *name, uint32_t version)
{
    const kiln_op_def *op = kiln_op_find(name);
    if (op && version >= op->min_version && version <= op->max_version)
        return op;
    return NULL;
}

uint32_t kiln_op_count(void)
{
    return REGISTRY_COUNT;
}

const kiln_op_def *kiln_op_at(uint32_t index)
{
    return index < REGISTRY_COUNT ? &registry[index] : NULL;
}
