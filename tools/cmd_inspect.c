/*
 * cmd_inspect.c — `kiln inspect FILE [--json] [--quiet]`: what an artifact
 * is, what it accepts and what it needs, for people (tables) and for
 * programs (--json, schema in spec/inspect-json.md).
 *
 * An artifact this runtime cannot run (ops it lacks, a newer minor with an
 * unknown critical section or feature bit, training mode) is still shown as
 * far as its container goes, with the reasons under "cannot run here:".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "arena_report.h"
#include "artifact_view.h"
#include "cli.h"
#include "options.h"
#include "json.h"
#include "load_args.h"
#include "sample_inputs.h"
#include "table.h"
#include "term.h"

static int cmd_inspect(int argc, char **argv);

const cli_verb cli_verb_inspect = {
    "inspect",
    "show identities, signature, contract, ops, weights, memory plan and sections",
    "usage: kiln inspect FILE [--json] [--quiet] [--method NAME] [--verify full|lazy|none]\n\n"
    "Verify FILE (completely unless --verify says otherwise), then show what it is: program name, format version,\n"
    "producer and mode; its artifact, program and state identities; the\n"
    "signature state; metadata; inputs and outputs with dtype and shape; dims\n"
    "with range, multiple_of and derived expressions; semantic input checks;\n"
    "ops with versions and node counts; weights (total, largest five,\n"
    "compression); the memory plan at the domain's upper bound; evidence cases;\n"
    "and every section. An artifact with several methods (entry points) lists\n"
    "them, then shows each method's contract, ops, memory plan and evidence\n"
    "(only NAME's with --method).\n"
    "An artifact this runtime cannot run is shown as far as\n"
    "its container goes, with the reasons under \"cannot run here:\".\n"
    "Exit 0 when the artifact could be read (even if it cannot run here), 1 when\n"
    "it could not (missing, damaged, another format major).\n\n"
    "options:\n"
    "  --json       print one JSON object (schema: spec/inspect-json.md)\n"
    "  -q, --quiet  print only the header line\n"
    LOAD_ARGS_METHOD_USAGE
    LOAD_ARGS_USAGE,
    cmd_inspect,
};

#define SHAPE_TEXT_SIZE 1100
#define LARGEST_WEIGHTS 5

/* ------------------------------------------------------------ shared facts */

/* The weight data section's sizes: what compression saved. */
typedef struct weight_storage {
    uint64_t stored;
    uint64_t raw;
    bool compressed;
} weight_storage;

static weight_storage weight_storage_of(const artifact_view *view)
{
    weight_storage w = {0, 0, false};
    int64_t index = kiln_artifact_find_section(view->artifact, "WDAT");
    if (index >= 0) {
        kiln_section_info s;
        kiln_artifact_section(view->artifact, (uint32_t)index, &s);
        w.stored = s.stored_size;
        w.raw = s.raw_size;
        w.compressed = s.compressed;
    }
    return w;
}

static double compression_ratio(weight_storage w)
{
    return w.stored ? (double)w.raw / (double)w.stored : 1.0;
}

/* A weight's size and table index, for ordering by size. */
typedef struct sized_weight {
    uint64_t bytes;
    uint32_t index;
} sized_weight;

/* Largest first; ties in table order, so the order is deterministic. */
static int compare_sized(const void *x, const void *y)
{
    const sized_weight *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Weight indices, largest first (ties in table order). Free the result. */
static uint32_t *weights_by_size(const kiln_program *program)
{
    uint32_t count = kiln_program_weight_count(program);
    sized_weight *sized = malloc((count ? count : 1) * sizeof *sized);
    uint32_t *order = malloc((count ? count : 1) * sizeof *order);
    if (!sized || !order) {
        free(sized);
        free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        kiln_weight_info w;
        kiln_program_weight(program, i, &w);
        sized[i] = (sized_weight){w.byte_size, i};
    }
    qsort(sized, count, sizeof *sized, compare_sized);
    for (uint32_t i = 0; i < count; i++)
        order[i] = sized[i].index;
    free(sized);
    return order;
}

static uint64_t total_weight_bytes(const kiln_program *program)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < kiln_program_weight_count(program); i++) {
        kiln_weight_info w;
        kiln_program_weight(program, i, &w);
        total += w.byte_size;
    }
    return total;
}

static void weight_shape_text(const kiln_weight_info *w, char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "[");
    for (uint32_t a = 0; a < w->rank && used < size; a++)
        used += (size_t)snprintf(out + used, size - used, "%s%lld", a ? ", " : "", (long long)w->shape[a]);
    if (used < size)
        snprintf(out + used, size - used, "]");
}

static uint32_t semantic_check_count(const kiln_program *program)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < kiln_program_input_count(program); i++) {
        kiln_input_check check;
        kiln_input_check_default(&check);
        count += kiln_program_input_check(program, i, &check);
    }
    return count;
}

/* ------------------------------------------------------------ human output */

/* "16384 bytes (16.0 KiB)"; the unit only from 10 KiB on, where it helps. */
static void format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 10240) {
        snprintf(out, size, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    double value = (double)bytes / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
        value /= 1024.0;
        unit++;
    }
    snprintf(out, size, "%llu bytes (%.1f %s)", (unsigned long long)bytes, value, units[unit]);
}

static void heading(const term_style *st, const char *text)
{
    printf("\n%s%s%s\n", st->bold, text, st->reset);
}

