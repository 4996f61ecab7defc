/* report.c — the compatibility report (see report.h and kiln.h). */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *format_text(const char *fmt, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (length < 0)
        return NULL;
    char *text = malloc((size_t)length + 1);
    if (text)
        vsnprintf(text, (size_t)length + 1, fmt, args);
    return text;
}

void kiln_report_add(kiln_report *report, kiln_severity severity, kiln_status status, const char *code,
                     const char *location, const char *fmt, ...)
{
    if (!report)
        return;
    if (report->count == report->capacity) {
        uint32_t capacity = report->capacity ? report->capacity * 2 : 8;
        kiln_problem *grown = realloc(report->items, capacity * sizeof *grown);
        if (!grown) {
            report->out_of_memory = true;
            return;
        }
        report->items = grown;
        report->capacity = capacity;
    }
    va_list args;
    va_start(args, fmt);
    char *message = format_text(fmt, args);
    va_end(args);
    char *where = strdup(location ? location : "");
    if (!message || !where) {
        free(message);
        free(where);
        report->out_of_memory = true;
        return;
    }
    report->items[report->count++] = (kiln_problem){severity, status, code, where, message};
    if (severity == KILN_SEVERITY_ERROR)
        report->error_count++;
}

const char *kiln_problem_code_for(kiln_status status)
{
    switch (status) {
    case KILN_ERR_IO: return "file";
    case KILN_ERR_TRUNCATED:
    case KILN_ERR_BAD_MAGIC:
    case KILN_ERR_HEADER_CRC:
    case KILN_ERR_TABLE_CRC:
    case KILN_ERR_TRAILER:
    case KILN_ERR_MALFORMED: return "structure";
    case KILN_ERR_UNSUPPORTED_VERSION: return "format-version";
    case KILN_ERR_LIMIT: return "limit";
    case KILN_ERR_DIGEST_MISMATCH: return "digest";
    case KILN_ERR_SECTION_CRC: return "section-crc";
    case KILN_ERR_SECTION_HASH: return "section-hash";
    case KILN_ERR_UNSIGNED: return "signature-missing";
    case KILN_ERR_UNTRUSTED_KEY: return "signature-untrusted";
    case KILN_ERR_BAD_SIGNATURE: return "signature-bad";
    case KILN_ERR_UNKNOWN_CRITICAL: return "section-unknown-critical";
    case KILN_ERR_UNSUPPORTED_OP: return "op-missing";
    case KILN_ERR_UNSUPPORTED_DTYPE: return "dtype-unsupported";
    case KILN_ERR_UNSUPPORTED_MODE: return "mode-unsupported";
    case KILN_ERR_OUT_OF_MEMORY: return "out-of-memory";
    case KILN_ERR_INVALID_PROGRAM: return "program-invalid";
    default: return "error";
    }
}

void kiln_report_add_error(kiln_report *report, const kiln_error *err)
{
    kiln_report_add(report, KILN_SEVERITY_ERROR, err->code, kiln_problem_code_for(err->code), "", "%s",
                    err->message);
}

kiln_status kiln_report_summarise(const kiln_report *report, kiln_error *err)
{
    kiln_status first = KILN_OK;
    char message[KILN_ERROR_MESSAGE_SIZE] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < report->count; i++) {
        const kiln_problem *p = &report->items[i];
        if (p->severity != KILN_SEVERITY_ERROR)
            continue;
        if (first == KILN_OK)
            first = p->status;
        if (used < sizeof message)
            used += (size_t)snprintf(message + used, sizeof message - used, "%s%s%s%s", used ? "; " : "",
                                     p->location, p->location[0] ? ": " : "", p->message);
    }
    if (first == KILN_OK && report->out_of_memory)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory while recording problems");
    if (first != KILN_OK)
        kiln_fail(err, first, "%s", message);
    return first;
}

uint32_t kiln_report_count(const kiln_report *report)
{
    return report ? report->count : 0;
}

void kiln_report_problem(const kiln_report *report, uint32_t index, kiln_problem_info *out)
{
    if (!report || index >= report->count) {
        *out = (kiln_problem_info){0};
        return;
    }
    const kiln_problem *p = &report->items[index];
    *out = (kiln_problem_info){p->severity, p->status, p->code, p->location, p->message};
}

bool kiln_report_has_errors(const kiln_report *report)
{
    return report && (report->error_count > 0 || report->out_of_memory);
}

void kiln_report_free(kiln_report *report)
{
    if (!report)
        return;
    for (uint32_t i = 0; i < report->count; i++) {
        free(report->items[i].location);
        free(report->items[i].message);
    }
    free(report->items);
    free(report);
}
