/*
 * test_onnx_ops.c — mappings of tools/onnx/onnx_ops.c and onnx_map_loss.c
 * on models built here: the two losses against a naive reference written
 * here (index-walking loops, long double, every reduction, with and
 * without weights, an ignore_index inside and outside the class range,
 * an infinity under an ignored entry, a mean over nothing), and the
 * refusals of constructs that would otherwise compute something else than
 * ONNX: each checked by status and by the words of its reason.
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

#include "onnx_builder.h"
#include "onnx_import.h"
#include "onnx_model.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static int release_arena(void **state)
{
    (void)state;
    onnx_arena_release();
    return 0;
}

/* Pack, decode and import `model`; the decoded model is freed here. */
static kiln_status import_with(const Onnx__ModelProto *model, const kiln_onnx_options *options,
                               kiln_onnx_result *result, kiln_error *err);

static kiln_status import(const Onnx__ModelProto *model, kiln_onnx_result *result, kiln_error *err)
{
    return import_with(model, NULL, result, err);
}

static kiln_status import_with(const Onnx__ModelProto *model, const kiln_onnx_options *options,
                               kiln_onnx_result *result, kiln_error *err)
{
    size_t size;
    uint8_t *bytes = onnx_pack(model, &size);
    Onnx__ModelProto *decoded;
    kiln_status status = onnx_model_decode(bytes, size, NULL, &decoded, err);
    if (status != KILN_OK) {
        memset(result, 0, sizeof *result);
        return status;
    }
    status = onnx_import_model(decoded, "test", options, result, err);
    onnx__model_proto__free_unpacked(decoded, NULL);
    return status;
}

/* Import `model`, which must be refused as unsupported with `words` in the reason. */
static void expect_refusal(const Onnx__ModelProto *model, const char *words)
{
    kiln_onnx_result result;
    kiln_error err;
    kiln_status status = import(model, &result, &err);
    if (status != KILN_ERR_UNSUPPORTED_OP || !strstr(err.message, words))
        fail_msg("expected a refusal containing \"%s\", got status %d: %s", words, (int)status, err.message);
    onnx_result_release(&result);
}

static kiln_program *load(const kiln_onnx_result *result)
{
    void *bytes;
    size_t size;
    kiln_program *program = NULL;
    kiln_error err;
    assert_int_equal(kiln_builder_encode(result->builder, NULL, &bytes, &size, &err), KILN_OK);
    kiln_status status = kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err);
    free(bytes);
    if (status != KILN_OK)
        fail_msg("%s", err.message);
    return program;
}

static kiln_tensor *tensor_of(kiln_dtype dtype, uint32_t rank, const int64_t *dims, const void *data, size_t bytes)
{
    kiln_tensor *t;
    assert_int_equal(kiln_tensor_new(dtype, rank, dims, &t, NULL), KILN_OK);
    assert_int_equal(kiln_tensor_byte_size(t), bytes);
    if (bytes > 0) /* an empty tensor's data may be NULL, which memcpy may not be given */
        memcpy(kiln_tensor_data(t), data, bytes);
    return t;
}

/* NaN matches NaN, an infinity itself, anything else within a relative 1e-6. */
static void expect_close(float got, long double want, const char *what, int index)
{
    if (isnan(want) ? isnan(got) : fabsl(got - want) <= 1e-6L * fabsl(want) + 1e-9L)
        return;
    fail_msg("%s[%d] = %.9g, reference %.9Lg", what, index, got, want);
}

/* ------------------------------------------------------------ the losses */

enum { N = 2, C = 3, D = 4 };

/* One configuration of a loss node. */
typedef struct loss_case {
    const char *reduction; /* NULL: the default (mean) */
    bool weighted;
    bool has_ignore;
    int64_t ignore_index;
    bool softmax; /* SoftmaxCrossEntropyLoss (with its log_prob output), else NegativeLogLikelihoodLoss */
} loss_case;

static const float class_weight[C] = {0.5f, 2.0f, 1.25f};

/*
 * The reference, written from the ONNX operator documentation: walk every
 * (n, d), skip ignored entries (they add 0 to the loss and to the
 * weights), sum in long double.
 */
static void reference_loss(const loss_case *c, const float *x, const int64_t *target, long double *loss,
                           long double *log_prob, long double *reduced)
{
    long double total = 0, weights = 0;
    for (int n = 0; n < N; n++) {
        for (int d = 0; d < D; d++) {
            long double row_max = -INFINITY, row_sum = 0;
            for (int k = 0; k < C; k++)
                if (x[(n * C + k) * D + d] > row_max)
                    row_max = x[(n * C + k) * D + d];
            for (int k = 0; k < C; k++)
                row_sum += expl((long double)x[(n * C + k) * D + d] - row_max);
            for (int k = 0; k < C; k++) {
                long double v = x[(n * C + k) * D + d];
                log_prob[(n * C + k) * D + d] = c->softmax ? v - row_max - logl(row_sum) : v;
            }
            int64_t t = target[n * D + d];
            long double entry = 0, w = 0;
            if (!(c->has_ignore && t == c->ignore_index)) {
                w = c->weighted ? class_weight[t] : 1.0L;
                entry = -log_prob[(n * C + t) * D + d] * w;
            }
            loss[n * D + d] = entry;
            total += entry;
            weights += w;
        }
    }
    const char *r = c->reduction ? c->reduction : "mean";
    if (strcmp(r, "sum") == 0)
        *reduced = total;
    else if (c->weighted || c->has_ignore)
        *reduced = total / weights; /* every entry ignored: 0/0, NaN */
    else
        *reduced = total / (N * D);
}

static Onnx__ModelProto *loss_model(const loss_case *c)
{
    Onnx__AttributeProto *attributes[3] = {NULL, NULL, NULL};
    size_t a = 0;
    if (c->reduction)
        attributes[a++] = onnx_attr_string("reduction", c->reduction);
    if (c->has_ignore)
        attributes[a++] = onnx_attr_int("ignore_index", c->ignore_index);
    const int64_t weight_dims[] = {C};
    Onnx__TensorProto *weight = onnx_tensor_f32("w", 1, weight_dims, class_weight, 1);
    const char *const *inputs = c->weighted ? L("x", "t", "w") : L("x", "t");
    const char *const *outputs = c->softmax ? L("loss", "log_prob") : L("loss");
    Onnx__ValueInfoProto *graph_outputs[3] = {onnx_value("loss", F32, 0, NULL),
                                              c->softmax ? onnx_value("log_prob", F32, 0, NULL) : NULL, NULL};
    return onnx_model(
        8, 13,
        (Onnx__NodeProto *[]){onnx_node(c->softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", "loss",
                                        inputs, outputs, attributes),
                              NULL},
        (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("2", "3", "4")), onnx_value("t", I64, 2, L("2", "4")),
                                   NULL},
        graph_outputs, c->weighted ? (Onnx__TensorProto *[]){weight, NULL} : NULL);
}

static void run_loss_case(const loss_case *c, const float *x, const int64_t *target)
{
    kiln_onnx_result result;
    kiln_error err;
    if (import(loss_model(c), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    const int64_t x_dims[] = {N, C, D}, t_dims[] = {N, D};
    kiln_tensor *xt = tensor_of(KILN_F32, 3, x_dims, x, N * C * D * sizeof(float));
    kiln_tensor *tt = tensor_of(KILN_I64, 2, t_dims, target, N * D * sizeof(int64_t));
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "t", tt, NULL), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);

    long double loss[N * D], log_prob[N * C * D], reduced;
    reference_loss(c, x, target, loss, log_prob, &reduced);
    const kiln_tensor *y = kiln_session_output(session, 0);
    const float *got = kiln_tensor_const_data(y);
    if (c->reduction && strcmp(c->reduction, "none") == 0) {
        assert_int_equal(kiln_tensor_rank(y), 2);
        for (int i = 0; i < N * D; i++)
            expect_close(got[i], loss[i], "loss", i);
    } else {
        assert_int_equal(kiln_tensor_rank(y), 0);
        expect_close(got[0], reduced, "loss", 0);
    }
    if (c->softmax) {
        const float *lp = kiln_tensor_const_data(kiln_session_output(session, 1));
        for (int i = 0; i < N * C * D; i++)
            expect_close(lp[i], log_prob[i], "log_prob", i);
    }
    kiln_session_free(session);
    kiln_tensor_free(xt);
    kiln_tensor_free(tt);
    kiln_program_free(program);
    onnx_result_release(&result);
}

/*
 * Every reduction, with and without weights, without ignore_index, with
 * one inside the class range (1) and with one outside it (-5: the entries
 * holding it would index out of range if they were read). x[n, 0, d] is
 * +inf where the target is ignored, so an ignored entry that leaked into
 * the sum (as inf * 0 = NaN) would show.
 */
static void losses_match_a_naive_reference(void **state)
{
    (void)state;
    float x[N * C * D];
    for (int i = 0; i < N * C * D; i++)
        x[i] = (float)((i * 37) % 11) / 4.0f - 1.3f;
    static const char *const reductions[] = {NULL, "none", "sum", "mean"};
    static const struct {
        bool has_ignore;
        int64_t ignore_index;
    } ignores[] = {{false, 0}, {true, 1}, {true, -5}};
    for (int softmax = 0; softmax < 2; softmax++)
        for (size_t r = 0; r < 4; r++)
            for (int weighted = 0; weighted < 2; weighted++)
                for (size_t i = 0; i < 3; i++) {
                    int64_t target[N * D] = {0, 2, 1, 2, 1, 0, 2, 1};
                    float with_inf[N * C * D];
                    memcpy(with_inf, x, sizeof x);
                    if (ignores[i].has_ignore) {
                        target[3] = target[6] = ignores[i].ignore_index;
                        with_inf[(0 * C + 0) * D + 3] = INFINITY;
                        with_inf[(1 * C + 0) * D + 2] = INFINITY;
                    }
                    loss_case c = {reductions[r], weighted, ignores[i].has_ignore, ignores[i].ignore_index,
                                   softmax};
                    /* With the softmax an infinite score makes every log-probability of its row NaN or -inf. */
                    run_loss_case(&c, softmax ? x : with_inf, target);
                }
}

