/* verify_generation.c — see verify_generation.h. */
#include "verify_generation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "term.h"

void verify_generation_replay(const kiln_program *program, const char *only, generation_outcomes *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = kiln_program_generation_count(program);
    out->index = calloc(n + 1, sizeof *out->index);
    out->results = calloc(n + 1, sizeof *out->results);
    out->status = calloc(n + 1, sizeof *out->status);
    out->message = calloc(n + 1, sizeof *out->message);
    if (!out->index || !out->results || !out->status || !out->message)
        return;
    for (uint32_t c = 0; c < n; c++) {
        kiln_generation_case g;
        if (!kiln_program_generation(program, c, &g))
            continue;
        if (only && strcmp(only, g.prefill_method) != 0 && strcmp(only, g.decode_method) != 0)
            continue;
        uint32_t k = out->case_count++;
        kiln_error err;
        out->index[k] = c;
        out->status[k] = kiln_program_replay_generation(program, c, &out->results[k], &err);
        if (out->status[k] != KILN_OK)
            snprintf(out->message[k], sizeof out->message[k], "%s", err.message);
        out->failed += out->status[k] != KILN_OK || !out->results[k].passed;
    }
}

void verify_generation_release(generation_outcomes *out)
{
    free(out->index);
    free(out->results);
    free(out->status);
    free(out->message);
    memset(out, 0, sizeof *out);
}

void verify_generation_print(FILE *f, const kiln_program *program, const generation_outcomes *out)
{
    fprintf(f, "generation %u case%s, %u failed\n", out->case_count, out->case_count == 1 ? "" : "s", out->failed);
    for (uint32_t k = 0; k < out->case_count; k++) {
        kiln_generation_case g;
        kiln_program_generation(program, out->index[k], &g);
        const kiln_generation_result *r = &out->results[k];
        if (out->status[k] != KILN_OK)
            term_printf(f, "  %-16s FAIL  %s\n", g.name, out->message[k]);
        else if (r->passed)
            term_printf(f, "  %-16s pass  %u tokens from a %u-token prompt (%s, then %s; margin %g)\n", g.name,
                        g.token_count, g.prompt_length, g.prefill_method, g.decode_method, g.margin);
        else
            term_printf(f, "  %-16s FAIL  token %u of %u: recorded %lld has logit %.9g, more than the margin %g "
                        "below token %lld's %.9g\n", g.name, r->matched, g.token_count, (long long)r->expected,
                        r->expected_logit, g.margin, (long long)r->chosen, r->chosen_logit);
    }
}

/* A logit that is not finite is written as null: JSON has no NaN. */
static void member_logit(json_writer *w, const char *key, double value)
{
    if (isfinite(value)) {
        json_member_double(w, key, value);
    } else {
        json_key(w, key);
        json_null(w);
    }
}

void verify_generation_json(json_writer *w, const kiln_program *program, const generation_outcomes *out)
{
    for (uint32_t k = 0; k < out->case_count; k++) {
        kiln_generation_case g;
        kiln_program_generation(program, out->index[k], &g);
        const kiln_generation_result *r = &out->results[k];
        bool ran = out->status[k] == KILN_OK;
        json_begin_object(w);
        json_member_string(w, "name", g.name);
        json_member_string(w, "prefill_method", g.prefill_method);
        json_member_string(w, "decode_method", g.decode_method);
        json_member_uint(w, "prompt_tokens", g.prompt_length);
        json_member_uint(w, "tokens", g.token_count);
        json_member_double(w, "margin", g.margin);
        json_member_bool(w, "passed", ran && r->passed);
        json_member_uint(w, "matched", ran ? r->matched : 0);
        if (!ran) {
            json_member_string(w, "error", out->message[k]);
        } else if (!r->passed) {
            json_member_int(w, "expected", r->expected);
            json_member_int(w, "chosen", r->chosen);
            member_logit(w, "expected_logit", r->expected_logit);
            member_logit(w, "chosen_logit", r->chosen_logit);
        }
        json_end_object(w);
    }
}
