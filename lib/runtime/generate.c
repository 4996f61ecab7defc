/*
 * generate.c — token generation over a decoder's prefill and decode
 * methods sharing one state (kiln.h's kiln_generator, spec/generate.md).
 *
 * Everything a run needs is made once: the two sessions, the input
 * wrappers, the token, position and mask buffers (grown only when a
 * longer generation than any before asks for more) and the sampler's
 * scratch. A step rewraps the buffers to its shapes and runs, so the
 * tokens after the prompt allocate nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/util.h>

#include "error.h"

/* One method's part: its session and where its inputs and logits are. */
typedef struct generate_step {
    const kiln_program *method;
    kiln_session *session;
    const char *ids, *position, *mask; /* input names; position and mask NULL when the method has none */
    uint32_t ids_rank, position_rank;
    uint32_t logits;                   /* output index */
    kiln_tensor *ids_tensor, *position_tensor, *mask_tensor;
} generate_step;

struct kiln_generator {
    kiln_generate_options options;
    kiln_state *state;
    generate_step prefill, decode;
    int64_t *ids, *positions, *mask; /* `capacity` elements each; the mask all ones */
    size_t capacity;
    double *scores; /* the sampler's copy of one logits row, `vocab_capacity` */
    size_t vocab_capacity;
    const kiln_tensor *logits;
    uint64_t random;
    int64_t placeholder; /* what the wrappers point at before the first run */
};

static void options_default(kiln_generate_options *options)
{
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->max_tokens = 32;
    options->stop_token = -1;
}

void kiln_generate_options_init(kiln_generate_options *options, size_t struct_size)
{
    kiln_generate_options defaults;
    options_default(&defaults);
    kiln_struct_fill(options, struct_size, &defaults, sizeof defaults);
}

/* Input `name` of `method`, or -1. */
static int64_t find_input(const kiln_program *method, const char *name, kiln_io_info *info)
{
    for (uint32_t i = 0; name && i < kiln_program_input_count(method); i++) {
        kiln_program_input(method, i, info);
        if (strcmp(info->name, name) == 0)
            return i;
    }
    return -1;
}

/* The first of `names` that `method` has as an input (its name, from the program), or NULL. */
static const char *first_input(const kiln_program *method, const char *const *names, size_t count, kiln_io_info *info)
{
    for (size_t n = 0; n < count; n++)
        if (find_input(method, names[n], info) >= 0)
            return info->name;
    return NULL;
}

static kiln_status find_roles(generate_step *step, const kiln_generate_options *o, kiln_error *err)
{
    const kiln_program *m = step->method;
    const char *method = kiln_program_method_name(m);
    kiln_io_info info;
    static const char *const ids_names[] = {"ids", "input_ids"};
    static const char *const position_names[] = {"position", "position_ids", "positions"};
    static const char *const mask_names[] = {"attention_mask"};
    if (o->ids_input) {
        if (find_input(m, o->ids_input, &info) < 0)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' has no input '%s' for the token ids",
                             method, o->ids_input);
        step->ids = info.name;
    } else if (!(step->ids = first_input(m, ids_names, 2, &info)) && kiln_program_input_count(m) == 1) {
        kiln_program_input(m, 0, &info);
        step->ids = info.name;
    }
    if (!step->ids)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' has no input 'ids' or 'input_ids' for the "
                         "token ids: name it (kiln_generate_options.ids_input, --ids)", method);
    if (info.dtype != KILN_I64 || info.rank < 1 || info.rank > 2)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' input '%s' (the token ids) is %s of rank %u, "
                         "not i64 [1, n] or [n]", method, step->ids, kiln_dtype_name(info.dtype), info.rank);
    step->ids_rank = info.rank;
    const char *position = o->position_input;
    step->position = position ? (find_input(m, position, &info) >= 0 ? info.name : NULL)
                              : first_input(m, position_names, 3, &info);
    if (step->position) {
        if (info.dtype != KILN_I64 || info.rank < 1 || info.rank > 2)
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' input '%s' (the positions) is %s of rank "
                             "%u, not i64 [1, n] or [n]", method, step->position, kiln_dtype_name(info.dtype),
                             info.rank);
        step->position_rank = info.rank;
    }
    const char *mask = o->mask_input;
    step->mask = mask ? (find_input(m, mask, &info) >= 0 ? info.name : NULL) : first_input(m, mask_names, 1, &info);
    if (step->mask && (info.dtype != KILN_I64 || info.rank != 2))
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' input '%s' (the attention mask) is %s of rank "
                         "%u, not i64 [1, past + n]", method, step->mask, kiln_dtype_name(info.dtype), info.rank);
    /* Every input must have a role: generation cannot make up the others. */
    for (uint32_t i = 0; i < kiln_program_input_count(m); i++) {
        kiln_program_input(m, i, &info);
        if (strcmp(info.name, step->ids) != 0 && !(step->position && strcmp(info.name, step->position) == 0) &&
            !(step->mask && strcmp(info.name, step->mask) == 0))
            return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' input '%s' is neither the token ids "
                             "('%s'), the positions nor the attention mask: generation cannot fill it", method,
                             info.name, step->ids);
    }
    const char *logits = o->logits_output ? o->logits_output : "logits";
    int64_t found = -1;
    for (uint32_t i = 0; found < 0 && i < kiln_program_output_count(m); i++) {
        kiln_program_output(m, i, &info);
        if (strcmp(info.name, logits) == 0)
            found = i;
    }
    if (found < 0 && o->logits_output)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' has no output '%s' for the logits", method,
                         logits);
    step->logits = found < 0 ? 0 : (uint32_t)found;
    kiln_program_output(m, step->logits, &info);
    if ((info.dtype != KILN_F32 && info.dtype != KILN_F64) || info.rank < 2)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "method '%s' output '%s' (the logits) is %s of rank %u, "
                         "not f32 or f64 [..., n, vocab]", method, info.name, kiln_dtype_name(info.dtype), info.rank);
    return KILN_OK;
}

