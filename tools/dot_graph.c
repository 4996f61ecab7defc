/*
 * dot_graph.c — see dot_graph.h.
 *
 * The picture follows Netron's: an op is a box headed by its name, with
 * the node's name under it, then the attributes that say what the op does
 * (kernel, stride, pads, group, ...) and the stored tensors it reads, each
 * with its shape (`W ⟨64×3×7×7⟩`); edges carry the shape of their value.
 * Weights are folded into the boxes by default because a ResNet-18 has 62
 * of them next to 69 ops: drawn as nodes they double the graph's width
 * and say less than one line inside the box does.
 *
 * Labels are Graphviz HTML-like labels. Node ids follow spec/format.md
 * §9.1 value numbering (v0, v1, ...; outputs are o0, o1, ...), and
 * everything is written in that order.
 */
#include "dot_graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_view.h"

#define SHAPE_TEXT_SIZE 1100
/* Attribute lines are packed up to this many characters, names cut to NAME_MAX_SHOWN. */
#define ATTRIBUTE_LINE_WIDTH 30
#define NAME_MAX_SHOWN 48
/* Longest attribute list shown whole; longer ones end in "…". */
#define LIST_MAX_SHOWN 8

/* Length of the well-formed UTF-8 sequence at `s`, or 0 (overlong forms are
 * let through: Graphviz only needs well-formed lead and continuation bytes). */
static size_t utf8_length(const unsigned char *s)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
             : (s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/*
 * At most `max` characters of `text` in an HTML-like label: & < > " as
 * entities; control characters (C0, DEL, C1) and bytes that are not UTF-8
 * as '?', since the graph is often printed to a terminal and Graphviz
 * reads UTF-8. A cut text ends in "…".
 */
static void html_text_cut(FILE *out, const char *text, size_t max)
{
    size_t shown = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; shown++) {
        if (shown == max) {
            fputs("…", out);
            return;
        }
        size_t n = utf8_length(c);
        if (n == 0 || (n == 1 && (*c < 0x20 || *c == 0x7f)) || (n == 2 && c[0] == 0xc2 && c[1] <= 0x9f)) {
            fputc('?', out);
            c += n ? n : 1;
            continue;
        }
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fwrite(c, 1, n, out);
        }
        c += n;
    }
}

static void html_text(FILE *out, const char *text)
{
    html_text_cut(out, text, SIZE_MAX);
}

/* Text inside a DOT double-quoted string (the graph's title). */
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

/* "[batch, 64, 56, 56]" as "batch×64×56×56" ("scalar" for rank 0), compound axes in parentheses. */
static void compact_shape(const char *shape, char *out, size_t size)
{
    size_t used = 0;
    const char *axis = shape + (shape[0] == '[');
    out[0] = '\0';
    if (strcmp(shape, "[]") == 0) {
        snprintf(out, size, "scalar");
        return;
    }
    while (*axis && *axis != ']' && used + 1 < size) {
        size_t length = strcspn(axis, ",]");
        bool compound = memchr(axis, ' ', length) != NULL;
        int n = snprintf(out + used, size - used, "%s%s%.*s%s", used ? "×" : "", compound ? "(" : "", (int)length,
                         axis, compound ? ")" : "");
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
        axis += length;
        if (*axis == ',')
            axis += 1 + (axis[1] == ' ');
    }
}

/* ---------------------------------------------------------- attributes */

/*
 * How a few attribute names read in a box, and the values that say
 * nothing (stride 1, no padding, one group): those are left out. Every
 * other attribute is shown under its own name. These are attribute names,
 * shared by every op that takes them, not a list of ops.
 */
