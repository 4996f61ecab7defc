/*
 * einsum.c — einsum (Einstein summation over one or two operands):
 * equation parsing, shape rule and a portable reference kernel.
 *
 * Semantics, preconditions and numerics are in spec/ops/einsum.md. The
 * kernel walks an odometer over the output's axes, and for each output
 * element an odometer over the summed labels both operands share, inside
 * which each operand is summed over its own summed labels (the sum of
 * products factors; einsum_summed).
 * Each operand reads through one stride per loop axis; a label repeated in
 * an operand adds its strides (a diagonal), an axis broadcast from size 1
 * has stride 0. The kernel allocates nothing: a session run must not.
 * f16 and bf16 are computed by the f32 kernel and rounded once
 * (half_compute.h), with f32 copies kept outside the arena.
 */
#include <stdio.h>
#include <string.h>

#include "attribute.h"
#include "broadcast.h"
#include "error.h"
#include "half_compute.h"
#include "dtype.h"
#include "odometer.h"
#include "onednn.h"
#include "parallel.h"
#include "vector_matrix.h"
#include "op_registry.h"
#include "real_access.h"
#include "size_claim.h"

#define EINSUM_MAX_OPERANDS 2
/* Labels are the letters: 'A'..'Z' are 0..25, 'a'..'z' are 26..51 (ASCII order). */
#define EINSUM_LABEL_COUNT 52
/* The subscript standing for the '...' axes. */
#define EINSUM_ELLIPSIS (-1)
/* Loop axes: the output's, then the summed labels and summed '...' axes. */
#define EINSUM_MAX_LOOP_AXES (KILN_MAX_RANK + EINSUM_MAX_OPERANDS * KILN_MAX_RANK + KILN_MAX_RANK)

/* One side of the equation: an operand's subscripts, or the output's. */
typedef struct einsum_term {
    uint32_t count;                  /* subscripts, the ellipsis counting as one */
    int8_t subscripts[KILN_MAX_RANK + 1]; /* label 0..51 or EINSUM_ELLIPSIS */
    uint32_t positions[KILN_MAX_RANK + 1]; /* of each subscript in the equation, for messages */
    bool has_ellipsis;
} einsum_term;

typedef struct einsum_equation {
    uint32_t operand_count;
    einsum_term operands[EINSUM_MAX_OPERANDS];
    einsum_term output;
    bool explicit_output; /* '->' present */
} einsum_equation;

static char label_char(int label)
{
    return (char)(label < 26 ? 'A' + label : 'a' + (label - 26));
}

static int label_of(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    return -1;
}

/* Add one subscript to `term`, refusing a term longer than any tensor's rank. */
static kiln_status add_subscript(const char *label, const char *equation, einsum_term *term, const char *side,
                                 int8_t subscript, uint32_t position, kiln_error *err)
{
    bool full = term->count == KILN_MAX_RANK + 1 ||
                (term->count == KILN_MAX_RANK && subscript != EINSUM_ELLIPSIS && !term->has_ellipsis);
    if (full)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: equation \"%s\": %s has more than %d labels", label,
                         equation, side, KILN_MAX_RANK);
    term->subscripts[term->count] = subscript;
    term->positions[term->count] = position;
    term->count++;
    return KILN_OK;
}

/*
 * Parse `equation` into terms. Spaces are skipped; every other character
 * must be a letter, ',', '...' or '->'. Refusals name the character and
 * its position (0-based).
 */
