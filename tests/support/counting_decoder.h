/*
 * counting_decoder.h — a tiny generative program for the tests of token
 * generation and of generation cases: methods `prefill` and `decode` over
 * the state `cache` f64[1, COUNTING_CAPACITY, COUNTING_VOCAB].
 *
 * It counts: token t is looked up in a table whose row t is the one-hot of
 * (3t + 1) % VOCAB, the rows are appended to the cache, and the logits are
 * the column sums of every row held (decode adds its position, `past`, to
 * each): so the next token is the code seen most often so far (the first
 * on ties), which counting_decoder_next computes by hand. A token lost,
 * counted twice or a wrong position changes the tokens or the logits.
 */
#ifndef KILN_TESTS_COUNTING_DECODER_H
#define KILN_TESTS_COUNTING_DECODER_H

#include <stdint.h>

#include <kiln/kiln.h>

#define COUNTING_CAPACITY 16
#define COUNTING_VOCAB 5

/* The program's builder (its first method `prefill`, then `decode`), to which a test may add more. */
kiln_builder *counting_decoder_builder(void);

/* The next token after `sequence[length]` (a prompt and the tokens made), and its count in *count. */
int64_t counting_decoder_next(const int64_t *sequence, uint32_t length, double *count);

/* The code token t adds to the counts: (3t + 1) % COUNTING_VOCAB. */
int64_t counting_decoder_code(int64_t token);

#endif
