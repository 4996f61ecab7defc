/*
 * text_parse.c — the text assembler: reads the kiln text format
 * (spec/text-format.md) and replays it on a builder through the public
 * builder API, so a text program is checked by exactly the code that
 * checks a program built from C.
 *
 * The parser is a loop over statements with one token of lookahead and no
 * recursion (shape and derived-dim text is read by lib/contract/shape_parse.c with
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
/* realpath() is X/Open. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/util.h>

#include "builder.h"
#include "error.h"
#include "half.h"
#include "npy.h"
#include "op_registry.h"
#include "shape_parse.h"
#include "tensor.h"
#include "text_check.h"
#include "text_literal.h"
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
    kiln_text_symbols checked;  /* inputs given a check so far */
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
    bool strict_seen;
    bool evidence_seen;
    /* Methods (text format 1.1): `builder` is the method being read, `program` the program's own
     * builder (the first method's, which owns the others once added). */
    kiln_builder *program;
    char *program_name;
    kiln_mode mode;
    bool methods_allowed;           /* the header says 1.1 */
    bool in_method;                 /* inside `method NAME { ... }` */
    bool methods_seen;              /* a method block was read: only more may follow */
    bool generation_seen;           /* a generation case was read: only more may follow */
    kiln_text_symbols generations;  /* generation case names */
    kiln_text_symbols program_weights; /* the weights declared outside the blocks, which blocks may use */
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

/* Copy the current token's text (a name or a literal). */
static kiln_status copy_token(parser *p, char **out)
{
    *out = kiln_text_copy(p->token.text, p->token.length);
    return *out ? KILN_OK : no_memory(p);
}

/* Copy the decoded value of the current string token. */
static kiln_status copy_string(parser *p, char **out)
{
    const kiln_text_buffer *value = &p->lexer.string;
    *out = kiln_text_copy(value->data ? value->data : "", value->data ? value->length : 0);
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

static kiln_status unknown_op(parser *p, const char *name, kiln_text_position at)
{
    size_t length = strlen(name);
    const char *nearest = NULL;
    size_t nearest_distance = SIZE_MAX;
    for (uint32_t i = 0; length <= MAX_SUGGESTION_NAME && i < kiln_op_count(); i++) {
        size_t distance = kiln_name_distance(name, kiln_op_at(i)->name);
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
 * Read `[ ... ]` after a dtype and check it as the builder will, against
 * the dims and derived dims declared so far. *text receives the shape text (caller
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
    *text = kiln_text_copy(shape.text, shape.length);
    if (!*text)
        return no_memory(p);
    if (kiln_shape_parse_with_aliases(*text, (const char *const *)p->dim_names, p->dim_count, p->derived,
                                      p->derived_count, &p->shapes, rank, axes, &cause) != KILN_OK) {
        kiln_status status = shape_error(p, &shape, *text, &cause);
        free(*text);
        *text = NULL;
        return status;
    }
    return advance(p);
}

/* The extents of a weight or an evidence tensor (`kind`): shape text over
 * constants only. */
static kiln_status static_extents(parser *p, const char *kind, const char *name, kiln_text_position at,
                                  uint32_t rank, const uint32_t axes[KILN_MAX_RANK], int64_t extents[KILN_MAX_RANK])
{
    for (uint32_t a = 0; a < rank; a++) {
        for (uint32_t d = 0; d < p->dim_count; d++)
            if (kiln_expr_uses_dim(&p->shapes, axes[a], d))
                return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "%s '%s' axis %u uses dim '%s'; %s shapes are static",
                               kind, name, a, p->dim_names[d], kind);
        /* No dim occurs, so evaluation never reads these. */
        int64_t unused_value = 0;
        bool unused_bound = false;
        kiln_error cause;
        if (kiln_expr_eval(&p->shapes, axes[a], &unused_value, &unused_bound, &extents[a], &cause) != KILN_OK)
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "%s '%s' axis %u: %s", kind, name, a, cause.message);
        if (extents[a] < 0)
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "%s '%s' axis %u has negative extent %lld", kind, name,
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
    bool one_zero = p->token.length == 3 && memcmp(p->token.text, "1.0", 3) == 0;
    if (!one_zero && (p->token.length != strlen(KILN_TEXT_VERSION) ||
                      memcmp(p->token.text, KILN_TEXT_VERSION, p->token.length) != 0))
        return FAIL_AT(p, p->token.at, KILN_ERR_UNSUPPORTED_VERSION,
                       "text format version %.*s is not supported; this kiln reads versions 1.0 and "
                       KILN_TEXT_VERSION, (int)(p->token.length > 40 ? 40 : p->token.length), p->token.text);
    p->methods_allowed = !one_zero;
    KILN_TRY(advance(p));
    return end_statement(p, "'kiln'");
}

static kiln_status parse_program(parser *p)
{
    kiln_error cause;
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_STRING)
        return expected(p, "the program name as a string after 'program'");
    KILN_TRY(copy_string(p, &p->program_name));
    kiln_status status = kiln_builder_new(p->program_name, &p->builder, &cause);
    if (status != KILN_OK)
        return fail_with(p, p->token.at, &cause);
    p->program = p->builder;
    KILN_TRY(advance(p));
    return end_statement(p, "'program'");
}

static kiln_status parse_meta(parser *p)
{
    kiln_error cause;
    char *key = NULL, *value = NULL;
    if (p->in_method)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                       "a method has the program's metadata; write 'meta' before the method blocks");
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
    if (p->in_method)
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                       "a method has the program's mode; set it before the method blocks");
    KILN_TRY(advance(p));
    if (kiln_token_is_word(&p->token, "inference"))
        mode = KILN_MODE_INFERENCE;
    else if (kiln_token_is_word(&p->token, "training"))
        mode = KILN_MODE_TRAINING;
    else
        return expected(p, "'inference' or 'training' after 'mode'");
    if (kiln_builder_set_mode(p->builder, mode, &cause) != KILN_OK)
        return fail_with(p, p->token.at, &cause);
    p->mode = mode;
    p->mode_seen = true;
    KILN_TRY(advance(p));
    return end_statement(p, "'mode'");
}

/* strict true | strict false: before the first node (spec/contract.md §4.2). */
static kiln_status parse_strict(parser *p)
{
    kiln_error cause;
    kiln_text_position at = p->token.at;
    bool strict;
    if (p->strict_seen)
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "strictness is already set");
    KILN_TRY(advance(p));
    if (kiln_token_is_word(&p->token, "true"))
        strict = true;
    else if (kiln_token_is_word(&p->token, "false"))
        strict = false;
    else
        return expected(p, "'true' or 'false' after 'strict'");
    if (kiln_builder_set_strict(p->builder, strict, &cause) != KILN_OK)
        return fail_with(p, at, &cause);
    p->strict_seen = true;
    KILN_TRY(advance(p));
    return end_statement(p, "'strict'");
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

static kiln_status remember_dim(parser *p, const char *name, kiln_text_position at, text_dim domain)
{
    if (!reserve((void **)&p->dim_names, &p->dim_capacity, p->dim_count, sizeof *p->dim_names))
        return no_memory(p);
    /* Both arrays share dim_capacity: grow the second to match the first. */
    text_dim *grown = realloc(p->dim_domains, (size_t)p->dim_capacity * sizeof *grown);
    if (!grown)
        return no_memory(p);
    p->dim_domains = grown;
    if (!(p->dim_names[p->dim_count] = kiln_text_copy(name, strlen(name))))
        return no_memory(p);
    p->dim_domains[p->dim_count] = domain;
    p->dim_count++;
    return kiln_text_symbols_add(&p->dims, name, strlen(name), p->dim_count - 1, at, p->err);
}

/*
 * `dim NAME = EXPR`: the expression is the rest of the line, read by the
 * shape grammar over the dims and derived dims declared so far.
 */
static kiln_status parse_derived_dim(parser *p, const char *name, kiln_text_position name_at)
{
    kiln_error cause;
    kiln_token expression;
    uint32_t rank, axes[KILN_MAX_RANK];
    kiln_text_position equals_at = p->token.at;
    kiln_lexer_expression(&p->lexer, &expression);
    if (expression.length == 0)
        return FAIL_AT(p, equals_at, KILN_ERR_MALFORMED, "expected a shape expression after '=' (dim %s = EXPR)",
                       name);
    char *text = kiln_text_copy(expression.text, expression.length);
    if (!text)
        return no_memory(p);
    kiln_status status = KILN_OK;
    if (kiln_shape_parse_with_aliases(text, (const char *const *)p->dim_names, p->dim_count, p->derived,
                                      p->derived_count, &p->shapes, &rank, axes, &cause) != KILN_OK)
        status = shape_error(p, &expression, text, &cause);
    else if (rank != 1)
        status = FAIL_AT(p, expression.at, KILN_ERR_MALFORMED, "a derived dim is one expression, found %u", rank);
    if (status == KILN_OK && kiln_builder_add_derived_dim(p->builder, name, text, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    free(text);
    KILN_TRY(status);
    if (!reserve((void **)&p->derived_names, &p->derived_capacity, p->derived_count, sizeof *p->derived_names))
        return no_memory(p);
    kiln_shape_alias *grown = realloc(p->derived, (size_t)p->derived_capacity * sizeof *grown);
    if (!grown)
        return no_memory(p);
    p->derived = grown;
    if (!(p->derived_names[p->derived_count] = kiln_text_copy(name, strlen(name))))
        return no_memory(p);
    p->derived[p->derived_count] = (kiln_shape_alias){p->derived_names[p->derived_count], axes[0]};
    p->derived_count++;
    KILN_TRY(kiln_text_symbols_add(&p->dims, name, strlen(name), UINT32_MAX, name_at, p->err));
    KILN_TRY(advance(p));
    return end_statement(p, "'dim'");
}

/* `dim NAME in MIN..MAX [multiple_of K]` or `dim NAME = EXPR` */
static kiln_status parse_dim(parser *p)
{
    kiln_error cause;
    text_dim domain = {0, 0, 1};
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "a dim name after 'dim'");
    kiln_text_position name_at = p->token.at;
    const kiln_text_symbol *earlier = kiln_text_symbols_find(&p->dims, p->token.text, p->token.length);
    if (earlier)
        return FAIL_AT(p, name_at, KILN_ERR_INVALID_PROGRAM,
                       "'%.*s' is already declared at line %zu; dim and derived dim names are unique",
                       (int)(p->token.length > 64 ? 64 : p->token.length), p->token.text, earlier->at.line);
    char *name;
    KILN_TRY(copy_token(p, &name));
    kiln_status status = advance(p);
    if (status == KILN_OK && p->token.kind == KILN_TOKEN_EQUALS) {
        status = parse_derived_dim(p, name, name_at);
        free(name);
        return status;
    }
    if (status == KILN_OK && !kiln_token_is_word(&p->token, "in"))
        status = expected(p, "'in' and a range MIN..MAX, or '=' and an expression, after the dim name");
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK)
        status = parse_integer(p, &domain.min);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_DOTDOT, "'..' between the bounds of the range");
    if (status == KILN_OK)
        status = parse_integer(p, &domain.max);
    if (status == KILN_OK && kiln_builder_add_dim(p->builder, name, domain.min, domain.max, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    if (status == KILN_OK && kiln_token_is_word(&p->token, "multiple_of")) {
        status = advance(p);
        kiln_text_position k_at = p->token.at;
        if (status == KILN_OK)
            status = parse_integer(p, &domain.multiple_of);
        /* The builder's message for k < 1 would speak of an empty range. */
        if (status == KILN_OK && domain.multiple_of < 1)
            status = FAIL_AT(p, k_at, KILN_ERR_INVALID_ARGUMENT, "dim '%s': multiple_of must be at least 1, got %lld",
                             name, (long long)domain.multiple_of);
        if (status == KILN_OK &&
            kiln_builder_set_dim_multiple_of(p->builder, name, domain.multiple_of, &cause) != KILN_OK)
            status = fail_with(p, k_at, &cause);
    }
    if (status == KILN_OK)
        status = remember_dim(p, name, name_at, domain);
    free(name);
    KILN_TRY(status);
    return end_statement(p, "'dim'");
}

/* Text format 1.1 only: `keyword` is refused in a 1.0 text. */
static kiln_status require_newer_text(parser *p, const char *keyword)
{
    if (p->methods_allowed)
        return KILN_OK;
    return FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                   "'%s' is text format " KILN_TEXT_VERSION ": begin the text with 'kiln " KILN_TEXT_VERSION "'", keyword);
}

