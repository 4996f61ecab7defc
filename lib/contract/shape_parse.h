/*
 * shape_parse.h — parsing a shape written as text, e.g. "[batch, 2*n + 1]".
 *
 * Grammar (spaces allowed between tokens):
 *   shape  := '[' axes? ']' | axes?
 *   axes   := expr (',' expr)*
 *   expr   := term (('+' | '-') term)*
 *   term   := factor (('*' | '/' | '%') factor)*      '/' is floor division
 *   factor := INTEGER | IDENT | '(' expr ')'
 * IDENT must name a declared dim. '/' and '%' need a positive constant on
 * their right. Each axis is returned in canonical form (shape_canon.h):
 * "n*2" and "n + n" both give the expression of "2*n".
 */
#ifndef KILN_LIB_SHAPE_PARSE_H
#define KILN_LIB_SHAPE_PARSE_H

#include "shape_expr.h"

kiln_status kiln_shape_parse(const char *text, const char *const *dim_names, uint32_t dim_count,
                             kiln_expr_pool *pool, uint32_t *rank, uint32_t axes[KILN_MAX_RANK],
                             kiln_error *err);

/* A derived dim's name and the expression (in the same pool) it stands for. */
typedef struct kiln_shape_alias {
    const char *name;
    uint32_t expr;
} kiln_shape_alias;

/* kiln_shape_parse where IDENT may also name one of `aliases` (derived
 * dims), which stands for its expression. */
kiln_status kiln_shape_parse_with_aliases(const char *text, const char *const *dim_names, uint32_t dim_count,
                                          const kiln_shape_alias *aliases, uint32_t alias_count,
                                          kiln_expr_pool *pool, uint32_t *rank, uint32_t axes[KILN_MAX_RANK],
                                          kiln_error *err);

#endif
