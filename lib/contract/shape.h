/*
 * shape.h — a symbolic shape (one expression id per axis) and what is
 * known statically about a value: its dtype and that shape.
 */
#ifndef KILN_LIB_SHAPE_H
#define KILN_LIB_SHAPE_H

#include <stdint.h>

#include <kiln/kiln.h>

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

#endif
