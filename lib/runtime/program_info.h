/* program_info.h — what introspection derives from a program once, when it is loaded (program_info.c). */
#ifndef KILN_LIB_PROGRAM_INFO_H
#define KILN_LIB_PROGRAM_INFO_H

#include "program.h"

/*
 * Count the (op, version) pairs the nodes of p use, in order of first
 * use, into p->op_uses (one pass over the nodes).
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_program_count_op_uses(kiln_program *p, kiln_error *err);

#endif
