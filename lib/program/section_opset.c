/* section_opset.c — see section_opset.h. */
#include "section_opset.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "op_registry.h"
#include "report.h"
#include "section_read.h"

void kiln_opset_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->opset_count);
    for (uint32_t i = 0; i < m->opset_count; i++) {
        kiln_write_string(w, m->opset[i].name);
        kiln_write_u32(w, m->opset[i].version);
    }
}

/* Record an entry this runtime does not implement, saying which versions it does. */
static void note_missing_op(kiln_report *report, uint32_t i, const kiln_opset_entry *entry)
{
    const kiln_op_def *known = kiln_op_find(entry->name);
    char location[48];
    snprintf(location, sizeof location, "section OPST entry %u", i);
    if (known)
        kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_OP, "op-missing", location,
                        "op %s version %u is not available (this runtime implements versions %u..%u)",
                        entry->name, entry->version, known->versions.min, known->versions.max);
    else
        kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_OP, "op-missing", location,
                        "op %s version %u is not available (unknown op)", entry->name, entry->version);
}

kiln_status kiln_opset_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                              kiln_report *report, uint32_t *unsupported, kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section OPST");
    KILN_SECTION_READ_ARRAY(&r, limits->max_opset_entries, 8, "opset entries", m->opset, m->opset_count, err);
    for (uint32_t i = 0; i < m->opset_count; i++) {
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &m->opset[i].name, err));
        KILN_TRY(kiln_read_u32(&r, &m->opset[i].version, err));
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->opset[j].name, m->opset[i].name) == 0 && m->opset[j].version == m->opset[i].version)
                return kiln_fail(err, KILN_ERR_MALFORMED, "section OPST: %s version %u is listed twice",
                                 m->opset[i].name, m->opset[i].version);
    }
    KILN_TRY(kiln_reader_expect_end(&r, err));

    /* Resolve every entry before failing, so the report names them all. */
    for (uint32_t i = 0; i < m->opset_count; i++) {
        m->opset[i].def = kiln_op_find_version(m->opset[i].name, m->opset[i].version);
        if (m->opset[i].def)
            continue;
        note_missing_op(report, i, &m->opset[i]);
        (*unsupported)++;
    }
    return KILN_OK;
}
