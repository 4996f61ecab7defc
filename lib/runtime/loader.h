/* loader.h — opening an artifact into a program (loader.c); the rest of the loader is public API. */
#ifndef KILN_LIB_LOADER_H
#define KILN_LIB_LOADER_H

#include "program.h"

/*
 * Make sure the weights are checked (per the policy) and bound. Safe to
 * call from several threads; the work happens once.
 */
kiln_status kiln_program_prepare_weights(const kiln_program *program, kiln_error *err);

#endif
