/* memory_plan.c — sizing and placing intermediates (see memory_plan.h). */
#include "memory_plan.h"

#include <stdlib.h>

#include "format/checked_math.h"
#include "format/error.h"

/* Bytes of value `v` at the domain's upper bound. */
static kiln_status max_value_bytes(const kiln_model *m, const kiln_interval *ranges, uint32_t v,
                                   const kiln_limits *limits, uint64_t *out, kiln_error *err)
{
    const kiln_value_type *type = &m->value_types[v];
    uint64_t bytes = kiln_dtype_size(type->dtype);
    for (uint32_t a = 0; a < type->shape.rank; a++) {
        kiln_interval bounds;
        if (!kiln_expr_bounds(&m->exprs, type->shape.axes[a], ranges, &bounds) || bounds.hi < 0 ||
            !kiln_mul_u64(bytes, (uint64_t)bounds.hi, &bytes))
            return kiln_fail(err, KILN_ERR_LIMIT, "value %u: its size at the domain's upper bound overflows", v);
    }
    if (bytes > limits->max_arena_bytes)
        return kiln_fail(err, KILN_ERR_LIMIT, "value %u needs %llu bytes, over the arena limit of %llu",
                         v, (unsigned long long)bytes, (unsigned long long)limits->max_arena_bytes);
    *out = bytes;
    return KILN_OK;
}

kiln_status kiln_plan_arena(const kiln_model *m, const kiln_limits *limits, uint64_t *offsets,
                            uint64_t *arena_size, kiln_error *err)
{
    uint32_t first = kiln_model_first_node_value(m);
    uint64_t offset = 0;
    kiln_interval *ranges = calloc(m->dim_count ? m->dim_count : 1, sizeof *ranges);
    if (!ranges)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning the arena");
    for (uint32_t d = 0; d < m->dim_count; d++)
        ranges[d] = (kiln_interval){m->dims[d].min, m->dims[d].max};
    kiln_status status = KILN_OK;
    for (uint32_t n = 0; status == KILN_OK && n < m->node_count; n++) {
        uint64_t bytes = 0;
        status = max_value_bytes(m, ranges, first + n, limits, &bytes, err);
        if (status != KILN_OK)
            break;
        if (offsets)
            offsets[n] = offset;
        if (!kiln_add_u64(offset, bytes, &offset) || !kiln_align_up_u64(offset, KILN_ARENA_ALIGNMENT, &offset) ||
            offset > limits->max_arena_bytes)
            status = kiln_fail(err, KILN_ERR_LIMIT,
                               "the arena for the domain's upper bound exceeds the limit of %llu bytes",
                               (unsigned long long)limits->max_arena_bytes);
    }
    free(ranges);
    if (status == KILN_OK)
        *arena_size = offset;
    return status;
}
