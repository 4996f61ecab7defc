/* file_io.c — atomic writes and read-only mappings (POSIX). */
#define _POSIX_C_SOURCE 200809L
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "progress.h"

static kiln_status io_fail(kiln_error *err, const char *what, const char *path)
{
    return kiln_fail(err, KILN_ERR_IO, "%s '%s': %s", what, path, strerror(errno));
}

static kiln_status write_all(int fd, const uint8_t *data, size_t size, const char *path, kiln_progress *progress,
                             kiln_error *err)
{
    while (size > 0) {
        size_t piece = size > KILN_PROGRESS_STEP ? (size_t)KILN_PROGRESS_STEP : size;
        ssize_t written = write(fd, data, piece);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return io_fail(err, "cannot write", path);
        }
        data += written;
        size -= (size_t)written;
        kiln_progress_advance(progress, (uint64_t)written);
    }
    return KILN_OK;
}

/* The directory part of `path` ("." when there is none), for fsync. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    char *dir = malloc((size_t)(slash - path) + 1);
    if (dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    return dir;
}

kiln_status kiln_atomic_write_file(const char *path, const void *data, size_t size, kiln_error *err)
{
    kiln_byte_range whole = {data, size};
    return kiln_atomic_write_parts(path, &whole, 1, err);
}

kiln_status kiln_atomic_write_parts(const char *path, const kiln_byte_range *parts, size_t count,
                                    kiln_error *err)
{
    return kiln_atomic_write_parts_progress(path, parts, count, NULL, err);
}

kiln_status kiln_atomic_write_parts_progress(const char *path, const kiln_byte_range *parts, size_t count,
                                             kiln_progress *progress, kiln_error *err)
{
    size_t path_len = strlen(path);
    char *temp_path = malloc(path_len + 16);
    char *dir = directory_of(path);
    kiln_status status = KILN_OK;
    int fd = -1;
    if (!temp_path || !dir) {
        status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory writing '%s'", path);
        goto done;
    }
    memcpy(temp_path, path, path_len);
    memcpy(temp_path + path_len, ".tmp-XXXXXX", 12);
    fd = mkstemp(temp_path);
    if (fd < 0) {
        status = io_fail(err, "cannot create a temporary file beside", path);
        goto done;
    }
    /* mkstemp creates 0600; an artifact is not secret, so use the usual
     * umask-governed mode a plain open() would give. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        status = io_fail(err, "cannot set the mode of", temp_path);
    for (size_t i = 0; status == KILN_OK && i < count; i++)
        status = write_all(fd, parts[i].data, parts[i].size, temp_path, progress, err);
    if (status == KILN_OK && fsync(fd) != 0)
        status = io_fail(err, "cannot fsync", temp_path);
    if (close(fd) != 0 && status == KILN_OK)
        status = io_fail(err, "cannot close", temp_path);
    fd = -1;
    if (status == KILN_OK && rename(temp_path, path) != 0)
        status = io_fail(err, "cannot rename the temporary file to", path);
    if (status != KILN_OK) {
        unlink(temp_path);
        goto done;
    }
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dir_fd >= 0) {
        /* Persist the rename itself; a failure here does not tear the file. */
        (void)fsync(dir_fd);
        close(dir_fd);
    }
done:
    free(temp_path);
    free(dir);
    return status;
}

kiln_status kiln_mapped_file_open(const char *path, kiln_mapped_file *out, kiln_error *err)
{
    struct stat info;
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return io_fail(err, "cannot open", path);
    if (fstat(fd, &info) != 0) {
        kiln_status status = io_fail(err, "cannot stat", path);
        close(fd);
        return status;
    }
    if (!S_ISREG(info.st_mode)) {
        close(fd);
        return kiln_fail(err, KILN_ERR_IO, "'%s' is not a regular file", path);
    }
    if (info.st_size > 0) {
        void *mapping = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping == MAP_FAILED) {
            kiln_status status = io_fail(err, "cannot map", path);
            close(fd);
            return status;
        }
        out->mapping = mapping;
        out->mapping_size = (size_t)info.st_size;
        out->bytes = mapping;
        out->size = (size_t)info.st_size;
    }
    close(fd);
    return KILN_OK;
}

void kiln_mapped_file_release(kiln_mapped_file *file)
{
    if (file->mapping)
        munmap(file->mapping, file->mapping_size);
    memset(file, 0, sizeof *file);
}
