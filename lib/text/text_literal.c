/*
 * text_literal.c — the spelling of literals in the text format: numbers,
 * the words nan/inf/-inf/true/false, and quoted strings, in both
 * directions. Printing uses the shortest text that reads back to the same
 * bits, so a disassembled program reassembles byte for byte.
 */
#include "text_literal.h"

#include <errno.h>
#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

/* The NaN that `nan` stands for: the default quiet NaN, sign bit clear. */
static const uint32_t quiet_nan_f32 = 0x7fc00000u;
static const uint64_t quiet_nan_f64 = 0x7ff8000000000000u;
static const uint16_t quiet_nan_f16 = 0x7e00u;
static const uint16_t quiet_nan_bf16 = 0x7fc0u;

bool kiln_text_is_literal_word(const char *text, size_t length)
{
    static const char *const words[] = {"nan", "inf", "true", "false"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == length && memcmp(words[i], text, length) == 0)
            return true;
    return false;
}

/* [-]digits, nothing else: the lexer's integer token. */
static bool is_integer_text(const char *text)
{
    const char *c = text + (text[0] == '-');
    if (!*c)
        return false;
    for (; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    return true;
}

/* [-]digits[.digits][(e|E)[+|-]digits]: the lexer's number token, so that
 * strtod never sees the hex, "infinity" or "nan(...)" forms it also takes. */
static bool is_number_text(const char *text)
{
    const char *c = text + (text[0] == '-');
    const char *digits = c;
    while (*c >= '0' && *c <= '9')
        c++;
    if (c == digits)
        return false;
    if (*c == '.') {
        digits = ++c;
        while (*c >= '0' && *c <= '9')
            c++;
        if (c == digits)
            return false;
    }
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        digits = c;
        while (*c >= '0' && *c <= '9')
            c++;
        if (c == digits)
            return false;
    }
    return *c == '\0';
}

/* "-0", "-000": a minus sign in front of zero, which every integer dtype holds. */
static bool is_negative_zero_text(const char *text)
{
    if (text[0] != '-' || !text[1])
        return false;
    for (const char *c = text + 1; *c; c++)
        if (*c != '0')
            return false;
    return true;
}

static kiln_literal_problem parse_signed(const char *text, int64_t lo, int64_t hi, size_t size,
                                         uint8_t out[8])
{
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno == ERANGE || *end || value < lo || value > hi)
        return KILN_LITERAL_OUT_OF_RANGE;
    int64_t wide = value;
    /* Little-endian host (as npy.c and the codec assume): the low bytes
     * of the 64-bit value are the narrow element. */
    memcpy(out, &wide, size);
    return KILN_LITERAL_OK;
}

static kiln_literal_problem parse_unsigned(const char *text, uint64_t hi, size_t size, uint8_t out[8])
{
    if (text[0] == '-') {
        if (!is_negative_zero_text(text))
            return KILN_LITERAL_OUT_OF_RANGE;
        memset(out, 0, size);
        return KILN_LITERAL_OK;
    }
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE || *end || value > hi)
        return KILN_LITERAL_OUT_OF_RANGE;
    uint64_t wide = value;
    memcpy(out, &wide, size);
    return KILN_LITERAL_OK;
}

static kiln_literal_problem parse_f64(const char *text, uint8_t out[8])
{
    double value;
    if (strcmp(text, "nan") == 0) {
        memcpy(out, &quiet_nan_f64, 8);
        return KILN_LITERAL_OK;
    }
    if (strcmp(text, "inf") == 0 || strcmp(text, "-inf") == 0) {
        value = text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    } else {
        if (!is_number_text(text))
            return KILN_LITERAL_NOT_NUMBER;
        char *end;
        errno = 0;
        value = strtod(text, &end);
        if (*end || end == text)
            return KILN_LITERAL_NOT_NUMBER;
        /* ERANGE also flags results that are merely subnormal; only an
         * overflow to infinity loses the value. */
        if (isinf(value))
            return KILN_LITERAL_OUT_OF_RANGE;
    }
    memcpy(out, &value, 8);
    return KILN_LITERAL_OK;
}

