/* text_lexer.c — tokens of the kiln text format (see text_lexer.h). */
#include "text_lexer.h"
#include "identifier.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest piece of a token quoted in a message; longer ones end in "...". */
#define TOKEN_QUOTE_MAX 40

void kiln_lexer_init(kiln_lexer *lx, const char *text, size_t size, const char *source)
{
    memset(lx, 0, sizeof *lx);
    lx->text = text;
    lx->size = text ? size : 0;
    lx->source = source;
    lx->at.line = 1;
    lx->at.column = 1;
    kiln_text_buffer_init(&lx->string);
    /* Editors on some systems start UTF-8 files with a byte order mark. */
    if (lx->size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        lx->offset = 3;
}

void kiln_lexer_release(kiln_lexer *lx)
{
    kiln_text_buffer_release(&lx->string);
}

kiln_status kiln_text_fail_at(kiln_error *err, kiln_status code, const char *source, kiln_text_position at,
                              const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int needed = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    char *message = needed >= 0 ? malloc((size_t)needed + 1) : NULL;
    if (message) {
        va_start(args, fmt);
        vsnprintf(message, (size_t)needed + 1, fmt, args);
        va_end(args);
    }
    /* Without memory for the message, the position alone still says where. */
    kiln_fail(err, code, "%s:%zu:%zu: %s", source, at.line, at.column,
              message ? message : "(message lost: out of memory)");
    free(message);
    return code;
}

static bool is_word_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Characters after the first one of a name: as kiln_is_identifier. */
static bool is_word_char(unsigned char c)
{
    return is_word_start(c) || is_digit(c) || c == '.' || c == '-';
}

static bool at_end(const kiln_lexer *lx)
{
    return !(lx->offset < lx->size);
}

/* The byte `ahead` bytes after the current one, or 0 past the end. */
static unsigned char peek(const kiln_lexer *lx, size_t ahead)
{
    if (lx->size - lx->offset <= ahead || at_end(lx))
        return 0;
    return (unsigned char)lx->text[lx->offset + ahead];
}

/* Consume one byte, keeping line and column (in code points) current. */
static void advance(kiln_lexer *lx)
{
    unsigned char c = (unsigned char)lx->text[lx->offset++];
    if (c == '\n') {
        lx->at.line++;
        lx->at.column = 1;
    } else if ((c & 0xc0) != 0x80) {
        lx->at.column++;
    }
}

static void finish(const kiln_lexer *lx, kiln_token *out, kiln_token_kind kind, size_t start)
{
    out->kind = kind;
    out->text = lx->text + start;
    out->length = lx->offset - start;
}

/* "'c'" for printable ASCII, "byte 0xHH" otherwise. */
static const char *describe_byte(unsigned char c, char out[16])
{
    if (c > 0x20 && c < 0x7f)
        snprintf(out, 16, "'%c'", c);
    else
        snprintf(out, 16, "byte 0x%02x", c);
    return out;
}

static kiln_status unexpected_byte(kiln_lexer *lx, kiln_error *err)
{
    char shown[16];
    return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, lx->at, "unexpected character %s",
                             describe_byte((unsigned char)lx->text[lx->offset], shown));
}

static kiln_status bad_number(kiln_lexer *lx, size_t start, kiln_text_position at, kiln_error *err)
{
    /* Show the number with whatever letters are glued to it: "1e", "12abc". */
    while (!at_end(lx) && (is_word_char(peek(lx, 0))))
        advance(lx);
    size_t length = lx->offset - start;
    return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at, "bad number '%.*s%s'",
                             (int)(length > TOKEN_QUOTE_MAX ? TOKEN_QUOTE_MAX : length), lx->text + start,
                             length > TOKEN_QUOTE_MAX ? "..." : "");
}

static void skip_digits(kiln_lexer *lx)
{
    while (is_digit(peek(lx, 0)))
        advance(lx);
}