/* `relation LHS <= RHS` over the dims and derived dims declared so far (spec/text-format.md §3.4). */
static kiln_status parse_relation(parser *p)
{
    KILN_TRY(require_newer_text(p, "relation"));
    kiln_text_position at = p->token.at;
    kiln_token relation;
    kiln_lexer_expression(&p->lexer, &relation);
    if (relation.length == 0)
        return FAIL_AT(p, at, KILN_ERR_MALFORMED, "expected 'LHS <= RHS' after 'relation'");
    char *text = kiln_text_copy(relation.text, relation.length);
    if (!text)
        return no_memory(p);
    kiln_error cause;
    kiln_status status = kiln_builder_add_relation(p->builder, text, &cause) == KILN_OK
                             ? KILN_OK
                             : FAIL_AT(p, relation.at, KILN_ERR_MALFORMED, "%s", cause.message);
    free(text);
    KILN_TRY(status);
    KILN_TRY(advance(p));
    return end_statement(p, "'relation'");
}

/* `state NAME: DTYPE[EXTENTS] grows AXIS length DIM`: a state tensor (spec/text-format.md §3.4). */
static kiln_status parse_state(parser *p)
{
    KILN_TRY(require_newer_text(p, "state"));
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "a state name after 'state'");
    kiln_text_position at = p->token.at;
    char *name, *shape = NULL, *length_dim = NULL;
    KILN_TRY(copy_token(p, &name));
    kiln_dtype dtype;
    uint32_t rank = 0, axes[KILN_MAX_RANK];
    int64_t extents[KILN_MAX_RANK], axis = -1;
    kiln_status status = advance(p);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_COLON, "':' after the state name");
    if (status == KILN_OK)
        status = parse_dtype(p, &dtype);
    if (status == KILN_OK)
        status = parse_shape(p, &shape, &rank, axes);
    if (status == KILN_OK)
        status = static_extents(p, "state", name, at, rank, axes, extents);
    if (status == KILN_OK && !kiln_token_is_word(&p->token, "grows"))
        status = expected(p, "'grows AXIS' after the state's type");
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK)
        status = parse_integer(p, &axis);
    if (status == KILN_OK && !kiln_token_is_word(&p->token, "length"))
        status = expected(p, "'length DIM' after 'grows AXIS'");
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_WORD)
        status = expected(p, "the dim the state's length binds after 'length'");
    if (status == KILN_OK)
        status = copy_token(p, &length_dim);
    kiln_error cause;
    if (status == KILN_OK && (axis < 0 || axis > UINT32_MAX))
        status = FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "state '%s': axis %lld is not an axis", name, (long long)axis);
    if (status == KILN_OK &&
        kiln_builder_add_state(p->builder, name, dtype, rank, extents, (uint32_t)axis, length_dim, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    free(name);
    free(shape);
    free(length_dim);
    KILN_TRY(status);
    KILN_TRY(advance(p));
    return end_statement(p, "'state'");
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
    if (status == KILN_OK &&
        !reserve((void **)&p->input_types, &p->input_capacity, p->input_count, sizeof *p->input_types))
        status = no_memory(p);
    if (status == KILN_OK) {
        text_input *declared = &p->input_types[p->input_count];
        declared->dtype = dtype;
        declared->rank = rank;
        memcpy(declared->axes, axes, sizeof declared->axes);
        status = kiln_text_symbols_add(&p->inputs, name, strlen(name), p->input_count++, at, p->err);
    }
    free(name);
    free(shape);
    KILN_TRY(status);
    return end_statement(p, "'input'");
}

/*
 * `check NAME [:] RULE, ...`: the semantic checks of a declared input, in
 * the grammar text_check.c reads (also for the tools' one-line specs).
 * Each input has at most one check statement, so no rule is silently
 * replaced by a later line.
 */
static kiln_status parse_check(parser *p)
{
    kiln_error cause;
    kiln_text_position name_at;
    kiln_check_spec spec = {0};
    kiln_check_cursor cursor = {.lexer = &p->lexer, .token = &p->token, .source = p->source, .err = p->err};
    KILN_TRY(advance(p));
    if (p->token.kind == KILN_TOKEN_WORD &&
        !kiln_text_symbols_find(&p->inputs, p->token.text, p->token.length)) {
        const kiln_text_symbol *value = kiln_text_symbols_find(&p->values, p->token.text, p->token.length);
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                       "'%.*s' is not %s; a check applies to an input declared before it",
                       (int)(p->token.length > 64 ? 64 : p->token.length), p->token.text,
                       value ? "an input but a stored tensor" : "a declared input");
    }
    const kiln_text_symbol *earlier =
        p->token.kind == KILN_TOKEN_WORD ? kiln_text_symbols_find(&p->checked, p->token.text, p->token.length) : NULL;
    if (earlier)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM,
                       "input '%.*s' already has a check at line %zu; give all its rules in one check statement",
                       (int)(p->token.length > 64 ? 64 : p->token.length), p->token.text, earlier->at.line);
    KILN_TRY(kiln_text_check_parse_name(&cursor, false, &spec.input, &name_at));
    kiln_status status = kiln_text_check_parse_rules(&cursor, false, &spec);
    if (status == KILN_OK && kiln_builder_set_input_check(p->builder, spec.input, &spec.check, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->checked, spec.input, strlen(spec.input), 0, name_at, p->err);
    kiln_check_spec_free(&spec);
    KILN_TRY(status);
    return end_statement(p, "'check'");
}

/* ------------------------------------------------------ file references */

/*
 * A `file "PATH"` names a .npy inside the text's folder (base_dir): a text
 * and its files are one bundle, and assembling a bundle from elsewhere must
 * not embed the rest of the machine (`../../home/u/secret.npy`), hang (a
 * FIFO) or read until memory runs out (/dev/zero). So PATH is relative with
 * no `..` component (refused from the text alone, before the file system is
 * asked anything); its resolved path (realpath: symbolic links followed)
 * lies inside the resolved folder; it is opened with O_NONBLOCK (opening a
 * FIFO does not wait for a writer) and O_NOFOLLOW (a link put in place of
 * the checked file is refused), must be a regular file (fstat), and its
 * size, bounded by what the declaration can hold, is all that is read.
 * A folder changed while it is read (a directory on the path swapped for a
 * link between the check and the open) is not defended against: whoever
 * can write the folder can write its files.
 */

/* The largest .npy overhead lib/core/npy.c accepts (npy.h). */
#define NPY_MAX_OVERHEAD KILN_NPY_MAX_OVERHEAD

/* The most element bytes a file reference may hold, and what says so in a message. */
typedef struct file_bound {
    uint64_t data_bytes;
    const char *what;
} file_bound;

/* a * b for a byte count, UINT64_MAX when it overflows (no file is that large). */
static uint64_t times_saturating(uint64_t a, int64_t b)
{
    if (b <= 0)
        return 0;
    return a > UINT64_MAX / (uint64_t)b ? UINT64_MAX : a * (uint64_t)b;
}

/* Refuse what the text alone shows to leave the folder. */
static kiln_status check_file_text(parser *p, const char *path, kiln_text_position at)
{
    if (!path[0])
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "the file path is empty");
    if (path[0] == '/')
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                       "file '%s' is an absolute path; paths are relative to the text file", path);
    for (const char *part = path; *part;) {
        size_t length = strcspn(part, "/");
        if (length == 2 && part[0] == '.' && part[1] == '.')
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                           "file '%s' leaves the text's folder ('..'); files must lie in the folder of the "
                           "text or below it", path);
        part += length;
        part += *part == '/';
    }
    return KILN_OK;
}

/* *out (caller frees): the real path of `path` under the text's folder, checked to lie inside it. */
static kiln_status resolve_inside(parser *p, const char *path, kiln_text_position at, char **out)
{
    const char *folder = p->base_dir && p->base_dir[0] ? p->base_dir : ".";
    char *folder_real = realpath(folder, NULL);
    if (!folder_real)
        return FAIL_AT(p, at, KILN_ERR_IO, "file '%s': the text's folder '%s': %s", path, folder, strerror(errno));
    kiln_text_buffer joined;
    kiln_text_buffer_init(&joined);
    kiln_text_buffer_printf(&joined, "%s/%s", folder_real, path);
    kiln_status status = joined.failed ? no_memory(p) : KILN_OK;
    char *file_real = status == KILN_OK ? realpath(joined.data, NULL) : NULL;
    if (status == KILN_OK && !file_real)
        status = FAIL_AT(p, at, errno == ENOMEM ? KILN_ERR_OUT_OF_MEMORY : KILN_ERR_IO, "cannot open file '%s': %s",
                         path, strerror(errno));
    size_t folder_length = strlen(folder_real);
    bool inside = file_real && strncmp(file_real, folder_real, folder_length) == 0 &&
                  (file_real[folder_length] == '/' || strcmp(folder_real, "/") == 0);
    if (status == KILN_OK && !inside)
        status = FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM,
                         "file '%s' resolves to '%s', outside the text's folder '%s' (a symbolic link leading "
                         "out); copy the file into the folder",
                         path, file_real, folder_real);
    kiln_text_buffer_release(&joined);
    free(folder_real);
    if (status != KILN_OK) {
        free(file_real);
        return status;
    }
    *out = file_real;
    return KILN_OK;
}

