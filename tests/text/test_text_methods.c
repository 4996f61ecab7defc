/*
 * test_text_methods.c — methods in the text format (text format 1.1,
 * spec/text-format.md §3.3): a program with `method NAME { ... }` blocks
 * assembles to a multi-method artifact whose blocks use the program's
 * weights by name (stored once), disassembles to the same text and
 * reassembles to the same bytes; each misuse of a block is refused at its
 * place. States and relations (§3.4) and generation cases (§3.5) round
 * trip the same way, and each misuse of a generation block is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/text.h>

/* The canonical form: what kiln_text_disassemble prints (inline constants need no files). */
static const char methods_text[] =
    "kiln 1.1\n"
    "program \"two\"\n"
    "mode inference\n"
    "method prefill\n"
    "dim seq in 1..8\n"
    "input x: f64[seq, 2]\n"
    "const w: f64[2, 2] = [1, 2, 3, 4]\n"
    "const one: f64[] = 1\n"
    "%0 = matmul(x, w)\n"
    "%1 = add(%0, one)\n"
    "output y = %1\n"
    "\n"
    "method decode {\n"
    "    input t: f64[1, 2]\n"
    "    %0 = matmul(t, w)\n"
    "    %1 = mul(%0, one)\n"
    "    output z = %1\n"
    "}\n"
    "\n"
    "method embed {\n"
    "    dim n in 1..4\n"
    "    input ids: f64[n]\n"
    "    %0 = neg(ids)\n"
    "    output e = %0\n"
    "}\n";

static kiln_builder *assemble(const char *text)
{
    kiln_builder *b = NULL;
    kiln_error err;
    if (kiln_text_assemble(text, strlen(text), "t.ktxt", ".", &b, &err) != KILN_OK)
        fail_msg("assemble: %s", err.message);
    return b;
}

static void *encode(kiln_builder *b, size_t *size)
{
    void *bytes = NULL;
    kiln_error err;
    kiln_save_options options;
    kiln_save_options_default(&options);
    options.timestamp = -1;
    if (kiln_builder_encode(b, &options, &bytes, size, &err) != KILN_OK)
        fail_msg("encode: %s", err.message);
    return bytes;
}

/* A text assembled, sealed and loaded. */
typedef struct sealed {
    void *bytes;
    size_t size;
    kiln_program *program;
} sealed;

static sealed seal(const char *text)
{
    sealed s;
    kiln_builder *b = assemble(text);
    s.bytes = encode(b, &s.size);
    kiln_builder_free(b);
    kiln_error err;
    assert_int_equal(kiln_program_load_memory(s.bytes, s.size, NULL, &s.program, NULL, &err), KILN_OK);
    return s;
}

static void sealed_free(sealed *s)
{
    kiln_program_free(s->program);
    free(s->bytes);
}

/* The canonical text of `s` (caller frees), checked to reassemble to the same bytes. */
static char *round_trip(const sealed *s)
{
    char *text = NULL;
    kiln_error err;
    assert_int_equal(kiln_text_disassemble(s->program, NULL, &text, &err), KILN_OK);
    kiln_builder *again = assemble(text);
    size_t size;
    void *bytes = encode(again, &size);
    assert_int_equal(size, s->size);
    assert_memory_equal(bytes, s->bytes, size);
    kiln_builder_free(again);
    free(bytes);
    return text;
}

static void blocks_become_methods_and_round_trip(void **state)
{
    (void)state;
    sealed s = seal(methods_text);
    const kiln_program *p = s.program;
    assert_int_equal(kiln_program_method_count(p), 3);
    assert_string_equal(kiln_program_method_name(p), "prefill");
    assert_string_equal(kiln_program_method_name(kiln_program_method_at(p, 1)), "decode");
    assert_string_equal(kiln_program_method_name(kiln_program_method_at(p, 2)), "embed");
    /* w and one once, shared by prefill and decode; embed uses neither. */
    assert_int_equal(kiln_program_weight_count(p), 2);
    assert_int_equal(kiln_program_dim_count(kiln_program_method_at(p, 2)), 1);
    char *text = round_trip(&s);
    assert_string_equal(text, methods_text);
    free(text);
    sealed_free(&s);
}

