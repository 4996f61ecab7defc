/*
 * bench_fast.c — the fast paths measured through the public C API, each
 * against the reference kernels in the same run:
 *
 *   1. f32 matmul 1024 x 1024 x 1024 (GFLOP/s),
 *   2. an MLP 784-512-512-10 (gemm + bias, gelu, gemm + bias, gelu, gemm +
 *      bias, softmax) at batch 16,
 *   3. a small CNN at batch 16: conv 3x3 3->16 + relu, max_pool 2x2,
 *      conv 3x3 16->32 + relu, global_avg_pool, flatten, gemm 32->10 on
 *      x [16, 3, 32, 32],
 *   4. one transformer encoder layer (d = 256, 4 heads, ff = 1024, post
 *      layer norm, gelu) at batch 2, sequence 64: matmul, add, reshape,
 *      transpose, softmax, layer_norm, gelu,
 *   5. the per-run overhead of the scale example (y = 2*x + 1 on
 *      f64[batch, 2]: guards, shape evaluation and dispatch of two nodes;
 *      target < 2 µs).
 *
 * Each is run with the fast paths at 1 and 2 threads and with the
 * reference kernels, reporting the median of the timed runs and the ratio
 * to the reference. The outputs of the two paths are compared too (within
 * the spec/opset.md bound, loosely), so a fast path that is fast because
 * it is wrong does not pass unnoticed.
 *
 * Usage: bench_fast [--quick]. --quick runs tiny sizes and few runs: the
 * test suite uses it as a smoke test. Run by hand (on a quiet machine)
 * for the real numbers: build/tests/bench_fast
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln.h>

static int failures;

/* Every call site has a `kiln_error err` in scope; a failure ends the program. */
#define CHECK(call)                                                               \
    do {                                                                          \
        if ((call) != KILN_OK) {                                                  \
            fprintf(stderr, "bench_fast: %s failed: %s\n", #call, err.message); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static uint64_t random_state = 0x9E3779B97F4A7C15u;

static float random_float(void)
{
    random_state ^= random_state >> 12;
    random_state ^= random_state << 25;
    random_state ^= random_state >> 27;
    return (float)((double)((random_state * 2685821657736338717u) >> 40) / (double)(1u << 23) - 1.0);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static kiln_program *load(kiln_builder *b)
{
    void *bytes;
    size_t size;
    kiln_error err;
    kiln_program *program;
    CHECK(kiln_builder_encode(b, NULL, &bytes, &size, &err));
    CHECK(kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err));
    free(bytes);
    kiln_builder_free(b);
    return program;
}

static kiln_tensor *random_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t;
    kiln_error err;
    CHECK(kiln_tensor_new(dtype, rank, shape, &t, &err));
    uint64_t n = kiln_tensor_element_count(t);
    for (uint64_t i = 0; i < n; i++) {
        if (dtype == KILN_F32)
            ((float *)kiln_tensor_data(t))[i] = random_float();
        else
            ((double *)kiln_tensor_data(t))[i] = random_float();
    }
    return t;
}

/* One way of running: fast paths at some thread count, or the reference. */
typedef struct mode {
    const char *name;
    uint32_t threads;
    bool reference;
} mode;

static const mode modes[] = {
    {"reference, 1 thread", 1, true},
    {"fast, 1 thread", 1, false},
    {"fast, 2 threads", 2, false},
};
enum { MODE_COUNT = sizeof modes / sizeof modes[0] };

/*
 * Median seconds per run of `program` with `inputs` bound, in `m`, after
 * `warmup` runs; the output 0 is copied to `out` (element_count floats or
 * doubles, as bytes) for comparison.
 */
static double median_run(const kiln_program *program, const mode *m, uint32_t input_count,
                         const char *const *names, kiln_tensor *const *inputs, int warmup, int runs, void *out,
                         size_t out_size)
{
    kiln_session_options options;
    kiln_session_options_default(&options);
    options.threads = m->threads;
    options.thread_policy = KILN_THREADS_FIXED;
    options.reference_kernels = m->reference;
    kiln_session *session;
    kiln_error err;
    CHECK(kiln_session_new(program, &options, &session, &err));
    for (uint32_t i = 0; i < input_count; i++)
        CHECK(kiln_session_set_input(session, names[i], inputs[i], &err));
    for (int r = 0; r < warmup; r++)
        CHECK(kiln_session_run(session, &err));
    double *times = calloc((size_t)runs, sizeof *times);
    for (int r = 0; r < runs; r++) {
        double start = now_seconds();
        CHECK(kiln_session_run(session, &err));
        times[r] = now_seconds() - start;
    }
    qsort(times, (size_t)runs, sizeof *times, compare_doubles);
    double median = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    free(times);
    if (out)
        memcpy(out, kiln_tensor_const_data(kiln_session_output(session, 0)), out_size);
    kiln_session_free(session);
    return median;
}

/* Largest |fast - reference| relative to max(1, |reference|). */
static double largest_difference(const float *fast, const float *reference, size_t count)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double scale = fabs(reference[i]) > 1 ? fabs(reference[i]) : 1;
        double d = fabs((double)fast[i] - reference[i]) / scale;
        if (!(d <= worst)) /* NaN counts as the worst */
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static void report_against_reference(const char *what, const double *medians, const float *const *outputs,
                                      size_t count, double tolerance, double flops)
{
    for (int m = 0; m < MODE_COUNT; m++) {
        printf("  %-22s median %10.4f ms", modes[m].name, medians[m] * 1e3);
        if (flops > 0)
            printf("  %8.2f GFLOP/s", flops / medians[m] * 1e-9);
        if (m > 0) {
            double difference = largest_difference(outputs[m], outputs[0], count);
            printf("  %6.2fx the reference  (max rel. difference %.2g)", medians[0] / medians[m], difference);
            if (!(difference <= tolerance)) {
                printf("  MISMATCH > %.2g", tolerance);
                failures++;
            }
        }
        printf("\n");
    }
    (void)what;
}

/* ------------------------------------------------------------ matmul */

static void bench_matmul(int64_t n, int runs)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value a, w, y;
    char shape[64];
    snprintf(shape, sizeof shape, "[%lld, %lld]", (long long)n, (long long)n);
    CHECK(kiln_builder_new("matmul", &b, &err));
    CHECK(kiln_builder_add_input(b, "a", KILN_F32, shape, &a, &err));
    CHECK(kiln_builder_add_input(b, "b", KILN_F32, shape, &w, &err));
    CHECK(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){a, w}, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    kiln_program *program = load(b);
    kiln_tensor *inputs[2] = {random_tensor(KILN_F32, 2, (int64_t[]){n, n}),
                              random_tensor(KILN_F32, 2, (int64_t[]){n, n})};
    size_t count = (size_t)(n * n);
    float *outputs[MODE_COUNT];
    double medians[MODE_COUNT];
    for (int m = 0; m < MODE_COUNT; m++) {
        outputs[m] = malloc(count * sizeof(float));
        /* The reference takes seconds at 1024: fewer runs for it. */
        int mode_runs = modes[m].reference ? (runs > 3 ? 3 : runs) : runs;
        medians[m] = median_run(program, &modes[m], 2, (const char *[]){"a", "b"}, inputs, 1, mode_runs, outputs[m],
                                count * sizeof(float));
    }
    printf("f32 matmul %lld x %lld x %lld:\n", (long long)n, (long long)n, (long long)n);
    /* Entries are sums of n products of values in [-1, 1): the spec's bound
     * is (n + 2) * 2^-23 * sum |terms|, about 1e-4 * sqrt-scale here. */
    report_against_reference("matmul", medians, (const float *const *)outputs, count, (double)(n + 2) * 0x1p-23 * 2,
                             2.0 * (double)n * (double)n * (double)n);
    for (int m = 0; m < MODE_COUNT; m++)
        free(outputs[m]);
    kiln_tensor_free(inputs[0]);
    kiln_tensor_free(inputs[1]);
    kiln_program_free(program);
}

/* --------------------------------------------------------------- MLP */

/* gemm(x, W[in, out], bias[out]) then `activation` (NULL for none). */
static kiln_value dense(kiln_builder *b, kiln_value x, int64_t in, int64_t out, const char *activation)
{
    static int layer;
    kiln_error err;
    kiln_value w, bias, y;
    char w_name[32], b_name[32];
    layer++;
    snprintf(w_name, sizeof w_name, "w%d", layer);
    snprintf(b_name, sizeof b_name, "b%d", layer);
    float *weights = malloc((size_t)(in * out) * sizeof *weights), *offsets = malloc((size_t)out * sizeof *offsets);
    float scale = (float)(1.0 / sqrt((double)in));
    for (int64_t i = 0; i < in * out; i++)
        weights[i] = random_float() * scale;
    for (int64_t i = 0; i < out; i++)
        offsets[i] = random_float() * 0.1f;
    CHECK(kiln_builder_add_weight(b, w_name, KILN_WEIGHT_PARAMETER, KILN_F32, 2, (int64_t[]){in, out}, weights, &w,
                                  &err));
    CHECK(kiln_builder_add_weight(b, b_name, KILN_WEIGHT_PARAMETER, KILN_F32, 1, (int64_t[]){out}, offsets, &bias,
                                  &err));
    free(weights);
    free(offsets);
    CHECK(kiln_builder_add_op(b, "gemm", 3, (kiln_value[]){x, w, bias}, &y, &err));
    if (activation)
        CHECK(kiln_builder_add_op(b, activation, 1, &y, &y, &err));
    return y;
}

static void bench_mlp(int64_t batch, int runs)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    CHECK(kiln_builder_new("mlp", &b, &err));
    CHECK(kiln_builder_add_dim(b, "batch", 1, 64, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 784]", &x, &err));
    y = dense(b, x, 784, 512, "gelu");
    y = dense(b, y, 512, 512, "gelu");
    y = dense(b, y, 512, 10, NULL);
    kiln_attribute axis = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    CHECK(kiln_builder_add_op_with_attributes(b, "softmax", 1, &y, 1, &axis, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    kiln_program *program = load(b);
    kiln_tensor *input = random_tensor(KILN_F32, 2, (int64_t[]){batch, 784});
    size_t count = (size_t)(batch * 10);
    float *outputs[MODE_COUNT];
    double medians[MODE_COUNT];
    for (int m = 0; m < MODE_COUNT; m++) {
        outputs[m] = malloc(count * sizeof(float));
        medians[m] = median_run(program, &modes[m], 1, (const char *[]){"x"}, &input, 3, runs, outputs[m],
                                count * sizeof(float));
    }
    double flops = 2.0 * (double)batch * (784.0 * 512 + 512.0 * 512 + 512.0 * 10);
    printf("MLP 784-512-512-10 (gelu, softmax), batch %lld:\n", (long long)batch);
    report_against_reference("mlp", medians, (const float *const *)outputs, count, 1e-4, flops);
    for (int m = 0; m < MODE_COUNT; m++)
        free(outputs[m]);
    kiln_tensor_free(input);
    kiln_program_free(program);
}

/* --------------------------------------------------------------- CNN */

/* A parameter of `shape` filled with values in [-scale, scale). */
static kiln_value random_weight(kiln_builder *b, const char *name, uint32_t rank, const int64_t *shape, float scale)
{
    kiln_error err;
    kiln_value w;
    uint64_t n = 1;
    for (uint32_t i = 0; i < rank; i++)
        n *= (uint64_t)shape[i];
    float *values = malloc((size_t)n * sizeof *values);
    for (uint64_t i = 0; i < n; i++)
        values[i] = random_float() * scale;
    CHECK(kiln_builder_add_weight(b, name, KILN_WEIGHT_PARAMETER, KILN_F32, rank, shape, values, &w, &err));
    free(values);
    return w;
}

/* conv 3x3, stride 1, pads 1, with bias, then relu. */
static kiln_value conv3x3_relu(kiln_builder *b, const char *name, kiln_value x, int64_t in, int64_t out)
{
    kiln_error err;
    char w_name[32], b_name[32];
    snprintf(w_name, sizeof w_name, "%s.weight", name);
    snprintf(b_name, sizeof b_name, "%s.bias", name);
    kiln_value w = random_weight(b, w_name, 4, (int64_t[]){out, in, 3, 3}, (float)(1.0 / sqrt(9.0 * (double)in)));
    kiln_value bias = random_weight(b, b_name, 1, (int64_t[]){out}, 0.1f);
    static const int64_t pads[] = {1, 1, 1, 1};
    kiln_attribute attributes[] = {{.name = "pads", .type = KILN_ATTRIBUTE_INTS, .ints = pads, .count = 4}};
    kiln_value y;
    CHECK(kiln_builder_add_op_with_attributes(b, "conv", 3, (kiln_value[]){x, w, bias}, 1, attributes, &y, &err));
    CHECK(kiln_builder_add_op(b, "relu", 1, &y, &y, &err));
    return y;
}

static void bench_cnn(int64_t batch, int runs)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, y;
    CHECK(kiln_builder_new("cnn", &b, &err));
    CHECK(kiln_builder_add_dim(b, "batch", 1, 64, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, "[batch, 3, 32, 32]", &x, &err));
    y = conv3x3_relu(b, "conv1", x, 3, 16);
    static const int64_t two[] = {2, 2};
    kiln_attribute pool[] = {{.name = "kernel_shape", .type = KILN_ATTRIBUTE_INTS, .ints = two, .count = 2},
                             {.name = "strides", .type = KILN_ATTRIBUTE_INTS, .ints = two, .count = 2}};
    CHECK(kiln_builder_add_op_with_attributes(b, "max_pool", 1, &y, 2, pool, &y, &err));
    y = conv3x3_relu(b, "conv2", y, 16, 32);
    CHECK(kiln_builder_add_op(b, "global_avg_pool", 1, &y, &y, &err));
    CHECK(kiln_builder_add_op(b, "flatten", 1, &y, &y, &err));
    y = dense(b, y, 32, 10, NULL);
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    kiln_program *program = load(b);
    kiln_tensor *input = random_tensor(KILN_F32, 4, (int64_t[]){batch, 3, 32, 32});
    size_t count = (size_t)(batch * 10);
    float *outputs[MODE_COUNT];
    double medians[MODE_COUNT];
    for (int m = 0; m < MODE_COUNT; m++) {
        outputs[m] = malloc(count * sizeof(float));
        medians[m] = median_run(program, &modes[m], 1, (const char *[]){"x"}, &input, 3,
                                modes[m].reference && runs > 20 ? 20 : runs, outputs[m], count * sizeof(float));
    }
    /* Multiply-adds: 32x32 x 16 x 27, then 16x16 x 32 x 144, then 32 x 10, per image. */
    double flops = 2.0 * (double)batch * (1024.0 * 16 * 27 + 256.0 * 32 * 144 + 320.0);
    printf("CNN conv3x3 16 - relu - max_pool - conv3x3 32 - relu - global_avg_pool - gemm 10, x [%lld, 3, 32, 32]:\n",
           (long long)batch);
    report_against_reference("cnn", medians, (const float *const *)outputs, count, 1e-4, flops);
    for (int m = 0; m < MODE_COUNT; m++)
        free(outputs[m]);
    kiln_tensor_free(input);
    kiln_program_free(program);
}

/* ------------------------------------------------------ encoder layer */

/* x [.., in] @ W [in, out] + b [out], as matmul and a broadcast add. */
static kiln_value linear(kiln_builder *b, const char *name, kiln_value x, int64_t in, int64_t out)
{
    kiln_error err;
    char w_name[32], b_name[32];
    snprintf(w_name, sizeof w_name, "%s.weight", name);
    snprintf(b_name, sizeof b_name, "%s.bias", name);
    kiln_value w = random_weight(b, w_name, 2, (int64_t[]){in, out}, (float)(1.0 / sqrt((double)in)));
    kiln_value bias = random_weight(b, b_name, 1, (int64_t[]){out}, 0.1f);
    kiln_value y;
    CHECK(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){x, w}, &y, &err));
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){y, bias}, &y, &err));
    return y;
}

