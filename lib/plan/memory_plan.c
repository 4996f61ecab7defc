/* memory_plan.c — sizing intermediates and sharing arena space (see memory_plan.h). */
#include "memory_plan.h"

#include <stdlib.h>

#include "checked_math.h"
#include "error.h"
#include "fusion.h"
#include "result_groups.h"
#include "liveness.h"
#include "op_registry.h"

typedef struct slot {
    uint32_t node;
    uint32_t first_use; /* the node that defines it */
    uint32_t last_use;  /* the last node that reads it, or node_count for outputs */
    uint64_t bytes;     /* aligned size */
    uint64_t offset;
} slot;

/*
 * Bytes of value `v` at the upper bound of `ranges`. An axis whose upper
 * bound is 0 makes the value empty at every point, whatever the other
 * extents: it needs no bytes, so the product is not even formed ([H, 0]
 * with a huge H was refused as an overflow while [0, H] was accepted).
 */
static kiln_status max_value_bytes(const kiln_model *m, const kiln_interval *ranges, uint32_t v,
                                   uint64_t max_arena_bytes, uint64_t *out, kiln_error *err)
{
    const kiln_value_type *type = &m->value_types[v];
    uint64_t extents[KILN_MAX_RANK];
    bool empty = false;
    if (type->shape.rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_LIMIT, "value %u: rank %u exceeds %d", v, type->shape.rank, KILN_MAX_RANK);
    for (uint32_t a = 0; a < type->shape.rank; a++) {
        kiln_interval bounds;
        if (!kiln_expr_bounds(&m->exprs, type->shape.axes[a], ranges, &bounds) || bounds.hi < 0)
            return kiln_fail(err, KILN_ERR_LIMIT, "value %u: the upper bound of axis %u overflows", v, a);
        extents[a] = (uint64_t)bounds.hi;
        empty = empty || bounds.hi == 0;
    }
    uint64_t bytes = empty ? 0 : kiln_dtype_size(type->dtype);
    for (uint32_t a = 0; !empty && a < type->shape.rank; a++)
        if (!kiln_mul_u64(bytes, extents[a], &bytes))
            return kiln_fail(err, KILN_ERR_LIMIT, "value %u: its size at the upper bound overflows 64 bits", v);
    if (!kiln_align_up_u64(bytes, KILN_ARENA_ALIGNMENT, &bytes))
        return kiln_fail(err, KILN_ERR_LIMIT, "value %u: its size at the upper bound overflows 64 bits", v);
    if (bytes > max_arena_bytes)
        return kiln_fail(err, KILN_ERR_LIMIT, "value %u needs %llu bytes, over the arena limit of %llu",
                         v, (unsigned long long)bytes, (unsigned long long)max_arena_bytes);
    *out = bytes;
    return KILN_OK;
}

static int larger_first(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return (x->node > y->node) - (x->node < y->node); /* stable: the plan is deterministic */
}

static int by_offset(const void *a, const void *b)
{
    const slot *x = *(const slot *const *)a, *y = *(const slot *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static bool lifetimes_overlap(const slot *a, const slot *b)
{
    return a->first_use <= b->last_use && b->first_use <= a->last_use;
}

/* Place slots greedily, largest first, at the lowest offset that no
 * already-placed slot with an overlapping lifetime occupies. */
static kiln_status place(slot *slots, uint32_t count, kiln_error *err)
{
    slot **live = malloc((count ? count : 1) * sizeof *live);
    if (!live)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning the arena");
    qsort(slots, count, sizeof *slots, larger_first);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t n = 0;
        for (uint32_t j = 0; j < i; j++)
            if (lifetimes_overlap(&slots[i], &slots[j]))
                live[n++] = &slots[j];
        qsort(live, n, sizeof *live, by_offset);
        uint64_t offset = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (live[j]->offset >= offset + slots[i].bytes)
                break; /* the gap before this neighbour fits */
            uint64_t end = live[j]->offset + live[j]->bytes;
            offset = end > offset ? end : offset;
        }
        slots[i].offset = offset;
    }
    free(live);
    return KILN_OK;
}

/* Lifetimes: a result lives from its node to its last reader; outputs to the end. */
static void set_lifetimes(const kiln_model *m, slot *slots)
{
    uint32_t first = kiln_model_first_node_value(m);
    for (uint32_t n = 0; n < m->node_count; n++) {
        slots[n].first_use = n;
        slots[n].last_use = n;
    }
    for (uint32_t n = 0; n < m->node_count; n++)
        for (uint32_t i = 0; i < m->nodes[n].input_count; i++)
            if (m->nodes[n].inputs[i] >= first)
                slots[m->nodes[n].inputs[i] - first].last_use = n;
    for (uint32_t o = 0; o < m->output_count; o++)
        if (m->outputs[o].value >= first)
            slots[m->outputs[o].value - first].last_use = m->node_count;
}

