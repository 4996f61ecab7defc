/*
 * test_op_registry.c — every record of the op registry is whole and its
 * traits agree with what planning and the session do with them
 * (ops/op_registry.h): a fast path behind every layout or fusion trait,
 * activations that are one-operand elementwise ops, its family's spec page
 * naming every op; and that the lists written outside the records say what the
 * records say: spec/opset.md's channels-last lists against the layout
 * traits, README.md's op counts and the ops its Status names against the
 * registry. Planning reads these traits instead of op names, so a record
 * that forgets one is caught here rather than by a slower program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_registry.h"
#include "tensor_fixture.h"

static const char *source_root;

static void every_record_is_whole(void **state)
{
    (void)state;
    uint32_t count = kiln_op_count();
    assert_true(count > 100);
    for (uint32_t i = 0; i < count; i++) {
        const kiln_op_def *def = kiln_op_at(i);
        assert_non_null(def);
        assert_non_null(def->name);
        assert_non_null(def->infer);
        assert_non_null(def->run);
        assert_true(def->versions.min >= 1 && def->versions.min <= def->versions.max);
        assert_true(def->inputs.min <= def->inputs.max);
        assert_ptr_equal(kiln_op_find(def->name), def); /* names are unique */
    }
}

static void traits_agree_with_kernels(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < kiln_op_count(); i++) {
        const kiln_op_def *def = kiln_op_at(i);
        const kiln_op_traits *t = &def->traits;
        /* Only a fast path reads operand 0 channels-last or applies the next node's activation. */
        if (t->layout == KILN_LAYOUT_READS_OPERAND_0 || t->applies_activation)
            assert_non_null(def->fast);
        /* Applying it in place is a way of applying it. */
        if (t->activation_in_place)
            assert_true(t->applies_activation);
        /* An activation a conv applies is a one-operand op that keeps its operand's layout. */
        if (t->activation != KILN_ACTIVATION_NONE) {
            assert_int_equal(def->inputs.max, 1);
            assert_int_equal(t->layout, KILN_LAYOUT_ELEMENTWISE);
        }
        if (t->magnitude == KILN_MAGNITUDE_SUM)
            assert_int_equal(def->inputs.max, 2);
        else if (t->magnitude != KILN_MAGNITUDE_UNKNOWN && t->magnitude != KILN_MAGNITUDE_LARGEST_OPERAND)
            assert_int_equal(def->inputs.max, 1);
    }
}

/* The ops planning relies on declare what the plan expects of them (spec/opset.md, "Fast paths"). */
static void planned_ops_declare_their_traits(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        kiln_activation_kind activation;
        kiln_magnitude_rule magnitude;
    } activations[] = {
        {"relu", KILN_ACTIVATION_RELU, KILN_MAGNITUDE_NOT_ABOVE_OPERAND},
        {"leaky_relu", KILN_ACTIVATION_LEAKY_RELU, KILN_MAGNITUDE_SLOPE_ALPHA},
        {"clip", KILN_ACTIVATION_CLIP, KILN_MAGNITUDE_CLIPPED},
        {"silu", KILN_ACTIVATION_SILU, KILN_MAGNITUDE_UNKNOWN},
        {"hard_swish", KILN_ACTIVATION_HARD_SWISH, KILN_MAGNITUDE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++) {
        const kiln_op_def *def = kiln_op_find(activations[i].op);
        assert_non_null(def);
        assert_int_equal(def->traits.activation, activations[i].activation);
        assert_int_equal(def->traits.magnitude, activations[i].magnitude);
    }
    assert_true(kiln_op_find("conv")->traits.applies_activation);
    assert_int_equal(kiln_op_find("add")->traits.magnitude, KILN_MAGNITUDE_SUM);
    assert_int_equal(kiln_op_find("concat")->traits.magnitude, KILN_MAGNITUDE_LARGEST_OPERAND);
    static const char *const movers[] = {"reshape", "flatten", "squeeze", "unsqueeze", "transpose", "slice", "identity"};
    for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++)
        assert_int_equal(kiln_op_find(movers[i])->traits.magnitude, KILN_MAGNITUDE_NOT_ABOVE_OPERAND);
    assert_int_equal(kiln_op_find("batch_norm")->traits.layout, KILN_LAYOUT_CHANNELWISE);
    static const char *const window_ops[] = {"conv", "max_pool", "avg_pool", "global_max_pool", "global_avg_pool"};
    for (size_t i = 0; i < sizeof window_ops / sizeof window_ops[0]; i++)
        assert_int_equal(kiln_op_find(window_ops[i])->traits.layout, KILN_LAYOUT_READS_OPERAND_0);
    for (const char *const *op = (const char *const[]){"matmul", "gemm", "conv_transpose", NULL}; *op; op++)
        assert_non_null(kiln_op_find(*op)->fast);
}

