/*
 * npy.c — reading and writing NumPy .npy files.
 *
 * A .npy file is the 6-byte magic "\x93NUMPY", a major/minor version, a
 * little-endian header length (u16 for 1.0, u32 for 2.0 and 3.0), a header
 * that is a Python dict literal such as
 *     {'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }
 * padded with spaces and ending in '\n', and then the raw element bytes.
 *
 * Files are untrusted input, so the header is read by a small strict parser
 * written for exactly that dict (no general Python evaluation), every size
 * derived from the file is overflow-checked, and the data length is matched
 * against the shape before anything is allocated: a tiny file that claims a
 * huge shape is refused without allocating. Only C-order, little-endian or
 * byte-order-free dtypes that map onto a kiln dtype are accepted.
 *
 * Writing produces the same bytes NumPy (>= 1.23) writes: format 1.0 (2.0
 * when the dict would not fit a u16 length), the dict in sorted-key order,
 * 21 digits of growth room after the first axis, and a header padded so the
 * data starts at a multiple of 64 bytes.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/kiln.h>

#include "checked_math.h"
#include "error.h"
#include "npy.h"
#include "tensor.h"

/* Element bytes are copied verbatim between the file (always little-endian
 * here) and tensors (native order), which is only right on a little-endian
 * host. A big-endian port would need byte swapping in both directions. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define NPY_MAGIC_SIZE 6
#define NPY_PREAMBLE_SIZE 8 /* magic + major + minor */
/* Refuse larger headers: a real one is a few hundred bytes at most. */
#define NPY_MAX_HEADER_SIZE ((size_t)1 << 20)
/* NumPy >= 1.23 starts the data at a multiple of this. */
#define NPY_ALIGN 64
/* NumPy leaves this many digits of room for the growth axis (format.py's
 * GROWTH_AXIS_MAX_DIGITS) so the header can be rewritten in place. */
#define NPY_GROWTH_DIGITS 21
/* Longest text quoted from a file into an error message. */
#define NPY_QUOTE_MAX 40

static const uint8_t npy_magic[NPY_MAGIC_SIZE] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* The descr strings we accept, and the one NumPy writes for each dtype
 * (the first entry for a dtype is the canonical one used when writing).
 * NumPy has no bf16: a bf16 tensor is stored as 2-byte opaque values
 * ('<V2', what NumPy writes for a 2-byte extension dtype such as a
 * bfloat16 registered by a library), the little-endian bit patterns; NumPy
 * reads them back as void and a user views them as bfloat16. Reading takes
 * a 2-byte void array as bf16 patterns. */
static const struct {
    const char *descr;
    kiln_dtype dtype;
} descr_table[] = {
    {"<f4", KILN_F32}, {"<f8", KILN_F64}, {"<f2", KILN_F16}, {"|i1", KILN_I8},
    {"<i1", KILN_I8},  {"<i2", KILN_I16}, {"<i4", KILN_I32}, {"<i8", KILN_I64},
    {"|u1", KILN_U8},  {"<u1", KILN_U8},  {"<u2", KILN_U16}, {"<u4", KILN_U32},
    {"<u8", KILN_U64}, {"|b1", KILN_BOOL}, {"<V2", KILN_BF16}, {"|V2", KILN_BF16},
};

#define DESCR_COUNT (sizeof descr_table / sizeof descr_table[0])

/* What the header dict says about the array. */
typedef struct npy_header {
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
} npy_header;

/* Cursor over the header text; `err` receives the first problem. */
typedef struct npy_parser {
    const char *text;
    size_t size;
    size_t pos;
    kiln_error *err;
} npy_parser;

/* ----------------------------------------------------------------- helpers */

/*
 * Copy untrusted text into `out` for an error message: non-printable bytes
 * become '?', and long text is cut with "..." so messages stay readable.
 */