/* A mean over entries that are all ignored is 0/0: NaN, as ONNX defines it. */
static void mean_over_nothing_is_nan(void **state)
{
    (void)state;
    float x[N * C * D];
    for (int i = 0; i < N * C * D; i++)
        x[i] = (float)i / 8.0f;
    int64_t target[N * D];
    for (int i = 0; i < N * D; i++)
        target[i] = 7;
    for (int weighted = 0; weighted < 2; weighted++) {
        loss_case c = {"mean", weighted, true, 7, false};
        run_loss_case(&c, x, target);
    }
}

/* ------------------------------------------------------------ refusals */

static Onnx__ModelProto *one_node(int64_t opset, Onnx__NodeProto *node, Onnx__ValueInfoProto *const *inputs,
                                  Onnx__TensorProto *const *initializers)
{
    return onnx_model(8, opset, (Onnx__NodeProto *[]){node, NULL}, inputs,
                      (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, initializers);
}

static void constructs_kiln_cannot_match_are_refused(void **state)
{
    (void)state;
    Onnx__ValueInfoProto *image[] = {onnx_value("x", F32, 4, L("1", "1", "4", "4")), NULL};
    const int64_t two[] = {2, 2};

    /* MaxPool's indices output, when the graph reads it; unread, it is not needed. */
    expect_refusal(onnx_model(8, 12,
                              (Onnx__NodeProto *[]){onnx_node("MaxPool", "p", L("x"), L("y", "indices"),
                                                              (Onnx__AttributeProto *[]){
                                                                  onnx_attr_ints("kernel_shape", 2, two), NULL}),
                                                    NULL},
                              image,
                              (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL),
                                                         onnx_value("indices", I64, 0, NULL),
                                                         NULL},
                              NULL),
                   "output 1 ('indices', the indices of the maxima) is not supported");
    kiln_onnx_result unread;
    kiln_error unread_err;
    if (import(one_node(12,
                        onnx_node("MaxPool", "p", L("x"), L("y", "indices"),
                                  (Onnx__AttributeProto *[]){onnx_attr_ints("kernel_shape", 2, two), NULL}),
                        image, NULL),
               &unread, &unread_err) != KILN_OK)
        fail_msg("%s", unread_err.message);
    onnx_result_release(&unread);

    /* Resize-10 and Upsample define no coordinate transformation for linear. */
    const int64_t four[] = {4};
    Onnx__TensorProto *scales = onnx_tensor_f32("scales", 1, four, (const float[]){1, 1, 2, 2}, 1);
    expect_refusal(one_node(10,
                            onnx_node("Resize", "r", L("x", "scales"), L("y"),
                                      (Onnx__AttributeProto *[]){onnx_attr_string("mode", "linear"), NULL}),
                            image, (Onnx__TensorProto *[]){scales, NULL}),
                   "mode \"linear\" at opset 10: only nearest is supported there");
    expect_refusal(one_node(13,
                            onnx_node("Resize", "r", L("x", "", "scales"), L("y"),
                                      (Onnx__AttributeProto *[]){
                                          onnx_attr_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                                          NULL}),
                            image, (Onnx__TensorProto *[]){scales, NULL}),
                   "tf_crop_and_resize (a region of interest) is not supported");
    /* Scales computed at run time cannot become an attribute. */
    Onnx__ValueInfoProto *image_and_scales[] = {image[0], onnx_value("s", F32, 1, L("4")), NULL};
    expect_refusal(one_node(13, onnx_node("Resize", "r", L("x", "", "s"), L("y"), NULL), image_and_scales, NULL),
                   "input 2 ('s') must be a constant");

    /* An f32 Range whose length differs between f32 arithmetic (ONNX) and exact arithmetic (kiln). */
    const int64_t scalar[1] = {0};
    Onnx__TensorProto *bounds[] = {onnx_tensor_f32("start", 0, scalar, (const float[]){0.0f}, 1),
                                   onnx_tensor_f32("limit", 0, scalar, (const float[]){0.3f}, 1),
                                   onnx_tensor_f32("delta", 0, scalar, (const float[]){0.1f}, 1), NULL};
    expect_refusal(one_node(11, onnx_node("Range", "r", L("start", "limit", "delta"), L("y"), NULL), NULL, bounds),
                   "the length of an f32 range is 3 in f32 arithmetic but 4 exactly");

    /* Losses: an unknown reduction, a target that is not integers, a target without the class axis removed. */
    Onnx__ValueInfoProto *scores[] = {onnx_value("x", F32, 2, L("2", "3")), onnx_value("t", I64, 1, L("2")), NULL};
    expect_refusal(one_node(13,
                            onnx_node("NegativeLogLikelihoodLoss", "l", L("x", "t"), L("y"),
                                      (Onnx__AttributeProto *[]){onnx_attr_string("reduction", "average"), NULL}),
                            scores, NULL),
                   "attribute 'reduction' is \"average\", not \"none\", \"sum\" or \"mean\"");
    Onnx__ValueInfoProto *float_target[] = {scores[0], onnx_value("t", F32, 1, L("2")), NULL};
    expect_refusal(
        one_node(13, onnx_node("SoftmaxCrossEntropyLoss", "l", L("x", "t"), L("y"), NULL), float_target, NULL),
        "target has dtype f32, not i32 or i64");
    Onnx__ValueInfoProto *same_rank[] = {scores[0], onnx_value("t", I64, 2, L("2", "3")), NULL};
    expect_refusal(one_node(13, onnx_node("NegativeLogLikelihoodLoss", "l", L("x", "t"), L("y"), NULL), same_rank,
                            NULL),
                   "input of rank 2 and target of rank 2");

    /* Dropout in training mode drops at random unless its ratio is 0. */
    const int64_t scalar_dims[1] = {0};
    Onnx__TensorProto *training[] = {
        onnx_tensor_f32("ratio", 0, scalar_dims, (const float[]){0.25f}, 1),
        onnx_tensor_i64("on", 0, scalar_dims, (const int64_t[]){1}), NULL};
    training[1]->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    training[1]->n_int64_data = 0;
    training[1]->n_int32_data = 1;
    training[1]->int32_data = (int32_t[]){1};
    expect_refusal(one_node(13, onnx_node("Dropout", "d", L("x", "ratio", "on"), L("y"), NULL), image, training),
                   "training_mode is set with ratio 0.25: dropping elements at random is not supported");

    /* ConstantOfShape's value beyond what a kiln FLOAT attribute holds exactly. */
    const int64_t one[] = {1};
    Onnx__TensorProto *shape = onnx_tensor_i64("shape", 1, one, (const int64_t[]){3});
    Onnx__AttributeProto *value = onnx_attr_int("value", 0);
    value->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    value->t = onnx_tensor_i64("v", 1, one, (const int64_t[]){(INT64_C(1) << 53) + 1});
    expect_refusal(one_node(11,
                            onnx_node("ConstantOfShape", "c", L("shape"), L("y"),
                                      (Onnx__AttributeProto *[]){value, NULL}),
                            NULL, (Onnx__TensorProto *[]){shape, NULL}),
                   "attribute 'value' 9007199254740993 is beyond 2^53 in magnitude");
}

/*
 * LRN with an even size (the window reaches one channel further up than
 * down) on a rank-3 input, against the sum of squares over the window
 * walked here, in long double.
 */
static void lrn_matches_a_naive_reference(void **state)
{
    (void)state;
    enum { LN = 2, LC = 5, LD = 3, SIZE = 4 };
    const float alpha = 0.3f, beta = 0.6f, bias = 2.0f;
    Onnx__ModelProto *m = one_node(13,
                                   onnx_node("LRN", "n", L("x"), L("y"),
                                             (Onnx__AttributeProto *[]){
                                                 onnx_attr_int("size", SIZE), onnx_attr_float("alpha", alpha),
                                                 onnx_attr_float("beta", beta), onnx_attr_float("bias", bias), NULL}),
                                   (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("2", "5", "3")), NULL}, NULL);
    kiln_onnx_result result;
    kiln_error err;
    if (import(m, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    float x[LN * LC * LD];
    for (int i = 0; i < LN * LC * LD; i++)
        x[i] = (float)((i * 29) % 13) / 3.0f - 2.0f;
    const int64_t dims[] = {LN, LC, LD};
    kiln_tensor *xt = tensor_of(KILN_F32, 3, dims, x, sizeof x);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *got = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int n = 0; n < LN; n++)
        for (int c = 0; c < LC; c++)
            for (int d = 0; d < LD; d++) {
                long double sum = 0;
                for (int k = c - (SIZE - 1) / 2; k <= c + SIZE / 2; k++)
                    if (k >= 0 && k < LC)
                        sum += (long double)x[(n * LC + k) * LD + d] * x[(n * LC + k) * LD + d];
                int i = (n * LC + c) * LD + d;
                long double want = x[i] / powl(bias + (long double)alpha / SIZE * sum, beta);
                expect_close(got[i], want, "lrn", i);
            }
    kiln_session_free(session);
    kiln_tensor_free(xt);
    kiln_program_free(program);
    onnx_result_release(&result);

    /* Five axes would need four pooled axes: lp_pool takes at most three. */
    expect_refusal(
        one_node(13, onnx_node("LRN", "n", L("x"), L("y"), (Onnx__AttributeProto *[]){onnx_attr_int("size", 3), NULL}),
                 (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 5, L("1", "2", "2", "2", "2")), NULL}, NULL),
        "input of rank 5: LRN is mapped for ranks 2..4");
}

