/*
 * state_decl.h — a state tensor a program declares (spec/contract.md §10):
 * a tensor that lives in the session between runs, of a fixed capacity,
 * whose current length along one axis is a dim of every method that
 * reads or extends it. A KV cache is one: [batch, heads, 2048, head_dim]
 * growing along axis 2, its length the dim `past`.
 */
#ifndef KILN_LIB_STATE_DECL_H
#define KILN_LIB_STATE_DECL_H

#include <stddef.h>

#include <kiln/kiln.h>

typedef struct kiln_state_decl {
    char *name;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK]; /* the capacity: shape[axis] rows at most */
    uint32_t axis;                /* the axis it grows along */
    char *length_dim;             /* the dim its current length binds in each method */
} kiln_state_decl;

/* The state named `name` among `count` states, or NULL. */
const kiln_state_decl *kiln_state_decl_find(const kiln_state_decl *states, uint32_t count, const char *name);

/* Whether a and b declare the same state (name, dtype, shape, axis, length dim). */
bool kiln_state_decl_equal(const kiln_state_decl *a, const kiln_state_decl *b);

/*
 * How a state's buffer is laid out around its growing axis: `outer`
 * blocks (the product of the axes before it), each of capacity rows of
 * `row_bytes` (the product of the axes after it, times the element size).
 */
void kiln_state_decl_geometry(const kiln_state_decl *decl, size_t *outer, size_t *row_bytes);

/* Copy the first `rows` rows of each block of the state buffer `data` into `out`, packed: the state's shape
 * with its growing axis `rows` long. */
void kiln_state_decl_copy_rows(const kiln_state_decl *decl, const void *data, int64_t rows, void *out);

/* The inverse: `rows` packed rows from `in` into the first rows of each block of the state buffer `data`. */
void kiln_state_decl_write_rows(const kiln_state_decl *decl, const void *in, int64_t rows, void *data);

/* Free what `decl` owns. */
void kiln_state_decl_release(kiln_state_decl *decl);

#endif
