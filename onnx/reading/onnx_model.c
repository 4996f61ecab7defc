/*
 * onnx_model.c — ONNX files in, protobuf-c messages and kiln tensors out.
 *
 * Every size that comes from the file is checked before it is used: the
 * file size before reading, the counts right after decoding, each tensor's
 * element count and byte size with overflow-checked arithmetic before any
 * allocation, and each data field's length against that byte size.
 */
/* realpath() is X/Open; O_CLOEXEC and O_NOFOLLOW POSIX.1-2008. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kiln/util.h>

#include "onnx_error.h"
#include "onnx_model.h"
#include "onnx_nesting.h"

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define ONNX_LIMITS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_onnx_limits, max_nesting_depth)

static void limits_default(kiln_onnx_limits *limits)
{
    memset(limits, 0, sizeof *limits);
    limits->struct_size = sizeof *limits;
    limits->max_file_bytes = (UINT64_C(1) << 31) - 1;
    limits->max_nodes = 1000000;
    limits->max_initializers = 65536;
    limits->max_attributes = 64;
    limits->max_node_inputs = 64;
    limits->max_graph_values = 1024;
    limits->max_tensor_bytes = UINT64_C(4) << 30;
    /* A real model nests 7 levels (model, graph, value info, type, tensor
     * type, shape, dim) plus 3 per control-flow subgraph: 64 allows 19
     * subgraphs inside one another, and keeps protobuf-c's recursion to
     * about 60 KB of stack (onnx_nesting.c has the measurement). */
    limits->max_nesting_depth = 64;
}

void kiln_onnx_limits_init(kiln_onnx_limits *limits, size_t struct_size)
{
    kiln_onnx_limits defaults;
    limits_default(&defaults);
    kiln_struct_fill(limits, struct_size, &defaults, sizeof defaults);
}

kiln_status onnx_limits_read(const kiln_onnx_limits *limits, kiln_onnx_limits *out, kiln_error *err)
{
    limits_default(out);
    return kiln_struct_read(out, sizeof *out, limits, ONNX_LIMITS_SIZE_1_0, "kiln_onnx_limits", err);
}

/* What a file that is not a regular one is, for the message that refuses it. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISLNK(mode)  ? "a symbolic link"
                            : "not a regular file";
}

/*
 * Open `path` (with `extra` open flags) for reading, as a regular file
 * only. O_NONBLOCK because opening a FIFO for reading otherwise waits for a
 * writer forever, and a device such as /dev/zero never ends; both are
 * refused after fstat, before anything is read. A regular file ignores the
 * flag, so its reads still block and return whole.
 */
static kiln_status open_regular(const char *path, int extra, int *fd_out, struct stat *st, kiln_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra);
    if (fd < 0)
        return onnx_fail(err, KILN_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int cause = errno;
        close(fd);
        return onnx_fail(err, KILN_ERR_IO, "cannot stat '%s': %s", path, strerror(cause));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return onnx_fail(err, KILN_ERR_IO, "'%s' is %s, not a regular file", path, file_kind(st->st_mode));
    }
    *fd_out = fd;
    return KILN_OK;
}

