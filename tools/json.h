/*
 * json.h — the JSON writer every verb's --json output goes through.
 *
 * The writer tracks nesting and puts the separators itself, so no verb
 * counts commas by hand: ", " between the members of an object or an
 * array, ": " after a key, nothing inside the brackets. Strings, keys
 * included, go through one escaper. The output is one line; json_finish
 * ends it.
 *
 *     json_writer w;
 *     json_init(&w, stdout);
 *     json_begin_object(&w);
 *     json_key(&w, "runs");
 *     json_int(&w, 3);                      -> {"runs": 3}
 *     json_end_object(&w);
 *     json_finish(&w);
 */
#ifndef KILN_TOOLS_JSON_H
#define KILN_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Deepest nesting the writer tracks: the verbs need 5 levels. */
#define JSON_MAX_DEPTH 32

typedef struct json_writer {
    FILE *out;
    int depth;                           /* open objects and arrays */
    bool in_object[JSON_MAX_DEPTH];      /* per level: an object (else an array) */
    bool has_members[JSON_MAX_DEPTH];    /* per level: a member was written, so the next needs ", " */
    bool after_key;                      /* a key was written; its value comes next */
    bool misused;                        /* a call out of place (see json_finish) */
} json_writer;

/* Start a document written to `out`. */
void json_init(json_writer *w, FILE *out);

/* Open and close an object ({...}) or an array ([...]). */
void json_begin_object(json_writer *w);
void json_end_object(json_writer *w);
void json_begin_array(json_writer *w);
void json_end_array(json_writer *w);

/* The key of the next member of the object being written. */
void json_key(json_writer *w, const char *key);

/* `text` as a JSON string: quotes and backslashes escaped, \n \r \t by
 * name, other control bytes as \u00XX, UTF-8 passed through. */
void json_string(json_writer *w, const char *text);

/* Whole numbers, printed in full. */
void json_int(json_writer *w, long long value);
void json_uint(json_writer *w, unsigned long long value);

/* A double with 17 significant digits (%.17g: reads back exactly), or
 * null when it is not finite (JSON has no NaN or infinity). */
void json_double(json_writer *w, double value);

/* A double with `decimals` digits after the point (%.*f), for measured
 * times and rates where more digits would be noise; null when not finite. */
void json_fixed(json_writer *w, double value, int decimals);

/* true / false, and null. */
void json_bool(json_writer *w, bool value);
void json_null(json_writer *w);

/* A member of an object in one call: its key, then its value as above. */
void json_member_string(json_writer *w, const char *key, const char *text);
void json_member_int(json_writer *w, const char *key, long long value);
void json_member_uint(json_writer *w, const char *key, unsigned long long value);
void json_member_double(json_writer *w, const char *key, double value);
void json_member_bool(json_writer *w, const char *key, bool value);

/*
 * End the document with a newline. @return true if every object and
 * array was closed and every call was in place (a key only directly in
 * an object, a value after each key, no end without its begin, nesting
 * within JSON_MAX_DEPTH).
 */
bool json_finish(json_writer *w);

#endif
