/*
 * seed_program.h — the seed example and a file's bytes, for tests that see
 * kiln through its public API alone (they compile this file as one of
 * their sources: seed_program_dep). Failures are cmocka failures.
 */
#ifndef KILN_TEST_SEED_PROGRAM_H
#define KILN_TEST_SEED_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

/* A builder holding y = 2*x + 1 over x f64 [batch, 2], batch in batch_min..batch_max (caller frees). */
kiln_builder *seed_program_builder(int64_t batch_min, int64_t batch_max);

/* The bytes of the file at `path`, malloc'ed (caller frees); *size their count, never 0. */
uint8_t *read_file_bytes(const char *path, size_t *size);

#endif