/* Read exactly `length` bytes from `fd` into `data`; false on an error or an early end (a file that shrank). */
static bool read_exactly(int fd, void *data, size_t length)
{
    size_t done = 0;
    while (done < length) {
        size_t chunk = length - done < ((size_t)1 << 30) ? length - done : (size_t)1 << 30;
        ssize_t got = read(fd, (uint8_t *)data + done, chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        done += (size_t)got;
    }
    return true;
}

/* Read a whole regular file of at most `max_bytes` bytes: its size as fstat gives it, never more. */
static kiln_status read_file(const char *path, uint64_t max_bytes, uint8_t **out, size_t *size, kiln_error *err)
{
    int fd;
    struct stat st;
    kiln_status status = open_regular(path, 0, &fd, &st, err);
    if (status != KILN_OK)
        return status;
    if ((uint64_t)st.st_size > max_bytes || (uint64_t)st.st_size > SIZE_MAX - 1) {
        close(fd);
        return onnx_fail(err, KILN_ERR_LIMIT, "'%s' is %lld bytes, over the limit of %llu", path,
                         (long long)st.st_size, (unsigned long long)max_bytes);
    }
    size_t length = (size_t)st.st_size;
    uint8_t *bytes = malloc(length ? length : 1);
    if (!bytes) {
        close(fd);
        return onnx_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
    }
    bool whole = read_exactly(fd, bytes, length);
    close(fd);
    if (!whole) {
        free(bytes);
        return onnx_fail(err, KILN_ERR_IO, "cannot read the %zu bytes of '%s'", length, path);
    }
    *out = bytes;
    *size = length;
    return KILN_OK;
}

static bool is_default_domain(const char *domain)
{
    return !domain || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

int64_t onnx_model_default_opset(const Onnx__ModelProto *model)
{
    for (size_t i = 0; i < model->n_opset_import; i++)
        if (is_default_domain(model->opset_import[i]->domain))
            return model->opset_import[i]->version;
    return 0;
}

static kiln_status check_counts(const Onnx__ModelProto *model, const kiln_onnx_limits *limits, kiln_error *err)
{
    const Onnx__GraphProto *graph = model->graph;
    if (!graph)
        return onnx_fail(err, KILN_ERR_MALFORMED, "the model has no graph");
    if (graph->n_node > limits->max_nodes)
        return onnx_fail(err, KILN_ERR_LIMIT, "the graph has %zu nodes, over the limit of %u", graph->n_node,
                         limits->max_nodes);
    if (graph->n_initializer > limits->max_initializers)
        return onnx_fail(err, KILN_ERR_LIMIT, "the graph has %zu initializers, over the limit of %u",
                         graph->n_initializer, limits->max_initializers);
    if (graph->n_input > limits->max_graph_values || graph->n_output > limits->max_graph_values)
        return onnx_fail(err, KILN_ERR_LIMIT, "the graph has %zu inputs and %zu outputs, over the limit of %u",
                         graph->n_input, graph->n_output, limits->max_graph_values);
    for (size_t i = 0; i < graph->n_node; i++) {
        const Onnx__NodeProto *node = graph->node[i];
        if (node->n_attribute > limits->max_attributes)
            return onnx_fail(err, KILN_ERR_LIMIT, "node %zu ('%s') has %zu attributes, over the limit of %u", i,
                             node->name ? node->name : "", node->n_attribute, limits->max_attributes);
        if (node->n_input > limits->max_node_inputs || node->n_output > limits->max_node_inputs)
            return onnx_fail(err, KILN_ERR_LIMIT,
                             "node %zu ('%s') has %zu inputs and %zu outputs, over the limit of %u", i,
                             node->name ? node->name : "", node->n_input, node->n_output,
                             limits->max_node_inputs);
        if (!node->op_type)
            return onnx_fail(err, KILN_ERR_MALFORMED, "node %zu ('%s') has no op_type", i,
                             node->name ? node->name : "");
    }
    return KILN_OK;
}

static kiln_status check_versions(const Onnx__ModelProto *model, kiln_error *err)
{
    if (!model->has_ir_version)
        return onnx_fail(err, KILN_ERR_MALFORMED, "the model has no ir_version");
    if (model->ir_version < KILN_ONNX_MIN_IR_VERSION || model->ir_version > KILN_ONNX_MAX_IR_VERSION)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_VERSION, "ONNX IR version %lld is not supported (supported: %d..%d)",
                         (long long)model->ir_version, KILN_ONNX_MIN_IR_VERSION, KILN_ONNX_MAX_IR_VERSION);
    int64_t opset = onnx_model_default_opset(model);
    if (opset == 0)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_VERSION, "the model imports no default-domain (ai.onnx) opset");
    if (opset < KILN_ONNX_MIN_OPSET || opset > KILN_ONNX_MAX_OPSET)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_VERSION,
                         "default-domain opset version %lld is not supported (supported: %d..%d)", (long long)opset,
                         KILN_ONNX_MIN_OPSET, KILN_ONNX_MAX_OPSET);
    return KILN_OK;
}