static void quote_text(const char *text, size_t len, char *out, size_t out_size)
{
    size_t used = 0;
    size_t limit = len < NPY_QUOTE_MAX ? len : NPY_QUOTE_MAX;
    for (size_t i = 0; i < limit && used + 1 < out_size; i++) {
        unsigned char ch = (unsigned char)text[i];
        out[used++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (len > limit) {
        for (int i = 0; i < 3 && used + 1 < out_size; i++)
            out[used++] = '.';
    }
    out[used] = '\0';
}

/* Render a shape as Python does: "()", "(4,)", "(3, 2)". */
static void format_shape(uint32_t rank, const int64_t *shape, char *out, size_t out_size)
{
    size_t used = 0;
    int n = snprintf(out, out_size, "(");
    for (uint32_t i = 0; i <= rank && n >= 0; i++) {
        used += (size_t)n;
        if (!(used < out_size))
            return;
        if (i == rank)
            n = snprintf(out + used, out_size - used, "%s)", rank == 1 ? "," : "");
        else
            n = snprintf(out + used, out_size - used, "%s%lld", i ? ", " : "",
                         (long long)shape[i]);
    }
}

static uint32_t read_u16_le(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t read_u32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------- dict parser */

static bool at_end(const npy_parser *p) { return !(p->pos < p->size); }

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static bool is_identifier_char(char ch)
{
    return is_digit(ch) || ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static void skip_space(npy_parser *p)
{
    while (!at_end(p) && is_space(p->text[p->pos]))
        p->pos++;
}

/* Consume `ch` if it is next. */
static bool accept(npy_parser *p, char ch)
{
    if (!at_end(p) && p->text[p->pos] == ch) {
        p->pos++;
        return true;
    }
    return false;
}

/* Report that `expected` was not found at the cursor, showing what was. */
static kiln_status syntax_error(npy_parser *p, const char *expected)
{
    char found[32];
    if (at_end(p)) {
        snprintf(found, sizeof found, "the end of the header");
    } else {
        unsigned char ch = (unsigned char)p->text[p->pos];
        if (ch >= 0x20 && ch < 0x7f)
            snprintf(found, sizeof found, "'%c'", (char)ch);
        else
            snprintf(found, sizeof found, "byte 0x%02x", ch);
    }
    return kiln_fail(p->err, KILN_ERR_NPY,
                     "malformed .npy header: expected %s at offset %zu, found %s", expected,
                     p->pos, found);
}

/*
 * Parse a quoted string ('...' or "..."). Escapes are refused rather than
 * decoded: no valid key or descr needs one.
 */
static kiln_status parse_string(npy_parser *p, const char **start, size_t *len)
{
    if (at_end(p) || (p->text[p->pos] != '\'' && p->text[p->pos] != '"'))
        return syntax_error(p, "a quoted string");
    char quote = p->text[p->pos++];
    size_t begin = p->pos;
    while (!at_end(p) && p->text[p->pos] != quote) {
        char ch = p->text[p->pos];
        if (ch == '\\')
            return kiln_fail(p->err, KILN_ERR_NPY,
                             "malformed .npy header: escape sequences in strings are not "
                             "supported (offset %zu)",
                             p->pos);
        if (ch == '\n' || ch == '\r')
            break;
        p->pos++;
    }
    if (at_end(p) || p->text[p->pos] != quote)
        return kiln_fail(p->err, KILN_ERR_NPY,
                         "malformed .npy header: unterminated string starting at offset %zu",
                         begin - 1);
    *start = p->text + begin;
    *len = p->pos - begin;
    p->pos++;
    return KILN_OK;
}

/* Consume the Python keyword `word` if it is next as a whole identifier. */
static bool accept_keyword(npy_parser *p, const char *word)
{
    size_t len = strlen(word);
    size_t remaining = p->size - p->pos;
    if (remaining < len || memcmp(p->text + p->pos, word, len) != 0)
        return false;
    if (len < remaining && is_identifier_char(p->text[p->pos + len]))
        return false;
    p->pos += len;
    return true;
}

/* Map a descr string onto a kiln dtype, naming why an unknown one is refused. */
static kiln_status map_descr(const char *text, size_t len, kiln_dtype *out, kiln_error *err)
{
    char quoted[NPY_QUOTE_MAX + 8];
    for (size_t i = 0; i < DESCR_COUNT; i++) {
        if (strlen(descr_table[i].descr) == len && memcmp(descr_table[i].descr, text, len) == 0) {
            *out = descr_table[i].dtype;
            return KILN_OK;
        }
    }
    quote_text(text, len, quoted, sizeof quoted);
    /* The type character follows an optional byte-order character. */
    bool has_order = len > 0 && text[0] != '\0' && strchr("<>|=!", text[0]) != NULL;
    size_t type_pos = has_order ? 1 : 0;
    if (type_pos < len && text[type_pos] == 'O')
        return kiln_fail(err, KILN_ERR_NPY, "object arrays are not supported (descr '%s')", quoted);
    if (len > 0 && (text[0] == '>' || text[0] == '!'))
        return kiln_fail(err, KILN_ERR_NPY, "big-endian data is not supported (descr '%s')",
                         quoted);
    return kiln_fail(err, KILN_ERR_NPY, "unsupported .npy dtype descr '%s'", quoted);
}

static kiln_status parse_descr(npy_parser *p, npy_header *h)
{
    const char *text;
    size_t len;
    if (!at_end(p) && p->text[p->pos] == '[')
        return kiln_fail(p->err, KILN_ERR_NPY,
                         "structured dtypes (a descr list) are not supported");
    KILN_TRY(parse_string(p, &text, &len));
    return map_descr(text, len, &h->dtype, p->err);
}

static kiln_status parse_fortran_order(npy_parser *p)
{
    if (accept_keyword(p, "False"))
        return KILN_OK;
    if (accept_keyword(p, "True"))
        return kiln_fail(p->err, KILN_ERR_NPY,
                         "Fortran-order arrays are not supported (fortran_order is True)");
    return syntax_error(p, "True or False for 'fortran_order'");
}

/*
 * Parse one extent of axis `axis`: a decimal integer as Python writes it
 * (no leading zeros). A minus sign is parsed only to name the problem.
 */
static kiln_status parse_extent(npy_parser *p, uint32_t axis, int64_t *out)
{
    bool negative = accept(p, '-');
    size_t begin = p->pos;
    int64_t value = 0;
    if (at_end(p) || !is_digit(p->text[p->pos]))
        return syntax_error(p, "an integer extent in 'shape'");
    while (!at_end(p) && is_digit(p->text[p->pos])) {
        int digit = p->text[p->pos] - '0';
        if (value > (INT64_MAX - digit) / 10) {
            char quoted[NPY_QUOTE_MAX + 8];
            size_t end = p->pos;
            while (end < p->size && is_digit(p->text[end]))
                end++;
            quote_text(p->text + begin, end - begin, quoted, sizeof quoted);
            return kiln_fail(p->err, KILN_ERR_NPY,
                             "shape axis %u extent %s%s does not fit in int64", axis,
                             negative ? "-" : "", quoted);
        }
        value = value * 10 + digit;
        p->pos++;
    }
    if (p->pos - begin > 1 && p->text[begin] == '0')
        return kiln_fail(p->err, KILN_ERR_NPY,
                         "malformed .npy header: shape axis %u extent has a leading zero", axis);
    if (!at_end(p) && is_identifier_char(p->text[p->pos]))
        return syntax_error(p, "',' or ')' after a shape extent");
    if (negative && value != 0)
        return kiln_fail(p->err, KILN_ERR_NPY, "shape axis %u has negative extent -%lld", axis,
                         (long long)value);
    *out = value;
    return KILN_OK;
}

/*
 * Parse the shape tuple: "()", "(4,)", "(3, 2)", "(3, 2,)". Extents past
 * KILN_MAX_RANK are still parsed (and dropped) so the error names the rank.
 */
static kiln_status parse_shape(npy_parser *p, npy_header *h)
{
    uint32_t count = 0;
    bool trailing_comma = false;
    if (!accept(p, '('))
        return syntax_error(p, "a tuple '(' for 'shape'");
    skip_space(p);
    while (!accept(p, ')')) {
        int64_t extent = 0;
        KILN_TRY(parse_extent(p, count, &extent));
        if (count < KILN_MAX_RANK)
            h->shape[count] = extent;
        count++;
        skip_space(p);
        trailing_comma = accept(p, ',');
        skip_space(p);
        if (!trailing_comma && !(!at_end(p) && p->text[p->pos] == ')'))
            return syntax_error(p, "',' or ')' in 'shape'");
    }
    /* "(4)" is the integer 4 in Python, not a 1-tuple. */
    if (count == 1 && !trailing_comma)
        return kiln_fail(p->err, KILN_ERR_NPY,
                         "'shape' must be a tuple: a 1-tuple is written (%lld,), not (%lld)",
                         (long long)h->shape[0], (long long)h->shape[0]);
    if (count > KILN_MAX_RANK)
        return kiln_fail(p->err, KILN_ERR_NPY, "shape rank %u exceeds the maximum rank %d", count,
                         KILN_MAX_RANK);
    h->rank = count;
    return KILN_OK;
}

enum { KEY_DESCR = 1u << 0, KEY_FORTRAN_ORDER = 1u << 1, KEY_SHAPE = 1u << 2 };

/* Parse one "key: value" entry, refusing unknown and repeated keys. */
static kiln_status parse_entry(npy_parser *p, npy_header *h, unsigned *seen)
{
    const char *key;
    size_t len;
    unsigned bit;
    char quoted[NPY_QUOTE_MAX + 8];
    KILN_TRY(parse_string(p, &key, &len));
    quote_text(key, len, quoted, sizeof quoted);
    if (len == 5 && memcmp(key, "descr", 5) == 0)
        bit = KEY_DESCR;
    else if (len == 13 && memcmp(key, "fortran_order", 13) == 0)
        bit = KEY_FORTRAN_ORDER;
    else if (len == 5 && memcmp(key, "shape", 5) == 0)
        bit = KEY_SHAPE;
    else
        return kiln_fail(p->err, KILN_ERR_NPY, "unknown key '%s' in the .npy header", quoted);
    if (*seen & bit)
        return kiln_fail(p->err, KILN_ERR_NPY, "duplicate key '%s' in the .npy header", quoted);
    *seen |= bit;
    skip_space(p);
    if (!accept(p, ':'))
        return syntax_error(p, "':' after a key");
    skip_space(p);
    switch (bit) {
    case KEY_DESCR: return parse_descr(p, h);
    case KEY_FORTRAN_ORDER: return parse_fortran_order(p);
    default: return parse_shape(p, h);
    }
}

/* Parse the whole header text (dict plus padding and the final newline). */
static kiln_status parse_dict(const char *text, size_t size, npy_header *h, kiln_error *err)
{
    npy_parser p = {text, size, 0, err};
    unsigned seen = 0;
    skip_space(&p);
    if (!accept(&p, '{'))
        return syntax_error(&p, "'{' opening the header dict");
    for (;;) {
        skip_space(&p);
        if (accept(&p, '}'))
            break;
        KILN_TRY(parse_entry(&p, h, &seen));
        skip_space(&p);
        if (accept(&p, '}'))
            break;
        if (!accept(&p, ','))
            return syntax_error(&p, "',' or '}' in the header dict");
    }
    skip_space(&p);
    if (!at_end(&p))
        return syntax_error(&p, "only padding after the header dict");
    if (!(seen & KEY_DESCR))
        return kiln_fail(err, KILN_ERR_NPY, "the .npy header is missing the 'descr' key");
    if (!(seen & KEY_FORTRAN_ORDER))
        return kiln_fail(err, KILN_ERR_NPY, "the .npy header is missing the 'fortran_order' key");
    if (!(seen & KEY_SHAPE))
        return kiln_fail(err, KILN_ERR_NPY, "the .npy header is missing the 'shape' key");
    return KILN_OK;
}

/* ----------------------------------------------------------------- reading */

/*
 * Check the preamble and parse the header of the file in `bytes`.
 * On success *data_offset is where the element bytes start.
 */
static kiln_status parse_npy_header(const uint8_t *bytes, size_t size, npy_header *h,
                                    size_t *data_offset, kiln_error *err)
{
    size_t magic_present = size < NPY_MAGIC_SIZE ? size : NPY_MAGIC_SIZE;
    if (magic_present > 0 && memcmp(bytes, npy_magic, magic_present) != 0)
        return kiln_fail(err, KILN_ERR_NPY, "not a .npy file (bad magic)");
    if (size < NPY_PREAMBLE_SIZE)
        return kiln_fail(err, KILN_ERR_NPY,
                         "truncated: %zu bytes is shorter than the %d-byte .npy preamble", size,
                         NPY_PREAMBLE_SIZE);
    unsigned major = bytes[6], minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0)
        return kiln_fail(err, KILN_ERR_NPY, "unsupported .npy format version %u.%u", major,
                         minor);
    /* 1.0 stores the header length as u16; 2.0 and 3.0 (UTF-8 header) as u32. */
    size_t length_size = major == 1 ? 2 : 4;
    size_t remaining = size - NPY_PREAMBLE_SIZE;
    if (remaining < length_size)
        return kiln_fail(err, KILN_ERR_NPY,
                         "truncated: the .npy header length needs %zu bytes, %zu present",
                         length_size, remaining);
    const uint8_t *length_bytes = bytes + NPY_PREAMBLE_SIZE;
    size_t header_size = major == 1 ? read_u16_le(length_bytes) : read_u32_le(length_bytes);
    size_t header_offset = NPY_PREAMBLE_SIZE + length_size;
    if (header_size > NPY_MAX_HEADER_SIZE)
        return kiln_fail(err, KILN_ERR_NPY, "header length %zu exceeds the 1 MiB limit",
                         header_size);
    remaining = size - header_offset;
    if (remaining < header_size)
        return kiln_fail(err, KILN_ERR_NPY,
                         "header length %zu runs past the end of the file (%zu bytes remain)",
                         header_size, remaining);
    const char *header = (const char *)bytes + header_offset;
    if (header_size == 0 || header[header_size - 1] != '\n')
        return kiln_fail(err, KILN_ERR_NPY, "malformed .npy header: it does not end with a newline");
    KILN_TRY(parse_dict(header, header_size, h, err));
    *data_offset = header_offset + header_size;
    return KILN_OK;
}

/*
 * Size the data the header describes and require exactly that many bytes to
 * follow, before anything is allocated for it.
 */
static kiln_status check_data_size(const npy_header *h, size_t present, size_t *byte_size,
                                   kiln_error *err)
{
    uint64_t count;
    size_t needed;
    kiln_error inner;
    kiln_status status = kiln_shape_sizes(h->dtype, h->rank, h->shape, &count, &needed, &inner);
    if (status != KILN_OK) {
        char shape[KILN_MAX_RANK * 24 + 8];
        format_shape(h->rank, h->shape, shape, sizeof shape);
        return kiln_fail(err, status, "shape %s of %s: %s", shape, kiln_dtype_name(h->dtype),
                         inner.message);
    }
    if (present < needed)
        return kiln_fail(err, KILN_ERR_NPY, "truncated: needs %zu data bytes, %zu present", needed,
                         present);
    if (present > needed)
        return kiln_fail(err, KILN_ERR_NPY, "%zu trailing bytes after the %zu data bytes",
                         present - needed, needed);
    *byte_size = needed;
    return KILN_OK;
}

/* kiln bools are 0 or 1; any other byte would make later reads undefined. */
static kiln_status check_bools(const uint8_t *data, size_t size, kiln_error *err)
{
    for (size_t i = 0; i < size; i++)
        if (data[i] > 1)
            return kiln_fail(err, KILN_ERR_NPY,
                             "bool element %zu has byte value %u (must be 0 or 1)", i,
                             (unsigned)data[i]);
    return KILN_OK;
}

kiln_status kiln_npy_read_memory(const void *bytes, size_t size, kiln_tensor **out,
                                 kiln_error *err)
{
    npy_header h;
    size_t data_offset = 0, byte_size = 0;
    kiln_tensor *tensor;
    if (!out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_npy_read_memory: out is NULL");
    *out = NULL;
    if (!bytes && size > 0)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "kiln_npy_read_memory: bytes is NULL but size is %zu", size);
    memset(&h, 0, sizeof h);
    KILN_TRY(parse_npy_header(bytes, size, &h, &data_offset, err));
    const uint8_t *data = (const uint8_t *)bytes + data_offset;
    KILN_TRY(check_data_size(&h, size - data_offset, &byte_size, err));
    if (h.dtype == KILN_BOOL)
        KILN_TRY(check_bools(data, byte_size, err));
    KILN_TRY(kiln_tensor_new(h.dtype, h.rank, h.shape, &tensor, err));
    if (byte_size > 0)
        memcpy(kiln_tensor_data(tensor), data, byte_size);
    *out = tensor;
    return KILN_OK;
}

kiln_status kiln_npy_read_header(const uint8_t *prefix, size_t size, uint64_t file_size, kiln_dtype *dtype,
                                 uint32_t *rank, int64_t shape[KILN_MAX_RANK], uint64_t *data_offset,
                                 kiln_error *err)
{
    npy_header h;
    size_t offset = 0, byte_size = 0;
    memset(&h, 0, sizeof h);
    if (size > file_size)
        size = (size_t)file_size;
    KILN_TRY(parse_npy_header(prefix, size, &h, &offset, err));
    uint64_t present = file_size - offset;
    KILN_TRY(check_data_size(&h, present > SIZE_MAX ? SIZE_MAX : (size_t)present, &byte_size, err));
    *dtype = h.dtype;
    *rank = h.rank;
    memcpy(shape, h.shape, sizeof h.shape);
    *data_offset = offset;
    return KILN_OK;
}

/* Report a failed stdio call on `path`; errnum 0 means stdio gave no reason. */
static kiln_status io_error(kiln_error *err, const char *what, const char *path, int errnum)
{
    return kiln_fail(err, KILN_ERR_IO, "cannot %s '%s': %s", what, path,
                     errnum ? strerror(errnum) : "unknown error");
}

/* Read all of `path` into a malloc'd buffer (*bytes may be NULL if empty). */
static kiln_status read_whole_file(const char *path, uint8_t **bytes, size_t *size,
                                   kiln_error *err)
{
    uint8_t *buffer = NULL;
    size_t capacity = 0, used = 0;
    kiln_status status = KILN_OK;
    FILE *file = fopen(path, "rb");
    if (!file)
        return io_error(err, "open", path, errno);
    /* Size the buffer from the length of a regular file, so one read
     * suffices; pipes, devices and directories (which must fail in fread,
     * not in a huge malloc) fall back to doubling. */
    struct stat info;
    if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode) && info.st_size >= 0 &&
        (uint64_t)info.st_size < SIZE_MAX)
        capacity = (size_t)info.st_size + 1; /* +1 so the first read also sees EOF */
    for (;;) {
        if (!(used < capacity)) {
            size_t grown;
            if (capacity == 0)
                grown = 65536;
            else if (!kiln_mul_size(capacity, 2, &grown)) {
                status = kiln_fail(err, KILN_ERR_LIMIT, "'%s' is too large to read", path);
                break;
            }
            uint8_t *bigger = realloc(buffer, grown);
            if (!bigger) {
                status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY,
                                   "out of memory reading '%s' (%zu bytes)", path, grown);
                break;
            }
            buffer = bigger;
            capacity = grown;
        } else if (!buffer) {
            buffer = malloc(capacity);
            if (!buffer) {
                status = kiln_fail(err, KILN_ERR_OUT_OF_MEMORY,
                                   "out of memory reading '%s' (%zu bytes)", path, capacity);
                break;
            }
        }
        size_t wanted = capacity - used;
        errno = 0;
        size_t got = fread(buffer + used, 1, wanted, file);
        used += got;
        if (got < wanted) {
            if (ferror(file))
                status = io_error(err, "read", path, errno);
            break;
        }
    }
    fclose(file); /* read-only: nothing to lose if closing fails */
    if (status != KILN_OK) {
        free(buffer);
        return status;
    }
    *bytes = buffer;
    *size = used;
    return KILN_OK;
}