static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

/* Read the `size` bytes of regular file `fd`; a shorter read (the file shrank) is an error. */
static bool read_exactly(int fd, uint8_t *data, size_t size)
{
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done < ((size_t)1 << 30) ? size - done : (size_t)1 << 30;
        ssize_t got = read(fd, data + done, chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        done += (size_t)got;
    }
    return true;
}

/*
 * Open `resolved` (the real path of `path`) as a regular file of at most
 * bound's bytes and read its first `most_read` bytes (SIZE_MAX: all of
 * it); *file_size receives its size.
 */
static kiln_status read_regular(parser *p, const char *path, const char *resolved, kiln_text_position at,
                                const file_bound *bound, size_t most_read, uint8_t **bytes, size_t *size,
                                uint64_t *file_size)
{
    int fd = open(resolved, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return FAIL_AT(p, at, KILN_ERR_IO, "cannot open file '%s': %s", path, strerror(errno));
    struct stat st;
    kiln_status status = KILN_OK;
    uint64_t most = bound->data_bytes > UINT64_MAX - NPY_MAX_OVERHEAD ? UINT64_MAX
                                                                       : bound->data_bytes + NPY_MAX_OVERHEAD;
    if (fstat(fd, &st) != 0)
        status = FAIL_AT(p, at, KILN_ERR_IO, "cannot stat file '%s': %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        status = FAIL_AT(p, at, KILN_ERR_IO, "file '%s' is %s, not a regular file", path, file_kind(st.st_mode));
    else if ((uint64_t)st.st_size > most || (uint64_t)st.st_size > SIZE_MAX)
        status = FAIL_AT(p, at, KILN_ERR_LIMIT, "file '%s' is %llu bytes, more than a .npy of %s can be (at most %llu)",
                         path, (unsigned long long)st.st_size, bound->what, (unsigned long long)most);
    size_t wanted = status == KILN_OK && (uint64_t)st.st_size < most_read ? (size_t)st.st_size : most_read;
    *bytes = status == KILN_OK ? malloc(wanted ? wanted : 1) : NULL;
    if (status == KILN_OK && !*bytes)
        status = no_memory(p);
    if (status == KILN_OK && !read_exactly(fd, *bytes, wanted))
        status = FAIL_AT(p, at, KILN_ERR_IO, "cannot read the %llu bytes of file '%s'", (unsigned long long)st.st_size,
                         path);
    close(fd);
    if (status != KILN_OK) {
        free(*bytes);
        *bytes = NULL;
        return status;
    }
    *size = wanted;
    *file_size = (uint64_t)st.st_size;
    return KILN_OK;
}

/* The .npy `path` names, confined and bounded as the section comment says. */
static kiln_status read_npy_file(parser *p, const char *path, kiln_text_position at, const file_bound *bound,
                                 kiln_tensor **tensor)
{
    char *resolved = NULL;
    uint8_t *bytes = NULL;
    size_t size = 0;
    uint64_t file_size;
    KILN_TRY(check_file_text(p, path, at));
    KILN_TRY(resolve_inside(p, path, at, &resolved));
    kiln_status status = read_regular(p, path, resolved, at, bound, SIZE_MAX, &bytes, &size, &file_size);
    free(resolved);
    kiln_error cause;
    if (status == KILN_OK && kiln_npy_read_memory(bytes, size, tensor, &cause) != KILN_OK)
        status = FAIL_AT(p, at, cause.code, "file '%s': %s", path, cause.message);
    free(bytes);
    return status;
}

/*
 * `file "PATH"` (the current token is `file`): read the .npy, of at most
 * bound's bytes. *path receives the path as written (caller frees) and *at
 * its place.
 */
static kiln_status read_file_value(parser *p, const file_bound *bound, kiln_tensor **tensor, char **path,
                                   kiln_text_position *at)
{
    *tensor = NULL;
    *path = NULL;
    KILN_TRY(advance(p)); /* 'file' */
    if (p->token.kind != KILN_TOKEN_STRING)
        return expected(p, "the file path as a string after 'file'");
    *at = p->token.at;
    KILN_TRY(copy_string(p, path));
    kiln_status status = read_npy_file(p, *path, *at, bound, tensor);
    if (status == KILN_OK)
        status = advance(p);
    if (status != KILN_OK) {
        kiln_tensor_free(*tensor);
        *tensor = NULL;
        free(*path);
        *path = NULL;
    }
    return status;
}

/* Does `tensor` hold exactly dtype[extents]? */
static bool tensor_is(const kiln_tensor *tensor, kiln_dtype dtype, uint32_t rank, const int64_t *extents)
{
    bool same = kiln_tensor_dtype(tensor) == dtype && kiln_tensor_rank(tensor) == rank;
    for (uint32_t a = 0; same && a < rank; a++)
        same = kiln_tensor_shape(tensor)[a] == extents[a];
    return same;
}

/* `file "PATH"` for a declaration of type dtype[extents]: read the .npy
 * (no larger than that type needs) and check it holds that type. */
static kiln_status read_declared_file(parser *p, const char *name, kiln_dtype dtype, uint32_t rank,
                                      const int64_t *extents, kiln_tensor **tensor)
{
    char *path;
    kiln_text_position at;
    kiln_text_buffer type;
    kiln_text_buffer_init(&type);
    describe_type(&type, dtype, rank, extents);
    file_bound bound = {kiln_dtype_size(dtype), type.data && !type.failed ? type.data : "the declared type"};
    for (uint32_t a = 0; a < rank; a++)
        bound.data_bytes = times_saturating(bound.data_bytes, extents[a]);
    kiln_status read = read_file_value(p, &bound, tensor, &path, &at);
    kiln_text_buffer_release(&type);
    KILN_TRY(read);
    kiln_status status = KILN_OK;
    if (!tensor_is(*tensor, dtype, rank, extents)) {
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
        kiln_tensor_free(*tensor);
        *tensor = NULL;
    }
    free(path);
    return status;
}

/*
 * `file "PATH"` for a weight declared dtype[extents] (the current token is
 * `file`), streamed rather than read: the file is confined and bounded as
 * for any file reference, but only its .npy header is read here, checked
 * to hold exactly that type, and *resolved (caller frees; the real path)
 * and *data_offset say where the element bytes are. The builder reads them
 * while the artifact is written (kiln_builder_add_weight_file), so
 * assembling a program never holds its weights in memory.
 */
static kiln_status read_declared_file_header(parser *p, const char *name, kiln_dtype dtype, uint32_t rank,
                                             const int64_t *extents, char **resolved, uint64_t *data_offset)
{
    char *path = NULL;
    uint8_t *prefix = NULL;
    size_t size = 0;
    uint64_t file_size = 0;
    kiln_text_position at;
    kiln_text_buffer type;
    *resolved = NULL;
    KILN_TRY(advance(p)); /* 'file' */
    if (p->token.kind != KILN_TOKEN_STRING)
        return expected(p, "the file path as a string after 'file'");
    at = p->token.at;
    KILN_TRY(copy_string(p, &path));
    kiln_text_buffer_init(&type);
    describe_type(&type, dtype, rank, extents);
    file_bound bound = {kiln_dtype_size(dtype), type.data && !type.failed ? type.data : "the declared type"};
    for (uint32_t a = 0; a < rank; a++)
        bound.data_bytes = times_saturating(bound.data_bytes, extents[a]);
    kiln_status status = check_file_text(p, path, at);
    if (status == KILN_OK)
        status = resolve_inside(p, path, at, resolved);
    if (status == KILN_OK)
        status = read_regular(p, path, *resolved, at, &bound, (size_t)NPY_MAX_OVERHEAD, &prefix, &size, &file_size);
    kiln_error cause;
    kiln_dtype held_dtype = KILN_F32;
    uint32_t held_rank = 0;
    int64_t held_shape[KILN_MAX_RANK] = {0};
    if (status == KILN_OK && kiln_npy_read_header(prefix, size, file_size, &held_dtype, &held_rank, held_shape,
                                                  data_offset, &cause) != KILN_OK)
        status = FAIL_AT(p, at, cause.code, "file '%s': %s", path, cause.message);
    bool same = held_dtype == dtype && held_rank == rank;
    for (uint32_t a = 0; same && a < rank; a++)
        same = held_shape[a] == extents[a];
    if (status == KILN_OK && !same) {
        kiln_text_buffer held;
        kiln_text_buffer_init(&held);
        describe_type(&held, held_dtype, held_rank, held_shape);
        status = FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "file '%s' holds %s, but '%s' is declared %s", path,
                         held.data && !held.failed ? held.data : "?", name, bound.what);
        kiln_text_buffer_release(&held);
    }
    if (status == KILN_OK)
        status = advance(p);
    free(prefix);
    free(path);
    kiln_text_buffer_release(&type);
    if (status != KILN_OK) {
        free(*resolved);
        *resolved = NULL;
    }
    return status;
}

/* `[v, v, ...]` (flat, C order) or, for rank 0, a single `v`. */
static kiln_status read_literal_values(parser *p, kiln_dtype dtype, uint32_t rank, const int64_t *extents,
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
    char *source = NULL;
    uint64_t source_offset = 0;
    kiln_text_buffer literals;
    kiln_value value;
    kiln_text_buffer_init(&literals);
    kiln_status status = parse_declared_name(p, keyword, &name, &at);
    if (status == KILN_OK)
        status = parse_dtype(p, &dtype);
    if (status == KILN_OK)
        status = parse_shape(p, &shape, &rank, axes);
    if (status == KILN_OK)
        status = static_extents(p, "weight", name, at, rank, axes, extents);
    if (status == KILN_OK && kiln_shape_sizes(dtype, rank, extents, &element_count, &byte_size, &cause) != KILN_OK)
        status = FAIL_AT(p, at, cause.code, "weight '%s': %s", name, cause.message);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' and the values (file \"PATH\", [v, ...] or v)");
    /* A weight's file is streamed when the artifact is written; only a
     * bool one is read now, to check that every byte is 0 or 1. */
    bool streamed = kiln_token_is_word(&p->token, "file") && dtype != KILN_BOOL;
    if (status == KILN_OK) {
        if (streamed)
            status = read_declared_file_header(p, name, dtype, rank, extents, &source, &source_offset);
        else if (kiln_token_is_word(&p->token, "file"))
            status = read_declared_file(p, name, dtype, rank, extents, &file);
        else if (p->token.kind == KILN_TOKEN_LBRACKET || is_literal_token(&p->token))
            status = read_literal_values(p, dtype, rank, extents, element_count, &literals);
        else
            status = expected(p, "the values: file \"PATH\", [v, ...] or a single value");
    }
    if (status == KILN_OK) {
        const void *data = file ? kiln_tensor_const_data(file) : literals.data;
        kiln_status added = streamed ? kiln_builder_add_weight_file_resolved(p->builder, name, kind, dtype, rank,
                                                                             extents, source, source_offset, &value,
                                                                             &cause)
                                     : kiln_builder_add_weight(p->builder, name, kind, dtype, rank, extents, data,
                                                               &value, &cause);
        if (added != KILN_OK)
            status = fail_with(p, at, &cause);
    }
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->values, name, strlen(name), value, at, p->err);
    /* Declared outside the blocks: every method block may use it (resolve_reference). */
    if (status == KILN_OK && !p->in_method)
        status = kiln_text_symbols_add(&p->program_weights, name, strlen(name), value, at, p->err);
    kiln_tensor_free(file);
    free(source);
    kiln_text_buffer_release(&literals);
    free(name);
    free(shape);
    KILN_TRY(status);
    return end_statement(p, keyword);
}

