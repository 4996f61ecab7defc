/* size_claim.c — domain-wide proof of size preconditions (see size_claim.h). */
#include "size_claim.h"

#include <stdio.h>
#include <stdlib.h>

#include "domain_search.h"
#include "error.h"
#include "shape_canon.h"

static bool claim_holds(const kiln_expr_pool *pool, const int64_t *values, const bool *bound, const void *context)
{
    const kiln_size_claim *c = context;
    int64_t va, vb;
    if (kiln_expr_eval(pool, c->a, values, bound, &va, NULL) != KILN_OK)
        return false;
    switch (c->kind) {
    case KILN_CLAIM_EQUAL: return kiln_expr_eval(pool, c->b, values, bound, &vb, NULL) == KILN_OK && va == vb;
    case KILN_CLAIM_MULTIPLE_OF: return va % c->k == 0;
    default: return va >= c->k;
    }
}

/* A sufficient structural proof that expression `id` is a multiple of k at every point. */
static bool structurally_multiple(const kiln_shape_context *ctx, uint32_t id, int64_t k, int depth)
{
    const kiln_expr *e = &ctx->pool->items[id];
    if (depth > KILN_EXPR_MAX_DEPTH)
        return false;
    switch (e->kind) {
    case KILN_EXPR_CONST: return e->constant % k == 0;
    case KILN_EXPR_DIM: return e->dim < ctx->dim_count && ctx->dims[e->dim].multiple_of % k == 0;
    case KILN_EXPR_MUL:
        return structurally_multiple(ctx, e->lhs, k, depth + 1) || structurally_multiple(ctx, e->rhs, k, depth + 1);
    case KILN_EXPR_ADD:
    case KILN_EXPR_SUB:
        return structurally_multiple(ctx, e->lhs, k, depth + 1) && structurally_multiple(ctx, e->rhs, k, depth + 1);
    default: return false;
    }
}

/* A proof without search. */
static bool proven_directly(const kiln_shape_context *ctx, const kiln_interval *ranges, const kiln_size_claim *c)
{
    kiln_interval ia, ib;
    bool has_a = kiln_expr_bounds(ctx->pool, c->a, ranges, &ia);
    switch (c->kind) {
    case KILN_CLAIM_EQUAL:
        if (c->a == c->b)
            return true;
        return has_a && kiln_expr_bounds(ctx->pool, c->b, ranges, &ib) && ia.lo == ia.hi && ib.lo == ib.hi && ia.lo == ib.lo;
    case KILN_CLAIM_MULTIPLE_OF: return structurally_multiple(ctx, c->a, c->k, 0);
    default: return has_a && ia.lo >= c->k;
    }
}

typedef enum verdict { UNDECIDED, PROVEN, REFUTED, OUT_OF_BUDGET } verdict;

