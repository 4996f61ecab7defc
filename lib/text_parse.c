/*
 * text_parse.c — the text assembler: reads the kiln text format
 * (spec/text-format.md) and replays it on a builder through the public
 * builder API, so a text program is checked by exactly the code that
 * checks a program built from C.
 *
 * The parser is a loop over statements with one token of lookahead and no
 * recursion (shape and derived-dim text is read by lib/shape_parse.c with
 * its own depth bound). It stops at the first error and names its place
 * as "SOURCE:LINE:COLUMN: message"; builder errors get the place of the
 * statement (or of the name, value or shape) that caused them.
 *
 * Besides replaying, the parser keeps what it needs to point at a place
 * the builder cannot: the dims with their ranges, the derived dims as
 * expressions in a scratch pool, each input's dtype and axes, and the
 * outputs, so that an evidence tensor that does not fit the program is
 * refused at its own line and column.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_private.h"
#include "format/error.h"
#include "op_registry.h"
#include "shape_parse.h"
#include "tensor.h"
#include "text.h"
#include "text_lexer.h"
#include "text_symbols.h"

/* Longest op name for which a "did you mean" suggestion is computed. */
#define MAX_SUGGESTION_NAME 64
/* Most operands, and most attributes, one op call may have. */
#define MAX_CALL_ARGUMENTS 64

/* A plain dim's domain, as declared (parallel to parser.dim_names). */
typedef struct text_dim {
    int64_t min;
    int64_t max;
    int64_t multiple_of;
} text_dim;

/* An input as declared: dtype and axes (expressions in parser.shapes). */
typedef struct text_input {
    kiln_dtype dtype;
    uint32_t rank;
    uint32_t axes[KILN_MAX_RANK];
} text_input;

typedef struct parser {
    kiln_lexer lexer;
    kiln_token token; /* the current token */
    const char *source;
    const char *base_dir;
    kiln_error *err;
    kiln_builder *builder;
    kiln_text_symbols values;   /* input and weight names -> kiln_value */
    kiln_text_symbols results;  /* %results -> kiln_value */
    kiln_text_symbols metadata; /* metadata keys set so far */
    kiln_text_symbols dims;     /* dim and derived dim names (one namespace) */
    kiln_text_symbols inputs;   /* input names -> index into input_types */
    kiln_text_symbols outputs;  /* output names -> kiln_value */
    kiln_text_symbols cases;    /* evidence case names */
    char **dim_names;
    text_dim *dim_domains;
    uint32_t dim_count, dim_capacity;
    char **derived_names;
    kiln_shape_alias *derived;  /* name -> expression in `shapes` */
    uint32_t derived_count, derived_capacity;
    text_input *input_types;
    uint32_t input_count, input_capacity;
    kiln_expr_pool shapes;      /* scratch pool: shape text is checked here first */
    bool mode_seen;
    bool evidence_seen;
} parser;

/* One operand of an op call as written: a value, or a literal to be made
 * into a scalar of its partner's dtype. */
typedef struct operand {
    bool is_literal;
    kiln_value value;
    char *literal; /* NUL-terminated literal text */
    kiln_text_position at;
} operand;

/* Grow `*items` (of `size`-byte elements) to hold one more than `count`. */
static bool reserve(void **items, uint32_t *capacity, uint32_t count, size_t size)
{
    if (count < *capacity)
        return true;
    uint32_t wanted = *capacity ? *capacity * 2 : 8;
    if (wanted <= *capacity)
        return false;
    void *grown = realloc(*items, (size_t)wanted * size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = wanted;
    return true;
}

/* ------------------------------------------------------------- basics */

#define FAIL_AT(p, at, code, ...) kiln_text_fail_at((p)->err, (code), (p)->source, (at), __VA_ARGS__)

static kiln_status no_memory(parser *p)
{
    return kiln_fail(p->err, KILN_ERR_OUT_OF_MEMORY, "out of memory assembling %s", p->source);
}

static kiln_status advance(parser *p)
{
    return kiln_lexer_next(&p->lexer, &p->token, p->err);
}

/* "expected WHAT, found TOKEN" at the current token. */
static kiln_status expected(parser *p, const char *what)
{
    kiln_text_buffer found;
    kiln_text_buffer_init(&found);
    kiln_token_describe(&p->token, &found);
    kiln_status status = FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED, "expected %s, found %s", what,
                                 found.failed || !found.data ? "?" : found.data);
    kiln_text_buffer_release(&found);
    return status;
}

static kiln_status expect(parser *p, kiln_token_kind kind, const char *what)
{
    if (p->token.kind != kind)
        return expected(p, what);
    return advance(p);
}

static kiln_status skip_newlines(parser *p)
{
    while (p->token.kind == KILN_TOKEN_NEWLINE)
        KILN_TRY(advance(p));
    return KILN_OK;
}

/* A statement ends at the end of its line (or of the text). */
static kiln_status end_statement(parser *p, const char *statement)
{
    if (p->token.kind == KILN_TOKEN_END)
        return KILN_OK;
    if (p->token.kind != KILN_TOKEN_NEWLINE) {
        char what[64];
        snprintf(what, sizeof what, "end of line after the %s statement", statement);
        return expected(p, what);
    }
    return advance(p);
}

static char *copy_bytes(const char *bytes, size_t length)
{
    char *copy = malloc(length + 1);
    if (copy) {
        memcpy(copy, bytes, length);
        copy[length] = '\0';
    }
    return copy;
}

/* Copy the current token's text (a name or a literal). */
static kiln_status copy_token(parser *p, char **out)
{
    *out = copy_bytes(p->token.text, p->token.length);
    return *out ? KILN_OK : no_memory(p);
}

