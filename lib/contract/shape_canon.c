/* shape_canon.c — polynomial normal form of shape expressions (see shape_canon.h). */
#include "shape_canon.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

int kiln_expr_compare(const kiln_expr_pool *pool, uint32_t a, uint32_t b)
{
    if (a == b) /* interned: the same id is the same tree */
        return 0;
    const kiln_expr *x = &pool->items[a], *y = &pool->items[b];
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    switch (x->kind) {
    case KILN_EXPR_CONST: return x->constant < y->constant ? -1 : x->constant > y->constant;
    case KILN_EXPR_DIM: return x->dim < y->dim ? -1 : x->dim > y->dim;
    default: break;
    }
    int order = kiln_expr_compare(pool, x->lhs, y->lhs);
    return order ? order : kiln_expr_compare(pool, x->rhs, y->rhs);
}

/*
 * Term order: positive coefficients before negative ones (so that a
 * difference prints as `n - m`, whatever the dims' order), then higher
 * degree first, then atoms by structure.
 */
static int compare_terms(const kiln_expr_pool *pool, const kiln_poly_term *s, const kiln_poly_term *t)
{
    bool s_negative = s->coefficient < 0, t_negative = t->coefficient < 0;
    if (s_negative != t_negative)
        return s_negative ? 1 : -1;
    if (s->degree != t->degree)
        return s->degree > t->degree ? -1 : 1;
    for (uint32_t i = 0; i < s->degree; i++) {
        int order = kiln_expr_compare(pool, s->atoms[i], t->atoms[i]);
        if (order)
            return order;
    }
    return 0;
}

static bool same_atoms(const kiln_poly_term *s, const kiln_poly_term *t)
{
    return s->degree == t->degree && memcmp(s->atoms, t->atoms, s->degree * sizeof s->atoms[0]) == 0;
}

/* Add `term` (scaled by `sign`, +1 or -1) into `p`, keeping the order. */
static kiln_status add_term(const kiln_expr_pool *pool, kiln_poly *p, const kiln_poly_term *term, int64_t sign)
{
    kiln_poly_term t = *term;
    if (__builtin_mul_overflow(t.coefficient, sign, &t.coefficient))
        return KILN_ERR_LIMIT;
    for (uint32_t i = 0; i < p->term_count; i++) {
        if (!same_atoms(&p->terms[i], &t))
            continue;
        int64_t sum;
        if (__builtin_add_overflow(p->terms[i].coefficient, t.coefficient, &sum))
            return KILN_ERR_LIMIT;
        /* Remove, then re-insert below: the sign may have changed its place. */
        memmove(&p->terms[i], &p->terms[i + 1], (p->term_count - i - 1) * sizeof p->terms[0]);
        p->term_count--;
        t.coefficient = sum;
        break;
    }
    if (t.coefficient == 0)
        return KILN_OK;
    if (p->term_count == KILN_POLY_MAX_TERMS)
        return KILN_ERR_LIMIT;
    uint32_t at = 0;
    while (at < p->term_count && compare_terms(pool, &p->terms[at], &t) < 0)
        at++;
    memmove(&p->terms[at + 1], &p->terms[at], (p->term_count - at) * sizeof p->terms[0]);
    p->terms[at] = t;
    p->term_count++;
    return KILN_OK;
}

/* p += sign * q */
static kiln_status add_poly(const kiln_expr_pool *pool, kiln_poly *p, const kiln_poly *q, int64_t sign)
{
    int64_t scaled;
    if (__builtin_mul_overflow(q->constant, sign, &scaled) ||
        __builtin_add_overflow(p->constant, scaled, &p->constant))
        return KILN_ERR_LIMIT;
    for (uint32_t i = 0; i < q->term_count; i++)
        KILN_TRY(add_term(pool, p, &q->terms[i], sign));
    return KILN_OK;
}

/* The product of two terms, atoms merged in order. */
static kiln_status multiply_terms(const kiln_expr_pool *pool, const kiln_poly_term *s, const kiln_poly_term *t,
                                  kiln_poly_term *out)
{
    if (s->degree + t->degree > KILN_POLY_MAX_DEGREE ||
        __builtin_mul_overflow(s->coefficient, t->coefficient, &out->coefficient))
        return KILN_ERR_LIMIT;
    uint32_t i = 0, j = 0;
    out->degree = 0;
    while (i < s->degree || j < t->degree) {
        bool take_s = j == t->degree || (i < s->degree && kiln_expr_compare(pool, s->atoms[i], t->atoms[j]) <= 0);
        out->atoms[out->degree++] = take_s ? s->atoms[i++] : t->atoms[j++];
    }
    return KILN_OK;
}