static kiln_status parse_equation(const char *label, const char *equation, einsum_equation *eq, kiln_error *err)
{
    memset(eq, 0, sizeof *eq);
    eq->operand_count = 1;
    einsum_term *term = &eq->operands[0];
    char side[32] = "operand 0";
    for (uint32_t i = 0; equation[i]; i++) {
        char c = equation[i];
        if (c == ' ')
            continue;
        if (label_of(c) >= 0) {
            KILN_TRY(add_subscript(label, equation, term, side, (int8_t)label_of(c), i, err));
        } else if (c == '.') {
            if (equation[i + 1] != '.' || equation[i + 2] != '.')
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": '.' at position %u does not start '...'", label, equation, i);
            if (term->has_ellipsis)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": a second '...' at position %u in %s", label, equation, i,
                                 side);
            KILN_TRY(add_subscript(label, equation, term, side, EINSUM_ELLIPSIS, i, err));
            term->has_ellipsis = true;
            i += 2;
        } else if (c == ',') {
            if (eq->explicit_output)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": ',' at position %u is in the output", label, equation, i);
            if (eq->operand_count == EINSUM_MAX_OPERANDS)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": ',' at position %u starts a third operand; einsum takes one "
                                 "or two",
                                 label, equation, i);
            term = &eq->operands[eq->operand_count];
            snprintf(side, sizeof side, "operand %u", eq->operand_count);
            eq->operand_count++;
        } else if (c == '-') {
            if (equation[i + 1] != '>')
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": '-' at position %u is not followed by '>'", label, equation, i);
            if (eq->explicit_output)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: equation \"%s\": a second '->' at position %u",
                                 label, equation, i);
            eq->explicit_output = true;
            term = &eq->output;
            snprintf(side, sizeof side, "the output");
            i++;
        } else {
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: equation \"%s\": character '%c' (0x%02x) at position %u is not a letter, ',', "
                             "'...' or '->'",
                             label, equation, c >= 0x20 && c < 0x7f ? c : '?', (unsigned)(unsigned char)c, i);
        }
    }
    uint32_t count[EINSUM_LABEL_COUNT] = {0};
    bool any_ellipsis = false;
    for (uint32_t k = 0; k < eq->operand_count; k++) {
        any_ellipsis = any_ellipsis || eq->operands[k].has_ellipsis;
        for (uint32_t s = 0; s < eq->operands[k].count; s++)
            if (eq->operands[k].subscripts[s] != EINSUM_ELLIPSIS)
                count[eq->operands[k].subscripts[s]]++;
    }
    if (eq->explicit_output) {
        bool seen[EINSUM_LABEL_COUNT] = {false};
        for (uint32_t s = 0; s < eq->output.count; s++) {
            int l = eq->output.subscripts[s];
            if (l == EINSUM_ELLIPSIS)
                continue;
            if (count[l] == 0)
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": output label '%c' at position %u is in no operand", label,
                                 equation, label_char(l), eq->output.positions[s]);
            if (seen[l])
                return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                                 "%s: equation \"%s\": output label '%c' at position %u appears twice in the output",
                                 label, equation, label_char(l), eq->output.positions[s]);
            seen[l] = true;
        }
        return KILN_OK;
    }
    /* Implicit output: the '...' axes, then the labels that appear once, in ASCII order. */
    if (any_ellipsis)
        KILN_TRY(add_subscript(label, equation, &eq->output, "the output", EINSUM_ELLIPSIS, 0, err));
    eq->output.has_ellipsis = any_ellipsis;
    for (int l = 0; l < EINSUM_LABEL_COUNT; l++)
        if (count[l] == 1)
            KILN_TRY(add_subscript(label, equation, &eq->output, "the implicit output", (int8_t)l, 0, err));
    return KILN_OK;
}

/* Letters of a term, for messages ("ij", "...i"). */
static void format_term(const einsum_term *term, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t s = 0; s < term->count && used + 4 < size; s++) {
        if (term->subscripts[s] == EINSUM_ELLIPSIS) {
            memcpy(text + used, "...", 3);
            used += 3;
        } else {
            text[used++] = label_char(term->subscripts[s]);
        }
        text[used] = '\0';
    }
}

/* The number of axes '...' stands for in operand `k` of rank `rank`, or a refusal. */
static kiln_status ellipsis_rank(const char *label, const char *equation, const einsum_term *term, uint32_t k,
                                 uint32_t rank, uint32_t *out, kiln_error *err)
{
    uint32_t letters = term->count - (term->has_ellipsis ? 1 : 0);
    char text[48];
    format_term(term, text, sizeof text);
    if (term->has_ellipsis ? letters > rank : letters != rank)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                         "%s: equation \"%s\": operand %u has subscripts \"%s\" (%u labels) but input %u has rank %u",
                         label, equation, k, text, letters, k, rank);
    *out = rank - letters;
    return KILN_OK;
}