static void headingf(const term_style *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void headingf(const term_style *st, const char *fmt, ...)
{
    char text[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    heading(st, text);
}

/* Print and free a table; false if it ran out of memory. */
static bool emit(table *t, const term_style *st, bool header)
{
    bool ok = !t->failed;
    if (ok)
        table_print(t, stdout, "  ", st, header);
    table_free(t);
    return ok;
}

static void print_header_line(const artifact_view *view, const term_style *st)
{
    uint16_t major, minor;
    kiln_artifact_format_version(view->artifact, &major, &minor);
    if (!view->program) {
        printf("%s", st->bold);
        term_plain(stdout, view->path);
        printf("%s: format %u.%u, %scannot run here%s\n", st->reset, major, minor, st->red, st->reset);
        return;
    }
    const kiln_program *p = view->program;
    const char *producer = kiln_program_metadata_value(p, "producer");
    printf("%s", st->bold);
    term_plain(stdout, kiln_program_name(p));
    printf("%s: format %u.%u, %s%s", st->reset, major, minor,
           kiln_program_mode(p) == KILN_MODE_INFERENCE ? "inference" : "training",
           kiln_program_is_strict(p) ? "" : ", non-strict");
    if (producer) {
        printf(", producer ");
        term_quoted(stdout, producer);
    }
    printf("\n");
}

static void print_overview(const artifact_view *view, const term_style *st)
{
    uint8_t digest[32];
    char hex[33], size[64];
    kiln_signature_info signature;
    format_bytes(kiln_artifact_file_size(view->artifact), size, sizeof size);
    printf("file        ");
    term_plain(stdout, view->path);
    printf(", %s\n", size);
    kiln_artifact_digest(view->artifact, digest);
    identity_short(digest, hex);
    printf("identities  artifact %s", hex);
    if (view->program) {
        kiln_program_identity(view->program, KILN_IDENTITY_PROGRAM, digest);
        identity_short(digest, hex);
        printf("  program %s", hex);
        kiln_program_identity(view->program, KILN_IDENTITY_STATE, digest);
        identity_short(digest, hex);
        printf("  state %s", hex);
    } else {
        printf("  (program and state: not decoded here)");
    }
    printf("\n");
    kiln_artifact_signature(view->artifact, &signature);
    cli_hex(signature.key_id, sizeof signature.key_id, hex);
    switch (signature.state) {
    case KILN_SIGNATURE_NONE: printf("signature   unsigned\n"); break;
    case KILN_SIGNATURE_VERIFIED: printf("signature   %sverified%s, key %s\n", st->green, st->reset, hex); break;
    case KILN_SIGNATURE_UNVERIFIED:
        printf("signature   signed by key %s (not checked: kiln verify --trust KEY.pub)\n", hex);
        break;
    }
}

/* Problems of the report, errors under "cannot run here:", warnings under "notes:". */
static void print_problems(const artifact_view *view, const term_style *st)
{
    uint32_t count = view->report ? kiln_report_count(view->report) : 0;
    for (int pass = 0; pass < 2; pass++) {
        kiln_severity wanted = pass == 0 ? KILN_SEVERITY_ERROR : KILN_SEVERITY_WARNING;
        table t;
        table_init(&t, "ll");
        for (uint32_t i = 0; i < count; i++) {
            kiln_problem_info p;
            kiln_report_problem(view->report, i, &p);
            if (p.severity != wanted)
                continue;
            table_add(&t, p.code);
            table_addf(&t, "%s%s%s", p.location, p.location[0] ? ": " : "", p.message);
        }
        if (table_rows(&t)) {
            if (pass == 0)
                printf("\n%s%scannot run here:%s\n", st->bold, st->red, st->reset);
            else
                printf("\n%s%snotes:%s\n", st->bold, st->yellow, st->reset);
        }
        emit(&t, st, false);
    }
}

static void print_metadata(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_metadata_count(p);
    if (!count) {
        heading(st, "metadata: none");
        return;
    }
    headingf(st, "metadata (%u)", count);
    for (uint32_t i = 0; i < count; i++) {
        const char *key, *value;
        kiln_program_metadata(p, i, &key, &value);
        printf("  ");
        term_plain(stdout, key);
        printf(" = ");
        term_quoted(stdout, value);
        printf("\n");
    }
}

static void print_io(const kiln_program *p, const term_style *st)
{
    char shape[SHAPE_TEXT_SIZE];
    for (int outputs = 0; outputs < 2; outputs++) {
        uint32_t count = outputs ? kiln_program_output_count(p) : kiln_program_input_count(p);
        table t;
        table_init(&t, "lll");
        table_add(&t, "name");
        table_add(&t, "dtype");
        table_add(&t, "shape");
        for (uint32_t i = 0; i < count; i++) {
            kiln_io_info io;
            if (outputs) {
                kiln_program_output(p, i, &io);
                kiln_program_output_shape_text(p, i, shape, sizeof shape);
            } else {
                kiln_program_input(p, i, &io);
                kiln_program_input_shape_text(p, i, shape, sizeof shape);
            }
            table_add(&t, io.name);
            table_add(&t, kiln_dtype_name(io.dtype));
            table_add(&t, shape);
        }
        headingf(st, "%s (%u)", outputs ? "outputs" : "inputs", count);
        emit(&t, st, true);
    }
}

static void print_dims(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_dim_count(p), derived = kiln_program_derived_dim_count(p);
    if (!count) {
        heading(st, "dims: none (every shape is static)");
    } else {
        table t;
        table_init(&t, "lll");
        table_add(&t, "name");
        table_add(&t, "range");
        table_add(&t, "multiple_of");
        for (uint32_t i = 0; i < count; i++) {
            kiln_dim_info d;
            kiln_program_dim(p, i, &d);
            table_add(&t, d.name);
            table_addf(&t, "%lld..%lld", (long long)d.min, (long long)d.max);
            if (d.multiple_of > 1)
                table_addf(&t, "%lld", (long long)d.multiple_of);
            else
                table_add(&t, "-");
        }
        headingf(st, "dims (%u)", count);
        emit(&t, st, true);
    }
    if (!derived)
        return;
    table t;
    table_init(&t, "ll");
    table_add(&t, "derived");
    table_add(&t, "expression");
    for (uint32_t i = 0; i < derived; i++) {
        const char *name;
        char expression[SHAPE_TEXT_SIZE];
        kiln_program_derived_dim(p, i, &name, expression, sizeof expression);
        table_add(&t, name);
        table_add(&t, expression);
    }
    headingf(st, "derived dims (%u)", derived);
    emit(&t, st, true);
}

/* The relations a method declares across its dims (format 1.3). */
static void print_relations(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_relation_count(p);
    if (!count)
        return;
    headingf(st, "relations (%u, checked before every run)", count);
    for (uint32_t i = 0; i < count; i++) {
        char text[SHAPE_TEXT_SIZE * 2 + 8];
        kiln_error err;
        if (kiln_program_relation(p, i, text, sizeof text, &err) != KILN_OK)
            snprintf(text, sizeof text, "(%s)", err.message);
        printf("  %s\n", text);
    }
}

/* The program's state tensors, kept between runs (format 1.3): shared by every method. */
static void print_states(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_state_count(p);
    if (!count)
        return;
    table t;
    table_init(&t, "lllll");
    table_add(&t, "name");
    table_add(&t, "dtype");
    table_add(&t, "capacity");
    table_add(&t, "grows");
    table_add(&t, "length");
    for (uint32_t i = 0; i < count; i++) {
        const char *name, *length_dim;
        kiln_dtype dtype;
        uint32_t rank, axis;
        const int64_t *shape;
        kiln_error err;
        if (kiln_program_state_at(p, i, &name, &dtype, &rank, &shape, &axis, &length_dim, &err) != KILN_OK)
            continue;
        char text[SHAPE_TEXT_SIZE] = "[";
        for (uint32_t a = 0; a < rank; a++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%lld", a ? ", " : "", (long long)shape[a]);
        snprintf(text + strlen(text), sizeof text - strlen(text), "]");
        table_add(&t, name);
        table_add(&t, kiln_dtype_name(dtype));
        table_add(&t, text);
        table_addf(&t, "axis %u", axis);
        table_add(&t, length_dim);
    }
    headingf(st, "states (%u, kept between runs)", count);
    emit(&t, st, true);
}

/* Non-strict programs only: the preconditions checked before every run. */
static void print_runtime_guards(const kiln_program *p, const term_style *st)
{
    if (kiln_program_is_strict(p))
        return;
    uint32_t count = kiln_program_runtime_guard_count(p);
    if (!count) {
        heading(st, "runtime guards: none (non-strict, but every precondition was proven)");
        return;
    }
    /* A column of node names only when some guarded node has one (an import). */
    bool named = false;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node;
        kiln_program_runtime_guard(p, i, &node);
        named = named || kiln_program_node_name(p, node);
    }
    table t;
    table_init(&t, named ? "rlll" : "rll");
    table_add(&t, "node");
    table_add(&t, "op");
    if (named)
        table_add(&t, "name");
    table_add(&t, "checked before every run");
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node;
        const char *text = kiln_program_runtime_guard(p, i, &node);
        const char *name = kiln_program_node_name(p, node);
        kiln_node_info info;
        kiln_program_node(p, node, &info);
        table_addf(&t, "%u", node);
        table_add(&t, info.op);
        if (named)
            table_add(&t, name ? name : "-");
        table_add(&t, text);
    }
    headingf(st, "runtime guards (%u, non-strict: not proven when built)", count);
    emit(&t, st, true);
}

/* "in -1..1, finite, one of {0, 1, 2}" */
static void check_rule_text(const kiln_input_check *c, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    if (c->has_range && used < size)
        used += (size_t)snprintf(out + used, size - used, "in %.17g..%.17g", c->min, c->max);
    if (c->finite_only && used < size)
        used += (size_t)snprintf(out + used, size - used, "%sfinite", used ? ", " : "");
    if (c->category_count && used < size) {
        used += (size_t)snprintf(out + used, size - used, "%sone of {", used ? ", " : "");
        for (uint32_t k = 0; k < c->category_count && used < size; k++)
            used += (size_t)snprintf(out + used, size - used, "%s%lld", k ? ", " : "", (long long)c->categories[k]);
        if (used < size)
            used += (size_t)snprintf(out + used, size - used, "}");
    }
    if (!used)
        snprintf(out, size, "-");
}

static void print_semantic_checks(const kiln_program *p, const term_style *st)
{
    uint32_t count = semantic_check_count(p);
    if (!count) {
        heading(st, "semantic checks: none");
        return;
    }
    table t;
    table_init(&t, "llll");
    table_add(&t, "input");
    table_add(&t, "rule");
    table_add(&t, "unit");
    table_add(&t, "description");
    for (uint32_t i = 0; i < kiln_program_input_count(p); i++) {
        kiln_input_check c;
        kiln_io_info io;
        char rule[512];
        kiln_input_check_default(&c);
        if (!kiln_program_input_check(p, i, &c))
            continue;
        kiln_program_input(p, i, &io);
        check_rule_text(&c, rule, sizeof rule);
        table_add(&t, io.name);
        table_add(&t, rule);
        table_add(&t, c.unit && c.unit[0] ? c.unit : "-");
        table_add(&t, c.description && c.description[0] ? c.description : "-");
    }
    headingf(st, "semantic checks (%u)", count);
    emit(&t, st, true);
}

/* Nodes with a name (section NNAM: kept from the source framework). */
static uint32_t named_node_count(const kiln_program *p)
{
    uint32_t named = 0;
    for (uint32_t n = 0; n < kiln_program_node_count(p); n++)
        named += kiln_program_node_name(p, n) != NULL;
    return named;
}

static bool print_ops(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_op_use_count(p);
    uint32_t nodes = kiln_program_node_count(p);
    table t;
    table_init(&t, "lrr");
    table_add(&t, "op");
    table_add(&t, "version");
    table_add(&t, "nodes");
    for (uint32_t i = 0; i < count; i++) {
        kiln_op_use use;
        kiln_program_op_use(p, i, &use);
        table_add(&t, use.name);
        table_addf(&t, "%u", use.version);
        table_addf(&t, "%u", use.nodes);
    }
    uint32_t named = named_node_count(p);
    if (named)
        headingf(st, "ops (%u distinct, %u node%s, %u named)", count, nodes, nodes == 1 ? "" : "s", named);
    else
        headingf(st, "ops (%u distinct, %u node%s)", count, nodes, nodes == 1 ? "" : "s");
    return emit(&t, st, true);
}

static bool print_weights(const artifact_view *view, const term_style *st)
{
    const kiln_program *p = view->program;
    uint32_t count = kiln_program_weight_count(p);
    char total[64], stored[64], raw[64];
    weight_storage storage = weight_storage_of(view);
    format_bytes(total_weight_bytes(p), total, sizeof total);
    if (!count) {
        heading(st, "weights: none");
        return true;
    }
    headingf(st, "weights: %u tensor%s, %s", count, count == 1 ? "" : "s", total);
    format_bytes(storage.stored, stored, sizeof stored);
    format_bytes(storage.raw, raw, sizeof raw);
    /* The section is larger than the tensors: each starts 64-byte aligned (format.md §7.5). */
    if (storage.compressed)
        printf("  stored zlib-compressed: %s for %s raw (the tensors 64-byte aligned), ratio %.2f\n", stored, raw,
               compression_ratio(storage));
    else
        printf("  stored uncompressed: %s (the tensors 64-byte aligned)\n", raw);
    uint32_t *order = weights_by_size(p);
    if (!order)
        return false;
    table t;
    table_init(&t, "llllr");
    table_add(&t, count > LARGEST_WEIGHTS ? "largest" : "name");
    table_add(&t, "kind");
    table_add(&t, "dtype");
    table_add(&t, "shape");
    table_add(&t, "bytes");
    for (uint32_t i = 0; i < count && i < LARGEST_WEIGHTS; i++) {
        kiln_weight_info w;
        char shape[256];
        kiln_program_weight(p, order[i], &w);
        weight_shape_text(&w, shape, sizeof shape);
        table_add(&t, w.name);
        table_add(&t, weight_kind_name(w.kind));
        table_add(&t, kiln_dtype_name(w.dtype));
        table_add(&t, shape);
        table_addf(&t, "%llu", (unsigned long long)w.byte_size);
    }
    free(order);
    bool ok = emit(&t, st, true);
    if (count > LARGEST_WEIGHTS)
        printf("  ... and %u more\n", count - LARGEST_WEIGHTS);
    return ok;
}

/* "8.1 GiB", or "over 2^64 bytes" for a size that overflows. */
static void arena_text(uint64_t bytes, char *out, size_t size)
{
    if (bytes == UINT64_MAX)
        snprintf(out, size, "over 2^64 bytes");
    else
        kiln_format_bytes(bytes, out, size);
}

/* Per dim, the arena with that dim at its first, middle and last value, the others at their largest. */
static bool print_arena_growth(const kiln_program *p, const term_style *st)
{
    table t;
    table_init(&t, "llrrrl");
    table_add(&t, "dim");
    table_add(&t, "range");
    table_add(&t, "at min");
    table_add(&t, "at mid");
    table_add(&t, "at max");
    table_add(&t, "grows as");
    for (uint32_t d = 0; d < kiln_program_dim_count(p); d++) {
        arena_growth g;
        if (!arena_growth_of(p, d, &g)) {
            table_free(&t);
            return false;
        }
        table_add(&t, g.dim.name);
        table_addf(&t, "%lld..%lld", (long long)g.dim.min, (long long)g.dim.max);
        for (int k = 0; k < 3; k++) {
            char amount[32];
            arena_text(g.bytes[k], amount, sizeof amount);
            table_addf(&t, "%s=%lld: %s", g.dim.name, (long long)g.at[k], amount);
        }
        if (isnan(g.degree))
            table_add(&t, "-");
        else if (fabs(g.degree) < 0.05)
            table_add(&t, "constant");
        else
            table_addf(&t, "~%s^%.1f", g.dim.name, g.degree);
    }
    printf("  how it grows: each dim from its smallest to its largest value, the others at their largest\n");
    return emit(&t, st, true);
}

static bool print_memory_plan(const kiln_program *p, const term_style *st)
{
    char arena[64], sum[64], where[256], message[KILN_ERROR_MESSAGE_SIZE];
    uint64_t arena_bytes = kiln_program_arena_bytes(p), intermediate_bytes = kiln_program_intermediate_bytes(p);
    uint32_t nodes = kiln_program_node_count(p);
    arena_upper_bound_text(p, where, sizeof where);
    heading(st, kiln_program_memory_plan_stored(p) ? "memory plan (at the domain's upper bound, stored in the artifact)"
                                                   : "memory plan (at the domain's upper bound)");
    printf("  upper bound    %s\n", where);
    if (arena_bytes == UINT64_MAX) {
        printf("  arena          over 2^64 bytes: every session must narrow a dim\n");
    } else {
        format_bytes(arena_bytes, arena, sizeof arena);
        format_bytes(intermediate_bytes, sum, sizeof sum);
        if (intermediate_bytes)
            printf("  arena          %s (%.2f of the intermediates)\n", arena,
                   (double)arena_bytes / (double)intermediate_bytes);
        else
            printf("  arena          %s\n", arena);
        printf("  intermediates  %s in %u result%s", sum, nodes, nodes == 1 ? "" : "s");
        if (arena_bytes < intermediate_bytes)
            printf(" (sharing saves %llu bytes)", (unsigned long long)(intermediate_bytes - arena_bytes));
        printf("\n");
    }
    kiln_limits limits;
    kiln_limits_default(&limits);
    char limit[32];
    kiln_format_bytes(limits.max_arena_bytes, limit, sizeof limit);
    if (arena_default_session_fits(p, message, sizeof message))
        printf("  sessions       fit the default arena limit (%s) over the whole domain\n", limit);
    else
        term_printf(stdout, "  sessions       %snarrow a dim or raise the limit:%s %s\n", st->yellow, st->reset,
                    message);
    return kiln_program_dim_count(p) == 0 || print_arena_growth(p, st);
}

static void rule_text(const kiln_compare_rule *rule, char *out, size_t size)
{
    if (rule->kind == KILN_COMPARE_EXACT)
        snprintf(out, size, "exact%s", rule->nan_equal ? ", NaN equal" : "");
    else
        snprintf(out, size, "atol %g rtol %g%s", rule->atol, rule->rtol, rule->nan_equal ? ", NaN equal" : "");
}

static void print_evidence(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_evidence_count(p);
    if (!count) {
        heading(st, "evidence: none");
        return;
    }
    table t;
    table_init(&t, "lll");
    table_add(&t, "case");
    table_add(&t, "output");
    table_add(&t, "rule");
    for (uint32_t c = 0; c < count; c++) {
        uint32_t outputs = kiln_program_evidence_output_count(p, c);
        for (uint32_t o = 0; o < outputs; o++) {
            const char *name;
            kiln_compare_rule rule;
            char text[128];
            kiln_program_evidence_output(p, c, o, &name, &rule);
            rule_text(&rule, text, sizeof text);
            table_add(&t, o ? "" : kiln_program_evidence_name(p, c));
            table_add(&t, name);
            table_add(&t, text);
        }
    }
    headingf(st, "evidence (%u case%s, replayed by kiln verify)", count, count == 1 ? "" : "s");
    emit(&t, st, true);
}

/* The generation cases: a prompt and the tokens it must make, over two methods (format 1.3). */
static void print_generation(const kiln_program *p, const term_style *st)
{
    uint32_t count = kiln_program_generation_count(p);
    if (!count)
        return;
    table t;
    table_init(&t, "lllrrr");
    table_add(&t, "case");
    table_add(&t, "prefill");
    table_add(&t, "decode");
    table_add(&t, "prompt");
    table_add(&t, "tokens");
    table_add(&t, "margin");
    for (uint32_t c = 0; c < count; c++) {
        kiln_generation_case g;
        char prompt[16], tokens[16], margin[32];
        kiln_program_generation(p, c, &g);
        snprintf(prompt, sizeof prompt, "%u", g.prompt_length);
        snprintf(tokens, sizeof tokens, "%u", g.token_count);
        snprintf(margin, sizeof margin, "%g", g.margin);
        table_add(&t, g.name);
        table_add(&t, g.prefill_method);
        table_add(&t, g.decode_method);
        table_add(&t, prompt);
        table_add(&t, tokens);
        table_add(&t, margin);
    }
    headingf(st, "generation (%u case%s: a prompt and the tokens it must make, replayed by kiln verify)", count,
             count == 1 ? "" : "s");
    emit(&t, st, true);
}

static bool print_sections(const artifact_view *view, const term_style *st)
{
    uint32_t count = kiln_artifact_section_count(view->artifact);
    table t;
    table_init(&t, "llrrrrl");
    table_add(&t, "type");
    table_add(&t, "flags");
    table_add(&t, "version");
    table_add(&t, "offset");
    table_add(&t, "stored");
    table_add(&t, "raw");
    table_add(&t, "crc32");
    for (uint32_t i = 0; i < count; i++) {
        kiln_section_info s;
        kiln_artifact_section(view->artifact, i, &s);
        table_add(&t, s.type);
        table_addf(&t, "%s%s", s.critical ? "critical" : "ancillary", s.compressed ? ",zlib" : "");
        table_addf(&t, "%u", s.version);
        table_addf(&t, "%llu", (unsigned long long)s.offset);
        table_addf(&t, "%llu", (unsigned long long)s.stored_size);
        table_addf(&t, "%llu", (unsigned long long)s.raw_size);
        table_addf(&t, "%08x", s.crc32);
    }
    headingf(st, "sections (%u)", count);
    return emit(&t, st, true);
}

/* The methods, one line each: name and signature. */
static void print_methods(const kiln_program *program, const term_style *st)
{
    heading(st, "methods");
    for (uint32_t m = 0; m < kiln_program_method_count(program); m++) {
        const kiln_program *p = kiln_program_method_at(program, m);
        printf("  %s(", kiln_program_method_name(p));
        for (uint32_t i = 0; i < kiln_program_input_count(p); i++) {
            kiln_io_info io;
            char shape[SHAPE_TEXT_SIZE];
            kiln_program_input(p, i, &io);
            kiln_program_input_shape_text(p, i, shape, sizeof shape);
            printf("%s%s: %s%s", i ? ", " : "", io.name, kiln_dtype_name(io.dtype), shape);
        }
        printf(") ->");
        for (uint32_t i = 0; i < kiln_program_output_count(p); i++) {
            kiln_io_info io;
            kiln_program_output(p, i, &io);
            printf("%s %s", i ? "," : "", io.name);
        }
        printf("\n");
    }
}

/* `only`: the one method to show (--method), NULL for all. */
static int print_human(const artifact_view *view, const kiln_program *only, bool quiet)
{
    term_style st = term_style_for(stdout);
    print_header_line(view, &st);
    if (quiet)
        return CLI_OK;
    print_overview(view, &st);
    uint64_t features = kiln_artifact_feature_bits(view->artifact);
    if (features) {
        printf("features    required bit%s", (features & (features - 1)) ? "s" : "");
        for (int bit = 0, n = 0; bit < 64; bit++)
            if (features >> bit & 1)
                printf("%s %d%s", n++ ? "," : "", bit,
                       bit == 0 ? " (half-precision values)" : bit == 1 ? " (relations across dims)" : "");
        printf("\n");
    }
    print_problems(view, &st);
    bool ok = true;
    if (view->program) {
        print_metadata(view->program, &st);
        uint32_t count = kiln_program_method_count(view->program);
        if (count > 1)
            print_methods(view->program, &st);
        print_states(view->program, &st);
        for (uint32_t m = 0; m < count; m++) {
            const kiln_program *p = kiln_program_method_at(view->program, m);
            if (only && p != only)
                continue;
            if (count > 1)
                headingf(&st, "method %s", kiln_program_method_name(p));
            print_io(p, &st);
            print_dims(p, &st);
            print_relations(p, &st);
            print_semantic_checks(p, &st);
            print_runtime_guards(p, &st);
            ok = print_ops(p, &st) && ok;
            if (count == 1) /* where a one-method artifact has always shown them */
                ok = print_weights(view, &st) && ok;
            ok = print_memory_plan(p, &st) && ok;
            print_evidence(p, &st);
        }
        if (count > 1)
            ok = print_weights(view, &st) && ok;
        if (!only)
            print_generation(view->program, &st);
    } else {
        printf("\n%snot shown:%s this runtime cannot decode the program, so its metadata, inputs,\n"
               "outputs, dims, semantic checks, ops, weights, memory plan and evidence are left out\n",
               st.dim, st.reset);
    }
    ok = print_sections(view, &st) && ok;
    return ok ? CLI_OK : cli_error("out of memory");
}

/* ------------------------------------------------------------- JSON output */

static void json_io(json_writer *w, const kiln_program *p, bool outputs)
{
    uint32_t count = outputs ? kiln_program_output_count(p) : kiln_program_input_count(p);
    char shape[SHAPE_TEXT_SIZE];
    json_begin_array(w);
    for (uint32_t i = 0; i < count; i++) {
        kiln_io_info io;
        if (outputs) {
            kiln_program_output(p, i, &io);
            kiln_program_output_shape_text(p, i, shape, sizeof shape);
        } else {
            kiln_program_input(p, i, &io);
            kiln_program_input_shape_text(p, i, shape, sizeof shape);
        }
        json_begin_object(w);
        json_member_string(w, "name", io.name);
        json_member_string(w, "dtype", kiln_dtype_name(io.dtype));
        json_member_uint(w, "rank", io.rank);
        json_member_string(w, "shape", shape);
        json_key(w, "axes");
        json_begin_array(w);
        for (uint32_t a = 0; a < io.rank; a++) {
            char axis[SHAPE_TEXT_SIZE];
            if (outputs)
                kiln_program_output_axis_text(p, i, a, axis, sizeof axis);
            else
                kiln_program_input_axis_text(p, i, a, axis, sizeof axis);
            json_string(w, axis);
        }
        json_end_array(w);
        json_end_object(w);
    }
    json_end_array(w);
}

/* The "dims" and "derived_dims" members. */
static void json_dims(json_writer *w, const kiln_program *p)
{
    json_key(w, "dims");
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_dim_count(p); i++) {
        kiln_dim_info d;
        kiln_program_dim(p, i, &d);
        json_begin_object(w);
        json_member_string(w, "name", d.name);
        json_member_int(w, "min", d.min);
        json_member_int(w, "max", d.max);
        json_member_int(w, "multiple_of", d.multiple_of);
        json_end_object(w);
    }
    json_end_array(w);
    json_key(w, "derived_dims");
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_derived_dim_count(p); i++) {
        const char *name;
        char expression[SHAPE_TEXT_SIZE];
        kiln_program_derived_dim(p, i, &name, expression, sizeof expression);
        json_begin_object(w);
        json_member_string(w, "name", name);
        json_member_string(w, "expression", expression);
        json_end_object(w);
    }
    json_end_array(w);
}

