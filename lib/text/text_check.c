/*
 * text_check.c — reading a semantic input check (see text_check.h), and
 * kiln_check_spec_parse, the one-line form tools take.
 *
 *   rule = "range" , bound , ".." , bound
 *        | "finite"
 *        | "categories" , ( "[" , INTEGER , { "," , INTEGER } , [ "," ] , "]"
 *                         | INTEGER , { "," , INTEGER } )
 *        | "unit" , ( STRING | bare_unit )
 *        | "description" , STRING ;
 *
 * Rules are separated by ',' or blanks. In the bare category list a ','
 * followed by an integer continues the list and one followed by anything
 * else separates rules, so `categories 0, 1, 2, unit m` reads as meant.
 */
#include "text_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "text_literal.h"

/* Longest piece of a spec quoted back in an error message. */
#define SPEC_QUOTE_MAX 96
/* Most categories one check may list: past what reader limits let a file
 * hold, and small enough that their byte count fits any size_t. */
#define MAX_CATEGORIES (1u << 24)
/* The source name kiln_check_spec_parse gives its lexer; messages that
 * start with it are rewritten to quote the spec instead. */
#define SPEC_SOURCE "<check>"

#define RULE_LIST "range MIN..MAX, finite, categories A, B, ..., unit TEXT or description \"TEXT\""

#define FAIL_AT(c, at, code, ...) kiln_text_fail_at((c)->err, (code), (c)->source, (at), __VA_ARGS__)

/* Which rules one check has given so far: each may appear once. */
typedef struct rules_seen {
    bool range, finite, categories, unit, description;
} rules_seen;