static kiln_value reshape(kiln_builder *b, kiln_value x, uint32_t rank, const int64_t *shape)
{
    kiln_error err;
    kiln_attribute attribute = {.name = "shape", .type = KILN_ATTRIBUTE_INTS, .ints = shape, .count = rank};
    kiln_value y;
    CHECK(kiln_builder_add_op_with_attributes(b, "reshape", 1, &x, 1, &attribute, &y, &err));
    return y;
}

static kiln_value transpose(kiln_builder *b, kiln_value x, const int64_t *perm)
{
    kiln_error err;
    kiln_attribute attribute = {.name = "perm", .type = KILN_ATTRIBUTE_INTS, .ints = perm, .count = 4};
    kiln_value y;
    CHECK(kiln_builder_add_op_with_attributes(b, "transpose", 1, &x, 1, &attribute, &y, &err));
    return y;
}

/* residual + x, then layer_norm over the last axis with its own scale and bias. */
static kiln_value add_and_norm(kiln_builder *b, const char *name, kiln_value residual, kiln_value x, int64_t d)
{
    kiln_error err;
    char scale_name[32], bias_name[32];
    snprintf(scale_name, sizeof scale_name, "%s.scale", name);
    snprintf(bias_name, sizeof bias_name, "%s.bias", name);
    kiln_value scale = random_weight(b, scale_name, 1, (int64_t[]){d}, 1.0f);
    kiln_value bias = random_weight(b, bias_name, 1, (int64_t[]){d}, 0.1f);
    kiln_value y;
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){residual, x}, &y, &err));
    CHECK(kiln_builder_add_op(b, "layer_norm", 3, (kiln_value[]){y, scale, bias}, &y, &err));
    return y;
}