/* Copy the decoded value of the current string token. */
static kiln_status copy_string(parser *p, char **out)
{
    const kiln_text_buffer *value = &p->lexer.string;
    *out = copy_bytes(value->data ? value->data : "", value->data ? value->length : 0);
    return *out ? KILN_OK : no_memory(p);
}

/* Report a builder (or other library) error at `at`, keeping its code. */
static kiln_status fail_with(parser *p, kiln_text_position at, const kiln_error *cause)
{
    return FAIL_AT(p, at, cause->code, "%s", cause->message);
}

/* Inputs and weights share one namespace, as in the artifact. */
static kiln_status name_taken(parser *p, kiln_text_position at, const char *name, const kiln_text_symbol *earlier)
{
    return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                   "'%s' is already declared at line %zu; input and weight names are unique", name,
                   earlier->at.line);
}

/* --------------------------------------------------------- suggestions */

/* Levenshtein distance; `b` is a registry name, so the rows stay small. */
static size_t edit_distance(const char *a, size_t a_length, const char *b)
{
    size_t b_length = strlen(b);
    size_t *row = malloc((b_length + 1) * sizeof *row);
    if (!row)
        return SIZE_MAX;
    for (size_t j = 0; j <= b_length; j++)
        row[j] = j;
    for (size_t i = 1; i <= a_length; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b_length; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    size_t distance = row[b_length];
    free(row);
    return distance;
}

static kiln_status unknown_op(parser *p, const char *name, kiln_text_position at)
{
    size_t length = strlen(name);
    const char *nearest = NULL;
    size_t nearest_distance = SIZE_MAX;
    for (uint32_t i = 0; length <= MAX_SUGGESTION_NAME && i < kiln_op_count(); i++) {
        size_t distance = edit_distance(name, length, kiln_op_at(i)->name);
        if (distance < nearest_distance) {
            nearest = kiln_op_at(i)->name;
            nearest_distance = distance;
        }
    }
    /* A suggestion two edits away is still a likely typo; further is noise. */
    if (nearest && nearest_distance <= 2 && nearest_distance < length)
        return FAIL_AT(p, at, KILN_ERR_UNSUPPORTED_OP, "unknown op '%s'; did you mean '%s'?", name, nearest);
    kiln_text_buffer known;
    kiln_text_buffer_init(&known);
    for (uint32_t i = 0; i < kiln_op_count(); i++)
        kiln_text_buffer_printf(&known, "%s%s", i ? ", " : "", kiln_op_at(i)->name);
    kiln_status status = FAIL_AT(p, at, KILN_ERR_UNSUPPORTED_OP, "unknown op '%s'; this kiln has %s", name,
                                 known.data && !known.failed ? known.data : "?");
    kiln_text_buffer_release(&known);
    return status;
}

/* ------------------------------------------------------------ literals */

static bool is_literal_token(const kiln_token *token)
{
    return token->kind == KILN_TOKEN_INTEGER || token->kind == KILN_TOKEN_FLOAT ||
           (token->kind == KILN_TOKEN_WORD && kiln_text_is_literal_word(token->text, token->length));
}

static kiln_status literal_problem(parser *p, kiln_text_position at, const char *text, kiln_dtype dtype,
                                   kiln_literal_problem problem)
{
    const char *name = kiln_dtype_name(dtype);
    switch (problem) {
    case KILN_LITERAL_OK: return KILN_OK;
    case KILN_LITERAL_OUT_OF_RANGE:
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "literal %s does not fit dtype %s", text, name);
    case KILN_LITERAL_NOT_INTEGER:
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "literal %s is not an integer, as dtype %s needs", text,
                       name);
    case KILN_LITERAL_NOT_NUMBER:
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "literal %s is not a number, as dtype %s needs", text,
                       name);
    case KILN_LITERAL_NOT_BOOL:
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "literal %s is not a bool (true, false, 0 or 1)", text);
    case KILN_LITERAL_UNSUPPORTED_DTYPE: break;
    }
    return FAIL_AT(p, at, KILN_ERR_UNSUPPORTED_DTYPE, "dtype %s has no literals in this kiln version", name);
}

/* Convert the current (literal) token to one element of `dtype`. */
static kiln_status token_element(parser *p, kiln_dtype dtype, uint8_t element[8])
{
    char *text;
    KILN_TRY(copy_token(p, &text));
    kiln_status status = literal_problem(p, p->token.at, text, dtype, kiln_text_literal_parse(dtype, text, element));
    free(text);
    return status;
}

/* ---------------------------------------------------------------- shapes */

static kiln_status parse_dtype(parser *p, kiln_dtype *out)
{
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "a dtype (f32, f64, i8 ... u64, bool)");
    char *name;
    KILN_TRY(copy_token(p, &name));
    bool known = kiln_dtype_from_name(name, out) == KILN_OK;
    kiln_status status = known ? KILN_OK
                               : FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                                         "unknown dtype '%s'; expected f32, f64, i8, i16, i32, i64, u8, u16, "
                                         "u32, u64 or bool",
                                         name);
    free(name);
    return status == KILN_OK ? advance(p) : status;
}

/* Column of the byte `offset` bytes into the token, counting code points. */
static kiln_text_position position_in(const kiln_token *token, size_t offset)
{
    kiln_text_position at = token->at;
    for (size_t i = 0; i < offset && i < token->length; i++)
        if (((unsigned char)token->text[i] & 0xc0) != 0x80)
            at.column++;
    return at;
}

/*
 * Report a kiln_shape_parse failure at the column it names. Its messages
 * read `shape "TEXT", column N: WHAT`; with the text known, the prefix is
 * known exactly, so N is found without guessing. Any other message (or a
 * truncated one) is reported at the shape's '['.
 */