/* Steps one point of the domain costs: the expression nodes claim_holds evaluates. */
static uint64_t point_cost(const kiln_shape_context *ctx, const kiln_size_claim *c)
{
    uint64_t cost = ctx->pool->items[c->a].tree_size;
    if (c->kind == KILN_CLAIM_EQUAL)
        cost += ctx->pool->items[c->b].tree_size;
    return cost;
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Limits of the residue split: the modulus, the classes searched, and the grid points over all classes. */
#define MAX_PERIOD 4096
#define MAX_RESIDUE_CLASSES 4096
#define MAX_GRID_POINTS 1000000

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* lcm(a, b), or -1 above MAX_PERIOD. */
static int64_t lcm_capped(int64_t a, int64_t b)
{
    int64_t result;
    if (__builtin_mul_overflow(a / gcd(a, b), b, &result) || result > MAX_PERIOD)
        return -1;
    return result;
}

/*
 * Walk the division and remainder atoms of `p`, nested ones too: fold the
 * product of the divisors on the way to each atom into *period (lcm) and
 * mark the dims that stand inside an atom. The product, not just each
 * divisor, makes every nested atom a polynomial with integer coefficients
 * (or a constant) once the dims' residues mod *period are fixed.
 * @return false past the limits.
 */
static bool scan_atoms(kiln_expr_pool *pool, const kiln_poly *p, int64_t enclosing, int64_t *period, bool *in_atom,
                       int depth)
{
    if (depth > KILN_EXPR_MAX_DEPTH)
        return false;
    for (uint32_t t = 0; t < p->term_count; t++)
        for (uint32_t j = 0; j < p->terms[t].degree; j++) {
            const kiln_expr atom = pool->items[p->terms[t].atoms[j]];
            if (atom.kind == KILN_EXPR_DIM) {
                in_atom[atom.dim] = in_atom[atom.dim] || depth > 0;
                continue;
            }
            int64_t divisor;
            if (__builtin_mul_overflow(enclosing, pool->items[atom.rhs].constant, &divisor) || divisor > MAX_PERIOD ||
                (*period = lcm_capped(*period, divisor)) < 0)
                return false;
            kiln_poly *inner = malloc(sizeof *inner);
            bool ok = inner && kiln_expr_to_poly(pool, atom.lhs, inner) == KILN_OK &&
                      scan_atoms(pool, inner, divisor, period, in_atom, depth + 1);
            free(inner);
            if (!ok)
                return false;
        }
    return true;
}

/*
 * The degree of `p` in dim d once d's residue is fixed: d counts 1, a
 * floor division its inner polynomial's degree, a remainder 0 (it is then
 * a constant). @return -1 past the limits.
 */
static int dim_degree(kiln_expr_pool *pool, const kiln_poly *p, uint32_t d, int depth)
{
    int best = 0;
    if (depth > KILN_EXPR_MAX_DEPTH)
        return -1;
    for (uint32_t t = 0; t < p->term_count; t++) {
        int degree = 0;
        for (uint32_t j = 0; j < p->terms[t].degree; j++) {
            const kiln_expr atom = pool->items[p->terms[t].atoms[j]];
            if (atom.kind == KILN_EXPR_DIM) {
                degree += atom.dim == d;
            } else if (atom.kind == KILN_EXPR_FLOORDIV) {
                kiln_poly *inner = malloc(sizeof *inner);
                int inner_degree = inner && kiln_expr_to_poly(pool, atom.lhs, inner) == KILN_OK
                                       ? dim_degree(pool, inner, d, depth + 1)
                                       : -1;
                free(inner);
                if (inner_degree < 0)
                    return -1;
                degree += inner_degree;
            }
        }
        best = degree > best ? degree : best;
    }
    return best;
}

/*
 * Whether dim d enters `p` only through terms of d alone (c*d, c*d*d),
 * never with another atom and never inside a division or remainder (the
 * caller checks that): then P = a*d*d + b*d + (terms without d), and the
 * minimum of P over d does not depend on the other variables. Sets a and b.
 */
static bool separable_quadratic(const kiln_expr_pool *pool, const kiln_poly *p, uint32_t d, int64_t *a, int64_t *b)
{
    *a = *b = 0;
    for (uint32_t t = 0; t < p->term_count; t++) {
        const kiln_poly_term *term = &p->terms[t];
        uint32_t uses = 0;
        for (uint32_t j = 0; j < term->degree; j++) {
            const kiln_expr *atom = &pool->items[term->atoms[j]];
            uses += atom->kind == KILN_EXPR_DIM && atom->dim == d;
        }
        if (uses == 0)
            continue;
        if (uses != term->degree || uses > 2)
            return false; /* d times another atom, or d cubed */
        *(uses == 2 ? a : b) = term->coefficient;
    }
    return true;
}

/* a*(2x + m) + b >= 0, i.e. a*x*x + b*x rises (or stays) from x to x + m; for a > 0, x >= 0, m >= 1. */
static bool rises_after(int64_t a, int64_t b, int64_t x, int64_t m)
{
    int64_t twice, span, product, sum;
    if (__builtin_mul_overflow(x, 2, &twice) || __builtin_add_overflow(twice, m, &span) ||
        __builtin_mul_overflow(a, span, &product))
        return true; /* a*(2x + m) is past 2^63, so it outweighs any b */
    return __builtin_add_overflow(product, b, &sum) || sum >= 0; /* product > 0: only b > 0 can overflow it */
}

/*
 * The value of first, first + m, ..., last where a*x*x + b*x (a > 0) is
 * smallest: its steps f(x + m) - f(x) = m*(a*(2x + m) + b) grow with x,
 * so it is the first x after which f does not fall (binary search).
 */
static int64_t convex_minimum(int64_t a, int64_t b, int64_t first, int64_t last, int64_t m)
{
    uint64_t lo = 0, hi = (uint64_t)((last - first) / m); /* the answer's index lies in lo..hi */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rises_after(a, b, first + (int64_t)mid * m, m))
            hi = mid;
        else
            lo = mid + 1;
    }
    return first + (int64_t)lo * m;
}

