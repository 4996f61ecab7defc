/* onnx_error.c — see onnx_error.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_error.h"

kiln_status onnx_fail(kiln_error *err, kiln_status code, const char *fmt, ...)
{
    if (err) {
        va_list args;
        va_start(args, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return code;
}

kiln_status onnx_no_memory(kiln_error *err)
{
    return onnx_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory");
}

void onnx_append_text(char *text, size_t size, const char *fmt, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= size)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(text + used, size - used, fmt, args);
    va_end(args);
}