static void a_block_may_declare_weights_of_its_own(void **state)
{
    (void)state;
    const char *text = "kiln 1.1\nprogram \"own\"\ninput x: f32[2]\nconst a: f32[2] = [1, 2]\n%0 = add(x, a)\n"
                       "output y = %0\n"
                       "method other {\n  input t: f32[2]\n  const b: f32[2] = [5, 6]\n  %0 = mul(t, b)\n"
                       "  %1 = add(%0, a)\n  output z = %1\n}\n";
    sealed s = seal(text);
    assert_int_equal(kiln_program_weight_count(s.program), 2);
    /* The disassembler declares every weight before the blocks. */
    char *printed = round_trip(&s);
    assert_non_null(strstr(printed, "const b: f32[2] = [5, 6]\n%0 = add(x, a)"));
    assert_non_null(strstr(printed, "method other {\n    input t: f32[2]\n    %0 = mul(t, b)\n"));
    free(printed);
    sealed_free(&s);
}

typedef struct bad_text {
    const char *what;
    const char *text;
    kiln_status status;
    const char *message;
} bad_text;

#define PROGRAM "program \"p\"\ninput x: f32[2]\n%0 = neg(x)\noutput y = %0\n"

/* Each text of `cases` is refused by the assembler with its status and a message containing its words. */
static void expect_refusals(const bad_text *cases, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        kiln_builder *b = NULL;
        kiln_error err;
        kiln_status status = kiln_text_assemble(cases[i].text, strlen(cases[i].text), "t.ktxt", ".", &b, &err);
        if (status != cases[i].status || !strstr(err.message, cases[i].message))
            fail_msg("%s: expected status %d and \"%s\", got %d: %s", cases[i].what, cases[i].status,
                     cases[i].message, status, status == KILN_OK ? "" : err.message);
        assert_null(b);
    }
}

static void misused_blocks_are_refused_at_their_place(void **state)
{
    (void)state;
    static const bad_text cases[] = {
        {"methods in a 1.0 text", "kiln 1.0\n" PROGRAM "method m {\n}\n", KILN_ERR_MALFORMED,
         "t.ktxt:6:1: methods are text format 1.1: begin the text with 'kiln 1.1'"},
        {"a block without output", "kiln 1.1\n" PROGRAM "method m {\n  input t: f32[2]\n}\n",
         KILN_ERR_INVALID_PROGRAM, "method 'm' has no output"},
        {"the first method without output", "kiln 1.1\nprogram \"p\"\ninput x: f32[2]\nmethod m {\n}\n",
         KILN_ERR_INVALID_PROGRAM, "t.ktxt:4:10: the program's own method has no output"},
        {"unclosed", "kiln 1.1\n" PROGRAM "method m {\n  input t: f32[2]\n", KILN_ERR_MALFORMED,
         "t.ktxt:6:1: method 'm' is not closed: '}' expected"},
        {"nested", "kiln 1.1\n" PROGRAM "method m {\n  method n {\n", KILN_ERR_MALFORMED,
         "t.ktxt:7:3: method blocks do not nest: close method 'm' with '}' first"},
        {"a statement after the blocks",
         "kiln 1.1\n" PROGRAM "method m {\n  input t: f32[2]\n  output z = t\n}\ninput late: f32[2]\n",
         KILN_ERR_MALFORMED, "t.ktxt:10:1: after the first method block only method blocks follow"},
        {"meta in a block", "kiln 1.1\n" PROGRAM "method m {\n  meta k = \"v\"\n", KILN_ERR_INVALID_PROGRAM,
         "t.ktxt:7:3: a method has the program's metadata"},
        {"mode in a block", "kiln 1.1\n" PROGRAM "method m {\n  mode inference\n", KILN_ERR_INVALID_PROGRAM,
         "t.ktxt:7:3: a method has the program's mode"},
        {"a name taken", "kiln 1.1\n" PROGRAM "method main {\n  input t: f32[2]\n  output z = t\n}\n",
         KILN_ERR_INVALID_ARGUMENT, "t.ktxt:6:8: the program has a method called 'main' already"},
        {"a name after the blocks",
         "kiln 1.1\n" PROGRAM "method m {\n  input t: f32[2]\n  output z = t\n}\nmethod first\n",
         KILN_ERR_MALFORMED, "names the program's own method, before the blocks"},
        {"another method's input", "kiln 1.1\n" PROGRAM "method m {\n  %0 = neg(x)\n", KILN_ERR_INVALID_PROGRAM,
         "t.ktxt:7:12: 'x' is not a declared input or weight"},
        {"a program's result", "kiln 1.1\n" PROGRAM "method m {\n  input t: f32[2]\n  output z = %0\n",
         KILN_ERR_INVALID_PROGRAM, "'%0' is not defined"},
    };
    expect_refusals(cases, sizeof cases / sizeof cases[0]);
}

