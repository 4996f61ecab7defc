/*
 * test_fast_paths.c — the oneDNN fast paths (f32 matmul, gemm, conv,
 * conv_transpose, max_pool, avg_pool) against the reference kernels and
 * against exact references written here, and the per-node primitive cache.
 *
 * Every case runs one program in two sessions of the same process: one
 * default (oneDNN when the build has it) and one with reference_kernels.
 * Both are compared with a reference that walks the output by flat index,
 * recovers the multi-index by div/mod and sums in long double, within the
 * bound of spec/opset.md ("Fast paths"):
 *   |got - exact| <= (K + 2) * 2^-23 * (|alpha| * sum_p |a_ip b_pj| + |beta c_ij|)
 * plus 1e-30 for underflow. Specials: where the exact value is NaN both
 * must be NaN; an infinite exact value must be matched exactly.
 * conv, max_pool and avg_pool are checked the same way against a reference
 * that walks each output's kernel taps by flat index (div/mod) and skips
 * those outside the input: conv within the same bound with
 * K = C/group * kernel volume (|bias| added to the magnitude), avg_pool
 * within (K + 2) * 2^-23 * sum |x_tap| / count with K the kernel volume,
 * max_pool exactly; conv_transpose against a scatter (each input element
 * times each tap, added where it lands) within the conv bound. Their cases
 * include what the fast path must decline
 * (a NaN for max_pool, an infinite weight, windows that see no input,
 * count_include_pad past the end pad with ceil_mode), which the reference
 * kernels then compute.
 * In builds without oneDNN both sessions run the reference, and the cache
 * tests check that nothing was built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#include "onednn.h"

#include "prng.h"

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x243F6A8885A308D3u;

/* A full-precision f32 in [-1, 1): products and sums really round. */
static float random_float(void)
{
    return (float)((double)(xorshift64_star_next(&rng_state) >> 40) / (double)(1u << 23) - 1.0);
}

typedef struct shape {
    uint32_t rank;
    int64_t axes[8];
} shape;

static uint64_t count_of(const shape *s)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < s->rank; i++)
        n *= (uint64_t)s->axes[i];
    return n;
}

static kiln_tensor *random_tensor(const shape *s)
{
    kiln_tensor *t;
    kiln_error err;
    assert_int_equal(kiln_tensor_new(KILN_F32, s->rank, s->axes, &t, &err), KILN_OK);
    float *data = kiln_tensor_data(t);
    for (uint64_t i = 0; i < count_of(s); i++)
        data[i] = random_float();
    return t;
}

/* "[2, 3]" for the builder. */
static void shape_text(const shape *s, char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "[");
    for (uint32_t i = 0; i < s->rank; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? ", " : "", (long long)s->axes[i]);
    snprintf(out + used, size - used, "]");
}

/*
 * Operand 1 as a program weight: while `constant_b` is set, one_node_program
 * makes operand 1 ("b") a weight holding its values instead of an input,
 * and run() does not bind it. Fast paths pack a program weight once
 * (kernel_context.h), so every check runs in both modes (`b_is_weight`).
 */
static bool b_is_weight;
static const kiln_tensor *constant_b;

