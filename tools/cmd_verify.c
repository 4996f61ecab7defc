/*
 * cmd_verify.c — `kiln verify FILE [--trust KEY.pub]... [--require-signature]`:
 * full integrity, authenticity and runnability, naming the check that failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/util.h>

#include "artifact_view.h"
#include "cli.h"
#include "options.h"
#include "json.h"
#include "progress_bar.h"
#include "term.h"
#include "verify_generation.h"

static int cmd_verify(int argc, char **argv);

const cli_verb cli_verb_verify = {
    "verify",
    "prove an artifact intact, authentic and runnable here",
    "usage: kiln verify FILE [--trust KEY.pub]... [--require-signature] [--method NAME] [--json]\n\n"
    "Check FILE in full: structure, artifact digest, every section's CRC32 and\n"
    "BLAKE2b-256, the signature against the trusted keys, and that this runtime\n"
    "can run it (ops, dtypes, mode, memory plan), then replay the evidence of\n"
    "every method (only NAME's with --method) and the generation cases (a\n"
    "prompt and the tokens it must make; with --method those using NAME).\n"
    "Exit 0 if everything holds, 1 naming the check that failed.\n\n"
    "options:\n"
    "  --trust KEY.pub        accept signatures by this key (repeatable); an\n"
    "                         artifact signed by any other key is refused\n"
    "  --require-signature    refuse unsigned artifacts\n"
    "  --method NAME          replay only the evidence of method NAME (and the\n"
    "                         generation cases that use it)\n"
    "  --json                 print the report as one JSON object (spec/compatibility.md)\n",
    cmd_verify,
};

/* The check a failure belongs to, for the report. */
static const char *check_of(kiln_status status)
{
    switch (status) {
    case KILN_ERR_IO: return "file";
    case KILN_ERR_TRUNCATED:
    case KILN_ERR_BAD_MAGIC:
    case KILN_ERR_HEADER_CRC:
    case KILN_ERR_TABLE_CRC:
    case KILN_ERR_TRAILER:
    case KILN_ERR_MALFORMED: return "structure";
    case KILN_ERR_LIMIT: return "limits";
    case KILN_ERR_OUT_OF_MEMORY: return "resources";
    case KILN_ERR_DIGEST_MISMATCH: return "digest";
    case KILN_ERR_SECTION_CRC: return "section checksum";
    case KILN_ERR_SECTION_HASH: return "section hash";
    case KILN_ERR_UNSIGNED:
    case KILN_ERR_UNTRUSTED_KEY:
    case KILN_ERR_BAD_SIGNATURE: return "signature";
    case KILN_ERR_RUNTIME: return "evidence";
    default: return "compatibility";
    }
}

static int load_trusted_keys(int count, const char **paths, kiln_public_key *keys)
{
    for (int k = 0; k < count; k++) {
        char *text;
        kiln_error err;
        if (cli_read_text_file(paths[k], 4096, &text) != CLI_OK)
            return CLI_FAILED;
        kiln_status status = kiln_public_key_parse(text, &keys[k], &err);
        free(text);
        if (status != KILN_OK)
            return cli_file_error(paths[k], err.message);
    }
    return CLI_OK;
}

/* The replayed evidence of one artifact: per case, the outcome per output. */
typedef struct evidence_outcome {
    uint32_t case_count;
    kiln_evidence_result **results; /* [case][output] */
    kiln_status *status;            /* per case: could it run */
    char (*message)[KILN_ERROR_MESSAGE_SIZE];
    uint32_t failed;                /* cases that did not run or did not match */
} evidence_outcome;

static void replay_all(const kiln_program *program, evidence_outcome *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = kiln_program_evidence_count(program);
    out->results = calloc(n + 1, sizeof *out->results);
    out->status = calloc(n + 1, sizeof *out->status);
    out->message = calloc(n + 1, sizeof *out->message);
    if (!out->results || !out->status || !out->message)
        return;
    out->case_count = n;
    for (uint32_t c = 0; c < n; c++) {
        kiln_error err;
        uint32_t outputs = kiln_program_evidence_output_count(program, c);
        out->results[c] = calloc(outputs + 1, sizeof **out->results);
        out->status[c] = out->results[c] ? kiln_program_replay_evidence(program, c, out->results[c], &err)
                                         : KILN_ERR_OUT_OF_MEMORY;
        bool passed = out->status[c] == KILN_OK;
        if (!passed)
            snprintf(out->message[c], sizeof out->message[c], "%s",
                     out->results[c] ? err.message : "out of memory");
        for (uint32_t o = 0; passed && o < outputs; o++)
            passed = out->results[c][o].passed;
        out->failed += !passed;
    }
}

