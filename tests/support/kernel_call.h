/*
 * kernel_call.h — running one op's registered kernel directly, without a
 * program or session around it.
 */
#ifndef KILN_TESTS_KERNEL_CALL_H
#define KILN_TESTS_KERNEL_CALL_H

#include <stdint.h>

#include <kiln/kiln.h>

#include "attribute.h"
#include "tensor.h"

/*
 * Fill `output` with 0x7F bytes (a kernel that skips an element must not
 * pass on a zeroed buffer), then run the kernel registered for `name` (the
 * test fails if there is none) on one thread.
 * @return the kernel's status.
 */
kiln_status call_kernel(const char *name, uint32_t input_count, const kiln_tensor *const *inputs,
                        kiln_tensor *output, uint32_t attribute_count, const kiln_node_attribute *attributes,
                        kiln_error *err);

#endif
