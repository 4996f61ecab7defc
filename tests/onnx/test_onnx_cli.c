/*
 * test_onnx_cli.c — kiln import-onnx and kiln onnx-test driven as a user
 * would, on model files and test case directories written here with the
 * generated protobuf-c structs: usage errors, the report listing every
 * unsupported node, dims declared on the command line, and onnx-test's
 * pass / fail / skip classification and summary line.
 *
 * Usage: test_onnx_cli KILN_BINARY
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_harness.h"
#include "onnx_builder.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *kiln;

static int setup(void **state)
{
    (void)state;
    return harness_init("kiln-onnx-cli");
}

static int teardown(void **state)
{
    (void)state;
    harness_cleanup();
    onnx_arena_release();
    return 0;
}

static void write_bytes(const char *name, const uint8_t *bytes, size_t size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

static void write_model(const char *name, const Onnx__ModelProto *model)
{
    size_t size;
    uint8_t *bytes = onnx_pack(model, &size);
    write_bytes(name, bytes, size);
}

static void write_tensor(const char *name, const Onnx__TensorProto *tensor)
{
    size_t size = onnx__tensor_proto__get_packed_size(tensor);
    uint8_t *bytes = malloc(size ? size : 1);
    assert_non_null(bytes);
    onnx__tensor_proto__pack(tensor, bytes);
    write_bytes(name, bytes, size);
    free(bytes);
}

static void make_dir(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", harness_work_dir, name);
    assert_int_equal(mkdir(path, 0700), 0);
}

/* A case directory: y = exp(x) for x = [0, 1], expecting `expected`. */
static void write_exp_case(const char *dir, const char *op, const float expected[2])
{
    char name[256];
    make_dir(dir);
    snprintf(name, sizeof name, "%s/test_data_set_0", dir);
    make_dir(name);
    write_model(strcat(strcpy(name, dir), "/model.onnx"),
                onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node(op, "n", L("x"), L("y"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 1, L("?")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 1, L("?")), NULL}, NULL));
    const int64_t dims[] = {2};
    snprintf(name, sizeof name, "%s/test_data_set_0/input_0.pb", dir);
    write_tensor(name, onnx_tensor_f32("x", 1, dims, (const float[]){0, 1}, 1));
    snprintf(name, sizeof name, "%s/test_data_set_0/output_0.pb", dir);
    write_tensor(name, onnx_tensor_f32("y", 1, dims, expected, 0));
}

