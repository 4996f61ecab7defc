/*
 * onnx_importer.h — the state of one import, shared by the importer's
 * files: the value table (onnx_value_table.c), the graph inputs
 * (onnx_graph_inputs.c), the node services (onnx_node.c), constant and
 * symbolic folding (onnx_fold.c, onnx_symbolic.c) and the graph walk
 * (onnx_import.c). The mappings never see it: they use onnx_node.h.
 */
#ifndef KILN_ONNX_IMPORTER_H
#define KILN_ONNX_IMPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include "onnx.pb-c.h"
#include "onnx_name_table.h"
#include "onnx_result.h"

/*
 * What an ONNX value name stands for: a graph input, a constant (an
 * initializer, a Constant node's value, or a graph input whose value the
 * caller fixed), an op result, "broken" (the output of a node that could
 * not be imported), or a symbolic tensor (sizes computed from kiln dims).
 */
typedef enum onnx_entry_kind { ENTRY_INPUT, ENTRY_CONSTANT, ENTRY_VALUE, ENTRY_BROKEN, ENTRY_SYMBOLIC } onnx_entry_kind;

/* Most elements a symbolic tensor holds: a shape of rank KILN_MAX_RANK, with room for Concat's parts. */
#define SYMBOLIC_MAX_ELEMENTS 16
/* Longest canonical size text kept. */
#define SIZE_TEXT_MAX 128

typedef struct onnx_entry {
    const char *onnx_name; /* borrowed from the model */
    onnx_entry_kind kind;
    bool has_value;
    kiln_value value;
    const kiln_tensor *constant; /* ENTRY_CONSTANT, and ENTRY_INPUT with a known value */
    kiln_tensor *owned_constant; /* `constant` when the entry owns it (freed with the importer), else NULL */
    bool from_initializer;
    const Onnx__ValueInfoProto *info; /* ENTRY_INPUT */
    /* ENTRY_SYMBOLIC: rank 0 or 1, its elements as canonical size texts, the node that computed it. */
    uint32_t symbolic_rank, symbolic_count;
    char (*symbolic)[SIZE_TEXT_MAX];
    size_t source_node;
    uint32_t state; /* a graph input imported as a state (onnx_state.h): 1 + its index in states; 0: none */
} onnx_entry;

/*
 * A cache imported as a state (kiln_onnx_state): its kiln name, the dim
 * its length binds, its growing axis (once its rank is known), whether it
 * is declared in the builder yet, and the result of the one append.
 */
typedef struct onnx_state {
    const kiln_onnx_state *option;
    char name[256];
    char length_dim[256];
    int32_t axis;     /* normalized, 0 <= axis < rank, once declared */
    bool declared;
    bool appended;
    kiln_value appended_value;
    char relation[512]; /* the relation its append declared */
} onnx_state;

typedef struct onnx_importer onnx_importer;

/*
 * Translate the node that computed symbolic entry `entry` (an index into
 * entries). The graph walk (onnx_import.c) sets it to
 * onnx_symbolic_translate: the value table reaches the mapping table only
 * through it, so that the mappings, which use the value table through the
 * node services, and the importer do not include each other.
 */
typedef kiln_status (*onnx_translate_fn)(onnx_importer *im, uint32_t entry, kiln_error *err);

struct onnx_importer {
    const Onnx__ModelProto *model;
    const kiln_onnx_options *options;
    kiln_onnx_limits limits;
    kiln_builder *builder;
    onnx_entry *entries;
    uint32_t entry_count, entry_capacity;
    onnx_name_table by_onnx_name;
    onnx_name_table kiln_names;  /* input and weight names given out */
    onnx_name_table read_table;  /* every value a node or the graph's outputs read */
    onnx_name_table producers;   /* each node output: the index of the node that computes it */
    /* read_table, or for a scratch importer (onnx_fold.c) its parent's; NULL: every named value counts as read */
    const onnx_name_table *read_names;
    char **owned_names;     /* storage of kiln_names' keys */
    uint32_t owned_count;
    char **report;
    uint32_t report_count, report_capacity;
    bool *dim_declared;     /* parallel to options->dims */
    int64_t opset;          /* the model's default-domain opset */
    kiln_onnx_result *result;
    onnx_translate_fn translate_symbolic;
    onnx_state *states;     /* options->state_count of them */
};

#endif
