/*
 * tensor_fixture.h — fresh tensors for tests that call kernels directly.
 * A tensor that cannot be made fails the test with the library's message.
 */
#ifndef KILN_TESTS_TENSOR_FIXTURE_H
#define KILN_TESTS_TENSOR_FIXTURE_H

#include <stdint.h>

#include <kiln/kiln.h>

#include "tensor.h"

/* A tensor of zeros, as kiln_tensor_new makes it. */
kiln_tensor *new_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape);

/* A tensor whose every byte is 0x7F: an element a kernel forgets to write
 * keeps a value no reference produces, so the comparison catches it. */
kiln_tensor *new_poisoned_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape);

#endif
