/*
 * kiln.h — the public C API of kiln: build, save, load and run exported
 * tensor programs under a declared shape contract.
 *
 * Conventions
 *  - Every fallible function returns kiln_status (KILN_OK = 0) and takes a
 *    trailing `kiln_error *err` (may be NULL) that receives the code and a
 *    message naming what was wrong.
 *  - One call per job; what varies goes in an options struct (NULL means
 *    defaults). Counts come before the arrays they count.
 *  - Handles are opaque and freed by their *_free function, which accepts
 *    NULL; each handle's comment says who owns it and which threads may
 *    use it.
 *  - Versioned structs begin with `struct_size`. Fill one with its
 *    kiln_*_default(&s): a macro that calls kiln_*_init(&s, sizeof s), so
 *    struct_size records the size of the header the caller was compiled
 *    with. The library accepts any struct_size from the struct's 1.0 size
 *    upward: the fields an older, shorter struct lacks take their
 *    defaults, and a newer caller's longer struct is accepted when every
 *    byte this library does not know is zero (else KILN_ERR_INVALID_ARGUMENT
 *    names the struct and the first unknown byte). Structs a function
 *    fills (kiln_node_profile, ...) are filled up to their struct_size.
 *  - ABI policy: structs declared here keep their layout for all of 1.x;
 *    versioned structs only grow at the end, past their old size (never
 *    into its tail padding). CI compares the shared library's ABI with
 *    the 1.0 baseline (tests/abi/).
 *  - Input-controlled conditions are reported as errors, never asserted.
 *  - Indexed getters (kiln_program_dim(program, index, &out) and the like)
 *    are defined for every index: past the count they give a zeroed struct
 *    (NULL names), a NULL pointer, -1 for a text's length, 0 for a count,
 *    UINT32_MAX for a value id, false, or KILN_ERR_INVALID_ARGUMENT.
 *  - Helpers kiln's own tools and bindings share (byte sizes in words,
 *    name distances, atomic file writes) are in <kiln/util.h>.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kiln/status.h>
#include <kiln/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @return the library version as "MAJOR.MINOR.PATCH" (KILN_VERSION_STRING of the library's build). */
KILN_API const char *kiln_version(void);

/**
 * @return the library version as MAJOR * 10000 + MINOR * 100 + PATCH: the
 * KILN_VERSION_NUMBER the library was built with, which a caller compares
 * with the one it was compiled against (<kiln/version.h>).
 */
KILN_API unsigned kiln_version_number(void);

/** Highest tensor rank kiln accepts anywhere. */
#define KILN_MAX_RANK 8

/* ------------------------------------------------------------------ dtypes */

/* Element types. The numeric values are stored in artifacts: never renumbered. */
typedef enum kiln_dtype {
    KILN_DTYPE_INVALID = 0,
    KILN_F32 = 1,
    KILN_F64 = 2,
    KILN_F16 = 3,
    KILN_BF16 = 4,
    KILN_I8 = 5,
    KILN_I16 = 6,
    KILN_I32 = 7,
    KILN_I64 = 8,
    KILN_U8 = 9,
    KILN_U16 = 10,
    KILN_U32 = 11,
    KILN_U64 = 12,
    KILN_BOOL = 13,
} kiln_dtype;

/** @return the short name ("f32", "i64", "bool", ...), or "invalid". */
KILN_API const char *kiln_dtype_name(kiln_dtype dtype);

/** @return the size of one element in bytes, or 0 for an unknown dtype. */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype);

/**
 * Widen an f16 bit pattern (IEEE 754 binary16) to f32. Exact for every
 * pattern: zeros, subnormals, normals and infinities keep their value and
 * sign; a NaN stays a NaN with its sign and its payload's top bits.
 */
KILN_API float kiln_f16_to_f32(uint16_t bits);

/** Widen a bf16 bit pattern to f32: exact for every pattern (a bf16 is the top half of an f32). */
KILN_API float kiln_bf16_to_f32(uint16_t bits);

/** Parse a short dtype name. @return KILN_OK or KILN_ERR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_dtype_from_name(const char *name, kiln_dtype *out);

/**
 * @return true if this runtime can load and run tensors of `dtype`. f16 and
 * bf16 are run in programs whose file carries required feature bit 0
 * (half-precision values), which the writer sets when a program holds them.
 */
KILN_API bool kiln_dtype_is_supported(kiln_dtype dtype);

/* ----------------------------------------------------------------- tensors */

/* A dense, C-ordered, owned or borrowed tensor. Owned by whoever made it
 * (kiln_tensor_new, _wrap, kiln_npy_read_*), except a session's outputs,
 * which the session owns. Readers on many threads may share one; a writer
 * needs it alone. */
typedef struct kiln_tensor kiln_tensor;

/**
 * Allocate a zero-filled tensor. `shape` has `rank` non-negative entries
 * (may be NULL when rank is 0).
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT, KILN_ERR_LIMIT (size overflow)
 *         or KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_tensor_new(kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                           kiln_tensor **out, kiln_error *err);

/**
 * Wrap caller memory as a tensor without copying it: `size` bytes at
 * `data`, C order, native little-endian, exactly the bytes `shape` needs
 * in `dtype`. The tensor borrows `data`, which must stay valid and
 * unchanged while the tensor is in use (bound to a session, until its run
 * completes); kiln_tensor_free frees the wrapper only. `data` must be
 * aligned to the element size (kernels read elements in place) and may be
 * NULL only when the shape holds no element. This is how a binding hands
 * a NumPy array's own buffer to a session.
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT (a size that does not match
 *         the shape, misaligned or NULL data, an unknown dtype), KILN_ERR_LIMIT
 *         (size overflow) or KILN_ERR_OUT_OF_MEMORY (the wrapper).
 */
KILN_API KILN_NODISCARD kiln_status kiln_tensor_wrap(kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                                     void *data, size_t size, kiln_tensor **out, kiln_error *err);

/**
 * Point a wrapper made by kiln_tensor_wrap at other memory, with the same
 * checks, allocating nothing: a binding that runs many times reuses one
 * wrapper per input. On failure the wrapper is unchanged.
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT (as kiln_tensor_wrap, or a
 *         tensor that owns its data) or KILN_ERR_LIMIT.
 */
KILN_API KILN_NODISCARD kiln_status kiln_tensor_rewrap(kiln_tensor *tensor, kiln_dtype dtype, uint32_t rank,
                                                       const int64_t *shape, void *data, size_t size,
                                                       kiln_error *err);

/** Release a tensor made by kiln_tensor_new, kiln_tensor_wrap or kiln_npy_read_* (NULL is a no-op). */
KILN_API void kiln_tensor_free(kiln_tensor *tensor);

KILN_API kiln_dtype kiln_tensor_dtype(const kiln_tensor *tensor);
KILN_API uint32_t kiln_tensor_rank(const kiln_tensor *tensor);
/** @return the `rank` extents; valid while the tensor lives. */
KILN_API const int64_t *kiln_tensor_shape(const kiln_tensor *tensor);
KILN_API uint64_t kiln_tensor_element_count(const kiln_tensor *tensor);
KILN_API size_t kiln_tensor_byte_size(const kiln_tensor *tensor);
/** @return the element buffer (C order, native little-endian). */
KILN_API void *kiln_tensor_data(kiln_tensor *tensor);
KILN_API const void *kiln_tensor_const_data(const kiln_tensor *tensor);

/**
 * Write the shape as Python does, e.g. "(3, 2)", "(4,)" or "()".
 * @return the length the full text needs, like snprintf.
 */
KILN_API int kiln_tensor_format_shape(const kiln_tensor *tensor, char *buffer, size_t size);

/* --------------------------------------------------------------------- npy */

/**
 * Read a NumPy .npy file (format 1.0, 2.0 or 3.0; little-endian or
 * byte-order-free dtypes; C order). Fortran order, big-endian data, object
 * and other unsupported dtypes are refused with KILN_ERR_NPY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_npy_read_file(const char *path, kiln_tensor **out, kiln_error *err);

/** Same as kiln_npy_read_file, from memory. */
KILN_API KILN_NODISCARD kiln_status kiln_npy_read_memory(const void *bytes, size_t size, kiln_tensor **out,
                                                kiln_error *err);

/** Write `tensor` as a .npy file (format 1.0, or 2.0 if the header needs it). */
KILN_API KILN_NODISCARD kiln_status kiln_npy_write_file(const char *path, const kiln_tensor *tensor,
                                               kiln_error *err);

/* ------------------------------------------------------------------ limits */

/* Ceilings applied while loading. Every one is checked before the
 * allocation it bounds. One is a session's: max_arena_bytes is the
 * default limit of the arena of every session of the program (checked at
 * kiln_session_new, which may set its own), not a condition of loading:
 * a program too large to run at the upper bound of its domain still loads,
 * inspects and runs in sessions that narrow its dims. */
typedef struct kiln_limits {
    size_t struct_size;
    uint32_t max_sections;        /* default 64 */
    uint32_t max_string_length;   /* default 4096 bytes */
    uint32_t max_metadata;        /* default 256 key/value pairs */
    uint32_t max_dims;            /* default 256 */
    uint32_t max_expr_nodes;      /* default 65536 */
    uint32_t max_inputs;          /* default 1024 */
    uint32_t max_outputs;         /* default 1024 */
    uint32_t max_weights;         /* default 65536 */
    uint32_t max_nodes;           /* default 1000000 */
    uint32_t max_node_inputs;     /* default 64 */
    uint32_t max_opset_entries;   /* default 1024 */
    uint32_t max_values;          /* default 4194304: inputs + weights + nodes */
    uint32_t max_attributes;      /* default 64 per node */
    uint64_t max_weight_bytes;    /* default 16 GiB */
    uint64_t max_decompressed_bytes; /* default 16 GiB per compressed section */
    uint64_t max_arena_bytes;     /* default 4 GiB: sessions' default (kiln_session_options); also the
                                   * bound of the program's states together (kiln_state_new) */
    /* default 256 MiB: the raw bytes of every compressed section but the
     * weight data, together (the weight data's own bound is its weights) */
    uint64_t max_decompressed_program_bytes;
    /* Work, not memory: */
    uint64_t max_proof_steps;     /* default 100000000: expression nodes the shape prover may
                                     evaluate while checking one program (0.3-0.5 s here) */
    uint64_t max_replay_nodes;    /* default 1048576: nodes evidence replay may run, counted over
                                     cases 0..i for case i (all the cases of a 1024-node program) */
    /* Since 1.1: */
    uint32_t max_methods;         /* default 64: entry points of one program (format 1.3) */
} kiln_limits;

/** Fill `limits` (struct_size bytes; kiln_limits_default passes sizeof) with the defaults listed above. */
KILN_API void kiln_limits_init(kiln_limits *limits, size_t struct_size);
#define kiln_limits_default(limits) kiln_limits_init((limits), sizeof *(limits))

