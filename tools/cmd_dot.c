/*
 * cmd_dot.c — `kiln dot FILE`: the program's graph in Graphviz DOT on
 * standard output (dot_graph.c draws it), or rendered to SVG or PNG by
 * Graphviz's `dot` when it is installed (dot_render.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_view.h"
#include "cli.h"
#include "dot_graph.h"
#include "dot_render.h"
#include "options.h"
#include "term.h"

static int cmd_dot(int argc, char **argv);

const cli_verb cli_verb_dot = {
    "dot",
    "draw the program's graph (Graphviz DOT, SVG or PNG)",
    "usage: kiln dot FILE [--weights] [--svg OUT.svg] [--png OUT.png] [--quiet]\n\n"
    "Verify FILE and print its graph in Graphviz DOT on standard output.\n"
    "Each node is a box with its op (and op version when not 1), the name\n"
    "its source framework gave it (ONNX node names survive import-onnx), the\n"
    "attributes that say what it does (kernel, stride, pads, group, axis, ...;\n"
    "neutral values such as stride 1 are left out) and the stored tensors it\n"
    "reads, with their shapes (W <64x3x7x7>). Inputs and outputs are\n"
    "blue and green house shapes with dtype and shape; edges are labelled\n"
    "with the shape of the value they carry. The output is deterministic.\n"
    "Exit 1 if FILE cannot be read or this runtime cannot decode its program,\n"
    "or if --svg/--png is given and Graphviz's 'dot' is not on PATH.\n\n"
    "options:\n"
    "  --weights    draw stored tensors as nodes of their own (grey cylinders\n"
    "               with kind, dtype and shape) with an edge to each use\n"
    "  --svg OUT    render the graph to OUT as SVG with Graphviz's 'dot'\n"
    "               instead of printing DOT\n"
    "  --png OUT    the same, as PNG (both may be given)\n"
    "  -q, --quiet  accepted for symmetry with the other verbs\n",
    cmd_dot,
};

typedef struct dot_args {
    bool weights;
    const char *svg;
    const char *png;
} dot_args;

static const cli_option dot_option_list[] = {
    {.name = "--weights", .arity = CLI_FLAG, .offset = offsetof(dot_args, weights)},
    {.name = "--svg", .arity = CLI_VALUE, .repeat = CLI_ONCE, .twice = "--svg is given twice",
     .offset = offsetof(dot_args, svg)},
    {.name = "--png", .arity = CLI_VALUE, .repeat = CLI_ONCE, .twice = "--png is given twice",
     .offset = offsetof(dot_args, png)},
};

static const cli_options dot_options = CLI_OPTIONS("dot", dot_option_list, 1);

/* Render the graph of `program` to each file asked for. @return CLI_OK or CLI_FAILED. */
static int render(const kiln_program *program, const dot_graph_options *graph, const dot_args *args,
                  const char *dot_program)
{
    char *text = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&text, &size);
    if (!memory)
        return cli_error("out of memory for the graph");
    dot_graph_write(memory, program, graph);
    if (fclose(memory) != 0) {
        free(text);
        return cli_error("out of memory for the graph");
    }
    bool ok = (!args->svg || dot_render(dot_program, "svg", args->svg, text, size)) &&
              (!args->png || dot_render(dot_program, "png", args->png, text, size));
    free(text);
    return ok ? CLI_OK : CLI_FAILED;
}

static int cmd_dot(int argc, char **argv)
{
    dot_args args = {0};
    const char *path = NULL;
    int operands;
    int rc = cli_parse_options(&dot_options, argc, argv, &args, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("dot", "missing FILE");
    /* Before the artifact is read: a missing Graphviz is the first thing to fix. */
    char dot_program[4096];
    if ((args.svg || args.png) && !dot_render_find(dot_program, sizeof dot_program)) {
        cli_error("--%s needs Graphviz's 'dot' program, which is not on PATH", args.svg ? "svg" : "png");
        fprintf(stderr, "kiln: hint: install Graphviz (e.g. 'apt-get install graphviz'), or print DOT with "
                        "'kiln dot FILE' and render it elsewhere\n");
        return CLI_FAILED;
    }
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
        dot_graph_options graph = {.weights_as_nodes = args.weights};
        if (args.svg || args.png)
            rc = render(view.program, &graph, &args, dot_program);
        else
            dot_graph_write(stdout, view.program, &graph);
    }
    artifact_view_close(&view);
    return rc;
}