static kiln_status shape_error(parser *p, const kiln_token *shape, const char *text, const kiln_error *cause)
{
    kiln_status code = cause->code == KILN_ERR_INVALID_ARGUMENT ? KILN_ERR_MALFORMED : cause->code;
    size_t text_length = strlen(text);
    const char *message = cause->message;
    if (strncmp(message, "shape \"", 7) == 0 && strncmp(message + 7, text, text_length) == 0 &&
        strncmp(message + 7 + text_length, "\", column ", 10) == 0) {
        const char *number = message + 7 + text_length + 10;
        char *end;
        unsigned long column = strtoul(number, &end, 10);
        if (end != number && strncmp(end, ": ", 2) == 0 && column >= 1 && column <= text_length + 1)
            return FAIL_AT(p, position_in(shape, column - 1), code, "%s", end + 2);
    }
    return FAIL_AT(p, shape->at, code, "%s", message);
}

/*
 * Read `[ ... ]` after a dtype and check it as kiln_shape_parse will,
 * against the dims declared so far. *text receives the shape text (caller
 * frees); rank and axes index p->shapes.
 */
static kiln_status parse_shape(parser *p, char **text, uint32_t *rank, uint32_t axes[KILN_MAX_RANK])
{
    kiln_token shape;
    kiln_error cause;
    *text = NULL;
    if (p->token.kind != KILN_TOKEN_LBRACKET)
        return expected(p, "'[' and a shape after the dtype");
    KILN_TRY(kiln_lexer_shape(&p->lexer, &p->token, &shape, p->err));
    *text = copy_bytes(shape.text, shape.length);
    if (!*text)
        return no_memory(p);
    if (kiln_shape_parse(*text, (const char *const *)p->dim_names, p->dim_count, &p->shapes, rank, axes,
                         &cause) != KILN_OK) {
        kiln_status status = shape_error(p, &shape, *text, &cause);
        free(*text);
        *text = NULL;
        return status;
    }
    return advance(p);
}

/* The extents of a weight: shape text over constants only. */
static kiln_status static_extents(parser *p, const char *name, kiln_text_position at, uint32_t rank,
                                  const uint32_t axes[KILN_MAX_RANK], int64_t extents[KILN_MAX_RANK])
{
    for (uint32_t a = 0; a < rank; a++) {
        for (uint32_t d = 0; d < p->dim_count; d++)
            if (kiln_expr_uses_dim(&p->shapes, axes[a], d))
                return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                               "weight '%s' axis %u uses dim '%s'; weight shapes are static", name, a,
                               p->dim_names[d]);
        /* No dim occurs, so evaluation never reads these. */
        int64_t unused_value = 0;
        bool unused_bound = false;
        kiln_error cause;
        if (kiln_expr_eval(&p->shapes, axes[a], &unused_value, &unused_bound, &extents[a], &cause) != KILN_OK)
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "weight '%s' axis %u: %s", name, a, cause.message);
        if (extents[a] < 0)
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "weight '%s' axis %u has negative extent %lld", name,
                           a, (long long)extents[a]);
    }
    return KILN_OK;
}

/* "f32[4, 2]" into `out`. */
static void describe_type(kiln_text_buffer *out, kiln_dtype dtype, uint32_t rank, const int64_t *extents)
{
    kiln_text_buffer_printf(out, "%s[", kiln_dtype_name(dtype));
    for (uint32_t a = 0; a < rank; a++)
        kiln_text_buffer_printf(out, "%s%lld", a ? ", " : "", (long long)extents[a]);
    kiln_text_buffer_puts(out, "]");
}

/* ---------------------------------------------------------- statements */

static kiln_status parse_header(parser *p)
{
    KILN_TRY(skip_newlines(p));
    if (!kiln_token_is_word(&p->token, "kiln"))
        return expected(p, "the header 'kiln " KILN_TEXT_VERSION "' first");
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_FLOAT && p->token.kind != KILN_TOKEN_INTEGER)
        return expected(p, "the text format version " KILN_TEXT_VERSION " after 'kiln'");
    if (p->token.length != strlen(KILN_TEXT_VERSION) ||
        memcmp(p->token.text, KILN_TEXT_VERSION, p->token.length) != 0)
        return FAIL_AT(p, p->token.at, KILN_ERR_UNSUPPORTED_VERSION,
                       "text format version %.*s is not supported; this kiln reads version " KILN_TEXT_VERSION,
                       (int)(p->token.length > 40 ? 40 : p->token.length), p->token.text);
    KILN_TRY(advance(p));
    return end_statement(p, "'kiln'");
}

static kiln_status parse_program(parser *p)
{
    kiln_error cause;
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_STRING)
        return expected(p, "the program name as a string after 'program'");
    char *name;
    KILN_TRY(copy_string(p, &name));
    kiln_status status = kiln_builder_new(name, &p->builder, &cause);
    free(name);
    if (status != KILN_OK)
        return fail_with(p, p->token.at, &cause);
    KILN_TRY(advance(p));
    return end_statement(p, "'program'");
}

static kiln_status parse_meta(parser *p)
{
    kiln_error cause;
    char *key = NULL, *value = NULL;
    KILN_TRY(advance(p));
    kiln_text_position key_at = p->token.at;
    if (p->token.kind == KILN_TOKEN_WORD)
        KILN_TRY(copy_token(p, &key));
    else if (p->token.kind == KILN_TOKEN_STRING)
        KILN_TRY(copy_string(p, &key));
    else
        return expected(p, "a metadata key (a name or a string) after 'meta'");
    kiln_status status = advance(p);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' after the metadata key");
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_STRING)
        status = expected(p, "the metadata value as a string");
    if (status == KILN_OK)
        status = copy_string(p, &value);
    const kiln_text_symbol *earlier = status == KILN_OK ? kiln_text_symbols_find(&p->metadata, key, strlen(key)) : NULL;
    if (earlier)
        status = FAIL_AT(p, key_at, KILN_ERR_INVALID_PROGRAM, "metadata key '%s' is already set at line %zu", key,
                         earlier->at.line);
    if (status == KILN_OK && kiln_builder_set_metadata(p->builder, key, value, &cause) != KILN_OK)
        status = fail_with(p, key_at, &cause);
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->metadata, key, strlen(key), 0, key_at, p->err);
    free(key);
    free(value);
    KILN_TRY(status);
    KILN_TRY(advance(p));
    return end_statement(p, "'meta'");
}

