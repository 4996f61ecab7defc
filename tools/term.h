/*
 * term.h — what the human-facing output of a verb may do on this terminal:
 * colour (only when the stream is a terminal and NO_COLOR is not set, per
 * https://no-color.org) and safe text for strings that come from an
 * artifact (names, metadata, evidence case names, and library messages,
 * which quote them), so that a crafted name cannot send escape sequences
 * to the terminal, ring its bell or move the cursor (a CR could otherwise
 * print "verified OK" over the start of an error line).
 *
 * Every verb writes artifact-controlled text to a terminal through the one
 * escaper of this file (term_escape), directly or through term_quoted,
 * term_plain, term_printf, cli_error and the text tables (table.h). JSON
 * output is a different format with its own escaping rules (json.c), and
 * so is the text format (the library's printer) and DOT (cmd_dot.c).
 */
#ifndef KILN_TOOLS_TERM_H
#define KILN_TOOLS_TERM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Escape sequences for one stream; every field is "" when colour is off. */
typedef struct term_style {
    const char *bold;
    const char *dim;
    const char *red;
    const char *green;
    const char *yellow;
    const char *reset;
} term_style;

/*
 * @return true if colour may be written to `out`: it is a terminal,
 * NO_COLOR is unset or empty, and TERM is not "dumb".
 */
bool term_colour_enabled(FILE *out);

/* The styles for `out` (see term_colour_enabled). */
term_style term_style_for(FILE *out);

/* term_escape flag: the text goes between double quotes, so '"' and '\\'
 * are escaped too and the quoted form reads back unambiguously. */
#define TERM_QUOTED 1u

/*
 * The one escaper of terminal output: write at most `max_bytes` bytes of
 * `text` (up to its NUL) to `out`, each control character replaced by a
 * visible escape: \n, \t, \r, and \xHH for every other C0 byte and DEL;
 * a C1 control encoded in UTF-8 (U+0080..U+009F, which some terminals
 * obey like ESC [) becomes its two bytes as \xc2\xHH. Every other byte,
 * UTF-8 included, passes through. A newline is escaped too: text from an
 * artifact never starts a line of its own. @return the bytes written.
 */
size_t term_escape(FILE *out, const char *text, size_t max_bytes, unsigned flags);

/* term_escape into a new heap string (NULL when out of memory). */
char *term_escape_dup(const char *text, unsigned flags);

/* Write `text` between double quotes through term_escape (TERM_QUOTED). */
void term_quoted(FILE *out, const char *text);

/* Write `text` through term_escape, without quotes. */
void term_plain(FILE *out, const char *text);

/*
 * fprintf whose format is trusted and whose strings are not: the literal
 * text of `fmt` (the tool's own words and newlines) is written as it is,
 * and every %s and %c argument goes through term_escape (width and
 * precision apply to the escaped text and the source bytes respectively).
 * Numbers are formatted as by fprintf. Colour sequences are control text:
 * write them with fputs, not as %s arguments.
 */
void term_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void term_vprintf(FILE *out, const char *fmt, va_list args) __attribute__((format(printf, 2, 0)));

#endif
