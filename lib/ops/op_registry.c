/* op_registry.c — the registry: every op family's table, in a fixed order. */
#include "op_registry.h"

#include <string.h>

#include "error.h"

static const kiln_op_family *const families[] = {
    &kiln_ops_elementwise, &kiln_ops_unary, &kiln_ops_binary, &kiln_ops_reduce,
    &kiln_ops_linalg,      &kiln_ops_shape, &kiln_ops_gather, &kiln_ops_norm,
    &kiln_ops_conv,        &kiln_ops_pool,
    &kiln_ops_resize,      &kiln_ops_einsum, &kiln_ops_generate, &kiln_ops_topk,
    &kiln_ops_scatter,
    &kiln_ops_grid_sample,
    &kiln_ops_reverse_sequence,
    &kiln_ops_det,
    &kiln_ops_max_unpool,
    &kiln_ops_state,
    &kiln_ops_recurrent,
};
#define FAMILY_COUNT (sizeof families / sizeof families[0])

const kiln_op_def *kiln_op_find(const char *name)
{
    for (size_t f = 0; f < FAMILY_COUNT; f++)
        for (uint32_t i = 0; i < families[f]->count; i++)
            if (strcmp(families[f]->ops[i].name, name) == 0)
                return &families[f]->ops[i];
    return NULL;
}

const kiln_op_def *kiln_op_find_version(const char *name, uint32_t version)
{
    const kiln_op_def *op = kiln_op_find(name);
    if (op && version >= op->versions.min && version <= op->versions.max)
        return op;
    return NULL;
}

uint32_t kiln_op_count(void)
{
    uint32_t count = 0;
    for (size_t f = 0; f < FAMILY_COUNT; f++)
        count += families[f]->count;
    return count;
}

const kiln_op_def *kiln_op_at(uint32_t index)
{
    for (size_t f = 0; f < FAMILY_COUNT; f++) {
        if (index < families[f]->count)
            return &families[f]->ops[index];
        index -= families[f]->count;
    }
    return NULL;
}

uint32_t kiln_op_family_count(void)
{
    return (uint32_t)FAMILY_COUNT;
}

const kiln_op_family *kiln_op_family_at(uint32_t index)
{
    return index < FAMILY_COUNT ? families[index] : NULL;
}

kiln_status kiln_require_same_dtype(const kiln_shape_context *ctx, const kiln_value_type *a,
                                    const kiln_value_type *b, kiln_error *err)
{
    if (a->dtype != b->dtype)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: operand dtypes differ (%s and %s); kiln does not promote implicitly",
                         ctx->node_label, kiln_dtype_name(a->dtype), kiln_dtype_name(b->dtype));
    return KILN_OK;
}