static kiln_status lex_number(kiln_lexer *lx, kiln_token *out, kiln_error *err)
{
    size_t start = lx->offset;
    kiln_text_position at = lx->at;
    kiln_token_kind kind = KILN_TOKEN_INTEGER;
    if (peek(lx, 0) == '-')
        advance(lx);
    skip_digits(lx);
    /* "2..4" is a range: a '.' belongs to the number only before a digit. */
    if (peek(lx, 0) == '.' && peek(lx, 1) != '.') {
        advance(lx);
        if (!is_digit(peek(lx, 0)))
            return bad_number(lx, start, at, err);
        skip_digits(lx);
        kind = KILN_TOKEN_FLOAT;
    }
    if (peek(lx, 0) == 'e' || peek(lx, 0) == 'E') {
        advance(lx);
        if (peek(lx, 0) == '+' || peek(lx, 0) == '-')
            advance(lx);
        if (!is_digit(peek(lx, 0)))
            return bad_number(lx, start, at, err);
        skip_digits(lx);
        kind = KILN_TOKEN_FLOAT;
    }
    if (is_word_start(peek(lx, 0)) || (peek(lx, 0) == '.' && peek(lx, 1) != '.'))
        return bad_number(lx, start, at, err);
    finish(lx, out, kind, start);
    return KILN_OK;
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static kiln_status lex_escape(kiln_lexer *lx, kiln_error *err)
{
    kiln_text_position at = lx->at;
    char shown[16];
    advance(lx); /* the backslash */
    if (at_end(lx))
        return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at, "unterminated escape at end of file");
    unsigned char c = peek(lx, 0);
    char decoded;
    switch (c) {
    case '"': decoded = '"'; break;
    case '\\': decoded = '\\'; break;
    case 'n': decoded = '\n'; break;
    case 't': decoded = '\t'; break;
    case 'x': {
        int high = hex_value(peek(lx, 1)), low = hex_value(peek(lx, 2));
        if (high < 0 || low < 0)
            return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at,
                                     "bad escape '\\x': expected two hex digits after it");
        if (high == 0 && low == 0)
            return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at,
                                     "strings cannot contain NUL ('\\x00')");
        advance(lx);
        advance(lx);
        decoded = (char)(high * 16 + low);
        break;
    }
    default:
        return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at,
                                 "bad escape '\\' followed by %s; use \\\" \\\\ \\n \\t or \\xHH",
                                 describe_byte(c, shown));
    }
    advance(lx);
    if (!kiln_text_buffer_append(&lx->string, &decoded, 1))
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading a string");
    return KILN_OK;
}

static kiln_status lex_string(kiln_lexer *lx, kiln_token *out, kiln_error *err)
{
    size_t start = lx->offset;
    kiln_text_position at = lx->at;
    kiln_text_buffer_clear(&lx->string);
    advance(lx); /* the opening quote */
    for (;;) {
        if (at_end(lx) || peek(lx, 0) == '\n')
            return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, at,
                                     "unterminated string: no closing '\"' on this line");
        unsigned char c = peek(lx, 0);
        if (c == '"') {
            advance(lx);
            break;
        }
        if (c == '\\') {
            KILN_TRY(lex_escape(lx, err));
            continue;
        }
        /* Raw control characters would be invisible in an editor; tabs are
         * the one exception people type. */
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            char shown[16];
            return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, lx->at,
                                     "control character %s in a string; write it as \\x%02x",
                                     describe_byte(c, shown), c);
        }
        if (!kiln_text_buffer_append(&lx->string, &lx->text[lx->offset], 1))
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading a string");
        advance(lx);
    }
    /* An empty string still needs a NUL-terminated (empty) value. */
    if (!kiln_text_buffer_append(&lx->string, "", 0))
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading a string");
    finish(lx, out, KILN_TOKEN_STRING, start);
    return KILN_OK;
}

static void skip_blanks_and_comments(kiln_lexer *lx)
{
    while (!at_end(lx)) {
        unsigned char c = peek(lx, 0);
        if (c == ' ' || c == '\t' || c == '\r') {
            advance(lx);
        } else if (c == '#') {
            while (!at_end(lx) && peek(lx, 0) != '\n')
                advance(lx);
        } else {
            break;
        }
    }
}

kiln_status kiln_lexer_next(kiln_lexer *lx, kiln_token *out, kiln_error *err)
{
    static const struct {
        char c;
        kiln_token_kind kind;
    } punctuation[] = {
        {'\n', KILN_TOKEN_NEWLINE}, {':', KILN_TOKEN_COLON},    {',', KILN_TOKEN_COMMA},
        {'=', KILN_TOKEN_EQUALS},   {'(', KILN_TOKEN_LPAREN},   {')', KILN_TOKEN_RPAREN},
        {'[', KILN_TOKEN_LBRACKET}, {']', KILN_TOKEN_RBRACKET}, {'{', KILN_TOKEN_LBRACE},
        {'}', KILN_TOKEN_RBRACE},
    };
    skip_blanks_and_comments(lx);
    size_t start = lx->offset;
    out->at = lx->at;
    if (at_end(lx)) {
        finish(lx, out, KILN_TOKEN_END, start);
        return KILN_OK;
    }
    unsigned char c = peek(lx, 0);
    if (is_word_start(c)) {
        while (is_word_char(peek(lx, 0)))
            advance(lx);
        finish(lx, out, KILN_TOKEN_WORD, start);
        return KILN_OK;
    }
    if (is_digit(c) || (c == '-' && is_digit(peek(lx, 1))))
        return lex_number(lx, out, err);
    /* -inf ends like a number: before a blank, punctuation, or the '..' of
     * a range (`range -inf..0`), though '.' alone would continue a name. */
    if (c == '-' && peek(lx, 1) == 'i' && peek(lx, 2) == 'n' && peek(lx, 3) == 'f' &&
        (!is_word_char(peek(lx, 4)) || (peek(lx, 4) == '.' && peek(lx, 5) == '.'))) {
        for (int i = 0; i < 4; i++)
            advance(lx);
        finish(lx, out, KILN_TOKEN_FLOAT, start);
        return KILN_OK;
    }
    if (c == '"')
        return lex_string(lx, out, err);
    if (c == '%') {
        advance(lx);
        if (!is_word_char(peek(lx, 0)))
            return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, out->at,
                                     "expected a name or number after '%%'");
        while (is_word_char(peek(lx, 0)))
            advance(lx);
        finish(lx, out, KILN_TOKEN_RESULT, start);
        return KILN_OK;
    }
    if (c == '.' && peek(lx, 1) == '.') {
        advance(lx);
        advance(lx);
        finish(lx, out, KILN_TOKEN_DOTDOT, start);
        return KILN_OK;
    }
    for (size_t i = 0; i < sizeof punctuation / sizeof punctuation[0]; i++) {
        if (punctuation[i].c == (char)c) {
            advance(lx);
            finish(lx, out, punctuation[i].kind, start);
            return KILN_OK;
        }
    }
    return unexpected_byte(lx, err);
}