static const kiln_attribute_spec einsum_attributes[] = {
    {"equation", KILN_ATTRIBUTE_STRING},
    {NULL, 0},
};

/* f16 and bf16 are computed in f32 and rounded once (half_compute.h). */
static bool einsum_dtype(kiln_dtype dtype)
{
    return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_I32 || dtype == KILN_I64 ||
           kiln_dtype_is_half(dtype);
}

/* ------------------------------------------------------------ shape rule */

static kiln_status infer_einsum(const kiln_shape_context *ctx, const kiln_value_type *const *inputs,
                                uint32_t input_count, kiln_value_type *out, kiln_error *err)
{
    const kiln_node_attribute *attr = kiln_attribute_find(ctx->attributes, ctx->attribute_count, "equation");
    if (!attr)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute 'equation' is required", ctx->node_label);
    const char *equation = attr->s;
    einsum_equation eq;
    KILN_TRY(parse_equation(ctx->node_label, equation, &eq, err));
    if (eq.operand_count != input_count)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: equation \"%s\" has %u operand%s; the node has %u input%s",
                         ctx->node_label, equation, eq.operand_count, eq.operand_count == 1 ? "" : "s", input_count,
                         input_count == 1 ? "" : "s");
    for (uint32_t k = 0; k < input_count; k++) {
        if (!einsum_dtype(inputs[k]->dtype))
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM,
                             "%s: input %u has dtype %s; einsum takes f32, f64, f16, bf16, i32 or i64", ctx->node_label,
                             k, kiln_dtype_name(inputs[k]->dtype));
        if (k > 0)
            KILN_TRY(kiln_require_same_dtype(ctx, inputs[0], inputs[k], err));
    }

    /* Each label's size: its first occurrence; every other must be provably equal. */
    bool known[EINSUM_LABEL_COUNT] = {false};
    uint32_t size[EINSUM_LABEL_COUNT], first_operand[EINSUM_LABEL_COUNT], first_axis[EINSUM_LABEL_COUNT];
    kiln_shape ellipsis = {.rank = 0};
    for (uint32_t k = 0; k < input_count; k++) {
        const einsum_term *term = &eq.operands[k];
        const kiln_shape *shape = &inputs[k]->shape;
        uint32_t ell = 0;
        KILN_TRY(ellipsis_rank(ctx->node_label, equation, term, k, shape->rank, &ell, err));
        uint32_t axis = 0;
        for (uint32_t s = 0; s < term->count; s++) {
            int l = term->subscripts[s];
            if (l == EINSUM_ELLIPSIS) {
                /* Broadcast this operand's '...' axes into the others', aligned from the right. */
                kiln_shape mine = {.rank = ell};
                for (uint32_t j = 0; j < ell; j++)
                    mine.axes[j] = shape->axes[axis + j];
                kiln_shape_context labelled = *ctx;
                char node_label[160];
                snprintf(node_label, sizeof node_label, "%s, broadcasting the '...' axes of the operands",
                         ctx->node_label);
                labelled.node_label = node_label;
                kiln_shape merged;
                KILN_TRY(kiln_broadcast_shapes(&labelled, &ellipsis, &mine, &merged, err));
                ellipsis = merged;
                axis += ell;
                continue;
            }
            uint32_t here = shape->axes[axis];
            if (!known[l]) {
                known[l] = true;
                size[l] = here;
                first_operand[l] = k;
                first_axis[l] = axis;
            } else {
                char a[96], b[96], what[320];
                kiln_format_size(ctx, here, a, sizeof a);
                kiln_format_size(ctx, size[l], b, sizeof b);
                snprintf(what, sizeof what, "label '%c': input %u axis %u size %s equals input %u axis %u size %s",
                         label_char(l), k, axis, a, first_operand[l], first_axis[l], b);
                kiln_size_claim claim = {KILN_CLAIM_EQUAL, here, size[l], 0};
                KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Give the axes that share a label the same dim",
                                               err));
            }
            axis++;
        }
    }
    out->dtype = inputs[0]->dtype;
    out->shape.rank = 0;
    for (uint32_t s = 0; s < eq.output.count; s++) {
        int l = eq.output.subscripts[s];
        uint32_t added = l == EINSUM_ELLIPSIS ? ellipsis.rank : 1;
        if (out->shape.rank + added > KILN_MAX_RANK)
            return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: equation \"%s\": the output has more than %d axes",
                             ctx->node_label, equation, KILN_MAX_RANK);
        if (l == EINSUM_ELLIPSIS)
            for (uint32_t j = 0; j < ellipsis.rank; j++)
                out->shape.axes[out->shape.rank++] = ellipsis.axes[j];
        else
            out->shape.axes[out->shape.rank++] = size[l];
    }
    return KILN_OK;
}

