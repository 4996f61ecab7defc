/*
 * table.h — column-aligned text tables for the human output of the verbs:
 * cells are added one by one, widths are measured when printing.
 */
#ifndef KILN_TOOLS_TABLE_H
#define KILN_TOOLS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "term.h"

typedef struct table {
    const char *align; /* one letter per column: 'l' left, 'r' right */
    size_t columns;
    size_t count;      /* cells added, row-major */
    size_t capacity;
    char **cells;
    bool failed;       /* out of memory: the table is incomplete */
} table;

/* Start a table whose columns are aligned as `align` says (e.g. "llr"). */
void table_init(table *t, const char *align);

/* Append one cell (copied, control characters escaped by term_escape). */
void table_add(table *t, const char *text);
void table_addf(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* @return the number of complete rows. */
size_t table_rows(const table *t);

/*
 * Print every row, each line starting with `indent`, columns two spaces
 * apart, no trailing blanks. With `header`, the first row is printed in
 * bold (when `style` has colour).
 */
void table_print(const table *t, FILE *out, const char *indent, const term_style *style, bool header);

void table_free(table *t);

#endif
