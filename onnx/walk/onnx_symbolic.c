/* onnx_symbolic.c — see onnx_symbolic.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_entry_value.h"
#include "onnx_error.h"
#include "onnx_mapping.h"
#include "onnx_symbolic.h"
#include "onnx_value_table.h"

/* An operand of a symbolic fold: rank 0 or 1, its elements as size texts. */
typedef struct size_operand {
    uint32_t rank, count;
    kiln_dtype dtype;
    bool symbolic; /* some element is not a constant */
    char texts[SYMBOLIC_MAX_ELEMENTS][SIZE_TEXT_MAX];
} size_operand;

/* @return true and the value if `text` is an integer constant ("-1", "32"). */
static bool text_constant(const char *text, int64_t *value)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno)
        return false;
    *value = v;
    return true;
}

/*
 * Input `name` as a size operand: a symbolic entry, or a small i32/i64
 * constant. @return false if it is neither (the node is not folded).
 */
static bool size_operand_of(onnx_importer *im, const char *name, size_operand *out)
{
    onnx_entry *e = name[0] ? onnx_entry_find(im, name) : NULL;
    if (!e)
        return false;
    if (e->kind == ENTRY_SYMBOLIC) {
        out->rank = e->symbolic_rank;
        out->count = e->symbolic_count;
        out->dtype = KILN_I64;
        out->symbolic = true;
        memcpy(out->texts, e->symbolic, e->symbolic_count * sizeof *out->texts);
        return true;
    }
    const kiln_tensor *t = e->constant;
    if (e->kind != ENTRY_CONSTANT || !t || kiln_tensor_rank(t) > 1 ||
        kiln_tensor_element_count(t) > SYMBOLIC_MAX_ELEMENTS ||
        (kiln_tensor_dtype(t) != KILN_I64 && kiln_tensor_dtype(t) != KILN_I32 && kiln_tensor_dtype(t) != KILN_BOOL))
        return false;
    out->rank = kiln_tensor_rank(t);
    out->count = (uint32_t)kiln_tensor_element_count(t);
    out->dtype = kiln_tensor_dtype(t);
    out->symbolic = false;
    for (uint32_t i = 0; i < out->count; i++) {
        const void *data = kiln_tensor_const_data(t);
        int64_t v = out->dtype == KILN_I64   ? ((const int64_t *)data)[i]
                    : out->dtype == KILN_I32 ? ((const int32_t *)data)[i]
                                             : ((const uint8_t *)data)[i] != 0;
        snprintf(out->texts[i], SIZE_TEXT_MAX, "%lld", (long long)v);
    }
    return true;
}

/* The canonical text of `expression` (kiln's own canonical form). @return false if it has none that fits. */
static bool canonical_text(onnx_importer *im, const char *expression, char *out)
{
    size_t length;
    kiln_error ignored;
    return kiln_builder_canonical_size(im->builder, expression, out, SIZE_TEXT_MAX, &length, &ignored) ==
               KILN_OK &&
           length < SIZE_TEXT_MAX;
}

/*
 * One element of Add, Sub, Mul or Div (`op` '+', '-', '*', '/') on size
 * texts. Constants are computed as ONNX does on integers (Div truncates);
 * a symbolic Div needs a positive constant divisor and becomes kiln's
 * floor division, the same on sizes, which are never negative.
 */
static bool size_arithmetic(onnx_importer *im, char op, const char *a, const char *b, char *out)
{
    int64_t x, y, r;
    if (text_constant(a, &x) && text_constant(b, &y)) {
        bool overflow = op == '+' ? __builtin_add_overflow(x, y, &r)
                        : op == '-' ? __builtin_sub_overflow(x, y, &r)
                        : op == '*' ? __builtin_mul_overflow(x, y, &r)
                                    : (y == 0 || (x == INT64_MIN && y == -1));
        if (overflow)
            return false;
        if (op == '/')
            r = x / y;
        snprintf(out, SIZE_TEXT_MAX, "%lld", (long long)r);
        return true;
    }
    if (op == '/' && (!text_constant(b, &y) || y <= 0))
        return false;
    char expression[3 * SIZE_TEXT_MAX];
    snprintf(expression, sizeof expression, "(%s) %c (%s)", a, op, b);
    return canonical_text(im, expression, out);
}

