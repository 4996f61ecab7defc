/* value_bound.c — bounds on magnitudes through elementwise ops (see value_bound.h). */
#include "value_bound.h"

#include <float.h>
#include <math.h>

#include "attribute.h"
#include "op_registry.h"

/* B if it is a bound an f32 value can have, else +inf (a result that may have overflowed). */
static double finite_or_unknown(double b)
{
    return b <= FLT_MAX ? b : INFINITY;
}

kiln_bound_rule kiln_bound_rule_of(const kiln_model *m, uint32_t n)
{
    const kiln_node_decl *node = &m->nodes[n];
    uint32_t result = kiln_model_first_node_value(m) + n;
    kiln_bound_rule none = {KILN_BOUND_NONE, 0.0};
    if (m->value_types[result].dtype != KILN_F32 || node->input_count == 0)
        return none;
    switch (m->opset[node->op].def->traits.magnitude) {
    case KILN_MAGNITUDE_NOT_ABOVE_OPERAND: /* |relu(x)| <= |x| */
        return (kiln_bound_rule){KILN_BOUND_SCALED, 1.0};
    case KILN_MAGNITUDE_SLOPE_ALPHA: { /* |leaky_relu(x)| <= max(1, |alpha|) |x|, rounded once */
        double alpha = kiln_attribute_float(node->attributes, node->attribute_count, "alpha", 0.01);
        return (kiln_bound_rule){KILN_BOUND_SCALED, fmax(1.0, fabs(alpha)) * (1 + 0x1p-22)};
    }
    case KILN_MAGNITUDE_CLIPPED: { /* x inside its bounds, rounded to f32 (a NaN would pass, but x has none) */
        double lo = kiln_attribute_float(node->attributes, node->attribute_count, "min", -HUGE_VAL);
        double hi = kiln_attribute_float(node->attributes, node->attribute_count, "max", HUGE_VAL);
        return (kiln_bound_rule){KILN_BOUND_CLAMPED, fmax(fabs(lo), fabs(hi)) * (1 + 0x1p-22)};
    }
    case KILN_MAGNITUDE_SUM: /* |a ± b| <= |a| + |b|, rounded once */
        return node->input_count == 2 ? (kiln_bound_rule){KILN_BOUND_SUM, 1 + 0x1p-22} : none;
    case KILN_MAGNITUDE_LARGEST_OPERAND: /* concat: every element is one of an operand's */
        return (kiln_bound_rule){KILN_BOUND_LARGEST, 1.0};
    case KILN_MAGNITUDE_UNKNOWN:
        break;
    }
    return none;
}

double kiln_bound_apply(kiln_bound_rule rule, const kiln_node_decl *node, const double *bounds)
{
    if (rule.kind == KILN_BOUND_NONE)
        return INFINITY;
    double x = bounds[node->inputs[0]];
    if (!(x <= FLT_MAX))
        return INFINITY;
    switch (rule.kind) {
    case KILN_BOUND_SCALED:
        return finite_or_unknown(x * rule.factor);
    case KILN_BOUND_CLAMPED:
        return fmin(x, rule.factor);
    case KILN_BOUND_SUM: {
        double y = bounds[node->inputs[1]];
        return y <= FLT_MAX ? finite_or_unknown((x + y) * rule.factor) : INFINITY;
    }
    case KILN_BOUND_LARGEST:
        for (uint32_t i = 1; i < node->input_count; i++) {
            double b = bounds[node->inputs[i]];
            if (!(b <= FLT_MAX))
                return INFINITY;
            x = fmax(x, b);
        }
        return x;
    case KILN_BOUND_NONE:
        break;
    }
    return INFINITY;
}
