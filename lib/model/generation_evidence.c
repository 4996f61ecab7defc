/* generation_evidence.c — see generation_evidence.h. */
#include "generation_evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void kiln_generation_record_release(kiln_generation_record *c)
{
    free(c->name);
    free(c->prefill_method);
    free(c->decode_method);
    free(c->prompt);
    free(c->tokens);
    memset(c, 0, sizeof *c);
}

static int64_t *copy_tokens(const int64_t *from, uint32_t count)
{
    int64_t *to = malloc((size_t)count * sizeof *to);
    if (to)
        memcpy(to, from, (size_t)count * sizeof *to);
    return to;
}

kiln_status kiln_generation_record_from_case(const kiln_generation_case *c, kiln_generation_record *out,
                                             kiln_error *err)
{
    memset(out, 0, sizeof *out);
    if (!c || !c->name || !c->name[0] || !c->prompt || !c->prompt_length || !c->tokens || !c->token_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "a generation case needs a name, a prompt of at least one token and at least one token "
                         "it must make");
    if (!(c->margin >= 0 && isfinite(c->margin)))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT,
                         "generation case '%s': margin %g is not a finite number >= 0 (0: every token must be a "
                         "largest logit)", c->name, c->margin);
    out->name = strdup(c->name);
    out->prefill_method = strdup(c->prefill_method ? c->prefill_method : "prefill");
    out->decode_method = strdup(c->decode_method ? c->decode_method : "decode");
    out->prompt = copy_tokens(c->prompt, c->prompt_length);
    out->tokens = copy_tokens(c->tokens, c->token_count);
    out->prompt_length = c->prompt_length;
    out->token_count = c->token_count;
    out->margin = c->margin;
    if (!out->name || !out->prefill_method || !out->decode_method || !out->prompt || !out->tokens) {
        kiln_generation_record_release(out);
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for generation case '%s'", c->name);
    }
    return KILN_OK;
}

void kiln_generation_record_view(const kiln_generation_record *c, kiln_generation_case *out)
{
    *out = (kiln_generation_case){
        .name = c->name,
        .prefill_method = c->prefill_method,
        .decode_method = c->decode_method,
        .prompt = c->prompt,
        .prompt_length = c->prompt_length,
        .tokens = c->tokens,
        .token_count = c->token_count,
        .margin = c->margin,
    };
}