/* out = p * q; `out` must not alias either operand. */
static kiln_status multiply_polys(const kiln_expr_pool *pool, const kiln_poly *p, const kiln_poly *q, kiln_poly *out)
{
    memset(out, 0, sizeof *out);
    if (__builtin_mul_overflow(p->constant, q->constant, &out->constant))
        return KILN_ERR_LIMIT;
    kiln_poly_term scaled;
    for (uint32_t i = 0; i < p->term_count; i++) {
        if (q->constant) {
            scaled = p->terms[i];
            if (__builtin_mul_overflow(scaled.coefficient, q->constant, &scaled.coefficient))
                return KILN_ERR_LIMIT;
            KILN_TRY(add_term(pool, out, &scaled, 1));
        }
        for (uint32_t j = 0; j < q->term_count; j++) {
            KILN_TRY(multiply_terms(pool, &p->terms[i], &q->terms[j], &scaled));
            KILN_TRY(add_term(pool, out, &scaled, 1));
        }
    }
    for (uint32_t j = 0; p->constant && j < q->term_count; j++) {
        scaled = q->terms[j];
        if (__builtin_mul_overflow(scaled.coefficient, p->constant, &scaled.coefficient))
            return KILN_ERR_LIMIT;
        KILN_TRY(add_term(pool, out, &scaled, 1));
    }
    return KILN_OK;
}

/* Floor division and its remainder (0 <= r < b) for b > 0, without overflow. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

static kiln_status intern_binary(kiln_expr_pool *pool, uint8_t kind, uint32_t lhs, uint32_t rhs, uint32_t *id)
{
    kiln_expr node = {.kind = kind, .lhs = lhs, .rhs = rhs};
    kiln_error ignored;
    return kiln_expr_intern(pool, &node, 0, id, &ignored);
}

static kiln_status intern_const(kiln_expr_pool *pool, int64_t value, uint32_t *id)
{
    kiln_error ignored;
    return kiln_expr_const(pool, value, id, &ignored);
}

/*
 * floor(p / c) or p mod c for a constant c > 0. Splitting every
 * coefficient as c*q + r with 0 <= r < c (and the constant the same way)
 * gives p = c*Q + R, so floor(p/c) = Q + floor(R/c) and p mod c = R mod c
 * on the integers: only the reduced remainder R stays inside the atom,
 * which makes the atom unique. floor(floor(s/a)/c) = floor(s/(a*c)) for
 * positive a and c merges nested divisions.
 */
static kiln_status divide_poly(kiln_expr_pool *pool, const kiln_poly *p, int64_t c, bool remainder, kiln_poly *out)
{
    kiln_poly *reduced = calloc(1, sizeof *reduced);
    if (!reduced)
        return KILN_ERR_OUT_OF_MEMORY;
    memset(out, 0, sizeof *out);
    kiln_status status = KILN_OK;
    reduced->constant = floor_mod(p->constant, c);
    if (!remainder)
        out->constant = floor_div(p->constant, c);
    for (uint32_t i = 0; status == KILN_OK && i < p->term_count; i++) {
        kiln_poly_term quotient = p->terms[i], rest = p->terms[i];
        quotient.coefficient = floor_div(p->terms[i].coefficient, c);
        rest.coefficient = floor_mod(p->terms[i].coefficient, c);
        if (!remainder && quotient.coefficient)
            status = add_term(pool, out, &quotient, 1);
        if (status == KILN_OK && rest.coefficient)
            status = add_term(pool, reduced, &rest, 1);
    }
    if (status != KILN_OK || reduced->term_count == 0) {
        /* R is a constant in 0..c-1: floor(R/c) = 0 and R mod c = R. */
        if (status == KILN_OK && remainder)
            out->constant = reduced->constant;
        free(reduced);
        return status;
    }
    uint32_t inner, divisor, atom;
    const kiln_poly_term *only = &reduced->terms[0];
    const kiln_expr nested = pool->items[only->atoms[0]]; /* a copy: interning may move the items */
    int64_t merged;
    if (!remainder && reduced->term_count == 1 && reduced->constant == 0 && only->coefficient == 1 &&
        only->degree == 1 && nested.kind == KILN_EXPR_FLOORDIV &&
        !__builtin_mul_overflow(pool->items[nested.rhs].constant, c, &merged)) {
        inner = nested.lhs;
        status = intern_const(pool, merged, &divisor);
    } else {
        status = kiln_poly_to_expr(pool, reduced, &inner);
        if (status == KILN_OK)
            status = intern_const(pool, c, &divisor);
    }
    if (status == KILN_OK)
        status = intern_binary(pool, remainder ? KILN_EXPR_MOD : KILN_EXPR_FLOORDIV, inner, divisor, &atom);
    if (status == KILN_OK) {
        kiln_poly_term term = {.coefficient = 1, .degree = 1, .atoms = {atom}};
        status = add_term(pool, out, &term, 1);
    }
    free(reduced);
    return status;
}

