/* session_bound.c — a session's own bound on the dims and its arena (see session_bound.h). */
#include "session_bound.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "error.h"
#include "memory_plan.h"

/* Past this many nodes, finding narrowings that fit (a dozen plans per
 * dim, each quadratic in the nodes) would make an error slow to report. */
#define SUGGESTION_NODE_LIMIT 8192

/* Narrowings the message suggests: one per dim that fits alone, else one of all dims. */
#define MAX_SUGGESTIONS 4

static kiln_status check_narrowing(const kiln_program *p, const kiln_dim_bound *dims, uint32_t count,
                                   kiln_interval *ranges, bool *narrowed, kiln_error *err)
{
    const kiln_model *m = &p->model;
    bool *seen = calloc(m->dim_count + 1, sizeof *seen);
    if (!seen)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the session's dims");
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; status == KILN_OK && i < count; i++) {
        const kiln_dim_bound *b = &dims[i];
        int64_t d = b->name ? kiln_program_find_dim(p, b->name) : -1;
        if (!b->name) {
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "session dim %u has no name", i);
            break;
        }
        if (d < 0) {
            char known[256] = "";
            size_t used = 0;
            for (uint32_t k = 0; k < m->dim_count && used < sizeof known; k++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "", m->dims[k].name);
            for (uint32_t k = 0; k < m->derived_count; k++)
                if (strcmp(m->derived[k].name, b->name) == 0)
                    status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                                       "'%s' is a derived dim of program '%s': narrow the dims it is made of (%s)",
                                       b->name, m->name, m->dim_count ? known : "none");
            if (status == KILN_OK)
                status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "'%s' is not a dim of program '%s' (dims: %s)",
                                   b->name, m->name, m->dim_count ? known : "none");
            break;
        }
        const kiln_dim_decl *decl = &m->dims[d];
        char range[64]; /* "5" or "1..8", as the narrowing was written */
        if (b->min == b->max)
            snprintf(range, sizeof range, "%lld", (long long)b->min);
        else
            snprintf(range, sizeof range, "%lld..%lld", (long long)b->min, (long long)b->max);
        if (seen[d])
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "dim '%s' is narrowed twice", decl->name);
        else if (b->min > b->max)
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "%s=%lld..%lld: the minimum is above the maximum",
                               decl->name, (long long)b->min, (long long)b->max);
        else if (b->min < decl->min || b->max > decl->max)
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                               "%s=%s is outside the artifact's range for %s, %lld..%lld: a session can only "
                               "narrow a dim",
                               decl->name, range, decl->name, (long long)decl->min, (long long)decl->max);
        else if (kiln_dim_last(&(kiln_dim_decl){NULL, 0, b->max, decl->multiple_of}) < b->min)
            status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                               "%s=%s holds no multiple of %lld, the only sizes of %s the artifact allows",
                               decl->name, range, (long long)decl->multiple_of, decl->name);
        if (status != KILN_OK)
            break;
        seen[d] = true;
        ranges[d] = (kiln_interval){b->min, b->max};
        *narrowed = *narrowed || b->min != decl->min || b->max != decl->max;
    }
    free(seen);
    return status;
}

/* The arena at the upper bound of `ranges`, UINT64_MAX if a size overflows. */
static kiln_status arena_at(const kiln_model *m, const kiln_interval *ranges, uint64_t *bytes, kiln_error *err)
{
    kiln_arena_plan plan;
    kiln_error local;
    kiln_status status = kiln_plan_arena(m, ranges, UINT64_MAX, NULL, NULL, &plan, &local);
    if (status == KILN_ERR_LIMIT) {
        *bytes = UINT64_MAX;
        return KILN_OK;
    }
    if (status != KILN_OK)
        return kiln_fail(err, status, "%s", local.message);
    *bytes = plan.arena_bytes;
    return KILN_OK;
}

/* The largest multiple of `step` in lo..hi, or lo - 1 if there is none. */
static int64_t last_multiple(int64_t lo, int64_t hi, int64_t step)
{
    int64_t last = hi - hi % step;
    return last >= lo ? last : lo - 1;
}

/*
 * A rounder maximum than `found` (still >= lo and a multiple of `step`) that
 * people would write: a power of two within a quarter below it, else two
 * significant digits; found itself when it has two already.
 */
static int64_t round_maximum(int64_t found, int64_t lo, int64_t step)
{
    int64_t power = 1;
    while (power <= found / 2)
        power *= 2;
    if (power >= lo && power % step == 0 && power >= found - found / 4)
        return power;
    int64_t scale = 1;
    while (found / scale >= 100)
        scale *= 10;
    int64_t round = last_multiple(lo, found / scale * scale, step);
    return round >= lo ? round : found;
}

