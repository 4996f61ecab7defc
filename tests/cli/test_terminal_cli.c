/*
 * test_terminal_cli.c — no verb writes an artifact's control characters
 * to the terminal (issue 20, point 5).
 *
 * An evidence case name, a metadata value and (in a resealed file) an
 * input name hold ESC, BEL, CR and a UTF-8 C1 control (U+009B, which some
 * terminals obey like "ESC ["). Every verb's output, stdout and stderr,
 * success and error paths, must hold no control byte but the newline, and
 * must show the escaped form instead (tools/term.h), so that the check
 * cannot pass because the name was never printed. Before the fix, `kiln
 * verify` printed the case name raw and every verb printed library
 * messages raw, so a CR could print "verified OK" over an error line.
 *
 * Usage: test_terminal_cli KILN_BINARY SOURCE_ROOT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#include <kiln/kiln.h>

#include "cli_harness.h"

static const char *kiln_binary, *source_root;

/* ESC [2J (clear), BEL, CR, then text that would overwrite the line, and
 * CSI as a C1 control in UTF-8. */
#define HOSTILE "case\033[2J\007\rverified OK\302\2331m"
/* How every verb must show it. */
#define HOSTILE_SHOWN "case\\x1b[2J\\x07\\rverified OK\\xc2\\x9b1m"

/* The input name of the resealed file: 12 bytes, replaced by HOSTILE_INPUT. */
#define PLAIN_INPUT "xxxxxxxxxxxx"
static const uint8_t hostile_input[12] = {0x1b, '[', '3', '1', 'm', 0x07, '\r', 'O', 'K', 0xc2, 0x9b, 'm'};
#define HOSTILE_INPUT_SHOWN "\\x1b[31m\\x07\\rOK\\xc2\\x9bm"

/* ------------------------------------------------------------ artifacts */

static kiln_tensor *filled(int64_t batch, double value)
{
    kiln_tensor *t;
    kiln_error err;
    int64_t shape[2] = {batch, 2};
    assert_int_equal(kiln_tensor_new(KILN_F64, 2, shape, &t, &err), KILN_OK);
    double *data = kiln_tensor_data(t);
    for (int64_t i = 0; i < batch * 2; i++)
        data[i] = value;
    return t;
}

/*
 * y = 2*x + 1 for x: f64[batch, 2], batch in 2..4 (the seed example), named
 * "scale" and CSI, with input name `input`, a metadata value `note`, and,
 * when `case_name` is not NULL, one evidence case: x = ones(batch, 2), y expected `expected`
 * everywhere. The builder does not run evidence, so a case that fails or
 * cannot run (batch outside the domain) is sealed as it is.
 */
