/*
 * shape_expr.h — symbolic shape expressions over dims.
 *
 * An expression is a small tree of integer constants, dim references and
 * the operators + - * and floor-div / mod by a positive constant. Trees
 * live in a pool with children before parents; the pool interns nodes, so
 * two structurally equal expressions in one pool have the same id.
 */
#ifndef KILN_LIB_SHAPE_EXPR_H
#define KILN_LIB_SHAPE_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

typedef enum kiln_expr_kind {
    KILN_EXPR_CONST = 0,
    KILN_EXPR_DIM = 1,
    KILN_EXPR_ADD = 2,
    KILN_EXPR_SUB = 3,
    KILN_EXPR_MUL = 4,
    KILN_EXPR_FLOORDIV = 5,
    KILN_EXPR_MOD = 6,
} kiln_expr_kind;

#define KILN_EXPR_KIND_COUNT 7
/* Deepest tree accepted; bounds recursion on untrusted input. */
#define KILN_EXPR_MAX_DEPTH 64
/*
 * Largest tree accepted, counting a shared subtree once per use. Pools
 * share nodes, so a small pool can describe a huge tree (a chain of
 * x = y + y doubles at each link); every walk over an expression is
 * bounded by this instead.
 */
#define KILN_EXPR_MAX_TREE_SIZE 1024

typedef struct kiln_expr {
    uint8_t kind;
    uint8_t depth;    /* 1 for leaves */
    uint16_t tree_size; /* nodes in the unshared tree; 1 for leaves */
    int64_t constant; /* KILN_EXPR_CONST */
    uint32_t dim;     /* KILN_EXPR_DIM */
    uint32_t lhs, rhs;/* binary kinds; both < this node's id */
} kiln_expr;

typedef struct kiln_expr_pool {
    kiln_expr *items;
    uint32_t count;
    uint32_t capacity;
    uint32_t *buckets;       /* hash index: id + 1, 0 = empty */
    uint32_t bucket_count;   /* power of two */
} kiln_expr_pool;

/* Interval of values an expression takes over the declared domain. */
typedef struct kiln_interval {
    int64_t lo;
    int64_t hi;
} kiln_interval;

void kiln_expr_pool_init(kiln_expr_pool *pool);
void kiln_expr_pool_release(kiln_expr_pool *pool);

/*
 * Add `node` (children already in the pool) or find its twin. Checks
 * kinds, child ids, depth and that div/mod divide by a positive constant.
 */
kiln_status kiln_expr_intern(kiln_expr_pool *pool, const kiln_expr *node, uint32_t dim_count,
                             uint32_t *id, kiln_error *err);
kiln_status kiln_expr_const(kiln_expr_pool *pool, int64_t value, uint32_t *id, kiln_error *err);
kiln_status kiln_expr_dim(kiln_expr_pool *pool, uint32_t dim, uint32_t dim_count, uint32_t *id,
                          kiln_error *err);

/* @return true if expression `id` is the constant `value`. */
bool kiln_expr_is_const(const kiln_expr_pool *pool, uint32_t id, int64_t value);
/* @return true and the dim index if expression `id` is a bare dim. */
bool kiln_expr_is_dim(const kiln_expr_pool *pool, uint32_t id, uint32_t *dim);

/*
 * Recognise `scale*dim + offset` with scale >= 1 (forms: d, c*d, d*c,
 * and any of those plus or minus a constant, either side of a '+').
 * The guard solves such an axis for its dim when nothing else binds it.
 * @return true and the parts if expression `id` has that form.
 */
bool kiln_expr_as_affine(const kiln_expr_pool *pool, uint32_t id, uint32_t *dim, int64_t *scale,
                         int64_t *offset);

/*
 * Evaluate with concrete dim values. `bound[d]` says whether dim d has a
 * value. @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT on an unbound dim
 * or overflow (the message says which).
 */
kiln_status kiln_expr_eval(const kiln_expr_pool *pool, uint32_t id, const int64_t *dim_values,
                           const bool *bound, int64_t *out, kiln_error *err);

/*
 * Sound bounds of expression `id` when each dim d ranges over
 * dim_ranges[d]. @return false if an intermediate bound overflows int64.
 */
bool kiln_expr_bounds(const kiln_expr_pool *pool, uint32_t id, const kiln_interval *dim_ranges,
                      kiln_interval *out);

/* @return true if dim `dim` occurs in expression `id`. */
bool kiln_expr_uses_dim(const kiln_expr_pool *pool, uint32_t id, uint32_t dim);

/*
 * Render expression `id` using `dim_names`, e.g. "2*batch + 1".
 * @return the length the full text needs, like snprintf.
 */
int kiln_expr_format(const kiln_expr_pool *pool, uint32_t id, const char *const *dim_names,
                     char *buffer, size_t size);

#endif
