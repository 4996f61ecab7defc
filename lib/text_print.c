/*
 * text_print.c — the disassembler: a loaded program in the canonical text
 * form of spec/text-format.md §5.
 *
 * Everything printed is what the artifact stores, in the order it stores
 * it: metadata (sorted), dims, inputs, weights, nodes (results numbered
 * %0, %1, ... by node index) and outputs. Reassembling the text replays
 * the same builder calls in the same order, and the writer is
 * deterministic, so the artifact comes back byte for byte.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/error.h"
#include "program.h"
#include "tensor.h"
#include "text.h"

/* Hex digits of the weight digest shown when weights are not written. */
#define DIGEST_HEX_DIGITS 16

typedef struct printer {
    const kiln_model *model;
    const char **dim_names;
    const char *weights_dir;
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

static void print_header(printer *pr)
{
    const kiln_model *m = pr->model;
    kiln_text_buffer_puts(&pr->out, "kiln " KILN_TEXT_VERSION "\nprogram ");
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
    for (uint32_t d = 0; d < m->dim_count; d++)
        kiln_text_buffer_printf(&pr->out, "dim %s in %lld..%lld\n", m->dims[d].name, (long long)m->dims[d].min,
                                (long long)m->dims[d].max);
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

static uint64_t element_count(const kiln_weight_decl *w)
{
    uint64_t count = 1;
    for (uint32_t a = 0; a < w->rank; a++)
        count *= (uint64_t)w->shape[a]; /* the loader proved this does not overflow */
    return count;
}

/* Print the values inline if they are few and each reads back exactly. */
static bool print_inline_values(printer *pr, const kiln_weight_decl *w)
{
    uint64_t count = element_count(w);
    size_t size = kiln_dtype_size(w->dtype);
    char literal[KILN_TEXT_LITERAL_MAX];
    if (w->kind != KILN_WEIGHT_CONSTANT || count > KILN_TEXT_INLINE_MAX_ELEMENTS)
        return false;
    for (uint64_t i = 0; i < count; i++)
        if (!kiln_text_literal_format(w->dtype, w->data + i * size, literal))
            return false;
    kiln_text_buffer_puts(&pr->out, w->rank == 0 ? " = " : " = [");
    for (uint64_t i = 0; i < count; i++) {
        kiln_text_literal_format(w->dtype, w->data + i * size, literal);
        kiln_text_buffer_printf(&pr->out, "%s%s", i ? ", " : "", literal);
    }
    if (w->rank != 0)
        kiln_text_buffer_puts(&pr->out, "]");
    return true;
}

static kiln_status write_weight_file(printer *pr, const kiln_weight_decl *w)
{
    kiln_text_buffer path;
    kiln_tensor view;
    kiln_text_buffer_init(&path);
    kiln_text_buffer_printf(&path, "%s/%s.npy", pr->weights_dir, w->name);
    if (path.failed)
        return no_memory(pr->err);
    /* The writer only reads the data; the view borrows the program's
     * bytes instead of copying a possibly large tensor. */
    kiln_tensor_view_init(&view, w->dtype, w->rank, w->shape, (void *)(uintptr_t)w->data);
    kiln_status status = kiln_npy_write_file(path.data, &view, pr->err);
    kiln_text_buffer_release(&path);
    return status;
}

static kiln_status print_weight(printer *pr, const kiln_weight_decl *w)
{
    static const char *const keywords[] = {"weight", "buffer", "const"};
    kiln_text_buffer_printf(&pr->out, "%s %s: %s[", keywords[w->kind], w->name, kiln_dtype_name(w->dtype));
    for (uint32_t a = 0; a < w->rank; a++)
        kiln_text_buffer_printf(&pr->out, "%s%lld", a ? ", " : "", (long long)w->shape[a]);
    kiln_text_buffer_puts(&pr->out, "]");
    if (print_inline_values(pr, w)) {
        kiln_text_buffer_puts(&pr->out, "\n");
        return KILN_OK;
    }
    kiln_text_buffer_printf(&pr->out, " = file \"%s.npy\"", w->name);
    if (pr->weights_dir) {
        kiln_text_buffer_puts(&pr->out, "\n");
        return write_weight_file(pr, w);
    }
    uint8_t digest[crypto_generichash_BYTES];
    if (sodium_init() < 0)
        return kiln_fail(pr->err, KILN_ERR_INVALID_ARGUMENT, "libsodium could not be initialised");
    crypto_generichash(digest, sizeof digest, w->data, w->byte_size, NULL, 0);
    kiln_text_buffer_puts(&pr->out, "  # blake2b-256:");
    for (int i = 0; i < DIGEST_HEX_DIGITS / 2; i++)
        kiln_text_buffer_printf(&pr->out, "%02x", digest[i]);
    kiln_text_buffer_puts(&pr->out, " (not written)\n");
    return KILN_OK;
}

static void print_graph(printer *pr)
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
        kiln_text_buffer_puts(&pr->out, ")\n");
    }
    for (uint32_t i = 0; i < m->output_count; i++) {
        kiln_text_buffer_printf(&pr->out, "output %s = ", m->outputs[i].name);
        print_reference(pr, m->outputs[i].value);
        kiln_text_buffer_puts(&pr->out, "\n");
    }
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
    pr.dim_names = kiln_model_dim_names(pr.model);
    if (!pr.dim_names)
        return no_memory(err);
    print_header(&pr);
    kiln_status status = KILN_OK;
    for (uint32_t i = 0; status == KILN_OK && i < pr.model->weight_count; i++)
        status = print_weight(&pr, &pr.model->weights[i]);
    if (status == KILN_OK)
        print_graph(&pr);
    free(pr.dim_names);
    if (status == KILN_OK) {
        *text = kiln_text_buffer_take(&pr.out);
        if (!*text)
            status = no_memory(err);
    }
    kiln_text_buffer_release(&pr.out);
    return status;
}
