/*
 * check_specs.h — the --check SPEC options of `kiln check add` and
 * `kiln import-onnx`: each SPEC parsed by kiln_check_spec_parse (the text
 * format's check grammar), collected once per input.
 */
#ifndef KILN_TOOLS_CHECK_SPECS_H
#define KILN_TOOLS_CHECK_SPECS_H

#include <stdint.h>

#include <kiln/text.h>

typedef struct check_specs {
    kiln_check_spec *items;
    uint32_t count, capacity;
    /* For the library calls: items[i].input and items[i].check side by side. */
    const char **inputs;
    kiln_input_check *checks;
} check_specs;

/*
 * Parse one --check value of `verb` and keep it. A bad spec, or a second
 * spec for an input, is a usage error that says what to write.
 * @return CLI_OK, or the exit status after printing the error.
 */
int check_specs_take(check_specs *specs, const char *verb, const char *value);

void check_specs_release(check_specs *specs);

#endif
