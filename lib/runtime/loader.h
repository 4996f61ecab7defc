/* loader.h — opening an artifact into a program (loader.c); the rest of the loader is public API. */
#ifndef KILN_LIB_LOADER_H
#define KILN_LIB_LOADER_H

#include "program.h"

/*
 * A caller's load options read into this library's layout (kiln_struct_read:
 * an older or newer struct alike), with defaults where it gave nothing:
 * options.limits points at `limits`, never NULL.
 */
typedef struct kiln_load_settings {
    kiln_load_options options;
    kiln_limits limits;
} kiln_load_settings;

/** Resolve `options` (NULL = defaults) into `out`. @return KILN_OK or KILN_ERR_INVALID_ARGUMENT (a bad struct_size). */
kiln_status kiln_load_settings_resolve(const kiln_load_options *options, kiln_load_settings *out, kiln_error *err);

/*
 * Make sure the weights are checked (per the policy) and bound. Safe to
 * call from several threads; the work happens once.
 */
kiln_status kiln_program_prepare_weights(const kiln_program *program, kiln_error *err);

#endif