static void build_scale(const char *path, const char *input, const char *note, const char *case_name,
                        int64_t batch, double expected)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    char full[512];
    snprintf(full, sizeof full, "%s/%s", harness_work_dir, path);
    /* Program names are printable text, which still admits C1 controls. */
    assert_int_equal(kiln_builder_new("scale\302\233", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_metadata(b, "note", note, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 2, 4, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, input, KILN_F64, "[batch, 2]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    if (case_name) {
        kiln_tensor *in = filled(batch, 1.0), *out = filled(batch, expected);
        const char *input_names[] = {input}, *output_names[] = {"y"};
        const kiln_tensor *inputs[] = {in}, *outputs[] = {out};
        kiln_compare_rule rule = {KILN_COMPARE_EXACT, 0.0, 0.0, false};
        assert_int_equal(
            kiln_builder_add_evidence(b, &(kiln_evidence_case){
                    .name = case_name,
                    .input_count = 1,
                    .input_names = input_names,
                    .inputs = inputs,
                    .output_count = 1,
                    .output_names = output_names,
                    .expected = outputs,
                    .rules = &rule}, &err),
            KILN_OK);
        kiln_tensor_free(in);
        kiln_tensor_free(out);
    }
    if (kiln_builder_save(b, full, NULL, &err) != KILN_OK)
        fail_msg("saving %s: %s", path, err.message);
    kiln_builder_free(b);
}

static uint64_t load_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint16_t load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc_of(const uint8_t *bytes, size_t size)
{
    return (uint32_t)crc32(crc32(0L, Z_NULL, 0), bytes, (uInt)size);
}

/*
 * Recompute every checksum of an uncompressed artifact (spec/format.md
 * §3-§5) as a forger would: each section's CRC32 and BLAKE2b-256, the
 * table CRC, the header CRC, the digest over header || table, and the
 * trailer CRC.
 */
static void reseal(uint8_t *bytes, size_t size)
{
    uint64_t table = load_u64(bytes + 24);
    uint32_t count = bytes[32] | bytes[33] << 8 | bytes[34] << 16 | (uint32_t)bytes[35] << 24;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *e = bytes + table + 72 * (uint64_t)i;
        uint64_t offset = load_u64(e + 8), stored = load_u64(e + 16);
        assert_int_equal(load_u16(e + 4) & 2, 0); /* not compressed */
        store_u32(e + 32, crc_of(bytes + offset, (size_t)stored));
        crypto_generichash(e + 40, 32, bytes + offset, stored, NULL, 0);
    }
    store_u32(bytes + 36, crc_of(bytes + table, 72 * (size_t)count));
    store_u32(bytes + 60, crc_of(bytes, 60));
    crypto_generichash_state digest;
    uint8_t *trailer = bytes + size - 128;
    crypto_generichash_init(&digest, NULL, 0, 32);
    crypto_generichash_update(&digest, bytes, 64);
    crypto_generichash_update(&digest, bytes + table, 72 * (size_t)count);
    crypto_generichash_final(&digest, trailer + 8, 32);
    store_u32(trailer + 124, crc_of(trailer, 124));
}

/* The scale program whose input is named with control characters: built
 * with an identifier, then renamed in place and resealed, so every
 * checksum holds and the loader's name rule is what refuses it. */
