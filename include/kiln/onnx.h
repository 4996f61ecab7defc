/*
 * kiln/onnx.h — the ONNX importer of kiln (library kiln-onnx, built when
 * protobuf-c is found): an ONNX model into a kiln_builder, without the CLI.
 *
 * Typical use:
 *
 *     kiln_onnx_options options;
 *     kiln_onnx_options_default(&options);
 *     kiln_onnx_dim dims[] = {{.name = "batch", .min = 1, .max = 64}};
 *     options.dims = dims;
 *     options.dim_count = 1;
 *     kiln_onnx_result *result = NULL;
 *     kiln_error err;
 *     if (kiln_onnx_import_file("model.onnx", &options, &result, &err) == KILN_OK)
 *         status = kiln_builder_save(kiln_onnx_result_builder(result), "model.kiln", NULL, &err);
 *     else
 *         for (uint32_t i = 0; i < kiln_onnx_result_unsupported_count(result); i++)
 *             puts(kiln_onnx_result_unsupported(result, i));
 *     kiln_onnx_result_free(result);
 *
 * Graph inputs become kiln inputs, initializers weights, nodes kiln ops,
 * graph outputs outputs in order (spec/onnx-import.md). Symbolic sizes
 * (dim_param) become kiln dims whose bounds the caller declares. Whatever
 * cannot be imported is collected into one report instead of stopping at
 * the first problem.
 *
 * The conventions of kiln.h hold: kiln_status results with a trailing
 * kiln_error, opaque handles whose *_free accepts NULL, option structs that
 * begin with struct_size and are filled by their *_default macro (kiln.h's
 * conventions: any struct_size from the 1.0 size up is accepted).
 */
#ifndef KILN_ONNX_H
#define KILN_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The IR versions and default-domain opset versions the importer reads. */
#define KILN_ONNX_MIN_IR_VERSION 3
#define KILN_ONNX_MAX_IR_VERSION 10
#define KILN_ONNX_MIN_OPSET 1
#define KILN_ONNX_MAX_OPSET 18

/* Ceilings checked before (file size, nesting) or right after (counts) decoding. */
typedef struct kiln_onnx_limits {
    size_t struct_size;
    uint64_t max_file_bytes;    /* default 2 GiB - 1: protobuf's own ceiling */
    uint32_t max_nodes;         /* default 1000000 */
    uint32_t max_initializers;  /* default 65536 */
    uint32_t max_attributes;    /* default 64 per node */
    uint32_t max_node_inputs;   /* default 64 per node (inputs and outputs each) */
    uint32_t max_graph_values;  /* default 1024 graph inputs or outputs */
    uint64_t max_tensor_bytes;  /* default 4 GiB per tensor */
    /* default 64: how deep protobuf messages may nest (the model is level 1,
     * each If/Loop/Scan subgraph adds 3), checked on the bytes before they
     * are decoded, since decoding recurses once per level; at least 1 */
    uint32_t max_nesting_depth;
} kiln_onnx_limits;

/** Fill `limits` with the defaults above (struct_size included). */
KILN_API void kiln_onnx_limits_init(kiln_onnx_limits *limits, size_t struct_size);
#define kiln_onnx_limits_default(limits) kiln_onnx_limits_init((limits), sizeof *(limits))

/*
 * The bounds of one symbolic size (dim_param) of the model: it becomes the
 * kiln dim of the same name (made an identifier) with the inclusive range
 * min..max (0 <= min <= max) and, when multiple_of > 1, restricted to its
 * multiples (kiln_builder_set_dim_multiple_of; 0 or 1: any size).
 */
typedef struct kiln_onnx_dim {
    const char *name;
    int64_t min, max;
    int64_t multiple_of;
} kiln_onnx_dim;

/*
 * A cache the model passes in and out (a decoder's past keys or values)
 * imported as a kiln state (kiln_builder_add_state): the step's new rows
 * are appended to it in place instead of the whole cache being copied in
 * and out (spec/onnx-import.md §7). `output` is the graph output holding
 * every row after the step; `input` the graph input holding the rows
 * before it, whose only use that makes the output must be
 * Concat(input, new rows) along the growing axis, or NULL for a method
 * that starts the cache (a prefill: the output's value is the first rows).
 * Neither becomes an input or output of the program.
 */
typedef struct kiln_onnx_state {
    const char *input;  /* NULL: the method starts the cache */
    const char *output;
    const char *name;   /* the state's name; NULL: `output` made an identifier */
} kiln_onnx_state;

