/*
 * test_state_view.c — a state op's rows read where the state keeps them
 * (lib/runtime/state_view.h): an einsum reads the rows of a multi-block
 * state (heads apart by the capacity) through their strides, equal to the
 * products computed by hand, on the fast path and the reference kernels;
 * the rows are packed only for a reader that needs them packed (once, for
 * however many such readers) and for an output.
 *
 * The program: state `cache` f32[1, HEADS, CAPACITY, WIDTH] growing along
 * axis 2 (an attention cache: the heads are CAPACITY rows apart), a method
 * appending x: f32[1, HEADS, 1, WIDTH] and computing, per head h and cached
 * row n, scores[h, n] = q[h] . cache[h, n] and context[h] = sum over n of
 * scores[h, n] cache[h, n].
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "prng.h"
#include "state_view.h"

#define HEADS 2
#define CAPACITY 6
#define WIDTH 3

/* What else reads the rows: nothing, a neg node (twice: one packing), or the program's outputs. */
typedef enum other_reader { NO_OTHER, NEG_TWICE, AS_OUTPUT } other_reader;

static kiln_program *load_attention(other_reader other)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, q, rows, scores, context;
    assert_int_equal(kiln_builder_new("attention", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "past", 0, CAPACITY - 1, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_relation(b, "past + 1 <= 6", &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F32, 4, (int64_t[]){1, HEADS, CAPACITY, WIDTH}, 2,
                                            "past", &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "x", KILN_F32, "[1, 2, 1, 3]", &x, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "q", KILN_F32, "[1, 2, 1, 3]", &q, &err), KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &x, 1, &state, &rows, &err), KILN_OK);
    kiln_attribute qk = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = "abmk,abnk->abmn"};
    kiln_attribute sv = {.name = "equation", .type = KILN_ATTRIBUTE_STRING, .s = "abmn,abnk->abmk"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "einsum", 2, (kiln_value[]){q, rows}, 1, &qk, &scores,
                                                         &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "einsum", 2, (kiln_value[]){scores, rows}, 1, &sv,
                                                         &context, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "scores", scores, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "context", context, &err), KILN_OK);
    if (other == NEG_TWICE) {
        kiln_value a, c;
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &rows, &a, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "neg", 1, &rows, &c, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){a, c}, &a, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_output(b, "minus_twice", a, &err), KILN_OK);
    } else if (other == AS_OUTPUT) {
        assert_int_equal(kiln_builder_add_output(b, "rows", rows, &err), KILN_OK);
    }
    void *bytes;
    size_t size;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    kiln_builder_free(b);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    return program;
}

static prng rng = {0x5eed5eedu};

static kiln_tensor *random_rows(void)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, 4, (int64_t[]){1, HEADS, 1, WIDTH}, &t, &err), KILN_OK);
    float *v = kiln_tensor_data(t);
    for (int i = 0; i < HEADS * WIDTH; i++)
        v[i] = (float)((double)prng_below(&rng, 2001) / 1000.0 - 1.0); /* [-1, 1] in steps of 1/1000 */
    return t;
}

static const float *output(const kiln_session *s, const char *name)
{
    for (uint32_t o = 0; o < kiln_session_output_count(s); o++)
        if (strcmp(kiln_session_output_name(s, o), name) == 0)
            return kiln_tensor_const_data(kiln_session_output(s, o));
    fail_msg("no output '%s'", name);
    return NULL;
}

/* Run CAPACITY steps on the fast path and the reference kernels, checking every output by hand. */
static void check_steps(other_reader other, uint64_t packs_per_run)
{
    kiln_program *program = load_attention(other);
    float cache[HEADS][CAPACITY][WIDTH];
    for (int reference = 0; reference < 2; reference++) {
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.reference_kernels = reference;
        kiln_session *s;
        kiln_error err;
        assert_int_equal(kiln_session_new(program, &options, &s, &err), KILN_OK);
        for (int64_t past = 0; past < CAPACITY; past++) {
            kiln_tensor *x = random_rows(), *q = random_rows();
            const float *xv = kiln_tensor_const_data(x), *qv = kiln_tensor_const_data(q);
            for (int h = 0; h < HEADS; h++)
                memcpy(cache[h][past], xv + h * WIDTH, sizeof cache[h][past]);
            assert_int_equal(kiln_session_set_input(s, "x", x, &err), KILN_OK);
            assert_int_equal(kiln_session_set_input(s, "q", q, &err), KILN_OK);
            uint64_t before = kiln_state_view_packs();
            if (kiln_session_run(s, &err) != KILN_OK)
                fail_msg("step %lld: %s", (long long)past, err.message);
            assert_int_equal(kiln_state_view_packs() - before, packs_per_run);
            const float *scores = output(s, "scores"), *context = output(s, "context");
            for (int h = 0; h < HEADS; h++) {
                double sum[WIDTH] = {0};
                for (int64_t n = 0; n <= past; n++) {
                    double dot = 0;
                    for (int k = 0; k < WIDTH; k++)
                        dot += (double)qv[h * WIDTH + k] * cache[h][n][k];
                    assert_true(fabs(scores[h * (past + 1) + n] - dot) <= 1e-5);
                    for (int k = 0; k < WIDTH; k++)
                        sum[k] += (double)scores[h * (past + 1) + n] * cache[h][n][k];
                }
                for (int k = 0; k < WIDTH; k++)
                    assert_true(fabs(context[h * WIDTH + k] - sum[k]) <= 1e-5);
            }
            /* The packed rows, where a reader needed them: the cache, head by head, row by row. */
            if (other != NO_OTHER) {
                const float *rows = output(s, other == AS_OUTPUT ? "rows" : "minus_twice");
                float sign = other == AS_OUTPUT ? 1.0f : -2.0f;
                for (int h = 0; h < HEADS; h++)
                    for (int64_t n = 0; n <= past; n++)
                        for (int k = 0; k < WIDTH; k++)
                            assert_true(rows[(h * (past + 1) + n) * WIDTH + k] == sign * cache[h][n][k]);
            }
            kiln_tensor_free(x);
            kiln_tensor_free(q);
        }
        kiln_session_free(s);
    }
    kiln_program_free(program);
}

static void an_einsum_reads_the_rows_in_the_state(void **unused)
{
    (void)unused;
    check_steps(NO_OTHER, 0);
}

static void other_readers_get_the_rows_packed_once(void **unused)
{
    (void)unused;
    check_steps(NEG_TWICE, 1);
}

static void an_output_of_the_rows_is_packed(void **unused)
{
    (void)unused;
    check_steps(AS_OUTPUT, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_einsum_reads_the_rows_in_the_state),
        cmocka_unit_test(other_readers_get_the_rows_packed_once),
        cmocka_unit_test(an_output_of_the_rows_is_packed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
