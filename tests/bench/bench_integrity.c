/*
 * bench_integrity.c — how fast kiln proves an artifact intact.
 *
 * Usage: bench_integrity PATH [SIZE_MIB]
 * Writes a SIZE_MIB (default 1024) artifact to PATH (one f32 weight of
 * pseudo-random values), then reports, each as the best of 3 runs:
 *   - open with full verification (MB/s),
 *   - open with lazy verification (ms; weights untouched),
 *   - kiln_artifact_sign to PATH.signed (MB/s).
 * tests/bench/integrity.sh runs it next to b2sum on the same file and
 * prints the ratios, since absolute numbers on a shared machine mean little.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln.h>

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int die(const char *what, const kiln_error *err)
{
    fprintf(stderr, "bench_integrity: %s: %s\n", what, err->message);
    return 1;
}

static int write_artifact(const char *path, int64_t elements)
{
    kiln_builder *b;
    kiln_error err;
    kiln_value x, w, y;
    float *data = malloc((size_t)elements * sizeof *data);
    if (!data)
        return 1;
    uint32_t state = 12345;
    for (int64_t i = 0; i < elements; i++) {
        state = state * 1664525u + 1013904223u;
        data[i] = (float)(state >> 8) * (1.0f / 16777216.0f);
    }
    int rc = 0;
    if (kiln_builder_new("bench", &b, &err) != KILN_OK)
        return die("builder", &err);
    if (kiln_builder_add_input(b, "x", KILN_F32, "[1]", &x, &err) != KILN_OK ||
        kiln_builder_add_weight(b, "w", KILN_WEIGHT_PARAMETER, KILN_F32, 1, &elements, data, &w, &err) != KILN_OK ||
        kiln_builder_add_op(b, "add", 2, (kiln_value[]){w, x}, &y, &err) != KILN_OK ||
        kiln_builder_add_output(b, "y", y, &err) != KILN_OK || kiln_builder_save(b, path, NULL, &err) != KILN_OK)
        rc = die("saving", &err);
    kiln_builder_free(b);
    free(data);
    return rc;
}

static double time_open(const char *path, kiln_verify_policy policy, int *failed)
{
    kiln_load_options options;
    kiln_program *program;
    kiln_error err;
    kiln_load_options_default(&options);
    options.verify = policy;
    double start = now_seconds();
    if (kiln_program_load(path, &options, &program, NULL, &err) != KILN_OK) {
        die("loading", &err);
        *failed = 1;
        return 0;
    }
    double elapsed = now_seconds() - start;
    kiln_program_free(program);
    return elapsed;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_integrity PATH [SIZE_MIB]\n");
        return 2;
    }
    const char *path = argv[1];
    long mib = argc > 2 ? strtol(argv[2], NULL, 10) : 1024;
    int64_t elements = (int64_t)mib * 1024 * 1024 / 4;
    if (mib <= 0 || write_artifact(path, elements) != 0)
        return 1;
    double bytes = (double)elements * 4.0;
    int failed = 0;
    double full = 1e9, lazy = 1e9, sign = 1e9;
    for (int run = 0; run < 3 && !failed; run++) {
        double t = time_open(path, KILN_VERIFY_FULL, &failed);
        full = t < full ? t : full;
        t = time_open(path, KILN_VERIFY_LAZY, &failed);
        lazy = t < lazy ? t : lazy;
    }
    kiln_public_key public_key;
    kiln_secret_key secret_key;
    kiln_error err;
    if (failed || kiln_key_generate(&public_key, &secret_key, &err) != KILN_OK)
        return 1;
    size_t signed_size = strlen(path) + 8;
    char *signed_path = malloc(signed_size);
    snprintf(signed_path, signed_size, "%s.signed", path);
    for (int run = 0; run < 3; run++) {
        double start = now_seconds();
        if (kiln_artifact_sign(path, signed_path, &secret_key, NULL, &err) != KILN_OK)
            return die("signing", &err);
        double t = now_seconds() - start;
        sign = t < sign ? t : sign;
    }
    remove(signed_path);
    free(signed_path);
    printf("size_bytes %.0f\n", bytes);
    printf("open_full_seconds %.4f\nopen_full_mb_per_s %.1f\n", full, bytes / full / 1e6);
    printf("open_lazy_ms %.3f\n", lazy * 1e3);
    printf("sign_seconds %.4f\nsign_mb_per_s %.1f\n", sign, bytes / sign / 1e6);
    return 0;
}
