/* onnx_value_table.c — see onnx_value_table.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_error.h"
#include "onnx_value_table.h"

kiln_status onnx_report_line(onnx_importer *im, kiln_error *err, const char *fmt, ...)
{
    char line[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (im->report_count == im->report_capacity) {
        uint32_t capacity = im->report_capacity ? im->report_capacity * 2 : 8;
        char **grown = realloc(im->report, capacity * sizeof *grown);
        if (!grown)
            return onnx_no_memory(err);
        im->report = grown;
        im->report_capacity = capacity;
    }
    if (!(im->report[im->report_count] = strdup(line)))
        return onnx_no_memory(err);
    im->report_count++;
    return KILN_OK;
}

/*
 * `name` made a kiln identifier ([A-Za-z_][A-Za-z0-9_.-]*) in `out`
 * (`size` >= 2): other characters become '_', and a name that does not
 * start with a letter or '_' gets a '_' in front. Identifiers are kept.
 */
void onnx_make_identifier(const char *name, char *out, size_t size)
{
    size_t n = 0;
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
        out[n++] = '_';
    for (const char *c = name; *c && n + 1 < size; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                  *c == '.' || *c == '-';
        out[n++] = ok ? *c : '_';
    }
    out[n] = '\0';
}

/*
 * A kiln name for ONNX name `onnx_name` (onnx_make_identifier); a clash with a name
 * already given out gets a numeric suffix.
 */
kiln_status onnx_unique_kiln_name(onnx_importer *im, onnx_name_table *used, const char *onnx_name, const char **out,
                                    kiln_error *err)
{
    size_t n = strlen(onnx_name) + 2;
    char *base = malloc(n);
    if (!base)
        return onnx_no_memory(err);
    onnx_make_identifier(onnx_name, base, n);
    n = strlen(base);
    char *name = malloc(n + 24);
    if (!name) {
        free(base);
        return onnx_no_memory(err);
    }
    strcpy(name, base);
    for (uint32_t suffix = 2; onnx_names_find(used, name, NULL); suffix++)
        snprintf(name, n + 24, "%s_%u", base, suffix);
    free(base);
    char **grown = realloc(im->owned_names, (im->owned_count + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        return onnx_no_memory(err);
    }
    im->owned_names = grown;
    im->owned_names[im->owned_count++] = name;
    if (!onnx_names_put(used, name, 0))
        return onnx_no_memory(err);
    *out = name;
    return KILN_OK;
}

kiln_status onnx_entry_new(onnx_importer *im, const char *onnx_name, onnx_entry_kind kind, onnx_entry **out,
                             kiln_error *err)
{
    if (im->entry_count == im->entry_capacity) {
        uint32_t capacity = im->entry_capacity ? im->entry_capacity * 2 : 64;
        onnx_entry *grown = realloc(im->entries, capacity * sizeof *grown);
        if (!grown)
            return onnx_no_memory(err);
        im->entries = grown;
        im->entry_capacity = capacity;
    }
    onnx_entry *e = &im->entries[im->entry_count];
    *e = (onnx_entry){.onnx_name = onnx_name, .kind = kind};
    if (!onnx_names_put(&im->by_onnx_name, onnx_name, im->entry_count))
        return onnx_no_memory(err);
    im->entry_count++;
    *out = e;
    return KILN_OK;
}

onnx_entry *onnx_entry_find(onnx_importer *im, const char *onnx_name)
{
    uint32_t index;
    return onnx_names_find(&im->by_onnx_name, onnx_name, &index) ? &im->entries[index] : NULL;
}

/* Release what an importer holds, except what onnx_import_model hands to its result. */
void onnx_importer_release(onnx_importer *im)
{
    for (uint32_t i = 0; i < im->entry_count; i++) {
        kiln_tensor_free(im->entries[i].owned_constant);
        free(im->entries[i].symbolic);
    }
    free(im->entries);
    for (uint32_t i = 0; i < im->owned_count; i++)
        free(im->owned_names[i]);
    free(im->owned_names);
    onnx_names_release(&im->by_onnx_name);
    onnx_names_release(&im->kiln_names);
    onnx_names_release(&im->read_table);
    onnx_names_release(&im->producers);
    free(im->dim_declared);
    free(im->states);
    kiln_builder_free(im->builder);
    im->builder = NULL;
}
