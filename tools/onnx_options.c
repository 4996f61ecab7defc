/* onnx_options.c — see onnx_options.h. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnx_options.h"
#include "term.h"

bool onnx_options_parse_dim(char *text, kiln_onnx_dim *out)
{
    char *equals = strchr(text, '=');
    if (!equals || equals == text)
        return false;
    char *dots = strstr(equals + 1, "..");
    char *colon = strchr(dots ? dots + 2 : equals + 1, ':');
    int64_t min, max, multiple_of = 0;
    if (!dots) {
        /* NAME=N: the one size N, as --dim takes it on run, bench and probe. */
        if (colon || !cli_parse_whole(equals + 1, equals + 1 + strlen(equals + 1), &min))
            return false;
        max = min;
    } else {
        char *max_end = colon ? colon : dots + 2 + strlen(dots + 2);
        if (!cli_parse_whole(equals + 1, dots, &min) || !cli_parse_whole(dots + 2, max_end, &max) || min > max)
            return false;
    }
    if (colon && (!cli_parse_whole(colon + 1, colon + 1 + strlen(colon + 1), &multiple_of) || multiple_of < 1))
        return false;
    *equals = '\0';
    out->name = text;
    out->min = min;
    out->max = max;
    out->multiple_of = multiple_of;
    return true;
}

/* Print " --dim NAME=MIN..MAX:K" for each dim of `dims` that `changed` marks. */
static void print_dim_flags(FILE *out, const kiln_onnx_dim *dims, uint32_t count, const bool *changed)
{
    for (uint32_t d = 0; d < count; d++)
        if (changed[d])
            term_printf(out, " --dim %s=%lld..%lld:%lld", dims[d].name, (long long)dims[d].min,
                        (long long)dims[d].max, (long long)dims[d].multiple_of);
}

/* Whether `line` holds "NAME=" with NAME a whole word: a dim's value in a counterexample ("h=18, w=3"). */
static bool names_dim_value(const char *line, const char *name)
{
    size_t length = strlen(name);
    for (const char *at = strstr(line, name); at; at = strstr(at + 1, name)) {
        bool starts_word = at == line || !(isalnum((unsigned char)at[-1]) || at[-1] == '_' || at[-1] == '.');
        if (starts_word && at[length] == '=')
            return true;
    }
    return false;
}

/*
 * Mark in `wanted` every dim of `dims` a counterexample in `result`'s
 * report gives a value to. @return the number newly marked.
 */
static uint32_t mark_counterexample_dims(const kiln_onnx_result *result, const kiln_onnx_dim *dims, uint32_t count,
                                         bool *wanted)
{
    uint32_t marked = 0;
    for (uint32_t i = 0; i < kiln_onnx_result_unsupported_count(result); i++) {
        const char *line = kiln_onnx_result_unsupported(result, i);
        const char *example = strstr(line, "counterexample");
        for (uint32_t d = 0; example && d < count; d++)
            if (!wanted[d] && names_dim_value(example, dims[d].name)) {
                wanted[d] = true;
                marked++;
            }
    }
    return marked;
}

bool onnx_options_suggest_multiple_of(FILE *out, const kiln_onnx_model *model, const kiln_onnx_options *options,
                                      const kiln_onnx_result *result)
{
    enum { MAX_TRIED_DIMS = 16 };
    uint32_t count = options->dim_count;
    if (count == 0 || count > MAX_TRIED_DIMS)
        return false;
    bool first_wanted[MAX_TRIED_DIMS] = {false};
    if (!mark_counterexample_dims(result, options->dims, count, first_wanted))
        return false;
    kiln_onnx_dim dims[MAX_TRIED_DIMS];
    kiln_onnx_options trial = *options;
    trial.dims = dims;
    /* The smallest power of two first (each stride-2 downsampling a UNet
     * undoes needs a factor 2). For each K, the dims the counterexamples
     * name take multiple_of K; when the import then fails at a
     * counterexample naming another dim (the width, once the height is
     * settled), that dim joins them. */
    for (int64_t k = 2; k <= 64; k *= 2) {
        bool wanted[MAX_TRIED_DIMS];
        memcpy(wanted, first_wanted, sizeof wanted);
        for (;;) {
            bool any = false;
            for (uint32_t d = 0; d < count; d++) {
                dims[d] = options->dims[d];
                wanted[d] = wanted[d] && dims[d].multiple_of <= 1 && dims[d].max >= k;
                if (wanted[d])
                    dims[d].multiple_of = k;
                any = any || wanted[d];
            }
            if (!any)
                break;
            kiln_onnx_result *retry = NULL;
            kiln_error err;
            kiln_status status = kiln_onnx_import(model, &trial, &retry, &err);
            uint32_t grown = status == KILN_OK ? 0 : mark_counterexample_dims(retry, dims, count, wanted);
            kiln_onnx_result_free(retry);
            if (status == KILN_OK) {
                term_printf(out, "hint: the model imports with");
                print_dim_flags(out, dims, count, wanted);
                term_printf(out, " (sizes restricted to multiples of %lld)\n", (long long)k);
                return true;
            }
            if (!grown)
                break;
        }
    }
    return false;
}

void onnx_options_print_report(FILE *out, const kiln_onnx_result *result)
{
    for (uint32_t i = 0; i < kiln_onnx_result_unsupported_count(result); i++)
        term_printf(out, "  %s\n", kiln_onnx_result_unsupported(result, i));
}
