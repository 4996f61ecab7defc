/*
 * test_result_groups.c — nodes that compute their results together
 * (plan/result_groups.h): top_k and top_k_indices of the same x with the
 * same attributes run as one selection, giving the bits the two nodes
 * give alone; nodes of different operands or attributes, a repeated op,
 * and a dead member are not grouped; the memory plan keeps a group's
 * results apart from the first node's operands.
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

#include "program_recipe.h"

#include "program.h"
#include "result_groups.h"
#include "session.h"

/* x: f32[4, 9] -> relu -> the listed top_k ops (k = 3 along axis 1, or `second_k` for the last). */
static kiln_program *topk_program(const char *const *ops, uint32_t count, int64_t second_k, bool read_all)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, h, y[4];
    assert_int_equal(kiln_builder_new("topk", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[4, 9]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "relu", 1, &x, &h, &err), KILN_OK);
    for (uint32_t i = 0; i < count; i++) {
        kiln_attribute attributes[] = {
            {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 1},
            {.name = "k", .type = KILN_ATTRIBUTE_INT, .i = i + 1 == count ? second_k : 3},
        };
        assert_int_equal(kiln_builder_add_op_with_attributes(b, ops[i], 1, &h, 2, attributes, &y[i], &err), KILN_OK);
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!read_all && i == count - 1)
            break; /* the last result nobody reads: a dead node */
        char name[16];
        snprintf(name, sizeof name, "y%u", i);
        assert_int_equal(kiln_builder_add_output(b, name, y[i], &err), KILN_OK);
    }
    return recipe_seal(b);
}

static kiln_tensor *input(void)
{
    kiln_tensor *x;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 2, (int64_t[]){4, 9}, &x, &err), KILN_OK);
    float *v = kiln_tensor_data(x);
    for (int i = 0; i < 36; i++)
        v[i] = (float)((i * 7919) % 23) - 6.0f; /* ties and negatives (relu makes zeros) */
    return x;
}

/* Run p on x; copy output `o` into out (bytes), return the session's grouped runs. */
static uint64_t run_copy(const kiln_program *p, const kiln_tensor *x, uint32_t outputs, void **out)
{
    kiln_session *s;
    kiln_error err;
    assert_int_equal(kiln_session_new(p, NULL, &s, &err), KILN_OK);
    assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
    for (int round = 0; round < 2; round++)
        if (kiln_session_run(s, &err) != KILN_OK)
            fail_msg("run: %s", err.message);
    for (uint32_t o = 0; o < outputs; o++) {
        const kiln_tensor *t = kiln_session_output(s, o);
        size_t bytes = (size_t)kiln_tensor_byte_size(t);
        out[o] = malloc(bytes + 1);
        memcpy(out[o], kiln_tensor_const_data(t), bytes);
    }
    uint64_t grouped = kiln_session_grouped_runs(s);
    kiln_session_free(s);
    return grouped;
}

static void values_and_indices_select_once(void **state)
{
    (void)state;
    kiln_tensor *x = input();
    kiln_program *both = topk_program((const char *[]){"top_k", "top_k_indices"}, 2, 3, true);
    assert_int_equal(both->nodes[1].result_group, 2);
    assert_int_equal(both->nodes[2].result_group, 0);
    void *together[2], *values[1], *indices[1];
    assert_int_equal(run_copy(both, x, 2, together), 2); /* two runs, one selection each */
    kiln_program *only_values = topk_program((const char *[]){"top_k"}, 1, 3, true);
    kiln_program *only_indices = topk_program((const char *[]){"top_k_indices"}, 1, 3, true);
    assert_int_equal(run_copy(only_values, x, 1, values), 0);
    assert_int_equal(run_copy(only_indices, x, 1, indices), 0);
    assert_memory_equal(together[0], values[0], 4 * 3 * sizeof(float));
    assert_memory_equal(together[1], indices[0], 4 * 3 * sizeof(int64_t));
    /* Indices first, values second: the same group. */
    kiln_program *swapped = topk_program((const char *[]){"top_k_indices", "top_k"}, 2, 3, true);
    void *swapped_out[2];
    assert_int_equal(run_copy(swapped, x, 2, swapped_out), 2);
    assert_memory_equal(swapped_out[0], indices[0], 4 * 3 * sizeof(int64_t));
    assert_memory_equal(swapped_out[1], values[0], 4 * 3 * sizeof(float));
    for (int i = 0; i < 2; i++)
        free(together[i]), free(swapped_out[i]);
    free(values[0]), free(indices[0]);
    kiln_program_free(both), kiln_program_free(only_values), kiln_program_free(only_indices);
    kiln_program_free(swapped);
    kiln_tensor_free(x);
}

static void kin_only_are_grouped(void **state)
{
    (void)state;
    /* Other attributes (k = 2 for the indices): two selections. */
    kiln_program *other_k = topk_program((const char *[]){"top_k", "top_k_indices"}, 2, 2, true);
    assert_int_equal(other_k->nodes[1].result_group, 1);
    assert_int_equal(other_k->nodes[2].result_group, 1);
    /* The same op twice: copies, not kin. */
    kiln_program *twice = topk_program((const char *[]){"top_k", "top_k"}, 2, 3, true);
    assert_int_equal(twice->nodes[1].result_group, 1);
    /* A member nobody reads is not run, so not grouped. */
    kiln_program *dead = topk_program((const char *[]){"top_k", "top_k_indices"}, 2, 3, false);
    assert_false(dead->live[2]);
    assert_int_equal(dead->nodes[1].result_group, 1);
    kiln_program_free(other_k), kiln_program_free(twice), kiln_program_free(dead);
}

