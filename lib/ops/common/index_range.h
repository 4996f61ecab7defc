/*
 * index_range.h — reading index tensors and checking each index before it
 * is used (gather, scatter, max_unpool): a bad index is named by its
 * position in the indices tensor and its value, never read through.
 */
#ifndef KILN_LIB_INDEX_CHECK_H
#define KILN_LIB_INDEX_CHECK_H

#include "tensor.h"

/* The element at flat position `i` of an i32 or i64 tensor. */
int64_t kiln_index_at(const kiln_tensor *t, uint64_t i);

/* Render flat position `flat` of a tensor of `shape` as "[i, j, ...]". */
void kiln_format_position(uint64_t flat, uint32_t rank, const int64_t *shape, char *text, size_t size);

/*
 * Normalise index `v` (negative counts from the end) into 0..extent-1, or
 * fail: "<op>: index 7 at indices position [1, 2] is outside -3..2"
 * (KILN_ERR_RUNTIME). `out` may be NULL to only check.
 */
kiln_status kiln_normalise_index(const char *op, const kiln_tensor *indices, uint64_t position, int64_t v,
                                 int64_t extent, int64_t *out, kiln_error *err);

#endif
