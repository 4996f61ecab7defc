/*
 * test_op_registry.c — every record of the op registry is whole and its
 * traits agree with what planning and the session do with them
 * (ops/op_registry.h): a fast path behind every layout or fusion trait,
 * activations that are one-operand elementwise ops, a spec page naming
 * every op. Planning reads these traits instead of op names, so a record
 * that forgets one is caught here rather than by a slower program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_registry.h"

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

/* Read spec/opset.md and spec/ops/ *.md into one string (caller frees). */
static char *read_specs(void)
{
    static const char *const pages[] = {
        "opset.md",       "ops/binary.md",  "ops/conv.md",     "ops/det.md",       "ops/einsum.md",
        "ops/gather.md",  "ops/generate.md", "ops/grid_sample.md", "ops/linalg.md", "ops/max_unpool.md",
        "ops/norm.md",    "ops/pool.md",    "ops/recurrent.md", "ops/reduce.md",    "ops/resize.md",
        "ops/reverse_sequence.md", "ops/scatter.md", "ops/shape.md", "ops/topk.md", "ops/unary.md",
    };
    size_t used = 0, capacity = 1;
    char *all = malloc(capacity);
    assert_non_null(all);
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/spec/%s", source_root, pages[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            fail_msg("cannot open %s", path);
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
            all = realloc(all, capacity += n);
            assert_non_null(all);
            memcpy(all + used, chunk, n);
            used += n;
        }
        fclose(f);
    }
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

static void every_op_has_a_spec(void **state)
{
    (void)state;
    char *specs = read_specs();
    for (uint32_t i = 0; i < kiln_op_count(); i++) {
        const char *name = kiln_op_at(i)->name;
        if (!spec_names(specs, name))
            fail_msg("op '%s' is named in no page of spec/opset.md or spec/ops/", name);
    }
    /* The check can fail: a name no page uses is not found. */
    assert_false(spec_names(specs, "no_such_op_anywhere"));
    free(specs);
}

int main(int argc, char **argv)
{
    source_root = argc > 1 ? argv[1] : ".";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_record_is_whole),
        cmocka_unit_test(traits_agree_with_kernels),
        cmocka_unit_test(planned_ops_declare_their_traits),
        cmocka_unit_test(every_op_has_a_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
