/* tensor.h — the tensor struct behind the opaque public handle. */
#ifndef KILN_LIB_TENSOR_H
#define KILN_LIB_TENSOR_H

#include <kiln/kiln.h>

struct kiln_tensor {
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    uint64_t element_count;
    size_t byte_size;
    void *data;
    bool owns_data; /* false for views into a session arena */
};

/*
 * Compute element count and byte size of a shape, refusing negative extents,
 * rank > KILN_MAX_RANK and overflow.
 */
kiln_status kiln_shape_sizes(kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                             uint64_t *element_count, size_t *byte_size, kiln_error *err);

/* Point `view` at `data` with the given shape; sizes must already be valid. */
void kiln_tensor_view_init(kiln_tensor *view, kiln_dtype dtype, uint32_t rank,
                           const int64_t *shape, void *data);

#endif