/* Append the bytes of the file at `path` to *all (used bytes, *capacity allocated); fails the test if unreadable. */
static void append_file(const char *path, char **all, size_t *used, size_t *capacity)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        *all = realloc(*all, *capacity += n);
        assert_non_null(*all);
        memcpy(*all + *used, chunk, n);
        *used += n;
    }
    fclose(f);
}

/* The file at `relative` under the source root, NUL-terminated (caller frees). */
static char *read_source_file(const char *relative)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", source_root, relative);
    size_t used = 0, capacity = 1;
    char *all = malloc(capacity);
    assert_non_null(all);
    append_file(path, &all, &used, &capacity);
    all[used] = '\0';
    return all;
}

/* Whether `name` stands as a whole word in `line` (up to its end of line). */
static bool word_in_line(const char *line, const char *name)
{
    size_t length = strlen(name);
    const char *end = strchr(line, '\n');
    for (const char *p = strstr(line, name); p && (!end || p < end); p = strstr(p + 1, name)) {
        bool starts = p == line || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool ends = !(isalnum((unsigned char)p[length]) || p[length] == '_');
        if (starts && ends)
            return true;
    }
    return false;
}

/* Named in a code span, or as a word of a table row or a heading (`## eq, ne, lt — version 1`). */
static bool spec_names(const char *specs, const char *name)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "`%s`", name);
    if (strstr(specs, quoted))
        return true;
    for (const char *line = specs; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if ((line[0] == '#' || line[0] == '|') && word_in_line(line, name))
            return true;
    return false;
}

/* Each op is named on its family's own page (the family record's spec_page,
 * which spec/opset.md's table of families repeats: op_families), not merely
 * somewhere in spec/: a newcomer reads the page of the family they touch. */
static void every_op_is_named_on_its_family_page(void **state)
{
    (void)state;
    uint32_t checked = 0;
    for (uint32_t f = 0; f < kiln_op_family_count(); f++) {
        const kiln_op_family *family = kiln_op_family_at(f);
        assert_non_null(family->spec_page);
        char *page = read_source_file(family->spec_page);
        for (uint32_t i = 0; i < family->count; i++, checked++)
            if (!spec_names(page, family->ops[i].name))
                fail_msg("op '%s' is not named on its family's page %s", family->ops[i].name, family->spec_page);
        /* The check can fail: a name the page does not use is not found. */
        assert_false(spec_names(page, "no_such_op_anywhere"));
        free(page);
    }
    assert_null(kiln_op_family_at(kiln_op_family_count()));
    assert_int_equal(checked, kiln_op_count());
}

/* `text` with every run of white space made one space, so that a phrase a line break splits is found (caller frees). */
static char *one_line(const char *text)
{
    char *flat = malloc(strlen(text) + 1);
    assert_non_null(flat);
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        bool space = isspace((unsigned char)*p);
        if (!space)
            flat[n++] = *p;
        else if (n && flat[n - 1] != ' ')
            flat[n++] = ' ';
    }
    flat[n] = '\0';
    return flat;
}

#define MAX_LISTED 64

/*
 * The op names of the list that follows `anchor` in `text`: code spans
 * (`abs`) separated by ", ", " or " or ", or ", up to the first other
 * word. Fails the test when the anchor is not found (the sentence was
 * reworded: the check must follow it, not pass empty).
 */
static size_t listed_after(const char *text, const char *anchor, char names[][64])
{
    const char *p = strstr(text, anchor);
    if (!p)
        fail_msg("spec/opset.md no longer says \"%s\"", anchor);
    p += strlen(anchor);
    size_t count = 0;
    while (*p == '`' && count < MAX_LISTED) {
        const char *end = strchr(p + 1, '`');
        assert_non_null(end);
        size_t length = (size_t)(end - p - 1);
        assert_true(length > 0 && length < 64);
        memcpy(names[count], p + 1, length);
        names[count++][length] = '\0';
        p = end + 1;
        if (strncmp(p, ", or ", 5) == 0)
            p += 5;
        else if (strncmp(p, ", ", 2) == 0)
            p += 2;
        else if (strncmp(p, " or ", 4) == 0)
            p += 4;
        else
            break;
    }
    return count;
}

/* Which records a list of spec/opset.md's "Channels-last results" names. */
typedef bool (*op_predicate)(const kiln_op_def *def);

static bool reads_operand_0(const kiln_op_def *def)
{
    return def->traits.layout == KILN_LAYOUT_READS_OPERAND_0;
}

static bool channel_concat(const kiln_op_def *def)
{
    return def->traits.layout == KILN_LAYOUT_CHANNEL_CONCAT;
}

static bool channelwise(const kiln_op_def *def)
{
    return def->traits.layout == KILN_LAYOUT_CHANNELWISE;
}