/*
 * The decision procedure (spec/contract.md §4.1). Dims are independent;
 * dim d takes the values first, first+m, ..., last (m its multiple_of).
 * Let P be a - b (EQUAL), a (MULTIPLE_OF) or a - k (AT_LEAST), as a
 * canonical polynomial. Fix the residue of every dim that stands inside a
 * division or remainder modulo L (the lcm of the divisor products and of
 * those dims' multiple_of): writing d = r + L*t, every atom becomes a
 * polynomial in t with integer coefficients, or a constant, so within
 * each residue class P is a polynomial whose degree in each variable is
 * known. The claim then holds on the class exactly when it holds on a
 * small grid:
 *  - P == 0: a polynomial of degree <= e in each variable that vanishes on
 *    e + 1 values of each is zero (Alon's combinatorial Nullstellensatz);
 *    a variable with fewer values is taken whole.
 *  - P % k == 0: with integer coefficients P mod k depends on each
 *    variable only mod k, and d's values repeat mod k every k/gcd(m, k)
 *    steps (every k steps of t).
 *  - P >= 0 with no variable squared: P is affine in each, so its minimum
 *    over the box is at a corner (first and last value of each).
 *    A variable d may also be squared if it is separable
 *    (separable_quadratic: P = a*d*d + b*d + terms without d): P's
 *    minimum over d is then at the same value of d whatever the others
 *    are, the value convex_minimum finds when a > 0, an end when a < 0.
 *    So sum(d_i*d_i - d_i) >= 0 is decided on one point.
 * The grids are searched with the original expressions, so a
 * counterexample found is a real point of the domain. Their points are
 * paid for from `budget`; OUT_OF_BUDGET when it runs out.
 */
