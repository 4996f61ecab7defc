/* file_write.c — the public face of the container layer's atomic file writing. */
#include <kiln/util.h>

#include "format/file_io.h"

kiln_status kiln_write_file_atomic(const char *path, const void *data, size_t size, kiln_error *err)
{
    return kiln_atomic_write_file(path, data, size, err);
}