/* ----------------------------------------------------------------- builder */

typedef enum kiln_mode {
    KILN_MODE_INFERENCE = 0,
    KILN_MODE_TRAINING = 1,
} kiln_mode;

/* The role of a stored tensor, as PyTorch distinguishes them. */
typedef enum kiln_weight_kind {
    KILN_WEIGHT_PARAMETER = 0,
    KILN_WEIGHT_BUFFER = 1,
    KILN_WEIGHT_CONSTANT = 2,
} kiln_weight_kind;

/* Assembles a program. Owned by the caller of kiln_builder_new; one
 * thread at a time (one builder per thread). */
typedef struct kiln_builder kiln_builder;

/* A value (input, weight or op result) inside one builder. */
typedef uint32_t kiln_value;

/**
 * Start a program named `program_name` (non-empty, printable).
 * @return KILN_OK, KILN_ERR_INVALID_ARGUMENT or KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_new(const char *program_name, kiln_builder **out,
                                            kiln_error *err);

KILN_API void kiln_builder_free(kiln_builder *builder);

/** Set a metadata key (e.g. "producer") to `value`, replacing any earlier value. */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_metadata(kiln_builder *builder, const char *key,
                                                     const char *value, kiln_error *err);

/** Record the program's mode (default inference). */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_mode(kiln_builder *builder, kiln_mode mode,
                                                 kiln_error *err);

/**
 * Choose strict (the default) or non-strict checking, before the first op
 * is added. Strict: every precondition of every op must be proven over the
 * whole declared domain, or the op is refused. Non-strict: a precondition
 * on sizes that cannot be proven becomes a runtime guard, stored in the
 * artifact, listed by inspect and checked before every run
 * (spec/contract.md §4.2). The choice is recorded in the artifact.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_strict(kiln_builder *builder, bool strict, kiln_error *err);

/**
 * Declare a dim: a named size with the inclusive range min..max,
 * 0 <= min <= max. Names are identifiers and unique among dims.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_dim(kiln_builder *builder, const char *name,
                                                int64_t min, int64_t max, kiln_error *err);

/** Restrict dim `dim` to multiples of `k` (k >= 1; some value of its range must qualify). */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_dim_multiple_of(kiln_builder *builder, const char *dim,
                                                                     int64_t k, kiln_error *err);

/**
 * Declare a relation across this program's (or method's) dims, written
 * `LHS <= RHS` over declared and derived dims ("past + seq <= 2048"). It
 * is checked before every run, after the inputs bind the dims, and a run
 * where it does not hold is refused naming the dims and their values; the
 * shape prover may assume it (spec/contract.md §1.1), which is how a
 * method proves that an append fits its state. The memory plan is still
 * sized for the dims' own ranges. Format 1.3 (required feature bit 1).
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (no `<=`, an undeclared dim,
 *         a side that does not parse); KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_relation(kiln_builder *builder, const char *relation,
                                                              kiln_error *err);

/**
 * Declare a state tensor: storage a session keeps between runs (a KV
 * cache), of `dtype` and shape `shape[rank]`, whose axis `axis` is its
 * capacity in rows; the session starts it (and kiln_state_reset restarts
 * it) empty, with no rows. Its current length binds the dim `length_dim`
 * in every method that declares that dim, before the inputs are guarded;
 * the ops `state_read` and `state_append` (attribute `state` = `name`)
 * read its rows and append to them in place (spec/ops/state.md). Every
 * method that uses the state declares it alike; sealing keeps one.
 * Format 1.3 (section STAT).
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (a name that is not an
 *         identifier or is taken, a rank outside 1..KILN_MAX_RANK, an axis
 *         outside the rank, a negative size, an unsupported dtype);
 *         KILN_ERR_LIMIT (its bytes overflow); KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_state(kiln_builder *builder, const char *name, kiln_dtype dtype,
                                                           uint32_t rank, const int64_t *shape, uint32_t axis,
                                                           const char *length_dim, kiln_error *err);

/**
 * Name a shape expression over declared dims ("two_seq" = "2*seq"). Input
 * shapes may then use the name, which stands for the expression.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_derived_dim(kiln_builder *builder, const char *name,
                                                                 const char *expression, kiln_error *err);

/**
 * Declare an input. `shape` is a comma-separated list of axes, optionally
 * in brackets ("[batch, 2]"). Each axis is a shape expression: integer
 * constants, declared dims, + - *, and floor-div / and % by a positive
 * constant ("2*n + 1"). A dim used inside an expression must also be some
 * input's whole axis, so that running can bind it.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_input(kiln_builder *builder, const char *name,
                                                  kiln_dtype dtype, const char *shape,
                                                  kiln_value *out, kiln_error *err);

/*
 * Semantic checks on an input's values, kept beside the shape contract and
 * checked before every run (unless a session switches them off).
 */
typedef struct kiln_input_check {
    size_t struct_size;
    bool has_range;          /* every value in min..max (NaN is outside) */
    double min;
    double max;
    bool finite_only;        /* float inputs: no NaN or infinity */
    uint32_t category_count; /* integer inputs: every value one of these */
    const int64_t *categories;
    const char *unit;        /* e.g. "m/s"; NULL for none */
    const char *description; /* NULL for none */
} kiln_input_check;

/** Fill `check` (struct_size bytes; kiln_input_check_default passes sizeof) with "no check". */
KILN_API void kiln_input_check_init(kiln_input_check *check, size_t struct_size);
#define kiln_input_check_default(check) kiln_input_check_init((check), sizeof *(check))

/**
 * Attach semantic checks to input `input` (replacing earlier ones). A range
 * needs min <= max (not NaN); finite_only needs a float input; categories
 * need an integer input and are stored sorted and unique.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_input_check(kiln_builder *builder, const char *input,
                                                                 const kiln_input_check *check, kiln_error *err);

/**
 * Add a stored tensor with a static shape. The builder copies `data`
 * (kiln_dtype_size(dtype) * element count bytes, native little-endian).
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_weight(kiln_builder *builder, const char *name,
                                                   kiln_weight_kind kind, kiln_dtype dtype,
                                                   uint32_t rank, const int64_t *shape,
                                                   const void *data, kiln_value *out,
                                                   kiln_error *err);

/**
 * Add a stored tensor with a static shape whose bytes lie in the file at
 * `path`, from byte `offset` on (kiln_dtype_size(dtype) * element count
 * bytes, native little-endian, C order: the element bytes of a .npy file,
 * for example). The builder keeps the path, not the bytes: sealing
 * (kiln_builder_save, kiln_builder_encode) reads them in pieces and writes
 * them to the artifact as they come, so a program's weights need not fit
 * in memory, and need not be copied into it. The file is opened now to
 * check that it is a regular file that holds the bytes, and again when
 * sealing: it must not change in between (a file that no longer holds
 * them fails the seal with KILN_ERR_IO). Bool weights are refused here:
 * their bytes must be checked to be 0 or 1, which kiln_builder_add_weight
 * does.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (a name, kind, shape or path
 *         refused as by kiln_builder_add_weight, or a bool dtype);
 *         KILN_ERR_UNSUPPORTED_DTYPE; KILN_ERR_IO when the file cannot be
 *         opened, is not a regular file or is too short.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_weight_file(kiln_builder *builder, const char *name,
                                                                 kiln_weight_kind kind, kiln_dtype dtype,
                                                                 uint32_t rank, const int64_t *shape,
                                                                 const char *path, uint64_t offset,
                                                                 kiln_value *out, kiln_error *err);

/**
 * Add a rank-0 constant of `dtype` holding `value` (converted to dtype;
 * the value must be representable). Scalars broadcast against any shape.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_scalar(kiln_builder *builder, kiln_dtype dtype,
                                                   double value, kiln_value *out,
                                                   kiln_error *err);

/**
 * Apply the registered op `op` (latest version this runtime has) to
 * `inputs` and produce one value. Shapes and dtypes are checked now: a
 * broadcast that cannot be proven for every point of the declared domain
 * is refused with a message naming the node and the axes.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_op(kiln_builder *builder, const char *op,
                                               uint32_t input_count, const kiln_value *inputs,
                                               kiln_value *out, kiln_error *err);

/* How an output computed on this runtime is compared with its expected value. */
typedef enum kiln_compare_kind {
    KILN_COMPARE_EXACT = 0,     /* equal values (floats numerically: 0.0 == -0.0; NaN == NaN if nan_equal) */
    KILN_COMPARE_TOLERANCE = 1, /* |actual - expected| <= atol + rtol * |expected| */
} kiln_compare_kind;

typedef struct kiln_compare_rule {
    kiln_compare_kind kind;
    double atol;
    double rtol;
    bool nan_equal; /* a NaN matches a NaN (otherwise any NaN is a mismatch) */
} kiln_compare_rule;

/*
 * A known-input case: the program, given `inputs` (one per declared input,
 * by name), must produce `expected` for the named outputs under `rules`
 * (one per expected output). The arrays are the caller's, read during the
 * call that takes the case.
 */
typedef struct kiln_evidence_case {
    const char *name;
    uint32_t input_count;
    const char *const *input_names;
    const kiln_tensor *const *inputs;
    uint32_t output_count;
    const char *const *output_names;
    const kiln_tensor *const *expected;
    const kiln_compare_rule *rules;
} kiln_evidence_case;

/**
 * Record the known-input case `evidence`: stored in the artifact and
 * replayed by kiln_program_replay_evidence and `kiln verify`. Tensors are
 * copied. In a program with states, an input named `state:NAME` gives
 * the rows state NAME holds when the case starts (format 1.3).
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_evidence(kiln_builder *builder,
                                                              const kiln_evidence_case *evidence, kiln_error *err);

/* Typed node attributes. Values are stored in the artifact; codes never change. */
typedef enum kiln_attribute_type {
    KILN_ATTRIBUTE_INT = 1,    /* i */
    KILN_ATTRIBUTE_FLOAT = 2,  /* f */
    KILN_ATTRIBUTE_STRING = 3, /* s */
    KILN_ATTRIBUTE_INTS = 4,   /* ints[count] */
    KILN_ATTRIBUTE_FLOATS = 5, /* floats[count] */
} kiln_attribute_type;

typedef struct kiln_attribute {
    const char *name;
    kiln_attribute_type type;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
    uint32_t count;
} kiln_attribute;

