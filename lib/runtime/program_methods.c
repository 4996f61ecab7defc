/* program_methods.c — a program's entry points (format 1.3): counting, naming and finding them. */
#include <stdio.h>
#include <string.h>

#include <kiln/util.h>

#include "error.h"
#include "program.h"

uint32_t kiln_program_method_count(const kiln_program *p)
{
    return kiln_program_root(p)->method_count + 1;
}

const kiln_program *kiln_program_method_at(const kiln_program *p, uint32_t index)
{
    const kiln_program *root = kiln_program_root(p);
    if (index == 0)
        return root;
    return index <= root->method_count ? root->methods[index - 1] : NULL;
}

const char *kiln_program_method_name(const kiln_program *p)
{
    return kiln_model_method_name(&p->model);
}

kiln_status kiln_program_method(const kiln_program *p, const char *name, const kiln_program **out, kiln_error *err)
{
    *out = NULL;
    if (!name)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method name is NULL");
    uint32_t count = kiln_program_method_count(p);
    const char *nearest = NULL;
    uint32_t best = UINT32_MAX;
    char names[512];
    size_t used = 0;
    names[0] = '\0';
    for (uint32_t i = 0; i < count; i++) {
        const kiln_program *method = kiln_program_method_at(p, i);
        const char *candidate = kiln_program_method_name(method);
        if (strcmp(candidate, name) == 0) {
            *out = method;
            return KILN_OK;
        }
        uint32_t distance = kiln_name_distance(name, candidate);
        if (distance < best) {
            best = distance;
            nearest = candidate;
        }
        if (used < sizeof names) {
            int n = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", candidate);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    /* A suggestion only for a near miss: at most a third of the name changed. */
    if (nearest && best * 3 <= strlen(name))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program '%s' has no method '%s'; did you mean '%s'? (its methods: %s)",
                         kiln_program_name(p), name, nearest, names);
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program '%s' has no method '%s' (its methods: %s)",
                     kiln_program_name(p), name, names);
}
