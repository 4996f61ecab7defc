/*
 * util.h — helpers kiln's own tools and bindings share, kept as stable as
 * <kiln/kiln.h> (the same 1.x ABI policy): byte sizes in words, the edit
 * distance behind "did you mean" suggestions, and atomic file writes.
 * An embedder who loads and runs artifacts needs none of them.
 */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- versioned structs */

/*
 * The structs kiln versions by a leading `size_t struct_size` (kiln.h's
 * conventions) are read and filled by these two, so that every one of
 * them accepts an older, shorter struct and a newer, longer one alike.
 */

/** The size of `type` up to the end of `field`: a struct's size at the release whose last field that was. */
#define KILN_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/**
 * Fill a caller's versioned struct `out` of `out_size` bytes from `in`,
 * this library's whole struct of `size` bytes: the first min(out_size,
 * size) bytes are copied, the rest of `out` is zeroed, and out's
 * struct_size becomes `out_size`. How the kiln_*_init functions write
 * defaults, and how a function fills a struct the caller sized.
 * Nothing is written when `out_size` is below sizeof(size_t).
 */
KILN_API void kiln_struct_fill(void *out, size_t out_size, const void *in, size_t size);

/**
 * Read a caller's versioned struct `in` into `out` (`size` bytes, holding
 * this library's defaults): the caller's first min(in->struct_size, size)
 * bytes replace them, so the fields an older struct lacks keep their
 * defaults, and out's struct_size becomes `size`. A NULL `in` leaves the
 * defaults as they are.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT, naming `type_name`, for a
 *         struct_size below `min_size` (the struct's 1.0 size) or a longer
 *         struct with a nonzero byte past `size` (a field this library
 *         does not know).
 */
KILN_API KILN_NODISCARD kiln_status kiln_struct_read(void *out, size_t size, const void *in, size_t min_size,
                                                     const char *type_name, kiln_error *err);

/**
 * Write `bytes` as people read it: "512 bytes" below 1 KiB, else one
 * decimal in binary units ("8.0 GiB", "1.5 MiB").
 * @return the length the full text needs, like snprintf.
 */
KILN_API int kiln_format_bytes(uint64_t bytes, char *buffer, size_t size);

/**
 * How many single-character edits (insertions, deletions, replacements;
 * ASCII case ignored) turn name `a` into name `b`: what "did you mean"
 * suggestions rank by. Names longer than 64 bytes are 64 from every name.
 * @return 0..64.
 */
KILN_API uint32_t kiln_name_distance(const char *a, const char *b);

/**
 * Write `size` bytes to `path` the way kiln writes artifacts: into a
 * temporary file in the same directory, flushed to disk, then renamed over
 * `path` (and the directory flushed), so `path` never holds a torn file.
 * @return KILN_OK or KILN_ERR_IO naming the path.
 */
KILN_API KILN_NODISCARD kiln_status kiln_write_file_atomic(const char *path, const void *data, size_t size,
                                                           kiln_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KILN_UTIL_H */
