/* artifact_rewrite.c — see artifact_rewrite.h. */
#include "artifact_rewrite.h"

#include <stdlib.h>

#include "format/container.h"
#include "error.h"
#include "section_methods.h"
#include "sections.h"

kiln_status kiln_artifact_rewrite_section(const kiln_program *p, uint32_t type, bool critical,
                                          const kiln_writer *data, kiln_section_place place, const char *path,
                                          const kiln_load_options *progress, kiln_error *err)
{
    const kiln_container *c = &p->container;
    /* One more entry than the file has: the new section. */
    kiln_section_spec *specs = calloc((size_t)c->section_count + 1, sizeof *specs);
    if (!specs)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory rewriting the artifact");
    const kiln_section_spec new_section = {
        .type = type,
        .flags = critical ? KILN_SECTION_CRITICAL : 0,
        .version = KILN_PROGRAM_SECTION_VERSION,
        .data = data->data,
        .size = data->size,
    };
    uint32_t count = 0;
    bool placed = false;
    for (uint32_t i = 0; i < c->section_count; i++) {
        const kiln_section_entry *s = &c->sections[i];
        if (s->type == type)
            continue;
        bool at_anchor = !placed && s->type == place.anchor;
        if (at_anchor && !place.after)
            specs[count++] = new_section;
        specs[count++] = (kiln_section_spec){
            .type = s->type,
            .flags = s->flags,
            .version = s->version,
            .data = c->bytes + s->offset,
            .size = (size_t)s->stored_size,
            .copy_of = s,
            .data_mapped = c->file_mapped,
        };
        if (at_anchor && place.after)
            specs[count++] = new_section;
        placed = placed || at_anchor;
    }
    kiln_status status = placed ? KILN_OK
                                : kiln_fail(err, KILN_ERR_MALFORMED, "the artifact has no section to place the new "
                                                                     "one next to");
    /* Keeps the minor and the feature bits. Streamed: the copied sections
     * go from the mapped file to the new one, never into a buffer. */
    if (status == KILN_OK)
    {
        kiln_progress written = {progress ? progress->progress : NULL, progress ? progress->progress_user : NULL, 0,
                                 c->size + data->size, 0};
        status = kiln_container_write_file(specs, count, c->minor, c->features, path, &written, err);
        /* The header, table and padding are not counted: say the pass ended. */
        if (status == KILN_OK && written.fn)
            written.fn(written.user, written.total, written.total);
    }
    free(specs);
    return status;
}

kiln_status kiln_artifact_rewrite_method_section(const kiln_program *method, uint32_t type, bool critical,
                                                 const kiln_writer *data, kiln_section_place place, const char *path,
                                                 const kiln_load_options *progress, kiln_error *err)
{
    const kiln_program *root = kiln_program_root(method);
    if (method == root)
        return kiln_artifact_rewrite_section(root, type, critical, data, place, path, progress, err);
    int64_t index = kiln_container_find(&root->container, KILN_SECTION_MTHD);
    if (index < 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "the artifact has no MTHD section for method '%s'",
                         kiln_program_method_name(method));
    kiln_section_view view = {0};
    kiln_writer methods;
    kiln_writer_init(&methods);
    kiln_status status = kiln_container_section(&root->container, (uint32_t)index, KILN_CHECK_CRC_AND_HASH, &view,
                                                err);
    if (status == KILN_OK)
        status = kiln_methods_replace_part(view.data, view.size, kiln_program_method_name(method), type, data,
                                           &methods, err);
    kiln_section_view_release(&view);
    /* MTHD's place: after PLAN, before WDAT (spec/format.md §7). */
    if (status == KILN_OK)
        status = kiln_artifact_rewrite_section(root, KILN_SECTION_MTHD, true, &methods,
                                               (kiln_section_place){KILN_SECTION_WDAT, false}, path, progress, err);
    kiln_writer_release(&methods);
    return status;
}