typedef struct kiln_onnx_options {
    size_t struct_size;
    /* The program's name (NULL: the graph's name, else the model file's
     * name without directory and extension, else "onnx"). */
    const char *program_name;
    /* Bounds of the symbolic sizes; each must name a size of the model. */
    const kiln_onnx_dim *dims;
    uint32_t dim_count;
    /* Directory the model's external tensor data is read from, only from
     * files inside it (NULL: external data is refused). */
    const char *external_data_dir;
    /*
     * Known values of graph inputs, by ONNX name (onnx-test's data sets):
     * each fixes the sizes of its input's axes that no dim names, and an
     * input used where kiln needs a constant (a shape, axes, pads) is
     * folded to its value. 0/NULL: none.
     */
    uint32_t known_input_count;
    const char *const *known_input_names;
    const kiln_tensor *const *known_inputs;
    /* Ceilings for reading the model (NULL: kiln_onnx_limits_default). */
    const kiln_onnx_limits *limits;
    /* false (default): every precondition of the shape rules must be
     * proven over the declared dims, or the import is refused with a
     * counterexample. true: a precondition that cannot be proven is stored
     * as a runtime guard, checked before every run (spec/contract.md §4.2). */
    bool non_strict;
    /* Caches imported as state (0/NULL: none). Each is `state_capacity`
     * rows long along axis `state_axis` (negative: from the end; the
     * default -2 is [batch, heads, past, head_dim]); its length binds the
     * dim the input's growing axis names, or, for a state without an
     * input, `state_length_dim` (NULL: "past"), declared 0..0 there. The
     * relation `length + rows <= state_capacity` is declared for every
     * append. Every other axis must be a fixed size. */
    const kiln_onnx_state *states;
    uint32_t state_count;
    int64_t state_capacity;
    int32_t state_axis;
    const char *state_length_dim;
} kiln_onnx_options;

/** Fill `options` with the defaults above: no dims, no external data, no known inputs, default limits, strict, no states (axis -2). */
KILN_API void kiln_onnx_options_init(kiln_onnx_options *options, size_t struct_size);
#define kiln_onnx_options_default(options) kiln_onnx_options_init((options), sizeof *(options))

/* --------------------------------------------------------------- models */

/* A decoded ONNX model, checked against the limits. Immutable once read. */
typedef struct kiln_onnx_model kiln_onnx_model;

/**
 * Read and decode the ONNX model in `path` (limits NULL: defaults), then
 * check its IR version, its default-domain opset and the counts of the limits.
 * @return KILN_OK with *out to release with kiln_onnx_model_free,
 *         KILN_ERR_IO, KILN_ERR_LIMIT, KILN_ERR_MALFORMED (not an ONNX
 *         ModelProto) or KILN_ERR_UNSUPPORTED_VERSION.
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_model_read(const char *path, const kiln_onnx_limits *limits,
                                                         kiln_onnx_model **out, kiln_error *err);

/**
 * Decode the `size` bytes at `bytes` (a serialized ModelProto) and check
 * them as kiln_onnx_model_read does. The bytes are not kept.
 * @return as kiln_onnx_model_read (never KILN_ERR_IO).
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_model_decode(const void *bytes, size_t size,
                                                           const kiln_onnx_limits *limits, kiln_onnx_model **out,
                                                           kiln_error *err);

/** Release `model` (NULL is a no-op). */
KILN_API void kiln_onnx_model_free(kiln_onnx_model *model);

/** @return the number of graph inputs (initializers listed as inputs included), 0 for NULL. */
KILN_API uint32_t kiln_onnx_model_input_count(const kiln_onnx_model *model);

/** @return the number of graph outputs, 0 for NULL. */
KILN_API uint32_t kiln_onnx_model_output_count(const kiln_onnx_model *model);

/* What a graph input or output declares. */
typedef enum kiln_onnx_value_kind {
    KILN_ONNX_VALUE_UNTYPED = 0, /* no type at all */
    KILN_ONNX_VALUE_TENSOR = 1,
    KILN_ONNX_VALUE_OTHER = 2,   /* a sequence, map, optional or sparse tensor: never imported */
} kiln_onnx_value_kind;

/* A graph input or output, as the model declares it (strings owned by the model). */
typedef struct kiln_onnx_value_info {
    const char *name;            /* "" when absent */
    kiln_onnx_value_kind kind;
    kiln_dtype dtype;            /* the element type; KILN_DTYPE_INVALID when not a tensor or not a kiln dtype */
    bool is_initializer;         /* an input that an initializer of the same name gives a value */
} kiln_onnx_value_info;

