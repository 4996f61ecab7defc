/* term.c — colour and safe text for terminals (see term.h). */
#include "term.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool term_colour_enabled(FILE *out)
{
    const char *no_colour = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (no_colour && no_colour[0] != '\0')
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(fileno(out)) == 1;
}

term_style term_style_for(FILE *out)
{
    static const term_style colour = {"\033[1m", "\033[2m", "\033[31m", "\033[32m", "\033[33m", "\033[0m"};
    static const term_style plain = {"", "", "", "", "", ""};
    return term_colour_enabled(out) ? colour : plain;
}

void term_quoted(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*c < 0x20 || *c == 0x7f)
                fprintf(out, "\\x%02x", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

void term_plain(FILE *out, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        fputc(*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}