typedef struct suggestion {
    kiln_interval ranges_changed[MAX_SUGGESTIONS];
    uint32_t dims[MAX_SUGGESTIONS]; /* the dim narrowed, or UINT32_MAX: all of them */
    uint64_t bytes[MAX_SUGGESTIONS];
    uint32_t count;
} suggestion;

/*
 * The largest maximum for dim d, others as in `ranges`, whose arena fits:
 * a bisection, which assumes (as the interval bounds of shape expressions
 * make nearly so) that the arena does not shrink as a maximum grows; the
 * answer is planned once more at the end, so a suggestion always fits.
 */
static kiln_status fit_one_dim(const kiln_model *m, kiln_interval *ranges, uint32_t d, uint64_t limit,
                               int64_t *best, uint64_t *best_bytes, kiln_error *err)
{
    const kiln_dim_decl *decl = &m->dims[d];
    kiln_interval saved = ranges[d];
    int64_t step = decl->multiple_of;
    int64_t lo = saved.lo, good = lo - 1;
    int64_t first = kiln_dim_first(&(kiln_dim_decl){NULL, lo, saved.hi, step});
    uint64_t bytes = UINT64_MAX;
    kiln_status status = KILN_OK;
    /* Bisect over multiples of step in first..hi: value = first + k * step. */
    int64_t k_good = -1, k_bad = (saved.hi - first) / step + 1;
    while (status == KILN_OK && k_bad - k_good > 1) {
        int64_t k = k_good + (k_bad - k_good) / 2;
        ranges[d].hi = first + k * step;
        status = arena_at(m, ranges, &bytes, err);
        if (bytes <= limit)
            k_good = k;
        else
            k_bad = k;
    }
    if (status == KILN_OK && k_good >= 0) {
        good = round_maximum(first + k_good * step, first, step);
        ranges[d].hi = good;
        status = arena_at(m, ranges, &bytes, err);
        if (status == KILN_OK && bytes > limit) { /* the rounding or the bisection missed: plan the exact answer */
            good = first + k_good * step;
            ranges[d].hi = good;
            status = arena_at(m, ranges, &bytes, err);
        }
        if (bytes > limit)
            good = lo - 1;
    }
    ranges[d] = saved;
    *best = good;
    *best_bytes = bytes;
    return status;
}

/* Every dim's maximum lowered to the same fraction k/1024 of its range (rounded down to a multiple). */
static void scale_ranges(const kiln_model *m, const kiln_interval *ranges, int64_t k, kiln_interval *out)
{
    for (uint32_t d = 0; d < m->dim_count; d++) {
        int64_t lo = ranges[d].lo, span = ranges[d].hi - lo, step = m->dims[d].multiple_of;
        int64_t first = kiln_dim_first(&(kiln_dim_decl){NULL, lo, ranges[d].hi, step});
        int64_t hi = lo + span / 1024 * k + span % 1024 * k / 1024;
        out[d] = (kiln_interval){lo, hi < first ? first : last_multiple(first, hi, step)};
    }
}

static kiln_status find_suggestions(const kiln_model *m, const kiln_interval *ranges, uint64_t limit,
                                    suggestion *s, kiln_interval *joint, kiln_error *err)
{
    kiln_interval *work = malloc((m->dim_count + 1) * sizeof *work);
    if (!work)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory suggesting a narrowing");
    memcpy(work, ranges, m->dim_count * sizeof *work);
    kiln_status status = KILN_OK;
    for (uint32_t d = 0; status == KILN_OK && d < m->dim_count && s->count < MAX_SUGGESTIONS; d++) {
        int64_t best;
        uint64_t bytes;
        if (ranges[d].lo == ranges[d].hi)
            continue;
        status = fit_one_dim(m, work, d, limit, &best, &bytes, err);
        if (status == KILN_OK && best >= ranges[d].lo) {
            s->ranges_changed[s->count] = (kiln_interval){ranges[d].lo, best};
            s->dims[s->count] = d;
            s->bytes[s->count++] = bytes;
        }
    }
    if (status == KILN_OK && s->count == 0) {
        /* No dim alone: lower every maximum together. */
        int64_t k_good = -1, k_bad = 1024;
        uint64_t bytes = UINT64_MAX;
        while (status == KILN_OK && k_bad - k_good > 1) {
            int64_t k = k_good + (k_bad - k_good) / 2;
            scale_ranges(m, ranges, k, work);
            status = arena_at(m, work, &bytes, err);
            if (bytes <= limit)
                k_good = k;
            else
                k_bad = k;
        }
        if (status == KILN_OK && k_good >= 0) {
            scale_ranges(m, ranges, k_good, joint);
            status = arena_at(m, joint, &bytes, err);
            if (status == KILN_OK && bytes <= limit) {
                s->dims[0] = UINT32_MAX;
                s->bytes[0] = bytes;
                s->count = 1;
            }
        }
    }
    free(work);
    return status;
}

