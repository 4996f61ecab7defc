/*
 * file_io.h — getting artifact bytes to and from disk safely.
 *
 * Writing never leaves a torn file at the destination: bytes go to a
 * temporary file in the same directory, which is fsynced and renamed over
 * the destination, and then the directory is fsynced. Otherwise the
 * destination is treated as open(O_CREAT | O_TRUNC, 0666) would treat it
 * (spec/security.md §10.2): a symbolic link is written through to its
 * target, a new file gets 0666 less the umask (applied by the kernel: the
 * process umask is never changed, so other threads are unaffected), and a
 * replaced file keeps its mode, and its owner and group where allowed.
 * Reading maps the file read-only, so large weight sections are paged in
 * on demand.
 */
#ifndef KILN_FORMAT_FILE_IO_H
#define KILN_FORMAT_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

#include "progress.h"

/* Atomically replace `path` (or the file it links to) with `size` bytes.
 * A link that cannot be resolved, and a destination that is not a regular
 * file, are refused (KILN_ERR_IO). */
kiln_status kiln_atomic_write_file(const char *path, const void *data, size_t size, kiln_error *err);

typedef struct kiln_byte_range {
    const void *data;
    size_t size;
    /* `data` lies in a read-only file mapping: its pages are given back
     * (kiln_mapped_pages_release) as soon as they are written, so copying
     * a mapped artifact does not make it resident. */
    bool mapped;
} kiln_byte_range;

/* Atomically replace `path` with the concatenation of `count` ranges
 * (e.g. a mapped artifact body and a new trailer, without copying). */
kiln_status kiln_atomic_write_parts(const char *path, const kiln_byte_range *parts, size_t count,
                                    kiln_error *err);

/* kiln_atomic_write_parts, advancing `progress` (may be NULL) as bytes are written. */
kiln_status kiln_atomic_write_parts_progress(const char *path, const kiln_byte_range *parts, size_t count,
                                             kiln_progress *progress, kiln_error *err);

/*
 * An atomic write in progress, for writers that produce their bytes piece
 * by piece (the streaming container writer): begin creates the temporary
 * file beside the destination, write_at puts bytes at any offset (the
 * header is written last, at offset 0), commit fsyncs, renames and fsyncs
 * the directory, abort removes the temporary file. Exactly one of commit
 * and abort ends every begun write; both release the handle.
 */
typedef struct kiln_atomic_file {
    int fd;
    const char *path; /* as the caller named it, for messages */
    char *target;     /* the file that is replaced (a link's target) */
    char *temp_path;
    char *dir;
} kiln_atomic_file;

/* @return KILN_OK, or KILN_ERR_IO naming the destination (as kiln_atomic_write_file). */
kiln_status kiln_atomic_file_begin(const char *path, kiln_atomic_file *file, kiln_error *err);
/* @return KILN_OK, or KILN_ERR_IO (KILN_ERR_LIMIT past the largest file offset). */
kiln_status kiln_atomic_file_write_at(kiln_atomic_file *file, uint64_t offset, const void *bytes, size_t size,
                                      kiln_error *err);
/* @return KILN_OK, or KILN_ERR_IO; on failure the destination is left as it was. */
kiln_status kiln_atomic_file_commit(kiln_atomic_file *file, kiln_error *err);
void kiln_atomic_file_abort(kiln_atomic_file *file);

typedef struct kiln_mapped_file {
    const uint8_t *bytes;
    size_t size;
    void *mapping;      /* NULL for an empty file */
    size_t mapping_size;
} kiln_mapped_file;

/*
 * Give back the whole pages inside [bytes, bytes + size) of a read-only
 * file mapping (madvise MADV_DONTNEED on Linux, nothing elsewhere): they
 * leave the process's resident set and are read again from the page cache
 * when next touched, with the same bytes (the mapping is never written).
 * Never call it on memory that is not such a mapping.
 */
void kiln_mapped_pages_release(const uint8_t *bytes, size_t size);

/* Map `path` read-only. Release with kiln_mapped_file_release. */
kiln_status kiln_mapped_file_open(const char *path, kiln_mapped_file *out, kiln_error *err);
void kiln_mapped_file_release(kiln_mapped_file *file);

#endif
