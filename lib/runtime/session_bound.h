/*
 * session_bound.h — the dims a session runs at, and the arena they need.
 *
 * A session may narrow any dim inside the artifact's range (batch <= 8,
 * seq in 1..512). Its arena is planned for the upper bound of its own
 * ranges and checked against its limit; over the limit, the message names
 * the dims at the bound, the bytes and narrowings that fit. A run outside
 * the session's ranges is refused, naming both ranges.
 */
#ifndef KILN_LIB_SESSION_BOUND_H
#define KILN_LIB_SESSION_BOUND_H

#include "input_guard.h"
#include "program.h"

/* The session's ranges (per declared dim) and the arena planned for them. */
typedef struct kiln_session_bound {
    kiln_interval *ranges;  /* per declared dim, inside its domain */
    bool narrowed;          /* some range is narrower than the artifact's */
    uint64_t *offsets;      /* per node result: its slot in the arena */
    uint64_t *sizes;        /* per node result: its slot's bytes */
    uint64_t arena_bytes;
} kiln_session_bound;

/*
 * Resolve `options` (dims and max_arena_bytes; NULL = defaults) for
 * `program`: check every narrowing, plan the arena for the session's
 * ranges (reusing the program's plan when nothing is narrowed) and check
 * it against the session's limit. On failure, *arena_bytes (if not NULL)
 * is the bytes the bound needs (UINT64_MAX if they overflow).
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for a bad narrowing;
 *         KILN_ERR_LIMIT over the limit; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_session_bound_resolve(const kiln_program *program, const kiln_session_options *options,
                                       kiln_session_bound *bound, uint64_t *arena_bytes, kiln_error *err);

void kiln_session_bound_release(kiln_session_bound *bound);

/* Read a caller's `options` (NULL: defaults; any struct_size from the one
 * before `profile` up, kiln_struct_read) into `out` and check them.
 * @return KILN_OK or KILN_ERR_INVALID_ARGUMENT. */
kiln_status kiln_session_options_read(const kiln_session_options *options, kiln_session_options *out,
                                      kiln_error *err);

/*
 * After the input guard has bound the dims (input_guard.h): each bound dim
 * inside the session's range, else KILN_ERR_SHAPE_GUARD naming the input
 * and axis that bound it, the session's range and the artifact's.
 */
kiln_status kiln_session_bound_check(const kiln_program *program, const kiln_session_bound *bound,
                                     const int64_t *dim_values, const bool *dim_bound,
                                     const kiln_binding_site *sites, kiln_error *err);

#endif