static void release_outcome(evidence_outcome *out)
{
    for (uint32_t c = 0; c < out->case_count; c++)
        free(out->results[c]);
    free(out->results);
    free(out->status);
    free(out->message);
}

/* The evidence of every method of an artifact (of[m] for method m), replayed. */
typedef struct method_outcomes {
    uint32_t method_count;
    evidence_outcome *of;
    uint32_t case_count, failed; /* over every method */
} method_outcomes;

/* `only`: the one method to replay (--method), NULL for every one. */
static void replay_methods(const kiln_program *program, const kiln_program *only, method_outcomes *out)
{
    memset(out, 0, sizeof *out);
    uint32_t count = kiln_program_method_count(program);
    out->of = calloc(count, sizeof *out->of);
    if (!out->of)
        return;
    out->method_count = count;
    for (uint32_t m = 0; m < count; m++) {
        const kiln_program *method = kiln_program_method_at(program, m);
        if (only && method != only)
            continue; /* left empty: no cases */
        replay_all(method, &out->of[m]);
        out->case_count += out->of[m].case_count;
        out->failed += out->of[m].failed;
    }
}

static void release_methods(method_outcomes *out)
{
    for (uint32_t m = 0; m < out->method_count; m++)
        release_outcome(&out->of[m]);
    free(out->of);
}

static void print_rule(FILE *f, const kiln_compare_rule *rule)
{
    if (rule->kind == KILN_COMPARE_EXACT)
        fprintf(f, "exact");
    else
        fprintf(f, "atol %g rtol %g", rule->atol, rule->rtol);
    if (!rule->nan_equal)
        fprintf(f, ", NaN unequal");
}

/* Case names and messages come from the artifact: term_printf escapes them. */
static void print_evidence(FILE *f, const kiln_program *program, const evidence_outcome *out)
{
    if (kiln_program_method_count(program) > 1)
        term_printf(f, "evidence   method %s: %u case%s, %u failed\n", kiln_program_method_name(program),
                    out->case_count, out->case_count == 1 ? "" : "s", out->failed);
    else
        fprintf(f, "evidence   %u case%s, %u failed\n", out->case_count, out->case_count == 1 ? "" : "s",
                out->failed);
    for (uint32_t c = 0; c < out->case_count; c++) {
        const char *name = kiln_program_evidence_name(program, c);
        if (out->status[c] != KILN_OK) {
            term_printf(f, "  %-16s FAIL  %s\n", name, out->message[c]);
            continue;
        }
        for (uint32_t o = 0; o < kiln_program_evidence_output_count(program, c); o++) {
            const kiln_evidence_result *r = &out->results[c][o];
            term_printf(f, "  %-16s %s  %s: max abs error %.3g, max rel error %.3g, %llu of %llu outside (",
                        o ? "" : name, r->passed ? "pass" : "FAIL", r->output, r->max_abs_error, r->max_rel_error,
                        (unsigned long long)r->mismatches, (unsigned long long)r->elements);
            print_rule(f, &r->rule);
            fprintf(f, ")\n");
        }
    }
}

/* One output of a replayed case. An error that is not finite is written
 * as -1 (spec/compatibility.md): the schema promises a number. */
static void print_output_json(json_writer *w, const kiln_evidence_result *r)
{
    json_begin_object(w);
    json_member_string(w, "name", r->output);
    json_member_bool(w, "passed", r->passed);
    json_key(w, "rule");
    json_begin_object(w);
    json_member_string(w, "kind", r->rule.kind == KILN_COMPARE_EXACT ? "exact" : "tolerance");
    json_member_double(w, "atol", r->rule.atol);
    json_member_double(w, "rtol", r->rule.rtol);
    json_member_bool(w, "nan_equal", r->rule.nan_equal);
    json_end_object(w);
    json_member_uint(w, "elements", r->elements);
    json_member_uint(w, "mismatches", r->mismatches);
    json_member_double(w, "max_abs_error", isfinite(r->max_abs_error) ? r->max_abs_error : -1.0);
    json_member_double(w, "max_rel_error", isfinite(r->max_rel_error) ? r->max_rel_error : -1.0);
    json_end_object(w);
}

