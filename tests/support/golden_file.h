/* golden_file.h — what the tests of one format version's golden artifacts share: the path of a
 * golden file, the check that the writer reproduces it byte for byte, and writing it once. */
#ifndef KILN_TESTS_GOLDEN_FILE_H
#define KILN_TESTS_GOLDEN_FILE_H

#include <kiln/kiln.h>

/* DIR/FILE, malloc'ed (caller frees). */
char *golden_path(const char *dir, const char *file);

/* Fail the test unless encoding `b` gives exactly the bytes of the file at `path`; `remedy` says
 * what a difference calls for. */
void assert_writer_reproduces(const kiln_builder *b, const char *path, const char *remedy);

/* Save `b` to `path` (the one-time --write of a golden test). @return 0, or 1 with the error printed. */
int golden_write(const kiln_builder *b, const char *path);

/* Load DIR/FILE and check it is format 1.MINOR (the test fails otherwise); caller frees the program. */
kiln_program *golden_load(const char *dir, const char *file, uint16_t minor);

#endif
