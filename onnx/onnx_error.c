/* onnx_error.c — see onnx_error.h. */
#include <stdarg.h>
#include <stdio.h>

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