static verdict decide_by_polynomial(const kiln_shape_context *ctx, const kiln_size_claim *c,
                                    const uint32_t *involved, uint32_t involved_count, kiln_proof_budget *budget,
                                    int64_t *values, bool *bound)
{
    uint32_t target = c->a, k_id;
    kiln_error ignored;
    if (involved_count > KILN_DOMAIN_MAX_INVOLVED)
        return UNDECIDED;
    if (c->kind != KILN_CLAIM_MULTIPLE_OF) {
        uint32_t subtrahend = c->b;
        if (c->kind == KILN_CLAIM_AT_LEAST && kiln_expr_const(ctx->pool, c->k, &k_id, &ignored) == KILN_OK)
            subtrahend = k_id;
        else if (c->kind == KILN_CLAIM_AT_LEAST)
            return UNDECIDED;
        kiln_expr difference = {.kind = KILN_EXPR_SUB, .lhs = c->a, .rhs = subtrahend};
        if (kiln_expr_intern(ctx->pool, &difference, ctx->dim_count, &target, &ignored) != KILN_OK)
            return UNDECIDED;
    }
    kiln_poly *poly = malloc(sizeof *poly);
    bool *in_atom = calloc(ctx->dim_count + 1, sizeof *in_atom);
    int64_t period = 1;
    int degree[KILN_DOMAIN_MAX_INVOLVED];
    bool separable[KILN_DOMAIN_MAX_INVOLVED];
    int64_t square_coefficient[KILN_DOMAIN_MAX_INVOLVED], linear_coefficient[KILN_DOMAIN_MAX_INVOLVED];
    bool decidable = poly && in_atom && kiln_expr_to_poly(ctx->pool, target, poly) == KILN_OK &&
                     scan_atoms(ctx->pool, poly, 1, &period, in_atom, 0);
    uint64_t classes = 1;
    for (uint32_t i = 0; decidable && i < involved_count; i++) {
        const kiln_dim_decl *dim = &ctx->dims[involved[i]];
        degree[i] = dim_degree(ctx->pool, poly, involved[i], 0);
        separable[i] = c->kind == KILN_CLAIM_AT_LEAST && degree[i] > 1 && !in_atom[involved[i]] &&
                       separable_quadratic(ctx->pool, poly, involved[i], &square_coefficient[i],
                                           &linear_coefficient[i]);
        decidable = degree[i] >= 0 && !(c->kind == KILN_CLAIM_AT_LEAST && degree[i] > 1 && !separable[i]);
        if (decidable && in_atom[involved[i]])
            decidable = (period = lcm_capped(period, dim->multiple_of)) > 0;
    }
    for (uint32_t i = 0; decidable && i < involved_count; i++)
        if (in_atom[involved[i]])
            decidable = !__builtin_mul_overflow(classes, (uint64_t)(period / ctx->dims[involved[i]].multiple_of),
                                                &classes) &&
                        classes <= MAX_RESIDUE_CLASSES;
    free(poly);
    if (!decidable) {
        free(in_atom);
        return UNDECIDED;
    }
    /* Odometer over the residue classes of the dims inside atoms. */
    uint64_t residue[KILN_DOMAIN_MAX_INVOLVED] = {0}, points = 0;
    kiln_grid_axis axes[KILN_DOMAIN_MAX_INVOLVED];
    verdict result = PROVEN;
    for (;;) {
        /* Visiting a class costs a step per variable even when it is empty:
         * 4096 classes of nothing, on every node, would be unbounded work too. */
        if (!kiln_proof_budget_spend(budget, involved_count)) {
            result = OUT_OF_BUDGET;
            break;
        }
        bool empty = false;
        for (uint32_t i = 0; i < involved_count && !empty; i++) {
            const kiln_dim_decl *dim = &ctx->dims[involved[i]];
            int64_t first = kiln_dim_first(dim), last = kiln_dim_last(dim), step = dim->multiple_of;
            if (in_atom[involved[i]]) {
                int64_t r = (int64_t)residue[i] * step; /* d = r + period*t, r a multiple of step */
                int64_t t_lo = -floor_div(r - first, period), t_hi = floor_div(last - r, period);
                empty = t_lo > t_hi;
                first = r + period * t_lo;
                last = r + period * t_hi;
                step = period;
            }
            uint64_t available = empty ? 0 : (uint64_t)((last - first) / step) + 1, wanted;
            if (degree[i] == 0)
                wanted = 1;
            else if (c->kind == KILN_CLAIM_EQUAL)
                wanted = (uint64_t)degree[i] + 1;
            else if (c->kind == KILN_CLAIM_MULTIPLE_OF)
                wanted = in_atom[involved[i]] ? (uint64_t)c->k : (uint64_t)(c->k / gcd(step % c->k, c->k));
            else if (separable[i] && square_coefficient[i] > 0) {
                first = last = convex_minimum(square_coefficient[i], linear_coefficient[i], first, last, step);
                wanted = 1;
            } else
                wanted = 0; /* AT_LEAST, affine (or concave and separable) in this variable: its ends */
            axes[i] = (kiln_grid_axis){first, step, last, wanted < available ? wanted : available, wanted == 0};
        }
        if (!empty) {
            bool searched;
            if (kiln_domain_search_grid(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count, axes,
                                        claim_holds, c, budget, point_cost(ctx, c), values, bound,
                                        &searched)) {
                result = REFUTED;
                break;
            }
            if (!searched && budget->exhausted) {
                result = OUT_OF_BUDGET;
                break;
            }
            uint64_t grid = 1;
            for (uint32_t i = 0; i < involved_count; i++)
                grid *= axes[i].ends ? 2 : axes[i].count; /* bounded: the search took it */
            points += grid;
            if (!searched || points > MAX_GRID_POINTS) {
                result = UNDECIDED;
                break;
            }
        }
        uint32_t i = 0;
        for (; i < involved_count; i++) {
            if (!in_atom[involved[i]])
                continue;
            if (++residue[i] < (uint64_t)(period / ctx->dims[involved[i]].multiple_of))
                break;
            residue[i] = 0;
        }
        if (i == involved_count)
            break;
    }
    free(in_atom);
    return result;
}

static bool claim_uses_dim(const kiln_shape_context *ctx, const kiln_size_claim *c, uint32_t d)
{
    return kiln_expr_uses_dim(ctx->pool, c->a, d) ||
           (c->kind == KILN_CLAIM_EQUAL && kiln_expr_uses_dim(ctx->pool, c->b, d));
}