/**
 * kiln_builder_add_op with attributes (copied). Each op accepts a fixed
 * set of attribute names and types (spec/opset.md); anything else is
 * refused, naming the attribute.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_op_with_attributes(kiln_builder *builder, const char *op,
                                                                        uint32_t input_count,
                                                                        const kiln_value *inputs,
                                                                        uint32_t attribute_count,
                                                                        const kiln_attribute *attributes,
                                                                        kiln_value *out, kiln_error *err);

/**
 * What the builder knows statically about `value` (input, weight or op
 * result), for importers that choose ops by their operands: its dtype, its
 * rank and, per axis, the constant size or -1 when the size depends on
 * dims. `sizes` may be NULL.
 * @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT if `value` is not one of
 *         the builder's values.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_value_type(const kiln_builder *builder, kiln_value value,
                                                            kiln_dtype *dtype, uint32_t *rank,
                                                            int64_t sizes[KILN_MAX_RANK], kiln_error *err);

/**
 * The size of axis `axis` of `value` as canonical expression text over the
 * builder's dims ("batch", "8*batch", "2*n + 1", "12"), written into
 * `buffer` like snprintf (truncated to fit, NUL-terminated when `size` > 0;
 * *length, if not NULL, receives the full length). Equal sizes give equal
 * texts, so an importer that tracks sizes as text (a shape computed by
 * the model it imports) can compare them with strcmp.
 * @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT if `value` is not one of
 *         the builder's values or `axis` is not below its rank.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_value_axis_text(kiln_builder *builder, kiln_value value,
                                                                uint32_t axis, char *buffer, size_t size,
                                                                size_t *length, kiln_error *err);

/**
 * The canonical text of size expression `expression` over the builder's
 * dims and derived dims (the shape-text grammar of one axis: integers,
 * dims, + - *, and / or % by a positive constant): "batch*8" and
 * "4*batch + batch*4" both give "8*batch". Written like
 * kiln_builder_value_axis_text.
 * @return KILN_OK, or the parse error (KILN_ERR_INVALID_ARGUMENT naming
 *         what is wrong: an unknown dim, a division by a non-constant, ...).
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_canonical_size(kiln_builder *builder, const char *expression,
                                                               char *buffer, size_t size, size_t *length,
                                                               kiln_error *err);

/**
 * Name the node that produced `node` (an op result), as the source
 * framework named it ("/layer1/layer1.0/conv1/Conv"), replacing any
 * earlier name; NULL removes it. Names are metadata: tools show them
 * (inspect, dot, disasm) but they change neither what the node computes
 * nor the program identity. They are stored in the ancillary section NNAM
 * (format 1.2), written only when some node has a name. A name is 1..1024
 * bytes of well-formed UTF-8 without control characters, and need not be
 * unique.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT if `node` is not an op result
 *         of this builder or the name breaks the rule; KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_node_name(kiln_builder *builder, kiln_value node,
                                                               const char *name, kiln_error *err);

/**
 * Make `method` a further entry point of the program `builder` assembles,
 * called `name` (an identifier no other method of the program has; the
 * builder's own method is "main" unless kiln_builder_set_method_name
 * renames it). A method is a program of its own — dims, inputs, checks,
 * nodes, outputs, evidence, strictness — over the program's weights: its
 * weights join the program's one weight table, a tensor equal to one
 * already there (kind, dtype, shape and bytes, whatever its name) stored
 * once, and a different tensor whose name is taken (an importer's val_0 in
 * two graphs) stored as NAME.METHOD; it shares the program's name, mode
 * and metadata (its mode
 * must be the program's; metadata it sets joins the program's, and a key
 * set to two values is refused when sealing). The artifact is format 1.3
 * (section MTHD). On success
 * `builder` owns `method`, which must not be freed by the caller; it may
 * still be built until the program is encoded or saved.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for a bad or taken name, a
 *         method that has methods of its own or another mode, is `builder`,
 *         or belongs to a program already; KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_method(kiln_builder *builder, const char *name,
                                                            kiln_builder *method, kiln_error *err);

/**
 * Name the builder's own method (the first of the artifact's; default
 * "main"), e.g. "prefill". The name is stored only when the program has
 * further methods (kiln_builder_add_method).
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for a name that is not an
 *         identifier or that a further method has; KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_set_method_name(kiln_builder *builder, const char *name,
                                                                 kiln_error *err);

/** Expose `value` as a program output called `name`. */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_output(kiln_builder *builder, const char *name,
                                                   kiln_value value, kiln_error *err);

/* How to seal. */
typedef struct kiln_save_options {
    size_t struct_size;
    /* zlib level 1..9 for the weight data, 0 to store it raw (default 0).
     * Compressed weights are inflated into memory when loaded. */
    int compression_level;
    /*
     * Seconds since the epoch recorded as metadata "created" (UTC,
     * ISO 8601). Default -1: only if the environment variable
     * SOURCE_DATE_EPOCH holds such a number; otherwise no timestamp, so
     * the same program always gives the same bytes.
     */
    int64_t timestamp;
    /* Called while sections are hashed and compressed, then again while
     * the file is written (NULL: not called). */
    kiln_progress_fn progress;
    /*
     * Store the memory plan (every result's arena offset and size at the
     * domain's upper bound) as the ancillary section PLAN, for runtimes and
     * tools that would rather not plan (default false: a loader plans when
     * the section is absent, and a file without it stays format 1.0).
     */
    bool store_memory_plan;
    void *progress_user;
    /*
     * The limits of the readers the artifact is meant for (NULL, the
     * default: kiln_limits_default). An artifact with more metadata, dims,
     * inputs, outputs, evidence cases, ... or longer strings than they
     * accept is not written: KILN_ERR_LIMIT names what is over which limit.
     * Readers that load with raised limits are named here with the same
     * raised limits.
     */
    const kiln_limits *reader_limits;
} kiln_save_options;

/** Fill `options` (struct_size bytes; kiln_save_options_default passes sizeof) with the defaults above. */
KILN_API void kiln_save_options_init(kiln_save_options *options, size_t struct_size);
#define kiln_save_options_default(options) kiln_save_options_init((options), sizeof *(options))

/**
 * Seal the program under `options` (NULL = defaults) into an artifact in
 * memory. The bytes are deterministic for a given program and options.
 * Free *bytes with free().
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_encode(const kiln_builder *builder, const kiln_save_options *options,
                                                        void **bytes, size_t *size, kiln_error *err);

/**
 * Seal the program under `options` (NULL = defaults) and write it to
 * `path` atomically (temp file + rename). Streamed: each section, the
 * weights included, goes to the file a piece at a time, hashed and
 * checksummed on the way, so sealing holds no second copy of the weights
 * (kiln_builder_add_weight_file: not even a first).
 * @return KILN_OK, a sealing error (as kiln_builder_encode), or
 *         KILN_ERR_IO naming the file that could not be read or written.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_save(const kiln_builder *builder, const char *path,
                                                      const kiln_save_options *options, kiln_error *err);

/* ----------------------------------------------------------------- loading */

/*
 * How much of the file's integrity to prove, and when. In every policy the
 * artifact digest (which commits to header, table and, through per-section
 * BLAKE2b-256 hashes, every section) and any signature are checked at open.
 */
typedef enum kiln_verify_policy {
    KILN_VERIFY_FULL = 0, /* every section's CRC32 and BLAKE2b-256, zero gaps: at open */
    KILN_VERIFY_NONE = 1, /* only program-section CRCs: for callers who verified the file already */
    KILN_VERIFY_LAZY = 2, /* program sections at open; weights when a session first needs them */
} kiln_verify_policy;

/* An Ed25519 public key (32 bytes) or secret key (64 bytes: seed + public). */
typedef struct kiln_public_key {
    uint8_t bytes[32];
} kiln_public_key;

typedef struct kiln_secret_key {
    uint8_t bytes[64];
} kiln_secret_key;

typedef struct kiln_load_options {
    size_t struct_size;
    kiln_verify_policy verify;
    /* The ceilings loading applies (NULL, the default: kiln_limits_default);
     * read during the load, and the program keeps a copy. */
    const kiln_limits *limits;
    /* Keys whose signatures are accepted. When any is given, an artifact
     * signed by another key is refused (KILN_ERR_UNTRUSTED_KEY). */
    const kiln_public_key *trusted_keys;
    uint32_t trusted_key_count;
    /* Refuse unsigned artifacts (KILN_ERR_UNSIGNED). */
    bool require_signature;
    /* Called while section bytes are checked at open (NULL: not called). */
    kiln_progress_fn progress;
    void *progress_user;
} kiln_load_options;

/** Fill `options` (struct_size bytes; kiln_load_options_default passes sizeof) with defaults: full
 *  verification, default limits. */
KILN_API void kiln_load_options_init(kiln_load_options *options, size_t struct_size);
#define kiln_load_options_default(options) kiln_load_options_init((options), sizeof *(options))

/* A loaded, validated, immutable program. Owned by the caller of
 * kiln_program_load (or by the kiln_artifact it came from); safe to use
 * from any number of threads at once, sessions included. */
typedef struct kiln_program kiln_program;

/* A report of every problem loading found (see "compatibility report" below). */
typedef struct kiln_report kiln_report;

/**
 * Map `path`, validate it as `options->verify` says (full by default) and
 * decode the program. Loading collects every problem it can find instead
 * of stopping at the first; with `report` non-NULL they are handed over
 * in *report (always, unless out of memory; free it with
 * kiln_report_free), and *out is NULL when the report holds an error.
 * @return KILN_OK, or the status of the first error found; the message
 *         names every incompatibility found.
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_load(const char *path, const kiln_load_options *options,
                                                      kiln_program **out, kiln_report **report, kiln_error *err);

/** Same as kiln_program_load, from `size` bytes in memory (copied). */
KILN_API KILN_NODISCARD kiln_status kiln_program_load_memory(const void *bytes, size_t size,
                                                             const kiln_load_options *options, kiln_program **out,
                                                             kiln_report **report, kiln_error *err);

/** Free a program (NULL is fine). Every session made from it must be freed first. */
KILN_API void kiln_program_free(kiln_program *program);

/* ---------------------------------------------------------------- evidence */

KILN_API uint32_t kiln_program_evidence_count(const kiln_program *program);
KILN_API const char *kiln_program_evidence_name(const kiln_program *program, uint32_t index);
/** Number of expected outputs in evidence case `index`. */
KILN_API uint32_t kiln_program_evidence_output_count(const kiln_program *program, uint32_t index);
/** Number of inputs of evidence case `index` (0 when out of range). */
KILN_API uint32_t kiln_program_evidence_input_count(const kiln_program *program, uint32_t index);
/**
 * Input `input` of evidence case `index`: its name and a read-only view of
 * its values (C order, native little-endian), valid while the program lives.
 * @return false (and nothing written) when either index is out of range.
 */
KILN_API bool kiln_program_evidence_input(const kiln_program *program, uint32_t index, uint32_t input,
                                          const char **name, kiln_dtype *dtype, uint32_t *rank,
                                          const int64_t **shape, const void **data);

