/* artifact_rewrite.c — see artifact_rewrite.h. */
#include "artifact_rewrite.h"

#include <stdlib.h>

#include "format/container.h"
#include "error.h"
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