static kiln_literal_problem parse_f32(const char *text, uint8_t out[8])
{
    float value;
    if (strcmp(text, "nan") == 0) {
        memcpy(out, &quiet_nan_f32, 4);
        return KILN_LITERAL_OK;
    }
    if (strcmp(text, "inf") == 0 || strcmp(text, "-inf") == 0) {
        value = text[0] == '-' ? -HUGE_VALF : HUGE_VALF;
    } else {
        if (!is_number_text(text))
            return KILN_LITERAL_NOT_NUMBER;
        char *end;
        errno = 0;
        value = strtof(text, &end); /* one rounding, straight to binary32 */
        if (*end || end == text)
            return KILN_LITERAL_NOT_NUMBER;
        if (isinf(value))
            return KILN_LITERAL_OUT_OF_RANGE;
    }
    memcpy(out, &value, 4);
    return KILN_LITERAL_OK;
}

/* strtod of `text` rounded in `mode` (glibc's strtod honours the rounding mode). */
static double strtod_rounding(const char *text, int mode, char **end)
{
    int previous = fegetround();
    fesetround(mode);
    double value = strtod(text, end);
    fesetround(previous);
    return value;
}

/*
 * f16 and bf16: rounded once from the decimal value. The two directed
 * roundings of strtod bracket it; when they differ the one with the odd
 * last bit is the value rounded to odd, which, narrowed to f32 and then
 * to the half type (each step at least two bits narrower), gives the
 * decimal correctly rounded to nearest, ties to even (half.h).
 */
static kiln_literal_problem parse_half(kiln_dtype dtype, const char *text, uint8_t out[8])
{
    uint16_t bits;
    if (strcmp(text, "nan") == 0) {
        bits = dtype == KILN_F16 ? quiet_nan_f16 : quiet_nan_bf16;
    } else if (strcmp(text, "inf") == 0 || strcmp(text, "-inf") == 0) {
        bits = (uint16_t)((text[0] == '-' ? 0x8000u : 0) | (dtype == KILN_F16 ? 0x7c00u : 0x7f80u));
    } else {
        if (!is_number_text(text))
            return KILN_LITERAL_NOT_NUMBER;
        char *end_down, *end_up;
        double down = strtod_rounding(text, FE_DOWNWARD, &end_down);
        double up = strtod_rounding(text, FE_UPWARD, &end_up);
        if (*end_down || end_down == text || *end_up || end_up == text)
            return KILN_LITERAL_NOT_NUMBER;
        uint64_t down_bits;
        memcpy(&down_bits, &down, sizeof down_bits);
        double odd = down == up || (down_bits & 1) ? down : up;
        float narrowed = kiln_f64_to_f32_odd(odd);
        bits = dtype == KILN_F16 ? kiln_f32_to_f16(narrowed) : kiln_f32_to_bf16(narrowed);
        if ((bits & 0x7fffu) == (dtype == KILN_F16 ? 0x7c00u : 0x7f80u))
            return KILN_LITERAL_OUT_OF_RANGE;
    }
    memcpy(out, &bits, 2);
    return KILN_LITERAL_OK;
}

