/*
 * op_def.h — the op record: what one op is to the runtime. Its name, the
 * versions and operand counts it takes, its shape rule, its reference
 * kernel and optional fast path, and the traits planning reads (how it
 * takes channels-last operands, how its result's magnitude follows from
 * its operands', which activation it is or can apply).
 *
 * The bottom of the ops layer: the helpers every family shares (common/)
 * and the fast paths (onednn/) work on these types and include nothing
 * above them; the families (one .c per family in ops/) and the registry (op_registry.h)
 * stand on all three.
 */
#ifndef KILN_LIB_OP_DEF_H
#define KILN_LIB_OP_DEF_H

#include <stdbool.h>

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

/* Say which implementation ran `call` (kernel_context.h, for profiles); nothing without a session's context. */
static inline void kiln_call_report_path(const kiln_kernel_call *call, kiln_kernel_path path)
{
    if (call->context)
        call->context->path = path;
}

/* Compute the call's output from its inputs and attributes. */
typedef kiln_status (*kiln_kernel)(const kiln_kernel_call *call, kiln_error *err);

/* A kernel of an op without attributes, called directly by tests. */
typedef kiln_status (*kiln_tensor_kernel)(const kiln_tensor *const *inputs, uint32_t input_count,
                                          kiln_tensor *output, kiln_error *err);

/* How a node reads operands left in oneDNN's channels-last layout (plan/layout.h). */
typedef enum kiln_layout_role {
    KILN_LAYOUT_PLAIN_ONLY = 0,  /* it needs row-major operands (the default) */
    KILN_LAYOUT_READS_OPERAND_0, /* its fast path reads operand 0 in either layout (conv, pools) */
    KILN_LAYOUT_ELEMENTWISE,     /* loops over memory in order: on operands of the result's shape its
                                  * result has its operands' layout */
    KILN_LAYOUT_CHANNELWISE,     /* per-channel parameters: its result has operand 0's layout (batch_norm) */
    /*
     * A trait: ELEMENTWISE, and besides, on an operand of the result's
     * shape and a per-channel one ([N or 1, C, 1, ...]: a squeeze-excite
     * scale), its kernel reads the first in either layout (add, sub, mul,
     * div). kiln_layout_role_of gives such a node CHANNELWISE or
     * CHANNELWISE_1 (the operand of the result's shape), never this.
     */
    KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL,
    KILN_LAYOUT_CHANNELWISE_1, /* CHANNELWISE with operand 1 the one that has the result's layout */
    /*
     * Joins its operands along the channel axis (concat with axis 1, rank 3
     * to 5, f32, at most 32 operands; any other concat is PLAIN_ONLY): when
     * its result may be channels-last its kernel takes each operand in
     * either layout and, when any is channels-last, writes a channels-last
     * result (each position's channels, operand after operand); else the
     * session makes them all row-major first.
     */
    KILN_LAYOUT_CHANNEL_CONCAT,
} kiln_layout_role;

/* How a bound on an f32 result's magnitude follows from its operands' (plan/value_bound.h). */
typedef enum kiln_magnitude_rule {
    KILN_MAGNITUDE_UNKNOWN = 0,       /* nothing follows (the default) */
    KILN_MAGNITUDE_NOT_ABOVE_OPERAND, /* |y| <= |x| (relu; ops that only move x's elements: reshape, slice) */
    KILN_MAGNITUDE_SLOPE_ALPHA,       /* |y| <= max(1, |alpha|) |x| (leaky_relu) */
    KILN_MAGNITUDE_CLIPPED,           /* |y| <= min(|x|, max(|min|, |max|)) (clip) */
    KILN_MAGNITUDE_SUM,               /* |y| <= |a| + |b| (add, sub) */
    KILN_MAGNITUDE_LARGEST_OPERAND,   /* |y| <= the largest operand's |x| (concat) */
} kiln_magnitude_rule;

/* How an op touches the session's state tensors (kernel_context.h). */
typedef enum kiln_state_access {
    KILN_STATE_NONE = 0, /* it does not (the default) */
    KILN_STATE_READS,    /* it reads the rows a state holds */
    KILN_STATE_APPENDS,  /* it appends rows to a state, in place */
} kiln_state_access;

/*
 * What planning needs to know about an op, declared by the op itself so
 * that no planner compares op names: adding an op to a family means
 * stating its traits in its record, nowhere else.
 */
typedef struct kiln_op_traits {
    kiln_layout_role layout;
    kiln_magnitude_rule magnitude;
    /* This op is an activation the node before it may apply to its own
     * result (plan/fusion.h); its attributes give the parameters. */
    kiln_activation_kind activation;
    /* This op's fast path can apply the activation of the node after it. */
    bool applies_activation;
    /* ... element by element, each result from the same element of operand
     * 0 alone (batch_norm): it may write the activation's result over that
     * operand's own slot, so the memory plan does not lengthen the
     * activation's lifetime for it (plan/fusion.h, kiln_fusion_in_place). */
    bool activation_in_place;
    /* It reads or extends a state tensor, the one its `state` attribute
     * names (ops/state.c): the model check lets each method append to a
     * state once, and planning never runs it for nothing. */
    kiln_state_access state_access;
    /* Its kernels read an operand the session marks in strided_operands
     * through operand_strides (kernel_context.h): a state view is read
     * where the rows are, not packed first (einsum). Half-precision
     * operands are always packed. */
    bool strided_operands;
} kiln_op_traits;

/*
 * A fast path: run `call` and set *ran, or decline (*ran = false, KILN_OK)
 * and leave the call to the reference kernel. A fast path may read
 * channels-last operands where the op's layout trait says so; the
 * reference kernel always gets row-major operands (the session converts
 * them first), so no kernel ever asks to be called again.
 */
typedef kiln_status (*kiln_fast_kernel)(const kiln_kernel_call *call, bool *ran, kiln_error *err);

struct kiln_op_def;

/*
 * Several results of one computation are separate ops, one node each
 * (lstm, lstm_last_hidden and lstm_last_cell; top_k and top_k_indices),
 * since a node has one result. Nodes next to each other whose ops share
 * this kernel and read the same operands with the same attributes run it
 * once (plan/result_groups.h): it writes results[i], the result of the
 * node whose op is ops[i], for every i < count, each exactly as that op's
 * own kernel would. call->output is results[0].
 */
typedef kiln_status (*kiln_together_kernel)(const kiln_kernel_call *call, kiln_tensor *const *results,
                                            const struct kiln_op_def *const *ops, uint32_t count, kiln_error *err);

/* An inclusive range of versions or operand counts. */
typedef struct kiln_op_range {
    uint32_t min;
    uint32_t max;
} kiln_op_range;

/* One op: its name, the versions and operand counts it takes, its rules and kernels, its traits. */
typedef struct kiln_op_def {
    const char *name;
    kiln_op_range versions;
    kiln_op_range inputs;
    const struct kiln_attribute_spec *attributes; /* accepted; NULL-name terminated, or NULL for none */
    kiln_shape_rule infer;
    kiln_kernel run;       /* the portable reference kernel: the semantics, and the test oracle */
    kiln_fast_kernel fast; /* NULL, or a fast path (ops/onednn/) tried first in a session */
    kiln_op_traits traits;
    kiln_together_kernel together; /* NULL, or the kernel computing this op's result with its kin's */
} kiln_op_def;

#endif
