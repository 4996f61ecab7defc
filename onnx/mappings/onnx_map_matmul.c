/*
 * onnx_map_matmul.c — MatMul, reading a transposed operand in place.
 *
 * MatMul(A, Transpose(W)) with the Transpose swapping W's last two axes
 * is what exporters write for a tied output projection (x @ E^T, E the
 * token embedding) and for attention's q @ k^T. Translated as written, the
 * transpose copies W on every run (a whole embedding per token). As an
 * einsum over W itself (`...mk,...nk->...mn`) the product reads W through
 * strides (lib/ops/einsum.c), so nothing is copied; the Transpose node,
 * read by nothing else, is dead and never runs. A MatMul over the rows a
 * state holds is an einsum too, which reads them in the state. Other
 * MatMuls stay kiln matmuls.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_mapping.h"

/* Whether `t` (a Transpose of a rank-`rank` value) swaps the last two axes and keeps the others. */
static bool swaps_last_two(const Onnx__NodeProto *t, uint32_t rank)
{
    const Onnx__AttributeProto *perm = NULL;
    for (size_t a = 0; a < t->n_attribute; a++)
        if (t->attribute[a]->name && strcmp(t->attribute[a]->name, "perm") == 0)
            perm = t->attribute[a];
    if (!perm)
        return rank == 2; /* no perm reverses the axes: a swap only at rank 2 */
    if (perm->n_ints != rank)
        return false;
    for (uint32_t i = 0; i < rank; i++) {
        int64_t want = i + 2 < rank ? i : (i + 2 == rank ? rank - 1 : rank - 2);
        if (perm->ints[i] != want)
            return false;
    }
    return true;
}

/* Whether A's batch axes have the same sizes as W's (equal size texts): einsum gives a batch axis one size. */
static bool same_batch(onnx_node *node, kiln_value a, kiln_value w, uint32_t batch)
{
    for (uint32_t i = 0; i < batch; i++) {
        char at[128], wt[128];
        if (onnx_node_axis_text(node, a, i, at, sizeof at) != KILN_OK ||
            onnx_node_axis_text(node, w, i, wt, sizeof wt) != KILN_OK || strcmp(at, wt) != 0)
            return false;
    }
    return true;
}

/* Batch letters a, b, ... for `batch_rank` axes, then the matrix axes of the einsum of A and W (`w_axes`). */
static kiln_status emit_einsum(onnx_node *node, kiln_value a, kiln_value w, uint32_t batch_rank, bool w_batched,
                               const char *w_axes)
{
    char equation[4 * KILN_MAX_RANK + 16], batch[KILN_MAX_RANK + 1];
    for (uint32_t i = 0; i < batch_rank; i++)
        batch[i] = (char)('a' + i);
    batch[batch_rank] = '\0';
    snprintf(equation, sizeof equation, "%smk,%s%s->%smn", batch, w_batched ? batch : "", w_axes, batch);
    onnx_attrs list = {0};
    if (!onnx_attrs_string(&list, "equation", equation, strlen(equation)))
        return onnx_node_unsupported(node, "too many attributes");
    kiln_status status = onnx_map_refuse_extra_outputs(node, 1);
    if (status == KILN_OK)
        status = onnx_map_emit_output(node, "einsum", 2, (kiln_value[]){a, w}, &list);
    return status;
}

/*
 * MatMul(A, S), S the rows a state holds after its append (attention's
 * probabilities times the cached values): as an einsum it reads S where
 * the state keeps it (lib/runtime/state_view.h), where a matmul would
 * have the rows copied out packed first, the whole cache per token.
 */
static kiln_status map_state_product(onnx_node *node, kiln_value a, kiln_value s, bool *done)
{
    kiln_dtype a_dtype, s_dtype;
    uint32_t a_rank, s_rank;
    *done = false;
    kiln_status status = onnx_node_type(node, a, &a_dtype, &a_rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, s, &s_dtype, &s_rank, NULL);
    if (status != KILN_OK || a_dtype != s_dtype || s_rank < 3 || a_rank != s_rank || a_rank > KILN_MAX_RANK ||
        !same_batch(node, a, s, a_rank - 2))
        return status;
    *done = true;
    return emit_einsum(node, a, s, a_rank - 2, true, "kn");
}

kiln_status onnx_map_matmul(onnx_node *node, const char *kiln_op)
{
    if (node->proto->n_input == 2 && onnx_node_has_input(node, 0) && onnx_node_has_input(node, 1)) {
        kiln_value a, b;
        bool done = false;
        kiln_status status = onnx_node_input(node, 0, &a);
        if (status == KILN_OK)
            status = onnx_node_input(node, 1, &b);
        if (status == KILN_OK && onnx_node_is_state_rows(node, b))
            status = map_state_product(node, a, b, &done);
        if (status != KILN_OK || done)
            return status;
    }
    const Onnx__NodeProto *t = node->proto->n_input == 2 && onnx_node_has_input(node, 1)
                                   ? onnx_node_producer(node, node->proto->input[1])
                                   : NULL;
    if (!t || strcmp(t->op_type, "Transpose") != 0 || t->n_input != 1 || (t->domain && t->domain[0]))
        return onnx_map_rename(node, kiln_op);
    onnx_node transpose = {node->importer, t, node->opset, node->label, node->err};
    kiln_value a, w;
    kiln_dtype a_dtype, w_dtype;
    uint32_t a_rank, w_rank;
    kiln_status status = onnx_node_input(node, 0, &a);
    if (status == KILN_OK)
        status = onnx_node_input(&transpose, 0, &w);
    if (status == KILN_OK)
        status = onnx_node_type(node, a, &a_dtype, &a_rank, NULL);
    if (status == KILN_OK)
        status = onnx_node_type(node, w, &w_dtype, &w_rank, NULL);
    if (status != KILN_OK)
        return status;
    /* A weight-like W (one matrix) for any A of rank >= 2, or a W with A's batch axes. */
    bool weight_like = w_rank == 2 && a_rank >= 2;
    bool batched = w_rank > 2 && a_rank == w_rank && same_batch(node, a, w, a_rank - 2);
    if (a_dtype != w_dtype || !swaps_last_two(t, w_rank) || (!weight_like && !batched) ||
        a_rank > KILN_MAX_RANK)
        return onnx_map_rename(node, kiln_op);
    /* m, k (A), n, k (W), m, n (the result), after the batch letters. */
    return emit_einsum(node, a, w, a_rank - 2, !weight_like, "nk");
}