/* A program of one node over inputs a, b (and c); b a weight with constant_b. */
static kiln_program *one_node_program(const char *op, uint32_t input_count, const shape *shapes,
                                      uint32_t attribute_count, const kiln_attribute *attributes)
{
    static const char *const names[] = {"a", "b", "c"};
    kiln_builder *b;
    kiln_error err;
    kiln_value inputs[3], out;
    assert_int_equal(kiln_builder_new("fast", &b, &err), KILN_OK);
    for (uint32_t i = 0; i < input_count; i++) {
        char text[128];
        shape_text(&shapes[i], text, sizeof text);
        if (i == 1 && constant_b)
            assert_int_equal(kiln_builder_add_weight(b, names[i], KILN_WEIGHT_PARAMETER, KILN_F32, shapes[i].rank,
                                                     shapes[i].axes, kiln_tensor_const_data(constant_b), &inputs[i],
                                                     &err),
                             KILN_OK);
        else
            assert_int_equal(kiln_builder_add_input(b, names[i], KILN_F32, text, &inputs[i], &err), KILN_OK);
    }
    if (attribute_count)
        assert_int_equal(kiln_builder_add_op_with_attributes(b, op, input_count, inputs, attribute_count, attributes,
                                                             &out, &err),
                         KILN_OK);
    else
        assert_int_equal(kiln_builder_add_op(b, op, input_count, inputs, &out, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", out, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    kiln_builder_free(b);
    return program;
}

static kiln_session *new_session(const kiln_program *program, bool reference)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.reference_kernels = reference;
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    return session;
}

static const kiln_tensor *run(kiln_session *session, uint32_t input_count, kiln_tensor *const *inputs)
{
    static const char *const names[] = {"a", "b", "c"};
    kiln_error err;
    for (uint32_t i = 0; i < input_count; i++)
        if (i != 1 || !constant_b)
            assert_int_equal(kiln_session_set_input(session, names[i], inputs[i], &err), KILN_OK);
    kiln_status status = kiln_session_run(session, &err);
    if (status != KILN_OK)
        fail_msg("run failed: %s", err.message);
    return kiln_session_output(session, 0);
}

/* Compare one computed element with its exact value and bound scale. */
static void check_element(float got, long double exact, long double magnitude, int64_t k, const char *what,
                          uint64_t index)
{
    if (isnan(exact)) {
        if (!isnan(got))
            fail_msg("%s: element %llu is %g, expected NaN", what, (unsigned long long)index, (double)got);
        return;
    }
    if (isinf(exact)) {
        if ((long double)got != exact)
            fail_msg("%s: element %llu is %g, expected %Lg", what, (unsigned long long)index, (double)got, exact);
        return;
    }
    long double bound = (long double)(k + 2) * ldexpl(1.0L, -23) * magnitude + 1e-30L;
    long double error = fabsl((long double)got - exact);
    if (!(error <= bound))
        fail_msg("%s: element %llu is %.9g, exact %.12Lg, error %Lg > bound %Lg", what, (unsigned long long)index,
                 (double)got, exact, error, bound);
}

/* ---------------------------------------------------- matmul reference */

/*
 * Offset of output batch multi-index `index` (rank `batch_rank`) in an
 * operand whose batch axes are `shape[0 .. rank-3]` (rank >= 3), right
 * aligned, broadcasting size-1 axes; in elements, matrices of `matrix`.
 */
static uint64_t batch_offset(const shape *s, uint32_t batch_rank, const int64_t *index, uint64_t matrix)
{
    if (s->rank < 3)
        return 0;
    uint32_t own = s->rank - 2;
    uint64_t offset = 0;
    for (uint32_t i = 0; i < own; i++) {
        int64_t at = index[batch_rank - own + i];
        offset = offset * (uint64_t)s->axes[i] + (uint64_t)(s->axes[i] == 1 ? 0 : at);
    }
    return offset * matrix;
}

static void check_matmul(const shape *a_shape, const shape *b_shape, float special)
{
    shape shapes[2] = {*a_shape, *b_shape};
    kiln_tensor *inputs[2] = {random_tensor(a_shape), random_tensor(b_shape)};
    constant_b = b_is_weight ? inputs[1] : NULL;
    kiln_program *program = one_node_program("matmul", 2, shapes, 0, NULL);
    if (special != 0.0f)
        ((float *)kiln_tensor_data(inputs[0]))[0] = special;
    kiln_session *fast = new_session(program, false), *reference = new_session(program, true);
    const kiln_tensor *got[2] = {run(fast, 2, inputs), run(reference, 2, inputs)};

    const float *a = kiln_tensor_const_data(inputs[0]), *b = kiln_tensor_const_data(inputs[1]);
    int64_t m = a_shape->rank >= 2 ? a_shape->axes[a_shape->rank - 2] : 1, k = a_shape->axes[a_shape->rank - 1];
    int64_t n = b_shape->rank >= 2 ? b_shape->axes[b_shape->rank - 1] : 1;
    const kiln_tensor *out = got[0];
    uint32_t out_rank = kiln_tensor_rank(out);
    uint32_t batch_rank = out_rank - (a_shape->rank >= 2) - (b_shape->rank >= 2);
    int64_t out_shape[8];
    uint64_t total = 1;
    for (uint32_t i = 0; i < out_rank; i++) {
        out_shape[i] = kiln_tensor_shape(out)[i];
        total *= (uint64_t)out_shape[i];
    }
    for (uint64_t flat = 0; flat < total; flat++) {
        /* Output multi-index by div/mod: batch axes, then i and j. */
        int64_t index[8];
        uint64_t rest = flat;
        for (uint32_t axis = out_rank; axis-- > 0;) {
            index[axis] = (int64_t)(rest % (uint64_t)out_shape[axis]);
            rest /= (uint64_t)out_shape[axis];
        }
        int64_t i = a_shape->rank >= 2 ? index[batch_rank] : 0;
        int64_t j = b_shape->rank >= 2 ? index[out_rank - 1] : 0;
        uint64_t a_base = batch_offset(a_shape, batch_rank, index, (uint64_t)(m * k));
        uint64_t b_base = batch_offset(b_shape, batch_rank, index, (uint64_t)(k * n));
        long double exact = 0, magnitude = 0;
        for (int64_t p = 0; p < k; p++) {
            long double term = (long double)a[a_base + (uint64_t)(i * k + p)] * b[b_base + (uint64_t)(p * n + j)];
            exact += term;
            magnitude += fabsl(term);
        }
        for (int path = 0; path < 2; path++)
            check_element(((const float *)kiln_tensor_const_data(got[path]))[flat], exact, magnitude, k,
                          path ? "matmul reference" : "matmul fast path", flat);
    }
    kiln_session_free(fast);
    kiln_session_free(reference);
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
    constant_b = NULL;
}

static void matmul_matches_the_exact_product(void **state)
{
    (void)state;
    for (int weight = 0; weight < 2; weight++) {
        b_is_weight = weight;
        check_matmul(&(shape){2, {1, 1}}, &(shape){2, {1, 1}}, 0);
        check_matmul(&(shape){2, {7, 13}}, &(shape){2, {13, 5}}, 0);
        check_matmul(&(shape){2, {33, 300}}, &(shape){2, {300, 65}}, 0);
        check_matmul(&(shape){2, {64, 1000}}, &(shape){2, {1000, 3}}, 0);
        /* Rank-1 operands: vector-matrix, matrix-vector, dot product. */
        check_matmul(&(shape){1, {9}}, &(shape){2, {9, 4}}, 0);
        check_matmul(&(shape){2, {4, 9}}, &(shape){1, {9}}, 0);
        check_matmul(&(shape){1, {17}}, &(shape){1, {17}}, 0);
        /* Batches, broadcasting on either side, different batch ranks. */
        check_matmul(&(shape){3, {3, 4, 5}}, &(shape){3, {3, 5, 6}}, 0);
        check_matmul(&(shape){4, {2, 1, 4, 5}}, &(shape){3, {3, 5, 6}}, 0);
        check_matmul(&(shape){3, {1, 4, 5}}, &(shape){4, {2, 3, 5, 6}}, 0);
        check_matmul(&(shape){2, {4, 5}}, &(shape){3, {3, 5, 2}}, 0);
        check_matmul(&(shape){3, {3, 4, 5}}, &(shape){1, {5}}, 0);
        /* One matrix b for every batch of a: run as one [batch * m, k] product. */
        check_matmul(&(shape){3, {2, 33, 40}}, &(shape){2, {40, 17}}, 0);
        check_matmul(&(shape){4, {2, 3, 4, 5}}, &(shape){2, {5, 6}}, 0);
        check_matmul(&(shape){3, {3, 1, 9}}, &(shape){2, {9, 1}}, 0);
        /* Specials propagate: a NaN, an infinity (which meets signs: inf - inf). */
        check_matmul(&(shape){2, {3, 8}}, &(shape){2, {8, 4}}, NAN);
        check_matmul(&(shape){2, {3, 8}}, &(shape){2, {8, 4}}, INFINITY);
        /* One row times a matrix (kiln's own loops, vector_matrix.h): a decode step's projections,
         * rows of B left over after the blocks of four, widths split over threads, specials. */
        check_matmul(&(shape){3, {1, 1, 256}}, &(shape){2, {256, 1024}}, 0);
        check_matmul(&(shape){2, {1, 1027}}, &(shape){2, {1027, 300}}, 0);
        check_matmul(&(shape){1, {6}}, &(shape){2, {6, 1}}, 0);
        check_matmul(&(shape){2, {1, 9}}, &(shape){2, {9, 70}}, NAN);
        check_matmul(&(shape){2, {1, 9}}, &(shape){2, {9, 70}}, INFINITY);
    }
    b_is_weight = false;
}

/* ------------------------------------------------------ gemm reference */

typedef struct gemm_case {
    int64_t m, k, n;
    bool trans_a, trans_b;
    double alpha, beta;
    int c_form; /* 0 none, 1 [N], 2 [1, N], 3 [M, 1], 4 [M, N], 5 scalar [] */
    float c_special; /* written into C[0] when not 0 */
} gemm_case;

static void check_gemm(const gemm_case *g)
{
    shape shapes[3] = {
        {2, {g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k}},
        {2, {g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n}},
        {0, {0}},
    };
    switch (g->c_form) {
    case 1: shapes[2] = (shape){1, {g->n}}; break;
    case 2: shapes[2] = (shape){2, {1, g->n}}; break;
    case 3: shapes[2] = (shape){2, {g->m, 1}}; break;
    case 4: shapes[2] = (shape){2, {g->m, g->n}}; break;
    default: break;
    }
    uint32_t count = g->c_form ? 3 : 2;
    kiln_attribute attributes[4] = {
        {.name = "alpha", .type = KILN_ATTRIBUTE_FLOAT, .f = g->alpha},
        {.name = "beta", .type = KILN_ATTRIBUTE_FLOAT, .f = g->beta},
        {.name = "transA", .type = KILN_ATTRIBUTE_INT, .i = g->trans_a},
        {.name = "transB", .type = KILN_ATTRIBUTE_INT, .i = g->trans_b},
    };
    kiln_tensor *inputs[3] = {random_tensor(&shapes[0]), random_tensor(&shapes[1]),
                              count > 2 ? random_tensor(&shapes[2]) : NULL};
    constant_b = b_is_weight ? inputs[1] : NULL;
    kiln_program *program = one_node_program("gemm", count, shapes, 4, attributes);
    if (g->c_special != 0.0f)
        ((float *)kiln_tensor_data(inputs[2]))[0] = g->c_special;
    kiln_session *fast = new_session(program, false), *reference = new_session(program, true);
    const kiln_tensor *got[2] = {run(fast, count, inputs), run(reference, count, inputs)};

    const float *a = kiln_tensor_const_data(inputs[0]), *b = kiln_tensor_const_data(inputs[1]);
    const float *c = count > 2 ? kiln_tensor_const_data(inputs[2]) : NULL;
    long double alpha = (float)g->alpha, beta = (float)g->beta;
    for (int64_t i = 0; i < g->m; i++) {
        for (int64_t j = 0; j < g->n; j++) {
            long double acc = 0, magnitude = 0;
            for (int64_t p = 0; p < g->k; p++) {
                long double x = g->trans_a ? a[p * g->m + i] : a[i * g->k + p];
                long double y = g->trans_b ? b[j * g->k + p] : b[p * g->n + j];
                acc += x * y;
                magnitude += fabsl(x * y);
            }
            long double exact = alpha * acc, scale = fabsl(alpha) * magnitude;
            if (c) {
                int64_t at = g->c_form == 1 || g->c_form == 2 ? j : g->c_form == 3 ? i
                           : g->c_form == 4 ? i * g->n + j : 0;
                exact += beta * c[at];
                scale += fabsl(beta * c[at]);
            }
            for (int path = 0; path < 2; path++)
                check_element(((const float *)kiln_tensor_const_data(got[path]))[i * g->n + j], exact, scale, g->k,
                              path ? "gemm reference" : "gemm fast path", (uint64_t)(i * g->n + j));
        }
    }
    kiln_session_free(fast);
    kiln_session_free(reference);
    for (uint32_t i = 0; i < count; i++)
        kiln_tensor_free(inputs[i]);
    kiln_program_free(program);
    constant_b = NULL;
}

static void gemm_matches_the_exact_product(void **state)
{
    (void)state;
    static const gemm_case cases[] = {
        {1, 1, 1, false, false, 1.0, 1.0, 0, 0},
        {16, 784, 512, false, false, 1.0, 1.0, 1, 0}, /* a dense layer: fused bias */
        {16, 512, 10, false, true, 1.0, 1.0, 2, 0},   /* weights stored [N, K] */
        {2, 1280, 1000, false, true, 1.0, 1.0, 1, 0}, /* a classifier: a 5 MiB weight, packed on huge pages */
        {7, 5, 9, true, false, 1.0, 1.0, 4, 0},
        {7, 5, 9, true, true, 0.5, -2.0, 4, 0},
        {12, 40, 6, false, false, -1.5, 0.25, 3, 0},  /* C a column */
        {12, 40, 6, false, false, 2.0, 3.0, 5, 0},    /* C a scalar */
        {12, 40, 6, false, false, 2.0, 1.0, 1, 0},    /* alpha != 1 with a row C: no fused bias */
        {9, 30, 11, true, false, 3.0, 0.0, 0, 0},     /* no C */
        /* beta = 0 still reads C: an infinity gives NaN, as the formula says. */
        {4, 6, 5, false, false, 1.0, 0.0, 4, INFINITY},
        {4, 6, 5, false, false, 1.0, 1.0, 1, NAN},
    };
    for (int weight = 0; weight < 2; weight++) {
        b_is_weight = weight;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_gemm(&cases[i]);
    }
    b_is_weight = false;
}

/* ------------------------------------------------- conv and pooling */

typedef struct window_case {
    const char *op; /* conv, max_pool, avg_pool, global_max_pool or global_avg_pool (kernel: the plane) */
    shape x, weight; /* weight: conv only */
    bool bias;
    int64_t kernel[3];    /* pools: kernel_shape */
    int64_t strides[3];   /* 0: 1 */
    int64_t dilations[3]; /* 0: 1 */
    int64_t pads[6];      /* begins, then ends */
    int64_t group;        /* conv; 0: 1 */
    const char *auto_pad; /* NULL: the pads above */
    int ceil_mode, include_pad;
    float x_special, weight_special; /* written into element 0 when not 0 */
    bool declined; /* the fast path must leave it to the reference */
} window_case;

static int64_t or_one(int64_t v)
{
    return v ? v : 1;
}

/*
 * Output extent and pads in effect of spatial axis `a`, by the ONNX rules
 * written out here: SAME keeps ceil(in / stride) and splits the total pad
 * (odd unit at the end for SAME_UPPER); explicit pads give
 * floor((padded - dilated) / stride) + 1, or with ceil_mode the ceiling,
 * less a last window that would start past the input and the begin pad.
 */
static int64_t case_extent(const window_case *c, uint32_t a, int64_t in, int64_t *begin)
{
    int64_t s = or_one(c->strides[a]), d = or_one(c->dilations[a]), spatial = c->x.rank - 2;
    int64_t k = strcmp(c->op, "conv") == 0 ? c->weight.axes[a + 2] : c->kernel[a];
    int64_t dilated = (k - 1) * d + 1;
    if (c->auto_pad) {
        int64_t out = (in + s - 1) / s, total = (out - 1) * s + dilated - in;
        if (total < 0)
            total = 0;
        *begin = strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        return out;
    }
    int64_t pb = c->pads[a], pe = c->pads[spatial + a], span = in + pb + pe - dilated;
    *begin = pb;
    if (!c->ceil_mode)
        return span / s + 1;
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + pb)
        out--;
    return out;
}

