/*
 * onnx_api.c — the public C API of the importer (<kiln/onnx.h>) over the
 * protobuf-c model (onnx_model.h) and the graph importer (onnx_import.h).
 */
#include <stdlib.h>
#include <string.h>

#include <kiln/onnx.h>
#include <kiln/util.h>

#include "onnx_error.h"
#include "onnx_import.h"
#include "onnx_model.h"
#include "onnx_result.h"

struct kiln_onnx_model {
    Onnx__ModelProto *proto;
    char *file_stem; /* the file's name without directory and extension; NULL for a model from memory */
};

/* The 1.0 size: a caller's struct is at least this long (kiln_struct_read). */
#define ONNX_OPTIONS_SIZE_1_0 KILN_SIZE_THROUGH(kiln_onnx_options, non_strict)

static void options_default(kiln_onnx_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->state_axis = -2;
}

void kiln_onnx_options_init(kiln_onnx_options *options, size_t struct_size)
{
    kiln_onnx_options defaults;
    options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

/* A caller's options (NULL: defaults) read into this library's layout, with
 * their limits read into `limits`, which out->limits then points at. */
static kiln_status read_options(const kiln_onnx_options *options, kiln_onnx_options *out, kiln_onnx_limits *limits,
                                kiln_error *err)
{
    options_default(out);
    kiln_status status = kiln_struct_read(out, sizeof *out, options, ONNX_OPTIONS_SIZE_1_0, "kiln_onnx_options", err);
    if (status == KILN_OK)
        status = onnx_limits_read(out->limits, limits, err);
    out->limits = limits;
    return status;
}

/* The name a path gives a program: its last component without the extension ("onnx" when empty). */
static char *file_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = strdup(base[0] ? base : "onnx");
    char *dot = name ? strrchr(name, '.') : NULL;
    if (dot && dot != name)
        *dot = '\0';
    return name;
}

static kiln_status wrap_model(Onnx__ModelProto *proto, const char *path, kiln_onnx_model **out, kiln_error *err)
{
    kiln_onnx_model *model = calloc(1, sizeof *model);
    if (!model || (path && !(model->file_stem = file_stem(path)))) {
        free(model);
        onnx__model_proto__free_unpacked(proto, NULL);
        return onnx_no_memory(err);
    }
    model->proto = proto;
    *out = model;
    return KILN_OK;
}

kiln_status kiln_onnx_model_read(const char *path, const kiln_onnx_limits *limits, kiln_onnx_model **out,
                                 kiln_error *err)
{
    if (!out || !path)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_model_read: path and out are required");
    *out = NULL;
    Onnx__ModelProto *proto;
    kiln_status status = onnx_model_read(path, limits, &proto, err);
    return status == KILN_OK ? wrap_model(proto, path, out, err) : status;
}

kiln_status kiln_onnx_model_decode(const void *bytes, size_t size, const kiln_onnx_limits *limits,
                                   kiln_onnx_model **out, kiln_error *err)
{
    if (!out || (!bytes && size))
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_model_decode: bytes and out are required");
    *out = NULL;
    Onnx__ModelProto *proto;
    kiln_status status = onnx_model_decode(bytes, size, limits, &proto, err);
    return status == KILN_OK ? wrap_model(proto, NULL, out, err) : status;
}

void kiln_onnx_model_free(kiln_onnx_model *model)
{
    if (!model)
        return;
    onnx__model_proto__free_unpacked(model->proto, NULL);
    free(model->file_stem);
    free(model);
}

uint32_t kiln_onnx_model_input_count(const kiln_onnx_model *model)
{
    return model && model->proto->graph ? (uint32_t)model->proto->graph->n_input : 0;
}

uint32_t kiln_onnx_model_output_count(const kiln_onnx_model *model)
{
    return model && model->proto->graph ? (uint32_t)model->proto->graph->n_output : 0;
}

kiln_status kiln_onnx_model_value(const kiln_onnx_model *model, bool output, uint32_t index,
                                  kiln_onnx_value_info *out, kiln_error *err)
{
    uint32_t count = output ? kiln_onnx_model_output_count(model) : kiln_onnx_model_input_count(model);
    if (!out || index >= count)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "graph %s %u does not exist (the model has %u)",
                         output ? "output" : "input", index, count);
    const Onnx__GraphProto *graph = model->proto->graph;
    const Onnx__ValueInfoProto *info = output ? graph->output[index] : graph->input[index];
    const Onnx__TypeProto *type = info->type;
    memset(out, 0, sizeof *out);
    out->name = info->name ? info->name : "";
    out->kind = !type                                                     ? KILN_ONNX_VALUE_UNTYPED
                : type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? KILN_ONNX_VALUE_TENSOR
                                                                          : KILN_ONNX_VALUE_OTHER;
    out->dtype = KILN_DTYPE_INVALID;
    if (out->kind == KILN_ONNX_VALUE_TENSOR && onnx_dtype_to_kiln(type->tensor_type->elem_type, &out->dtype, NULL) !=
                                                   KILN_OK)
        out->dtype = KILN_DTYPE_INVALID;
    for (size_t i = 0; !output && i < graph->n_initializer && !out->is_initializer; i++)
        out->is_initializer = graph->initializer[i]->name && strcmp(graph->initializer[i]->name, out->name) == 0;
    return KILN_OK;
}

