/* session.h — what the library's tests may ask a session that the public API does not answer. */
#ifndef KILN_LIB_SESSION_H
#define KILN_LIB_SESSION_H

#include <stdint.h>

#include <kiln/kiln.h>

/* The bound on magnitudes the session's last run carried for `value` (+inf: none; plan/value_bound.h). */
double kiln_session_value_bound(const kiln_session *s, uint32_t value);

#endif
