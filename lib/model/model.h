/*
 * model.h — the in-memory program model shared by the builder, the section
 * codec, the loader and the executor: data only (checking it is
 * model_check.h).
 *
 * Values are numbered canonically: inputs first (in declaration order),
 * then weights, then one result per node in node order. A node may only
 * use values numbered below its own result, so the graph is acyclic and
 * topologically ordered by construction.
 */
#ifndef KILN_LIB_MODEL_H
#define KILN_LIB_MODEL_H

#include <kiln/kiln.h>

#include "claim_guard.h"
#include "evidence.h"
#include "generation_evidence.h"
#include "semantic_check.h"
#include "dim.h"
#include "shape.h"
#include "shape_expr.h"
#include "state_decl.h"

struct kiln_op_def;

typedef struct kiln_metadata_entry {
    char *key;
    char *value;
} kiln_metadata_entry;



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
    /* Writer only, when `data` is NULL: the bytes are read from this file,
     * from byte source_offset on, while the artifact is written
     * (kiln_builder_add_weight_file; lib/program/weight_stream.c). */
    const char *source_path; /* borrowed from the builder */
    uint64_t source_offset;
    bool source_no_follow;   /* a symbolic link in its last component is refused */
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
    /* The name the source framework gave the node, or NULL: metadata
     * (section NNAM, ancillary), never part of what the node computes. */
    char *name;
} kiln_node_decl;





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
    kiln_evidence_record *evidence;
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
    /*
     * Entry points (format 1.3, section MTHD). A program with several
     * methods calls this one, its first, `method_name` and holds the others
     * in methods[]: each a whole program (dims, signature, checks, guards,
     * graph, names, evidence, plan) over this model's name, mode, metadata,
     * opset and weights, which it borrows (`borrows_tables`), so value ids
     * number every weight of the artifact in each method. A one-method
     * program has no method_name (its method is KILN_MAIN_METHOD) and no
     * methods.
     */
    char *method_name;
    struct kiln_model *methods;
    uint32_t method_count;
    bool borrows_tables;
    /*
     * The relations this method declares across its dims (dim.h; stored
     * at the end of its DIMS when feature bit 1 is set, format 1.3), over
     * stored expressions.
     */
    kiln_dim_relation *relations;
    uint32_t relation_count;
    /*
     * The program's state tensors (section STAT, format 1.3): the root's,
     * which every method borrows with the other tables.
     */
    kiln_state_decl *states;
    uint32_t state_count;
    /*
     * Generation cases (section GENV, format 1.3): the root's only, as
     * they span methods; a method reaches them through its root.
     */
    kiln_generation_record *generations;
    uint32_t generation_count;
} kiln_model;

/* The name of a one-method program's only method. */
#define KILN_MAIN_METHOD "main"

/* The name of method `m` (a program's first, or one of its methods[]). */
static inline const char *kiln_model_method_name(const kiln_model *m)
{
    return m->method_name ? m->method_name : KILN_MAIN_METHOD;
}

/* Make `method` an empty method named `name` (owned) borrowing `root`'s tables (see kiln_model.methods). */
void kiln_model_method_init(kiln_model *method, const kiln_model *root, char *name);

/* Point every method of `root` at root's tables again, after they moved (metadata grown, say). */
void kiln_model_share_tables(kiln_model *root);

static inline uint32_t kiln_model_value_count(const kiln_model *m)
{
    return m->input_count + m->weight_count + m->node_count;
}

static inline uint32_t kiln_model_first_node_value(const kiln_model *m)
{
    return m->input_count + m->weight_count;
}

void kiln_model_release(kiln_model *m);

/* The dim names as an array (owned by the model's dims). Caller frees the array. */
const char **kiln_model_dim_names(const kiln_model *m);

/* Whether dim `d` of `m` is the length of one of its states (bound by it before each run). */
bool kiln_model_state_length_dim(const kiln_model *m, uint32_t d);

/* Render relation `r` of `m`, e.g. "past + seq <= 2048". @return the full length, like snprintf. */
int kiln_model_format_relation(const kiln_model *m, const kiln_dim_relation *r, char *buffer, size_t size);

/* Render a shape, e.g. "[batch, 2]". @return the full length, like snprintf. */
int kiln_model_format_shape(const kiln_model *m, const kiln_shape *shape, char *buffer, size_t size);


#endif
