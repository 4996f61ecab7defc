/* size_claim.c — domain-wide proof of size preconditions (see size_claim.h). */
#include "size_claim.h"

#include <stdio.h>
#include <stdlib.h>

#include "domain_search.h"
#include "format/error.h"
#include "shape_canon.h"

static bool claim_holds(const kiln_expr_pool *pool, const int64_t *values, const bool *bound, void *context)
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

typedef enum verdict { UNDECIDED, PROVEN, REFUTED } verdict;

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * The decision procedure for claims whose canonical polynomial has only
 * dims as atoms (spec/contract.md §4.1). Each dim is independent, with
 * values first, first+m, ..., last. Let P be a - b (EQUAL), a (MULTIPLE_OF)
 * or a - k (AT_LEAST). The claim then holds on the whole domain exactly
 * when it holds on a small grid:
 *  - P == 0: a polynomial of degree <= e_d in each dim d that vanishes on
 *    e_d + 1 values of every dim is zero (Alon's combinatorial
 *    Nullstellensatz); a dim with fewer values is taken whole.
 *  - P % k == 0: P mod k depends on each dim only mod k, and dim d's
 *    values repeat mod k every k / gcd(m, k) steps.
 *  - P >= 0 with P multilinear (no dim squared): P is affine in each dim,
 *    so its minimum over the box is at a corner (first/last of each dim).
 * The grid is searched with the original expressions, so a counterexample
 * found is a real point of the domain.
 */
static verdict decide_by_polynomial(const kiln_shape_context *ctx, const kiln_size_claim *c,
                                    const uint32_t *involved, uint32_t involved_count, int64_t *values, bool *bound)
{
    uint32_t target = c->a, k_id;
    kiln_error ignored;
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
    if (!poly || kiln_expr_to_poly(ctx->pool, target, poly) != KILN_OK) {
        free(poly);
        return UNDECIDED;
    }
    uint64_t take[KILN_DOMAIN_MAX_INVOLVED];
    bool decidable = involved_count <= KILN_DOMAIN_MAX_INVOLVED;
    for (uint32_t i = 0; decidable && i < involved_count; i++) {
        uint32_t degree = 0;
        for (uint32_t t = 0; decidable && t < poly->term_count; t++) {
            uint32_t in_term = 0;
            for (uint32_t j = 0; j < poly->terms[t].degree; j++) {
                const kiln_expr *atom = &ctx->pool->items[poly->terms[t].atoms[j]];
                if (atom->kind != KILN_EXPR_DIM)
                    decidable = false; /* a division or remainder: not decided here */
                else if (atom->dim == involved[i])
                    in_term++;
            }
            degree = in_term > degree ? in_term : degree;
        }
        const kiln_dim_decl *dim = &ctx->dims[involved[i]];
        if (degree == 0)
            take[i] = 1; /* P does not depend on this dim */
        else if (c->kind == KILN_CLAIM_EQUAL)
            take[i] = degree + 1;
        else if (c->kind == KILN_CLAIM_MULTIPLE_OF)
            take[i] = (uint64_t)(c->k / gcd(dim->multiple_of % c->k, c->k));
        else if (degree == 1)
            take[i] = 0; /* first and last */
        else
            decidable = false;
    }
    free(poly);
    if (!decidable)
        return UNDECIDED;
    bool searched;
    if (kiln_domain_search_grid(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count, take, claim_holds,
                                (void *)c, values, bound, &searched))
        return REFUTED;
    return searched ? PROVEN : UNDECIDED;
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
    if (proven_directly(ctx, ranges, claim))
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
        if (!claim_holds(ctx->pool, values, bound, (void *)claim))
            status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: it is not true that %s%s%s", ctx->node_label,
                               what, sep, advice);
        /* else: it holds; only the bounds of its constants overflowed */
        goto done;
    }
    verdict decided = decide_by_polynomial(ctx, claim, involved, involved_count, values, bound);
    if (decided == PROVEN)
        goto done;
    if (ctx->deferred) {
        /* Non-strict: the claim becomes a runtime guard instead of a refusal. */
        kiln_runtime_guard guard = {ctx->node, claim->kind, claim->a, claim->b, claim->k, (char *)what};
        status = kiln_guard_list_add(ctx->deferred, &guard, err);
        goto done;
    }
    if (decided == REFUTED ||
        kiln_domain_find_counterexample(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count, claim_holds,
                                        (void *)claim, values, bound)) {
        char dims[256], point[256];
        format_dims(ctx, involved, involved_count, NULL, dims, sizeof dims);
        format_dims(ctx, involved, involved_count, values, point, sizeof point);
        status = kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                           "%s: cannot prove that %s over the declared domain (dims: %s); counterexample: %s%s%s",
                           ctx->node_label, what, dims, point, sep, advice);
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
