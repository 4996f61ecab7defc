/* kernel_call.c — one kernel run directly (kernel_call.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "kernel_call.h"
#include "op_registry.h"

kiln_status call_kernel(const char *name, uint32_t input_count, const kiln_tensor *const *inputs,
                        kiln_tensor *output, uint32_t attribute_count, const kiln_node_attribute *attributes,
                        kiln_error *err)
{
    const kiln_op_def *op = kiln_op_find(name);
    assert_non_null(op);
    memset(output->data, 0x7F, output->byte_size);
    kiln_kernel_call call = {inputs, input_count, output, attributes, attribute_count, NULL};
    return op->run(&call, err);
}