static kiln_program *window_program(const window_case *c)
{
    uint32_t spatial = c->x.rank - 2, count = 0;
    kiln_attribute attributes[8];
    int64_t strides[3], dilations[3];
    for (uint32_t a = 0; a < spatial; a++) {
        strides[a] = or_one(c->strides[a]);
        dilations[a] = or_one(c->dilations[a]);
    }
    bool conv = strcmp(c->op, "conv") == 0;
    if (strncmp(c->op, "global_", 7) == 0) /* no attributes: one window per plane */
        return one_node_program(c->op, 1, &c->x, 0, attributes);
    attributes[count++] = (kiln_attribute){.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides,
                                           .count = spatial};
    attributes[count++] = (kiln_attribute){.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = dilations,
                                           .count = spatial};
    if (c->auto_pad)
        attributes[count++] = (kiln_attribute){.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = c->auto_pad};
    else
        attributes[count++] = (kiln_attribute){.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = c->pads,
                                               .count = 2 * spatial};
    if (conv) {
        attributes[count++] = (kiln_attribute){.name = "group", .type = KILN_ATTRIBUTE_INT, .i = or_one(c->group)};
    } else {
        attributes[count++] = (kiln_attribute){.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS,
                                               .ints = c->kernel, .count = spatial};
        attributes[count++] = (kiln_attribute){.name = "ceil_mode", .type = KILN_ATTRIBUTE_INT, .i = c->ceil_mode};
    }
    if (strcmp(c->op, "avg_pool") == 0)
        attributes[count++] = (kiln_attribute){.name = "count_include_pad", .type = KILN_ATTRIBUTE_INT,
                                               .i = c->include_pad};
    shape shapes[3] = {c->x, c->weight, {1, {c->weight.axes[0]}}};
    return one_node_program(c->op, conv ? (c->bias ? 3 : 2) : 1, shapes, count, attributes);
}

