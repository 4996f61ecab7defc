/*
 * shape_canon.h — the canonical form of shape expressions.
 *
 * Every expression over dims is, on the integers, a polynomial whose
 * variables ("atoms") are dims and floor-divisions / remainders of
 * canonical polynomials by positive constants. Writing that polynomial in
 * one fixed way (spec/contract.md §1.2) makes equal expressions equal
 * trees: `n*2`, `2*n` and `n + n` all become `2*n`, and since the pool
 * interns trees, they get the same expression id.
 *
 * The polynomial itself is also what the contract checker decides
 * preconditions on (size_claim.c).
 */
#ifndef KILN_LIB_SHAPE_CANON_H
#define KILN_LIB_SHAPE_CANON_H

#include "shape.h"
#include "shape_expr.h"

/* Bigger polynomials are left in the form they were written in. */
#define KILN_POLY_MAX_TERMS 48
#define KILN_POLY_MAX_DEGREE 8

/* coefficient * atoms[0] * ... * atoms[degree-1], atoms sorted. */
typedef struct kiln_poly_term {
    int64_t coefficient; /* never 0 */
    uint32_t degree;     /* >= 1 */
    uint32_t atoms[KILN_POLY_MAX_DEGREE]; /* expression ids: dims, or floor-div / mod nodes */
} kiln_poly_term;

/* constant + sum of terms, terms in canonical order, no two with the same atoms. */
typedef struct kiln_poly {
    int64_t constant;
    uint32_t term_count;
    kiln_poly_term terms[KILN_POLY_MAX_TERMS];
} kiln_poly;

/*
 * The polynomial of expression `id`, interning the atoms it needs into
 * `pool`. @return KILN_OK; KILN_ERR_LIMIT when the polynomial would exceed
 * the limits above or a coefficient would overflow int64 (the expression
 * then has no canonical form and is used as written); or
 * KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_expr_to_poly(kiln_expr_pool *pool, uint32_t id, kiln_poly *out);

/*
 * Intern the canonical tree of `poly` into `pool`.
 * @return KILN_OK, KILN_ERR_LIMIT (tree too deep or big) or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_poly_to_expr(kiln_expr_pool *pool, const kiln_poly *poly, uint32_t *id);

/*
 * The canonical form of expression `id`: the same id if `id` is canonical,
 * `id` itself if the expression has no canonical form within the limits.
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY (with `err` set).
 */
kiln_status kiln_expr_canonical(kiln_expr_pool *pool, uint32_t id, uint32_t *out, kiln_error *err);

/* Structural order of two expressions: negative, 0 (same tree) or positive. */
int kiln_expr_compare(const kiln_expr_pool *pool, uint32_t a, uint32_t b);

/*
 * Replace every axis of `shape` by its canonical form (kiln_expr_canonical), so
 * that shape rules compare equal sizes by expression id.
 */
kiln_status kiln_shape_make_canonical(kiln_expr_pool *pool, kiln_shape *shape, kiln_error *err);

#endif