static bool elementwise_one_operand(const kiln_op_def *def)
{
    return def->traits.layout == KILN_LAYOUT_ELEMENTWISE && def->inputs.max == 1;
}

static bool elementwise_two_operands(const kiln_op_def *def)
{
    return (def->traits.layout == KILN_LAYOUT_ELEMENTWISE ||
            def->traits.layout == KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL) &&
           def->inputs.max >= 2;
}

static bool elementwise_or_per_channel(const kiln_op_def *def)
{
    return def->traits.layout == KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL;
}

/* The list after `anchor` names exactly the records `holds` selects; @return false, printing each difference
 * when `report`, if not. */
static bool list_matches_records(const char *text, const char *anchor, op_predicate holds, const char *trait,
                                 bool report)
{
    char names[MAX_LISTED][64];
    size_t count = listed_after(text, anchor, names);
    bool same = count > 0;
    for (size_t k = 0; k < count; k++) {
        const kiln_op_def *def = kiln_op_find(names[k]);
        if ((!def || !holds(def)) && report) {
            print_error("spec/opset.md lists `%s` after \"%s\", but %s (%s)\n", names[k], anchor,
                        def ? "its record's traits are not the list's" : "no record has that name", trait);
        }
        same = same && def && holds(def);
    }
    for (uint32_t i = 0; i < kiln_op_count(); i++) {
        const kiln_op_def *def = kiln_op_at(i);
        bool listed = false;
        for (size_t k = 0; k < count; k++)
            listed = listed || strcmp(names[k], def->name) == 0;
        if (holds(def) && !listed && report)
            print_error("op '%s' has the traits %s, but spec/opset.md does not list it after \"%s\"\n", def->name,
                        trait, anchor);
        same = same && (listed || !holds(def));
    }
    return same;
}

/*
 * The ops spec/opset.md's "Channels-last results" lists are the records
 * whose layout trait lets them read a channels-last value: the plan reads
 * the traits (plan/layout.c), so the spec's lists must say the same.
 */
static void channels_last_lists_match_the_traits(void **state)
{
    (void)state;
    char *raw = read_source_file("spec/opset.md");
    char *text = one_line(raw);
    free(raw);
    bool same = true;
    same &= list_matches_records(text, "an op whose fast path reads its `x` in either layout, one of ",
                                 reads_operand_0, "layout KILN_LAYOUT_READS_OPERAND_0", true);
    same &= list_matches_records(text, "reading it as `x`; a ", channel_concat, "layout KILN_LAYOUT_CHANNEL_CONCAT",
                                 true);
    same &= list_matches_records(text, "at most 32 operands) whose own result may stay channels-last; a ",
                                 channelwise, "layout KILN_LAYOUT_CHANNELWISE", true);
    same &= list_matches_records(text, "an elementwise op whose own result may stay channels-last: one of ",
                                 elementwise_one_operand, "layout KILN_LAYOUT_ELEMENTWISE, one operand", true);
    same &= list_matches_records(text, "the other a node result too, one of ", elementwise_two_operands,
                                 "layout KILN_LAYOUT_ELEMENTWISE or _OR_PER_CHANNEL, two operands or more", true);
    same &= list_matches_records(text, "or an f32 ", elementwise_or_per_channel,
                                 "layout KILN_LAYOUT_ELEMENTWISE_OR_PER_CHANNEL", true);
    /* The check can fail: a list that names an op without the trait is told apart. */
    char wrong[] = "one of `relu`, `conv` and more";
    assert_false(list_matches_records(wrong, "one of ", elementwise_one_operand, "(self-test)", false));
    free(text);
    assert_true(same);
}

/* The number that stands right before `after` in `text` (the README's "139 ops"), or -1 when the phrase is absent. */
static long number_before(const char *text, const char *before, const char *after)
{
    /* The first place where `before N after` is written: `before` alone may occur elsewhere too. */
    for (const char *p = strstr(text, before); p; p = strstr(p + 1, before)) {
        const char *digits = p + strlen(before);
        char *end;
        long value = strtol(digits, &end, 10);
        if (end != digits && strncmp(end, after, strlen(after)) == 0)
            return value;
    }
    return -1;
}

/* Whether some op of the registry is called `pattern` (which may hold fnmatch's `*`: `reduce_*`). */
static bool some_op_matches(const char *pattern)
{
    for (uint32_t i = 0; i < kiln_op_count(); i++)
        if (fnmatch(pattern, kiln_op_at(i)->name, 0) == 0)
            return true;
    return false;
}

/*
 * Every op name README.md's "Status" paragraph writes in a code span
 * (`where`, `reduce_*`, `global_*_pool`), from "The registry has" to "each
 * with a portable reference", is an op of the registry; @return how many
 * it names, failing the test on one that is not.
 */
