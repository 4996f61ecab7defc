/*
 * kernel_context.h — what a kernel called by a session may use besides its
 * operands: the session's thread count, its oneDNN engine and stream, a
 * state slot of its own node that lives as long as the session, which
 * of its operands are program weights, and the program's state tensors.
 *
 * Why a slot per node: a fast path builds objects that are expensive to
 * make and depend only on the node and the concrete shapes (a oneDNN
 * primitive, its scratchpad). The kernel keeps them in its node's slot
 * keyed by shape, so a run at a shape seen before builds nothing: kiln
 * allocates only on the first run at a new shape (or one evicted from the
 * slot's small cache). oneDNN's execute call itself allocates a few small
 * blocks per call, a fixed cost (spec/opset.md, "Fast paths"; measured by
 * tests/plan/test_memory_plan.c). The session owns the slots and releases them
 * when it is freed; a program stays immutable and shareable.
 *
 * Kernels called directly (tests) get a NULL context and run the portable
 * reference path on one thread: a fast path is an optimisation, never a
 * different semantics.
 */
#ifndef KILN_LIB_KERNEL_CONTEXT_H
#define KILN_LIB_KERNEL_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

/* Operands a context describes one by one (bit masks of a uint32_t): the first 32 of a node. */
#define KILN_CONTEXT_OPERANDS 32

/* A node's state: whatever its kernel keeps between runs of one session. */
typedef struct kiln_node_state {
    void *data;                  /* NULL until the kernel first stores something */
    void (*release)(void *data); /* frees `data`; called by kiln_session_free */
} kiln_node_state;

/*
 * One state tensor's storage (state_decl.h), which a session holds for
 * every state of its program: a buffer of the declared capacity and the
 * rows it holds now. The state ops (ops/state.c) read rows 0..length-1
 * and append after them; an append records the length its run leaves
 * (`appended`, `pending`), which the session commits only when the whole
 * run succeeds, so a failed run leaves every state as it was.
 */
typedef struct kiln_state_buffer {
    const struct kiln_state_decl *decl;
    void *data;      /* the capacity's bytes */
    int64_t length;  /* rows along decl->axis that hold data */
    int64_t pending; /* the length an append of this run leaves */
    bool appended;
} kiln_state_buffer;

struct kiln_onednn_session; /* onednn.h: engine and stream of one session */
struct kiln_tensor;

/* The activations a conv may apply to its own result (fusion.h). */
typedef enum kiln_activation_kind {
    KILN_ACTIVATION_NONE,
    KILN_ACTIVATION_RELU,
    KILN_ACTIVATION_LEAKY_RELU,
    KILN_ACTIVATION_CLIP,
    KILN_ACTIVATION_SILU, /* oneDNN's swish, alpha 1: within 8 ulp, not exact (spec/opset.md, "Fast paths") */
    KILN_ACTIVATION_HARD_SWISH, /* oneDNN's hardswish: within a few ulp, not exact (the same) */
} kiln_activation_kind;

typedef struct kiln_fused_activation {
    kiln_activation_kind kind;
    float alpha;  /* leaky_relu: the slope below 0 */
    float lo, hi; /* clip: the bounds as f32 values (relu: 0 and +inf) */
} kiln_fused_activation;

/*
 * The activation node after the node being run, offered to its kernel:
 * a kernel that applies `activation` to its result writes `output` (the
 * activation node's result) instead of its own, sets `applied`, and the
 * session skips the activation node. A kernel may always decline.
 */
typedef struct kiln_fusion_offer {
    kiln_fused_activation activation;
    struct kiln_tensor *output;
    bool output_may_be_channels_last; /* layout.h: whether `output` may be left channels-last */
    bool applied;
} kiln_fusion_offer;

/*
 * Which implementation ran a node, for profiles (kiln bench --profile): a
 * kernel that leaves the reference loops says so in kiln_kernel_context.path
 * (the session sets KILN_PATH_REFERENCE before each call;
 * kiln_call_report_path in op_registry.h). When a kernel applied an
 * offered activation, the profile records the activation node as fused
 * into this one, and this node's path with "+act" (session_profile.h).
 */
typedef enum kiln_kernel_path {
    KILN_PATH_REFERENCE, /* the portable reference loops */
    KILN_PATH_VECTOR,    /* kiln's own vectorized or blocked loops */
    KILN_PATH_ONEDNN,    /* a oneDNN primitive */
    KILN_PATH_VIEW,      /* no arithmetic: a copy, view or metadata-only result */
} kiln_kernel_path;

/* One session's execution context, handed to every kernel it calls. */
typedef struct kiln_kernel_context {
    uint32_t threads;                   /* >= 1: threads a kernel may use */
    bool reference_only;                /* run the portable reference kernels only */
    struct kiln_onednn_session *onednn; /* NULL when built without oneDNN or reference_only */
    kiln_node_state *state;             /* the slot of the node being run */
    /*
     * Bit i set: operand i of the node being run is a weight of the program
     * (immutable, at the same address on every run of the session), so a
     * fast path may repack it once instead of on every run.
     */
    uint32_t constant_operands;
    kiln_fusion_offer *fusion; /* NULL: no activation offered to the node being run */
    /*
     * Channels-last data (layout.h). Bit i of channels_last_operands set:
     * operand i is channels-last, which only a kernel of a node that reads
     * that layout sees. A kernel that writes its result channels-last,
     * allowed where result_may_be_channels_last (or the fusion offer's
     * flag) says so, sets wrote_channels_last. Only fast paths see such
     * operands: the session converts them before a reference kernel runs.
     */
    uint32_t channels_last_operands;
    bool result_may_be_channels_last;
    bool wrote_channels_last;
    /*
     * Bounds on magnitudes (value_bound.h): every element of operand 0 is
     * finite with |x| <= operand_bound, or operand_bound is +inf (nothing
     * known). A kernel that can bound the value it writes sets
     * result_bound (the session sets it to +inf before the call).
     */
    double operand_bound;
    double result_bound;
    kiln_kernel_path path; /* set by a kernel that ran other than the reference loops */
    kiln_state_buffer *states; /* the program's states, in its order; NULL when it has none */
    uint32_t state_count;
    /*
     * State views (runtime/state_view.h). A state op leaves its result in
     * the state's storage instead of copying the rows out by setting
     * view_of and view_rows (the session clears view_of before each call).
     * Bit i of strided_operands set: operand i is such a view, its
     * elements at the element strides operand_strides[i]; only a kernel of
     * an op with the strided_operands trait sees one (op_def.h).
     */
    const kiln_state_buffer *view_of;
    int64_t view_rows;
    uint32_t strided_operands;
    const int64_t *operand_strides[KILN_CONTEXT_OPERANDS];
} kiln_kernel_context;

#endif