void kiln_format_size(const kiln_shape_context *ctx, uint32_t id, char *text, size_t size)
{
    const char **names = malloc((ctx->dim_count ? ctx->dim_count : 1) * sizeof *names);
    snprintf(text, size, "?");
    if (!names)
        return;
    for (uint32_t d = 0; d < ctx->dim_count; d++)
        names[d] = ctx->dims[d].name;
    kiln_expr_format(ctx->pool, id, names, text, size);
    free(names);
}

/* Appends "name in lo..hi[ multiple_of k]" for each involved dim, or "d=v" at a point when `values` is set. */
static void format_dims(const kiln_shape_context *ctx, const uint32_t *involved, uint32_t count,
                        const int64_t *values, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t i = 0; i < count && used < size; i++) {
        const kiln_dim_decl *d = &ctx->dims[involved[i]];
        const char *sep = i ? ", " : "";
        if (values)
            used += (size_t)snprintf(text + used, size - used, "%s%s=%lld", sep, d->name,
                                     (long long)values[involved[i]]);
        else if (d->multiple_of > 1)
            used += (size_t)snprintf(text + used, size - used, "%s%s in %lld..%lld multiple_of %lld", sep, d->name,
                                     (long long)d->min, (long long)d->max, (long long)d->multiple_of);
        else
            used += (size_t)snprintf(text + used, size - used, "%s%s in %lld..%lld", sep, d->name,
                                     (long long)d->min, (long long)d->max);
    }
}

/*
 * The refusal when the budget ran out before the claim was decided.
 * `sampled`: the claim was past enumeration, so the search cut short was
 * only looking for a counterexample, and a larger budget cannot prove it.
 */
static kiln_status out_of_budget(const kiln_shape_context *ctx, const kiln_proof_budget *budget, const char *what,
                                 const uint32_t *involved, uint32_t involved_count, bool sampled, kiln_error *err)
{
    char dims[256];
    format_dims(ctx, involved, involved_count, NULL, dims, sizeof dims);
    return kiln_fail(err, KILN_ERR_LIMIT,
                     "%s: cannot decide within the proof budget (%llu steps; kiln_limits.max_proof_steps) whether "
                     "%s over the declared domain (dims: %s); %s",
                     ctx->node_label, (unsigned long long)budget->limit, what, dims,
                     sampled ? "the domain is too large to be checked point by point, so a larger budget could "
                               "only find a counterexample: declare narrower dims or a simpler size"
                             : "raise kiln_limits.max_proof_steps where the program is loaded, or declare "
                               "narrower dims");
}

/*
 * a >= k follows from a declared relation L <= R when a - (R - L) >= k
 * at every point of the box: there R - L >= 0 adds to it. Tried on the
 * bounds alone, the cheap proof that settles the claims declaring a
 * relation is for (the relation `past + seq <= 2048` and the claim
 * `2048 - (past + seq) >= 0` of a state append differ by a constant).
 */
static bool implied_by_relation(const kiln_shape_context *ctx, const kiln_interval *ranges, const kiln_size_claim *c)
{
    if (c->kind != KILN_CLAIM_AT_LEAST)
        return false;
    for (uint32_t i = 0; i < ctx->relation_count; i++) {
        const kiln_dim_relation *r = &ctx->relations[i];
        kiln_expr slack = {.kind = KILN_EXPR_SUB, .lhs = r->rhs, .rhs = r->lhs};
        uint32_t slack_id, rest_id, canonical;
        kiln_error ignored;
        if (kiln_expr_intern(ctx->pool, &slack, ctx->dim_count, &slack_id, &ignored) != KILN_OK)
            continue;
        kiln_expr rest = {.kind = KILN_EXPR_SUB, .lhs = c->a, .rhs = slack_id};
        if (kiln_expr_intern(ctx->pool, &rest, ctx->dim_count, &rest_id, &ignored) != KILN_OK ||
            kiln_expr_canonical(ctx->pool, rest_id, &canonical, &ignored) != KILN_OK)
            continue;
        kiln_interval bounds;
        if (kiln_expr_bounds(ctx->pool, canonical, ranges, &bounds) && bounds.lo >= c->k)
            return true;
    }
    return false;
}