/* ---------------------------------------------------------- attributes */

/* An attribute as written, owning what its public view points to. */
typedef struct text_attribute {
    kiln_attribute view; /* name, s, ints and floats point into the fields below */
    char *name;
    char *string;
    int64_t *ints;
    double *floats;
} text_attribute;

static void release_attribute(text_attribute *a)
{
    free(a->name);
    free(a->string);
    free(a->ints);
    free(a->floats);
}

/* A float attribute element: `FLOAT`, `nan`, `inf` or `-inf`. */
static bool is_float_token(const kiln_token *token)
{
    return token->kind == KILN_TOKEN_FLOAT || kiln_token_is_word(token, "nan") || kiln_token_is_word(token, "inf");
}

/* A number or true/false, as an int64 (INT, INTS) or a double (FLOAT, FLOATS). */
static kiln_status attribute_number(parser *p, const kiln_token *token, bool as_float, int64_t *i, double *f)
{
    if (kiln_token_is_word(token, "true") || kiln_token_is_word(token, "false")) {
        *i = kiln_token_is_word(token, "true");
        *f = (double)*i;
        return KILN_OK;
    }
    char *text = kiln_text_copy(token->text, token->length);
    if (!text)
        return no_memory(p);
    uint8_t element[8] = {0};
    kiln_dtype dtype = as_float ? KILN_F64 : KILN_I64;
    kiln_status status = literal_problem(p, token->at, text, dtype, kiln_text_literal_parse(dtype, text, element));
    free(text);
    if (as_float)
        memcpy(f, element, sizeof *f);
    else
        memcpy(i, element, sizeof *i);
    return status;
}

/*
 * `[v, v, ...]`: INTS when every element is an integer (or true/false),
 * FLOATS when any is a float; `[]` is an empty INTS. Lists hold numbers
 * only and do not nest: kiln attributes have no other list types.
 */
static kiln_status parse_attribute_list(parser *p, text_attribute *a)
{
    kiln_token *elements = NULL;
    uint32_t count = 0, capacity = 0;
    bool any_float = false;
    kiln_status status = advance(p); /* '[' */
    if (status == KILN_OK)
        status = skip_newlines(p);
    while (status == KILN_OK && p->token.kind != KILN_TOKEN_RBRACKET) {
        if (p->token.kind == KILN_TOKEN_LBRACKET) {
            status = FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                             "attribute lists do not nest (kiln attributes are numbers, strings and flat lists "
                             "of numbers)");
            break;
        }
        if (p->token.kind == KILN_TOKEN_STRING) {
            status = FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED, "attribute lists hold numbers, not strings");
            break;
        }
        if (!is_literal_token(&p->token)) {
            status = expected(p, "a number, true or false in the attribute list");
            break;
        }
        if (!reserve((void **)&elements, &capacity, count, sizeof *elements)) {
            status = no_memory(p);
            break;
        }
        any_float = any_float || is_float_token(&p->token);
        elements[count++] = p->token; /* points into the source, which outlives the call */
        status = advance(p);
        if (status == KILN_OK)
            status = skip_newlines(p);
        if (status != KILN_OK || p->token.kind == KILN_TOKEN_RBRACKET)
            break;
        status = expect(p, KILN_TOKEN_COMMA, "',' or ']' in the attribute list");
        if (status == KILN_OK)
            status = skip_newlines(p);
    }
    a->view.type = any_float ? KILN_ATTRIBUTE_FLOATS : KILN_ATTRIBUTE_INTS;
    a->view.count = count;
    if (status == KILN_OK) {
        a->ints = any_float ? NULL : calloc(count ? count : 1, sizeof *a->ints);
        a->floats = any_float ? calloc(count ? count : 1, sizeof *a->floats) : NULL;
        if (!a->ints && !a->floats)
            status = no_memory(p);
    }
    for (uint32_t k = 0; status == KILN_OK && k < count; k++) {
        int64_t i = 0;
        double f = 0;
        status = attribute_number(p, &elements[k], any_float, &i, &f);
        if (any_float)
            a->floats[k] = f;
        else
            a->ints[k] = i;
    }
    free(elements);
    a->view.ints = a->ints;
    a->view.floats = a->floats;
    KILN_TRY(status);
    return advance(p); /* ']' */
}

/* The value after `NAME=`: integer, float, string, true/false, or a list. */
static kiln_status parse_attribute_value(parser *p, text_attribute *a)
{
    if (p->token.kind == KILN_TOKEN_STRING) {
        a->view.type = KILN_ATTRIBUTE_STRING;
        KILN_TRY(copy_string(p, &a->string));
        a->view.s = a->string;
        return advance(p);
    }
    if (p->token.kind == KILN_TOKEN_LBRACKET)
        return parse_attribute_list(p, a);
    if (!is_literal_token(&p->token))
        return expected(p, "an attribute value (a number, a string, true, false or [list])");
    bool as_float = is_float_token(&p->token);
    a->view.type = as_float ? KILN_ATTRIBUTE_FLOAT : KILN_ATTRIBUTE_INT;
    KILN_TRY(attribute_number(p, &p->token, as_float, &a->view.i, &a->view.f));
    return advance(p);
}

/* Resolve the current name or %result token to a value. */
/*
 * The input or weight `name` names, into *out (*found false when none). In
 * a method block a name of the program's weights (declared before the
 * blocks) is that weight: it joins the method's builder as the same
 * tensor, which sealing stores once.
 */
static kiln_status lookup_value(parser *p, const kiln_token *name, bool *found, kiln_value *out)
{
    const kiln_text_symbol *symbol = kiln_text_symbols_find(&p->values, name->text, name->length);
    *found = symbol != NULL;
    if (symbol) {
        *out = symbol->value;
        return KILN_OK;
    }
    if (!p->in_method || !kiln_text_symbols_find(&p->program_weights, name->text, name->length))
        return KILN_OK;
    char *copy = kiln_text_copy(name->text, name->length);
    if (!copy)
        return no_memory(p);
    kiln_error cause;
    kiln_status status = kiln_builder_share_weight(p->builder, p->program, copy, out, &cause);
    if (status != KILN_OK)
        status = fail_with(p, name->at, &cause);
    else
        status = kiln_text_symbols_add(&p->values, copy, strlen(copy), *out, name->at, p->err);
    free(copy);
    *found = status == KILN_OK;
    return status;
}

static kiln_status resolve_reference(parser *p, kiln_value *out)
{
    bool result = p->token.kind == KILN_TOKEN_RESULT;
    const kiln_text_symbols *table = result ? &p->results : &p->values;
    if (!result) {
        bool found;
        KILN_TRY(lookup_value(p, &p->token, &found, out));
        if (found)
            return KILN_OK;
    }
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
    text_attribute *attributes;
    uint32_t attribute_count;
    uint32_t attribute_capacity;
} call;

static void release_call(call *c)
{
    for (uint32_t i = 0; i < c->count; i++)
        free(c->operands[i].literal);
    free(c->operands);
    for (uint32_t i = 0; i < c->attribute_count; i++)
        release_attribute(&c->attributes[i]);
    free(c->attributes);
}

