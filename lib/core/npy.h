/*
 * npy.h — what the library needs of a .npy file besides the public
 * kiln_npy_read_* (kiln.h): its header alone, so that a weight stored in a
 * .npy file can be streamed from it instead of read into memory whole.
 */
#ifndef KILN_LIB_NPY_H
#define KILN_LIB_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

/* The largest .npy overhead the reader accepts: magic, version, a u32
 * header length (12 bytes) and a header of at most 1 MiB. */
#define KILN_NPY_MAX_OVERHEAD (12 + ((uint64_t)1 << 20))

/*
 * Parse the header of a .npy file of `file_size` bytes from `prefix`, its
 * first `size` bytes (at least min(file_size, KILN_NPY_MAX_OVERHEAD) of
 * them), with the checks kiln_npy_read_memory makes, including that
 * exactly the element bytes the header describes follow it. The element
 * bytes themselves are not read (bool elements are therefore not checked
 * to be 0 or 1: read bools with kiln_npy_read_memory).
 * @return KILN_OK with the dtype, rank, shape and the offset of the first
 *         element byte; or KILN_ERR_NPY (or KILN_ERR_LIMIT for a shape
 *         too large) naming the problem.
 */
kiln_status kiln_npy_read_header(const uint8_t *prefix, size_t size, uint64_t file_size, kiln_dtype *dtype,
                                 uint32_t *rank, int64_t shape[KILN_MAX_RANK], uint64_t *data_offset,
                                 kiln_error *err);

#endif
