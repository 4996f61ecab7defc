/*
 * op_registry.h — the operators this runtime implements.
 *
 * Ops are versioned one by one: an op's semantics never change within a
 * version, and each registry entry declares the version range its shape
 * rule and kernel implement. Artifacts name (op, version) pairs in their
 * opset table; the loader resolves each against this registry.
 */
#ifndef KILN_LIB_OP_REGISTRY_H
#define KILN_LIB_OP_REGISTRY_H

#include "kernel_context.h"
#include "shape.h"
#include "shape_context.h"
#include "tensor.h"

struct kiln_node_attribute;


/*
 * Derive the output type from the input types, proving every precondition
 * over the whole declared domain or failing with KILN_ERR_INVALID_PROGRAM.
 */
typedef kiln_status (*kiln_shape_rule)(const kiln_shape_context *ctx,
                                       const kiln_value_type *const *inputs, uint32_t input_count,
                                       kiln_value_type *out, kiln_error *err);

/* One node's kernel invocation: `output` has its shape set and its buffer sized. */
typedef struct kiln_kernel_call {
    const kiln_tensor *const *inputs;
    uint32_t input_count;
    kiln_tensor *output;
    const struct kiln_node_attribute *attributes; /* sorted by name */
    uint32_t attribute_count;
    kiln_kernel_context *context; /* the calling session's (kernel_context.h); NULL: reference, 1 thread */
} kiln_kernel_call;

/* Compute the call's output from its inputs and attributes. */
typedef kiln_status (*kiln_kernel)(const kiln_kernel_call *call, kiln_error *err);

/* A kernel of an op without attributes, called directly by tests. */
typedef kiln_status (*kiln_tensor_kernel)(const kiln_tensor *const *inputs, uint32_t input_count,
                                          kiln_tensor *output, kiln_error *err);

typedef struct kiln_op_def {
    const char *name;
    const struct kiln_attribute_spec *attributes; /* accepted; NULL-name terminated, or NULL for none */
    uint32_t min_version;
    uint32_t max_version;
    uint32_t min_inputs;
    uint32_t max_inputs;
    kiln_shape_rule infer;
    kiln_kernel run;
} kiln_op_def;

/*
 * The registry is the concatenation of op families, one per source file
 * (arithmetic.c, unary.c, binary.c, reduce.c,
 * linalg.c, shape.c, gather.c, norm.c, conv.c,
 * pool.c, resize.c, einsum.c, generate.c, topk.c,
 * scatter.c, recurrent.c, grid_sample.c, reverse_sequence.c,
 * det.c, max_unpool.c), each
 * exporting its table.
 */
typedef struct kiln_op_family {
    const kiln_op_def *ops;
    uint32_t count;
} kiln_op_family;

extern const kiln_op_family kiln_ops_elementwise;
extern const kiln_op_family kiln_ops_unary;
extern const kiln_op_family kiln_ops_binary;
extern const kiln_op_family kiln_ops_reduce;
extern const kiln_op_family kiln_ops_linalg;
extern const kiln_op_family kiln_ops_shape;
extern const kiln_op_family kiln_ops_gather;
extern const kiln_op_family kiln_ops_norm;
extern const kiln_op_family kiln_ops_conv;
extern const kiln_op_family kiln_ops_pool;
extern const kiln_op_family kiln_ops_resize;
extern const kiln_op_family kiln_ops_einsum;
extern const kiln_op_family kiln_ops_generate;
extern const kiln_op_family kiln_ops_topk;
extern const kiln_op_family kiln_ops_scatter;
extern const kiln_op_family kiln_ops_recurrent;
extern const kiln_op_family kiln_ops_grid_sample;
extern const kiln_op_family kiln_ops_reverse_sequence;
extern const kiln_op_family kiln_ops_det;
extern const kiln_op_family kiln_ops_max_unpool;

/* @return the registry entry called `name`, or NULL. */
const kiln_op_def *kiln_op_find(const char *name);

/* @return the registry entry implementing (name, version), or NULL. */
const kiln_op_def *kiln_op_find_version(const char *name, uint32_t version);

uint32_t kiln_op_count(void);
const kiln_op_def *kiln_op_at(uint32_t index);

/* Refuse operands of different dtypes (kiln never promotes implicitly). */
kiln_status kiln_require_same_dtype(const kiln_shape_context *ctx, const kiln_value_type *a,
                                    const kiln_value_type *b, kiln_error *err);

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
