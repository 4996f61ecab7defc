/*
 * text_print.c — the disassembler: a loaded program in the canonical text
 * form of spec/text-format.md §5.
 *
 * Everything printed is what the artifact stores, in the order it stores
 * it: metadata (sorted), dims, derived dims, inputs, their semantic
 * checks, weights, nodes
 * (results numbered %0, %1, ... by node index, attributes in stored
 * order), outputs and evidence cases. Reassembling the text replays the
 * same builder calls in the same order, and the writer is deterministic,
 * so the artifact comes back byte for byte. What the text cannot spell
 * exactly (a case whose outputs have different rules, an attribute value
 * with no literal) is refused rather than printed approximately.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "error.h"
#include "loader.h"
#include "program.h"
#include "tensor.h"
#include "text_literal.h"
#include "text_symbols.h"
#include "identifier.h"

/* Hex digits of the digest shown for a tensor that is not written. */
#define DIGEST_HEX_DIGITS 16
/* Longest piece of a case or tensor name kept in an evidence file name. */
#define FILE_NAME_PART_MAX 64

typedef struct printer {
    const kiln_model *model;
    const char **dim_names;
    const char *weights_dir;
    kiln_text_symbols files; /* file names referenced so far: each names one tensor */
    kiln_text_buffer out;
    kiln_error *err;
} printer;

static kiln_status no_memory(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory printing the program as text");
}

/* A value as the text names it: input or weight name, or %node. */
static void print_reference(printer *pr, uint32_t value)
{
    const kiln_model *m = pr->model;
    if (value < m->input_count)
        kiln_text_buffer_puts(&pr->out, m->inputs[value].name);
    else if (value < kiln_model_first_node_value(m))
        kiln_text_buffer_puts(&pr->out, m->weights[value - m->input_count].name);
    else
        kiln_text_buffer_printf(&pr->out, "%%%u", value - kiln_model_first_node_value(m));
}

static void print_expression(printer *pr, uint32_t id)
{
    int length = kiln_expr_format(&pr->model->exprs, id, pr->dim_names, NULL, 0);
    char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (!text) {
        pr->out.failed = true;
        return;
    }
    kiln_expr_format(&pr->model->exprs, id, pr->dim_names, text, (size_t)length + 1);
    kiln_text_buffer_puts(&pr->out, text);
    free(text);
}

