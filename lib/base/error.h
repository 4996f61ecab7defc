/*
 * error.h — filling a kiln_error. Private to the library; every layer that
 * reports errors goes through kiln_fail so the code and the message never
 * disagree.
 */
#ifndef KILN_BASE_ERROR_H
#define KILN_BASE_ERROR_H

#include <kiln/status.h>

#if defined(__GNUC__)
#define KILN_PRINTF(fmt_index, first_arg) \
    __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KILN_PRINTF(fmt_index, first_arg)
#endif

/*
 * Record `code` and a printf-style message in `err` (which may be NULL).
 * @return code, so callers can write `return kiln_fail(err, CODE, ...)`.
 */
kiln_status kiln_fail(kiln_error *err, kiln_status code, const char *fmt, ...)
    KILN_PRINTF(3, 4);

/*
 * Say where a failure happened: when `status` is an error, put the
 * printf-style context and ": " before err's message (err may be NULL), e.g.
 * "method 'decode': section GRPH ...". @return status, unchanged.
 */
kiln_status kiln_fail_within(kiln_error *err, kiln_status status, const char *fmt, ...) KILN_PRINTF(3, 4);

/* Reset `err` (may be NULL) to KILN_OK with an empty message. */
void kiln_error_clear(kiln_error *err);

/* Evaluate a kiln_status expression and return it from the caller on error. */
#define KILN_TRY(expr)                         \
    do {                                       \
        kiln_status kiln_try_status_ = (expr); \
        if (kiln_try_status_ != KILN_OK)       \
            return kiln_try_status_;           \
    } while (0)

#endif
