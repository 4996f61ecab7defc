/* onnx_name_table.c — see onnx_name_table.h. */
#include <stdlib.h>
#include <string.h>

#include "onnx_name_table.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

bool onnx_names_init(onnx_name_table *t, uint64_t expected)
{
    uint32_t capacity = 16;
    while (capacity < expected * 2 && capacity < (UINT32_C(1) << 30))
        capacity *= 2;
    t->keys = calloc(capacity, sizeof *t->keys);
    t->indices = calloc(capacity, sizeof *t->indices);
    t->capacity = capacity;
    t->count = 0;
    return t->keys && t->indices;
}

void onnx_names_release(onnx_name_table *t)
{
    free(t->keys);
    free(t->indices);
}

static bool table_grow(onnx_name_table *t)
{
    onnx_name_table bigger;
    if (!onnx_names_init(&bigger, t->capacity))
        return onnx_names_release(&bigger), false;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (!t->keys[i])
            continue;
        uint32_t at = (uint32_t)hash_name(t->keys[i]) & (bigger.capacity - 1);
        while (bigger.keys[at])
            at = (at + 1) & (bigger.capacity - 1);
        bigger.keys[at] = t->keys[i];
        bigger.indices[at] = t->indices[i];
        bigger.count++;
    }
    onnx_names_release(t);
    *t = bigger;
    return true;
}

bool onnx_names_find(const onnx_name_table *t, const char *key, uint32_t *index)
{
    uint32_t at = (uint32_t)hash_name(key) & (t->capacity - 1);
    while (t->keys[at]) {
        if (strcmp(t->keys[at], key) == 0) {
            if (index)
                *index = t->indices[at];
            return true;
        }
        at = (at + 1) & (t->capacity - 1);
    }
    return false;
}

/* Insert or replace. */
bool onnx_names_put(onnx_name_table *t, const char *key, uint32_t index)
{
    if ((uint64_t)(t->count + 1) * 2 > t->capacity && !table_grow(t))
        return false;
    uint32_t at = (uint32_t)hash_name(key) & (t->capacity - 1);
    while (t->keys[at] && strcmp(t->keys[at], key) != 0)
        at = (at + 1) & (t->capacity - 1);
    if (!t->keys[at])
        t->count++;
    t->keys[at] = key;
    t->indices[at] = index;
    return true;
}