/* The replayed cases; a case that could not run has its error and no outputs. */
static void print_evidence_json(json_writer *w, const kiln_program *program, const evidence_outcome *out)
{
    for (uint32_t c = 0; c < out->case_count; c++) {
        bool passed = out->status[c] == KILN_OK;
        uint32_t outputs = passed ? kiln_program_evidence_output_count(program, c) : 0;
        for (uint32_t o = 0; o < outputs; o++)
            passed = passed && out->results[c][o].passed;
        json_begin_object(w);
        json_member_string(w, "name", kiln_program_evidence_name(program, c));
        json_member_string(w, "method", kiln_program_method_name(program));
        json_member_bool(w, "passed", passed);
        if (out->status[c] != KILN_OK) {
            json_member_string(w, "error", out->message[c]);
        }
        json_key(w, "outputs");
        json_begin_array(w);
        for (uint32_t o = 0; o < outputs; o++)
            print_output_json(w, &out->results[c][o]);
        json_end_array(w);
        json_end_object(w);
    }
}

/* One line per problem of the report. */
static void print_problems(FILE *out, const kiln_report *report)
{
    for (uint32_t i = 0; i < kiln_report_count(report); i++) {
        kiln_problem_info p;
        kiln_report_problem(report, i, &p);
        term_printf(out, "  %-7s %-24s %s%s%s\n", problem_severity_name(p.severity), p.code, p.location,
                    p.location[0] ? ": " : "", p.message);
    }
}

/*
 * A failed verification: the whole report on stdout (what failed, every
 * problem found), the one-line error on stderr, so that a script reading
 * stdout and a user reading the terminal both see everything.
 */
static void print_failure(const char *path, const kiln_report *report, kiln_status status, const kiln_error *err)
{
    uint32_t errors = 0;
    for (uint32_t i = 0; i < kiln_report_count(report); i++) {
        kiln_problem_info p;
        kiln_report_problem(report, i, &p);
        errors += p.severity == KILN_SEVERITY_ERROR;
    }
    term_printf(stdout, "artifact   %s\n", path);
    if (errors <= 1)
        term_printf(stdout, "result     FAILED, %s check: %s\n", check_of(status), err->message);
    else
        printf("result     FAILED, %u problems make this artifact unrunnable here\n", errors);
    if (kiln_report_count(report)) {
        printf("problems\n");
        print_problems(stdout, report);
    }
    fflush(stdout);
    if (errors <= 1)
        cli_error("%s: %s check failed: %s", path, check_of(status), err->message);
    else
        cli_error("%s: %u problems make this artifact unrunnable here (listed above)", path, errors);
}

/* The identities and the signature of a program that loaded. */
static void print_program_json(json_writer *w, const kiln_program *program)
{
    static const struct {
        kiln_identity identity;
        const char *name;
    } identities[] = {{KILN_IDENTITY_ARTIFACT, "artifact"}, {KILN_IDENTITY_PROGRAM, "program"},
                      {KILN_IDENTITY_STATE, "state"}};
    uint16_t major, minor;
    uint8_t digest[32];
    char text[IDENTITY_TEXT_SIZE], key_id[33];
    kiln_signature_info signature;
    kiln_program_format_version(program, &major, &minor);
    json_key(w, "format");
    json_begin_object(w);
    json_member_uint(w, "major", major);
    json_member_uint(w, "minor", minor);
    json_end_object(w);
    json_key(w, "identities");
    json_begin_object(w);
    for (size_t i = 0; i < 3; i++) {
        kiln_program_identity(program, identities[i].identity, digest);
        identity_text(digest, text);
        json_member_string(w, identities[i].name, text);
    }
    json_end_object(w);
    uint64_t arena;
    kiln_error err;
    bool fits = kiln_program_session_arena(program, NULL, &arena, &err) == KILN_OK;
    json_key(w, "arena");
    json_begin_object(w);
    if (arena == UINT64_MAX) {
        json_key(w, "bytes");
        json_null(w);
    } else {
        json_member_uint(w, "bytes", arena);
    }
    json_member_bool(w, "fits_default_limit", fits);
    if (!fits)
        json_member_string(w, "message", err.message);
    json_end_object(w);
    kiln_program_signature(program, &signature);
    json_key(w, "signature");
    json_begin_object(w);
    json_member_string(w, "state", signature_state_name(signature.state));
    if (signature.state != KILN_SIGNATURE_NONE) {
        cli_hex(signature.key_id, sizeof signature.key_id, key_id);
        json_member_string(w, "key_id", key_id);
    }
    json_end_object(w);
}

