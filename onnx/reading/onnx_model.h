/*
 * onnx_model.h — reading ONNX files into protobuf-c messages under limits,
 * and turning ONNX tensors (initializers, Constant values, test data) into
 * kiln tensors. Nothing here knows about kiln programs: onnx_import.h does.
 */
#ifndef KILN_ONNX_MODEL_H
#define KILN_ONNX_MODEL_H

#include <stdint.h>

#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include "onnx.pb-c.h"

/**
 * Read and decode the ONNX model in `path`, then check its IR version
 * (3..10), its default-domain opset (1..KILN_ONNX_MAX_OPSET, 18) and the counts of `limits`
 * (NULL: kiln_onnx_limits_default).
 * @return KILN_OK with *out to free with onnx__model_proto__free_unpacked,
 *         KILN_ERR_IO, KILN_ERR_LIMIT, KILN_ERR_MALFORMED (not a protobuf
 *         ModelProto) or KILN_ERR_UNSUPPORTED_VERSION.
 */
/* Read a caller's limits (NULL: the defaults; any struct_size from the 1.0
 * size up, kiln_struct_read) into `out`. */
kiln_status onnx_limits_read(const kiln_onnx_limits *limits, kiln_onnx_limits *out, kiln_error *err);

kiln_status onnx_model_read(const char *path, const kiln_onnx_limits *limits, Onnx__ModelProto **out, kiln_error *err);

/**
 * Decode `bytes` as a ModelProto and check it as onnx_model_read does.
 */
kiln_status onnx_model_decode(const uint8_t *bytes, size_t size, const kiln_onnx_limits *limits, Onnx__ModelProto **out,
                              kiln_error *err);

/** @return the model's default-domain ("" or "ai.onnx") opset version, 0 if none is imported. */
int64_t onnx_model_default_opset(const Onnx__ModelProto *model);

/**
 * The kiln dtype of ONNX element type `onnx_type`.
 * @return KILN_OK, or KILN_ERR_UNSUPPORTED_DTYPE naming the ONNX type
 *         (strings, complex numbers, unknown codes). FLOAT16 and BFLOAT16
 *         are kiln's f16 and bf16.
 */
kiln_status onnx_dtype_to_kiln(int32_t onnx_type, kiln_dtype *out, kiln_error *err);

/** @return the ONNX name of element type `onnx_type` ("FLOAT", ...), or "unknown". */
const char *onnx_dtype_name(int32_t onnx_type);

/**
 * Convert `tensor` into a new kiln tensor. Data comes from raw_data
 * (little-endian, its length must equal the element count times the
 * element size), from the typed field the element type uses (its count
 * must equal the element count), or, only when `external_data_dir` is not
 * NULL, from the external file it names, which must resolve inside that
 * directory (no absolute path, no "..", no symlink leading out).
 * @return KILN_OK, KILN_ERR_UNSUPPORTED_DTYPE, KILN_ERR_LIMIT,
 *         KILN_ERR_MALFORMED (sizes disagree), KILN_ERR_INVALID_ARGUMENT
 *         (external data refused or escaping) or KILN_ERR_IO.
 */
kiln_status onnx_tensor_to_kiln(const Onnx__TensorProto *tensor, const char *external_data_dir,
                                const kiln_onnx_limits *limits, kiln_tensor **out, kiln_error *err);

/**
 * Read a serialized TensorProto file (the test data sets' input_K.pb and
 * output_K.pb) into a kiln tensor, with no external data. *name receives
 * the tensor's name (heap, "" when absent; may be NULL).
 */
kiln_status onnx_tensor_read_file(const char *path, const kiln_onnx_limits *limits, kiln_tensor **out, char **name,
                                  kiln_error *err);

#endif