kiln_status kiln_prove_size_claim(const kiln_shape_context *ctx, const kiln_size_claim *claim, const char *what,
                                  const char *advice, kiln_error *err)
{
    size_t n = ctx->dim_count ? ctx->dim_count : 1;
    kiln_interval *ranges = malloc(n * sizeof *ranges);
    int64_t *values = malloc(n * sizeof *values);
    bool *bound = malloc(n * sizeof *bound);
    uint32_t *involved = malloc(n * sizeof *involved);
    kiln_status status = KILN_OK;
    if (!ranges || !values || !bound || !involved) {
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->node_label);
        goto done;
    }
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        ranges[d].lo = kiln_dim_first(&ctx->dims[d]);
        ranges[d].hi = kiln_dim_last(&ctx->dims[d]);
        values[d] = 0;
        bound[d] = false;
    }
    if (proven_directly(ctx, ranges, claim) || implied_by_relation(ctx, ranges, claim))
        goto done;

    uint32_t involved_count = 0;
    uint64_t points = 1;
    for (uint32_t d = 0; d < ctx->dim_count; d++) {
        if (!claim_uses_dim(ctx, claim, d))
            continue;
        involved[involved_count++] = d;
        const kiln_dim_decl *dim = &ctx->dims[d];
        uint64_t span = (uint64_t)((kiln_dim_last(dim) - kiln_dim_first(dim)) / dim->multiple_of) + 1;
        if (points > KILN_DOMAIN_ENUMERATION_LIMIT || __builtin_mul_overflow(points, span, &points))
            points = (uint64_t)KILN_DOMAIN_ENUMERATION_LIMIT + 1;
    }
    if (involved_count > KILN_DOMAIN_MAX_INVOLVED) /* not searched: never a proof */
        points = (uint64_t)KILN_DOMAIN_ENUMERATION_LIMIT + 1;
    const char *sep = advice ? ". " : "";
    if (!advice)
        advice = "";
    if (involved_count == 0) {
        if (!claim_holds(ctx->pool, values, bound, claim))
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: it is not true that %s%s%s", ctx->node_label,
                               what, sep, advice);
        /* else: it holds; only the bounds of its constants overflowed */
        goto done;
    }
    kiln_proof_budget own, *budget = ctx->budget;
    if (!budget) {
        kiln_proof_budget_init(&own, KILN_DEFAULT_MAX_PROOF_STEPS);
        budget = &own;
    }
    verdict decided = decide_by_polynomial(ctx, claim, involved, involved_count, budget, values, bound);
    if (decided == PROVEN)
        goto done;
    /* Out of budget is refused even when non-strict: whether a claim
     * becomes a guard must not depend on the budget of the runtime that
     * checks the program, or one runtime would store guards another
     * proves or misses. */
    if (decided == OUT_OF_BUDGET) {
        status = out_of_budget(ctx, budget, what, involved, involved_count, false, err);
        goto done;
    }
    if (ctx->deferred) {
        /* Non-strict: the claim becomes a runtime guard instead of a refusal. */
        kiln_runtime_guard guard = {ctx->node, claim->kind, claim->a, claim->b, claim->k, NULL};
        status = kiln_guard_list_add(ctx->deferred, &guard, what, err);
        goto done;
    }
    if (decided == REFUTED ||
        kiln_domain_find_counterexample(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count, claim_holds,
                                        claim, budget, point_cost(ctx, claim), values, bound)) {
        char dims[256], point[256];
        format_dims(ctx, involved, involved_count, NULL, dims, sizeof dims);
        format_dims(ctx, involved, involved_count, values, point, sizeof point);
        status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                           "%s: cannot prove that %s over the declared domain (dims: %s); counterexample: %s%s%s",
                           ctx->node_label, what, dims, point, sep, advice);
    } else if (budget->exhausted) {
        status = out_of_budget(ctx, budget, what, involved, involved_count,
                               points > KILN_DOMAIN_ENUMERATION_LIMIT, err);
    } else if (points > KILN_DOMAIN_ENUMERATION_LIMIT) {
        char dims[256];
        format_dims(ctx, involved, involved_count, NULL, dims, sizeof dims);
        status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                           "%s: cannot prove that %s over the declared domain (dims: %s; too many to be checked "
                           "point by point)%s%s",
                           ctx->node_label, what, dims, sep, advice);
    }
    /* else: every point was enumerated and none failed — a proof. */
done:
    free(ranges);
    free(values);
    free(bound);
    free(involved);
    return status;
}