static const struct {
    const char *name;
    const char *label;
    int64_t neutral;    /* every element equal to it: not shown */
    bool has_neutral;
    bool spatial;       /* a size per spatial axis: written 3×3 */
} attribute_styles[] = {
    {"kernel_shape", "kernel", 0, false, true}, {"strides", "stride", 1, true, true},
    {"dilations", "dilation", 1, true, true},   {"pads", "pads", 0, true, false},
    {"group", "group", 1, true, false},         {"ceil_mode", "ceil_mode", 0, true, false},
    {"output_padding", "output_padding", 0, true, true},
    {"alpha", "alpha", 1, true, false},         {"beta", "beta", 1, true, false},
    {"transA", "transA", 0, true, false},       {"transB", "transB", 0, true, false},
};

static int attribute_style(const char *name)
{
    for (size_t i = 0; i < sizeof attribute_styles / sizeof attribute_styles[0]; i++)
        if (strcmp(attribute_styles[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Whether `a` holds only its neutral value (and is therefore not shown). */
static bool attribute_is_neutral(const kiln_attribute *a, int style)
{
    if (style < 0 || !attribute_styles[style].has_neutral)
        return false;
    int64_t neutral = attribute_styles[style].neutral;
    if (a->type == KILN_ATTRIBUTE_INT)
        return a->i == neutral;
    if (a->type == KILN_ATTRIBUTE_FLOAT)
        return a->f == (double)neutral;
    if (a->type != KILN_ATTRIBUTE_INTS)
        return false;
    for (uint32_t k = 0; k < a->count; k++)
        if (a->ints[k] != neutral)
            return false;
    return true;
}

/* `a` as "label value" into `text`: "kernel 3×3", "pads 1,1,1,1", "axis -1", "perm 0,2,1,3". */
static void attribute_text(const kiln_attribute *a, int style, char *text, size_t size)
{
    size_t used = (size_t)snprintf(text, size, "%s ", style >= 0 ? attribute_styles[style].label : a->name);
    const char *separator = style >= 0 && attribute_styles[style].spatial ? "×" : ",";
    switch (a->type) {
    case KILN_ATTRIBUTE_INT: snprintf(text + used, size - used, "%lld", (long long)a->i); return;
    case KILN_ATTRIBUTE_FLOAT: snprintf(text + used, size - used, "%g", a->f); return;
    case KILN_ATTRIBUTE_STRING: snprintf(text + used, size - used, "%s", a->s); return;
    case KILN_ATTRIBUTE_INTS:
    case KILN_ATTRIBUTE_FLOATS:
        if (a->count == 0)
            snprintf(text + used, size - used, "[]");
        for (uint32_t k = 0; k < a->count && used < size; k++) {
            if (k == LIST_MAX_SHOWN) {
                snprintf(text + used, size - used, ",… (%u)", a->count);
                return;
            }
            int n = a->type == KILN_ATTRIBUTE_INTS
                        ? snprintf(text + used, size - used, "%s%lld", k ? separator : "", (long long)a->ints[k])
                        : snprintf(text + used, size - used, "%s%g", k ? separator : "", a->floats[k]);
            if (n < 0)
                return;
            used += (size_t)n;
        }
        return;
    }
}

/* Characters of UTF-8 `text` (what the label is as wide as). */
static size_t text_width(const char *text)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        n += (*c & 0xc0) != 0x80;
    return n;
}

/* The last `count` characters of UTF-8 `text`. */
static const char *last_characters(const char *text, size_t count)
{
    const char *c = text + strlen(text);
    while (c > text && count) {
        c--;
        count -= ((unsigned char)*c & 0xc0) != 0x80;
    }
    return c;
}

/* Rows under the header are left-aligned, as Netron's are: name, then value. */
static void begin_row(FILE *out)
{
    fputs("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\">", out);
}

static void end_row(FILE *out)
{
    fputs("</FONT></TD></TR>", out);
}

/* Append attribute `a` to the rows being packed (ATTRIBUTE_LINE_WIDTH characters each), unless it is neutral. */
static void pack_attribute(FILE *out, const kiln_attribute *a, int style, size_t *line)
{
    char text[256];
    if (attribute_is_neutral(a, style))
        return;
    attribute_text(a, style, text, sizeof text);
    size_t width = text_width(text);
    if (*line && *line + 2 + width > ATTRIBUTE_LINE_WIDTH) {
        end_row(out);
        *line = 0;
    }
    if (*line == 0)
        begin_row(out);
    else
        fputs("  ", out);
    html_text(out, text);
    *line += (*line ? 2 : 0) + width;
}

/*
 * The node's attributes that say something: those of attribute_styles
 * first, in its order (kernel before stride before pads, as they are
 * read), then the others in stored order (sorted by name).
 */
static void attribute_rows(FILE *out, const kiln_program *p, uint32_t node)
{
    uint32_t count = kiln_program_node_attribute_count(p, node);
    size_t line = 0;
    kiln_attribute a;
    for (size_t style = 0; style < sizeof attribute_styles / sizeof attribute_styles[0]; style++)
        for (uint32_t i = 0; i < count; i++)
            if (kiln_program_node_attribute(p, node, i, &a) && strcmp(a.name, attribute_styles[style].name) == 0)
                pack_attribute(out, &a, (int)style, &line);
    for (uint32_t i = 0; i < count; i++)
        if (kiln_program_node_attribute(p, node, i, &a) && attribute_style(a.name) < 0)
            pack_attribute(out, &a, -1, &line);
    if (line)
        end_row(out);
}

/* ------------------------------------------------------------- weights */

/*
 * What a stored operand is to a few ops that read weights, as ONNX and
 * Netron name it (W, B); for other ops a folded weight is shown under its
 * own name. Operands the ops read as data (X, A) are never weights in
 * practice but are named too, so that the position is right.
 */
static const struct {
    const char *op;
    const char *roles[5];
} operand_roles[] = {
    {"conv", {"X", "W", "B"}},  {"conv_transpose", {"X", "W", "B"}},
    {"gemm", {"A", "B", "C"}},  {"matmul", {"A", "B"}},
    {"batch_norm", {"X", "scale", "B", "mean", "var"}},
    {"layer_norm", {"X", "scale", "B"}}, {"group_norm", {"X", "scale", "B"}},
    {"instance_norm", {"X", "scale", "B"}},
};

static const char *operand_role(const char *op, uint32_t index)
{
    for (size_t i = 0; i < sizeof operand_roles / sizeof operand_roles[0]; i++)
        if (strcmp(operand_roles[i].op, op) == 0)
            return index < 5 ? operand_roles[i].roles[index] : NULL;
    return NULL;
}

/* Shape of stored tensor `w`, as "64×3×7×7" ("f32 scalar" for rank 0). */
static void weight_shape(const kiln_weight_info *w, char *out, size_t size)
{
    size_t used = 0;
    if (w->rank == 0)
        snprintf(out, size, "%s scalar", kiln_dtype_name(w->dtype));
    for (uint32_t a = 0; a < w->rank && used < size; a++) {
        int n = snprintf(out + used, size - used, "%s%lld", a ? "×" : "", (long long)w->shape[a]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* One row per stored operand of `node`: "W ⟨64×3×7×7⟩". @return the number of rows. */
static uint32_t weight_rows(FILE *out, const kiln_program *p, uint32_t node, const kiln_node_info *info)
{
    uint32_t inputs = kiln_program_input_count(p), weights = kiln_program_weight_count(p), rows = 0;
    for (uint32_t k = 0; k < info->input_count; k++) {
        uint32_t v = kiln_program_node_input(p, node, k);
        if (v < inputs || v >= inputs + weights)
            continue;
        kiln_weight_info w;
        char shape[256];
        kiln_program_weight(p, v - inputs, &w);
        weight_shape(&w, shape, sizeof shape);
        const char *role = operand_role(info->op, k);
        begin_row(out);
        fputs("<FONT COLOR=\"#374151\">", out);
        html_text_cut(out, role ? role : w.name, 24);
        fputs("</FONT> ⟨", out);
        html_text(out, shape);
        fputs("⟩", out);
        end_row(out);
        rows++;
    }
    return rows;
}

/* ---------------------------------------------------------------- nodes */

static void print_io_node(FILE *out, const char *id, const kiln_io_info *io, const char *shape, bool output)
{
    fprintf(out, "  %s [shape=%s, style=\"filled\", fillcolor=\"%s\", color=\"%s\", label=<<B>", id,
            output ? "invhouse" : "house", output ? "#dcfce7" : "#dbeafe", output ? "#15803d" : "#1d4ed8");
    html_text(out, io->name);
    fprintf(out, "</B><BR/><FONT POINT-SIZE=\"8\">%s", kiln_dtype_name(io->dtype));
    html_text(out, shape);
    fputs("</FONT>>];\n", out);
}

static void print_weight_node(FILE *out, uint32_t id, const kiln_weight_info *w)
{
    char shape[256];
    weight_shape(w, shape, sizeof shape);
    fprintf(out, "  v%u [shape=cylinder, style=filled, fillcolor=\"#f3f4f6\", color=\"#6b7280\", label=<", id);
    html_text(out, w->name);
    fprintf(out, "<BR/><FONT POINT-SIZE=\"8\">%s %s ⟨", weight_kind_name(w->kind), kiln_dtype_name(w->dtype));
    html_text(out, shape);
    fputs("⟩</FONT>>];\n", out);
}

static void print_op_node(FILE *out, const kiln_program *p, uint32_t node, bool fold_weights)
{
    kiln_node_info info;
    kiln_program_node(p, node, &info);
    const char *name = kiln_program_node_name(p, node);
    uint32_t first = kiln_program_input_count(p) + kiln_program_weight_count(p);

    /* The body is written first into memory: the header's colour says whether the op holds weights. */
    char *body = NULL;
    size_t body_size = 0;
    FILE *rows = open_memstream(&body, &body_size);
    uint32_t weight_count = 0;
    if (rows) {
        if (name) {
            fputs("<TR><TD><FONT POINT-SIZE=\"7\" COLOR=\"#4b5563\">", rows);
            size_t length = text_width(name);
            if (length > NAME_MAX_SHOWN) { /* the end of a path names the node best */
                fputs("…", rows);
                html_text(rows, last_characters(name, NAME_MAX_SHOWN - 1));
            } else {
                html_text(rows, name);
            }
            fputs("</FONT></TD></TR>", rows);
        }
        attribute_rows(rows, p, node);
        if (fold_weights)
            weight_count = weight_rows(rows, p, node, &info);
        fclose(rows);
    }
    fprintf(out,
            "  v%u [label=<<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\" COLOR=\"#6b7280\">"
            "<TR><TD BGCOLOR=\"%s\"><B>",
            first + node, weight_count ? "#bfdbfe" : "#e5e7eb");
    html_text(out, info.op);
    if (info.op_version != 1)
        fprintf(out, " v%u", info.op_version);
    fprintf(out, "</B></TD></TR>%s</TABLE>>];\n", body ? body : "");
    free(body);
}

/* ------------------------------------------------------------------ edges */

/* The shape of value `v` as an edge label ("" for a stored tensor: its box or node shows it). */
static void value_shape(const kiln_program *p, uint32_t v, char *out, size_t size)
{
    uint32_t inputs = kiln_program_input_count(p), weights = kiln_program_weight_count(p);
    char shape[SHAPE_TEXT_SIZE];
    out[0] = '\0';
    if (v < inputs)
        kiln_program_input_shape_text(p, v, shape, sizeof shape);
    else if (v >= inputs + weights)
        kiln_program_node_shape_text(p, v - inputs - weights, shape, sizeof shape);
    else
        return;
    compact_shape(shape, out, size);
}

static bool is_weight(const kiln_program *p, uint32_t v)
{
    uint32_t inputs = kiln_program_input_count(p);
    return v >= inputs && v < inputs + kiln_program_weight_count(p);
}

/*
 * Which stored tensors are shown only inside the boxes of the ops that
 * read them: those some op reads and no output exposes. One pass over the
 * graph. @return a calloc'd array of weight_count flags, or NULL.
 */
static bool *folded_weights(const kiln_program *p)
{
    uint32_t inputs = kiln_program_input_count(p), weights = kiln_program_weight_count(p);
    bool *folded = calloc(weights + 1, sizeof *folded);
    if (!folded)
        return NULL;
    for (uint32_t n = 0; n < kiln_program_node_count(p); n++) {
        kiln_node_info node;
        kiln_program_node(p, n, &node);
        for (uint32_t k = 0; k < node.input_count; k++) {
            uint32_t v = kiln_program_node_input(p, n, k);
            if (v >= inputs && v < inputs + weights)
                folded[v - inputs] = true;
        }
    }
    for (uint32_t o = 0; o < kiln_program_output_count(p); o++) {
        uint32_t v = kiln_program_output_value(p, o);
        if (v >= inputs && v < inputs + weights)
            folded[v - inputs] = false;
    }
    return folded;
}

void dot_graph_write(FILE *out, const kiln_program *p, const dot_graph_options *options)
{
    uint32_t inputs = kiln_program_input_count(p), weights = kiln_program_weight_count(p);
    uint32_t nodes = kiln_program_node_count(p), outputs = kiln_program_output_count(p);
    bool fold = !options->weights_as_nodes;
    uint16_t major, minor;
    char shape[SHAPE_TEXT_SIZE];
    kiln_program_format_version(p, &major, &minor);

    fprintf(out, "digraph \"");
    dot_text(out, kiln_program_name(p));
    fprintf(out, "\" {\n  graph [rankdir=TB, nodesep=0.2, ranksep=0.3, labelloc=t, fontname=\"Helvetica\", "
                 "fontsize=11, label=\"");
    dot_text(out, kiln_program_name(p));
    fprintf(out, " (kiln format %u.%u)\"];\n", major, minor);
    fprintf(out, "  node [shape=plain, fontname=\"Helvetica\", fontsize=9, margin=\"0.05,0.02\"];\n"
                 "  edge [fontname=\"Helvetica\", fontsize=7, fontcolor=\"#4b5563\", color=\"#6b7280\", "
                 "arrowsize=0.5];\n");

    fprintf(out, "\n  // inputs\n");
    for (uint32_t i = 0; i < inputs; i++) {
        kiln_io_info io;
        char id[32];
        kiln_program_input(p, i, &io);
        kiln_program_input_shape_text(p, i, shape, sizeof shape);
        snprintf(id, sizeof id, "v%u", i);
        print_io_node(out, id, &io, shape, false);
    }
    /* A weight is drawn as a node of its own when asked, when it is an
     * output (the output's edge needs somewhere to start), and when no op
     * reads it (it would not appear at all). */
    bool drawn_header = false;
    bool *folded = fold ? folded_weights(p) : NULL;
    if (fold && !folded) /* out of memory: draw every weight rather than lose some */
        fold = false;
    for (uint32_t i = 0; i < weights; i++) {
        if (fold && folded[i])
            continue;
        if (!drawn_header)
            fprintf(out, "\n  // stored tensors\n");
        drawn_header = true;
        kiln_weight_info w;
        kiln_program_weight(p, i, &w);
        print_weight_node(out, inputs + i, &w);
    }
    free(folded);
    if (nodes)
        fprintf(out, "\n  // ops\n");
    for (uint32_t n = 0; n < nodes; n++)
        print_op_node(out, p, n, fold);
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
            uint32_t v = kiln_program_node_input(p, n, k);
            if (fold && is_weight(p, v))
                continue;
            value_shape(p, v, shape, sizeof shape);
            fprintf(out, "  v%u -> v%u", v, inputs + weights + n);
            if (shape[0]) {
                fputs(" [label=\"", out);
                dot_text(out, shape);
                fputs("\"]", out);
            }
            fputs(";\n", out);
        }
    }
    for (uint32_t i = 0; i < outputs; i++)
        fprintf(out, "  v%u -> o%u [color=\"#15803d\"];\n", kiln_program_output_value(p, i), i);
    fprintf(out, "}\n");
}