static void build_crafted(const char *path)
{
    char full[512];
    build_scale(path, PLAIN_INPUT, "plain", NULL, 0, 0.0);
    snprintf(full, sizeof full, "%s/%s", harness_work_dir, path);
    FILE *f = fopen(full, "r+b");
    assert_non_null(f);
    static uint8_t bytes[1 << 16];
    size_t size = fread(bytes, 1, sizeof bytes, f);
    assert_true(size > 192 && size < sizeof bytes);
    int replaced = 0;
    for (size_t at = 0; at + sizeof hostile_input <= size; at++)
        if (memcmp(bytes + at, PLAIN_INPUT, sizeof hostile_input) == 0) {
            memcpy(bytes + at, hostile_input, sizeof hostile_input);
            replaced++;
        }
    assert_true(replaced >= 1);
    reseal(bytes, size);
    rewind(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static int make_artifacts(void **state)
{
    (void)state;
    build_scale("pass.kiln", "x", HOSTILE, HOSTILE, 3, 3.0);
    build_scale("fail.kiln", "x", "plain", HOSTILE, 3, 4.0);
    build_scale("unrunnable.kiln", "x", "plain", HOSTILE, 5, 11.0);
    build_crafted("crafted.kiln");
    command_result r;
    run(&r, "'%s' keygen --out signer", kiln_binary);
    assert_int_equal(r.exit_code, 0);
    return 0;
}

/* ------------------------------------------------------------- checks */

/*
 * Fail if `text` holds a C0 control other than the newline, DEL, or a C1
 * control in UTF-8 (the text format's printer, used by disasm, spells C1
 * controls out as \\xHH too).
 */
static void assert_no_control_bytes(const char *stream, const char *command, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        bool c1 = c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f;
        bool control = (*c < 0x20 && *c != '\n') || *c == 0x7f || c1;
        if (control)
            fail_msg("%s of `%s` holds the raw control byte 0x%02x at offset %td:\n%s", stream, command, *c,
                     (const char *)c - text, text);
    }
}

/* Run `kiln ARGS`, require `exit_code`, clean output, and `shown` in it. */
static void check_verb(const char *args, int exit_code, const char *shown)
{
    command_result r;
    run(&r, "'%s' %s", kiln_binary, args);
    assert_no_control_bytes("stdout", args, r.out);
    assert_no_control_bytes("stderr", args, r.err);
    if (r.exit_code != exit_code)
        fail_msg("`kiln %s` exited %d, expected %d; stderr:\n%s", args, r.exit_code, exit_code, r.err);
    if (shown && !strstr(r.out, shown) && !strstr(r.err, shown))
        fail_msg("`kiln %s` does not show \"%s\"; stdout:\n%s\nstderr:\n%s", args, shown, r.out, r.err);
}

static void verify_escapes_a_passing_case_name(void **state)
{
    (void)state;
    check_verb("verify pass.kiln", 0, HOSTILE_SHOWN);
    check_verb("verify --json pass.kiln", 0, NULL);
}

static void verify_escapes_a_failing_case_name(void **state)
{
    (void)state;
    check_verb("verify fail.kiln", 1, HOSTILE_SHOWN);
    check_verb("verify --json fail.kiln", 1, NULL);
}

/* The message of a case that cannot run quotes the case name. */
static void verify_escapes_the_message_of_a_case_that_cannot_run(void **state)
{
    (void)state;
    check_verb("verify unrunnable.kiln", 1, "evidence '" HOSTILE_SHOWN "' could not run");
    check_verb("verify --json unrunnable.kiln", 1, NULL);
}

static void inspect_and_diff_escape_case_names_and_metadata(void **state)
{
    (void)state;
    check_verb("inspect pass.kiln", 0, HOSTILE_SHOWN);
    check_verb("inspect --json pass.kiln", 0, NULL);
    check_verb("diff pass.kiln fail.kiln", 0, NULL);
    check_verb("dot pass.kiln", 0, NULL);
    check_verb("disasm pass.kiln", 0, NULL);
}

/* Every verb that loads the resealed file prints the loader's message,
 * which quotes the input name. */
static void every_verb_escapes_a_load_error(void **state)
{
    (void)state;
    char ones[600];
    snprintf(ones, sizeof ones, "'%s/examples/ones_3x2_f64.npy'", source_root);
    /* inspect describes a file it cannot run (exit 0); diff reports the
     * difference as breaking (exit 1). */
    static const struct {
        const char *args;
        int exit_code;
    } verbs[] = {
        {"verify crafted.kiln", 1},
        {"verify --json crafted.kiln", 1},
        {"inspect crafted.kiln", 0},
        {"inspect --json crafted.kiln", 0},
        {"run crafted.kiln --input " PLAIN_INPUT "=%1$s", 1},
        {"probe crafted.kiln", 1},
        {"bench crafted.kiln --runs 1", 1},
        {"evidence add crafted.kiln --name n --input " PLAIN_INPUT "=%1$s --expect y=%1$s -o out.kiln", 1},
        {"sign crafted.kiln --key signer.key -o signed.kiln", 1},
        {"diff crafted.kiln pass.kiln", 1},
        {"dot crafted.kiln", 1},
        {"disasm crafted.kiln", 1},
    };
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        char args[1200];
        snprintf(args, sizeof args, verbs[i].args, ones);
        /* JSON output escapes in its own format (\u001b), not as \x1b;
         * diff does not say why a program cannot be decoded. */
        bool shows = !strstr(args, "--json") && strncmp(args, "diff", 4) != 0;
        check_verb(args, verbs[i].exit_code, shows ? HOSTILE_INPUT_SHOWN : NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_terminal_cli KILN_BINARY SOURCE_ROOT\n");
        return 2;
    }
    kiln_binary = argv[1];
    source_root = argv[2];
    if (harness_init("kiln-terminal") != 0) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verify_escapes_a_passing_case_name),
        cmocka_unit_test(verify_escapes_a_failing_case_name),
        cmocka_unit_test(verify_escapes_the_message_of_a_case_that_cannot_run),
        cmocka_unit_test(inspect_and_diff_escape_case_names_and_metadata),
        cmocka_unit_test(every_verb_escapes_a_load_error),
    };
    int failed = cmocka_run_group_tests(tests, make_artifacts, NULL);
    harness_cleanup();
    return failed;
}