/* The outcome for one expected output of a replayed case. */
typedef struct kiln_evidence_result {
    const char *output;      /* the output's name */
    kiln_compare_rule rule;
    bool passed;
    uint64_t elements;
    uint64_t mismatches;     /* elements outside the rule */
    double max_abs_error;    /* over finite pairs; NaN/inf mismatches count in mismatches */
    double max_rel_error;    /* |a - e| / |e| over pairs with e != 0 */
} kiln_evidence_result;

/**
 * Run evidence case `index` on this runtime and compare each expected
 * output. `results` has room for kiln_program_evidence_output_count items.
 * Replaying cases 0..index must run at most limits.max_replay_nodes nodes
 * (the program's node count times index + 1), the limits it was loaded
 * with: `kiln verify` replays every case in order, so that bounds its
 * work whatever the artifact holds.
 * @return KILN_OK when the case ran (each result says pass or fail), or
 *         the error that kept it from running (e.g. a guard refused its
 *         inputs; KILN_ERR_LIMIT past max_replay_nodes).
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_replay_evidence(const kiln_program *program, uint32_t index,
                                                                 kiln_evidence_result *results, kiln_error *err);


/* ---------------------------------------------------- compatibility report */

/*
 * Will this artifact run here, and if not, exactly why? Loading with a
 * report collects every problem it can find instead of stopping at the
 * first: every unknown critical section and feature bit, every op version
 * this runtime lacks, every unsupported dtype, the mode, the memory plan.
 * (Damage to the structure, digest or signature still ends the search:
 * nothing after it can be trusted.) Opening fails if and only if the
 * report holds an error; warnings (e.g. a skipped ancillary section) are
 * kept. Codes are stable strings, listed in spec/compatibility.md.
 */
typedef enum kiln_severity {
    KILN_SEVERITY_ERROR = 0,
    KILN_SEVERITY_WARNING = 1,
} kiln_severity;

typedef struct kiln_problem_info {
    kiln_severity severity;
    kiln_status status;   /* the matching status code */
    const char *code;     /* stable, e.g. "op-missing" */
    const char *location; /* e.g. "section OPST entry 2", "input 'x'"; may be "" */
    const char *message;
} kiln_problem_info;

/* A kiln_report is owned by the caller it was handed to (kiln_program_load),
 * or by the kiln_artifact it belongs to; immutable, so any number of
 * threads may read it at once. */

KILN_API uint32_t kiln_report_count(const kiln_report *report);
/** Problem `index`; strings live as long as the report. */
KILN_API void kiln_report_problem(const kiln_report *report, uint32_t index, kiln_problem_info *out);
KILN_API bool kiln_report_has_errors(const kiln_report *report);
KILN_API void kiln_report_free(kiln_report *report);

/* ----------------------------------------------------- runtime description */

/** Format versions this runtime reads: major, and the newest minor it knows. */
KILN_API void kiln_runtime_format_version(uint16_t *major, uint16_t *minor);
/** Number of ops in this runtime's registry. */
KILN_API uint32_t kiln_runtime_op_count(void);
/** Op `index` of the registry and the inclusive version range it implements. */
KILN_API void kiln_runtime_op(uint32_t index, const char **name, uint32_t *min_version, uint32_t *max_version);
/** Build features, e.g. "reference-kernels"; NULL-terminated static list. */
KILN_API const char *const *kiln_runtime_features(void);

/* ----------------------------------------------------------- introspection */

/*
 * Methods: an artifact holds one or more entry points (format 1.3), each a
 * program of its own — signature, dims, checks, graph, evidence — over one
 * set of weights, e.g. "prefill" and "decode" of a generative decoder. The
 * handle kiln_program_load returns is the first method; every other is a
 * handle owned by it (valid while it lives; kiln_program_free of a method's
 * handle does nothing), which every call taking a `const kiln_program *`
 * accepts: its questions are answered for that method, the artifact's
 * (name, metadata, weights, sections, identities, signature) for the
 * artifact. A one-method artifact's method is called "main".
 */

/** @return how many methods the artifact of `program` has (1 or more). */
KILN_API uint32_t kiln_program_method_count(const kiln_program *program);

/** @return method `index` (0 = the first, the one kiln_program_load returns) of program's artifact, or NULL. */
KILN_API const kiln_program *kiln_program_method_at(const kiln_program *program, uint32_t index);

/** @return the name of the method `program` is, e.g. "decode" ("main" in a one-method artifact). */
KILN_API const char *kiln_program_method_name(const kiln_program *program);

/**
 * The method called `name` of program's artifact, into *out.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (*out NULL) when there is none:
 *         the message lists the methods, suggesting the nearest name.
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_method(const kiln_program *program, const char *name,
                                                        const kiln_program **out, kiln_error *err);

/** @return how many state tensors program's artifact declares (format 1.3; 0 before). */
KILN_API uint32_t kiln_program_state_count(const kiln_program *program);

/**
 * State `index` of program's artifact: its name, dtype, shape (the
 * capacity; owned by the program), the axis it grows along and the dim
 * its length binds. Any output pointer may be NULL.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for an index out of range.
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_state_at(const kiln_program *program, uint32_t index,
                                                          const char **name, kiln_dtype *dtype, uint32_t *rank,
                                                          const int64_t **shape, uint32_t *axis,
                                                          const char **length_dim, kiln_error *err);

/** @return how many relations across dims the method `program` declares (format 1.3). */
KILN_API uint32_t kiln_program_relation_count(const kiln_program *program);

/**
 * Relation `index` of the method `program` in text, "past + seq <= 2048",
 * into `buffer`.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for an index out of range or
 *         a buffer too small (the message says how long the text is).
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_relation(const kiln_program *program, uint32_t index, char *buffer,
                                                          size_t size, kiln_error *err);

KILN_API const char *kiln_program_name(const kiln_program *program);
KILN_API kiln_mode kiln_program_mode(const kiln_program *program);
/** @return true if the program was built strict (every precondition proven). */
KILN_API bool kiln_program_is_strict(const kiln_program *program);
/** The runtime guards a non-strict program stores (0 for strict programs). */
KILN_API uint32_t kiln_program_runtime_guard_count(const kiln_program *program);
/**
 * Runtime guard `index`: the node it protects and the precondition in
 * words ("x axis 1 size k equals w axis 0 size 4"), owned by the program.
 */
KILN_API const char *kiln_program_runtime_guard(const kiln_program *program, uint32_t index, uint32_t *node);

KILN_API void kiln_program_format_version(const kiln_program *program, uint16_t *major, uint16_t *minor);
/** Copy the 32-byte artifact digest (trailer BLAKE2b-256) into `out`. */
KILN_API void kiln_program_artifact_digest(const kiln_program *program, uint8_t out[32]);

/* The three identities of an artifact (spec/format.md, "Identities"). */
typedef enum kiln_identity {
    KILN_IDENTITY_ARTIFACT = 0, /* the whole file */
    KILN_IDENTITY_PROGRAM = 1,  /* opset, dims, signature, weight table, graph: "architecture" */
    KILN_IDENTITY_STATE = 2,    /* the weight values */
} kiln_identity;

/** Copy the 32-byte digest of one identity into `out`. Computed from the
 *  section table: cheap, and independent of weight compression. */
KILN_API void kiln_program_identity(const kiln_program *program, kiln_identity identity, uint8_t out[32]);

typedef enum kiln_signature_state {
    KILN_SIGNATURE_NONE = 0,       /* unsigned */
    KILN_SIGNATURE_VERIFIED = 1,   /* signed by a trusted key; verified */
    KILN_SIGNATURE_UNVERIFIED = 2, /* signed, but no trusted key was given */
} kiln_signature_state;

typedef struct kiln_signature_info {
    kiln_signature_state state;
    uint8_t key_id[16];
} kiln_signature_info;

KILN_API void kiln_program_signature(const kiln_program *program, kiln_signature_info *out);

/* How an artifact is edited in place (kiln_artifact_add_evidence,
 * kiln_artifact_add_input_checks). */
typedef struct kiln_edit_options {
    size_t struct_size;
    /* Write even what fails here: a case whose outputs fall outside its
     * rules on this runtime, stored evidence that breaks a new input
     * check (kiln verify will then fail the artifact here, which is what a
     * case recorded for another runtime, or a known regression, may
     * want). Default false: refuse, writing nothing. */
    bool force;
    /* How `path` is loaded and checked first (NULL, the default: full
     * verification, default limits); its progress callback reports the
     * check, then, as a second pass, the writing. */
    const kiln_load_options *load;
    /* Since 1.1: the method (format 1.3) whose evidence or checks are
     * edited, by name; NULL (the default): the artifact's first. */
    const char *method;
} kiln_edit_options;

/** Fill `options` (struct_size bytes; kiln_edit_options_default passes sizeof) with the defaults above. */
KILN_API void kiln_edit_options_init(kiln_edit_options *options, size_t struct_size);
#define kiln_edit_options_default(options) kiln_edit_options_init((options), sizeof *(options))

/**
 * Add the evidence case `evidence` to the artifact at `path` (verified in
 * full first) and write the result atomically to `out_path` (NULL:
 * replace `path`). The case is checked like kiln_builder_add_evidence,
 * replayed on this runtime and each expected output compared under its
 * rule; if one falls outside it, nothing is written, unless
 * options->force: then the case is sealed as given. Other sections are
 * copied byte for byte; a signature is dropped, since the digest changes
 * (sign again).
 *
 * @param options           NULL for defaults (see kiln_edit_options)
 * @param results           NULL, or evidence->output_count entries: the
 *                          figures of expected output o (passed, elements,
 *                          mismatches, max abs/rel error, rule; `output` is
 *                          output_names[o]), filled whenever the case ran,
 *                          also when it is refused; zeroed otherwise
 * @param removed_signature NULL, or the signature the artifact had (state
 *                          KILN_SIGNATURE_NONE if unsigned) and the
 *                          written file no longer has; zeroed unless written
 * @return KILN_OK (with force, also for a case that fails here: see
 *         `results`); KILN_ERR_RUNTIME when the case runs but an output
 *         falls outside its rule (the message names the case, each failing
 *         output, its figures and rule); the error that kept the case from
 *         running (e.g. KILN_ERR_SHAPE_GUARD); or a check, load or write
 *         error.
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_add_evidence(const char *path, const char *out_path,
                                                               const kiln_evidence_case *evidence,
                                                               const kiln_edit_options *options,
                                                               kiln_evidence_result *results,
                                                               kiln_signature_info *removed_signature,
                                                               kiln_error *err);

/**
 * Set the semantic checks of inputs of the artifact at `path` (verified in
 * full first) and write the result atomically to `out_path` (NULL: replace
 * `path`; the new file keeps the old one's mode). `inputs[i]` gets
 * `checks[i]`, judged as kiln_builder_set_input_check judges it; a check
 * the input already had is replaced whole, checks of other inputs are
 * kept. Every stored evidence case must satisfy the new checks, else the
 * artifact is not written and the error names the case, the input, the
 * element and the rule; with options->force such cases are kept (kiln
 * verify will then fail them) and the first one found is described in
 * *forced_violation. Other sections are copied byte for byte; a signature
 * is dropped, since the digest changes (sign again).
 *
 * @param options           NULL for defaults (see kiln_edit_options)
 * @param replaced          NULL, or `count` entries: true where the input
 *                          had a check that is now replaced
 * @param removed_signature NULL, or the signature the artifact had (state
 *                          KILN_SIGNATURE_NONE if unsigned) and the
 *                          written file no longer has
 * @param forced_violation  NULL, or (with force) the first kept evidence
 *                          case that breaks a new check; code KILN_OK if none
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for a NULL argument, no
 *         checks, an input named twice or a name that is not an input (the
 *         message lists the inputs); KILN_ERR_INVALID_PROGRAM for a check
 *         the input cannot take; KILN_ERR_INPUT_CHECK for evidence that
 *         breaks a new check; or a load or write error.
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_add_input_checks(const char *path, const char *out_path,
                                                                   uint32_t count, const char *const *inputs,
                                                                   const kiln_input_check *checks,
                                                                   const kiln_edit_options *options, bool *replaced,
                                                                   kiln_signature_info *removed_signature,
                                                                   kiln_error *forced_violation, kiln_error *err);

KILN_API uint32_t kiln_program_metadata_count(const kiln_program *program);
/** Key and value of metadata entry `index` (sorted by key). */
KILN_API void kiln_program_metadata(const kiln_program *program, uint32_t index, const char **key,
                           const char **value);