/* Constant integer list from attribute `name` (opset < `input_from`) or constant input `index`. */
static bool fold_ints(onnx_importer *im, const Onnx__NodeProto *proto, const char *name, int64_t input_from,
                      uint32_t index, int64_t *values, uint32_t max, uint32_t *count, bool *present)
{
    *count = 0;
    *present = false;
    if (im->opset < input_from) {
        for (size_t i = 0; i < proto->n_attribute; i++) {
            const Onnx__AttributeProto *a = proto->attribute[i];
            if (!a->name || strcmp(a->name, name) != 0)
                continue;
            if (a->n_ints > max)
                return false;
            memcpy(values, a->ints, a->n_ints * sizeof *values);
            *count = (uint32_t)a->n_ints;
            *present = true;
        }
        return true;
    }
    if (index >= proto->n_input || !proto->input[index][0])
        return true;
    size_operand operand;
    if (!size_operand_of(im, proto->input[index], &operand) || operand.symbolic || operand.count > max)
        return false;
    for (uint32_t i = 0; i < operand.count; i++)
        text_constant(operand.texts[i], &values[i]);
    *count = operand.count;
    *present = true;
    return true;
}

static int64_t fold_attribute_int(const Onnx__NodeProto *proto, const char *name, int64_t fallback)
{
    for (size_t i = 0; i < proto->n_attribute; i++)
        if (proto->attribute[i]->name && strcmp(proto->attribute[i]->name, name) == 0)
            return proto->attribute[i]->i;
    return fallback;
}

/* Shape(x) of a value with a symbolic size: x's axis texts from `start` to `end`. */
static bool fold_shape(onnx_importer *im, const Onnx__NodeProto *proto, size_operand *out, kiln_error *err,
                       kiln_status *status)
{
    onnx_entry *e = onnx_entry_find(im, proto->input[0]);
    if (!e || e->kind == ENTRY_CONSTANT || e->kind == ENTRY_BROKEN)
        return false;
    if (e->kind == ENTRY_SYMBOLIC) {
        /* The shape of a shape tensor is a constant: [count], or [] for a scalar. */
        int64_t rank = e->symbolic_rank;
        int64_t start = fold_attribute_int(proto, "start", 0), end = fold_attribute_int(proto, "end", rank);
        start = start < 0 ? start + rank : start;
        end = end < 0 ? end + rank : end;
        out->rank = 1;
        out->count = 0;
        out->dtype = KILN_I64;
        out->symbolic = false;
        for (int64_t a = start < 0 ? 0 : start; a < end && a < rank; a++)
            snprintf(out->texts[out->count++], SIZE_TEXT_MAX, "%u", e->symbolic_count);
        return true;
    }
    kiln_value x;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t sizes[KILN_MAX_RANK];
    if ((*status = onnx_entry_value(im, e, &x, err)) != KILN_OK ||
        (*status = kiln_builder_value_type(im->builder, x, &dtype, &rank, sizes, err)) != KILN_OK)
        return false;
    int64_t start = fold_attribute_int(proto, "start", 0), end = fold_attribute_int(proto, "end", rank);
    start = start < 0 ? start + rank : start;
    end = end < 0 ? end + rank : end;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    out->rank = 1;
    out->count = 0;
    out->dtype = KILN_I64;
    for (int64_t a = start; a < end; a++) {
        size_t length;
        out->symbolic = out->symbolic || sizes[a] < 0;
        if ((*status = kiln_builder_value_axis_text(im->builder, x, (uint32_t)a, out->texts[out->count],
                                                    SIZE_TEXT_MAX, &length, err)) != KILN_OK ||
            length >= SIZE_TEXT_MAX)
            return false;
        out->count++;
    }
    return out->symbolic; /* constant sizes: map_shape folds them as before */
}

