/* section_read.c — see section_read.h. */
#include "section_read.h"

#include <stdlib.h>

#include "error.h"

void *kiln_section_alloc_array(uint32_t count, size_t item_size)
{
    return calloc(count ? count : 1, item_size);
}

kiln_status kiln_section_out_of_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory decoding the program");
}

kiln_status kiln_section_read_array(kiln_reader *r, uint32_t limit, size_t min_record_size, const char *what,
                                    size_t item_size, void **items, uint32_t *count, kiln_error *err)
{
    KILN_TRY(kiln_read_count(r, limit, min_record_size, what, count, err));
    *items = kiln_section_alloc_array(*count, item_size);
    return *items ? KILN_OK : kiln_section_out_of_memory(err);
}

kiln_status kiln_section_read_dtype(kiln_reader *r, kiln_dtype *out, kiln_error *err)
{
    uint8_t code;
    KILN_TRY(kiln_read_u8(r, &code, err));
    if (kiln_dtype_size((kiln_dtype)code) == 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "%s: unknown dtype code %u", r->context, code);
    *out = (kiln_dtype)code;
    return KILN_OK;
}

kiln_status kiln_section_read_rank(kiln_reader *r, uint32_t *out, kiln_error *err)
{
    uint8_t rank;
    KILN_TRY(kiln_read_u8(r, &rank, err));
    if (rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: rank %u exceeds %d", r->context, rank, KILN_MAX_RANK);
    *out = rank;
    return KILN_OK;
}
