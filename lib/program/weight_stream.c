/* weight_stream.c — see weight_stream.h. */
#include "weight_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checked_math.h"
#include "error.h"

/*
 * Open `path` as weight `weight`'s source: a regular file (O_NONBLOCK, so
 * a FIFO put in its place cannot block the open; fstat refuses it) with
 * `offset + size` bytes at least.
 */
static kiln_status open_source(const char *weight, const char *path, uint64_t offset, uint64_t size,
                               bool no_follow, int *fd_out, kiln_error *err)
{
    uint64_t end;
    struct stat st;
    *fd_out = -1;
    if (!kiln_add_u64(offset, size, &end) || end > (uint64_t)INT64_MAX)
        return kiln_fail(err, KILN_ERR_IO, "weight '%s': %llu bytes from offset %llu of '%s' lie past any file",
                         weight, (unsigned long long)size, (unsigned long long)offset, path);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return kiln_fail(err, KILN_ERR_IO, "weight '%s': cannot open '%s': %s", weight, path, strerror(errno));
    kiln_status status = KILN_OK;
    if (fstat(fd, &st) != 0)
        status = kiln_fail(err, KILN_ERR_IO, "weight '%s': cannot stat '%s': %s", weight, path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        status = kiln_fail(err, KILN_ERR_IO, "weight '%s': '%s' is not a regular file", weight, path);
    else if ((uint64_t)st.st_size < end)
        status = kiln_fail(err, KILN_ERR_IO,
                           "weight '%s': '%s' is %llu bytes; the weight needs %llu bytes from offset %llu (was the "
                           "file changed after it was added?)",
                           weight, path, (unsigned long long)st.st_size, (unsigned long long)size,
                           (unsigned long long)offset);
    if (status != KILN_OK) {
        close(fd);
        return status;
    }
    *fd_out = fd;
    return KILN_OK;
}

kiln_status kiln_weight_file_check(const char *weight, const char *path, uint64_t offset, uint64_t size,
                                   bool no_follow, kiln_error *err)
{
    int fd;
    KILN_TRY(open_source(weight, path, offset, size, no_follow, &fd, err));
    close(fd);
    return KILN_OK;
}

/* Read `size` bytes at `offset` of `fd` into `buffer`; a short read (the file shrank) is an error. */
static kiln_status read_at(const kiln_weight_decl *w, int fd, uint64_t offset, uint8_t *buffer, size_t size,
                           kiln_error *err)
{
    size_t done = 0;
    while (done < size) {
        ssize_t got = pread(fd, buffer + done, size - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return kiln_fail(err, KILN_ERR_IO, "weight '%s': cannot read '%s': %s", w->name, w->source_path,
                             strerror(errno));
        if (got == 0)
            return kiln_fail(err, KILN_ERR_IO, "weight '%s': '%s' ended early (was the file changed after it was "
                                               "added?)", w->name, w->source_path);
        done += (size_t)got;
    }
    return KILN_OK;
}

/* Stream weight `w` from its file, a piece at a time through `buffer`. */
static kiln_status produce_from_file(const kiln_weight_decl *w, uint8_t *buffer, kiln_section_output *out,
                                     kiln_error *err)
{
    int fd;
    KILN_TRY(open_source(w->name, w->source_path, w->source_offset, w->byte_size, w->source_no_follow, &fd, err));
    /* The bytes are read once, front to back, and not needed again. */
    (void)posix_fadvise(fd, (off_t)w->source_offset, (off_t)w->byte_size, POSIX_FADV_SEQUENTIAL);
    kiln_status status = KILN_OK;
    for (uint64_t done = 0; status == KILN_OK && done < w->byte_size;) {
        size_t piece = w->byte_size - done > KILN_WRITE_CHUNK ? KILN_WRITE_CHUNK : (size_t)(w->byte_size - done);
        status = read_at(w, fd, w->source_offset + done, buffer, piece, err);
        if (status == KILN_OK)
            status = kiln_section_output_write(out, buffer, piece, err);
        done += piece;
    }
    close(fd);
    return status;
}

kiln_status kiln_weights_produce(void *user, kiln_section_output *out, kiln_error *err)
{
    const kiln_model *m = user;
    uint8_t *buffer = NULL;
    uint64_t written = 0;
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; status == KILN_OK && i < m->weight_count; i++) {
        const kiln_weight_decl *w = &m->weights[i];
        status = kiln_section_output_zeros(out, w->data_offset - written, err);
        if (status != KILN_OK || w->byte_size == 0) {
            written = w->data_offset;
            continue;
        }
        if (w->data) {
            status = kiln_section_output_write(out, w->data, (size_t)w->byte_size, err);
        } else if (!w->source_path) {
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "weight '%s' has no bytes", w->name);
        } else {
            if (!buffer && !(buffer = malloc(KILN_WRITE_CHUNK)))
                status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading weight '%s'", w->name);
            if (status == KILN_OK)
                status = produce_from_file(w, buffer, out, err);
        }
        written = w->data_offset + w->byte_size;
    }
    free(buffer);
    return status;
}