static kiln_status parse_mode(parser *p)
{
    kiln_error cause;
    kiln_text_position at = p->token.at;
    kiln_mode mode;
    if (p->mode_seen)
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "the mode is already set");
    KILN_TRY(advance(p));
    if (kiln_token_is_word(&p->token, "inference"))
        mode = KILN_MODE_INFERENCE;
    else if (kiln_token_is_word(&p->token, "training"))
        mode = KILN_MODE_TRAINING;
    else
        return expected(p, "'inference' or 'training' after 'mode'");
    if (kiln_builder_set_mode(p->builder, mode, &cause) != KILN_OK)
        return fail_with(p, p->token.at, &cause);
    p->mode_seen = true;
    KILN_TRY(advance(p));
    return end_statement(p, "'mode'");
}

static kiln_status parse_integer(parser *p, int64_t *out)
{
    if (p->token.kind != KILN_TOKEN_INTEGER)
        return expected(p, "an integer");
    char *text;
    KILN_TRY(copy_token(p, &text));
    uint8_t element[8];
    kiln_status status =
        literal_problem(p, p->token.at, text, KILN_I64, kiln_text_literal_parse(KILN_I64, text, element));
    free(text);
    KILN_TRY(status);
    memcpy(out, element, sizeof *out);
    return advance(p);
}

static kiln_status remember_dim(parser *p, const char *name)
{
    if (p->dim_count == p->dim_capacity) {
        uint32_t wanted = p->dim_capacity ? p->dim_capacity * 2 : 8;
        char **grown = wanted > p->dim_capacity ? realloc(p->dim_names, wanted * sizeof *grown) : NULL;
        if (!grown)
            return no_memory(p);
        p->dim_names = grown;
        p->dim_capacity = wanted;
    }
    if (!(p->dim_names[p->dim_count] = copy_bytes(name, strlen(name))))
        return no_memory(p);
    p->dim_count++;
    return KILN_OK;
}

static kiln_status parse_dim(parser *p)
{
    kiln_error cause;
    int64_t min, max;
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "a dim name after 'dim'");
    kiln_text_position name_at = p->token.at;
    char *name;
    KILN_TRY(copy_token(p, &name));
    kiln_status status = advance(p);
    if (status == KILN_OK && p->token.kind == KILN_TOKEN_EQUALS)
        status = FAIL_AT(p, p->token.at, KILN_ERR_UNKNOWN_CRITICAL,
                         "derived dim (dim NAME = EXPR) is not supported by this kiln version");
    if (status == KILN_OK && !kiln_token_is_word(&p->token, "in"))
        status = expected(p, "'in' and a range MIN..MAX after the dim name");
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK)
        status = parse_integer(p, &min);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_DOTDOT, "'..' between the bounds of the range");
    if (status == KILN_OK)
        status = parse_integer(p, &max);
    if (status == KILN_OK && kiln_token_is_word(&p->token, "multiple_of"))
        status = FAIL_AT(p, p->token.at, KILN_ERR_UNKNOWN_CRITICAL,
                         "dim constraint 'multiple_of' is not supported by this kiln version");
    if (status == KILN_OK && kiln_builder_add_dim(p->builder, name, min, max, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    if (status == KILN_OK)
        status = remember_dim(p, name);
    free(name);
    KILN_TRY(status);
    return end_statement(p, "'dim'");
}

/* Read NAME ':' after a declaration keyword; the name must be new. */
static kiln_status parse_declared_name(parser *p, const char *kind, char **name, kiln_text_position *at)
{
    char what[64];
    *name = NULL;
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD) {
        snprintf(what, sizeof what, "a name after '%s'", kind);
        return expected(p, what);
    }
    *at = p->token.at;
    const kiln_text_symbol *earlier = kiln_text_symbols_find(&p->values, p->token.text, p->token.length);
    KILN_TRY(copy_token(p, name));
    if (earlier)
        return name_taken(p, *at, *name, earlier);
    KILN_TRY(advance(p));
    snprintf(what, sizeof what, "':' after the %s name", kind);
    return expect(p, KILN_TOKEN_COLON, what);
}

static kiln_status parse_input(parser *p)
{
    kiln_error cause;
    kiln_dtype dtype;
    kiln_text_position at;
    uint32_t rank, axes[KILN_MAX_RANK];
    char *name, *shape = NULL;
    kiln_value value;
    kiln_status status = parse_declared_name(p, "input", &name, &at);
    if (status == KILN_OK)
        status = parse_dtype(p, &dtype);
    if (status == KILN_OK)
        status = parse_shape(p, &shape, &rank, axes);
    if (status == KILN_OK && kiln_builder_add_input(p->builder, name, dtype, shape, &value, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->values, name, strlen(name), value, at, p->err);
    free(name);
    free(shape);
    KILN_TRY(status);
    return end_statement(p, "'input'");
}

/* Join a weight file path onto the text's directory; refuse absolute paths
 * so a text and its weights stay a relocatable bundle. */
static kiln_status weight_path(parser *p, const char *path, kiln_text_position at, char **out)
{
    *out = NULL;
    if (!path[0])
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "the weight file path is empty");
    if (path[0] == '/')
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                       "weight file '%s' is an absolute path; paths are relative to the text file", path);
    kiln_text_buffer joined;
    kiln_text_buffer_init(&joined);
    if (p->base_dir && p->base_dir[0])
        kiln_text_buffer_printf(&joined, "%s/", p->base_dir);
    kiln_text_buffer_puts(&joined, path);
    *out = kiln_text_buffer_take(&joined);
    return *out ? KILN_OK : no_memory(p);
}

