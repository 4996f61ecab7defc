/* status.c — status strings and error recording. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

const char *kiln_strerror(kiln_status status)
{
    switch (status) {
    case KILN_OK: return "success";
    case KILN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KILN_ERR_OUT_OF_MEMORY: return "out of memory";
    case KILN_ERR_IO: return "I/O error";
    case KILN_ERR_TRUNCATED: return "file is truncated";
    case KILN_ERR_BAD_MAGIC: return "not a kiln artifact (bad magic)";
    case KILN_ERR_UNSUPPORTED_VERSION: return "unsupported format version";
    case KILN_ERR_HEADER_CRC: return "header checksum mismatch";
    case KILN_ERR_TABLE_CRC: return "section table checksum mismatch";
    case KILN_ERR_SECTION_CRC: return "section checksum mismatch";
    case KILN_ERR_TRAILER: return "trailer is damaged";
    case KILN_ERR_DIGEST_MISMATCH: return "artifact digest mismatch";
    case KILN_ERR_MALFORMED: return "malformed artifact";
    case KILN_ERR_LIMIT: return "a limit was exceeded";
    case KILN_ERR_UNKNOWN_CRITICAL: return "unknown critical section or feature";
    case KILN_ERR_UNSUPPORTED_OP: return "unsupported operator or operator version";
    case KILN_ERR_INVALID_PROGRAM: return "invalid program";
    case KILN_ERR_DTYPE_MISMATCH: return "input dtype mismatch";
    case KILN_ERR_RANK_MISMATCH: return "input rank mismatch";
    case KILN_ERR_SHAPE_GUARD: return "input shape outside the contract";
    case KILN_ERR_MISSING_INPUT: return "missing input";
    case KILN_ERR_UNKNOWN_INPUT: return "unknown input name";
    case KILN_ERR_NPY: return "malformed or unsupported .npy file";
    case KILN_ERR_RUNTIME: return "runtime error in a kernel";
    case KILN_ERR_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case KILN_ERR_UNSUPPORTED_MODE: return "unsupported program mode";
    case KILN_ERR_SECTION_HASH: return "section hash mismatch";
    case KILN_ERR_UNSIGNED: return "artifact is not signed";
    case KILN_ERR_UNTRUSTED_KEY: return "artifact is signed by an untrusted key";
    case KILN_ERR_BAD_SIGNATURE: return "artifact signature does not verify";
    case KILN_ERR_INPUT_CHECK: return "an input value breaks a semantic check";
    }
    return "unknown error";
}

kiln_status kiln_fail(kiln_error *err, kiln_status code, const char *fmt, ...)
{
    if (err) {
        va_list args;
        err->code = code;
        va_start(args, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, args);
        va_end(args);
    }
    return code;
}

kiln_status kiln_fail_within(kiln_error *err, kiln_status status, const char *fmt, ...)
{
    if (status == KILN_OK || !err)
        return status;
    char context[KILN_ERROR_MESSAGE_SIZE], message[KILN_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, fmt);
    vsnprintf(context, sizeof context, fmt, args);
    va_end(args);
    snprintf(message, sizeof message, "%s", err->message);
    return kiln_fail(err, status, "%s: %s", context, message);
}

void kiln_error_clear(kiln_error *err)
{
    if (err) {
        err->code = KILN_OK;
        err->message[0] = '\0';
    }
}
