/* section_generation.c — see section_generation.h. */
#include "section_generation.h"

#include <stdlib.h>

#include "error.h"
#include "section_read.h"

/* A case of empty strings, one prompt token and one token: the least a record holds. */
enum { MIN_CASE_SIZE = 3 * 4 + (4 + 8) + (4 + 8) + 8 };

static void encode_tokens(kiln_writer *w, const int64_t *tokens, uint32_t count)
{
    kiln_write_u32(w, count);
    for (uint32_t i = 0; i < count; i++)
        kiln_write_i64(w, tokens[i]);
}

void kiln_generations_encode(const kiln_model *m, kiln_writer *w)
{
    kiln_write_u32(w, m->generation_count);
    for (uint32_t c = 0; c < m->generation_count; c++) {
        const kiln_generation_record *g = &m->generations[c];
        kiln_write_string(w, g->name);
        kiln_write_string(w, g->prefill_method);
        kiln_write_string(w, g->decode_method);
        encode_tokens(w, g->prompt, g->prompt_length);
        encode_tokens(w, g->tokens, g->token_count);
        kiln_write_f64(w, g->margin);
    }
}

/* A token list: a count of at least 1, then that many i64s that must be present. */
static kiln_status decode_tokens(kiln_reader *r, const char *case_name, const char *what, int64_t **tokens,
                                 uint32_t *count, kiln_error *err)
{
    uint32_t n;
    KILN_TRY(kiln_read_count(r, UINT32_MAX, 8, what, &n, err));
    if (n == 0)
        return kiln_fail(err, KILN_ERR_MALFORMED, "section GENV: case '%s' has no %s", case_name, what);
    if (!(*tokens = kiln_section_alloc_array(n, sizeof **tokens)))
        return kiln_section_out_of_memory(err);
    *count = n;
    for (uint32_t i = 0; i < n; i++)
        KILN_TRY(kiln_read_i64(r, &(*tokens)[i], err));
    return KILN_OK;
}

kiln_status kiln_generations_decode(const uint8_t *data, size_t size, const kiln_limits *limits, kiln_model *m,
                                    kiln_error *err)
{
    kiln_reader r;
    kiln_reader_init(&r, data, size, "section GENV");
    KILN_SECTION_READ_ARRAY(&r, limits->max_outputs, MIN_CASE_SIZE, "generation cases", m->generations,
                            m->generation_count, err);
    for (uint32_t c = 0; c < m->generation_count; c++) {
        kiln_generation_record *g = &m->generations[c];
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &g->name, err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &g->prefill_method, err));
        KILN_TRY(kiln_read_string(&r, limits->max_string_length, &g->decode_method, err));
        KILN_TRY(decode_tokens(&r, g->name, "prompt tokens", &g->prompt, &g->prompt_length, err));
        KILN_TRY(decode_tokens(&r, g->name, "tokens to make", &g->tokens, &g->token_count, err));
        KILN_TRY(kiln_read_f64(&r, &g->margin, err));
    }
    return kiln_reader_expect_end(&r, err);
}
