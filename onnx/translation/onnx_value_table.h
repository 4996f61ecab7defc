/*
 * onnx_value_table.h — the importer's table of ONNX values (onnx_entry by
 * ONNX name), the kiln names it gives out, and the report of constructs
 * that cannot be imported.
 *
 * Constants become kiln weights only when some op uses them as a value,
 * so a shape or axes operand folded into an attribute leaves no weight
 * behind; a symbolic entry is translated into kiln ops only when
 * something uses it as data (onnx_entry_value.h).
 */
#ifndef KILN_ONNX_VALUE_TABLE_H
#define KILN_ONNX_VALUE_TABLE_H

#include "onnx_importer.h"

/** Add line `fmt` to the unsupported report. @return KILN_OK or KILN_ERR_OUT_OF_MEMORY. */
kiln_status onnx_report_line(onnx_importer *im, kiln_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * `name` made a kiln identifier ([A-Za-z_][A-Za-z0-9_.-]*) in `out`
 * (`size` >= 2): other characters become '_', and a name that does not
 * start with a letter or '_' gets a '_' in front. Identifiers are kept.
 */
void onnx_make_identifier(const char *name, char *out, size_t size);

/**
 * A kiln name for ONNX name `onnx_name` (onnx_make_identifier) not yet in
 * `used`, which then holds it; a clash gets a numeric suffix. The name
 * lives as long as the importer. @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status onnx_unique_kiln_name(onnx_importer *im, onnx_name_table *used, const char *onnx_name, const char **out,
                                  kiln_error *err);

/**
 * A new entry for `onnx_name` (borrowed) of `kind`. The pointer is valid
 * until the next onnx_entry_new (the table grows). @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status onnx_entry_new(onnx_importer *im, const char *onnx_name, onnx_entry_kind kind, onnx_entry **out,
                           kiln_error *err);

/** @return the entry of `onnx_name`, or NULL. Valid until the next onnx_entry_new. */
onnx_entry *onnx_entry_find(onnx_importer *im, const char *onnx_name);

/** Release what an importer holds, except what onnx_import_model hands to its result. */
void onnx_importer_release(onnx_importer *im);

#endif
