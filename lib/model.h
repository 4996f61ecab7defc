/*
 * model.h — the in-memory program model shared by the builder, the section
 * codec, the loader and the executor.
 *
 * Values are numbered canonically: inputs first (in declaration order),
 * then weights, then one result per node in node order. A node may only
 * use values numbered below its own result, so the graph is acyclic and
 * topologically ordered by construction.
 */
#ifndef KILN_LIB_MODEL_H
#define KILN_LIB_MODEL_H

#include <kiln/kiln.h>

#include "shape_expr.h"

struct kiln_op_def;

typedef struct kiln_metadata_entry {
    char *key;
    char *value;
} kiln_metadata_entry;

/* A dim takes the values min..max that are multiples of multiple_of (1: all). */
typedef struct kiln_dim_decl {
    char *name;
    int64_t min;
    int64_t max;
    int64_t multiple_of;
} kiln_dim_decl;

/*
 * The smallest and largest values of a dim (valid once the model is
 * checked: some multiple lies in min..max, so the first is at most max
 * and cannot overflow; before that, check kiln_dim_last(d) >= min).
 */
static inline int64_t kiln_dim_first(const kiln_dim_decl *d)
{
    int64_t r = d->min % d->multiple_of;
    return r == 0 ? d->min : d->min + (d->multiple_of - r);
}

static inline int64_t kiln_dim_last(const kiln_dim_decl *d)
{
    return d->max - d->max % d->multiple_of;
}

/* A name for an expression over dims ("dim two_seq = 2*seq"); shapes may
 * use the name, which stands for the expression. */
typedef struct kiln_derived_dim {
    char *name;
    uint32_t expr;
} kiln_derived_dim;

/* A shape as one expression id per axis. */
typedef struct kiln_shape {
    uint32_t rank;
    uint32_t axes[KILN_MAX_RANK];
} kiln_shape;

/* What is known statically about a value: dtype and symbolic shape. */
typedef struct kiln_value_type {
    kiln_dtype dtype;
    kiln_shape shape;
} kiln_value_type;

typedef struct kiln_input_decl {
    char *name;
    kiln_value_type type;
} kiln_input_decl;

typedef struct kiln_output_decl {
    char *name;
    uint32_t value;
} kiln_output_decl;

typedef struct kiln_weight_decl {
    char *name;
    kiln_weight_kind kind;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    uint64_t byte_size;
    uint64_t data_offset;  /* within the weight data section */
    const uint8_t *data;   /* borrowed: builder storage or the mapped file */
} kiln_weight_decl;

typedef struct kiln_opset_entry {
    char *name;
    uint32_t version;
    const struct kiln_op_def *def; /* resolved against the registry */
} kiln_opset_entry;

typedef struct kiln_node_decl {
    uint32_t op;          /* index into the opset table */
    uint32_t input_count;
    uint32_t *inputs;     /* value ids */
    uint32_t attribute_count;
    struct kiln_node_attribute *attributes; /* sorted by name */
} kiln_node_decl;

/* A tensor inside an evidence case: owned copy. */
typedef struct kiln_evidence_tensor {
    char *name;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    size_t byte_size;
    uint8_t *data;
} kiln_evidence_tensor;

typedef struct kiln_evidence_case {
    char *name;
    uint32_t input_count;
    kiln_evidence_tensor *inputs;
    uint32_t output_count;
    kiln_evidence_tensor *outputs;
    kiln_compare_rule *rules; /* one per output */
} kiln_evidence_case;

/* The semantic checks of one input (kiln_input_check, owned). */
typedef struct kiln_input_check_decl {
    uint32_t input;
    bool has_range;
    double min, max;
    bool finite_only;
    uint32_t category_count;
    int64_t *categories; /* sorted, unique */
    char *unit;          /* "" for none */
    char *description;   /* "" for none */
} kiln_input_check_decl;

/* A precondition on sizes: a == b, a % k == 0, or a >= k (size_claim.h proves them). */
typedef enum kiln_size_claim_kind {
    KILN_CLAIM_EQUAL = 0,       /* a == b */
    KILN_CLAIM_MULTIPLE_OF = 1, /* a % k == 0 */
    KILN_CLAIM_AT_LEAST = 2,    /* a >= k */
} kiln_size_claim_kind;

