/* check_specs.c — see check_specs.h. */
#include "check_specs.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int grow(check_specs *specs)
{
    if (specs->count < specs->capacity)
        return CLI_OK;
    uint32_t wanted = specs->capacity ? specs->capacity * 2 : 4;
    if (wanted <= specs->capacity)
        return cli_error("too many --check options");
    kiln_check_spec *items = realloc(specs->items, (size_t)wanted * sizeof *items);
    if (items)
        specs->items = items;
    const char **inputs = realloc(specs->inputs, (size_t)wanted * sizeof *inputs);
    if (inputs)
        specs->inputs = inputs;
    kiln_input_check *checks = realloc(specs->checks, (size_t)wanted * sizeof *checks);
    if (checks)
        specs->checks = checks;
    if (!items || !inputs || !checks)
        return cli_error("out of memory");
    specs->capacity = wanted;
    return CLI_OK;
}

int check_specs_take(check_specs *specs, const char *verb, const char *value)
{
    int rc = grow(specs);
    if (rc != CLI_OK)
        return rc;
    kiln_check_spec spec;
    kiln_error err;
    if (kiln_check_spec_parse(value, &spec, &err) != KILN_OK)
        return cli_usage_error(verb, "--check: %s", err.message);
    for (uint32_t i = 0; i < specs->count; i++) {
        if (strcmp(specs->items[i].input, spec.input) == 0) {
            rc = cli_usage_error(verb, "--check names input '%s' twice; give all its rules in one --check "
                                       "(e.g. '%s: range 0..1, finite')", spec.input, spec.input);
            kiln_check_spec_free(&spec);
            return rc;
        }
    }
    specs->items[specs->count] = spec;
    specs->inputs[specs->count] = specs->items[specs->count].input;
    specs->checks[specs->count] = specs->items[specs->count].check;
    specs->count++;
    return CLI_OK;
}

void check_specs_release(check_specs *specs)
{
    for (uint32_t i = 0; i < specs->count; i++)
        kiln_check_spec_free(&specs->items[i]);
    free(specs->items);
    free(specs->inputs);
    free(specs->checks);
    memset(specs, 0, sizeof *specs);
}