/* ---------------------------------------------------------------- kernel */

/* The loops of one call: extents, and each operand's stride on each loop axis. */
typedef struct einsum_loops {
    uint32_t output_axes; /* loop axes 0..output_axes-1 walk the output in order */
    uint32_t count;       /* all loop axes: the output's, then the summed ones */
    int64_t extent[EINSUM_MAX_LOOP_AXES];
    int64_t stride[EINSUM_MAX_OPERANDS][EINSUM_MAX_LOOP_AXES];
    uint8_t users[EINSUM_MAX_LOOP_AXES]; /* bit k: operand k moves along this axis (not broadcast) */
} einsum_loops;

static kiln_status mismatch(kiln_error *err)
{
    return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "einsum: operands do not match the op's shape rule");
}

/*
 * Lay out the loop axes: the output's subscripts (each '...' axis one loop
 * axis), then each summed label, then the '...' axes the output drops.
 * Checks the sizes the shape rule proved, as the tensors have them.
 */
static kiln_status plan_loops(const einsum_equation *eq, const kiln_kernel_call *call, const kiln_tensor *out,
                              einsum_loops *loops, kiln_error *err)
{
    const kiln_tensor *const *inputs = call->inputs;
    const kiln_kernel_context *context = call->context;
    int label_axis[EINSUM_LABEL_COUNT];
    uint32_t ell_rank[EINSUM_MAX_OPERANDS], broadcast_rank = 0;
    int64_t broadcast[KILN_MAX_RANK];
    for (int l = 0; l < EINSUM_LABEL_COUNT; l++)
        label_axis[l] = -1;
    for (uint32_t k = 0; k < eq->operand_count; k++) {
        uint32_t letters = eq->operands[k].count - (eq->operands[k].has_ellipsis ? 1 : 0);
        if (letters > inputs[k]->rank || (!eq->operands[k].has_ellipsis && letters != inputs[k]->rank))
            return mismatch(err);
        ell_rank[k] = inputs[k]->rank - letters;
        broadcast_rank = ell_rank[k] > broadcast_rank ? ell_rank[k] : broadcast_rank;
    }
    /* The broadcast '...' shape, aligned from the right. */
    for (uint32_t j = 0; j < broadcast_rank; j++)
        broadcast[j] = 1;
    for (uint32_t k = 0; k < eq->operand_count; k++) {
        uint32_t start = 0;
        while (start < eq->operands[k].count && eq->operands[k].subscripts[start] != EINSUM_ELLIPSIS)
            start++;
        for (uint32_t j = 0; j < ell_rank[k]; j++) {
            int64_t n = inputs[k]->shape[start + j];
            int64_t *b = &broadcast[broadcast_rank - ell_rank[k] + j];
            if (*b == 1)
                *b = n;
            else if (n != 1 && n != *b)
                return mismatch(err);
        }
    }
    memset(loops, 0, sizeof *loops);
    int ellipsis_loop = -1; /* loop axis of the first '...' axis */
    for (uint32_t s = 0; s < eq->output.count; s++) {
        int l = eq->output.subscripts[s];
        if (l == EINSUM_ELLIPSIS) {
            ellipsis_loop = (int)loops->count;
            for (uint32_t j = 0; j < broadcast_rank; j++)
                loops->extent[loops->count++] = broadcast[j];
        } else {
            label_axis[l] = (int)loops->count;
            loops->extent[loops->count++] = -1; /* set from the operands below */
        }
    }
    loops->output_axes = loops->count;
    if (out->rank != loops->output_axes)
        return mismatch(err);
    for (uint32_t k = 0; k < eq->operand_count; k++)
        for (uint32_t s = 0; s < eq->operands[k].count; s++) {
            int l = eq->operands[k].subscripts[s];
            if (l != EINSUM_ELLIPSIS && label_axis[l] < 0) {
                label_axis[l] = (int)loops->count;
                loops->extent[loops->count++] = -1;
            }
        }
    if (ellipsis_loop < 0 && broadcast_rank > 0) { /* '...' dropped by the output: summed */
        ellipsis_loop = (int)loops->count;
        for (uint32_t j = 0; j < broadcast_rank; j++)
            loops->extent[loops->count++] = broadcast[j];
    }
    /* Strides; a label's extent is its size wherever it appears. An
     * operand the session marks strided (a state view, kernel_context.h)
     * is read through its own; the others are packed. */
    for (uint32_t k = 0; k < eq->operand_count; k++) {
        const kiln_tensor *t = inputs[k];
        int64_t strides[KILN_MAX_RANK], stride = 1;
        bool strided = context && (context->strided_operands >> k & 1u);
        for (uint32_t i = t->rank; i-- > 0;) {
            strides[i] = strided ? context->operand_strides[k][i] : stride;
            /* An empty operand ((0, 2^62, 2^62)) may overflow here; its
             * strides are never used, as every sum over it is empty. */
            if (__builtin_mul_overflow(stride, t->shape[i], &stride))
                stride = 0;
        }
        uint32_t axis = 0;
        for (uint32_t s = 0; s < eq->operands[k].count; s++) {
            int l = eq->operands[k].subscripts[s];
            if (l == EINSUM_ELLIPSIS) {
                for (uint32_t j = 0; j < ell_rank[k]; j++, axis++) {
                    uint32_t loop = (uint32_t)ellipsis_loop + broadcast_rank - ell_rank[k] + j;
                    if (t->shape[axis] != 1 || loops->extent[loop] == 1) {
                        loops->stride[k][loop] += strides[axis];
                        loops->users[loop] |= (uint8_t)(1u << k);
                    }
                }
                continue;
            }
            int64_t *extent = &loops->extent[label_axis[l]];
            if (*extent >= 0 && *extent != t->shape[axis])
                return mismatch(err);
            *extent = t->shape[axis];
            loops->stride[k][label_axis[l]] += strides[axis];
            loops->users[label_axis[l]] |= (uint8_t)(1u << k);
            axis++;
        }
    }
    for (uint32_t i = 0; i < loops->output_axes; i++)
        if (loops->extent[i] != out->shape[i])
            return mismatch(err);
    return KILN_OK;
}

