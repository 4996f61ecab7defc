/*
 * cursor.h — the only way kiln reads or writes encoded bytes.
 *
 * kiln_reader walks a byte range and refuses every read for which
 * "bytes remaining < bytes needed"; there is no unchecked accessor. All
 * multi-byte integers are little-endian, independent of the host.
 * kiln_writer appends to a growable buffer; an allocation failure is sticky
 * and reported once by kiln_writer_finish, so encoders stay linear.
 */
#ifndef KILN_FORMAT_CURSOR_H
#define KILN_FORMAT_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>

typedef struct kiln_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    const char *context; /* names the thing being read, for messages */
} kiln_reader;

void kiln_reader_init(kiln_reader *r, const void *data, size_t size, const char *context);
size_t kiln_reader_remaining(const kiln_reader *r);

kiln_status kiln_read_u8(kiln_reader *r, uint8_t *out, kiln_error *err);
kiln_status kiln_read_u16(kiln_reader *r, uint16_t *out, kiln_error *err);
kiln_status kiln_read_u32(kiln_reader *r, uint32_t *out, kiln_error *err);
kiln_status kiln_read_u64(kiln_reader *r, uint64_t *out, kiln_error *err);
kiln_status kiln_read_i64(kiln_reader *r, int64_t *out, kiln_error *err);
kiln_status kiln_read_f64(kiln_reader *r, double *out, kiln_error *err);
/* Borrow `n` bytes in place. */
kiln_status kiln_read_bytes(kiln_reader *r, size_t n, const uint8_t **out, kiln_error *err);
/*
 * Read a u32 length then that many bytes, refusing lengths above max_len
 * and embedded NULs. The result is copied into a fresh NUL-terminated heap
 * string owned by the caller.
 */
kiln_status kiln_read_string(kiln_reader *r, uint32_t max_len, char **out, kiln_error *err);
/* Read a u32 count and refuse it if above `limit` or if the bytes left could
 * not possibly hold `count` items of at least `min_item_size` bytes each. */
kiln_status kiln_read_count(kiln_reader *r, uint32_t limit, size_t min_item_size,
                            const char *what, uint32_t *out, kiln_error *err);
/* Fail unless every byte has been consumed. */
kiln_status kiln_reader_expect_end(const kiln_reader *r, kiln_error *err);

/* Little-endian loads and stores on raw memory of known sufficient size. */
uint16_t kiln_load_u16(const uint8_t *p);
uint32_t kiln_load_u32(const uint8_t *p);
uint64_t kiln_load_u64(const uint8_t *p);
void kiln_store_u16(uint8_t *p, uint16_t v);
void kiln_store_u32(uint8_t *p, uint32_t v);
void kiln_store_u64(uint8_t *p, uint64_t v);

typedef struct kiln_writer {
    uint8_t *data;
    size_t size;
    size_t capacity;
    bool failed;
} kiln_writer;

void kiln_writer_init(kiln_writer *w);
void kiln_writer_release(kiln_writer *w);
void kiln_write_u8(kiln_writer *w, uint8_t v);
void kiln_write_u16(kiln_writer *w, uint16_t v);
void kiln_write_u32(kiln_writer *w, uint32_t v);
void kiln_write_u64(kiln_writer *w, uint64_t v);
void kiln_write_i64(kiln_writer *w, int64_t v);
void kiln_write_f64(kiln_writer *w, double v);
void kiln_write_bytes(kiln_writer *w, const void *bytes, size_t n);
void kiln_write_zeros(kiln_writer *w, size_t n);
/* u32 length + bytes, without the terminating NUL. */
void kiln_write_string(kiln_writer *w, const char *s);
/* @return KILN_OK, or KILN_ERR_OUT_OF_MEMORY if any append failed. */
kiln_status kiln_writer_finish(const kiln_writer *w, kiln_error *err);

#endif