typedef struct kiln_dim_info {
    const char *name;
    int64_t min;
    int64_t max;
    int64_t multiple_of; /* 1 when any value in min..max is allowed */
} kiln_dim_info;

KILN_API uint32_t kiln_program_dim_count(const kiln_program *program);
KILN_API void kiln_program_dim(const kiln_program *program, uint32_t index, kiln_dim_info *out);
KILN_API uint32_t kiln_program_derived_dim_count(const kiln_program *program);
/** Name of derived dim `index`; its expression is written to `buffer`.
 *  @return the length the full expression text needs, like snprintf; -1 (and
 *  *name NULL) past the count. */
KILN_API int kiln_program_derived_dim(const kiln_program *program, uint32_t index, const char **name,
                                      char *buffer, size_t size);

typedef struct kiln_io_info {
    const char *name;
    kiln_dtype dtype;
    uint32_t rank;
} kiln_io_info;

KILN_API uint32_t kiln_program_input_count(const kiln_program *program);
KILN_API void kiln_program_input(const kiln_program *program, uint32_t index, kiln_io_info *out);
/**
 * The concrete shape of input or output `index` when the dims take
 * `dim_values` (one per dim, in kiln_program_dim order; the values are not
 * checked against the domain). `shape` receives the rank's extents.
 * @return KILN_OK, or KILN_ERR_INVALID_ARGUMENT if an extent overflows.
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_input_shape_at(const kiln_program *program, uint32_t index,
                                                                const int64_t *dim_values,
                                                                int64_t shape[KILN_MAX_RANK], kiln_error *err);
KILN_API KILN_NODISCARD kiln_status kiln_program_output_shape_at(const kiln_program *program, uint32_t index,
                                                                 const int64_t *dim_values,
                                                                 int64_t shape[KILN_MAX_RANK], kiln_error *err);

/** The semantic checks of input `index`, written to *out up to the
 *  struct_size the caller set (kiln_input_check_default); false if it has
 *  none or out's struct_size is below the struct's 1.0 size. Pointers in
 *  *out live as long as the program. */
KILN_API bool kiln_program_input_check(const kiln_program *program, uint32_t index, kiln_input_check *out);
KILN_API uint32_t kiln_program_output_count(const kiln_program *program);
KILN_API void kiln_program_output(const kiln_program *program, uint32_t index, kiln_io_info *out);
/**
 * Render the declared shape of an input or output, e.g. "[batch, 2]".
 * @return the length the full text needs, like snprintf.
 */
KILN_API int kiln_program_input_shape_text(const kiln_program *program, uint32_t index, char *buffer,
                                  size_t size);
KILN_API int kiln_program_output_shape_text(const kiln_program *program, uint32_t index, char *buffer,
                                   size_t size);
/**
 * Render axis `axis` of the declared shape of an input or output, e.g.
 * "batch" or "2*n + 1" (the text between the commas of its shape text).
 * @return the length the full text needs, like snprintf; -1 if `index` or
 *         `axis` is out of range.
 */
KILN_API int kiln_program_input_axis_text(const kiln_program *program, uint32_t index, uint32_t axis,
                                          char *buffer, size_t size);
KILN_API int kiln_program_output_axis_text(const kiln_program *program, uint32_t index, uint32_t axis,
                                           char *buffer, size_t size);
/** @return the value of metadata `key`, or NULL when the program has none. */
KILN_API const char *kiln_program_metadata_value(const kiln_program *program, const char *key);
/** @return the index of the dim called `name` (kiln_program_dim order), or -1. */
KILN_API int64_t kiln_program_find_dim(const kiln_program *program, const char *name);

/* One (op, version) of a program and how many nodes use it. */
typedef struct kiln_op_use {
    const char *name;
    uint32_t version;
    uint32_t nodes;
} kiln_op_use;

/** Number of distinct (op, version) pairs the program's nodes use. */
KILN_API uint32_t kiln_program_op_use_count(const kiln_program *program);
/** Pair `index`, in the order of the first node using each. */
KILN_API void kiln_program_op_use(const kiln_program *program, uint32_t index, kiln_op_use *out);

typedef struct kiln_weight_info {
    const char *name;
    kiln_weight_kind kind;
    kiln_dtype dtype;
    uint32_t rank;
    const int64_t *shape;
    uint64_t byte_size;
} kiln_weight_info;

KILN_API uint32_t kiln_program_weight_count(const kiln_program *program);
KILN_API void kiln_program_weight(const kiln_program *program, uint32_t index, kiln_weight_info *out);

typedef struct kiln_node_info {
    const char *op;
    uint32_t op_version;
    uint32_t input_count;
} kiln_node_info;

KILN_API uint32_t kiln_program_node_count(const kiln_program *program);
KILN_API void kiln_program_node(const kiln_program *program, uint32_t index, kiln_node_info *out);
/**
 * The name node `index` was given (kiln_builder_set_node_name; section NNAM).
 * @return the name, or NULL when the node has none or `index` is out of range.
 */
KILN_API const char *kiln_program_node_name(const kiln_program *program, uint32_t index);
/** @return the number of attributes of node `index` (0 when out of range). */
KILN_API uint32_t kiln_program_node_attribute_count(const kiln_program *program, uint32_t index);
/**
 * Attribute `attribute` of node `node`, in stored order (sorted by name),
 * as a view into the program: valid while the program is.
 * @return true, or false (and *out zeroed) when either index is out of range.
 */
KILN_API bool kiln_program_node_attribute(const kiln_program *program, uint32_t node, uint32_t attribute,
                                          kiln_attribute *out);

typedef struct kiln_section_info {
    char type[5];        /* four characters + NUL */
    bool critical;
    bool compressed;
    uint16_t version;
    uint64_t offset;
    uint64_t stored_size;
    uint64_t raw_size;
    uint32_t crc32;
} kiln_section_info;

KILN_API uint32_t kiln_program_section_count(const kiln_program *program);
KILN_API void kiln_program_section(const kiln_program *program, uint32_t index, kiln_section_info *out);

/*
 * The graph and its memory, for inspection tools (kiln inspect, kiln dot).
 * Values are numbered as spec/format.md §9.1 says: the inputs first, then
 * the weights, then one result per node, so node n's result is value
 * input_count + weight_count + n.
 */

/** Value id of operand `index` of node `node`; UINT32_MAX past either count. */
KILN_API uint32_t kiln_program_node_input(const kiln_program *program, uint32_t node, uint32_t index);
/** Value id that output `index` exposes (an input, a weight or a node result); UINT32_MAX past the count. */
KILN_API uint32_t kiln_program_output_value(const kiln_program *program, uint32_t index);
/**
 * Render the inferred shape of node `node`'s result over the declared
 * dims, e.g. "[batch, 2]". @return the length the full text needs, like snprintf.
 */
KILN_API int kiln_program_node_shape_text(const kiln_program *program, uint32_t node, char *buffer,
                                          size_t size);
/** Bytes of the arena of a session at the upper bound of the declared
 *  domain (whatever the limits; UINT64_MAX if a size there overflows 64 bits). */
KILN_API uint64_t kiln_program_arena_bytes(const kiln_program *program);
/** Sum of the sizes of every node result at the upper bound of the domain,
 *  each rounded up to 64 bytes: what the arena would hold without sharing
 *  (UINT64_MAX as kiln_program_arena_bytes). */
KILN_API uint64_t kiln_program_intermediate_bytes(const kiln_program *program);
/** @return true if the arena layout is the one stored in the artifact
 *  (section PLAN, checked at load), false if this runtime planned it. */
KILN_API bool kiln_program_memory_plan_stored(const kiln_program *program);
/** The required feature bits of the header (all known to this runtime, or it would not have loaded). */
KILN_API uint64_t kiln_program_feature_bits(const kiln_program *program);
/** Name and comparison rule of expected output `index` of evidence case `evidence`
 *  (*name is NULL and *rule zero when either index is out of range). */
KILN_API void kiln_program_evidence_output(const kiln_program *program, uint32_t evidence, uint32_t index,
                                           const char **name, kiln_compare_rule *rule);

/*
 * A container-level description of an artifact, for tools that must show
 * an artifact this runtime cannot run (newer minor with an unknown critical
 * section or feature bit, ops this runtime lacks, another mode). Describing
 * proves the container intact — header, section table, trailer, artifact
 * digest, every section's CRC32 and BLAKE2b-256, zero gaps — but decodes no
 * section and judges no compatibility: kiln_program_load with a report does.
 * A signature is reported as present (KILN_SIGNATURE_UNVERIFIED), never
 * checked.
 */
typedef struct kiln_artifact_description {
    uint16_t major;
    uint16_t minor;
    uint64_t feature_bits;        /* required feature bits, known or not */
    uint64_t file_size;
    uint8_t digest[32];           /* the artifact digest (trailer BLAKE2b-256) */
    kiln_signature_info signature;
    uint32_t section_count;
    kiln_section_info *sections;  /* owned; kiln_artifact_description_free frees it */
} kiln_artifact_description;

/**
 * Describe the artifact at `path`. On failure *out holds no allocation.
 * @return KILN_OK, or the integrity or structure error found (a different
 *         format major is KILN_ERR_UNSUPPORTED_VERSION).
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_describe(const char *path, kiln_artifact_description *out,
                                                           kiln_error *err);
/** Free what kiln_artifact_describe allocated inside `description`, the
 *  struct itself being the caller's (NULL and empty descriptions are fine). */