kiln_status kiln_expr_to_poly(kiln_expr_pool *pool, uint32_t id, kiln_poly *out)
{
    const kiln_expr e = pool->items[id]; /* a copy: interning may move the items */
    memset(out, 0, sizeof *out);
    switch (e.kind) {
    case KILN_EXPR_CONST:
        out->constant = e.constant;
        return KILN_OK;
    case KILN_EXPR_DIM:
        out->term_count = 1;
        out->terms[0] = (kiln_poly_term){.coefficient = 1, .degree = 1, .atoms = {id}};
        return KILN_OK;
    default:
        break;
    }
    kiln_poly *lhs = malloc(sizeof *lhs), *rhs = malloc(sizeof *rhs);
    kiln_status status = lhs && rhs ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
    if (status == KILN_OK)
        status = kiln_expr_to_poly(pool, e.lhs, lhs);
    if (status == KILN_OK && e.kind != KILN_EXPR_FLOORDIV && e.kind != KILN_EXPR_MOD)
        status = kiln_expr_to_poly(pool, e.rhs, rhs);
    if (status == KILN_OK) {
        switch (e.kind) {
        case KILN_EXPR_ADD:
        case KILN_EXPR_SUB:
            *out = *lhs;
            status = add_poly(pool, out, rhs, e.kind == KILN_EXPR_ADD ? 1 : -1);
            break;
        case KILN_EXPR_MUL: status = multiply_polys(pool, lhs, rhs, out); break;
        default: /* divisor: a positive constant, checked when interned */
            status = divide_poly(pool, lhs, pool->items[e.rhs].constant, e.kind == KILN_EXPR_MOD, out);
            break;
        }
    }
    free(lhs);
    free(rhs);
    return status;
}

/* coefficient * atoms..., with |coefficient| when `magnitude` (the sign goes into a '-'). */
static kiln_status term_to_expr(kiln_expr_pool *pool, const kiln_poly_term *t, bool magnitude, uint32_t *id)
{
    int64_t c = magnitude && t->coefficient < 0 ? -t->coefficient : t->coefficient;
    uint32_t acc = t->atoms[0];
    if (c != 1) {
        uint32_t cid;
        KILN_TRY(intern_const(pool, c, &cid));
        KILN_TRY(intern_binary(pool, KILN_EXPR_MUL, cid, t->atoms[0], &acc));
    }
    for (uint32_t i = 1; i < t->degree; i++)
        KILN_TRY(intern_binary(pool, KILN_EXPR_MUL, acc, t->atoms[i], &acc));
    *id = acc;
    return KILN_OK;
}

kiln_status kiln_poly_to_expr(kiln_expr_pool *pool, const kiln_poly *poly, uint32_t *id)
{
    /* Shape text has no unary minus, so a negative lead is written `0 - ...`
     * and the printed form parses back to the same tree. */
    uint32_t acc, term, zero;
    bool negative_lead = poly->term_count ? poly->terms[0].coefficient < 0 && poly->terms[0].coefficient != INT64_MIN
                                          : poly->constant < 0 && poly->constant != INT64_MIN;
    if (poly->term_count == 0 && !negative_lead)
        return intern_const(pool, poly->constant, id);
    if (poly->term_count == 0) {
        KILN_TRY(intern_const(pool, 0, &zero));
        KILN_TRY(intern_const(pool, -poly->constant, &term));
        return intern_binary(pool, KILN_EXPR_SUB, zero, term, id);
    }
    KILN_TRY(term_to_expr(pool, &poly->terms[0], negative_lead, &acc));
    if (negative_lead) {
        KILN_TRY(intern_const(pool, 0, &zero));
        KILN_TRY(intern_binary(pool, KILN_EXPR_SUB, zero, acc, &acc));
    }
    for (uint32_t i = 1; i < poly->term_count; i++) {
        /* INT64_MIN has no magnitude: add it with its sign instead. */
        bool subtract = poly->terms[i].coefficient < 0 && poly->terms[i].coefficient != INT64_MIN;
        KILN_TRY(term_to_expr(pool, &poly->terms[i], subtract, &term));
        KILN_TRY(intern_binary(pool, subtract ? KILN_EXPR_SUB : KILN_EXPR_ADD, acc, term, &acc));
    }
    if (poly->constant) {
        bool subtract = poly->constant < 0 && poly->constant != INT64_MIN;
        uint32_t cid;
        KILN_TRY(intern_const(pool, subtract ? -poly->constant : poly->constant, &cid));
        KILN_TRY(intern_binary(pool, subtract ? KILN_EXPR_SUB : KILN_EXPR_ADD, acc, cid, &acc));
    }
    *id = acc;
    return KILN_OK;
}

kiln_status kiln_expr_canonical(kiln_expr_pool *pool, uint32_t id, uint32_t *out, kiln_error *err)
{
    kiln_poly *poly = malloc(sizeof *poly);
    kiln_status status = poly ? kiln_expr_to_poly(pool, id, poly) : KILN_ERR_OUT_OF_MEMORY;
    if (status == KILN_OK)
        status = kiln_poly_to_expr(pool, poly, out);
    free(poly);
    if (status == KILN_ERR_OUT_OF_MEMORY)
        return kiln_fail(err, status, "out of memory for shape expressions");
    if (status != KILN_OK) /* beyond the limits: keep the expression as written */
        *out = id;
    return KILN_OK;
}

kiln_status kiln_shape_make_canonical(kiln_expr_pool *pool, kiln_shape *shape, kiln_error *err)
{
    for (uint32_t a = 0; a < shape->rank; a++)
        KILN_TRY(kiln_expr_canonical(pool, shape->axes[a], &shape->axes[a], err));
    return KILN_OK;
}