static void bench_encoder(int64_t batch, int64_t sequence, int runs)
{
    enum { D = 256, HEADS = 4, HEAD = D / HEADS, FF = 1024 };
    kiln_builder *b;
    kiln_error err;
    kiln_value x, q, k, v, y, scale;
    CHECK(kiln_builder_new("encoder", &b, &err));
    CHECK(kiln_builder_add_dim(b, "batch", 1, 8, &err));
    char x_shape[64];
    snprintf(x_shape, sizeof x_shape, "[batch, %lld, %d]", (long long)sequence, D);
    CHECK(kiln_builder_add_input(b, "x", KILN_F32, x_shape, &x, &err));
    /* Heads: [B, S, D] -> [B, S, H, D/H] -> [B, H, S, D/H] (k: [B, H, D/H, S]). */
    static const int64_t split[] = {0, 0, HEADS, HEAD}, merge[] = {0, 0, D};
    static const int64_t to_heads[] = {0, 2, 1, 3}, to_keys[] = {0, 2, 3, 1};
    q = transpose(b, reshape(b, linear(b, "q", x, D, D), 4, split), to_heads);
    k = transpose(b, reshape(b, linear(b, "k", x, D, D), 4, split), to_keys);
    v = transpose(b, reshape(b, linear(b, "v", x, D, D), 4, split), to_heads);
    CHECK(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){q, k}, &y, &err));
    CHECK(kiln_builder_add_scalar(b, KILN_F32, 1.0 / sqrt((double)HEAD), &scale, &err));
    CHECK(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){y, scale}, &y, &err));
    kiln_attribute last = {.name = "axis", .type = KILN_ATTRIBUTE_INT, .i = -1};
    CHECK(kiln_builder_add_op_with_attributes(b, "softmax", 1, &y, 1, &last, &y, &err));
    CHECK(kiln_builder_add_op(b, "matmul", 2, (kiln_value[]){y, v}, &y, &err));
    y = reshape(b, transpose(b, y, to_heads), 3, merge);
    kiln_value attended = add_and_norm(b, "norm1", x, linear(b, "out", y, D, D), D);
    y = linear(b, "ff1", attended, D, FF);
    CHECK(kiln_builder_add_op(b, "gelu", 1, &y, &y, &err));
    y = add_and_norm(b, "norm2", attended, linear(b, "ff2", y, FF, D), D);
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    kiln_program *program = load(b);
    kiln_tensor *input = random_tensor(KILN_F32, 3, (int64_t[]){batch, sequence, D});
    size_t count = (size_t)(batch * sequence * D);
    float *outputs[MODE_COUNT];
    double medians[MODE_COUNT];
    for (int m = 0; m < MODE_COUNT; m++) {
        outputs[m] = malloc(count * sizeof(float));
        medians[m] = median_run(program, &modes[m], 1, (const char *[]){"x"}, &input, 3,
                                modes[m].reference && runs > 20 ? 20 : runs, outputs[m], count * sizeof(float));
    }
    /* Multiply-adds per token: 4 D x D projections, 2 D x FF, and 2 S x D for attention. */
    double flops = 2.0 * (double)(batch * sequence) * (4.0 * D * D + 2.0 * D * FF + 2.0 * (double)sequence * D);
    printf("transformer encoder layer d=256, 4 heads, ff=1024 (gelu, post layer_norm), x [%lld, %lld, 256]:\n",
           (long long)batch, (long long)sequence);
    report_against_reference("encoder", medians, (const float *const *)outputs, count, 1e-3, flops);
    for (int m = 0; m < MODE_COUNT; m++)
        free(outputs[m]);
    kiln_tensor_free(input);
    kiln_program_free(program);
}