/* NAME=VALUE (the current token is the '=' after NAME). */
static kiln_status parse_attribute(parser *p, call *c, const kiln_token *name)
{
    if (c->attribute_count >= MAX_CALL_ARGUMENTS)
        return FAIL_AT(p, name->at, KILN_ERR_LIMIT, "an op call takes at most %d attributes", MAX_CALL_ARGUMENTS);
    if (!reserve((void **)&c->attributes, &c->attribute_capacity, c->attribute_count, sizeof *c->attributes))
        return no_memory(p);
    text_attribute *a = &c->attributes[c->attribute_count];
    memset(a, 0, sizeof *a);
    if (!(a->name = kiln_text_copy(name->text, name->length)))
        return no_memory(p);
    a->view.name = a->name;
    c->attribute_count++; /* released with the call from here on */
    KILN_TRY(advance(p));
    return parse_attribute_value(p, a);
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
        if (p->token.kind == KILN_TOKEN_EQUALS)
            return parse_attribute(p, c, &name);
        if (c->attribute_count)
            return FAIL_AT(p, name.at, KILN_ERR_MALFORMED, "operands of '%s' come before its attributes", op->name);
        /* A declared name wins over the literal words nan, inf, true and false. */
        bool found;
        KILN_TRY(lookup_value(p, &name, &found, &o.value));
        if (!found && !kiln_text_is_literal_word(name.text, name.length))
            return FAIL_AT(p, name.at, KILN_ERR_INVALID_PROGRAM, "'%.*s' is not a declared input or weight",
                           (int)(name.length > 64 ? 64 : name.length), name.text);
        if (!found) {
            o.is_literal = true;
            if (!(o.literal = kiln_text_copy(name.text, name.length)))
                return no_memory(p);
        }
        return add_operand(p, c, o);
    }
    if (c->attribute_count && (p->token.kind == KILN_TOKEN_RESULT || is_literal_token(&p->token)))
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
        case KILN_F16: { uint16_t h; memcpy(&h, element, 2); value = kiln_f16_to_f32(h); break; }
        case KILN_BF16: { uint16_t h; memcpy(&h, element, 2); value = kiln_bf16_to_f32(h); break; }
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
    if (count >= op->inputs.min && count <= op->inputs.max)
        return KILN_OK;
    if (op->inputs.min == op->inputs.max)
        return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "op '%s' takes %u operand%s, got %u", op->name,
                       op->inputs.min, op->inputs.min == 1 ? "" : "s", count);
    return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "op '%s' takes %u to %u operands, got %u", op->name,
                   op->inputs.min, op->inputs.max, count);
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
        if (c.count >= MAX_CALL_ARGUMENTS) {
            status = FAIL_AT(p, p->token.at, KILN_ERR_LIMIT, "an op takes at most %d operands", MAX_CALL_ARGUMENTS);
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
    /* `name "TEXT"`: the node's name (metadata, section NNAM). */
    char *node_name = NULL;
    kiln_text_position name_at = p->token.at;
    if (status == KILN_OK && kiln_token_is_word(&p->token, "name")) {
        status = advance(p);
        name_at = p->token.at;
        if (status == KILN_OK && p->token.kind != KILN_TOKEN_STRING)
            status = expected(p, "the node's name as a string after 'name'");
        if (status == KILN_OK)
            status = copy_string(p, &node_name);
        if (status == KILN_OK)
            status = advance(p);
    }
    if (status == KILN_OK)
        status = check_arity(p, op, c.count, op_at);
    if (status == KILN_OK)
        status = make_literal_scalars(p, &c, op);
    if (status == KILN_OK) {
        /* The registry decides which attributes (names and types) an op
         * takes; the text only spells them. */
        kiln_value inputs[MAX_CALL_ARGUMENTS];
        kiln_attribute attributes[MAX_CALL_ARGUMENTS];
        for (uint32_t i = 0; i < c.count; i++)
            inputs[i] = c.operands[i].value;
        for (uint32_t i = 0; i < c.attribute_count; i++)
            attributes[i] = c.attributes[i].view;
        if (kiln_builder_add_op_with_attributes(p->builder, op->name, c.count, inputs, c.attribute_count,
                                                attributes, &value, &cause) != KILN_OK)
            status = fail_with(p, statement_at, &cause);
    }
    if (status == KILN_OK && node_name && kiln_builder_set_node_name(p->builder, value, node_name, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    free(node_name);
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
    /* The builder refused a second output of the same name. */
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->outputs, name, strlen(name), value, at, p->err);
    free(name);
    KILN_TRY(status);
    KILN_TRY(advance(p));
    return end_statement(p, "'output'");
}

/* ------------------------------------------------------------ evidence */

/* One `NAME = ...` entry of an evidence block. */
typedef struct evidence_entry {
    char *name;
    kiln_tensor *tensor;
    bool is_output;
    uint32_t input;        /* index into parser.input_types, for an input */
    kiln_text_position at; /* where the tensor's type or file is written */
} evidence_entry;

typedef struct evidence_block {
    char *name;
    kiln_text_position at; /* the 'evidence' keyword */
    evidence_entry *entries;
    uint32_t count, capacity;
    kiln_compare_rule rule; /* applies to every expected output */
    bool atol_seen, rtol_seen, exact_seen, nan_unequal_seen;
} evidence_block;

static void release_evidence_block(evidence_block *e)
{
    for (uint32_t i = 0; i < e->count; i++) {
        free(e->entries[i].name);
        kiln_tensor_free(e->entries[i].tensor);
    }
    free(e->entries);
    free(e->name);
}

/* Expression `id` of the scratch pool as text (caller frees), or NULL. */
static char *format_axis(parser *p, uint32_t id)
{
    const char *const *names = (const char *const *)p->dim_names;
    int length = kiln_expr_format(&p->shapes, id, names, NULL, 0);
    char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (text)
        kiln_expr_format(&p->shapes, id, names, text, (size_t)length + 1);
    return text;
}

/* "f64[batch, 2*seq]": an input's declared type. */
static void describe_input(parser *p, kiln_text_buffer *out, const text_input *in)
{
    kiln_text_buffer_printf(out, "%s[", kiln_dtype_name(in->dtype));
    for (uint32_t a = 0; a < in->rank; a++) {
        char *axis = format_axis(p, in->axes[a]);
        kiln_text_buffer_printf(out, "%s%s", a ? ", " : "", axis ? axis : "?");
        free(axis);
    }
    kiln_text_buffer_puts(out, "]");
}

static const char *input_name(const parser *p, uint32_t index)
{
    /* Inputs enter the symbol table in declaration order. */
    return p->inputs.items[index].name;
}

/*
 * Check what can be checked of one evidence tensor on its own: the dtype,
 * and for an input the rank and every constant axis. Axes over dims are
 * checked with the whole case (check_evidence_dims); an output's shape
 * depends on the inputs and is left to `kiln verify`, which replays it.
 */
static kiln_status check_evidence_type(parser *p, const evidence_block *e, const evidence_entry *entry,
                                       kiln_value output, kiln_dtype dtype, uint32_t rank, const int64_t *extents)
{
    kiln_text_buffer given, declared;
    kiln_text_buffer_init(&given);
    kiln_text_buffer_init(&declared);
    describe_type(&given, dtype, rank, extents);
    bool same = true;
    if (entry->is_output) {
        kiln_dtype output_dtype;
        kiln_error cause;
        if (kiln_builder_value_dtype(p->builder, output, &output_dtype, &cause) != KILN_OK)
            output_dtype = KILN_DTYPE_INVALID;
        same = output_dtype == dtype;
        kiln_text_buffer_printf(&declared, "output '%s' has dtype %s", entry->name, kiln_dtype_name(output_dtype));
    } else {
        const text_input *in = &p->input_types[entry->input];
        same = in->dtype == dtype && in->rank == rank;
        for (uint32_t a = 0; same && a < rank; a++) {
            bool constant = true;
            for (uint32_t d = 0; constant && d < p->dim_count; d++)
                constant = !kiln_expr_uses_dim(&p->shapes, in->axes[a], d);
            /* No dim occurs, so evaluation never reads these. */
            int64_t unused_value = 0, size;
            bool unused_bound = false;
            kiln_error cause;
            if (constant &&
                kiln_expr_eval(&p->shapes, in->axes[a], &unused_value, &unused_bound, &size, &cause) == KILN_OK)
                same = size == extents[a];
        }
        kiln_text_buffer_printf(&declared, "input '%s' is ", entry->name);
        describe_input(p, &declared, in);
    }
    kiln_status status = KILN_OK;
    if (!same)
        status = FAIL_AT(p, entry->at, KILN_ERR_INVALID_PROGRAM, "evidence '%s': '%s' is %s, but %s", e->name,
                         entry->name, given.data && !given.failed ? given.data : "?",
                         declared.data && !declared.failed ? declared.data : "?");
    kiln_text_buffer_release(&given);
    kiln_text_buffer_release(&declared);
    return status;
}

/* Is `name` an input or an output here? A name that is both is the input
 * the first time and the expected output the second. */
static kiln_status evidence_role(parser *p, const evidence_block *e, const kiln_token *name, evidence_entry *entry,
                                 kiln_value *output)
{
    const kiln_text_symbol *in = kiln_text_symbols_find(&p->inputs, name->text, name->length);
    const kiln_text_symbol *out = kiln_text_symbols_find(&p->outputs, name->text, name->length);
    bool input_given = false, output_given = false;
    for (uint32_t i = 0; i < e->count; i++) {
        if (strlen(e->entries[i].name) != name->length || memcmp(e->entries[i].name, name->text, name->length) != 0)
            continue;
        output_given = output_given || e->entries[i].is_output;
        input_given = input_given || !e->entries[i].is_output;
    }
    int shown = (int)(name->length > 64 ? 64 : name->length);
    if (in && !input_given) {
        entry->input = in->value;
        return KILN_OK;
    }
    if (out && !output_given) {
        entry->is_output = true;
        *output = out->value;
        return KILN_OK;
    }
    if (in || out)
        return FAIL_AT(p, name->at, KILN_ERR_INVALID_PROGRAM, "evidence '%s' gives '%.*s' twice", e->name, shown,
                       name->text);
    return FAIL_AT(p, name->at, KILN_ERR_INVALID_PROGRAM,
                   "evidence '%s': '%.*s' is neither an input nor an output of the program", e->name, shown,
                   name->text);
}

/* `NAME: DTYPE[EXTENTS] = VALUES` (the current token is the ':'). */
static kiln_status parse_typed_evidence_value(parser *p, const evidence_block *e, evidence_entry *entry,
                                              kiln_value output)
{
    kiln_error cause;
    kiln_dtype dtype;
    uint32_t rank = 0, axes[KILN_MAX_RANK];
    int64_t extents[KILN_MAX_RANK];
    uint64_t element_count;
    size_t byte_size;
    char *shape = NULL;
    kiln_text_buffer literals;
    kiln_text_buffer_init(&literals);
    KILN_TRY(advance(p));
    entry->at = p->token.at;
    kiln_status status = parse_dtype(p, &dtype);
    if (status == KILN_OK)
        status = parse_shape(p, &shape, &rank, axes);
    if (status == KILN_OK)
        status = static_extents(p, "evidence tensor", entry->name, entry->at, rank, axes, extents);
    if (status == KILN_OK && kiln_shape_sizes(dtype, rank, extents, &element_count, &byte_size, &cause) != KILN_OK)
        status = FAIL_AT(p, entry->at, cause.code, "evidence tensor '%s': %s", entry->name, cause.message);
    if (status == KILN_OK)
        status = check_evidence_type(p, e, entry, output, dtype, rank, extents);
    if (status == KILN_OK)
        status = expect(p, KILN_TOKEN_EQUALS, "'=' and the values (file \"PATH\", [v, ...] or v)");
    if (status == KILN_OK) {
        if (kiln_token_is_word(&p->token, "file")) {
            status = read_declared_file(p, entry->name, dtype, rank, extents, &entry->tensor);
        } else if (p->token.kind == KILN_TOKEN_LBRACKET || is_literal_token(&p->token)) {
            kiln_text_position values_at = p->token.at;
            status = read_literal_values(p, dtype, rank, extents, element_count, &literals);
            if (status == KILN_OK && kiln_tensor_new(dtype, rank, extents, &entry->tensor, &cause) != KILN_OK)
                status = fail_with(p, values_at, &cause);
            if (status == KILN_OK && byte_size)
                memcpy(kiln_tensor_data(entry->tensor), literals.data, byte_size);
        } else {
            status = expected(p, "the values: file \"PATH\", [v, ...] or a single value");
        }
    }
    kiln_text_buffer_release(&literals);
    free(shape);
    return status;
}

/*
 * How large the file of an evidence entry written without its type may be:
 * an input at its dims' upper bounds (sound bounds of each axis); an
 * output, whose shape follows from the inputs, as large as one value of a
 * session may be (max_arena_bytes of the default limits: the memory plan
 * refuses a program whose computed value would need more). `what` holds the
 * words for the message.
 */
static file_bound evidence_file_bound(parser *p, const evidence_entry *entry, kiln_text_buffer *what)
{
    if (entry->is_output) {
        kiln_limits limits;
        kiln_limits_default(&limits);
        kiln_text_buffer_printf(what, "output '%s' (one value of a session: max_arena_bytes)", entry->name);
        return (file_bound){limits.max_arena_bytes, what->failed ? "an output" : what->data};
    }
    const text_input *in = &p->input_types[entry->input];
    kiln_interval *ranges = malloc((p->dim_count ? p->dim_count : 1) * sizeof *ranges);
    uint64_t bytes = kiln_dtype_size(in->dtype);
    for (uint32_t d = 0; ranges && d < p->dim_count; d++)
        ranges[d] = (kiln_interval){p->dim_domains[d].min, p->dim_domains[d].max};
    for (uint32_t a = 0; a < in->rank; a++) {
        kiln_interval axis;
        bytes = ranges && kiln_expr_bounds(&p->shapes, in->axes[a], ranges, &axis) ? times_saturating(bytes, axis.hi)
                                                                                   : UINT64_MAX;
    }
    free(ranges);
    kiln_text_buffer_printf(what, "input '%s' ", entry->name);
    describe_input(p, what, in);
    kiln_text_buffer_puts(what, " at its dims' upper bounds");
    return (file_bound){bytes, what->failed ? "an input" : what->data};
}

/* `NAME = file "PATH"` (the current token is the '='). */
static kiln_status parse_evidence_file(parser *p, const evidence_block *e, evidence_entry *entry, kiln_value output)
{
    KILN_TRY(advance(p));
    if (!kiln_token_is_word(&p->token, "file")) {
        if (p->token.kind == KILN_TOKEN_LBRACKET || is_literal_token(&p->token))
            return FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                           "inline evidence values need their type: write %s: DTYPE[EXTENTS] = [v, ...]",
                           entry->name);
        return expected(p, "file \"PATH\" after '=' (or NAME: DTYPE[EXTENTS] = [v, ...])");
    }
    kiln_text_buffer what;
    kiln_text_buffer_init(&what);
    file_bound bound = evidence_file_bound(p, entry, &what);
    char *path;
    kiln_status read = read_file_value(p, &bound, &entry->tensor, &path, &entry->at);
    kiln_text_buffer_release(&what);
    KILN_TRY(read);
    free(path);
    const kiln_tensor *t = entry->tensor;
    return check_evidence_type(p, e, entry, output, kiln_tensor_dtype(t), kiln_tensor_rank(t), kiln_tensor_shape(t));
}