static kiln_status make_step(kiln_generator *g, generate_step *step, kiln_error *err)
{
    KILN_TRY(find_roles(step, &g->options, err));
    kiln_session_options so;
    kiln_session_options_default(&so);
    so.threads = g->options.threads;
    so.thread_policy = g->options.thread_policy;
    so.state = g->state;
    KILN_TRY(kiln_session_new(step->method, &so, &step->session, err));
    int64_t one[2] = {1, 1};
    KILN_TRY(kiln_tensor_wrap(KILN_I64, step->ids_rank, one, &g->placeholder, sizeof g->placeholder,
                              &step->ids_tensor, err));
    if (step->position)
        KILN_TRY(kiln_tensor_wrap(KILN_I64, step->position_rank, one, &g->placeholder, sizeof g->placeholder,
                                  &step->position_tensor, err));
    if (step->mask)
        KILN_TRY(kiln_tensor_wrap(KILN_I64, 2, one, &g->placeholder, sizeof g->placeholder,
                                  &step->mask_tensor, err));
    return KILN_OK;
}

kiln_status kiln_generator_new(const kiln_program *program, const kiln_generate_options *options,
                               kiln_generator **out, kiln_error *err)
{
    if (!program || !out)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_generator_new: program and out are required");
    *out = NULL;
    kiln_generator *g = calloc(1, sizeof *g);
    if (!g)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for a generator");
    options_default(&g->options);
    kiln_status status = kiln_struct_read(&g->options, sizeof g->options, options,
                                          KILN_SIZE_THROUGH(kiln_generate_options, user), "kiln_generate_options",
                                          err);
    const kiln_generate_options *o = &g->options;
    if (status == KILN_OK && (o->max_tokens < 1 || !(o->temperature >= 0) || !isfinite(o->temperature)))
        status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_generate_options: max_tokens must be at least 1 "
                           "and temperature finite and >= 0 (0: greedy), got %u and %g", o->max_tokens,
                           o->temperature);
    const kiln_program *root = kiln_program_method_at(program, 0);
    if (status == KILN_OK) {
        const char *prefill = o->prefill_method;
        if (prefill)
            status = kiln_program_method(program, prefill, &g->prefill.method, err);
        else if (kiln_program_method(program, "prefill", &g->prefill.method, NULL) != KILN_OK)
            g->prefill.method = root;
    }
    if (status == KILN_OK)
        status = kiln_program_method(program, o->decode_method ? o->decode_method : "decode", &g->decode.method, err);
    if (status == KILN_OK && kiln_program_state_count(program) == 0)
        status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "program '%s' declares no state: generation needs the "
                           "cache as state, which prefill starts and decode extends (kiln import-onnx --state, "
                           "kiln.export_methods state=)", kiln_program_name(program));
    if (status == KILN_OK)
        status = kiln_state_new(program, &g->state, err);
    if (status == KILN_OK)
        status = make_step(g, &g->prefill, err);
    if (status == KILN_OK)
        status = make_step(g, &g->decode, err);
    if (status == KILN_OK && o->position_input && !g->prefill.position && !g->decode.position)
        status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "neither method has the input '%s' for the positions",
                           o->position_input);
    if (status == KILN_OK && o->mask_input && !g->prefill.mask && !g->decode.mask)
        status = kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "neither method has the input '%s' for the attention "
                           "mask", o->mask_input);
    g->random = o->seed ^ 0x9E3779B97F4A7C15ull;
    if (status != KILN_OK) {
        kiln_generator_free(g);
        return status;
    }
    *out = g;
    return KILN_OK;
}