/* Both paths' outputs `got` of case `c` on `inputs` against the exact tap walk. */
static void compare_window(const window_case *c, kiln_tensor *const *inputs, const kiln_tensor *const *got)
{
    bool conv = strcmp(c->op, "conv") == 0, max = strstr(c->op, "max_pool") != NULL;
    uint32_t input_count = conv ? (c->bias ? 3 : 2) : 1, spatial = c->x.rank - 2;
    const float *x = kiln_tensor_const_data(inputs[0]);
    const float *weight = conv ? kiln_tensor_const_data(inputs[1]) : NULL;
    const float *bias = input_count > 2 ? kiln_tensor_const_data(inputs[2]) : NULL;
    int64_t in[3], out[3], begin[3], kernel[3], kernel_volume = 1, out_count = 1;
    int64_t channels = c->x.axes[1], out_channels = conv ? c->weight.axes[0] : channels;
    int64_t group = conv ? or_one(c->group) : channels, in_per_group = channels / group;
    assert_int_equal(kiln_tensor_rank(got[0]), c->x.rank);
    assert_int_equal(kiln_tensor_shape(got[0])[1], out_channels);
    for (uint32_t a = 0; a < spatial; a++) {
        in[a] = c->x.axes[a + 2];
        out[a] = case_extent(c, a, in[a], &begin[a]);
        kernel[a] = conv ? c->weight.axes[a + 2] : c->kernel[a];
        kernel_volume *= kernel[a];
        out_count *= out[a];
        assert_int_equal(kiln_tensor_shape(got[0])[a + 2], out[a]);
    }
    uint64_t total = (uint64_t)(c->x.axes[0] * out_channels * out_count);
    for (uint64_t flat = 0; flat < total; flat++) {
        /* Output multi-index (n, m, o...) by div/mod. */
        int64_t o[3];
        uint64_t rest = flat;
        for (uint32_t a = spatial; a-- > 0;) {
            o[a] = (int64_t)(rest % (uint64_t)out[a]);
            rest /= (uint64_t)out[a];
        }
        int64_t m = (int64_t)(rest % (uint64_t)out_channels), n = (int64_t)(rest / (uint64_t)out_channels);
        int64_t first_channel = conv ? m / (out_channels / group) * in_per_group : m;
        long double sum = bias ? bias[m] : 0, magnitude = bias ? fabsl((long double)bias[m]) : 0;
        long double largest = -INFINITY;
        bool nan = false;
        int64_t inside = 0, inside_pads = 0;
        for (int64_t ci = 0; ci < (conv ? in_per_group : 1); ci++) {
            for (int64_t t = 0; t < kernel_volume; t++) {
                /* Tap multi-index by div/mod, its input position per axis. */
                int64_t tap[3], position = 0, in_pads = 1, in_input = 1, tap_rest = t;
                for (uint32_t a = spatial; a-- > 0;) {
                    tap[a] = tap_rest % kernel[a];
                    tap_rest /= kernel[a];
                }
                for (uint32_t a = 0; a < spatial; a++) {
                    int64_t p = o[a] * or_one(c->strides[a]) - begin[a] + tap[a] * or_one(c->dilations[a]);
                    int64_t end_pad = c->auto_pad ? 0 : c->pads[spatial + a];
                    in_input &= p >= 0 && p < in[a];
                    in_pads &= p >= -begin[a] && p < in[a] + end_pad;
                    position = position * in[a] + p;
                }
                inside_pads += in_pads;
                if (!in_input)
                    continue;
                inside++;
                long double v = x[(n * channels + first_channel + ci) * (int64_t)(count_of(&c->x) /
                                                                                 (uint64_t)(c->x.axes[0] * channels)) +
                                  position];
                if (conv) {
                    long double term = v * weight[(m * in_per_group + ci) * kernel_volume + t];
                    sum += term;
                    magnitude += fabsl(term);
                } else {
                    nan = nan || isnan(v);
                    largest = v > largest ? v : largest;
                    sum += v;
                    magnitude += fabsl(v);
                }
            }
        }
        long double exact;
        int64_t k = conv ? in_per_group * kernel_volume : kernel_volume;
        if (conv) {
            exact = sum;
        } else if (max) {
            exact = nan ? NAN : largest;
            magnitude = 0; /* max_pool is exact */
        } else {
            int64_t divisor = c->include_pad ? inside_pads : inside;
            exact = divisor ? sum / divisor : NAN;
            magnitude = divisor ? magnitude / divisor : 0;
        }
        for (int path = 0; path < 2; path++) {
            char what[96];
            snprintf(what, sizeof what, "%s %s", c->op, path ? "reference" : "fast path");
            check_element(((const float *)kiln_tensor_const_data(got[path]))[flat], exact, magnitude, k, what, flat);
        }
    }
}

/* Random values in every element, then the case's specials in element 0. */
static void refill(kiln_tensor *t, float special)
{
    float *v = kiln_tensor_data(t);
    for (uint64_t i = 0; i < kiln_tensor_element_count(t); i++)
        v[i] = random_float();
    if (special != 0.0f)
        v[0] = special;
}

/*
 * Case `c` in a fast and a reference session, twice: the second run with
 * new values in x (and in the weight and bias unless the weight is a
 * program weight), which a primitive cached by the first must not miss.
 */
static void check_window(const window_case *c)
{
    bool conv = strcmp(c->op, "conv") == 0;
    uint32_t input_count = conv ? (c->bias ? 3 : 2) : 1;
    shape bias_shape = {1, {c->weight.axes[0]}};
    kiln_tensor *inputs[3] = {random_tensor(&c->x), conv ? random_tensor(&c->weight) : NULL,
                              input_count > 2 ? random_tensor(&bias_shape) : NULL};
    constant_b = conv && b_is_weight ? inputs[1] : NULL;
    refill(inputs[0], c->x_special);
    if (conv)
        refill(inputs[1], c->weight_special);
    kiln_program *program = window_program(c);
    kiln_session *fast = new_session(program, false), *reference = new_session(program, true);
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            refill(inputs[0], c->x_special);
            if (conv && !constant_b)
                refill(inputs[1], c->weight_special);
            if (inputs[2])
                refill(inputs[2], 0.0f);
        }
        uint64_t built = kiln_onednn_primitives_built();
        const kiln_tensor *got[2] = {run(fast, input_count, inputs), run(reference, input_count, inputs)};
        /* The fast path really ran (one primitive on the first run, none
         * after), or really declined. */
        uint64_t expected = kiln_onednn_enabled() && !c->declined && round == 0 ? 1 : 0;
        assert_int_equal(kiln_onednn_primitives_built() - built, expected);
        compare_window(c, inputs, got);
    }
    kiln_session_free(fast);
    kiln_session_free(reference);
    for (uint32_t i = 0; i < 3; i++)
        kiln_tensor_free(inputs[i]);
    kiln_program_free(program);
    constant_b = NULL;
}