static void json_semantic_checks(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_input_count(p); i++) {
        kiln_input_check c;
        kiln_io_info io;
        kiln_input_check_default(&c);
        if (!kiln_program_input_check(p, i, &c))
            continue;
        kiln_program_input(p, i, &io);
        json_begin_object(w);
        json_member_string(w, "input", io.name);
        json_key(w, "range");
        if (c.has_range) {
            json_begin_object(w);
            json_member_double(w, "min", c.min);
            json_member_double(w, "max", c.max);
            json_end_object(w);
        } else {
            json_null(w);
        }
        json_member_bool(w, "finite_only", c.finite_only);
        json_key(w, "categories");
        json_begin_array(w);
        for (uint32_t k = 0; k < c.category_count; k++)
            json_int(w, c.categories[k]);
        json_end_array(w);
        json_member_string(w, "unit", c.unit ? c.unit : "");
        json_member_string(w, "description", c.description ? c.description : "");
        json_end_object(w);
    }
    json_end_array(w);
}

static void json_runtime_guards(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_runtime_guard_count(p); i++) {
        uint32_t node;
        const char *text = kiln_program_runtime_guard(p, i, &node);
        kiln_node_info info;
        kiln_program_node(p, node, &info);
        json_begin_object(w);
        json_member_uint(w, "node", node);
        json_member_string(w, "op", info.op);
        json_key(w, "node_name");
        if (kiln_program_node_name(p, node))
            json_string(w, kiln_program_node_name(p, node));
        else
            json_null(w);
        json_member_string(w, "claim", text);
        json_end_object(w);
    }
    json_end_array(w);
}

