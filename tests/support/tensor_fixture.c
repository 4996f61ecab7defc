/* tensor_fixture.c — fresh and poisoned tensors (tensor_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tensor_fixture.h"

kiln_tensor *new_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = NULL;
    kiln_error err = {0};
    if (kiln_tensor_new(dtype, rank, shape, &t, &err) != KILN_OK)
        fail_msg("kiln_tensor_new: %s", err.message);
    return t;
}

kiln_tensor *new_poisoned_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = new_tensor(dtype, rank, shape);
    if (t->byte_size)
        memset(t->data, 0x7F, t->byte_size);
    return t;
}