/* A block's tensor of a program tensor's name but other values is another tensor: it is stored as NAME.METHOD,
 * and the canonical text declares it so, before the blocks. */
static void a_block_tensor_of_a_taken_name_is_renamed(void **state)
{
    (void)state;
    const char *clash = "kiln 1.1\nprogram \"p\"\ninput x: f32[2]\nconst a: f32[2] = [1, 2]\n%0 = add(x, a)\n"
                        "output y = %0\nmethod m {\n  input t: f32[2]\n  const a: f32[2] = [1, 3]\n"
                        "  %0 = add(t, a)\n  output z = %0\n}\n";
    sealed s = seal(clash);
    char *text = round_trip(&s);
    assert_non_null(strstr(text, "const a: f32[2] = [1, 2]\nconst a.m: f32[2] = [1, 3]\n"));
    assert_non_null(strstr(text, "    %0 = add(t, a.m)\n"));
    free(text);
    sealed_free(&s);
}

/* States and relations (spec/text-format.md §3.4): the canonical form, its round trip, and the contract it holds. */
static const char state_text[] =
    "kiln 1.1\n"
    "program \"cache\"\n"
    "mode inference\n"
    "method prefill\n"
    "dim past in 0..0\n"
    "dim seq in 1..8\n"
    "input x: f64[1, seq, 2]\n"
    "state cache: f64[1, 8, 2] grows 1 length past\n"
    "%0 = state_append(x, state=\"cache\")\n"
    "%1 = reduce_sum(%0, axes=[1], keepdims=0)\n"
    "output sums = %1\n"
    "\n"
    "method decode {\n"
    "    dim past in 0..7\n"
    "    dim seq in 1..8\n"
    "    relation past + seq <= 8\n"
    "    input t: f64[1, seq, 2]\n"
    "    %0 = state_append(t, state=\"cache\")\n"
    "    %1 = reduce_sum(%0, axes=[1], keepdims=0)\n"
    "    output sums = %1\n"
    "}\n";

static void states_and_relations_round_trip(void **state)
{
    (void)state;
    sealed s = seal(state_text);
    assert_int_equal(kiln_program_state_count(s.program), 1);
    assert_int_equal(kiln_program_relation_count(kiln_program_method_at(s.program, 1)), 1);
    char *text = round_trip(&s);
    assert_string_equal(text, state_text);
    free(text);
    sealed_free(&s);
    /* Without the relation decode cannot prove its append fits: refused where the node is. */
    char *unproven = strdup(state_text);
    char *line = strstr(unproven, "    relation past + seq <= 8\n");
    memmove(line, line + strlen("    relation past + seq <= 8\n"), strlen(line + strlen("    relation past + seq <= 8\n")) + 1);
    kiln_builder *b = NULL;
    kiln_error err;
    assert_int_equal(kiln_text_assemble(unproven, strlen(unproven), "t.ktxt", ".", &b, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "t.ktxt:17:"));
    assert_non_null(strstr(err.message, "Declare the relation 'past + seq <= 8'"));
    free(unproven);
    static const bad_text cases[] = {
        {"a state in a 1.0 text", "kiln 1.0\n" PROGRAM "state s: f32[4] grows 0 length n\n", KILN_ERR_MALFORMED,
         "t.ktxt:6:1: 'state' is text format 1.1"},
        {"a relation without <=", "kiln 1.1\n" PROGRAM "relation n < 4\n", KILN_ERR_MALFORMED,
         "write it as LHS <= RHS"},
        {"a state without its axis", "kiln 1.1\n" PROGRAM "state s: f32[4] length n\n", KILN_ERR_MALFORMED,
         "'grows AXIS'"},
        {"a state of symbolic extent", "kiln 1.1\n" PROGRAM "dim n in 1..4\nstate s: f32[n] grows 0 length n\n",
         KILN_ERR_INVALID_PROGRAM, "state 's' axis 0 uses dim 'n'"},
        {"a state axis outside the rank", "kiln 1.1\n" PROGRAM "state s: f32[4] grows 1 length n\n",
         KILN_ERR_INVALID_ARGUMENT, "state 's': rank 1 with growing axis 1"},
    };
    expect_refusals(cases, sizeof cases / sizeof cases[0]);
}