/* The elementwise ops on sizes, with ONNX broadcasting of rank 0 and 1. */
static bool fold_arithmetic(onnx_importer *im, char op, const size_operand *a, const size_operand *b,
                            size_operand *out)
{
    /* An empty operand (a broadcast to no elements) is left to the translation. */
    if (a->count == 0 || b->count == 0 || (a->count != b->count && a->count != 1 && b->count != 1))
        return false;
    out->rank = a->rank > b->rank ? a->rank : b->rank;
    out->count = a->count > b->count ? a->count : b->count;
    out->dtype = a->dtype;
    for (uint32_t i = 0; i < out->count; i++)
        if (!size_arithmetic(im, op, a->texts[a->count == 1 ? 0 : i], b->texts[b->count == 1 ? 0 : i], out->texts[i]))
            return false;
    return true;
}

/*
 * @return true if size text `text` can never be negative: it has no minus
 * sign, so it is built by + * / % from dims (never negative) and
 * non-negative constants. `seq - 5` may be negative and is not decided.
 */
static bool never_negative(const char *text)
{
    return strchr(text, '-') == NULL;
}

/*
 * Equal on sizes, element by element with rank-0 broadcasting: decided
 * only where the answer holds for every size of the domain: the same
 * text (true), two constants, or a never-negative size against a negative
 * constant (false; torch's `expand(batch, -1, -1)` compares its target
 * with -1 this way). @return false otherwise.
 */
static bool fold_equal(const size_operand *a, const size_operand *b, size_operand *out)
{
    if (a->count == 0 || b->count == 0 || (a->count != b->count && a->count != 1 && b->count != 1))
        return false;
    out->rank = a->rank > b->rank ? a->rank : b->rank;
    out->count = a->count > b->count ? a->count : b->count;
    out->dtype = KILN_BOOL;
    for (uint32_t i = 0; i < out->count; i++) {
        const char *x = a->texts[a->count == 1 ? 0 : i], *y = b->texts[b->count == 1 ? 0 : i];
        int64_t u = 0, v = 0;
        bool cu = text_constant(x, &u), cv = text_constant(y, &v), equal;
        if (strcmp(x, y) == 0)
            equal = true;
        else if (cu && cv)
            equal = u == v;
        else if ((cu && u < 0 && never_negative(y)) || (cv && v < 0 && never_negative(x)))
            equal = false;
        else
            return false;
        snprintf(out->texts[i], SIZE_TEXT_MAX, "%d", equal ? 1 : 0);
    }
    return true;
}

/* Where with a constant condition on sizes: each element taken from `a` or `b`, rank-0 operands broadcast. */
static bool fold_where(const size_operand *condition, const size_operand *a, const size_operand *b,
                       size_operand *out)
{
    if (condition->symbolic || condition->dtype != KILN_BOOL || a->dtype != b->dtype)
        return false;
    uint32_t count = condition->count, rank = condition->rank;
    const size_operand *all[3] = {condition, a, b};
    for (uint32_t k = 0; k < 3; k++) {
        if (all[k]->count == 0 || (all[k]->count != 1 && count != 1 && all[k]->count != count))
            return false;
        count = all[k]->count > count ? all[k]->count : count;
        rank = all[k]->rank > rank ? all[k]->rank : rank;
    }
    out->rank = rank;
    out->count = count;
    out->dtype = a->dtype;
    for (uint32_t i = 0; i < count; i++) {
        const char *pick = condition->texts[condition->count == 1 ? 0 : i];
        const size_operand *from = strcmp(pick, "0") != 0 ? a : b;
        memcpy(out->texts[i], from->texts[from->count == 1 ? 0 : i], SIZE_TEXT_MAX);
    }
    return true;
}

/* Reshape of a shape tensor to rank 1 ([-1], [n] or [0]) or, for one element, rank 0: the elements stay. */
static bool fold_reshape(const size_operand *x, const size_operand *target, size_operand *out)
{
    int64_t size = 0;
    if (target->count > 1 || (target->count == 1 && !text_constant(target->texts[0], &size)))
        return false;
    if (target->count == 0 ? x->count != 1
                           : !(size == -1 || size == (int64_t)x->count || (size == 0 && x->rank == 1)))
        return false;
    *out = *x;
    out->rank = target->count;
    return true;
}

