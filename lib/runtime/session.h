/* session.h — what the library's tests may ask a session that the public API does not answer. */
#ifndef KILN_LIB_SESSION_H
#define KILN_LIB_SESSION_H

#include <stdint.h>

#include <kiln/kiln.h>

/* The bound on magnitudes the session's last run carried for `value` (+inf: none; plan/value_bound.h). */
double kiln_session_value_bound(const kiln_session *s, uint32_t value);

/* How many times the session's runs ran a group of nodes as one (plan/result_groups.h). */
uint64_t kiln_session_grouped_runs(const kiln_session *s);

#endif
