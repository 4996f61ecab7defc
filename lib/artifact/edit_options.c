/* edit_options.c — see edit_options.h. */
#include "edit_options.h"

#include <stdint.h>
#include <string.h>

#include <kiln/util.h>

#include "error.h"

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define EDIT_OPTIONS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_edit_options, load)

static void edit_options_default(kiln_edit_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
}

void kiln_edit_options_init(kiln_edit_options *options, size_t struct_size)
{
    kiln_edit_options defaults;
    edit_options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

kiln_status kiln_edit_settings_resolve(const kiln_edit_options *options, kiln_edit_settings *out, kiln_error *err)
{
    edit_options_default(&out->options);
    KILN_TRY(kiln_struct_read(&out->options, sizeof out->options, options, EDIT_OPTIONS_SIZE_1_0,
                              "kiln_edit_options", err));
    KILN_TRY(kiln_load_settings_resolve(out->options.load, &out->load, err));
    out->options.load = &out->load.options;
    return KILN_OK;
}

kiln_status kiln_edit_method(kiln_program *program, const kiln_edit_settings *settings, kiln_program **out,
                             kiln_error *err)
{
    *out = program;
    if (!settings->options.method)
        return KILN_OK;
    const kiln_program *method;
    KILN_TRY(kiln_program_method(program, settings->options.method, &method, err));
    /* The program's own handle: the editor changes its model before writing it again. */
    *out = (kiln_program *)(uintptr_t)method;
    return KILN_OK;
}
