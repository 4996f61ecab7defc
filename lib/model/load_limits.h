/* load_limits.h — the ceilings loading applies (kiln_limits): their defaults, and reading a caller's. */
#ifndef KILN_LIB_LOAD_LIMITS_H
#define KILN_LIB_LOAD_LIMITS_H

#include <kiln/kiln.h>

/**
 * Read a caller's limits (NULL: the defaults; any struct_size from the
 * 1.0 size up, kiln_struct_read) into `out`.
 * @return KILN_OK or KILN_ERR_INVALID_ARGUMENT (a bad struct_size).
 */
kiln_status kiln_limits_read(const kiln_limits *limits, kiln_limits *out, kiln_error *err);

#endif