static void append(char *text, size_t size, size_t *used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *text, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size)
        return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text + *used, size - *used, format, args);
    va_end(args);
    *used += n > 0 ? (size_t)n : 0;
}

/* "batch=64, seq=2048": every dim at the upper bound of `ranges`. */
static void append_bound(const kiln_model *m, const kiln_interval *ranges, char *text, size_t size, size_t *used)
{
    for (uint32_t d = 0; d < m->dim_count; d++)
        append(text, size, used, "%s%s=%lld", d ? ", " : "", m->dims[d].name, (long long)ranges[d].hi);
}

static kiln_status over_limit(const kiln_program *p, const kiln_interval *ranges, uint64_t needed, uint64_t limit,
                              kiln_error *err)
{
    const kiln_model *m = &p->model;
    char text[KILN_ERROR_MESSAGE_SIZE], amount[32], ceiling[32];
    size_t used = 0;
    kiln_format_bytes(limit, ceiling, sizeof ceiling);
    append(text, sizeof text, &used, "the arena at ");
    if (m->dim_count)
        append_bound(m, ranges, text, sizeof text, &used);
    else
        append(text, sizeof text, &used, "the program's static shapes");
    if (needed == UINT64_MAX) {
        append(text, sizeof text, &used, " needs more than 2^64 bytes");
    } else {
        kiln_format_bytes(needed, amount, sizeof amount);
        if (needed < 1024)
            append(text, sizeof text, &used, " needs %s", amount);
        else
            append(text, sizeof text, &used, " needs %s (%llu bytes)", amount, (unsigned long long)needed);
    }
    append(text, sizeof text, &used, ", over the limit of %s", ceiling);

    suggestion s = {.count = 0};
    kiln_interval *joint = calloc(m->dim_count + 1, sizeof *joint);
    kiln_error search_err;
    bool searched = joint && m->dim_count && m->node_count <= SUGGESTION_NODE_LIMIT &&
                    find_suggestions(m, ranges, limit, &s, joint, &search_err) == KILN_OK;
    for (uint32_t i = 0; searched && i < s.count; i++) {
        kiln_format_bytes(s.bytes[i], amount, sizeof amount);
        append(text, sizeof text, &used, i ? "; or with " : "; with ");
        if (s.dims[i] == UINT32_MAX) {
            for (uint32_t d = 0; d < m->dim_count; d++)
                append(text, sizeof text, &used, "%s%s=%lld..%lld", d ? ", " : "", m->dims[d].name,
                       (long long)joint[d].lo, (long long)joint[d].hi);
        } else {
            append(text, sizeof text, &used, "%s=%lld..%lld", m->dims[s.dims[i]].name,
                   (long long)s.ranges_changed[i].lo, (long long)s.ranges_changed[i].hi);
        }
        append(text, sizeof text, &used, " it needs %s", amount);
    }
    if (searched && s.count == 0 && m->dim_count) {
        uint64_t smallest = UINT64_MAX;
        for (uint32_t d = 0; joint && d < m->dim_count; d++)
            joint[d] = (kiln_interval){ranges[d].lo, ranges[d].lo};
        if (arena_at(m, joint, &smallest, &search_err) == KILN_OK && smallest != UINT64_MAX) {
            kiln_format_bytes(smallest, amount, sizeof amount);
            append(text, sizeof text, &used, "; even at the smallest sizes it needs %s", amount);
        }
    }
    free(joint);
    if (s.count || (!searched && m->dim_count))
        append(text, sizeof text, &used, ": narrow the session's dims or raise its arena limit");
    else
        append(text, sizeof text, &used, ": raise the session's arena limit");
    return kiln_fail(err, KILN_ERR_LIMIT, "%s", text);
}

