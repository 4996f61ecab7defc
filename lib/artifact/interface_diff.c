/*
 * interface_diff.c — what changed between two artifacts, each difference
 * classed for the consumers of A as spec/compatibility.md §6 says:
 *
 *   breaking    an input removed, renamed or added; a dtype or rank changed;
 *               a dim's accepted sizes narrowed; a constraint added (a
 *               multiple_of, a fixed size where a dim was, two axes that
 *               must now be equal, a semantic check); an output removed or
 *               renamed; B needs something this runtime lacks (an op
 *               version, a section, a feature bit, a dtype);
 *   compatible  a dim widened; an output added; metadata, evidence or the
 *               signature changed; the same program with new weights.
 *
 * A dim is compared by the set of sizes it accepts (range and multiple_of),
 * so a widened range and a dropped multiple_of are both widenings, and a
 * dim renamed with the same set changes nothing a consumer sees. Dims are
 * paired across A and B by the input axes that use them, so a rename is
 * recognised as one.
 */
#include "interface_diff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>


#define SHAPE_TEXT_SIZE 1100

/* The axis expressions of one input's or output's declared shape, as text. */
#define AXIS_TEXT_SIZE 512
typedef struct shape_axes {
    uint32_t rank;
    char axis[KILN_MAX_RANK][AXIS_TEXT_SIZE];
} shape_axes;

static void shape_axes_of(const kiln_program *p, bool output, uint32_t index, shape_axes *out)
{
    kiln_io_info io;
    memset(out, 0, sizeof *out);
    if (output)
        kiln_program_output(p, index, &io);
    else
        kiln_program_input(p, index, &io);
    for (out->rank = 0; out->rank < io.rank && out->rank < KILN_MAX_RANK; out->rank++)
        if (output)
            kiln_program_output_axis_text(p, index, out->rank, out->axis[out->rank], AXIS_TEXT_SIZE);
        else
            kiln_program_input_axis_text(p, index, out->rank, out->axis[out->rank], AXIS_TEXT_SIZE);
}

/* ----------------------------------------------------------------- changes */

static char *vformat(const char *fmt, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (text)
        vsnprintf(text, (size_t)length + 1, fmt, args);
    return text;
}

static char *format_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format_text(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *text = vformat(fmt, args);
    va_end(args);
    return text;
}

static void add_change(change_list *list, kiln_change_class class, const char *kind, const char *subject,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_change(change_list *list, kiln_change_class class, const char *kind, const char *subject,
                       const char *fmt, ...)
{
    if (list->failed)
        return;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 16;
        change *items = realloc(list->items, capacity * sizeof *items);
        if (!items) {
            list->failed = true;
            return;
        }
        list->items = items;
        list->capacity = capacity;
    }
    va_list args;
    va_start(args, fmt);
    char *message = vformat(fmt, args);
    va_end(args);
    char *subject_copy = list->method ? format_text("method '%s' %s", list->method, subject)
                                      : format_text("%s", subject);
    if (!message || !subject_copy) {
        free(message);
        free(subject_copy);
        list->failed = true;
        return;
    }
    list->items[list->count++] = (change){class, kind, subject_copy, message};
}

static size_t change_count(const change_list *list, kiln_change_class class)
{
    size_t n = 0;
    for (size_t i = 0; i < list->count; i++)
        n += list->items[i].class == class;
    return n;
}

static void free_changes(change_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->items[i].subject);
        free(list->items[i].message);
    }
    free(list->items);
}

/* ---------------------------------------------------------- sets of sizes */

/* The sizes a dim accepts: min..max, multiples of k. */
typedef struct size_set {
    int64_t min, max, k;
} size_set;

static size_set dim_set(const kiln_program *p, uint32_t dim)
{
    kiln_dim_info d;
    kiln_program_dim(p, dim, &d);
    return (size_set){d.min, d.max, d.multiple_of > 0 ? d.multiple_of : 1};
}

static int64_t set_first(size_set s)
{
    int64_t r = s.min % s.k;
    return r == 0 ? s.min : s.min + (s.k - r);
}

static int64_t set_last(size_set s)
{
    return s.max - s.max % s.k;
}

static bool set_has(size_set s, int64_t v)
{
    return v >= s.min && v <= s.max && v % s.k == 0;
}

/*
 * Is every size of `a` in `b`? For two or more elements this is exact: if
 * k_a*j and k_a*(j+1) are both multiples of k_b, so is k_a.
 */
static bool set_within(size_set a, size_set b)
{
    int64_t first = set_first(a), last = set_last(a);
    if (first > last)
        return true; /* empty (the builder refuses such dims) */
    if (first == last)
        return set_has(b, first);
    return set_has(b, first) && set_has(b, last) && a.k % b.k == 0;
}

static bool set_equal(size_set a, size_set b)
{
    return set_within(a, b) && set_within(b, a);
}

/* A size of `a` that `b` refuses (first found), for the message; false if
 * none turned up within a bounded search. */
static bool set_example_outside(size_set a, size_set b, int64_t *out)
{
    int64_t v = set_first(a), last = set_last(a);
    for (int steps = 0; v <= last && steps < 100000; steps++, v += a.k)
        if (!set_has(b, v)) {
            *out = v;
            return true;
        }
    if (last >= set_first(a) && !set_has(b, last)) {
        *out = last;
        return true;
    }
    return false;
}

static void set_text(size_set s, char *out, size_t size)
{
    if (s.k > 1)
        snprintf(out, size, "%lld..%lld multiple_of %lld", (long long)s.min, (long long)s.max, (long long)s.k);
    else
        snprintf(out, size, "%lld..%lld", (long long)s.min, (long long)s.max);
}

/* -------------------------------------------------------------- the diff */

typedef struct dim_pair {
    uint32_t a, b;
} dim_pair;

