/* value_bound.c — bounds on magnitudes through elementwise ops (see value_bound.h). */
#include "value_bound.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "attribute.h"

/* B if it is a bound an f32 value can have, else +inf (a result that may have overflowed). */
static double finite_or_unknown(double b)
{
    return b <= FLT_MAX ? b : INFINITY;
}

double kiln_value_bound_after(const kiln_model *m, uint32_t n, const double *bounds)
{
    const kiln_node_decl *node = &m->nodes[n];
    uint32_t result = kiln_model_first_node_value(m) + n;
    if (m->value_types[result].dtype != KILN_F32 || node->input_count == 0)
        return INFINITY;
    const char *name = m->opset[node->op].name;
    double x = bounds[node->inputs[0]];
    if (!(x <= FLT_MAX))
        return INFINITY;
    /* |relu(x)| <= |x|; |leaky_relu(x)| <= max(1, |alpha|) |x|, rounded once. */
    if (strcmp(name, "relu") == 0)
        return x;
    if (strcmp(name, "leaky_relu") == 0) {
        double alpha = kiln_attribute_float(node->attributes, node->attribute_count, "alpha", 0.01);
        return finite_or_unknown(x * fmax(1.0, fabs(alpha)) * (1 + 0x1p-22));
    }
    /* clip keeps x inside its bounds, rounded to f32 (a NaN would pass, but x has none). */
    if (strcmp(name, "clip") == 0) {
        double lo = kiln_attribute_float(node->attributes, node->attribute_count, "min", -HUGE_VAL);
        double hi = kiln_attribute_float(node->attributes, node->attribute_count, "max", HUGE_VAL);
        return fmin(x, fmax(fabs(lo), fabs(hi)) * (1 + 0x1p-22));
    }
    /* |a ± b| <= |a| + |b|, rounded once. */
    if ((strcmp(name, "add") == 0 || strcmp(name, "sub") == 0) && node->input_count == 2) {
        double y = bounds[node->inputs[1]];
        return y <= FLT_MAX ? finite_or_unknown((x + y) * (1 + 0x1p-22)) : INFINITY;
    }
    return INFINITY;
}