kiln_status kiln_onnx_tensor_read_file(const char *path, const kiln_onnx_limits *limits, kiln_tensor **out,
                                       char **name, kiln_error *err)
{
    if (!path || !out)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_tensor_read_file: path and out are required");
    return onnx_tensor_read_file(path, limits, out, name, err);
}

kiln_status kiln_onnx_import(const kiln_onnx_model *model, const kiln_onnx_options *options,
                             kiln_onnx_result **out, kiln_error *err)
{
    if (!out)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_import: out is required");
    *out = NULL;
    if (!model)
        return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_onnx_import: model is required");
    kiln_onnx_options settings;
    kiln_onnx_limits limits;
    kiln_status status = read_options(options, &settings, &limits, err);
    if (status != KILN_OK)
        return status;
    options = &settings;
    for (uint32_t d = 0; options && d < options->dim_count; d++)
        if (!options->dims[d].name || options->dims[d].multiple_of < 0)
            return onnx_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim %u: %s", d,
                             options->dims[d].name ? "multiple_of is negative" : "it has no name");
    const Onnx__GraphProto *graph = model->proto->graph;
    const char *name = options && options->program_name ? options->program_name
                       : graph && graph->name && graph->name[0] ? graph->name
                       : model->file_stem                      ? model->file_stem
                                                               : "onnx";
    kiln_onnx_result *result = calloc(1, sizeof *result);
    if (!result)
        return onnx_no_memory(err);
    *out = result;
    return onnx_import_model(model->proto, name, options, result, err);
}

kiln_status kiln_onnx_import_file(const char *path, const kiln_onnx_options *options, kiln_onnx_result **out,
                                  kiln_error *err)
{
    if (out)
        *out = NULL;
    kiln_onnx_model *model = NULL;
    kiln_onnx_options settings;
    kiln_onnx_limits limits;
    kiln_status status = read_options(options, &settings, &limits, err);
    if (status == KILN_OK)
        status = kiln_onnx_model_read(path, &limits, &model, err);
    if (status == KILN_OK)
        status = kiln_onnx_import(model, options, out, err);
    kiln_onnx_model_free(model);
    return status;
}

kiln_status kiln_onnx_import_memory(const void *bytes, size_t size, const kiln_onnx_options *options,
                                    kiln_onnx_result **out, kiln_error *err)
{
    if (out)
        *out = NULL;
    kiln_onnx_model *model = NULL;
    kiln_onnx_options settings;
    kiln_onnx_limits limits;
    kiln_status status = read_options(options, &settings, &limits, err);
    if (status == KILN_OK)
        status = kiln_onnx_model_decode(bytes, size, &limits, &model, err);
    if (status == KILN_OK)
        status = kiln_onnx_import(model, options, out, err);
    kiln_onnx_model_free(model);
    return status;
}

void kiln_onnx_result_free(kiln_onnx_result *result)
{
    if (!result)
        return;
    onnx_result_release(result);
    free(result);
}

kiln_builder *kiln_onnx_result_builder(kiln_onnx_result *result)
{
    return result ? result->builder : NULL;
}

kiln_builder *kiln_onnx_result_take_builder(kiln_onnx_result *result)
{
    kiln_builder *builder = kiln_onnx_result_builder(result);
    if (result)
        result->builder = NULL;
    return builder;
}

uint32_t kiln_onnx_result_unsupported_count(const kiln_onnx_result *result)
{
    return result ? result->unsupported_count : 0;
}

const char *kiln_onnx_result_unsupported(const kiln_onnx_result *result, uint32_t index)
{
    return result && index < result->unsupported_count ? result->unsupported[index] : NULL;
}

uint32_t kiln_onnx_result_input_count(const kiln_onnx_result *result)
{
    return result ? result->input_count : 0;
}

const char *kiln_onnx_result_input_onnx_name(const kiln_onnx_result *result, uint32_t index)
{
    return result && index < result->input_count ? result->input_onnx_names[index] : NULL;
}

const char *kiln_onnx_result_input_kiln_name(const kiln_onnx_result *result, uint32_t index)
{
    return result && index < result->input_count ? result->input_kiln_names[index] : NULL;
}
