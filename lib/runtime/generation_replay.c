/*
 * generation_replay.c — generation cases of a program (section GENV,
 * spec/format.md §7.15): their views, and their replay through a
 * kiln_generator fed the recorded tokens (teacher forcing), each step's
 * logits judged against the token it must make.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "program.h"

/* The program an artifact's generation cases belong to: its first method's. */
static const kiln_model *root_model(const kiln_program *p)
{
    return &kiln_program_root(p)->model;
}

uint32_t kiln_program_generation_count(const kiln_program *p)
{
    return p ? root_model(p)->generation_count : 0;
}

bool kiln_program_generation(const kiln_program *p, uint32_t index, kiln_generation_case *out)
{
    if (!p || !out || index >= root_model(p)->generation_count)
        return false;
    kiln_generation_record_view(&root_model(p)->generations[index], out);
    return true;
}

/* What the on_token judge needs: the case, the generator whose logits it reads, the verdict. */
typedef struct replay_judge {
    const kiln_generation_record *c;
    const kiln_generator *generator;
    kiln_generation_result *result;
} replay_judge;

/* Logit `v` of the last row of `logits` (f32 or f64). */
static double logit(const kiln_tensor *logits, int64_t v)
{
    uint32_t rank = kiln_tensor_rank(logits);
    uint64_t vocab = (uint64_t)kiln_tensor_shape(logits)[rank - 1];
    uint64_t at = kiln_tensor_element_count(logits) - vocab + (uint64_t)v;
    return kiln_tensor_dtype(logits) == KILN_F32 ? (double)((const float *)kiln_tensor_const_data(logits))[at]
                                                 : ((const double *)kiln_tensor_const_data(logits))[at];
}

/* After step `index` chose `chosen` (the largest logit): whether the recorded token is within the margin. */
static bool judge_token(void *user, uint32_t index, int64_t chosen)
{
    replay_judge *j = user;
    const kiln_tensor *logits = kiln_generator_logits(j->generator);
    int64_t vocab = kiln_tensor_shape(logits)[kiln_tensor_rank(logits) - 1];
    int64_t expected = j->c->tokens[index];
    double best = logit(logits, chosen);
    double got = expected < vocab ? logit(logits, expected) : NAN;
    if (got >= best - j->c->margin) {
        j->result->matched = index + 1;
        return true;
    }
    j->result->passed = false;
    j->result->expected = expected;
    j->result->chosen = chosen;
    j->result->expected_logit = got;
    j->result->chosen_logit = best;
    return false;
}

/* The nodes case `c` runs: its prefill's once, its decode's per token after the first. */
static bool case_nodes(const kiln_program *p, const kiln_generation_record *c, uint64_t *out)
{
    const kiln_program *prefill, *decode;
    if (kiln_program_method(p, c->prefill_method, &prefill, NULL) != KILN_OK ||
        kiln_program_method(p, c->decode_method, &decode, NULL) != KILN_OK)
        return false; /* kiln_generation_check keeps this from happening */
    uint64_t steps;
    return kiln_mul_u64(kiln_program_node_count(decode), c->token_count - 1, &steps) &&
           kiln_add_u64(steps, kiln_program_node_count(prefill), out);
}

/*
 * The replay budget, as for evidence cases (evidence_replay.c): case
 * `index` runs only if cases 0..index together run at most
 * max_replay_nodes nodes, so `kiln verify` replaying them in order is
 * bounded whatever the artifact holds.
 */
static kiln_status check_replay_budget(const kiln_program *root, uint32_t index, kiln_error *err)
{
    const kiln_model *m = &root->model;
    uint64_t total = 0, nodes;
    for (uint32_t i = 0; i <= index; i++)
        if (!case_nodes(root, &m->generations[i], &nodes) || !kiln_add_u64(total, nodes, &total))
            total = UINT64_MAX;
    if (total <= root->limits.max_replay_nodes)
        return KILN_OK;
    return kiln_fail(err, KILN_ERR_LIMIT,
                     "generation case '%s' (case %u of %u) is not replayed: replaying cases 0..%u runs %llu nodes, "
                     "over kiln_limits.max_replay_nodes (%llu); load it with a larger limit to replay this case",
                     m->generations[index].name, index, m->generation_count, index, (unsigned long long)total,
                     (unsigned long long)root->limits.max_replay_nodes);
}

kiln_status kiln_program_replay_generation(const kiln_program *p, uint32_t index, kiln_generation_result *result,
                                           kiln_error *err)
{
    if (!p || !result)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_program_replay_generation: program and result are "
                         "required");
    const kiln_program *root = kiln_program_root(p);
    const kiln_model *m = &root->model;
    if (index >= m->generation_count)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "generation case %u does not exist (%u cases)", index,
                         m->generation_count);
    KILN_TRY(check_replay_budget(root, index, err));
    const kiln_generation_record *c = &m->generations[index];
    *result = (kiln_generation_result){.passed = true, .expected = -1, .chosen = -1,
                                       .expected_logit = NAN, .chosen_logit = NAN};
    replay_judge judge = {.c = c, .result = result};
    kiln_generate_options options;
    kiln_generate_options_default(&options);
    options.prefill_method = c->prefill_method;
    options.decode_method = c->decode_method;
    options.max_tokens = c->token_count;
    options.forced_tokens = c->tokens;
    options.on_token = judge_token;
    options.user = &judge;
    kiln_generator *generator = NULL;
    int64_t *chosen = malloc((size_t)c->token_count * sizeof *chosen);
    uint32_t count = 0;
    kiln_status status = chosen ? kiln_generator_new(root, &options, &generator, err)
                                : kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for generation case '%s'",
                                            c->name);
    judge.generator = generator;
    if (status == KILN_OK)
        status = kiln_generator_run(generator, c->prompt, c->prompt_length, chosen, &count, err);
    if (status != KILN_OK) {
        char detail[KILN_ERROR_MESSAGE_SIZE];
        memcpy(detail, err ? err->message : "", err ? sizeof detail : 1);
        kiln_fail(err, status, "generation case '%s' could not run (after %u of its %u tokens): %s", c->name,
                  result->matched, c->token_count, detail);
    }
    kiln_generator_free(generator);
    free(chosen);
    return status;
}