KILN_API void kiln_artifact_description_free(kiln_artifact_description *description);

/*
 * An artifact opened for inspection: its program when this runtime can
 * run it, otherwise the description of its intact container and the
 * report saying why it cannot run here. Whatever decodes can be
 * inspected, drawn and compared (kiln inspect, dot, diff). Owned by the
 * caller of kiln_artifact_open, with everything it hands out; immutable,
 * so any number of threads may read it at once.
 */
typedef struct kiln_artifact kiln_artifact;

/**
 * Open the artifact at `path` for inspection, loading under `options`
 * (NULL = defaults: full verification; else a verify policy, limits,
 * trusted keys, a progress callback).
 * @return KILN_OK when it is a readable artifact, runnable here or not;
 *         otherwise the error that makes it unreadable (missing file,
 *         damage, another format major), with *out NULL.
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_open(const char *path, const kiln_load_options *options,
                                                       kiln_artifact **out, kiln_error *err);

/**
 * Open the `size` bytes at `bytes` for inspection as kiln_artifact_open
 * opens a file: the same program, report and container facts. The bytes
 * are copied (a program) or only read (a description): the caller may
 * free them once this returns. kiln_artifact_path of the result is
 * "<memory>", and kiln_artifact_file_size is `size`.
 * @return as kiln_artifact_open; KILN_ERR_INVALID_ARGUMENT if `out` is
 *         NULL, or `bytes` is NULL with a nonzero `size`.
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_open_memory(const void *bytes, size_t size,
                                                              const kiln_load_options *options, kiln_artifact **out,
                                                              kiln_error *err);

/** Free an opened artifact, its program, report and description (NULL is fine). */
KILN_API void kiln_artifact_free(kiln_artifact *artifact);
/** The path it was opened from ("<memory>" for kiln_artifact_open_memory), owned by the artifact. */
KILN_API const char *kiln_artifact_path(const kiln_artifact *artifact);
/** Its program, or NULL when this runtime cannot run it (see the report). */
KILN_API kiln_program *kiln_artifact_program(const kiln_artifact *artifact);
/** Every problem found loading it (empty when it runs here; NULL only when out of memory). */
KILN_API const kiln_report *kiln_artifact_report(const kiln_artifact *artifact);
/** The description of its container when it cannot run here, else NULL. */
KILN_API const kiln_artifact_description *kiln_artifact_container(const kiln_artifact *artifact);
/** Container facts, from the program or the description. */
KILN_API void kiln_artifact_format_version(const kiln_artifact *artifact, uint16_t *major, uint16_t *minor);
KILN_API void kiln_artifact_digest(const kiln_artifact *artifact, uint8_t out[32]);
KILN_API void kiln_artifact_signature(const kiln_artifact *artifact, kiln_signature_info *out);
KILN_API uint32_t kiln_artifact_section_count(const kiln_artifact *artifact);
KILN_API void kiln_artifact_section(const kiln_artifact *artifact, uint32_t index, kiln_section_info *out);
/** @return the index of the first section of `type` (e.g. "WDAT"), or -1. */
KILN_API int64_t kiln_artifact_find_section(const kiln_artifact *artifact, const char *type);
/** Size of the file in bytes (of the memory, for kiln_artifact_open_memory). */
KILN_API uint64_t kiln_artifact_file_size(const kiln_artifact *artifact);
/** The required feature bits of the header: all known here when it runs
 *  (kiln_program_feature_bits), else as the container declares them, known or not. */
KILN_API uint64_t kiln_artifact_feature_bits(const kiln_artifact *artifact);

/* ------------------------------------------------- interface differences */

/*
 * How B differs from A for the consumers of A (spec/compatibility.md §6):
 * every difference of interface classed breaking or compatible, and the
 * three identities side by side. `kiln diff` prints it.
 */
typedef enum kiln_change_class {
    KILN_CHANGE_BREAKING = 0,
    KILN_CHANGE_COMPATIBLE = 1,
} kiln_change_class;

typedef struct kiln_change_info {
    kiln_change_class change_class;
    const char *kind;    /* stable code (spec/inspect-json.md §3.2), e.g. "dim-narrowed" */
    const char *subject; /* e.g. "input 'x' axis 0" */
    const char *message;
} kiln_change_info;

/* One identity of A and of B; a side is unknown when its program cannot be decoded here. */
typedef struct kiln_identity_pair {
    const char *name; /* "artifact", "program" or "state" */
    bool known_a, known_b;
    uint8_t a[32], b[32];
} kiln_identity_pair;

/* A comparison's result. Owned by the caller of kiln_diff_artifacts;
 * immutable, so any number of threads may read it at once. */
typedef struct kiln_diff kiln_diff;

/**
 * Compare artifact B with artifact A (both opened for inspection).
 * @return KILN_OK, or KILN_ERR_OUT_OF_MEMORY.
 */
/**
 * kiln_diff_artifacts for one method: A's method `method` against B's of
 * that name, beside what the artifacts share (metadata, weights, the
 * identities, the signature, the format); no method is called added or
 * removed.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT when A or B (if it can run
 *         here) has no method `method`, naming the methods it has;
 *         KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_diff_method(const kiln_artifact *a, const kiln_artifact *b,
                                                     const char *method, kiln_diff **out, kiln_error *err);

KILN_API KILN_NODISCARD kiln_status kiln_diff_artifacts(const kiln_artifact *a, const kiln_artifact *b,
                                                        kiln_diff **out, kiln_error *err);
KILN_API void kiln_diff_free(kiln_diff *diff);
/** Changes in the order found. Strings live as long as the diff; an index out of range gives NULL strings. */
KILN_API uint32_t kiln_diff_change_count(const kiln_diff *diff);
KILN_API void kiln_diff_change(const kiln_diff *diff, uint32_t index, kiln_change_info *out);
/** Number of changes of one class. */
KILN_API uint32_t kiln_diff_class_count(const kiln_diff *diff, kiln_change_class change_class);
/** Identity `index`: 0 artifact, 1 program, 2 state (another index: a zeroed pair, name NULL). */
KILN_API void kiln_diff_identity(const kiln_diff *diff, uint32_t index, kiln_identity_pair *out);
/** @return true if both sides of an identity are known and equal. */
KILN_API bool kiln_identity_pair_equal(const kiln_identity_pair *pair);
/** The identities in words ("same program, new weights"; spec/inspect-json.md §3.1). */
KILN_API const char *kiln_diff_verdict(const kiln_diff *diff);
/** @return true if both programs were decoded and their interfaces compared. */
KILN_API bool kiln_diff_compared(const kiln_diff *diff);
/** @return true if B may break consumers of A: a breaking change, or interfaces that could not be compared. */
KILN_API bool kiln_diff_breaking(const kiln_diff *diff);

/* ------------------------------------------------------------- signatures */

/** Make a new Ed25519 key pair from the system's random source. */
KILN_API KILN_NODISCARD kiln_status kiln_key_generate(kiln_public_key *public_key,
                                                      kiln_secret_key *secret_key, kiln_error *err);

/** The 16-byte key id: the first half of BLAKE2b-256 of the public key. */
KILN_API void kiln_key_id(const kiln_public_key *public_key, uint8_t out[16]);

/*
 * Text forms of keys, one line each: the prefix "kiln-ed25519-public-v1 "
 * or "kiln-ed25519-secret-v1 ", then standard padded base64 of the 32 or 64
 * key bytes, then a newline.
 * Formatting returns the length written (excluding NUL), like snprintf.
 */
KILN_API int kiln_public_key_format(const kiln_public_key *key, char *buffer, size_t size);
KILN_API int kiln_secret_key_format(const kiln_secret_key *key, char *buffer, size_t size);
/** Parse a text form (surrounding white space allowed). @return KILN_OK or KILN_ERR_INVALID_ARGUMENT. */
KILN_API KILN_NODISCARD kiln_status kiln_public_key_parse(const char *text, kiln_public_key *out,
                                                          kiln_error *err);
KILN_API KILN_NODISCARD kiln_status kiln_secret_key_parse(const char *text, kiln_secret_key *out,
                                                          kiln_error *err);

/**
 * Verify the artifact at `path` under `options` (NULL = defaults: in
 * full; its progress callback also reports the writing, as a second
 * pass), sign its digest with `key` and write the signed artifact
 * atomically to `out_path` (NULL: replace `path`). Only the trailer
 * changes: the digest and identities stay.
 */
KILN_API KILN_NODISCARD kiln_status kiln_artifact_sign(const char *path, const char *out_path,
                                                       const kiln_secret_key *key, const kiln_load_options *options,
                                                       kiln_error *err);

/* ----------------------------------------------------------------- running */

/* A dim's range in a session: `name` (a declared dim, not a derived one)
 * takes min..max, inside the artifact's range for it. */
typedef struct kiln_dim_bound {
    const char *name;
    int64_t min;
    int64_t max;
} kiln_dim_bound;

/* How a session's runs choose their thread count (spec/opset.md, "Threads"). */
typedef enum kiln_thread_policy {
    /*
     * The default, safe where other programs share the machine: before a
     * run (looking at most every 50 ms) the session counts the running
     * threads of other processes and runs on no more threads than the
     * cores they leave free, at least one. kiln's threads are OpenMP's,
     * whose idle threads spin before they sleep: on a busy 2-core machine
     * 2-thread runs with spinning waits measured 5-30x slower than
     * 1-thread ones, and a 1-thread run starts no thread that could spin.
     * On idle cores it runs on `threads`, spinning (fastest there).
     */
    KILN_THREADS_ADAPTIVE = 0,
    /* Always `threads`, whatever else runs: for dedicated machines and
     * benchmarks. On a busy machine set OMP_WAIT_POLICY=passive in the
     * environment before the process starts (OpenMP reads it once). */
    KILN_THREADS_FIXED = 1,
} kiln_thread_policy;

/*
 * State tensors (format 1.3): storage a program declares that lives
 * between runs — a decoder's KV cache — each of a fixed capacity and a
 * current length along one axis, which binds a dim (`past`) of every
 * method that declares it. Runs extend it in place (op state_append); a
 * run that fails changes nothing. A kiln_state holds every state of one
 * program, empty when made or reset; sessions of any of the program's
 * methods may share one (kiln_session_options.state), one run at a time:
 * a run while another holds it is refused. Not to be confused with the
 * "state identity", the digest of the weights.
 */
typedef struct kiln_state kiln_state;

/**
 * Make storage for every state `program` (any of its methods) declares,
 * each empty (zero bytes, length 0). A program without states gets an
 * empty one.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT; KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_state_new(const kiln_program *program, kiln_state **out, kiln_error *err);

/** Free `state` (NULL: nothing). No session that uses it may run again. */
KILN_API void kiln_state_free(kiln_state *state);