static bool json_ops(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_op_use_count(p); i++) {
        kiln_op_use use;
        kiln_program_op_use(p, i, &use);
        json_begin_object(w);
        json_member_string(w, "name", use.name);
        json_member_uint(w, "version", use.version);
        json_member_uint(w, "nodes", use.nodes);
        json_end_object(w);
    }
    json_end_array(w);
    return true;
}

static void json_weight(json_writer *w, const kiln_program *p, uint32_t index)
{
    kiln_weight_info weight;
    kiln_program_weight(p, index, &weight);
    json_begin_object(w);
    json_member_string(w, "name", weight.name);
    json_member_string(w, "kind", weight_kind_name(weight.kind));
    json_member_string(w, "dtype", kiln_dtype_name(weight.dtype));
    json_key(w, "shape");
    json_begin_array(w);
    for (uint32_t a = 0; a < weight.rank; a++)
        json_int(w, weight.shape[a]);
    json_end_array(w);
    json_member_uint(w, "bytes", weight.byte_size);
    json_end_object(w);
}

static bool json_weights(json_writer *w, const artifact_view *view)
{
    const kiln_program *p = view->program;
    uint32_t count = kiln_program_weight_count(p);
    weight_storage storage = weight_storage_of(view);
    uint32_t *order = weights_by_size(p);
    if (!order) {
        json_null(w); /* out of memory: the document stays well formed */
        return false;
    }
    json_begin_object(w);
    json_member_uint(w, "count", count);
    json_member_uint(w, "bytes", total_weight_bytes(p));
    json_member_uint(w, "stored_bytes", storage.stored);
    json_member_uint(w, "raw_bytes", storage.raw);
    json_member_bool(w, "compressed", storage.compressed);
    json_member_double(w, "compression_ratio", compression_ratio(storage));
    json_key(w, "largest");
    json_begin_array(w);
    for (uint32_t i = 0; i < count && i < LARGEST_WEIGHTS; i++)
        json_weight(w, p, order[i]);
    json_end_array(w);
    json_key(w, "tensors");
    json_begin_array(w);
    for (uint32_t i = 0; i < count; i++)
        json_weight(w, p, i);
    json_end_array(w);
    json_end_object(w);
    free(order);
    return true;
}

