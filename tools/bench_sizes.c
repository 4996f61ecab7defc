/* bench_sizes.c — the sizes bench runs at (see bench_sizes.h). */
#include "bench_sizes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sample_inputs.h"

const char *size_source_name(size_source source)
{
    switch (source) {
    case SIZE_FROM_EVIDENCE: return "evidence";
    case SIZE_FROM_OPTION: return "option";
    case SIZE_FROM_FILES: return "files";
    case SIZE_FROM_MINIMUM: break;
    }
    return "minimum";
}

const char *size_source_phrase(size_source source)
{
    switch (source) {
    case SIZE_FROM_EVIDENCE: return "evidence case";
    case SIZE_FROM_OPTION: return "--dim";
    case SIZE_FROM_FILES: return "the input files";
    case SIZE_FROM_MINIMUM: break;
    }
    return "the dims' minimum";
}

/* The --dim bound of `name`, or NULL. */
static const kiln_dim_bound *named_bound(const session_args *session, const char *name)
{
    for (uint32_t k = 0; k < session->dim_count; k++)
        if (strcmp(session->dims[k].name, name) == 0)
            return &session->dims[k];
    return NULL;
}

/*
 * The dims the first evidence case's inputs bind (kiln_program_bind_dims
 * over views of the case's own tensors). @return false when there is no
 * case or its inputs do not bind (the caller then falls back to the
 * minimum, which is a fine size too).
 */
static bool evidence_dims(const kiln_program *program, int64_t *values, bool *bound)
{
    kiln_error err;
    uint32_t inputs = kiln_program_evidence_count(program) ? kiln_program_evidence_input_count(program, 0) : 0;
    if (inputs == 0)
        return false;
    const char **names = calloc(inputs, sizeof *names);
    kiln_tensor **tensors = calloc(inputs, sizeof *tensors);
    bool ok = names && tensors;
    for (uint32_t i = 0; ok && i < inputs; i++) {
        kiln_dtype dtype;
        uint32_t rank;
        const int64_t *shape;
        const void *data;
        ok = kiln_program_evidence_input(program, 0, i, &names[i], &dtype, &rank, &shape, &data);
        uint64_t count = 1;
        for (uint32_t a = 0; ok && a < rank; a++)
            count *= (uint64_t)shape[a]; /* the case was checked at load: no overflow */
        ok = ok && kiln_tensor_wrap(dtype, rank, shape, (void *)(uintptr_t)data,
                                    (size_t)count * kiln_dtype_size(dtype), &tensors[i], &err) == KILN_OK;
    }
    ok = ok && kiln_program_bind_dims(program, inputs, names, (const kiln_tensor *const *)tensors, values, bound,
                                      &err) == KILN_OK;
    for (uint32_t i = 0; tensors && i < inputs; i++)
        kiln_tensor_free(tensors[i]);
    free(tensors);
    free(names);
    return ok;
}

int bench_sizes_choose(const kiln_program *program, const session_args *session, int64_t *values,
                       size_source *sources, const char **evidence_case)
{
    uint32_t count = kiln_program_dim_count(program);
    int64_t *evidence_values = calloc(count + 1, sizeof *evidence_values);
    bool *evidence_bound = calloc(count + 1, sizeof *evidence_bound);
    if (!evidence_values || !evidence_bound) {
        free(evidence_values);
        free(evidence_bound);
        return cli_error("out of memory");
    }
    /* Only worth reading the evidence when some dim is left to choose. */
    bool needs_default = false;
    for (uint32_t d = 0; d < count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        needs_default = needs_default || !named_bound(session, dim.name);
    }
    bool have_evidence = needs_default && evidence_dims(program, evidence_values, evidence_bound);
    *evidence_case = NULL;
    for (uint32_t d = 0; d < count; d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        const kiln_dim_bound *option = named_bound(session, dim.name);
        if (option) {
            /* The session checks the bound; benched at its top, the worst
             * case the user asked this session to allow. */
            dim.max = option->max;
            values[d] = sample_dim_last(&dim);
            sources[d] = SIZE_FROM_OPTION;
        } else if (have_evidence && evidence_bound[d]) {
            values[d] = evidence_values[d];
            sources[d] = SIZE_FROM_EVIDENCE;
            *evidence_case = kiln_program_evidence_name(program, 0);
        } else {
            values[d] = sample_dim_first(&dim);
            sources[d] = SIZE_FROM_MINIMUM;
        }
    }
    free(evidence_values);
    free(evidence_bound);
    return CLI_OK;
}
