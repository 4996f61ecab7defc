/*
 * onnx_options.h — command-line pieces the ONNX verbs share (import-onnx,
 * onnx-test): the --dim NAME=MIN..MAX option and the unsupported report.
 * Over the importer's public header only.
 */
#ifndef KILN_TOOLS_ONNX_OPTIONS_H
#define KILN_TOOLS_ONNX_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include <kiln/onnx.h>

/**
 * Parse `text` as NAME=MIN..MAX (0 <= MIN <= MAX) into `out` (out->name
 * points into `text`, which is cut at the '='; multiple_of is 0).
 * @return true on success.
 */
bool onnx_options_parse_dim(char *text, kiln_onnx_dim *out);

/** Print every line of `result`'s unsupported report, indented, to `out`. */
void onnx_options_print_report(FILE *out, const kiln_onnx_result *result);

#endif