/* `file "PATH"`: read the .npy and check it holds the declared type. */
static kiln_status read_weight_file(parser *p, const char *name, kiln_dtype dtype, uint32_t rank,
                                    const int64_t *extents, kiln_tensor **tensor)
{
    kiln_error cause;
    char *path = NULL, *full = NULL;
    *tensor = NULL;
    KILN_TRY(advance(p)); /* 'file' */
    if (p->token.kind != KILN_TOKEN_STRING)
        return expected(p, "the file path as a string after 'file'");
    kiln_text_position at = p->token.at;
    KILN_TRY(copy_string(p, &path));
    kiln_status status = weight_path(p, path, at, &full);
    if (status == KILN_OK && kiln_npy_read_file(full, tensor, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    if (status == KILN_OK) {
        bool same = kiln_tensor_dtype(*tensor) == dtype && kiln_tensor_rank(*tensor) == rank;
        for (uint32_t a = 0; same && a < rank; a++)
            same = kiln_tensor_shape(*tensor)[a] == extents[a];
        if (!same) {
            kiln_text_buffer held, declared;
            kiln_text_buffer_init(&held);
            kiln_text_buffer_init(&declared);
            describe_type(&held, kiln_tensor_dtype(*tensor), kiln_tensor_rank(*tensor), kiln_tensor_shape(*tensor));
            describe_type(&declared, dtype, rank, extents);
            status = FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "file '%s' holds %s, but '%s' is declared %s", path,
                             held.data && !held.failed ? held.data : "?", name,
                             declared.data && !declared.failed ? declared.data : "?");
            kiln_text_buffer_release(&held);
            kiln_text_buffer_release(&declared);
        }
    }
    free(path);
    free(full);
    if (status != KILN_OK) {
        kiln_tensor_free(*tensor);
        *tensor = NULL;
        return status;
    }
    return advance(p);
}

/* `[v, v, ...]` (flat, C order) or, for rank 0, a single `v`. */
static kiln_status read_weight_literals(parser *p, kiln_dtype dtype, uint32_t rank, const int64_t *extents,
                                        uint64_t element_count, kiln_text_buffer *data)
{
    size_t element_size = kiln_dtype_size(dtype);
    uint8_t element[8];
    kiln_text_buffer type;
    kiln_text_buffer_init(&type);
    describe_type(&type, dtype, rank, extents);
    const char *type_text = type.data && !type.failed ? type.data : "?";
    kiln_status status = KILN_OK;
    if (p->token.kind != KILN_TOKEN_LBRACKET) {
        if (rank != 0)
            status = FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                             "a single value fits only shape []; write %llu values as [v, ...] for %s",
                             (unsigned long long)element_count, type_text);
        if (status == KILN_OK)
            status = token_element(p, dtype, element);
        if (status == KILN_OK && !kiln_text_buffer_append(data, element, element_size))
            status = no_memory(p);
        if (status == KILN_OK)
            status = advance(p);
        kiln_text_buffer_release(&type);
        return status;
    }
    uint64_t count = 0;
    status = advance(p);
    if (status == KILN_OK)
        status = skip_newlines(p);
    while (status == KILN_OK && p->token.kind != KILN_TOKEN_RBRACKET) {
        if (!is_literal_token(&p->token)) {
            status = expected(p, "a value (a number, nan, inf, -inf, true or false)");
            break;
        }
        /* The buffer grows with the values written, never with the
         * declared shape, so a huge declaration cannot allocate much. */
        if (count == element_count) {
            status = FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "too many values: %s holds %llu",
                             type_text, (unsigned long long)element_count);
            break;
        }
        status = token_element(p, dtype, element);
        if (status == KILN_OK && !kiln_text_buffer_append(data, element, element_size))
            status = no_memory(p);
        count++;
        if (status == KILN_OK)
            status = advance(p);
        if (status == KILN_OK)
            status = skip_newlines(p);
        if (status != KILN_OK || p->token.kind == KILN_TOKEN_RBRACKET)
            break;
        if (p->token.kind != KILN_TOKEN_COMMA) {
            status = expected(p, "',' or ']' in the list of values");
            break;
        }
        status = advance(p);
        if (status == KILN_OK)
            status = skip_newlines(p);
    }
    if (status == KILN_OK && count < element_count)
        status = FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "expected %llu values for %s, found %llu",
                         (unsigned long long)element_count, type_text, (unsigned long long)count);
    if (status == KILN_OK)
        status = advance(p);
    kiln_text_buffer_release(&type);
    return status;
}