/* A byte count, or null when it overflows 64 bits. */
static void json_member_bytes(json_writer *w, const char *key, uint64_t bytes)
{
    if (bytes == UINT64_MAX)
        {
        json_key(w, key);
        json_null(w);
    }
    else
        json_member_uint(w, key, bytes);
}

static bool json_memory_plan(json_writer *w, const kiln_program *p)
{
    char message[KILN_ERROR_MESSAGE_SIZE];
    kiln_limits limits;
    kiln_limits_default(&limits);
    json_begin_object(w);
    json_member_bool(w, "stored", kiln_program_memory_plan_stored(p));
    json_member_bytes(w, "arena_bytes", kiln_program_arena_bytes(p));
    json_member_bytes(w, "intermediate_bytes", kiln_program_intermediate_bytes(p));
    json_member_uint(w, "intermediate_count", kiln_program_node_count(p));
    json_key(w, "upper_bound");
    json_begin_object(w);
    for (uint32_t d = 0; d < kiln_program_dim_count(p); d++) {
        kiln_dim_info dim;
        kiln_program_dim(p, d, &dim);
        json_member_int(w, dim.name, sample_dim_last(&dim));
    }
    json_end_object(w);
    json_member_uint(w, "default_limit_bytes", limits.max_arena_bytes);
    bool fits = arena_default_session_fits(p, message, sizeof message);
    json_member_bool(w, "fits_default_limit", fits);
    if (!fits)
        json_member_string(w, "narrowing_needed", message);
    json_key(w, "growth");
    json_begin_array(w);
    bool ok = true;
    for (uint32_t d = 0; ok && d < kiln_program_dim_count(p); d++) {
        arena_growth g;
        ok = arena_growth_of(p, d, &g);
        if (!ok)
            break;
        json_begin_object(w);
        json_member_string(w, "dim", g.dim.name);
        static const char *const keys[3][2] = {{"min", "arena_at_min_bytes"}, {"mid", "arena_at_mid_bytes"},
                                                {"max", "arena_at_max_bytes"}};
        for (int k = 0; k < 3; k++) {
            json_member_int(w, keys[k][0], g.at[k]);
            json_member_bytes(w, keys[k][1], g.bytes[k]);
        }
        json_key(w, "degree");
        if (isnan(g.degree))
            json_null(w);
        else
            json_fixed(w, g.degree, 2);
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
    return ok;
}

static void json_evidence(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t c = 0; c < kiln_program_evidence_count(p); c++) {
        json_begin_object(w);
        json_member_string(w, "name", kiln_program_evidence_name(p, c));
        json_key(w, "outputs");
        json_begin_array(w);
        for (uint32_t o = 0; o < kiln_program_evidence_output_count(p, c); o++) {
            const char *name;
            kiln_compare_rule rule;
            kiln_program_evidence_output(p, c, o, &name, &rule);
            json_begin_object(w);
            json_member_string(w, "name", name);
            json_key(w, "rule");
            json_begin_object(w);
            json_member_string(w, "kind", rule.kind == KILN_COMPARE_EXACT ? "exact" : "tolerance");
            json_member_double(w, "atol", rule.atol);
            json_member_double(w, "rtol", rule.rtol);
            json_member_bool(w, "nan_equal", rule.nan_equal);
            json_end_object(w);
            json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
    }
    json_end_array(w);
}

static void json_sections(json_writer *w, const artifact_view *view)
{
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_artifact_section_count(view->artifact); i++) {
        kiln_section_info s;
        char crc[9];
        kiln_artifact_section(view->artifact, i, &s);
        snprintf(crc, sizeof crc, "%08x", s.crc32);
        json_begin_object(w);
        json_member_string(w, "type", s.type);
        json_member_bool(w, "critical", s.critical);
        json_member_bool(w, "compressed", s.compressed);
        json_member_uint(w, "version", s.version);
        json_member_uint(w, "offset", s.offset);
        json_member_uint(w, "stored_size", s.stored_size);
        json_member_uint(w, "raw_size", s.raw_size);
        json_member_string(w, "crc32", crc);
        json_end_object(w);
    }
    json_end_array(w);
}

