/*
 * family_check.h — an op family's table is what the registry serves.
 */
#ifndef KILN_TESTS_FAMILY_CHECK_H
#define KILN_TESTS_FAMILY_CHECK_H

#include <stddef.h>

#include "op_registry.h"

/*
 * Every record of `family` is what kiln_op_find returns for its name (so
 * no other family shadows it), each of the `count` `names` is registered
 * at version 1 by a record of this family, and an unknown name is not
 * found. The checks a family adds (its exact size, versions it must not
 * take) stay in its test.
 */
void assert_family_registered(const kiln_op_family *family, const char *const *names, size_t count);

#endif
