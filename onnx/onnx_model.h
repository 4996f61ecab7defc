/*
 * onnx_model.h — reading ONNX files into protobuf-c messages under limits,
 * and turning ONNX tensors (initializers, Constant values, test data) into
 * kiln tensors. Nothing here knows about kiln programs: onnx_import.h does.
 */
#ifndef KILN_ONNX_MODEL_H
#define KILN_ONNX_MODEL_H

#include <stdint.h>

#include <kiln/kiln.h>

#include "onnx.pb-c.h"

/* The IR versions and default-domain opset versions the importer reads. */
#define ONNX_MIN_IR_VERSION 3
#define ONNX_MAX_IR_VERSION 10
#define ONNX_MIN_OPSET 1
#define ONNX_MAX_OPSET 17

/* Ceilings checked before (file size) or right after (counts) decoding. */
typedef struct onnx_limits {
    uint64_t max_file_bytes;    /* default 2 GiB - 1: protobuf's own ceiling */
    uint32_t max_nodes;         /* default 1000000 */
    uint32_t max_initializers;  /* default 65536 */
    uint32_t max_attributes;    /* default 64 per node */
    uint32_t max_node_inputs;   /* default 64 per node (inputs and outputs each) */
    uint32_t max_graph_values;  /* default 1024 graph inputs or outputs */
    uint64_t max_tensor_bytes;  /* default 4 GiB per tensor */
} onnx_limits;

/** Fill `limits` with the defaults above. */
void onnx_limits_default(onnx_limits *limits);

/**
 * Read and decode the ONNX model in `path`, then check its IR version
 * (3..10), its default-domain opset (1..17) and the counts of `limits`.
 * @return KILN_OK with *out to free with onnx__model_proto__free_unpacked,
 *         KILN_ERR_IO, KILN_ERR_LIMIT, KILN_ERR_MALFORMED (not a protobuf
 *         ModelProto) or KILN_ERR_UNSUPPORTED_VERSION.
 */
kiln_status onnx_model_read(const char *path, const onnx_limits *limits, Onnx__ModelProto **out, kiln_error *err);

/**
 * Decode `bytes` as a ModelProto and check it as onnx_model_read does.
 */
kiln_status onnx_model_decode(const uint8_t *bytes, size_t size, const onnx_limits *limits, Onnx__ModelProto **out,
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
                                const onnx_limits *limits, kiln_tensor **out, kiln_error *err);

/**
 * Read a serialized TensorProto file (the test data sets' input_K.pb and
 * output_K.pb) into a kiln tensor, with no external data. *name receives
 * the tensor's name (heap, "" when absent; may be NULL).
 */
kiln_status onnx_tensor_read_file(const char *path, const onnx_limits *limits, kiln_tensor **out, char **name,
                                  kiln_error *err);

#endif