static void conv_matches_the_exact_sum(void **state)
{
    (void)state;
    static const window_case cases[] = {
        {"conv", {4, {2, 3, 9, 11}}, {4, {4, 3, 3, 3}}, true, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, 0, 0, false},
        /* Strides, dilation and pads differ per axis. */
        {"conv", {4, {1, 4, 17, 13}}, {4, {6, 4, 3, 2}}, true, {0}, {2, 3}, {2, 1}, {1, 0, 2, 1}, 0, NULL, 0, 0, 0,
         0, false},
        /* Groups; depthwise with a stride. */
        {"conv", {4, {2, 6, 8, 8}}, {4, {9, 2, 3, 3}}, false, {0}, {0}, {0}, {1, 1, 1, 1}, 3, NULL, 0, 0, 0, 0, false},
        {"conv", {4, {1, 8, 12, 12}}, {4, {8, 1, 3, 3}}, true, {0}, {2, 2}, {0}, {1, 1, 1, 1}, 8, NULL, 0, 0, 0, 0,
         false},
        /* 1d dilated, 3d strided. */
        {"conv", {3, {3, 5, 40}}, {3, {7, 5, 5}}, true, {0}, {0}, {3}, {2, 2}, 0, NULL, 0, 0, 0, 0, false},
        {"conv", {5, {1, 3, 6, 7, 8}}, {5, {4, 3, 3, 3, 3}}, true, {0}, {1, 2, 2}, {0}, {1, 1, 1, 1, 1, 1}, 0, NULL, 0,
         0, 0, 0, false},
        /* SAME pads derived from the extent; a 1x1 conv; a long inner sum (K = 2304). */
        {"conv", {4, {1, 3, 10, 10}}, {4, {5, 3, 4, 4}}, true, {0}, {3, 3}, {0}, {0}, 0, "SAME_UPPER", 0, 0, 0, 0,
         false},
        {"conv", {4, {1, 3, 10, 9}}, {4, {5, 3, 4, 3}}, false, {0}, {2, 2}, {0}, {0}, 0, "SAME_LOWER", 0, 0, 0, 0,
         false},
        {"conv", {4, {2, 64, 14, 14}}, {4, {128, 64, 1, 1}}, true, {0}, {0}, {0}, {0}, 0, NULL, 0, 0, 0, 0, false},
        {"conv", {4, {1, 256, 8, 8}}, {4, {32, 256, 3, 3}}, true, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, 0, 0,
         false},
        /* A 9 MiB weight: packed into a buffer of kiln's on huge pages (onednn_entry.c, weight_buffer). */
        {"conv", {4, {1, 512, 4, 4}}, {4, {512, 512, 3, 3}}, true, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, 0, 0,
         false},
        /* Specials: NaN and inf in x propagate; an infinite weight is declined
         * (padding taps must not meet it) and the reference computes it. */
        {"conv", {4, {1, 2, 5, 5}}, {4, {3, 2, 3, 3}}, true, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, NAN, 0, false},
        {"conv", {4, {1, 2, 5, 5}}, {4, {3, 2, 3, 3}}, true, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, INFINITY, 0,
         false},
        {"conv", {4, {1, 2, 5, 5}}, {4, {3, 2, 3, 3}}, false, {0}, {0}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, 0, INFINITY,
         true},
    };
    for (int weight = 0; weight < 2; weight++) {
        b_is_weight = weight;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_window(&cases[i]);
    }
    b_is_weight = false;
}

