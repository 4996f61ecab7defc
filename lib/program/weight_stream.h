/*
 * weight_stream.h — writing the weight data section WDAT as a stream:
 * each weight's bytes go from where they are (the builder's copy, or the
 * file kiln_builder_add_weight_file named) to the container writer, a
 * piece at a time, so that sealing never holds the weight data twice.
 */
#ifndef KILN_LIB_WEIGHT_STREAM_H
#define KILN_LIB_WEIGHT_STREAM_H

#include "format/container.h"
#include "model.h"

/*
 * A kiln_section_produce_fn for WDAT; `user` is the kiln_model whose
 * weights kiln_weights_encode laid out. Zero padding up to each weight's
 * data_offset, then its bytes: from `data`, or read from `source_path` in
 * KILN_WRITE_CHUNK pieces.
 * @return KILN_OK, KILN_ERR_IO when a weight's file cannot be read or no
 *         longer holds its bytes, or the writer's error.
 */
kiln_status kiln_weights_produce(void *user, kiln_section_output *out, kiln_error *err);

/*
 * Check that `path` is a regular file holding at least `size` bytes from
 * `offset` on, as kiln_weights_produce will read it, naming `weight` in
 * the message; with `no_follow`, a symbolic link in the path's last
 * component is refused too (O_NOFOLLOW).
 * @return KILN_OK, or KILN_ERR_IO.
 */
kiln_status kiln_weight_file_check(const char *weight, const char *path, uint64_t offset, uint64_t size,
                                   bool no_follow, kiln_error *err);

#endif
