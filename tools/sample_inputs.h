/*
 * sample_inputs.h — inputs inside a program's contract, for the verbs that
 * run a program without being given data (probe, bench): deterministic
 * pseudo-random values that satisfy each input's semantic checks, the
 * first and last value of a dim's domain, and state tensors of the length
 * a point of the domain gives them.
 */
#ifndef KILN_TOOLS_SAMPLE_INPUTS_H
#define KILN_TOOLS_SAMPLE_INPUTS_H

#include <stdint.h>

#include <kiln/kiln.h>

/* xorshift64*: the next value of the generator whose state (never 0) is *state. */
uint64_t sample_random(uint64_t *state);

/* The smallest and the largest value of `dim`'s domain (honouring multiple_of). */
int64_t sample_dim_first(const kiln_dim_info *dim);
int64_t sample_dim_last(const kiln_dim_info *dim);

/*
 * Fill `t`, a tensor for input `index` of `program`, with values its
 * semantic checks accept: floats uniform in [-1, 1) or in the declared
 * range (clipped to ±1e6); integers one of the declared categories, else
 * 0 for an input some gather/scatter-like op reads positions from (valid
 * on every non-empty axis), else 1..9 clipped to the range (small, and
 * never a zero divisor); bools 0 or 1.
 */
void sample_fill_input(const kiln_program *program, uint32_t index, kiln_tensor *t, uint64_t *state);

/*
 * Make each state of `session` hold as many rows as its length dim has at
 * `dim_values` (one per dim of `program`; no rows when the method does not
 * declare that dim), so a run at past = 7 meets a cache of 7 rows.
 * @return KILN_OK, or the error of a length no state can hold.
 */
kiln_status sample_state_lengths(const kiln_program *program, kiln_session *session, const int64_t *dim_values,
                                 kiln_error *err);

#endif