kiln_literal_problem kiln_text_literal_parse(kiln_dtype dtype, const char *text, uint8_t out[8])
{
    memset(out, 0, 8);
    switch (dtype) {
    case KILN_F64: return parse_f64(text, out);
    case KILN_F32: return parse_f32(text, out);
    case KILN_F16:
    case KILN_BF16: return parse_half(dtype, text, out);
    case KILN_BOOL:
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
            out[0] = 1;
        else if (strcmp(text, "false") != 0 && strcmp(text, "0") != 0)
            return KILN_LITERAL_NOT_BOOL;
        return KILN_LITERAL_OK;
    default: break;
    }
    if (!kiln_dtype_is_supported(dtype))
        return KILN_LITERAL_UNSUPPORTED_DTYPE;
    if (!is_integer_text(text))
        return KILN_LITERAL_NOT_INTEGER;
    switch (dtype) {
    case KILN_I8: return parse_signed(text, INT8_MIN, INT8_MAX, 1, out);
    case KILN_I16: return parse_signed(text, INT16_MIN, INT16_MAX, 2, out);
    case KILN_I32: return parse_signed(text, INT32_MIN, INT32_MAX, 4, out);
    case KILN_I64: return parse_signed(text, INT64_MIN, INT64_MAX, 8, out);
    case KILN_U8: return parse_unsigned(text, UINT8_MAX, 1, out);
    case KILN_U16: return parse_unsigned(text, UINT16_MAX, 2, out);
    case KILN_U32: return parse_unsigned(text, UINT32_MAX, 4, out);
    case KILN_U64: return parse_unsigned(text, UINT64_MAX, 8, out);
    default: return KILN_LITERAL_UNSUPPORTED_DTYPE;
    }
}

/* Shortest "%.*g" of `value` that strtod reads back to the same bits. */
static void format_f64(double value, char out[KILN_TEXT_LITERAL_MAX])
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, KILN_TEXT_LITERAL_MAX, "%.*g", digits, value);
        double back = strtod(out, NULL);
        if (memcmp(&back, &value, sizeof value) == 0)
            return;
    }
}

static void format_f32(float value, char out[KILN_TEXT_LITERAL_MAX])
{
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(out, KILN_TEXT_LITERAL_MAX, "%.*g", digits, (double)value);
        float back = strtof(out, NULL);
        if (memcmp(&back, &value, sizeof value) == 0)
            return;
    }
}

/* Shortest "%.*g" of a half value that parse_half reads back to the same bits. */
static void format_half(kiln_dtype dtype, uint16_t bits, char out[KILN_TEXT_LITERAL_MAX])
{
    double value = dtype == KILN_F16 ? (double)kiln_f16_to_f32(bits) : (double)kiln_bf16_to_f32(bits);
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(out, KILN_TEXT_LITERAL_MAX, "%.*g", digits, value);
        uint8_t back[8];
        if (parse_half(dtype, out, back) == KILN_LITERAL_OK && memcmp(back, &bits, 2) == 0)
            return;
    }
}

