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
 * Parse `text` as NAME=MIN..MAX, NAME=MIN..MAX:K (0 <= MIN <= MAX, K >= 1:
 * only the multiples of K in MIN..MAX) or NAME=N (N..N) into `out` (out->name points into
 * `text`, which is cut at the '='; multiple_of is K, or 0 without one).
 * @return true on success.
 */
bool onnx_options_parse_dim(char *text, kiln_onnx_dim *out);

/**
 * After an import of `model` with `options` failed with `result`, whose
 * report names a counterexample (a precondition false at some point of the
 * declared domain, such as a UNet's skip connection at h = 20): find the
 * --dim flags that make the model import — a multiple_of K, the smallest
 * power of two up to 64, on the dims the counterexamples name (and on any
 * dim a counterexample names once those are restricted) — by importing
 * again, and print them to `out` as a hint ("hint: the model imports with
 * --dim h=16..256:8 --dim w=16..256:8 ..."). The domain is never narrowed
 * without the user: this only suggests.
 * @return true if a hint was printed.
 */
bool onnx_options_suggest_multiple_of(FILE *out, const kiln_onnx_model *model, const kiln_onnx_options *options,
                                      const kiln_onnx_result *result);

/** Print every line of `result`'s unsupported report, indented, to `out`. */
void onnx_options_print_report(FILE *out, const kiln_onnx_result *result);

#endif