static void free_step(generate_step *step)
{
    kiln_session_free(step->session);
    kiln_tensor_free(step->ids_tensor);
    kiln_tensor_free(step->position_tensor);
    kiln_tensor_free(step->mask_tensor);
}

void kiln_generator_free(kiln_generator *g)
{
    if (!g)
        return;
    free_step(&g->prefill);
    free_step(&g->decode);
    kiln_state_free(g->state);
    free(g->ids);
    free(g->positions);
    free(g->mask);
    free(g->scores);
    free(g);
}

const kiln_tensor *kiln_generator_logits(const kiln_generator *g)
{
    return g ? g->logits : NULL;
}

kiln_state *kiln_generator_state(kiln_generator *g)
{
    return g ? g->state : NULL;
}

/* Room for `needed` tokens in the buffers (allocating only when more than ever before). */
static kiln_status reserve(kiln_generator *g, size_t needed, kiln_error *err)
{
    if (needed <= g->capacity)
        return KILN_OK;
    int64_t *ids = realloc(g->ids, needed * sizeof *ids);
    if (ids)
        g->ids = ids;
    int64_t *positions = ids ? realloc(g->positions, needed * sizeof *positions) : NULL;
    if (positions)
        g->positions = positions;
    int64_t *mask = positions ? realloc(g->mask, needed * sizeof *mask) : NULL;
    if (!mask)
        return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for %zu tokens", needed);
    g->mask = mask;
    for (size_t i = g->capacity; i < needed; i++)
        mask[i] = 1;
    g->capacity = needed;
    return KILN_OK;
}

/* Run `step` on the n tokens at g->ids after `past` cached ones; g->logits is its logits then. */
static kiln_status run_step(kiln_generator *g, generate_step *step, int64_t n, int64_t past, kiln_error *err)
{
    int64_t ids_shape[2] = {1, n}, position_shape[2] = {1, n}, mask_shape[2] = {1, past + n};
    size_t n_bytes = (size_t)n * sizeof(int64_t);
    KILN_TRY(kiln_tensor_rewrap(step->ids_tensor, KILN_I64, step->ids_rank,
                                step->ids_rank == 2 ? ids_shape : ids_shape + 1, g->ids, n_bytes, err));
    KILN_TRY(kiln_session_set_input(step->session, step->ids, step->ids_tensor, err));
    if (step->position) {
        for (int64_t i = 0; i < n; i++)
            g->positions[i] = past + i;
        KILN_TRY(kiln_tensor_rewrap(step->position_tensor, KILN_I64, step->position_rank,
                                    step->position_rank == 2 ? position_shape : position_shape + 1, g->positions,
                                    n_bytes, err));
        KILN_TRY(kiln_session_set_input(step->session, step->position, step->position_tensor, err));
    }
    if (step->mask) {
        KILN_TRY(kiln_tensor_rewrap(step->mask_tensor, KILN_I64, 2, mask_shape, g->mask,
                                    (size_t)(past + n) * sizeof(int64_t), err));
        KILN_TRY(kiln_session_set_input(step->session, step->mask, step->mask_tensor, err));
    }
    KILN_TRY(kiln_session_run(step->session, err));
    g->logits = kiln_session_output(step->session, step->logits);
    return KILN_OK;
}