static void the_plan_keeps_a_group_apart(void **state)
{
    (void)state;
    kiln_program *p = topk_program((const char *[]){"top_k", "top_k_indices"}, 2, 3, true);
    const kiln_model *m = &p->model;
    assert_true(kiln_result_group_plan_allows(m, 1, 2, p->arena_offsets, p->slot_sizes));
    /* A plan putting the indices over relu's result (node 0, read by node 1) is refused. */
    uint64_t offsets[3] = {p->arena_offsets[0], p->arena_offsets[1], p->arena_offsets[0]};
    assert_false(kiln_result_group_plan_allows(m, 1, 2, offsets, p->slot_sizes));
    /* ... and so is one putting it over the values. */
    uint64_t over_values[3] = {p->arena_offsets[0], p->arena_offsets[1], p->arena_offsets[1]};
    assert_false(kiln_result_group_plan_allows(m, 1, 2, over_values, p->slot_sizes));
    kiln_program_free(p);
}

/* x [seq 5, batch 2, input 3] -> the listed ops of `cell` (hidden 4), every result an output. */
static kiln_program *recurrent_program(const char *const *ops, uint32_t count, uint32_t gates)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value in[3], y[3];
    char w_shape[32], r_shape[32];
    snprintf(w_shape, sizeof w_shape, "[1, %u, 3]", 4 * gates);
    snprintf(r_shape, sizeof r_shape, "[1, %u, 4]", 4 * gates);
    assert_int_equal(kiln_builder_new("recurrent", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[5, 2, 3]", &in[0], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "w", KILN_F32, w_shape, &in[1], &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "r", KILN_F32, r_shape, &in[2], &err), KILN_OK);
    kiln_attribute hidden = {.name = "hidden_size", .type = KILN_ATTRIBUTE_INT, .i = 4};
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(kiln_builder_add_op_with_attributes(b, ops[i], 3, in, 1, &hidden, &y[i], &err), KILN_OK);
    for (uint32_t i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "y%u", i);
        assert_int_equal(kiln_builder_add_output(b, name, y[i], &err), KILN_OK);
    }
    return recipe_seal(b);
}

static kiln_tensor *filled(uint32_t rank, const int64_t *shape, uint32_t seed)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, rank, shape, &t, &err), KILN_OK);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        ((float *)kiln_tensor_data(t))[i] = (float)((i * 37 + seed * 11) % 19) / 19.0f - 0.5f;
    return t;
}

/* The outputs of `p` (copied), run in a session (reference kernels or not); @return its grouped runs. */
static uint64_t run_recurrent(const kiln_program *p, bool reference, kiln_tensor *const *in, uint32_t outputs,
                              void **out, size_t *sizes)
{
    kiln_session_options options;
    kiln_session *s;
    kiln_error err;
    kiln_session_options_default(&options);
    options.reference_kernels = reference;
    assert_int_equal(kiln_session_new(p, &options, &s, &err), KILN_OK);
    static const char *const names[] = {"x", "w", "r"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(kiln_session_set_input(s, names[i], in[i], &err), KILN_OK);
    if (kiln_session_run(s, &err) != KILN_OK)
        fail_msg("run: %s", err.message);
    for (uint32_t o = 0; o < outputs; o++) {
        const kiln_tensor *t = kiln_session_output(s, o);
        sizes[o] = (size_t)kiln_tensor_byte_size(t);
        out[o] = malloc(sizes[o] + 1);
        memcpy(out[o], kiln_tensor_const_data(t), sizes[o]);
    }
    uint64_t grouped = kiln_session_grouped_runs(s);
    kiln_session_free(s);
    return grouped;
}

/* An LSTM's sequence and last states, a GRU's sequence and last hidden state: one recurrence, the bits of each alone. */
static void recurrent_results_come_from_one_recurrence(void **state)
{
    (void)state;
    static const struct {
        uint32_t gates, count;
        const char *ops[3];
    } cells[] = {{4, 3, {"lstm", "lstm_last_hidden", "lstm_last_cell"}},
                 {4, 2, {"lstm_last_hidden", "lstm_last_cell"}},
                 {3, 2, {"gru", "gru_last_hidden"}},
                 {1, 2, {"rnn", "rnn_last_hidden"}}};
    for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
        uint32_t g = cells[c].gates;
        kiln_tensor *in[3] = {filled(3, (int64_t[]){5, 2, 3}, 1), filled(3, (int64_t[]){1, 4 * g, 3}, 2),
                              filled(3, (int64_t[]){1, 4 * g, 4}, 3)};
        kiln_program *group = recurrent_program(cells[c].ops, cells[c].count, g);
        assert_int_equal(group->nodes[0].result_group, cells[c].count);
        for (int reference = 0; reference < 2; reference++) {
            void *together[3];
            size_t sizes[3];
            assert_int_equal(run_recurrent(group, reference, in, cells[c].count, together, sizes), 1);
            for (uint32_t i = 0; i < cells[c].count; i++) {
                kiln_program *alone = recurrent_program(&cells[c].ops[i], 1, g);
                void *single[1];
                size_t single_size[1];
                assert_int_equal(run_recurrent(alone, reference, in, 1, single, single_size), 0);
                assert_int_equal(single_size[0], sizes[i]);
                if (memcmp(single[0], together[i], sizes[i]) != 0)
                    fail_msg("%s (%s kernels): grouped result differs from the node alone", cells[c].ops[i],
                             reference ? "reference" : "fast");
                free(single[0]);
                kiln_program_free(alone);
                free(together[i]);
            }
        }
        kiln_program_free(group);
        for (int i = 0; i < 3; i++)
            kiln_tensor_free(in[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_and_indices_select_once),
        cmocka_unit_test(kin_only_are_grouped),
        cmocka_unit_test(the_plan_keeps_a_group_apart),
        cmocka_unit_test(recurrent_results_come_from_one_recurrence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