/* A sum of products: floats accumulate in double, integers wrap modulo 2^64. */
typedef struct einsum_sum {
    double real;
    uint64_t integer;
} einsum_sum;

/*
 * The summed loop axes, split by who moves along them: those both operands
 * move along (`shared`), and each operand's own (`own[k]`), each list in
 * loop order. A sum of products factors over the own axes:
 *   sum over shared, own0, own1 of a*b = sum over shared of (sum over own0 of a) * (sum over own1 of b),
 * so "ij,kl->" on two n x n operands costs 2n^2 steps, not n^4 (measured
 * before the split: 3.7 s for n = 200; issue 20).
 */
typedef struct einsum_walk {
    uint32_t rank;
    int64_t extent[EINSUM_MAX_LOOP_AXES];
    int64_t stride[EINSUM_MAX_OPERANDS][EINSUM_MAX_LOOP_AXES];
} einsum_walk;

typedef struct einsum_summed {
    bool empty; /* a summed axis has extent 0: every sum is empty */
    einsum_walk shared;
    einsum_walk own[EINSUM_MAX_OPERANDS];
} einsum_summed;

static void walk_add(einsum_walk *walk, const einsum_loops *loops, uint32_t axis, uint32_t operand_count)
{
    walk->extent[walk->rank] = loops->extent[axis];
    for (uint32_t k = 0; k < operand_count; k++)
        walk->stride[k][walk->rank] = loops->stride[k][axis];
    walk->rank++;
}

