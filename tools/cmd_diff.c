/*
 * cmd_diff.c — `kiln diff A B [--json] [--quiet]`: what changed between two
 * artifacts, classed breaking or compatible for the consumers of A
 * (the library compares: kiln_diff_artifacts; this file reads the command
 * line and prints). Exit 0 when nothing is breaking, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_view.h"
#include "cli.h"
#include "options.h"
#include "json.h"
#include "table.h"
#include "term.h"

static int cmd_diff(int argc, char **argv);

const cli_verb cli_verb_diff = {
    "diff",
    "compare two artifacts: interface changes (breaking or compatible) and identities",
    "usage: kiln diff A B [--json] [--quiet] [--method NAME]\n\n"
    "Compare artifact B with artifact A and class every difference for the\n"
    "consumers of A (spec/compatibility.md section 6): breaking (an input\n"
    "removed, renamed or added; a dtype or rank changed; a dim range narrowed;\n"
    "a constraint added such as a multiple_of, a fixed size where a dim was,\n"
    "equal axes or a semantic check; an output removed or renamed; an op\n"
    "version this runtime lacks) or compatible (a dim range widened, an output\n"
    "added, metadata, evidence or signature changed, the same program with new\n"
    "weights). Artifacts with several methods are compared method by method,\n"
    "by name: a method removed is breaking, one added compatible, and each\n"
    "change of a method names it (\"method 'decode' input 't' axis 0\").\n"
    "The three identities are compared too: equal program identity\n"
    "and a different state identity mean \"same program, new weights\".\n"
    "Exit 0 when nothing is breaking, 1 when something is (or when an\n"
    "interface cannot be decoded here, so compatibility cannot be shown).\n\n"
    "options:\n"
    "  --json       print one JSON object (schema: spec/inspect-json.md)\n"
    "  -q, --quiet  print nothing; only the exit status tells\n"
    "  --method NAME  compare only method NAME of both (and what they share)\n",
    cmd_diff,
};

/* ------------------------------------------------------------ printing */

static void print_identities_table(const kiln_diff *d, const term_style *st)
{
    table t;
    table_init(&t, "llll");
    table_add(&t, "identity");
    table_add(&t, "a");
    table_add(&t, "b");
    table_add(&t, "");
    for (uint32_t i = 0; i < 3; i++) {
        kiln_identity_pair id;
        kiln_diff_identity(d, i, &id);
        char ha[17] = "?", hb[17] = "?";
        if (id.known_a)
            identity_short(id.a, ha);
        if (id.known_b)
            identity_short(id.b, hb);
        table_add(&t, id.name);
        table_add(&t, ha);
        table_add(&t, hb);
        table_add(&t, !(id.known_a && id.known_b) ? "unknown" : kiln_identity_pair_equal(&id) ? "same" : "changed");
    }
    if (!t.failed)
        table_print(&t, stdout, "  ", st, true);
    table_free(&t);
}

static void print_class(const kiln_diff *d, kiln_change_class class, const term_style *st)
{
    uint32_t n = kiln_diff_class_count(d, class);
    bool breaking = class == KILN_CHANGE_BREAKING;
    printf("\n%s%s%s (%u)%s\n", st->bold, breaking ? st->red : st->green, breaking ? "breaking" : "compatible", n,
           st->reset);
    if (!n)
        return;
    table t;
    table_init(&t, "lll");
    for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
        kiln_change_info c;
        kiln_diff_change(d, i, &c);
        if (c.change_class != class)
            continue;
        table_add(&t, c.kind);
        table_add(&t, c.subject);
        table_add(&t, c.message);
    }
    if (!t.failed)
        table_print(&t, stdout, "  ", st, false);
    table_free(&t);
}

static void print_human(const artifact_view *va, const artifact_view *vb, const kiln_diff *d)
{
    bool compared = kiln_diff_compared(d);
    term_style st = term_style_for(stdout);
    uint32_t breaking = kiln_diff_class_count(d, KILN_CHANGE_BREAKING);
    uint32_t compatible = kiln_diff_class_count(d, KILN_CHANGE_COMPATIBLE);
    printf("a  ");
    term_plain(stdout, va->path);
    printf("\nb  ");
    term_plain(stdout, vb->path);
    printf("\n\n%sidentities%s: %s\n", st.bold, st.reset, kiln_diff_verdict(d));
    print_identities_table(d, &st);
    if (!compared)
        printf("\n%snot compared:%s the interface of %s cannot be decoded here\n", st.bold, st.reset,
               va->program ? "B" : "A");
    print_class(d, KILN_CHANGE_BREAKING, &st);
    print_class(d, KILN_CHANGE_COMPATIBLE, &st);
    printf("\n");
    if (!compared)
        printf("result: %sbreaking%s (compatibility cannot be shown; %u breaking, %u compatible)\n", st.red,
               st.reset, breaking, compatible);
    else if (breaking)
        printf("result: %sbreaking%s (%u breaking, %u compatible)\n", st.red, st.reset, breaking, compatible);
    else if (compatible)
        printf("result: %scompatible%s (0 breaking, %u compatible)\n", st.green, st.reset, compatible);
    else
        printf("result: no differences\n");
}

