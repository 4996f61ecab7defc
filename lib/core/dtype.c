/* dtype.c — element types: names, sizes, and what this runtime supports. */
#include <string.h>

#include <kiln/kiln.h>

#include "dtype.h"
#include "error.h"

static const struct {
    kiln_dtype dtype;
    const char *name;
    size_t size;
    bool supported;
} dtype_table[] = {
    {KILN_F32, "f32", 4, true},   {KILN_F64, "f64", 8, true},   {KILN_F16, "f16", 2, true},
    {KILN_BF16, "bf16", 2, true}, {KILN_I8, "i8", 1, true},     {KILN_I16, "i16", 2, true},
    {KILN_I32, "i32", 4, true},   {KILN_I64, "i64", 8, true},   {KILN_U8, "u8", 1, true},
    {KILN_U16, "u16", 2, true},   {KILN_U32, "u32", 4, true},   {KILN_U64, "u64", 8, true},
    {KILN_BOOL, "bool", 1, true},
};

#define DTYPE_COUNT (sizeof dtype_table / sizeof dtype_table[0])

const char *kiln_dtype_name(kiln_dtype dtype)
{
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (dtype_table[i].dtype == dtype)
            return dtype_table[i].name;
    return "invalid";
}

size_t kiln_dtype_size(kiln_dtype dtype)
{
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (dtype_table[i].dtype == dtype)
            return dtype_table[i].size;
    return 0;
}

bool kiln_dtype_is_supported(kiln_dtype dtype)
{
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (dtype_table[i].dtype == dtype)
            return dtype_table[i].supported;
    return false;
}

kiln_status kiln_dtype_from_name(const char *name, kiln_dtype *out)
{
    for (size_t i = 0; name && i < DTYPE_COUNT; i++) {
        if (strcmp(dtype_table[i].name, name) == 0) {
            *out = dtype_table[i].dtype;
            return KILN_OK;
        }
    }
    return KILN_ERR_INVALID_ARGUMENT;
}

bool kiln_dtype_is_floating(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
}

bool kiln_dtype_is_integer(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_I8: case KILN_I16: case KILN_I32: case KILN_I64:
    case KILN_U8: case KILN_U16: case KILN_U32: case KILN_U64:
        return true;
    default:
        return false;
    }
}

bool kiln_dtype_is_arithmetic(kiln_dtype dtype)
{
    return kiln_dtype_is_floating(dtype) || kiln_dtype_is_integer(dtype);
}

bool kiln_dtype_is_half(kiln_dtype dtype)
{
    return dtype == KILN_F16 || dtype == KILN_BF16;
}
