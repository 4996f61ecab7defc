/* bench_sizes.c — the sizes bench runs at (see bench_sizes.h). */
#include "bench_sizes.h"

#include <stdlib.h>
#include <string.h>

#include <kiln/text.h>

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
 * Read the extents of an inline evidence entry "  NAME: DTYPE[E0, E1] = ..."
 * for input `name` of rank `rank` in the block [block, end) of canonical
 * text (spec/text-format.md §5, item 12). @return false when the entry is
 * not inline (a file) or does not read as expected.
 */
static bool inline_entry_shape(const char *block, const char *end, const char *name, uint32_t rank,
                               int64_t *shape)
{
    size_t name_length = strlen(name);
    for (const char *line = block; line && line < end; line = memchr(line, '\n', (size_t)(end - line))) {
        line++;
        if (strncmp(line, "  ", 2) != 0 || strncmp(line + 2, name, name_length) != 0 ||
            strncmp(line + 2 + name_length, ": ", 2) != 0)
            continue;
        const char *c = strchr(line, '[');
        if (!c || c >= end)
            return false;
        c++;
        for (uint32_t a = 0; a < rank; a++) {
            char *after;
            long long extent = strtoll(c, &after, 10);
            if (after == c || extent < 0)
                return false;
            shape[a] = extent;
            c = after;
            if (a + 1 < rank && strncmp(c, ", ", 2) == 0)
                c += 2;
        }
        return *c == ']';
    }
    return false;
}

/*
 * The dims the first evidence case's inputs bind, from the program's
 * canonical text (no files written). @return false when the case's inputs
 * are not all inline or anything else does not work out: the caller then
 * falls back to the minimum, which is a fine size too.
 */
static bool evidence_dims(const kiln_program *program, int64_t *values, bool *bound)
{
    kiln_error err;
    char *text;
    if (kiln_program_evidence_count(program) == 0 || kiln_text_disassemble(program, NULL, &text, &err) != KILN_OK)
        return false;
    uint32_t inputs = kiln_program_input_count(program);
    const char **names = calloc(inputs + 1, sizeof *names);
    kiln_tensor **tensors = calloc(inputs + 1, sizeof *tensors);
    const char *block = strstr(text, "\nevidence \"");
    const char *end = block ? strstr(block, "\n}") : NULL;
    bool ok = names && tensors && block && end;
    for (uint32_t i = 0; ok && i < inputs; i++) {
        kiln_io_info io;
        int64_t shape[KILN_MAX_RANK];
        kiln_program_input(program, i, &io);
        names[i] = io.name;
        ok = inline_entry_shape(block, end, io.name, io.rank, shape) &&
             kiln_tensor_new(io.dtype, io.rank, shape, &tensors[i], &err) == KILN_OK;
    }
    ok = ok && kiln_program_bind_dims(program, names, (const kiln_tensor *const *)tensors, inputs, values, bound,
                                      &err) == KILN_OK;
    for (uint32_t i = 0; tensors && i < inputs; i++)
        kiln_tensor_free(tensors[i]);
    free(tensors);
    free(names);
    free(text);
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
    /* Only worth disassembling when some dim is left to choose. */
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
