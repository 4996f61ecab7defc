/* onnx_options.c — see onnx_options.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_options.h"
#include "term.h"

static bool parse_size(const char *text, const char *end, int64_t *out)
{
    if (text == end || *text < '0' || *text > '9')
        return false;
    char *stop;
    errno = 0;
    long long value = strtoll(text, &stop, 10);
    if (errno != 0 || stop != end || value < 0)
        return false;
    *out = (int64_t)value;
    return true;
}

bool onnx_options_parse_dim(char *text, kiln_onnx_dim *out)
{
    char *equals = strchr(text, '=');
    if (!equals || equals == text)
        return false;
    char *dots = strstr(equals + 1, "..");
    if (!dots)
        return false;
    int64_t min, max;
    if (!parse_size(equals + 1, dots, &min) || !parse_size(dots + 2, dots + 2 + strlen(dots + 2), &max) || min > max)
        return false;
    *equals = '\0';
    out->name = text;
    out->min = min;
    out->max = max;
    out->multiple_of = 0;
    return true;
}

void onnx_options_print_report(FILE *out, const kiln_onnx_result *result)
{
    for (uint32_t i = 0; i < kiln_onnx_result_unsupported_count(result); i++)
        term_printf(out, "  %s\n", kiln_onnx_result_unsupported(result, i));
}