/* One input axis that is a bare dim in both artifacts. */
typedef struct axis_use {
    const char *input_a;
    uint32_t axis;
    uint32_t dim_a, dim_b;
} axis_use;

typedef struct diff {
    const kiln_program *a, *b;
    change_list changes;
    dim_pair *pairs;
    size_t pair_count;
    axis_use *uses;
    size_t use_count;
    bool failed;
} diff;

static bool is_number(const char *text)
{
    if (!*text)
        return false;
    for (; *text; text++)
        if (*text < '0' || *text > '9')
            return false;
    return true;
}

static bool pair_known(const diff *d, uint32_t a, uint32_t b)
{
    for (size_t i = 0; i < d->pair_count; i++)
        if (d->pairs[i].a == a && d->pairs[i].b == b)
            return true;
    return false;
}

/* The B dim that A's dim `a` was first paired with, or -1. */
static int64_t paired_b(const diff *d, uint32_t a)
{
    for (size_t i = 0; i < d->pair_count; i++)
        if (d->pairs[i].a == a)
            return d->pairs[i].b;
    return -1;
}

/* Compare the sizes two paired dims accept, once per pair. */
static void compare_dims(diff *d, uint32_t dim_a, uint32_t dim_b)
{
    if (pair_known(d, dim_a, dim_b))
        return;
    dim_pair *pairs = realloc(d->pairs, (d->pair_count + 1) * sizeof *pairs);
    if (!pairs) {
        d->failed = true;
        return;
    }
    d->pairs = pairs;
    d->pairs[d->pair_count++] = (dim_pair){dim_a, dim_b};

    kiln_dim_info ia, ib;
    kiln_program_dim(d->a, dim_a, &ia);
    kiln_program_dim(d->b, dim_b, &ib);
    size_set sa = dim_set(d->a, dim_a), sb = dim_set(d->b, dim_b);
    char subject[300], ta[96], tb[96];
    /* A rename: the old name is gone from B and the new one is new. Two
     * dims that both exist in A and B and now meet on one axis are not. */
    bool same_name = strcmp(ia.name, ib.name) == 0;
    bool renamed = !same_name && kiln_program_find_dim(d->b, ia.name) < 0 && kiln_program_find_dim(d->a, ib.name) < 0;
    if (same_name)
        snprintf(subject, sizeof subject, "dim '%s'", ia.name);
    else
        snprintf(subject, sizeof subject, "dim '%s' -> '%s'", ia.name, ib.name);
    set_text(sa, ta, sizeof ta);
    set_text(sb, tb, sizeof tb);
    if (set_equal(sa, sb)) {
        if (renamed)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "dim-renamed", subject, "renamed; it accepts the same sizes (%s)", ta);
        return;
    }
    if (set_within(sa, sb)) {
        bool range_wider = sb.min < sa.min || sb.max > sa.max;
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, range_wider ? "dim-widened" : "constraint-removed", subject,
                   "%s -> %s: accepts every size it did, and more", ta, tb);
        return;
    }
    int64_t example;
    bool have_example = set_example_outside(sa, sb, &example);
    bool range_kept = set_first(sa) >= sb.min && set_last(sa) <= sb.max;
    char because[64] = "";
    if (have_example)
        snprintf(because, sizeof because, ": %lld is no longer accepted", (long long)example);
    if (range_kept)
        add_change(&d->changes, KILN_CHANGE_BREAKING, "constraint-added", subject, "%s -> %s%s", ta, tb, because);
    else
        add_change(&d->changes, KILN_CHANGE_BREAKING, "dim-narrowed", subject, "%s -> %s%s", ta, tb, because);
}

/* Copy `text` into `out`, replacing each identifier that names a dim of A
 * paired with a dim of B by that B dim's name. */
static void rename_dims(const diff *d, const char *text, char *out, size_t size)
{
    size_t used = 0;
    const char *at = text;
    while (*at && used + 1 < size) {
        bool starts = (*at >= 'A' && *at <= 'Z') || (*at >= 'a' && *at <= 'z') || *at == '_';
        if (!starts) {
            out[used++] = *at++;
            continue;
        }
        const char *end = at;
        while ((*end >= 'A' && *end <= 'Z') || (*end >= 'a' && *end <= 'z') || (*end >= '0' && *end <= '9') ||
               *end == '_')
            end++;
        char name[256];
        size_t length = (size_t)(end - at) < sizeof name - 1 ? (size_t)(end - at) : sizeof name - 1;
        memcpy(name, at, length);
        name[length] = '\0';
        const char *replacement = name;
        int64_t dim = kiln_program_find_dim(d->a, name);
        int64_t b = dim >= 0 ? paired_b(d, (uint32_t)dim) : -1;
        kiln_dim_info info;
        if (b >= 0) {
            kiln_program_dim(d->b, (uint32_t)b, &info);
            replacement = info.name;
        }
        used += (size_t)snprintf(out + used, size - used, "%s", replacement);
        if (used >= size)
            used = size - 1;
        at = end;
    }
    out[used] = '\0';
}

static void remember_use(diff *d, const char *input, uint32_t axis, uint32_t dim_a, uint32_t dim_b)
{
    axis_use *uses = realloc(d->uses, (d->use_count + 1) * sizeof *uses);
    if (!uses) {
        d->failed = true;
        return;
    }
    d->uses = uses;
    d->uses[d->use_count++] = (axis_use){input, axis, dim_a, dim_b};
}

/* First pass over the axes of a matched input: pair the bare dims. */
static void pair_axes(diff *d, const char *name, const shape_axes *sa, const shape_axes *sb)
{
    for (uint32_t a = 0; a < sa->rank && a < sb->rank; a++) {
        int64_t da = kiln_program_find_dim(d->a, sa->axis[a]), db = kiln_program_find_dim(d->b, sb->axis[a]);
        if (da >= 0 && db >= 0) {
            compare_dims(d, (uint32_t)da, (uint32_t)db);
            remember_use(d, name, a, (uint32_t)da, (uint32_t)db);
        }
    }
}