static void split_summed(const einsum_loops *loops, uint32_t operand_count, einsum_summed *summed)
{
    memset(summed, 0, sizeof *summed);
    uint8_t all = (uint8_t)((1u << operand_count) - 1);
    for (uint32_t i = loops->output_axes; i < loops->count; i++) {
        summed->empty = summed->empty || loops->extent[i] == 0;
        uint8_t users = loops->users[i];
        if (users == all || users == 0) /* users == 0 only for an axis of extent 1 */
            walk_add(&summed->shared, loops, i, operand_count);
        else
            walk_add(&summed->own[users == 1 ? 0 : 1], loops, i, operand_count);
    }
}

static uint64_t integer_at(const kiln_tensor *t, int64_t i)
{
    return t->dtype == KILN_I32 ? (uint64_t)(int64_t)((const int32_t *)t->data)[i]
                                : (uint64_t)((const int64_t *)t->data)[i];
}

/* Operand k summed over its own axes from offset `base` (just its element there when it has none). */
static einsum_sum sum_own(const einsum_walk *own, uint32_t k, const kiln_tensor *t, bool real, int64_t base)
{
    einsum_sum sum = {0.0, 0};
    int64_t index[EINSUM_MAX_LOOP_AXES] = {0}, offset = base;
    for (bool more = true; more;) {
        if (real)
            sum.real += kiln_tensor_load_real(t, (uint64_t)offset);
        else
            sum.integer += integer_at(t, offset);
        more = kiln_odometer_next_offset(index, own->rank, own->extent, own->stride[k], &offset);
    }
    return sum;
}

/* Sum the products over the summed loop axes, the operands starting at offsets `base`. */
static einsum_sum sum_products(const einsum_summed *summed, const kiln_tensor *const *inputs, uint32_t operand_count,
                               const int64_t *base)
{
    einsum_sum sum = {0.0, 0};
    if (summed->empty)
        return sum;
    int64_t index[EINSUM_MAX_LOOP_AXES] = {0}, offset[EINSUM_MAX_OPERANDS] = {0};
    bool real = inputs[0]->dtype == KILN_F32 || inputs[0]->dtype == KILN_F64;
    const int64_t *strides[EINSUM_MAX_OPERANDS];
    for (uint32_t k = 0; k < operand_count; k++) {
        offset[k] = base[k];
        strides[k] = summed->shared.stride[k];
    }
    for (bool more = true; more;) {
        einsum_sum product = sum_own(&summed->own[0], 0, inputs[0], real, offset[0]);
        for (uint32_t k = 1; k < operand_count; k++) {
            einsum_sum factor = sum_own(&summed->own[k], k, inputs[k], real, offset[k]);
            product.real *= factor.real;
            product.integer *= factor.integer;
        }
        sum.real += product.real;
        sum.integer += product.integer;
        more = kiln_odometer_next_offsets(index, summed->shared.rank, summed->shared.extent, operand_count, strides,
                                          offset);
    }
    return sum;
}

/*
 * The fast path: two f32 operands whose equation is one batched matrix
 * product ("bhqd,bhkd->bhqk", "ij,jk->ik", "bij,jk->bik"). Every summed
 * label of extent above 1 must be shared by both operands, and there may be
 * one (K; none: K = 1); the product's m is the last output label only a
 * reads, its n the last only b reads (none: 1), and every other output
 * label is a batch axis, read by both or broadcast from size 1 by the one
 * that lacks it. The operands are read through their loop strides, so
 * nothing is copied: a diagonal or a transposed operand is just strides
 * (oneDNN declines strides it cannot read, and the reference runs). Loop
 * strides and extents follow from the equation and the shapes, so a
 * node's product is the same at the same shapes (its cache key).
 * Measured: einsum ran 57x slower than ONNX Runtime, 150x slower than
 * kiln's own matmul on the same contraction, on the reference loops.
 * @return false when the equation is no such product.
 */
