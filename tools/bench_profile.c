/*
 * bench_profile.c — `kiln bench --profile`'s per-node report (see
 * bench_profile.h; the JSON is spec/bench-json.md's).
 *
 * Shares are of the time spent in nodes (so they sum to 100%); the rest
 * of a run (guards, input checks, converting outputs out of channels-last)
 * is shown once, beside the profiled and unprofiled medians, so that the
 * cost of profiling itself is in plain sight.
 */
#include "bench_profile.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "latency_stats.h"
#include "table.h"
#include "term.h"

/* Longest first; equal times in node order, so the order is reproducible. */
static int by_time(const void *a, const void *b)
{
    const profile_node *x = a, *y = b;
    if (x->figures.nanoseconds != y->figures.nanoseconds)
        return x->figures.nanoseconds < y->figures.nanoseconds ? 1 : -1;
    return (x->node > y->node) - (x->node < y->node);
}

static int ops_by_time(const void *a, const void *b)
{
    const profile_op *x = a, *y = b;
    if (x->nanoseconds != y->nanoseconds)
        return x->nanoseconds < y->nanoseconds ? 1 : -1;
    int c = strcmp(x->op, y->op);
    return c ? c : (int)x->path - (int)y->path;
}

/* Group the nodes by (op, path, activation applied). */
static int sum_ops(bench_profile *p)
{
    p->ops = calloc((size_t)p->node_count + 1, sizeof *p->ops);
    if (!p->ops)
        return cli_error("out of memory");
    for (uint32_t i = 0; i < p->node_count; i++) {
        const kiln_node_profile *f = &p->nodes[i].figures;
        uint32_t k = 0;
        while (k < p->op_count && !(strcmp(p->ops[k].op, f->op) == 0 && p->ops[k].path == f->path &&
                                    p->ops[k].activation_applied == f->applied_activation))
            k++;
        if (k == p->op_count)
            p->ops[p->op_count++] = (profile_op){f->op, f->path, f->applied_activation, 0, 0};
        p->ops[k].nodes++;
        p->ops[k].nanoseconds += f->nanoseconds;
    }
    qsort(p->ops, p->op_count, sizeof *p->ops, ops_by_time);
    return CLI_OK;
}

int bench_profile_collect(const kiln_session *session, bench_profile *out)
{
    kiln_error err;
    out->summary.struct_size = sizeof out->summary;
    if (kiln_session_profile_summary(session, &out->summary, &err) != KILN_OK)
        return cli_error("%s", err.message);
    out->nodes = calloc((size_t)out->summary.node_count + 1, sizeof *out->nodes);
    if (!out->nodes)
        return cli_error("out of memory");
    for (uint32_t n = 0; n < out->summary.node_count; n++) {
        profile_node *row = &out->nodes[out->node_count];
        row->node = n;
        row->figures.struct_size = sizeof row->figures;
        if (kiln_session_profile_node(session, n, &row->figures, &err) != KILN_OK)
            return cli_error("%s", err.message);
        if (row->figures.path != KILN_NODE_PATH_NOT_RUN)
            out->node_count++;
    }
    qsort(out->nodes, out->node_count, sizeof *out->nodes, by_time);
    return sum_ops(out);
}

void bench_profile_release(bench_profile *profile)
{
    free(profile->nodes);
    free(profile->ops);
    memset(profile, 0, sizeof *profile);
}

/* Milliseconds per profiled run of `nanoseconds` over all of them. */
static double per_run_ms(const bench_profile *p, uint64_t nanoseconds)
{
    return p->summary.runs ? (double)nanoseconds / (double)p->summary.runs * 1e-6 : 0;
}

/* Percent of the time in nodes. */
static double percent(const bench_profile *p, uint64_t nanoseconds)
{
    return p->summary.node_nanoseconds ? 100.0 * (double)nanoseconds / (double)p->summary.node_nanoseconds : 0;
}