/* Second pass: every axis that is not a pair of bare dims. */
static void compare_axes(diff *d, const char *what, const char *name, const shape_axes *sa, const shape_axes *sb,
                         bool output)
{
    for (uint32_t a = 0; a < sa->rank && a < sb->rank; a++) {
        const char *ta = sa->axis[a], *tb = sb->axis[a];
        int64_t da = kiln_program_find_dim(d->a, ta), db = kiln_program_find_dim(d->b, tb);
        char subject[400], renamed[AXIS_TEXT_SIZE];
        snprintf(subject, sizeof subject, "%s '%s' axis %u", what, name, a);
        if (da >= 0 && db >= 0) {
            if (output && !pair_known(d, (uint32_t)da, (uint32_t)db) && paired_b(d, (uint32_t)da) >= 0)
                add_change(&d->changes, KILN_CHANGE_BREAKING, "output-shape", subject, "%s -> %s", ta, tb);
            else if (output && !pair_known(d, (uint32_t)da, (uint32_t)db))
                compare_dims(d, (uint32_t)da, (uint32_t)db);
            continue;
        }
        if (is_number(ta) && is_number(tb)) {
            if (strcmp(ta, tb) != 0)
                add_change(&d->changes, KILN_CHANGE_BREAKING, output ? "output-shape" : "axis-size", subject, "size %s -> %s",
                           ta, tb);
            continue;
        }
        if (!output && da >= 0 && is_number(tb)) {
            size_set s = dim_set(d->a, (uint32_t)da);
            int64_t fixed = strtoll(tb, NULL, 10);
            char range[96];
            set_text(s, range, sizeof range);
            if (!(set_first(s) == set_last(s) && set_first(s) == fixed))
                add_change(&d->changes, KILN_CHANGE_BREAKING, "axis-fixed", subject,
                           "fixed at %s where dim '%s' (%s) was", tb, ta, range);
            continue;
        }
        if (!output && is_number(ta) && db >= 0) {
            size_set s = dim_set(d->b, (uint32_t)db);
            char range[96];
            set_text(s, range, sizeof range);
            if (set_has(s, strtoll(ta, NULL, 10)))
                add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "axis-freed", subject, "dim '%s' (%s) where the size was fixed at %s",
                           tb, range, ta);
            else
                add_change(&d->changes, KILN_CHANGE_BREAKING, "axis-changed", subject, "dim '%s' (%s) does not accept the former size %s",
                           tb, range, ta);
            continue;
        }
        rename_dims(d, ta, renamed, sizeof renamed);
        if (strcmp(renamed, tb) != 0)
            add_change(&d->changes, KILN_CHANGE_BREAKING, output ? "output-shape" : "axis-changed", subject, "%s -> %s", ta, tb);
    }
}

/* Axes tied to one dim must be equal: a tie B adds is a new constraint. */
static void compare_ties(diff *d)
{
    for (size_t p = 0; p < d->use_count; p++)
        for (size_t q = p + 1; q < d->use_count; q++) {
            const axis_use *u = &d->uses[p], *v = &d->uses[q];
            bool tied_a = u->dim_a == v->dim_a, tied_b = u->dim_b == v->dim_b;
            if (tied_a == tied_b)
                continue;
            char subject[400];
            snprintf(subject, sizeof subject, "input '%s' axis %u and input '%s' axis %u", u->input_a, u->axis,
                     v->input_a, v->axis);
            kiln_dim_info dim;
            if (tied_b) {
                kiln_program_dim(d->b, u->dim_b, &dim);
                add_change(&d->changes, KILN_CHANGE_BREAKING, "constraint-added", subject, "must now be equal (dim '%s')",
                           dim.name);
            } else {
                kiln_program_dim(d->a, u->dim_a, &dim);
                add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "constraint-removed", subject,
                           "no longer need to be equal (they shared dim '%s')", dim.name);
            }
        }
}

/* ---------------------------------------------------- inputs and outputs */

typedef struct io_side {
    uint32_t count;
    kiln_io_info *info;
    char (*shape)[SHAPE_TEXT_SIZE];
    int64_t *match; /* index on the other side, or -1 */
} io_side;

static bool io_side_load(const kiln_program *p, bool outputs, io_side *side)
{
    side->count = outputs ? kiln_program_output_count(p) : kiln_program_input_count(p);
    side->info = calloc(side->count + 1, sizeof *side->info);
    side->shape = calloc(side->count + 1, sizeof *side->shape);
    side->match = calloc(side->count + 1, sizeof *side->match);
    if (!side->info || !side->shape || !side->match)
        return false;
    for (uint32_t i = 0; i < side->count; i++) {
        if (outputs) {
            kiln_program_output(p, i, &side->info[i]);
            kiln_program_output_shape_text(p, i, side->shape[i], SHAPE_TEXT_SIZE);
        } else {
            kiln_program_input(p, i, &side->info[i]);
            kiln_program_input_shape_text(p, i, side->shape[i], SHAPE_TEXT_SIZE);
        }
        side->match[i] = -1;
    }
    return true;
}

static void io_side_free(io_side *side)
{
    free(side->info);
    free(side->shape);
    free(side->match);
}

/* Pair by name, then pair what is left by equal dtype and shape (a rename). */
static void match_sides(io_side *a, io_side *b, bool *renamed_pairs)
{
    for (uint32_t i = 0; i < a->count; i++)
        for (uint32_t j = 0; j < b->count; j++)
            if (b->match[j] < 0 && strcmp(a->info[i].name, b->info[j].name) == 0) {
                a->match[i] = j;
                b->match[j] = i;
                break;
            }
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->match[i] >= 0)
            continue;
        for (uint32_t j = 0; j < b->count; j++)
            if (b->match[j] < 0 && a->info[i].dtype == b->info[j].dtype && strcmp(a->shape[i], b->shape[j]) == 0) {
                a->match[i] = j;
                b->match[j] = i;
                renamed_pairs[i] = true;
                break;
            }
    }
}

