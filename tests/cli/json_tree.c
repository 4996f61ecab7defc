/* json_tree.c — strict recursive-descent JSON parser for tests (see json_tree.h). */
#include "json_tree.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* An object member is stored as two consecutive items: the key (a
 * JSON_STRING) and the value. */

typedef struct parser {
    const char *at;
    int depth;
} parser;

static void skip(parser *p)
{
    while (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r')
        p->at++;
}

static bool parse_value(parser *p, json_value *out);
static void release(json_value *v);

static bool parse_string(parser *p, char **out)
{
    if (*p->at != '"')
        return false;
    p->at++;
    size_t capacity = 16, length = 0;
    char *text = malloc(capacity);
    while (text && *p->at != '"') {
        char c = *p->at++;
        if (c == '\0' || (unsigned char)c < 0x20) {
            free(text);
            return false;
        }
        if (c == '\\') {
            char e = *p->at++;
            const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", e);
            if (e == 'u') {
                unsigned code = 0;
                for (int i = 0; i < 4; i++) {
                    if (!isxdigit((unsigned char)*p->at)) {
                        free(text);
                        return false;
                    }
                    char digit = *p->at++;
                    code = code * 16 + (unsigned)(isdigit((unsigned char)digit) ? digit - '0' : (tolower(digit) - 'a' + 10));
                }
                c = code < 0x80 ? (char)code : '?'; /* tests only escape control characters */
            } else if (map && e) {
                c = map[1];
            } else {
                free(text);
                return false;
            }
        }
        if (length + 2 > capacity) {
            char *grown = realloc(text, capacity *= 2);
            if (!grown) {
                free(text);
                return false;
            }
            text = grown;
        }
        text[length++] = c;
    }
    if (!text)
        return false;
    p->at++;
    text[length] = '\0';
    *out = text;
    return true;
}

static bool append(json_value *container, const json_value *item)
{
    json_value *grown = realloc(container->items, (container->count + 1) * sizeof *grown);
    if (!grown)
        return false;
    container->items = grown;
    container->items[container->count++] = *item;
    return true;
}

static bool parse_container(parser *p, json_value *out, char close, bool object)
{
    p->at++;
    skip(p);
    if (*p->at == close) {
        p->at++;
        return true;
    }
    for (;;) {
        json_value item = {0};
        skip(p);
        if (object) {
            json_value key = {.kind = JSON_STRING};
            if (!parse_string(p, &key.string) || !append(out, &key))
                return false;
            skip(p);
            if (*p->at++ != ':')
                return false;
        }
        if (!parse_value(p, &item) || !append(out, &item)) {
            release(&item);
            return false;
        }
        skip(p);
        if (*p->at == ',') {
            p->at++;
            continue;
        }
        if (*p->at != close)
            return false;
        p->at++;
        return true;
    }
}

static bool parse_value(parser *p, json_value *out)
{
    memset(out, 0, sizeof *out);
    skip(p);
    if (++p->depth > 64)
        return false;
    bool ok;
    if (*p->at == '{') {
        out->kind = JSON_OBJECT;
        ok = parse_container(p, out, '}', true);
    } else if (*p->at == '[') {
        out->kind = JSON_ARRAY;
        ok = parse_container(p, out, ']', false);
    } else if (*p->at == '"') {
        out->kind = JSON_STRING;
        ok = parse_string(p, &out->string);
    } else if (strncmp(p->at, "true", 4) == 0 || strncmp(p->at, "false", 5) == 0) {
        out->kind = JSON_BOOL;
        out->boolean = *p->at == 't';
        p->at += out->boolean ? 4 : 5;
        ok = true;
    } else if (strncmp(p->at, "null", 4) == 0) {
        p->at += 4;
        ok = true;
    } else {
        char *end;
        out->kind = JSON_NUMBER;
        out->number = strtod(p->at, &end);
        ok = end != p->at && (*p->at == '-' || isdigit((unsigned char)*p->at));
        p->at = end;
    }
    p->depth--;
    return ok;
}

json_value *json_parse(const char *text)
{
    parser p = {text, 0};
    json_value *root = calloc(1, sizeof *root);
    if (!root)
        return NULL;
    if (!parse_value(&p, root)) {
        json_free(root);
        return NULL;
    }
    skip(&p);
    if (*p.at) {
        json_free(root);
        return NULL;
    }
    return root;
}

static void release(json_value *v)
{
    free(v->string);
    for (size_t i = 0; i < v->count; i++)
        release(&v->items[i]);
    free(v->items);
}

void json_free(json_value *value)
{
    if (!value)
        return;
    release(value);
    free(value);
}

const json_value *json_get(const json_value *object, const char *key)
{
    if (!object || object->kind != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i + 1 < object->count; i += 2)
        if (strcmp(object->items[i].string, key) == 0)
            return &object->items[i + 1];
    return NULL;
}

const json_value *json_at(const json_value *array, size_t index)
{
    if (!array || array->kind != JSON_ARRAY || index >= array->count)
        return NULL;
    return &array->items[index];
}