kiln_status onnx_model_decode(const uint8_t *bytes, size_t size, const kiln_onnx_limits *limits, Onnx__ModelProto **out,
                              kiln_error *err)
{
    kiln_onnx_limits storage;
    kiln_status limits_status = onnx_limits_read(limits, &storage, err);
    if (limits_status != KILN_OK)
        return limits_status;
    limits = &storage;
    if (size > limits->max_file_bytes)
        return onnx_fail(err, KILN_ERR_LIMIT, "the model is %zu bytes, over the limit of %llu", size,
                         (unsigned long long)limits->max_file_bytes);
    /* Measured before unpacking: the unpack recurses once per level. */
    kiln_error cause;
    kiln_status depth = onnx_check_nesting(&onnx__model_proto__descriptor, bytes, size, limits->max_nesting_depth,
                                           "the model", &cause);
    if (depth == KILN_ERR_MALFORMED)
        return onnx_fail(err, KILN_ERR_MALFORMED, "not an ONNX model: %s", cause.message);
    if (depth != KILN_OK)
        return onnx_fail(err, depth, "%s", cause.message);
    Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, size, bytes);
    if (!model)
        return onnx_fail(err, KILN_ERR_MALFORMED, "not an ONNX model: the bytes do not decode as a ModelProto");
    kiln_status status = check_versions(model, err);
    if (status == KILN_OK)
        status = check_counts(model, limits, err);
    if (status != KILN_OK) {
        onnx__model_proto__free_unpacked(model, NULL);
        return status;
    }
    *out = model;
    return KILN_OK;
}

kiln_status onnx_model_read(const char *path, const kiln_onnx_limits *limits, Onnx__ModelProto **out, kiln_error *err)
{
    kiln_onnx_limits storage;
    kiln_status limits_status = onnx_limits_read(limits, &storage, err);
    if (limits_status != KILN_OK)
        return limits_status;
    limits = &storage;
    uint8_t *bytes;
    size_t size;
    kiln_status status = read_file(path, limits->max_file_bytes, &bytes, &size, err);
    if (status != KILN_OK)
        return status;
    status = onnx_model_decode(bytes, size, limits, out, err);
    free(bytes);
    if (status != KILN_OK && err) {
        char message[KILN_ERROR_MESSAGE_SIZE];
        snprintf(message, sizeof message, "%s", err->message);
        onnx_fail(err, status, "%s: %s", path, message);
    }
    return status;
}

/* ------------------------------------------------------------------ dtypes */

static const struct {
    int32_t onnx;
    const char *name;
    kiln_dtype kiln;
} dtype_table[] = {
    {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, "FLOAT", KILN_F32},
    {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, "UINT8", KILN_U8},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, "INT8", KILN_I8},
    {ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, "UINT16", KILN_U16},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT16, "INT16", KILN_I16},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT32, "INT32", KILN_I32},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT64, "INT64", KILN_I64},
    {ONNX__TENSOR_PROTO__DATA_TYPE__STRING, "STRING", KILN_DTYPE_INVALID},
    {ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, "BOOL", KILN_BOOL},
    {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, "FLOAT16", KILN_F16},
    {ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, "DOUBLE", KILN_F64},
    {ONNX__TENSOR_PROTO__DATA_TYPE__UINT32, "UINT32", KILN_U32},
    {ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, "UINT64", KILN_U64},
    {ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64, "COMPLEX64", KILN_DTYPE_INVALID},
    {ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128, "COMPLEX128", KILN_DTYPE_INVALID},
    {ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, "BFLOAT16", KILN_BF16},
};

const char *onnx_dtype_name(int32_t onnx_type)
{
    for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
        if (dtype_table[i].onnx == onnx_type)
            return dtype_table[i].name;
    return "unknown";
}

kiln_status onnx_dtype_to_kiln(int32_t onnx_type, kiln_dtype *out, kiln_error *err)
{
    for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++) {
        if (dtype_table[i].onnx != onnx_type)
            continue;
        if (dtype_table[i].kiln == KILN_DTYPE_INVALID)
            break;
        *out = dtype_table[i].kiln;
        return KILN_OK;
    }
    return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "ONNX element type %s (%d) is not supported",
                     onnx_dtype_name(onnx_type), (int)onnx_type);
}

/* ----------------------------------------------------------------- tensors */

static const char *tensor_label(const Onnx__TensorProto *tensor)
{
    return tensor->name && tensor->name[0] ? tensor->name : "(unnamed)";
}