static kiln_status parse_weight(parser *p, kiln_weight_kind kind, const char *keyword)
{
    kiln_error cause;
    kiln_dtype dtype;
    kiln_text_position at;
    uint32_t rank = 0, axes[KILN_MAX_RANK];
    int64_t extents[KILN_MAX_RANK];
    uint64_t element_count;
    size_t byte_size;
    char *name, *shape = NULL;
    kiln_tensor *file = NULL;
    kiln_text_buffer literals;
    kiln_value value;
    kiln_text_buffer_init(&literals);
    kiln_status status = parse_declared_name(p, keyword, &name, &at);
    if (status == KILN_OK)
        status = parse_dtype(p, &dtype);
    if (status == KILN_OK)
        status = parse_shape(p, &shape, &rank, axes);
    if (status == KILN_OK)
        status = static_extents(p, name, at, rank, axes, extents);
    if (status == KILN_OK && kiln_shape_sizes(dtype, rank, extents, &element_count, &byte_size, &cause) != KILN_OK)
        status = FAIL_AT(p, at, cause.code, "weight '%s': %s", name, cause.message);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' and the values (file \"PATH\", [v, ...] or v)");
    if (status == KILN_OK) {
        if (kiln_token_is_word(&p->token, "file"))
            status = read_weight_file(p, name, dtype, rank, extents, &file);
        else if (p->token.kind == KILN_TOKEN_LBRACKET || is_literal_token(&p->token))
            status = read_weight_literals(p, dtype, rank, extents, element_count, &literals);
        else
            status = expected(p, "the values: file \"PATH\", [v, ...] or a single value");
    }
    if (status == KILN_OK) {
        const void *data = file ? kiln_tensor_const_data(file) : literals.data;
        if (kiln_builder_add_weight(p->builder, name, kind, dtype, rank, extents, data, &value, &cause) != KILN_OK)
            status = fail_with(p, at, &cause);
    }
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->values, name, strlen(name), value, at, p->err);
    kiln_tensor_free(file);
    kiln_text_buffer_release(&literals);
    free(name);
    free(shape);
    KILN_TRY(status);
    return end_statement(p, keyword);
}

/* An attribute value: number, string, true/false/nan/inf, or a list. */
static kiln_status skip_attribute_value(parser *p, unsigned depth)
{
    if (p->token.kind == KILN_TOKEN_STRING || is_literal_token(&p->token))
        return advance(p);
    if (p->token.kind != KILN_TOKEN_LBRACKET)
        return expected(p, "an attribute value (a number, a string, true, false or [list])");
    if (depth >= MAX_ATTRIBUTE_NESTING)
        return FAIL_AT(p, p->token.at, KILN_ERR_LIMIT, "attribute lists nest deeper than %d",
                       MAX_ATTRIBUTE_NESTING);
    KILN_TRY(advance(p));
    KILN_TRY(skip_newlines(p));
    while (p->token.kind != KILN_TOKEN_RBRACKET) {
        KILN_TRY(skip_attribute_value(p, depth + 1));
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_RBRACKET)
            break;
        KILN_TRY(expect(p, KILN_TOKEN_COMMA, "',' or ']' in the attribute list"));
        KILN_TRY(skip_newlines(p));
    }
    return advance(p);
}

/* Resolve the current name or %result token to a value. */
static kiln_status resolve_reference(parser *p, kiln_value *out)
{
    bool result = p->token.kind == KILN_TOKEN_RESULT;
    const kiln_text_symbols *table = result ? &p->results : &p->values;
    const kiln_text_symbol *symbol = kiln_text_symbols_find(table, p->token.text, p->token.length);
    if (!symbol) {
        int length = (int)(p->token.length > 64 ? 64 : p->token.length);
        return result ? FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                                "'%.*s' is not defined; a result must be defined before it is used", length,
                                p->token.text)
                      : FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                                "'%.*s' is not a declared input or weight", length, p->token.text);
    }
    *out = symbol->value;
    return KILN_OK;
}

typedef struct call {
    operand *operands;
    uint32_t count;
    uint32_t capacity;
    bool attribute_seen;
    char *first_attribute;
    kiln_text_position first_attribute_at;
} call;

static void release_call(call *c)
{
    for (uint32_t i = 0; i < c->count; i++)
        free(c->operands[i].literal);
    free(c->operands);
    free(c->first_attribute);
}

static kiln_status add_operand(parser *p, call *c, operand o)
{
    if (c->count == c->capacity) {
        uint32_t wanted = c->capacity ? c->capacity * 2 : 4;
        operand *grown = realloc(c->operands, wanted * sizeof *grown);
        if (!grown) {
            free(o.literal);
            return no_memory(p);
        }
        c->operands = grown;
        c->capacity = wanted;
    }
    c->operands[c->count++] = o;
    return KILN_OK;
}

/* One argument: an operand (name, %result, literal) or NAME=VALUE. */
static kiln_status parse_argument(parser *p, call *c, const kiln_op_def *op)
{
    operand o = {.at = p->token.at};
    if (p->token.kind == KILN_TOKEN_WORD) {
        const kiln_token name = p->token;
        KILN_TRY(advance(p));
        if (p->token.kind == KILN_TOKEN_EQUALS) {
            if (!c->attribute_seen) {
                c->attribute_seen = true;
                c->first_attribute = copy_bytes(name.text, name.length);
                c->first_attribute_at = name.at;
                if (!c->first_attribute)
                    return no_memory(p);
            }
            KILN_TRY(advance(p));
            return skip_attribute_value(p, 0);
        }
        if (c->attribute_seen)
            return FAIL_AT(p, name.at, KILN_ERR_MALFORMED, "operands of '%s' come before its attributes", op->name);
        /* A declared name wins over the literal words nan, inf, true and false. */
        const kiln_text_symbol *symbol = kiln_text_symbols_find(&p->values, name.text, name.length);
        if (symbol) {
            o.value = symbol->value;
        } else if (kiln_text_is_literal_word(name.text, name.length)) {
            o.is_literal = true;
            if (!(o.literal = copy_bytes(name.text, name.length)))
                return no_memory(p);
        } else {
            return FAIL_AT(p, name.at, KILN_ERR_INVALID_PROGRAM, "'%.*s' is not a declared input or weight",
                           (int)(name.length > 64 ? 64 : name.length), name.text);
        }
        return add_operand(p, c, o);
    }
    if (c->attribute_seen && (p->token.kind == KILN_TOKEN_RESULT || is_literal_token(&p->token)))
        return FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED, "operands of '%s' come before its attributes", op->name);
    if (p->token.kind == KILN_TOKEN_RESULT) {
        KILN_TRY(resolve_reference(p, &o.value));
    } else if (p->token.kind == KILN_TOKEN_INTEGER || p->token.kind == KILN_TOKEN_FLOAT) {
        o.is_literal = true;
        KILN_TRY(copy_token(p, &o.literal));
    } else {
        return expected(p, "an operand (a name, a %result or a literal)");
    }
    KILN_TRY(add_operand(p, c, o));
    return advance(p);
}