/* Compute the node's one output as a size operand. @return false if the node is not one symbolic folding covers. */
static bool fold_sizes(onnx_importer *im, const Onnx__NodeProto *proto, size_operand *out, kiln_error *err,
                       kiln_status *status)
{
    const char *op = proto->op_type;
    if (strcmp(op, "Shape") == 0)
        return proto->n_input == 1 && fold_shape(im, proto, out, err, status);
    size_operand in[8];
    uint32_t n = (uint32_t)proto->n_input;
    bool symbolic = false;
    if (n == 0 || n > 8)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!proto->input[i][0]) {
            in[i].count = 0;
            continue;
        }
        if (!size_operand_of(im, proto->input[i], &in[i]))
            return false;
        symbolic = symbolic || in[i].symbolic;
    }
    if (!symbolic)
        return false; /* all constant: onnx_fold_constant_node evaluates it */
    int64_t values[SYMBOLIC_MAX_ELEMENTS];
    uint32_t count;
    bool present;
    out->symbolic = true;
    /* A bool operand is only Where's condition (a constant: Equal's result when decided). */
    for (uint32_t i = 0; i < n; i++)
        if (in[i].count && in[i].dtype == KILN_BOOL && !(i == 0 && strcmp(op, "Where") == 0))
            return false;
    if (strcmp(op, "Equal") == 0)
        return n == 2 && fold_equal(&in[0], &in[1], out);
    if (strcmp(op, "Where") == 0)
        return n == 3 && fold_where(&in[0], &in[1], &in[2], out);
    if (strcmp(op, "Reshape") == 0)
        return n == 2 && !in[1].symbolic && fold_reshape(&in[0], &in[1], out);
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0) {
        int64_t to = fold_attribute_int(proto, "to", 7);
        if (to != 7 && to != 6) /* INT64, INT32 */
            return false;
        *out = in[0];
        out->dtype = to == 7 ? KILN_I64 : KILN_I32;
        return true;
    }
    if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0)
        return n == 2 && fold_arithmetic(im, op[0] == 'A' ? '+' : op[0] == 'S' ? '-' : op[0] == 'M' ? '*' : '/',
                                         &in[0], &in[1], out);
    if (strcmp(op, "Gather") == 0) {
        int64_t axis = fold_attribute_int(proto, "axis", 0);
        if (n != 2 || in[0].rank != 1 || (axis != 0 && axis != -1) || in[1].symbolic)
            return false;
        out->rank = in[1].rank;
        out->count = in[1].count;
        out->dtype = in[0].dtype;
        for (uint32_t i = 0; i < in[1].count; i++) {
            int64_t k;
            text_constant(in[1].texts[i], &k);
            k = k < 0 ? k + in[0].count : k;
            if (k < 0 || k >= in[0].count)
                return false; /* translated as usual: gather reports the index */
            memcpy(out->texts[i], in[0].texts[k], SIZE_TEXT_MAX);
        }
        return true;
    }
    if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
        bool unsqueeze = op[0] == 'U';
        if (!fold_ints(im, proto, "axes", 13, 1, values, SYMBOLIC_MAX_ELEMENTS, &count, &present))
            return false;
        bool axis_zero = count == 1 && (values[0] == 0 || values[0] == -1);
        if (unsqueeze ? in[0].rank != 0 || !axis_zero : in[0].rank != 1 || in[0].count != 1 || (present && !axis_zero))
            return false;
        *out = in[0];
        out->rank = unsqueeze ? 1 : 0;
        return true;
    }
    if (strcmp(op, "Concat") == 0) {
        int64_t axis = fold_attribute_int(proto, "axis", 0);
        if (axis != 0 && axis != -1)
            return false;
        out->rank = 1;
        out->count = 0;
        out->dtype = in[0].dtype;
        for (uint32_t i = 0; i < n; i++) {
            if (in[i].rank != 1 || in[i].count > SYMBOLIC_MAX_ELEMENTS - out->count)
                return false;
            memcpy(out->texts[out->count], in[i].texts, in[i].count * sizeof *in[i].texts);
            out->count += in[i].count;
        }
        return true;
    }
    if (strcmp(op, "Slice") == 0) {
        int64_t bounds[4][SYMBOLIC_MAX_ELEMENTS] = {{0}};
        static const char *const names[] = {"starts", "ends", "axes", "steps"};
        for (uint32_t k = 0; k < 4; k++) {
            if (!fold_ints(im, proto, names[k], 10, k + 1, bounds[k], 1, &count, &present))
                return false;
            if (!present && k < 2)
                return false;
            if (!present)
                bounds[k][0] = k == 2 ? 0 : 1;
        }
        int64_t size = in[0].count, start = bounds[0][0], end = bounds[1][0], step = bounds[3][0];
        if (in[0].rank != 1 || (bounds[2][0] != 0 && bounds[2][0] != -1) || step <= 0)
            return false;
        start = start < 0 ? start + size : start;
        end = end < 0 ? end + size : end;
        start = start < 0 ? 0 : start > size ? size : start;
        end = end < 0 ? 0 : end > size ? size : end;
        out->rank = 1;
        out->count = 0;
        out->dtype = in[0].dtype;
        for (int64_t i = start; i < end; i += step)
            memcpy(out->texts[out->count++], in[0].texts[i], SIZE_TEXT_MAX);
        return true;
    }
    return false;
}

