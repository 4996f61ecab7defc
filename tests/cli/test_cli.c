/*
 * test_cli.c — the kiln command and the scale example, driven as a user
 * drives them: real files, exit codes, stdout and stderr text.
 *
 * Usage: test_cli KILN_BINARY SCALE_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kiln/kiln.h>

#include "cli_harness.h"

#include "json_tree.h"

static const char *kiln_binary, *scale_binary, *source_root;

static int make_artifact(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' scale.kiln", scale_binary);
    return r.exit_code;
}

static void example_prints_the_three_lines(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' scale.kiln", scale_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "shape (3, 2)\nfirst row [3.0, 3.0]\n"
                               "input 'x' axis 0 (batch): 5 is outside 2..4\n");
}

static void inspect_shows_the_contract(void **state)
{
    (void)state;
    command_result r;
    /* The full layout is pinned by tests/cli/expected (test_inspect_cli). */
    run(&r, "'%s' inspect scale.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "scale: format 1.0, inference, producer \"kiln examples/scale.c\"\n");
    assert_contains(r.out, "identities  artifact ");
    assert_contains(r.out, "  program ");
    assert_contains(r.out, "  state ");
    assert_contains(r.out, "signature   unsigned\n");
    assert_contains(r.out, "  producer = \"kiln examples/scale.c\"\n");
    assert_contains(r.out, "  batch  2..4   -\n");
    assert_contains(r.out, "  x     f64    [batch, 2]\n");
    assert_contains(r.out, "  y     f64    [batch, 2]\n");
    assert_contains(r.out, "  mul        1      1\n");
    assert_contains(r.out, "  add        1      1\n");
    assert_contains(r.out, "sections (7)\n");
    assert_contains(r.out, "  GRPH  critical");
}

static void run_writes_outputs_equal_to_the_expected_values(void **state)
{
    (void)state;
    command_result r;
    run(&r, "mkdir -p out && '%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir out",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "y: f64 (3, 2) -> out/y.npy\n");
    assert_scale_output("out/y.npy");
}