static void range_text(const kiln_input_check *c, char *out, size_t size)
{
    snprintf(out, size, "%.17g..%.17g", c->min, c->max);
}

static bool categories_within(const kiln_input_check *a, const kiln_input_check *b)
{
    for (uint32_t i = 0; i < a->category_count; i++) {
        bool found = false;
        for (uint32_t j = 0; j < b->category_count && !found; j++)
            found = a->categories[i] == b->categories[j];
        if (!found)
            return false;
    }
    return true;
}

/* Semantic checks: more values refused is breaking, fewer is compatible. */
static void compare_checks(diff *d, uint32_t ia, uint32_t ib, const char *name)
{
    kiln_input_check ca, cb;
    kiln_input_check_default(&ca);
    kiln_input_check_default(&cb);
    bool has_a = kiln_program_input_check(d->a, ia, &ca), has_b = kiln_program_input_check(d->b, ib, &cb);
    char subject[300], ra[128], rb[128];
    snprintf(subject, sizeof subject, "input '%s' check", name);
    if (!has_a && !has_b)
        return;
    if (!has_a) {
        memset(&ca, 0, sizeof ca);
        ca.unit = ca.description = "";
    }
    if (!has_b) {
        memset(&cb, 0, sizeof cb);
        cb.unit = cb.description = "";
    }
    if (ca.has_range || cb.has_range) {
        range_text(&ca, ra, sizeof ra);
        range_text(&cb, rb, sizeof rb);
        if (!ca.has_range)
            add_change(&d->changes, KILN_CHANGE_BREAKING, "check-added", subject, "values must now lie in %s", rb);
        else if (!cb.has_range)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "check-removed", subject, "the range %s is no longer checked", ra);
        else if (cb.min <= ca.min && cb.max >= ca.max && (cb.min < ca.min || cb.max > ca.max))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "check-widened", subject, "range %s -> %s", ra, rb);
        else if (cb.min != ca.min || cb.max != ca.max)
            add_change(&d->changes, KILN_CHANGE_BREAKING, "check-narrowed", subject, "range %s -> %s", ra, rb);
    }
    if (ca.finite_only != cb.finite_only)
        add_change(&d->changes, cb.finite_only ? KILN_CHANGE_BREAKING : KILN_CHANGE_COMPATIBLE, cb.finite_only ? "check-added" : "check-removed",
                   subject, cb.finite_only ? "values must now be finite" : "values need no longer be finite");
    if (ca.category_count || cb.category_count) {
        if (!ca.category_count)
            add_change(&d->changes, KILN_CHANGE_BREAKING, "check-added", subject, "values must now be one of %u categories",
                       cb.category_count);
        else if (!cb.category_count)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "check-removed", subject, "categories are no longer checked");
        else if (!categories_within(&ca, &cb))
            add_change(&d->changes, KILN_CHANGE_BREAKING, "check-narrowed", subject, "categories %u -> %u: some are no longer accepted",
                       ca.category_count, cb.category_count);
        else if (!categories_within(&cb, &ca))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "check-widened", subject, "categories %u -> %u: every former one still accepted",
                       ca.category_count, cb.category_count);
    }
    if (strcmp(ca.unit ? ca.unit : "", cb.unit ? cb.unit : "") != 0 ||
        strcmp(ca.description ? ca.description : "", cb.description ? cb.description : "") != 0)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "check-documentation", subject, "unit or description changed");
}

