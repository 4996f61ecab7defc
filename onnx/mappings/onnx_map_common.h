/*
 * onnx_map_common.h — pieces the mappings (onnx_map_*.c) share: a list of
 * kiln attributes with storage for their values, the node's attributes
 * copied over by name, operands read in bulk, and the one-output emit.
 */
#ifndef KILN_ONNX_MAP_COMMON_H
#define KILN_ONNX_MAP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx_node.h"

#define ONNX_ATTRS_MAX 16
#define ONNX_ATTRS_INT_POOL 128
#define ONNX_ATTRS_FLOAT_POOL 64
#define ONNX_ATTRS_TEXT_MAX 1024 /* a shape text (expand_to, resize_to) of 8 sizes */

/* Attributes for one kiln op, with storage for their values (zero-initialize). */
typedef struct onnx_attrs {
    kiln_attribute items[ONNX_ATTRS_MAX];
    uint32_t count;
    int64_t ints[ONNX_ATTRS_INT_POOL];
    uint32_t ints_used;
    double floats[ONNX_ATTRS_FLOAT_POOL];
    uint32_t floats_used;
    char text[4][ONNX_ATTRS_TEXT_MAX];
    uint32_t text_used;
} onnx_attrs;

/** Append INT attribute `name` (dropped when the list is full: onnx_attrs_copy reports a full list). */
void onnx_attrs_int(onnx_attrs *list, const char *name, int64_t value);

/** Append FLOAT attribute `name` (dropped when the list is full). */
void onnx_attrs_float(onnx_attrs *list, const char *name, double value);

/** Append INTS attribute `name`. @return false if the list or its pool is full (the caller reports it). */
bool onnx_attrs_ints(onnx_attrs *list, const char *name, const int64_t *values, uint32_t count);

/** Append FLOATS attribute `name`. @return false if the list or its pool is full. */
bool onnx_attrs_floats(onnx_attrs *list, const char *name, const float *values, uint32_t count);

/** Append FLOATS attribute `name` from doubles (kept as they are). @return false if the list or its pool is full. */
bool onnx_attrs_doubles(onnx_attrs *list, const char *name, const double *values, uint32_t count);

/**
 * "[a, b, c]" of the size texts `sizes`: the target of expand_to and
 * resize_to, a shape over the dims. @return false if it does not fit.
 */
bool onnx_shape_text(const char *const *sizes, uint32_t count, char *text, size_t size);

/** Append STRING attribute `name` (`length` bytes of `text`). @return false if it does not fit. */
bool onnx_attrs_string(onnx_attrs *list, const char *name, const char *text, size_t length);

/**
 * Copy every attribute of the node but those in `skip` (NULL-terminated)
 * to `list` under the same name: kiln's ops take ONNX's attribute names
 * where they mean the same thing, and kiln refuses (by name) any it does
 * not take.
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_OP (reported) for an attribute
 *         kiln attributes cannot hold.
 */
kiln_status onnx_attrs_copy(onnx_node *node, onnx_attrs *list, const char *const *skip);

/** Inputs `first` .. `first + count - 1` as kiln values. @return the first failure of onnx_node_input. */
kiln_status onnx_map_inputs(onnx_node *node, uint32_t first, uint32_t count, kiln_value *values);

/** @return the number of inputs, without trailing omitted ones. */
uint32_t onnx_map_present_inputs(const onnx_node *node);

/**
 * Report outputs from `kept` on that the node names but kiln has no value for.
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_OP (reported).
 */
kiln_status onnx_map_refuse_extra_outputs(onnx_node *node, uint32_t kept);

/** Emit kiln op `op` (attributes `list`, may be NULL) and bind it to output 0. @return as onnx_node_emit. */
kiln_status onnx_map_emit_output(onnx_node *node, const char *op, uint32_t input_count, const kiln_value *inputs,
                                 const onnx_attrs *list);

/** A constant scalar operand (any numeric dtype, one element) as a double. @return KILN_OK or the reported refusal. */
kiln_status onnx_map_constant_scalar(onnx_node *node, uint32_t index, double *out);

/**
 * Integer list from attribute `name` (opset < `input_from`) or from
 * constant input `index` (later opsets); *present says whether either is given.
 * @return KILN_OK or the reported refusal (too many values, not constant).
 */
kiln_status onnx_map_ints_operand(onnx_node *node, const char *name, int64_t input_from, uint32_t index,
                                  int64_t *values, uint32_t max, uint32_t *count, bool *present);

/** Cast `*value` to `dtype` unless it has it already. @return as onnx_node_emit. */
kiln_status onnx_map_cast_to(onnx_node *node, kiln_value *value, kiln_dtype dtype);

/** The kiln dtype of ONNX attribute `name` (an element type code), or `fallback` when absent. @return KILN_OK or the reported refusal. */
kiln_status onnx_map_dtype_attribute(onnx_node *node, const char *name, kiln_dtype fallback, kiln_dtype *out);

/**
 * The one element of constant tensor `t` as a double (`what` names it in
 * a report). @return KILN_OK, or the reported refusal (not one element, a
 * 64-bit integer beyond 2^53, a dtype without numbers).
 */
kiln_status onnx_map_tensor_scalar(onnx_node *node, const kiln_tensor *t, const char *what, double *value);

#endif
