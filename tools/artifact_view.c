/* artifact_view.c — an artifact as the inspection verbs see it (see artifact_view.h). */
#include "artifact_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

bool artifact_view_open(artifact_view *view, const char *path)
{
    memset(view, 0, sizeof *view);
    view->path = path;
    kiln_error err;
    if (kiln_program_load_with_report(path, NULL, &view->program, &view->report, &err) == KILN_OK)
        return true;
    /* It cannot run here. Whether it can be read at all is the container's
     * question: an intact newer minor, or a program with ops this runtime
     * lacks, still has a header, sections and a digest to show. */
    if (kiln_artifact_describe(path, &view->description, &view->error) == KILN_OK) {
        view->described = true;
        return true;
    }
    return false;
}

void artifact_view_close(artifact_view *view)
{
    kiln_program_free(view->program);
    kiln_report_free(view->report);
    kiln_artifact_description_release(&view->description);
    memset(view, 0, sizeof *view);
}

void view_format_version(const artifact_view *view, uint16_t *major, uint16_t *minor)
{
    if (view->program) {
        kiln_program_format_version(view->program, major, minor);
        return;
    }
    *major = view->description.major;
    *minor = view->description.minor;
}

void view_digest(const artifact_view *view, uint8_t out[32])
{
    if (view->program)
        kiln_program_artifact_digest(view->program, out);
    else
        memcpy(out, view->description.digest, 32);
}

void view_signature(const artifact_view *view, kiln_signature_info *out)
{
    if (view->program)
        kiln_program_signature(view->program, out);
    else
        *out = view->description.signature;
}

uint32_t view_section_count(const artifact_view *view)
{
    return view->program ? kiln_program_section_count(view->program) : view->description.section_count;
}

void view_section(const artifact_view *view, uint32_t index, kiln_section_info *out)
{
    if (view->program)
        kiln_program_section(view->program, index, out);
    else
        *out = view->description.sections[index];
}

int64_t view_find_section(const artifact_view *view, const char *type)
{
    for (uint32_t i = 0; i < view_section_count(view); i++) {
        kiln_section_info s;
        view_section(view, i, &s);
        if (strcmp(s.type, type) == 0)
            return i;
    }
    return -1;
}

uint64_t view_file_size(const artifact_view *view)
{
    struct stat info;
    if (!view->program)
        return view->description.file_size;
    /* The loader proved the file exactly as long as its header declares. */
    return stat(view->path, &info) == 0 ? (uint64_t)info.st_size : 0;
}

const char *program_metadata_value(const kiln_program *program, const char *key)
{
    for (uint32_t i = 0; i < kiln_program_metadata_count(program); i++) {
        const char *k, *v;
        kiln_program_metadata(program, i, &k, &v);
        if (strcmp(k, key) == 0)
            return v;
    }
    return NULL;
}

int64_t program_op_histogram(const kiln_program *program, op_use **out)
{
    uint32_t nodes = kiln_program_node_count(program);
    op_use *uses = calloc(nodes ? nodes : 1, sizeof *uses);
    int64_t count = 0;
    if (!uses)
        return -1;
    for (uint32_t n = 0; n < nodes; n++) {
        kiln_node_info node;
        kiln_program_node(program, n, &node);
        int64_t found = -1;
        for (int64_t i = 0; i < count && found < 0; i++)
            if (uses[i].version == node.op_version && strcmp(uses[i].name, node.op) == 0)
                found = i;
        if (found < 0) {
            found = count++;
            uses[found].name = node.op;
            uses[found].version = node.op_version;
        }
        uses[found].nodes++;
    }
    *out = uses;
    return count;
}

void shape_axes_parse(const char *text, shape_axes *out)
{
    memset(out, 0, sizeof *out);
    const char *at = text;
    if (*at == '[')
        at++;
    while (*at == ' ')
        at++;
    if (*at == ']' || *at == '\0')
        return;
    while (out->rank < KILN_MAX_RANK) {
        const char *end = at;
        while (*end && *end != ',' && *end != ']')
            end++;
        size_t length = (size_t)(end - at);
        while (length && at[length - 1] == ' ')
            length--;
        if (length >= AXIS_TEXT_SIZE)
            length = AXIS_TEXT_SIZE - 1;
        memcpy(out->axis[out->rank], at, length);
        out->axis[out->rank][length] = '\0';
        out->rank++;
        if (*end != ',')
            break;
        at = end + 1;
        while (*at == ' ')
            at++;
    }
}

int64_t program_find_dim(const kiln_program *program, const char *name)
{
    for (uint32_t d = 0; d < kiln_program_dim_count(program); d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        if (strcmp(dim.name, name) == 0)
            return d;
    }
    return -1;
}

void identity_text(const uint8_t digest[32], char out[IDENTITY_TEXT_SIZE])
{
    char hex[65];
    cli_hex(digest, 32, hex);
    snprintf(out, IDENTITY_TEXT_SIZE, "blake2b-256:%s", hex);
}

void identity_short(const uint8_t digest[32], char out[17])
{
    cli_hex(digest, 8, out);
}

const char *signature_state_name(kiln_signature_state state)
{
    switch (state) {
    case KILN_SIGNATURE_VERIFIED: return "verified";
    case KILN_SIGNATURE_UNVERIFIED: return "unverified";
    case KILN_SIGNATURE_NONE: break;
    }
    return "unsigned";
}

const char *weight_kind_name(kiln_weight_kind kind)
{
    switch (kind) {
    case KILN_WEIGHT_BUFFER: return "buffer";
    case KILN_WEIGHT_CONSTANT: return "constant";
    case KILN_WEIGHT_PARAMETER: break;
    }
    return "parameter";
}

const char *problem_severity_name(kiln_severity severity)
{
    return severity == KILN_SEVERITY_ERROR ? "error" : "warning";
}