/* ------------------------------------------------------------- scale */

static void bench_scale(int runs)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, two, one, y;
    CHECK(kiln_builder_new("scale", &b, &err));
    CHECK(kiln_builder_add_dim(b, "batch", 2, 4, &err));
    CHECK(kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err));
    CHECK(kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err));
    CHECK(kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err));
    CHECK(kiln_builder_add_op(b, "mul", 2, (kiln_value[]){x, two}, &y, &err));
    CHECK(kiln_builder_add_op(b, "add", 2, (kiln_value[]){y, one}, &y, &err));
    CHECK(kiln_builder_add_output(b, "y", y, &err));
    kiln_program *program = load(b);
    kiln_tensor *input = random_tensor(KILN_F64, 2, (int64_t[]){3, 2});
    double medians[MODE_COUNT];
    printf("scale example (2*x + 1, f64[3, 2]): per-run overhead, target < 2 us:\n");
    for (int m = 0; m < MODE_COUNT; m++) {
        /* Runs this short are timed in batches of 1000 to rise above the
         * clock's resolution; the median is over batches. */
        kiln_session_options options;
        kiln_session_options_default(&options);
        options.threads = modes[m].threads;
        options.thread_policy = KILN_THREADS_FIXED;
        options.reference_kernels = modes[m].reference;
        kiln_session *session;
        CHECK(kiln_session_new(program, &options, &session, &err));
        CHECK(kiln_session_set_input(session, "x", input, &err));
        CHECK(kiln_session_run(session, &err));
        double *times = calloc((size_t)runs, sizeof *times);
        for (int r = 0; r < runs; r++) {
            double start = now_seconds();
            for (int i = 0; i < 1000; i++)
                CHECK(kiln_session_run(session, &err));
            times[r] = (now_seconds() - start) / 1000;
        }
        qsort(times, (size_t)runs, sizeof *times, compare_doubles);
        medians[m] = times[runs / 2];
        const double *in = kiln_tensor_const_data(input), *out = kiln_tensor_const_data(kiln_session_output(session, 0));
        for (int i = 0; i < 6; i++)
            if (out[i] != 2 * in[i] + 1) {
                printf("  MISMATCH at element %d\n", i);
                failures++;
            }
        free(times);
        kiln_session_free(session);
        printf("  %-22s median %10.3f us%s\n", modes[m].name, medians[m] * 1e6,
               medians[m] < 2e-6 ? "" : "  (above the 2 us target)");
    }
    kiln_tensor_free(input);
    kiln_program_free(program);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 2 || (argc == 2 && !quick)) {
        fprintf(stderr, "usage: bench_fast [--quick]\n");
        return 2;
    }
    printf("kiln fast-path benchmark%s; features:", quick ? " (--quick: tiny sizes)" : "");
    for (const char *const *f = kiln_runtime_features(); *f; f++)
        printf(" %s", *f);
    printf("\n");
    bench_matmul(quick ? 64 : 1024, quick ? 3 : 10);
    bench_mlp(quick ? 2 : 16, quick ? 3 : 200);
    bench_cnn(quick ? 2 : 16, quick ? 3 : 100);
    bench_encoder(quick ? 1 : 2, 64, quick ? 3 : 100);
    bench_scale(quick ? 3 : 200);
    if (failures)
        printf("bench_fast: %d mismatch(es) between the fast paths and the reference\n", failures);
    return failures ? 1 : 0;
}
