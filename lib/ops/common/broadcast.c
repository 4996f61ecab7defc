/* broadcast.c — NumPy broadcasting, static and at run time (see broadcast.h). */
#include "broadcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain_search.h"
#include "error.h"
#include "size_claim.h"

typedef struct broadcast_pair {
    uint32_t a, b;
} broadcast_pair;

/* Sizes a and b broadcast at this point: equal, or either is 1. */
static bool sizes_broadcast(const kiln_expr_pool *pool, const int64_t *values, const bool *bound,
                            const void *context)
{
    const broadcast_pair *pair = context;
    int64_t va, vb;
    if (kiln_expr_eval(pool, pair->a, values, bound, &va, NULL) != KILN_OK ||
        kiln_expr_eval(pool, pair->b, values, bound, &vb, NULL) != KILN_OK)
        return false;
    return va == vb || va == 1 || vb == 1;
}

/*
 * Look for a domain point where sizes `a` and `b` do not broadcast. Writes
 * "dim=value, ..." for the dims involved into `text` and returns true if
 * one was found.
 */
static bool find_counterexample(const kiln_shape_context *ctx, uint32_t a, uint32_t b, char *text,
                                size_t size)
{
    uint32_t involved[16];
    uint32_t involved_count = 0;
    int64_t *values = malloc((ctx->dim_count + 1) * sizeof *values);
    bool *bound = malloc((ctx->dim_count + 1) * sizeof *bound);
    bool found = false;
    for (uint32_t d = 0; d < ctx->dim_count && involved_count < 16; d++)
        if (kiln_expr_uses_dim(ctx->pool, a, d) || kiln_expr_uses_dim(ctx->pool, b, d))
            involved[involved_count++] = d;
    broadcast_pair pair = {a, b};
    if (values && bound &&
        kiln_domain_find_counterexample(ctx->pool, ctx->dims, ctx->dim_count, involved, involved_count,
                                        sizes_broadcast, &pair, ctx->budget,
                                        (uint64_t)ctx->pool->items[a].tree_size + ctx->pool->items[b].tree_size,
                                        values, bound)) {
        size_t used = 0;
        text[0] = '\0';
        for (uint32_t i = 0; i < involved_count && used < size; i++)
            used += (size_t)snprintf(text + used, size - used, "%s%s=%lld", i ? ", " : "",
                                     ctx->dims[involved[i]].name, (long long)values[involved[i]]);
        found = true;
    }
    free(values);
    free(bound);
    return found;
}

kiln_status kiln_broadcast_axis(const kiln_shape_context *ctx, uint32_t a, uint32_t b,
                                  uint32_t out_axis, uint32_t *out, kiln_error *err)
{
    if (a == b || kiln_expr_is_const(ctx->pool, b, 1)) {
        *out = a;
        return KILN_OK;
    }
    if (kiln_expr_is_const(ctx->pool, a, 1)) {
        *out = b;
        return KILN_OK;
    }
    char left[128], right[128], example[256], what[320];
    kiln_format_size(ctx, a, left, sizeof left);
    kiln_format_size(ctx, b, right, sizeof right);
    /* Different expressions that are equal at every point of the domain
     * (`n % 16` and `n` for n <= 15) need no broadcasting at all. A
     * non-strict program checks that equality at run time instead. */
    snprintf(what, sizeof what, "output axis %u: sizes %s and %s are equal", out_axis, left, right);
    kiln_size_claim equal = {KILN_CLAIM_EQUAL, a, b, 0};
    kiln_error unproven;
    if (kiln_prove_size_claim(ctx, &equal, what, NULL, &unproven) == KILN_OK) {
        *out = a;
        return KILN_OK;
    }
    if (unproven.code == KILN_ERR_OUT_OF_MEMORY || unproven.code == KILN_ERR_LIMIT) {
        if (err)
            *err = unproven;
        return unproven.code;
    }
    if (ctx->pool->items[a].kind == KILN_EXPR_CONST && ctx->pool->items[b].kind == KILN_EXPR_CONST)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: output axis %u: sizes %s and %s do not broadcast", ctx->node_label,
                         out_axis, left, right);
    if (find_counterexample(ctx, a, b, example, sizeof example))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: output axis %u: cannot prove that %s and %s broadcast over the declared "
                         "domain; counterexample: %s. Use the same dim on both sides or a size of 1",
                         ctx->node_label, out_axis, left, right, example);
    return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                     "%s: output axis %u: cannot prove that %s and %s broadcast over the declared "
                     "domain. Use the same dim on both sides or a size of 1",
                     ctx->node_label, out_axis, left, right);
}

kiln_status kiln_broadcast_shapes(const kiln_shape_context *ctx, const kiln_shape *a, const kiln_shape *b,
                                  kiln_shape *out, kiln_error *err)
{
    uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
    out->rank = rank;
    for (uint32_t i = 0; i < rank; i++) {
        /* Align from the right, as NumPy does; missing axes act as size 1. */
        uint32_t ai = i + a->rank, bi = i + b->rank;
        bool has_a = ai >= rank, has_b = bi >= rank;
        if (has_a && has_b)
            KILN_TRY(kiln_broadcast_axis(ctx, a->axes[ai - rank], b->axes[bi - rank], i, &out->axes[i], err));
        else
            out->axes[i] = has_a ? a->axes[ai - rank] : b->axes[bi - rank];
    }
    return KILN_OK;
}

void kiln_broadcast_strides(const kiln_tensor *t, const kiln_tensor *out, int64_t *strides)
{
    int64_t stride = 1;
    for (uint32_t i = out->rank; i-- > 0;) {
        uint32_t offset = out->rank - t->rank;
        if (i < offset) {
            strides[i] = 0;
            continue;
        }
        int64_t extent = t->shape[i - offset];
        strides[i] = (extent == 1 && out->shape[i] != 1) ? 0 : stride;
        /* Overflows only for an empty tensor ((0, 2^63-1, 2^63-1)), whose strides
         * address nothing. */
        if (__builtin_mul_overflow(stride, extent, &stride))
            stride = 0;
    }
}