/**
 * Graph input `index` (`output` false) or graph output `index` (`output` true).
 * @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT for an index out of range.
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_model_value(const kiln_onnx_model *model, bool output, uint32_t index,
                                                          kiln_onnx_value_info *out, kiln_error *err);

/**
 * Read a serialized TensorProto file (the ONNX test data sets' input_K.pb
 * and output_K.pb) into a new kiln tensor, with no external data.
 * `name` (may be NULL) receives the tensor's name, "" when absent, in
 * memory the caller releases with free().
 * @return KILN_OK, KILN_ERR_IO, KILN_ERR_MALFORMED, KILN_ERR_LIMIT or KILN_ERR_UNSUPPORTED_DTYPE.
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_tensor_read_file(const char *path, const kiln_onnx_limits *limits,
                                                               kiln_tensor **out, char **name, kiln_error *err);

/* -------------------------------------------------------------- imports */

/* What an import made: the builder, the report, the input names. */
typedef struct kiln_onnx_result kiln_onnx_result;

/**
 * Import `model` as `options` say (NULL: defaults). Metadata records the
 * producer, its version, the IR version and every imported opset.
 * *out receives a result whenever the import ran, successful or not (read
 * its report on failure); it is NULL only when the arguments are invalid
 * or memory ran out before the import began.
 * @return KILN_OK; KILN_ERR_UNSUPPORTED_OP when some construct cannot be
 *         imported (every one in the result's report, the first in the
 *         message); KILN_ERR_INVALID_ARGUMENT for undeclared dims (all of
 *         them in the message) or options whose struct_size is not
 *         sizeof(kiln_onnx_options); or the first other error (a malformed
 *         tensor, a node kiln refuses, a given value that contradicts the
 *         graph: KILN_ERR_RANK_MISMATCH, KILN_ERR_SHAPE_GUARD, KILN_ERR_DTYPE_MISMATCH).
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_import(const kiln_onnx_model *model, const kiln_onnx_options *options,
                                                     kiln_onnx_result **out, kiln_error *err);

/**
 * kiln_onnx_model_read with options->limits, then kiln_onnx_import.
 * *out is NULL when the model could not be read.
 * @return the status of the read or of the import.
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_import_file(const char *path, const kiln_onnx_options *options,
                                                          kiln_onnx_result **out, kiln_error *err);

/**
 * kiln_onnx_model_decode with options->limits, then kiln_onnx_import.
 * *out is NULL when the bytes could not be decoded.
 * @return the status of the decoding or of the import.
 */
KILN_API KILN_NODISCARD kiln_status kiln_onnx_import_memory(const void *bytes, size_t size,
                                                            const kiln_onnx_options *options,
                                                            kiln_onnx_result **out, kiln_error *err);

/** Release `result` and the builder it still owns (NULL is a no-op). */
KILN_API void kiln_onnx_result_free(kiln_onnx_result *result);

/**
 * @return the imported program's builder, owned by `result` (add checks,
 *         evidence or metadata, then save or encode it); NULL unless the
 *         import succeeded (or after kiln_onnx_result_take_builder).
 */
KILN_API kiln_builder *kiln_onnx_result_builder(kiln_onnx_result *result);

/** @return the builder, now owned by the caller (kiln_builder_free), and NULL in `result`; NULL as kiln_onnx_result_builder. */
KILN_API kiln_builder *kiln_onnx_result_take_builder(kiln_onnx_result *result);

/** @return how many constructs could not be imported (0 for NULL or a successful import). */
KILN_API uint32_t kiln_onnx_result_unsupported_count(const kiln_onnx_result *result);

/**
 * @return line `index` of the report ("node 3 'name' (Op): reason"), valid
 *         while `result` lives; NULL when `index` is out of range.
 */
KILN_API const char *kiln_onnx_result_unsupported(const kiln_onnx_result *result, uint32_t index);

/** @return how many graph inputs became kiln inputs, in the model's order (0 for NULL). */
KILN_API uint32_t kiln_onnx_result_input_count(const kiln_onnx_result *result);

/** @return the ONNX name of kiln input `index`, valid while `result` lives; NULL when out of range. */
KILN_API const char *kiln_onnx_result_input_onnx_name(const kiln_onnx_result *result, uint32_t index);

/**
 * @return the kiln name of input `index` (the ONNX name made an identifier,
 *         with a suffix against clashes: the name kiln_session_set_input
 *         takes), valid while `result` lives; NULL when out of range.
 */
KILN_API const char *kiln_onnx_result_input_kiln_name(const kiln_onnx_result *result, uint32_t index);

#ifdef __cplusplus
}
#endif

#endif
