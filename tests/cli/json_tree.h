/*
 * json_tree.h — a small, strict JSON parser for tests: it turns the JSON a
 * kiln verb prints back into a tree, so tests check fields, not text.
 */
#ifndef KILN_TESTS_JSON_TREE_H
#define KILN_TESTS_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value {
    json_kind kind;
    bool boolean;
    double number;
    char *string;               /* JSON_STRING (decoded), or a member's key */
    struct json_value *items;   /* JSON_ARRAY elements or JSON_OBJECT members */
    size_t count;
} json_value;

/* Parse all of `text` (whitespace around allowed). @return NULL if it is not exactly one JSON value. */
json_value *json_parse(const char *text);
void json_free(json_value *value);

/* Member `key` of an object, or NULL. */
const json_value *json_get(const json_value *object, const char *key);
/* Element `index` of an array, or NULL. */
const json_value *json_at(const json_value *array, size_t index);

#endif
