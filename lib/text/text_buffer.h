/*
 * text_buffer.h — a growable, NUL-terminated byte string.
 *
 * The text format prints and quotes user text of any length, so nothing in
 * it goes through a fixed-size buffer that could truncate silently. The
 * buffer is poisoned by the first failed allocation: every later append is
 * a no-op and `failed` stays true, so a printer can append freely and check
 * once at the end (the libspng habit of a context that remembers failure).
 */
#ifndef KILN_LIB_TEXT_BUFFER_H
#define KILN_LIB_TEXT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct kiln_text_buffer {
    char *data;      /* NUL-terminated once anything was appended; may be NULL */
    size_t length;   /* bytes before the NUL */
    size_t capacity; /* bytes allocated */
    bool failed;     /* an allocation failed; contents are incomplete */
} kiln_text_buffer;

void kiln_text_buffer_init(kiln_text_buffer *buffer);
void kiln_text_buffer_release(kiln_text_buffer *buffer);

/* Forget the contents but keep the allocation (and the failure flag). */
void kiln_text_buffer_clear(kiln_text_buffer *buffer);

/** Append `size` bytes. @return false if the buffer is (now) poisoned. */
bool kiln_text_buffer_append(kiln_text_buffer *buffer, const void *bytes, size_t size);

/** Append a NUL-terminated string. @return false if the buffer is poisoned. */
bool kiln_text_buffer_puts(kiln_text_buffer *buffer, const char *text);

/** Append printf-style text of any length. @return false if poisoned. */
bool kiln_text_buffer_printf(kiln_text_buffer *buffer, const char *fmt, ...) KILN_PRINTF(2, 3);

/**
 * Hand the contents to the caller (free() them) and reset the buffer.
 * @return the NUL-terminated text (an empty string when nothing was
 *         appended), or NULL if the buffer is poisoned or out of memory.
 */
char *kiln_text_buffer_take(kiln_text_buffer *buffer);

/* A NUL-terminated heap copy of `length` bytes (a token's text); NULL if out of memory. */
char *kiln_text_copy(const char *bytes, size_t length);

#endif
