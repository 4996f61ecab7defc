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

#include <stdbool.h>

#include "op_def.h"

/*
 * The registry is the concatenation of op families, one per source file of
 * lib/ops/, each exporting its table; op_registry.c's families[] lists them
 * (tests/ops/check_op_families.py checks that list, the declarations below
 * and spec/opset.md's table of families against the tables defined).
 */
typedef struct kiln_op_family {
    const kiln_op_def *ops;
    uint32_t count;
    /* The spec page that names and defines every op of the family, relative
     * to the source root (spec/opset.md's table gives the same page). */
    const char *spec_page;
} kiln_op_family;

/* A family's table over a static array of records and its spec page. */
#define KILN_OP_FAMILY(OPS, SPEC_PAGE) {.ops = OPS, .count = sizeof OPS / sizeof OPS[0], .spec_page = SPEC_PAGE}

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
extern const kiln_op_family kiln_ops_state;

/* @return the registry entry called `name`, or NULL. */
const kiln_op_def *kiln_op_find(const char *name);

/* @return the registry entry implementing (name, version), or NULL. */
const kiln_op_def *kiln_op_find_version(const char *name, uint32_t version);

uint32_t kiln_op_count(void);
const kiln_op_def *kiln_op_at(uint32_t index);

/* The families in registry order: kiln_op_at walks their ops in this order. */
uint32_t kiln_op_family_count(void);
const kiln_op_family *kiln_op_family_at(uint32_t index);

/* Refuse operands of different dtypes (kiln never promotes implicitly). */
kiln_status kiln_require_same_dtype(const kiln_shape_context *ctx, const kiln_value_type *a,
                                    const kiln_value_type *b, kiln_error *err);

#endif
