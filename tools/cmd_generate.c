/* cmd_generate.c — `kiln generate MODEL.kiln --prompt IDS`: tokens from a decoder's prefill and decode methods. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln.h>

#include "cli.h"
#include "json.h"
#include "load_args.h"
#include "options.h"
#include "term.h"

static int cmd_generate(int argc, char **argv);

const cli_verb cli_verb_generate = {
    "generate",
    "make tokens with a decoder's prefill and decode methods",
    "usage: kiln generate MODEL.kiln --prompt IDS [--tokens N] [--temperature T] [--top-k K]\n"
    "                     [--seed S] [--stop ID] [--threads N] [--json] [--verify POLICY]\n"
    "                     [--prefill NAME] [--decode NAME] [--ids NAME] [--position NAME]\n"
    "                     [--mask NAME] [--logits NAME]\n\n"
    "Run the prefill method on the prompt, then the decode method once per new token,\n"
    "both over one cache kept as state in the session (spec/generate.md). Each token\n"
    "is the largest logit of the last row (greedy), or with --temperature sampled\n"
    "from softmax(logits / T) among the --top-k largest, seeded: one seed, one\n"
    "sequence. The tokens are printed as they are made; the times go to stderr. A\n"
    "step the contract refuses (a full cache) stops with its error after the tokens\n"
    "made before it.\n\n"
    "options:\n"
    "  --prompt IDS         the prompt's token ids, comma-separated (e.g. 5,9,2)\n"
    "  --tokens N           new tokens to make (default 32)\n"
    "  --temperature T      0 (default): greedy; > 0: sampled\n"
    "  --top-k K            sample among the K largest logits (default: all)\n"
    "  --seed S             the sampler's seed (default 0)\n"
    "  --stop ID            stop once token ID is made\n"
    "  --threads N          threads per run (default: the runtime's)\n"
    "  --json               print {prompt, tokens, prefill_ms, decode_ms_per_token} at the end\n"
    "  --prefill NAME       the prompt's method (default: prefill, else the first)\n"
    "  --decode NAME        the step's method (default: decode)\n"
    "  --ids NAME           the token ids input (default: ids, else input_ids)\n"
    "  --position NAME      the positions input (default: position, position_ids or\n"
    "                       positions, where a method has one)\n"
    "  --mask NAME          the attention mask input (default: attention_mask, where a\n"
    "                       method has one)\n"
    "  --logits NAME        the logits output (default: logits, else the first)\n" LOAD_ARGS_USAGE,
    cmd_generate,
};

typedef struct generate_args {
    load_args load;
    const char *prompt, *tokens, *temperature, *top_k, *seed, *stop, *threads;
    const char *prefill, *decode, *ids, *position, *mask, *logits;
    bool json;
} generate_args;

static int take_verify(void *vargs, const char *value)
{
    return load_args_take_verify(&((generate_args *)vargs)->load, value);
}

static const cli_option generate_option_list[] = {
    {.name = "--prompt", .arity = CLI_VALUE, .offset = offsetof(generate_args, prompt)},
    {.name = "--tokens", .arity = CLI_VALUE, .offset = offsetof(generate_args, tokens)},
    {.name = "--temperature", .arity = CLI_VALUE, .offset = offsetof(generate_args, temperature)},
    {.name = "--top-k", .arity = CLI_VALUE, .offset = offsetof(generate_args, top_k)},
    {.name = "--seed", .arity = CLI_VALUE, .offset = offsetof(generate_args, seed)},
    {.name = "--stop", .arity = CLI_VALUE, .offset = offsetof(generate_args, stop)},
    {.name = "--threads", .arity = CLI_VALUE, .offset = offsetof(generate_args, threads)},
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(generate_args, json)},
    {.name = "--prefill", .arity = CLI_VALUE, .offset = offsetof(generate_args, prefill)},
    {.name = "--decode", .arity = CLI_VALUE, .offset = offsetof(generate_args, decode)},
    {.name = "--ids", .arity = CLI_VALUE, .offset = offsetof(generate_args, ids)},
    {.name = "--position", .arity = CLI_VALUE, .offset = offsetof(generate_args, position)},
    {.name = "--mask", .arity = CLI_VALUE, .offset = offsetof(generate_args, mask)},
    {.name = "--logits", .arity = CLI_VALUE, .offset = offsetof(generate_args, logits)},
    {.name = "--verify", .arity = CLI_VALUE, .handle = take_verify},
};

static const cli_options generate_options = CLI_OPTIONS("generate", generate_option_list, 1);

/* A whole number option `text` (NULL: keep *out) within 0..max. */
static int whole_option(const char *flag, const char *text, int64_t max, int64_t *out)
{
    if (!text)
        return CLI_OK;
    if (!cli_parse_whole(text, text + strlen(text), out) || *out > max)
        return cli_usage_error("generate", "%s takes a whole number 0..%lld, got '%s'", flag, (long long)max, text);
    return CLI_OK;
}

/* "5,9,2" into a new array of ids. */
static int parse_prompt(const char *text, int64_t **out, uint32_t *count)
{
    size_t commas = 0;
    for (const char *p = text; *p; p++)
        commas += *p == ',';
    int64_t *ids = calloc(commas + 1, sizeof *ids);
    if (!ids)
        return cli_error("out of memory");
    uint32_t n = 0;
    for (const char *p = text;; n++) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (!cli_parse_whole(p, end, &ids[n])) {
            free(ids);
            return cli_usage_error("generate", "--prompt takes token ids separated by commas (5,9,2), got '%s'",
                                   text);
        }
        if (!*end)
            break;
        p = end + 1;
    }
    *out = ids;
    *count = n + 1;
    return CLI_OK;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* What the token callback keeps: when the first token came, and whether to print as they come. */