/** Empty every state: length 0, bytes zero (start a new sequence). Not while a run holds it. */
KILN_API void kiln_state_reset(kiln_state *state);

/**
 * The rows state `name` holds now, into *length.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (no such state: the message lists them).
 */
KILN_API KILN_NODISCARD kiln_status kiln_state_length(const kiln_state *state, const char *name, int64_t *length,
                                                      kiln_error *err);

/**
 * Make state `name` hold `length` rows, as though runs had appended them:
 * rows it did not hold keep the bytes they have (zeros after a reset).
 * For probing and benchmarking a method at a given `past` without running
 * the methods that fill it (kiln probe, kiln bench --dim past=N).
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (no such state, a length
 *         outside 0..its capacity, or the state held by a run).
 */
KILN_API KILN_NODISCARD kiln_status kiln_state_set_length(kiln_state *state, const char *name, int64_t length,
                                                          kiln_error *err);

/**
 * Whether the relations the method `program` declares hold at the dim
 * values `dim_values` (one per dim, kiln_program_dim order).
 * @return KILN_OK; KILN_ERR_SHAPE_GUARD naming the relation that does not,
 *         as a run would refuse it.
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_relations_hold(const kiln_program *program, const int64_t *dim_values,
                                                                kiln_error *err);

/**
 * A copy of the rows state `name` holds now, packed: its declared shape
 * with the growing axis as long as its length. Caller frees *out.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT; KILN_ERR_OUT_OF_MEMORY.
 */
KILN_API KILN_NODISCARD kiln_status kiln_state_read(const kiln_state *state, const char *name, kiln_tensor **out,
                                                    kiln_error *err);

/**
 * Make state `name` hold the rows of `rows` (its declared shape with the
 * growing axis at most the capacity long): a cache computed elsewhere, or
 * the state an evidence case starts from (spec/format.md §7.8.3). The
 * length becomes that axis's size.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT (no such state, the state
 *         held by a run); KILN_ERR_DTYPE_MISMATCH, KILN_ERR_RANK_MISMATCH
 *         or KILN_ERR_SHAPE_GUARD naming what differs from the declaration.
 */
KILN_API KILN_NODISCARD kiln_status kiln_state_write(kiln_state *state, const char *name, const kiln_tensor *rows,
                                                     kiln_error *err);

typedef struct kiln_session_options {
    size_t struct_size;
    /* Threads one run may use (oneDNN and large elementwise loops); 0 =
     * the runtime default: OMP_NUM_THREADS, else every core. Builds without
     * OpenMP always use 1. */
    uint32_t threads;
    bool skip_input_checks;    /* skip the semantic checks (default false: check) */
    /* Run only the portable reference kernels, never a fast path (oneDNN):
     * to compare the two, or to rule a fast path out. Default false. */
    bool reference_kernels;
    /* The session's own bound on some dims, inside the artifact's ranges
     * (NULL/0: the whole declared domain). The arena is planned for this
     * bound, and a run outside it is refused, naming the session's range
     * and the artifact's. */
    const kiln_dim_bound *dims;
    uint32_t dim_count;
    /* The largest arena the session may allocate; 0 (default): the
     * program's load limit, kiln_limits.max_arena_bytes (4 GiB unless set). */
    uint64_t max_arena_bytes;
    /* How runs choose their thread count, `threads` being the most they
     * use (default KILN_THREADS_ADAPTIVE: fewer while other processes
     * hold cores). */
    kiln_thread_policy thread_policy;
    /* Profile every run (kiln_session_profile_node): the wall time of each
     * node's kernel, its call count, its last result shape and which
     * implementation ran it. Storage is allocated with the session, so runs
     * still allocate nothing; off (the default), a run pays one branch per
     * node. Default false. */
    bool profile;
    /* The state tensors the session's runs read and extend (kiln_state_new
     * of the same program), shared with sessions of its other methods —
     * prefill and decode over one cache; borrowed, it must outlive the
     * session. NULL (default): the session makes its own, empty, when the
     * program declares states (kiln_session_state). */
    kiln_state *state;
} kiln_session_options;

/** Fill `options` (struct_size bytes; kiln_session_options_default passes sizeof) with the defaults above. */
KILN_API void kiln_session_options_init(kiln_session_options *options, size_t struct_size);
#define kiln_session_options_default(options) kiln_session_options_init((options), sizeof *(options))

/**
 * The arena kiln_session_new would allocate with `options` (NULL =
 * defaults), without allocating it: the dims are checked as the session
 * checks them, the arena planned for the session's bound and compared
 * with its limit. Over the limit, the error names the dims at the bound,
 * the bytes needed and narrowings that fit, e.g. "the arena at batch=64,
 * seq=2048 needs 8.0 GiB (...), over the limit of 4.0 GiB; with
 * seq=1..512 it needs 2.0 GiB: narrow the session's dims or raise its
 * arena limit".
 * @return KILN_OK with *arena_bytes set; KILN_ERR_INVALID_ARGUMENT for a
 *         bad narrowing; KILN_ERR_LIMIT over the limit (*arena_bytes is
 *         then the bytes needed, UINT64_MAX if they overflow 64 bits).
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_session_arena(const kiln_program *program,
                                                               const kiln_session_options *options,
                                                               uint64_t *arena_bytes, kiln_error *err);

/* Execution state for one program: inputs, arena, outputs. Owned by the
 * caller of kiln_session_new; one thread at a time (runs of one session
 * never overlap: give each thread its own session of the shared program). */
typedef struct kiln_session kiln_session;

/**
 * Create a session. Buffers for every intermediate are sized for the upper
 * bound of the session's dims now (the declared domain, or the narrowing
 * options->dims asks for), so kiln_session_run allocates nothing
 * in kiln's code, with one documented exception: a fast path (oneDNN
 * matmul/gemm) builds its primitive the first time a node runs at a new
 * shape, and keeps it (up to 8 shapes per node, least recently used
 * replaced), so later runs at that shape build nothing. oneDNN's own
 * execute call may still allocate small bookkeeping; sessions with
 * reference_kernels set, and builds without oneDNN, allocate nothing.
 * Threads: each run uses up to options->threads (default: every core),
 * and by default (KILN_THREADS_ADAPTIVE) fewer while other processes hold
 * cores, so an embedding program on a busy machine is never slowed by
 * OpenMP threads spinning for a core someone else has; a run at a thread
 * count the session has not used before builds its oneDNN primitives for
 * it, once. The program must outlive the session.
 * @return KILN_OK; KILN_ERR_LIMIT when the arena is over the session's
 *         limit (the message is kiln_program_session_arena's, with a
 *         narrowing that fits); KILN_ERR_INVALID_ARGUMENT for a bad
 *         narrowing (an unknown dim, a range outside the artifact's).
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_new(const kiln_program *program,
                                            const kiln_session_options *options,
                                            kiln_session **out, kiln_error *err);

KILN_API void kiln_session_free(kiln_session *session);

/**
 * The sizes `tensors` give the dims: check them against the contract as a
 * run would (every declared input given once by `names`; dtype, rank and
 * each axis against its dim or constant) and write each dim's value into
 * values[d] (kiln_program_dim order), with bound[d] true for every dim an
 * input binds. A session narrowed to exactly these values (dims min = max)
 * runs these inputs in the smallest arena: what a one-off run needs.
 * @return KILN_OK, or the error kiln_session_run would give for these
 *         inputs' shapes (KILN_ERR_SHAPE_GUARD, KILN_ERR_MISSING_INPUT, ...).
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_bind_dims(const kiln_program *program, uint32_t count,
                                                           const char *const *names,
                                                           const kiln_tensor *const *tensors, int64_t *values,
                                                           bool *bound, kiln_error *err);

/**
 * kiln_session_new narrowed to the sizes `tensors` give the dims
 * (kiln_program_bind_dims: each dim's range is the one value they bind),
 * so its arena is the smallest that runs them: for a one-off run, such as
 * replaying a known-input case. `options` (NULL = defaults) must not
 * narrow dims itself.
 * @return KILN_OK; the error kiln_session_run would give for these inputs'
 *         shapes; or one of kiln_session_new's.
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_new_for_inputs(const kiln_program *program,
                                                                const kiln_session_options *options, uint32_t count,
                                                                const char *const *names,
                                                                const kiln_tensor *const *tensors,
                                                                kiln_session **out, kiln_error *err);

/** @return the bytes of the arena `session` allocated (planned for its dims' upper bound). */
KILN_API uint64_t kiln_session_arena_bytes(const kiln_session *session);

/** @return the threads each run of `session` may use at most (>= 1). */
KILN_API uint32_t kiln_session_threads(const kiln_session *session);

/** @return the threads the last run of `session` used (>= 1; under
 *  KILN_THREADS_ADAPTIVE fewer than kiln_session_threads while other
 *  processes held cores); before any run, kiln_session_threads. */
KILN_API uint32_t kiln_session_run_threads(const kiln_session *session);

/**
 * How this process's idle OpenMP threads wait, as kiln reads it from the
 * environment once (OpenMP reads it when loaded): "passive" when
 * OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT=0 (a waiting thread sleeps at
 * once), else "spin". It sets the sizes below which kiln keeps work on
 * one thread (spec/opset.md, "Threads").
 * @return a static string.
 */
KILN_API const char *kiln_thread_wait_policy(void);

/**
 * Bind input `name` to `tensor` (borrowed until the next run completes).
 * @return KILN_OK or KILN_ERR_UNKNOWN_INPUT.
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_set_input(kiln_session *session, const char *name,
                                                  const kiln_tensor *tensor, kiln_error *err);

/**
 * Check every input against the contract (dtype, rank, each axis against
 * its dim or constant, equal sizes wherever one dim is used twice), then run.
 * Guard failures name input, axis, dim, value and the allowed set, e.g.
 * "input 'x' axis 0 (batch): 5 is outside 2..4".
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_run(kiln_session *session, kiln_error *err);

/** @return the state tensors the session's runs use (options.state, or its own), NULL if the program has none. */
KILN_API kiln_state *kiln_session_state(const kiln_session *session);

/* ---------------------------------------------------------------- profiles */

/*
 * A session created with options.profile measures every run it makes:
 * per node the wall time around its kernel (CLOCK_MONOTONIC; operand
 * layout conversions included), how often it ran, the shape of its last
 * result and which implementation ran it; per session the runs and their
 * whole time (guards and checks included). `kiln bench --profile` prints
 * it (spec/bench-json.md).
 */

