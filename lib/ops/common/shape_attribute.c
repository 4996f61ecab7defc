/* shape_attribute.c — see shape_attribute.h. */
#include <stdio.h>
#include <stdlib.h>

#include "attribute.h"
#include "error.h"
#include "shape_attribute.h"
#include "shape_parse.h"
#include "size_claim.h"

kiln_status kiln_shape_attribute(const kiln_shape_context *ctx, const char *name, int64_t min_size, kiln_shape *out,
                                 kiln_error *err)
{
    const kiln_node_attribute *attr = kiln_attribute_find(ctx->attributes, ctx->attribute_count, name);
    if (!attr || attr->type != KILN_ATTRIBUTE_STRING)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' (a shape over the dims) is required",
                         ctx->node_label, name);
    const char **names = malloc((ctx->dim_count ? ctx->dim_count : 1) * sizeof *names);
    if (!names)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "%s: out of memory", ctx->node_label);
    for (uint32_t i = 0; i < ctx->dim_count; i++)
        names[i] = ctx->dims[i].name;
    kiln_error parse_error = {0};
    kiln_status status = kiln_shape_parse(attr->s, names, ctx->dim_count, ctx->pool, &out->rank, out->axes,
                                          &parse_error);
    free(names);
    if (status == KILN_ERR_OUT_OF_MEMORY)
        return kiln_fail(err, status, "%s: out of memory", ctx->node_label);
    if (status != KILN_OK)
        return kiln_fail(err, KILN_ERR_INVALID_PROGRAM, "%s: attribute '%s' \"%s\" is not a shape over the declared "
                         "dims: %s", ctx->node_label, name, attr->s, parse_error.message);
    for (uint32_t i = 0; i < out->rank; i++) {
        char size_text[128], what[256];
        kiln_format_size(ctx, out->axes[i], size_text, sizeof size_text);
        snprintf(what, sizeof what, "%s[%u] = %s is >= %lld", name, i, size_text, (long long)min_size);
        kiln_size_claim claim = {KILN_CLAIM_AT_LEAST, out->axes[i], 0, min_size};
        KILN_TRY(kiln_prove_size_claim(ctx, &claim, what, "Declare the dims so that every target size is one", err));
    }
    return KILN_OK;
}