static kiln_status no_memory(kiln_check_cursor *c)
{
    return kiln_fail(c->err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading a check in %s", c->source);
}

static kiln_status advance(kiln_check_cursor *c)
{
    return kiln_lexer_next(c->lexer, c->token, c->err);
}

static bool at_line_end(const kiln_check_cursor *c)
{
    return c->token->kind == KILN_TOKEN_NEWLINE || c->token->kind == KILN_TOKEN_END;
}

/* "expected WHAT, found TOKEN" at the current token. */
static kiln_status expected(kiln_check_cursor *c, const char *what)
{
    kiln_text_buffer found;
    kiln_text_buffer_init(&found);
    kiln_token_describe(c->token, &found);
    kiln_status status = FAIL_AT(c, c->token->at, KILN_ERR_MALFORMED, "expected %s, found %s", what,
                                 found.failed || !found.data ? "?" : found.data);
    kiln_text_buffer_release(&found);
    return status;
}

kiln_status kiln_text_check_parse_name(kiln_check_cursor *c, bool colon_required, char **name,
                                       kiln_text_position *at)
{
    *name = NULL;
    if (c->token->kind != KILN_TOKEN_WORD)
        return expected(c, "the name of the input to check (NAME: RULE, ...)");
    *at = c->token->at;
    if (!(*name = kiln_text_copy(c->token->text, c->token->length)))
        return no_memory(c);
    kiln_status status = advance(c);
    if (status == KILN_OK && c->token->kind == KILN_TOKEN_COLON)
        status = advance(c);
    else if (status == KILN_OK && colon_required)
        status = expected(c, "':' after the input's name (write NAME: RULE, ..., e.g. x: range 0..1, finite)");
    if (status != KILN_OK) {
        free(*name);
        *name = NULL;
    }
    return status;
}

/* One range bound: a number, or inf / -inf. NaN is refused by name. */
static kiln_status parse_bound(kiln_check_cursor *c, const char *which, double *out, char *text, size_t size)
{
    const kiln_token *t = c->token;
    snprintf(text, size, "%.*s", (int)(t->length < size ? t->length : size - 1), t->text);
    if (t->kind == KILN_TOKEN_WORD && strncmp(text, "nan", 3) == 0 && (text[3] == '\0' || text[3] == '.'))
        return FAIL_AT(c, t->at, KILN_ERR_INVALID_PROGRAM,
                       "the %s of a range cannot be NaN: no value would be inside it; give a number", which);
    /* `inf..` lexes as one name ('.' continues a name): say how to write it. */
    if (t->kind == KILN_TOKEN_WORD && strncmp(text, "inf..", 5) == 0)
        return FAIL_AT(c, t->at, KILN_ERR_MALFORMED, "write a blank between 'inf' and '..' ('inf ..%s')", text + 5);
    bool number = t->kind == KILN_TOKEN_INTEGER || t->kind == KILN_TOKEN_FLOAT ||
                  (t->kind == KILN_TOKEN_WORD && strcmp(text, "inf") == 0);
    if (!number) {
        char what[96];
        snprintf(what, sizeof what, "a number for the %s of the range (range MIN..MAX, e.g. range 0..1)", which);
        return expected(c, what);
    }
    uint8_t element[8] = {0};
    if (t->length >= size || kiln_text_literal_parse(KILN_F64, text, element) != KILN_LITERAL_OK)
        return FAIL_AT(c, t->at, KILN_ERR_INVALID_PROGRAM, "the %s of the range, %s, does not fit f64 (-inf and "
                       "inf leave a side unbounded)", which, text);
    memcpy(out, element, sizeof *out);
    return advance(c);
}

/* range MIN..MAX (the current token follows 'range'). */
static kiln_status parse_range(kiln_check_cursor *c, kiln_text_position range_at, kiln_input_check *check)
{
    char min_text[KILN_TEXT_LITERAL_MAX + 8], max_text[KILN_TEXT_LITERAL_MAX + 8];
    KILN_TRY(parse_bound(c, "minimum", &check->min, min_text, sizeof min_text));
    if (c->token->kind != KILN_TOKEN_DOTDOT)
        return expected(c, "'..' between the bounds of the range (range MIN..MAX)");
    KILN_TRY(advance(c));
    KILN_TRY(parse_bound(c, "maximum", &check->max, max_text, sizeof max_text));
    if (check->min > check->max)
        return FAIL_AT(c, range_at, KILN_ERR_INVALID_PROGRAM,
                       "range %s..%s is empty: its minimum exceeds its maximum; write range %s..%s", min_text,
                       max_text, max_text, min_text);
    check->has_range = true;
    return KILN_OK;
}

static kiln_status add_category(kiln_check_cursor *c, int64_t **categories, uint32_t *count, uint32_t *capacity)
{
    const kiln_token *t = c->token;
    char text[KILN_TEXT_LITERAL_MAX];
    uint8_t element[8] = {0};
    if (t->length >= sizeof text)
        return FAIL_AT(c, t->at, KILN_ERR_INVALID_PROGRAM, "category %.*s does not fit i64", (int)sizeof text,
                       t->text);
    snprintf(text, sizeof text, "%.*s", (int)t->length, t->text);
    if (kiln_text_literal_parse(KILN_I64, text, element) != KILN_LITERAL_OK)
        return FAIL_AT(c, t->at, KILN_ERR_INVALID_PROGRAM, "category %s does not fit i64", text);
    if (*count == *capacity) {
        if (*capacity >= MAX_CATEGORIES)
            return FAIL_AT(c, t->at, KILN_ERR_LIMIT, "more than %u categories", MAX_CATEGORIES);
        uint32_t wanted = *capacity ? *capacity * 2 : 8;
        int64_t *grown = realloc(*categories, (size_t)wanted * sizeof *grown);
        if (!grown)
            return no_memory(c);
        *categories = grown;
        *capacity = wanted;
    }
    memcpy(&(*categories)[(*count)++], element, sizeof **categories);
    return advance(c);
}

/*
 * categories [A, B, ...] or categories A, B, ... (the current token follows
 * 'categories'). *separated tells whether the bare list ended by reading a
 * ',' that separates it from the next rule.
 */
static kiln_status parse_categories(kiln_check_cursor *c, kiln_input_check *check, bool *separated)
{
    int64_t *categories = NULL;
    uint32_t count = 0, capacity = 0;
    kiln_status status = KILN_OK;
    kiln_text_position list_at = c->token->at;
    if (c->token->kind == KILN_TOKEN_LBRACKET) {
        status = advance(c);
        while (status == KILN_OK && c->token->kind != KILN_TOKEN_RBRACKET) {
            if (c->token->kind != KILN_TOKEN_INTEGER) {
                status = expected(c, count ? "an integer category or ']'" : "an integer category");
                break;
            }
            status = add_category(c, &categories, &count, &capacity);
            if (status == KILN_OK && c->token->kind == KILN_TOKEN_COMMA)
                status = advance(c);
            else if (status == KILN_OK && c->token->kind != KILN_TOKEN_RBRACKET)
                status = expected(c, "',' or ']' in the category list");
        }
        if (status == KILN_OK)
            status = advance(c);
    } else if (c->token->kind == KILN_TOKEN_INTEGER) {
        status = add_category(c, &categories, &count, &capacity);
        while (status == KILN_OK && c->token->kind == KILN_TOKEN_COMMA) {
            status = advance(c);
            if (status == KILN_OK && c->token->kind != KILN_TOKEN_INTEGER) {
                *separated = true;
                break;
            }
            if (status == KILN_OK)
                status = add_category(c, &categories, &count, &capacity);
        }
    } else {
        status = expected(c, "the integer categories after 'categories' (categories 0, 1, 2 or categories [0, 1, 2])");
    }
    if (status == KILN_OK && count == 0)
        status = FAIL_AT(c, list_at, KILN_ERR_INVALID_PROGRAM,
                         "an empty category list admits no value; list at least one category");
    if (status != KILN_OK) {
        free(categories);
        return status;
    }
    check->categories = categories;
    check->category_count = count;
    return KILN_OK;
}

/* unit "TEXT" or a bare unit such as m/s (the lexer stands just after 'unit'). */
static kiln_status parse_unit(kiln_check_cursor *c, kiln_text_position unit_at, kiln_input_check *check)
{
    kiln_token bare;
    kiln_lexer_bare_unit(c->lexer, &bare);
    char *unit = NULL;
    if (bare.length > 0) {
        unit = kiln_text_copy(bare.text, bare.length);
    } else {
        KILN_TRY(advance(c));
        if (c->token->kind != KILN_TOKEN_STRING)
            return expected(c, "the unit after 'unit' (unit m/s, or unit \"TEXT\" when it has blanks or commas)");
        const kiln_text_buffer *value = &c->lexer->string;
        unit = kiln_text_copy(value->data ? value->data : "", value->data ? value->length : 0);
    }
    if (!unit)
        return no_memory(c);
    check->unit = unit;
    if (!unit[0])
        return FAIL_AT(c, unit_at, KILN_ERR_INVALID_PROGRAM, "the unit is empty; leave 'unit' out for none");
    return advance(c);
}

/* description "TEXT" (the current token follows 'description'). */
static kiln_status parse_description(kiln_check_cursor *c, kiln_text_position at, kiln_input_check *check)
{
    if (c->token->kind != KILN_TOKEN_STRING)
        return expected(c, "the description as a string after 'description' (description \"TEXT\")");
    const kiln_text_buffer *value = &c->lexer->string;
    char *text = kiln_text_copy(value->data ? value->data : "", value->data ? value->length : 0);
    if (!text)
        return no_memory(c);
    check->description = text;
    if (!text[0])
        return FAIL_AT(c, at, KILN_ERR_INVALID_PROGRAM, "the description is empty; leave 'description' out for none");
    return advance(c);
}

/* One rule at the current token (a WORD). */
static kiln_status parse_rule(kiln_check_cursor *c, rules_seen *seen, kiln_input_check *check, bool *separated)
{
    const kiln_token word = *c->token;
    bool *flag = kiln_token_is_word(&word, "range")         ? &seen->range
                 : kiln_token_is_word(&word, "finite")      ? &seen->finite
                 : kiln_token_is_word(&word, "categories")  ? &seen->categories
                 : kiln_token_is_word(&word, "unit")        ? &seen->unit
                 : kiln_token_is_word(&word, "description") ? &seen->description
                                                            : NULL;
    if (!flag)
        return FAIL_AT(c, word.at, KILN_ERR_MALFORMED, "unknown check rule '%.*s'; the rules are " RULE_LIST,
                       (int)(word.length > 64 ? 64 : word.length), word.text);
    if (*flag)
        return FAIL_AT(c, word.at, KILN_ERR_INVALID_PROGRAM,
                       "'%.*s' is given twice in this check; give each rule once", (int)word.length, word.text);
    *flag = true;
    if (flag == &seen->unit)
        return parse_unit(c, word.at, check); /* reads its own text after the word */
    KILN_TRY(advance(c));
    if (flag == &seen->range)
        return parse_range(c, word.at, check);
    if (flag == &seen->categories)
        return parse_categories(c, check, separated);
    if (flag == &seen->description)
        return parse_description(c, word.at, check);
    check->finite_only = true;
    return KILN_OK;
}

/*
 * A kiln_check_spec owns the categories, unit and description of its
 * check but holds them in the public kiln_input_check, whose pointers are
 * const (the check is what kiln_builder_set_input_check reads), so freeing
 * one drops that const: in this one place.
 */
static void free_owned(const void *owned)
{
    free((void *)(uintptr_t)owned);
}

static void release_check(kiln_input_check *check)
{
    free_owned(check->categories);
    free_owned(check->unit);
    free_owned(check->description);
    kiln_input_check_default(check);
}

kiln_status kiln_text_check_parse_rules(kiln_check_cursor *c, bool rule_required, kiln_check_spec *out)
{
    kiln_input_check *check = &out->check;
    kiln_input_check_default(check);
    rules_seen seen = {0};
    bool rule_due = rule_required;    /* a rule must come next */
    bool after_comma = false;         /* ... because a ',' was read */
    uint32_t rules_read = 0;
    kiln_status status = KILN_OK;
    while (status == KILN_OK) {
        if (at_line_end(c)) {
            if (rule_due)
                status = expected(c, after_comma ? "a rule after ',': " RULE_LIST : "a rule: " RULE_LIST);
            break;
        }
        if (c->token->kind != KILN_TOKEN_WORD) {
            status = expected(c, after_comma       ? "a rule after ',': " RULE_LIST
                                 : rules_read == 0 ? "a rule: " RULE_LIST
                                                   : "',' or a rule: " RULE_LIST);
            break;
        }
        bool separated = false;
        status = parse_rule(c, &seen, check, &separated);
        rules_read++;
        rule_due = after_comma = separated;
        if (status == KILN_OK && !separated && c->token->kind == KILN_TOKEN_COMMA) {
            status = advance(c);
            rule_due = after_comma = true;
        }
    }
    if (status != KILN_OK)
        release_check(check);
    return status;
}

/* ------------------------------------------------------- one-line specs */

void kiln_check_spec_free(kiln_check_spec *spec)
{
    if (!spec)
        return;
    free(spec->input);
    spec->input = NULL;
    release_check(&spec->check);
}

/* The spec as a message may quote it: shortened, control bytes as '?'. */
static void quote_spec(const char *spec, char *out, size_t size)
{
    size_t length = strlen(spec), shown = length < SPEC_QUOTE_MAX ? length : SPEC_QUOTE_MAX, used = 0;
    for (size_t i = 0; i < shown && used + 1 < size; i++) {
        unsigned char b = (unsigned char)spec[i];
        out[used++] = b < 0x20 || b == 0x7f ? '?' : (char)b;
    }
    out[used] = '\0';
    if (shown < length && used + 4 < size)
        memcpy(out + used, "...", 4);
}

/* Turn "<check>:1:C: message" into "check 'SPEC': column C: message". */
static kiln_status restate_error(const char *spec, kiln_status status, kiln_error *err)
{
    const char *prefix = SPEC_SOURCE ":1:";
    if (!err || strncmp(err->message, prefix, strlen(prefix)) != 0)
        return status;
    char *rest;
    unsigned long column = strtoul(err->message + strlen(prefix), &rest, 10);
    if (rest[0] == ':' && rest[1] == ' ')
        rest += 2;
    char message[KILN_ERROR_MESSAGE_SIZE], quoted[SPEC_QUOTE_MAX + 4];
    snprintf(message, sizeof message, "%s", rest);
    quote_spec(spec, quoted, sizeof quoted);
    return kiln_fail(err, status, "check '%s': column %lu: %s", quoted, column, message);
}

kiln_status kiln_check_spec_parse(const char *spec, kiln_check_spec *out, kiln_error *err)
{
    if (!out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_check_spec_parse: out is NULL");
    memset(out, 0, sizeof *out);
    kiln_input_check_default(&out->check);
    if (!spec)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_check_spec_parse: spec is NULL");
    kiln_lexer lexer;
    kiln_token token;
    kiln_lexer_init(&lexer, spec, strlen(spec), SPEC_SOURCE);
    kiln_check_cursor cursor = {.lexer = &lexer, .token = &token, .source = SPEC_SOURCE, .err = err};
    kiln_text_position name_at;
    kiln_status status = kiln_lexer_next(&lexer, &token, err);
    if (status == KILN_OK && token.kind == KILN_TOKEN_END)
        status = kiln_text_fail_at(err, KILN_ERR_MALFORMED, SPEC_SOURCE, token.at,
                                   "the check is empty; write NAME: RULE, ... (e.g. x: range 0..1, finite)");
    if (status == KILN_OK)
        status = kiln_text_check_parse_name(&cursor, true, &out->input, &name_at);
    if (status == KILN_OK)
        status = kiln_text_check_parse_rules(&cursor, true, out);
    if (status == KILN_OK && token.kind != KILN_TOKEN_END)
        status = kiln_text_fail_at(err, KILN_ERR_MALFORMED, SPEC_SOURCE, token.at,
                                   "a check is one line; give one --check per input");
    kiln_lexer_release(&lexer);
    if (status != KILN_OK) {
        kiln_check_spec_free(out);
        return restate_error(spec, status, err);
    }
    return KILN_OK;
}
