/* section_dtypes.c — see section_dtypes.h. */
#include "section_dtypes.h"

#include <stdio.h>

#include "error.h"
#include "dtype.h"
#include "required_features.h"
#include "report.h"

/* Why a half-precision value is refused in a file without feature bit 0. */
#define WITHOUT_HALF_BIT "is not supported by this runtime without the half-precision feature bit"

void kiln_section_note_dtype(kiln_report *report, uint32_t *unsupported, uint64_t features, kiln_dtype dtype,
                             const char *kind, const char *name)
{
    bool half_without_bit = kiln_dtype_is_half(dtype) && !(features & KILN_FEATURE_HALF_PRECISION);
    if (kiln_dtype_is_supported(dtype) && !half_without_bit)
        return;
    char location[160];
    snprintf(location, sizeof location, "%s '%s'", kind, name);
    kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_DTYPE, "dtype-unsupported", location,
                    "dtype %s %s", kiln_dtype_name(dtype),
                    half_without_bit ? WITHOUT_HALF_BIT : "is not supported by this runtime");
    (*unsupported)++;
}

kiln_status kiln_section_check_half_feature(const kiln_container *c, const kiln_model *m, kiln_report *report,
                                            kiln_error *err)
{
    bool has_bit = (c->features & KILN_FEATURE_HALF_PRECISION) != 0;
    if (has_bit && !kiln_model_holds_half(m))
        return kiln_fail(err, KILN_ERR_MALFORMED,
                         "header: required feature bit 0 (half-precision values) is set, but no input, weight "
                         "or node result is f16 or bf16");
    for (uint32_t method = 0; !has_bit && method <= m->method_count; method++) {
        const kiln_model *p = method == 0 ? m : &m->methods[method - 1];
        uint32_t first = kiln_model_first_node_value(p);
        for (uint32_t n = 0; n < p->node_count; n++) {
            kiln_dtype dtype = p->value_types[first + n].dtype;
            if (!kiln_dtype_is_half(dtype))
                continue;
            char location[200];
            if (p->method_name)
                snprintf(location, sizeof location, "method '%s', node %u (%s)", p->method_name, n,
                         p->opset[p->nodes[n].op].name);
            else
                snprintf(location, sizeof location, "node %u (%s)", n, p->opset[p->nodes[n].op].name);
            kiln_report_add(report, KILN_SEVERITY_ERROR, KILN_ERR_UNSUPPORTED_DTYPE, "dtype-unsupported", location,
                            "result dtype %s " WITHOUT_HALF_BIT, kiln_dtype_name(dtype));
        }
    }
    return KILN_OK;
}