static bool compare_io(diff *d)
{
    io_side in_a, in_b, out_a, out_b;
    memset(&in_a, 0, sizeof in_a);
    memset(&in_b, 0, sizeof in_b);
    memset(&out_a, 0, sizeof out_a);
    memset(&out_b, 0, sizeof out_b);
    bool *in_renamed = NULL, *out_renamed = NULL;
    bool ok = io_side_load(d->a, false, &in_a) && io_side_load(d->b, false, &in_b) &&
              io_side_load(d->a, true, &out_a) && io_side_load(d->b, true, &out_b) &&
              (in_renamed = calloc(in_a.count + 1, sizeof *in_renamed)) != NULL &&
              (out_renamed = calloc(out_a.count + 1, sizeof *out_renamed)) != NULL;
    if (ok) {
        match_sides(&in_a, &in_b, in_renamed);
        match_sides(&out_a, &out_b, out_renamed);
        char subject[300];

        /* Inputs: pair the dims first, so that renamed dims read as such. */
        shape_axes *axes_a = malloc(sizeof *axes_a), *axes_b = malloc(sizeof *axes_b);
        ok = axes_a && axes_b;
        for (uint32_t i = 0; ok && i < in_a.count; i++) {
            int64_t j = in_a.match[i];
            if (j < 0 || in_a.info[i].dtype != in_b.info[j].dtype || in_a.info[i].rank != in_b.info[j].rank)
                continue;
            shape_axes_of(d->a, false, i, axes_a);
            shape_axes_of(d->b, false, (uint32_t)j, axes_b);
            pair_axes(d, in_a.info[i].name, axes_a, axes_b);
        }
        for (uint32_t i = 0; ok && i < in_a.count; i++) {
            const kiln_io_info *x = &in_a.info[i];
            int64_t j = in_a.match[i];
            snprintf(subject, sizeof subject, "input '%s'", x->name);
            if (j < 0) {
                add_change(&d->changes, KILN_CHANGE_BREAKING, "input-removed", subject, "removed (was %s%s)", kiln_dtype_name(x->dtype),
                           in_a.shape[i]);
                continue;
            }
            const kiln_io_info *y = &in_b.info[j];
            if (in_renamed[i])
                add_change(&d->changes, KILN_CHANGE_BREAKING, "input-renamed", subject, "renamed to '%s'", y->name);
            if (x->dtype != y->dtype)
                add_change(&d->changes, KILN_CHANGE_BREAKING, "input-dtype", subject, "dtype %s -> %s", kiln_dtype_name(x->dtype),
                           kiln_dtype_name(y->dtype));
            if (x->rank != y->rank) {
                add_change(&d->changes, KILN_CHANGE_BREAKING, "input-rank", subject, "rank %u -> %u (%s -> %s)", x->rank, y->rank,
                           in_a.shape[i], in_b.shape[j]);
            } else {
                shape_axes_of(d->a, false, i, axes_a);
                shape_axes_of(d->b, false, (uint32_t)j, axes_b);
                compare_axes(d, "input", x->name, axes_a, axes_b, false);
            }
            compare_checks(d, i, (uint32_t)j, x->name);
        }
        for (uint32_t j = 0; ok && j < in_b.count; j++)
            if (in_b.match[j] < 0) {
                snprintf(subject, sizeof subject, "input '%s'", in_b.info[j].name);
                add_change(&d->changes, KILN_CHANGE_BREAKING, "input-added", subject, "added: %s%s, which consumers of A do not pass",
                           kiln_dtype_name(in_b.info[j].dtype), in_b.shape[j]);
            }
        if (ok)
            compare_ties(d);

        for (uint32_t i = 0; ok && i < out_a.count; i++) {
            const kiln_io_info *x = &out_a.info[i];
            int64_t j = out_a.match[i];
            snprintf(subject, sizeof subject, "output '%s'", x->name);
            if (j < 0) {
                add_change(&d->changes, KILN_CHANGE_BREAKING, "output-removed", subject, "removed (was %s%s)",
                           kiln_dtype_name(x->dtype), out_a.shape[i]);
                continue;
            }
            const kiln_io_info *y = &out_b.info[j];
            if (out_renamed[i])
                add_change(&d->changes, KILN_CHANGE_BREAKING, "output-renamed", subject, "renamed to '%s'", y->name);
            if (x->dtype != y->dtype)
                add_change(&d->changes, KILN_CHANGE_BREAKING, "output-dtype", subject, "dtype %s -> %s", kiln_dtype_name(x->dtype),
                           kiln_dtype_name(y->dtype));
            if (x->rank != y->rank) {
                add_change(&d->changes, KILN_CHANGE_BREAKING, "output-rank", subject, "rank %u -> %u (%s -> %s)", x->rank, y->rank,
                           out_a.shape[i], out_b.shape[j]);
            } else {
                shape_axes_of(d->a, true, i, axes_a);
                shape_axes_of(d->b, true, (uint32_t)j, axes_b);
                compare_axes(d, "output", x->name, axes_a, axes_b, true);
            }
        }
        for (uint32_t j = 0; ok && j < out_b.count; j++)
            if (out_b.match[j] < 0) {
                snprintf(subject, sizeof subject, "output '%s'", out_b.info[j].name);
                add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "output-added", subject, "added: %s%s",
                           kiln_dtype_name(out_b.info[j].dtype), out_b.shape[j]);
            }
        free(axes_a);
        free(axes_b);
    }
    free(in_renamed);
    free(out_renamed);
    io_side_free(&in_a);
    io_side_free(&in_b);
    io_side_free(&out_a);
    io_side_free(&out_b);
    return ok;
}

/* Dims no input axis paired: compare those that keep their name. */
static void compare_unpaired_dims(diff *d)
{
    for (uint32_t i = 0; i < kiln_program_dim_count(d->a); i++) {
        if (paired_b(d, i) >= 0)
            continue;
        kiln_dim_info dim;
        kiln_program_dim(d->a, i, &dim);
        int64_t j = kiln_program_find_dim(d->b, dim.name);
        if (j >= 0)
            compare_dims(d, i, (uint32_t)j);
    }
}

static void compare_derived(diff *d)
{
    const kiln_program *sides[2] = {d->a, d->b};
    char subject[300];
    for (int s = 0; s < 2; s++) {
        const kiln_program *p = sides[s], *other = sides[1 - s];
        for (uint32_t i = 0; i < kiln_program_derived_dim_count(p); i++) {
            const char *name;
            char expression[SHAPE_TEXT_SIZE], other_expression[SHAPE_TEXT_SIZE];
            kiln_program_derived_dim(p, i, &name, expression, sizeof expression);
            int64_t found = -1;
            for (uint32_t j = 0; j < kiln_program_derived_dim_count(other) && found < 0; j++) {
                const char *other_name;
                kiln_program_derived_dim(other, j, &other_name, other_expression, sizeof other_expression);
                if (strcmp(other_name, name) == 0)
                    found = j;
            }
            snprintf(subject, sizeof subject, "derived dim '%s'", name);
            /* A derived dim is a name for an expression: what it changes
             * for consumers shows in the axes compared above. */
            if (found < 0)
                add_change(&d->changes, KILN_CHANGE_COMPATIBLE, s ? "derived-dim-added" : "derived-dim-removed", subject, "%s (= %s)",
                           s ? "added" : "removed", expression);
            else if (s == 0 && strcmp(expression, other_expression) != 0)
                add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "derived-dim-changed", subject, "%s -> %s", expression,
                           other_expression);
        }
    }
}

/* --------------------------------------------------- everything else */