static void print_json(const char *path, const kiln_program *program, const kiln_report *report,
                       const method_outcomes *evidence, const generation_outcomes *generation, kiln_status status,
                       const kiln_error *err)
{
    json_writer w;
    json_init(&w, stdout);
    json_begin_object(&w);
    json_member_string(&w, "file", path);
    json_member_bool(&w, "ok", status == KILN_OK);
    if (status != KILN_OK) {
        json_member_string(&w, "check", check_of(status));
        json_member_string(&w, "message", err->message);
    }
    json_key(&w, "problems");
    json_begin_array(&w);
    for (uint32_t i = 0; i < kiln_report_count(report); i++) {
        kiln_problem_info p;
        kiln_report_problem(report, i, &p);
        json_begin_object(&w);
        json_member_string(&w, "severity", problem_severity_name(p.severity));
        json_member_string(&w, "code", p.code);
        json_member_int(&w, "status", (int)p.status);
        json_member_string(&w, "location", p.location);
        json_member_string(&w, "message", p.message);
        json_end_object(&w);
    }
    json_end_array(&w);
    if (program) {
        print_program_json(&w, program);
        /* Every method's cases in one array, each naming its method. */
        json_key(&w, "evidence");
        json_begin_array(&w);
        for (uint32_t m = 0; m < evidence->method_count; m++)
            print_evidence_json(&w, kiln_program_method_at(program, m), &evidence->of[m]);
        json_end_array(&w);
        json_key(&w, "generation");
        json_begin_array(&w);
        verify_generation_json(&w, program, generation);
        json_end_array(&w);
    }
    json_end_object(&w);
    json_finish(&w);
}

static void print_report(const kiln_program *program, const kiln_report *report, const char *path)
{
    uint16_t major, minor;
    uint8_t digest[32];
    char hex[65];
    kiln_signature_info signature;
    kiln_program_format_version(program, &major, &minor);
    kiln_program_artifact_digest(program, digest);
    cli_hex(digest, sizeof digest, hex);
    kiln_program_signature(program, &signature);
    term_printf(stdout, "artifact   %s\n", path);
    printf("structure  ok (format %u.%u, %u sections)\n", major, minor, kiln_program_section_count(program));
    printf("digest     ok blake2b-256:%s\n", hex);
    printf("sections   ok (CRC32 and BLAKE2b-256 of every section, zero gaps)\n");
    cli_hex(signature.key_id, sizeof signature.key_id, hex);
    switch (signature.state) {
    case KILN_SIGNATURE_NONE: printf("signature  none (unsigned)\n"); break;
    case KILN_SIGNATURE_VERIFIED: printf("signature  ok, by trusted key %s\n", hex); break;
    case KILN_SIGNATURE_UNVERIFIED:
        printf("signature  present but not checked: key %s, no --trust key given\n", hex);
        break;
    }
    uint32_t methods = kiln_program_method_count(program), nodes = 0;
    for (uint32_t m = 0; m < methods; m++)
        nodes += kiln_program_node_count(kiln_program_method_at(program, m));
    if (methods > 1)
        printf("runtime    ok (%u methods, %u node%s; every op and dtype is supported)\n", methods, nodes,
               nodes == 1 ? "" : "s");
    else
        printf("runtime    ok (%u node%s; every op and dtype is supported)\n", nodes, nodes == 1 ? "" : "s");
    for (uint32_t m = 0; m < methods; m++) {
        const kiln_program *method = kiln_program_method_at(program, m);
        uint64_t arena;
        char amount[32], which[80] = "";
        kiln_error err;
        if (methods > 1)
            snprintf(which, sizeof which, "method %s: ", kiln_program_method_name(method));
        if (kiln_program_session_arena(method, NULL, &arena, &err) == KILN_OK) {
            kiln_format_bytes(arena, amount, sizeof amount);
            term_printf(stdout, "arena      %sok (%s over the whole domain, within the default limit)\n", which,
                        amount);
        } else {
            term_printf(stdout, "arena      %snarrow to run: %s\n", which, err.message);
        }
    }
    if (kiln_report_count(report)) {
        printf("notes\n");
        print_problems(stdout, report);
    }
}

typedef struct verify_args {
    const char **trust_paths; /* room for one per word of the command line */
    int trust_count;
    bool require_signature, json;
    const char *method;
} verify_args;

