/*
 * artifact_open.c — an artifact opened for inspection (kiln_artifact in
 * kiln/kiln.h): the loaded program when this runtime can run it, else a
 * container-level description and the report saying why not.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kiln/kiln.h>

#include "error.h"
#include "loader.h"

struct kiln_artifact {
    char *path;
    kiln_program *program; /* NULL when it cannot run here */
    kiln_report *report;   /* every problem found loading (NULL only when out of memory) */
    kiln_artifact_description description; /* when program is NULL */
};

kiln_status kiln_artifact_open(const char *path, const kiln_load_options *options, kiln_artifact **out,
                               kiln_error *err)
{
    if (!out || !path)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_artifact_open: NULL argument");
    *out = NULL;
    /* Options the library cannot read are the caller's error, not the artifact's. */
    kiln_load_settings settings;
    KILN_TRY(kiln_load_settings_resolve(options, &settings, err));
    kiln_artifact *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory opening %s", path);
    }
    kiln_error load_err;
    if (kiln_program_load(path, &settings.options, &a->program, &a->report, &load_err) == KILN_OK) {
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
    return a->path;
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
    struct stat info;
    if (!a->program)
        return a->description.file_size;
    /* The loader proved the file exactly as long as its header declares. */
    return stat(a->path, &info) == 0 ? (uint64_t)info.st_size : 0;
}
