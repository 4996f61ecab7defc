/* file_io.c — atomic writes and read-only mappings (POSIX). */
#define _DEFAULT_SOURCE /* madvise */
#define _XOPEN_SOURCE 700 /* realpath is an XSI extension of POSIX.1-2008 */
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "progress.h"

static kiln_status io_fail(kiln_error *err, const char *what, const char *path)
{
    return kiln_fail(err, KILN_ERR_IO, "%s '%s': %s", what, path, strerror(errno));
}

static kiln_status write_all(int fd, const uint8_t *data, size_t size, bool mapped, const char *path,
                             kiln_progress *progress, kiln_error *err)
{
    const uint8_t *released = data;
    /* A mapping's pages are given back every 4 MiB, so at most that much of it is resident. */
    size_t step = mapped ? (size_t)4 << 20 : (size_t)KILN_PROGRESS_STEP;
    while (size > 0) {
        size_t piece = size > step ? step : size;
        ssize_t written = write(fd, data, piece);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return io_fail(err, "cannot write", path);
        }
        data += written;
        size -= (size_t)written;
        kiln_progress_advance(progress, (uint64_t)written);
        if (mapped) {
            kiln_mapped_pages_release(released, (size_t)(data - released));
            released = data;
        }
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

/*
 * Where the bytes for `path` go, as open(path, O_WRONLY | O_CREAT |
 * O_TRUNC) would write them: a symbolic link is followed to its target
 * (so the link stays a link and the file it names is replaced), anything
 * else is `path` itself. `*existing` says whether the destination exists,
 * and `info` describes it then. A link whose target cannot be resolved (it
 * dangles, loops, or its directory is unreadable) is refused rather than
 * replaced by a regular file, and so is a destination that is not a
 * regular file (a directory, a FIFO, a device).
 */
static kiln_status resolve_destination(const char *path, char **target, bool *existing, struct stat *info,
                                       kiln_error *err)
{
    struct stat link_info;
    *target = NULL;
    *existing = false;
    if (lstat(path, &link_info) != 0) {
        if (errno != ENOENT)
            return io_fail(err, "cannot stat", path);
        *target = strdup(path);
    } else if (S_ISLNK(link_info.st_mode)) {
        *target = realpath(path, NULL);
        if (!*target)
            return io_fail(err, "cannot resolve the symbolic link", path);
    } else {
        *target = strdup(path);
    }
    if (!*target)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory writing '%s'", path);
    if (stat(*target, info) == 0) {
        *existing = true;
        if (!S_ISREG(info->st_mode))
            return kiln_fail(err, KILN_ERR_IO, "'%s' exists and is not a regular file", *target);
    } else if (errno != ENOENT) {
        return io_fail(err, "cannot stat", *target);
    }
    return KILN_OK;
}

/* A 64-bit mixer (splitmix64's finaliser): spreads a counter, the time
 * and the process id over the temporary file's name. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

#define TEMP_SUFFIX ".tmp-XXXXXX"
#define TEMP_ATTEMPTS 100

/*
 * Create `temp_path` (`path` followed by TEMP_SUFFIX, whose X's are
 * replaced) exclusively, with `mode`: the kernel applies the umask (and a
 * default ACL) itself, so the process umask is never read or changed. A
 * name that exists is retried with another. O_EXCL refuses a symbolic
 * link planted at the name. @return the descriptor, or -1 with errno.
 */
static int create_temp(char *temp_path, size_t path_len, mode_t mode)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint_fast64_t counter;
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        uint64_t bits = mix(atomic_fetch_add(&counter, 1) ^ mix((uint64_t)now.tv_nsec) ^
                            mix((uint64_t)now.tv_sec ^ (uint64_t)getpid() << 32));
        char *x = temp_path + path_len + sizeof TEMP_SUFFIX - 7;
        for (int i = 0; i < 6; i++, bits /= 62)
            x[i] = letters[bits % 62];
        int fd = open(temp_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/*
 * Give the new file the owner, group and mode of the file it replaces,
 * so that rewriting an artifact in place (signing it, adding evidence)
 * does not make a private file readable to others. The owner and the
 * group are kept where the process may set them (root; a group the user
 * belongs to) and left as created otherwise; the set-user-ID and
 * set-group-ID bits are kept only with the owner and group they belong to.
 */
static kiln_status keep_attributes(int fd, const struct stat *old, const char *temp_path, kiln_error *err)
{
    mode_t mode = old->st_mode & 07777;
    if (fchown(fd, old->st_uid, old->st_gid) != 0) {
        if (errno != EPERM)
            return io_fail(err, "cannot set the owner of", temp_path);
        mode &= (mode_t)~(S_ISUID | S_ISGID);
        if (fchown(fd, (uid_t)-1, old->st_gid) != 0 && errno != EPERM)
            return io_fail(err, "cannot set the group of", temp_path);
    }
    /* After fchown, which may clear the set-ID bits. */
    if (fchmod(fd, mode) != 0)
        return io_fail(err, "cannot set the mode of", temp_path);
    return KILN_OK;
}

kiln_status kiln_atomic_write_file(const char *path, const void *data, size_t size, kiln_error *err)
{
    kiln_byte_range whole = {data, size, false};
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
    kiln_atomic_file file;
    KILN_TRY(kiln_atomic_file_begin(path, &file, err));
    kiln_status status = KILN_OK;
    for (size_t i = 0; status == KILN_OK && i < count; i++)
        status = write_all(file.fd, parts[i].data, parts[i].size, parts[i].mapped, file.temp_path, progress, err);
    if (status != KILN_OK) {
        kiln_atomic_file_abort(&file);
        return status;
    }
    return kiln_atomic_file_commit(&file, err);
}

static void atomic_file_release(kiln_atomic_file *file)
{
    free(file->target);
    free(file->temp_path);
    free(file->dir);
    memset(file, 0, sizeof *file);
    file->fd = -1;
}

kiln_status kiln_atomic_file_begin(const char *path, kiln_atomic_file *file, kiln_error *err)
{
    bool existing;
    struct stat old;
    memset(file, 0, sizeof *file);
    file->fd = -1;
    file->path = path;
    kiln_status status = resolve_destination(path, &file->target, &existing, &old, err);
    if (status != KILN_OK) {
        atomic_file_release(file);
        return status;
    }
    size_t target_len = strlen(file->target);
    file->temp_path = malloc(target_len + sizeof TEMP_SUFFIX);
    file->dir = directory_of(file->target);
    if (!file->temp_path || !file->dir) {
        atomic_file_release(file);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory writing '%s'", path);
    }
    memcpy(file->temp_path, file->target, target_len);
    memcpy(file->temp_path + target_len, TEMP_SUFFIX, sizeof TEMP_SUFFIX);
    /* A replacement starts private and gets the old file's attributes
     * before any byte is written; a new file gets what a plain open()
     * would give: 0666 less the umask, applied by the kernel. */
    file->fd = create_temp(file->temp_path, target_len, existing ? 0600 : 0666);
    if (file->fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
        /* Name what is missing, not the temporary file nobody asked for. */
        status = kiln_fail(err, KILN_ERR_IO, "cannot write '%s': the directory '%s' does not exist (create it first)",
                           path, file->dir);
    } else if (file->fd < 0) {
        status = io_fail(err, "cannot create a temporary file beside", file->target);
    } else if (existing) {
        status = keep_attributes(file->fd, &old, file->temp_path, err);
        if (status != KILN_OK) {
            kiln_atomic_file_abort(file);
            return status;
        }
    }
    if (status != KILN_OK)
        atomic_file_release(file);
    return status;
}

kiln_status kiln_atomic_file_write_at(kiln_atomic_file *file, uint64_t offset, const void *data, size_t size,
                                      kiln_error *err)
{
    const uint8_t *bytes = data;
    while (size > 0) {
        if (offset > (uint64_t)INT64_MAX)
            return kiln_fail(err, KILN_ERR_LIMIT, "cannot write '%s': offset %llu is too large", file->path,
                             (unsigned long long)offset);
        size_t piece = size > KILN_PROGRESS_STEP ? (size_t)KILN_PROGRESS_STEP : size;
        ssize_t written = pwrite(file->fd, bytes, piece, (off_t)offset);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return io_fail(err, "cannot write", file->temp_path);
        }
        if (written == 0)
            return kiln_fail(err, KILN_ERR_IO, "cannot write '%s': the file system accepted no bytes", file->temp_path);
        bytes += written;
        size -= (size_t)written;
        offset += (uint64_t)written;
    }
    return KILN_OK;
}

kiln_status kiln_atomic_file_commit(kiln_atomic_file *file, kiln_error *err)
{
    kiln_status status = KILN_OK;
    if (fsync(file->fd) != 0)
        status = io_fail(err, "cannot fsync", file->temp_path);
    if (close(file->fd) != 0 && status == KILN_OK)
        status = io_fail(err, "cannot close", file->temp_path);
    file->fd = -1;
    if (status == KILN_OK && rename(file->temp_path, file->target) != 0)
        status = io_fail(err, "cannot rename the temporary file to", file->target);
    if (status != KILN_OK) {
        unlink(file->temp_path);
        atomic_file_release(file);
        return status;
    }
    int dir_fd = open(file->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        /* Persist the rename itself; a failure here does not tear the file. */
        (void)fsync(dir_fd);
        close(dir_fd);
    }
    atomic_file_release(file);
    return KILN_OK;
}

void kiln_atomic_file_abort(kiln_atomic_file *file)
{
    if (file->fd >= 0) {
        close(file->fd);
        unlink(file->temp_path);
    }
    atomic_file_release(file);
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

void kiln_mapped_pages_release(const uint8_t *bytes, size_t size)
{
#if defined(__linux__) && defined(MADV_DONTNEED)
    long page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0)
        return;
    uintptr_t page = (uintptr_t)page_size, start = (uintptr_t)bytes, end = start + size;
    uintptr_t first = (start + page - 1) / page * page, last = end / page * page;
    if (last > first)
        (void)madvise((void *)first, last - first, MADV_DONTNEED);
#else
    (void)bytes;
    (void)size;
#endif
}

void kiln_mapped_file_release(kiln_mapped_file *file)
{
    if (file->mapping)
        munmap(file->mapping, file->mapping_size);
    memset(file, 0, sizeof *file);
}