/* The state program with two generation cases after its blocks, in canonical form. */
static const char generation_cases[] =
    "\n"
    "generation \"greedy\" {\n"
    "  prefill prefill  decode decode  margin 0\n"
    "  prompt [0, 2]\n"
    "  tokens [1, 1, 4]\n"
    "}\n"
    "\n"
    "generation \"near\" {\n"
    "  prefill prefill  decode decode  margin 0.25\n"
    "  prompt [3]\n"
    "  tokens [2]\n"
    "}\n";

static void generation_cases_round_trip(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s%s", state_text, generation_cases);
    sealed s = seal(text);
    assert_int_equal(kiln_program_generation_count(s.program), 2);
    kiln_generation_case c;
    assert_true(kiln_program_generation(s.program, 1, &c));
    assert_string_equal(c.name, "near");
    assert_true(c.margin == 0.25);
    assert_int_equal(c.prompt_length, 1);
    assert_int_equal(c.prompt[0], 3);
    char *printed = round_trip(&s);
    assert_string_equal(printed, text);
    free(printed);
    sealed_free(&s);
    /* The options in any order, on any lines; the methods by default prefill and decode. */
    snprintf(text, sizeof text, "%s\ngeneration \"g\" { tokens [1, 1,\n 4,]  # three\n prompt [0, 2] }\n",
             state_text);
    s = seal(text);
    assert_true(kiln_program_generation(s.program, 0, &c));
    assert_string_equal(c.decode_method, "decode");
    assert_int_equal(c.token_count, 3);
    sealed_free(&s);
    static const bad_text cases[] = {
        {"a case in a 1.0 text", "kiln 1.0\n" PROGRAM "generation \"g\" { prompt [1] tokens [2] }\n",
         KILN_ERR_MALFORMED, "t.ktxt:6:1: 'generation' is text format 1.1"},
        {"a case without tokens", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] }\n",
         KILN_ERR_INVALID_PROGRAM, "generation case 'g' needs 'tokens [IDS]'"},
        {"an empty prompt", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [] tokens [2] }\n",
         KILN_ERR_INVALID_PROGRAM, "'prompt' needs at least one token id"},
        {"a negative token", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2, -3] }\n",
         KILN_ERR_INVALID_PROGRAM, "token ids are >= 0, got -3 in 'tokens'"},
        {"an option twice", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] prompt [2] tokens [2] }\n",
         KILN_ERR_INVALID_PROGRAM, "generation option 'prompt' is given twice"},
        {"an unknown option", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2] exact }\n",
         KILN_ERR_MALFORMED, "unknown generation option 'exact'"},
        {"a negative margin", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2] margin -1 }\n",
         KILN_ERR_INVALID_PROGRAM, "margin must be a finite number >= 0, got -1"},
        {"a case twice", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2] }\n"
                         "generation \"g\" { prompt [1] tokens [2] }\n",
         KILN_ERR_INVALID_PROGRAM, "generation case 'g' is already declared at line 6"},
        {"a statement after a case", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2] }\n"
                                     "output z = %0\n",
         KILN_ERR_MALFORMED, "generation cases come last; 'output' cannot follow them"},
        {"an unclosed block", "kiln 1.1\n" PROGRAM "generation \"g\" { prompt [1] tokens [2]\n",
         KILN_ERR_MALFORMED, "unterminated generation block"},
    };
    expect_refusals(cases, sizeof cases / sizeof cases[0]);
    /* The methods are judged when the program is sealed. */
    snprintf(text, sizeof text, "%s\ngeneration \"g\" { prompt [1] tokens [2] decode step }\n", state_text);
    kiln_builder *b = assemble(text);
    void *bytes;
    size_t size;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_ERR_INVALID_PROGRAM);
    assert_non_null(strstr(err.message, "no method 'step'"));
    kiln_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_become_methods_and_round_trip),
        cmocka_unit_test(a_block_may_declare_weights_of_its_own),
        cmocka_unit_test(misused_blocks_are_refused_at_their_place),
        cmocka_unit_test(a_block_tensor_of_a_taken_name_is_renamed),
        cmocka_unit_test(states_and_relations_round_trip),
        cmocka_unit_test(generation_cases_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
