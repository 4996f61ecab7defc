/* value_summary.c — the values of a tensor in one line (value_summary.h). */
#include "value_summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>


static bool is_float(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
}

static bool is_unsigned(kiln_dtype dtype)
{
    return dtype == KILN_U8 || dtype == KILN_U16 || dtype == KILN_U32 || dtype == KILN_U64 || dtype == KILN_BOOL;
}

static double float_at(kiln_dtype dtype, const void *data, uint64_t i)
{
    switch (dtype) {
    case KILN_F32: return ((const float *)data)[i];
    case KILN_F64: return ((const double *)data)[i];
    case KILN_F16: return kiln_f16_to_f32(((const uint16_t *)data)[i]);
    default: return kiln_bf16_to_f32(((const uint16_t *)data)[i]);
    }
}

/* Integers are kept whole (an i64 or u64 past 2^53 has no exact double). */
static int64_t signed_at(kiln_dtype dtype, const void *data, uint64_t i)
{
    switch (dtype) {
    case KILN_I8: return ((const int8_t *)data)[i];
    case KILN_I16: return ((const int16_t *)data)[i];
    case KILN_I32: return ((const int32_t *)data)[i];
    default: return ((const int64_t *)data)[i];
    }
}

static uint64_t unsigned_at(kiln_dtype dtype, const void *data, uint64_t i)
{
    switch (dtype) {
    case KILN_U8: case KILN_BOOL: return ((const uint8_t *)data)[i];
    case KILN_U16: return ((const uint16_t *)data)[i];
    case KILN_U32: return ((const uint32_t *)data)[i];
    default: return ((const uint64_t *)data)[i];
    }
}

/* Appends to a fixed buffer, keeping track of where the text ends. */
typedef struct summary_text {
    char *text;
    size_t size, used;
} summary_text;

static void append(summary_text *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(summary_text *out, const char *fmt, ...)
{
    if (out->used >= out->size)
        return;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(out->text + out->used, out->size - out->used, fmt, args);
    va_end(args);
    if (n > 0)
        out->used = out->used + (size_t)n < out->size ? out->used + (size_t)n : out->size;
}

static void summarise_floats(const kiln_tensor *t, summary_text *out)
{
    kiln_dtype dtype = kiln_tensor_dtype(t);
    const void *data = kiln_tensor_const_data(t);
    uint64_t count = kiln_tensor_element_count(t), nans = 0, infinities = 0, finite = 0;
    double min = INFINITY, max = -INFINITY, sum = 0;
    for (uint64_t i = 0; i < count; i++) {
        double v = float_at(dtype, data, i);
        if (isnan(v)) {
            nans++;
            continue;
        }
        min = v < min ? v : min;
        max = v > max ? v : max;
        if (isinf(v))
            infinities++;
        else {
            sum += v;
            finite++;
        }
    }
    if (nans == count)
        append(out, "  min -  max -");
    else
        append(out, "  min %.6g  max %.6g", min, max);
    if (finite)
        append(out, "  mean %.6g", sum / (double)finite);
    else
        append(out, "  mean -");
    append(out, "  nan %" PRIu64 "  inf %" PRIu64, nans, infinities);
}

static void summarise_integers(const kiln_tensor *t, summary_text *out)
{
    kiln_dtype dtype = kiln_tensor_dtype(t);
    const void *data = kiln_tensor_const_data(t);
    uint64_t count = kiln_tensor_element_count(t);
    if (is_unsigned(dtype)) {
        uint64_t min = UINT64_MAX, max = 0;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t v = unsigned_at(dtype, data, i);
            min = v < min ? v : min;
            max = v > max ? v : max;
        }
        append(out, "  min %" PRIu64 "  max %" PRIu64, min, max);
        return;
    }
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (uint64_t i = 0; i < count; i++) {
        int64_t v = signed_at(dtype, data, i);
        min = v < min ? v : min;
        max = v > max ? v : max;
    }
    append(out, "  min %" PRId64 "  max %" PRId64, min, max);
}

void value_summary_format(const kiln_tensor *t, char *text, size_t size)
{
    summary_text out = {text, size, 0};
    if (size)
        text[0] = '\0';
    kiln_dtype dtype = kiln_tensor_dtype(t);
    const void *data = kiln_tensor_const_data(t);
    uint64_t count = kiln_tensor_element_count(t);
    if (count == 0) {
        append(&out, "no elements");
        return;
    }
    for (uint64_t i = 0; i < count && i < VALUE_SUMMARY_FIRST; i++) {
        const char *separator = i ? ", " : "";
        double value = is_float(dtype) ? float_at(dtype, data, i) : 0;
        if (is_float(dtype) && isnan(value))
            append(&out, "%snan", separator); /* not "-nan": a NaN's sign bit means nothing here */
        else if (is_float(dtype))
            append(&out, "%s%.6g", separator, value);
        else if (is_unsigned(dtype))
            append(&out, "%s%" PRIu64, separator, unsigned_at(dtype, data, i));
        else
            append(&out, "%s%" PRId64, separator, signed_at(dtype, data, i));
    }
    if (count > VALUE_SUMMARY_FIRST)
        append(&out, ", ...");
    if (is_float(dtype))
        summarise_floats(t, &out);
    else
        summarise_integers(t, &out);
}