kiln_status kiln_npy_read_file(const char *path, kiln_tensor **out, kiln_error *err)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    kiln_error inner = {KILN_OK, ""};
    if (!out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_npy_read_file: out is NULL");
    *out = NULL;
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_npy_read_file: path is NULL");
    KILN_TRY(read_whole_file(path, &bytes, &size, err));
    kiln_status status = kiln_npy_read_memory(bytes, size, out, &inner);
    free(bytes);
    /* Prefix the path so the caller knows which file was bad. */
    if (status != KILN_OK)
        return kiln_fail(err, status, "'%s': %s", path, inner.message);
    return KILN_OK;
}

/* ----------------------------------------------------------------- writing */

/* The canonical descr for `dtype`, or NULL if NumPy has no such dtype. */
static const char *descr_for(kiln_dtype dtype)
{
    for (size_t i = 0; i < DESCR_COUNT; i++)
        if (descr_table[i].dtype == dtype)
            return descr_table[i].descr;
    return NULL;
}

/*
 * Build the preamble and padded header NumPy would write for `tensor` into
 * `out` (sized for the largest header: rank 8 with 20-digit extents).
 */
static kiln_status build_header(const kiln_tensor *tensor, const char *descr, uint8_t *out,
                                size_t out_size, size_t *header_size, kiln_error *err)
{
    char shape[KILN_MAX_RANK * 24 + 8];
    char dict[sizeof shape + 128 + NPY_GROWTH_DIGITS];
    format_shape(tensor->rank, tensor->shape, shape, sizeof shape);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
    if (n < 0 || !((size_t)n < sizeof dict))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "cannot format the .npy header");
    size_t dict_len = (size_t)n;
    /* Room to grow the first axis in place, as NumPy leaves it. */
    if (tensor->rank > 0) {
        char first[24];
        int digits = snprintf(first, sizeof first, "%lld", (long long)tensor->shape[0]);
        for (int i = digits; i < NPY_GROWTH_DIGITS && dict_len + 1 < sizeof dict; i++)
            dict[dict_len++] = ' ';
    }
    /* Pad with spaces then '\n' so the data starts on a 64-byte boundary;
     * like NumPy, a header that is already aligned still gets a full 64. */
    size_t body = dict_len + 1;
    size_t prefix = NPY_PREAMBLE_SIZE + 2;
    size_t pad = NPY_ALIGN - (prefix + body) % NPY_ALIGN;
    uint8_t major = 1;
    if (body + pad > 0xffff) {
        major = 2;
        prefix = NPY_PREAMBLE_SIZE + 4;
        pad = NPY_ALIGN - (prefix + body) % NPY_ALIGN;
    }
    size_t total = prefix + body + pad;
    if (out_size < total)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "the .npy header does not fit");
    uint32_t length = (uint32_t)(body + pad);
    memcpy(out, npy_magic, NPY_MAGIC_SIZE);
    out[6] = major;
    out[7] = 0;
    for (size_t i = 0; i < prefix - NPY_PREAMBLE_SIZE; i++)
        out[NPY_PREAMBLE_SIZE + i] = (uint8_t)(length >> (8 * i));
    memcpy(out + prefix, dict, dict_len);
    memset(out + prefix + dict_len, ' ', pad);
    out[total - 1] = '\n';
    *header_size = total;
    return KILN_OK;
}

