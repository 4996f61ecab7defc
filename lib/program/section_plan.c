/* section_plan.c — see section_plan.h. */
#include "section_plan.h"

#include <stdlib.h>

#include "error.h"
#include "memory_plan.h"
#include "section_read.h"

kiln_status kiln_stored_plan_encode(const kiln_model *m, kiln_writer *w, kiln_error *err)
{
    kiln_arena_plan plan;
    uint64_t *offsets = calloc(m->node_count + 1, sizeof *offsets), *sizes = calloc(m->node_count + 1, sizeof *sizes);
    kiln_status status = offsets && sizes ? kiln_plan_arena(m, NULL, UINT64_MAX, offsets, sizes, &plan, err)
                                          : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the memory plan");
    if (status == KILN_OK) {
        kiln_write_u64(w, plan.arena_bytes);
        kiln_write_u64(w, plan.intermediate_bytes);
        kiln_write_u32(w, m->node_count);
        for (uint32_t n = 0; n < m->node_count; n++) {
            kiln_write_u64(w, offsets[n]);
            kiln_write_u64(w, sizes[n]);
        }
    }
    free(offsets);
    free(sizes);
    return status;
}

kiln_status kiln_stored_plan_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                    kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section PLAN");
    kiln_stored_plan *plan = &m->stored_plan;
    uint32_t count;
    KILN_TRY(kiln_read_u64(&r, &plan->arena_bytes, err));
    KILN_TRY(kiln_read_u64(&r, &plan->intermediate_bytes, err));
    KILN_TRY(kiln_read_count(&r, limits->max_nodes, 16, "plan slots", &count, err));
    plan->offsets = calloc(count + 1, sizeof *plan->offsets);
    plan->sizes = calloc(count + 1, sizeof *plan->sizes);
    if (!plan->offsets || !plan->sizes)
        return kiln_section_out_of_memory(err);
    plan->count = count;
    for (uint32_t n = 0; n < count; n++) {
        KILN_TRY(kiln_read_u64(&r, &plan->offsets[n], err));
        KILN_TRY(kiln_read_u64(&r, &plan->sizes[n], err));
    }
    KILN_TRY(kiln_reader_expect_end(&r, err));
    plan->present = true;
    return KILN_OK;
}
