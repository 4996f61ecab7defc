/* required_features.c — the required feature bits: which programs need bit 0 (half) and bit 1 (relations). */
#include "required_features.h"

#include "dtype.h"
#include "format/container.h"

bool kiln_model_holds_half(const kiln_model *m)
{
    for (uint32_t i = 0; i < m->input_count; i++)
        if (kiln_dtype_is_half(m->inputs[i].type.dtype))
            return true;
    for (uint32_t i = 0; i < m->weight_count; i++)
        if (kiln_dtype_is_half(m->weights[i].dtype))
            return true;
    /* A node may make a half value from other types (cast), so inputs and
     * weights alone do not decide. */
    for (uint32_t v = kiln_model_first_node_value(m); m->value_types && v < kiln_model_value_count(m); v++)
        if (kiln_dtype_is_half(m->value_types[v].dtype))
            return true;
    /* The bit is the artifact's: any method's values count. */
    for (uint32_t i = 0; i < m->method_count; i++)
        if (kiln_model_holds_half(&m->methods[i]))
            return true;
    return false;
}

bool kiln_model_declares_relations(const kiln_model *m)
{
    if (m->relation_count)
        return true;
    for (uint32_t i = 0; i < m->method_count; i++)
        if (m->methods[i].relation_count)
            return true;
    return false;
}

uint64_t kiln_model_required_features(const kiln_model *m)
{
    return (kiln_model_holds_half(m) ? KILN_FEATURE_HALF_PRECISION : 0) |
           (kiln_model_declares_relations(m) ? KILN_FEATURE_DIM_RELATIONS : 0);
}