typedef struct generate_progress {
    double start, first, last;
    bool stream;
} generate_progress;

static bool on_token(void *user, uint32_t index, int64_t token)
{
    generate_progress *p = user;
    p->last = now_ms();
    if (index == 0)
        p->first = p->last;
    if (p->stream) {
        printf("%s%lld", index ? " " : "", (long long)token);
        fflush(stdout);
    }
    return true;
}

static int apply_args(const generate_args *args, kiln_generate_options *o)
{
    int64_t value;
    int rc;
    o->prefill_method = args->prefill;
    o->decode_method = args->decode;
    o->ids_input = args->ids;
    o->position_input = args->position;
    o->mask_input = args->mask;
    o->logits_output = args->logits;
    value = o->max_tokens;
    if ((rc = whole_option("--tokens", args->tokens, 1 << 24, &value)) != CLI_OK)
        return rc;
    if (value < 1)
        return cli_usage_error("generate", "--tokens takes at least 1");
    o->max_tokens = (uint32_t)value;
    value = 0;
    if ((rc = whole_option("--top-k", args->top_k, UINT32_MAX, &value)) != CLI_OK)
        return rc;
    o->top_k = (uint32_t)value;
    if ((rc = whole_option("--seed", args->seed, INT64_MAX, &value)) != CLI_OK)
        return rc;
    o->seed = (uint64_t)value;
    value = -1;
    if ((rc = whole_option("--stop", args->stop, INT64_MAX, &value)) != CLI_OK)
        return rc;
    o->stop_token = value;
    value = 0;
    if ((rc = whole_option("--threads", args->threads, 1024, &value)) != CLI_OK)
        return rc;
    o->threads = (uint32_t)value;
    if (args->temperature) {
        char *end;
        errno = 0;
        o->temperature = strtod(args->temperature, &end);
        if (end == args->temperature || *end || errno || !isfinite(o->temperature) || o->temperature < 0)
            return cli_usage_error("generate", "--temperature takes a number >= 0 (0: greedy), got '%s'",
                                   args->temperature);
    }
    return CLI_OK;
}

static void print_json(const int64_t *prompt, uint32_t prompt_length, const int64_t *tokens, uint32_t count,
                       const generate_progress *p)
{
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_key(&w, "prompt");
    json_begin_array(&w);
    for (uint32_t i = 0; i < prompt_length; i++)
        json_int(&w, prompt[i]);
    json_end_array(&w);
    json_key(&w, "tokens");
    json_begin_array(&w);
    for (uint32_t i = 0; i < count; i++)
        json_int(&w, tokens[i]);
    json_end_array(&w);
    json_member_double(&w, "prefill_ms", count ? p->first - p->start : 0);
    json_member_double(&w, "decode_ms_per_token", count > 1 ? (p->last - p->first) / (count - 1) : 0);
    json_end_object(&w);
    json_finish(&w);
}

static int cmd_generate(int argc, char **argv)
{
    generate_args args = {.load = {.verb = "generate", .verify = KILN_VERIFY_FULL}};
    const char *path = NULL;
    int operands = 0;
    int rc = cli_parse_options(&generate_options, argc, argv, &args, &path, &operands);
    if (rc != CLI_OK)
        return rc;
    if (!path)
        return cli_usage_error("generate", "missing MODEL.kiln");
    if (!args.prompt)
        return cli_usage_error("generate", "missing --prompt IDS (the prompt's token ids, e.g. --prompt 5,9,2)");
    kiln_generate_options options;
    kiln_generate_options_default(&options);
    if ((rc = apply_args(&args, &options)) != CLI_OK)
        return rc;
    int64_t *prompt = NULL, *tokens = NULL;
    uint32_t prompt_length = 0, count = 0;
    if ((rc = parse_prompt(args.prompt, &prompt, &prompt_length)) != CLI_OK)
        return rc;
    kiln_program *program = NULL;
    kiln_generator *generator = NULL;
    generate_progress progress = {.stream = !args.json};
    options.on_token = on_token;
    options.user = &progress;
    kiln_error err;
    if ((rc = load_args_load(&args.load, path, &program)) != CLI_OK)
        goto done;
    if (!(tokens = calloc(options.max_tokens, sizeof *tokens))) {
        rc = cli_error("out of memory");
        goto done;
    }
    if (kiln_generator_new(program, &options, &generator, &err) != KILN_OK) {
        rc = cli_file_error(path, err.message);
        goto done;
    }
    progress.start = now_ms();
    kiln_status status = kiln_generator_run(generator, prompt, prompt_length, tokens, &count, &err);
    if (progress.stream && count)
        putchar('\n');
    if (args.json)
        print_json(prompt, prompt_length, tokens, count, &progress);
    if (!cli_quiet && !args.json && count)
        term_printf(stderr, "kiln: prefill of %u token%s %.3f ms; %u new token%s, %.3f ms per token after the "
                    "first\n", prompt_length, prompt_length == 1 ? "" : "s", progress.first - progress.start, count,
                    count == 1 ? "" : "s", count > 1 ? (progress.last - progress.first) / (count - 1) : 0.0);
    rc = status == KILN_OK ? CLI_OK
                           : cli_error("step %u of the generation failed: %s", count, err.message);
done:
    kiln_generator_free(generator);
    kiln_program_free(program);
    free(prompt);
    free(tokens);
    return rc;
}
