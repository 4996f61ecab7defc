/*
 * report.h — collecting the problems found while opening an artifact, so
 * that the loader can name all of them at once.
 */
#ifndef KILN_LIB_REPORT_H
#define KILN_LIB_REPORT_H

#include <kiln/kiln.h>

#include "error.h"

typedef struct kiln_problem {
    kiln_severity severity;
    kiln_status status;
    const char *code; /* static string */
    char *location;
    char *message;
} kiln_problem;

struct kiln_report {
    kiln_problem *items;
    uint32_t count;
    uint32_t capacity;
    uint32_t error_count;
    bool out_of_memory; /* a problem could not be recorded */
};

/* Record a problem. A NULL report records nothing. */
void kiln_report_add(kiln_report *report, kiln_severity severity, kiln_status status, const char *code,
                     const char *location, const char *fmt, ...) KILN_PRINTF(6, 7);

/* Record the failure in `err` as an error problem, with the code its status implies. */
void kiln_report_add_error(kiln_report *report, const kiln_error *err);

/* The stable problem code for a status, e.g. "section-crc". */
const char *kiln_problem_code_for(kiln_status status);

/*
 * Summarise the errors of `report` into `err`: the first error's status
 * and, in the message, every error message joined by "; ".
 * @return that status (KILN_OK if there is no error).
 */
kiln_status kiln_report_summarise(const kiln_report *report, kiln_error *err);

#endif
