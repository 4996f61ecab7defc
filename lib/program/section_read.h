/*
 * section_read.h — what the decoders of the program sections share
 * (section_read.c): record arrays read with their count, dtype and rank
 * codes checked as they are read.
 */
#ifndef KILN_LIB_SECTION_READ_H
#define KILN_LIB_SECTION_READ_H

#include "format/cursor.h"
#include "dtype.h"

/* A zeroed array of `count` items of `item_size` bytes (one item when
 * `count` is 0, so that success is never a NULL). NULL when out of memory. */
void *kiln_section_alloc_array(uint32_t count, size_t item_size);

/* The failure of a decoder that ran out of memory. @return KILN_ERR_OUT_OF_MEMORY */
kiln_status kiln_section_out_of_memory(kiln_error *err);

/*
 * Read a record count (checked against `limit` and the bytes left, as
 * kiln_read_count does) and allocate a zeroed array of that many items.
 * The count is stored only once the array exists, so a model released
 * after a failure here never walks a count without its array.
 */
kiln_status kiln_section_read_array(kiln_reader *r, uint32_t limit, size_t min_record_size, const char *what,
                                    size_t item_size, void **items, uint32_t *count, kiln_error *err);

/* Fill `array` and `count` together, and only on success; returns the
 * failure from the enclosing function otherwise. */
#define KILN_SECTION_READ_ARRAY(reader, limit, min_record_size, what, array, count, err)                   \
    do {                                                                                                 \
        void *items_;                                                                                    \
        uint32_t count_;                                                                                 \
        KILN_TRY(kiln_section_read_array(reader, limit, min_record_size, what, sizeof *(array), &items_, \
                                         &count_, err));                                                 \
        (array) = items_;                                                                                \
        (count) = count_;                                                                                \
    } while (0)

/* Read a dtype code; one no dtype has → MALFORMED. Whether this runtime
 * holds the dtype is judged apart (section_dtypes.h). */
kiln_status kiln_section_read_dtype(kiln_reader *r, kiln_dtype *out, kiln_error *err);

/* Read a rank; above KILN_MAX_RANK → LIMIT. */
kiln_status kiln_section_read_rank(kiln_reader *r, uint32_t *out, kiln_error *err);

#endif
