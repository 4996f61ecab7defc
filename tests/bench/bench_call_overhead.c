/*
 * bench_call_overhead.c — the per-run cost of the C API on the seed
 * example (y = 2x + 1, x: f64[3, 2]): set the input, run, read the output,
 * in a loop. The baseline for the Python binding's per-call overhead
 * (tests/python/bench_overhead.py runs both, interleaved).
 *
 * Usage: bench_call_overhead [RUNS]    prints "c_api_us_per_run N"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long runs = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
    kiln_builder *b;
    kiln_error err;
    kiln_value x, two, one, doubled, y;
    if (kiln_builder_new("scale", &b, &err) != KILN_OK || kiln_builder_add_dim(b, "batch", 2, 4, &err) != KILN_OK ||
        kiln_builder_add_input(b, "x", KILN_F64, "[batch, 2]", &x, &err) != KILN_OK ||
        kiln_builder_add_scalar(b, KILN_F64, 2.0, &two, &err) != KILN_OK ||
        kiln_builder_add_scalar(b, KILN_F64, 1.0, &one, &err) != KILN_OK ||
        kiln_builder_add_op(b, "mul", 2, (kiln_value[]){two, x}, &doubled, &err) != KILN_OK ||
        kiln_builder_add_op(b, "add", 2, (kiln_value[]){doubled, one}, &y, &err) != KILN_OK ||
        kiln_builder_add_output(b, "y", y, &err) != KILN_OK) {
        fprintf(stderr, "build: %s\n", err.message);
        return 1;
    }
    void *bytes;
    size_t size;
    kiln_program *program;
    kiln_session *session;
    if (kiln_builder_encode(b, NULL, &bytes, &size, &err) != KILN_OK ||
        kiln_program_load_memory(bytes, size, NULL, &program, NULL, &err) != KILN_OK ||
        kiln_session_new(program, NULL, &session, &err) != KILN_OK) {
        fprintf(stderr, "load: %s\n", err.message);
        return 1;
    }
    double input[6] = {1, 1, 1, 1, 1, 1}, output[6];
    kiln_tensor *tensor;
    if (kiln_tensor_wrap(KILN_F64, 2, (int64_t[]){3, 2}, input, sizeof input, &tensor, &err) != KILN_OK)
        return 1;
    /* What a binding does per call: point the wrapper at the caller's buffer,
     * bind it, run, copy the output out. */
    double start = 0;
    for (long r = -runs / 10; r < runs; r++) {
        if (r == 0)
            start = now();
        if (kiln_tensor_rewrap(tensor, KILN_F64, 2, (int64_t[]){3, 2}, input, sizeof input, &err) != KILN_OK ||
            kiln_session_set_input(session, "x", tensor, &err) != KILN_OK || kiln_session_run(session, &err) != KILN_OK) {
            fprintf(stderr, "run: %s\n", err.message);
            return 1;
        }
        const kiln_tensor *out = kiln_session_output(session, 0);
        memcpy(output, kiln_tensor_const_data(out), kiln_tensor_byte_size(out));
    }
    double elapsed = now() - start;
    printf("c_api_us_per_run %.3f\n", elapsed / (double)runs * 1e6);
    kiln_tensor_free(tensor);
    kiln_session_free(session);
    kiln_program_free(program);
    kiln_builder_free(b);
    free(bytes);
    return output[0] == 3.0 ? 0 : 1;
}
