/*
 * text_lexer.h — the tokens of the kiln text format (spec/text-format.md §2).
 *
 * The lexer works on a byte range that need not be NUL-terminated and
 * never reads past it. It hands out one token at a time; the parser asks
 * for a shape explicitly, because the text between '[' and ']' after a
 * dtype is shape-expression text (lib/contract/shape_parse.h) with its own rules.
 */
#ifndef KILN_LIB_TEXT_LEXER_H
#define KILN_LIB_TEXT_LEXER_H

#include <stddef.h>

#include <kiln/kiln.h>

#include "text_buffer.h"

typedef enum kiln_token_kind {
    KILN_TOKEN_END,      /* end of the text */
    KILN_TOKEN_NEWLINE,  /* ends a statement */
    KILN_TOKEN_WORD,     /* identifier or keyword: [A-Za-z_][A-Za-z0-9_.-]* */
    KILN_TOKEN_RESULT,   /* %name or %123 */
    KILN_TOKEN_INTEGER,  /* [-]digits */
    KILN_TOKEN_FLOAT,    /* [-]digits[.digits][e[+-]digits] with a fraction or exponent; -inf */
    KILN_TOKEN_STRING,   /* "..." (decoded value in kiln_lexer.string) */
    KILN_TOKEN_SHAPE,    /* "[...]" after a dtype, from kiln_lexer_shape only */
    KILN_TOKEN_COLON,
    KILN_TOKEN_COMMA,
    KILN_TOKEN_EQUALS,
    KILN_TOKEN_LPAREN,
    KILN_TOKEN_RPAREN,
    KILN_TOKEN_LBRACKET,
    KILN_TOKEN_RBRACKET,
    KILN_TOKEN_LBRACE,
    KILN_TOKEN_RBRACE,
    KILN_TOKEN_DOTDOT,
} kiln_token_kind;

/* A place in the text: line and column from 1, columns in code points. */
typedef struct kiln_text_position {
    size_t line;
    size_t column;
} kiln_text_position;

typedef struct kiln_token {
    kiln_token_kind kind;
    const char *text; /* the raw bytes of the token, inside the source */
    size_t length;
    kiln_text_position at;
} kiln_token;

typedef struct kiln_lexer {
    const char *text;
    size_t size;
    size_t offset;          /* next byte to read */
    kiln_text_position at;  /* position of text[offset] */
    const char *source;     /* name used in messages */
    kiln_text_buffer string;/* decoded value of the last string token */
} kiln_lexer;

void kiln_lexer_init(kiln_lexer *lexer, const char *text, size_t size, const char *source);
void kiln_lexer_release(kiln_lexer *lexer);

/** Read the next token. @return KILN_OK, KILN_ERR_MALFORMED or KILN_ERR_OUT_OF_MEMORY. */
kiln_status kiln_lexer_next(kiln_lexer *lexer, kiln_token *out, kiln_error *err);

/**
 * Just after `open` (a '[' token the lexer has returned last), read the raw
 * shape text up to the matching ']' on the same line. *out is a
 * KILN_TOKEN_SHAPE spanning both brackets.
 * @return KILN_OK or KILN_ERR_MALFORMED.
 */
kiln_status kiln_lexer_shape(kiln_lexer *lexer, const kiln_token *open, kiln_token *out, kiln_error *err);

/**
 * Just after `equals` (the '=' token the lexer has returned last) of a
 * derived dim, read the raw expression text: from the first non-blank
 * byte to the end of the line or a '#', trailing blanks dropped. *out is a
 * KILN_TOKEN_SHAPE (possibly empty) placed where the expression starts.
 */
void kiln_lexer_expression(kiln_lexer *lexer, kiln_token *out);

/**
 * Just after the word `unit` of a check (spec/text-format.md §3.1), read a
 * bare unit: the run of bytes after the blanks that follows, up to a blank,
 * ',', '"', '#', a control byte or the end, e.g. `m/s` (the usual token
 * rules would refuse '/'). *out is a KILN_TOKEN_SHAPE placed where it
 * starts; it is empty, and nothing is consumed but the blanks, when the
 * next byte cannot start one (a '"' opens a quoted unit instead).
 */
void kiln_lexer_bare_unit(kiln_lexer *lexer, kiln_token *out);

/**
 * Fill `err` with "SOURCE:LINE:COLUMN: message".
 * @return code.
 */
kiln_status kiln_text_fail_at(kiln_error *err, kiln_status code, const char *source,
                              kiln_text_position at, const char *fmt, ...) KILN_PRINTF(5, 6);

/*
 * Describe a token for "found ..." in messages: 'text' (quoted, shortened,
 * control bytes shown as '?'), "end of line" or "end of file".
 * @return false if `out` is poisoned.
 */
bool kiln_token_describe(const kiln_token *token, kiln_text_buffer *out);

/* @return true if `token` is the word `word`. */
bool kiln_token_is_word(const kiln_token *token, const char *word);

#endif