static void pools_match_the_exact_window(void **state)
{
    (void)state;
    static const window_case cases[] = {
        {"max_pool", {4, {2, 3, 15, 16}}, {0}, false, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 0, 0, 0, false},
        {"max_pool", {4, {1, 2, 10, 10}}, {0}, false, {3, 3}, {2, 2}, {0}, {0}, 0, NULL, 1, 0, 0, 0, false},
         /* ceil_mode */
        {"max_pool", {4, {1, 3, 9, 9}}, {0}, false, {2, 2}, {0}, {2, 2}, {0}, 0, NULL, 0, 0, 0, 0, false},
           /* dilated */
        {"max_pool", {3, {2, 3, 31}}, {0}, false, {4}, {3}, {0}, {1, 2}, 0, NULL, 1, 0, 0, 0, false},
        {"max_pool", {4, {1, 2, 7, 8}}, {0}, false, {3, 2}, {2, 3}, {0}, {0}, 0, "SAME_UPPER", 0, 0, 0, 0, false},
        {"avg_pool", {4, {2, 3, 11, 12}}, {0}, false, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 0, NULL, 1, 0, 0, 0, false},
        {"avg_pool", {4, {2, 3, 11, 12}}, {0}, false, {3, 3}, {2, 2}, {0}, {1, 1, 1, 1}, 0, NULL, 0, 1, 0, 0, false},
        {"avg_pool", {5, {1, 2, 5, 6, 7}}, {0}, false, {2, 3, 2}, {1, 2, 2}, {0}, {1, 1, 0, 0, 1, 1}, 0, NULL, 0, 0,
         0, 0, false},
        {"avg_pool", {4, {1, 2, 9, 9}}, {0}, false, {3, 3}, {0}, {2, 2}, {2, 2, 2, 2}, 0, NULL, 0, 1, 0, 0, false},
        {"avg_pool", {4, {1, 4, 32, 32}}, {0}, false, {2, 2}, {2, 2}, {0}, {0}, 0, NULL, 0, 0, 0, 0, false},
        /* count_include_pad where a ceil_mode window passes the end pad: the
         * op divides by the taps inside the declared pads (declined). */
        {"avg_pool", {4, {1, 2, 11, 11}}, {0}, false, {3, 3}, {2, 2}, {0}, {1, 1, 0, 0}, 0, NULL, 1, 1, 0, 0, true},
        {"avg_pool", {4, {1, 2, 10, 10}}, {0}, false, {3, 3}, {2, 2}, {0}, {1, 1, 0, 0}, 0, NULL, 1, 1, 0, 0, false},
        /* A window that sees no input: max -inf, average NaN (declined). */
        {"max_pool", {3, {1, 2, 1}}, {0}, false, {2}, {0}, {3}, {1, 2}, 0, NULL, 0, 0, 0, 0, true},
        {"avg_pool", {3, {1, 2, 1}}, {0}, false, {2}, {0}, {3}, {1, 2}, 0, NULL, 0, 0, 0, 0, true},
        /* Specials: a NaN wins a max window (declined), propagates in an average; inf. */
        {"max_pool", {4, {1, 2, 6, 6}}, {0}, false, {2, 2}, {2, 2}, {0}, {0}, 0, NULL, 0, 0, NAN, 0, true},
        {"avg_pool", {4, {1, 2, 6, 6}}, {0}, false, {2, 2}, {2, 2}, {0}, {0}, 0, NULL, 0, 0, NAN, 0, false},
        {"max_pool", {4, {1, 2, 6, 6}}, {0}, false, {2, 2}, {1, 1}, {0}, {0}, 0, NULL, 0, 0, INFINITY, 0, false},
        {"avg_pool", {4, {1, 2, 6, 6}}, {0}, false, {2, 2}, {1, 1}, {0}, {0}, 0, NULL, 0, 0, -INFINITY, 0, false},
        /* Global pools: one window the size of the plane (1 to 3 spatial axes). */
        {"global_avg_pool", {4, {2, 5, 16, 16}}, {0}, false, {16, 16}, {0}, {0}, {0}, 0, NULL, 0, 0, 0, 0, false},
        {"global_avg_pool", {3, {3, 4, 37}}, {0}, false, {37}, {0}, {0}, {0}, 0, NULL, 0, 0, 0, 0, false},
        {"global_avg_pool", {5, {1, 3, 4, 5, 6}}, {0}, false, {4, 5, 6}, {0}, {0}, {0}, 0, NULL, 0, 0, NAN, 0, false},
        {"global_max_pool", {4, {2, 5, 7, 9}}, {0}, false, {7, 9}, {0}, {0}, {0}, 0, NULL, 0, 0, -INFINITY, 0, false},
        {"global_max_pool", {4, {1, 3, 4, 4}}, {0}, false, {4, 4}, {0}, {0}, {0}, 0, NULL, 0, 0, NAN, 0, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_window(&cases[i]);
}

/* ------------------------------------------------------ conv_transpose */

typedef struct transpose_case {
    shape x, weight; /* weight [C, M / group, k...] */
    bool bias;
    int64_t strides[3], dilations[3]; /* 0: 1 */
    int64_t pads[6];                  /* begins, then ends */
    int64_t group;                    /* 0: 1 */
    int64_t output_padding[3];
    int64_t output_shape[3];          /* all 0: not given */
    const char *auto_pad;             /* NULL: NOTSET */
    float x_special, weight_special;
    bool declined;
} transpose_case;

static void check_transpose(const transpose_case *c)
{
    uint32_t spatial = c->x.rank - 2, input_count = c->bias ? 3 : 2, count = 0;
    int64_t group = or_one(c->group), channels = c->x.axes[1], per_group = channels / group;
    int64_t outputs_per_group = c->weight.axes[1], out_channels = outputs_per_group * group;
    int64_t strides[3], dilations[3], in[3], out[3], begin[3], kernel[3], volume = 1, out_count = 1;
    for (uint32_t a = 0; a < spatial; a++) {
        strides[a] = or_one(c->strides[a]);
        dilations[a] = or_one(c->dilations[a]);
        in[a] = c->x.axes[a + 2];
        kernel[a] = c->weight.axes[a + 2];
        volume *= kernel[a];
        /* ONNX: the full extent s*(in-1) + output_padding + dilated kernel, less the pads. */
        int64_t full = strides[a] * (in[a] - 1) + c->output_padding[a] + (kernel[a] - 1) * dilations[a] + 1;
        if (c->output_shape[0]) {
            int64_t total = full - c->output_shape[a];
            out[a] = c->output_shape[a];
            begin[a] = c->auto_pad && strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        } else if (c->auto_pad) {
            int64_t total = full - strides[a] * in[a];
            out[a] = strides[a] * in[a];
            begin[a] = strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        } else {
            out[a] = full - c->pads[a] - c->pads[spatial + a];
            begin[a] = c->pads[a];
        }
        out_count *= out[a];
    }
    kiln_attribute attributes[8];
    attributes[count++] = (kiln_attribute){.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = strides,
                                           .count = spatial};
    attributes[count++] = (kiln_attribute){.name = "dilations", .type = KILN_ATTRIBUTE_INTS, .ints = dilations,
                                           .count = spatial};
    attributes[count++] = (kiln_attribute){.name = "group", .type = KILN_ATTRIBUTE_INT, .i = group};
    attributes[count++] = (kiln_attribute){.name = "output_padding", .type = KILN_ATTRIBUTE_INTS,
                                           .ints = c->output_padding, .count = spatial};
    if (c->output_shape[0])
        attributes[count++] = (kiln_attribute){.name = "output_shape", .type = KILN_ATTRIBUTE_INTS,
                                               .ints = c->output_shape, .count = spatial};
    if (c->auto_pad)
        attributes[count++] = (kiln_attribute){.name = "auto_pad", .type = KILN_ATTRIBUTE_STRING, .s = c->auto_pad};
    else if (!c->output_shape[0])
        attributes[count++] = (kiln_attribute){.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = c->pads,
                                               .count = 2 * spatial};
    shape bias_shape = {1, {out_channels}};
    kiln_tensor *inputs[3] = {random_tensor(&c->x), random_tensor(&c->weight),
                              c->bias ? random_tensor(&bias_shape) : NULL};
    refill(inputs[0], c->x_special);
    refill(inputs[1], c->weight_special);
    constant_b = b_is_weight ? inputs[1] : NULL;
    shape shapes[3] = {c->x, c->weight, bias_shape};
    kiln_program *program = one_node_program("conv_transpose", input_count, shapes, count, attributes);
    kiln_session *fast = new_session(program, false), *reference = new_session(program, true);
    uint64_t built = kiln_onednn_primitives_built();
    const kiln_tensor *got[2] = {run(fast, input_count, inputs), run(reference, input_count, inputs)};
    assert_int_equal(kiln_onednn_primitives_built() - built, kiln_onednn_enabled() && !c->declined ? 1 : 0);
    for (uint32_t a = 0; a < spatial; a++)
        assert_int_equal(kiln_tensor_shape(got[0])[a + 2], out[a]);

    /* The exact result as a scatter: each input element times each tap, added where it lands. */
    uint64_t total = (uint64_t)(c->x.axes[0] * out_channels * out_count);
    long double *exact = calloc(total, sizeof *exact), *magnitude = calloc(total, sizeof *magnitude);
    const float *x = kiln_tensor_const_data(inputs[0]), *w = kiln_tensor_const_data(inputs[1]);
    const float *bias = c->bias ? kiln_tensor_const_data(inputs[2]) : NULL;
    for (uint64_t flat = 0; flat < total; flat++) {
        int64_t m = (int64_t)(flat / (uint64_t)out_count % (uint64_t)out_channels);
        exact[flat] = bias ? bias[m] : 0;
        magnitude[flat] = bias ? fabsl((long double)bias[m]) : 0;
    }
    for (uint64_t flat = 0; flat < count_of(&c->x); flat++) {
        int64_t i[3], rest = (int64_t)flat;
        for (uint32_t a = spatial; a-- > 0;) {
            i[a] = rest % in[a];
            rest /= in[a];
        }
        int64_t ci = rest % channels, n = rest / channels, g = ci / per_group;
        for (int64_t mo = 0; mo < outputs_per_group; mo++)
            for (int64_t t = 0; t < volume; t++) {
                int64_t tap[3], position = 0, inside = 1, tap_rest = t;
                for (uint32_t a = spatial; a-- > 0;) {
                    tap[a] = tap_rest % kernel[a];
                    tap_rest /= kernel[a];
                }
                for (uint32_t a = 0; a < spatial; a++) {
                    int64_t o = i[a] * strides[a] - begin[a] + tap[a] * dilations[a];
                    inside &= o >= 0 && o < out[a];
                    position = position * out[a] + o;
                }
                if (!inside)
                    continue;
                uint64_t at = (uint64_t)((n * out_channels + g * outputs_per_group + mo) * out_count + position);
                long double term = (long double)x[flat] * w[(ci * outputs_per_group + mo) * volume + t];
                exact[at] += term;
                magnitude[at] += fabsl(term);
            }
    }
    for (uint64_t flat = 0; flat < total; flat++)
        for (int path = 0; path < 2; path++)
            check_element(((const float *)kiln_tensor_const_data(got[path]))[flat], exact[flat], magnitude[flat],
                          per_group * volume, path ? "conv_transpose reference" : "conv_transpose fast path", flat);
    free(exact);
    free(magnitude);
    kiln_session_free(fast);
    kiln_session_free(reference);
    for (uint32_t k = 0; k < 3; k++)
        kiln_tensor_free(inputs[k]);
    kiln_program_free(program);
    constant_b = NULL;
}

static void conv_transpose_matches_the_exact_scatter(void **state)
{
    (void)state;
    static const transpose_case cases[] = {
        {{4, {2, 3, 5, 6}}, {4, {3, 4, 3, 3}}, true, {0}, {0}, {1, 1, 1, 1}, 0, {0}, {0}, NULL, 0, 0, false},
        /* Stride 2 with output_padding inside the end pad. */
        {{4, {1, 4, 6, 5}}, {4, {4, 3, 3, 3}}, true, {2, 2}, {0}, {1, 1, 1, 1}, 0, {1, 1}, {0}, NULL, 0, 0, false},
        /* Groups, depthwise; 1d dilated; 3d strided. */
        {{4, {2, 6, 4, 4}}, {4, {6, 2, 3, 3}}, false, {2, 2}, {0}, {0}, 3, {0}, {0}, NULL, 0, 0, false},
        {{4, {1, 4, 6, 6}}, {4, {4, 1, 3, 3}}, true, {2, 2}, {0}, {1, 1, 1, 1}, 4, {0}, {0}, NULL, 0, 0, false},
        {{3, {2, 3, 10}}, {3, {3, 5, 3}}, true, {3}, {2}, {2, 1}, 0, {0}, {0}, NULL, 0, 0, false},
        {{5, {1, 2, 3, 4, 5}}, {5, {2, 3, 2, 2, 2}}, true, {2, 2, 2}, {0}, {0}, 0, {0}, {0}, NULL, 0, 0, false},
        /* output_shape and SAME derive the pads. */
        {{4, {1, 2, 5, 5}}, {4, {2, 3, 3, 3}}, true, {2, 2}, {0}, {0}, 0, {0}, {10, 10}, NULL, 0, 0, false},
        {{4, {1, 2, 5, 5}}, {4, {2, 2, 4, 4}}, false, {2, 2}, {0}, {0}, 0, {0}, {0}, "SAME_UPPER", 0, 0, false},
        {{4, {1, 2, 5, 5}}, {4, {2, 2, 3, 3}}, false, {2, 2}, {0}, {0}, 0, {0}, {0}, "SAME_LOWER", 0, 0, false},
        /* output_padding past the end pad: a negative end pad for oneDNN. */
        {{4, {1, 2, 4, 4}}, {4, {2, 2, 3, 3}}, true, {3, 3}, {0}, {0}, 0, {2, 2}, {0}, NULL, 0, 0, false},
        /* Specials: NaN in x propagates; an infinite weight is declined. */
        {{4, {1, 2, 4, 4}}, {4, {2, 2, 3, 3}}, true, {2, 2}, {0}, {1, 1, 1, 1}, 0, {0}, {0}, NULL, NAN, 0, false},
        {{4, {1, 2, 4, 4}}, {4, {2, 2, 3, 3}}, true, {2, 2}, {0}, {1, 1, 1, 1}, 0, {0}, {0}, NULL, 0, INFINITY, true},
    };
    for (int weight = 0; weight < 2; weight++) {
        b_is_weight = weight;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_transpose(&cases[i]);
    }
    b_is_weight = false;
}

/* -------------------------------------------------------------- caching */

/* Repeated shapes build no primitive; a new shape builds one, once. */
static void primitives_are_built_once_per_shape(void **state)
{
    (void)state;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, y;
    assert_int_equal(kiln_builder_new("cache", &b, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_dim(b, "batch", 1, 64, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_input(b, "a", KILN_F32, "[batch, 32]", &x, &err), KILN_OK);
    float weights[32 * 8];
    for (int i = 0; i < 32 * 8; i++)
        weights[i] = random_float();
    assert_int_equal(kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){32, 8}, weights,
                                             &w, &err),
                     KILN_OK);
    assert_int_equal(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &y, &err), KILN_OK);
    assert_int_equal(kiln_builder_add_output(b, "y", y, &err), KILN_OK);
    void *bytes;
    size_t size;
    kiln_program *program;
    assert_int_equal(kiln_builder_encode(b, NULL, &bytes, &size, &err), KILN_OK);
    assert_int_equal(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err), KILN_OK);
    free(bytes);
    kiln_builder_free(b);

    kiln_tensor *small = random_tensor(&(shape){2, {3, 32}}), *large = random_tensor(&(shape){2, {64, 32}});
    kiln_session *session = new_session(program, false);
    uint64_t expected_per_shape = kiln_onednn_enabled() ? 1 : 0;
    uint64_t before = kiln_onednn_primitives_built();
    run(session, 1, (kiln_tensor *[]){small});
    assert_int_equal(kiln_onednn_primitives_built() - before, expected_per_shape);
    for (int i = 0; i < 20; i++)
        run(session, 1, (kiln_tensor *[]){i % 2 ? small : large});
    assert_int_equal(kiln_onednn_primitives_built() - before, 2 * expected_per_shape);
    /* Nine more shapes overflow the node's eight entries: each builds once,
     * and the oldest shape (3 rows) is replaced, so it builds again. */
    for (int64_t rows = 4; rows < 13; rows++) {
        kiln_tensor *t = random_tensor(&(shape){2, {rows, 32}});
        run(session, 1, (kiln_tensor *[]){t});
        kiln_tensor_free(t);
    }
    assert_int_equal(kiln_onednn_primitives_built() - before, 11 * expected_per_shape);
    run(session, 1, (kiln_tensor *[]){small});
    assert_int_equal(kiln_onednn_primitives_built() - before, 12 * expected_per_shape);

    /* A reference session builds nothing. */
    kiln_session *reference = new_session(program, true);
    uint64_t reference_before = kiln_onednn_primitives_built();
    run(reference, 1, (kiln_tensor *[]){large});
    assert_int_equal(kiln_onednn_primitives_built(), reference_before);

    kiln_session_free(reference);
    kiln_session_free(session);
    kiln_tensor_free(small);
    kiln_tensor_free(large);
    kiln_program_free(program);
}