static void import_usage_errors(void **state)
{
    (void)state;
    command_result r;
    run(&r, "%s import-onnx", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "missing MODEL.onnx");
    run(&r, "%s import-onnx m.onnx", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "missing -o OUT.kiln");
    run(&r, "%s import-onnx m.onnx -o out.kiln --dim batch=4..2", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "--dim takes NAME=MIN..MAX");
    run(&r, "%s import-onnx m.onnx -o out.kiln --dim batch=1..8:0", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "NAME=MIN..MAX:K with 0 <= MIN <= MAX and K >= 1");
    run(&r, "%s import-onnx m.onnx -o out.kiln --dim batch=1..8:", kiln);
    assert_int_equal(r.exit_code, 2);
    run(&r, "%s import-onnx missing.onnx -o out.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: cannot open 'missing.onnx'");
    write_work_file("text.onnx", "this is not protobuf at all\n");
    run(&r, "%s import-onnx text.onnx -o out.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "not an ONNX model");
    assert_false(exists("out.kiln"));
}

static void import_lists_every_problem_then_succeeds_with_dims(void **state)
{
    (void)state;
    write_model("bad.onnx",
                onnx_model(8, 13,
                           (Onnx__NodeProto *[]){onnx_node("StringSplit", "c1", L("x", "x"), L("a"), NULL),
                                                 onnx_node("NonZero", "nz", L("x"), L("b"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 2, L("2", "2")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("a", F32, 0, NULL), NULL}, NULL));
    command_result r;
    run(&r, "%s import-onnx bad.onnx -o bad.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "bad.onnx: 2 constructs cannot be imported:");
    assert_contains(r.err, "  node 0 'c1' (StringSplit): unsupported op StringSplit (opset 13)");
    assert_contains(r.err, "  node 1 'nz' (NonZero): unsupported op NonZero (opset 13): its output shape depends on the data");
    assert_false(exists("bad.kiln"));

    write_model("dyn.onnx",
                onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node("Sigmoid", "s", L("x"), L("y"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 2, L("batch", "seq")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, NULL));
    run(&r, "%s import-onnx dyn.onnx -o dyn.kiln", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "batch (input 'x' axis 0); seq (input 'x' axis 1)");
    run(&r, "%s import-onnx dyn.onnx -o dyn.kiln --dim batch=1..8 --dim seq=1..128", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "wrote dyn.kiln (1 input, 1 output)");

    /* A precondition false somewhere in the domain: the hint names the
     * --dim flag under which the model imports, and with it, it does. */
    write_model("blocks.onnx",
                onnx_model(8, 13,
                           (Onnx__NodeProto *[]){onnx_node("SpaceToDepth", "s", L("x"), L("y"),
                                                           (Onnx__AttributeProto *[]){
                                                               onnx_attr_int("blocksize", 2), NULL}),
                                                 NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 4, L("n", "1", "h", "4")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, NULL));
    run(&r, "%s import-onnx blocks.onnx -o blocks.kiln --dim n=1..4 --dim h=2..16", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "counterexample: h=3");
    assert_contains(r.err, "hint: the model imports with --dim h=2..16:2 (sizes restricted to multiples of 2)");
    assert_false(exists("blocks.kiln"));
    run(&r, "%s import-onnx blocks.onnx -o blocks.kiln --dim n=1..4 --dim h=2..16:2", kiln);
    assert_int_equal(r.exit_code, 0);
    run(&r, "%s inspect dyn.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "[batch, seq]");
    assert_contains(r.out, "seq    1..128");
}

/* --check sets semantic checks on the imported program: enforced at run,
 * by kiln or ONNX input name; bad specs and unknown inputs refused. */
static void import_with_checks(void **state)
{
    (void)state;
    write_model("sig.onnx",
                onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node("Sigmoid", "s", L("x:0"), L("y"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x:0", F32, 1, L("2")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, NULL));
    write_npy_f32("half.npy", 2, (const float[]){0.5f, 0.25f});
    write_npy_f32("over.npy", 2, (const float[]){0.5f, 1.5f});
    write_npy_f32("nan.npy", 2, (const float[]){0.5f, NAN});
    command_result r;
    run(&r, "%s import-onnx sig.onnx -o sig.kiln", kiln);
    assert_int_equal(r.exit_code, 0);
    /* An unknown name: the inputs are listed, with the ONNX name where the
     * kiln name differs ('x:0' is not an identifier). */
    run(&r, "%s import-onnx sig.onnx -o sig-checked.kiln --check 'nope: finite'", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "kiln: error: --check: 'nope' is not an input of the model; its inputs are:\n");
    assert_contains(r.err, " (ONNX 'x:0')\n");
    assert_false(exists("sig-checked.kiln"));

    write_model("plain.onnx",
                onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node("Sigmoid", "s", L("x"), L("y"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 1, L("2")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, NULL));
    /* 0.5 runs; 1.5 and NaN are refused naming the input. */
    run(&r, "%s import-onnx plain.onnx -o checked.kiln --check 'x: range 0..1, finite, unit m/s'", kiln);
    if (r.exit_code != 0)
        fail_msg("import exited %d: %s", r.exit_code, r.err);
    run(&r, "mkdir -p out && %s run checked.kiln --input x=half.npy --output-dir out", kiln);
    assert_int_equal(r.exit_code, 0);
    run(&r, "%s run checked.kiln --input x=over.npy --output-dir out", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' element [1]: 1.5 is outside the range 0..1");
    run(&r, "%s run checked.kiln --input x=nan.npy --output-dir out", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x' element [1]: nan is not finite");
    run(&r, "%s disasm checked.kiln", kiln);
    assert_contains(r.out, "check x: range 0.0..1.0, finite, unit \"m/s\"\n");

    /* Categories need an integer input: the builder's refusal, exit 1, nothing written. */
    run(&r, "%s import-onnx plain.onnx -o cat.kiln --check 'x: categories 0, 1'", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "input 'x': categories need an integer input, not f32");
    assert_false(exists("cat.kiln"));
    run(&r, "%s import-onnx plain.onnx -o bad.kiln --check 'x: range 2..1'", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "range 2..1 is empty: its minimum exceeds its maximum; write range 1..2");
    run(&r, "%s import-onnx plain.onnx -o bad.kiln --check 'x: finite' --check 'x: range 0..1'", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "--check names input 'x' twice");
    assert_false(exists("bad.kiln"));
}

static void onnx_test_classifies_cases(void **state)
{
    (void)state;
    write_exp_case("test_exp_good", "Exp", (const float[]){1.0f, 2.7182817f});
    write_exp_case("test_exp_wrong", "Exp", (const float[]){1.0f, 2.75f});
    write_exp_case("test_unmapped", "Celu2", (const float[]){1.0f, 1.0f});
    command_result r;
    run(&r, "%s onnx-test test_exp_good/", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.out, "pass test_exp_good\n1 passed, 0 failed, 0 skipped\n");
    run(&r, "%s onnx-test test_exp_good test_exp_wrong test_unmapped", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.out, "pass test_exp_good\n");
    assert_contains(r.out, "fail test_exp_wrong: test_data_set_0: output 0 ('y'): worst error at element 1: got "
                           "2.71828175, expected 2.75");
    assert_contains(r.out, "skip test_unmapped: node 0 'n' (Celu2): unsupported op Celu2 (opset 13)\n");
    assert_contains(r.out, "1 passed, 1 failed, 1 skipped\n");
    run(&r, "%s onnx-test", kiln);
    assert_int_equal(r.exit_code, 2);
    /* Tolerances: 2.7182817 against 2.75 is off by 0.0317, within 0.03 + 1e-3 * 2.75
     * but not 0.02 + 1e-3 * 2.75; within 0.012 * 2.75 + 1e-7. */
    run(&r, "%s onnx-test test_exp_wrong --atol 0.02", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.out, "expected 2.75 (rtol 0.001, atol 0.02)\n");
    run(&r, "%s onnx-test test_exp_wrong --atol 0.03", kiln);
    assert_int_equal(r.exit_code, 0);
    run(&r, "%s onnx-test test_exp_wrong --rtol 0.012", kiln);
    assert_int_equal(r.exit_code, 0);
    run(&r, "%s onnx-test test_exp_wrong --atol -1", kiln);
    assert_int_equal(r.exit_code, 2);
    assert_contains(r.err, "--atol takes a finite number >= 0, got '-1'");
}

/* Issue 19, point 10: an input renamed to a kiln identifier is said so,
 * and --name names the program (PyTorch's graphs are all torch_jit). */
static void import_names_the_program_and_says_what_it_renames(void **state)
{
    (void)state;
    write_model("renamed.onnx",
                onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node("Sigmoid", "s", L("in:0"), L("y"), NULL), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("in:0", F32, 1, L("4")), NULL},
                           (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, NULL));
    command_result r;
    run(&r, "%s import-onnx renamed.onnx -o renamed.kiln --name sigmoid_net", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_contains(r.err, "kiln: note: input 'in:0' is called 'in_0' in the artifact (kiln names are identifiers)");
    run(&r, "%s inspect renamed.kiln", kiln);
    /* Format 1.2: the ONNX node's name "s" is kept (section NNAM). */
    assert_contains(r.out, "sigmoid_net: format 1.2");
    assert_contains(r.out, "ops (1 distinct, 1 node, 1 named)");
    run(&r, "%s import-onnx renamed.onnx -o quiet.kiln --quiet", kiln);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");
    run(&r, "%s import-onnx renamed.onnx -o bad-name.kiln --name ''", kiln);
    assert_int_equal(r.exit_code, 1);
    assert_contains(r.err, "program name must be non-empty");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s KILN_BINARY\n", argv[0]);
        return 2;
    }
    kiln = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(import_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(import_lists_every_problem_then_succeeds_with_dims, setup, teardown),
        cmocka_unit_test_setup_teardown(import_with_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(onnx_test_classifies_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(import_names_the_program_and_says_what_it_renames, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
