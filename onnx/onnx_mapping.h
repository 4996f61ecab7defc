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

typedef struct onnx_op_mapping {
    const char *onnx_op;
    int64_t min_opset, max_opset; /* inclusive */
    int64_t onnx_since;           /* the opset ONNX adds the op in, when it is after 7; else 0 (or 1) */
    onnx_map_fn map;
    const char *kiln_op; /* handed to map: the kiln op for simple renames */
} onnx_op_mapping;

/**
 * The mapping of `onnx_op` at `opset`.
 * @return the row, or NULL; then `why` (may be NULL) receives a reason fit
 *         for the unsupported report ("unsupported op Conv (opset 9)"),
 *         truncated to `size` bytes.
 */
const onnx_op_mapping *onnx_find_mapping(const char *onnx_op, int64_t opset, char *why, size_t size);

#endif