/* Turn literal operands into scalars of the dtype of the first tensor operand. */
static kiln_status make_literal_scalars(parser *p, call *c, const kiln_op_def *op)
{
    const operand *partner = NULL;
    kiln_error cause;
    kiln_dtype dtype;
    for (uint32_t i = 0; i < c->count && !partner; i++)
        if (!c->operands[i].is_literal)
            partner = &c->operands[i];
    for (uint32_t i = 0; i < c->count; i++) {
        operand *o = &c->operands[i];
        if (!o->is_literal)
            continue;
        if (!partner)
            return FAIL_AT(p, o->at, KILN_ERR_INVALID_PROGRAM,
                           "literal %s takes its dtype from another operand of '%s', and there is none; "
                           "declare it with 'const'",
                           o->literal, op->name);
        if (kiln_builder_value_dtype(p->builder, partner->value, &dtype, &cause) != KILN_OK)
            return fail_with(p, o->at, &cause);
        uint8_t element[8];
        KILN_TRY(literal_problem(p, o->at, o->literal, dtype, kiln_text_literal_parse(dtype, o->literal, element)));
        /* kiln_builder_add_scalar takes a double: pass the parsed element
         * through it exactly, or refuse rather than round. */
        double value = 0;
        bool exact = true;
        switch (dtype) {
        case KILN_F64: memcpy(&value, element, 8); break;
        case KILN_F32: { float f; memcpy(&f, element, 4); value = f; break; }
        case KILN_I64: {
            int64_t v;
            memcpy(&v, element, 8);
            value = (double)v;
            exact = value < 9223372036854775808.0 && (int64_t)value == v;
            break;
        }
        case KILN_U64: {
            uint64_t v;
            memcpy(&v, element, 8);
            value = (double)v;
            exact = value < 18446744073709551616.0 && (uint64_t)value == v;
            break;
        }
        case KILN_I32: { int32_t v; memcpy(&v, element, 4); value = v; break; }
        case KILN_I16: { int16_t v; memcpy(&v, element, 2); value = v; break; }
        case KILN_I8: { int8_t v; memcpy(&v, element, 1); value = v; break; }
        case KILN_U32: { uint32_t v; memcpy(&v, element, 4); value = v; break; }
        case KILN_U16: { uint16_t v; memcpy(&v, element, 2); value = v; break; }
        case KILN_U8:
        case KILN_BOOL: value = element[0]; break;
        default: exact = false; break;
        }
        if (!exact)
            return FAIL_AT(p, o->at, KILN_ERR_INVALID_PROGRAM,
                           "literal %s cannot be passed exactly as a %s scalar; declare it with 'const'", o->literal,
                           kiln_dtype_name(dtype));
        if (kiln_builder_add_scalar(p->builder, dtype, value, &o->value, &cause) != KILN_OK)
            return fail_with(p, o->at, &cause);
    }
    return KILN_OK;
}

static kiln_status check_arity(parser *p, const kiln_op_def *op, uint32_t count, kiln_text_position at)
{
    if (count >= op->min_inputs && count <= op->max_inputs)
        return KILN_OK;
    if (op->min_inputs == op->max_inputs)
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "op '%s' takes %u operand%s, got %u", op->name,
                       op->min_inputs, op->min_inputs == 1 ? "" : "s", count);
    return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "op '%s' takes %u to %u operands, got %u", op->name,
                   op->min_inputs, op->max_inputs, count);
}

/* %NAME = OP(ARGUMENTS) */
static kiln_status parse_node(parser *p)
{
    kiln_error cause;
    kiln_text_position statement_at = p->token.at;
    const kiln_text_symbol *earlier = kiln_text_symbols_find(&p->results, p->token.text, p->token.length);
    if (earlier)
        return FAIL_AT(p, statement_at, KILN_ERR_INVALID_PROGRAM, "'%.*s' is already defined at line %zu",
                       (int)(p->token.length > 64 ? 64 : p->token.length), p->token.text, earlier->at.line);
    char *result;
    KILN_TRY(copy_token(p, &result));
    call c = {0};
    char *op_name = NULL;
    const kiln_op_def *op = NULL;
    kiln_text_position op_at = {0, 0};
    kiln_value value;
    kiln_status status = advance(p);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' after the result name");
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_WORD)
        status = expected(p, "an op name");
    if (status == KILN_OK) {
        op_at = p->token.at;
        status = copy_token(p, &op_name);
    }
    if (status == KILN_OK && !(op = kiln_op_find(op_name)))
        status = unknown_op(p, op_name, op_at);
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_LPAREN, "'(' after the op name");
    while (status == KILN_OK) {
        status = skip_newlines(p);
        if (status != KILN_OK || p->token.kind == KILN_TOKEN_RPAREN)
            break;
        if (c.count >= 64) {
            status = FAIL_AT(p, p->token.at, KILN_ERR_LIMIT, "an op takes at most 64 operands");
            break;
        }
        status = parse_argument(p, &c, op);
        if (status == KILN_OK)
            status = skip_newlines(p);
        if (status != KILN_OK || p->token.kind == KILN_TOKEN_RPAREN)
            break;
        status = expect(p, KILN_TOKEN_COMMA, "',' or ')' after the operand");
    }
    if (status == KILN_OK)
        status = advance(p); /* ')' */
    /* No op in this registry declares attributes yet. */
    if (status == KILN_OK && c.attribute_seen)
        status = FAIL_AT(p, c.first_attribute_at, KILN_ERR_INVALID_PROGRAM, "op '%s' takes no attribute '%s'",
                         op->name, c.first_attribute);
    if (status == KILN_OK)
        status = check_arity(p, op, c.count, op_at);
    if (status == KILN_OK)
        status = make_literal_scalars(p, &c, op);
    if (status == KILN_OK) {
        kiln_value inputs[64];
        for (uint32_t i = 0; i < c.count; i++)
            inputs[i] = c.operands[i].value;
        if (kiln_builder_add_op(p->builder, op->name, c.count, inputs, &value, &cause) != KILN_OK)
            status = fail_with(p, statement_at, &cause);
    }
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->results, result, strlen(result), value, statement_at, p->err);
    release_call(&c);
    free(op_name);
    free(result);
    KILN_TRY(status);
    return end_statement(p, "op");
}