/*
 * Symbolic folding of node `index`: when it computes a small integer
 * tensor from sizes that are kiln dims (Shape of a value with a symbolic
 * axis, or Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity, Add,
 * Sub, Mul, Div, Reshape, Equal, Where over such tensors and constants, or
 * Shape of such a tensor), its output becomes a
 * symbolic entry (or a constant when every element turns out constant),
 * and the node is translated only if something uses it as data.
 * @return KILN_OK with *folded set, or an error (out of memory).
 */
kiln_status onnx_symbolic_fold(onnx_importer *im, size_t index, bool *folded, kiln_error *err)
{
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    size_operand out;
    kiln_status status = KILN_OK;
    *folded = false;
    if (proto->n_output != 1 || !proto->output[0][0])
        return KILN_OK;
    memset(&out, 0, sizeof out);
    /* A failed Shape of an input (a declaration the import cannot make) is reported where the input is used. */
    if (!fold_sizes(im, proto, &out, err, &status))
        return status == KILN_ERR_OUT_OF_MEMORY ? status : KILN_OK;
    bool constant = true;
    int64_t values[SYMBOLIC_MAX_ELEMENTS];
    for (uint32_t i = 0; i < out.count; i++)
        constant = constant && text_constant(out.texts[i], &values[i]);
    onnx_entry *e;
    if (onnx_entry_find(im, proto->output[0]))
        return KILN_OK; /* defined twice: translated as usual, which reports it */
    if (constant) {
        kiln_tensor *t;
        int64_t shape[1] = {out.count};
        status = kiln_tensor_new(out.dtype, out.rank, shape, &t, err);
        if (status != KILN_OK)
            return status;
        for (uint32_t i = 0; i < out.count; i++) {
            if (out.dtype == KILN_I64)
                ((int64_t *)kiln_tensor_data(t))[i] = values[i];
            else if (out.dtype == KILN_I32)
                ((int32_t *)kiln_tensor_data(t))[i] = (int32_t)values[i];
            else
                ((uint8_t *)kiln_tensor_data(t))[i] = values[i] != 0;
        }
        status = onnx_entry_new(im, proto->output[0], ENTRY_CONSTANT, &e, err);
        if (status != KILN_OK) {
            kiln_tensor_free(t);
            return status;
        }
        e->constant = e->owned_constant = t;
        *folded = true;
        return KILN_OK;
    }
    char (*texts)[SIZE_TEXT_MAX] = malloc((out.count ? out.count : 1) * sizeof *texts);
    if (!texts)
        return onnx_no_memory(err);
    memcpy(texts, out.texts, out.count * sizeof *texts);
    status = onnx_entry_new(im, proto->output[0], ENTRY_SYMBOLIC, &e, err);
    if (status != KILN_OK) {
        free(texts);
        return status;
    }
    e->symbolic = texts;
    e->symbolic_rank = out.rank;
    e->symbolic_count = out.count;
    e->source_node = index;
    *folded = true;
    return KILN_OK;
}