static int take_trust(void *target, const char *path)
{
    verify_args *args = target;
    args->trust_paths[args->trust_count++] = path;
    return CLI_OK;
}

static const cli_option verify_option_list[] = {
    {.name = "--trust", .arity = CLI_VALUE, .repeat = CLI_EACH, .handle = take_trust},
    {.name = "--require-signature", .arity = CLI_FLAG, .offset = offsetof(verify_args, require_signature)},
    {.name = "--json", .arity = CLI_FLAG, .offset = offsetof(verify_args, json)},
    {.name = "--method", .arity = CLI_VALUE, .offset = offsetof(verify_args, method)},
};

static const cli_options verify_options = CLI_OPTIONS("verify", verify_option_list, 1);

static int cmd_verify(int argc, char **argv)
{
    const char *path = NULL;
    verify_args args = {calloc((size_t)argc, sizeof *args.trust_paths), 0, false, false, NULL};
    const char **trust_paths = args.trust_paths;
    int operands;
    if (!trust_paths)
        return cli_error("out of memory");
    int rc = cli_parse_options(&verify_options, argc, argv, &args, &path, &operands);
    if (rc == CLI_OK && !path)
        rc = cli_usage_error("verify", "missing FILE");
    int trust_count = args.trust_count;
    bool require_signature = args.require_signature, json = args.json;
    kiln_public_key *keys = calloc((size_t)trust_count + 1, sizeof *keys);
    if (rc == CLI_OK && !keys)
        rc = cli_error("out of memory");
    if (rc == CLI_OK)
        rc = load_trusted_keys(trust_count, trust_paths, keys);

    kiln_program *program = NULL;
    kiln_report *report = NULL;
    if (rc == CLI_OK) {
        kiln_load_options options;
        kiln_error err;
        kiln_load_options_default(&options);
        options.trusted_keys = keys;
        options.trusted_key_count = (uint32_t)trust_count;
        options.require_signature = require_signature;
        cli_progress progress;
        cli_progress_init(&progress, "verifying");
        options.progress = cli_progress_update;
        options.progress_user = &progress;
        kiln_status status = kiln_program_load(path, &options, &program, &report, &err);
        cli_progress_finish(&progress);
        /* Whether a session over the whole domain fits the default arena
         * limit is reported, not required: a program too large at its upper
         * bound runs in sessions that narrow a dim (evidence replays so). */
        method_outcomes evidence = {0};
        generation_outcomes generation = {0};
        const kiln_program *only = NULL;
        if (status == KILN_OK && args.method && kiln_program_method(program, args.method, &only, &err) != KILN_OK)
            status = err.code;
        if (status == KILN_OK) {
            replay_methods(program, only, &evidence);
            verify_generation_replay(program, args.method, &generation);
            uint32_t failed = evidence.failed + generation.failed;
            uint32_t cases = evidence.case_count + generation.case_count;
            if (failed) {
                status = err.code = KILN_ERR_RUNTIME;
                snprintf(err.message, sizeof err.message, "%u of %u evidence case%s failed on this runtime",
                         failed, cases, cases == 1 ? "" : "s");
            }
        }
        if (json) {
            print_json(path, program, report, &evidence, &generation, status, &err);
        } else if (status != KILN_OK && program) {
            /* Loaded, but evidence failed: the checks that held, then the cases. */
            print_report(program, report, path);
            for (uint32_t m = 0; m < evidence.method_count; m++)
                print_evidence(stdout, kiln_program_method_at(program, m), &evidence.of[m]);
            if (generation.case_count)
                verify_generation_print(stdout, program, &generation);
            fflush(stdout);
            cli_error("%s: %s check failed: %s", path, check_of(status), err.message);
        } else if (status != KILN_OK) {
            print_failure(path, report, status, &err);
            if (status == KILN_ERR_BAD_MAGIC)
                cli_hint_not_artifact(path);
        } else if (!cli_quiet) {
            print_report(program, report, path);
            for (uint32_t m = 0; m < evidence.method_count; m++)
                if (evidence.of[m].case_count)
                    print_evidence(stdout, kiln_program_method_at(program, m), &evidence.of[m]);
            if (generation.case_count)
                verify_generation_print(stdout, program, &generation);
        }
        release_methods(&evidence);
        verify_generation_release(&generation);
        rc = status == KILN_OK ? CLI_OK : CLI_FAILED;
    }
    kiln_report_free(report);
    kiln_program_free(program);
    free(keys);
    free(trust_paths);
    return rc;
}
