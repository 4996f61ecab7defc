/* json.c — the JSON writer (json.h): separators from the nesting, one escaper. */
#include "json.h"

#include <math.h>
#include <stdlib.h>

void json_init(json_writer *w, FILE *out)
{
    *w = (json_writer){.out = out};
}

/* The level being written into, or -1 at the top of the document. */
static int level(const json_writer *w)
{
    return w->depth < JSON_MAX_DEPTH ? w->depth - 1 : JSON_MAX_DEPTH - 1;
}

/* Before any value: ", " when it follows another array element. An
 * object member's separator was written with its key. */
static void before_value(json_writer *w)
{
    int at = level(w);
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (at < 0)
        return;
    if (w->in_object[at]) {
        w->misused = true; /* a value in an object needs its key first */
        return;
    }
    if (w->has_members[at])
        fputs(", ", w->out);
    w->has_members[at] = true;
}

static void begin(json_writer *w, bool object)
{
    before_value(w);
    fputc(object ? '{' : '[', w->out);
    if (w->depth >= JSON_MAX_DEPTH)
        w->misused = true; /* deeper than tracked: separators may be wrong */
    w->depth++;
    int at = level(w);
    w->in_object[at] = object;
    w->has_members[at] = false;
}

static void end(json_writer *w, bool object)
{
    int at = level(w);
    if (at < 0 || w->in_object[at] != object || w->after_key)
        w->misused = true;
    fputc(object ? '}' : ']', w->out);
    if (w->depth > 0)
        w->depth--;
    w->after_key = false;
}

void json_begin_object(json_writer *w)
{
    begin(w, true);
}

void json_end_object(json_writer *w)
{
    end(w, true);
}

void json_begin_array(json_writer *w)
{
    begin(w, false);
}

void json_end_array(json_writer *w)
{
    end(w, false);
}

/*
 * The one JSON string escaper of the tools. JSON is its own format, so it
 * does not share the terminal escaper (term.h), but it is as safe on a
 * terminal: besides the C0 controls JSON requires escaping, DEL and the
 * C1 controls (U+0080..U+009F in UTF-8, which some terminals obey like
 * ESC [) are written as \u escapes, which every JSON reader decodes to
 * the same characters.
 */
static void write_escaped(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*c < 0x20 || *c == 0x7f) {
                fprintf(out, "\\u%04x", *c);
            } else if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
                fprintf(out, "\\u%04x", c[1]); /* U+0080..U+009F */
                c++;
            } else {
                fputc(*c, out);
            }
        }
    }
    fputc('"', out);
}

void json_key(json_writer *w, const char *key)
{
    int at = level(w);
    if (at < 0 || !w->in_object[at] || w->after_key) {
        w->misused = true;
    } else {
        if (w->has_members[at])
            fputs(", ", w->out);
        w->has_members[at] = true;
    }
    write_escaped(w->out, key);
    fputs(": ", w->out);
    w->after_key = true;
}

void json_string(json_writer *w, const char *text)
{
    before_value(w);
    write_escaped(w->out, text);
}

void json_int(json_writer *w, long long value)
{
    before_value(w);
    fprintf(w->out, "%lld", value);
}

void json_uint(json_writer *w, unsigned long long value)
{
    before_value(w);
    fprintf(w->out, "%llu", value);
}

/*
 * The shortest decimal that reads back as exactly `value` (1e-06, not
 * 9.9999999999999995e-07): %.17g always round-trips but shows the binary
 * value's noise; the first precision from 1 up whose text parses back to
 * the same double is the one a reader expects.
 */
static void format_shortest(double value, char *text, size_t size)
{
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(text, size, "%.*g", precision, value);
        if (strtod(text, NULL) == value)
            return;
    }
}

void json_double(json_writer *w, double value)
{
    before_value(w);
    if (isfinite(value)) {
        char text[32];
        format_shortest(value, text, sizeof text);
        fputs(text, w->out);
    } else {
        fputs("null", w->out);
    }
}

void json_fixed(json_writer *w, double value, int decimals)
{
    before_value(w);
    if (isfinite(value))
        fprintf(w->out, "%.*f", decimals, value);
    else
        fputs("null", w->out);
}

void json_bool(json_writer *w, bool value)
{
    before_value(w);
    fputs(value ? "true" : "false", w->out);
}

void json_null(json_writer *w)
{
    before_value(w);
    fputs("null", w->out);
}

void json_member_string(json_writer *w, const char *key, const char *text)
{
    json_key(w, key);
    json_string(w, text);
}

void json_member_int(json_writer *w, const char *key, long long value)
{
    json_key(w, key);
    json_int(w, value);
}

void json_member_uint(json_writer *w, const char *key, unsigned long long value)
{
    json_key(w, key);
    json_uint(w, value);
}

void json_member_double(json_writer *w, const char *key, double value)
{
    json_key(w, key);
    json_double(w, value);
}

void json_member_bool(json_writer *w, const char *key, bool value)
{
    json_key(w, key);
    json_bool(w, value);
}

bool json_finish(json_writer *w)
{
    fputc('\n', w->out);
    return w->depth == 0 && !w->after_key && !w->misused;
}
