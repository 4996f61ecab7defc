/* text_symbols.c — a small string-keyed hash table for the text parser. */
#include "text_symbols.h"

#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"

void kiln_text_symbols_init(kiln_text_symbols *symbols)
{
    memset(symbols, 0, sizeof *symbols);
}

void kiln_text_symbols_release(kiln_text_symbols *symbols)
{
    for (uint32_t i = 0; i < symbols->count; i++)
        free(symbols->items[i].name);
    free(symbols->items);
    free(symbols->slots);
    kiln_text_symbols_init(symbols);
}

/* FNV-1a: short keys, no adversary worth a keyed hash in a local parser. */
static uint32_t hash_name(const char *name, size_t length)
{
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < length; i++) {
        hash ^= (unsigned char)name[i];
        hash *= 16777619u;
    }
    return hash;
}

const kiln_text_symbol *kiln_text_symbols_find(const kiln_text_symbols *symbols, const char *name, size_t length)
{
    if (!symbols->slot_count)
        return NULL;
    uint32_t mask = symbols->slot_count - 1;
    for (uint32_t slot = hash_name(name, length) & mask;; slot = (slot + 1) & mask) {
        uint32_t entry = symbols->slots[slot];
        if (!entry)
            return NULL;
        const kiln_text_symbol *symbol = &symbols->items[entry - 1];
        if (strlen(symbol->name) == length && memcmp(symbol->name, name, length) == 0)
            return symbol;
    }
}

static void place(kiln_text_symbols *symbols, uint32_t index)
{
    const char *name = symbols->items[index].name;
    uint32_t mask = symbols->slot_count - 1;
    uint32_t slot = hash_name(name, strlen(name)) & mask;
    while (symbols->slots[slot])
        slot = (slot + 1) & mask;
    symbols->slots[slot] = index + 1;
}

/* Keep the table at most half full so probe sequences stay short. */
static bool grow_slots(kiln_text_symbols *symbols)
{
    uint64_t wanted = symbols->slot_count ? (uint64_t)symbols->slot_count * 2 : 16;
    if (wanted > UINT32_MAX)
        return false;
    uint32_t *slots = calloc((size_t)wanted, sizeof *slots);
    if (!slots)
        return false;
    free(symbols->slots);
    symbols->slots = slots;
    symbols->slot_count = (uint32_t)wanted;
    for (uint32_t i = 0; i < symbols->count; i++)
        place(symbols, i);
    return true;
}

kiln_status kiln_text_symbols_add(kiln_text_symbols *symbols, const char *name, size_t length, uint32_t value,
                                  kiln_text_position at, kiln_error *err)
{
    if (symbols->count >= UINT32_MAX / 4)
        return kiln_fail(err, KILN_ERR_LIMIT, "too many names in one text");
    if (symbols->count == symbols->capacity) {
        uint32_t wanted = symbols->capacity ? symbols->capacity * 2 : 16;
        size_t bytes;
        if (!kiln_mul_size(wanted, sizeof *symbols->items, &bytes))
            return kiln_fail(err, KILN_ERR_LIMIT, "too many names in one text");
        kiln_text_symbol *grown = realloc(symbols->items, bytes);
        if (!grown)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for names");
        symbols->items = grown;
        symbols->capacity = wanted;
    }
    if ((uint64_t)(symbols->count + 1) * 2 > symbols->slot_count && !grow_slots(symbols))
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for names");
    char *copy = malloc(length + 1);
    if (!copy)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for names");
    memcpy(copy, name, length);
    copy[length] = '\0';
    symbols->items[symbols->count] = (kiln_text_symbol){copy, value, at};
    place(symbols, symbols->count);
    symbols->count++;
    return KILN_OK;
}
