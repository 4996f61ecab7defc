/*
 * onnx_entry_value.h — a value-table entry as a kiln value, made when
 * first used as one: a graph input is declared, a constant becomes a
 * weight named after it, a symbolic entry's node is translated (through
 * the importer's translate_symbolic). Constants and symbolic sizes that
 * only ever feed attributes so leave nothing in the program.
 */
#ifndef KILN_ONNX_ENTRY_VALUE_H
#define KILN_ONNX_ENTRY_VALUE_H

#include "onnx_importer.h"

/**
 * The kiln value of entry `e`, made on first use. `e` may move (the table
 * grows while a node is translated): find it again after the call.
 * @return KILN_OK, or the error of the declaration or translation.
 */
kiln_status onnx_entry_value(onnx_importer *im, onnx_entry *e, kiln_value *out, kiln_error *err);

#endif