kiln_status kiln_plan_arena(const kiln_model *m, const kiln_interval *ranges, uint64_t max_arena_bytes,
                            uint64_t *offsets, uint64_t *sizes, kiln_arena_plan *plan, kiln_error *err)
{
    uint32_t first = kiln_model_first_node_value(m);
    kiln_interval *domain = ranges ? NULL : calloc(m->dim_count ? m->dim_count : 1, sizeof *domain);
    slot *slots = calloc(m->node_count ? m->node_count : 1, sizeof *slots);
    kiln_status status = KILN_OK;
    if ((!ranges && !domain) || !slots)
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning the arena");
    for (uint32_t d = 0; status == KILN_OK && domain && d < m->dim_count; d++)
        domain[d] = (kiln_interval){m->dims[d].min, m->dims[d].max};
    if (!ranges)
        ranges = domain;
    uint64_t total = 0;
    if (status == KILN_OK)
        set_lifetimes(m, slots);
    /* A node no output depends on is not run (liveness.h): it needs no bytes. */
    bool *live = status == KILN_OK ? malloc((m->node_count ? m->node_count : 1) * sizeof *live) : NULL;
    if (status == KILN_OK && !live)
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory planning the arena");
    if (status == KILN_OK)
        kiln_live_nodes(m, live);
    /*
     * A conv and the activation after it may run as one (fusion.h): the
     * activation's result is then written while the conv's operands are
     * read, so it lives from the conv on. (A stored plan is checked with
     * plain lifetimes: a session fuses only the pairs its plan keeps apart.)
     * Not for a producer that applies it in place (batch_norm): the session
     * fuses such a pair where the plan gives the activation x's own slot
     * or one apart from it (kiln_fusion_in_place), and lengthening would
     * cost every such pair a slot (DenseNet-121's arena at batch 8: 12.4
     * MiB, 15.8 lengthened).
     */
    uint32_t *readers = NULL;
    if (status == KILN_OK)
        status = kiln_fusion_readers(m, live, &readers, err);
    for (uint32_t n = 0; status == KILN_OK && n < m->node_count; n++) {
        uint32_t at = kiln_fusion_pair(m, live, n, readers, NULL);
        if (at != 0 && !m->opset[m->nodes[n].op].def->traits.activation_in_place)
            slots[at].first_use = n;
    }
    free(readers);
    /* Nodes that compute their results together (result_groups.h): every
     * member's result is written when the first runs, so lives from there. */
    for (uint32_t n = 0; status == KILN_OK && n < m->node_count;) {
        uint32_t count = kiln_result_group(m, live, n);
        for (uint32_t j = 1; j < count; j++)
            slots[n + j].first_use = n;
        n += count;
    }
    for (uint32_t n = 0; status == KILN_OK && n < m->node_count; n++) {
        slots[n].node = n;
        if (!live[n])
            continue; /* bytes 0 */
        status = max_value_bytes(m, ranges, first + n, max_arena_bytes, &slots[n].bytes, err);
        if (status == KILN_OK && !kiln_add_u64(total, slots[n].bytes, &total))
            status = kiln_fail(err, KILN_ERR_LIMIT, "the intermediates' total size overflows");
    }

    uint64_t arena = 0;
    if (status == KILN_OK && m->node_count <= KILN_PLAN_SHARING_LIMIT) {
        status = place(slots, m->node_count, err);
    } else if (status == KILN_OK) {
        uint64_t offset = 0;
        for (uint32_t n = 0; n < m->node_count; n++) {
            slots[n].offset = offset;
            offset += slots[n].bytes; /* bounded by total, which did not overflow */
        }
    }
    for (uint32_t i = 0; status == KILN_OK && i < m->node_count; i++) {
        uint64_t end = slots[i].offset + slots[i].bytes;
        arena = end > arena ? end : arena;
        if (offsets)
            offsets[slots[i].node] = slots[i].offset;
        if (sizes)
            sizes[slots[i].node] = slots[i].bytes;
    }
    if (status == KILN_OK && arena > max_arena_bytes)
        status = kiln_fail(err, KILN_ERR_LIMIT, "the arena at the upper bound needs %llu bytes, over the limit of %llu",
                           (unsigned long long)arena, (unsigned long long)max_arena_bytes);
    if (status == KILN_OK) {
        plan->arena_bytes = arena;
        plan->intermediate_bytes = total;
    }
    free(live);
    free(domain);
    free(slots);
    return status;
}

kiln_status kiln_check_stored_plan(const kiln_model *m, const uint64_t *needed, const kiln_stored_plan *stored,
                                   kiln_error *err)
{
    if (stored->count != m->node_count)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "it has %u slots for %u node results", stored->count,
                         m->node_count);
    /* Checking every pair is quadratic: past the sharing limit the runtime's own plan is used. */
    if (m->node_count > KILN_PLAN_SHARING_LIMIT)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "it covers more than %d results, too many to check",
                         KILN_PLAN_SHARING_LIMIT);
    for (uint32_t n = 0; n < stored->count; n++) {
        uint64_t end;
        if (stored->sizes[n] < needed[n])
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "the slot of node %u has %llu bytes, it needs %llu", n,
                             (unsigned long long)stored->sizes[n], (unsigned long long)needed[n]);
        if (stored->offsets[n] % KILN_ARENA_ALIGNMENT != 0)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "the slot of node %u is not %d-byte aligned", n,
                             KILN_ARENA_ALIGNMENT);
        if (!kiln_add_u64(stored->offsets[n], stored->sizes[n], &end) || end > stored->arena_bytes)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "the slot of node %u ends outside the arena", n);
    }
    slot *slots = calloc(m->node_count ? m->node_count : 1, sizeof *slots);
    if (!slots)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory checking the memory plan");
    set_lifetimes(m, slots);
    kiln_status status = KILN_OK;
    for (uint32_t a = 0; a < m->node_count && status == KILN_OK; a++)
        for (uint32_t b = a + 1; b < m->node_count && status == KILN_OK; b++) {
            /* Empty slots hold nothing, so they overlap nothing. */
            bool bytes_overlap = stored->sizes[a] && stored->sizes[b] &&
                                 stored->offsets[a] < stored->offsets[b] + stored->sizes[b] &&
                                 stored->offsets[b] < stored->offsets[a] + stored->sizes[a];
            if (bytes_overlap && lifetimes_overlap(&slots[a], &slots[b]))
                status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                   "the results of nodes %u and %u are live together but share bytes", a, b);
        }
    free(slots);
    return status;
}