static bool as_product(const einsum_loops *loops, kiln_onednn_product *p)
{
    int m = -1, n = -1, k = -1;
    for (uint32_t i = loops->output_axes; i < loops->count; i++) {
        if (loops->extent[i] == 1)
            continue; /* one term: no sum */
        if (loops->users[i] != 3 || k >= 0)
            return false;
        k = (int)i;
    }
    for (uint32_t i = 0; i < loops->output_axes; i++) {
        if (loops->users[i] == 1)
            m = (int)i;
        else if (loops->users[i] == 2)
            n = (int)i;
        else if (loops->users[i] == 0 && loops->extent[i] != 1)
            return false;
    }
    /* The output is row-major over its loop axes. */
    int64_t y_stride[KILN_MAX_RANK], stride = 1;
    for (uint32_t i = loops->output_axes; i-- > 0;) {
        y_stride[i] = stride;
        stride *= loops->extent[i];
    }
    int rank = 0;
    for (uint32_t i = 0; i < loops->output_axes; i++) {
        if ((int)i == m || (int)i == n)
            continue;
        bool in_a = loops->users[i] & 1, in_b = loops->users[i] & 2;
        p->a_dims[rank] = in_a ? loops->extent[i] : 1, p->a_strides[rank] = in_a ? loops->stride[0][i] : 1;
        p->b_dims[rank] = in_b ? loops->extent[i] : 1, p->b_strides[rank] = in_b ? loops->stride[1][i] : 1;
        p->y_dims[rank] = loops->extent[i], p->y_strides[rank] = y_stride[i];
        rank++;
    }
    if (rank + 2 > 12)
        return false;
    int64_t m_size = m >= 0 ? loops->extent[m] : 1, n_size = n >= 0 ? loops->extent[n] : 1;
    int64_t k_size = k >= 0 ? loops->extent[k] : 1;
    p->a_dims[rank] = m_size, p->a_strides[rank] = m >= 0 ? loops->stride[0][m] : 1;
    p->a_dims[rank + 1] = k_size, p->a_strides[rank + 1] = k >= 0 ? loops->stride[0][k] : 1;
    p->b_dims[rank] = k_size, p->b_strides[rank] = k >= 0 ? loops->stride[1][k] : 1;
    p->b_dims[rank + 1] = n_size, p->b_strides[rank + 1] = n >= 0 ? loops->stride[1][n] : 1;
    p->y_dims[rank] = m_size, p->y_strides[rank] = m >= 0 ? y_stride[m] : 1;
    p->y_dims[rank + 1] = n_size, p->y_strides[rank + 1] = n >= 0 ? y_stride[n] : 1;
    p->rank = rank + 2;
    /* An axis of extent 1 is never stepped along: give it the stride of a
     * row-major layout, since oneDNN failed to run a product whose 1-row
     * result had the same stride on both axes ("ik,ak->ai"). */
    int64_t *dims[3] = {p->a_dims, p->b_dims, p->y_dims}, *strides[3] = {p->a_strides, p->b_strides, p->y_strides};
    for (int o = 0; o < 3; o++)
        for (int d = p->rank; d-- > 0;)
            if (dims[o][d] == 1)
                strides[o][d] = d + 1 < p->rank ? strides[o][d + 1] * (dims[o][d + 1] > 0 ? dims[o][d + 1] : 1) : 1;
    return true;
}

/*
 * A product of single rows (M = 1) over a state view (a decode step's
 * attention over the cache) on kiln's own loops (vector_matrix.h), when
 * its strides let them read contiguously: nothing is built per shape, so
 * a cache one row longer each token costs no new oneDNN primitive (in a
 * 256-token generation after a 500-token prompt, decode steps took 0.72
 * ms on 2 threads with a primitive built per token and shape, 0.49 ms
 * without). Products of a fixed shape keep oneDNN's primitive, which is
 * built once. @return whether it ran.
 */
