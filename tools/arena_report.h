/*
 * arena_report.h — how large a program's session arena is and how it grows
 * with each dim, for inspect (text and JSON) and for the verbs that write
 * artifacts (import-onnx, asm), which warn at build time when a session
 * over the whole domain would not fit the default limit.
 */
#ifndef KILN_TOOLS_ARENA_REPORT_H
#define KILN_TOOLS_ARENA_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <kiln/kiln.h>

/* One dim's row: the arena with the dim at three values, every other dim at its largest. */
typedef struct arena_growth {
    kiln_dim_info dim;
    int64_t at[3];        /* the dim's first, middle and last value */
    uint64_t bytes[3];    /* the arena there (UINT64_MAX: over 64 bits) */
    double degree;        /* d log(arena) / d log(dim) from the middle to the last value; NaN if unknown */
} arena_growth;

/* The row of dim `index`. @return false if the arena could not be planned (out of memory). */
bool arena_growth_of(const kiln_program *program, uint32_t index, arena_growth *out);

/* "batch=64, seq=2048": every dim at its largest value ("no dims" when none). */
void arena_upper_bound_text(const kiln_program *program, char *out, size_t size);

/*
 * Whether a session of the whole domain fits the default arena limit:
 * true, or false with the library's message (dims, bytes, narrowings that
 * fit) in `message`.
 */
bool arena_default_session_fits(const kiln_program *program, char *message, size_t size);

/*
 * After writing an artifact: print its arena at the upper bound to stdout
 * and, when a default session would not fit, a warning to stderr that says
 * so with narrowings that fit. Loads `path` (no verification: it was just
 * written); prints nothing if it cannot be loaded.
 */
void arena_report_after_write(const char *path);

#endif
