/*
 * text_symbols.h — the names a text program declares (inputs and weights,
 * %results, metadata keys), each with the place it was declared, so that
 * lookups stay O(1) on large texts and a second declaration can say where
 * the first one was.
 */
#ifndef KILN_LIB_TEXT_SYMBOLS_H
#define KILN_LIB_TEXT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "text_lexer.h"

typedef struct kiln_text_symbol {
    char *name;             /* NUL-terminated copy */
    uint32_t value;         /* what the name stands for (a kiln_value for values) */
    kiln_text_position at;  /* where it was declared */
} kiln_text_symbol;

typedef struct kiln_text_symbols {
    kiln_text_symbol *items;
    uint32_t count;
    uint32_t capacity;
    uint32_t *slots;     /* open addressing: item index + 1, 0 = empty */
    uint32_t slot_count; /* power of two, at least twice count */
} kiln_text_symbols;

void kiln_text_symbols_init(kiln_text_symbols *symbols);
void kiln_text_symbols_release(kiln_text_symbols *symbols);

/* @return the symbol spelled by the `length` bytes at `name`, or NULL. */
const kiln_text_symbol *kiln_text_symbols_find(const kiln_text_symbols *symbols, const char *name,
                                               size_t length);

/**
 * Add a name that is not present yet (callers check with find first).
 * @return KILN_OK, KILN_ERR_LIMIT or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_text_symbols_add(kiln_text_symbols *symbols, const char *name, size_t length,
                                  uint32_t value, kiln_text_position at, kiln_error *err);

#endif