static size_t readme_ops_are_registered(const char *text)
{
    const char *start = strstr(text, "The registry has ");
    const char *end = start ? strstr(start, "each with a portable reference") : NULL;
    if (!start || !end)
        fail_msg("README.md's Status no longer says \"The registry has ... each with a portable reference\": "
                 "this test must follow its wording");
    size_t named = 0;
    for (const char *p = strchr(start, '`'); p && p < end; p = strchr(p, '`')) {
        const char *close = strchr(p + 1, '`');
        assert_non_null(close);
        char span[64];
        size_t length = (size_t)(close - p - 1);
        bool op_like = length > 0 && length < sizeof span;
        for (size_t k = 0; op_like && k < length; k++)
            op_like = islower((unsigned char)p[1 + k]) || p[1 + k] == '_' || p[1 + k] == '*';
        if (op_like) {
            memcpy(span, p + 1, length);
            span[length] = '\0';
            if (!some_op_matches(span))
                fail_msg("README.md's Status names `%s`, which is no op of the registry", span);
            named++;
        }
        p = close + 1;
    }
    return named;
}

/*
 * Whether `def` runs a vectorized loop (context path KILN_PATH_VECTOR) on
 * an f32 operand at its default attributes in a session that allows fast
 * paths. Asked of the unary family and softmax, the ops with vector loops
 * (ops/common/vector_math.h); any other op is not run and answers false.
 */
static bool runs_vectorized(const kiln_op_def *def)
{
    bool unary = strcmp(def->name, "softmax") == 0;
    for (uint32_t i = 0; i < kiln_ops_unary.count; i++)
        unary = unary || &kiln_ops_unary.ops[i] == def;
    if (!unary)
        return false;
    int64_t shape[2] = {4, 8};
    kiln_tensor *in = new_tensor(KILN_F32, 2, shape), *out = new_tensor(KILN_F32, 2, shape);
    float *x = in->data;
    for (uint64_t i = 0; i < in->element_count; i++)
        x[i] = (float)i / 8.0f - 2.0f;
    const kiln_tensor *inputs[1] = {in};
    kiln_node_state slot = {NULL, NULL};
    kiln_kernel_context context;
    memset(&context, 0, sizeof context);
    context.threads = 1;
    context.state = &slot;
    kiln_kernel_call call = {inputs, 1, out, NULL, 0, &context};
    kiln_error err;
    bool vectorized = def->run(&call, &err) == KILN_OK && context.path == KILN_PATH_VECTOR;
    if (slot.release)
        slot.release(slot.data);
    kiln_tensor_free(in);
    kiln_tensor_free(out);
    return vectorized;
}

/* spec/opset.md's "vectorized math" row names exactly the ops that run a vector loop. */
static void vector_math_row_matches_the_kernels(void **state)
{
    (void)state;
    char *raw = read_source_file("spec/opset.md");
    char *text = one_line(raw);
    free(raw);
    assert_true(runs_vectorized(kiln_op_find("exp")));
    assert_false(runs_vectorized(kiln_op_find("abs")));
    assert_true(list_matches_records(text, "| vectorized math (`vector-math`) | ", runs_vectorized,
                                     "a vector loop in a session", true));
    free(text);
}

/* README.md's "Status" is the registry's: its op counts (every op, the unary family's) and the ops it names. */
static void readme_status_matches_the_registry(void **state)
{
    (void)state;
    char *raw = read_source_file("README.md");
    char *text = one_line(raw);
    free(raw);
    long ops = number_before(text, "The registry has ", " ops");
    long unary = number_before(text, "arithmetic, ", " unary ops and activations");
    assert_true(readme_ops_are_registered(text) > 10);
    assert_false(some_op_matches("no_such_op*"));
    free(text);
    if (ops < 0 || unary < 0)
        fail_msg("README.md no longer says \"The registry has N ops\" and \"arithmetic, N unary ops and "
                 "activations\": this test must follow its wording");
    if (ops != (long)kiln_op_count())
        fail_msg("README.md says the registry has %ld ops; it has %u", ops, kiln_op_count());
    if (unary != (long)kiln_ops_unary.count)
        fail_msg("README.md says %ld unary ops; the unary family has %u", unary, kiln_ops_unary.count);
}

int main(int argc, char **argv)
{
    source_root = argc > 1 ? argv[1] : ".";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_record_is_whole),
        cmocka_unit_test(traits_agree_with_kernels),
        cmocka_unit_test(planned_ops_declare_their_traits),
        cmocka_unit_test(every_op_is_named_on_its_family_page),
        cmocka_unit_test(channels_last_lists_match_the_traits),
        cmocka_unit_test(readme_status_matches_the_registry),
        cmocka_unit_test(vector_math_row_matches_the_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
