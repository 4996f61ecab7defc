/*
 * arithmetic.h — add, sub, mul, div and neg (arithmetic.c): their shape
 * rules and kernels, which tests also call directly.
 */
#ifndef KILN_LIB_ARITHMETIC_H
#define KILN_LIB_ARITHMETIC_H

#include "op_registry.h"

/* Shape rules and kernels of the elementwise family (arithmetic.c). */
kiln_status kiln_infer_binary_broadcast(const kiln_shape_context *ctx,
                                        const kiln_value_type *const *inputs, uint32_t input_count,
                                        kiln_value_type *out, kiln_error *err);
kiln_status kiln_infer_unary_numeric(const kiln_shape_context *ctx,
                                     const kiln_value_type *const *inputs, uint32_t input_count,
                                     kiln_value_type *out, kiln_error *err);
kiln_status kiln_kernel_add(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err);
kiln_status kiln_kernel_sub(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err);
kiln_status kiln_kernel_mul(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err);
kiln_status kiln_kernel_div(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err);
kiln_status kiln_kernel_neg(const kiln_tensor *const *inputs, uint32_t input_count,
                            kiln_tensor *output, kiln_error *err);

/* The registry's entry points for those kernels. */
kiln_status kiln_run_add(const kiln_kernel_call *call, kiln_error *err);
kiln_status kiln_run_sub(const kiln_kernel_call *call, kiln_error *err);
kiln_status kiln_run_mul(const kiln_kernel_call *call, kiln_error *err);
kiln_status kiln_run_div(const kiln_kernel_call *call, kiln_error *err);
kiln_status kiln_run_neg(const kiln_kernel_call *call, kiln_error *err);

#endif