static void compare_metadata(diff *d)
{
    char subject[300];
    if (strcmp(kiln_program_name(d->a), kiln_program_name(d->b)) != 0)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "name-changed", "program", "name '%s' -> '%s'", kiln_program_name(d->a),
                   kiln_program_name(d->b));
    for (uint32_t i = 0; i < kiln_program_metadata_count(d->a); i++) {
        const char *key, *value;
        kiln_program_metadata(d->a, i, &key, &value);
        const char *other = kiln_program_metadata_value(d->b, key);
        snprintf(subject, sizeof subject, "metadata '%s'", key);
        if (!other)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "metadata-removed", subject, "removed (was \"%s\")", value);
        else if (strcmp(value, other) != 0)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "metadata-changed", subject, "\"%s\" -> \"%s\"", value, other);
    }
    for (uint32_t i = 0; i < kiln_program_metadata_count(d->b); i++) {
        const char *key, *value;
        kiln_program_metadata(d->b, i, &key, &value);
        snprintf(subject, sizeof subject, "metadata '%s'", key);
        if (!kiln_program_metadata_value(d->a, key))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "metadata-added", subject, "added: \"%s\"", value);
    }
}

/*
 * Node names (section NNAM) describe nodes: outside the program identity,
 * never breaking. Compared only between graphs of the same size, where
 * node n of one is node n of the other; one change sums them up.
 */
static void compare_node_names(diff *d)
{
    uint32_t nodes = kiln_program_node_count(d->a), differ = 0;
    if (nodes != kiln_program_node_count(d->b))
        return;
    for (uint32_t n = 0; n < nodes; n++) {
        const char *x = kiln_program_node_name(d->a, n), *y = kiln_program_node_name(d->b, n);
        differ += (x == NULL) != (y == NULL) || (x && y && strcmp(x, y) != 0);
    }
    if (differ)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "node-names-changed", "node names",
                   "%u of %u node%s named differently (names are metadata, outside the program identity)", differ,
                   nodes, nodes == 1 ? "" : "s");
}

static bool op_used(const kiln_program *p, const kiln_op_use *use)
{
    for (uint32_t i = 0; i < kiln_program_op_use_count(p); i++) {
        kiln_op_use u;
        kiln_program_op_use(p, i, &u);
        if (u.version == use->version && strcmp(u.name, use->name) == 0)
            return true;
    }
    return false;
}

static void compare_ops(diff *d)
{
    char subject[300];
    for (uint32_t j = 0; j < kiln_program_op_use_count(d->b); j++) {
        kiln_op_use ub;
        kiln_program_op_use(d->b, j, &ub);
        snprintf(subject, sizeof subject, "op %s v%u", ub.name, ub.version);
        if (!op_used(d->a, &ub))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "op-added", subject,
                       "now used by %u node%s (this runtime implements it)", ub.nodes, ub.nodes == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < kiln_program_op_use_count(d->a); i++) {
        kiln_op_use ua;
        kiln_program_op_use(d->a, i, &ua);
        snprintf(subject, sizeof subject, "op %s v%u", ua.name, ua.version);
        if (!op_used(d->b, &ua))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "op-removed", subject, "no longer used");
    }
}

static bool same_rule(const kiln_compare_rule *x, const kiln_compare_rule *y)
{
    return x->kind == y->kind && x->nan_equal == y->nan_equal &&
           (x->kind == KILN_COMPARE_EXACT || (x->atol == y->atol && x->rtol == y->rtol));
}

static int64_t find_case(const kiln_program *p, const char *name)
{
    for (uint32_t c = 0; c < kiln_program_evidence_count(p); c++)
        if (strcmp(kiln_program_evidence_name(p, c), name) == 0)
            return c;
    return -1;
}

static bool same_case(const kiln_program *a, uint32_t ca, const kiln_program *b, uint32_t cb)
{
    uint32_t n = kiln_program_evidence_output_count(a, ca);
    if (n != kiln_program_evidence_output_count(b, cb))
        return false;
    for (uint32_t o = 0; o < n; o++) {
        const char *na, *nb;
        kiln_compare_rule ra, rb;
        kiln_program_evidence_output(a, ca, o, &na, &ra);
        kiln_program_evidence_output(b, cb, o, &nb, &rb);
        if (strcmp(na, nb) != 0 || !same_rule(&ra, &rb))
            return false;
    }
    return true;
}

static void compare_evidence(diff *d, const kiln_artifact *va, const kiln_artifact *vb)
{
    char subject[300];
    bool described_change = false;
    for (uint32_t c = 0; c < kiln_program_evidence_count(d->a); c++) {
        const char *name = kiln_program_evidence_name(d->a, c);
        int64_t other = find_case(d->b, name);
        snprintf(subject, sizeof subject, "evidence '%s'", name);
        if (other < 0) {
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "evidence-removed", subject, "removed");
            described_change = true;
        } else if (!same_case(d->a, c, d->b, (uint32_t)other)) {
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "evidence-changed", subject, "expected outputs or rules changed");
            described_change = true;
        }
    }
    for (uint32_t c = 0; c < kiln_program_evidence_count(d->b); c++) {
        const char *name = kiln_program_evidence_name(d->b, c);
        snprintf(subject, sizeof subject, "evidence '%s'", name);
        if (find_case(d->a, name) < 0) {
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "evidence-added", subject, "added");
            described_change = true;
        }
    }
    /* Same cases by name and rule, but other bytes: the tensors changed (the first method's
     * section; further methods' evidence is part of MTHD, whose other changes show elsewhere). */
    if (!va || !vb)
        return;
    int64_t ea = kiln_artifact_find_section(va, "EVID"), eb = kiln_artifact_find_section(vb, "EVID");
    if (!described_change && ea >= 0 && eb >= 0) {
        kiln_section_info sa, sb;
        kiln_artifact_section(va, (uint32_t)ea, &sa);
        kiln_artifact_section(vb, (uint32_t)eb, &sb);
        if (sa.crc32 != sb.crc32 || sa.raw_size != sb.raw_size)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "evidence-changed", "evidence", "the stored inputs or expected values changed");
    }
}

