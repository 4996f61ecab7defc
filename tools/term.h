/*
 * term.h — what the human-facing output of a verb may do on this terminal:
 * colour (only when the stream is a terminal and NO_COLOR is not set, per
 * https://no-color.org) and safe quoting of strings that come from an
 * artifact, so that a crafted name cannot send escape sequences to the
 * terminal.
 */
#ifndef KILN_TOOLS_TERM_H
#define KILN_TOOLS_TERM_H

#include <stdbool.h>
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

/* Write `text` between double quotes, escaping '"', '\\' and every
 * control byte (\n, \t, \r, \xHH); other bytes pass through. */
void term_quoted(FILE *out, const char *text);

/* Write `text`, replacing each control byte (C0, DEL) by '?'. */
void term_plain(FILE *out, const char *text);

#endif
