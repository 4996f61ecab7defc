/*
 * artifact_open.c — an artifact opened for inspection (kiln_artifact in
 * kiln/kiln.h): the loaded program when this runtime can run it, else a
 * container-level description and the report saying why not.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/kiln.h>

#include "artifact_describe.h"
#include "error.h"
#include "loader.h"

struct kiln_artifact {
    char *path;            /* NULL when opened from memory */
    uint64_t size;         /* bytes of the file, or of the memory it was opened from */
    kiln_program *program; /* NULL when it cannot run here */
    kiln_report *report;   /* every problem found loading (NULL only when out of memory) */
    kiln_artifact_description description; /* when program is NULL */
};

/* What is shown of an artifact opened "from memory": no file has that name. */
static const char MEMORY_ORIGIN[] = "<memory>";

/* A new, empty artifact remembering `path` (NULL: from memory). */
static kiln_status artifact_new(const char *path, kiln_artifact **out, kiln_error *err)
{
    kiln_artifact *a = calloc(1, sizeof *a);
    if (!a || (path && !(a->path = strdup(path)))) {
        free(a);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory opening %s", path ? path : MEMORY_ORIGIN);
    }
    *out = a;
    return KILN_OK;
}

kiln_status kiln_artifact_open(const char *path, const kiln_load_options *options, kiln_artifact **out,
                               kiln_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_artifact_open: NULL argument");
    /* Options the library cannot read are the caller's error, not the artifact's. */
    kiln_load_settings settings;
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    kiln_artifact *a = NULL;
    KILN_TRY(artifact_new(path, &a, err));
    kiln_error load_err;
    if (kiln_program_load(path, &settings.options, &a->program, &a->report, &load_err) == KILN_OK) {
        /* The loader proved the file exactly as long as its header declares. */
        struct stat info;
        a->size = stat(path, &info) == 0 ? (uint64_t)info.st_size : 0;
        *out = a;
        return KILN_OK;
    }
    /* It cannot run here. Whether it can be read at all is the container's
     * question: an intact newer minor, or a program with ops this runtime
     * lacks, still has a header, sections and a digest to show. */
    kiln_status status = kiln_artifact_describe(path, &a->description, err);
    if (status != KILN_OK) {
        kiln_artifact_free(a);
        return status;
    }
    a->size = a->description.file_size;
    *out = a;
    return KILN_OK;
}

kiln_status kiln_artifact_open_memory(const void *bytes, size_t size, const kiln_load_options *options,
                                      kiln_artifact **out, kiln_error *err)
{
    if (out)
        *out = NULL;
    if (!out || (!bytes && size))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_artifact_open_memory: NULL argument");
    kiln_load_settings settings;
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    kiln_artifact *a = NULL;
    KILN_TRY(artifact_new(NULL, &a, err));
    kiln_error load_err;
    a->size = size;
    if (kiln_program_load_memory(bytes, size, &settings.options, &a->program, &a->report, &load_err) == KILN_OK) {
        *out = a;
        return KILN_OK;
    }
    kiln_status status = kiln_artifact_describe_bytes(bytes, size, &a->description, err);
    if (status != KILN_OK) {
        kiln_artifact_free(a);
        return status;
    }
    *out = a;
    return KILN_OK;
}

void kiln_artifact_free(kiln_artifact *a)
{
    if (!a)
        return;
    kiln_program_free(a->program);
    kiln_report_free(a->report);
    kiln_artifact_description_free(&a->description);
    free(a->path);
    free(a);
}

const char *kiln_artifact_path(const kiln_artifact *a)
{
    return a->path ? a->path : MEMORY_ORIGIN;
}

kiln_program *kiln_artifact_program(const kiln_artifact *a)
{
    return a->program;
}

const kiln_report *kiln_artifact_report(const kiln_artifact *a)
{
    return a->report;
}

const kiln_artifact_description *kiln_artifact_container(const kiln_artifact *a)
{
    return a->program ? NULL : &a->description;
}

void kiln_artifact_format_version(const kiln_artifact *a, uint16_t *major, uint16_t *minor)
{
    if (a->program) {
        kiln_program_format_version(a->program, major, minor);
        return;
    }
    *major = a->description.major;
    *minor = a->description.minor;
}

void kiln_artifact_digest(const kiln_artifact *a, uint8_t out[32])
{
    if (a->program)
        kiln_program_artifact_digest(a->program, out);
    else
        memcpy(out, a->description.digest, 32);
}

void kiln_artifact_signature(const kiln_artifact *a, kiln_signature_info *out)
{
    if (a->program)
        kiln_program_signature(a->program, out);
    else
        *out = a->description.signature;
}

uint32_t kiln_artifact_section_count(const kiln_artifact *a)
{
    return a->program ? kiln_program_section_count(a->program) : a->description.section_count;
}

void kiln_artifact_section(const kiln_artifact *a, uint32_t index, kiln_section_info *out)
{
    if (a->program)
        kiln_program_section(a->program, index, out);
    else if (index < a->description.section_count)
        *out = a->description.sections[index];
    else
        *out = (kiln_section_info){0};
}

int64_t kiln_artifact_find_section(const kiln_artifact *a, const char *type)
{
    for (uint32_t i = 0; i < kiln_artifact_section_count(a); i++) {
        kiln_section_info s;
        kiln_artifact_section(a, i, &s);
        if (strcmp(s.type, type) == 0)
            return i;
    }
    return -1;
}

uint64_t kiln_artifact_file_size(const kiln_artifact *a)
{
    return a->size;
}

uint64_t kiln_artifact_feature_bits(const kiln_artifact *a)
{
    return a->program ? kiln_program_feature_bits(a->program) : a->description.feature_bits;
}