static void json_problems(json_writer *w, const kiln_report *report)
{
    json_begin_array(w);
    for (uint32_t i = 0; report && i < kiln_report_count(report); i++) {
        kiln_problem_info p;
        kiln_report_problem(report, i, &p);
        json_begin_object(w);
        json_member_string(w, "severity", problem_severity_name(p.severity));
        json_member_string(w, "code", p.code);
        json_member_int(w, "status", (int)p.status);
        json_member_string(w, "location", p.location);
        json_member_string(w, "message", p.message);
        json_end_object(w);
    }
    json_end_array(w);
}

/* The identities known: the artifact's always, program and state once decoded. */
static void json_identities(json_writer *w, const artifact_view *view)
{
    static const struct {
        kiln_identity identity;
        const char *name;
    } decoded[] = {{KILN_IDENTITY_PROGRAM, "program"}, {KILN_IDENTITY_STATE, "state"}};
    uint8_t digest[32];
    char text[IDENTITY_TEXT_SIZE];
    json_begin_object(w);
    kiln_artifact_digest(view->artifact, digest);
    identity_text(digest, text);
    json_member_string(w, "artifact", text);
    for (size_t i = 0; view->program && i < sizeof decoded / sizeof decoded[0]; i++) {
        kiln_program_identity(view->program, decoded[i].identity, digest);
        identity_text(digest, text);
        json_member_string(w, decoded[i].name, text);
    }
    json_end_object(w);
}