static kiln_status parse_output(parser *p)
{
    kiln_error cause;
    kiln_value value;
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "an output name after 'output'");
    kiln_text_position at = p->token.at;
    char *name;
    KILN_TRY(copy_token(p, &name));
    kiln_status status = advance(p);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' after the output name");
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_WORD && p->token.kind != KILN_TOKEN_RESULT)
        status = expected(p, "the value to output (a name or a %result)");
    if (status == KILN_OK)
        status = resolve_reference(p, &value);
    if (status == KILN_OK && kiln_builder_add_output(p->builder, name, value, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    free(name);
    KILN_TRY(status);
    p->output_count++;
    KILN_TRY(advance(p));
    return end_statement(p, "'output'");
}

static kiln_status parse_statement(parser *p)
{
    const kiln_token *t = &p->token;
    if (t->kind == KILN_TOKEN_RESULT)
        return parse_node(p);
    if (t->kind != KILN_TOKEN_WORD)
        return expected(p, "a statement");
    if (kiln_token_is_word(t, "meta"))
        return parse_meta(p);
    if (kiln_token_is_word(t, "mode"))
        return parse_mode(p);
    if (kiln_token_is_word(t, "dim"))
        return parse_dim(p);
    if (kiln_token_is_word(t, "input"))
        return parse_input(p);
    if (kiln_token_is_word(t, "weight"))
        return parse_weight(p, KILN_WEIGHT_PARAMETER, "weight");
    if (kiln_token_is_word(t, "buffer"))
        return parse_weight(p, KILN_WEIGHT_BUFFER, "buffer");
    if (kiln_token_is_word(t, "const"))
        return parse_weight(p, KILN_WEIGHT_CONSTANT, "const");
    if (kiln_token_is_word(t, "output"))
        return parse_output(p);
    if (kiln_token_is_word(t, "check"))
        return FAIL_AT(p, t->at, KILN_ERR_UNKNOWN_CRITICAL,
                       "semantic check ('check') is not supported by this kiln version");
    if (kiln_token_is_word(t, "evidence"))
        return FAIL_AT(p, t->at, KILN_ERR_UNKNOWN_CRITICAL,
                       "evidence ('evidence \"NAME\" { ... }') is not supported by this kiln version");
    if (kiln_token_is_word(t, "program"))
        return FAIL_AT(p, t->at, KILN_ERR_INVALID_PROGRAM, "the program is already named; 'program' appears once");
    if (kiln_token_is_word(t, "kiln"))
        return FAIL_AT(p, t->at, KILN_ERR_MALFORMED, "the header 'kiln " KILN_TEXT_VERSION "' appears only once");
    return FAIL_AT(p, t->at, KILN_ERR_MALFORMED,
                   "unknown statement '%.*s'; expected meta, mode, dim, input, weight, buffer, const, "
                   "output or %%result = op(...)",
                   (int)(t->length > 64 ? 64 : t->length), t->text);
}

static kiln_status parse_text(parser *p)
{
    KILN_TRY(advance(p));
    KILN_TRY(parse_header(p));
    KILN_TRY(skip_newlines(p));
    if (!kiln_token_is_word(&p->token, "program"))
        return expected(p, "'program \"NAME\"' after the header");
    KILN_TRY(parse_program(p));
    for (;;) {
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_END)
            break;
        KILN_TRY(parse_statement(p));
    }
    if (p->output_count == 0)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                       "the program has no output; add 'output NAME = VALUE'");
    return KILN_OK;
}

kiln_status kiln_text_assemble(const char *text, size_t size, const char *source_name, const char *base_dir,
                               kiln_builder **out, kiln_error *err)
{
    if (!out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_text_assemble: out is NULL");
    *out = NULL;
    if (!text && size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_text_assemble: text is NULL");
    parser p = {.source = source_name ? source_name : "<text>", .base_dir = base_dir, .err = err};
    kiln_lexer_init(&p.lexer, text, size, p.source);
    kiln_text_symbols_init(&p.values);
    kiln_text_symbols_init(&p.results);
    kiln_text_symbols_init(&p.metadata);
    kiln_expr_pool_init(&p.shapes);
    kiln_status status = parse_text(&p);
    kiln_lexer_release(&p.lexer);
    kiln_text_symbols_release(&p.values);
    kiln_text_symbols_release(&p.results);
    kiln_text_symbols_release(&p.metadata);
    kiln_expr_pool_release(&p.shapes);
    for (uint32_t d = 0; d < p.dim_count; d++)
        free(p.dim_names[d]);
    free(p.dim_names);
    if (status != KILN_OK) {
        kiln_builder_free(p.builder);
        return status;
    }
    *out = p.builder;
    return KILN_OK;
}