/* ------------------------------------------------------------ threads */

/*
 * Large elementwise ops (above the 262144-element threshold, at sizes that
 * split chunks inside rows) with 2 threads equal, bit for bit, a
 * reference computed here from the flat index: a broadcasting add and sub,
 * a mul by a column, neg, the unary sigmoid (in double, rounded once), and
 * max and sum of the binary family's N-ary walk.
 */
/* layer_norm's rows on two threads: the same bits as on one (lib/ops/norm.c). */
static void threaded_layer_norm_matches_one_thread(void **state)
{
    (void)state;
    shape shapes[3] = {{2, {300, 256}}, {1, {256}}, {1, {256}}};
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    kiln_program *program = one_node_program("layer_norm", 3, shapes, 1, &axis);
    kiln_tensor *inputs[3] = {random_tensor(&shapes[0]), random_tensor(&shapes[1]), random_tensor(&shapes[2])};
    const float *results[2];
    kiln_session *sessions[2];
    for (int t = 0; t < 2; t++) {
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.threads = (uint32_t)t + 1;
        options.thread_policy = KILN_THREADS_FIXED;
        kiln_error err;
        assert_int_equal(kiln_session_new(program, &options, &sessions[t], &err), KILN_OK);
        results[t] = kiln_tensor_const_data(run(sessions[t], 3, inputs));
    }
    assert_memory_equal(results[0], results[1], 300 * 256 * sizeof(float));
    /* Not all zeros: the rows were normalized. */
    bool nonzero = false;
    for (int i = 0; i < 300 * 256; i++)
        nonzero = nonzero || results[0][i] != 0.0f;
    assert_true(nonzero);
    for (int t = 0; t < 2; t++)
        kiln_session_free(sessions[t]);
    for (int i = 0; i < 3; i++)
        kiln_tensor_free(inputs[i]);
    kiln_program_free(program);
}