/* Which implementation ran a node. The numeric values are stable. */
typedef enum kiln_node_path {
    KILN_NODE_PATH_REFERENCE = 0, /* the portable reference kernel */
    KILN_NODE_PATH_VECTOR = 1,    /* kiln's own vectorized loops (e.g. exp, softmax; add, mul's unit-step rows) */
    KILN_NODE_PATH_ONEDNN = 2,    /* a oneDNN primitive */
    KILN_NODE_PATH_VIEW = 3,      /* no arithmetic: a copy, gather or shape (reshape, transpose, concat, ...) */
    KILN_NODE_PATH_FUSED = 4,     /* not run on its own: node fused_into computed it (an activation it applied
                                   * to its own result, or a node of a group computed together with it) */
    KILN_NODE_PATH_NOT_RUN = 5,   /* not run yet, or never (no output depends on it) */
} kiln_node_path;

/** @return the path's name: "reference", "vector", "onednn", "view", "fused", "not-run" ("?" if unknown). */
KILN_API const char *kiln_node_path_name(kiln_node_path path);

/* One node's profile (kiln_session_profile_node). */
typedef struct kiln_node_profile {
    size_t struct_size;        /* set by the caller: sizeof(kiln_node_profile); filled up to it */
    const char *op;            /* the node's op, e.g. "conv"; owned by the program */
    kiln_node_path path;       /* how its last run ran (FUSED: it was applied by node fused_into) */
    bool applied_activation;   /* its last run also applied the next node's activation (fused into it) */
    uint32_t fused_into;       /* path FUSED: the node that applied this one; else UINT32_MAX */
    uint64_t runs;             /* runs that called its kernel */
    uint64_t fused_runs;       /* runs in which the node before it applied it instead */
    uint64_t nanoseconds;      /* wall time of its kernel calls, summed over those runs */
    uint64_t min_nanoseconds;  /* the shortest of those calls (0 before one): steadier than the mean on a busy machine */
    kiln_dtype dtype;          /* its result's dtype */
    uint32_t rank;             /* its result's shape at its last run (0 and zeros before one) */
    int64_t shape[KILN_MAX_RANK];
} kiln_node_profile;

/* The runs a profile covers (kiln_session_profile_summary). */
typedef struct kiln_profile_summary {
    size_t struct_size;        /* set by the caller: sizeof(kiln_profile_summary); filled up to it */
    uint32_t node_count;       /* the program's nodes: kiln_session_profile_node's range */
    uint64_t runs;             /* successful runs since the session was created or the profile reset */
    uint64_t nanoseconds;      /* their wall time inside kiln_session_run, guards and checks included */
    uint64_t node_nanoseconds; /* the part of it spent in nodes: the sum of every node's nanoseconds */
} kiln_profile_summary;

/**
 * What the profile of `session` holds so far. A run that fails adds the
 * time of the nodes it ran but is not counted.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT when the session was created
 *         without options.profile, or out's struct_size is below the
 *         struct's 1.0 size.
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_profile_summary(const kiln_session *session,
                                                                 kiln_profile_summary *out, kiln_error *err);

/**
 * The profile of node `node` (0 <= node < kiln_program_node_count) of
 * `session` over its profiled runs.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT when the session was created
 *         without options.profile, `node` is out of range, or out's
 *         struct_size is below the struct's 1.0 size.
 */
KILN_API KILN_NODISCARD kiln_status kiln_session_profile_node(const kiln_session *session, uint32_t node,
                                                              kiln_node_profile *out, kiln_error *err);

/** Forget every profiled run of `session` (its warm-up, say). No-op for a session created without options.profile. */
KILN_API void kiln_session_profile_reset(kiln_session *session);

KILN_API uint32_t kiln_session_output_count(const kiln_session *session);
/** Output `index` of the last successful run; owned by the session and
 *  valid until the next run or kiln_session_free. NULL before a run. */
KILN_API const kiln_tensor *kiln_session_output(const kiln_session *session, uint32_t index);
KILN_API const char *kiln_session_output_name(const kiln_session *session, uint32_t index);

/* ------------------------------------------------------------ generation */

/*
 * Token generation over a decoder's methods: a prefill method runs once on
 * the prompt, then a decode method once per new token, both over one
 * kiln_state (the KV cache), each token chosen from the last row of the
 * logits: the largest (greedy, temperature 0), or sampled from
 * softmax(logits / temperature) among the top_k largest with a seeded
 * generator (one seed, one sequence, on every machine). Inputs are found
 * by role: the token ids, and where a method has them the positions
 * (past .. past+n-1) and the attention mask (ones, [1, past+n]).
 * spec/generate.md.
 */
typedef struct kiln_generate_options {
    size_t struct_size;
    const char *prefill_method; /* NULL: "prefill", else the program's first method */
    const char *decode_method;  /* NULL: "decode" */
    const char *ids_input;      /* i64 [1, n] or [n]; NULL: "ids", else "input_ids", else a method's only input */
    const char *position_input; /* NULL: "position", "position_ids" or "positions" where a method has one */
    const char *mask_input;     /* NULL: "attention_mask" where a method has one */
    const char *logits_output;  /* [..., n, vocab], f32 or f64; NULL: "logits", else the first output */
    uint32_t max_tokens;        /* new tokens (default 32) */
    double temperature;         /* 0 (default): greedy, the first largest logit */
    uint32_t top_k;             /* sample among the k largest; 0: among all */
    uint64_t seed;
    int64_t stop_token;         /* stop once it is made (it is kept); -1 (default): none */
    uint32_t threads;           /* as kiln_session_options */
    kiln_thread_policy thread_policy;
    /* After each new token (index from 0): the last logits are
     * kiln_generator_logits until the next step; return false to stop. NULL: none. */
    bool (*on_token)(void *user, uint32_t index, int64_t token);
    void *user;
    /* NULL, or max_tokens tokens fed to the step after each choice in
     * place of the chosen ones (teacher forcing: the logits of step i + 1
     * follow forced_tokens[i]); `tokens` still receives the chosen ones.
     * Generation evidence is replayed so (kiln_program_replay_generation).
     * Read during kiln_generator_run: it must live until then. */
    const int64_t *forced_tokens;
} kiln_generate_options;

/** Fill `options` with the defaults above (32 tokens, greedy, no stop token). */
KILN_API void kiln_generate_options_init(kiln_generate_options *options, size_t struct_size);
#define kiln_generate_options_default(options) kiln_generate_options_init((options), sizeof *(options))

/* Sessions of both methods over one state, and the buffers of their inputs. */
typedef struct kiln_generator kiln_generator;

/**
 * Make a generator for `program` (any of its methods): find the two
 * methods and their inputs and outputs, and make their sessions over a
 * new state. Generation then allocates nothing per token.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT naming what is missing (a
 *         method, the ids input, the logits output) or of the wrong
 *         dtype or rank, or a bad option; a session's error.
 */
KILN_API KILN_NODISCARD kiln_status kiln_generator_new(const kiln_program *program,
                                                       const kiln_generate_options *options,
                                                       kiln_generator **out, kiln_error *err);

/** Free `generator` (NULL: nothing). */
KILN_API void kiln_generator_free(kiln_generator *generator);

/**
 * Reset the state, run the prefill on `prompt[prompt_length]` and decode
 * until max_tokens new tokens, the stop token, or on_token's false; the
 * new tokens go to `tokens` (room for max_tokens), their number to *count
 * (also when a step fails: the tokens made before it).
 * @return KILN_OK; a run's error, such as KILN_ERR_SHAPE_GUARD when the
 *         cache is full (the relation and dims named); KILN_ERR_INVALID_ARGUMENT.
 */
KILN_API KILN_NODISCARD kiln_status kiln_generator_run(kiln_generator *generator, const int64_t *prompt,
                                                       uint32_t prompt_length, int64_t *tokens, uint32_t *count,
                                                       kiln_error *err);

/** @return the logits of the last step (owned by the generator's session; valid until its next step), NULL before one. */
KILN_API const kiln_tensor *kiln_generator_logits(const kiln_generator *generator);

/** @return the state the generator's methods share (its cache after the last run). */
KILN_API kiln_state *kiln_generator_state(kiln_generator *generator);

/* ------------------------------------------------------ generation evidence */

/*
 * A prompt and the tokens a greedy generation of it must make: evidence
 * that spans runs (a prefill, then a decode per token, over one state),
 * stored in the artifact (section GENV, format 1.3, spec/format.md §7.15)
 * and replayed by kiln_program_replay_generation and `kiln verify`.
 * Token i passes when its logit is within `margin` of the largest logit
 * of its step, and the next step is fed token i whatever was chosen, so
 * that a near tie another machine breaks the other way fails nothing.
 */
typedef struct kiln_generation_case {
    const char *name;
    const char *prefill_method; /* NULL: "prefill" */
    const char *decode_method;  /* NULL: "decode" */
    const int64_t *prompt;
    uint32_t prompt_length;     /* >= 1 */
    const int64_t *tokens;      /* the tokens it must make, in order */
    uint32_t token_count;       /* >= 1 */
    double margin;              /* >= 0 and finite; 0: each token is a largest logit */
} kiln_generation_case;

/**
 * Record generation case `evidence` in the program (the builder of its
 * first method; copied). It is checked when the program is sealed: the
 * methods exist and differ, the name is new, the tokens are >= 0.
 * @return KILN_OK; KILN_ERR_INVALID_ARGUMENT for a NULL, an empty name or
 *         list, a bad margin, or a builder that is a method of another.
 */
KILN_API KILN_NODISCARD kiln_status kiln_builder_add_generation(kiln_builder *builder,
                                                                const kiln_generation_case *evidence,
                                                                kiln_error *err);

/** The generation cases of the artifact `program` (any of its methods) belongs to. */
KILN_API uint32_t kiln_program_generation_count(const kiln_program *program);

/**
 * Case `index` as stored (its strings and lists owned by the program, valid while it lives).
 * @return false (and nothing written) when `index` is out of range.
 */
KILN_API bool kiln_program_generation(const kiln_program *program, uint32_t index, kiln_generation_case *out);

/* The outcome of a replayed generation case. */
typedef struct kiln_generation_result {
    bool passed;
    uint32_t matched;      /* tokens that passed before the first that did not (all when passed) */
    int64_t expected;      /* at that token: the recorded one, and the one of the largest logit */
    int64_t chosen;
    double expected_logit; /* their logits (NaN for a recorded token outside the vocabulary) */
    double chosen_logit;
} kiln_generation_result;

/**
 * Replay generation case `index`: the prefill on its prompt, then a
 * decode per recorded token, each compared as kiln_generation_case says.
 * Cases 0..index together run at most limits.max_replay_nodes nodes (the
 * prefill's node count plus the decode's per token).
 * @return KILN_OK when it ran (*result says pass or fail); the error that
 *         kept it from running (a missing role input, a full cache: the
 *         dims and the bound named; KILN_ERR_LIMIT past max_replay_nodes).
 */
KILN_API KILN_NODISCARD kiln_status kiln_program_replay_generation(const kiln_program *program, uint32_t index,
                                                                   kiln_generation_result *result, kiln_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H */