/* Everything the container shows: format, size, identities, signature. */
static void json_container(json_writer *w, const artifact_view *view)
{
    uint16_t major, minor;
    char key[33];
    kiln_signature_info signature;
    kiln_artifact_format_version(view->artifact, &major, &minor);
    json_key(w, "format");
    json_begin_object(w);
    json_member_uint(w, "major", major);
    json_member_uint(w, "minor", minor);
    json_end_object(w);
    json_member_uint(w, "file_size", kiln_artifact_file_size(view->artifact));
    json_key(w, "feature_bits");
    json_begin_array(w);
    uint64_t bits = kiln_artifact_feature_bits(view->artifact);
    for (int bit = 0; bit < 64; bit++)
        if (bits >> bit & 1)
            json_int(w, bit);
    json_end_array(w);
    json_key(w, "identities");
    json_identities(w, view);
    json_key(w, "signature");
    kiln_artifact_signature(view->artifact, &signature);
    json_begin_object(w);
    json_member_string(w, "state", signature_state_name(signature.state));
    if (signature.state != KILN_SIGNATURE_NONE) {
        cli_hex(signature.key_id, sizeof signature.key_id, key);
        json_member_string(w, "key_id", key);
    }
    json_end_object(w);
    json_key(w, "sections");
    json_sections(w, view);
}

/* What a method has of its own, as members of the open object, and the artifact's weights where 1.0 put them. */
static bool json_method_members(json_writer *w, const artifact_view *view, const kiln_program *p)
{
    json_key(w, "inputs");
    json_io(w, p, false);
    json_key(w, "outputs");
    json_io(w, p, true);
    json_dims(w, p);
    json_key(w, "relations");
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_relation_count(p); i++) {
        char text[SHAPE_TEXT_SIZE * 2 + 8];
        kiln_error err;
        if (kiln_program_relation(p, i, text, sizeof text, &err) == KILN_OK)
            json_string(w, text);
    }
    json_end_array(w);
    json_key(w, "semantic_checks");
    json_semantic_checks(w, p);
    json_member_bool(w, "strict", kiln_program_is_strict(p));
    json_key(w, "runtime_guards");
    json_runtime_guards(w, p);
    json_member_uint(w, "node_count", kiln_program_node_count(p));
    json_member_uint(w, "named_node_count", named_node_count(p));
    json_key(w, "ops");
    bool ok = json_ops(w, p);
    json_key(w, "weights");
    ok = json_weights(w, view) && ok;
    json_key(w, "memory_plan");
    ok = json_memory_plan(w, p) && ok;
    json_key(w, "evidence");
    json_evidence(w, p);
    return ok;
}

