/*
 * struct_size.c — reading and filling the structs kiln versions by their
 * leading struct_size (kiln.h's conventions): a caller compiled against an
 * older header passes a shorter struct, one compiled against a newer
 * header a longer one, and both must work (kiln_struct_read,
 * kiln_struct_fill).
 */
#include <string.h>

#include <kiln/util.h>
#include <kiln/version.h>

#include "error.h"

void kiln_struct_fill(void *out, size_t out_size, const void *in, size_t size)
{
    if (out_size < sizeof out_size)
        return; /* no room for struct_size: a caller's error, and nothing to write safely */
    size_t common = out_size < size ? out_size : size;
    memcpy(out, in, common);
    memset((unsigned char *)out + common, 0, out_size - common);
    memcpy(out, &out_size, sizeof out_size);
}

kiln_status kiln_struct_read(void *out, size_t size, const void *in, size_t min_size, const char *type_name,
                             kiln_error *err)
{
    if (!in)
        return KILN_OK; /* the caller gave none: the defaults in `out` stand */
    size_t given;
    memcpy(&given, in, sizeof given);
    if (given < min_size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "%s.struct_size is %zu, below its smallest size %zu: fill the struct with its "
                         "kiln_*_default()", type_name, given, min_size);
    /* A newer caller's fields this library does not know must be unset
     * (zero), or the caller asked for something this library cannot do. */
    const unsigned char *bytes = in;
    for (size_t i = size; i < given; i++)
        if (bytes[i])
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "%s has byte %zu set, past the %zu bytes this kiln (%s) knows: a field of a "
                             "newer kiln; leave it 0 or run with that kiln", type_name, i, size,
                             KILN_VERSION_STRING);
    memcpy(out, in, given < size ? given : size);
    memcpy(out, &size, sizeof size);
    return KILN_OK;
}