static kiln_status parse_evidence_entry(parser *p, evidence_block *e, const kiln_token *name)
{
    evidence_entry entry = {0};
    kiln_value output = 0;
    entry.at = name->at;
    KILN_TRY(evidence_role(p, e, name, &entry, &output));
    if (!reserve((void **)&e->entries, &e->capacity, e->count, sizeof *e->entries))
        return no_memory(p);
    if (!(entry.name = kiln_text_copy(name->text, name->length)))
        return no_memory(p);
    kiln_status status = p->token.kind == KILN_TOKEN_COLON ? parse_typed_evidence_value(p, e, &entry, output)
                                                          : parse_evidence_file(p, e, &entry, output);
    if (status != KILN_OK) {
        free(entry.name);
        kiln_tensor_free(entry.tensor);
        return status;
    }
    e->entries[e->count++] = entry;
    return KILN_OK;
}

/* atol X, rtol Y: finite and not negative, as the builder requires. */
static kiln_status parse_tolerance(parser *p, const kiln_token *word, double *out)
{
    if (p->token.kind != KILN_TOKEN_INTEGER && p->token.kind != KILN_TOKEN_FLOAT) {
        char what[32];
        snprintf(what, sizeof what, "a number after '%.*s'", (int)word->length, word->text);
        return expected(p, what);
    }
    char *text;
    KILN_TRY(copy_token(p, &text));
    uint8_t element[8] = {0};
    kiln_status status =
        literal_problem(p, p->token.at, text, KILN_F64, kiln_text_literal_parse(KILN_F64, text, element));
    memcpy(out, element, sizeof *out);
    if (status == KILN_OK && !(isfinite(*out) && *out >= 0))
        status = FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "%.*s must be a finite number >= 0, got %s",
                         (int)word->length, word->text, text);
    free(text);
    KILN_TRY(status);
    return advance(p);
}

/* atol X | rtol Y | exact | nan_unequal (the current token follows the word). */
static kiln_status parse_evidence_option(parser *p, evidence_block *e, const kiln_token *word,
                                         kiln_text_position open_at)
{
    bool *seen;
    if (kiln_token_is_word(word, "atol"))
        seen = &e->atol_seen;
    else if (kiln_token_is_word(word, "rtol"))
        seen = &e->rtol_seen;
    else if (kiln_token_is_word(word, "exact"))
        seen = &e->exact_seen;
    else if (kiln_token_is_word(word, "nan_unequal"))
        seen = &e->nan_unequal_seen;
    else if (kiln_token_is_word(word, "evidence") && p->token.kind == KILN_TOKEN_STRING)
        return FAIL_AT(p, open_at, KILN_ERR_MALFORMED, "unterminated evidence block: no '}' closes this '{'");
    else
        return FAIL_AT(p, word->at, KILN_ERR_MALFORMED,
                       "unknown evidence option '%.*s'; expected NAME = VALUE, atol, rtol, exact or nan_unequal",
                       (int)(word->length > 64 ? 64 : word->length), word->text);
    if (*seen)
        return FAIL_AT(p, word->at, KILN_ERR_INVALID_PROGRAM, "evidence option '%.*s' is given twice",
                       (int)word->length, word->text);
    *seen = true;
    if (seen == &e->atol_seen)
        return parse_tolerance(p, word, &e->rule.atol);
    if (seen == &e->rtol_seen)
        return parse_tolerance(p, word, &e->rule.rtol);
    if (seen == &e->exact_seen)
        e->rule.kind = KILN_COMPARE_EXACT;
    else
        e->rule.nan_equal = false;
    return KILN_OK;
}

/* Entries and options up to the closing '}' (the current token follows '{'). */
static kiln_status parse_evidence_body(parser *p, evidence_block *e, kiln_text_position open_at)
{
    for (;;) {
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_RBRACE)
            return advance(p);
        if (p->token.kind == KILN_TOKEN_END)
            return FAIL_AT(p, open_at, KILN_ERR_MALFORMED, "unterminated evidence block: no '}' closes this '{'");
        if (p->token.kind != KILN_TOKEN_WORD)
            return expected(p, "an evidence entry (NAME = file \"PATH\"), an option (atol, rtol, exact, "
                               "nan_unequal) or '}'");
        kiln_token word = p->token;
        KILN_TRY(advance(p));
        if (p->token.kind == KILN_TOKEN_EQUALS || p->token.kind == KILN_TOKEN_COLON)
            KILN_TRY(parse_evidence_entry(p, e, &word));
        else
            KILN_TRY(parse_evidence_option(p, e, &word, open_at));
    }
}

/*
 * The sizes of one case's inputs must fit the contract together, as the
 * runtime guards will check when `kiln verify` replays the case: each dim
 * in its range and a multiple of its multiple_of, the same wherever it
 * occurs, and every compound axis equal to its expression.
 */
static kiln_status check_evidence_dims(parser *p, const evidence_block *e)
{
    int64_t *values = calloc(p->dim_count + 1, sizeof *values);
    bool *bound = calloc(p->dim_count + 1, sizeof *bound);
    uint32_t *source = calloc(p->dim_count + 1, sizeof *source); /* entry that bound the dim */
    uint32_t *source_axis = calloc(p->dim_count + 1, sizeof *source_axis);
    kiln_status status = values && bound && source && source_axis ? KILN_OK : no_memory(p);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; status == KILN_OK && i < e->count; i++) {
            const evidence_entry *entry = &e->entries[i];
            if (entry->is_output)
                continue;
            const text_input *in = &p->input_types[entry->input];
            const int64_t *shape = kiln_tensor_shape(entry->tensor);
            for (uint32_t a = 0; status == KILN_OK && a < in->rank; a++) {
                uint32_t d;
                bool bare = kiln_expr_is_dim(&p->shapes, in->axes[a], &d);
                if (pass == 0 && bare) {
                    const text_dim *domain = &p->dim_domains[d];
                    const char *dim = p->dim_names[d];
                    if (shape[a] < domain->min || shape[a] > domain->max)
                        status = FAIL_AT(p, entry->at, KILN_ERR_INVALID_PROGRAM,
                                         "evidence '%s': input '%s' axis %u (%s): %lld is outside %lld..%lld",
                                         e->name, entry->name, a, dim, (long long)shape[a], (long long)domain->min,
                                         (long long)domain->max);
                    else if (shape[a] % domain->multiple_of != 0)
                        status = FAIL_AT(p, entry->at, KILN_ERR_INVALID_PROGRAM,
                                         "evidence '%s': input '%s' axis %u (%s): %lld is not a multiple of %lld",
                                         e->name, entry->name, a, dim, (long long)shape[a],
                                         (long long)domain->multiple_of);
                    else if (bound[d] && values[d] != shape[a])
                        status = FAIL_AT(p, entry->at, KILN_ERR_INVALID_PROGRAM,
                                         "evidence '%s': input '%s' axis %u (%s) is %lld, but input '%s' axis %u "
                                         "made %s %lld",
                                         e->name, entry->name, a, dim, (long long)shape[a],
                                         e->entries[source[d]].name, source_axis[d], dim, (long long)values[d]);
                    if (!bound[d]) {
                        bound[d] = true;
                        values[d] = shape[a];
                        source[d] = i;
                        source_axis[d] = a;
                    }
                } else if (pass == 1 && !bare) {
                    int64_t expected_size;
                    kiln_error cause;
                    /* A dim that no input binds is refused when sealing. */
                    if (kiln_expr_eval(&p->shapes, in->axes[a], values, bound, &expected_size, &cause) != KILN_OK ||
                        expected_size == shape[a])
                        continue;
                    char *axis = format_axis(p, in->axes[a]);
                    status = FAIL_AT(p, entry->at, KILN_ERR_INVALID_PROGRAM,
                                     "evidence '%s': input '%s' axis %u is %lld, but %s is %lld here", e->name,
                                     entry->name, a, (long long)shape[a], axis ? axis : "its expression",
                                     (long long)expected_size);
                    free(axis);
                }
            }
        }
    }
    free(values);
    free(bound);
    free(source);
    free(source_axis);
    return status;
}

