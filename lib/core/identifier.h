/* identifier.h — the names kiln accepts for dims, inputs, outputs and weights. */
#ifndef KILN_LIB_IDENTIFIER_H
#define KILN_LIB_IDENTIFIER_H

#include <stdbool.h>

/* @return true if `name` is a non-empty identifier ([A-Za-z_][A-Za-z0-9_.-]*). */
bool kiln_is_identifier(const char *name);

#endif
