/*
 * cmd_dot.c — `kiln dot FILE`: the program's graph in Graphviz DOT on
 * standard output (`kiln dot m.kiln | dot -Tsvg > m.svg`).
 *
 * Inputs are blue rounded boxes, outputs green rounded boxes, stored
 * tensors grey cylinders and ops ellipses labelled with op, version and the
 * shape expression of their result. Node ids follow spec/format.md §9.1
 * value numbering (v0, v1, ...; outputs are o0, o1, ...), and everything is
 * written in that order, so the same artifact always gives the same text.
 */
#include <stdio.h>
#include <string.h>

#include "artifact_view.h"
#include "cli.h"
#include "options.h"
#include "term.h"

static int cmd_dot(int argc, char **argv);

const cli_verb cli_verb_dot = {
    "dot",
    "print the program's graph as Graphviz DOT",
    "usage: kiln dot FILE [--quiet]\n\n"
    "Verify FILE and print its graph in Graphviz DOT on standard output:\n"
    "inputs (blue boxes) and outputs (green boxes) with dtype and shape,\n"
    "stored tensors (grey cylinders) with kind, dtype and shape, and one\n"
    "ellipse per node with its op, op version and the shape expression of its\n"
    "result. Edges run from operands to the node that uses them, labelled with\n"
    "the operand position when a node has several. The output is\n"
    "deterministic. Render it with e.g. 'kiln dot FILE | dot -Tsvg > graph.svg'.\n"
    "Exit 1 if FILE cannot be read or this runtime cannot decode its program.\n\n"
    "options:\n"
    "  -q, --quiet  accepted for symmetry with the other verbs; dot prints only the graph\n",
    cmd_dot,
};

#define SHAPE_TEXT_SIZE 1100

/* Text inside a DOT double-quoted string: quotes and backslashes escaped,
 * control characters (C0, DEL, and C1 in UTF-8, as term.h counts them)
 * replaced by '?', since DOT has no escape for them and the graph is
 * often printed to a terminal (a label line break is written by the
 * caller). */
static void dot_text(FILE *out, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
            fputc('?', out);
            c++;
            continue;
        }
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c < 0x20 || *c == 0x7f ? '?' : *c, out);
    }
}

static void print_io_node(FILE *out, const char *id, const kiln_io_info *io, const char *shape, bool output)
{
    fprintf(out, "  %s [label=\"", id);
    dot_text(out, io->name);
    fprintf(out, "\\n%s", kiln_dtype_name(io->dtype));
    dot_text(out, shape);
    fprintf(out, "\", shape=box, style=\"rounded,filled,bold\", fillcolor=\"%s\", color=\"%s\"];\n",
            output ? "#dcfce7" : "#dbeafe", output ? "#15803d" : "#1d4ed8");
}

static void print_graph(FILE *out, const kiln_program *p)
{
    uint32_t inputs = kiln_program_input_count(p), weights = kiln_program_weight_count(p);
    uint32_t nodes = kiln_program_node_count(p), outputs = kiln_program_output_count(p);
    uint16_t major, minor;
    char shape[SHAPE_TEXT_SIZE];
    kiln_program_format_version(p, &major, &minor);

    fprintf(out, "digraph \"");
    dot_text(out, kiln_program_name(p));
    fprintf(out, "\" {\n  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label=\"");
    dot_text(out, kiln_program_name(p));
    fprintf(out, " (kiln format %u.%u)\"];\n", major, minor);
    fprintf(out, "  node [fontname=\"Helvetica\", fontsize=11];\n"
                 "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n");

    fprintf(out, "\n  // inputs\n");
    for (uint32_t i = 0; i < inputs; i++) {
        kiln_io_info io;
        char id[32];
        kiln_program_input(p, i, &io);
        kiln_program_input_shape_text(p, i, shape, sizeof shape);
        snprintf(id, sizeof id, "v%u", i);
        print_io_node(out, id, &io, shape, false);
    }
    if (weights)
        fprintf(out, "\n  // stored tensors\n");
    for (uint32_t i = 0; i < weights; i++) {
        kiln_weight_info w;
        kiln_program_weight(p, i, &w);
        fprintf(out, "  v%u [label=\"", inputs + i);
        dot_text(out, w.name);
        fprintf(out, "\\n%s %s[", weight_kind_name(w.kind), kiln_dtype_name(w.dtype));
        for (uint32_t a = 0; a < w.rank; a++)
            fprintf(out, "%s%lld", a ? ", " : "", (long long)w.shape[a]);
        fprintf(out, "]\", shape=cylinder, style=filled, fillcolor=\"#f3f4f6\", color=\"#6b7280\"];\n");
    }
    if (nodes)
        fprintf(out, "\n  // ops\n");
    for (uint32_t n = 0; n < nodes; n++) {
        kiln_node_info node;
        kiln_program_node(p, n, &node);
        kiln_program_node_shape_text(p, n, shape, sizeof shape);
        fprintf(out, "  v%u [label=\"", inputs + weights + n);
        dot_text(out, node.op);
        fprintf(out, " v%u\\n", node.op_version);
        dot_text(out, shape);
        fprintf(out, "\", shape=ellipse];\n");
    }
    fprintf(out, "\n  // outputs\n");
    for (uint32_t i = 0; i < outputs; i++) {
        kiln_io_info io;
        char id[32];
        kiln_program_output(p, i, &io);
        kiln_program_output_shape_text(p, i, shape, sizeof shape);
        snprintf(id, sizeof id, "o%u", i);
        print_io_node(out, id, &io, shape, true);
    }

    fprintf(out, "\n  // data flow\n");
    for (uint32_t n = 0; n < nodes; n++) {
        kiln_node_info node;
        kiln_program_node(p, n, &node);
        for (uint32_t k = 0; k < node.input_count; k++) {
            fprintf(out, "  v%u -> v%u", kiln_program_node_input(p, n, k), inputs + weights + n);
            if (node.input_count > 1)
                fprintf(out, " [label=\"%u\"]", k);
            fprintf(out, ";\n");
        }
    }
    for (uint32_t i = 0; i < outputs; i++)
        fprintf(out, "  v%u -> o%u [style=bold, color=\"#15803d\"];\n", kiln_program_output_value(p, i), i);
    fprintf(out, "}\n");
}

static const cli_options dot_options = {.verb = "dot", .list = NULL, .count = 0, .max_operands = 1};

static int cmd_dot(int argc, char **argv)
{
    const char *path = NULL;
    int operands;
    int rc = cli_parse_options(&dot_options, argc, argv, NULL, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("dot", "missing FILE");
    artifact_view view;
    if (!artifact_view_open(&view, path)) {
        rc = cli_load_error(path, &view.error);
    } else if (!view.program) {
        /* The graph needs the decoded program; say why there is none. */
        cli_error("%s: cannot draw the graph: this runtime cannot decode the program:", path);
        for (uint32_t i = 0; view.report && i < kiln_report_count(view.report); i++) {
            kiln_problem_info problem;
            kiln_report_problem(view.report, i, &problem);
            if (problem.severity == KILN_SEVERITY_ERROR)
                term_printf(stderr, "  %s %s%s%s\n", problem.code, problem.location, problem.location[0] ? ": " : "",
                            problem.message);
        }
        rc = CLI_FAILED;
    } else {
        print_graph(stdout, view.program);
    }
    artifact_view_close(&view);
    return rc;
}