/* Everything the case needs besides its own entries, then the builder call. */
static kiln_status add_evidence(parser *p, const evidence_block *e)
{
    kiln_error cause;
    uint32_t outputs = 0;
    for (uint32_t i = 0; i < p->input_count; i++) {
        bool given = false;
        for (uint32_t j = 0; j < e->count && !given; j++)
            given = !e->entries[j].is_output && e->entries[j].input == i;
        if (!given)
            return FAIL_AT(p, e->at, KILN_ERR_INVALID_PROGRAM, "evidence '%s' does not give input '%s'", e->name,
                           input_name(p, i));
    }
    for (uint32_t j = 0; j < e->count; j++)
        outputs += e->entries[j].is_output;
    if (outputs == 0)
        return FAIL_AT(p, e->at, KILN_ERR_INVALID_PROGRAM,
                       "evidence '%s' expects no output; give at least one output's expected value", e->name);
    KILN_TRY(check_evidence_dims(p, e));
    const char **names = calloc(e->count + 1, sizeof *names);
    const kiln_tensor **tensors = calloc(e->count + 1, sizeof *tensors);
    kiln_compare_rule *rules = calloc(outputs + 1, sizeof *rules);
    kiln_status status = names && tensors && rules ? KILN_OK : no_memory(p);
    if (status == KILN_OK) {
        /* Inputs first, then outputs, each in the order written. */
        uint32_t inputs = e->count - outputs, next_input = 0, next_output = inputs;
        for (uint32_t j = 0; j < e->count; j++) {
            uint32_t slot = e->entries[j].is_output ? next_output++ : next_input++;
            names[slot] = e->entries[j].name;
            tensors[slot] = e->entries[j].tensor;
        }
        for (uint32_t k = 0; k < outputs; k++)
            rules[k] = e->rule;
        const kiln_evidence_case evidence = {
            .name = e->name,
            .input_count = inputs,
            .input_names = names,
            .inputs = tensors,
            .output_count = outputs,
            .output_names = names + inputs,
            .expected = tensors + inputs,
            .rules = rules,
        };
        if (kiln_builder_add_evidence(p->builder, &evidence, &cause) != KILN_OK)
            status = fail_with(p, e->at, &cause);
    }
    free(names);
    free(tensors);
    free(rules);
    return status;
}

/* evidence "NAME" { ENTRY... OPTION... } */
static kiln_status parse_evidence(parser *p)
{
    evidence_block e = {.at = p->token.at,
                        .rule = {KILN_COMPARE_TOLERANCE, KILN_TEXT_DEFAULT_ATOL, KILN_TEXT_DEFAULT_RTOL, true}};
    kiln_text_position name_at = {0, 0}, open_at = {0, 0};
    p->evidence_seen = true;
    kiln_status status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_STRING)
        status = expected(p, "the case name as a string after 'evidence'");
    if (status == KILN_OK) {
        name_at = p->token.at;
        status = copy_string(p, &e.name);
    }
    const kiln_text_symbol *earlier = NULL;
    if (status == KILN_OK && !e.name[0])
        status = FAIL_AT(p, name_at, KILN_ERR_INVALID_PROGRAM, "an evidence case needs a non-empty name");
    if (status == KILN_OK && (earlier = kiln_text_symbols_find(&p->cases, e.name, strlen(e.name))))
        status = FAIL_AT(p, name_at, KILN_ERR_INVALID_PROGRAM, "evidence '%s' is already declared at line %zu",
                         e.name, earlier->at.line);
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_LBRACE)
        status = expected(p, "'{' after the evidence name");
    if (status == KILN_OK) {
        open_at = p->token.at;
        status = advance(p);
    }
    if (status == KILN_OK)
        status = parse_evidence_body(p, &e, open_at);
    if (status == KILN_OK)
        status = add_evidence(p, &e);
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->cases, e.name, strlen(e.name), 0, name_at, p->err);
    release_evidence_block(&e);
    KILN_TRY(status);
    return end_statement(p, "'evidence'");
}

static kiln_status parse_statement(parser *p);

/* The symbol tables a method has of its own (the metadata keys and the program's weights are the program's). */
static kiln_text_symbols *method_tables(parser *p, size_t i)
{
    kiln_text_symbols *tables[] = {&p->values, &p->results, &p->dims, &p->inputs, &p->outputs, &p->cases,
                                   &p->checked};
    return i < sizeof tables / sizeof tables[0] ? tables[i] : NULL;
}

/* Let go of what the parser knows of the method it read: its names, dims, inputs and shapes. */
static void release_method_state(parser *p)
{
    for (size_t i = 0; method_tables(p, i); i++)
        kiln_text_symbols_release(method_tables(p, i));
    kiln_expr_pool_release(&p->shapes);
    for (uint32_t d = 0; d < p->dim_count; d++)
        free(p->dim_names[d]);
    free(p->dim_names);
    free(p->dim_domains);
    for (uint32_t d = 0; d < p->derived_count; d++)
        free(p->derived_names[d]);
    free(p->derived_names);
    free(p->derived);
    free(p->input_types);
    p->dim_names = NULL;
    p->dim_domains = NULL;
    p->derived_names = NULL;
    p->derived = NULL;
    p->input_types = NULL;
    p->dim_count = p->dim_capacity = p->derived_count = p->derived_capacity = 0;
    p->input_count = p->input_capacity = 0;
}

static void init_method_state(parser *p)
{
    for (size_t i = 0; method_tables(p, i); i++)
        kiln_text_symbols_init(method_tables(p, i));
    kiln_expr_pool_init(&p->shapes);
    p->strict_seen = p->evidence_seen = false;
}

/* The method just read has an output; `what` names it in the error. */
static kiln_status require_output(parser *p, const char *what)
{
    if (p->outputs.count == 0)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "%s has no output; add 'output NAME = VALUE'",
                       what);
    return KILN_OK;
}

/* The statements of a method block, up to its closing brace (on a line of its own). */
static kiln_status parse_method_body(parser *p, const char *name, kiln_text_position open_at)
{
    for (;;) {
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_RBRACE)
            break;
        if (p->token.kind == KILN_TOKEN_END)
            return FAIL_AT(p, open_at, KILN_ERR_MALFORMED, "method '%s' is not closed: '}' expected", name);
        if (kiln_token_is_word(&p->token, "method"))
            return FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                           "method blocks do not nest: close method '%s' with '}' first", name);
        KILN_TRY(parse_statement(p));
    }
    KILN_TRY(advance(p));
    return end_statement(p, "'}'");
}

/*
 * `method NAME` names the program's own method (before any block);
 * `method NAME {` ... `}` reads a further method: its statements on a
 * builder of its own, the program's weights visible by name, then added
 * to the program (text format 1.1, spec/text-format.md §3.3).
 */
static kiln_status parse_method(parser *p)
{
    kiln_text_position at = p->token.at;
    if (!p->methods_allowed)
        return FAIL_AT(p, at, KILN_ERR_MALFORMED,
                       "methods are text format " KILN_TEXT_VERSION ": begin the text with 'kiln " KILN_TEXT_VERSION
                       "'");
    if (p->in_method)
        return FAIL_AT(p, at, KILN_ERR_MALFORMED, "method blocks do not nest");
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD)
        return expected(p, "the method's name after 'method'");
    char *name;
    KILN_TRY(copy_token(p, &name));
    kiln_text_position name_at = p->token.at;
    kiln_error cause;
    kiln_status status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_LBRACE) {
        /* The program's own method. */
        if (p->methods_seen)
            status = FAIL_AT(p, at, KILN_ERR_MALFORMED,
                             "'method %s' without a block names the program's own method, before the blocks", name);
        else if (kiln_builder_set_method_name(p->program, name, &cause) != KILN_OK)
            status = fail_with(p, name_at, &cause);
        else
            status = end_statement(p, "'method NAME'");
        free(name);
        return status;
    }
    if (status == KILN_OK && !p->methods_seen)
        status = require_output(p, "the program's own method");
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK)
        status = end_statement(p, "'{'");
    kiln_builder *method = NULL;
    if (status == KILN_OK && kiln_builder_new(p->program_name, &method, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    if (status == KILN_OK && kiln_builder_set_mode(method, p->mode, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    /* The program's states are every method's. */
    if (status == KILN_OK && kiln_builder_share_states(method, p->program, &cause) != KILN_OK)
        status = fail_with(p, at, &cause);
    if (status != KILN_OK) {
        kiln_builder_free(method);
        free(name);
        return status;
    }
    release_method_state(p);
    init_method_state(p);
    p->builder = method;
    p->in_method = p->methods_seen = true;
    char what[160];
    snprintf(what, sizeof what, "method '%s'", name);
    status = parse_method_body(p, name, at);
    if (status == KILN_OK)
        status = require_output(p, what);
    p->in_method = false;
    p->builder = p->program;
    if (status == KILN_OK && kiln_builder_add_method(p->program, name, method, &cause) != KILN_OK)
        status = fail_with(p, name_at, &cause);
    else if (status == KILN_OK)
        method = NULL; /* the program's now */
    kiln_builder_free(method);
    free(name);
    return status;
}

/* ---------------------------------------------------------- generation */

/* `[ID, ...]`: a list of at least one token id, into *tokens (owned) and *count. */
static kiln_status parse_token_list(parser *p, const char *what, int64_t **tokens, uint32_t *count)
{
    if (*tokens)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "generation option '%s' is given twice", what);
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_LBRACKET) {
        char text[64];
        snprintf(text, sizeof text, "'[' and the token ids after '%s'", what);
        return expected(p, text);
    }
    KILN_TRY(advance(p));
    uint32_t capacity = 0;
    *count = 0;
    /* A long list may span lines, as a value list does (§2.2). */
    for (;;) {
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_RBRACKET)
            break;
        if (!reserve((void **)tokens, &capacity, *count, sizeof **tokens))
            return no_memory(p);
        kiln_text_position at = p->token.at;
        KILN_TRY(parse_integer(p, &(*tokens)[*count]));
        if ((*tokens)[*count] < 0)
            return FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "token ids are >= 0, got %lld in '%s'",
                           (long long)(*tokens)[*count], what);
        (*count)++;
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_COMMA)
            KILN_TRY(advance(p));
        else if (p->token.kind != KILN_TOKEN_RBRACKET)
            return expected(p, "',' or ']' in a token list");
    }
    if (*count == 0)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "'%s' needs at least one token id", what);
    return advance(p);
}