bool kiln_text_literal_format(kiln_dtype dtype, const uint8_t *element, char out[KILN_TEXT_LITERAL_MAX])
{
    out[0] = '\0';
    switch (dtype) {
    case KILN_F64: {
        double value;
        uint64_t bits;
        memcpy(&value, element, 8);
        memcpy(&bits, element, 8);
        if (isnan(value)) {
            snprintf(out, KILN_TEXT_LITERAL_MAX, "nan");
            return bits == quiet_nan_f64;
        }
        if (isinf(value))
            snprintf(out, KILN_TEXT_LITERAL_MAX, "%s", value < 0 ? "-inf" : "inf");
        else
            format_f64(value, out);
        return true;
    }
    case KILN_F32: {
        float value;
        uint32_t bits;
        memcpy(&value, element, 4);
        memcpy(&bits, element, 4);
        if (isnan(value)) {
            snprintf(out, KILN_TEXT_LITERAL_MAX, "nan");
            return bits == quiet_nan_f32;
        }
        if (isinf(value))
            snprintf(out, KILN_TEXT_LITERAL_MAX, "%s", value < 0 ? "-inf" : "inf");
        else
            format_f32(value, out);
        return true;
    }
    case KILN_F16:
    case KILN_BF16: {
        uint16_t bits;
        memcpy(&bits, element, 2);
        uint16_t magnitude = bits & 0x7fffu, infinity = dtype == KILN_F16 ? 0x7c00u : 0x7f80u;
        if (magnitude > infinity) {
            snprintf(out, KILN_TEXT_LITERAL_MAX, "nan");
            return bits == (dtype == KILN_F16 ? quiet_nan_f16 : quiet_nan_bf16);
        }
        if (magnitude == infinity)
            snprintf(out, KILN_TEXT_LITERAL_MAX, "%s", bits & 0x8000u ? "-inf" : "inf");
        else
            format_half(dtype, bits, out);
        return true;
    }
    case KILN_BOOL:
        snprintf(out, KILN_TEXT_LITERAL_MAX, "%s", element[0] ? "true" : "false");
        return element[0] <= 1;
    case KILN_I8: { int8_t v; memcpy(&v, element, 1); snprintf(out, KILN_TEXT_LITERAL_MAX, "%d", v); return true; }
    case KILN_I16: { int16_t v; memcpy(&v, element, 2); snprintf(out, KILN_TEXT_LITERAL_MAX, "%d", v); return true; }
    case KILN_I32: { int32_t v; memcpy(&v, element, 4); snprintf(out, KILN_TEXT_LITERAL_MAX, "%" PRId32, v); return true; }
    case KILN_I64: { int64_t v; memcpy(&v, element, 8); snprintf(out, KILN_TEXT_LITERAL_MAX, "%" PRId64, v); return true; }
    case KILN_U8: { uint8_t v; memcpy(&v, element, 1); snprintf(out, KILN_TEXT_LITERAL_MAX, "%u", v); return true; }
    case KILN_U16: { uint16_t v; memcpy(&v, element, 2); snprintf(out, KILN_TEXT_LITERAL_MAX, "%u", v); return true; }
    case KILN_U32: { uint32_t v; memcpy(&v, element, 4); snprintf(out, KILN_TEXT_LITERAL_MAX, "%" PRIu32, v); return true; }
    case KILN_U64: { uint64_t v; memcpy(&v, element, 8); snprintf(out, KILN_TEXT_LITERAL_MAX, "%" PRIu64, v); return true; }
    default: return false;
    }
}

/* Length of the well-formed UTF-8 sequence at `s` (shortest form, no
 * surrogates, at most U+10FFFF), or 0 if it is not one. */
static size_t utf8_sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t length;
    uint32_t code;
    if (c >= 0xc2 && c <= 0xdf) {
        length = 2;
        code = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        length = 3;
        code = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        length = 4;
        code = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < length; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        code = (code << 6) | (s[i] & 0x3f);
    }
    if ((length == 3 && code < 0x800) || (length == 4 && (code < 0x10000 || code > 0x10ffff)) ||
        (code >= 0xd800 && code <= 0xdfff))
        return 0;
    return length;
}

bool kiln_text_quote(kiln_text_buffer *out, const char *bytes)
{
    const unsigned char *s = (const unsigned char *)bytes;
    kiln_text_buffer_puts(out, "\"");
    while (*s) {
        size_t run;
        if (*s == '"') {
            kiln_text_buffer_puts(out, "\\\"");
            s++;
        } else if (*s == '\\') {
            kiln_text_buffer_puts(out, "\\\\");
            s++;
        } else if (*s == '\n') {
            kiln_text_buffer_puts(out, "\\n");
            s++;
        } else if (*s == '\t') {
            kiln_text_buffer_puts(out, "\\t");
            s++;
        } else if (*s < 0x20 || *s == 0x7f) {
            kiln_text_buffer_printf(out, "\\x%02x", *s);
            s++;
        } else if (*s < 0x80) {
            kiln_text_buffer_append(out, s, 1);
            s++;
        } else if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
            /* A C1 control (U+0080..U+009F): some terminals obey it as ESC [, so it is spelled out. */
            kiln_text_buffer_printf(out, "\\x%02x\\x%02x", s[0], s[1]);
            s += 2;
        } else if ((run = utf8_sequence_length(s)) != 0) {
            kiln_text_buffer_append(out, s, run);
            s += run;
        } else {
            kiln_text_buffer_printf(out, "\\x%02x", *s);
            s++;
        }
    }
    return kiln_text_buffer_puts(out, "\"");
}
