/* fusion.c — which conv and activation pairs may run as one (see fusion.h). */
#include "fusion.h"

#include <math.h>
#include <stdlib.h>

#include "attribute.h"
#include "error.h"
#include "liveness.h"
#include "op_registry.h"

static const kiln_op_traits *traits_of(const kiln_model *m, uint32_t n)
{
    return &m->opset[m->nodes[n].op].def->traits;
}

uint32_t kiln_fusion_pair(const kiln_model *m, const bool *live, uint32_t n, const uint32_t *readers,
                          kiln_fused_activation *out)
{
    if (!traits_of(m, n)->applies_activation)
        return 0;
    uint32_t first = kiln_model_first_node_value(m), conv_value = first + n;
    uint32_t at = kiln_next_live_node(m, live, n);
    if (at >= m->node_count)
        return 0;
    const kiln_node_decl *next = &m->nodes[at];
    if (readers[n] != 1 || next->input_count != 1 || next->inputs[0] != conv_value ||
        m->value_types[conv_value].dtype != KILN_F32 || m->value_types[first + at].dtype != KILN_F32)
        return 0;
    /* The shape rules have checked the attributes: finite alpha, clip bounds
     * that are not NaN, in order and within the f32 range. */
    kiln_fused_activation a = {traits_of(m, at)->activation, 0.0f, 0.0f, INFINITY};
    switch (a.kind) {
    case KILN_ACTIVATION_RELU:
    case KILN_ACTIVATION_SILU:
    case KILN_ACTIVATION_HARD_SWISH:
        break;
    case KILN_ACTIVATION_LEAKY_RELU:
        a.alpha = (float)kiln_attribute_float(next->attributes, next->attribute_count, "alpha", 0.01);
        break;
    case KILN_ACTIVATION_CLIP:
        a.lo = (float)kiln_attribute_float(next->attributes, next->attribute_count, "min", -HUGE_VAL);
        a.hi = (float)kiln_attribute_float(next->attributes, next->attribute_count, "max", HUGE_VAL);
        break;
    case KILN_ACTIVATION_NONE:
        return 0;
    }
    if (out)
        *out = a;
    return at;
}

kiln_status kiln_fusion_readers(const kiln_model *m, const bool *live, uint32_t **out, kiln_error *err)
{
    uint32_t first = kiln_model_first_node_value(m);
    uint32_t *readers = calloc(m->node_count + 1, sizeof *readers);
    if (!readers)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory finding fused activations");
    for (uint32_t n = 0; n < m->node_count; n++)
        for (uint32_t i = 0; live[n] && i < m->nodes[n].input_count; i++)
            if (m->nodes[n].inputs[i] >= first && readers[m->nodes[n].inputs[i] - first] < UINT32_MAX)
                readers[m->nodes[n].inputs[i] - first]++;
    /* A program output has a reader outside the graph. */
    for (uint32_t o = 0; o < m->output_count; o++)
        if (m->outputs[o].value >= first && readers[m->outputs[o].value - first] < UINT32_MAX)
            readers[m->outputs[o].value - first]++;
    *out = readers;
    return KILN_OK;
}

bool kiln_fusion_plan_allows(const kiln_model *m, uint32_t n, uint32_t a, const uint64_t *offsets,
                             const uint64_t *sizes)
{
    uint32_t first = kiln_model_first_node_value(m);
    uint64_t begin = offsets[a], end = begin + sizes[a];
    const kiln_node_decl *conv = &m->nodes[n];
    for (uint32_t i = 0; i < conv->input_count; i++) {
        uint32_t v = conv->inputs[i];
        if (v < first)
            continue; /* an input or a weight: not in the arena */
        uint64_t other = offsets[v - first], other_end = other + sizes[v - first];
        if (other < end && begin < other_end)
            return false;
    }
    return true;
}

bool kiln_fusion_in_place(const void *output, size_t output_bytes, const void *x, size_t x_bytes)
{
    uintptr_t out = (uintptr_t)output, in = (uintptr_t)x;
    if (out == in && output_bytes == x_bytes)
        return true;
    return out + output_bytes <= in || in + x_bytes <= out;
}