/* Weight names, sorted, for lookups in O(log n): tables hold up to 65536. */
typedef struct named_index {
    const char *name;
    uint32_t index;
} named_index;

static int compare_named(const void *x, const void *y)
{
    return strcmp(((const named_index *)x)->name, ((const named_index *)y)->name);
}

static named_index *weights_by_name(const kiln_program *p)
{
    uint32_t count = kiln_program_weight_count(p);
    named_index *sorted = malloc((count ? count : 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        kiln_weight_info w;
        kiln_program_weight(p, i, &w);
        sorted[i] = (named_index){w.name, i};
    }
    qsort(sorted, count, sizeof *sorted, compare_named);
    return sorted;
}

/* @return the index of weight `name` in the table `sorted` describes, or -1. */
static int64_t find_weight(const named_index *sorted, uint32_t count, const char *name)
{
    named_index key = {name, 0};
    const named_index *found = bsearch(&key, sorted, count, sizeof *sorted, compare_named);
    return found ? (int64_t)found->index : -1;
}

/* Weights added, removed or reshaped, each side in table order. */
static void compare_weights_table(diff *d)
{
    char subject[300];
    uint32_t count_a = kiln_program_weight_count(d->a), count_b = kiln_program_weight_count(d->b);
    named_index *sorted_a = weights_by_name(d->a), *sorted_b = weights_by_name(d->b);
    if (!sorted_a || !sorted_b) {
        d->failed = true;
        free(sorted_a);
        free(sorted_b);
        return;
    }
    for (uint32_t i = 0; i < count_a; i++) {
        kiln_weight_info wa, wb;
        kiln_program_weight(d->a, i, &wa);
        int64_t j = find_weight(sorted_b, count_b, wa.name);
        snprintf(subject, sizeof subject, "weight '%s'", wa.name);
        if (j < 0) {
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "weight-removed", subject, "removed");
            continue;
        }
        kiln_program_weight(d->b, (uint32_t)j, &wb);
        bool same = wa.dtype == wb.dtype && wa.rank == wb.rank && wa.kind == wb.kind;
        for (uint32_t k = 0; same && k < wa.rank; k++)
            same = wa.shape[k] == wb.shape[k];
        if (!same)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "weight-changed", subject,
                       "kind, dtype or shape changed (%llu -> %llu bytes)", (unsigned long long)wa.byte_size,
                       (unsigned long long)wb.byte_size);
    }
    for (uint32_t j = 0; j < count_b; j++) {
        kiln_weight_info wb;
        kiln_program_weight(d->b, j, &wb);
        snprintf(subject, sizeof subject, "weight '%s'", wb.name);
        if (find_weight(sorted_a, count_a, wb.name) < 0)
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "weight-added", subject, "added (%llu bytes)",
                       (unsigned long long)wb.byte_size);
    }
    free(sorted_a);
    free(sorted_b);
}

/* ---------------------------------------------------------- identities */

static void collect_identities(const kiln_artifact *va, const kiln_artifact *vb, kiln_identity_pair out[3])
{
    static const char *const names[] = {"artifact", "program", "state"};
    static const kiln_identity kinds[] = {KILN_IDENTITY_ARTIFACT, KILN_IDENTITY_PROGRAM, KILN_IDENTITY_STATE};
    for (int i = 0; i < 3; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].name = names[i];
        if (i == 0) {
            kiln_artifact_digest(va, out[i].a);
            kiln_artifact_digest(vb, out[i].b);
            out[i].known_a = out[i].known_b = true;
        } else {
            if (kiln_artifact_program(va)) {
                kiln_program_identity(kiln_artifact_program(va), kinds[i], out[i].a);
                out[i].known_a = true;
            }
            if (kiln_artifact_program(vb)) {
                kiln_program_identity(kiln_artifact_program(vb), kinds[i], out[i].b);
                out[i].known_b = true;
            }
        }
    }
}

bool kiln_identity_pair_equal(const kiln_identity_pair *p)
{
    return p->known_a && p->known_b && memcmp(p->a, p->b, 32) == 0;
}

static const char *verdict(const kiln_identity_pair ids[3], bool same_signature)
{
    if (kiln_identity_pair_equal(&ids[0]))
        return same_signature ? "identical artifacts" : "identical but for the signature";
    if (!(ids[1].known_a && ids[1].known_b))
        return "not comparable: a program cannot be decoded here";
    bool program = kiln_identity_pair_equal(&ids[1]), state = kiln_identity_pair_equal(&ids[2]);
    if (program && state)
        return "same program and weights";
    if (program)
        return "same program, new weights";
    if (state)
        return "different program, same weight bytes";
    return "different program and weights";
}

static void compare_identities(diff *d, const kiln_identity_pair ids[3])
{
    if (!(ids[1].known_a && ids[1].known_b) || kiln_identity_pair_equal(&ids[0]))
        return;
    bool program = kiln_identity_pair_equal(&ids[1]), state = kiln_identity_pair_equal(&ids[2]);
    if (program && !state)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "weights-changed", "weights",
                   "same program, new weights: the state identity changed, the program identity did not");
    if (!program)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "program-changed", "program",
                   "the program identity changed (ops, graph, weights table or contract; "
                   "interface changes are listed separately)");
}

static void compare_signature(diff *d, const kiln_artifact *va, const kiln_artifact *vb)
{
    kiln_signature_info sa, sb;
    kiln_artifact_signature(va, &sa);
    kiln_artifact_signature(vb, &sb);
    bool signed_a = sa.state != KILN_SIGNATURE_NONE, signed_b = sb.state != KILN_SIGNATURE_NONE;
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, sb.key_id, sizeof sb.key_id);
    if (signed_a && !signed_b)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "signature-changed", "signature", "B is unsigned (A was signed)");
    else if (!signed_a && signed_b)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "signature-changed", "signature", "B is signed by key %s (A was unsigned)", hex);
    else if (signed_a && memcmp(sa.key_id, sb.key_id, sizeof sa.key_id) != 0)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "signature-changed", "signature", "B is signed by another key, %s", hex);
}

