/*
 * onnx_state.h — caches the model passes in and out imported as kiln
 * states (kiln_onnx_options.states, spec/onnx-import.md §7): the cache
 * input is no program input but the state's rows (state_read), the
 * Concat that extends it is a state_append of the new rows, and the cache
 * output is no program output. A state without an input (a prefill) is
 * declared from its output's value and appended to as a whole.
 */
#ifndef KILN_ONNX_STATE_H
#define KILN_ONNX_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "onnx_importer.h"

/**
 * Check the options' states against the graph (each output a graph
 * output, each input a graph input, names unique, a capacity given) and
 * make im->states. Before the graph inputs are entered.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT naming the bad option; KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status onnx_states_prepare(onnx_importer *im, kiln_error *err);

/**
 * Declare the states that have an input (their shape is the input's,
 * the growing axis `capacity` long), and the length dim of those that
 * have none (0..0, unless a declared dim has its name). After the graph
 * inputs, before any node.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (an axis that is not a fixed
 *         size, a growing axis no declared dim names); the builder's refusal.
 */
kiln_status onnx_states_declare(onnx_importer *im, kiln_error *err);

/**
 * If node `index` extends a cache input — Concat(input, rows) along the
 * state's growing axis — translate it as state_append(rows) and set
 * *done; otherwise leave it to its mapping.
 * @return KILN_OK or the builder's refusal.
 */
kiln_status onnx_state_try_append(onnx_importer *im, size_t index, bool *done, kiln_error *err);

/**
 * If graph output `name` is a state's: for a state with an input, check
 * that the output is the append's result; for one without, declare the
 * state from the output's value and append that value. Sets *is_state
 * (the output is then no program output).
 * @return KILN_OK; KILN_ERR_UNSUPPORTED_OP (the output is not the input
 *         extended by one Concat, or an axis is not fixed); the builder's refusal.
 */
kiln_status onnx_state_output(onnx_importer *im, const char *name, bool *is_state, kiln_error *err);

#endif