static void threaded_elementwise_matches_the_reference(void **state)
{
    (void)state;
    static const struct {
        const char *op;
        shape a, b;
    } cases[] = {
        {"add", {2, {3, 90001}}, {1, {90001}}},
        {"sub", {1, {300007}}, {1, {300007}}},
        {"mul", {2, {90001, 3}}, {2, {90001, 1}}},
        {"div", {0, {0}}, {2, {1031, 257}}}, /* scalar a */
        {"neg", {2, {5, 60013}}, {0, {0}}},
        {"sigmoid", {3, {7, 3, 12503}}, {0, {0}}},
        {"max", {2, {3, 90001}}, {1, {90001}}}, /* the N-ary walk of binary.c */
        {"sum", {1, {1}}, {2, {1031, 257}}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bool unary = strcmp(cases[c].op, "neg") == 0 || strcmp(cases[c].op, "sigmoid") == 0;
        shape shapes[2] = {cases[c].a, cases[c].b};
        kiln_program *program = one_node_program(cases[c].op, unary ? 1 : 2, shapes, 0, NULL);
        kiln_tensor *inputs[2] = {random_tensor(&shapes[0]), unary ? NULL : random_tensor(&shapes[1])};
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.threads = 2;
        options.thread_policy = KILN_THREADS_FIXED;
        kiln_session *session;
        kiln_error err;
        assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
        const kiln_tensor *out = run(session, unary ? 1 : 2, inputs);
        const float *got = kiln_tensor_const_data(out);
        const float *a = kiln_tensor_const_data(inputs[0]);
        const float *b = unary ? NULL : kiln_tensor_const_data(inputs[1]);
        uint32_t rank = kiln_tensor_rank(out);
        const int64_t *dims = kiln_tensor_shape(out);
        uint64_t total = 1;
        for (uint32_t i = 0; i < rank; i++)
            total *= (uint64_t)dims[i];
        assert_true(total >= 262144); /* KILN_PARALLEL_MIN_ELEMENTS */
        for (uint64_t flat = 0; flat < total; flat++) {
            /* Each operand's element: its axes right-aligned, size 1 broadcasting. */
            uint64_t at[2] = {0, 0};
            for (int operand = 0; operand < (unary ? 1 : 2); operand++) {
                const shape *s = &shapes[operand];
                uint64_t rest = flat, offset = 0, stride = 1;
                for (uint32_t axis = rank; axis-- > 0;) {
                    uint64_t index = rest % (uint64_t)dims[axis];
                    rest /= (uint64_t)dims[axis];
                    uint32_t own = s->rank - (rank - axis);
                    if (axis + s->rank < rank)
                        continue;
                    offset += (s->axes[own] == 1 ? 0 : index) * stride;
                    stride *= (uint64_t)s->axes[own];
                }
                at[operand] = offset;
            }
            float x = a[at[0]], expected;
            if (strcmp(cases[c].op, "add") == 0)
                expected = x + b[at[1]];
            else if (strcmp(cases[c].op, "sub") == 0)
                expected = x - b[at[1]];
            else if (strcmp(cases[c].op, "mul") == 0)
                expected = x * b[at[1]];
            else if (strcmp(cases[c].op, "div") == 0)
                expected = x / b[at[1]];
            else if (strcmp(cases[c].op, "max") == 0)
                expected = x > b[at[1]] ? x : b[at[1]];
            else if (strcmp(cases[c].op, "sum") == 0)
                expected = x + b[at[1]];
            else if (strcmp(cases[c].op, "neg") == 0)
                expected = -x;
            else
                expected = (float)(x >= 0 ? 1.0 / (1.0 + exp(-(double)x)) : exp((double)x) / (1.0 + exp((double)x)));
            if (memcmp(&got[flat], &expected, sizeof expected) != 0)
                fail_msg("%s with 2 threads: element %llu is %.9g, expected %.9g", cases[c].op,
                         (unsigned long long)flat, (double)got[flat], (double)expected);
        }
        kiln_session_free(session);
        kiln_tensor_free(inputs[0]);
        kiln_tensor_free(inputs[1]);
        kiln_program_free(program);
    }
}

/* The version report names the fast paths this build has. */
static void features_name_the_fast_paths(void **state)
{
    (void)state;
    bool listed = false;
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        listed = listed || strcmp(*f, "onednn") == 0;
    assert_int_equal(listed, kiln_onednn_enabled());
}

/* Threads: 0 takes the default, an explicit count is kept. */
static void sessions_report_their_threads(void **state)
{
    (void)state;
    kiln_program *program = one_node_program("matmul", 2, (shape[]){{2, {2, 3}}, {2, {3, 2}}}, 0, NULL);
    kiln_session_options options;
    kiln_session_options_default(&options);
    kiln_session *session;
    kiln_error err;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_true(kiln_session_threads(session) >= 1);
    kiln_session_free(session);
    bool openmp = false;
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        openmp = openmp || strcmp(*f, "openmp-threads") == 0;
    options.threads = 3;
    options.thread_policy = KILN_THREADS_FIXED;
    assert_int_equal(kiln_session_new(program, &options, &session, &err), KILN_OK);
    assert_int_equal(kiln_session_threads(session), openmp ? 3 : 1);
    kiln_session_free(session);
    kiln_program_free(program);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matmul_matches_the_exact_product),
        cmocka_unit_test(gemm_matches_the_exact_product),
        cmocka_unit_test(conv_matches_the_exact_sum),
        cmocka_unit_test(pools_match_the_exact_window),
        cmocka_unit_test(conv_transpose_matches_the_exact_scatter),
        cmocka_unit_test(primitives_are_built_once_per_shape),
        cmocka_unit_test(threaded_elementwise_matches_the_reference),
        cmocka_unit_test(threaded_layer_norm_matches_one_thread),
        cmocka_unit_test(features_name_the_fast_paths),
        cmocka_unit_test(sessions_report_their_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