static void compare_format(diff *d, const kiln_artifact *va, const kiln_artifact *vb)
{
    uint16_t ma, na, mb, nb;
    kiln_artifact_format_version(va, &ma, &na);
    kiln_artifact_format_version(vb, &mb, &nb);
    if (ma != mb || na != nb)
        add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "format-changed", "format", "format %u.%u -> %u.%u", ma, na, mb, nb);
}

/* B cannot run here: each reason is breaking for a consumer on this runtime. */
static void note_unrunnable(diff *d, const kiln_artifact *view, const char *which)
{
    char subject[64];
    snprintf(subject, sizeof subject, "%s", which);
    for (uint32_t i = 0; kiln_artifact_report(view) && i < kiln_report_count(kiln_artifact_report(view)); i++) {
        kiln_problem_info p;
        kiln_report_problem(kiln_artifact_report(view), i, &p);
        if (p.severity == KILN_SEVERITY_ERROR)
            add_change(&d->changes, KILN_CHANGE_BREAKING, p.code, subject, "cannot run here: %s%s%s", p.location,
                       p.location[0] ? ": " : "", p.message);
    }
}

/* ------------------------------------------------------------ running */

/* The method of `p`'s artifact called `name`, or NULL. */
static const kiln_program *method_named(const kiln_program *p, const char *name)
{
    for (uint32_t m = 0; m < kiln_program_method_count(p); m++)
        if (strcmp(kiln_program_method_name(kiln_program_method_at(p, m)), name) == 0)
            return kiln_program_method_at(p, m);
    return NULL;
}

/* What one method's consumers see: its signature, dims, ops, node names and evidence. */
static bool compare_method(diff *d, const kiln_artifact *va, const kiln_artifact *vb)
{
    free(d->pairs);
    free(d->uses);
    d->pairs = NULL;
    d->uses = NULL;
    d->pair_count = d->use_count = 0;
    bool ok = compare_io(d);
    compare_unpaired_dims(d);
    compare_derived(d);
    compare_ops(d);
    compare_node_names(d);
    compare_evidence(d, va, vb);
    return ok;
}

/*
 * Each method of A against B's method of the same name (named in the
 * subjects when either artifact has several); a method A has and B lacks
 * is breaking for its callers, one B adds is not.
 */
static bool compare_methods(diff *d, const kiln_artifact *va, const kiln_artifact *vb, const char *only)
{
    const kiln_program *a = kiln_artifact_program(va), *b = kiln_artifact_program(vb);
    bool several = kiln_program_method_count(a) > 1 || kiln_program_method_count(b) > 1, ok = true;
    for (uint32_t m = 0; ok && m < kiln_program_method_count(a); m++) {
        const kiln_program *ma = kiln_program_method_at(a, m);
        const char *name = kiln_program_method_name(ma);
        if (only && strcmp(name, only) != 0)
            continue;
        const kiln_program *mb = method_named(b, name);
        char subject[300];
        snprintf(subject, sizeof subject, "method '%s'", name);
        if (!mb) {
            add_change(&d->changes, KILN_CHANGE_BREAKING, "method-removed", subject,
                       "B has no method '%s': its callers fail", name);
            continue;
        }
        d->a = ma;
        d->b = mb;
        d->changes.method = several ? name : NULL;
        /* The first methods' EVID sections are compared byte for byte too. */
        ok = compare_method(d, m == 0 && mb == b ? va : NULL, m == 0 && mb == b ? vb : NULL);
        d->changes.method = NULL;
    }
    for (uint32_t m = 0; !only && m < kiln_program_method_count(b); m++) {
        const char *name = kiln_program_method_name(kiln_program_method_at(b, m));
        char subject[300];
        snprintf(subject, sizeof subject, "method '%s'", name);
        if (!method_named(a, name))
            add_change(&d->changes, KILN_CHANGE_COMPATIBLE, "method-added", subject, "added in B");
    }
    return ok;
}

bool kiln_interface_diff_run(const kiln_artifact *va, const kiln_artifact *vb, const char *only, interface_diff *out)
{
    diff d;
    memset(&d, 0, sizeof d);
    memset(out, 0, sizeof *out);
    d.a = kiln_artifact_program(va);
    d.b = kiln_artifact_program(vb);
    collect_identities(va, vb, out->identities);
    const kiln_identity_pair *ids = out->identities;
    out->compared = kiln_artifact_program(va) && kiln_artifact_program(vb);
    bool ok = true;
    compare_format(&d, va, vb);
    if (!kiln_artifact_program(vb))
        note_unrunnable(&d, vb, "B");
    if (out->compared) {
        compare_identities(&d, ids);
        ok = compare_methods(&d, va, vb, only);
        d.a = kiln_artifact_program(va);
        d.b = kiln_artifact_program(vb);
        compare_metadata(&d);
        if (!kiln_identity_pair_equal(&ids[1]))
            compare_weights_table(&d);
    }
    size_t before = d.changes.count;
    compare_signature(&d, va, vb);
    out->verdict = verdict(ids, d.changes.count == before);
    out->changes = d.changes;
    free(d.pairs);
    free(d.uses);
    if (!ok || d.failed || d.changes.failed) {
        kiln_interface_diff_release(out);
        return false;
    }
    return true;
}

void kiln_interface_diff_release(interface_diff *result)
{
    free_changes(&result->changes);
    memset(result, 0, sizeof *result);
}

bool kiln_interface_diff_breaking(const interface_diff *result)
{
    return !result->compared || change_count(&result->changes, KILN_CHANGE_BREAKING) > 0;
}