/* The next number of the seeded generator (splitmix64), as a double in [0, 1). */
static double next_uniform(kiln_generator *g)
{
    uint64_t z = (g->random += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static int compare_descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The token the last row of g->logits chooses, into *token. */
static kiln_status choose(kiln_generator *g, uint32_t index, int64_t *token, kiln_error *err)
{
    const kiln_tensor *t = g->logits;
    uint32_t rank = kiln_tensor_rank(t);
    int64_t vocab = kiln_tensor_shape(t)[rank - 1];
    size_t count = (size_t)kiln_tensor_element_count(t);
    if (vocab < 1 || count < (size_t)vocab)
        return kiln_fail(err, KILN_ERR_RUNTIME, "token %u: the logits hold no row", index);
    size_t row = count - (size_t)vocab;
    bool f32 = kiln_tensor_dtype(t) == KILN_F32;
    const float *f = kiln_tensor_const_data(t);
    const double *d = kiln_tensor_const_data(t);
    if ((size_t)vocab > g->vocab_capacity) {
        double *grown = realloc(g->scores, (size_t)vocab * 2 * sizeof *grown);
        if (!grown)
            return kiln_fail(err, KILN_ERR_OUT_OF_MEMORY, "out of memory for %lld logits", (long long)vocab);
        g->scores = grown;
        g->vocab_capacity = (size_t)vocab;
    }
    double *scores = g->scores, *sorted = g->scores + vocab;
    int64_t best = 0;
    for (int64_t v = 0; v < vocab; v++) {
        scores[v] = f32 ? (double)f[row + (size_t)v] : d[row + (size_t)v];
        if (!isfinite(scores[v]) && !(isinf(scores[v]) && scores[v] < 0))
            return kiln_fail(err, KILN_ERR_RUNTIME, "token %u: logit %lld is %g: the model made a value that is "
                             "not a number or +inf, so no token can be chosen", index, (long long)v, scores[v]);
        if (scores[v] > scores[best])
            best = v;
    }
    if (g->options.temperature == 0 || isinf(scores[best])) {
        *token = best;
        return KILN_OK;
    }
    /* Sampled: softmax(logits / T) over the top_k largest (ties at the k-th all in). */
    double threshold = -INFINITY;
    if (g->options.top_k && g->options.top_k < (uint64_t)vocab) {
        memcpy(sorted, scores, (size_t)vocab * sizeof *sorted);
        qsort(sorted, (size_t)vocab, sizeof *sorted, compare_descending);
        threshold = sorted[g->options.top_k - 1];
    }
    double total = 0, largest = scores[best];
    for (int64_t v = 0; v < vocab; v++) {
        scores[v] = scores[v] >= threshold ? exp((scores[v] - largest) / g->options.temperature) : 0;
        total += scores[v];
    }
    double target = next_uniform(g) * total;
    *token = best;
    for (int64_t v = 0; v < vocab; v++) {
        if (scores[v] > 0 && (target -= scores[v]) < 0) {
            *token = v;
            break;
        }
    }
    return KILN_OK;
}

kiln_status kiln_generator_run(kiln_generator *g, const int64_t *prompt, uint32_t prompt_length, int64_t *tokens,
                               uint32_t *count, kiln_error *err)
{
    if (count)
        *count = 0;
    if (!g || !prompt || !tokens || !count || prompt_length < 1)
        return kiln_fail(err, KILN_ERR_INVALID_ARGUMENT, "kiln_generator_run: a generator, a prompt of at least one "
                         "token, tokens and count are required");
    const kiln_generate_options *o = &g->options;
    KILN_TRY(reserve(g, (size_t)prompt_length + o->max_tokens, err));
    kiln_state_reset(g->state);
    g->random = o->seed ^ 0x9E3779B97F4A7C15ull;
    memcpy(g->ids, prompt, prompt_length * sizeof *prompt);
    int64_t past = 0;
    kiln_status status = run_step(g, &g->prefill, prompt_length, past, err);
    past += prompt_length;
    for (uint32_t i = 0; status == KILN_OK && i < o->max_tokens; i++) {
        if (i > 0) {
            status = run_step(g, &g->decode, 1, past, err);
            past++;
            if (status != KILN_OK)
                break;
        }
        int64_t token = 0;
        if ((status = choose(g, i, &token, err)) != KILN_OK)
            break;
        tokens[i] = token;
        *count = i + 1;
        g->ids[0] = o->forced_tokens ? o->forced_tokens[i] : token;
        if ((o->on_token && !o->on_token(o->user, i, token)) || token == o->stop_token)
            break;
    }
    return status;
}
