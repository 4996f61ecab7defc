/*
 * onnx_name_table.h — an open-addressing table of C strings to indices:
 * ONNX value names to value entries, and the kiln names given out. Keys
 * are borrowed (the model's strings, or names the importer keeps).
 */
#ifndef KILN_ONNX_NAME_TABLE_H
#define KILN_ONNX_NAME_TABLE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct onnx_name_table {
    const char **keys;
    uint32_t *indices;
    uint32_t capacity; /* power of two */
    uint32_t count;
} onnx_name_table;

/** Allocate room for about `expected` keys. @return false when out of memory (release the table anyway). */
bool onnx_names_init(onnx_name_table *t, uint64_t expected);

/** Free the table's arrays (not the keys). */
void onnx_names_release(onnx_name_table *t);

/** @return true if `key` is present, and its index in *index (may be NULL). */
bool onnx_names_find(const onnx_name_table *t, const char *key, uint32_t *index);

/** Insert or replace `key`. @return false when out of memory. */
bool onnx_names_put(onnx_name_table *t, const char *key, uint32_t index);

#endif