/* Run a one-input program on `x` [1, 1, h, w] and return output 0's data (valid until the session is freed). */
static const float *run_image(kiln_program *program, kiln_session **session, kiln_tensor **input, const float *x,
                              int64_t h, int64_t w)
{
    const int64_t dims[] = {1, 1, h, w};
    kiln_error err;
    *input = tensor_of(KILN_F32, 4, dims, x, (size_t)(h * w) * sizeof(float));
    assert_int_equal(kiln_session_new(program, NULL, session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(*session, "x", *input, NULL), KILN_OK);
    if (kiln_session_run(*session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    return kiln_tensor_const_data(kiln_session_output(*session, 0));
}

/*
 * Upsample (opset 9) nearest is asymmetric with floor: output (i, j) reads
 * input (floor(i / 2), floor(j / 3)), walked here. Resize at opset 11 with
 * an empty sizes input beside its scales takes the scales.
 */
static void resize_targets_are_folded(void **state)
{
    (void)state;
    const int64_t four[] = {4}, none[] = {0};
    Onnx__TensorProto *scales = onnx_tensor_f32("scales", 1, four, (const float[]){1, 1, 2, 3}, 1);
    Onnx__ValueInfoProto *image[] = {onnx_value("x", F32, 4, L("1", "1", "2", "3")), NULL};
    kiln_onnx_result result;
    kiln_error err;
    if (import(one_node(9, onnx_node("Upsample", "u", L("x", "scales"), L("y"), NULL), image,
                        (Onnx__TensorProto *[]){scales, NULL}),
               &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    char shape[64];
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[1, 1, 4, 9]");
    const float x[6] = {1, 2, 3, 4, 5, 6};
    kiln_session *session;
    kiln_tensor *input;
    const float *got = run_image(program, &session, &input, x, 2, 3);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 9; j++)
            if (got[i * 9 + j] != x[(i / 2) * 3 + j / 3])
                fail_msg("y[%d][%d] = %g, expected x[%d][%d] = %g", i, j, got[i * 9 + j], i / 2, j / 3,
                         x[(i / 2) * 3 + j / 3]);
    kiln_session_free(session);
    kiln_tensor_free(input);
    kiln_program_free(program);
    onnx_result_release(&result);

    Onnx__TensorProto *empty_sizes = onnx_tensor_i64("sizes", 1, none, (const int64_t[]){0});
    Onnx__TensorProto *roi = onnx_tensor_f32("roi", 1, none, (const float[]){0}, 1);
    if (import(one_node(11, onnx_node("Resize", "r", L("x", "roi", "scales", "sizes"), L("y"), NULL), image,
                        (Onnx__TensorProto *[]){scales, empty_sizes, roi, NULL}),
               &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    program = load(&result);
    kiln_program_output_shape_text(program, 0, shape, sizeof shape);
    assert_string_equal(shape, "[1, 1, 4, 9]");
    kiln_program_free(program);
    onnx_result_release(&result);
}

/*
 * A Pad that adds nothing (pads all 0, as PyTorch exports before an
 * avg_pool) is no node: the Relu after it reads x itself, and the result
 * is the Relu of x.
 */
static void a_pad_of_nothing_is_no_node(void **state)
{
    (void)state;
    const int64_t eight[] = {8};
    Onnx__TensorProto *pads = onnx_tensor_i64("pads", 1, eight, (const int64_t[]){0, 0, 0, 0, 0, 0, 0, 0});
    Onnx__ValueInfoProto *image[] = {onnx_value("x", F32, 4, L("1", "1", "2", "3")), NULL};
    kiln_onnx_result result;
    kiln_error err;
    Onnx__ModelProto *model =
        onnx_model(8, 13,
                   (Onnx__NodeProto *[]){onnx_node("Pad", "p", L("x", "pads"), L("padded"), NULL),
                                         onnx_node("Relu", "r", L("padded"), L("y"), NULL), NULL},
                   image, (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL},
                   (Onnx__TensorProto *[]){pads, NULL});
    if (import(model, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    assert_int_equal(kiln_program_node_count(program), 1);
    kiln_node_info node;
    kiln_program_node(program, 0, &node);
    assert_string_equal(node.op, "relu");
    const float x[6] = {-1, 2, -3, 4, -0.5f, 6};
    kiln_session *session;
    kiln_tensor *input;
    const float *got = run_image(program, &session, &input, x, 2, 3);
    for (int i = 0; i < 6; i++)
        assert_true(got[i] == (x[i] < 0 ? 0.0f : x[i]));
    kiln_session_free(session);
    kiln_tensor_free(input);
    kiln_program_free(program);
    onnx_result_release(&result);
}

/* ------------------------------------------------------- quantization */

/* An i8 tensor whose values (in `storage`, which must outlive the model) sit in int32_data, as ONNX stores them. */
static Onnx__TensorProto *tensor_i8(const char *name, size_t rank, const int64_t *dims, int32_t *storage, size_t n)
{
    int64_t wide[16] = {0}; /* onnx_tensor_i64 copies one value per element; they are replaced below */
    assert_true(n <= 16);
    Onnx__TensorProto *t = onnx_tensor_i64(name, rank, dims, wide);
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    t->n_int64_data = 0;
    t->n_int32_data = n;
    t->int32_data = storage;
    return t;
}

/*
 * QuantizeLinear (opset 13) per axis 1 of a [2, 3, 2] input with i8 zero
 * points, then DequantizeLinear of the result with the same parameters:
 * against ONNX's formulas written here (f32 division, ties to even,
 * saturation), with ties (0.5, 2.5, -2.5), values far beyond the i8 range
 * and -0.
 */
static void quantization_matches_the_formulas(void **state)
{
    (void)state;
    enum { QA = 2, QC = 3, QB = 2, QN = QA * QC * QB };
    const float scale[QC] = {0.5f, 2.0f, 0.1f};
    int32_t zero_storage[QC] = {-3, 0, 7};
    const float x[QN] = {0.25f, 1.25f, -1.25f, 5.0f, 1e9f, -1e9f, -0.0f, 0.75f, 12.0f, -12.0f, 0.05f, 0.15f};
    const int64_t c_dims[] = {QC};
    Onnx__ModelProto *m = onnx_model(
        8, 13,
        (Onnx__NodeProto *[]){onnx_node("QuantizeLinear", "q", L("x", "scale", "zero"), L("y"),
                                        (Onnx__AttributeProto *[]){onnx_attr_int("axis", -2), NULL}),
                              onnx_node("DequantizeLinear", "d", L("y", "scale", "zero"), L("z"), NULL), NULL},
        (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("2", "3", "2")), NULL},
        (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), onnx_value("z", F32, 0, NULL), NULL},
        (Onnx__TensorProto *[]){onnx_tensor_f32("scale", 1, c_dims, scale, 1),
                                tensor_i8("zero", 1, c_dims, zero_storage, QC), NULL});
    kiln_onnx_result result;
    kiln_error err;
    if (import(m, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    const int64_t dims[] = {QA, QC, QB};
    kiln_tensor *xt = tensor_of(KILN_F32, 3, dims, x, sizeof x);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    const kiln_tensor *y = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_dtype(y), KILN_I8);
    const int8_t *q = kiln_tensor_const_data(y);
    const float *z = kiln_tensor_const_data(kiln_session_output(session, 1));
    for (int i = 0; i < QN; i++) {
        int c = (i / QB) % QC;
        float quotient = x[i] / scale[c]; /* f32 division, as ONNX */
        double rounded = rint(quotient);  /* the default rounding mode: to nearest, ties to even */
        double shifted = rounded + zero_storage[c];
        int want = shifted < -128 ? -128 : shifted > 127 ? 127 : (int)shifted;
        if (q[i] != want)
            fail_msg("y[%d] = %d, expected %d (x %g, scale %g, zero point %d)", i, q[i], want, x[i], scale[c],
                     zero_storage[c]);
        float back = (float)((float)want - (float)zero_storage[c]) * scale[c];
        if (z[i] != back)
            fail_msg("z[%d] = %g, expected %g", i, z[i], back);
    }
    kiln_session_free(session);
    kiln_tensor_free(xt);
    kiln_program_free(program);
    onnx_result_release(&result);

    /* Refused: x of another dtype than f32, attributes of later opsets, per-axis scales before opset 13. */
    Onnx__ValueInfoProto *ints[] = {onnx_value("x", I64, 1, L("3")), NULL};
    const int64_t scalar[1] = {0};
    Onnx__TensorProto *one_scale = onnx_tensor_f32("scale", 0, scalar, (const float[]){0.5f}, 1);
    expect_refusal(one_node(13, onnx_node("QuantizeLinear", "q", L("x", "scale"), L("y"), NULL), ints,
                            (Onnx__TensorProto *[]){one_scale, NULL}),
                   "x of dtype i64 and scale of dtype f32: only f32 x and scale are mapped");
    Onnx__ValueInfoProto *floats[] = {onnx_value("x", F32, 1, L("3")), NULL};
    expect_refusal(one_node(13,
                            onnx_node("QuantizeLinear", "q", L("x", "scale"), L("y"),
                                      (Onnx__AttributeProto *[]){onnx_attr_int("block_size", 2), NULL}),
                            floats, (Onnx__TensorProto *[]){one_scale, NULL}),
                   "attribute 'block_size' is not supported");
    Onnx__TensorProto *three_scales = onnx_tensor_f32("scale", 1, c_dims, scale, 1);
    expect_refusal(one_node(11, onnx_node("QuantizeLinear", "q", L("x", "scale"), L("y"), NULL), floats,
                            (Onnx__TensorProto *[]){three_scales, NULL}),
                   "the scale has shape [3]: before opset 13 it must be a scalar");
}

/* Run `program` on the named inputs and return the session (outputs inside). */
static kiln_session *run_inputs(kiln_program *program, uint32_t count, const char *const *names,
                                kiln_tensor *const *inputs)
{
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(kiln_session_set_input(session, names[i], inputs[i], NULL), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    return session;
}

/*
 * MatMulInteger with a per-row zero point for A and a per-column one for
 * B, ConvInteger with padding and a per-output-channel weight zero point,
 * and MaxPool on u8: against integer loops written here.
 */
static void integer_products_match_integer_loops(void **state)
{
    (void)state;
    enum { ROWS = 3, DEPTH = 4, COLS = 2 };
    const int8_t a[ROWS * DEPTH] = {-128, 127, 5, -7, 0, 1, -1, 100, 33, -90, 64, 12};
    const int8_t b[DEPTH * COLS] = {127, -128, -3, 8, 90, 90, -45, 0};
    int32_t a_zero[ROWS] = {-3, 0, 17}, b_zero[COLS] = {4, -128};
    const int64_t m_dims[] = {ROWS}, n_dims[] = {COLS};
    Onnx__TensorProto *az = tensor_i8("az", 1, m_dims, a_zero, ROWS), *bz = tensor_i8("bz", 1, n_dims, b_zero, COLS);
    Onnx__ModelProto *m = onnx_model(
        8, 10, (Onnx__NodeProto *[]){onnx_node("MatMulInteger", "mm", L("a", "b", "az", "bz"), L("y"), NULL), NULL},
        (Onnx__ValueInfoProto *[]){onnx_value("a", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 2, L("3", "4")),
                                   onnx_value("b", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 2, L("4", "2")), NULL},
        (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL}, (Onnx__TensorProto *[]){az, bz, NULL});
    kiln_onnx_result result;
    kiln_error err;
    if (import(m, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    const int64_t a_dims[] = {ROWS, DEPTH}, b_dims[] = {DEPTH, COLS};
    kiln_tensor *inputs[2] = {tensor_of(KILN_I8, 2, a_dims, a, sizeof a), tensor_of(KILN_I8, 2, b_dims, b, sizeof b)};
    kiln_session *session = run_inputs(program, 2, L("a", "b"), inputs);
    const kiln_tensor *y = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_dtype(y), KILN_I32);
    const int32_t *got = kiln_tensor_const_data(y);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            int32_t want = 0;
            for (int p = 0; p < DEPTH; p++)
                want += (a[i * DEPTH + p] - a_zero[i]) * (b[p * COLS + j] - b_zero[j]);
            if (got[i * COLS + j] != want)
                fail_msg("y[%d][%d] = %d, expected %d", i, j, got[i * COLS + j], want);
        }
    kiln_session_free(session);
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
    onnx_result_release(&result);

    /* ConvInteger: x [1, 1, 3, 3] u8, weight [2, 1, 2, 2] u8 with zero points [1, 200], pads 1 on every side. */
    enum { H = 3, OUT = 4, MC = 2 };
    const uint8_t x[H * H] = {0, 255, 7, 128, 3, 90, 250, 1, 64};
    const uint8_t w[MC * 4] = {255, 0, 9, 200, 201, 199, 0, 255};
    int32_t w_zero[MC] = {1, 200};
    const int64_t mc_dims[] = {MC}, scalar[1] = {0};
    Onnx__TensorProto *wz = tensor_i8("wz", 1, mc_dims, w_zero, MC), *xz = tensor_i8("xz", 0, scalar, (int32_t[]){9}, 1);
    wz->data_type = xz->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    const int64_t pads[] = {1, 1, 1, 1};
    m = onnx_model(8, 10,
                   (Onnx__NodeProto *[]){onnx_node("ConvInteger", "c", L("x", "w", "xz", "wz"), L("y"),
                                                   (Onnx__AttributeProto *[]){onnx_attr_ints("pads", 4, pads), NULL}),
                                         NULL},
                   (Onnx__ValueInfoProto *[]){onnx_value("x", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 4,
                                                         L("1", "1", "3", "3")),
                                              onnx_value("w", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 4,
                                                         L("2", "1", "2", "2")),
                                              NULL},
                   (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL},
                   (Onnx__TensorProto *[]){xz, wz, NULL});
    if (import(m, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    program = load(&result);
    const int64_t x_dims[] = {1, 1, H, H}, w_dims[] = {MC, 1, 2, 2};
    inputs[0] = tensor_of(KILN_U8, 4, x_dims, x, sizeof x);
    inputs[1] = tensor_of(KILN_U8, 4, w_dims, w, sizeof w);
    session = run_inputs(program, 2, L("x", "w"), inputs);
    got = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int c = 0; c < MC; c++)
        for (int i = 0; i < OUT; i++)
            for (int j = 0; j < OUT; j++) {
                int32_t want = 0;
                for (int u = 0; u < 2; u++)
                    for (int v = 0; v < 2; v++) {
                        int r = i - 1 + u, q = j - 1 + v; /* padding contributes 0 after the zero point */
                        if (r >= 0 && r < H && q >= 0 && q < H)
                            want += (x[r * H + q] - 9) * (w[c * 4 + u * 2 + v] - w_zero[c]);
                    }
                int index = (c * OUT + i) * OUT + j;
                if (got[index] != want)
                    fail_msg("conv y[%d][%d][%d] = %d, expected %d", c, i, j, got[index], want);
            }
    kiln_session_free(session);
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
    onnx_result_release(&result);

    /* MaxPool on u8: the maxima of 2x2 windows, stride 1, the values unchanged. */
    const int64_t kernel[] = {2, 2};
    m = one_node(12,
                 onnx_node("MaxPool", "p", L("x"), L("y"),
                           (Onnx__AttributeProto *[]){onnx_attr_ints("kernel_shape", 2, kernel), NULL}),
                 (Onnx__ValueInfoProto *[]){onnx_value("x", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 4,
                                                       L("1", "1", "3", "3")),
                                            NULL},
                 NULL);
    if (import(m, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    program = load(&result);
    inputs[0] = tensor_of(KILN_U8, 4, x_dims, x, sizeof x);
    session = run_inputs(program, 1, L("x"), inputs);
    y = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_dtype(y), KILN_U8);
    const uint8_t *pooled = kiln_tensor_const_data(y);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            uint8_t want = 0;
            for (int u = 0; u < 2; u++)
                for (int v = 0; v < 2; v++)
                    want = x[(i + u) * H + j + v] > want ? x[(i + u) * H + j + v] : want;
            if (pooled[i * 2 + j] != want)
                fail_msg("max_pool y[%d][%d] = %d, expected %d", i, j, pooled[i * 2 + j], want);
        }
    kiln_session_free(session);
    kiln_tensor_free(inputs[0]);
    kiln_program_free(program);
    onnx_result_release(&result);

    /* An inner size whose sum of products could leave i32 is refused. */
    expect_refusal(one_node(10, onnx_node("MatMulInteger", "mm", L("a", "b"), L("y"), NULL),
                            (Onnx__ValueInfoProto *[]){
                                onnx_value("a", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, L("1", "40000")),
                                onnx_value("b", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, L("40000", "1")), NULL},
                            NULL),
                   "the inner size is 40000: a sum of more than 33025 products may leave i32");
}

/*
 * The cosine windows against their textbook sums written here in long
 * double (Hamming's coefficients 25/46 and 21/46, Blackman's 0.42, 0.5,
 * 0.08), periodic (N = size) and symmetric (N = size - 1).
 */
static void cosine_windows_match_their_formulas(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        long double a0, a1, a2;
    } windows[] = {{"HannWindow", 0.5L, 0.5L, 0},
                   {"HammingWindow", 25.0L / 46, 21.0L / 46, 0},
                   {"BlackmanWindow", 0.42L, 0.5L, 0.08L}};
    const int64_t scalar[1] = {0};
    enum { SIZE = 7 };
    for (size_t w = 0; w < 3; w++)
        for (int periodic = 0; periodic < 2; periodic++) {
            Onnx__TensorProto *size = onnx_tensor_i64("size", 0, scalar, (const int64_t[]){SIZE});
            Onnx__ModelProto *m = one_node(
                17,
                onnx_node(windows[w].op, "w", L("size"), L("y"),
                          (Onnx__AttributeProto *[]){onnx_attr_int("periodic", periodic), NULL}),
                NULL, (Onnx__TensorProto *[]){size, NULL});
            kiln_onnx_result result;
            kiln_error err;
            if (import(m, &result, &err) != KILN_OK)
                fail_msg("%s", err.message);
            kiln_program *program = load(&result);
            kiln_session *session;
            assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
            assert_int_equal(kiln_session_run(session, &err), KILN_OK);
            const kiln_tensor *y = kiln_session_output(session, 0);
            assert_int_equal(kiln_tensor_element_count(y), SIZE);
            const float *got = kiln_tensor_const_data(y);
            const long double pi = 3.141592653589793238462643383279502884L;
            for (int n = 0; n < SIZE; n++) {
                long double t = 2 * pi * n / (periodic ? SIZE : SIZE - 1);
                long double want = windows[w].a0 - windows[w].a1 * cosl(t) + windows[w].a2 * cosl(2 * t);
                /* Near-zero ends: cos(2 pi) rounds; allow an absolute 1e-7 there. */
                if (fabsl(got[n] - want) > 1e-7L + 1e-6L * fabsl(want))
                    fail_msg("%s periodic=%d [%d] = %.9g, reference %.9Lg", windows[w].op, periodic, n, got[n], want);
            }
            kiln_session_free(session);
            kiln_program_free(program);
            onnx_result_release(&result);
        }
    Onnx__TensorProto *size = onnx_tensor_i64("size", 0, scalar, (const int64_t[]){4});
    expect_refusal(one_node(17,
                            onnx_node("HannWindow", "w", L("size"), L("y"),
                                      (Onnx__AttributeProto *[]){
                                          onnx_attr_int("output_datatype", ONNX__TENSOR_PROTO__DATA_TYPE__INT32),
                                          NULL}),
                            NULL, (Onnx__TensorProto *[]){size, NULL}),
                   "output_datatype i32: only f32 and f64 windows are mapped");
    expect_refusal(one_node(17, onnx_node("HannWindow", "w", L("n"), L("y"), NULL),
                            (Onnx__ValueInfoProto *[]){onnx_value("n", I64, 0, (const char *const[]){NULL}), NULL}, NULL),
                   "input 0 ('n') must be a constant");
}

/*
 * Before opset 7 a node binds to its op's version there: Elu at opset 6
 * imports (its consumed_inputs hint dropped) and computes elu; Add-6's
 * broadcast along an axis is computed as that version defines it, and
 * what it does not define is reported, as are the versions kiln does not
 * express (Dropout-6 in training, PRelu-6).
 */
static void old_opsets_bind_each_node_to_its_version(void **state)
{
    (void)state;
    Onnx__ValueInfoProto *x[] = {onnx_value("x", F32, 1, L("4")), NULL};
    Onnx__AttributeProto *hint = onnx_attr_ints("consumed_inputs", 1, (const int64_t[]){0});
    kiln_onnx_result result;
    kiln_error err;
    Onnx__ModelProto *elu = one_node(
        6, onnx_node("Elu", "e", L("x"), L("y"), (Onnx__AttributeProto *[]){onnx_attr_float("alpha", 0.5f), hint, NULL}),
        x, NULL);
    if (import(elu, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    const float in[4] = {-2.0f, -0.5f, 0.0f, 3.0f};
    const int64_t dims[] = {4};
    kiln_tensor *xt = tensor_of(KILN_F32, 1, dims, in, sizeof in);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    const float *got = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 4; i++)
        expect_close(got[i], in[i] < 0 ? 0.5L * expm1l(in[i]) : (long double)in[i], "elu", i);
    kiln_session_free(session);
    kiln_tensor_free(xt);
    kiln_program_free(program);
    onnx_result_release(&result);

    /*
     * Add-6 with broadcast = 1 and axis = 0: b [4] sits at a's axis 0 of
     * [4, 2] (b[i] added along row i), which NumPy would not align.
     */
    Onnx__ValueInfoProto *ab[] = {onnx_value("a", F32, 2, L("4", "2")), onnx_value("b", F32, 1, L("4")), NULL};
    Onnx__AttributeProto *at_axis0[] = {onnx_attr_int("broadcast", 1), onnx_attr_int("axis", 0), NULL};
    if (import(one_node(6, onnx_node("Add", "a", L("a", "b"), L("y"), at_axis0), ab, NULL), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    program = load(&result);
    const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[4] = {10, 20, 30, 40};
    kiln_tensor *at = tensor_of(KILN_F32, 2, (const int64_t[]){4, 2}, a, sizeof a);
    kiln_tensor *bt = tensor_of(KILN_F32, 1, (const int64_t[]){4}, b, sizeof b);
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "a", at, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "b", bt, NULL), KILN_OK);
    assert_int_equal(kiln_session_run(session, &err), KILN_OK);
    got = kiln_tensor_const_data(kiln_session_output(session, 0));
    for (int i = 0; i < 8; i++)
        assert_true(got[i] == a[i] + b[i / 2]);
    kiln_session_free(session);
    kiln_tensor_free(at);
    kiln_tensor_free(bt);
    kiln_program_free(program);
    onnx_result_release(&result);
    /* Without broadcast, B must have A's shape; with it, B must not broadcast A. */
    expect_refusal(one_node(6, onnx_node("Add", "a", L("a", "b"), L("y"), NULL), ab, NULL),
                   "broadcast = 0 needs B of A's shape (opset 6): B has rank 1, A 2");
    Onnx__ValueInfoProto *wide[] = {onnx_value("a", F32, 2, L("1", "2")), onnx_value("b", F32, 2, L("3", "2")), NULL};
    Onnx__AttributeProto *suffix[] = {onnx_attr_int("broadcast", 1), NULL};
    expect_refusal(one_node(1, onnx_node("Mul", "m", L("a", "b"), L("y"), suffix), wide, NULL),
                   "broadcast = 1: axis 0 of the result is 3, A's is 1");
    /* Versions whose semantics kiln does not express stay refused, with the reason. */
    Onnx__AttributeProto *training[] = {onnx_attr_float("ratio", 0.25f), NULL};
    expect_refusal(one_node(6, onnx_node("Dropout", "d", L("x"), L("y"), training), x, NULL),
                   "is_test = 0 (training) with ratio 0.25");
    expect_refusal(one_node(6, onnx_node("PRelu", "p", L("x", "x"), L("y"), NULL), x, NULL),
                   "unsupported op PRelu (opset 6): mapped for opsets 7.. only");
}

/*
 * An op does not exist below the opset ONNX adds it in (issue #17: a model
 * stamped opset 14 used Mish, added in 18, and was imported): Mish at 14
 * and at 17 (the opset before it), HardSwish at 13 and
 * Trilu at 13 are refused naming that opset, while HardSwish and Trilu at
 * 14, where ONNX defines them, are looked up as usual.
 */
static void ops_are_refused_below_the_opset_that_adds_them(void **state)
{
    (void)state;
    Onnx__ValueInfoProto *x[] = {onnx_value("x", F32, 2, L("2", "2")), NULL};
    expect_refusal(one_node(14, onnx_node("Mish", "m", L("x"), L("y"), NULL), x, NULL),
                   "unsupported op Mish (opset 14): ONNX defines it from opset 18");
    expect_refusal(one_node(17, onnx_node("Mish", "m", L("x"), L("y"), NULL), x, NULL),
                   "unsupported op Mish (opset 17): ONNX defines it from opset 18");
    expect_refusal(one_node(13, onnx_node("HardSwish", "h", L("x"), L("y"), NULL), x, NULL),
                   "unsupported op HardSwish (opset 13): ONNX defines it from opset 14");
    expect_refusal(one_node(13, onnx_node("Trilu", "t", L("x"), L("y"), NULL), x, NULL),
                   "unsupported op Trilu (opset 13): ONNX defines it from opset 14");
    kiln_onnx_result result;
    kiln_error err;
    if (import(one_node(14, onnx_node("HardSwish", "h", L("x"), L("y"), NULL), x, NULL), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    onnx_result_release(&result);
    if (import(one_node(14, onnx_node("Trilu", "t", L("x"), L("y"), NULL), x, NULL), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    onnx_result_release(&result);
}

/* A STRINGS attribute over `storage` (the values are not copied). */
static Onnx__AttributeProto *attr_strings(const char *name, size_t count, ProtobufCBinaryData *storage,
                                          const char *const *values)
{
    Onnx__AttributeProto *a = onnx_attr_string(name, "");
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    a->has_s = 0;
    for (size_t i = 0; i < count; i++)
        storage[i] = (ProtobufCBinaryData){strlen(values[i]), (uint8_t *)(uintptr_t)values[i]};
    a->n_strings = count;
    a->strings = storage;
    return a;
}

/* An LSTM on x [3, 2, 2] with hidden_size 2; `inputs` names its ONNX operands. */
static Onnx__ModelProto *lstm_model(const char *const *inputs, Onnx__AttributeProto *const *attributes,
                                    Onnx__TensorProto *const *initializers)
{
    return onnx_model(8, 14,
                      (Onnx__NodeProto *[]){onnx_node("LSTM", "l", inputs, L("y", "yh", "yc"), attributes), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("3", "2", "2")), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), onnx_value("yh", F32, 0, NULL),
                                                 onnx_value("yc", F32, 0, NULL), NULL},
                      initializers);
}

/* Run an imported LSTM on x and copy its three outputs (y 12 values, yh and yc 4 each) to `out`. */
static void run_lstm(const Onnx__ModelProto *model, const float *x, float out[20])
{
    kiln_onnx_result result;
    kiln_error err;
    if (import(model, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    kiln_tensor *xt = tensor_of(KILN_F32, 3, (const int64_t[]){3, 2, 2}, x, 12 * sizeof(float));
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    memcpy(out, kiln_tensor_const_data(kiln_session_output(session, 0)), 12 * sizeof(float));
    memcpy(out + 12, kiln_tensor_const_data(kiln_session_output(session, 1)), 4 * sizeof(float));
    memcpy(out + 16, kiln_tensor_const_data(kiln_session_output(session, 2)), 4 * sizeof(float));
    kiln_session_free(session);
    kiln_tensor_free(xt);
    kiln_program_free(program);
    onnx_result_release(&result);
}

/*
 * RNN, GRU, LSTM: an absent B before a present initial_h is zeros (the
 * same outputs, bit for bit, as an explicit zero B); Y_h is Y's last step;
 * a full-length constant sequence_lens is accepted; a shorter one, or an
 * activation kiln lacks, is refused by name.
 */
static void recurrent_layers_fill_absent_operands(void **state)
{
    (void)state;
    float w[16], r[16], h0[4], zeros[16] = {0}, x[12];
    for (int i = 0; i < 16; i++) {
        w[i] = (float)((i * 7) % 11) / 8.0f - 0.6f;
        r[i] = (float)((i * 5) % 9) / 10.0f - 0.4f;
    }
    for (int i = 0; i < 4; i++)
        h0[i] = 0.25f * (float)i - 0.3f;
    for (int i = 0; i < 12; i++)
        x[i] = (float)((i * 3) % 7) / 3.0f - 1.0f;
    Onnx__TensorProto *operands[] = {
        onnx_tensor_f32("W", 3, (const int64_t[]){1, 8, 2}, w, 1),
        onnx_tensor_f32("R", 3, (const int64_t[]){1, 8, 2}, r, 1),
        onnx_tensor_f32("h0", 3, (const int64_t[]){1, 2, 2}, h0, 1),
        onnx_tensor_f32("B0", 2, (const int64_t[]){1, 16}, zeros, 1),
        onnx_tensor_i64("full", 1, (const int64_t[]){2}, (const int64_t[]){3, 3}),
        onnx_tensor_i64("short", 1, (const int64_t[]){2}, (const int64_t[]){3, 2}),
        NULL};
    Onnx__AttributeProto *hidden[] = {onnx_attr_int("hidden_size", 2), NULL};
    float absent[20], explicit_zero[20], full_length[20];
    run_lstm(lstm_model(L("x", "W", "R", "", "", "h0"), hidden, operands), x, absent);
    run_lstm(lstm_model(L("x", "W", "R", "B0", "", "h0"), hidden, operands), x, explicit_zero);
    run_lstm(lstm_model(L("x", "W", "R", "", "full", "h0"), hidden, operands), x, full_length);
    assert_memory_equal(absent, explicit_zero, sizeof absent);
    assert_memory_equal(absent, full_length, sizeof absent);
    assert_memory_equal(absent + 2 * 4, absent + 12, 4 * sizeof(float)); /* Y_h is Y[seq-1] */

    expect_refusal(lstm_model(L("x", "W", "R", "", "short", "h0"), hidden, operands),
                   "sequence_lens[1] = 2 is not the full sequence length 3");
    ProtobufCBinaryData storage[3];
    Onnx__AttributeProto *leaky[] = {
        onnx_attr_int("hidden_size", 2),
        attr_strings("activations", 3, storage, L("Sigmoid", "LeakyRelu", "Tanh")), NULL};
    expect_refusal(lstm_model(L("x", "W", "R"), leaky, operands),
                   "activation 'LeakyRelu' (kiln's recurrent layers take Sigmoid, Tanh and Relu)");
}

/*
 * An LSTM over a symbolic batch with initial_h absent before a present
 * initial_c: the zero state is expand_to of a zero to "[1, batch, 2]",
 * and the outputs are those of an explicit zero initial_h, bit for bit,
 * at batch 1 and 3.
 */
static void recurrent_zero_state_over_a_symbolic_batch(void **state)
{
    (void)state;
    float w[16], r[16];
    for (int i = 0; i < 16; i++) {
        w[i] = (float)((i * 7) % 11) / 8.0f - 0.6f;
        r[i] = (float)((i * 5) % 9) / 10.0f - 0.4f;
    }
    Onnx__AttributeProto *hidden[] = {onnx_attr_int("hidden_size", 2), NULL};
    kiln_onnx_dim dims[] = {{"batch", 1, 3, 0}};
    kiln_onnx_options options = {.struct_size = sizeof options, .dims = dims, .dim_count = 1};
    float outputs[2][3 * 3 * 2];
    for (int explicit_h = 0; explicit_h < 2; explicit_h++) {
        Onnx__ModelProto *m = onnx_model(
            8, 14,
            (Onnx__NodeProto *[]){onnx_node("LSTM", "l",
                                            explicit_h ? L("x", "W", "R", "", "", "h0", "c0")
                                                       : L("x", "W", "R", "", "", "", "c0"),
                                            L("y"), hidden),
                                  NULL},
            (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("3", "batch", "2")),
                                       onnx_value("h0", F32, 3, L("1", "batch", "2")),
                                       onnx_value("c0", F32, 3, L("1", "batch", "2")), NULL},
            (Onnx__ValueInfoProto *[]){onnx_value("y", F32, 0, NULL), NULL},
            (Onnx__TensorProto *[]){onnx_tensor_f32("W", 3, (const int64_t[]){1, 8, 2}, w, 1),
                                    onnx_tensor_f32("R", 3, (const int64_t[]){1, 8, 2}, r, 1), NULL});
        kiln_onnx_result result;
        kiln_error err;
        if (import_with(m, &options, &result, &err) != KILN_OK)
            fail_msg("%s%s", err.message, result.unsupported_count ? result.unsupported[0] : "");
        kiln_program *program = load(&result);
        kiln_session *session;
        assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
        for (int64_t batch = 1; batch <= 3; batch += 2) {
            float x[3 * 3 * 2], c0[3 * 2], h0[3 * 2] = {0};
            for (int i = 0; i < 3 * (int)batch * 2; i++)
                x[i] = (float)((i * 3) % 7) / 3.0f - 1.0f;
            for (int i = 0; i < (int)batch * 2; i++)
                c0[i] = 0.25f * (float)i - 0.3f;
            kiln_tensor *xt = tensor_of(KILN_F32, 3, (const int64_t[]){3, batch, 2}, x, 3 * batch * 2 * sizeof(float));
            kiln_tensor *ct = tensor_of(KILN_F32, 3, (const int64_t[]){1, batch, 2}, c0, batch * 2 * sizeof(float));
            kiln_tensor *ht = tensor_of(KILN_F32, 3, (const int64_t[]){1, batch, 2}, h0, batch * 2 * sizeof(float));
            assert_int_equal(kiln_session_set_input(session, "x", xt, NULL), KILN_OK);
            assert_int_equal(kiln_session_set_input(session, "c0", ct, NULL), KILN_OK);
            assert_int_equal(kiln_session_set_input(session, "h0", ht, NULL), KILN_OK); /* read or not */
            if (kiln_session_run(session, &err) != KILN_OK)
                fail_msg("%s", err.message);
            const kiln_tensor *y = kiln_session_output(session, 0);
            assert_int_equal(kiln_tensor_element_count(y), 3 * batch * 2);
            if (batch == 3)
                memcpy(outputs[explicit_h], kiln_tensor_const_data(y), sizeof outputs[0]);
            kiln_tensor_free(xt);
            kiln_tensor_free(ct);
            kiln_tensor_free(ht);
        }
        kiln_session_free(session);
        kiln_program_free(program);
        onnx_result_release(&result);
    }
    assert_memory_equal(outputs[0], outputs[1], sizeof outputs[0]);
}

/* ----------------------------------------------------- opset 18's changes */

/* Import `model` (which must import) and run it on x; output `index`'s tensor stays valid until *session is freed. */
static const kiln_tensor *run_x(const Onnx__ModelProto *model, kiln_onnx_result *result, kiln_program **program,
                                kiln_session **session, kiln_tensor *x, uint32_t index)
{
    kiln_error err;
    if (import(model, result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    *program = load(result);
    assert_int_equal(kiln_session_new(*program, NULL, session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(*session, "x", x, NULL), KILN_OK);
    if (kiln_session_run(*session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    return kiln_session_output(*session, index);
}

static void release_run(kiln_onnx_result *result, kiln_program *program, kiln_session *session, kiln_tensor *x)
{
    kiln_session_free(session);
    kiln_program_free(program);
    kiln_tensor_free(x);
    onnx_result_release(result);
}

/*
 * The schema changes of opset 18 (spec/onnx-import.md §4): each new form
 * is read at 18 and refused below it, and each old form is refused at 18,
 * so that no node computes another version's meaning. The numbers of
 * each form are checked by tests/onnx-opset18 (onnx's own cases).
 */
static void opset_18_forms_are_read_at_18_only(void **state)
{
    (void)state;
    Onnx__ValueInfoProto *x23[] = {onnx_value("x", F32, 2, L("2", "3")), NULL};
    Onnx__ValueInfoProto *image[] = {onnx_value("x", F32, 4, L("1", "1", "4", "4")), NULL};
    const int64_t one[] = {1}, two_axes[] = {2}, pads[] = {1, 1};
    Onnx__AttributeProto *axes_1[] = {onnx_attr_ints("axes", 1, one), NULL};

    /* Reductions: the axes attribute is gone at 18 (it would reduce every axis if ignored). */
    expect_refusal(one_node(18, onnx_node("ReduceMax", "r", L("x"), L("y"), axes_1), x23, NULL),
                   "attribute 'axes' is not part of ReduceMax at opset 18: from opset 18 it is input 1");
    kiln_onnx_result result;
    kiln_error err;
    if (import(one_node(17, onnx_node("ReduceMax", "r", L("x"), L("y"), axes_1), x23, NULL), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    onnx_result_release(&result);

    /* Split: num_outputs from 18, parts of ceil(7 / 3) = 3 and the rest. */
    Onnx__ValueInfoProto *x7[] = {onnx_value("x", F32, 1, L("7")), NULL};
    Onnx__AttributeProto *three[] = {onnx_attr_int("num_outputs", 3), NULL};
    Onnx__ValueInfoProto *outs[] = {onnx_value("a", F32, 0, NULL), onnx_value("b", F32, 0, NULL),
                                    onnx_value("c", F32, 0, NULL), NULL};
    expect_refusal(onnx_model(8, 17, (Onnx__NodeProto *[]){onnx_node("Split", "s", L("x"), L("a", "b", "c"), three), NULL},
                              x7, outs, NULL),
                   "attribute 'num_outputs' is not part of Split at opset 17 (it is from opset 18)");
    const int64_t seven[] = {7};
    kiln_program *program;
    kiln_session *session;
    kiln_tensor *x = tensor_of(KILN_F32, 1, seven, (const float[]){0, 1, 2, 3, 4, 5, 6}, 7 * sizeof(float));
    const kiln_tensor *last = run_x(
        onnx_model(8, 18, (Onnx__NodeProto *[]){onnx_node("Split", "s", L("x"), L("a", "b", "c"), three), NULL}, x7,
                   outs, NULL),
        &result, &program, &session, x, 2);
    assert_int_equal(kiln_tensor_shape(kiln_session_output(session, 0))[0], 3);
    assert_int_equal(kiln_tensor_shape(kiln_session_output(session, 1))[0], 3);
    assert_int_equal(kiln_tensor_shape(last)[0], 1);
    assert_true(((const float *)kiln_tensor_const_data(last))[0] == 6.0f);
    release_run(&result, program, session, x);
    Onnx__ValueInfoProto *x5[] = {onnx_value("x", F32, 1, L("5")), NULL};
    Onnx__AttributeProto *four_parts[] = {onnx_attr_int("num_outputs", 4), NULL};
    Onnx__ValueInfoProto *outs4[] = {outs[0], outs[1], outs[2], onnx_value("d", F32, 0, NULL), NULL};
    expect_refusal(onnx_model(8, 18,
                              (Onnx__NodeProto *[]){onnx_node("Split", "s", L("x"), L("a", "b", "c", "d"), four_parts),
                                                    NULL},
                              x5, outs4, NULL),
                   "axis 0 of size 5 does not split into 4 parts of 2 and a smaller last one");
    Onnx__ValueInfoProto *outs2[] = {outs[0], outs[1], NULL};
    expect_refusal(onnx_model(8, 18, (Onnx__NodeProto *[]){onnx_node("Split", "s", L("x"), L("a", "b"), three), NULL},
                              x7, outs2, NULL),
                   "attribute 'num_outputs' is 3, the node has 2 outputs");

    /* Pad: the axes input from 18 (pads of axis 2 alone), refused before; an axis twice is refused. */
    Onnx__TensorProto *pad_operands[] = {onnx_tensor_i64("pads", 1, (const int64_t[]){2}, pads),
                                         onnx_tensor_i64("axes", 1, one, two_axes), NULL};
    expect_refusal(one_node(17, onnx_node("Pad", "p", L("x", "pads", "", "axes"), L("y"), NULL), image, pad_operands),
                   "input 3 (axes) is not part of Pad at opset 17 (it is from opset 18)");
    const int64_t image_dims[] = {1, 1, 4, 4};
    float pixels[16];
    for (int i = 0; i < 16; i++)
        pixels[i] = (float)i;
    x = tensor_of(KILN_F32, 4, image_dims, pixels, sizeof pixels);
    const kiln_tensor *padded =
        run_x(one_node(18, onnx_node("Pad", "p", L("x", "pads", "", "axes"), L("y"), NULL), image, pad_operands),
              &result, &program, &session, x, 0);
    assert_int_equal(kiln_tensor_shape(padded)[2], 6);
    assert_int_equal(kiln_tensor_shape(padded)[3], 4);
    assert_true(((const float *)kiln_tensor_const_data(padded))[4] == 0.0f); /* row 0 is padding */
    assert_true(((const float *)kiln_tensor_const_data(padded))[4 * 4] == 12.0f); /* row 4 is input row 3 */
    release_run(&result, program, session, x);
    const int64_t repeated[] = {2, -2};
    Onnx__TensorProto *twice[] = {onnx_tensor_i64("pads", 1, (const int64_t[]){4}, (const int64_t[]){1, 1, 1, 1}),
                                  onnx_tensor_i64("axes", 1, (const int64_t[]){2}, repeated), NULL};
    expect_refusal(one_node(18, onnx_node("Pad", "p", L("x", "pads", "", "axes"), L("y"), NULL), image, twice),
                   "axes[1] = -2 repeats axis 2");

    /* Resize: antialias, axes and keep_aspect_ratio_policy are opset 18's; a downscale with antialias is refused. */
    const int64_t four[] = {4};
    Onnx__TensorProto *half[] = {onnx_tensor_f32("scales", 1, four, (const float[]){1, 1, 0.5f, 0.5f}, 1), NULL};
    Onnx__AttributeProto *antialias[] = {onnx_attr_string("mode", "linear"), onnx_attr_int("antialias", 1), NULL};
    expect_refusal(one_node(17, onnx_node("Resize", "r", L("x", "", "scales"), L("y"), antialias), image, half),
                   "attribute 'antialias' is not part of Resize at opset 17 (Resize has it from opset 18)");
    expect_refusal(one_node(18, onnx_node("Resize", "r", L("x", "", "scales"), L("y"), antialias), image, half),
                   "antialias = 1 downscales axis 2 (scale 0.5): kiln's resize has no antialiasing filter");
    /* not_larger over sizes [3, 2] of a 4x4 image: scale 1/2 on both axes, so 2x2. */
    Onnx__TensorProto *sizes_32[] = {onnx_tensor_i64("sizes", 1, (const int64_t[]){2}, (const int64_t[]){3, 2}), NULL};
    const int64_t spatial[] = {2, 3};
    Onnx__AttributeProto *not_larger[] = {onnx_attr_ints("axes", 2, spatial),
                                          onnx_attr_string("keep_aspect_ratio_policy", "not_larger"), NULL};
    x = tensor_of(KILN_F32, 4, image_dims, pixels, sizeof pixels);
    const kiln_tensor *kept =
        run_x(one_node(18, onnx_node("Resize", "r", L("x", "", "", "sizes"), L("y"), not_larger), image, sizes_32),
              &result, &program, &session, x, 0);
    assert_int_equal(kiln_tensor_shape(kept)[2], 2);
    assert_int_equal(kiln_tensor_shape(kept)[3], 2);
    release_run(&result, program, session, x);
    Onnx__AttributeProto *stretch_typo[] = {onnx_attr_string("keep_aspect_ratio_policy", "fit"), NULL};
    Onnx__TensorProto *sizes_4[] = {onnx_tensor_i64("sizes", 1, four, (const int64_t[]){1, 1, 2, 2}), NULL};
    expect_refusal(one_node(18, onnx_node("Resize", "r", L("x", "", "", "sizes"), L("y"), stretch_typo), image, sizes_4),
                   "attribute 'keep_aspect_ratio_policy' is \"fit\", not stretch, not_larger or not_smaller");

    /* Scatter reductions: max and min from 18 only. */
    Onnx__ValueInfoProto *scatter_inputs[] = {onnx_value("x", F32, 1, L("4")), onnx_value("i", I64, 1, L("2")),
                                              onnx_value("u", F32, 1, L("2")), NULL};
    Onnx__AttributeProto *max_reduction[] = {onnx_attr_string("reduction", "max"), NULL};
    expect_refusal(one_node(16, onnx_node("ScatterElements", "s", L("x", "i", "u"), L("y"), max_reduction),
                            scatter_inputs, NULL),
                   "reduction \"max\" is not defined at opset 16 (none, add, mul)");
    if (import(one_node(18, onnx_node("ScatterElements", "s", L("x", "i", "u"), L("y"), max_reduction), scatter_inputs,
                        NULL),
               &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    onnx_result_release(&result);

    /* LpPool: dilations and ceil_mode from 18. */
    const int64_t kernel[] = {2, 2};
    Onnx__AttributeProto *dilated[] = {onnx_attr_ints("kernel_shape", 2, kernel), onnx_attr_ints("dilations", 2, kernel),
                                       NULL};
    expect_refusal(one_node(17, onnx_node("LpPool", "l", L("x"), L("y"), dilated), image, NULL),
                   "attribute 'dilations' is not part of LpPool at opset 17 (it is from opset 18)");
    if (import(one_node(18, onnx_node("LpPool", "l", L("x"), L("y"), dilated), image, NULL), &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    onnx_result_release(&result);

    /* Mish is ONNX's from 18, now within the opsets the importer reads: one
     * kiln mish node (spec/ops/unary.md), x tanh(log(1 + e^x)) within f32
     * rounding of the formula in double. */
    {
        const int64_t dims23[] = {2, 3};
        const float values[6] = {-30.0f, -1.5f, -0.0f, 0.25f, 3.0f, 25.0f};
        kiln_program *mish_program;
        kiln_session *mish_session;
        kiln_tensor *mish_x = tensor_of(KILN_F32, 2, dims23, values, sizeof values);
        const kiln_tensor *y = run_x(one_node(18, onnx_node("Mish", "m", L("x"), L("y"), NULL), x23, NULL), &result,
                                     &mish_program, &mish_session, mish_x, 0);
        assert_int_equal(kiln_program_node_count(mish_program), 1);
        kiln_node_info node;
        kiln_program_node(mish_program, 0, &node);
        assert_string_equal(node.op, "mish");
        const float *got = kiln_tensor_const_data(y);
        for (int i = 0; i < 6; i++) {
            double v = values[i], want = v * tanh(log1p(exp(v)));
            if (!(fabs(got[i] - want) <= 1e-6 * fabs(want)))
                fail_msg("mish(%g): got %.9g, want %.9g", v, got[i], want);
        }
        assert_true(signbit(got[2]));
        release_run(&result, mish_program, mish_session, mish_x);
    }

    /* CenterCropPad needs constant sizes where it crops or pads. */
    Onnx__ValueInfoProto *batch[] = {onnx_value("x", F32, 2, L("batch", "3")), NULL};
    Onnx__TensorProto *shape_2[] = {onnx_tensor_i64("shape", 1, (const int64_t[]){2}, (const int64_t[]){2, 2}), NULL};
    kiln_onnx_options options = {.struct_size = sizeof options};
    kiln_onnx_dim dims[] = {{.name = "batch", .min = 1, .max = 4}};
    options.dims = dims;
    options.dim_count = 1;
    kiln_status status = import_with(
        one_node(18, onnx_node("CenterCropPad", "c", L("x", "shape"), L("y"), NULL), batch, shape_2), &options,
        &result, &err);
    assert_int_equal(status, KILN_ERR_UNSUPPORTED_OP);
    assert_non_null(strstr(err.message, "input axis 0 is symbolic: where to crop or pad is not known at import"));
    onnx_result_release(&result);
}

/*
 * ReduceMax and ReduceMin from opset 18 over an empty axis: ONNX's -inf
 * and the largest i64 (kiln's reductions refuse an empty axis, so the
 * importer writes the constant result).
 */
static void empty_max_and_min_are_the_extremes(void **state)
{
    (void)state;
    const int64_t one[] = {1}, empty_dims[] = {2, 0};
    Onnx__TensorProto *axes[] = {onnx_tensor_i64("axes", 1, one, one), NULL};
    kiln_onnx_result result;
    kiln_program *program;
    kiln_session *session;
    kiln_tensor *x = tensor_of(KILN_F32, 2, empty_dims, NULL, 0);
    const kiln_tensor *y = run_x(one_node(18, onnx_node("ReduceMax", "r", L("x", "axes"), L("y"), NULL),
                                          (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 2, L("2", "0")), NULL}, axes),
                                 &result, &program, &session, x, 0);
    assert_int_equal(kiln_tensor_rank(y), 2);
    assert_int_equal(kiln_tensor_shape(y)[0], 2);
    assert_int_equal(kiln_tensor_shape(y)[1], 1);
    for (int i = 0; i < 2; i++)
        assert_true(isinf(((const float *)kiln_tensor_const_data(y))[i]) &&
                    ((const float *)kiln_tensor_const_data(y))[i] < 0);
    release_run(&result, program, session, x);
    x = tensor_of(KILN_I64, 2, empty_dims, NULL, 0);
    y = run_x(one_node(18,
                       onnx_node("ReduceMin", "r", L("x", "axes"), L("y"),
                                 (Onnx__AttributeProto *[]){onnx_attr_int("keepdims", 0), NULL}),
                       (Onnx__ValueInfoProto *[]){onnx_value("x", I64, 2, L("2", "0")), NULL}, axes),
              &result, &program, &session, x, 0);
    assert_int_equal(kiln_tensor_rank(y), 1);
    assert_true(((const int64_t *)kiln_tensor_const_data(y))[1] == INT64_MAX);
    release_run(&result, program, session, x);
}

/*
 * GroupNormalization-18 (scale and bias per group) against a naive
 * reference: x [2, 4, 3], 2 groups of 2 channels, in long double.
 */
static void group_normalization_18_matches_a_naive_reference(void **state)
{
    (void)state;
    enum { B = 2, CH = 4, S = 3, G = 2 };
    float xs[B * CH * S];
    for (int i = 0; i < B * CH * S; i++)
        xs[i] = (float)((i * 29) % 13) / 3.0f - 2.0f;
    const float scale[G] = {1.5f, -0.5f}, bias[G] = {0.25f, 2.0f};
    const int64_t g_dims[] = {G}, x_dims[] = {B, CH, S};
    Onnx__TensorProto *affine[] = {onnx_tensor_f32("scale", 1, g_dims, scale, 1),
                                   onnx_tensor_f32("bias", 1, g_dims, bias, 1), NULL};
    Onnx__AttributeProto *attributes[] = {onnx_attr_int("num_groups", G), onnx_attr_float("epsilon", 1e-3f), NULL};
    kiln_onnx_result result;
    kiln_program *program;
    kiln_session *session;
    kiln_tensor *x = tensor_of(KILN_F32, 3, x_dims, xs, sizeof xs);
    const kiln_tensor *y =
        run_x(one_node(18, onnx_node("GroupNormalization", "g", L("x", "scale", "bias"), L("y"), attributes),
                       (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("2", "4", "3")), NULL}, affine),
              &result, &program, &session, x, 0);
    const float *got = kiln_tensor_const_data(y);
    const int per = CH / G * S;
    for (int n = 0; n < B; n++)
        for (int g = 0; g < G; g++) {
            const float *block = xs + (n * CH + g * (CH / G)) * S;
            long double mean = 0, var = 0;
            for (int i = 0; i < per; i++)
                mean += block[i];
            mean /= per;
            for (int i = 0; i < per; i++)
                var += (block[i] - mean) * (block[i] - mean);
            var /= per;
            for (int i = 0; i < per; i++) {
                int at = (int)(block - xs) + i;
                expect_close(got[at], (block[i] - mean) / sqrtl(var + 1e-3L) * scale[g] + bias[g], "y", at);
            }
        }
    release_run(&result, program, session, x);
    Onnx__AttributeProto *stash[] = {onnx_attr_int("num_groups", G), onnx_attr_int("stash_type", 1), NULL};
    expect_refusal(one_node(18, onnx_node("GroupNormalization", "g", L("x", "scale", "bias"), L("y"), stash),
                            (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("2", "4", "3")), NULL}, affine),
                   "attribute 'stash_type' is not part of GroupNormalization-18");
}

/*
 * A dim_param that is an expression over declared dims (torch.export's
 * '10*s3' for wav2vec2's sample count) is that expression, with or
 * without a known value (onnx-test with --dim once refused the known
 * case: "--dim names no input size of the model: s3"); the guard checks
 * each run against it.
 */
static void dim_param_expressions_take_known_values(void **state)
{
    (void)state;
    kiln_onnx_dim dims[] = {{.name = "s3", .min = 1, .max = 4}};
    const int64_t six[] = {6}, seven[] = {7};
    kiln_tensor *x = tensor_of(KILN_F32, 1, six, (const float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
    const char *names[] = {"x"};
    const kiln_tensor *values[] = {x};
    for (int given = 0; given < 2; given++) {
        kiln_onnx_options options = {.struct_size = sizeof options, .dims = dims, .dim_count = 1};
        if (given) {
            options.known_input_count = 1;
            options.known_input_names = names;
            options.known_inputs = values;
        }
        kiln_onnx_result result;
        kiln_error err;
        Onnx__ModelProto *model = one_node(18, onnx_node("Relu", "r", L("x"), L("y"), NULL),
                                           (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 1, L("2*s3")), NULL}, NULL);
        if (import_with(model, &options, &result, &err) != KILN_OK)
            fail_msg("%s", err.message);
        kiln_program *program = load(&result);
        kiln_session *session;
        assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
        assert_int_equal(kiln_session_set_input(session, "x", x, NULL), KILN_OK);
        assert_int_equal(kiln_session_run(session, &err), KILN_OK);
        kiln_tensor *odd = tensor_of(KILN_F32, 1, seven, (const float[]){1, 2, 3, 4, 5, 6, 7}, 7 * sizeof(float));
        if (kiln_session_set_input(session, "x", odd, &err) == KILN_OK)
            assert_int_not_equal(kiln_session_run(session, &err), KILN_OK); /* 7 is no 2*s3 */
        assert_non_null(strstr(err.message, "x"));
        kiln_tensor_free(odd);
        kiln_session_free(session);
        kiln_program_free(program);
        onnx_result_release(&result);
    }
    kiln_tensor_free(x);
}

/*
 * Cast and CastLike from a float to an integer saturate a value out of the
 * integer's range, infinities included (ONNX leaves them undefined; T5's
 * relative position buckets cast log(0) = -inf to int64 and discard it):
 * to i32 the bounds are -2^31 and the largest f32 below 2^31, to u8 0 and
 * 255, so every value in range is the plain truncation. A NaN still fails.
 */
static void float_to_integer_casts_saturate(void **state)
{
    (void)state;
    const float values[] = {-INFINITY, INFINITY, 3.7f, -2.5f, 1e20f, -1e20f, 255.9f, 2147483520.0f};
    const int64_t dims[] = {8};
    const int32_t want_i32[] = {INT32_MIN, 2147483520, 3, -2, 2147483520, INT32_MIN, 255, 2147483520};
    const uint8_t want_u8[] = {0, 255, 3, 0, 255, 0, 255, 255};
    struct {
        int32_t onnx_type;
        const void *want;
        size_t width;
        bool like;
    } targets[] = {{ONNX__TENSOR_PROTO__DATA_TYPE__INT32, want_i32, 4, false},
                   {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, want_u8, 1, false},
                   {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, want_u8, 1, true}};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        Onnx__NodeProto *node =
            targets[t].like
                ? onnx_node("CastLike", "c", L("x", "like"), L("y"), NULL)
                : onnx_node("Cast", "c", L("x"), L("y"),
                            (Onnx__AttributeProto *[]){onnx_attr_int("to", targets[t].onnx_type), NULL});
        Onnx__ValueInfoProto *inputs[] = {onnx_value("x", F32, 1, L("8")),
                                          targets[t].like ? onnx_value("like", targets[t].onnx_type, 1, L("1")) : NULL,
                                          NULL};
        kiln_onnx_result result;
        kiln_program *program;
        kiln_session *session;
        kiln_tensor *x = tensor_of(KILN_F32, 1, dims, values, sizeof values);
        kiln_tensor *like = NULL;
        kiln_error err;
        if (targets[t].like) {
            if (import(one_node(18, node, inputs, NULL), &result, &err) != KILN_OK)
                fail_msg("%s", err.message);
            program = load(&result);
            like = tensor_of(KILN_U8, 1, (const int64_t[]){1}, (const uint8_t[]){0}, 1);
            assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
            assert_int_equal(kiln_session_set_input(session, "x", x, NULL), KILN_OK);
            assert_int_equal(kiln_session_set_input(session, "like", like, NULL), KILN_OK);
            if (kiln_session_run(session, &err) != KILN_OK)
                fail_msg("%s", err.message);
        } else {
            run_x(one_node(18, node, inputs, NULL), &result, &program, &session, x, 0);
        }
        assert_memory_equal(kiln_tensor_const_data(kiln_session_output(session, 0)), targets[t].want,
                            8 * targets[t].width);
        /* A NaN has no integer to saturate to. */
        ((float *)kiln_tensor_data(x))[2] = NAN;
        if (like == NULL) {
            assert_int_equal(kiln_session_set_input(session, "x", x, NULL), KILN_OK);
            assert_int_not_equal(kiln_session_run(session, &err), KILN_OK);
            assert_non_null(strstr(err.message, "nan"));
        }
        kiln_tensor_free(like);
        release_run(&result, program, session, x);
    }
}

/*
 * Col2Im over a symbolic batch: blocks of ones (2x2 over a 3x3 image,
 * stride 1) add up to the number of blocks covering each position.
 */
static void col2im_counts_overlaps_over_a_symbolic_batch(void **state)
{
    (void)state;
    kiln_onnx_dim dims[] = {{.name = "batch", .min = 1, .max = 3}};
    kiln_onnx_options options = {.struct_size = sizeof options, .dims = dims, .dim_count = 1};
    const int64_t two[] = {2};
    Onnx__TensorProto *shapes[] = {onnx_tensor_i64("image", 1, two, (const int64_t[]){3, 3}),
                                   onnx_tensor_i64("block", 1, two, (const int64_t[]){2, 2}), NULL};
    Onnx__ModelProto *model = one_node(18, onnx_node("Col2Im", "c", L("x", "image", "block"), L("y"), NULL),
                                       (Onnx__ValueInfoProto *[]){onnx_value("x", F32, 3, L("batch", "4", "4")), NULL},
                                       shapes);
    kiln_onnx_result result;
    kiln_error err;
    if (import_with(model, &options, &result, &err) != KILN_OK)
        fail_msg("%s", err.message);
    kiln_program *program = load(&result);
    float ones[2 * 4 * 4];
    for (int i = 0; i < 32; i++)
        ones[i] = 1.0f;
    kiln_tensor *x = tensor_of(KILN_F32, 3, (const int64_t[]){2, 4, 4}, ones, sizeof ones);
    kiln_session *session;
    assert_int_equal(kiln_session_new(program, NULL, &session, NULL), KILN_OK);
    assert_int_equal(kiln_session_set_input(session, "x", x, NULL), KILN_OK);
    if (kiln_session_run(session, &err) != KILN_OK)
        fail_msg("%s", err.message);
    const kiln_tensor *y = kiln_session_output(session, 0);
    assert_int_equal(kiln_tensor_rank(y), 4);
    const float want[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    for (int i = 0; i < 18; i++)
        assert_true(((const float *)kiln_tensor_const_data(y))[i] == want[i % 9]);
    release_run(&result, program, session, x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(losses_match_a_naive_reference, release_arena),
        cmocka_unit_test_teardown(mean_over_nothing_is_nan, release_arena),
        cmocka_unit_test_teardown(constructs_kiln_cannot_match_are_refused, release_arena),
        cmocka_unit_test_teardown(old_opsets_bind_each_node_to_its_version, release_arena),
        cmocka_unit_test_teardown(ops_are_refused_below_the_opset_that_adds_them, release_arena),
        cmocka_unit_test_teardown(lrn_matches_a_naive_reference, release_arena),
        cmocka_unit_test_teardown(resize_targets_are_folded, release_arena),
        cmocka_unit_test_teardown(a_pad_of_nothing_is_no_node, release_arena),
        cmocka_unit_test_teardown(quantization_matches_the_formulas, release_arena),
        cmocka_unit_test_teardown(cosine_windows_match_their_formulas, release_arena),
        cmocka_unit_test_teardown(integer_products_match_integer_loops, release_arena),
        cmocka_unit_test_teardown(recurrent_layers_fill_absent_operands, release_arena),
        cmocka_unit_test_teardown(recurrent_zero_state_over_a_symbolic_batch, release_arena),
        cmocka_unit_test_teardown(opset_18_forms_are_read_at_18_only, release_arena),
        cmocka_unit_test_teardown(empty_max_and_min_are_the_extremes, release_arena),
        cmocka_unit_test_teardown(group_normalization_18_matches_a_naive_reference, release_arena),
        cmocka_unit_test_teardown(dim_param_expressions_take_known_values, release_arena),
        cmocka_unit_test_teardown(float_to_integer_casts_saturate, release_arena),
        cmocka_unit_test_teardown(col2im_counts_overlaps_over_a_symbolic_batch, release_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