/* One side of an identity: its text, or null when that side is not decoded. */
static void identity_json(json_writer *w, bool known, const uint8_t digest[32])
{
    char text[IDENTITY_TEXT_SIZE];
    if (!known) {
        json_null(w);
        return;
    }
    identity_text(digest, text);
    json_string(w, text);
}

static void print_json(const artifact_view *va, const artifact_view *vb, const kiln_diff *d)
{
    uint32_t breaking = kiln_diff_class_count(d, KILN_CHANGE_BREAKING);
    uint32_t compatible = kiln_diff_class_count(d, KILN_CHANGE_COMPATIBLE);
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "schema", "kiln-diff/1");
    json_member_string(&w, "a", va->path);
    json_member_string(&w, "b", vb->path);
    json_member_bool(&w, "compared", kiln_diff_compared(d));
    json_member_bool(&w, "breaking", kiln_diff_breaking(d));
    json_member_string(&w, "verdict", kiln_diff_verdict(d));
    json_key(&w, "counts");
    json_begin_object(&w);
    json_member_uint(&w, "breaking", breaking);
    json_member_uint(&w, "compatible", compatible);
    json_end_object(&w);
    json_key(&w, "identities");
    json_begin_object(&w);
    for (uint32_t i = 0; i < 3; i++) {
        kiln_identity_pair id;
        kiln_diff_identity(d, i, &id);
        json_key(&w, id.name);
        json_begin_object(&w);
        json_key(&w, "a");
        identity_json(&w, id.known_a, id.a);
        json_key(&w, "b");
        identity_json(&w, id.known_b, id.b);
        json_member_bool(&w, "equal", kiln_identity_pair_equal(&id));
        json_end_object(&w);
    }
    json_end_object(&w);
    /* Breaking changes first, then compatible ones, each in the order found. */
    json_key(&w, "changes");
    json_begin_array(&w);
    for (int class = KILN_CHANGE_BREAKING; class <= KILN_CHANGE_COMPATIBLE; class++)
        for (uint32_t i = 0; i < kiln_diff_change_count(d); i++) {
            kiln_change_info c;
            kiln_diff_change(d, i, &c);
            if ((int)c.change_class != class)
                continue;
            json_begin_object(&w);
            json_member_string(&w, "class", class == KILN_CHANGE_BREAKING ? "breaking" : "compatible");
            json_member_string(&w, "kind", c.kind);
            json_member_string(&w, "subject", c.subject);
            json_member_string(&w, "message", c.message);
            json_end_object(&w);
        }
    json_end_array(&w);
    json_end_object(&w);
    json_finish(&w);
}

/* ------------------------------------------------------------------ verb */

typedef struct diff_args {
    bool json;
    const char *method;
} diff_args;

static const cli_option diff_option_list[] = {
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(diff_args, json)},
    {.name = "--method", .arity = CLI_VALUE, .offset = offsetof(diff_args, method)},
};

static const cli_options diff_options = CLI_OPTIONS("diff", diff_option_list, 2);

static int cmd_diff(int argc, char **argv)
{
    diff_args args = {false, NULL};
    const char *paths[2] = {NULL, NULL};
    int path_count;
    int rc = cli_parse_options(&diff_options, argc, argv, &args, paths, &path_count);
    if (rc != CLI_OK)
        return rc;
    if (path_count < 2)
        return cli_usage_error("diff", "needs two artifacts, A and B");
    bool json = args.json, quiet = cli_quiet;

    artifact_view va, vb;
    bool readable_a = artifact_view_open(&va, paths[0]);
    bool readable_b = artifact_view_open(&vb, paths[1]);
    if (!readable_a || !readable_b) {
        const artifact_view *bad = readable_a ? &vb : &va;
        rc = cli_load_error(bad->path, &bad->error);
        artifact_view_close(&va);
        artifact_view_close(&vb);
        return rc;
    }

    kiln_diff *d;
    kiln_error err;
    kiln_status status = args.method ? kiln_diff_method(va.artifact, vb.artifact, args.method, &d, &err)
                                     : kiln_diff_artifacts(va.artifact, vb.artifact, &d, &err);
    if (status != KILN_OK) {
        rc = cli_error("%s", err.message);
    } else {
        if (json)
            print_json(&va, &vb, d);
        else if (!quiet)
            print_human(&va, &vb, d);
        rc = kiln_diff_breaking(d) ? CLI_FAILED : CLI_OK;
        kiln_diff_free(d);
    }
    artifact_view_close(&va);
    artifact_view_close(&vb);
    return rc;
}
