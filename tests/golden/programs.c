/* programs.c — the golden programs (see programs.h). */
#include "programs.h"

#include <stdio.h>
#include <stdlib.h>

static kiln_error err;

/* These builders take fixed, valid arguments: a failure is a bug in kiln. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        if ((call) != KILN_OK) {                                                       \
            fprintf(stderr, "golden programs: %s failed: %s\n", #call, err.message);   \
            abort();                                                                   \
        }                                                                              \
    } while (0)

kiln_builder *golden_scale(void)
{
    kiln_builder *b;
    kiln_value x, two, one, doubled, y;
    CHECK(kiln_builder_new("scale", &b, &err));
    CHECK(kiln_builder_set_metadata(b, "producer", "kiln examples/scale.c", &err));
    CHECK(kiln_builder_add_dim(b, "batch", 2, 4, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err));
    CHECK(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err));
    CHECK(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err));
    CHECK(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err));
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    return b;
}

kiln_builder *golden_weights(void)
{
    kiln_builder *b;
    kiln_value x, k, w, bias, counts, t0, t1, t2;
    const float w_data[6] = {1, -2, 3.5f, -4, 5, 0.25f};
    const float bias_data[3] = {0.5f, 1.5f, -2.5f};
    const int64_t counts_data[4] = {-3, -1, 0, 7};
    CHECK(kiln_builder_new("weights", &b, &err));
    CHECK(kiln_builder_set_metadata(b, "producer", "tests/golden/make_golden.c", &err));
    CHECK(kiln_builder_set_metadata(b, "description", "weights of several dtypes and kinds", &err));
    CHECK(kiln_builder_add_dim(b, "batch", 1, 8, &err));
    CHECK(kiln_builder_add_dim(b, "n", 2, 16, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 2, 3]", &x, &err));
    CHECK(kiln_builder_add_input(b, "k", KILN_I64, "[n, 2*n + 1]", &k, &err));
    CHECK(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){2, 3}, w_data, &w, &err));
    CHECK(kiln_builder_add_weight(b, "bias", KILN_WEIGHT_BUFFER, KILN_F32, 1, (int64_t[]){3}, bias_data, &bias,
                                  &err));
    CHECK(kiln_builder_add_weight(b, "counts", KILN_WEIGHT_CONSTANT, KILN_I64, 1, (int64_t[]){4}, counts_data,
                                  &counts, &err));
    CHECK(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, w}, &t0, &err));
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){t0, bias}, &t1, &err));
    CHECK(kiln_builder_add_op(b, "neg", 1, &k, &t2, &err));
    CHECK(kiln_builder_add_output(b, "y", t1, &err));
    CHECK(kiln_builder_add_output(b, "minus_k", t2, &err));
    return b;
}

kiln_builder *golden_compressed(void)
{
    kiln_builder *b;
    kiln_value x, w, y;
    float ramp[4096];
    for (int i = 0; i < 4096; i++)
        ramp[i] = (float)(i % 64) * 0.5f;
    CHECK(kiln_builder_new("compressed", &b, &err));
    CHECK(kiln_builder_add_dim(b, "batch", 1, 4, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 4096]", &x, &err));
    CHECK(kiln_builder_add_weight(b, "ramp", KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){4096}, ramp, &w, &err));
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){x, w}, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    return b;
}

static kiln_tensor *filled(int64_t rows, double value)
{
    kiln_tensor *t;
    CHECK(kiln_tensor_new(KILN_F64, 2, (int64_t[]){rows, 2}, &t, &err));
    for (int64_t i = 0; i < rows * 2; i++)
        ((double *)kiln_tensor_data(t))[i] = value;
    return t;
}

void golden_add_scale_evidence(kiln_builder *b)
{
    kiln_tensor *x = filled(3, 1.0), *y = filled(3, 3.0);
    kiln_compare_rule rule = {KILN_COMPARE_TOLERANCE, 1e-12, 1e-12, true};
    CHECK(kiln_builder_add_evidence(b, "ones", 1, (const char *[]){"x"}, (const kiln_tensor *[]){x}, 1,
                                    (const char *[]){"y"}, (const kiln_tensor *[]){y}, &rule, &err));
    kiln_tensor_free(x);
    kiln_tensor_free(y);
}


kiln_builder *golden_guarded(void)
{
    kiln_builder *b;
    kiln_value a, w, y;
    float w_data[20];
    for (int i = 0; i < 20; i++)
        w_data[i] = (float)(i % 7) - 3.0f;
    CHECK(kiln_builder_new("guarded", &b, &err));
    CHECK(kiln_builder_set_metadata(b, "producer", "tests/golden/make_golden.c", &err));
    CHECK(kiln_builder_set_strict(b, false, &err));
    CHECK(kiln_builder_add_dim(b, "k", 2, 8, &err));
    CHECK(kiln_builder_add_input(b, "a", KILN_F32, "[3, k]", &a, &err));
    CHECK(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){4, 5}, w_data, &w, &err));
    CHECK(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){a, w}, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    return b;
}