/* The "states" member: the program's state tensors. */
static void json_states(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t i = 0; i < kiln_program_state_count(p); i++) {
        const char *name, *length_dim;
        kiln_dtype dtype;
        uint32_t rank, axis;
        const int64_t *shape;
        kiln_error err;
        if (kiln_program_state_at(p, i, &name, &dtype, &rank, &shape, &axis, &length_dim, &err) != KILN_OK)
            continue;
        json_begin_object(w);
        json_member_string(w, "name", name);
        json_member_string(w, "dtype", kiln_dtype_name(dtype));
        json_key(w, "shape");
        json_begin_array(w);
        for (uint32_t a = 0; a < rank; a++)
            json_int(w, shape[a]);
        json_end_array(w);
        json_member_uint(w, "axis", axis);
        json_member_string(w, "length_dim", length_dim);
        json_end_object(w);
    }
    json_end_array(w);
}

/* The "generation" member: the program's generation cases, their tokens in full. */
static void json_generation(json_writer *w, const kiln_program *p)
{
    json_begin_array(w);
    for (uint32_t c = 0; c < kiln_program_generation_count(p); c++) {
        kiln_generation_case g;
        kiln_program_generation(p, c, &g);
        json_begin_object(w);
        json_member_string(w, "name", g.name);
        json_member_string(w, "prefill_method", g.prefill_method);
        json_member_string(w, "decode_method", g.decode_method);
        json_key(w, "prompt");
        json_begin_array(w);
        for (uint32_t i = 0; i < g.prompt_length; i++)
            json_int(w, g.prompt[i]);
        json_end_array(w);
        json_key(w, "tokens");
        json_begin_array(w);
        for (uint32_t i = 0; i < g.token_count; i++)
            json_int(w, g.tokens[i]);
        json_end_array(w);
        json_member_double(w, "margin", g.margin);
        json_end_object(w);
    }
    json_end_array(w);
}

/* The program: the artifact's name, mode and metadata, `shown`'s own members, then the methods' names. */
static bool json_program(json_writer *w, const artifact_view *view, const kiln_program *shown)
{
    const kiln_program *p = view->program;
    json_member_string(w, "name", kiln_program_name(p));
    json_member_string(w, "mode", kiln_program_mode(p) == KILN_MODE_INFERENCE ? "inference" : "training");
    json_key(w, "metadata");
    json_begin_object(w);
    for (uint32_t i = 0; i < kiln_program_metadata_count(p); i++) {
        const char *key, *value;
        kiln_program_metadata(p, i, &key, &value);
        json_member_string(w, key, value);
    }
    json_end_object(w);
    bool ok = json_method_members(w, view, shown);
    json_key(w, "states");
    json_states(w, p);
    json_key(w, "generation");
    json_generation(w, p);
    json_member_string(w, "method", kiln_program_method_name(shown));
    json_key(w, "methods");
    json_begin_array(w);
    for (uint32_t m = 0; m < kiln_program_method_count(p); m++)
        json_string(w, kiln_program_method_name(kiln_program_method_at(p, m)));
    json_end_array(w);
    return ok;
}

static int print_json(const artifact_view *view, const kiln_program *shown, bool readable)
{
    json_writer w;
    bool ok = true;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "schema", "kiln-inspect/1");
    json_member_string(&w, "file", view->path);
    json_member_bool(&w, "readable", readable);
    json_member_bool(&w, "runnable", view->program != NULL);
    if (!readable) {
        json_member_string(&w, "message", view->error.message);
    }
    json_key(&w, "problems");
    json_problems(&w, view->report);
    if (readable)
        json_container(&w, view);
    if (view->program)
        ok = json_program(&w, view, shown ? shown : view->program);
    json_end_object(&w);
    json_finish(&w);
    return ok ? CLI_OK : cli_error("out of memory");
}

/* ------------------------------------------------------------------- verb */

typedef struct inspect_args {
    bool json;
    load_args load;
} inspect_args;

static int take_verify(void *target, const char *value)
{
    return load_args_take_verify(&((inspect_args *)target)->load, value);
}

static int take_method(void *target, const char *value)
{
    return load_args_take_method(&((inspect_args *)target)->load, value);
}

static const cli_option inspect_option_list[] = {
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(inspect_args, json)},
    {.name = "--verify", .arity = CLI_VALUE, .handle = take_verify},
    {.name = "--method", .arity = CLI_VALUE, .handle = take_method},
};

static const cli_options inspect_options = CLI_OPTIONS("inspect", inspect_option_list, 1);

static int cmd_inspect(int argc, char **argv)
{
    inspect_args args = {.json = false, .load = {.verb = "inspect", .verify = KILN_VERIFY_FULL}};
    const char *path = NULL;
    int operands;
    int rc = cli_parse_options(&inspect_options, argc, argv, &args, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("inspect", "missing FILE");
    bool json = args.json, quiet = cli_quiet;
    artifact_view view;
    kiln_load_options options;
    cli_progress progress;
    load_args_options(&args.load, &options, &progress);
    bool readable = artifact_view_open_with_options(&view, path, &options);
    cli_progress_finish(&progress);
    const kiln_program *only = NULL;
    /* --method needs the program: one that cannot run here has no methods to pick. */
    if (readable && args.load.method && view.program && load_args_method(&args.load, view.program, &only) != CLI_OK) {
        artifact_view_close(&view);
        return CLI_FAILED;
    }
    if (json) {
        rc = print_json(&view, only, readable);
        if (!readable)
            rc = CLI_FAILED;
    } else if (!readable) {
        rc = cli_load_error(path, &view.error);
    } else {
        rc = print_human(&view, only, quiet);
    }
    artifact_view_close(&view);
    return rc;
}