/* Copy `count` values of the typed field int32_data into `dtype` elements, refusing values that do not fit. */
static kiln_status convert_int32_data(const Onnx__TensorProto *tensor, kiln_dtype dtype, void *data,
                                      kiln_error *err)
{
    int64_t lo = 0, hi = 1;
    switch (dtype) {
    case KILN_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case KILN_U8: lo = 0, hi = UINT8_MAX; break;
    case KILN_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case KILN_U16:
    case KILN_F16: /* the 16-bit pattern of each value (ONNX: int32_data for FLOAT16 and BFLOAT16) */
    case KILN_BF16: lo = 0, hi = UINT16_MAX; break;
    case KILN_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case KILN_BOOL: lo = INT32_MIN, hi = INT32_MAX; break;
    default: break;
    }
    for (size_t i = 0; i < tensor->n_int32_data; i++) {
        int32_t v = tensor->int32_data[i];
        if (v < lo || v > hi)
            return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': int32_data[%zu] = %d does not fit %s",
                             tensor_label(tensor), i, (int)v, kiln_dtype_name(dtype));
        switch (dtype) {
        case KILN_I8: ((int8_t *)data)[i] = (int8_t)v; break;
        case KILN_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
        case KILN_I16: ((int16_t *)data)[i] = (int16_t)v; break;
        case KILN_U16:
        case KILN_F16:
        case KILN_BF16: ((uint16_t *)data)[i] = (uint16_t)v; break;
        case KILN_I32: ((int32_t *)data)[i] = v; break;
        case KILN_BOOL: ((uint8_t *)data)[i] = v != 0; break;
        default: break;
        }
    }
    return KILN_OK;
}

/* The typed field the element type uses: its name and how many values it holds. */
static size_t typed_count(const Onnx__TensorProto *tensor, kiln_dtype dtype, const char **field)
{
    switch (dtype) {
    case KILN_F32: *field = "float_data"; return tensor->n_float_data;
    case KILN_F64: *field = "double_data"; return tensor->n_double_data;
    case KILN_I64: *field = "int64_data"; return tensor->n_int64_data;
    case KILN_U32:
    case KILN_U64: *field = "uint64_data"; return tensor->n_uint64_data;
    default: *field = "int32_data"; return tensor->n_int32_data;
    }
}

/* Fill `data` from the typed field the element type uses (its count was checked against `count`). */
static kiln_status copy_typed_data(const Onnx__TensorProto *tensor, kiln_dtype dtype, uint64_t count, void *data,
                                   kiln_error *err)
{
    if (count == 0) /* an empty field may have no array at all */
        return KILN_OK;
    switch (dtype) {
    case KILN_F32: memcpy(data, tensor->float_data, count * sizeof(float)); return KILN_OK;
    case KILN_F64: memcpy(data, tensor->double_data, count * sizeof(double)); return KILN_OK;
    case KILN_I64: memcpy(data, tensor->int64_data, count * sizeof(int64_t)); return KILN_OK;
    case KILN_U64: memcpy(data, tensor->uint64_data, count * sizeof(uint64_t)); return KILN_OK;
    case KILN_U32:
        for (uint64_t i = 0; i < count; i++) {
            if (tensor->uint64_data[i] > UINT32_MAX)
                return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': uint64_data[%llu] does not fit u32",
                                 tensor_label(tensor), (unsigned long long)i);
            ((uint32_t *)data)[i] = (uint32_t)tensor->uint64_data[i];
        }
        return KILN_OK;
    default: return convert_int32_data(tensor, dtype, data, err);
    }
}

static const char *external_entry(const Onnx__TensorProto *tensor, const char *key)
{
    for (size_t i = 0; i < tensor->n_external_data; i++)
        if (tensor->external_data[i]->key && strcmp(tensor->external_data[i]->key, key) == 0)
            return tensor->external_data[i]->value ? tensor->external_data[i]->value : "";
    return NULL;
}

static bool parse_offset(const char *text, uint64_t *out)
{
    if (!text || !*text)
        return false;
    uint64_t value = 0;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9' || value > (UINT64_MAX - 9) / 10)
            return false;
        value = value * 10 + (uint64_t)(*c - '0');
    }
    *out = value;
    return true;
}

/* Reject locations that could name a file outside the directory before touching the file system. */
static kiln_status check_location_text(const Onnx__TensorProto *tensor, const char *location, kiln_error *err)
{
    if (!location || !*location)
        return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': external data has no location",
                         tensor_label(tensor));
    if (location[0] == '/' || strchr(location, '\\'))
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "tensor '%s': external data location '%s' is not a relative path inside the data directory",
                         tensor_label(tensor), location);
    for (const char *part = location; *part;) {
        size_t length = strcspn(part, "/");
        if (length == 2 && part[0] == '.' && part[1] == '.')
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                             "tensor '%s': external data location '%s' leaves the data directory ('..')",
                             tensor_label(tensor), location);
        part += length;
        if (*part == '/')
            part++;
    }
    return KILN_OK;
}

