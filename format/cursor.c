/* cursor.c — bounds-checked little-endian reading and buffered writing. */
#include "cursor.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "invariant.h"

void kiln_reader_init(kiln_reader *r, const void *data, size_t size, const char *context)
{
    r->data = data;
    r->size = size;
    r->pos = 0;
    r->context = context ? context : "data";
}

size_t kiln_reader_remaining(const kiln_reader *r)
{
    /* Every read checks what remains first, so the position never passes the end. */
    KILN_ASSERT(r->pos <= r->size);
    return r->size - r->pos;
}

static kiln_status need(const kiln_reader *r, size_t needed, kiln_error *err)
{
    size_t remaining = kiln_reader_remaining(r);
    if (remaining < needed)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "%s: needs %zu bytes at offset %zu but only %zu remain",
                         r->context, needed, r->pos, remaining);
    return KILN_OK;
}

uint16_t kiln_load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

uint32_t kiln_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t kiln_load_u64(const uint8_t *p)
{
    return (uint64_t)kiln_load_u32(p) | (uint64_t)kiln_load_u32(p + 4) << 32;
}

void kiln_store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void kiln_store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void kiln_store_u64(uint8_t *p, uint64_t v)
{
    kiln_store_u32(p, (uint32_t)v);
    kiln_store_u32(p + 4, (uint32_t)(v >> 32));
}

kiln_status kiln_read_u8(kiln_reader *r, uint8_t *out, kiln_error *err)
{
    KILN_TRY(need(r, 1, err));
    *out = r->data[r->pos++];
    return KILN_OK;
}

kiln_status kiln_read_u16(kiln_reader *r, uint16_t *out, kiln_error *err)
{
    KILN_TRY(need(r, 2, err));
    *out = kiln_load_u16(r->data + r->pos);
    r->pos += 2;
    return KILN_OK;
}

kiln_status kiln_read_u32(kiln_reader *r, uint32_t *out, kiln_error *err)
{
    KILN_TRY(need(r, 4, err));
    *out = kiln_load_u32(r->data + r->pos);
    r->pos += 4;
    return KILN_OK;
}

kiln_status kiln_read_u64(kiln_reader *r, uint64_t *out, kiln_error *err)
{
    KILN_TRY(need(r, 8, err));
    *out = kiln_load_u64(r->data + r->pos);
    r->pos += 8;
    return KILN_OK;
}

kiln_status kiln_read_i64(kiln_reader *r, int64_t *out, kiln_error *err)
{
    uint64_t bits;
    KILN_TRY(kiln_read_u64(r, &bits, err));
    memcpy(out, &bits, sizeof *out);
    return KILN_OK;
}

kiln_status kiln_read_f64(kiln_reader *r, double *out, kiln_error *err)
{
    uint64_t bits;
    KILN_TRY(kiln_read_u64(r, &bits, err));
    memcpy(out, &bits, sizeof *out);
    return KILN_OK;
}

kiln_status kiln_read_bytes(kiln_reader *r, size_t n, const uint8_t **out, kiln_error *err)
{
    KILN_TRY(need(r, n, err));
    *out = r->data + r->pos;
    r->pos += n;
    return KILN_OK;
}

kiln_status kiln_read_string(kiln_reader *r, uint32_t max_len, char **out, kiln_error *err)
{
    uint32_t len;
    const uint8_t *bytes;
    size_t start = r->pos;
    KILN_TRY(kiln_read_u32(r, &len, err));
    if (len > max_len)
        return kiln_fail(err, KILN_ERR_LIMIT,
                         "%s: string at offset %zu is %u bytes, limit is %u",
                         r->context, start, len, max_len);
    KILN_TRY(kiln_read_bytes(r, len, &bytes, err));
    if (memchr(bytes, '\0', len))
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "%s: string at offset %zu contains a NUL byte", r->context, start);
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory for a string", r->context);
    memcpy(copy, bytes, len);
    copy[len] = '\0';
    *out = copy;
    return KILN_OK;
}

kiln_status kiln_read_count(kiln_reader *r, uint32_t limit, size_t min_item_size,
                            const char *what, uint32_t *out, kiln_error *err)
{
    uint32_t count;
    KILN_TRY(kiln_read_u32(r, &count, err));
    if (count > limit)
        return kiln_fail(err, KILN_ERR_LIMIT, "%s: %u %s exceeds the limit of %u",
                         r->context, count, what, limit);
    /* A count the remaining bytes cannot hold is refused before anything is
     * allocated for it: this bounds allocations by the input size. */
    if (min_item_size && kiln_reader_remaining(r) / min_item_size < count)
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "%s: claims %u %s but only %zu bytes remain",
                         r->context, count, what, kiln_reader_remaining(r));
    *out = count;
    return KILN_OK;
}

kiln_status kiln_reader_expect_end(const kiln_reader *r, kiln_error *err)
{
    if (kiln_reader_remaining(r) != 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "%s: %zu unexpected trailing bytes",
                         r->context, kiln_reader_remaining(r));
    return KILN_OK;
}

void kiln_writer_init(kiln_writer *w)
{
    memset(w, 0, sizeof *w);
}

void kiln_writer_release(kiln_writer *w)
{
    free(w->data);
    kiln_writer_init(w);
}

static uint8_t *reserve(kiln_writer *w, size_t n)
{
    if (w->failed)
        return NULL;
    if (w->capacity - w->size < n) {
        size_t wanted = w->capacity ? w->capacity : 256;
        while (wanted - w->size < n) {
            if (wanted > SIZE_MAX / 2) {
                w->failed = true;
                return NULL;
            }
            wanted *= 2;
        }
        uint8_t *grown = realloc(w->data, wanted);
        if (!grown) {
            w->failed = true;
            return NULL;
        }
        w->data = grown;
        w->capacity = wanted;
    }
    uint8_t *slot = w->data + w->size;
    w->size += n;
    return slot;
}

void kiln_write_u8(kiln_writer *w, uint8_t v)
{
    uint8_t *p = reserve(w, 1);
    if (p)
        *p = v;
}

void kiln_write_u16(kiln_writer *w, uint16_t v)
{
    uint8_t *p = reserve(w, 2);
    if (p)
        kiln_store_u16(p, v);
}

void kiln_write_u32(kiln_writer *w, uint32_t v)
{
    uint8_t *p = reserve(w, 4);
    if (p)
        kiln_store_u32(p, v);
}

void kiln_write_u64(kiln_writer *w, uint64_t v)
{
    uint8_t *p = reserve(w, 8);
    if (p)
        kiln_store_u64(p, v);
}

void kiln_write_i64(kiln_writer *w, int64_t v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    kiln_write_u64(w, bits);
}

void kiln_write_f64(kiln_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    kiln_write_u64(w, bits);
}

void kiln_write_bytes(kiln_writer *w, const void *bytes, size_t n)
{
    if (n == 0)
        return;
    uint8_t *p = reserve(w, n);
    if (p)
        memcpy(p, bytes, n);
}

void kiln_write_zeros(kiln_writer *w, size_t n)
{
    if (n == 0)
        return;
    uint8_t *p = reserve(w, n);
    if (p)
        memset(p, 0, n);
}

void kiln_write_string(kiln_writer *w, const char *s)
{
    size_t len = strlen(s);
    if (len > UINT32_MAX) {
        w->failed = true;
        return;
    }
    kiln_write_u32(w, (uint32_t)len);
    kiln_write_bytes(w, s, len);
}

kiln_status kiln_writer_finish(const kiln_writer *w, kiln_error *err)
{
    if (w->failed)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory while encoding");
    return KILN_OK;
}
