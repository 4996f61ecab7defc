/* shape_expr.c — interning, evaluation, interval bounds and printing. */
#include "shape_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void kiln_expr_pool_init(kiln_expr_pool *pool)
{
    memset(pool, 0, sizeof *pool);
}

void kiln_expr_pool_release(kiln_expr_pool *pool)
{
    free(pool->items);
    free(pool->buckets);
    kiln_expr_pool_init(pool);
}

static bool is_binary(uint8_t kind)
{
    return kind >= KILN_EXPR_ADD && kind <= KILN_EXPR_MOD;
}

static uint64_t expr_hash(const kiln_expr *e)
{
    uint64_t h = 1469598103934665603ull ^ e->kind;
    uint64_t parts[3] = {(uint64_t)e->constant, e->dim, (uint64_t)e->lhs << 32 | e->rhs};
    for (int i = 0; i < 3; i++) {
        h ^= parts[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static bool expr_same(const kiln_expr *a, const kiln_expr *b)
{
    return a->kind == b->kind && a->constant == b->constant && a->dim == b->dim &&
           a->lhs == b->lhs && a->rhs == b->rhs;
}

static kiln_status grow_index(kiln_expr_pool *pool, kiln_error *err)
{
    uint32_t new_count = pool->bucket_count ? pool->bucket_count * 2 : 64;
    uint32_t *buckets = calloc(new_count, sizeof *buckets);
    if (!buckets)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for shape expressions");
    for (uint32_t id = 0; id < pool->count; id++) {
        uint32_t slot = (uint32_t)expr_hash(&pool->items[id]) & (new_count - 1);
        while (buckets[slot])
            slot = (slot + 1) & (new_count - 1);
        buckets[slot] = id + 1;
    }
    free(pool->buckets);
    pool->buckets = buckets;
    pool->bucket_count = new_count;
    return KILN_OK;
}

kiln_status kiln_expr_intern(kiln_expr_pool *pool, const kiln_expr *node, uint32_t dim_count,
                             uint32_t *id, kiln_error *err)
{
    kiln_expr e = {.kind = node->kind};
    switch (node->kind) {
    case KILN_EXPR_CONST:
        e.constant = node->constant;
        e.depth = 1;
        e.tree_size = 1;
        break;
    case KILN_EXPR_DIM:
        if (node->dim >= dim_count)
            return kiln_fail(err, KILN_ERR_MALFORMED, "shape expression refers to dim %u of %u",
                             node->dim, dim_count);
        e.dim = node->dim;
        e.depth = 1;
        e.tree_size = 1;
        break;
    default:
        if (!is_binary(node->kind))
            return kiln_fail(err, KILN_ERR_MALFORMED, "unknown shape expression kind %u", node->kind);
        if (node->lhs >= pool->count || node->rhs >= pool->count)
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "shape expression operand refers forward (%u, %u of %u)",
                             node->lhs, node->rhs, pool->count);
        if ((node->kind == KILN_EXPR_FLOORDIV || node->kind == KILN_EXPR_MOD) &&
            !(pool->items[node->rhs].kind == KILN_EXPR_CONST && pool->items[node->rhs].constant > 0))
            return kiln_fail(err, KILN_ERR_MALFORMED,
                             "floor-div and mod in shape expressions need a positive constant divisor");
        e.lhs = node->lhs;
        e.rhs = node->rhs;
        uint8_t depth = pool->items[e.lhs].depth > pool->items[e.rhs].depth
                            ? pool->items[e.lhs].depth : pool->items[e.rhs].depth;
        if (depth >= KILN_EXPR_MAX_DEPTH)
            return kiln_fail(err, KILN_ERR_LIMIT, "shape expression deeper than %d", KILN_EXPR_MAX_DEPTH);
        e.depth = (uint8_t)(depth + 1);
        uint32_t tree_size = 1u + pool->items[e.lhs].tree_size + pool->items[e.rhs].tree_size;
        if (tree_size > KILN_EXPR_MAX_TREE_SIZE)
            return kiln_fail(err, KILN_ERR_LIMIT, "shape expression has %u nodes, more than %d",
                             tree_size, KILN_EXPR_MAX_TREE_SIZE);
        e.tree_size = (uint16_t)tree_size;
        break;
    }
    uint64_t hash = expr_hash(&e);
    if (pool->bucket_count) {
        for (uint32_t slot = (uint32_t)hash & (pool->bucket_count - 1); pool->buckets[slot];
             slot = (slot + 1) & (pool->bucket_count - 1)) {
            if (expr_same(&pool->items[pool->buckets[slot] - 1], &e)) {
                *id = pool->buckets[slot] - 1;
                return KILN_OK;
            }
        }
    }
    if (pool->count == UINT32_MAX - 1)
        return kiln_fail(err, KILN_ERR_LIMIT, "too many shape expressions");
    if (pool->count == pool->capacity) {
        uint32_t capacity = pool->capacity ? pool->capacity * 2 : 32;
        kiln_expr *items = realloc(pool->items, (size_t)capacity * sizeof *items);
        if (!items)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for shape expressions");
        pool->items = items;
        pool->capacity = capacity;
    }
    /* Keep the index at most half full so probes stay short. */
    if ((uint64_t)(pool->count + 1) * 2 > pool->bucket_count)
        KILN_TRY(grow_index(pool, err));
    pool->items[pool->count] = e;
    uint32_t slot = (uint32_t)hash & (pool->bucket_count - 1);
    while (pool->buckets[slot])
        slot = (slot + 1) & (pool->bucket_count - 1);
    pool->buckets[slot] = pool->count + 1;
    *id = pool->count++;
    return KILN_OK;
}

kiln_status kiln_expr_const(kiln_expr_pool *pool, int64_t value, uint32_t *id, kiln_error *err)
{
    kiln_expr e = {.kind = KILN_EXPR_CONST, .constant = value};
    return kiln_expr_intern(pool, &e, 0, id, err);
}

kiln_status kiln_expr_dim(kiln_expr_pool *pool, uint32_t dim, uint32_t dim_count, uint32_t *id,
                          kiln_error *err)
{
    kiln_expr e = {.kind = KILN_EXPR_DIM, .dim = dim};
    return kiln_expr_intern(pool, &e, dim_count, id, err);
}

bool kiln_expr_is_const(const kiln_expr_pool *pool, uint32_t id, int64_t value)
{
    return pool->items[id].kind == KILN_EXPR_CONST && pool->items[id].constant == value;
}

bool kiln_expr_is_dim(const kiln_expr_pool *pool, uint32_t id, uint32_t *dim)
{
    if (pool->items[id].kind != KILN_EXPR_DIM)
        return false;
    *dim = pool->items[id].dim;
    return true;
}

/* c*d or d*c (or d itself, scale 1) with c >= 1. */
static bool as_scaled_dim(const kiln_expr_pool *pool, uint32_t id, uint32_t *dim, int64_t *scale)
{
    const kiln_expr *e = &pool->items[id];
    if (e->kind == KILN_EXPR_DIM) {
        *dim = e->dim;
        *scale = 1;
        return true;
    }
    if (e->kind != KILN_EXPR_MUL)
        return false;
    const kiln_expr *l = &pool->items[e->lhs], *r = &pool->items[e->rhs];
    const kiln_expr *c = l->kind == KILN_EXPR_CONST ? l : r;
    const kiln_expr *d = l->kind == KILN_EXPR_CONST ? r : l;
    if (c->kind != KILN_EXPR_CONST || d->kind != KILN_EXPR_DIM || c->constant < 1)
        return false;
    *dim = d->dim;
    *scale = c->constant;
    return true;
}

bool kiln_expr_as_affine(const kiln_expr_pool *pool, uint32_t id, uint32_t *dim, int64_t *scale,
                         int64_t *offset)
{
    const kiln_expr *e = &pool->items[id];
    *offset = 0;
    if (as_scaled_dim(pool, id, dim, scale))
        return true;
    if (e->kind != KILN_EXPR_ADD && e->kind != KILN_EXPR_SUB)
        return false;
    const kiln_expr *r = &pool->items[e->rhs];
    if (r->kind == KILN_EXPR_CONST && as_scaled_dim(pool, e->lhs, dim, scale)) {
        if (e->kind == KILN_EXPR_SUB && r->constant == INT64_MIN)
            return false;
        *offset = e->kind == KILN_EXPR_ADD ? r->constant : -r->constant;
        return true;
    }
    const kiln_expr *l = &pool->items[e->lhs];
    if (e->kind == KILN_EXPR_ADD && l->kind == KILN_EXPR_CONST && as_scaled_dim(pool, e->rhs, dim, scale)) {
        *offset = l->constant;
        return true;
    }
    return false;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

kiln_status kiln_expr_eval(const kiln_expr_pool *pool, uint32_t id, const int64_t *dim_values,
                           const bool *bound, int64_t *out, kiln_error *err)
{
    const kiln_expr *e = &pool->items[id];
    int64_t a, b;
    switch (e->kind) {
    case KILN_EXPR_CONST:
        *out = e->constant;
        return KILN_OK;
    case KILN_EXPR_DIM:
        if (!bound[e->dim])
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim %u has no value", e->dim);
        *out = dim_values[e->dim];
        return KILN_OK;
    default:
        break;
    }
    KILN_TRY(kiln_expr_eval(pool, e->lhs, dim_values, bound, &a, err));
    KILN_TRY(kiln_expr_eval(pool, e->rhs, dim_values, bound, &b, err));
    bool overflow = false;
    switch (e->kind) {
    case KILN_EXPR_ADD: overflow = __builtin_add_overflow(a, b, out); break;
    case KILN_EXPR_SUB: overflow = __builtin_sub_overflow(a, b, out); break;
    case KILN_EXPR_MUL: overflow = __builtin_mul_overflow(a, b, out); break;
    case KILN_EXPR_FLOORDIV: *out = floor_div(a, b); break; /* b > 0 by construction */
    case KILN_EXPR_MOD: *out = floor_mod(a, b); break;
    }
    if (overflow)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "shape expression overflows 64 bits");
    return KILN_OK;
}

bool kiln_expr_bounds(const kiln_expr_pool *pool, uint32_t id, const kiln_interval *dim_ranges,
                      kiln_interval *out)
{
    const kiln_expr *e = &pool->items[id];
    kiln_interval a, b;
    switch (e->kind) {
    case KILN_EXPR_CONST:
        out->lo = out->hi = e->constant;
        return true;
    case KILN_EXPR_DIM:
        *out = dim_ranges[e->dim];
        return true;
    default:
        break;
    }
    if (!kiln_expr_bounds(pool, e->lhs, dim_ranges, &a) || !kiln_expr_bounds(pool, e->rhs, dim_ranges, &b))
        return false;
    switch (e->kind) {
    case KILN_EXPR_ADD:
        return !__builtin_add_overflow(a.lo, b.lo, &out->lo) && !__builtin_add_overflow(a.hi, b.hi, &out->hi);
    case KILN_EXPR_SUB:
        return !__builtin_sub_overflow(a.lo, b.hi, &out->lo) && !__builtin_sub_overflow(a.hi, b.lo, &out->hi);
    case KILN_EXPR_MUL: {
        int64_t p[4];
        if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
            __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
            return false;
        out->lo = out->hi = p[0];
        for (int i = 1; i < 4; i++) {
            out->lo = p[i] < out->lo ? p[i] : out->lo;
            out->hi = p[i] > out->hi ? p[i] : out->hi;
        }
        return true;
    }
    case KILN_EXPR_FLOORDIV: /* divisor is a positive constant: monotone */
        out->lo = floor_div(a.lo, b.lo);
        out->hi = floor_div(a.hi, b.lo);
        return true;
    case KILN_EXPR_MOD:
        if (floor_div(a.lo, b.lo) == floor_div(a.hi, b.lo)) {
            out->lo = floor_mod(a.lo, b.lo);
            out->hi = floor_mod(a.hi, b.lo);
        } else {
            out->lo = 0;
            out->hi = b.lo - 1;
        }
        return true;
    }
    return false;
}

bool kiln_expr_uses_dim(const kiln_expr_pool *pool, uint32_t id, uint32_t dim)
{
    const kiln_expr *e = &pool->items[id];
    if (e->kind == KILN_EXPR_DIM)
        return e->dim == dim;
    if (e->kind == KILN_EXPR_CONST)
        return false;
    return kiln_expr_uses_dim(pool, e->lhs, dim) || kiln_expr_uses_dim(pool, e->rhs, dim);
}

typedef struct text_sink {
    char *buffer;
    size_t size;
    size_t length; /* full length, even past size */
} text_sink;

static void sink_put(text_sink *sink, const char *text)
{
    size_t n = strlen(text);
    if (sink->length < sink->size) {
        size_t room = sink->size - sink->length - 1;
        memcpy(sink->buffer + sink->length, text, n < room ? n : room);
        sink->buffer[sink->length + (n < room ? n : room)] = '\0';
    }
    sink->length += n;
}

static int precedence(uint8_t kind)
{
    return (kind == KILN_EXPR_ADD || kind == KILN_EXPR_SUB) ? 1 : is_binary(kind) ? 2 : 3;
}

static void format_expr(const kiln_expr_pool *pool, uint32_t id, const char *const *dim_names,
                        text_sink *sink)
{
    static const char *const operators[] = {"", "", " + ", " - ", "*", " / ", " % "};
    const kiln_expr *e = &pool->items[id];
    char number[32];
    if (e->kind == KILN_EXPR_CONST) {
        snprintf(number, sizeof number, "%lld", (long long)e->constant);
        sink_put(sink, number);
        return;
    }
    if (e->kind == KILN_EXPR_DIM) {
        sink_put(sink, dim_names[e->dim]);
        return;
    }
    int mine = precedence(e->kind);
    /* The parser is left-associative, so a right operand of equal
     * precedence keeps its parentheses: printing then re-parsing gives the
     * same tree, which keeps the text form round-trip exact. */
    bool left_parens = precedence(pool->items[e->lhs].kind) < mine;
    bool right_parens = precedence(pool->items[e->rhs].kind) <= mine;
    if (left_parens) sink_put(sink, "(");
    format_expr(pool, e->lhs, dim_names, sink);
    if (left_parens) sink_put(sink, ")");
    sink_put(sink, operators[e->kind]);
    if (right_parens) sink_put(sink, "(");
    format_expr(pool, e->rhs, dim_names, sink);
    if (right_parens) sink_put(sink, ")");
}

int kiln_expr_format(const kiln_expr_pool *pool, uint32_t id, const char *const *dim_names,
                     char *buffer, size_t size)
{
    text_sink sink = {buffer, size, 0};
    if (size)
        buffer[0] = '\0';
    format_expr(pool, id, dim_names, &sink);
    return (int)sink.length;
}
