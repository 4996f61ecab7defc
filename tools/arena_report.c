/* arena_report.c — a program's arena and its growth per dim (see arena_report.h). */
#include <kiln/util.h>

#include "arena_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sample_inputs.h"
#include "term.h"

/* The arena of a session with `bounds`, whatever its size. */
static bool arena_with(const kiln_program *program, const kiln_dim_bound *bounds, uint32_t count, uint64_t *bytes)
{
    kiln_session_options options;
    kiln_error err;
    kiln_session_options_default(&options);
    options.dims = bounds;
    options.dim_count = count;
    options.max_arena_bytes = UINT64_MAX;
    kiln_status status = kiln_program_session_arena(program, &options, bytes, &err);
    return status == KILN_OK || status == KILN_ERR_LIMIT; /* LIMIT here: the sizes overflow */
}

/* The largest multiple of `step` at most `value`, not below `first`. */
static int64_t multiple_at_most(int64_t value, int64_t first, int64_t step)
{
    int64_t m = value - value % step;
    return m < first ? first : m;
}

bool arena_growth_of(const kiln_program *program, uint32_t index, arena_growth *out)
{
    kiln_program_dim(program, index, &out->dim);
    const kiln_dim_info *d = &out->dim;
    int64_t first = sample_dim_first(d), last = sample_dim_last(d);
    out->at[0] = first;
    out->at[1] = multiple_at_most(first + (last - first) / 2, first, d->multiple_of);
    out->at[2] = last;
    for (int k = 0; k < 3; k++) {
        kiln_dim_bound bound = {d->name, out->at[k], out->at[k]};
        if (!arena_with(program, &bound, 1, &out->bytes[k]))
            return false;
    }
    out->degree = NAN;
    if (out->at[1] > 0 && out->at[2] > out->at[1] && out->bytes[1] > 0 && out->bytes[2] != UINT64_MAX)
        out->degree = log((double)out->bytes[2] / (double)out->bytes[1]) / log((double)out->at[2] / (double)out->at[1]);
    return true;
}

void arena_upper_bound_text(const kiln_program *program, char *out, size_t size)
{
    size_t used = 0;
    uint32_t count = kiln_program_dim_count(program);
    snprintf(out, size, "no dims");
    for (uint32_t d = 0; d < count && used < size; d++) {
        kiln_dim_info dim;
        kiln_program_dim(program, d, &dim);
        used += (size_t)snprintf(out + used, size - used, "%s%s=%lld", d ? ", " : "", dim.name,
                                 (long long)sample_dim_last(&dim));
    }
}

bool arena_default_session_fits(const kiln_program *program, char *message, size_t size)
{
    uint64_t bytes;
    kiln_error err;
    if (kiln_program_session_arena(program, NULL, &bytes, &err) == KILN_OK)
        return true;
    snprintf(message, size, "%s", err.message);
    return false;
}

void arena_report_after_write(const char *path)
{
    kiln_load_options options;
    kiln_program *program;
    kiln_error err;
    kiln_load_options_default(&options);
    /* Lazy: the report needs the program, not the weights, which a lazy
     * load never reads (under NONE a compressed weight section was
     * inflated: a 64 MiB weight doubled the peak of kiln asm --compress). */
    options.verify = KILN_VERIFY_LAZY;
    if (kiln_program_load(path, &options, &program, NULL, &err) != KILN_OK)
        return;
    char where[256], amount[32], message[KILN_ERROR_MESSAGE_SIZE];
    uint64_t bytes = kiln_program_arena_bytes(program);
    arena_upper_bound_text(program, where, sizeof where);
    if (bytes == UINT64_MAX)
        snprintf(amount, sizeof amount, "more than 2^64 bytes");
    else
        kiln_format_bytes(bytes, amount, sizeof amount);
    if (!cli_quiet)
        term_printf(stdout, "arena at the upper bound (%s): %s\n", where, amount);
    if (!arena_default_session_fits(program, message, sizeof message))
        term_printf(stderr,
                    "kiln: warning: a session over the whole domain will not fit the default arena limit: %s.\n"
                    "kiln: warning: it runs only in sessions that narrow a dim (kiln run --dim NAME=MIN..MAX) "
                    "or raise the limit (--max-arena); to bound the domain itself, declare smaller ranges\n",
                    message);
    kiln_program_free(program);
}