kiln_status kiln_session_bound_resolve(const kiln_program *p, const kiln_session_options *options,
                                       kiln_session_bound *bound, uint64_t *arena_bytes, kiln_error *err)
{
    const kiln_model *m = &p->model;
    memset(bound, 0, sizeof *bound);
    if (arena_bytes)
        *arena_bytes = 0;
    if (options && options->dim_count && !options->dims)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "session options: dim_count is %u but dims is NULL",
                         options->dim_count);
    bound->ranges = calloc(m->dim_count + 1, sizeof *bound->ranges);
    bound->offsets = calloc(m->node_count + 1, sizeof *bound->offsets);
    bound->sizes = calloc(m->node_count + 1, sizeof *bound->sizes);
    if (!bound->ranges || !bound->offsets || !bound->sizes) {
        kiln_session_bound_release(bound);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for the session's memory plan");
    }
    for (uint32_t d = 0; d < m->dim_count; d++)
        bound->ranges[d] = (kiln_interval){m->dims[d].min, m->dims[d].max};
    kiln_status status = KILN_OK;
    if (options && options->dim_count)
        status = check_narrowing(p, options->dims, options->dim_count, bound->ranges, &bound->narrowed, err);
    uint64_t limit = options && options->max_arena_bytes ? options->max_arena_bytes : p->limits.max_arena_bytes;
    if (status == KILN_OK && !bound->narrowed && p->domain_planned) {
        memcpy(bound->offsets, p->arena_offsets, m->node_count * sizeof *bound->offsets);
        memcpy(bound->sizes, p->slot_sizes, m->node_count * sizeof *bound->sizes);
        bound->arena_bytes = p->arena_plan.arena_bytes;
    } else if (status == KILN_OK) {
        kiln_arena_plan plan;
        kiln_error local;
        kiln_status planned = kiln_plan_arena(m, bound->ranges, UINT64_MAX, bound->offsets, bound->sizes, &plan,
                                              &local);
        if (planned == KILN_OK)
            bound->arena_bytes = plan.arena_bytes;
        else if (planned == KILN_ERR_LIMIT)
            bound->arena_bytes = UINT64_MAX; /* a size overflows: over any limit */
        else
            status = kiln_fail(err, planned, "%s", local.message);
    }
    if (status == KILN_OK && arena_bytes)
        *arena_bytes = bound->arena_bytes;
    if (status == KILN_OK && bound->arena_bytes > limit)
        status = over_limit(p, bound->ranges, bound->arena_bytes, limit, err);
    if (status != KILN_OK)
        kiln_session_bound_release(bound);
    return status;
}

/* The smallest kiln_session_options taken: the struct before `profile`
 * was added at its end, which callers built against that header pass. */
#define SESSION_OPTIONS_SIZE_MIN KILN_SIZE_THROUGH(kiln_session_options, thread_policy)

static void session_options_default(kiln_session_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
}

void kiln_session_options_init(kiln_session_options *options, size_t struct_size)
{
    kiln_session_options defaults;
    session_options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

kiln_status kiln_session_options_read(const kiln_session_options *options, kiln_session_options *out,
                                      kiln_error *err)
{
    session_options_default(out);
    KILN_TRY(kiln_struct_read(out, sizeof *out, options, SESSION_OPTIONS_SIZE_MIN, "kiln_session_options", err));
    if (out->thread_policy != KILN_THREADS_ADAPTIVE && out->thread_policy != KILN_THREADS_FIXED)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "thread_policy %d is neither KILN_THREADS_ADAPTIVE (0) nor KILN_THREADS_FIXED (1)",
                         (int)out->thread_policy);
    return KILN_OK;
}

void kiln_session_bound_release(kiln_session_bound *bound)
{
    free(bound->ranges);
    free(bound->offsets);
    free(bound->sizes);
    memset(bound, 0, sizeof *bound);
}

kiln_status kiln_session_bound_check(const kiln_program *p, const kiln_session_bound *bound,
                                     const int64_t *dim_values, const bool *dim_bound,
                                     const kiln_binding_site *sites, kiln_error *err)
{
    const kiln_model *m = &p->model;
    if (!bound->narrowed)
        return KILN_OK;
    for (uint32_t d = 0; d < m->dim_count; d++) {
        if (!dim_bound[d] || (dim_values[d] >= bound->ranges[d].lo && dim_values[d] <= bound->ranges[d].hi))
            continue;
        const kiln_dim_decl *decl = &m->dims[d];
        char site[160];
        kiln_binding_site_text(m, sites[d], site, sizeof site);
        return kiln_fail(err, KILN_ERR_SHAPE_GUARD,
                         "%s (%s): %lld is outside this session's %lld..%lld (the artifact "
                         "allows %lld..%lld: run it in a session whose bound on %s includes %lld)",
                         site, decl->name, (long long)dim_values[d],
                         (long long)bound->ranges[d].lo, (long long)bound->ranges[d].hi, (long long)decl->min,
                         (long long)decl->max, decl->name, (long long)dim_values[d]);
    }
    return KILN_OK;
}

kiln_status kiln_program_session_arena(const kiln_program *program, const kiln_session_options *options,
                                       uint64_t *arena_bytes, kiln_error *err)
{
    kiln_session_bound bound;
    uint64_t needed = 0;
    if (!program || !arena_bytes)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program and arena_bytes must not be NULL");
    kiln_session_options settings;
    KILN_TRY(kiln_session_options_read(options, &settings, err));
    kiln_status status = kiln_session_bound_resolve(program, &settings, &bound, &needed, err);
    *arena_bytes = needed;
    if (status == KILN_OK)
        kiln_session_bound_release(&bound);
    return status;
}

