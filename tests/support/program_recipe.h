/*
 * program_recipe.h — small conv/pool/elementwise programs built with the
 * C API for the fast-path tests (test_layout.c, test_value_bound.c), run
 * in a session with fast paths and in one with the reference kernels.
 *
 * Every input is f32 [RECIPE_BATCH, channels, RECIPE_SIDE, RECIPE_SIDE];
 * weights are random, in [-scale, scale). Failures are cmocka failures.
 */
#ifndef KILN_TESTS_PROGRAM_RECIPE_H
#define KILN_TESTS_PROGRAM_RECIPE_H

#include <stdbool.h>
#include <stdint.h>

#include <kiln/kiln.h>

enum { RECIPE_BATCH = 2, RECIPE_SIDE = 12, RECIPE_MAX_WEIGHTS = 32 };

/* A program under construction, and the weight data it borrows until it is encoded. */
typedef struct recipe {
    kiln_builder *b;
    kiln_value other; /* the second input, when there is one */
    float *data[RECIPE_MAX_WEIGHTS];
    uint32_t weights;
} recipe;

/* Start a program of input x (and `other` when other_shape is not NULL); a
 * shape naming `batch` declares that dim in 1..16. @return x. */
kiln_value recipe_start(recipe *r, const char *x_shape, const char *other_shape);

/* A parameter of random values in [-scale, scale). */
kiln_value recipe_weight(recipe *r, uint32_t rank, const int64_t *shape, float scale);

/* conv of x (`in` channels) to `out` channels, a k x k kernel padded to keep the size; weights in +-weight_scale. */
kiln_value recipe_conv(recipe *r, kiln_value x, int64_t in, int64_t out, int64_t k, float weight_scale);

/* An op of `count` operands and `attribute_count` attributes. */
kiln_value recipe_op(recipe *r, const char *name, uint32_t count, const kiln_value *operands,
                     uint32_t attribute_count, const kiln_attribute *attributes);
kiln_value recipe_unary(recipe *r, const char *name, kiln_value x);
kiln_value recipe_binary(recipe *r, const char *name, kiln_value a, kiln_value b);

/* A 2x2 pool of stride 2 (`window` 2), or 3x3 of stride 1 padded (`window` 3). */
kiln_value recipe_pool(recipe *r, const char *name, kiln_value x, int64_t window);

/* batch_norm of x with random per-channel parameters (a variance made non-negative by abs). */
kiln_value recipe_batch_norm(recipe *r, kiln_value x, int64_t channels);

/* Add the outputs (named y0, y1, ...), seal, load. */
kiln_program *recipe_finish(recipe *r, uint32_t output_count, const kiln_value *outputs);

/* Seal `builder` (freed here) into an artifact in memory and load it, failing the test on any error. */
kiln_program *recipe_seal(kiln_builder *builder);

/* A random input of `channels` channels in [-scale, scale), with `special` at one element when not 0. */
kiln_tensor *recipe_input(int64_t channels, float scale, float special);

/* The same of `batch` images of side x side. */
kiln_tensor *recipe_input_of(int64_t batch, int64_t channels, int64_t side, float scale, float special);

/* The fast session's output agrees with the reference one's (specials exactly). */
void recipe_assert_close(const kiln_tensor *got, const kiln_tensor *expected);

/* A session with fast paths on `threads` threads and one with the reference kernels only, of one program. */
typedef struct recipe_sessions {
    kiln_session *fast, *reference;
} recipe_sessions;

recipe_sessions recipe_sessions_new(const kiln_program *program, uint32_t threads);
void recipe_sessions_free(recipe_sessions *s);

/*
 * Set inputs (inputs[i] for the program's input i) in both, run the
 * reference, and run the fast session, calling `measure(user, true)`
 * before and `measure(user, false)` after its run (may be NULL); every
 * output of the two must agree.
 */
void recipe_sessions_run(recipe_sessions *s, const kiln_program *program, kiln_tensor *const *inputs,
                         void (*measure)(void *user, bool before), void *user);

/*
 * Whether oneDNN's convolutions on this CPU write channels-last results
 * (layout.h): its AVX-512 convolutions do; where it picks blocked layouts
 * instead (older CPUs), results stay row-major and batches are not split,
 * so tests of those counters check results only. False without oneDNN.
 */
bool recipe_convs_write_channels_last(void);

#endif
