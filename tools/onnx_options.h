/*
 * onnx_cli.h — command-line pieces the ONNX verbs share (import-onnx,
 * onnx-test): the --dim NAME=MIN..MAX option and the unsupported report.
 */
#ifndef KILN_TOOLS_ONNX_OPTIONS_H
#define KILN_TOOLS_ONNX_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "onnx_import.h"

/**
 * Parse `text` as NAME=MIN..MAX (0 <= MIN <= MAX) into `out` (out->name
 * points into `text`, which is cut at the '=').
 * @return true on success.
 */
bool onnx_cli_parse_dim(char *text, onnx_dim_bound *out);

/** Print every line of `result`'s unsupported report, indented, to `out`. */
void onnx_cli_print_report(FILE *out, const onnx_import *result);

#endif
