/* axis_product.c — products of shape expressions kept small (see axis_product.h). */
#include "axis_product.h"

#include "shape_expr.h"

kiln_status kiln_expr_scale(const kiln_shape_context *ctx, uint32_t e, int64_t c, uint32_t *out, kiln_error *err)
{
    const kiln_expr *x = &ctx->pool->items[e];
    if (c == 1) {
        *out = e;
        return KILN_OK;
    }
    int64_t k = 1;
    uint32_t s = e;
    if (x->kind == KILN_EXPR_CONST) {
        int64_t v;
        if (__builtin_mul_overflow(x->constant, c, &v))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
        return kiln_expr_const(ctx->pool, v, out, err);
    }
    if (c == 0)
        return kiln_expr_const(ctx->pool, 0, out, err);
    if (x->kind == KILN_EXPR_MUL && ctx->pool->items[x->lhs].kind == KILN_EXPR_CONST) {
        k = ctx->pool->items[x->lhs].constant;
        s = x->rhs;
    }
    int64_t factor;
    if (__builtin_mul_overflow(k, c, &factor))
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: an output size overflows", ctx->node_label);
    if (factor == 1) {
        *out = s;
        return KILN_OK;
    }
    uint32_t cid;
    KILN_TRY(kiln_expr_const(ctx->pool, factor, &cid, err));
    kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = cid, .rhs = s};
    return kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, out, err);
}

kiln_status kiln_axis_product(const kiln_shape_context *ctx, const kiln_shape *shape, uint32_t from, uint32_t to,
                              const bool *skip, const char *what, uint32_t *out, kiln_error *err)
{
    int64_t constant = 1;
    uint32_t symbolic = 0;
    bool have_symbolic = false;
    for (uint32_t i = from; i < to; i++) {
        if (skip && skip[i])
            continue;
        uint32_t factor = shape->axes[i];
        const kiln_expr *f = &ctx->pool->items[factor];
        if (f->kind == KILN_EXPR_CONST) {
            if (__builtin_mul_overflow(constant, f->constant, &constant))
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: the %s overflows", ctx->node_label, what);
            continue;
        }
        if (!have_symbolic) {
            symbolic = factor;
            have_symbolic = true;
            continue;
        }
        kiln_expr mul = {.kind = KILN_EXPR_MUL, .lhs = symbolic, .rhs = factor};
        KILN_TRY(kiln_expr_intern(ctx->pool, &mul, ctx->dim_count, &symbolic, err));
    }
    if (!have_symbolic)
        return kiln_expr_const(ctx->pool, constant, out, err);
    return kiln_expr_scale(ctx, symbolic, constant, out, err);
}
