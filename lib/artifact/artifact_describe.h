/*
 * artifact_describe.h — the container-level description of an artifact
 * held in memory: what kiln_artifact_describe does for a file and
 * kiln_artifact_open_memory for bytes.
 */
#ifndef KILN_LIB_ARTIFACT_DESCRIBE_H
#define KILN_LIB_ARTIFACT_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

/*
 * Describe the `size` bytes at `bytes` as kiln_artifact_describe describes
 * a file (the bytes are read, never kept). On failure *out holds no
 * allocation. @return KILN_OK, or the integrity or structure error found.
 */
kiln_status kiln_artifact_describe_bytes(const uint8_t *bytes, size_t size, kiln_artifact_description *out,
                                         kiln_error *err);

#endif