/* "onednn+act", "fused into 12", "reference". */
static void path_text(const kiln_node_profile *f, char *buffer, size_t size)
{
    if (f->path == KILN_NODE_PATH_FUSED)
        snprintf(buffer, size, "fused into %u", f->fused_into);
    else
        snprintf(buffer, size, "%s%s", kiln_node_path_name(f->path), f->applied_activation ? "+act" : "");
}

/* "f32 [1, 32, 56, 56]". */
static void shape_text(const kiln_node_profile *f, char *buffer, size_t size)
{
    size_t used = (size_t)snprintf(buffer, size, "%s [", kiln_dtype_name(f->dtype));
    for (uint32_t a = 0; a < f->rank && used < size; a++)
        used += (size_t)snprintf(buffer + used, size - used, "%s%lld", a ? ", " : "", (long long)f->shape[a]);
    if (used < size)
        snprintf(buffer + used, size - used, "]");
}

static void print_nodes(const bench_profile *p, uint32_t top, FILE *out, const term_style *st)
{
    table t;
    table_init(&t, "rlllrrrr");
    const char *header[] = {"node", "op", "output", "path", "per run", "min", "share", "cumul"};
    for (size_t c = 0; c < sizeof header / sizeof *header; c++)
        table_add(&t, header[c]);
    double cumulative = 0;
    uint32_t shown = top < p->node_count ? top : p->node_count;
    for (uint32_t i = 0; i < shown; i++) {
        const kiln_node_profile *f = &p->nodes[i].figures;
        char shape[160], path[32], time[32], fastest[32];
        shape_text(f, shape, sizeof shape);
        path_text(f, path, sizeof path);
        cumulative += percent(p, f->nanoseconds);
        table_addf(&t, "%u", p->nodes[i].node);
        table_add(&t, f->op);
        table_add(&t, shape);
        table_add(&t, path);
        bool fused = f->path == KILN_NODE_PATH_FUSED;
        table_add(&t, fused ? "-" : latency_text(per_run_ms(p, f->nanoseconds), time, sizeof time));
        table_add(&t, fused ? "-" : latency_text((double)f->min_nanoseconds * 1e-6, fastest, sizeof fastest));
        table_addf(&t, "%.1f%%", percent(p, f->nanoseconds));
        table_addf(&t, "%.1f%%", cumulative);
    }
    if (!t.failed)
        table_print(&t, out, "  ", st, true);
    table_free(&t);
    if (shown < p->node_count)
        fprintf(out, "  %u of %u nodes run (--profile-top N for more, --json for all)\n", shown,
                p->node_count);
}

static void print_ops(const bench_profile *p, FILE *out, const term_style *st)
{
    table t;
    table_init(&t, "llrrr");
    const char *header[] = {"op", "path", "nodes", "per run", "share"};
    for (size_t c = 0; c < sizeof header / sizeof *header; c++)
        table_add(&t, header[c]);
    for (uint32_t k = 0; k < p->op_count; k++) {
        const profile_op *o = &p->ops[k];
        char time[32];
        table_add(&t, o->op);
        table_addf(&t, "%s%s", kiln_node_path_name(o->path), o->activation_applied ? "+act" : "");
        table_addf(&t, "%u", o->nodes);
        table_add(&t, o->path == KILN_NODE_PATH_FUSED ? "-" : latency_text(per_run_ms(p, o->nanoseconds), time,
                                                                              sizeof time));
        table_addf(&t, "%.1f%%", percent(p, o->nanoseconds));
    }
    if (!t.failed)
        table_print(&t, out, "  ", st, true);
    table_free(&t);
}

