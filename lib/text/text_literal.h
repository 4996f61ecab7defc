/*
 * text_literal.h — what the text assembler (text_parse.c) and the disassembler
 * (text_print.c) share: the format version, the rule for inline constants,
 * the default evidence tolerance, and the spelling of literals and strings.
 * Keeping both directions on the same functions is what makes printing
 * then parsing exact.
 */
#ifndef KILN_LIB_TEXT_LITERAL_H
#define KILN_LIB_TEXT_LITERAL_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/text.h>

#include "text_buffer.h"

/* The one text format version this library reads and writes. */
#define KILN_TEXT_VERSION "1.1"

/* Constants and evidence tensors with at most this many elements are
 * printed inline. */
#define KILN_TEXT_INLINE_MAX_ELEMENTS 16

/* The tolerance of an evidence case that names none, the same default as
 * `kiln evidence add` (spec/compatibility.md §5). The printer leaves it
 * out after `exact`, where it is stored but unused. */
#define KILN_TEXT_DEFAULT_ATOL 1e-6
#define KILN_TEXT_DEFAULT_RTOL 1e-5

/* Longest literal kiln_text_literal_format writes, NUL included
 * ("-1.7976931348623157e+308" is 24 characters; u64 max is 20). */
#define KILN_TEXT_LITERAL_MAX 40

/* Why a literal could not become an element of a dtype. */
typedef enum kiln_literal_problem {
    KILN_LITERAL_OK = 0,
    KILN_LITERAL_OUT_OF_RANGE,     /* 300 for i8, 1e999 for f64 */
    KILN_LITERAL_NOT_INTEGER,      /* 1.5 or nan for an integer dtype */
    KILN_LITERAL_NOT_NUMBER,       /* true for a float dtype */
    KILN_LITERAL_NOT_BOOL,         /* 2 or 1.0 for bool */
    KILN_LITERAL_UNSUPPORTED_DTYPE /* a dtype this runtime does not know */
} kiln_literal_problem;

/*
 * Convert the literal `text` (a number as the lexer accepts it, or one of
 * the words nan, inf, -inf, true, false) to one little-endian element of
 * `dtype` in `out`. Floats are rounded once, directly to the dtype (strtof
 * for f32; for f16 and bf16 by way of round-to-odd, see text_literal.c), so
 * that printing then parsing is exact.
 * @return KILN_LITERAL_OK or the reason it does not fit.
 */
kiln_literal_problem kiln_text_literal_parse(kiln_dtype dtype, const char *text, uint8_t out[8]);

/*
 * Write the canonical literal for one element: the shortest %g text that
 * reads back to the same bits for floats, decimal for integers, true/false
 * for bool. @return false if no literal reads back to exactly these bytes
 * (a NaN other than the default quiet NaN, a bool byte other than 0 or 1,
 * an unsupported dtype): such tensors are printed as files instead.
 */
bool kiln_text_literal_format(kiln_dtype dtype, const uint8_t *element,
                              char out[KILN_TEXT_LITERAL_MAX]);

/* @return true if `text` is one of the literal words nan, inf, true, false. */
bool kiln_text_is_literal_word(const char *text, size_t length);

/*
 * Append `bytes` as a double-quoted string literal: \" \\ \n \t escaped,
 * other control bytes and bytes that are not well-formed UTF-8 as \xHH,
 * well-formed UTF-8 kept as is. @return false if `out` is poisoned.
 */
bool kiln_text_quote(kiln_text_buffer *out, const char *bytes);

#endif
