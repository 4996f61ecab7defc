/* counting_decoder.c — see counting_decoder.h. */
#include "counting_decoder.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>

static void add_method(kiln_builder *b, bool decode)
{
    kiln_error err;
    kiln_value ids, table, rows, all, logits;
    double codes[COUNTING_VOCAB * COUNTING_VOCAB] = {0};
    for (int t = 0; t < COUNTING_VOCAB; t++)
        codes[t * COUNTING_VOCAB + counting_decoder_code(t)] = 1;
    assert_int_equal(kiln_builder_add_dim(b, "past", decode ? 1 : 0, decode ? COUNTING_CAPACITY - 1 : 0, &err),
                     KILN_OK);
    if (decode)
        assert_int_equal(kiln_builder_add_relation(b, "past + 1 <= 16", &err), KILN_OK);
    else
        assert_int_equal(kiln_builder_add_dim(b, "seq", 1, COUNTING_CAPACITY, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_state(b, "cache", KILN_F64, 3,
                                            (int64_t[]){1, COUNTING_CAPACITY, COUNTING_VOCAB}, 1, "past", &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "ids", KILN_I64, decode ? "[1, 1]" : "[1, seq]", &ids, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_weight(b, "table", KILN_WEIGHT_PARAMETER, KILN_F64, 2,
                                             (int64_t[]){COUNTING_VOCAB, COUNTING_VOCAB}, codes, &table, &err),
                     KILN_OK);
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = 0};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "gather", 2, (kiln_value[]){table, ids}, 1, &axis, &rows,
                                                         &err),
                     KILN_OK);
    kiln_attribute state = {.name = "state", .type = KILN_ATTRIBUTE_STRING, .s = "cache"};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "state_append", 1, &rows, 1, &state, &all, &err), KILN_OK);
    kiln_attribute axes = {.name = "axes", .type = KILN_ATTRIBUTE_INTS, .ints = (int64_t[]){1}, .count = 1};
    kiln_attribute keep = {.name = "keepdims", .type = KILN_ATTRIBUTE_INT, .i = 1};
    assert_int_equal(kiln_builder_add_op_with_attributes(b, "reduce_sum", 1, &all, 2, (kiln_attribute[]){axes, keep},
                                                         &logits, &err),
                     KILN_OK);
    if (decode) {
        kiln_value position, as_f64;
        assert_int_equal(kiln_builder_add_input(b, "position", KILN_I64, "[1]", &position, &err), KILN_OK);
        kiln_attribute to = {.name = "to", .type = KILN_ATTRIBUTE_STRING, .s = "f64"};
        assert_int_equal(kiln_builder_add_op_with_attributes(b, "cast", 1, &position, 1, &to, &as_f64, &err), KILN_OK);
        assert_int_equal(kiln_builder_add_op(b, "add", 2, (kiln_value[]){logits, as_f64}, &logits, &err), KILN_OK);
    }
    assert_int_equal(kiln_builder_add_output(b, "logits", logits, &err), KILN_OK);
}

kiln_builder *counting_decoder_builder(void)
{
    kiln_builder *prefill = NULL, *decode = NULL;
    kiln_error err;
    assert_int_equal(kiln_builder_new("counter", &prefill, &err), KILN_OK);
    assert_int_equal(kiln_builder_set_method_name(prefill, "prefill", &err), KILN_OK);
    add_method(prefill, false);
    assert_int_equal(kiln_builder_new("decode", &decode, &err), KILN_OK);
    add_method(decode, true);
    assert_int_equal(kiln_builder_add_method(prefill, "decode", decode, &err), KILN_OK);
    return prefill;
}

int64_t counting_decoder_code(int64_t token)
{
    return (3 * token + 1) % COUNTING_VOCAB;
}

int64_t counting_decoder_next(const int64_t *sequence, uint32_t length, double *count)
{
    double counts[COUNTING_VOCAB] = {0};
    for (uint32_t i = 0; i < length; i++)
        counts[counting_decoder_code(sequence[i])] += 1;
    int64_t best = 0;
    for (int64_t v = 1; v < COUNTING_VOCAB; v++)
        if (counts[v] > counts[best])
            best = v;
    if (count)
        *count = counts[best];
    return best;
}
