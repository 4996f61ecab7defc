/* text_buffer.c — growable strings for the text format (see text_buffer.h). */
#include "text_buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"

void kiln_text_buffer_init(kiln_text_buffer *buffer)
{
    memset(buffer, 0, sizeof *buffer);
}

void kiln_text_buffer_release(kiln_text_buffer *buffer)
{
    free(buffer->data);
    kiln_text_buffer_init(buffer);
}

void kiln_text_buffer_clear(kiln_text_buffer *buffer)
{
    buffer->length = 0;
    if (buffer->data)
        buffer->data[0] = '\0';
}

/* Make room for `extra` more bytes plus the NUL, growing geometrically. */
static bool reserve(kiln_text_buffer *buffer, size_t extra)
{
    size_t needed;
    if (buffer->failed)
        return false;
    if (!kiln_add_size(buffer->length, extra, &needed) || !kiln_add_size(needed, 1, &needed)) {
        buffer->failed = true;
        return false;
    }
    if (needed <= buffer->capacity)
        return true;
    size_t wanted = buffer->capacity ? buffer->capacity : 64;
    while (wanted < needed)
        if (!kiln_mul_size(wanted, 2, &wanted)) {
            wanted = needed;
            break;
        }
    char *grown = realloc(buffer->data, wanted);
    if (!grown) {
        buffer->failed = true;
        return false;
    }
    buffer->data = grown;
    buffer->capacity = wanted;
    return true;
}

bool kiln_text_buffer_append(kiln_text_buffer *buffer, const void *bytes, size_t size)
{
    if (!reserve(buffer, size))
        return false;
    if (size)
        memcpy(buffer->data + buffer->length, bytes, size);
    buffer->length += size;
    buffer->data[buffer->length] = '\0';
    return true;
}

bool kiln_text_buffer_puts(kiln_text_buffer *buffer, const char *text)
{
    return kiln_text_buffer_append(buffer, text, strlen(text));
}

bool kiln_text_buffer_printf(kiln_text_buffer *buffer, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int needed = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (needed < 0) {
        buffer->failed = true;
        return false;
    }
    if (!reserve(buffer, (size_t)needed))
        return false;
    va_start(args, fmt);
    vsnprintf(buffer->data + buffer->length, (size_t)needed + 1, fmt, args);
    va_end(args);
    buffer->length += (size_t)needed;
    return true;
}

char *kiln_text_buffer_take(kiln_text_buffer *buffer)
{
    if (!reserve(buffer, 0)) {
        kiln_text_buffer_release(buffer);
        return NULL;
    }
    char *text = buffer->data;
    text[buffer->length] = '\0';
    kiln_text_buffer_init(buffer);
    return text;
}

char *kiln_text_copy(const char *bytes, size_t length)
{
    char *copy = malloc(length + 1);
    if (copy) {
        memcpy(copy, bytes, length);
        copy[length] = '\0';
    }
    return copy;
}
