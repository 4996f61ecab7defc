/* table.c — column-aligned text tables (see table.h). */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(table *t, const char *align)
{
    memset(t, 0, sizeof *t);
    t->align = align;
    t->columns = strlen(align);
}

/* Take `text` (heap, owned) as the next cell, in its terminal-safe form:
 * cells hold names and messages from the artifact. */
static void append(table *t, char *text)
{
    char *cell = text && !t->failed ? term_escape_dup(text, 0) : NULL;
    free(text);
    if (!cell) {
        t->failed = true;
        return;
    }
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? 2 * t->capacity : 32;
        char **cells = realloc(t->cells, capacity * sizeof *cells);
        if (!cells) {
            free(cell);
            t->failed = true;
            return;
        }
        t->cells = cells;
        t->capacity = capacity;
    }
    t->cells[t->count++] = cell;
}

void table_add(table *t, const char *text)
{
    size_t length = strlen(text);
    char *cell = malloc(length + 1);
    if (cell)
        memcpy(cell, text, length + 1);
    append(t, cell);
}

void table_addf(table *t, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int length = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    char *cell = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (cell) {
        va_start(args, fmt);
        vsnprintf(cell, (size_t)length + 1, fmt, args);
        va_end(args);
    }
    append(t, cell);
}

size_t table_rows(const table *t)
{
    return t->columns ? t->count / t->columns : 0;
}

/* Width in terminal columns: one per UTF-8 code point. */
static size_t text_width(const char *text)
{
    size_t width = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        width += (*c & 0xC0) != 0x80;
    return width;
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

void table_print(const table *t, FILE *out, const char *indent, const term_style *style, bool header)
{
    size_t rows = table_rows(t);
    size_t *widths = calloc(t->columns ? t->columns : 1, sizeof *widths);
    if (!widths)
        return;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < t->columns; c++) {
            size_t w = text_width(t->cells[r * t->columns + c]);
            if (w > widths[c])
                widths[c] = w;
        }
    for (size_t r = 0; r < rows; r++) {
        bool bold = header && r == 0 && style && style->bold[0];
        /* Blanks are held back until something follows them, so no line
         * ends in blanks whatever the cells hold. */
        size_t pending = 0;
        fputs(indent, out);
        if (bold)
            fputs(style->bold, out);
        for (size_t c = 0; c < t->columns; c++) {
            const char *cell = t->cells[r * t->columns + c];
            size_t gap = widths[c] - text_width(cell);
            if (c)
                pending += 2;
            if (t->align[c] == 'r')
                pending += gap;
            if (cell[0]) {
                pad(out, pending);
                pending = 0;
                fputs(cell, out);
            }
            if (t->align[c] != 'r')
                pending += gap;
        }
        if (bold)
            fputs(style->reset, out);
        fputc('\n', out);
    }
    free(widths);
}

void table_free(table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
