/*
 * loader.c — opening an artifact: structure, checksums, digest, program
 * decoding and runtime checks, in that order, so that damage is reported
 * by the most specific check that sees it.
 */
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "program.h"
#include "sections.h"

void kiln_limits_default(kiln_limits *limits)
{
    memset(limits, 0, sizeof *limits);
    limits->struct_size = sizeof *limits;
    limits->max_sections = 64;
    limits->max_string_length = 4096;
    limits->max_metadata = 256;
    limits->max_dims = 256;
    limits->max_expr_nodes = 65536;
    limits->max_inputs = 1024;
    limits->max_outputs = 1024;
    limits->max_weights = 65536;
    limits->max_nodes = 1000000;
    limits->max_node_inputs = 64;
    limits->max_opset_entries = 1024;
    limits->max_weight_bytes = UINT64_C(16) << 30;
    limits->max_arena_bytes = UINT64_C(4) << 30;
}

void kiln_load_options_default(kiln_load_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->verify = KILN_VERIFY_FULL;
    kiln_limits_default(&options->limits);
}

static kiln_status check_options(const kiln_load_options *options, kiln_error *err)
{
    if (options->struct_size != sizeof *options || options->limits.struct_size != sizeof options->limits)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "load options were not initialised with kiln_load_options_default");
    if (options->verify != KILN_VERIFY_FULL && options->verify != KILN_VERIFY_NONE)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "unknown verify policy %d", (int)options->verify);
    return KILN_OK;
}

/* Validate and decode program->container's bytes under `options`. */
static kiln_status open_bytes(kiln_program *program, const uint8_t *bytes, size_t size,
                              const kiln_load_options *options, kiln_error *err)
{
    const kiln_limits *limits = &options->limits;
    kiln_container_limits container_limits = {
        .max_sections = limits->max_sections,
        .max_section_raw_size = limits->max_weight_bytes > (UINT64_C(1) << 32)
                                    ? limits->max_weight_bytes : (UINT64_C(1) << 32),
    };
    program->limits = *limits;
    KILN_TRY(kiln_container_parse(bytes, size, &container_limits, &program->container, err));
    if (options->verify == KILN_VERIFY_FULL) {
        /* Section CRCs first: a damaged section is named precisely; the
         * digest then covers what no CRC does (padding between sections). */
        for (uint32_t i = 0; i < program->container.section_count; i++) {
            const uint8_t *data;
            size_t section_size;
            kiln_status status = kiln_container_section(&program->container, i, &data, &section_size, err);
            if (status != KILN_OK && status != KILN_ERR_UNKNOWN_CRITICAL)
                return status;
        }
        KILN_TRY(kiln_container_verify_digest(&program->container, err));
    }
    KILN_TRY(kiln_model_decode(&program->container, limits, &program->model, err));
    if (program->model.mode != KILN_MODE_INFERENCE)
        return kiln_fail(err, KILN_ERR_UNSUPPORTED_MODE,
                         "program '%s' is a training-mode artifact; this runtime runs inference only",
                         program->model.name);
    return KILN_OK;
}

kiln_status kiln_program_load(const char *path, const kiln_load_options *options,
                              kiln_program **out, kiln_error *err)
{
    kiln_load_options defaults;
    *out = NULL;
    if (!path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "path is NULL");
    if (!options) {
        kiln_load_options_default(&defaults);
        options = &defaults;
    }
    KILN_TRY(check_options(options, err));
    kiln_program *program = calloc(1, sizeof *program);
    if (!program)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
    kiln_status status = kiln_mapped_file_open(path, &program->file, err);
    if (status == KILN_OK)
        status = open_bytes(program, program->file.bytes, program->file.size, options, err);
    if (status != KILN_OK) {
        kiln_program_free(program);
        return status;
    }
    *out = program;
    return KILN_OK;
}

kiln_status kiln_program_load_memory(const void *bytes, size_t size, const kiln_load_options *options,
                                     kiln_program **out, kiln_error *err)
{
    kiln_load_options defaults;
    *out = NULL;
    if (!bytes && size)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "bytes is NULL");
    if (!options) {
        kiln_load_options_default(&defaults);
        options = &defaults;
    }
    KILN_TRY(check_options(options, err));
    kiln_program *program = calloc(1, sizeof *program);
    /* Copy so the program owns aligned bytes for its whole lifetime. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!program || !copy) {
        free(program);
        free(copy);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory loading %zu bytes", size);
    }
    if (size)
        memcpy(copy, bytes, size);
    program->owned_bytes = copy;
    kiln_status status = open_bytes(program, copy, size, options, err);
    if (status != KILN_OK) {
        kiln_program_free(program);
        return status;
    }
    *out = program;
    return KILN_OK;
}

void kiln_program_free(kiln_program *program)
{
    if (!program)
        return;
    kiln_model_release(&program->model);
    kiln_container_release(&program->container);
    kiln_mapped_file_release(&program->file);
    free(program->owned_bytes);
    free(program);
}
