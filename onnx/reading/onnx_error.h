/*
 * onnx_error.h — how the ONNX importer words its failures: it fills a
 * kiln_error itself (it sees only the public API), and grows the texts
 * that list many problems at once.
 */
#ifndef KILN_ONNX_ERROR_H
#define KILN_ONNX_ERROR_H

#include <stddef.h>

#include <kiln/kiln.h>

/**
 * Set err (may be NULL) to `code` and the printf-formatted message.
 * @return code, so callers can write `return onnx_fail(err, CODE, ...)`.
 */
kiln_status onnx_fail(kiln_error *err, kiln_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** @return KILN_ERR_OUT_OF_MEMORY, with err (may be NULL) saying so. */
kiln_status onnx_no_memory(kiln_error *err);

/** Append to the growing NUL-terminated `text` of `size` bytes, dropping what does not fit (the message says how many there are). */
void onnx_append_text(char *text, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
