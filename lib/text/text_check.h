/*
 * text_check.h — the one grammar of a semantic input check
 * (spec/text-format.md §3.1, `check`): the rules after the input's name,
 * read from the token stream of a lexer. The text format's `check`
 * statement (text_parse.c) and the one-line specs tools take
 * (kiln_check_spec_parse, `kiln import-onnx --check`, `kiln check add`)
 * both read checks here, so the two spellings cannot drift apart.
 */
#ifndef KILN_LIB_TEXT_CHECK_H
#define KILN_LIB_TEXT_CHECK_H

#include <stdbool.h>

#include <kiln/text.h>

#include "text_lexer.h"

/* Where the rules are read from: a lexer and its current token. */
typedef struct kiln_check_cursor {
    kiln_lexer *lexer;
    kiln_token *token; /* the current token; advanced past what is read */
    const char *source;
    kiln_error *err;
} kiln_check_cursor;

/*
 * Read the input's name (a WORD) at the current token, then the ':' after
 * it; without `colon_required` the ':' may be left out (the text format's
 * `check x range 0..1`). *name (caller frees) and *at receive the name.
 * @return KILN_OK, KILN_ERR_MALFORMED or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_text_check_parse_name(kiln_check_cursor *cursor, bool colon_required, char **name,
                                       kiln_text_position *at);

/*
 * Read rules from the current token up to the end of the line (or text),
 * which is left as the current token, into out->check (out->input is not
 * touched). With `rule_required` an empty list is an error; the text
 * format takes one, since a stored check may hold no rule.
 * On error out->check holds no allocation.
 * @return KILN_OK, KILN_ERR_MALFORMED (grammar), KILN_ERR_INVALID_PROGRAM
 *         (an empty or NaN range, an empty category list, a rule given
 *         twice) or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_text_check_parse_rules(kiln_check_cursor *cursor, bool rule_required, kiln_check_spec *out);

#endif