static void run_creates_the_output_directory_and_refuses_a_file_in_its_place(void **state)
{
    (void)state;
    command_result r;
    run(&r, "rm -rf fresh-out && '%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir fresh-out",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_scale_output("fresh-out/y.npy");
    run(&r, "touch not-a-dir && '%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir not-a-dir",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: cannot create directory 'not-a-dir': it exists and is not a directory\n");
}

static void run_rejects_a_batch_outside_the_contract(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' run scale.kiln --input x='%s/examples/ones_5x2_f64.npy'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "kiln: error: input 'x' axis 0 (batch): 5 is outside 2..4\n");
}

static void usage_errors_exit_2(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' run scale.kiln --bogus", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "kiln: error: unknown option '--bogus'");
    run(&r, "'%s' run scale.kiln --input x", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    run(&r, "'%s' run scale.kiln --input", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    run(&r, "'%s' inspect", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    run(&r, "'%s' frobnicate", kiln_binary);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "unknown verb 'frobnicate'");
    run(&r, "'%s'", kiln_binary);
    assert_int_equal(r.exit_code, 2);
}

static void help_and_version_exit_0(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' --version", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "kiln ");
    const char *verbs[] = {"inspect", "run", "verify", "keygen", "sign", "version", "evidence", "probe", "bench"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        run(&r, "'%s' %s --help", kiln_binary, verbs[i]);
        assert_int_equal(r.exit_code, 0);
        assert_contains(r.out, "usage: kiln ");
    }
    run(&r, "'%s' --help", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    /* --quiet is every verb's: accepted anywhere, and it silences chatter. */
    run(&r, "'%s' version -q", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    run(&r, "'%s' run scale.kiln --quiet --input x='%s/examples/ones_3x2_f64.npy'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "");
    run(&r, "'%s' verify -q scale.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "");
}

static void rejected_inputs_and_files_exit_1(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' run scale.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: missing input 'x'");
    run(&r, "'%s' run scale.kiln --input z='%s/examples/ones_3x2_f64.npy'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "'z' is not an input");
    run(&r, "'%s' run scale.kiln --input x=missing.npy", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "missing.npy");
    run(&r, "'%s' inspect nonexistent.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: cannot open 'nonexistent.kiln': No such file or directory\n");
    /* A message that names the file is not prefixed with it again. */
    run(&r, "mkdir -p adir && '%s' inspect adir", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_string_equal(r.err, "kiln: error: 'adir' is not a regular file\n");
    /* A damaged copy: flip one byte in the middle of the file. */
    run(&r, "cp scale.kiln damaged.kiln && printf '\\377' | dd of=damaged.kiln bs=1 seek=200 conv=notrunc 2>/dev/null"
            " && '%s' inspect damaged.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "checksum mismatch");
    run(&r, "head -c 100 scale.kiln > short.kiln && '%s' run short.kiln --input x='%s/examples/ones_3x2_f64.npy'",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "truncated");
}

/*
 * Issue 15: a program whose arena at the upper bound is over the session's
 * limit runs in sessions the command line narrows (--dim, --max-arena), and
 * inspect and verify say how large the arena is and what fits.
 */
static void sessions_are_narrowed_from_the_command_line(void **state)
{
    (void)state;
    command_result r;
    /* Two f32[batch, 1024] results live at once: 8 KiB per row, 32 MiB at batch 4096. */
    write_work_file("rows.ktxt", "kiln 1.0\n"
                                 "program \"rows\"\n"
                                 "dim batch in 1..4096\n"
                                 "input x: f32[batch, 1024]\n"
                                 "const one: f32[] = 1\n"
                                 "%0 = add(x, one)\n"
                                 "%1 = mul(%0, x)\n"
                                 "%2 = add(%1, %1)\n"
                                 "output z = %2\n");
    run(&r, "'%s' asm rows.ktxt -o rows.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "arena at the upper bound (batch=4096): 32.0 MiB\n");
    assert_string_equal(r.err, "");
    /* At a million rows a session over the whole domain would not fit: said when the artifact is built. */
    run(&r, "sed 's/1..4096/1..1000000/' rows.ktxt > million.ktxt && '%s' asm million.ktxt -o million.kiln",
        kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "arena at the upper bound (batch=1000000): 7.6 GiB\n");
    assert_contains(r.err, "kiln: warning: a session over the whole domain will not fit the default arena limit: the "
                           "arena at batch=1000000 needs 7.6 GiB (8192000000 bytes), over the limit of 4.0 GiB; with "
                           "batch=1..524288 it needs 4.0 GiB");
    run(&r, "'%s' probe rows.kiln --max-arena 16M", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: the arena at batch=4096 needs 32.0 MiB (33554432 bytes), over the limit of "
                           "16.0 MiB; with batch=1..2048 it needs 16.0 MiB: narrow the session's dims or raise its "
                           "arena limit");
    assert_contains(r.err, "kiln: hint: narrow a dim with 'kiln probe ... --dim NAME=MIN..MAX'");
    run(&r, "'%s' probe rows.kiln --max-arena 16M --dim batch=1..2048", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "ok      outside  batch=2049: refused: input 'x' axis 0 (batch): 2049 is outside this "
                           "session's 1..2048 (the artifact allows 1..4096");
    assert_contains(r.out, "0 failed");
    run(&r, "'%s' bench rows.kiln --max-arena 16M --dim batch=3 --runs 2 --warmup 0 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "\"arena_bytes\": 24576"); /* 3 rows of 8 KiB */
    assert_contains(r.out, "\"shape\": [3, 1024]");
    /* A range keeps the session over it; benched at its top. */
    run(&r, "'%s' bench rows.kiln --max-arena 16G --dim batch=1..4096 --runs 1 --warmup 0 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "\"arena_bytes\": 33554432");
    /* No --dim: the smallest size, in a session pinned to it, so a limit far
     * below the whole domain's arena is no obstacle. */
    run(&r, "'%s' bench rows.kiln --max-arena 16K --runs 1 --warmup 0 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "\"arena_bytes\": 8192"); /* 1 row of 8 KiB */

    run(&r, "'%s' inspect rows.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "  upper bound    batch=4096\n  arena          33554432 bytes (32.0 MiB)");
    assert_contains(r.out, "  sessions       fit the default arena limit (4.0 GiB) over the whole domain");
    assert_contains(r.out, "batch  1..4096  batch=1: 8.0 KiB  batch=2048: 16.0 MiB  batch=4096: 32.0 MiB  ~batch^1.0");
    run(&r, "'%s' inspect rows.kiln --json", kiln_binary);
    assert_contains(r.out, "\"upper_bound\": {\"batch\": 4096}, \"default_limit_bytes\": 4294967296, "
                           "\"fits_default_limit\": true, \"growth\": [{\"dim\": \"batch\", \"min\": 1, "
                           "\"arena_at_min_bytes\": 8192, \"mid\": 2048, \"arena_at_mid_bytes\": 16777216, "
                           "\"max\": 4096, \"arena_at_max_bytes\": 33554432, \"degree\": 1.00}]");
    run(&r, "'%s' verify rows.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "arena      ok (32.0 MiB over the whole domain, within the default limit)");
    run(&r, "'%s' verify rows.kiln --json", kiln_binary);
    assert_contains(r.out, "\"arena\": {\"bytes\": 33554432, \"fits_default_limit\": true}");
}

/*
 * Issue 19, point 6: run, bench and inspect take --verify: a damaged
 * weight section is refused by a full load, shown by a lazy or no-check
 * inspect, and reported when a lazy run first needs the weights.
 */
static void verify_policies_from_the_command_line(void **state)
{
    (void)state;
    command_result r;
    run(&r, "cp '%s/tests/golden/v1.0/weights.kiln' damaged-weights.kiln && "
            "printf '\\377' | dd of=damaged-weights.kiln bs=1 seek=840 conv=notrunc 2>/dev/null",
        source_root);
    assert_int_equal(r.exit_code, 0);
    run(&r, "'%s' inspect damaged-weights.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "section 6 (WDAT): checksum mismatch");
    for (int i = 0; i < 2; i++) {
        run(&r, "'%s' inspect damaged-weights.kiln --verify %s", kiln_binary, i ? "none" : "lazy");
        assert_int_equal(r.exit_code, 0);
        assert_contains(r.out, "weights: format 1.0, inference");
    }
    run(&r, "'%s' run damaged-weights.kiln --random --verify lazy", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: section 6 (WDAT): checksum mismatch (section is damaged)");
    run(&r, "'%s' bench damaged-weights.kiln --runs 1 --verify full", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "damaged-weights.kiln: section 6 (WDAT): checksum mismatch");
    for (int i = 0; i < 3; i++) {
        static const char *const verbs[] = {"inspect", "run", "bench"};
        run(&r, "'%s' %s damaged-weights.kiln --verify quick", kiln_binary, verbs[i]);
        assert_int_equal(r.exit_code, 2);
        assert_contains(r.err, "--verify takes full, lazy or none, got 'quick'");
    }
}

static void keygen_sign_verify(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' keygen --out alice && '%s' keygen --out mallory", kiln_binary, kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "key id ");
    run(&r, "stat -c %%a alice.key");
    assert_string_equal(r.out, "600\n");
    run(&r, "'%s' keygen --out alice", kiln_binary);
    assert_int_equal(r.exit_code, 1); /* refuses to overwrite a key */
    assert_contains(r.err, "exists");

    run(&r, "cp scale.kiln signed.kiln && '%s' verify signed.kiln --require-signature --trust alice.pub", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "signature check failed: the artifact is not signed");
    run(&r, "'%s' sign signed.kiln --key alice.key", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    run(&r, "'%s' verify signed.kiln --require-signature --trust alice.pub", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "signature  ok, by trusted key ");
    run(&r, "'%s' verify signed.kiln --require-signature --trust mallory.pub", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "is not trusted");
    run(&r, "'%s' sign scale.kiln --key mallory.key -o by_mallory.kiln && "
            "'%s' verify by_mallory.kiln --trust alice.pub", kiln_binary, kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "signature check failed");

    /* One flipped byte anywhere in the signed artifact fails verification,
     * naming a check. Sampled offsets cover every region of the file. */
    run(&r, "stat -c %%s signed.kiln");
    long size = strtol(r.out, NULL, 10);
    assert_true(size > 512);
    for (long offset = 0; offset < size; offset += size / 61 + 1) {
        /* Write 0x55, or 0xAA where the byte already was 0x55. */
        run(&r, "cp signed.kiln tampered.kiln && printf '\\125' | "
                "dd of=tampered.kiln bs=1 seek=%ld conv=notrunc 2>/dev/null; cmp -s signed.kiln tampered.kiln && "
                "printf '\\252' | dd of=tampered.kiln bs=1 seek=%ld conv=notrunc 2>/dev/null; "
                "cmp -s signed.kiln tampered.kiln && exit 3; "
                "'%s' verify tampered.kiln --require-signature --trust alice.pub", offset, offset, kiln_binary);
        if (r.exit_code != 1)
            fail_msg("tampering with byte %ld: exit %d", offset, r.exit_code);
        assert_contains(r.err, " check failed: ");
    }
}

static json_value *parse_stdout(const command_result *r)
{
    json_value *json = json_parse(r->out);
    if (!json)
        fail_msg("stdout is not one JSON value:\n%s", r->out);
    return json;
}

static void version_describes_the_runtime(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' version", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "format     reads 1.0");
    assert_contains(r.out, "  add              v1\n");
    assert_contains(r.out, "f16 bf16"); /* run under required feature bit 0 */
    assert_contains(r.out, "half-precision");
    run(&r, "'%s' version --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_string_equal(json_get(json, "kiln_version")->string, kiln_version());
    assert_int_equal((int)json_get(json_get(json, "format"), "major")->number, 1);
    const json_value *ops = json_get(json, "ops");
    bool found_neg = false;
    for (size_t i = 0; json_at(ops, i); i++)
        found_neg = found_neg || strcmp(json_get(json_at(ops, i), "name")->string, "neg") == 0;
    assert_true(found_neg);
    const json_value *limits = json_get(json, "limits");
    assert_true(json_get(limits, "max_nodes")->number > 0);
    /* The work budgets of issue 20 are limits like the others. */
    assert_non_null(json_get(limits, "max_proof_steps"));
    assert_true(json_get(limits, "max_proof_steps")->number == 100000000);
    assert_non_null(json_get(limits, "max_replay_nodes"));
    assert_true(json_get(limits, "max_replay_nodes")->number == 1048576);
    assert_true(json_get(limits, "max_decompressed_program_bytes")->number == 268435456.0);
    /* The importer's reading limits, with the nesting bound, when it is built in. */
    const json_value *onnx = json_get(json, "onnx_limits");
    if (onnx)
        assert_true(json_get(onnx, "max_nesting_depth")->number == 64);
    json_free(json);
    run(&r, "'%s' version --bogus", kiln_binary);
    assert_int_equal(r.exit_code, 2);
}

static void verify_json_reports_every_problem(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' verify scale.kiln --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_true(json_get(json, "ok")->boolean);
    assert_int_equal(json_get(json, "problems")->count, 0);
    assert_string_equal(json_get(json_get(json, "signature"), "state")->string, "unsigned");
    assert_non_null(strstr(json_get(json_get(json, "identities"), "program")->string, "blake2b-256:"));
    json_free(json);

    run(&r, "'%s' verify '%s/tests/golden/future/three-missing-ops.kiln' --json", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    json = parse_stdout(&r);
    assert_false(json_get(json, "ok")->boolean);
    assert_string_equal(json_get(json, "check")->string, "compatibility");
    const json_value *problems = json_get(json, "problems");
    assert_int_equal(problems->count, 3);
    const char *ops[] = {"op future_op_a version 1", "op future_op_b version 3", "op add version 9"};
    for (size_t i = 0; i < 3; i++) {
        const json_value *p = json_at(problems, i);
        assert_string_equal(json_get(p, "code")->string, "op-missing");
        assert_string_equal(json_get(p, "severity")->string, "error");
        assert_non_null(strstr(json_get(p, "message")->string, ops[i]));
    }
    json_free(json);

    /* The text form names all three too. */
    run(&r, "'%s' verify '%s/tests/golden/future/three-missing-ops.kiln'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    /* stderr says it failed; stdout has the whole report (every problem). */
    assert_contains(r.err, "3 problems make this artifact unrunnable here");
    assert_contains(r.out, "result     FAILED, 3 problems make this artifact unrunnable here\n");
    for (size_t i = 0; i < 3; i++)
        assert_contains(r.out, ops[i]);
    run(&r, "'%s' verify '%s/tests/golden/future/minor-1.1-unknown-ancillary.kiln'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "warning section-skipped");
}

static void evidence_replays_and_catches_a_perturbed_output(void **state)
{
    (void)state;
    command_result r;
    run(&r, "mkdir -p ev && '%s' run scale.kiln --input x='%s/examples/ones_3x2_f64.npy' --output-dir ev && "
            "'%s' evidence add scale.kiln --name ones --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y=ev/y.npy -o with_evidence.kiln",
        kiln_binary, source_root, kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "added evidence 'ones' to with_evidence.kiln");
    run(&r, "'%s' verify with_evidence.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "evidence   1 case, 0 failed");
    assert_contains(r.out, "ones             pass  y: max abs error 0");

    /* Expect ones where the program gives threes: outside any small
     * tolerance, so adding it is refused; --force seals it anyway. */
    run(&r, "'%s' evidence add with_evidence.kiln --name wrong --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y='%s/examples/ones_3x2_f64.npy' --atol 0.5 --rtol 0 -o perturbed.kiln",
        kiln_binary, source_root, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_false(exists("perturbed.kiln"));
    run(&r, "'%s' evidence add with_evidence.kiln --name wrong --input x='%s/examples/ones_3x2_f64.npy' "
            "--expect y='%s/examples/ones_3x2_f64.npy' --atol 0.5 --rtol 0 --force -o perturbed.kiln",
        kiln_binary, source_root, source_root);
    assert_int_equal(r.exit_code, 0);
    run(&r, "'%s' verify perturbed.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "evidence check failed: 1 of 2 evidence cases failed");
    assert_contains(r.out, "wrong            FAIL  y: max abs error 2, max rel error 2, 6 of 6 outside (atol 0.5 rtol 0)");
    assert_contains(r.out, "ones             pass  y: max abs error 0");
    assert_contains(r.out, "structure  ok");
    run(&r, "'%s' verify perturbed.kiln --json", kiln_binary);
    assert_int_equal(r.exit_code, 1);
    json_value *json = parse_stdout(&r);
    const json_value *cases = json_get(json, "evidence");
    assert_int_equal(cases->count, 2);
    assert_true(json_get(json_at(cases, 0), "passed")->boolean);
    const json_value *wrong = json_at(cases, 1);
    assert_false(json_get(wrong, "passed")->boolean);
    const json_value *y = json_at(json_get(wrong, "outputs"), 0);
    assert_true(json_get(y, "max_abs_error")->number == 2.0);
    assert_int_equal((int)json_get(y, "mismatches")->number, 6);
    json_free(json);

    /* A case whose inputs break the contract cannot be added. */
    run(&r, "'%s' evidence add scale.kiln --name big --input x='%s/examples/ones_5x2_f64.npy' "
            "--expect y=ev/y.npy -o never.kiln",
        kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "5 is outside 2..4");
    run(&r, "test -e never.kiln");
    assert_int_equal(r.exit_code, 1);
}

static void probe_runs_the_domain_and_its_edges(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' probe scale.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "ok      corner   batch=2: ran, outputs as declared");
    assert_contains(r.out, "ok      corner   batch=4: ran, outputs as declared");
    assert_contains(r.out, "ok      outside  batch=1: refused: input 'x' axis 0 (batch): 1 is outside 2..4");
    assert_contains(r.out, "ok      outside  batch=5: refused: input 'x' axis 0 (batch): 5 is outside 2..4");
    /* 2..4 has one interior point, run once, never a corner again under that name (issue 19, point 10). */
    assert_contains(r.out, "ok      interior batch=3: ran, outputs as declared\nok      outside");
    assert_null(strstr(r.out, "interior batch=2"));
    assert_null(strstr(r.out, "interior batch=4"));
    assert_contains(r.out, "probe: 3 valid points ran as declared, 2 outside points refused, 0 failed, 0 skipped\n");
    run(&r, "'%s' probe scale.kiln --quiet", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "probe: 3 valid points ran as declared, 2 outside points refused, 0 failed, 0 skipped\n");
    run(&r, "'%s' probe", kiln_binary);
    assert_int_equal(r.exit_code, 2);
}

/* State tensors (format 1.3): probe runs each point against a cache of `past` rows and counts a
 * point where a relation does not hold as outside; bench times a decode step at --dim past=N. */
static void probe_and_bench_fill_the_state(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' probe '%s/tests/golden-1.3/state.kiln' --method decode", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "ok      corner   past=7 seq=1: ran, outputs as declared");
    assert_contains(r.out, "ok      corner   past=7 seq=8: refused: relation past + seq <= 8 does not hold: past = 7, "
                           "seq = 8 give 15 > 8");
    assert_contains(r.out, "ok      outside  past=8 seq=1: refused: state 'cache' length (past): 8 is outside 0..7");
    assert_contains(r.out, "0 failed, 0 skipped\n");
    run(&r, "'%s' bench '%s/tests/golden-1.3/state.kiln' --method decode --runs 3 --dim past=7", kiln_binary,
        source_root);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "sizes      past=7 (--dim), seq=1");
}

/* kiln bench: JSON with sane numbers; text; random inputs inside the contract. */
static void bench_reports_latency_throughput_and_memory(void **state)
{
    (void)state;
    command_result r;
    run(&r, "'%s' bench scale.kiln --json --runs 20 --warmup 2 --threads 1", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json_value *json = parse_stdout(&r);
    assert_int_equal((int)json_get(json, "runs")->number, 20);
    assert_int_equal((int)json_get(json, "warmup")->number, 2);
    assert_int_equal((int)json_get(json, "threads")->number, 1);
    double min_ms = json_get(json, "min_ms")->number, median_ms = json_get(json, "median_ms")->number;
    assert_true(min_ms > 0 && min_ms <= median_ms && median_ms < 1000);
    assert_true(json_get(json, "runs_per_second")->number > 0);
    /* y: f64[2, 2] and 2*x at batch 2, each rounded up to 64 bytes. */
    assert_int_equal((int)json_get(json, "arena_bytes")->number, 128);
    assert_true(json_get(json, "peak_rss_bytes")->number > 1e5);
    /* No --dim and no evidence: each dim at its smallest value (tests/cli/test_bench_cli.c has the rest). */
    assert_int_equal((int)json_get(json_get(json, "dims"), "batch")->number, 2);
    const json_value *input = json_at(json_get(json, "inputs"), 0);
    assert_string_equal(json_get(input, "name")->string, "x");
    assert_string_equal(json_get(input, "source")->string, "random");
    assert_int_equal((int)json_at(json_get(input, "shape"), 0)->number, 2);
    json_free(json);

    run(&r, "'%s' bench scale.kiln --json --runs 3 --dim batch=2 --reference", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_int_equal((int)json_get(json_get(json, "dims"), "batch")->number, 2);
    assert_true(json_get(json, "reference_kernels")->boolean);
    json_free(json);

    /* The wait policy the run used: the environment's when it sets one. */
    run(&r, "OMP_WAIT_POLICY=passive '%s' bench scale.kiln --json --runs 3", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_string_equal(json_get(json, "waits")->string, "passive");
    json_free(json);
    run(&r, "GOMP_SPINCOUNT=1000 '%s' bench scale.kiln --runs 3", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "(spin waits)");

    run(&r, "'%s' bench scale.kiln --runs 5 --input x='%s/examples/ones_3x2_f64.npy'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "bench: scale.kiln, 5 runs after 5 warm-up, ");
    assert_contains(r.out, "input      x: f64 [3, 2] (file)\n");
    assert_contains(r.out, "latency    min ");
    assert_contains(r.out, "throughput ");
    assert_contains(r.out, "arena      128 bytes\n");
    assert_contains(r.out, "peak RSS   ");

    /* Generated inputs honour the semantic checks: a run would refuse them. */
    kiln_builder *b;
    kiln_error err;
    kiln_value x, c, y, z;
    kiln_input_check check;
    assert_int_equal(kiln_builder_new("checked", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "n", 1, 1000, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[n]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "c", KILN_I64, "[n, 3]", &c, &err), KILN_OK);
    kiln_input_check_default(&check);
    check.has_range = true;
    check.min = 10;
    check.max = 20;
    check.finite_only = true;
    assert_int_equal(kiln_builder_set_input_check(b, "x", &check, &err), KILN_OK);
    kiln_input_check_default(&check);
    check.category_count = 2;
    check.categories = (const int64_t[]){-7, 300};
    assert_int_equal(kiln_builder_set_input_check(b, "c", &check, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, x}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){c, c}, &z, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "z", z, &err), KILN_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/checked.kiln", harness_work_dir);
    assert_int_equal(kiln_builder_save(b, path, NULL, &err), KILN_OK);
    kiln_builder_free(b);
    /* A thousand rows, so that many values are drawn. */
    run(&r, "'%s' bench checked.kiln --runs 3 --dim n=1000 --json", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    json = parse_stdout(&r);
    assert_int_equal((int)json_get(json_get(json, "dims"), "n")->number, 1000);
    assert_int_equal((int)json_at(json_get(json_at(json_get(json, "inputs"), 1), "shape"), 1)->number, 3);
    json_free(json);
}

static void bench_refuses_bad_flags_clearly(void **state)
{
    (void)state;
    command_result r;
    static const struct {
        const char *arguments;
        int exit_code;
        const char *message;
    } cases[] = {
        {"", 2, "kiln: error: missing FILE"},
        {"scale.kiln --runs 0", 2, "--runs takes a whole number in 1..100000000, got '0'"},
        {"scale.kiln --runs ten", 2, "--runs takes a whole number in 1..100000000, got 'ten'"},
        {"scale.kiln --warmup -1", 2, "--warmup takes a whole number in 0..100000000, got '-1'"},
        {"scale.kiln --threads 0", 2, "--threads takes a whole number in 1..1024, got '0'"},
        {"scale.kiln --threads", 2, "--threads"},
        {"scale.kiln --dim batch", 2, "--dim takes NAME=MIN..MAX or NAME=N, got 'batch'"},
        {"scale.kiln --dim batch=x", 2, "--dim batch takes MIN..MAX or N, whole numbers >= 0, got 'x'"},
        {"scale.kiln --dim batch=4..3", 2, "--dim batch=4..3: the minimum is above the maximum"},
        {"scale.kiln --dim size=3", 1, "kiln: error: 'size' is not a dim of program 'scale' (dims: batch)"},
        {"scale.kiln --dim batch=3 --dim batch=4", 2, "--dim batch is given twice"},
        {"scale.kiln --dim batch=5", 1,
         "kiln: error: batch=5 is outside the artifact's range for batch, 2..4: a session can only narrow a dim"},
        {"scale.kiln --max-arena 0", 2, "--max-arena takes a size above 0"},
        {"scale.kiln --max-arena 4X", 2, "--max-arena takes a size above 0 in bytes, or with a unit"},
        {"scale.kiln --max-arena 64", 1, "kiln: error: the arena at batch=2 needs 128 bytes, over the limit of 64 bytes"},
        {"scale.kiln --max-arena 64", 1, "kiln: hint: raise the limit with --max-arena SIZE\n"},
        {"scale.kiln --max-arena 64 --dim batch=2..4", 1, "kiln: hint: narrow a dim with 'kiln bench ... --dim"},
        {"scale.kiln --input y=a.npy", 2, "--input: 'y' is not an input of scale.kiln (inputs: 'x')"},
        {"scale.kiln --input x=missing.npy", 1, "missing.npy"},
        {"scale.kiln --bogus", 2, "kiln: error: unknown option '--bogus'"},
        {"scale.kiln other.kiln", 2, "unexpected argument 'other.kiln'"},
        {"missing.kiln", 1, "missing.kiln"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&r, "'%s' bench %s", kiln_binary, cases[i].arguments);
        if (r.exit_code != cases[i].exit_code)
            fail_msg("bench %s: exit %d, expected %d (%s)", cases[i].arguments, r.exit_code, cases[i].exit_code,
                     r.err);
        assert_contains(r.err, cases[i].message);
        assert_string_equal(r.out, "");
    }
    /* A file input outside the contract is refused by the guard. */
    run(&r, "'%s' bench scale.kiln --input x='%s/examples/ones_5x2_f64.npy'", kiln_binary, source_root);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' axis 0 (batch): 5 is outside 2..4");
}

/* A progress bar on a terminal for large artifacts; none when piped or --quiet. */
static void progress_bar_only_on_a_terminal(void **state)
{
    (void)state;
    command_result r;
    kiln_tensor *w;
    kiln_error err;
    int64_t elements = (int64_t)17 << 20; /* 68 MiB of f32: above the bar's threshold */
    assert_int_equal(kiln_tensor_new(KILN_F32, 1, &elements, &w, &err), KILN_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/big.npy", harness_work_dir);
    assert_int_equal(kiln_npy_write_file(path, w, &err), KILN_OK);
    kiln_tensor_free(w);
    snprintf(path, sizeof path, "%s/big.ktxt", harness_work_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "kiln 1.0\nprogram \"big\"\ninput x: f32[1]\nweight w: f32[%lld] = file \"big.npy\"\n"
               "%%0 = add(w, x)\noutput y = %%0\n", (long long)elements);
    fclose(f);
    run(&r, "'%s' asm big.ktxt -o big.kiln && rm big.npy", kiln_binary);
    assert_int_equal(r.exit_code, 0);

    run(&r, "script -qc \"'%s' verify big.kiln\" /dev/null", kiln_binary);
    if (r.exit_code == 127 || strstr(r.out, "not found")) {
        skip(); /* no script(1) to give the verb a terminal */
    }
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "verifying  [");
    assert_contains(r.out, "100%");
    /* The file's bytes, though each is read twice (CRC, then hash). */
    assert_contains(r.out, "68.0 MiB of 68.0 MiB");
    assert_null(strstr(r.out, "136.0 MiB"));
    /* Every verb that checks a large artifact draws the bar. */
    static const char *const verbs[] = {"inspect big.kiln", "disasm big.kiln -o big-text", "dot big.kiln",
                                        "probe big.kiln", "diff big.kiln big.kiln"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        run(&r, "script -qc \"'%s' %s\" /dev/null", kiln_binary, verbs[i]);
        if (!strstr(r.out, "verifying  ["))
            fail_msg("no progress bar from kiln %s:\n%s", verbs[i], r.out);
    }
    /* A rewrite checks, then writes: two bars. */
    run(&r, "script -qc \"'%s' check add big.kiln --check 'x: finite' -o big-checked.kiln\" /dev/null", kiln_binary);
    assert_contains(r.out, "verifying  [");
    assert_contains(r.out, "writing    [");
    run(&r, "script -qc \"'%s' verify big.kiln --quiet\" /dev/null", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.out, "verifying"));
    run(&r, "'%s' verify big.kiln", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "verifying"));
    run(&r, "rm -rf big.kiln big.ktxt big-text big-checked.kiln");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_cli KILN_BINARY SCALE_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln_binary = argv[1];
    scale_binary = argv[2];
    source_root = argv[3];
    if (harness_init("kiln-cli") != 0) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_prints_the_three_lines),
        cmocka_unit_test(inspect_shows_the_contract),
        cmocka_unit_test(run_writes_outputs_equal_to_the_expected_values),
        cmocka_unit_test(run_creates_the_output_directory_and_refuses_a_file_in_its_place),
        cmocka_unit_test(run_rejects_a_batch_outside_the_contract),
        cmocka_unit_test(usage_errors_exit_2),
        cmocka_unit_test(help_and_version_exit_0),
        cmocka_unit_test(rejected_inputs_and_files_exit_1),
        cmocka_unit_test(sessions_are_narrowed_from_the_command_line),
        cmocka_unit_test(verify_policies_from_the_command_line),
        cmocka_unit_test(keygen_sign_verify),
        cmocka_unit_test(version_describes_the_runtime),
        cmocka_unit_test(verify_json_reports_every_problem),
        cmocka_unit_test(evidence_replays_and_catches_a_perturbed_output),
        cmocka_unit_test(probe_runs_the_domain_and_its_edges),
        cmocka_unit_test(probe_and_bench_fill_the_state),
        cmocka_unit_test(bench_reports_latency_throughput_and_memory),
        cmocka_unit_test(bench_refuses_bad_flags_clearly),
        cmocka_unit_test(progress_bar_only_on_a_terminal),
    };
    int failures = cmocka_run_group_tests(tests, make_artifact, NULL);
    harness_cleanup();
    return failures;
}
