/* diff.c — the public face of interface_diff.h: kiln_diff in kiln/kiln.h. */
#include <stdlib.h>

#include "error.h"
#include "interface_diff.h"

struct kiln_diff {
    interface_diff result;
};

/* Compare, every method or only `method` (NULL: all). */
static kiln_status diff_run(const kiln_artifact *a, const kiln_artifact *b, const char *method, kiln_diff **out,
                            kiln_error *err)
{
    *out = NULL;
    kiln_diff *d = malloc(sizeof *d);
    if (!d || !kiln_interface_diff_run(a, b, method, &d->result)) {
        free(d);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory comparing %s and %s", kiln_artifact_path(a),
                         kiln_artifact_path(b));
    }
    *out = d;
    return KILN_OK;
}

kiln_status kiln_diff_artifacts(const kiln_artifact *a, const kiln_artifact *b, kiln_diff **out, kiln_error *err)
{
    if (!a || !b || !out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_diff_artifacts: NULL argument");
    return diff_run(a, b, NULL, out, err);
}

kiln_status kiln_diff_method(const kiln_artifact *a, const kiln_artifact *b, const char *method, kiln_diff **out,
                             kiln_error *err)
{
    if (!a || !b || !method || !out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_diff_method: NULL argument");
    *out = NULL;
    /* A side that cannot run here has no methods to name: the comparison says so (compared false). */
    const kiln_artifact *sides[] = {a, b};
    for (int i = 0; i < 2; i++) {
        const kiln_program *program = kiln_artifact_program(sides[i]), *found;
        if (program)
            KILN_TRY(kiln_fail_within(err, kiln_program_method(program, method, &found, err), "%s",
                                      kiln_artifact_path(sides[i])));
    }
    return diff_run(a, b, method, out, err);
}

void kiln_diff_free(kiln_diff *d)
{
    if (!d)
        return;
    kiln_interface_diff_release(&d->result);
    free(d);
}

uint32_t kiln_diff_change_count(const kiln_diff *d)
{
    return (uint32_t)d->result.changes.count;
}

void kiln_diff_change(const kiln_diff *d, uint32_t index, kiln_change_info *out)
{
    if (index >= d->result.changes.count) {
        *out = (kiln_change_info){KILN_CHANGE_BREAKING, NULL, NULL, NULL};
        return;
    }
    const change *c = &d->result.changes.items[index];
    *out = (kiln_change_info){c->class, c->kind, c->subject, c->message};
}

uint32_t kiln_diff_class_count(const kiln_diff *d, kiln_change_class change_class)
{
    uint32_t n = 0;
    for (size_t i = 0; i < d->result.changes.count; i++)
        n += d->result.changes.items[i].class == change_class;
    return n;
}

void kiln_diff_identity(const kiln_diff *d, uint32_t index, kiln_identity_pair *out)
{
    if (index >= 3) {
        *out = (kiln_identity_pair){0};
        return;
    }
    *out = d->result.identities[index];
}

const char *kiln_diff_verdict(const kiln_diff *d)
{
    return d->result.verdict;
}

bool kiln_diff_compared(const kiln_diff *d)
{
    return d->result.compared;
}

bool kiln_diff_breaking(const kiln_diff *d)
{
    return kiln_interface_diff_breaking(&d->result);
}
