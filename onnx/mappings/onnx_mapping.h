/*
 * onnx_mapping.h — the table of ONNX ops kiln can express (onnx_op_table.c).
 *
 * A row maps (ONNX op name, range of default-domain opset versions) to a
 * function that emits the kiln ops for one node through the services of
 * onnx_node.h. To support a new op, add one row (and a function in the
 * onnx_map_*.c file of its family when the translation is more than a
 * rename with copied attributes).
 */
#ifndef KILN_ONNX_MAPPING_H
#define KILN_ONNX_MAPPING_H

#include <stddef.h>
#include <stdint.h>

#include "onnx_node.h"

typedef kiln_status (*onnx_map_fn)(onnx_node *node, const char *kiln_op);

/* The most schema versions one row lists (Gemm, Dropout and BatchNormalization have 6 up to opset 18). */
#define ONNX_SCHEMA_VERSIONS_MAX 8

typedef struct onnx_op_mapping {
    const char *onnx_op;
    int64_t min_opset, max_opset; /* inclusive */
    int64_t onnx_since;           /* the opset ONNX adds the op in, when it is after 7; else 0 (or 1) */
    onnx_map_fn map;
    const char *kiln_op; /* handed to map: the kiln op for simple renames */
    /*
     * The ONNX schema versions (since_version) of the op that `map`
     * implements, ascending, 0 after the last: every version ONNX defines
     * from min_opset up to KILN_ONNX_MAX_OPSET (and any later one the
     * mapping already reads). The importer binds a node by opset alone;
     * this list is what tests/onnx/check_op_versions.py compares with
     * onnx.defs, so raising KILN_ONNX_MAX_OPSET past a schema change that
     * a row does not list fails the suite instead of importing the old
     * meaning under the new version.
     */
    uint8_t versions[ONNX_SCHEMA_VERSIONS_MAX];
} onnx_op_mapping;

/**
 * The mapping of `onnx_op` at `opset`.
 * @return the row, or NULL; then `why` (may be NULL) receives a reason fit
 *         for the unsupported report ("unsupported op Conv (opset 9)"),
 *         truncated to `size` bytes.
 */
const onnx_op_mapping *onnx_find_mapping(const char *onnx_op, int64_t opset, char *why, size_t size);

/** @return the number of rows of the table (for its checks: tests/onnx/dump_op_table.c). */
size_t onnx_mapping_count(void);

/** @return row `index` (< onnx_mapping_count()) of the table, or NULL. */
const onnx_op_mapping *onnx_mapping_at(size_t index);

/**
 * The reason kept for an op the table does not map (control flow,
 * sequences, ...; the list of spec/onnx-import.md §2's report), or NULL.
 */
const char *onnx_known_gap(const char *onnx_op);

#endif