/*
 * Open the external file of `tensor` inside `dir`, checked to hold `bytes`
 * bytes at its offset, and position it there: all before the tensor is
 * allocated, so a tensor claiming more data than exists allocates nothing.
 */
static kiln_status open_external(const Onnx__TensorProto *tensor, const char *dir, uint64_t bytes, int *out,
                                 kiln_error *err)
{
    const char *location = external_entry(tensor, "location");
    if (!dir)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "tensor '%s' keeps its data in the external file '%s', and external data is refused "
                         "(--allow-external-data DIR reads it from inside DIR)",
                         tensor_label(tensor), location ? location : "");
    kiln_status status = check_location_text(tensor, location, err);
    if (status != KILN_OK)
        return status;
    uint64_t offset = 0, length = bytes;
    const char *offset_text = external_entry(tensor, "offset");
    const char *length_text = external_entry(tensor, "length");
    if ((offset_text && !parse_offset(offset_text, &offset)) || (length_text && !parse_offset(length_text, &length)))
        return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': external data offset or length is not a number",
                         tensor_label(tensor));
    if (length != bytes)
        return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': external data length %llu, the dims need %llu bytes",
                         tensor_label(tensor), (unsigned long long)length, (unsigned long long)bytes);
    /* Symlinks are resolved before comparing, so a link inside DIR pointing out of it is refused too. */
    char dir_real[PATH_MAX], file_real[PATH_MAX], joined[PATH_MAX];
    if (!realpath(dir, dir_real))
        return onnx_fail(err, KILN_ERR_IO, "external data directory '%s': %s", dir, strerror(errno));
    if (snprintf(joined, sizeof joined, "%s/%s", dir_real, location) >= (int)sizeof joined)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "tensor '%s': external data path is too long",
                         tensor_label(tensor));
    if (!realpath(joined, file_real))
        return onnx_fail(err, KILN_ERR_IO, "tensor '%s': external data file '%s': %s", tensor_label(tensor), joined,
                         strerror(errno));
    size_t dir_length = strlen(dir_real);
    bool inside = strncmp(file_real, dir_real, dir_length) == 0 &&
                  (file_real[dir_length] == '/' || (dir_length == 1 && dir_real[0] == '/'));
    if (!inside)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "tensor '%s': external data location '%s' resolves to '%s', outside the data directory '%s'",
                         tensor_label(tensor), location, file_real, dir_real);
    /* file_real holds no symbolic link now: O_NOFOLLOW refuses one put in its place since. */
    int fd;
    struct stat st;
    status = open_regular(file_real, O_NOFOLLOW, &fd, &st, err);
    if (status != KILN_OK)
        return status;
    if ((uint64_t)st.st_size < offset || (uint64_t)st.st_size - offset < bytes) {
        close(fd);
        return onnx_fail(err, KILN_ERR_TRUNCATED,
                         "tensor '%s': external file '%s' has fewer than %llu bytes at offset %llu",
                         tensor_label(tensor), location, (unsigned long long)bytes, (unsigned long long)offset);
    }
    if (offset > (uint64_t)INT64_MAX || lseek(fd, (off_t)offset, SEEK_SET) < 0) {
        close(fd);
        return onnx_fail(err, KILN_ERR_IO, "cannot seek in '%s'", file_real);
    }
    *out = fd;
    return KILN_OK;
}

