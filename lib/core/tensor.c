/* tensor.c — dense C-ordered tensors. */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"

kiln_status kiln_shape_sizes(kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                             uint64_t *element_count, size_t *byte_size, kiln_error *err)
{
    size_t element_size = kiln_dtype_size(dtype);
    uint64_t count = 1, bytes;
    bool empty = false;
    if (element_size == 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "unknown dtype code %d", (int)dtype);
    if (rank > KILN_MAX_RANK)
        return kiln_fail(err, KILN_ERR_LIMIT, "rank %u exceeds the maximum rank %d", rank, KILN_MAX_RANK);
    for (uint32_t i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "axis %u has negative extent %lld",
                             i, (long long)shape[i]);
        empty = empty || shape[i] == 0;
    }
    /* A zero extent anywhere means no elements, whatever the others: the
     * product is not formed, so (H, H, 0) is not refused as an overflow
     * while (0, H, H), whose running product stays 0, is accepted. */
    for (uint32_t i = 0; !empty && i < rank; i++)
        if (!kiln_mul_u64(count, (uint64_t)shape[i], &count))
            return kiln_fail(err, KILN_ERR_LIMIT, "element count overflows 64 bits");
    if (empty)
        count = 0;
    if (!kiln_mul_u64(count, element_size, &bytes) || bytes > SIZE_MAX)
        return kiln_fail(err, KILN_ERR_LIMIT, "tensor of %llu elements is too large to address",
                         (unsigned long long)count);
    *element_count = count;
    *byte_size = (size_t)bytes;
    return KILN_OK;
}

void kiln_tensor_view_init(kiln_tensor *view, kiln_dtype dtype, uint32_t rank,
                           const int64_t *shape, void *data)
{
    memset(view, 0, sizeof *view);
    view->dtype = dtype;
    view->rank = rank;
    view->element_count = 1;
    for (uint32_t i = 0; i < rank; i++) {
        view->shape[i] = shape[i];
        view->element_count *= (uint64_t)shape[i];
    }
    view->byte_size = (size_t)view->element_count * kiln_dtype_size(dtype);
    view->data = data;
    view->owns_data = false;
}

kiln_status kiln_tensor_new(kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                            kiln_tensor **out, kiln_error *err)
{
    uint64_t count;
    size_t bytes;
    *out = NULL;
    if (rank > 0 && !shape)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "shape is NULL for rank %u", rank);
    KILN_TRY(kiln_shape_sizes(dtype, rank, shape, &count, &bytes, err));
    kiln_tensor *t = calloc(1, sizeof *t);
    /* calloc(0) may return NULL; always allocate at least one byte so data
     * is a valid pointer for empty tensors too. */
    void *data = calloc(bytes ? bytes : 1, 1);
    if (!t || !data) {
        free(t);
        free(data);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a %zu-byte tensor", bytes);
    }
    kiln_tensor_view_init(t, dtype, rank, shape, data);
    t->owns_data = true;
    *out = t;
    return KILN_OK;
}

/* The checks of kiln_tensor_wrap and kiln_tensor_rewrap; *bytes the size the shape needs. */
static kiln_status check_borrowed(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const void *data,
                                  size_t size, kiln_error *err)
{
    uint64_t count;
    size_t bytes;
    if (kiln_dtype_size(dtype) == 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dtype %d is not a kiln dtype", (int)dtype);
    if (rank > 0 && !shape)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "shape is NULL for rank %u", rank);
    KILN_TRY(kiln_shape_sizes(dtype, rank, shape, &count, &bytes, err));
    if (size != bytes)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "the buffer holds %zu bytes; a %s tensor of this shape needs %zu", size,
                         kiln_dtype_name(dtype), bytes);
    if (!data && bytes)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "data is NULL for a %zu-byte tensor", bytes);
    if ((uintptr_t)data % kiln_dtype_size(dtype) != 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "data at %p is not aligned to the %zu-byte elements of %s: copy it to an aligned buffer",
                         data, kiln_dtype_size(dtype), kiln_dtype_name(dtype));
    return KILN_OK;
}

kiln_status kiln_tensor_wrap(kiln_dtype dtype, uint32_t rank, const int64_t *shape, void *data, size_t size,
                             kiln_tensor **out, kiln_error *err)
{
    *out = NULL;
    KILN_TRY(check_borrowed(dtype, rank, shape, data, size, err));
    kiln_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a tensor");
    kiln_tensor_view_init(t, dtype, rank, shape, data);
    *out = t;
    return KILN_OK;
}

kiln_status kiln_tensor_rewrap(kiln_tensor *tensor, kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                               void *data, size_t size, kiln_error *err)
{
    if (!tensor || tensor->owns_data)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "only a tensor made by kiln_tensor_wrap can be rewrapped");
    KILN_TRY(check_borrowed(dtype, rank, shape, data, size, err));
    kiln_tensor_view_init(tensor, dtype, rank, shape, data);
    return KILN_OK;
}

void kiln_tensor_free(kiln_tensor *tensor)
{
    if (!tensor)
        return;
    if (tensor->owns_data)
        free(tensor->data);
    free(tensor);
}

kiln_dtype kiln_tensor_dtype(const kiln_tensor *tensor) { return tensor->dtype; }
uint32_t kiln_tensor_rank(const kiln_tensor *tensor) { return tensor->rank; }
const int64_t *kiln_tensor_shape(const kiln_tensor *tensor) { return tensor->shape; }
uint64_t kiln_tensor_element_count(const kiln_tensor *tensor) { return tensor->element_count; }
size_t kiln_tensor_byte_size(const kiln_tensor *tensor) { return tensor->byte_size; }
void *kiln_tensor_data(kiln_tensor *tensor) { return tensor->data; }
const void *kiln_tensor_const_data(const kiln_tensor *tensor) { return tensor->data; }

int kiln_tensor_format_shape(const kiln_tensor *tensor, char *buffer, size_t size)
{
    char text[KILN_MAX_RANK * 24 + 8];
    size_t used = 0;
    text[used++] = '(';
    for (uint32_t i = 0; i < tensor->rank; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%lld", i ? ", " : "",
                                 (long long)tensor->shape[i]);
    if (tensor->rank == 1)
        text[used++] = ',';
    text[used++] = ')';
    text[used] = '\0';
    return snprintf(buffer, size, "%s", text);
}