/* A method name after `prefill` or `decode`. */
static kiln_status parse_method_option(parser *p, const char *what, char **out)
{
    if (*out)
        return FAIL_AT(p, p->token.at, KILN_ERR_INVALID_PROGRAM, "generation option '%s' is given twice", what);
    KILN_TRY(advance(p));
    if (p->token.kind != KILN_TOKEN_WORD) {
        char text[64];
        snprintf(text, sizeof text, "a method name after '%s'", what);
        return expected(p, text);
    }
    KILN_TRY(copy_token(p, out));
    return advance(p);
}

typedef struct generation_block {
    char *name, *prefill, *decode;
    int64_t *prompt, *tokens;
    uint32_t prompt_length, token_count;
    double margin;
    bool margin_seen;
} generation_block;

static kiln_status parse_generation_body(parser *p, generation_block *g, kiln_text_position open_at)
{
    for (;;) {
        KILN_TRY(skip_newlines(p));
        if (p->token.kind == KILN_TOKEN_RBRACE)
            return advance(p);
        if (p->token.kind == KILN_TOKEN_END)
            return FAIL_AT(p, open_at, KILN_ERR_MALFORMED, "unterminated generation block: no '}' closes this '{'");
        kiln_token word = p->token;
        if (kiln_token_is_word(&word, "prompt"))
            KILN_TRY(parse_token_list(p, "prompt", &g->prompt, &g->prompt_length));
        else if (kiln_token_is_word(&word, "tokens"))
            KILN_TRY(parse_token_list(p, "tokens", &g->tokens, &g->token_count));
        else if (kiln_token_is_word(&word, "prefill"))
            KILN_TRY(parse_method_option(p, "prefill", &g->prefill));
        else if (kiln_token_is_word(&word, "decode"))
            KILN_TRY(parse_method_option(p, "decode", &g->decode));
        else if (kiln_token_is_word(&word, "margin")) {
            if (g->margin_seen)
                return FAIL_AT(p, word.at, KILN_ERR_INVALID_PROGRAM, "generation option 'margin' is given twice");
            g->margin_seen = true;
            KILN_TRY(advance(p));
            KILN_TRY(parse_tolerance(p, &word, &g->margin));
        } else {
            return FAIL_AT(p, word.at, KILN_ERR_MALFORMED,
                           "unknown generation option '%.*s'; expected prompt, tokens, margin, prefill, decode or '}'",
                           (int)(word.length > 64 ? 64 : word.length), word.text);
        }
    }
}

/*
 * generation "NAME" { prompt [IDS] tokens [IDS] [margin X] [prefill METHOD] [decode METHOD] }:
 * a prompt and the tokens a greedy generation of it must make (text
 * format 1.1, spec/text-format.md §3.5), after the method blocks.
 */
static kiln_status parse_generation(parser *p)
{
    KILN_TRY(require_newer_text(p, "generation"));
    if (p->in_method)
        return FAIL_AT(p, p->token.at, KILN_ERR_MALFORMED,
                       "a generation case spans methods: write it after the method blocks, not inside one");
    kiln_text_position at = p->token.at, name_at = at, open_at = at;
    generation_block g = {0};
    p->generation_seen = true;
    kiln_status status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_STRING)
        status = expected(p, "the case name as a string after 'generation'");
    if (status == KILN_OK) {
        name_at = p->token.at;
        status = copy_string(p, &g.name);
    }
    const kiln_text_symbol *earlier = NULL;
    if (status == KILN_OK && !g.name[0])
        status = FAIL_AT(p, name_at, KILN_ERR_INVALID_PROGRAM, "a generation case needs a non-empty name");
    if (status == KILN_OK && (earlier = kiln_text_symbols_find(&p->generations, g.name, strlen(g.name))))
        status = FAIL_AT(p, name_at, KILN_ERR_INVALID_PROGRAM, "generation case '%s' is already declared at line %zu",
                         g.name, earlier->at.line);
    if (status == KILN_OK)
        status = kiln_text_symbols_add(&p->generations, g.name, strlen(g.name), 0, name_at, p->err);
    if (status == KILN_OK)
        status = advance(p);
    if (status == KILN_OK && p->token.kind != KILN_TOKEN_LBRACE)
        status = expected(p, "'{' after the generation case's name");
    if (status == KILN_OK) {
        open_at = p->token.at;
        status = advance(p);
    }
    if (status == KILN_OK)
        status = parse_generation_body(p, &g, open_at);
    if (status == KILN_OK && (!g.prompt || !g.tokens))
        status = FAIL_AT(p, at, KILN_ERR_INVALID_PROGRAM, "generation case '%s' needs %s", g.name,
                         g.prompt ? "'tokens [IDS]', the tokens it must make" : "'prompt [IDS]'");
    if (status == KILN_OK) {
        kiln_generation_case c = {.name = g.name, .prefill_method = g.prefill, .decode_method = g.decode,
                                  .prompt = g.prompt, .prompt_length = g.prompt_length, .tokens = g.tokens,
                                  .token_count = g.token_count, .margin = g.margin};
        kiln_error cause;
        if (kiln_builder_add_generation(p->program, &c, &cause) != KILN_OK)
            status = fail_with(p, at, &cause);
    }
    free(g.name);
    free(g.prefill);
    free(g.decode);
    free(g.prompt);
    free(g.tokens);
    KILN_TRY(status);
    return end_statement(p, "'}'");
}

static kiln_status parse_statement(parser *p)
{
    const kiln_token *t = &p->token;
    if (p->generation_seen && !kiln_token_is_word(t, "generation"))
        return FAIL_AT(p, t->at, KILN_ERR_MALFORMED,
                       "generation cases come last; '%.*s' cannot follow them",
                       (int)(t->length > 64 ? 64 : t->length), t->text);
    if (kiln_token_is_word(t, "generation"))
        return parse_generation(p);
    if (p->methods_seen && !p->in_method && !kiln_token_is_word(t, "method"))
        return FAIL_AT(p, t->at, KILN_ERR_MALFORMED,
                       "after the first method block only method blocks follow; '%.*s' belongs before them or "
                       "inside one", (int)(t->length > 64 ? 64 : t->length), t->text);
    /* Evidence names outputs, so it comes after them; keeping it last also
     * keeps every text in the order the canonical form prints. */
    if (p->evidence_seen && !kiln_token_is_word(t, "evidence"))
        return FAIL_AT(p, t->at, KILN_ERR_MALFORMED,
                       "evidence statements come last; '%.*s' cannot follow them",
                       (int)(t->length > 64 ? 64 : t->length), t->text);
    if (t->kind == KILN_TOKEN_RESULT)
        return parse_node(p);
    if (t->kind != KILN_TOKEN_WORD)
        return expected(p, "a statement");
    if (kiln_token_is_word(t, "meta"))
        return parse_meta(p);
    if (kiln_token_is_word(t, "mode"))
        return parse_mode(p);
    if (kiln_token_is_word(t, "strict"))
        return parse_strict(p);
    if (kiln_token_is_word(t, "dim"))
        return parse_dim(p);
    if (kiln_token_is_word(t, "input"))
        return parse_input(p);
    if (kiln_token_is_word(t, "relation"))
        return parse_relation(p);
    if (kiln_token_is_word(t, "state"))
        return parse_state(p);
    if (kiln_token_is_word(t, "weight"))
        return parse_weight(p, KILN_WEIGHT_PARAMETER, "weight");
    if (kiln_token_is_word(t, "buffer"))
        return parse_weight(p, KILN_WEIGHT_BUFFER, "buffer");
    if (kiln_token_is_word(t, "const"))
        return parse_weight(p, KILN_WEIGHT_CONSTANT, "const");
    if (kiln_token_is_word(t, "output"))
        return parse_output(p);
    if (kiln_token_is_word(t, "check"))
        return parse_check(p);
    if (kiln_token_is_word(t, "evidence"))
        return parse_evidence(p);
    if (kiln_token_is_word(t, "method"))
        return parse_method(p);
    if (kiln_token_is_word(t, "program"))
        return FAIL_AT(p, t->at, KILN_ERR_INVALID_PROGRAM, "the program is already named; 'program' appears once");
    if (kiln_token_is_word(t, "kiln"))
        return FAIL_AT(p, t->at, KILN_ERR_MALFORMED, "the header 'kiln " KILN_TEXT_VERSION "' appears only once");
    return FAIL_AT(p, t->at, KILN_ERR_MALFORMED,
                   "unknown statement '%.*s'; expected meta, mode, dim, relation, state, input, check, weight, "
                   "buffer, const, output, evidence, method, generation or %%result = op(...)",
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
    return p->methods_seen ? KILN_OK : require_output(p, "the program");
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
    kiln_text_symbols_init(&p.metadata);
    kiln_text_symbols_init(&p.program_weights);
    kiln_text_symbols_init(&p.generations);
    init_method_state(&p);
    kiln_status status = parse_text(&p);
    kiln_lexer_release(&p.lexer);
    kiln_text_symbols_release(&p.metadata);
    kiln_text_symbols_release(&p.program_weights);
    kiln_text_symbols_release(&p.generations);
    release_method_state(&p);
    free(p.program_name);
    if (status != KILN_OK) {
        kiln_builder_free(p.program); /* and the methods added to it */
        return status;
    }
    *out = p.program;
    return KILN_OK;
}