/*
 * Run the mapping of the node that computed symbolic entry `entry`, whose
 * symbolic inputs have their values already, and check that it bound the entry.
 */
static kiln_status translate_node(onnx_importer *im, uint32_t entry, kiln_error *err)
{
    size_t index = im->entries[entry].source_node;
    const Onnx__NodeProto *proto = im->model->graph->node[index];
    char label[512];
    onnx_node_label(proto, index, label, sizeof label);
    const onnx_op_mapping *mapping = onnx_find_mapping(proto->op_type, im->opset, NULL, 0);
    if (!mapping)
        return onnx_fail(err, KILN_ERR_UNSUPPORTED_OP, "%s: no mapping", label);
    onnx_node node = {im, proto, im->opset, label, err};
    kiln_status status = mapping->map(&node, mapping->kiln_op);
    const onnx_entry *e = &im->entries[entry]; /* the mapping may have grown the table */
    if (status == KILN_OK && !e->has_value)
        status = onnx_fail(err, KILN_ERR_MALFORMED, "%s: output '%s' was not translated", label, e->onnx_name);
    return status;
}

/* @return the index of the untranslated symbolic entry input `input` of `proto` names, or UINT32_MAX. */
static uint32_t pending_symbolic_input(onnx_importer *im, const Onnx__NodeProto *proto, size_t input)
{
    uint32_t index;
    if (!proto->input[input][0] || !onnx_names_find(&im->by_onnx_name, proto->input[input], &index))
        return UINT32_MAX;
    const onnx_entry *e = &im->entries[index];
    return e->kind == ENTRY_SYMBOLIC && !e->has_value ? index : UINT32_MAX;
}

/*
 * The mapping of a symbolic node reads its symbolic inputs as data (they
 * are its data operands: Add's, Concat's, Gather's first), so translating
 * one translates its untranslated symbolic ancestors first. They are
 * visited depth first, inputs in order, with a stack on the heap, and each
 * is translated when the last of its inputs is: the order a recursion
 * through onnx_entry_value would take, without its depth (Shape and then
 * 10,000 chained Adds overflowed the stack that way). Nodes are in
 * topological order, so an entry is never its own ancestor, and each
 * mapping then finds its inputs translated.
 */
kiln_status onnx_symbolic_translate(onnx_importer *im, uint32_t entry, kiln_error *err)
{
    typedef struct frame {
        uint32_t entry;
        size_t next_input;
    } frame;
    frame *stack = NULL;
    size_t depth = 0, capacity = 0;
    kiln_status status = KILN_OK;
    if (!(stack = malloc(16 * sizeof *stack)))
        return onnx_no_memory(err);
    capacity = 16;
    stack[depth++] = (frame){entry, 0};
    while (depth && status == KILN_OK) {
        frame *top = &stack[depth - 1];
        const Onnx__NodeProto *proto = im->model->graph->node[im->entries[top->entry].source_node];
        uint32_t input = UINT32_MAX;
        while (top->next_input < proto->n_input && input == UINT32_MAX)
            input = pending_symbolic_input(im, proto, top->next_input++);
        if (input == UINT32_MAX) {
            status = translate_node(im, top->entry, err);
            depth--;
            continue;
        }
        if (depth == capacity) {
            frame *grown = realloc(stack, 2 * capacity * sizeof *grown);
            if (!grown) {
                status = onnx_no_memory(err);
                break;
            }
            stack = grown;
            capacity *= 2;
        }
        stack[depth++] = (frame){input, 0};
    }
    free(stack);
    return status;
}