kiln_status onnx_tensor_to_kiln(const Onnx__TensorProto *tensor, const char *external_data_dir,
                                const kiln_onnx_limits *limits, kiln_tensor **out, kiln_error *err)
{
    kiln_onnx_limits storage;
    kiln_status limits_status = onnx_limits_read(limits, &storage, err);
    if (limits_status != KILN_OK)
        return limits_status;
    limits = &storage;
    kiln_dtype dtype;
    kiln_error dtype_err;
    if (onnx_dtype_to_kiln(tensor->data_type, &dtype, &dtype_err) != KILN_OK)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "tensor '%s': %s", tensor_label(tensor), dtype_err.message);
    if (tensor->n_dims > KILN_MAX_RANK)
        return onnx_fail(err, KILN_ERR_LIMIT, "tensor '%s' has rank %zu, over kiln's maximum of %d",
                         tensor_label(tensor), tensor->n_dims, KILN_MAX_RANK);
    if (tensor->segment)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_DTYPE, "tensor '%s' is a segment of a larger tensor, which is not supported",
                         tensor_label(tensor));
    uint64_t count = 1;
    for (size_t a = 0; a < tensor->n_dims; a++) {
        int64_t size = tensor->dims[a];
        if (size < 0)
            return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': dims[%zu] = %lld is negative", tensor_label(tensor),
                             a, (long long)size);
        if (size > 0 && count > UINT64_MAX / (uint64_t)size)
            return onnx_fail(err, KILN_ERR_LIMIT, "tensor '%s': the element count overflows", tensor_label(tensor));
        count *= (uint64_t)size;
    }
    uint64_t element = kiln_dtype_size(dtype);
    if (count > limits->max_tensor_bytes / element)
        return onnx_fail(err, KILN_ERR_LIMIT, "tensor '%s' holds %llu elements of %s, over the limit of %llu bytes",
                         tensor_label(tensor), (unsigned long long)count, kiln_dtype_name(dtype),
                         (unsigned long long)limits->max_tensor_bytes);
    uint64_t bytes = count * element;
    bool external = tensor->has_data_location && tensor->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* Every source is checked to hold the whole tensor before the tensor is allocated. */
    int external_file = -1;
    kiln_status status = KILN_OK;
    if (external) {
        status = open_external(tensor, external_data_dir, bytes, &external_file, err);
        if (status != KILN_OK)
            return status;
    } else if (tensor->has_raw_data) {
        if (tensor->raw_data.len != bytes)
            return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': raw_data holds %zu bytes, the dims need %llu",
                             tensor_label(tensor), tensor->raw_data.len, (unsigned long long)bytes);
    } else {
        const char *field;
        size_t have = typed_count(tensor, dtype, &field);
        if (have != count)
            return onnx_fail(err, KILN_ERR_MALFORMED, "tensor '%s': %s holds %zu values, the dims need %llu",
                             tensor_label(tensor), field, have, (unsigned long long)count);
    }
    kiln_tensor *result;
    status = kiln_tensor_new(dtype, (uint32_t)tensor->n_dims, tensor->dims, &result, err);
    if (status != KILN_OK) {
        if (external_file >= 0)
            close(external_file);
        return status;
    }
    void *data = kiln_tensor_data(result);
    if (external) {
        if (!read_exactly(external_file, data, (size_t)bytes))
            status = onnx_fail(err, KILN_ERR_IO, "tensor '%s': cannot read its external data", tensor_label(tensor));
        close(external_file);
    } else if (tensor->has_raw_data) {
        if (bytes)
            memcpy(data, tensor->raw_data.data, (size_t)bytes);
        if (dtype == KILN_BOOL)
            for (uint64_t i = 0; i < count; i++)
                ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
    } else
        status = copy_typed_data(tensor, dtype, count, data, err);
    if (status != KILN_OK) {
        kiln_tensor_free(result);
        return status;
    }
    *out = result;
    return KILN_OK;
}

kiln_status onnx_tensor_read_file(const char *path, const kiln_onnx_limits *limits, kiln_tensor **out, char **name,
                                  kiln_error *err)
{
    kiln_onnx_limits storage;
    kiln_status limits_status = onnx_limits_read(limits, &storage, err);
    if (limits_status != KILN_OK)
        return limits_status;
    limits = &storage;
    uint8_t *bytes;
    size_t size;
    kiln_status status = read_file(path, limits->max_file_bytes, &bytes, &size, err);
    if (status != KILN_OK)
        return status;
    status = onnx_check_nesting(&onnx__tensor_proto__descriptor, bytes, size, limits->max_nesting_depth, path, err);
    Onnx__TensorProto *tensor = status == KILN_OK ? onnx__tensor_proto__unpack(NULL, size, bytes) : NULL;
    free(bytes);
    if (status != KILN_OK && status != KILN_ERR_MALFORMED)
        return status;
    if (!tensor)
        return onnx_fail(err, KILN_ERR_MALFORMED, "%s: not a serialized ONNX TensorProto", path);
    status = onnx_tensor_to_kiln(tensor, NULL, limits, out, err);
    if (status == KILN_OK && name) {
        *name = strdup(tensor->name ? tensor->name : "");
        if (!*name) {
            kiln_tensor_free(*out);
            status = onnx_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    onnx__tensor_proto__free_unpacked(tensor, NULL);
    return status;
}