kiln_status kiln_lexer_shape(kiln_lexer *lx, const kiln_token *open, kiln_token *out, kiln_error *err)
{
    size_t start = (size_t)(open->text - lx->text);
    /* Shape text cannot contain ']', '#' or a line break, so the first
     * of them (or the end) decides. */
    while (!at_end(lx)) {
        unsigned char c = peek(lx, 0);
        if (c == ']' || c == '\n' || c == '#' || c == '\0')
            break;
        advance(lx);
    }
    if (at_end(lx) || peek(lx, 0) != ']') {
        char byte[16];
        const char *found = at_end(lx)             ? "end of file"
                            : peek(lx, 0) == '\n' ? "end of line"
                                                   : describe_byte(peek(lx, 0), byte);
        return kiln_text_fail_at(err, KILN_ERR_MALFORMED, lx->source, lx->at,
                                 "expected ']' to close the shape, found %s", found);
    }
    advance(lx);
    out->at = open->at;
    finish(lx, out, KILN_TOKEN_SHAPE, start);
    return KILN_OK;
}

void kiln_lexer_expression(kiln_lexer *lx, kiln_token *out)
{
    while (!at_end(lx) && (peek(lx, 0) == ' ' || peek(lx, 0) == '\t' || peek(lx, 0) == '\r'))
        advance(lx);
    size_t start = lx->offset, end = start;
    out->at = lx->at;
    /* Expression text has no '#', so a comment may follow it; the line
     * break ends it like any statement. */
    while (!at_end(lx)) {
        unsigned char c = peek(lx, 0);
        if (c == '\n' || c == '#' || c == '\0')
            break;
        advance(lx);
        if (c != ' ' && c != '\t' && c != '\r')
            end = lx->offset;
    }
    out->kind = KILN_TOKEN_SHAPE;
    out->text = lx->text + start;
    out->length = end - start;
}

void kiln_lexer_bare_unit(kiln_lexer *lx, kiln_token *out)
{
    while (!at_end(lx) && (peek(lx, 0) == ' ' || peek(lx, 0) == '\t' || peek(lx, 0) == '\r'))
        advance(lx);
    size_t start = lx->offset;
    out->at = lx->at;
    /* A blank ends it, so `unit m/s finite` is two rules; a unit with
     * blanks in it is written as a string. */
    while (!at_end(lx)) {
        unsigned char c = peek(lx, 0);
        if (c <= ' ' || c == 0x7f || c == ',' || c == '"' || c == '#')
            break;
        advance(lx);
    }
    finish(lx, out, KILN_TOKEN_SHAPE, start);
}

bool kiln_token_describe(const kiln_token *token, kiln_text_buffer *out)
{
    if (token->kind == KILN_TOKEN_END)
        return kiln_text_buffer_puts(out, "end of file");
    if (token->kind == KILN_TOKEN_NEWLINE)
        return kiln_text_buffer_puts(out, "end of line");
    size_t length = token->length;
    bool shortened = false;
    if (length > TOKEN_QUOTE_MAX) {
        length = TOKEN_QUOTE_MAX;
        /* Do not cut a UTF-8 sequence in half. */
        while (length > 0 && ((unsigned char)token->text[length] & 0xc0) == 0x80)
            length--;
        shortened = true;
    }
    kiln_text_buffer_puts(out, "'");
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)token->text[i];
        kiln_text_buffer_append(out, (c < 0x20 || c == 0x7f) ? "?" : (const char *)&token->text[i], 1);
    }
    if (shortened)
        kiln_text_buffer_puts(out, "...");
    return kiln_text_buffer_puts(out, "'");
}

bool kiln_token_is_word(const kiln_token *token, const char *word)
{
    return token->kind == KILN_TOKEN_WORD && strlen(word) == token->length &&
           memcmp(token->text, word, token->length) == 0;
}
