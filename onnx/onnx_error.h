/*
 * onnx_error.h — how the ONNX importer fills a kiln_error: the tools see
 * only the public API, so they format the message themselves.
 */
#ifndef KILN_ONNX_ERROR_H
#define KILN_ONNX_ERROR_H

#include <kiln/kiln.h>

/**
 * Set err (may be NULL) to `code` and the printf-formatted message.
 * @return code, so callers can write `return onnx_fail(err, CODE, ...)`.
 */
kiln_status onnx_fail(kiln_error *err, kiln_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
