/* edit_options.h — how an artifact is edited in place (kiln_edit_options), read into this library's layout. */
#ifndef KILN_LIB_EDIT_OPTIONS_H
#define KILN_LIB_EDIT_OPTIONS_H

#include "loader.h"

/* A caller's edit options with their load options resolved: options.load
 * points at load.options, never NULL. */
typedef struct kiln_edit_settings {
    kiln_edit_options options;
    kiln_load_settings load;
} kiln_edit_settings;

/** Resolve `options` (NULL = defaults) into `out`. @return KILN_OK or KILN_ERR_INVALID_ARGUMENT (a bad struct_size). */
kiln_status kiln_edit_settings_resolve(const kiln_edit_options *options, kiln_edit_settings *out, kiln_error *err);

/* The method of `program` the edit is for (options.method; the first when NULL), to change and write again.
 * @return KILN_OK or KILN_ERR_INVALID_ARGUMENT naming the methods there are. */
kiln_status kiln_edit_method(kiln_program *program, const kiln_edit_settings *settings, kiln_program **out,
                             kiln_error *err);

#endif