kiln_status kiln_npy_write_file(const char *path, const kiln_tensor *tensor, kiln_error *err)
{
    uint8_t header[1024];
    size_t header_size = 0;
    if (!path || !tensor)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_npy_write_file: %s is NULL",
                         path ? "tensor" : "path");
    const char *descr = descr_for(tensor->dtype);
    if (!descr)
        return kiln_fail(err, KILN_ERR_NPY, "cannot write a %s tensor to .npy: NumPy has no %s dtype",
                         kiln_dtype_name(tensor->dtype), kiln_dtype_name(tensor->dtype));
    KILN_TRY(build_header(tensor, descr, header, sizeof header, &header_size, err));

    FILE *file = fopen(path, "wb");
    if (!file)
        return io_error(err, "create", path, errno);
    kiln_status status = KILN_OK;
    errno = 0;
    if (fwrite(header, 1, header_size, file) != header_size)
        status = io_error(err, "write", path, errno);
    errno = 0;
    if (status == KILN_OK && tensor->byte_size > 0 &&
        fwrite(tensor->data, 1, tensor->byte_size, file) != tensor->byte_size)
        status = io_error(err, "write", path, errno);
    errno = 0;
    /* fclose flushes, so it is where a full disk often shows up. A failed
     * write may leave a partial file behind; it is not removed, since `path`
     * need not be a regular file we own (e.g. a device or FIFO), and the
     * reader refuses it anyway because its data length will not match. */
    if (fclose(file) != 0 && status == KILN_OK)
        status = io_error(err, "close", path, errno);
    return status;
}
