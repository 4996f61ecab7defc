/* shape_parse.c — recursive-descent parser for shape text (grammar in the header). */
#include "shape_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "shape_canon.h"

typedef struct parser {
    const char *text;
    const char *at;
    const char *const *dim_names;
    uint32_t dim_count;
    const kiln_shape_alias *aliases;
    uint32_t alias_count;
    kiln_expr_pool *pool;
    kiln_error *err;
    unsigned nesting; /* open parentheses: bounds the recursion on untrusted text */
} parser;

static void skip_space(parser *p)
{
    while (*p->at == ' ' || *p->at == '\t')
        p->at++;
}

static kiln_status syntax_error(parser *p, const char *expected)
{
    const char *shown = *p->at ? p->at : "end of text";
    return kiln_fail(p->err, KILN_ERR_INVALID_ARGUMENT,
                     "shape \"%s\", column %d: expected %s, found '%.12s'",
                     p->text, (int)(p->at - p->text) + 1, expected, shown);
}

static kiln_status parse_expr(parser *p, uint32_t *id);

static kiln_status parse_factor(parser *p, uint32_t *id)
{
    skip_space(p);
    if (*p->at == '(') {
        /* A deeper tree would be refused when interned anyway; stopping
         * here keeps "((((...1...))))" from exhausting the stack first. */
        if (p->nesting >= KILN_EXPR_MAX_DEPTH)
            return kiln_fail(p->err, KILN_ERR_INVALID_ARGUMENT,
                             "shape \"%s\", column %d: parentheses nest deeper than %d",
                             p->text, (int)(p->at - p->text) + 1, KILN_EXPR_MAX_DEPTH);
        p->nesting++;
        p->at++;
        KILN_TRY(parse_expr(p, id));
        p->nesting--;
        skip_space(p);
        if (*p->at != ')')
            return syntax_error(p, "')'");
        p->at++;
        return KILN_OK;
    }
    if (isdigit((unsigned char)*p->at)) {
        char *end;
        errno = 0;
        long long value = strtoll(p->at, &end, 10);
        if (errno == ERANGE)
            return syntax_error(p, "an integer that fits in 64 bits");
        p->at = end;
        return kiln_expr_const(p->pool, value, id, p->err);
    }
    if (isalpha((unsigned char)*p->at) || *p->at == '_') {
        const char *start = p->at;
        while (isalnum((unsigned char)*p->at) || *p->at == '_')
            p->at++;
        size_t len = (size_t)(p->at - start);
        for (uint32_t d = 0; d < p->dim_count; d++)
            if (strlen(p->dim_names[d]) == len && memcmp(p->dim_names[d], start, len) == 0)
                return kiln_expr_dim(p->pool, d, p->dim_count, id, p->err);
        for (uint32_t a = 0; a < p->alias_count; a++) {
            if (strlen(p->aliases[a].name) == len && memcmp(p->aliases[a].name, start, len) == 0) {
                *id = p->aliases[a].expr;
                return KILN_OK;
            }
        }
        return kiln_fail(p->err, KILN_ERR_INVALID_ARGUMENT,
                         "shape \"%s\", column %d: '%.*s' is not a declared dim",
                         p->text, (int)(start - p->text) + 1, (int)len, start);
    }
    return syntax_error(p, "an integer, a dim name or '('");
}

static kiln_status parse_binary_level(parser *p, int level, uint32_t *id)
{
    KILN_TRY(level == 1 ? parse_binary_level(p, 2, id) : parse_factor(p, id));
    for (;;) {
        skip_space(p);
        uint8_t kind;
        char c = *p->at;
        if (level == 1 && c == '+') kind = KILN_EXPR_ADD;
        else if (level == 1 && c == '-') kind = KILN_EXPR_SUB;
        else if (level == 2 && c == '*') kind = KILN_EXPR_MUL;
        else if (level == 2 && c == '/') kind = KILN_EXPR_FLOORDIV;
        else if (level == 2 && c == '%') kind = KILN_EXPR_MOD;
        else return KILN_OK;
        const char *operator_at = p->at++;
        uint32_t rhs;
        KILN_TRY(level == 1 ? parse_binary_level(p, 2, &rhs) : parse_factor(p, &rhs));
        kiln_expr node = {.kind = kind, .lhs = *id, .rhs = rhs};
        kiln_error detail;
        if (kiln_expr_intern(p->pool, &node, p->dim_count, id, &detail) != KILN_OK)
            return kiln_fail(p->err, KILN_ERR_INVALID_ARGUMENT, "shape \"%s\", column %d: %s",
                             p->text, (int)(operator_at - p->text) + 1, detail.message);
    }
}

static kiln_status parse_expr(parser *p, uint32_t *id)
{
    return parse_binary_level(p, 1, id);
}

kiln_status kiln_shape_parse(const char *text, const char *const *dim_names, uint32_t dim_count,
                             kiln_expr_pool *pool, uint32_t *rank, uint32_t axes[KILN_MAX_RANK],
                             kiln_error *err)
{
    return kiln_shape_parse_with_aliases(text, dim_names, dim_count, NULL, 0, pool, rank, axes, err);
}

kiln_status kiln_shape_parse_with_aliases(const char *text, const char *const *dim_names, uint32_t dim_count,
                                          const kiln_shape_alias *aliases, uint32_t alias_count,
                                          kiln_expr_pool *pool, uint32_t *rank, uint32_t axes[KILN_MAX_RANK],
                                          kiln_error *err)
{
    parser p = {text, text, dim_names, dim_count, aliases, alias_count, pool, err, 0};
    bool bracketed = false;
    *rank = 0;
    skip_space(&p);
    if (*p.at == '[') {
        bracketed = true;
        p.at++;
        skip_space(&p);
    }
    if (*p.at && *p.at != ']') {
        for (;;) {
            if (*rank == KILN_MAX_RANK)
                return kiln_fail(err, KILN_ERR_LIMIT, "shape \"%s\" has more than %d axes",
                                 text, KILN_MAX_RANK);
            KILN_TRY(parse_expr(&p, &axes[*rank]));
            KILN_TRY(kiln_expr_canonical(pool, axes[*rank], &axes[*rank], err));
            (*rank)++;
            skip_space(&p);
            if (*p.at != ',')
                break;
            p.at++;
        }
    }
    skip_space(&p);
    if (bracketed) {
        if (*p.at != ']')
            return syntax_error(&p, "',' or ']'");
        p.at++;
        skip_space(&p);
    }
    if (*p.at)
        return syntax_error(&p, bracketed ? "end of shape" : "',' or end of shape");
    return KILN_OK;
}