/*
 * A precondition a non-strict program could not prove when it was built:
 * stored in the artifact and checked before every run (spec/contract.md §4.2).
 */
typedef struct kiln_runtime_guard {
    uint32_t node;             /* the node whose shape rule needs it */
    kiln_size_claim_kind kind;
    uint32_t a, b;             /* expression ids; b only for KILN_CLAIM_EQUAL */
    int64_t k;
    char *text;                /* the claim in words: "x axis 1 size k equals w axis 0 size 4" */
} kiln_runtime_guard;

typedef struct kiln_guard_list {
    kiln_runtime_guard *items;
    uint32_t count;
    uint32_t capacity;
} kiln_guard_list;

/* Append a copy of `guard` (its text copied) unless an equal one is listed. */
kiln_status kiln_guard_list_add(kiln_guard_list *list, const kiln_runtime_guard *guard, kiln_error *err);
/* Drop the entries from `count` on. */
void kiln_guard_list_truncate(kiln_guard_list *list, uint32_t count);
void kiln_guard_list_release(kiln_guard_list *list);

/* A memory plan read from the artifact's PLAN section (format 1.1, ancillary). */
typedef struct kiln_stored_plan {
    bool present;
    uint64_t arena_bytes;
    uint64_t intermediate_bytes;
    uint32_t count;     /* one slot per node result */
    uint64_t *offsets;
    uint64_t *sizes;
} kiln_stored_plan;

typedef struct kiln_model {
    char *name;
    kiln_mode mode;
    kiln_metadata_entry *metadata; /* sorted by key, keys unique */
    uint32_t metadata_count;
    kiln_dim_decl *dims;
    uint32_t dim_count;
    kiln_derived_dim *derived;
    uint32_t derived_count;
    kiln_expr_pool exprs;
    /* Expressions 0..stored_expr_count-1 are the ones the file stores (those
     * input axes and derived dims use); checking may intern more after them. */
    uint32_t stored_expr_count;
    kiln_input_decl *inputs;
    uint32_t input_count;
    kiln_weight_decl *weights;
    uint32_t weight_count;
    kiln_opset_entry *opset;
    uint32_t opset_count;
    kiln_node_decl *nodes;
    uint32_t node_count;
    kiln_output_decl *outputs;
    uint32_t output_count;
    kiln_evidence_case *evidence;
    uint32_t evidence_count;
    kiln_input_check_decl *checks; /* sorted by input */
    uint32_t check_count;
    /* Non-strict programs turn unproven preconditions into runtime guards
     * (their expressions are stored ones); strict programs have none. */
    bool non_strict;
    kiln_guard_list guards;
    kiln_stored_plan stored_plan;
    /* Derived by kiln_model_infer: the type of every value. */
    kiln_value_type *value_types;
} kiln_model;

static inline uint32_t kiln_model_value_count(const kiln_model *m)
{
    return m->input_count + m->weight_count + m->node_count;
}

static inline uint32_t kiln_model_first_node_value(const kiln_model *m)
{
    return m->input_count + m->weight_count;
}

void kiln_model_release(kiln_model *m);

/* Release one evidence case's contents. */
void kiln_evidence_case_release(kiln_evidence_case *c);

/* The dim names as an array (owned by the model's dims). Caller frees the array. */
const char **kiln_model_dim_names(const kiln_model *m);

/*
 * Check the whole model and derive value_types: names, dims, inputs
 * (axes are constants or declared dims, or expressions over dims that
 * also appear bare), weights, op arity and shape rules, outputs.
 */
kiln_status kiln_model_infer(kiln_model *m, kiln_error *err);

/*
 * Replace every axis of `shape` by its canonical form (shape_canon.h), so
 * that shape rules compare equal sizes by expression id.
 */
kiln_status kiln_shape_make_canonical(kiln_expr_pool *pool, kiln_shape *shape, kiln_error *err);

/* Render a shape, e.g. "[batch, 2]". @return the full length, like snprintf. */
int kiln_model_format_shape(const kiln_model *m, const kiln_shape *shape, char *buffer, size_t size);

/* @return true if `name` is a non-empty identifier ([A-Za-z_][A-Za-z0-9_.-]*). */
bool kiln_is_identifier(const char *name);

#endif