void bench_profile_print_text(const bench_profile *p, uint32_t top, FILE *out)
{
    char a[32], b[32], c[32];
    term_style st = term_style_for(out);
    double run_ms = per_run_ms(p, p->summary.nanoseconds), node_ms = per_run_ms(p, p->summary.node_nanoseconds);
    double overhead = p->unprofiled_median_ms > 0 ? 100.0 * (p->median_ms / p->unprofiled_median_ms - 1) : 0;
    fprintf(out, "profile    %llu runs after %ld warm-up: median %s, %+.1f%% against the unprofiled %s\n",
            (unsigned long long)p->summary.runs, p->warmup_runs, latency_text(p->median_ms, a, sizeof a), overhead,
            latency_text(p->unprofiled_median_ms, b, sizeof b));
    fprintf(out, "           in nodes %s per run (%.1f%% of the %s inside kiln_session_run; the rest: guards,\n"
                 "           input checks, outputs out of channels-last)\n",
            latency_text(node_ms, a, sizeof a), run_ms > 0 ? 100.0 * node_ms / run_ms : 0,
            latency_text(run_ms, c, sizeof c));
    print_nodes(p, top, out, &st);
    print_ops(p, out, &st);
}

/* A member holding milliseconds to the nanosecond, as bench's others. */
static void member_ms(json_writer *w, const char *key, double ms)
{
    json_key(w, key);
    json_fixed(w, ms, 6);
}

static void member_percent(json_writer *w, const char *key, double value)
{
    json_key(w, key);
    json_fixed(w, value, 3);
}

static void write_node(const bench_profile *p, const profile_node *row, double cumulative, json_writer *w)
{
    const kiln_node_profile *f = &row->figures;
    json_begin_object(w);
    json_member_uint(w, "node", row->node);
    json_member_string(w, "op", f->op);
    json_member_string(w, "dtype", kiln_dtype_name(f->dtype));
    json_key(w, "shape");
    json_begin_array(w);
    for (uint32_t a = 0; a < f->rank; a++)
        json_int(w, f->shape[a]);
    json_end_array(w);
    json_member_string(w, "path", kiln_node_path_name(f->path));
    json_member_bool(w, "activation_applied", f->applied_activation);
    json_key(w, "fused_into");
    if (f->path == KILN_NODE_PATH_FUSED)
        json_uint(w, f->fused_into);
    else
        json_null(w);
    json_member_uint(w, "runs", f->runs);
    json_member_uint(w, "fused_runs", f->fused_runs);
    member_ms(w, "total_ms", (double)f->nanoseconds * 1e-6);
    member_ms(w, "per_run_ms", per_run_ms(p, f->nanoseconds));
    member_ms(w, "min_ms", (double)f->min_nanoseconds * 1e-6);
    member_percent(w, "percent", percent(p, f->nanoseconds));
    member_percent(w, "cumulative_percent", cumulative);
    json_end_object(w);
}

void bench_profile_write_json(const bench_profile *p, json_writer *w)
{
    json_begin_object(w);
    json_member_uint(w, "runs", p->summary.runs);
    json_member_int(w, "warmup", p->warmup_runs);
    member_ms(w, "median_ms", p->median_ms);
    member_ms(w, "unprofiled_median_ms", p->unprofiled_median_ms);
    member_ms(w, "run_ms", per_run_ms(p, p->summary.nanoseconds));
    member_ms(w, "node_ms", per_run_ms(p, p->summary.node_nanoseconds));
    json_member_uint(w, "node_count", p->summary.node_count);
    json_member_uint(w, "nodes_not_run", p->summary.node_count - p->node_count);
    json_key(w, "nodes");
    json_begin_array(w);
    double cumulative = 0;
    for (uint32_t i = 0; i < p->node_count; i++) {
        cumulative += percent(p, p->nodes[i].figures.nanoseconds);
        write_node(p, &p->nodes[i], cumulative, w);
    }
    json_end_array(w);
    json_key(w, "ops");
    json_begin_array(w);
    for (uint32_t k = 0; k < p->op_count; k++) {
        const profile_op *o = &p->ops[k];
        json_begin_object(w);
        json_member_string(w, "op", o->op);
        json_member_string(w, "path", kiln_node_path_name(o->path));
        json_member_bool(w, "activation_applied", o->activation_applied);
        json_member_uint(w, "nodes", o->nodes);
        member_ms(w, "per_run_ms", per_run_ms(p, o->nanoseconds));
        member_percent(w, "percent", percent(p, o->nanoseconds));
        json_end_object(w);
    }
    json_end_array(w);
    json_end_object(w);
}
