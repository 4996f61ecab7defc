/*
 * programs.h — the programs behind the golden artifacts, shared by the
 * generator (make_golden.c) and the test that checks the current writer
 * still reproduces them byte for byte (test_golden.c).
 */
#ifndef KILN_TESTS_GOLDEN_PROGRAMS_H
#define KILN_TESTS_GOLDEN_PROGRAMS_H

#include <kiln/kiln.h>

/* The seed example: y = 2*x + 1, x: f64[batch, 2], batch in 2..4. */
kiln_builder *golden_scale(void);
/* Weights of several dtypes and kinds, expression axes, two outputs. */
kiln_builder *golden_weights(void);
/* One 16 KiB smooth f32 weight, saved with compression level 9. */
kiln_builder *golden_compressed(void);
/* Format 1.1: a non-strict matmul a: f32[3, k] by w: f32[4, 5], k in 2..8,
 * with the runtime guard k == 4. */
kiln_builder *golden_guarded(void);
/* Add the evidence case "ones": x = ones(3, 2) gives y = 3.0 everywhere. */
void golden_add_scale_evidence(kiln_builder *builder);

#endif