/* The artifact's lines: header, name, metadata, mode, and the first method's name when there are several. */
static void print_program(printer *pr, const kiln_program *program)
{
    const kiln_model *m = pr->model;
    /* A program of one method, without states or relations, is text format 1.0, as it always was. */
    bool several = kiln_program_method_count(program) > 1;
    bool newer = several || m->state_count;
    for (uint32_t i = 0; i < kiln_program_method_count(program); i++)
        newer = newer || kiln_program_relation_count(kiln_program_method_at(program, i));
    kiln_text_buffer_puts(&pr->out, newer ? "kiln " KILN_TEXT_VERSION "\nprogram " : "kiln 1.0\nprogram ");
    kiln_text_quote(&pr->out, m->name);
    kiln_text_buffer_puts(&pr->out, "\n");
    for (uint32_t i = 0; i < m->metadata_count; i++) {
        kiln_text_buffer_puts(&pr->out, "meta ");
        /* Keys are bare when they are names, quoted otherwise. */
        if (kiln_is_identifier(m->metadata[i].key))
            kiln_text_buffer_puts(&pr->out, m->metadata[i].key);
        else
            kiln_text_quote(&pr->out, m->metadata[i].key);
        kiln_text_buffer_puts(&pr->out, " = ");
        kiln_text_quote(&pr->out, m->metadata[i].value);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    kiln_text_buffer_printf(&pr->out, "mode %s\n", m->mode == KILN_MODE_TRAINING ? "training" : "inference");
    if (several)
        kiln_text_buffer_printf(&pr->out, "method %s\n", kiln_program_method_name(program));
}

/* A method's contract: strictness (with its guards as comments), dims, derived dims, relations, inputs. */
static void print_contract(printer *pr)
{
    const kiln_model *m = pr->model;
    if (m->non_strict) {
        kiln_text_buffer_puts(&pr->out, "strict false\n");
        /* The guards follow from the program: assembling derives them again. */
        for (uint32_t i = 0; i < m->guards.count; i++)
            kiln_text_buffer_printf(&pr->out, "# runtime guard of %%%u: %s\n", m->guards.items[i].node,
                                    m->guards.items[i].text);
    }
    for (uint32_t d = 0; d < m->dim_count; d++) {
        const kiln_dim_decl *dim = &m->dims[d];
        kiln_text_buffer_printf(&pr->out, "dim %s in %lld..%lld", dim->name, (long long)dim->min,
                                (long long)dim->max);
        if (dim->multiple_of > 1)
            kiln_text_buffer_printf(&pr->out, " multiple_of %lld", (long long)dim->multiple_of);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    /* Derived dims follow the plain ones, as their expressions use them.
     * Input shapes are stored expanded, so they print the expression, not
     * the name; the file stores exactly that, so the round trip holds. */
    for (uint32_t d = 0; d < m->derived_count; d++) {
        kiln_text_buffer_printf(&pr->out, "dim %s = ", m->derived[d].name);
        print_expression(pr, m->derived[d].expr);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    for (uint32_t i = 0; i < m->relation_count; i++) {
        kiln_text_buffer_puts(&pr->out, "relation ");
        print_expression(pr, m->relations[i].lhs);
        kiln_text_buffer_puts(&pr->out, " <= ");
        print_expression(pr, m->relations[i].rhs);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    for (uint32_t i = 0; i < m->input_count; i++) {
        const kiln_input_decl *in = &m->inputs[i];
        kiln_text_buffer_printf(&pr->out, "input %s: %s[", in->name, kiln_dtype_name(in->type.dtype));
        for (uint32_t a = 0; a < in->type.shape.rank; a++) {
            if (a)
                kiln_text_buffer_puts(&pr->out, ", ");
            print_expression(pr, in->type.shape.axes[a]);
        }
        kiln_text_buffer_puts(&pr->out, "]\n");
    }
}

/* The program's states, before its weights: every method block sees them. */
static void print_states(printer *pr)
{
    const kiln_model *m = pr->model;
    for (uint32_t i = 0; i < m->state_count; i++) {
        const kiln_state_decl *st = &m->states[i];
        kiln_text_buffer_printf(&pr->out, "state %s: %s[", st->name, kiln_dtype_name(st->dtype));
        for (uint32_t a = 0; a < st->rank; a++)
            kiln_text_buffer_printf(&pr->out, "%s%lld", a ? ", " : "", (long long)st->shape[a]);
        kiln_text_buffer_printf(&pr->out, "] grows %u length %s\n", st->axis, st->length_dim);
    }
}

static uint64_t element_count(uint32_t rank, const int64_t *shape)
{
    uint64_t count = 1;
    for (uint32_t a = 0; a < rank; a++)
        count *= (uint64_t)shape[a]; /* the loader proved this does not overflow */
    return count;
}

/* "f32[4, 2]" */
static void print_type(printer *pr, kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_text_buffer_printf(&pr->out, "%s[", kiln_dtype_name(dtype));
    for (uint32_t a = 0; a < rank; a++)
        kiln_text_buffer_printf(&pr->out, "%s%lld", a ? ", " : "", (long long)shape[a]);
    kiln_text_buffer_puts(&pr->out, "]");
}

/* Print ` = v` or ` = [v, ...]` if the tensor is small and each element
 * reads back exactly; otherwise print nothing and return false. */
static bool print_inline_values(printer *pr, kiln_dtype dtype, uint32_t rank, const int64_t *shape,
                                const uint8_t *data)
{
    uint64_t count = element_count(rank, shape);
    size_t size = kiln_dtype_size(dtype);
    char literal[KILN_TEXT_LITERAL_MAX];
    if (count > KILN_TEXT_INLINE_MAX_ELEMENTS)
        return false;
    for (uint64_t i = 0; i < count; i++)
        if (!kiln_text_literal_format(dtype, data + i * size, literal))
            return false;
    kiln_text_buffer_puts(&pr->out, rank == 0 ? " = " : " = [");
    for (uint64_t i = 0; i < count; i++) {
        kiln_text_literal_format(dtype, data + i * size, literal);
        kiln_text_buffer_printf(&pr->out, "%s%s", i ? ", " : "", literal);
    }
    if (rank != 0)
        kiln_text_buffer_puts(&pr->out, "]");
    return true;
}

/* Claim `name` as the file of one tensor; *taken says it already names another. */
static kiln_status claim_file_name(printer *pr, const char *name, bool *taken)
{
    *taken = kiln_text_symbols_find(&pr->files, name, strlen(name)) != NULL;
    if (*taken)
        return KILN_OK;
    return kiln_text_symbols_add(&pr->files, name, strlen(name), 0, (kiln_text_position){0, 0}, pr->err);
}

/* Write a tensor as `file_name` in the weights directory. */
static kiln_status write_npy(printer *pr, const char *file_name, kiln_dtype dtype, uint32_t rank,
                             const int64_t *shape, const uint8_t *data)
{
    kiln_text_buffer path;
    kiln_tensor view;
    kiln_text_buffer_init(&path);
    kiln_text_buffer_printf(&path, "%s/%s", pr->weights_dir, file_name);
    if (path.failed)
        return no_memory(pr->err);
    /* The writer only reads the data; the view borrows the program's
     * bytes instead of copying a possibly large tensor. */
    kiln_tensor_view_init(&view, dtype, rank, shape, (void *)(uintptr_t)data);
    kiln_status status = kiln_npy_write_file(path.data, &view, pr->err);
    kiln_text_buffer_release(&path);
    return status;
}

/*
 * ` = file "FILE"`, then either write FILE (with a weights directory) or
 * end the line with the digest of the bytes, so a reader can still tell
 * which values the file must hold.
 */
static kiln_status print_file_reference(printer *pr, const char *file_name, kiln_dtype dtype, uint32_t rank,
                                        const int64_t *shape, const uint8_t *data, size_t byte_size)
{
    kiln_text_buffer_puts(&pr->out, " = file ");
    kiln_text_quote(&pr->out, file_name);
    if (pr->weights_dir) {
        kiln_text_buffer_puts(&pr->out, "\n");
        return write_npy(pr, file_name, dtype, rank, shape, data);
    }
    uint8_t digest[crypto_generichash_BYTES];
    if (sodium_init() < 0)
        return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT, "libsodium could not be initialised");
    crypto_generichash(digest, sizeof digest, data, byte_size, NULL, 0);
    kiln_text_buffer_puts(&pr->out, "  # blake2b-256:");
    for (int i = 0; i < DIGEST_HEX_DIGITS / 2; i++)
        kiln_text_buffer_printf(&pr->out, "%02x", digest[i]);
    kiln_text_buffer_puts(&pr->out, " (not written)\n");
    return KILN_OK;
}

static kiln_status print_weight(printer *pr, const kiln_weight_decl *w)
{
    static const char *const keywords[] = {"weight", "buffer", "const"};
    kiln_text_buffer_printf(&pr->out, "%s %s: ", keywords[w->kind], w->name);
    print_type(pr, w->dtype, w->rank, w->shape);
    if (w->kind == KILN_WEIGHT_CONSTANT && print_inline_values(pr, w->dtype, w->rank, w->shape, w->data)) {
        kiln_text_buffer_puts(&pr->out, "\n");
        return KILN_OK;
    }
    kiln_text_buffer file;
    bool taken;
    kiln_text_buffer_init(&file);
    kiln_text_buffer_printf(&file, "%s.npy", w->name);
    kiln_status status = file.failed ? no_memory(pr->err) : claim_file_name(pr, file.data, &taken);
    /* Weight names are unique and weights are printed first. */
    if (status == KILN_OK)
        status = print_file_reference(pr, file.data, w->dtype, w->rank, w->shape, w->data, w->byte_size);
    kiln_text_buffer_release(&file);
    return status;
}

/* ------------------------------------------------------------ attributes */

/* A float attribute element: the shortest literal, made to read as a
 * float (`1` becomes `1.0`) so that it does not come back as an integer. */
static bool format_attribute_float(double value, char out[KILN_TEXT_LITERAL_MAX + 2])
{
    char literal[KILN_TEXT_LITERAL_MAX];
    if (!kiln_text_literal_format(KILN_F64, (const uint8_t *)&value, literal))
        return false;
    /* '.', an exponent, or the words inf and nan all read as floats. */
    bool reads_as_float = strpbrk(literal, ".eEn") != NULL;
    snprintf(out, KILN_TEXT_LITERAL_MAX + 2, "%s%s", literal, reads_as_float ? "" : ".0");
    return true;
}

/* ---------------------------------------------------------------- checks */

/* One bound of a range, as a float literal. `inf..` would read as one name
 * ('.' continues a name), so a minimum of inf is followed by a blank. */
static bool print_bound(printer *pr, double value, bool is_min)
{
    char literal[KILN_TEXT_LITERAL_MAX + 2];
    if (!format_attribute_float(value, literal))
        return false;
    kiln_text_buffer_puts(&pr->out, literal);
    if (is_min && strcmp(literal, "inf") == 0)
        kiln_text_buffer_puts(&pr->out, " ");
    return true;
}

/* `check NAME: RULE, ...` per checked input, in input order (§5). */
static kiln_status print_checks(printer *pr)
{
    const kiln_model *m = pr->model;
    for (uint32_t i = 0; i < m->check_count; i++) {
        const kiln_input_check_decl *c = &m->checks[i];
        const char *separator = " ";
        kiln_text_buffer_printf(&pr->out, "check %s:", m->inputs[c->input].name);
        if (c->has_range) {
            kiln_text_buffer_printf(&pr->out, "%srange ", separator);
            if (!print_bound(pr, c->min, true) || !kiln_text_buffer_puts(&pr->out, "..") ||
                !print_bound(pr, c->max, false))
                return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT,
                                 "input '%s': the range of its check has no literal", m->inputs[c->input].name);
            separator = ", ";
        }
        if (c->finite_only) {
            kiln_text_buffer_printf(&pr->out, "%sfinite", separator);
            separator = ", ";
        }
        if (c->category_count) {
            kiln_text_buffer_printf(&pr->out, "%scategories [", separator);
            for (uint32_t k = 0; k < c->category_count; k++)
                kiln_text_buffer_printf(&pr->out, "%s%lld", k ? ", " : "", (long long)c->categories[k]);
            kiln_text_buffer_puts(&pr->out, "]");
            separator = ", ";
        }
        /* Always quoted: a bare unit is only a convenience for writers. */
        if (c->unit[0]) {
            kiln_text_buffer_printf(&pr->out, "%sunit ", separator);
            kiln_text_quote(&pr->out, c->unit);
            separator = ", ";
        }
        if (c->description[0]) {
            kiln_text_buffer_printf(&pr->out, "%sdescription ", separator);
            kiln_text_quote(&pr->out, c->description);
        }
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    return KILN_OK;
}

static kiln_status unprintable_attribute(printer *pr, uint32_t node, const kiln_node_attribute *a, const char *why)
{
    return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT,
                     "node %u: attribute '%s' cannot be written in the text format: %s", node, a->name, why);
}

static kiln_status print_attribute(printer *pr, uint32_t node, const kiln_node_attribute *a)
{
    char literal[KILN_TEXT_LITERAL_MAX + 2];
    if (!kiln_is_identifier(a->name))
        return unprintable_attribute(pr, node, a, "its name is not an identifier");
    kiln_text_buffer_printf(&pr->out, "%s=", a->name);
    switch (a->type) {
    case KILN_ATTRIBUTE_INT:
        kiln_text_buffer_printf(&pr->out, "%lld", (long long)a->i);
        return KILN_OK;
    case KILN_ATTRIBUTE_FLOAT:
        if (!format_attribute_float(a->f, literal))
            return unprintable_attribute(pr, node, a, "a NaN other than the default quiet NaN has no literal");
        kiln_text_buffer_puts(&pr->out, literal);
        return KILN_OK;
    case KILN_ATTRIBUTE_STRING:
        kiln_text_quote(&pr->out, a->s);
        return KILN_OK;
    case KILN_ATTRIBUTE_INTS:
        kiln_text_buffer_puts(&pr->out, "[");
        for (uint32_t k = 0; k < a->count; k++)
            kiln_text_buffer_printf(&pr->out, "%s%lld", k ? ", " : "", (long long)a->ints[k]);
        kiln_text_buffer_puts(&pr->out, "]");
        return KILN_OK;
    case KILN_ATTRIBUTE_FLOATS:
        /* `[]` reads back as an empty INTS list. */
        if (a->count == 0)
            return unprintable_attribute(pr, node, a, "an empty float list reads back as an integer list");
        kiln_text_buffer_puts(&pr->out, "[");
        for (uint32_t k = 0; k < a->count; k++) {
            if (!format_attribute_float(a->floats[k], literal))
                return unprintable_attribute(pr, node, a, "a NaN other than the default quiet NaN has no literal");
            kiln_text_buffer_printf(&pr->out, "%s%s", k ? ", " : "", literal);
        }
        kiln_text_buffer_puts(&pr->out, "]");
        return KILN_OK;
    }
    return unprintable_attribute(pr, node, a, "its type is unknown");
}

static kiln_status print_graph(printer *pr)
{
    const kiln_model *m = pr->model;
    for (uint32_t n = 0; n < m->node_count; n++) {
        const kiln_node_decl *node = &m->nodes[n];
        kiln_text_buffer_printf(&pr->out, "%%%u = %s(", n, m->opset[node->op].name);
        for (uint32_t i = 0; i < node->input_count; i++) {
            if (i)
                kiln_text_buffer_puts(&pr->out, ", ");
            print_reference(pr, node->inputs[i]);
        }
        for (uint32_t i = 0; i < node->attribute_count; i++) {
            if (i || node->input_count)
                kiln_text_buffer_puts(&pr->out, ", ");
            KILN_TRY(print_attribute(pr, n, &node->attributes[i]));
        }
        kiln_text_buffer_puts(&pr->out, ")");
        if (node->name) {
            kiln_text_buffer_puts(&pr->out, " name ");
            kiln_text_quote(&pr->out, node->name);
        }
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    for (uint32_t i = 0; i < m->output_count; i++) {
        kiln_text_buffer_printf(&pr->out, "output %s = ", m->outputs[i].name);
        print_reference(pr, m->outputs[i].value);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- evidence */

/* Append at most FILE_NAME_PART_MAX bytes of `name`, each byte outside
 * [A-Za-z0-9_.-] replaced by '_'. */
static void append_file_name_part(kiln_text_buffer *out, const char *name)
{
    for (size_t i = 0; name[i] && i < FILE_NAME_PART_MAX; i++) {
        char c = name[i];
        bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
        kiln_text_buffer_append(out, safe ? &c : "_", 1);
    }
}

/*
 * `evidence-CASE-NAME.npy`, made safe as a file name; when two tensors
 * would share a name (after sanitising, or with a weight's file), the
 * later one gets `-2`, `-3`, ... before `.npy`.
 */
static kiln_status evidence_file_name(printer *pr, const char *case_name, const char *tensor, char **out)
{
    kiln_text_buffer stem, name;
    kiln_text_buffer_init(&stem);
    kiln_text_buffer_init(&name);
    kiln_text_buffer_puts(&stem, "evidence-");
    append_file_name_part(&stem, case_name);
    kiln_text_buffer_puts(&stem, "-");
    append_file_name_part(&stem, tensor);
    kiln_status status = stem.failed ? no_memory(pr->err) : KILN_OK;
    bool taken = true;
    for (uint32_t k = 1; status == KILN_OK && taken; k++) {
        kiln_text_buffer_clear(&name);
        if (k == 1)
            kiln_text_buffer_printf(&name, "%s.npy", stem.data);
        else
            kiln_text_buffer_printf(&name, "%s-%u.npy", stem.data, k);
        status = name.failed ? no_memory(pr->err) : claim_file_name(pr, name.data, &taken);
    }
    *out = status == KILN_OK ? kiln_text_buffer_take(&name) : NULL;
    if (status == KILN_OK && !*out)
        status = no_memory(pr->err);
    kiln_text_buffer_release(&stem);
    kiln_text_buffer_release(&name);
    return status;
}

/* `  NAME: DTYPE[EXTENTS] = VALUES` for a small tensor printed without a
 * directory, else `  NAME = file "evidence-CASE-NAME.npy"`. */
static kiln_status print_evidence_tensor(printer *pr, const kiln_evidence_record *c, const kiln_evidence_tensor *t)
{
    /* The name is claimed even for a tensor printed inline, so a file has
     * the same name with and without a directory. */
    char *file_name;
    KILN_TRY(evidence_file_name(pr, c->name, t->name, &file_name));
    kiln_text_buffer_printf(&pr->out, "  %s", t->name);
    kiln_status status = KILN_OK;
    bool printed = false;
    if (!pr->weights_dir) {
        size_t mark = pr->out.length;
        kiln_text_buffer_puts(&pr->out, ": ");
        print_type(pr, t->dtype, t->rank, t->shape);
        printed = print_inline_values(pr, t->dtype, t->rank, t->shape, t->data);
        if (printed) {
            kiln_text_buffer_puts(&pr->out, "\n");
        } else if (!pr->out.failed) {
            /* Too big or no literal: take the type back and name the file. */
            pr->out.length = mark;
            pr->out.data[mark] = '\0';
        }
    }
    if (!printed)
        status = print_file_reference(pr, file_name, t->dtype, t->rank, t->shape, t->data, t->byte_size);
    free(file_name);
    return status;
}

static bool same_rule(const kiln_compare_rule *a, const kiln_compare_rule *b)
{
    /* Bits, not values: -0 and 0 are different bytes in the file. */
    return a->kind == b->kind && a->nan_equal == b->nan_equal && memcmp(&a->atol, &b->atol, sizeof a->atol) == 0 &&
           memcmp(&a->rtol, &b->rtol, sizeof a->rtol) == 0;
}

static bool is_double(double value, double expected)
{
    return memcmp(&value, &expected, sizeof value) == 0;
}

/* `atol A rtol R`, or `exact` (with the stored, unused tolerances when
 * they are not the defaults), then `nan_unequal` when NaN never matches. */
static kiln_status print_rule(printer *pr, const kiln_evidence_record *c, const kiln_compare_rule *rule)
{
    char atol[KILN_TEXT_LITERAL_MAX], rtol[KILN_TEXT_LITERAL_MAX];
    if (!kiln_text_literal_format(KILN_F64, (const uint8_t *)&rule->atol, atol) ||
        !kiln_text_literal_format(KILN_F64, (const uint8_t *)&rule->rtol, rtol))
        return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT, "evidence '%s': its tolerance has no literal", c->name);
    bool defaults =
        is_double(rule->atol, KILN_TEXT_DEFAULT_ATOL) && is_double(rule->rtol, KILN_TEXT_DEFAULT_RTOL);
    kiln_text_buffer_puts(&pr->out, "  ");
    if (rule->kind == KILN_COMPARE_EXACT)
        kiln_text_buffer_puts(&pr->out, defaults ? "exact" : "exact ");
    if (rule->kind != KILN_COMPARE_EXACT || !defaults)
        kiln_text_buffer_printf(&pr->out, "atol %s rtol %s", atol, rtol);
    if (!rule->nan_equal)
        kiln_text_buffer_puts(&pr->out, " nan_unequal");
    kiln_text_buffer_puts(&pr->out, "\n");
    return KILN_OK;
}

static kiln_status print_evidence(printer *pr)
{
    const kiln_model *m = pr->model;
    for (uint32_t k = 0; k < m->evidence_count; k++) {
        const kiln_evidence_record *c = &m->evidence[k];
        /* The text states one rule per case (it applies to every expected
         * output); the file stores one per output. */
        for (uint32_t i = 1; i < c->output_count; i++)
            if (!same_rule(&c->rules[i], &c->rules[0]))
                return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT,
                                 "evidence '%s': outputs '%s' and '%s' are compared under different rules; the "
                                 "text format has one rule per case, so this artifact cannot be disassembled",
                                 c->name, c->outputs[0].name, c->outputs[i].name);
        if (c->output_count == 0)
            return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT, "evidence '%s' expects no output", c->name);
        kiln_text_buffer_puts(&pr->out, "evidence ");
        kiln_text_quote(&pr->out, c->name);
        kiln_text_buffer_puts(&pr->out, " {\n");
        for (uint32_t i = 0; i < c->input_count; i++)
            KILN_TRY(print_evidence_tensor(pr, c, &c->inputs[i]));
        for (uint32_t i = 0; i < c->output_count; i++)
            KILN_TRY(print_evidence_tensor(pr, c, &c->outputs[i]));
        KILN_TRY(print_rule(pr, c, &c->rules[0]));
        kiln_text_buffer_puts(&pr->out, "}\n");
    }
    return KILN_OK;
}

/* `method NAME {`, the method's statements indented by four spaces, `}` (text format 1.1). */
static kiln_status print_method_block(printer *pr, const kiln_program *method)
{
    printer inner = {.model = &method->model, .weights_dir = pr->weights_dir, .files = pr->files, .err = pr->err};
    kiln_text_buffer_init(&inner.out);
    inner.dim_names = kiln_model_dim_names(inner.model);
    if (!inner.dim_names)
        return no_memory(pr->err);
    print_contract(&inner);
    kiln_status status = print_checks(&inner);
    if (status == KILN_OK)
        status = print_graph(&inner);
    if (status == KILN_OK)
        status = print_evidence(&inner);
    pr->files = inner.files; /* file names stay claimed across methods */
    free(inner.dim_names);
    char *body = status == KILN_OK ? kiln_text_buffer_take(&inner.out) : NULL;
    kiln_text_buffer_release(&inner.out);
    if (status == KILN_OK && !body)
        status = no_memory(pr->err);
    if (status != KILN_OK)
        return status;
    kiln_text_buffer_printf(&pr->out, "\nmethod %s {\n", kiln_program_method_name(method));
    for (char *line = body; *line;) {
        char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        kiln_text_buffer_puts(&pr->out, "    ");
        kiln_text_buffer_append(&pr->out, line, length);
        kiln_text_buffer_puts(&pr->out, "\n");
        line += length + (end != NULL);
    }
    kiln_text_buffer_puts(&pr->out, "}\n");
    free(body);
    return KILN_OK;
}

/* `  WORD [ID, ...]` on a line of its own. */
static void print_token_list(printer *pr, const char *word, const int64_t *tokens, uint32_t count)
{
    kiln_text_buffer_printf(&pr->out, "  %s [", word);
    for (uint32_t i = 0; i < count; i++)
        kiln_text_buffer_printf(&pr->out, "%s%lld", i ? ", " : "", (long long)tokens[i]);
    kiln_text_buffer_puts(&pr->out, "]\n");
}

/* The program's generation cases (text format 1.1), after the method blocks. */
static kiln_status print_generation(printer *pr)
{
    const kiln_model *m = pr->model;
    for (uint32_t k = 0; k < m->generation_count; k++) {
        const kiln_generation_record *g = &m->generations[k];
        char margin[KILN_TEXT_LITERAL_MAX];
        if (!kiln_text_literal_format(KILN_F64, (const uint8_t *)&g->margin, margin))
            return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT, "generation case '%s': its margin has no literal",
                             g->name);
        kiln_text_buffer_puts(&pr->out, "\ngeneration ");
        kiln_text_quote(&pr->out, g->name);
        kiln_text_buffer_printf(&pr->out, " {\n  prefill %s  decode %s  margin %s\n", g->prefill_method,
                                g->decode_method, margin);
        print_token_list(pr, "prompt", g->prompt, g->prompt_length);
        print_token_list(pr, "tokens", g->tokens, g->token_count);
        kiln_text_buffer_puts(&pr->out, "}\n");
    }
    return KILN_OK;
}

kiln_status kiln_text_disassemble(const kiln_program *program, const char *weights_dir, char **text,
                                  kiln_error *err)
{
    if (!text)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_text_disassemble: text is NULL");
    *text = NULL;
    if (!program)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_text_disassemble: program is NULL");
    /* Under the lazy verification policy the weights are checked and bound
     * on first use; printing them is a use. */
    KILN_TRY(kiln_program_prepare_weights(program, err));
    printer pr = {.model = &program->model, .weights_dir = weights_dir, .err = err};
    kiln_text_buffer_init(&pr.out);
    kiln_text_symbols_init(&pr.files);
    pr.dim_names = kiln_model_dim_names(pr.model);
    if (!pr.dim_names)
        return no_memory(err);
    print_program(&pr, program);
    print_contract(&pr);
    print_states(&pr);
    kiln_status status = print_checks(&pr);
    /* Every weight of the artifact, before the blocks: each method block names those it uses. */
    for (uint32_t i = 0; status == KILN_OK && i < pr.model->weight_count; i++)
        status = print_weight(&pr, &pr.model->weights[i]);
    if (status == KILN_OK)
        status = print_graph(&pr);
    if (status == KILN_OK)
        status = print_evidence(&pr);
    for (uint32_t m = 1; status == KILN_OK && m < kiln_program_method_count(program); m++)
        status = print_method_block(&pr, kiln_program_method_at(program, m));
    if (status == KILN_OK)
        status = print_generation(&pr);
    free(pr.dim_names);
    kiln_text_symbols_release(&pr.files);
    if (status == KILN_OK) {
        *text = kiln_text_buffer_take(&pr.out);
        if (!*text)
            status = no_memory(err);
    }
    kiln_text_buffer_release(&pr.out);
    return status;
}