static bool one_row_products(const kiln_kernel_call *call, const kiln_onednn_product *p)
{
    int r = p->rank - 2;
    if (p->a_dims[r] != 1)
        return false;
    kiln_vector_products v = {.batch_rank = (uint32_t)r,
                              .k = p->a_dims[r + 1],
                              .n = p->b_dims[r + 1],
                              .a_k = p->a_strides[r + 1],
                              .b_k = p->b_strides[r],
                              .b_n = p->b_strides[r + 1],
                              .y_n = p->y_strides[r + 1]};
    for (int i = 0; i < r; i++) {
        v.batch[i] = p->y_dims[i];
        v.a_batch[i] = p->a_dims[i] == 1 ? 0 : p->a_strides[i];
        v.b_batch[i] = p->b_dims[i] == 1 ? 0 : p->b_strides[i];
        v.y_batch[i] = p->y_strides[i];
    }
    if (!kiln_vector_products_f32(&v, call->inputs[0]->data, call->inputs[1]->data, call->output->data,
                                  kiln_call_threads(call)))
        return false;
    kiln_call_report_path(call, KILN_PATH_VECTOR);
    return true;
}

static kiln_status run_einsum(const kiln_kernel_call *call, kiln_error *err)
{
    kiln_tensor *out = call->output;
    const kiln_node_attribute *attr = kiln_attribute_find(call->attributes, call->attribute_count, "equation");
    einsum_equation eq;
    if (!attr || parse_equation("einsum", attr->s, &eq, err) != KILN_OK || eq.operand_count != call->input_count)
        return mismatch(err);
    for (uint32_t k = 0; k < call->input_count; k++)
        if (call->inputs[k]->dtype != out->dtype || !einsum_dtype(out->dtype))
            return mismatch(err);
    KILN_HALF_IN_F32(call, run_einsum, err);
    einsum_loops loops;
    KILN_TRY(plan_loops(&eq, call, out, &loops, err));
    kiln_onednn_product product;
    if (call->context && eq.operand_count == 2 && out->dtype == KILN_F32 && as_product(&loops, &product)) {
        if (!call->context->reference_only && call->context->strided_operands && one_row_products(call, &product))
            return KILN_OK;
        bool ran;
        KILN_TRY(kiln_onednn_strided_product(call, &product, &ran, err));
        if (ran)
            return KILN_OK;
    }
    einsum_summed summed;
    split_summed(&loops, eq.operand_count, &summed);
    int64_t index[KILN_MAX_RANK] = {0}, offset[EINSUM_MAX_OPERANDS] = {0};
    const int64_t *strides[EINSUM_MAX_OPERANDS];
    for (uint32_t k = 0; k < eq.operand_count; k++)
        strides[k] = loops.stride[k];
    for (uint64_t e = 0; e < out->element_count; e++) {
        einsum_sum sum = sum_products(&summed, call->inputs, eq.operand_count, offset);
        switch (out->dtype) {
        case KILN_F32: ((float *)out->data)[e] = (float)sum.real; break;
        case KILN_F64: ((double *)out->data)[e] = sum.real; break;
        case KILN_I32: ((int32_t *)out->data)[e] = (int32_t)(uint32_t)sum.integer; break;
        default: ((int64_t *)out->data)[e] = (int64_t)sum.integer; break;
        }
        kiln_odometer_next_offsets(index, loops.output_axes, loops.extent, eq.operand_count, strides, offset);
    }
    return KILN_OK;
}

/* -------------------------------------------------------------- registry */

static const kiln_op_def einsum_ops[] = {
    {.name = "einsum", .versions = {1, 1}, .inputs = {1, EINSUM_MAX_OPERANDS}, .attributes = einsum_attributes,
     .infer = infer_einsum, .run = run_einsum, .traits = {.strided_operands = true}},
};

const kiln_op_family kiln_ops_einsum = KILN_OP_FAMILY(einsum_ops, "spec/ops/einsum.md");
